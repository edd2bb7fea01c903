//! What the multi-instance tests start besides concierge: free ports, child processes stopped
//! with the test, nginx in front, and a PostgreSQL of the test's own (stopped and started again).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`.
pub fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::yield_now();
    }
}

/// A child process stopped when the test ends: asked with SIGTERM first, so nginx's master
/// takes its workers along (SIGKILL would leave them running, orphaned), then killed.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::yield_now();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn binary(variable: &str, name: &str) -> Option<String> {
    std::env::var(variable).ok().or_else(|| {
        Command::new(name)
            .arg("-v")
            .output()
            .is_ok()
            .then(|| name.to_string())
    })
}

/// The nginx of docs/src/guides/instances.md ("Load balancing sessions"): round robin for requests without a
/// session, the instance named by the session id's prefix for the rest, the others as backups
/// (which answer 404 for a session they do not hold: the client initializes again).
pub fn nginx_config(dir: &Path, listen: u16, instances: &[(&str, u16)]) -> String {
    let servers = |primary: Option<&str>| {
        instances
            .iter()
            .map(|(name, port)| match primary {
                Some(p) if p != *name => format!("server 127.0.0.1:{port} backup;"),
                _ => format!("server 127.0.0.1:{port} max_fails=1 fail_timeout=2s;"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut upstreams = format!("upstream concierge {{ {} keepalive 16; }}\n", servers(None));
    let mut map = String::new();
    for (name, _) in instances {
        upstreams.push_str(&format!(
            "upstream concierge_{name} {{ {} keepalive 8; }}\n",
            servers(Some(name))
        ));
        map.push_str(&format!("    \"~^{name}\\.\" concierge_{name};\n"));
    }
    format!(
        r#"
daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  {upstreams}
  map $http_mcp_session_id $pool {{
{map}    default concierge;
  }}
  server {{
    listen 127.0.0.1:{listen};
    location / {{
      proxy_pass http://$pool;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 1h;
      proxy_next_upstream error timeout;
    }}
  }}
}}
"#,
        dir = dir.display(),
    )
}

/// A `redis-server` on a free port, its files in `dir`; the process and its port.
pub fn start_redis(binary: &str, dir: &Path) -> (Process, u16) {
    let port = free_port();
    (start_redis_on(binary, dir, port), port)
}

/// A `redis-server` on `port` (again, after an operator stopped it), nothing kept from before.
pub fn start_redis_on(binary: &str, dir: &Path, port: u16) -> Process {
    let redis = Process(
        Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts"),
    );
    wait_for(port, "redis-server");
    redis
}

/// nginx in front of `instances` (name, port) on `listen`, as [`nginx_config`] writes it.
pub fn start_nginx(binary: &str, dir: &Path, listen: u16, instances: &[(&str, u16)]) -> Process {
    let conf = dir.join("nginx.conf");
    std::fs::write(&conf, nginx_config(dir, listen, instances)).unwrap();
    let nginx = Process(
        Command::new(binary)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf)
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts"),
    );
    wait_for(listen, "nginx");
    nginx
}

/// A PostgreSQL server of the test's own on a free loopback port, which the test may stop and
/// start again on that port (an operator's restart). test.sh installs Debian's and names its
/// programs' directory in CONCIERGE_TEST_PG_BIN; `None` without one.
pub struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
}

impl Postgres {
    pub fn start() -> Option<Self> {
        let bin = std::env::var("CONCIERGE_TEST_PG_BIN")
            .ok()
            .map(PathBuf::from)
            .or_else(|| {
                let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                    .ok()?
                    .flatten()
                    .map(|e| e.path().join("bin"))
                    .filter(|b| b.join("pg_ctl").exists())
                    .collect();
                found.sort();
                found.pop()
            })?;
        let dir = tempfile::tempdir().unwrap();
        let postgres = Self {
            bin,
            dir,
            port: free_port(),
        };
        let data = postgres.data();
        std::fs::create_dir(&data).unwrap();
        // PostgreSQL refuses to run as root: then its files and process belong to `postgres`.
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(postgres.dir.path(), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            let chown = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(postgres.dir.path())
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let init = postgres
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(init.success(), "initdb");
        postgres.resume();
        Some(postgres)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the server and waits until it accepts connections.
    pub fn resume(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let started = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-w", "-o", &options, "start"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(started.success(), "pg_ctl start");
    }

    /// Stops it (fast: open connections are cut, as a crash of the database would cut them).
    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "stop"])
            .stdout(Stdio::null())
            .status();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}
