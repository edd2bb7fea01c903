//! A call's arguments as the HTTP request the operation describes: path templating with every
//! value one escaped segment, query styles (`form` exploded or not, space- and pipe-delimited,
//! `deepObject`), headers and cookies, a JSON or form body. The host, the path and the method
//! come from the document and the config only; an argument can fill a value, never choose one.

use concierge_core::ToolError;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use crate::operation::{Location, Media, Operation, Style};

/// What is escaped in a path segment or a cookie: everything but RFC 3986's unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A request ready to send.
#[derive(Debug)]
pub struct Built {
    pub url: reqwest::Url,
    pub headers: Vec<(String, String)>,
    pub body: Option<(Vec<u8>, &'static str)>,
}

pub fn build(
    operation: &Operation,
    base_url: &str,
    arguments: &Map<String, Value>,
) -> Result<Built, ToolError> {
    let mut path_values: Vec<(&str, String)> = Vec::new();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers = Vec::new();
    let mut cookies = Vec::new();
    for parameter in &operation.parameters {
        let Some(value) = arguments.get(&parameter.name).filter(|v| !v.is_null()) else {
            continue;
        };
        let value = if parameter.as_json {
            Value::String(value.to_string())
        } else {
            value.clone()
        };
        let name = &parameter.name;
        match parameter.location {
            Location::Path => path_values.push((
                name,
                path_value(name, &value, parameter.style, parameter.explode),
            )),
            Location::Query => query.extend(query_pairs(
                name,
                &value,
                parameter.style,
                parameter.explode,
            )),
            Location::Header => {
                let text = joined(&value, parameter.explode, ",", "=");
                fits_a_header(name, &text)?;
                headers.push((name.clone(), text));
            }
            Location::Cookie => {
                let text = joined(&value, parameter.explode, ",", ",");
                // Escaped below, so it could travel; but a control character in a value is
                // the caller's mistake, said as one, as for a header.
                fits_a_header(name, &text)?;
                cookies.push(format!("{name}={}", utf8_percent_encode(&text, SEGMENT)));
            }
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookies.join("; ")));
    }
    let path = expand_path(&operation.path, &path_values)?;
    let base = base_url.trim_end_matches('/');
    let mut url = reqwest::Url::parse(&format!("{base}{path}"))
        .map_err(|_| ToolError::internal("request_unbuilt", "the URL does not parse"))?;
    // Whatever the document's path and the arguments held, the request stays where the config
    // points: the same origin, under the base path.
    let root = reqwest::Url::parse(base)
        .map_err(|_| ToolError::internal("request_unbuilt", "the base URL does not parse"))?;
    let under = format!("{}/", root.path().trim_end_matches('/'));
    if url.origin() != root.origin() || !url.path().starts_with(&under) {
        return Err(ToolError::internal(
            "request_unbuilt",
            format!("the request would leave the base URL: {}", url.path()),
        ));
    }
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (name, value) in &query {
            pairs.append_pair(name, value);
        }
    }
    let body = match (operation.body, arguments.get("body")) {
        (Some(Media::Json), Some(body)) => Some((
            serde_json::to_vec(body).unwrap_or_default(),
            "application/json",
        )),
        (Some(Media::Form), Some(Value::Object(fields))) => {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            for (name, value) in fields {
                form.append_pair(name, &scalar(value));
            }
            Some((
                form.finish().into_bytes(),
                "application/x-www-form-urlencoded",
            ))
        }
        (Some(Media::Form), Some(_)) => {
            return Err(ToolError::invalid("body", "a form body must be an object"));
        }
        _ => None,
    };
    Ok(Built { url, headers, body })
}

/// A value in a path, escaped so it is one segment whatever it holds (`../admin` included).
fn path_value(name: &str, value: &Value, style: Style, explode: bool) -> String {
    let escape = |text: &str| utf8_percent_encode(text, SEGMENT).to_string();
    let items = |separator: &str, pair: &str| match value {
        Value::Array(items) => items
            .iter()
            .map(|i| escape(&scalar(i)))
            .collect::<Vec<_>>()
            .join(separator),
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| format!("{}{pair}{}", escape(k), escape(&scalar(v))))
            .collect::<Vec<_>>()
            .join(separator),
        other => escape(&scalar(other)),
    };
    let (separator, pair) = if explode { (",", "=") } else { (",", ",") };
    match style {
        Style::Label => {
            let separator = if explode { "." } else { "," };
            format!(".{}", items(separator, pair))
        }
        Style::Matrix => match value {
            Value::Array(list) if explode => list
                .iter()
                .map(|i| format!(";{name}={}", escape(&scalar(i))))
                .collect(),
            Value::Object(_) if explode => format!(";{}", items(";", "=")),
            _ => format!(";{name}={}", items(",", ",")),
        },
        _ => items(separator, pair),
    }
}

