//! The config file: TOML, `${VAR}` / `${VAR:-default}` interpolation, every section's checks.
//! Beyond no panic: no problem report ever shows a secret's value (an operator pastes them).

use concierge_server::Config;

/// The value of every variable the input names whose name says it is secret.
const SECRET: &str = "s3cr3t-value-5e0c2b";

fn env(name: &str) -> Option<String> {
    let secret = ["TOKEN", "KEY", "SECRET", "PASSWORD"]
        .iter()
        .any(|word| name.contains(word));
    if secret {
        Some(SECRET.into())
    } else if name.starts_with("FUZZ") {
        Some("127.0.0.1:0".into())
    } else {
        None
    }
}

pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // A report may quote the text; libFuzzer learns the secret from the comparisons it watches
    // and may write it into the text: only a secret the text did not hold is a leak.
    if text.contains(SECRET) {
        return;
    }
    if let Err(problems) = Config::parse(text, &env) {
        for problem in problems {
            assert!(
                !problem.message.contains(SECRET) && !problem.at.contains(SECRET),
                "a problem report shows a secret: {problem:?}"
            );
        }
    }
}
