//! The tool catalog (`docs/contracts/mappy-api.md`, "Tool catalog"): one tool per Laravel
//! endpoint, names with underscores (OpenAI function names forbid dots), each with its scope.
//! Descriptions are Vietnamese with English beside them (seed §6.1).
//!
//! Tools only translate: arguments to a request, the answer to a compact result. Tenancy is the
//! API's (every request names the acting user); idempotency, dry runs and confirmation are the
//! platform's write safety, which the write tools declare.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{
    Annotations, CallContext, FollowUp, Tool, ToolError, WriteSafety, typed_tool, with_dry_run,
    with_spec,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::laravel::{Answer, Laravel};

/// A list: `results`, and `total` when the API counts more than it sent.
#[derive(Serialize, JsonSchema)]
pub struct Listing {
    pub results: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// One record as the API describes it.
#[derive(Serialize, JsonSchema)]
pub struct Record {
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupList {
    /// Xem theo user khác trong phạm vi của bạn / view as another user within your tenancy (admins, MAIN_USER, MASTER_USER). Default: yourself.
    pub user_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationList {
    /// Xem theo user khác trong phạm vi của bạn / view as another user within your tenancy. Default: yourself.
    pub user_id: Option<u64>,
    /// Lọc theo group / only this group's locations (ids from group_list).
    pub group_id: Option<u64>,
    /// Số location tối đa / at most this many (1–100, default 50).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationGet {
    pub location_id: u64,
    /// View as another user within your tenancy. Default: yourself.
    pub user_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewList {
    pub location_id: u64,
    /// Chỉ review có số sao này / only reviews with exactly this rating (1–5).
    #[schemars(range(min = 1, max = 5))]
    pub rating: Option<u8>,
    /// true: chỉ review chưa trả lời / only reviews without a reply.
    pub unreplied: Option<bool>,
    /// Từ ngày / from this date, YYYY-MM-DD (inclusive).
    #[schemars(extend("pattern" = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub from: Option<String>,
    /// Đến ngày / until this date, YYYY-MM-DD (inclusive).
    #[schemars(extend("pattern" = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub to: Option<String>,
    /// At most this many (1–100, default 20), newest first.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// View as another user within your tenancy. Default: yourself.
    pub user_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsightGet {
    pub location_id: u64,
    /// Từ ngày / first day, YYYY-MM-DD.
    #[schemars(extend("pattern" = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub from: String,
    /// Đến ngày / last day, YYYY-MM-DD (at most 540 days after `from`).
    #[schemars(extend("pattern" = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub to: String,
    /// View as another user within your tenancy. Default: yourself.
    pub user_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostList {
    pub location_id: u64,
    /// At most this many (1–100, default 20), newest first.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// View as another user within your tenancy. Default: yourself.
    pub user_id: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewReply {
    /// The review to answer (ids from review_list).
    pub review_id: u64,
    /// Nội dung trả lời, hiển thị công khai trên Google / the reply, shown publicly on Google. Replaces an existing reply.
    #[schemars(length(min = 1, max = 4096))]
    pub comment: String,
}

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TopicType {
    Standard,
    Event,
    Offer,
}

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ActionType {
    LearnMore,
    Book,
    Order,
    Call,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToAction {
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// The button's link (not for CALL).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2000))]
    pub url: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostCreate {
    /// Đăng lên các location này / publish on these locations (1–50 distinct ids).
    #[schemars(length(min = 1, max = 50))]
    pub location_ids: Vec<u64>,
    /// Nội dung bài đăng / the post's text (1–1500 characters).
    #[schemars(length(min = 1, max = 1500))]
    pub summary: String,
    pub topic_type: TopicType,
    pub call_to_action: Option<CallToAction>,
}

/// One opening period of a day, 24-hour `HH:MM`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Period {
    #[schemars(extend("pattern" = "^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub open: String,
    #[schemars(extend("pattern" = "^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub close: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoursUpdate {
    pub location_id: u64,
    /// Giờ mở cửa mới cho cả tuần / the whole week's new opening hours: monday … sunday, each a list of up to 3 periods. A day left out is closed.
    pub regular_hours: BTreeMap<Weekday, Vec<Period>>,
}

#[derive(Deserialize, Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchStatus {
    /// The batch_id a write answered.
    #[schemars(length(min = 1, max = 100))]
    pub batch_id: String,
}

/// Every tool, over one API client.
pub fn all(api: Arc<Laravel>) -> Vec<Arc<dyn Tool>> {
    let read = Annotations::read_only();
    let mut tools = Vec::new();

    tools.push(scoped(
        api_tool(
            &api,
            "group_list",
            "Danh sách group (chuỗi cửa hàng, khu vực) mà user được quyền xem. / Lists the groups of locations the user may see, with how many locations each has. Use the ids with location_list.",
            read,
            |a, input: GroupList, call| async move {
                let query = user_query(input.user_id);
                listing(a.get(&call, "/api/mcp/groups", &query).await?)
            },
        ),
        "mappy:location:read",
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "location_list",
            "Trả về danh sách location (cửa hàng trên Google Business Profile) mà user có quyền truy cập. / Lists the Google Business Profile locations the user may access: name, address, group, rating and review count. Filter by group_id; limit 1–100 (default 50).",
            read,
            |a, input: LocationList, call| async move {
                let mut query = user_query(input.user_id);
                if let Some(group) = input.group_id {
                    query.push(("group_id", group.to_string()));
                }
                if let Some(limit) = input.limit {
                    query.push(("limit", limit.to_string()));
                }
                listing(a.get(&call, "/api/mcp/locations", &query).await?)
            },
        ),
        "mappy:location:read",
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "location_get",
            "Chi tiết một location: địa chỉ, điện thoại, website, danh mục, giờ mở cửa, trạng thái. / One location in full: address, phone, website, category, opening hours and status (OPEN or SUSPENDED).",
            read,
            |a, input: LocationGet, call| async move {
                let path = format!("/api/mcp/locations/{}", input.location_id);
                record(a.get(&call, &path, &user_query(input.user_id)).await?)
            },
        ),
        "mappy:location:read",
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "review_list",
            "Danh sách review Google của một location, mới nhất trước. / A location's Google reviews, newest first, with any reply. Filter by rating (1–5), unreplied, and a date range (from/to, YYYY-MM-DD).",
            read,
            |a, input: ReviewList, call| async move {
                let mut query = user_query(input.user_id);
                if let Some(rating) = input.rating {
                    query.push(("rating", rating.to_string()));
                }
                if let Some(unreplied) = input.unreplied {
                    query.push(("unreplied", unreplied.to_string()));
                }
                for (name, value) in [("from", input.from), ("to", input.to)] {
                    if let Some(value) = value {
                        query.push((name, value));
                    }
                }
                if let Some(limit) = input.limit {
                    query.push(("limit", limit.to_string()));
                }
                let path = format!("/api/mcp/locations/{}/reviews", input.location_id);
                listing(a.get(&call, &path, &query).await?)
            },
        ),
        "mappy:review:read",
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "insight_get",
            "Số liệu hiệu quả của một location trong khoảng ngày. / A location's performance over a date range (from/to, YYYY-MM-DD, at most 540 days): search views, Maps views, website clicks, calls, direction requests. Figures come from Google and can be unavailable for a while.",
            read,
            |a, input: InsightGet, call| async move {
                let mut query = user_query(input.user_id);
                query.push(("from", input.from));
                query.push(("to", input.to));
                let path = format!("/api/mcp/locations/{}/insights", input.location_id);
                record(a.get(&call, &path, &query).await?)
            },
        ),
        "mappy:insight:read",
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "post_list",
            "Các bài đăng Google gần đây của một location. / A location's recent Google posts, newest first.",
            read,
            |a, input: PostList, call| async move {
                let mut query = user_query(input.user_id);
                if let Some(limit) = input.limit {
                    query.push(("limit", limit.to_string()));
                }
                let path = format!("/api/mcp/locations/{}/posts", input.location_id);
                listing(a.get(&call, &path, &query).await?)
            },
        ),
        "mappy:post:read",
    ));

    tools.push(write(
        write_tool(
            &api,
            "review_reply",
            "Trả lời một review trên Google (thay câu trả lời cũ nếu có). / Replies to a Google review, replacing an existing reply. Runs in the background: the answer is a batch_id to follow with batch_status. dry_run: true shows the change without making it.",
            Annotations {
                read_only: false,
                destructive: false,
                idempotent: true,
                open_world: true,
            },
            |a, input: ReviewReply, call| async move {
                let path = format!("/api/mcp/reviews/{}/reply", input.review_id);
                let body = object(json!({"comment": input.comment}));
                written(a.write(&call, reqwest::Method::POST, &path, body).await?, &call)
            },
        ),
        "mappy:review:write",
        false,
    ));

    tools.push(write(
        write_tool(
            &api,
            "post_create",
            "Đăng bài lên Google cho một hoặc nhiều location. / Publishes a Google post on one or many locations (up to 50). Runs in the background: the answer is a batch_id to follow with batch_status; each location succeeds or fails on its own. dry_run: true shows what would be posted.",
            Annotations {
                read_only: false,
                destructive: false,
                idempotent: true,
                open_world: true,
            },
            |a, input: PostCreate, call| async move {
                let mut body = object(json!({
                    "location_ids": input.location_ids,
                    "summary": input.summary,
                    "topic_type": input.topic_type,
                }));
                if let Some(action) = input.call_to_action {
                    body.insert("call_to_action".into(), json!(action));
                }
                written(a.write(&call, reqwest::Method::POST, "/api/mcp/posts", body).await?, &call)
            },
        ),
        "mappy:post:write",
        false,
    ));

    tools.push(write(
        write_tool(
            &api,
            "location_hours_update",
            "Thay toàn bộ giờ mở cửa của một location trên Google. / Replaces a location's whole weekly opening hours on Google; a day left out becomes closed. Needs confirmation: the first call answers a preview (old and new hours) and a confirm_token; show it to the user, then call again with the same arguments and the token. Runs in the background (batch_id).",
            Annotations {
                read_only: false,
                destructive: true,
                idempotent: true,
                open_world: true,
            },
            |a, input: HoursUpdate, call| async move {
                let path = format!("/api/mcp/locations/{}/hours", input.location_id);
                let body = object(json!({"regular_hours": input.regular_hours}));
                written(a.write(&call, reqwest::Method::PUT, &path, body).await?, &call)
            },
        ),
        "mappy:location:write",
        true,
    ));

    tools.push(scoped(
        api_tool(
            &api,
            "batch_status",
            "Trạng thái của một thay đổi đang chạy nền. / The state of a background change by its batch_id: queued, running, succeeded, failed or partially_failed, per location with Google's error when one failed. Poll it after a write; do not send the write again.",
            read,
            |a, input: BatchStatus, call| async move {
                if !input.batch_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    return Err(ToolError::invalid("batch_id", "a batch_id has only letters, digits, `_` and `-`: use the one a write answered"));
                }
                let path = format!("/api/mcp/batches/{}", input.batch_id);
                record(a.get(&call, &path, &[]).await?)
            },
        ),
        "mappy:batch:read",
    ));
    tools
}

/// A tool whose calls go to the API. The closure a tool keeps is shared by all its calls, while
/// each call's future must own what it uses: so every call gets its own handle on the one client,
/// cloned here rather than by hand in each tool.
fn api_tool<I, O, F, Fut>(
    api: &Arc<Laravel>,
    name: &str,
    description: &str,
    annotations: Annotations,
    call: F,
) -> Arc<dyn Tool>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(Arc<Laravel>, I, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let api = api.clone();
    typed_tool(name, description, annotations, move |input: I, context| {
        call(api.clone(), input, context)
    })
}

/// A write whose own dry run is the API's (`dry_run: true` in the body): the same call, built
/// a second time over a handle on the API that only looks.
fn write_tool<I, O, F, Fut>(
    api: &Arc<Laravel>,
    name: &str,
    description: &str,
    annotations: Annotations,
    call: F,
) -> Arc<dyn Tool>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(Arc<Laravel>, I, CallContext) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let looking = Arc::new(api.looking());
    with_dry_run(
        api_tool(api, name, description, annotations, call.clone()),
        api_tool(&looking, name, description, annotations, call),
    )
}

