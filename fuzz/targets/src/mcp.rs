//! A deployment of the platform with a fake app, for the whole-request target: the real router,
//! every pipeline step, both session modes; no socket.

use std::sync::{Arc, OnceLock};

use axum::Router;
use concierge_core::Tool;
use concierge_server::{Config, Platform, router};
use concierge_testkit::fake::object;
use concierge_testkit::{Behaviour, FakeTool, fake_app};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The bearer the fake deployment accepts; no answer may ever show it.
pub const TOKEN: &str = "fuzz-bearer-8c2f1e";

pub struct Deployment {
    pub router: Router,
    _platform: Platform,
    _dir: tempfile::TempDir,
}

/// A tool with a schema of some depth, which echoes what it was given.
fn echo() -> Arc<dyn Tool> {
    FakeTool::with_schema(
        "echo",
        Behaviour::EchoAll,
        object(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 200},
                "count": {"type": "integer", "minimum": 0, "maximum": 100},
                "items": {"type": "array", "maxItems": 5, "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                    "required": ["name"],
                    "additionalProperties": false,
                }},
            },
            "required": ["text"],
            "additionalProperties": false,
        })),
    )
}

/// Built on first use; audit lines go to /dev/null so a long run fills no disk.
pub fn deployment() -> &'static Deployment {
    static DEPLOYMENT: OnceLock<Deployment> = OnceLock::new();
    DEPLOYMENT.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let config = r#"
[server]
listen = "127.0.0.1:0"
max_body_bytes = 65536

[audit.main]
path = "/dev/null"

[[endpoint]]
path = "/fake/mcp"
tools = ["fake.*"]
auth = { kind = "tokens", env = "FUZZ_TOKENS" }
session = "stateless"
audit = "main"

[[endpoint]]
path = "/sessions/mcp"
tools = ["fake.*"]
auth = { kind = "tokens", env = "FUZZ_TOKENS" }
session = "stateful"
audit = "main"
"#;
        let env = |name: &str| (name == "FUZZ_TOKENS").then(|| format!("fuzz:{TOKEN}"));
        let config = Config::parse(config, &env).expect("the fuzz config parses");
        let apps = fake_app(vec![echo()]);
        let platform = crate::runtime()
            .block_on(Platform::build(config, apps, &env))
            .unwrap_or_else(|e| panic!("{e:?}"));
        let router =
            crate::runtime().block_on(async { router(&platform, &CancellationToken::new()) });
        Deployment {
            router,
            _platform: platform,
            _dir: dir,
        }
    })
}