/// The document's path with each `{name}` replaced by its value's expansion, judged segment by
/// segment once expanded: a segment a value left empty, `.` or `..` would send the request to
/// another path (`/files/{name}/meta` with a label-style `""` is `/files/./meta`, which a URL
/// reads as `/files/meta`, an operation that may not be chosen), so it is refused, naming the
/// parameter. Judged decoded: a URL reads `%2e` as `.` too.
fn expand_path(template: &str, values: &[(&str, String)]) -> Result<String, ToolError> {
    let mut path = Vec::new();
    for segment in template.split('/') {
        let mut filled = segment.to_string();
        // The parameter named when the segment is refused: the first one in it.
        let mut first: Option<(usize, &str)> = None;
        for (name, text) in values {
            let placeholder = format!("{{{name}}}");
            if let Some(at) = segment.find(&placeholder) {
                filled = filled.replace(&placeholder, text);
                if first.is_none_or(|(before, _)| at < before) {
                    first = Some((at, name));
                }
            }
        }
        if let Some((_, name)) = first
            && is_dot_segment(&filled)
        {
            return Err(ToolError::invalid(
                name,
                "this value would make an empty, `.` or `..` path segment, which is not \
                 allowed: it would name another path",
            ));
        }
        path.push(filled);
    }
    Ok(path.join("/"))
}

/// Whether a URL reads `segment` as no step (empty, `.`) or a step up (`..`), escaped or not.
fn is_dot_segment(segment: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(segment).collect::<Vec<u8>>();
    matches!(decoded.as_slice(), b"" | b"." | b"..")
}

/// A header's (or cookie's) value as HTTP can carry it: no control character (a line break
/// would start another header, a NUL cut it short). Judged by the rule the sending client
/// applies, so a value it would refuse is the caller's error here, before anything is sent.
fn fits_a_header(name: &str, text: &str) -> Result<(), ToolError> {
    http::HeaderValue::from_bytes(text.as_bytes())
        .map(drop)
        .map_err(|_| {
            ToolError::invalid(
                name,
                "a control character (a line break, NUL, …) is not allowed in this value",
            )
        })
}

/// The query pairs of one parameter (encoded later, once, by the URL).
fn query_pairs(name: &str, value: &Value, style: Style, explode: bool) -> Vec<(String, String)> {
    match (value, style) {
        (Value::Object(fields), Style::DeepObject) => fields
            .iter()
            .map(|(k, v)| (format!("{name}[{k}]"), scalar(v)))
            .collect(),
        (Value::Array(items), Style::SpaceDelimited) => {
            vec![(name.to_string(), join(items, " "))]
        }
        (Value::Array(items), Style::PipeDelimited) => {
            vec![(name.to_string(), join(items, "|"))]
        }
        (Value::Array(items), _) if explode => items
            .iter()
            .map(|i| (name.to_string(), scalar(i)))
            .collect(),
        (Value::Object(fields), _) if explode => {
            fields.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()
        }
        (other, _) => vec![(name.to_string(), joined(other, false, ",", ","))],
    }
}

/// `simple`: an array as `a,b`, an object as `k,v,k2,v2` (or `k=v,k2=v2` exploded).
fn joined(value: &Value, explode: bool, separator: &str, pair: &str) -> String {
    match value {
        Value::Array(items) => join(items, separator),
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| {
                if explode {
                    format!("{k}={}", scalar(v))
                } else {
                    format!("{k}{pair}{}", scalar(v))
                }
            })
            .collect::<Vec<_>>()
            .join(separator),
        other => scalar(other),
    }
}

fn join(items: &[Value], separator: &str) -> String {
    items.iter().map(scalar).collect::<Vec<_>>().join(separator)
}

