//! A `redis-server` of a test's own, on a free loopback port.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of the test's own, on one port for its whole life (stopped and started
/// again on the same one, as an operator's restart would).
pub struct Redis {
    binary: String,
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Redis {
    /// `None` when this machine has no redis-server and the test command did not promise one.
    pub fn start() -> Option<Self> {
        let binary = match std::env::var("CONCIERGE_TEST_REDIS_SERVER") {
            Ok(binary) => binary,
            Err(_)
                if Command::new("redis-server")
                    .arg("--version")
                    .output()
                    .is_ok() =>
            {
                "redis-server".to_string()
            }
            Err(_) => {
                eprintln!("no redis-server here: the shared-limit tests are skipped");
                return None;
            }
        };
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Self {
            binary,
            port,
            dir: tempfile::tempdir().unwrap(),
            child: None,
        };
        redis.resume();
        Some(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server and waits until it accepts connections.
    pub fn resume(&mut self) {
        let child = Command::new(&self.binary)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::yield_now();
        }
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
