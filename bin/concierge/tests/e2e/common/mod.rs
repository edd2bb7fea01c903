//! A real `concierge` process on 127.0.0.1, a real MCP client, and helpers to read what it wrote.
#![allow(dead_code)] // each area uses a different part of the harness

pub mod cluster;
pub mod crash;
pub mod faults;
pub mod oauth;
pub mod ski;
pub mod tinyfs;
pub mod upstream_mcp;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_concierge");

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The coffee endpoint of the demo, with state in `dir` and the given extra endpoint settings.
pub fn coffee_config(dir: &Path, endpoint_extra: &str) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[limits]
chatbot_mcp = "60/minute"

[audit.chatbot]
path = "{dir}/log/test.chatbot.log"

{coffee}
[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*"]
instructions = "Coffee shop ordering."
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
rate_limit = "chatbot_mcp"
audit = "chatbot"
{endpoint_extra}
"#,
        dir = dir.display(),
        coffee = coffee_app(&dir.join("coffee/orders.xlsx")),
    )
}

/// The `[apps.coffee]` section on the demo menu, orders kept in `orders`: every coffee
/// deployment of the tests has it.
pub fn coffee_app(orders: &Path) -> String {
    format!(
        "[apps.coffee]\nmenu = \"{menu}\"\norders = \"{orders}\"\n",
        menu = examples().join("coffee/menu.xlsx").display(),
        orders = orders.display(),
    )
}

/// The coffee app's tools, in the order every coffee endpoint lists them.
pub const COFFEE_TOOLS: [&str; 4] = [
    "get_menu",
    "search_menu",
    "create_order",
    "get_order_status",
];

