//! The `concierge` binary: reads the command line and wires config, apps and server together.
//! Everything it calls lives in a library crate; apps bring their own subcommands (the ski app's
//! `sync` and `check-freshness`, the bot's `chat` and `telegram`, the OAuth server's `token`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::pin::Pin;

use concierge_server::{Apps, Config, ConfigError, Platform, Start, section};

// The book's generated reference pages, written and compared by a test.
#[cfg(test)]
mod reference;
#[cfg(test)]
mod reference_tests;

#[derive(Parser)]
#[command(
    name = "concierge",
    version,
    about = "One MCP server for a business's own data: safe, audited, fast."
)]
struct Cli {
    /// The deployment's config file, written before or after any subcommand (`chat` and
    /// `telegram` read none).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        default_value = "concierge.toml"
    )]
    config: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve every endpoint of the config over HTTP (or one endpoint over stdio).
    Serve {
        /// Serve one endpoint's tools over stdin/stdout instead of HTTP.
        #[arg(long, requires = "endpoint")]
        stdio: bool,
        /// The endpoint path to serve over stdio, e.g. /coffee/mcp.
        #[arg(long)]
        endpoint: Option<String>,
    },
    /// Validate a config: keys, limits, environment, token lists, tool names. Exit 1 on error.
    Check {
        /// Also ask the systems the config names: a SQL instance's database prepares every
        /// statement (a misspelt column is reported with its tool) and says what each returns.
        #[arg(long)]
        live: bool,
    },
    /// Make the running server read its config again (and the files it names): it applies the
    /// change when `check` would pass it, else keeps serving what it serves. Exit 1 with the
    /// reason when the change was rejected.
    Reload {
        /// The pid file of the server (default: the config's `[server] pid_file`).
        #[arg(long, value_name = "PATH")]
        pid_file: Option<PathBuf>,
    },
    #[command(flatten)]
    Trips(concierge_trips::commands::Command),
    /// Read back audit events from a sink's table (`[audit.<name>] database`), one JSON object per
    /// line, oldest first: who called what, when, and how it ended.
    Audit {
        /// The sink's name; may be left out when only one sink has a database.
        #[arg(long)]
        sink: Option<String>,
        #[command(flatten)]
        filter: AuditFilter,
    },
    /// Operator helpers for the built-in OAuth server (`[oauth]`): users, clients, revocation.
    Token {
        #[command(subcommand)]
        operation: concierge_oauth::admin::Operation,
    },
    #[command(flatten)]
    Bot(concierge_agent::commands::Command),
    /// Look at an MCP server as a `kind = "mcp"` instance would reach it: print its tools (the
    /// names `tools = [...]` takes) and, with --call, one call's answer as it would be handed on.
    McpProbe(concierge_mcp::probe::Probe),
    /// What a config may hold, for editors and people: `config schema` prints its JSON Schema.
    Config {
        #[command(subcommand)]
        about: ConfigAbout,
    },
    /// Write a config section from what a system describes, for a person to curate.
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
}

#[derive(Subcommand)]
enum ConfigAbout {
    /// Print the JSON Schema of a config this binary reads (draft 7), generated from the types
    /// `check` reads it into: the shipped configs name it in their first line (`#:schema`), so
    /// Taplo / "Even Better TOML" completes and checks keys as you type.
    Schema,
}

#[derive(Subcommand)]
enum ImportSource {
    /// An `[apps.<name>] kind = "openapi"` section from an OpenAPI document: every operation
    /// with its cost in a model's tool list, the chosen ones (--operation, --tag) served.
    Openapi(concierge_openapi::import::Import),
}

/// Which audit events `concierge audit` prints.
#[derive(clap::Args)]
struct AuditFilter {
    /// The user (an OAuth token's subject).
    #[arg(long)]
    user: Option<String>,
    /// The client (a token list's name, an OAuth client id).
    #[arg(long)]
    client: Option<String>,
    #[arg(long)]
    tool: Option<String>,
    /// From this time on: RFC 3339 (2026-12-01T08:00:00Z), or that long before now (30m, 1h, 2d).
    #[arg(long, value_name = "TIME", value_parser = audit_time)]
    since: Option<String>,
    /// Before this time: RFC 3339, or that long before now (30m, 1h, 2d).
    #[arg(long, value_name = "TIME", value_parser = audit_time)]
    until: Option<String>,
    /// At most this many events (the newest).
    #[arg(long, default_value_t = 100)]
    limit: u32,
}

