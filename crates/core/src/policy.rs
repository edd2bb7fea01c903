//! The per-tool policy a config writes for a tool of a kind that declares its tools from config
//! (`sql`, `openapi`, `mcp`): one set of keys, read and applied the same way for every kind, so
//! a key means the same wherever it is written. A kind finds what a tool is (a statement, an
//! operation, an upstream's listing), builds its [`ToolSpec`] from that, and hands it to
//! [`ToolPolicy::apply`]; its config check reports [`ToolPolicy::problems`].

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{Annotations, ToolSpec, WriteSafety};

/// The hints `annotations` may set: our name and MCP's for each.
const HINTS: [(&str, &str); 4] = [
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
];

/// What concierge publishes and enforces for one tool, over what its kind finds.
///
/// Embedded in a kind's per-tool section with `#[serde(flatten)]`: the section keeps
/// `deny_unknown_fields`, and its JSON Schema lists these keys beside its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ToolPolicy {
    /// The tool's name as clients see it: 1–64 letters, digits, `_`, `-` or `.` (a `sql`
    /// tool's: a lower-case letter, then lower-case letters, digits or `_`). Default: the
    /// operation's `operationId` in snake_case, or the MCP server's own name (or its `rename`);
    /// a `sql` tool must set it.
    pub name: Option<String>,
    /// A short name a client may show people (default: the operation's `summary`, or the MCP
    /// server's title).
    pub title: Option<String>,
    /// What the tool is for, written for the model (default: the operation's summary and
    /// description, or the MCP server's description); a `sql` tool must set it.
    pub description: Option<String>,
    /// The tool changes something: the platform's write safety applies — a required
    /// `idempotency_key` (the same key again answers the first result without acting twice)
    /// and, where the kind can tell what would change, a `dry_run`. Never announced read-only.
    /// A `sql` write needs an instance with `read_only = false`; an OpenAPI operation that
    /// declares an `Idempotency-Key` header is sent the key there.
    pub write: bool,
    /// With `write`: the first call answers a preview and a confirm token, and only a call
    /// carrying the token acts.
    pub confirm: bool,
    /// Hints for clients, each `true` or `false`, over the ones the kind sets (from the SQL
    /// statement, the HTTP method, or the MCP server's own): `read_only`, `destructive`,
    /// `idempotent`, `open_world`, or MCP's names for them (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`). A write is never read-only; a read-only tool is
    /// never destructive.
    pub annotations: BTreeMap<String, bool>,
    /// OAuth scopes a caller's token needs for this tool, besides the endpoint's.
    pub scopes: Vec<String>,
    /// Argument names whose values never reach the audit log.
    pub secret_arguments: Vec<String>,
}

impl ToolPolicy {
    /// The policy over `spec`, which holds what the kind found: its name, title, description
    /// and hints. Sets the spec's scopes, secret arguments and write safety.
    pub fn apply(&self, spec: &mut ToolSpec) {
        if let Some(name) = &self.name {
            spec.name.clone_from(name);
        }
        if let Some(title) = &self.title {
            spec.title = Some(title.clone());
        }
        if let Some(description) = &self.description {
            spec.description.clone_from(description);
        }
        spec.annotations = self.annotations_over(spec.annotations);
        spec.scopes.clone_from(&self.scopes);
        spec.secret_fields.clone_from(&self.secret_arguments);
        spec.write = self.write.then_some(WriteSafety::confirmed(self.confirm));
    }

    /// `annotations` merged over the kind's hints; a write is never read-only, and a read-only
    /// tool is not destructive (MCP reads `destructiveHint` only for a tool that is not
    /// read-only: said plainly here).
    pub fn annotations_over(&self, defaults: Annotations) -> Annotations {
        let mut annotations = defaults;
        for (key, value) in &self.annotations {
            if let Some(hint) = hint(&mut annotations, key) {
                *hint = *value;
            }
        }
        if self.write {
            annotations.read_only = false;
        }
        if annotations.read_only {
            annotations.destructive = false;
        }
        annotations
    }

