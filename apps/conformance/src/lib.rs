//! The fixtures the official MCP conformance suite (`@modelcontextprotocol/conformance`) expects.
//!
//! This is not a business app: it exercises the protocol surface a business app rarely needs —
//! resources, templates, subscriptions, prompts, completions, logging, progress, sampling and
//! elicitation — so the platform's transport is proven against the reference checks. It is an
//! rmcp handler served as it is; the platform mounts it at `/conformance/mcp` on loopback.
//!
//! Server-to-client requests (sampling, elicitation) and progress ride the tools/call's own POST
//! SSE stream: rmcp routes requests sent inside a handler and notifications carrying the call's
//! progress token there.

// The suite still checks sampling, logging and roots, which MCP 2026-07-28 deprecates (SEP-2577).
#![allow(deprecated)]

mod mrtr;
mod stateless;
mod tasks;

use std::time::Duration;

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A 1×1 PNG.
const IMAGE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file (header and two bytes of silence).
const AUDIO_WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// `[apps.conformance]` takes no settings: the fixtures are fixed by the suite.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {}

#[derive(Clone, Default)]
pub struct Fixtures;

/// Builds an rmcp model value from its JSON shape; the fixtures are data, and rmcp's structs are
/// non-exhaustive, so JSON is the shortest honest way to write them.
pub(crate) fn model<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(format!("fixture does not fit the model: {e}"), None)
    })
}

/// A result from its JSON shape, marked `resultType: "complete"`: a 2026-07-28 result must say
/// what it is, and rmcp strips the mark again for a peer of an older revision.
pub(crate) fn complete<T: DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Some(object) = value.as_object_mut() {
        object.insert("resultType".into(), json!("complete"));
    }
    model(value)
}

fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tool_listing() -> Value {
    let mut listing = legacy_listing();
    if let Some(tools) = listing["tools"].as_array_mut() {
        tools.extend(mrtr::tools());
        tools.extend(stateless::tools());
        tools.extend(tasks::tools());
    }
    listing
}

/// The tools every revision's scenarios call.
fn legacy_listing() -> Value {
    let plain = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": empty_schema()});
    json!({"tools": [
        plain("test_simple_text", "Tests simple text content response"),
        plain("test_image_content", "Tests image content response"),
        plain("test_audio_content", "Tests audio content response"),
        plain("test_embedded_resource", "Tests embedded resource content response"),
        plain("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)"),
        plain("test_tool_with_logging", "Tests tool that emits log messages during execution"),
        plain("test_tool_with_progress", "Tests tool that reports progress notifications"),
        plain("test_error_handling", "Tests error response handling"),
        {
            "name": "test_sampling",
            "description": "Tests server-initiated sampling (LLM completion request)",
            "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}, "required": ["prompt"]}
        },
        {
            "name": "test_elicitation",
            "description": "Tests server-initiated elicitation (user input request)",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string", "description": "The message to show the user"}}, "required": ["message"]}
        },
        plain("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034"),
        plain("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330"),
        {
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }
        },
        {
            "name": "test_custom_header",
            "description": "Echoes a value the request also mirrors into the Mcp-Param-Region header",
            "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}
        }
    ]})
}

fn text_result(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}]})
}

