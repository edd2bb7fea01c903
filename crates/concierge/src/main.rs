//! The `concierge` binary: reads the command line and wires config, apps and server together.
//! Everything it calls lives in a library crate.
//!
//! Over 600 lines: the command line's definitions and, still, the trips `sync`/`check-freshness` and bot wiring that issue 17 moves into their apps.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::pin::Pin;

use concierge_server::{Apps, Config, ConfigError, Platform, Start, section};

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
    Check,
    /// One content sync run of the ski app (`[apps.trips]`): the TYPO3 feed into the local mirror,
    /// under the feed's load rules. Exits 0 when another run holds the lock.
    Sync {
        /// Also refetch items older than 7 days, oldest first.
        #[arg(long)]
        refresh: bool,
        /// A deliberate bulk run: lift the daytime limit of 50 pages (01:00–05:00 Berlin has none).
        #[arg(long)]
        ignore_window: bool,
    },
    /// Exit 1 when the ski app's last good manifest is older than --max-age minutes.
    CheckFreshness {
        #[arg(long, default_value_t = 60)]
        max_age: u64,
    },
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
        action: TokenAction,
    },
    /// Talk to an MCP endpoint through a model, in the terminal (`/new` forgets the conversation).
    /// The model: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY, OPENAI_MODEL.
    Chat {
        #[command(flatten)]
        bot: BotArgs,
    },
    /// The shop's Telegram bot (long polling): TELEGRAM_BOT_TOKEN, and the model as for `chat`.
    Telegram {
        #[command(flatten)]
        bot: BotArgs,
        /// The Bot API base (a test server, a local Bot API server).
        #[arg(
            long,
            env = "TELEGRAM_API_URL",
            default_value = "https://api.telegram.org"
        )]
        api_url: String,
        /// Long-poll timeout in seconds.
        #[arg(long, default_value_t = 30)]
        poll_seconds: u32,
    },
}

#[derive(Subcommand)]
enum TokenAction {
    /// Create or update a local user who can sign in on the consent page. The password is read
    /// from the first line of standard input.
    AddUser {
        username: String,
        #[arg(long, default_value = "user")]
        role: String,
    },
    /// Register a confidential machine client for client_credentials (DeerFlow, n8n, …); prints
    /// its client_id and secret once.
    AddClient {
        #[arg(long)]
        name: String,
        /// A scope it may have; repeat for more.
        #[arg(long = "scope")]
        scopes: Vec<String>,
    },
    /// List registered clients.
    Clients,
    /// Remove a client and revoke every refresh token it holds.
    RevokeClient { client_id: String },
    /// List live sign-ins (refresh-token families): client, user, scopes, expiry.
    Tokens,
    /// Revoke one token, read from standard input: a refresh token (its whole family) or an
    /// access token (refused by the server within seconds).
    RevokeToken,
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

/// What `chat` and `telegram` share: the endpoint, the store, the prompt.
#[derive(clap::Args)]
struct BotArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/coffee/mcp.
    #[arg(long)]
    mcp: String,
    /// Bearer token for the endpoint.
    #[arg(long, env = "MCP_TOKEN")]
    token: Option<String>,
    /// Where conversations are kept.
    #[arg(long, default_value = "var/agent/history.sqlite")]
    history: PathBuf,
    /// A file with the system prompt (default: the coffee shop's, answers in Russian).
    #[arg(long)]
    prompt_file: Option<PathBuf>,
}

fn apps() -> Apps {
    let apps = Apps::new()
        .tools("coffee", |config| {
            concierge_coffee::build(&section(config)?, concierge_coffee::system_clock())
        })
        .tools("kgqa", |config| concierge_kgqa::build(&section(config)?))
        .tools_async("intake", |config| async move {
            concierge_intake::build(&section(&config)?).await
        })
        .tools_async("trips", |config| async move {
            concierge_trips::build(&section(&config)?).await
        })
        .background("trips", |config| async move {
            let job = concierge_trips::scheduler(&section(&config)?).await?;
            Ok(match job {
                Some(job) => Box::pin(job) as Pin<Box<dyn Future<Output = ()> + Send>>,
                None => Box::pin(std::future::ready(())),
            })
        })
        .tools("mappy", |config| concierge_mappy::build(&section(config)?))
        .handler("conformance", concierge_conformance::Fixtures::default);
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
    // The bots say themselves what failed (a refused token, an unreachable endpoint); rmcp's own
    // log lines would repeat it as a dump of its internal types.
    let default_filter = match cli.command {
        Command::Check => "error",
        Command::Chat { .. } => "warn,rmcp=off",
        Command::Telegram { .. } => "info,rmcp=off",
        _ => "info,rmcp=warn",
    };
    // Logs go to stderr: in stdio mode stdout belongs to the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli.command, cli.config))
}