    /// What is wrong with the policy as written, one sentence each, naming the key; the kind
    /// says which tool (`override.<id>: …`).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.confirm && !self.write {
            problems.push(
                "`confirm` needs `write = true` (confirmation is for write tools)".to_string(),
            );
        }
        for (key, text) in [
            ("name", &self.name),
            ("title", &self.title),
            ("description", &self.description),
        ] {
            if text.as_deref().is_some_and(|text| text.trim().is_empty()) {
                problems.push(format!("`{key}` is empty: leave it out, or write one"));
            }
        }
        for key in self.annotations.keys() {
            if hint(&mut Annotations::read_only(), key).is_none() {
                let known: Vec<String> =
                    HINTS.iter().map(|(ours, _)| format!("`{ours}`")).collect();
                problems.push(format!(
                    "`annotations`: `{key}` is none of {} (or MCP's names: `readOnlyHint`, …)",
                    known.join(", ")
                ));
            }
        }
        for (ours, theirs) in HINTS {
            if let (Some(one), Some(other)) =
                (self.annotations.get(ours), self.annotations.get(theirs))
                && one != other
            {
                problems.push(format!(
                    "`annotations`: `{ours}` and `{theirs}` are one hint, set to both `true` and \
                     `false`; keep one"
                ));
            }
        }
        let (ours, theirs) = HINTS[0];
        if self.write
            && [ours, theirs]
                .iter()
                .any(|key| self.annotations.get(*key) == Some(&true))
        {
            problems.push(format!(
                "`annotations`: a write (`write = true`) is never read-only; drop `{ours}`"
            ));
        }
        for scope in &self.scopes {
            if scope.is_empty() || scope.contains(char::is_whitespace) {
                problems.push(format!(
                    "`scopes`: `{scope}` is not one scope (a word without spaces)"
                ));
            }
        }
        problems
    }
}