impl Fixtures {
    async fn run_tool(
        &self,
        name: &str,
        arguments: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        Ok(match name {
            "test_simple_text" => text_result("This is a simple text response for testing."),
            "test_image_content" => {
                json!({"content": [{"type": "image", "data": IMAGE_PNG, "mimeType": "image/png"}]})
            }
            "test_audio_content" => {
                json!({"content": [{"type": "audio", "data": AUDIO_WAV, "mimeType": "audio/wav"}]})
            }
            "test_embedded_resource" => json!({"content": [{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}]}),
            "test_multiple_content_types" => json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": IMAGE_PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ]}),
            "test_tool_with_logging" => {
                for message in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    let params: LoggingMessageNotificationParam =
                        model(json!({"level": "info", "data": message}))?;
                    let _ = context.peer.notify_logging_message(params).await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                text_result("Tool with logging executed successfully")
            }
            "test_tool_with_progress" => {
                let token = context.meta.get_progress_token();
                if let Some(token) = &token {
                    for step in [0, 50, 100] {
                        let params: ProgressNotificationParam = model(json!({
                            "progressToken": token, "progress": step, "total": 100,
                            "message": format!("Completed step {step} of 100")
                        }))?;
                        let _ = context.peer.notify_progress(params).await;
                    }
                }
                text_result(
                    token
                        .map(|t| t.0.to_string())
                        .unwrap_or_else(|| "no progress token".into()),
                )
            }
            "test_error_handling" => {
                json!({"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}], "isError": true})
            }
            "test_sampling" => {
                let prompt = arguments
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or("Hello");
                let params: CreateMessageRequestParams = model(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                    "maxTokens": 100
                }))?;
                let answer = context.peer.create_message(params).await;
                match answer {
                    Ok(result) => {
                        let answer = serde_json::to_value(&result).unwrap_or_default();
                        let text = answer
                            .pointer("/content/text")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        text_result(format!("LLM response: {text}"))
                    }
                    Err(e) => {
                        json!({"content": [{"type": "text", "text": format!("Sampling failed: {e}")}], "isError": true})
                    }
                }
            }
            "test_elicitation" => {
                let message = arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("Please provide your information");
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                }, "required": ["username", "email"]});
                let (action, content) = self.elicit(context, message, schema).await?;
                text_result(format!("User response: action={action}, content={content}"))
            }
            "test_elicitation_sep1034_defaults" => {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                }, "required": []});
                let (action, content) = self
                    .elicit(
                        context,
                        "Please review and update the form fields with defaults",
                        schema,
                    )
                    .await?;
                text_result(format!(
                    "Elicitation completed: action={action}, content={content}"
                ))
            }
            "test_elicitation_sep1330_enums" => {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                        {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}
                }, "required": []});
                let (action, content) = self
                    .elicit(
                        context,
                        "Please select options from the enum fields",
                        schema,
                    )
                    .await?;
                text_result(format!(
                    "Elicitation completed: action={action}, content={content}"
                ))
            }
            "json_schema_2020_12_tool" => {
                text_result(format!("JSON Schema 2020-12 tool called with: {arguments}"))
            }
            "test_custom_header" => text_result(format!(
                "region: {}",
                arguments
                    .get("region")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{other}`"),
                    None,
                ));
            }
        })
    }

    /// Asks the client for form input on the call's own stream; returns (action, content JSON).
    async fn elicit(
        &self,
        context: &RequestContext<RoleServer>,
        message: &str,
        schema: Value,
    ) -> Result<(String, String), ErrorData> {
        let params: ElicitRequestParams =
            model(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
        let result = context
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ErrorData::internal_error(format!("elicitation failed: {e}"), None))?;
        let result = serde_json::to_value(&result).unwrap_or_default();
        let action = result
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        let content = result
            .get("content")
            .cloned()
            .unwrap_or(Value::Null)
            .to_string();
        Ok((action, content))
    }
}

fn resource(uri: &str, name: &str, title: &str, description: &str, mime: &str) -> Value {
    json!({"uri": uri, "name": name, "title": title, "description": description, "mimeType": mime})
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_logging()
            .enable_completions()
            .enable_tasks()
            .build();
        let mut config = ServerConfig::new(capabilities);
        config.server_info =
            Implementation::new("concierge-conformance", env!("CARGO_PKG_VERSION"));
        config
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        complete(tool_listing())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let capabilities = context.client_capabilities();
        let responses = request.input_responses.as_ref();
        let state = request.request_state.as_deref();
        if let Some(answer) = mrtr::call(&request.name, responses, state, capabilities.as_ref()) {
            return answer;
        }
        let no_arguments = JsonObject::new();
        let arguments = request.arguments.as_ref().unwrap_or(&no_arguments);
        if let Some(answer) =
            tasks::call(&request.name, arguments, responses, capabilities.as_ref())
        {
            return answer;
        }
        let meta = stateless::meta(&context);
        if let Some(answer) =
            stateless::call(&request.name, meta, capabilities.as_ref(), &context.peer).await
        {
            return answer;
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result: CallToolResult =
            complete(self.run_tool(&request.name, arguments, &context).await?)?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        complete(json!({"resources": [
            resource("test://static-text", "static-text", "Static Text Resource", "A static text resource for testing", "text/plain"),
            resource("test://static-binary", "static-binary", "Static Binary Resource", "A static binary resource (image) for testing", "image/png"),
            resource("test://watched-resource", "watched-resource", "Watched Resource", "A resource that can be subscribed to", "text/plain"),
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        complete(json!({"resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data", "name": "template", "title": "Resource Template",
            "description": "A resource template with parameter substitution", "mimeType": "application/json"
        }]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => {
                json!({"uri": uri, "mimeType": "image/png", "blob": IMAGE_PNG})
            }
            "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
                }),
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource `{uri}`"),
                        None,
                    ));
                }
            },
        };
        let result: ReadResourceResult = complete(json!({"contents": [contents]}))?;
        Ok(result.into())
    }

    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
        complete(json!({"prompts": [
            {"name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "title": "Prompt With Arguments", "description": "A prompt with required arguments",
             "arguments": [argument("arg1", "First test argument"), argument("arg2", "Second test argument")]},
            {"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource", "description": "A prompt that includes an embedded resource",
             "arguments": [argument("resourceUri", "URI of the resource to embed")]},
            {"name": "test_prompt_with_image", "title": "Prompt With Image", "description": "A prompt that includes image content"},
            mrtr::prompt_listing()
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if let Some(answer) = mrtr::prompt(&request.name, request.input_responses.as_ref()) {
            return answer;
        }
        let arguments = request.arguments.unwrap_or_default();
        let argument = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let user_text =
            |text: String| json!({"role": "user", "content": {"type": "text", "text": text}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                json!([user_text("This is a simple prompt for testing.".into())])
            }
            "test_prompt_with_arguments" => json!([user_text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": argument("resourceUri"), "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                user_text("Please process the embedded resource above.".into())
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": IMAGE_PNG, "mimeType": "image/png"}},
                user_text("Please analyze the image above.".into())
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown prompt `{other}`"),
                    None,
                ));
            }
        };
        let result: GetPromptResult = complete(json!({"messages": messages}))?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let options = ["paris", "park", "party", "test-value", "testing"];
        let prefix = request.argument.value.to_lowercase();
        let values: Vec<&str> = options
            .iter()
            .copied()
            .filter(|o| o.starts_with(&prefix))
            .collect();
        complete(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let listing = tool_listing();
        let entry = listing["tools"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == name)?
            .clone();
        model(entry).ok()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp keeps of it only what `get_info` advertises.
        Some(requested.clone())
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        stateless::listen(context.sink().clone(), context.cancelled()).await;
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        tasks::get(&request.task_id, context.client_capabilities().as_ref())
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let capabilities = context.client_capabilities();
        tasks::update(
            &request.task_id,
            &request.input_responses,
            capabilities.as_ref(),
        )
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(&request.task_id, context.client_capabilities().as_ref())
    }

    async fn set_level(
        &self,
        _: SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