async fn run(command: Command, config: PathBuf) -> ExitCode {
    match command {
        Command::Chat { bot } => chat(&bot).await,
        Command::Audit { sink, filter } => {
            let filter = filter.into();
            match audit(&config, sink.as_deref(), &filter).await {
                Ok(events) => {
                    for event in events {
                        println!("{event}");
                    }
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::Token { action } => match token(&config, action).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => fail(&config, &error),
        },
        Command::Sync {
            refresh,
            ignore_window,
        } => {
            // The feed may be the demo's simulator: started here for this run.
            let apps = apps();
            let trips = match trips_config(&config, Start::Simulators(&apps)).await {
                Ok(trips) => trips,
                Err(error) => return fail(&config, &error),
            };
            let options = concierge_trips::content::sync::RunOptions {
                refresh,
                ignore_window,
            };
            match concierge_trips::sync(&trips, options).await {
                Ok(report) => {
                    println!("{}", serde_json::to_string(&report).unwrap_or_default());
                    use concierge_trips::content::sync::Outcome;
                    match report.outcome {
                        Outcome::Completed | Outcome::Busy | Outcome::Paused(_) => {
                            ExitCode::SUCCESS
                        }
                        Outcome::ManifestFailed(_) | Outcome::Stopped(_) => ExitCode::FAILURE,
                    }
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::CheckFreshness { max_age } => {
            let trips = match trips_config(&config, Start::Nothing).await {
                Ok(trips) => trips,
                Err(error) => return fail(&config, &error),
            };
            let max_age = std::time::Duration::from_secs(max_age.saturating_mul(60));
            match concierge_trips::check_freshness(&trips, max_age).await {
                Ok(freshness) if freshness.fresh => {
                    println!("{}", freshness.message);
                    ExitCode::SUCCESS
                }
                Ok(freshness) => {
                    tracing::error!(message = %freshness.message, "content feed is stale");
                    eprintln!("{}", freshness.message);
                    ExitCode::FAILURE
                }
                Err(error) => fail(&config, &error),
            }
        }
        Command::Telegram {
            bot,
            api_url,
            poll_seconds,
        } => {
            let Some(bot_token) = std::env::var("TELEGRAM_BOT_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
            else {
                eprintln!("TELEGRAM_BOT_TOKEN is not set");
                return ExitCode::FAILURE;
            };
            let agent = match agent(&bot).await {
                Ok(agent) => agent,
                Err(error) => {
                    eprintln!("{error}");
                    return ExitCode::FAILURE;
                }
            };
            let bot = concierge_agent::telegram::TelegramBot::new(
                &api_url,
                &bot_token,
                std::sync::Arc::new(agent),
                poll_seconds,
            );
            std::sync::Arc::new(bot).run().await;
            ExitCode::SUCCESS
        }
        Command::Check => match build(&config, Start::Nothing).await {
            Ok((platform, _)) if platform.warnings.is_empty() => {
                println!(
                    "{}: ok ({} endpoints)",
                    config.display(),
                    platform.endpoints.len()
                );
                // How each limit counts: "60/minute" as a bucket lets nearly twice that through
                // in a rolling minute, so the policy is said, not implied.
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
            Ok((platform, _)) => report(&config, &platform.warnings),
            Err(errors) => report(&config, &errors),
        },
        Command::Serve { stdio, endpoint } => {
            let apps = apps();
            let start = if stdio {
                Start::Simulators(&apps)
            } else {
                Start::Server(&apps)
            };
            let (platform, listener) = match build(&config, start).await {
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
            let endpoints: Vec<(String, Option<String>)> = platform
                .endpoints
                .iter()
                .map(|e| {
                    let mut hint = e.demo_hint.clone();
                    if matches!(
                        e.section.auth,
                        concierge_server::config::AuthSection::Oauth { .. }
                    ) {
                        hint = Some(
                            "OAuth 2.1: clients discover the sign-in page from the endpoint".into(),
                        );
                    }
                    if let Some(legacy) = &e.section.legacy_sse {
                        let line = format!("legacy HTTP+SSE transport at {}", legacy.sse);
                        hint = Some(match hint {
                            Some(hint) => format!("{hint}\n               {line}"),
                            None => line,
                        });
                    }
                    (e.section.path.clone(), hint)
                })
                .collect();
            let Some(listener) = listener else {
                return ExitCode::FAILURE; // Start::Server binds one
            };
            let served = concierge_server::serve_http(&platform, listener, |addr| {
                // Written without panicking: whoever started us may have closed stdout already.
                let mut banner = format!("concierge listening on http://{addr}\n");
                for (path, hint) in &endpoints {
                    banner.push_str(&format!("  MCP endpoint http://{addr}{path}\n"));
                    if let Some(hint) = hint {
                        banner.push_str(&format!("               {hint}\n"));
                    }
                }
                banner.push_str(&format!("  health       http://{addr}/health\n"));
                let _ = std::io::Write::write_all(&mut std::io::stdout(), banner.as_bytes());
                let _ = std::io::Write::flush(&mut std::io::stdout());
            })
            .await;
            platform.flush_audit();
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

/// The bot's agent: the model from OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL, the MCP
/// endpoint, and the conversation store. Everything it needs is checked here, before the first
/// message is read: the model's key, the prompt, the history, and one connection to the MCP
/// endpoint that lists its tools (a refused token or a wrong URL is said now, not answered
/// with an apology later).
async fn agent(args: &BotArgs) -> Result<concierge_agent::Agent, String> {
    use concierge_agent::chat::ChatClient;
    use concierge_agent::mcp::McpConnection;
    use concierge_agent::store::HistoryStore;

    let chat = ChatClient::from_env(&|name| std::env::var(name).ok())?;
    let mut settings = concierge_agent::AgentSettings::default();
    if let Some(path) = &args.prompt_file {
        settings.system_prompt = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    }
    let store = HistoryStore::open(&args.history)
        .await
        .map_err(|e| format!("cannot open the history: {e}"))?;
    let mcp = McpConnection::new(&args.mcp, args.token.clone());
    let tools = mcp.check().await?;
    tracing::info!(endpoint = %args.mcp, tools, "MCP endpoint connected");
    Ok(concierge_agent::Agent::new(chat, mcp, store, settings))
}

async fn chat(args: &BotArgs) -> ExitCode {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let agent = match agent(args).await {
        Ok(agent) => agent,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = line.trim();
        let answer = match line {
            "" => continue,
            "/new" => match agent.forget("terminal").await {
                Ok(()) => "(история очищена)".to_string(),
                Err(error) => format!("(не удалось очистить историю: {error})"),
            },
            text => agent.reply("terminal", text).await,
        };
        if out
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            break;
        }
        let _ = out.flush().await;
    }
    ExitCode::SUCCESS
}

/// Loads the config (binding what `start` says first, and spawning the simulators) and builds
/// the platform; also hands back the server's listener when one was bound.
async fn build(
    path: &std::path::Path,
    start: Start<'_>,
) -> Result<(Platform, Option<tokio::net::TcpListener>), Vec<ConfigError>> {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = concierge_server::load(path, &env, start).await?;
    for simulator in loaded.simulators {
        tokio::spawn(simulator);
    }
    let platform = Platform::build(loaded.config, apps(), &env).await?;
    Ok((platform, loaded.listener))
}

async fn token(path: &std::path::Path, action: TokenAction) -> Result<(), String> {
    use concierge_oauth::admin::{Operation, run};
    let config = load_config(path, Start::Nothing).await?;
    let oauth = config.oauth.ok_or("the config has no [oauth] section")?;
    let operation = match action {
        TokenAction::AddUser { username, role } => Operation::AddUser { username, role },
        TokenAction::AddClient { name, scopes } => Operation::AddClient { name, scopes },
        TokenAction::Clients => Operation::Clients,
        TokenAction::RevokeClient { client_id } => Operation::RevokeClient { client_id },
        TokenAction::Tokens => Operation::Tokens,
        TokenAction::RevokeToken => Operation::RevokeToken,
    };
    let report = run(&oauth, operation, &mut std::io::stdin().lock())
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

/// The audit events of the sink with a table that `sink` names (or the only one).
async fn audit(
    path: &std::path::Path,
    sink: Option<&str>,
    filter: &concierge_server::audit::AuditQuery,
) -> Result<Vec<serde_json::Value>, String> {
    let config = load_config(path, Start::Nothing).await?;
    let with_table: Vec<(&String, &String)> = config
        .audit
        .iter()
        .filter_map(|(name, section)| section.database.as_ref().map(|db| (name, db)))
        .collect();
    let names = || {
        with_table
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let database = match sink {
        Some(sink) => with_table
            .iter()
            .find(|(name, _)| name.as_str() == sink)
            .map(|(_, db)| db.as_str())
            .ok_or_else(|| {
                format!(
                    "no sink `{sink}` with a database; sinks with one: {}",
                    names()
                )
            })?,
        None => match with_table.as_slice() {
            [(_, db)] => db.as_str(),
            [] => return Err("no [audit.<name>] sink has a database".into()),
            _ => {
                return Err(format!(
                    "several sinks have a database; choose one with --sink: {}",
                    names()
                ));
            }
        },
    };
    concierge_server::audit::query(database, filter).await
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