/// `--since` / `--until`, read when the command line is: a bad time is the flag's fault.
fn audit_time(text: &str) -> Result<String, String> {
    concierge_server::audit::parse_time(text, std::time::SystemTime::now())
}

impl From<AuditFilter> for concierge_server::audit::AuditQuery {
    fn from(f: AuditFilter) -> Self {
        Self {
            user: f.user,
            client: f.client,
            tool: f.tool,
            since: f.since,
            until: f.until,
            limit: f.limit,
        }
    }
}

fn apps() -> Apps {
    // Each kind once: its name, settings type (the config's JSON Schema and reference) and
    // builder come with its type.
    let apps = Apps::new()
        .kind::<concierge_coffee::Coffee>()
        .kind::<concierge_kgqa::Kgqa>()
        .kind::<concierge_upstream::Http>()
        .kind::<concierge_mcp::Mcp>()
        .kind::<concierge_openapi::OpenApi>()
        .kind::<concierge_sql::Sql>()
        .kind::<concierge_intake::Intake>()
        .kind::<concierge_trips::Trips>()
        .kind::<concierge_mappy::Mappy>()
        .handler("conformance", concierge_conformance::Fixtures::default)
        .settings::<concierge_conformance::Settings>("conformance");
    simulators(apps)
}

/// The demo's stand-ins for external systems (the `simulators` feature, on by default); without
/// them a config's `[simulators.<name>]` is an error of `check` and `serve`.
#[cfg(feature = "simulators")]
fn simulators(apps: Apps) -> Apps {
    apps.simulator("typo3", |config| async move {
        let config: concierge_sim_typo3::SimulatorConfig = section(&config)?;
        let (addr, serving) = concierge_sim_typo3::start(&config).await?;
        Ok((
            addr,
            Box::pin(serving) as Pin<Box<dyn Future<Output = ()> + Send>>,
        ))
    })
    .simulator("kgqa", |config| async move {
        let config: concierge_sim_kgqa::SimulatorConfig = section(&config)?;
        let (addr, serving) = concierge_sim_kgqa::start(&config).await?;
        Ok((
            addr,
            Box::pin(serving) as Pin<Box<dyn Future<Output = ()> + Send>>,
        ))
    })
    .simulator("mappy", |config| async move {
        let config: concierge_sim_mappy::SimulatorConfig = section(&config)?;
        concierge_sim_mappy::start(&config).await
    })
    .simulator_settings::<concierge_sim_typo3::SimulatorConfig>("typo3")
    .simulator_settings::<concierge_sim_kgqa::SimulatorConfig>("kgqa")
    .simulator_settings::<concierge_sim_mappy::SimulatorConfig>("mappy")
}

/// A production build (`--no-default-features`) registers none.
#[cfg(not(feature = "simulators"))]
fn simulators(apps: Apps) -> Apps {
    apps
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `check` answers with its report: what the apps log while they load (progress, notes on the
    // content of the demo's sample data such as feed codes without a product) is not a problem
    // of the config, so it stays out of the report unless RUST_LOG asks for it.
    let default_filter = match cli.command {
        Command::Check { .. } | Command::Reload { .. } => "error",
        Command::Bot(ref bot) => bot.log_filter(),
        _ => "info,rmcp=warn",
    };
    // Logs go to stderr: in stdio mode stdout belongs to the protocol. Spans go to OTLP when
    // the OTEL_* variables say so; the exporter starts here, outside the runtime, on a thread
    // of its own.
    let format = concierge_server::telemetry::log_format_of(&cli.config);
    let telemetry = concierge_server::telemetry::init(format, default_filter);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(cli.command, cli.config));
    // The spans of the last requests are sent before the process ends.
    drop(telemetry);
    code
}

