//! Templates compiled once at start-up; rendering never panics and never sees secrets.

use minijinja::{Environment, Value as Jinja};
use serde_json::{Map, Value};

/// The template environment every upstream tool shares: minijinja's builtins plus `join_natural`.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    // Lists read as people write them: "A和B", "A、B和C" — `sep` and `last` are configurable.
    env.add_filter("join_natural", join_natural);
    env
}

fn join_natural(items: Vec<String>, sep: Option<String>, last: Option<String>) -> String {
    let sep = sep.unwrap_or_else(|| "、".into());
    let last = last.unwrap_or_else(|| "和".into());
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., tail] => format!("{}{last}{tail}", init.join(&sep)),
    }
}

/// A string that is a template: either a whole-value expression or text.
#[derive(Debug, Clone)]
pub enum Piece {
    Expression(String),
    Text(String),
}

impl Piece {
    pub fn parse(text: &str) -> Self {
        let trimmed = text.trim();
        if let Some(inner) = trimmed
            .strip_prefix("{{")
            .and_then(|t| t.strip_suffix("}}"))
            && !inner.contains("{{")
            && !inner.contains("}}")
        {
            return Self::Expression(inner.trim().to_string());
        }
        Self::Text(text.to_string())
    }

    /// Checks the template compiles, so `concierge check` finds a typo before a call does.
    pub fn compile(&self, env: &Environment<'static>) -> Result<(), String> {
        match self {
            Self::Expression(expression) => env.compile_expression(expression).map(|_| ()),
            Self::Text(text) => env.template_from_str(text).map(|_| ()),
        }
        .map_err(|e| e.to_string())
    }

    /// Evaluates to a JSON value; `None` when an expression is missing (undefined or none).
    pub fn eval(
        &self,
        env: &Environment<'static>,
        context: &Jinja,
    ) -> Result<Option<Value>, String> {
        match self {
            Self::Expression(expression) => {
                let value = env
                    .compile_expression(expression)
                    .and_then(|e| e.eval(context))
                    .map_err(|e| e.to_string())?;
                if value.is_undefined() || value.is_none() {
                    return Ok(None);
                }
                serde_json::to_value(&value)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Self::Text(text) => env
                .render_str(text, context)
                .map(|s| Some(Value::String(s)))
                .map_err(|e| e.to_string()),
        }
    }
}

/// A JSON document whose strings are templates (a request body).
#[derive(Debug, Clone)]
pub enum Shape {
    Piece(Piece),
    Object(Vec<(String, Shape)>),
    Array(Vec<Shape>),
    Literal(Value),
}

impl Shape {
    pub fn parse(value: &Value) -> Self {
        match value {
            Value::String(text) => Self::Piece(Piece::parse(text)),
            Value::Object(object) => Self::Object(
                object
                    .iter()
                    .map(|(k, v)| (k.clone(), Self::parse(v)))
                    .collect(),
            ),
            Value::Array(items) => Self::Array(items.iter().map(Self::parse).collect()),
            other => Self::Literal(other.clone()),
        }
    }

    pub fn compile(&self, env: &Environment<'static>) -> Result<(), String> {
        match self {
            Self::Piece(piece) => piece.compile(env),
            Self::Object(fields) => fields.iter().try_for_each(|(_, v)| v.compile(env)),
            Self::Array(items) => items.iter().try_for_each(|v| v.compile(env)),
            Self::Literal(_) => Ok(()),
        }
    }

    /// Renders the document; object fields whose expression is missing are left out.
    pub fn render(
        &self,
        env: &Environment<'static>,
        context: &Jinja,
    ) -> Result<Option<Value>, String> {
        Ok(match self {
            Self::Piece(piece) => piece.eval(env, context)?,
            Self::Literal(value) => Some(value.clone()),
            Self::Object(fields) => {
                let mut object = Map::new();
                for (key, shape) in fields {
                    if let Some(value) = shape.render(env, context)? {
                        object.insert(key.clone(), value);
                    }
                }
                Some(Value::Object(object))
            }
            Self::Array(items) => {
                let mut rendered = Vec::with_capacity(items.len());
                for item in items {
                    rendered.push(item.render(env, context)?.unwrap_or(Value::Null));
                }
                Some(Value::Array(rendered))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(template: Value, context: Value) -> Value {
        let env = environment();
        let shape = Shape::parse(&template);
        shape.compile(&env).unwrap();
        shape
            .render(&env, &Jinja::from(minijinja::value::Serde(&context)))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn whole_expressions_keep_their_type_and_missing_ones_are_left_out() {
        let body = render(
            json!({"context": "{{ customer_context }}", "days": "{{ days }}", "absent": "{{ nothing }}", "channel": "mcp"}),
            json!({"customer_context": {"adults": 2}, "days": 3}),
        );
        assert_eq!(
            body,
            json!({"context": {"adults": 2}, "days": 3, "channel": "mcp"})
        );
    }

    #[test]
    fn text_templates_render_conditionals_and_natural_lists() {
        let body = render(
            json!({
                "price": "{{ route_name }}{% if days %}{{ days }}日游{% endif %}多少钱？",
                "compare": "{{ route_names | join_natural }}哪个更适合{{ focus }}？"
            }),
            json!({"route_name": "黄小西", "route_names": ["黄小西", "小西镇梵", "小七孔"], "focus": "老人小孩"}),
        );
        assert_eq!(body["price"], "黄小西多少钱？");
        assert_eq!(
            body["compare"],
            "黄小西、小西镇梵和小七孔哪个更适合老人小孩？"
        );
        assert_eq!(
            join_natural(vec!["黄小西".into(), "小西镇梵".into()], None, None),
            "黄小西和小西镇梵"
        );
        assert_eq!(
            join_natural(
                vec!["A".into(), "B".into(), "C".into()],
                Some(", ".into()),
                Some(" and ".into())
            ),
            "A, B and C"
        );
    }

    #[test]
    fn a_broken_template_is_found_at_compile_time() {
        let env = environment();
        assert!(
            Shape::parse(&json!({"q": "{% if x %}never closed"}))
                .compile(&env)
                .is_err()
        );
        assert!(
            Shape::parse(&json!({"q": "{{ x + }}"}))
                .compile(&env)
                .is_err()
        );
    }
}
