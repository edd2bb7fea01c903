//! What the fuzz targets share: one runtime, and the deployments they drive in-process.
//!
//! Each target is a module of `targets`: it hands a stranger's bytes to the parser they reach in
//! production and checks what must hold beyond "no panic". Deployments are
//! built once per process (libFuzzer calls a target millions of times) from the same config the
//! demo serves, with state in a temporary directory.

pub mod apps;
pub mod jwt;
pub mod kgqa;
pub mod mcp;
pub mod oauth;
pub mod targets;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::{HeaderMap, Request, StatusCode};

/// The repository root: the demo config and `examples/` are read from there.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// One multi-threaded runtime for the process: spawned tasks (audit writers, session workers)
/// keep running between inputs, as they do in the server.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// Longer than any answer takes; an input that makes a request outlast it is a hang, a finding.
pub const HANG: Duration = Duration::from_secs(10);

/// One request through `router`, body read to its end.
pub fn send(router: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, Vec<u8>) {
    runtime().block_on(async {
        tokio::time::timeout(HANG, concierge_testkit::send_bytes(router, request))
            .await
            .expect("the request hung")
    })
}

/// Whether `haystack` holds `needle`, as bytes.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Splits `tool name\n rest`: the named item, or, for a name that names none, the one the
/// name's bytes point at, so mutated names still reach every item.
pub fn pick<'a, T>(
    items: &'a [T],
    name_of: impl Fn(&T) -> &str,
    data: &'a [u8],
) -> Option<(&'a T, &'a [u8])> {
    if items.is_empty() {
        return None;
    }
    let newline = data.iter().position(|b| *b == b'\n')?;
    let (name, rest) = (&data[..newline], &data[newline + 1..]);
    let item = items
        .iter()
        .find(|item| name_of(item).as_bytes() == name)
        .unwrap_or_else(|| {
            let index = name
                .iter()
                .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(*b as usize));
            &items[index % items.len()]
        });
    Some((item, rest))
}
