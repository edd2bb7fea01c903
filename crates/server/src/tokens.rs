//! Static bearer tokens per client, exactly as the ski seed describes `APP_MCP_TOKENS`.
//!
//! `name:token,name:token`. The name becomes the caller. A malformed list is a deployment error
//! that must be loud (every request 500, the log says what), never a silent lock-out; an empty
//! list refuses everyone. Tokens are compared in constant time and never logged.

use subtle::ConstantTimeEq;

/// The parsed list, or why it cannot be used.
#[derive(Debug, Clone)]
pub enum TokenList {
    Valid(Vec<(String, Vec<u8>)>),
    /// What is wrong, in words safe to log: names and positions, never token text.
    Malformed(String),
}

impl TokenList {
    pub fn parse(list: &str) -> Self {
        let mut clients: Vec<(String, Vec<u8>)> = Vec::new();
        for (index, entry) in list.split(',').enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue; // a trailing comma is not worth a 500
            }
            let position = index + 1;
            let Some((name, token)) = entry.split_once(':') else {
                return Self::Malformed(format!("entry {position} is not `name:token`"));
            };
            let (name, token) = (name.trim(), token.trim());
            if name.is_empty() {
                return Self::Malformed(format!("entry {position} has no client name"));
            }
            if token.is_empty() {
                return Self::Malformed(format!(
                    "client `{name}` (entry {position}) has an empty token"
                ));
            }
            if clients.iter().any(|(known, _)| known == name) {
                return Self::Malformed(format!("client name `{name}` appears twice"));
            }
            if let Some((other, _)) = clients
                .iter()
                .find(|(_, known)| known.as_slice() == token.as_bytes())
            {
                return Self::Malformed(format!("clients `{other}` and `{name}` share one token"));
            }
            clients.push((name.to_string(), token.as_bytes().to_vec()));
        }
        Self::Valid(clients)
    }

    /// Whether the list has a token for client `name`.
    pub fn names(&self, name: &str) -> bool {
        matches!(self, Self::Valid(clients) if clients.iter().any(|(known, _)| known == name))
    }

    /// The client whose token this is. Every entry is compared, so timing says nothing about
    /// which entry (or how much of one) matched.
    pub fn authenticate(&self, presented: &str) -> Option<&str> {
        let Self::Valid(clients) = self else {
            return None;
        };
        let mut found = None;
        for (name, token) in clients {
            if bool::from(token.as_slice().ct_eq(presented.as_bytes())) {
                found = Some(name.as_str());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn malformed(list: &str) -> String {
        match TokenList::parse(list) {
            TokenList::Malformed(why) => why,
            TokenList::Valid(_) => panic!("`{list}` should be malformed"),
        }
    }

    #[test]
    fn names_become_callers() {
        let list = TokenList::parse("n8n:3f9c, claude-desktop:a71e");
        assert_eq!(list.authenticate("a71e"), Some("claude-desktop"));
        assert_eq!(list.authenticate("3f9c"), Some("n8n"));
        assert_eq!(list.authenticate("3f9"), None);
        assert_eq!(list.authenticate(""), None);
    }

    #[test]
    fn malformed_lists_say_why_without_tokens() {
        assert_eq!(malformed("n8n:aa,:bb"), "entry 2 has no client name");
        assert_eq!(
            malformed("n8n:aa,n8n:bb"),
            "client name `n8n` appears twice"
        );
        assert_eq!(
            malformed("n8n:secret,claude:secret"),
            "clients `n8n` and `claude` share one token"
        );
        assert_eq!(
            malformed("n8n:"),
            "client `n8n` (entry 1) has an empty token"
        );
        assert_eq!(malformed("justatoken"), "entry 1 is not `name:token`");
        assert!(!malformed("n8n:secret,claude:secret").contains("secret"));
    }

    #[test]
    fn an_empty_list_admits_nobody() {
        let list = TokenList::parse("");
        assert!(matches!(&list, TokenList::Valid(c) if c.is_empty()));
        assert_eq!(list.authenticate(""), None);
    }
}
