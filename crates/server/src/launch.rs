//! Loading a config file for a command, binding first what the rest of the config names.
//!
//! A demo listens on free ports (port 0) so that it can run beside another one, and its parts
//! must still find each other: the OAuth issuer names the server's real port, an app's upstream
//! URL names its simulator's. So `serve` binds its listener and starts the simulators before it
//! reads the rest of the file, and `${server.url}` / `${simulators.<name>.url}` stand for the
//! addresses they got.

use std::path::Path;

use concierge_core::BoxFuture;

use crate::config::{Config, ConfigError};
use crate::platform::Apps;

/// What a command binds before it reads the rest of its config.
pub enum Start<'a> {
    /// Nothing (`check`, `token`, `audit`): bound addresses stand for the addresses as written.
    Nothing,
    /// The simulators the config refers to (`${simulators.<name>.url}`), for a command that
    /// calls an upstream (`sync`, stdio serving).
    Simulators(&'a Apps),
    /// The server's listener and the simulators (`serve`).
    Server(&'a Apps),
}

/// A loaded config and what was bound for it.
pub struct Loaded {
    pub config: Config,
    /// Where it was read (absolute: the command has entered the config's folder since), and the
    /// addresses bound for it: what a reload reads it again with.
    pub source: Source,
    /// The server's listener (with [`Start::Server`]).
    pub listener: Option<tokio::net::TcpListener>,
    /// The simulators' serving futures; spawn them.
    pub simulators: Vec<BoxFuture<'static, ()>>,
}

/// Reads the config at `path`, enters its directory (relative paths in a config mean "next to the
/// config": a desktop client starts us from wherever it likes), binds what `start` says, and
/// parses the rest with the bound addresses.
pub async fn load(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    start: Start<'_>,
) -> Result<Loaded, Vec<ConfigError>> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let path = path.as_path();
    let text = read(path)?;
    let listeners = Config::listeners(&text, env)?;
    enter_config_dir(path).map_err(|e| vec![e])?;
    let mut bound = listeners.as_written();
    let mut listener = None;
    let mut simulators = Vec::new();
    if let Start::Server(_) = start {
        let addr = crate::config::parse_listen(&listeners.server).map_err(|e| vec![e])?;
        let bound_listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            vec![ConfigError::new(
                "server.listen",
                format!("cannot listen on {addr}: {e}"),
            )]
        })?;
        let local = bound_listener
            .local_addr()
            .map_err(|e| vec![ConfigError::new("server.listen", e.to_string())])?;
        bound.server = Some(crate::config::BoundUrls::url_of(local));
        listener = Some(bound_listener);
    }
    if let Start::Server(apps) | Start::Simulators(apps) = start {
        let mut wanted = listeners.simulators.clone();
        if let Start::Simulators(_) = start {
            // A command that calls an upstream starts only the simulators the config refers
            // to: `concierge sync` beside a running demo must not clash with its other ones.
            wanted.retain(|name, _| text.contains(&format!("simulators.{name}.url")));
        }
        let (urls, running) = apps
            .start_simulators(&wanted)
            .await
            .map_err(|e| vec![ConfigError::new("", e)])?;
        bound.simulators.extend(urls);
        simulators = running;
    }
    let config = Config::parse_bound(&text, env, &bound)?;
    Ok(Loaded {
        config,
        source: Source {
            path: path.to_path_buf(),
            bound,
        },
        listener,
        simulators,
    })
}

/// How a running server reads its config again: the same file, the same bound addresses.
#[derive(Clone)]
pub struct Source {
    pub path: std::path::PathBuf,
    pub bound: crate::config::BoundUrls,
}

impl Source {
    /// The file's text as it is now.
    pub fn text(&self) -> Result<String, Vec<ConfigError>> {
        read(&self.path)
    }

    /// The config `text` (the file's, read again) says (its simulators and listener stay as
    /// bound at start).
    pub fn parse(
        &self,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Vec<ConfigError>> {
        Config::parse_bound(text, env, &self.bound)
    }
}

fn read(path: &Path) -> Result<String, Vec<ConfigError>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::new(
            "",
            format!("cannot read {}: {e}", path.display()),
        )]
    })
}

fn enter_config_dir(path: &Path) -> Result<(), ConfigError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::env::set_current_dir(dir).map_err(|error| {
            ConfigError::new("", format!("cannot enter {}: {error}", dir.display()))
        }),
        None => Ok(()),
    }
}