fn scoped(tool: Arc<dyn Tool>, scope: &str) -> Arc<dyn Tool> {
    with_spec(tool, |spec| spec.scopes = vec![scope.to_string()])
}

fn write(tool: Arc<dyn Tool>, scope: &str, confirm: bool) -> Arc<dyn Tool> {
    with_spec(tool, |spec| {
        spec.scopes = vec![scope.to_string()];
        spec.write = Some(WriteSafety::confirmed(confirm));
        // Clients with MCP Tasks follow the batch as a task instead of polling batch_status.
        spec.follow_up = Some(FollowUp {
            id_field: "batch_id".into(),
            status_tool: "batch_status".into(),
            state_field: "status".into(),
            pending: vec!["queued".into(), "running".into()],
            failed: vec!["failed".into()],
        });
    })
}

fn user_query(user: Option<u64>) -> Vec<(&'static str, String)> {
    user.map(|u| vec![("user_id", u.to_string())])
        .unwrap_or_default()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `{"data": [...], "meta": {"total"}}` → `{"results", "total"}`.
fn listing(answer: Answer) -> Result<Listing, ToolError> {
    let results = match answer.body.get("data") {
        Some(Value::Array(items)) => items.clone(),
        _ => {
            return Err(ToolError::internal(
                "unexpected_answer",
                "a list without `data`",
            ));
        }
    };
    let total = answer
        .body
        .pointer("/meta/total")
        .and_then(Value::as_u64)
        .filter(|t| *t as usize != results.len());
    Ok(Listing { results, total })
}

/// `{"data": {...}}` → the record.
fn record(answer: Answer) -> Result<Record, ToolError> {
    match answer.body.get("data") {
        Some(Value::Object(fields)) => Ok(Record {
            fields: fields.clone(),
        }),
        _ => Err(ToolError::internal(
            "unexpected_answer",
            "a record without `data`",
        )),
    }
}

/// A write's answer: the dry run's changes, or the accepted batch with what to do next.
fn written(answer: Answer, call: &CallContext) -> Result<Record, ToolError> {
    let mut fields = match answer.body {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    fields.remove("dry_run");
    if let Some(batch) = fields.get("batch_id").and_then(Value::as_str) {
        call.note("batch_id", batch.to_string());
        fields.insert(
            "message".into(),
            json!("Accepted: the change runs in the background. Follow it with batch_status; do not send it again."),
        );
    }
    Ok(Record { fields })
}