/// The names of the tools `client` is offered, in order.
pub async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list answered")
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// A scrape of `/metrics` at `url` with the metrics token.
pub async fn metrics_text(url: &str, token: &str) -> String {
    reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A response header as text (a challenge, a redirect's location); fails where it is missing.
pub fn header(response: &reqwest::Response, name: &str) -> String {
    response.headers()[name]
        .to_str()
        .expect("a text header")
        .to_string()
}

/// Writes `input` to a spawned command's stdin and closes it.
pub fn feed_stdin(child: &mut Child, input: &str) {
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
}

/// The `key` of each element of the JSON array `list` (roles of messages, codes of errors).
pub fn pluck(list: &Value, key: &str) -> Vec<Value> {
    list.as_array()
        .expect("an array")
        .iter()
        .map(|item| item[key].clone())
        .collect()
}

/// How many audit events have the given `outcome`.
pub fn count_outcome(events: &[Value], outcome: &str) -> usize {
    events.iter().filter(|e| e["outcome"] == outcome).count()
}

/// A running server process; killed when dropped.
/// How much of a server's log a test keeps (the latest half of it after a cut).
const LOG_TAIL_BYTES: usize = 1024 * 1024;

pub struct Server {
    pub child: Child,
    pub base: String,
    pub dir: tempfile::TempDir,
    /// What `serve` printed when it started.
    pub banner: String,
    /// The end of what it has logged since (drained, so a full pipe never stalls it), whole
    /// lines only, and the thread that drains it.
    log: std::sync::Arc<std::sync::Mutex<String>>,
    draining: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Starts `concierge serve` on `config` (written into a fresh temp dir by `make_config`).
    pub fn start(make_config: impl FnOnce(&Path) -> String, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_in(dir, make_config, env)
    }

    pub fn start_in(
        dir: tempfile::TempDir,
        make_config: impl FnOnce(&Path) -> String,
        env: &[(&str, &str)],
    ) -> Self {
        let config_path = dir.path().join("concierge.toml");
        std::fs::write(&config_path, make_config(dir.path())).expect("write config");
        Self::spawn(dir, &config_path, env)
    }

    /// The repo's own demo `concierge.toml`, state in a temp dir, on a free port; its simulators
    /// on free ports too (the demo's own default), so tests can run side by side.
    pub fn start_demo(env: &[(&str, &str)]) -> Self {
        Self::start_demo_in(tempfile::tempdir().expect("temp dir"), env)
    }

    /// [`Server::start_demo`] with its state in `dir` (on a filesystem of the test's choosing).
    pub fn start_demo_in(dir: tempfile::TempDir, env: &[(&str, &str)]) -> Self {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../concierge.toml");
        let var = dir.path().to_string_lossy().to_string();
        let mut all: Vec<(&str, &str)> =
            vec![("CONCIERGE_LISTEN", "127.0.0.1:0"), ("CONCIERGE_VAR", &var)];
        all.extend_from_slice(env);
        Self::spawn(dir, &config, &all)
    }

    /// As [`Server::start`], with the process's open-file limit set to `nofile` (`ulimit -n`).
    pub fn start_with_file_limit(
        nofile: u32,
        make_config: impl FnOnce(&Path) -> String,
        env: &[(&str, &str)],
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config_path = dir.path().join("concierge.toml");
        std::fs::write(&config_path, make_config(dir.path())).expect("write config");
        let mut command = Command::new("sh");
        command.args([
            "-c",
            &format!("ulimit -n {nofile} && exec \"$0\" \"$@\""),
            BIN,
        ]);
        Self::spawn_command(command, dir, &config_path, env)
    }

    fn spawn(dir: tempfile::TempDir, config_path: &Path, env: &[(&str, &str)]) -> Self {
        Self::spawn_command(Command::new(BIN), dir, config_path, env)
    }

    /// The process's resident memory, from /proc.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    /// CPU time the process has used (user + system), from /proc.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("read /proc stat");
        // Fields after the command name (which may contain spaces) start after ") ".
        let rest = stat.rsplit_once(") ").expect("stat format").1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // Linux reports in USER_HZ, 100 on every mainstream configuration.
        Duration::from_millis(ticks * 10)
    }

    fn spawn_command(
        mut command: Command,
        dir: tempfile::TempDir,
        config_path: &Path,
        env: &[(&str, &str)],
    ) -> Self {
        command
            .arg("serve")
            .arg("--config")
            .arg(config_path)
            .env_remove("APP_MCP_TOKENS")
            .env_remove("BXH_MCP_TOKEN")
            .env_remove("BXH_KG_API_BASE")
            .env_remove("BXH_KG_API_KEY")
            .env_remove("BXH_DEFAULT_GRAPH")
            .env_remove("BXH_MCP_TIMEOUT_SECONDS")
            .env_remove("APP_CMS_API_BASE_URL")
            .env_remove("APP_CMS_API_KEY")
            .env_remove("MAPPY_API_BASE_URL")
            .env_remove("MAPPY_API_KEY")
            .env_remove("CONCIERGE_PUBLIC_URL")
            .env_remove("BXH_SIMULATOR_LISTEN")
            .env_remove("APP_CMS_SIMULATOR_LISTEN")
            .env_remove("MAPPY_SIMULATOR_LISTEN")
            // A developer's shared stores must not leak into a test's deployment.
            .env_remove("CONCIERGE_REDIS_URL")
            .env_remove("CONCIERGE_DATABASE_URL")
            .env_remove("CONCIERGE_INSTANCE")
            .env_remove("CONCIERGE_SESSION_SECRET")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn concierge");
        let stdout = child.stdout.take().expect("stdout");
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        stdout
            .read_line(&mut first)
            .expect("read the listening line");
        let mut banner = first.clone();
        if first.starts_with("concierge listening on ") {
            // The rest of the banner, up to its last line.
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                banner.push_str(&line);
                if line.starts_with("  health") {
                    break;
                }
            }
        }
        // Keep draining, so the server never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let Some(addr) = first.trim().strip_prefix("concierge listening on ") else {
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr);
            panic!("server did not start: {first:?} {stderr}");
        };
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let tail = log.clone();
        let draining = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let mut tail = tail.lock().unwrap();
                tail.push_str(&line);
                tail.push('\n');
                if tail.len() > LOG_TAIL_BYTES {
                    // The older half goes, up to a line's end.
                    let from = tail.len() - LOG_TAIL_BYTES / 2;
                    let cut = tail.as_bytes()[from..]
                        .iter()
                        .position(|b| *b == b'\n')
                        .map_or(tail.len(), |at| from + at + 1);
                    tail.drain(..cut);
                }
            }
        });
        Self {
            child,
            base: addr.to_string(),
            dir,
            banner,
            log,
            draining: Some(draining),
        }
    }

    /// The end of what the server has logged, for a failing test's message.
    pub fn log_tail(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Kills the server and answers the end of its log, to its last line.
    pub fn kill_and_read_log(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(draining) = self.draining.take() {
            let _ = draining.join();
        }
        self.log_tail()
    }

    /// The URL a banner line names (`metrics`, `health`, …).
    pub fn banner_url(&self, name: &str) -> Option<String> {
        self.banner.lines().find_map(|line| {
            let rest = line.trim_start().strip_prefix(name)?;
            rest.split_whitespace()
                .next()
                .filter(|u| u.starts_with("http"))
                .map(String::from)
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Audit lines written so far; waits (bounded) until at least `at_least` are there, since the
    /// sink writes off the request path.
    pub fn audit_lines(&self, at_least: usize) -> Vec<Value> {
        self.audit_lines_of("test.chatbot.log", at_least)
    }

    /// The lines of the audit log `log/<name>` under the server's state dir.
    pub fn audit_lines_of(&self, name: &str, at_least: usize) -> Vec<Value> {
        let path = self.dir.path().join("log").join(name);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // The writer may be mid-line (a write cut short by a full disk is finished later):
            // only lines it ended are events yet.
            let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
            let lines: Vec<Value> = whole
                .lines()
                .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
                .collect();
            if lines.len() >= at_least || Instant::now() > deadline {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub type Client = RunningService<RoleClient, ()>;

impl Server {
    /// `concierge audit --config <this server's config> <args>`: the events it prints, or its
    /// error output when it fails.
    pub fn audit_cli(&self, args: &[&str]) -> Result<Vec<Value>, String> {
        let out = Command::new(BIN)
            .arg("audit")
            .arg("--config")
            .arg(self.dir.path().join("concierge.toml"))
            .args(args)
            .output()
            .expect("run concierge audit");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect())
    }
}

/// Connects rmcp's own Streamable HTTP client with a bearer token.
pub async fn connect(url: &str, token: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.expect("MCP client connects")
}

pub async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .expect("tools/call answered")
}

/// The JSON text of a result's first content block.
pub fn text_json(result: &CallToolResult) -> Value {
    let content = serde_json::to_value(&result.content).unwrap();
    let text = content[0]["text"].as_str().expect("text content");
    serde_json::from_str(text).expect("content text is JSON")
}

/// A result's JSON document. A success's is its `structuredContent`, checked to say the same as
/// its JSON text; an error carries no `structuredContent` (clients would check it against the
/// tool's output schema), so an error's is its JSON text.
pub fn structured(result: &CallToolResult) -> Value {
    if result.is_error == Some(true) {
        assert!(
            result.structured_content.is_none(),
            "an error result carries no structuredContent: {result:?}"
        );
        return text_json(result);
    }
    let value = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(
        text_json(result),
        value,
        "text and structured content agree"
    );
    value
}

/// Raw JSON-RPC over HTTP, for what an MCP client library would not let us do on purpose
/// (another client's session id, a token in the query string, a foreign Host).
pub struct Raw {
    pub http: reqwest::Client,
}

pub struct RawAnswer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl RawAnswer {
    /// The JSON-RPC message in the body, whether sent as JSON or as an SSE event.
    pub fn message(&self) -> Value {
        if let Ok(value) = serde_json::from_str(&self.body) {
            return value;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or(Value::Null)
    }

    pub fn session(&self) -> Option<String> {
        self.headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }
}

impl Raw {
    pub fn new() -> Self {
        Self {
            http: reqwest::Client::new(),
        }
    }

    pub async fn post(
        &self,
        url: &str,
        token: Option<&str>,
        session: Option<&str>,
        body: Value,
    ) -> RawAnswer {
        let mut request = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        // As clients do: the version header follows the handshake, it does not precede it.
        if body["method"] != "initialize" {
            request = request.header("mcp-protocol-version", "2025-11-25");
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.expect("HTTP answer");
        RawAnswer {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap_or_default(),
        }
    }

    /// initialize + notifications/initialized on the 2025-11-25 protocol (sessions exist there).
    pub async fn open_session(&self, url: &str, token: &str) -> String {
        let answer = self.post(url, Some(token), None, initialize(1)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let session = answer.session().expect("a session id");
        let ack = self
            .post(
                url,
                Some(token),
                Some(&session),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(ack.status, 202);
        session
    }
}

pub fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "concierge-tests", "version": "1"}}})
}

pub fn tools_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

pub fn tools_list(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}
