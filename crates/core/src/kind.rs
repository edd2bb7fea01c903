//! A kind of app, as one type: the name configs give it, the settings an instance's section is
//! read into, and how an instance is built. The binary registers a kind by naming the type once
//! (`Apps::kind::<K>()`), so a kind cannot be offered without its settings type (the config's
//! JSON Schema and reference are made from it) nor a settings type registered under a name no
//! builder answers to.

use std::future::Future;

use crate::{BoxFuture, ToolSet};

pub trait Kind: 'static {
    /// The name `[apps.<name>] kind = "…"` uses (and the section's name when it has no `kind`).
    const NAME: &'static str;

    /// What an instance's `[apps.<name>]` section, without `kind`, is read into. Its doc
    /// comments are the config reference's words for each key.
    type Settings: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static;

    /// One instance of the kind, from its section: its tools and what the platform asks of it.
    fn build(settings: Self::Settings) -> impl Future<Output = Result<ToolSet, String>> + Send;

    /// The job an instance runs beside its tools while the deployment is served (a content
    /// sync schedule, say), for a kind that has one: from the settings, what it opens, then
    /// the future that runs. `check` and stdio serving never start it. None by default.
    fn background() -> Option<BackgroundJob<Self::Settings>> {
        None
    }
}

/// How a kind starts an instance's background job ([`Kind::background`]).
pub type BackgroundJob<S> = fn(S) -> BoxFuture<'static, Result<BoxFuture<'static, ()>, String>>;
