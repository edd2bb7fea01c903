//! One sync run at a time, across processes: an exclusive lock on a file next to the store. A
//! run that finds it held does nothing and succeeds (the seed's scheduled runs rely on that).

use std::path::Path;

use crate::content::store::StoreError;

/// Held for the whole run; dropping it releases the lock.
pub(super) struct RunLock {
    _file: std::fs::File,
}

impl RunLock {
    /// The lock, or `None` when another run holds it.
    pub(super) fn try_acquire(path: &Path) -> Result<Option<Self>, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| StoreError::new(format!("cannot open the sync lock: {e}")))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(StoreError::new(format!("cannot take the sync lock: {e}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunLock;

    #[test]
    fn a_second_run_finds_the_lock_held_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/mirror.sqlite.sync.lock");
        let first = RunLock::try_acquire(&path).unwrap();
        assert!(first.is_some(), "the directory is created, the lock taken");
        assert!(RunLock::try_acquire(&path).unwrap().is_none());
        drop(first);
        assert!(RunLock::try_acquire(&path).unwrap().is_some());
    }
}
