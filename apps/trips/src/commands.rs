//! The ski app's own subcommands, `concierge sync` and `concierge check-freshness`: the binary
//! flattens [`Command`] into its command line, reads `[apps.trips]`, and hands both here.
//! What a command prints and how it exits is decided here, where its meaning is known.

use std::time::Duration;

use crate::TripsConfig;
use crate::content::sync::{Outcome, RunOptions};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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
}

impl Command {
    /// Whether the command calls the feed, so the demo's simulated feed must be started first.
    pub fn calls_feed(&self) -> bool {
        matches!(self, Command::Sync { .. })
    }

    /// Runs the command. `Ok` carries what goes to stdout and whether the exit is a success;
    /// `Err` is a problem of the config or the mirror, said on stderr.
    pub async fn run(self, config: &TripsConfig) -> Result<Report, String> {
        match self {
            Command::Sync {
                refresh,
                ignore_window,
            } => {
                // An operator's run is never skipped for a slot: they asked for it now.
                let options = RunOptions {
                    refresh,
                    ignore_window,
                    slot: None,
                };
                let report = crate::sync(config, options).await?;
                // Busy (another run has the lock) and paused (TYPO3 asked us to wait) are the
                // load rules working, not failures a cron job should mail about.
                let success = matches!(
                    report.outcome,
                    Outcome::Completed | Outcome::Busy | Outcome::Paused(_)
                );
                Ok(Report {
                    stdout: serde_json::to_string(&report).unwrap_or_default(),
                    stderr: String::new(),
                    success,
                })
            }
            Command::CheckFreshness { max_age } => {
                let max_age = Duration::from_secs(max_age.saturating_mul(60));
                let freshness = crate::check_freshness(config, max_age).await?;
                if freshness.fresh {
                    return Ok(Report {
                        stdout: freshness.message,
                        stderr: String::new(),
                        success: true,
                    });
                }
                tracing::error!(message = %freshness.message, "content feed is stale");
                Ok(Report {
                    stdout: String::new(),
                    stderr: freshness.message,
                    success: false,
                })
            }
        }
    }
}

/// How a command ended: what it says on stdout (a sync's report, for whoever keeps it) and on
/// stderr (a stale mirror, for the monitor that mails what a cron job writes there), and the
/// exit status.
#[derive(Debug)]
pub struct Report {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
}
