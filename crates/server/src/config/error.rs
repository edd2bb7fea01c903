//! One problem in a config, and where it is.

use std::fmt;

/// One problem in a config, with the key path it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub at: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            at: at.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}
