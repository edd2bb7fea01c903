//! The bot's subcommands, `concierge chat` (the terminal) and `concierge telegram`: the binary
//! flattens [`Command`] into its command line and hands it here. They read no config file; what
//! they need comes from flags and the environment, and all of it is checked before the first
//! message is read.

use std::path::PathBuf;
use std::sync::Arc;

use crate::chat::ChatClient;
use crate::mcp::McpConnection;
use crate::store::HistoryStore;
use crate::telegram::TelegramBot;
use crate::{Agent, AgentSettings};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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

/// What `chat` and `telegram` share: the endpoint, the store, the prompt.
#[derive(Debug, clap::Args)]
pub struct BotArgs {
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

impl Command {
    /// Whether rmcp's own log lines should be silenced: the bots say themselves what failed (a
    /// refused token, an unreachable endpoint), and rmcp would repeat it as a dump of its types.
    pub fn log_filter(&self) -> &'static str {
        match self {
            Command::Chat { .. } => "warn,rmcp=off",
            Command::Telegram { .. } => "info,rmcp=off",
        }
    }

    /// Runs the bot until its input ends (`chat`) or forever (`telegram`); `Err` is what stopped
    /// it from starting.
    pub async fn run(self) -> Result<(), String> {
        match self {
            Command::Chat { bot } => chat(agent(&bot).await?).await,
            Command::Telegram {
                bot,
                api_url,
                poll_seconds,
            } => {
                let bot_token = std::env::var("TELEGRAM_BOT_TOKEN")
                    .ok()
                    .filter(|t| !t.is_empty())
                    .ok_or("TELEGRAM_BOT_TOKEN is not set")?;
                let agent = Arc::new(agent(&bot).await?);
                Arc::new(TelegramBot::new(&api_url, &bot_token, agent, poll_seconds))
                    .run()
                    .await;
                Ok(())
            }
        }
    }
}

/// The bot's agent: the model from OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL, the MCP
/// endpoint, and the conversation store. A refused token or a wrong URL is said now, by one
/// connection that lists the endpoint's tools, not answered with an apology later.
async fn agent(args: &BotArgs) -> Result<Agent, String> {
    let chat = ChatClient::from_env(&|name| std::env::var(name).ok())?;
    let mut settings = AgentSettings::default();
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
    Ok(Agent::new(chat, mcp, store, settings))
}

/// The terminal conversation: a line in, the bot's answer out; the shop's customers speak
/// Russian, and so does what the terminal says about its own commands.
async fn chat(agent: Agent) -> Result<(), String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Ok(Some(line)) = lines.next_line().await {
        let answer = match line.trim() {
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
    Ok(())
}