async fn run(command: Command, config: PathBuf) -> ExitCode {
    match command {
        Command::Config {
            about: ConfigAbout::Schema,
        } => {
            use std::io::Write as _;
            let schema = apps().config_schema();
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
            // `concierge config schema | head` closes the pipe early: not an error of ours.
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            ExitCode::SUCCESS
        }
        Command::Import {
            source: ImportSource::Openapi(import),
        } => match import.run() {
            Ok(section) => {
                print!("{section}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("{error}");
                ExitCode::FAILURE
            }
        },
        Command::McpProbe(probe) => match probe.run().await {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("{error}");
                ExitCode::FAILURE
            }
        },
        Command::Bot(bot) => match bot.run().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("{error}");
                ExitCode::FAILURE
            }
        },
        Command::Audit { sink, filter } => {
            let filter = filter.into();
            let events = match load_config(&config, Start::Nothing).await {
                Ok(loaded) => {
                    concierge_server::audit::read_back(&loaded, sink.as_deref(), &filter).await
                }
                Err(error) => Err(error),
            };
            match events {
                Ok(events) => {
                    for event in events {
                        println!("{event}");
                    }
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::Token { operation } => match token(&config, operation).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => fail(&config, &error),
        },
        Command::Trips(command) => {
            // A sync calls the feed, which in the demo is a simulator started here for this run.
            let apps = apps();
            let start = if command.calls_feed() {
                Start::Simulators(&apps)
            } else {
                Start::Nothing
            };
            let trips = match trips_config(&config, start).await {
                Ok(trips) => trips,
                Err(error) => return fail(&config, &error),
            };
            match command.run(&trips).await {
                Ok(report) => {
                    if !report.stdout.is_empty() {
                        println!("{}", report.stdout);
                    }
                    if !report.stderr.is_empty() {
                        eprintln!("{}", report.stderr);
                    }
                    if report.success {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    }
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::Reload { pid_file } => {
            let pid_file = match pid_file {
                Some(path) => std::path::absolute(path).unwrap_or_default(),
                None => match concierge_server::reload::triggers::pid_file_of(&config, &|name| {
                    std::env::var(name).ok()
                }) {
                    Ok(path) => path,
                    Err(error) => return fail(&config, &error),
                },
            };
            match concierge_server::reload::triggers::ask(
                &pid_file,
                std::time::Duration::from_secs(60),
            )
            .await
            {
                Ok(status) => {
                    println!(
                        "reloaded (generation {}, {} ms)",
                        status["generation"], status["took_ms"]
                    );
                    if let Some(keys) = status["needs_restart"].as_array() {
                        for key in keys {
                            println!(
                                "  needs a restart, still as before: {}",
                                key.as_str().unwrap_or("")
                            );
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::Check { live } => {
            // Read before `build`, which enters the config's folder.
            let text = std::fs::read_to_string(&config).unwrap_or_default();
            check(&config, &text, live).await
        }
        Command::Serve { stdio, endpoint } => {
            let apps = apps();
            let start = if stdio {
                Start::Simulators(&apps)
            } else {
                Start::Server(&apps)
            };
            let (platform, listener, source) = match build(&config, start).await {
                Ok(built) => built,
                Err(errors) => return report(&config, &errors),
            };
            if stdio {
                let path = endpoint.unwrap_or_default();
                let served = concierge_server::serve_stdio(&platform, &path).await;
                platform.flush_audit();
                return match served {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error) => {
                        eprintln!("{error}");
                        ExitCode::FAILURE
                    }
                };
            }
            let Some(listener) = listener else {
                return ExitCode::FAILURE; // Start::Server binds one
            };
            let env: concierge_server::reload::Env =
                std::sync::Arc::new(|name: &str| std::env::var(name).ok());
            let deployment = concierge_server::Deployment::new(platform, source, env);
            let running = deployment.clone();
            let served = concierge_server::serve_http(deployment.clone(), listener, move |addr| {
                // Written without panicking: whoever started us may have closed stdout already.
                let banner = running.current().banner(addr);
                let _ = std::io::Write::write_all(&mut std::io::stdout(), banner.as_bytes());
                let _ = std::io::Write::flush(&mut std::io::stdout());
            })
            .await;
            // The sinks a reload kept or opened are the running platform's.
            deployment.current().flush_audit();
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("concierge: {error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// `concierge check`: every problem of the config, or what it serves and costs.
async fn check(config: &std::path::Path, text: &str, live: bool) -> ExitCode {
    match build(config, Start::Nothing).await {
        // A shared store that does not answer is a problem `check` exists to find; `serve`
        // starts without it and says so in /health until it answers.
        Ok((platform, _, _)) => {
            let mut problems = platform.warnings.clone();
            // What an editor with the schema underlines, `check` says too (a section no
            // endpoint serves is not built, so only the schema reads it).
            problems.extend(concierge_server::config::schema::problems(
                text,
                &apps().config_schema(),
            ));
            problems.extend(platform.unreachable_stores().await);
            let mut notes = Vec::new();
            if live {
                for (name, check) in &platform.live_checks {
                    let report = check().await;
                    let at = format!("apps.{name}");
                    problems.extend(
                        report
                            .problems
                            .into_iter()
                            .map(|p| ConfigError::new(&at, p)),
                    );
                    notes.extend(report.notes.into_iter().map(|n| format!("  {at}: {n}")));
                }
            }
            if !problems.is_empty() {
                return report(config, &problems);
            }
            println!(
                "{}: ok ({} endpoints)",
                config.display(),
                platform.endpoints.len()
            );
            // What each endpoint's tool list costs a model before it asks anything: the
            // number a person curating operations or an allowlist wants to see.
            for built in &platform.endpoints {
                let tools = built.guard.endpoint.tools();
                let tokens: usize = tools.iter().map(|t| t.spec().list_tokens()).sum();
                println!(
                    "  {}: {} tools, about {tokens} tokens in a tool list",
                    built.section.path,
                    tools.len()
                );
            }
            for note in notes {
                println!("{note}");
            }
            // How each limit counts: "60/minute" as a bucket lets nearly twice that through
            // in a rolling minute, so the policy is said, not implied.
            for (name, _) in &platform.stores {
                println!("  {}: ok", Platform::store_key(name));
            }
            for (name, limiter) in &platform.config.limits {
                if let Ok(rate) = concierge_server::config::Rate::parse(&limiter.rate) {
                    println!(
                        "  limits.{name} = {}: {}",
                        limiter.rate,
                        concierge_server::limits::explain(rate, limiter.policy)
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(errors) => report(config, &errors),
    }
}

/// Loads the config (binding what `start` says first, and spawning the simulators) and builds
/// the platform; also hands back the server's listener when one was bound.
#[allow(clippy::type_complexity)]
async fn build(
    path: &std::path::Path,
    start: Start<'_>,
) -> Result<
    (
        Platform,
        Option<tokio::net::TcpListener>,
        Option<concierge_server::Source>,
    ),
    Vec<ConfigError>,
> {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = concierge_server::load(path, &env, start).await?;
    for simulator in loaded.simulators {
        tokio::spawn(simulator);
    }
    let platform = Platform::build(loaded.config, apps(), &env).await?;
    Ok((platform, loaded.listener, Some(loaded.source)))
}

async fn token(
    path: &std::path::Path,
    operation: concierge_oauth::admin::Operation,
) -> Result<(), String> {
    let config = load_config(path, Start::Nothing).await?;
    let oauth = config.oauth.ok_or("the config has no [oauth] section")?;
    let shared = match config.state.database() {
        Some(url) => Some(std::sync::Arc::new(
            concierge_core::postgres::SharedDatabase::new(url)
                .map_err(|e| format!("state.database: {e}"))?,
        )),
        None => None,
    };
    let report =
        concierge_oauth::admin::run(&oauth, operation, &mut std::io::stdin().lock(), shared)
            .await
            .map_err(|e| e.to_string())?;
    print!("{report}");
    Ok(())
}

/// A config for a command that works on one part of it (no platform is built): loaded, checked,
/// and its directory entered so relative paths resolve. `start` binds the simulators a command
/// that calls an upstream needs.
async fn load_config(path: &std::path::Path, start: Start<'_>) -> Result<Config, String> {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = concierge_server::load(path, &env, start)
        .await
        .map_err(|errors| {
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })?;
    for simulator in loaded.simulators {
        tokio::spawn(simulator);
    }
    Ok(loaded.config)
}

/// The ski app's section of a config, for the commands that work on its content mirror.
async fn trips_config(
    path: &std::path::Path,
    start: Start<'_>,
) -> Result<concierge_trips::TripsConfig, String> {
    let config = load_config(path, start).await?;
    let trips = config
        .apps
        .get("trips")
        .ok_or("the config has no [apps.trips] section")?;
    section(trips).map_err(|e| format!("apps.trips.{e}"))
}

fn fail(path: &std::path::Path, error: &str) -> ExitCode {
    eprintln!("{}: {error}", path.display());
    ExitCode::FAILURE
}

fn report(path: &std::path::Path, errors: &[ConfigError]) -> ExitCode {
    eprintln!("{}: {} problem(s)", path.display(), errors.len());
    for error in errors {
        eprintln!("  {error}");
    }
    ExitCode::FAILURE
}
