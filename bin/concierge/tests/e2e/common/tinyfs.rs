//! A tiny filesystem of a test's own (a size-limited tmpfs) to fill during writes. Mounting
//! needs root: the test command runs as root and says so with `CONCIERGE_TEST_TINY_FS=1`;
//! elsewhere the disk tests say they were skipped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct TinyFs {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TinyFs {
    /// A fresh tmpfs of `size` (as mount writes it: `8m`), or `None` where it cannot be had.
    pub fn mount(size: &str) -> Option<Self> {
        if std::env::var_os("CONCIERGE_TEST_TINY_FS").is_none() {
            eprintln!(
                "skipped: set CONCIERGE_TEST_TINY_FS=1 and run as root (the test command does)"
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "mount a tmpfs (CONCIERGE_TEST_TINY_FS is set)"
        );
        Some(Self {
            path: dir.path().to_path_buf(),
            _dir: dir,
        })
    }

    fn filler(&self) -> PathBuf {
        self.path.join("filler")
    }

    /// Takes every free byte.
    pub fn fill(&self) {
        let mut file = std::fs::File::create(self.filler()).unwrap();
        let chunk = vec![0u8; 4096];
        while file.write_all(&chunk).is_ok() {}
        // The last partial chunk, byte by byte, so that nothing is left at all.
        while file.write_all(&[0]).is_ok() {}
        let _ = file.sync_all();
    }

    /// Gives the space back.
    pub fn free(&self) {
        std::fs::remove_file(self.filler()).unwrap();
    }

    /// A directory on the tiny filesystem, for a server's state.
    pub fn dir(&self) -> tempfile::TempDir {
        tempfile::tempdir_in(&self.path).unwrap()
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        // Lazy: a server still closing its files must not keep the mount (and the test) alive.
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

pub fn is_json_lines(path: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    for (n, line) in text.lines().enumerate() {
        serde_json::from_str::<serde_json::Value>(line)
            .map_err(|e| format!("line {}: {e}: {line}", n + 1))?;
    }
    Ok(text.lines().count())
}
