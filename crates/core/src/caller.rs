/// Who is calling a tool, as the platform established it.
///
/// `client` is the system (the name from a token list, an OAuth client id, `stdio`); `user` is set
/// only when an authorization server vouches for a person. Apps may use both for tenancy, never
/// for authentication — that already happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub client: String,
    pub user: Option<String>,
    pub scopes: Vec<String>,
}

impl Caller {
    /// A caller known only by its client name (static tokens, stdio, loopback without auth).
    pub fn client(name: impl Into<String>) -> Self {
        Self {
            client: name.into(),
            user: None,
            scopes: Vec::new(),
        }
    }
}
