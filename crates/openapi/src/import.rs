//! `concierge import openapi SPEC`: the `[apps.<name>]` section for a document, for a person to
//! curate — every operation with what it would cost a model to have it in its tool list, the
//! chosen ones (`--operation`, `--tag`) listed, the rest commented out, write overrides stubbed
//! for the methods that change things.

use std::path::Path;
use std::sync::Arc;

use concierge_core::Tool;

use crate::document::{Document, Notes};
use crate::operation::{Listed, listed};
use crate::tool::{Api, OperationTool};

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
        let api = Arc::new(Api::none());
        let chosen = |l: &Listed| {
            self.operations.contains(&l.id) || l.tags.iter().any(|t| self.tags.contains(t))
        };
        let mut lines = Vec::new();
        let mut total = 0usize;
        let mut chosen_total = 0usize;
        let mut writes = Vec::new();
        for operation in &all {
            let cost = match cost(&document, operation, &api) {
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

/// What one operation costs in a tool list: its tool as listed, in bytes / 4. Planned from the
/// listing in hand: the document is listed once for the whole import, not once per operation.
fn cost(document: &Document, operation: &Listed, api: &Arc<Api>) -> Result<usize, String> {
    let mut notes = Notes::default();
    let planned = crate::operation::operation(document, operation, Default::default(), &mut notes)?;
    Ok(OperationTool::new(planned, api.clone())
        .spec()
        .list_tokens())
}
