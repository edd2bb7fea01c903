//! kgqa's five tools as the demo configures them, in front of the Q&A API's simulator on a
//! loopback port, with every request the simulator receives recorded for the target to inspect.

use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use concierge_core::ToolSet;
use concierge_server::section;
use http_body_util::BodyExt;

/// The API key the adapter sends: it must reach the API's header and nothing else.
pub const API_KEY: &str = "fuzz-kg-key-31d7a9";
/// The graph the demo names; an argument can make it appear, a template must not.
pub const GRAPH: &str = "baixinghui_travel_agency";

pub struct Deployment {
    pub tools: ToolSet,
    /// `http://127.0.0.1:<port>`: no answer may show it.
    pub base_url: String,
    /// The bodies the API received, oldest first; the target drains it.
    pub received: Arc<Mutex<Vec<Vec<u8>>>>,
}

pub fn deployment() -> &'static Deployment {
    static DEPLOYMENT: OnceLock<Deployment> = OnceLock::new();
    DEPLOYMENT.get_or_init(|| {
        std::env::set_current_dir(crate::root()).expect("the repository root");
        let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let answers =
            concierge_sim_kgqa::Answers::load(std::path::Path::new("examples/kgqa/answers.json"))
                .expect("the canned answers");
        let recorder = received.clone();
        let api = concierge_sim_kgqa::router(answers, API_KEY.into()).layer(middleware::from_fn(
            move |request: Request, next: Next| {
                let recorder = recorder.clone();
                async move {
                    let (parts, body) = request.into_parts();
                    let bytes = body
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    recorder
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(bytes.to_vec());
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
            },
        ));
        let base_url = crate::runtime().block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            let url = format!("http://{}", listener.local_addr().expect("its address"));
            tokio::spawn(axum::serve(listener, api).into_future());
            url
        });
        let text = std::fs::read_to_string("concierge.toml").expect("the demo config");
        let dir = std::env::temp_dir();
        let (var, url) = (dir.display().to_string(), base_url.clone());
        let env = move |name: &str| match name {
            "BXH_KG_API_BASE" => Some(url.clone()),
            "BXH_KG_API_KEY" => Some(API_KEY.into()),
            "CONCIERGE_VAR" => Some(var.clone()),
            _ => None,
        };
        let config = concierge_server::Config::parse(&text, &env)
            .unwrap_or_else(|e| panic!("the demo config parses: {e:?}"));
        let tools = concierge_kgqa::build(&section(&config.apps["kgqa"]).expect("kgqa's section"))
            .expect("kgqa builds");
        Deployment {
            tools,
            base_url,
            received,
        }
    })
}
