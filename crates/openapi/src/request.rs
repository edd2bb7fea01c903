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
    let mut path = operation.path.clone();
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
            Location::Path => {
                if matches!(&value, Value::String(text) if text == "." || text == "..") {
                    // A URL reads `.` and `..` (escaped or not) as steps up the path.
                    return Err(ToolError::invalid(
                        name.clone(),
                        "a path value cannot be `.` or `..`",
                    ));
                }
                let text = path_value(name, &value, parameter.style, parameter.explode);
                path = path.replace(&format!("{{{name}}}"), &text);
            }
            Location::Query => query.extend(query_pairs(
                name,
                &value,
                parameter.style,
                parameter.explode,
            )),
            Location::Header => {
                let text = joined(&value, parameter.explode, ",", "=");
                if text.contains(['\r', '\n']) {
                    return Err(ToolError::invalid(
                        name.clone(),
                        "a header value cannot hold a line break",
                    ));
                }
                headers.push((name.clone(), text));
            }
            Location::Cookie => {
                let text = joined(&value, parameter.explode, ",", ",");
                cookies.push(format!("{name}={}", utf8_percent_encode(&text, SEGMENT)));
            }
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookies.join("; ")));
    }
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
            name: "op".into(),
            title: None,
            description: String::new(),
            method: http::Method::GET,
            path: path.into(),
            parameters,
            body,
            idempotency_header: None,
            input_schema: Map::new(),
            output_schema: Map::new(),
            wraps_result: false,
            annotations: concierge_core::Annotations::read_only(),
            edit: Default::default(),
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

    #[test]
    fn a_path_value_is_one_segment_whatever_it_holds() {
        let op = operation(
            "/files/{name}",
            vec![parameter("name", Location::Path, Style::Simple, false)],
            None,
        );
        let arguments = json!({"name": "../admin?x=1#y"});
        let built = build(&op, "http://api.test/v1", arguments.as_object().unwrap()).unwrap();
        assert_eq!(
            built.url.as_str(),
            "http://api.test/v1/files/..%2Fadmin%3Fx%3D1%23y"
        );
    }

    #[test]
    fn no_value_climbs_out_of_the_base_path() {
        let op = operation(
            "/files/{name}",
            vec![parameter("name", Location::Path, Style::Simple, false)],
            None,
        );
        for value in ["..", ".", "%2e%2e"] {
            let arguments = json!({ "name": value });
            let built = build(&op, "http://api.test/v1", arguments.as_object().unwrap());
            match built {
                Ok(built) => assert!(
                    built.url.path().starts_with("/v1/files/"),
                    "{value}: {}",
                    built.url
                ),
                Err(error) => assert!(error.field.is_some() || error.code == "request_unbuilt"),
            }
        }
        let sneaky = operation("/../admin", vec![], None);
        let error = build(&sneaky, "http://api.test/v1", &Map::new()).unwrap_err();
        assert_eq!(error.code, "request_unbuilt");
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
        let built = build(&op, "http://api.test", arguments.as_object().unwrap()).unwrap();
        assert_eq!(
            built.url.query().unwrap(),
            "tags=a&tags=b+c&ids=1%2C2&filter%5Bcolor%5D=red&pipes=x%7Cy"
        );
    }

    #[test]
    fn a_header_cannot_smuggle_a_line() {
        let op = operation(
            "/x",
            vec![parameter("X-Trace", Location::Header, Style::Simple, false)],
            None,
        );
        let arguments = json!({"X-Trace": "a\r\nHost: evil"});
        let error = build(&op, "http://api.test", arguments.as_object().unwrap()).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("X-Trace"));
    }

    #[test]
    fn bodies_are_json_or_form() {
        let op = operation("/x", vec![], Some(Media::Form));
        let arguments = json!({"body": {"name": "Rex", "age": 3}});
        let built = build(&op, "http://api.test", arguments.as_object().unwrap()).unwrap();
        let (bytes, kind) = built.body.unwrap();
        assert_eq!(kind, "application/x-www-form-urlencoded");
        assert_eq!(String::from_utf8(bytes).unwrap(), "name=Rex&age=3");
    }
}
