//! A test deployment's config, section by section: the lines every test's TOML would otherwise
//! write again (the server's loopback address, an endpoint's auth and session mode), so that a
//! test spells out only what it is about.

/// The variable the endpoints' token lists are read from: a test hands it to
/// [`instance`](crate::instance) in `env`.
pub const TOKENS: &str = "TOKENS";

/// `[server]` on a free loopback port (in process nothing binds it), followed by `settings`,
/// the section's further lines (or none).
pub fn server(settings: &str) -> String {
    format!("[server]\nlisten = \"127.0.0.1:0\"\n{settings}\n")
}

/// An `[[endpoint]]` at `path` serving `tools` without sessions to the callers listed in
/// [`TOKENS`]; lines of its own may follow it.
pub fn stateless_endpoint(path: &str, tools: &[&str]) -> String {
    endpoint(path, tools, "stateless")
}

/// An `[[endpoint]]` at `path` serving `tools` in sessions to the callers listed in [`TOKENS`];
/// lines of its own (such as `legacy_sse`) may follow it.
pub fn stateful_endpoint(path: &str, tools: &[&str]) -> String {
    endpoint(path, tools, "stateful")
}

fn endpoint(path: &str, tools: &[&str], session: &str) -> String {
    // A JSON array of strings is a TOML array as it stands.
    let tools = serde_json::to_string(tools).expect("tool patterns are strings");
    format!(
        "\n[[endpoint]]\npath = \"{path}\"\ntools = {tools}\nauth = {{ kind = \"tokens\", env = \"{TOKENS}\" }}\nsession = \"{session}\"\n"
    )
}
