//! What starts a reload: `SIGHUP`, a change of the config file or of a file it names (seen by a
//! watcher that hears only those files, debounced within a bound), and `concierge reload` — which signals the process named by the pid file
//! `serve` writes, and reads how it went from the status file beside it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use notify::Watcher;

use super::settling::Burst;
use super::{Deployment, Status};
use crate::platform::Platform;

/// What runs while the server serves; ended (the pid file removed) when dropped.
pub struct Triggers {
    pid_file: Option<PathBuf>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Triggers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some(path) = &self.pid_file
            && std::fs::read_to_string(path)
                .is_ok_and(|p| p.trim() == std::process::id().to_string())
        {
            let _ = std::fs::remove_file(path);
            let _ = std::fs::remove_file(status_file(path));
        }
    }
}

/// Where the outcome of the last reload is written, beside the pid file.
pub fn status_file(pid_file: &Path) -> PathBuf {
    let mut name = pid_file.as_os_str().to_owned();
    name.push(".status");
    PathBuf::from(name)
}

/// Writes the pid file and starts the triggers of a deployment read from a file.
pub fn start(deployment: &Arc<Deployment>, platform: &Platform) -> std::io::Result<Triggers> {
    let mut triggers = Triggers {
        pid_file: None,
        tasks: Vec::new(),
    };
    let Some(source) = deployment.source() else {
        return Ok(triggers);
    };
    let pid_file = std::path::absolute(platform.config.server.pid_file())?;
    if let Some(dir) = pid_file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_atomically(&pid_file, std::process::id().to_string().as_bytes())?;
    write_status(&status_file(&pid_file), &deployment.status());
    let _ = deployment.status_file.set(status_file(&pid_file));
    triggers.pid_file = Some(pid_file);
    let (tell, mut told) = tokio::sync::mpsc::channel::<&'static str>(8);
    #[cfg(unix)]
    {
        let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
        let tell = tell.clone();
        triggers.tasks.push(tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                let _ = tell.try_send("SIGHUP");
            }
        }));
    }
    triggers.tasks.push(tokio::spawn(watch(
        deployment.clone(),
        source.path.clone(),
        tell,
    )));
    let deployment = deployment.clone();
    triggers.tasks.push(tokio::spawn(async move {
        while let Some(why) = told.recv().await {
            let _ = deployment.reload(why).await;
        }
    }));
    Ok(triggers)
}

pub(super) fn write_status(path: &Path, status: &Status) {
    let text = serde_json::to_vec(status).unwrap_or_default();
    if let Err(error) = write_atomically(path, &text) {
        tracing::warn!(%error, "the reload status file could not be written");
    }
}

/// Written whole or not at all: a reader never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}

/// Each file a reload reads, with its length and when it was written (`None`: not there).
pub(super) type Stamps = BTreeMap<PathBuf, Option<(u64, SystemTime)>>;

/// The files a reload reads: the config and the files it names, each with when it was written.
pub(super) fn stamps(config: &Path, deployment: &Deployment) -> Stamps {
    let mut files = vec![config.to_path_buf()];
    files.extend(deployment.current().running.watched_files());
    files
        .into_iter()
        .filter_map(|file| std::path::absolute(file).ok())
        .map(|file| {
            let stamp = std::fs::metadata(&file)
                .ok()
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            (file, stamp)
        })
        .collect()
}

