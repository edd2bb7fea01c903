//! Which processes on this host are alive, for the idempotency records in a SQLite file.
//!
//! A claim names the process that holds it (its owner id). Each process holds an exclusive lock
//! on a file of its own, `<database>.owners/<owner>.lock`, for as long as it runs; the operating
//! system lets go of it when the process ends, however it ends (a `kill -9` included). So a claim
//! whose owner's file can be locked — or is gone — belongs to a process that is dead. The lock
//! file works because everything sharing a SQLite file runs on one host (SQLite is not shared
//! over a network); the shared PostgreSQL answers the same question with instance rows
//! (`heartbeat.rs`).

use std::fs::File;
use std::path::{Path, PathBuf};

/// This process as an owner of claims: its id and the lock that says it is alive.
pub(super) struct Owner {
    pub(super) id: String,
    dir: PathBuf,
    /// Held (locked) until the store is dropped or the process ends.
    _lock: File,
}

impl Owner {
    pub(super) fn register(database: &Path) -> Result<Self, String> {
        let mut dir = database.as_os_str().to_owned();
        dir.push(".owners");
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Locked under a name no one checks, then renamed: a file under its final name is
        // always locked, so another process never takes a starting one for a dead one.
        let path = dir.join(format!("{id}.lock"));
        let starting = dir.join(format!("{id}.starting"));
        let named = |e: std::io::Error| format!("{}: {e}", path.display());
        let lock = File::create(&starting).map_err(named)?;
        lock.try_lock().map_err(|e| named(e.into()))?;
        std::fs::rename(&starting, &path).map_err(named)?;
        let owner = Self {
            id,
            dir,
            _lock: lock,
        };
        owner.forget_the_dead();
        Ok(owner)
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.lock"))
    }

    /// Whether the process that wrote claims as `id` still runs. Ids come from our own table;
    /// anything that is not one of ours counts as alive, so it is never taken over by mistake.
    pub(super) fn is_alive(&self, id: &str) -> bool {
        if id == self.id {
            return true;
        }
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return true;
        }
        let path = self.path(id);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
        };
        match file.try_lock_shared() {
            Ok(()) => {
                // Nobody holds it: its process is gone. Its file goes too.
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(_) => true,
        }
    }

    /// Removes the lock files of processes that ended without removing their own (crashes), so
    /// the directory does not grow with every restart.
    fn forget_the_dead(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) {
                self.is_alive(id);
            }
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.path(&self.id));
    }
}
