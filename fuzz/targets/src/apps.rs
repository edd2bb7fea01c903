//! Every app's tools as the demo builds them (`concierge.toml`, state in a temporary directory),
//! for the argument target: each tool's input schema is the platform's validator's.

use std::sync::{Arc, OnceLock};

use concierge_core::{Messages, Tool};
use concierge_server::validate::ArgumentValidator;
use concierge_server::{Config, section};

pub struct AppTool {
    pub name: String,
    pub tool: Arc<dyn Tool>,
    pub validator: ArgumentValidator,
    pub messages: &'static Messages,
}

/// The demo config read with state under `dir`; upstream URLs stay as written (nothing is
/// called: only schemas and typed inputs are used).
pub fn demo_config(dir: &std::path::Path) -> Config {
    let text =
        std::fs::read_to_string(crate::root().join("concierge.toml")).expect("the demo config");
    let var = dir.display().to_string();
    let env = move |name: &str| (name == "CONCIERGE_VAR").then(|| var.clone());
    Config::parse(&text, &env).unwrap_or_else(|e| panic!("the demo config parses: {e:?}"))
}

/// Every tool of coffee, trips, kgqa, intake and mappy, in a fixed order.
pub fn tools() -> &'static [AppTool] {
    static TOOLS: OnceLock<(Vec<AppTool>, tempfile::TempDir)> = OnceLock::new();
    &TOOLS
        .get_or_init(|| {
            // Relative paths of the demo config (`examples/…`) are the repository's.
            std::env::set_current_dir(crate::root()).expect("the repository root");
            let dir = tempfile::tempdir().expect("a temp dir");
            let config = demo_config(dir.path());
            let app = |name: &str| {
                config
                    .apps
                    .get(name)
                    .cloned()
                    .expect("the demo has the app")
            };
            let sets = crate::runtime().block_on(async {
                vec![
                    concierge_coffee::build(
                        &section(&app("coffee")).expect("coffee"),
                        concierge_coffee::system_clock(),
                    ),
                    concierge_trips::build(&section(&app("trips")).expect("trips")).await,
                    concierge_kgqa::build(&section(&app("kgqa")).expect("kgqa")),
                    concierge_intake::build(&section(&app("intake")).expect("intake")).await,
                    concierge_mappy::build(&section(&app("mappy")).expect("mappy")),
                ]
            });
            let mut tools = Vec::new();
            for set in sets {
                let set = set.unwrap_or_else(|e| panic!("an app builds: {e}"));
                for tool in set.tools {
                    let validator = ArgumentValidator::new(&tool.spec().input_schema)
                        .unwrap_or_else(|e| panic!("{}: {e}", tool.spec().name));
                    tools.push(AppTool {
                        name: format!("{}.{}", set.app, tool.spec().name),
                        tool,
                        validator,
                        messages: set.messages,
                    });
                }
            }
            (tools, dir)
        })
        .0
}