/// Watches the config and the files it names; after a burst of changes to them settles (see
/// `settling.rs`: quiet, or at most a second after its first change), asks for a reload when
/// one of those files is not as the last reload found it — a file written and then signalled
/// (a deploy tool's way) is reloaded once, by the signal.
async fn watch(
    deployment: Arc<Deployment>,
    config: PathBuf,
    tell: tokio::sync::mpsc::Sender<&'static str>,
) {
    // The paths an event names; `None` when it cannot say (a lost event, an error).
    let (events, mut heard) = tokio::sync::mpsc::unbounded_channel::<Option<Vec<PathBuf>>>();
    let mut watcher = match notify::recommended_watcher(
        move |event: notify::Result<notify::Event>| {
            let paths = event
                .ok()
                .filter(|event| !event.need_rescan())
                .map(|event| event.paths);
            let _ = events.send(paths);
        },
    ) {
        Ok(watcher) => watcher,
        Err(error) => {
            tracing::warn!(%error, "config files are not watched; reload with SIGHUP or `concierge reload`");
            return;
        }
    };
    deployment.found(stamps(&config, &deployment));
    let mut found = deployment.found.subscribe();
    let mut asked = None;
    let mut watched = Vec::new();
    loop {
        let files = watched_paths(found.borrow_and_update().keys());
        // Folders, not files: a file replaced by a rename (editors, Kubernetes) is seen too.
        let folders: BTreeSet<PathBuf> = files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        for folder in &folders {
            if !watched.contains(folder)
                && watcher
                    .watch(folder, notify::RecursiveMode::NonRecursive)
                    .is_ok()
            {
                watched.push(folder.clone());
            }
        }
        // Only the watched files count: an audit log or a log file beside them, written on
        // every call, is no change, and would otherwise keep the burst from ever settling.
        let concerns = |paths: &Option<Vec<PathBuf>>| {
            paths
                .as_ref()
                .is_none_or(|paths| paths.iter().any(|path| files.contains(path)))
        };
        let first = loop {
            tokio::select! {
                // A reload named other files: watch those instead.
                changed = found.changed() => match changed {
                    Ok(()) => break None,
                    Err(_) => return,
                },
                paths = heard.recv() => match paths {
                    None => return,
                    Some(paths) if concerns(&paths) => break Some(Instant::now()),
                    Some(_) => {}
                },
            }
        };
        let Some(first) = first else { continue };
        let mut burst = Burst::starting(first);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(tokio::time::Instant::from_std(burst.due())) => break,
                paths = heard.recv() => match paths {
                    None => return,
                    Some(paths) if concerns(&paths) => burst.changed(Instant::now()),
                    Some(_) => {}
                },
            }
        }
        // Asked once per state of the files: a reload slower than the settling time has not
        // said what it found yet, and asking again would build the same config twice.
        let now = stamps(&config, &deployment);
        if now != deployment.last_found() && asked.as_ref() != Some(&now) {
            asked = Some(now);
            let _ = tell.send("file change").await;
        }
    }
}

/// The paths whose events are changes of `files`: each file, and for a file reached through a
/// symlink in its own folder — a Kubernetes volume mounts `config.toml -> ..data/config.toml`
/// and swaps `..data` when the ConfigMap changes — that link.
fn watched_paths<'a>(files: impl Iterator<Item = &'a PathBuf>) -> BTreeSet<PathBuf> {
    let mut paths = BTreeSet::new();
    for file in files {
        paths.insert(file.clone());
        if let (Ok(target), Some(folder)) = (std::fs::read_link(file), file.parent())
            && let Some(std::path::Component::Normal(first)) = target.components().next()
        {
            paths.insert(folder.join(first));
        }
    }
    paths
}

/// Where the server serving the config at `path` writes its pid: `[server] pid_file` read alone
/// (the rest of the config, and the variables only the server's environment has, do not
/// matter here), relative to the config's folder.
pub fn pid_file_of(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config: toml::Value =
        toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
    let written = match config.get("server").and_then(|s| s.get("pid_file")) {
        Some(toml::Value::String(written)) => {
            crate::config::interpolate::substitute(written, env, &Default::default())
                .map_err(|e| format!("server.pid_file: {e}"))?
        }
        Some(_) => return Err("server.pid_file: must be a path".into()),
        None => "var/concierge.pid".into(),
    };
    let folder = path.parent().unwrap_or(Path::new(""));
    Ok(std::path::absolute(folder.join(written)).unwrap_or_default())
}

/// `concierge reload`: signals the server whose pid `pid_file` holds and waits (at most
/// `wait`) for its verdict in the status file beside it. `Ok` with the status when the change
/// was applied, `Err` with the reason when it was rejected or nobody answered.
#[cfg(unix)]
pub async fn ask(pid_file: &Path, wait: Duration) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(pid_file).map_err(|e| {
        format!(
            "no running server found: cannot read {} ({e}); is it serving this config? Name its \
             pid file with --pid-file",
            pid_file.display()
        )
    })?;
    let pid: i32 = text
        .trim()
        .parse()
        .map_err(|_| format!("{} does not hold a process id", pid_file.display()))?;
    let status_path = status_file(pid_file);
    let attempts = |path: &Path| -> Option<(u64, serde_json::Value)> {
        let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        Some((value["attempts"].as_u64()?, value))
    };
    let before = attempts(&status_path).map_or(0, |(n, _)| n);
    // SAFETY: kill only sends a signal to the process the pid file names.
    if unsafe { libc::kill(pid, libc::SIGHUP) } != 0 {
        return Err(format!(
            "process {pid} (from {}) cannot be signalled: {}",
            pid_file.display(),
            std::io::Error::last_os_error()
        ));
    }
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        if let Some((n, status)) = attempts(&status_path)
            && n > before
        {
            return match status["status"].as_str() {
                Some("applied") => Ok(status),
                _ => Err(format!(
                    "the new config was rejected; the running one stays: {}",
                    status["error"].as_str().unwrap_or("(no reason given)")
                )),
            };
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(format!(
        "process {pid} was signalled but said nothing within {} s",
        wait.as_secs()
    ))
}
