//! `concierge import openapi SPEC`: the `[apps.<name>]` section for a document, for a person to
//! curate — every operation with what it would cost a model to have it in its tool list, the
//! chosen ones (`--operation`, `--tag`) listed, the rest commented out, write overrides stubbed
//! for the methods that change things.

use std::collections::BTreeMap;
use std::path::Path;

use concierge_core::Tool;

use crate::document::{Document, Notes};
use crate::operation::{Listed, listed};
use crate::settings::OpenApiSettings;

#[derive(Debug, clap::Args)]
pub struct Import {
    /// The OpenAPI document (3.0 or 3.1, JSON or YAML).
    pub spec: String,
    /// Serve this operation (its operationId); repeatable.
    #[arg(long = "operation")]
    pub operations: Vec<String>,
    /// Serve every operation of this tag; repeatable.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// The instance's name (default: the document's file name).
    #[arg(long)]
    pub name: Option<String>,
}

impl Import {
    pub fn run(self) -> Result<String, String> {
        let document = Document::read(Path::new(&self.spec))?;
        let name = self.name.clone().unwrap_or_else(|| {
            let stem = Path::new(&self.spec)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "api".into());
            crate::naming::snake_case(&stem)
        });
        let all = listed(&document);
        let chosen = |l: &Listed| {
            self.operations.contains(&l.id) || l.tags.iter().any(|t| self.tags.contains(t))
        };
        let mut lines = Vec::new();
        let mut total = 0usize;
        let mut chosen_total = 0usize;
        let mut writes = Vec::new();
        for operation in &all {
            let cost = match cost(&document, &self.spec, operation) {
                Ok(cost) => cost,
                Err(why) => {
                    lines.push(format!("  # \"{}\",  — not servable: {why}", operation.id));
                    continue;
                }
            };
            total += cost;
            let line = format!(
                "\"{}\",  # {} {} — ≈{cost} tokens",
                operation.id,
                operation.method.to_ascii_uppercase(),
                operation.path
            );
            if chosen(operation) {
                chosen_total += cost;
                lines.push(format!("  {line}"));
                if !matches!(operation.method, "get" | "head" | "options") {
                    writes.push(operation.id.clone());
                }
            } else {
                lines.push(format!("  # {line}"));
            }
        }
        let server = crate::first_server(&document.root).ok();
        let mut out = String::new();
        out.push_str(&format!(
            "# {} operations in `{}`: a tool list of all of them costs a model ≈{total} tokens; \
             the chosen ones ≈{chosen_total}.\n# (≈ bytes of each tool as listed / 4.) Keep what \
             a model needs; uncomment to serve.\n",
            all.len(),
            self.spec
        ));
        out.push_str(&format!(
            "[apps.{name}]\nkind = \"openapi\"\nspec = \"{}\"\n",
            self.spec
        ));
        match server {
            Some(url) => out.push_str(&format!(
                "base_url = \"{url}\"   # the document's first server\n"
            )),
            None => out.push_str("base_url = \"https://…\"   # the document names none\n"),
        }
        out.push_str("# auth = { bearer = \"${API_TOKEN}\" }   # or api_key, or basic = { user, password }\n");
        out.push_str("operations = [\n");
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("]\n");
        for id in writes {
            out.push_str(&format!(
                "\n[apps.{name}.override.{id}]   # it changes things: ask first\nwrite = true\nconfirm = true\n"
            ));
        }
        Ok(out)
    }
}

/// What one operation costs in a tool list: its tool as listed, in bytes / 4.
fn cost(document: &Document, spec: &str, operation: &Listed) -> Result<usize, String> {
    let settings = OpenApiSettings {
        spec: spec.to_string(),
        base_url: Some("http://127.0.0.1".into()),
        auth: None,
        operations: vec![operation.id.clone()],
        timeout: std::time::Duration::from_secs(10),
        max_response_bytes: 1 << 20,
        overrides: BTreeMap::new(),
        language: None,
    };
    let mut notes = Notes::default();
    let chosen = crate::operation::chosen(document, &settings, &mut notes)
        .map_err(|problems| problems.join("; "))?;
    let Some(first) = chosen.into_iter().next() else {
        return Ok(0);
    };
    let tool =
        crate::tool::OperationTool::new(first, std::sync::Arc::new(crate::tool::Api::none()));
    Ok(tool.spec().list_tokens())
}