/// A value as text: a string as it is, anything else as its JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operation::Parameter;
    use serde_json::json;

    fn operation(path: &str, parameters: Vec<Parameter>, body: Option<Media>) -> Operation {
        Operation {
            id: "op".into(),
            spec: concierge_core::ToolSpec::new(
                "op",
                "",
                Map::new(),
                Map::new(),
                concierge_core::Annotations::read_only(),
            ),
            method: http::Method::GET,
            path: path.into(),
            parameters,
            body,
            idempotency_header: None,
            wraps_result: false,
        }
    }

    fn parameter(name: &str, location: Location, style: Style, explode: bool) -> Parameter {
        Parameter {
            name: name.into(),
            location,
            style,
            explode,
            as_json: false,
        }
    }

    /// An operation at `path` with the one parameter `name`, not exploded.
    fn with_one(path: &str, name: &str, location: Location, style: Style) -> Operation {
        operation(path, vec![parameter(name, location, style, false)], None)
    }

    /// `op` built on `base` with `arguments`, a JSON object.
    fn built_on(op: &Operation, base: &str, arguments: &Value) -> Result<Built, ToolError> {
        build(op, base, arguments.as_object().unwrap())
    }

    /// Each of `values` as the argument `field` is refused as invalid, naming the field.
    fn refused_as(op: &Operation, base: &str, field: &str, values: &[&str]) {
        for value in values {
            let error = built_on(op, base, &json!({ field: value })).unwrap_err();
            assert_eq!(error.code, "invalid_argument", "{value:?}");
            assert_eq!(error.field.as_deref(), Some(field), "{value:?}");
        }
    }

    #[test]
    fn a_path_value_is_one_segment_whatever_it_holds() {
        let op = with_one("/files/{name}", "name", Location::Path, Style::Simple);
        let arguments = json!({"name": "../admin?x=1#y"});
        let built = built_on(&op, "http://api.test/v1", &arguments).unwrap();
        assert_eq!(
            built.url.as_str(),
            "http://api.test/v1/files/..%2Fadmin%3Fx%3D1%23y"
        );
    }

    #[test]
    fn no_value_climbs_out_of_the_base_path() {
        let op = with_one("/files/{name}", "name", Location::Path, Style::Simple);
        refused_as(&op, "http://api.test/v1", "name", &["..", ".", ""]);
        // Escaped, `%2e%2e` is a name like any other, not a step up.
        let arguments = json!({"name": "%2e%2e"});
        let built = built_on(&op, "http://api.test/v1", &arguments).unwrap();
        assert_eq!(built.url.path(), "/v1/files/%252e%252e");
        let sneaky = operation("/../admin", vec![], None);
        let error = build(&sneaky, "http://api.test/v1", &Map::new()).unwrap_err();
        assert_eq!(error.code, "request_unbuilt");
    }

    #[test]
    fn no_expansion_names_another_path() {
        let label = with_one("/files/{name}/meta", "name", Location::Path, Style::Label);
        let list = with_one(
            "/bundles/{parts}/meta",
            "parts",
            Location::Path,
            Style::Simple,
        );
        let literal = with_one(
            "/files/%2E{name}/meta",
            "name",
            Location::Path,
            Style::Simple,
        );
        for (op, arguments) in [
            (&label, json!({"name": ""})),
            (&label, json!({"name": "."})),
            (&list, json!({"parts": [".."]})),
            (&list, json!({"parts": ["."]})),
            (&list, json!({"parts": []})),
            (&literal, json!({"name": ""})),
            (&literal, json!({"name": "."})),
        ] {
            let error = built_on(op, "http://api.test", &arguments).unwrap_err();
            assert_eq!(error.code, "invalid_argument", "{arguments}");
            let field = error.field.clone().unwrap();
            assert!(arguments.get(&field).is_some(), "{arguments}: {field}");
            assert!(error.message.contains("`..`"), "{}", error.message);
        }
        let arguments = json!({"name": "a"});
        let built = built_on(&label, "http://api.test", &arguments).unwrap();
        assert_eq!(built.url.path(), "/files/.a/meta");
        let arguments = json!({"parts": ["a", ".."]});
        let built = built_on(&list, "http://api.test", &arguments).unwrap();
        assert_eq!(built.url.path(), "/bundles/a,../meta");
    }

    #[test]
    fn query_styles_follow_the_spec() {
        let op = operation(
            "/pets",
            vec![
                parameter("tags", Location::Query, Style::Form, true),
                parameter("ids", Location::Query, Style::Form, false),
                parameter("filter", Location::Query, Style::DeepObject, true),
                parameter("pipes", Location::Query, Style::PipeDelimited, false),
            ],
            None,
        );
        let arguments = json!({"tags": ["a", "b c"], "ids": [1, 2], "filter": {"color": "red"}, "pipes": ["x", "y"]});
        let built = built_on(&op, "http://api.test", &arguments).unwrap();
        assert_eq!(
            built.url.query().unwrap(),
            "tags=a&tags=b+c&ids=1%2C2&filter%5Bcolor%5D=red&pipes=x%7Cy"
        );
    }

    #[test]
    fn a_header_cannot_smuggle_a_line() {
        let op = with_one("/x", "X-Trace", Location::Header, Style::Simple);
        let smuggling = ["a\r\nHost: evil", "a\u{0}b", "a\u{7f}"];
        refused_as(&op, "http://api.test", "X-Trace", &smuggling);
        let cookie = with_one("/x", "session", Location::Cookie, Style::Form);
        refused_as(&cookie, "http://api.test", "session", &["a\nb"]);
        // A tab and text beyond ASCII are a header value's like any other.
        let arguments = json!({"X-Trace": "a\tcafé"});
        assert!(built_on(&op, "http://api.test", &arguments).is_ok());
    }

    #[test]
    fn bodies_are_json_or_form() {
        let op = operation("/x", vec![], Some(Media::Form));
        let arguments = json!({"body": {"name": "Rex", "age": 3}});
        let built = built_on(&op, "http://api.test", &arguments).unwrap();
        let (bytes, kind) = built.body.unwrap();
        assert_eq!(kind, "application/x-www-form-urlencoded");
        assert_eq!(String::from_utf8(bytes).unwrap(), "name=Rex&age=3");
    }
}