/// The hint of `annotations` that `key` names, by our name or MCP's.
fn hint<'a>(annotations: &'a mut Annotations, key: &str) -> Option<&'a mut bool> {
    let at = HINTS
        .iter()
        .position(|(ours, theirs)| key == *ours || key == *theirs)?;
    // In the order of `HINTS`.
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = annotations;
    [read_only, destructive, idempotent, open_world]
        .into_iter()
        .nth(at)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    fn policy(keys: Value) -> ToolPolicy {
        serde_json::from_value(keys).expect("the policy reads")
    }

    /// What a kind found: a read tool named and described by it.
    fn found() -> ToolSpec {
        let mut spec = ToolSpec::new(
            "list_pets",
            "Lists the pets.",
            Map::new(),
            Map::new(),
            Annotations::read_only(),
        );
        spec.title = Some("List pets".into());
        spec
    }

    #[test]
    fn a_policy_of_nothing_leaves_what_the_kind_found() {
        let mut spec = found();
        ToolPolicy::default().apply(&mut spec);
        assert_eq!(spec.name, "list_pets");
        assert_eq!(spec.title.as_deref(), Some("List pets"));
        assert_eq!(spec.description, "Lists the pets.");
        assert_eq!(spec.annotations, Annotations::read_only());
        assert!(spec.write.is_none() && spec.scopes.is_empty() && spec.secret_fields.is_empty());
    }

    #[test]
    fn the_config_s_texts_scopes_and_secrets_win() {
        let mut spec = found();
        policy(json!({
            "name": "pets",
            "title": "Pets",
            "description": "Every pet of the shop.",
            "scopes": ["pets:read"],
            "secret_arguments": ["owner_phone"],
        }))
        .apply(&mut spec);
        assert_eq!(spec.name, "pets");
        assert_eq!(spec.title.as_deref(), Some("Pets"));
        assert_eq!(spec.description, "Every pet of the shop.");
        assert_eq!(spec.scopes, ["pets:read"]);
        assert_eq!(spec.secret_fields, ["owner_phone"]);
    }

    #[test]
    fn hints_by_either_name_are_merged_over_the_kind_s() {
        let mut spec = found();
        policy(json!({"annotations": {"open_world": true, "idempotentHint": false}}))
            .apply(&mut spec);
        assert_eq!(
            spec.annotations,
            Annotations {
                open_world: true,
                idempotent: false,
                ..Annotations::read_only()
            }
        );
    }

    #[test]
    fn a_write_is_never_read_only_and_gets_write_safety() {
        let mut spec = found();
        policy(json!({"write": true, "confirm": true, "annotations": {"destructive": true}}))
            .apply(&mut spec);
        assert!(!spec.annotations.read_only);
        assert!(spec.annotations.destructive);
        assert_eq!(spec.write, Some(WriteSafety::confirmed(true)));
        let mut spec = found();
        policy(json!({"write": true})).apply(&mut spec);
        assert_eq!(spec.write, Some(WriteSafety::confirmed(false)));
    }

    #[test]
    fn a_read_only_tool_is_not_destructive() {
        let mut spec = found();
        spec.annotations = Annotations {
            destructive: true,
            ..Annotations::additive_write()
        };
        policy(json!({"annotations": {"readOnlyHint": true}})).apply(&mut spec);
        assert!(spec.annotations.read_only && !spec.annotations.destructive);
    }

    #[test]
    fn a_sound_policy_has_no_problems() {
        let sound = policy(json!({
            "write": true,
            "confirm": true,
            "annotations": {"destructive": true, "idempotentHint": true, "open_world": false},
            "scopes": ["orders:write"],
        }));
        assert_eq!(sound.problems(), Vec::<String>::new());
    }

    #[test]
    fn each_problem_names_its_key() {
        let problems = policy(json!({
            "confirm": true,
            "description": " ",
            "annotations": {"dangerous": true, "idempotent": true, "idempotentHint": false},
            "scopes": ["orders write"],
        }))
        .problems();
        let all = problems.join("\n");
        for expected in [
            "`confirm` needs `write = true`",
            "`description` is empty",
            "`annotations`: `dangerous` is none of `read_only`, `destructive`, `idempotent`, \
             `open_world`",
            "`idempotent` and `idempotentHint` are one hint",
            "`scopes`: `orders write` is not one scope",
        ] {
            assert!(all.contains(expected), "{expected} in {all}");
        }
        assert_eq!(problems.len(), 5, "{all}");
        let read_only_write = policy(json!({"write": true, "annotations": {"readOnlyHint": true}}));
        assert_eq!(
            read_only_write.problems(),
            ["`annotations`: a write (`write = true`) is never read-only; drop `read_only`"]
        );
    }

    /// A kind's per-tool section, as the kinds embed the policy.
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Section {
        /// The kind's own key.
        sql: String,
        #[serde(flatten)]
        policy: ToolPolicy,
    }

    #[test]
    fn a_section_that_embeds_it_reads_its_keys_and_refuses_others() {
        let section: Section =
            serde_json::from_value(json!({"sql": "SELECT 1", "write": true, "name": "t"}))
                .expect("reads");
        assert!(section.policy.write);
        assert_eq!(section.policy.name.as_deref(), Some("t"));
        let error = serde_json::from_value::<Section>(json!({"sql": "SELECT 1", "wrte": true}))
            .expect_err("an unknown key is refused");
        assert!(
            error.to_string().contains("unknown field `wrte`"),
            "{error}"
        );
    }

    #[test]
    fn a_section_s_schema_lists_every_key_described_and_no_other() {
        let schema = schemars::schema_for!(Section).to_value();
        assert_eq!(schema["additionalProperties"], json!(false), "{schema:#}");
        let properties = schema["properties"].as_object().expect("properties");
        for key in [
            "sql",
            "name",
            "title",
            "description",
            "write",
            "confirm",
            "annotations",
            "scopes",
            "secret_arguments",
        ] {
            let described = properties
                .get(key)
                .and_then(|property| property.get("description"))
                .and_then(Value::as_str);
            assert!(
                described.is_some_and(|d| !d.is_empty()),
                "{key} in {schema:#}"
            );
        }
        assert_eq!(schema["required"], json!(["sql"]));
    }
}
