//! One module per fuzz target: `run` takes a stranger's bytes to the parser they reach in
//! production and checks what must hold beyond "no panic". libFuzzer drives them
//! (`fuzz/fuzz_targets/`); so does the test command's smoke (`tests/smoke.rs`).

pub mod buspro_hotels;
pub mod coffee_menu;
pub mod config;
pub mod hotel_submit;
pub mod html_markdown;
pub mod kgqa_request;
pub mod mcp_request;
pub mod oauth_authorize;
pub mod oauth_client_metadata;
pub mod oauth_jwt;
pub mod oauth_register;
pub mod oauth_token;
pub mod openapi_document;
pub mod product_export;
pub mod tool_arguments;
pub mod typo3_manifest;
pub mod typo3_records;
pub mod upstream_answer;

/// A target's body: it panics on a finding.
pub type Body = fn(&[u8]);

/// Every target by name, as `fuzz/Cargo.toml` and `fuzz/corpus/` name them.
pub const ALL: &[(&str, Body)] = &[
    ("buspro_hotels", buspro_hotels::run),
    ("coffee_menu", coffee_menu::run),
    ("config", config::run),
    ("hotel_submit", hotel_submit::run),
    ("html_markdown", html_markdown::run),
    ("kgqa_request", kgqa_request::run),
    ("mcp_request", mcp_request::run),
    ("oauth_authorize", oauth_authorize::run),
    ("openapi_document", openapi_document::run),
    ("oauth_client_metadata", oauth_client_metadata::run),
    ("oauth_jwt", oauth_jwt::run),
    ("oauth_register", oauth_register::run),
    ("oauth_token", oauth_token::run),
    ("product_export", product_export::run),
    ("tool_arguments", tool_arguments::run),
    ("typo3_manifest", typo3_manifest::run),
    ("typo3_records", typo3_records::run),
    ("upstream_answer", upstream_answer::run),
];
