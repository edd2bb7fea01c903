//! The coffee bot end to end: a scripted OpenAI-compatible model on 127.0.0.1 (it follows the
//! public chat-completions shapes and decides by the conversation it is sent), the real coffee
//! endpoint, and the hand-written tool-use loop between them.
//!
//! Over 600 lines: one area's end-to-end scenarios; each test reads alone.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use common::*;
use concierge_agent::chat::ChatClient;
use concierge_agent::history::is_well_formed;
use concierge_agent::mcp::McpConnection;
use concierge_agent::store::HistoryStore;
use concierge_agent::{Agent, AgentSettings};
use serde_json::{Value, json};

/// Every request the model received, as JSON.
type Seen = Arc<Mutex<Vec<Value>>>;

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}})
}

fn assistant_calls(calls: Vec<Value>) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

fn assistant_text(text: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]})
}

/// The script: what a model would plausibly do with these requests.
fn script(messages: &[Value]) -> Value {
    let last = messages.last().cloned().unwrap_or_default();
    let turn_text = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    if turn_text.contains("зациклись") {
        return assistant_calls(vec![call(
            &format!("loop-{}", messages.len()),
            "get_menu",
            json!({}),
        )]);
    }
    if last["role"] == "user" {
        if turn_text.contains("два капучино и латте") {
            return assistant_calls(vec![call(
                "call-order",
                "create_order",
                json!({"items": [{"drink": "капучино", "qty": 2}, {"drink": "латте", "qty": 1}]}),
            )]);
        }
        if let Some(number) = turn_text
            .strip_prefix("когда готов заказ ")
            .and_then(|r| r.trim_end_matches('?').parse::<u64>().ok())
        {
            return assistant_calls(vec![call(
                "call-status",
                "get_order_status",
                json!({"orderId": number}),
            )]);
        }
        if turn_text.contains("кокос и всё меню") {
            return assistant_calls(vec![
                call("call-a", "search_menu", json!({"query": "кокос"})),
                call("call-b", "get_menu", json!({})),
            ]);
        }
        if turn_text.contains("длинный ответ") {
            return assistant_text(&"кофе ".repeat(1100));
        }
        if turn_text.contains("капучина") {
            return assistant_calls(vec![call(
                "call-bad",
                "create_order",
                json!({"items": [{"drink": "капучина", "qty": 1}]}),
            )]);
        }
        return assistant_text("Чем могу помочь?");
    }
    // After tool answers: retell them.
    let answers: Vec<Value> = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .collect();
    let mut parts = Vec::new();
    for answer in answers.iter().rev() {
        if let Some(error) = answer.get("error") {
            parts.push(format!(
                "Ошибка: {}",
                error["message"].as_str().unwrap_or_default()
            ));
        } else if answer.get("totalMinutes").is_some() {
            parts.push(format!(
                "Заказ №{} принят, готовность ~{} мин.",
                answer["id"], answer["totalMinutes"]
            ));
        } else if answer.get("status").is_some() {
            parts.push(format!(
                "Заказ {}: осталось {} мин.",
                answer["status"].as_str().unwrap_or_default(),
                answer["minutesLeft"]
            ));
        } else if let Some(results) = answer["results"].as_array() {
            parts.push(format!("Нашлось напитков: {}.", results.len()));
        }
    }
    assistant_text(&parts.join(" "))
}

async fn scripted_model() -> (String, Seen) {
    let seen: Seen = Arc::default();
    async fn completions(State(seen): State<Seen>, Json(request): Json<Value>) -> Json<Value> {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        seen.lock().unwrap().push(request);
        Json(script(&messages))
    }
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

struct Bot {
    agent: Agent,
    seen: Seen,
    server: Server,
    history: std::path::PathBuf,
    model: String,
}

async fn bot() -> Bot {
    let (model, seen) = scripted_model().await;
    let server = Server::start_demo(&[]);
    let history = server.dir.path().join("agent/history.sqlite");
    let agent = make_agent(&model, &server, &history, AgentSettings::default()).await;
    Bot {
        agent,
        seen,
        server,
        history,
        model,
    }
}

async fn make_agent(
    model: &str,
    server: &Server,
    history: &std::path::Path,
    settings: AgentSettings,
) -> Agent {
    Agent::new(
        ChatClient::new(model, Some("sk-test".into()), "gpt-4o-mini"),
        McpConnection::new(&server.url("/coffee/mcp"), Some("demo-token".into())),
        HistoryStore::open(history).await.unwrap(),
        settings,
    )
}

#[tokio::test]
async fn an_order_in_free_form_lands_in_the_file_and_the_answer_names_it() {
    let bot = bot().await;
    let answer = bot.agent.reply("chat-1", "два капучино и латте").await;
    assert_eq!(answer, "Заказ №1 принят, готовность ~13 мин.");

    let orders = bot.server.dir.path().join("coffee/orders.xlsx");
    assert!(orders.exists(), "the order is in orders.xlsx");

    // The model saw the MCP tools as functions, and the tool answer carried its call's id.
    let seen = bot.seen.lock().unwrap().clone();
    let names: Vec<&str> = seen[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, COFFEE_TOOLS);
    assert_eq!(seen[0]["messages"][0]["role"], "system");
    assert!(
        seen[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("по-русски")
    );
    let tool = seen[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (tool["role"].clone(), tool["tool_call_id"].clone()),
        (json!("tool"), json!("call-order"))
    );

    let status = bot.agent.reply("chat-1", "когда готов заказ 1?").await;
    assert!(status.starts_with("Заказ готовится: осталось"), "{status}");
}

#[tokio::test]
async fn several_calls_in_one_turn_and_tool_errors_go_back_to_the_model() {
    let bot = bot().await;
    assert_eq!(
        bot.agent.reply("chat-2", "кокос и всё меню").await,
        "Нашлось напитков: 1. Нашлось напитков: 16."
    );
    let last = bot.seen.lock().unwrap().last().unwrap().clone();
    let ids: Vec<Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    assert_eq!(ids, [json!("call-a"), json!("call-b")]);

    let answer = bot.agent.reply("chat-2", "одну капучина").await;
    assert!(
        answer.starts_with("Ошибка: Напитка «капучина» нет в меню"),
        "{answer}"
    );
}

#[tokio::test]
async fn the_round_bound_stops_a_model_that_keeps_calling_tools() {
    let (model, seen) = scripted_model().await;
    let server = Server::start_demo(&[]);
    let history = server.dir.path().join("agent/history.sqlite");
    let settings = AgentSettings {
        max_rounds: 3,
        ..AgentSettings::default()
    };
    let agent = make_agent(&model, &server, &history, settings).await;
    let answer = agent.reply("chat-3", "зациклись").await;
    assert!(answer.starts_with("Извините"), "{answer}");
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "exactly max_rounds model calls"
    );
    // What is stored still starts a turn with the user and answers every call.
    let store = HistoryStore::open(&history).await.unwrap();
    let stored = store.load("chat-3").await.unwrap();
    assert!(is_well_formed(&stored), "{stored:?}");
}

#[tokio::test]
async fn history_survives_a_bot_restart_and_new_forgets_it() {
    let bot = bot().await;
    bot.agent.reply("chat-4", "два капучино и латте").await;
    let Bot {
        agent,
        seen,
        server,
        history,
        model,
    } = bot;
    drop(agent);
    let restarted = make_agent(&model, &server, &history, AgentSettings::default()).await;
    restarted.reply("chat-4", "привет").await;
    let last = seen.lock().unwrap().last().unwrap().clone();
    let roles = pluck(&last["messages"], "role");
    assert_eq!(
        roles,
        [
            json!("system"),
            json!("user"),
            json!("assistant"),
            json!("tool"),
            json!("assistant"),
            json!("user")
        ]
    );

    restarted.forget("chat-4").await.unwrap();
    restarted.reply("chat-4", "привет").await;
    let last = seen.lock().unwrap().last().unwrap().clone();
    assert_eq!(
        last["messages"].as_array().unwrap().len(),
        2,
        "system + the new user message"
    );
}

#[tokio::test]
async fn a_server_restart_mid_conversation_is_survived() {
    let (model, seen) = scripted_model().await;
    let mut server = Server::start(
        |dir| coffee_config(dir, "").replace("127.0.0.1:0", "127.0.0.1:18291"),
        &[("APP_MCP_TOKENS", "demo:demo-token")],
    );
    let history = server.dir.path().join("agent/history.sqlite");
    let agent = Agent::new(
        ChatClient::new(&model, None, "gpt-4o-mini"),
        McpConnection::new(&server.url("/coffee/mcp"), Some("demo-token".into())),
        HistoryStore::open(&history).await.unwrap(),
        AgentSettings::default(),
    );
    assert_eq!(
        agent.reply("chat-5", "два капучино и латте").await,
        "Заказ №1 принят, готовность ~13 мин."
    );
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let dir = std::mem::replace(&mut server.dir, tempfile::tempdir().unwrap());
    let _restarted = Server::start_in(
        dir,
        |dir| coffee_config(dir, "").replace("127.0.0.1:0", "127.0.0.1:18291"),
        &[("APP_MCP_TOKENS", "demo:demo-token")],
    );
    let answer = agent.reply("chat-5", "когда готов заказ 1?").await;
    assert!(answer.starts_with("Заказ готовится"), "{answer}");
    assert!(seen.lock().unwrap().len() >= 4);
}

#[tokio::test]
async fn a_failing_model_gets_a_short_apology_not_an_error() {
    let server = Server::start_demo(&[]);
    let history = server.dir.path().join("agent/history.sqlite");
    let agent = make_agent(
        "http://127.0.0.1:9/v1",
        &server,
        &history,
        AgentSettings::default(),
    )
    .await;
    let answer = agent.reply("chat-6", "два капучино и латте").await;
    assert_eq!(answer, concierge_agent::APOLOGY);
    assert!(
        HistoryStore::open(&history)
            .await
            .unwrap()
            .load("chat-6")
            .await
            .unwrap()
            .is_empty(),
        "a failed turn is not stored"
    );
}

#[test]
fn the_chat_command_talks_through_the_model_with_its_prompt() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (model, seen) = runtime.block_on(scripted_model());
    let server = Server::start_demo(&[]);
    let prompt = server.dir.path().join("prompt.txt");
    std::fs::write(&prompt, "Ты бот кофейни «Зерно». Отвечай только по-русски.").unwrap();
    let mut child = std::process::Command::new(BIN)
        .args([
            "chat",
            "--mcp",
            &server.url("/coffee/mcp"),
            "--token",
            "demo-token",
            "--prompt-file",
        ])
        .arg(&prompt)
        .arg("--history")
        .arg(server.dir.path().join("chat.sqlite"))
        .env("OPENAI_BASE_URL", &model)
        .env("RUST_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    feed_stdin(&mut child, "два капучино и латте\n");
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "Заказ №1 принят, готовность ~13 мин."
    );
    let first = seen.lock().unwrap()[0].clone();
    assert_eq!(
        first["messages"][0]["content"],
        "Ты бот кофейни «Зерно». Отвечай только по-русски."
    );
    drop(runtime);
}

/// A fake Telegram Bot API on 127.0.0.1: queued updates for getUpdates (long polling, briefly),
/// and every sendMessage / sendChatAction recorded.
#[derive(Clone, Default)]
struct FakeTelegram {
    updates: Arc<Mutex<Vec<Value>>>,
    sent: Arc<Mutex<Vec<Value>>>,
    actions: Arc<Mutex<Vec<Value>>>,
}

impl FakeTelegram {
    fn push(&self, chat: i64, text: &str) {
        let mut updates = self.updates.lock().unwrap();
        let id = updates.len() as u64 + 1;
        updates.push(json!({"update_id": id, "message": {"message_id": id, "date": 0, "chat": {"id": chat, "type": "private"}, "text": text}}));
    }

    /// Waits (bounded) until `count` messages were sent.
    async fn sent(&self, count: usize) -> Vec<Value> {
        for _ in 0..300 {
            if self.sent.lock().unwrap().len() >= count {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.sent.lock().unwrap().clone()
    }
}

async fn fake_telegram() -> (String, FakeTelegram) {
    use axum::extract::Path;
    let fake = FakeTelegram::default();
    let state = fake.clone();
    let app = axum::Router::new()
        .route(
            "/{bot}/{method}",
            axum::routing::post(move |Path((_bot, method)): Path<(String, String)>, Json(body): Json<Value>| {
                let fake = state.clone();
                async move {
                    match method.as_str() {
                        "getUpdates" => {
                            let offset = body["offset"].as_u64().unwrap_or(0);
                            // A short long-poll: answer at once when something is queued.
                            for _ in 0..10 {
                                let ready: Vec<Value> = fake.updates.lock().unwrap().iter().filter(|u| u["update_id"].as_u64().unwrap() >= offset).cloned().collect();
                                if !ready.is_empty() {
                                    return Json(json!({"ok": true, "result": ready}));
                                }
                                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            }
                            Json(json!({"ok": true, "result": []}))
                        }
                        "sendMessage" => {
                            fake.sent.lock().unwrap().push(body.clone());
                            Json(json!({"ok": true, "result": {"message_id": 1000, "date": 0, "chat": {"id": body["chat_id"], "type": "private"}, "text": body["text"]}}))
                        }
                        "sendChatAction" => {
                            fake.actions.lock().unwrap().push(body);
                            Json(json!({"ok": true, "result": true}))
                        }
                        _ => Json(json!({"ok": false, "error_code": 404, "description": "Not Found"})),
                    }
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, fake)
}

/// `concierge telegram` against `api_url` (a fake Telegram, or a proxy in front of one), the
/// demo's coffee endpoint and the scripted model; polls every second.
fn spawn_telegram_bot(server: &Server, api_url: &str, model: &str) -> std::process::Child {
    std::process::Command::new(BIN)
        .args([
            "telegram",
            "--mcp",
            &server.url("/coffee/mcp"),
            "--token",
            "demo-token",
            "--poll-seconds",
            "1",
            "--api-url",
            api_url,
            "--history",
        ])
        .arg(server.dir.path().join("bot.sqlite"))
        .env("TELEGRAM_BOT_TOKEN", "123456:TEST-TOKEN")
        .env("OPENAI_BASE_URL", model)
        .env("RUST_LOG", "error")
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_telegram_bot_answers_each_chat_and_splits_long_answers() {
    let (model, _seen) = scripted_model().await;
    let (telegram, fake) = fake_telegram().await;
    let server = Server::start_demo(&[]);
    let mut bot = spawn_telegram_bot(&server, &telegram, &model);

    fake.push(42, "/start");
    let sent = fake.sent(1).await;
    assert_eq!(sent[0]["chat_id"], 42);
    assert!(
        sent[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Здравствуйте")
    );

    fake.push(42, "два капучино и латте");
    fake.push(7, "длинный ответ");
    let sent = fake.sent(4).await;
    let to = |chat: i64| -> Vec<String> {
        sent.iter()
            .filter(|m| m["chat_id"] == chat)
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(to(42)[1], "Заказ №1 принят, готовность ~13 мин.");
    let long = to(7);
    assert_eq!(long.len(), 2, "5,500 characters are two messages");
    assert!(long.iter().all(|part| part.chars().count() <= 4096));
    assert!(
        fake.actions
            .lock()
            .unwrap()
            .iter()
            .any(|a| a["chat_id"] == 42 && a["action"] == "typing")
    );

    fake.push(42, "/new");
    let sent = fake.sent(5).await;
    assert_eq!(
        sent.last().unwrap()["text"],
        "Начнём заново: историю нашего разговора я забыл."
    );
    let _ = bot.kill();
    let _ = bot.wait();
}

/// Runs `concierge <args>` with `env` (the model's and MCP variables of the caller's shell
/// removed first, and RUST_LOG: the default log filter is part of what is tested) and a message
/// on standard input; answers the exit code, stdout and stderr.
fn bot_command(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    use std::io::Write;
    let mut command = std::process::Command::new(BIN);
    command
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("MCP_TOKEN")
        .env_remove("RUST_LOG")
        .env("TELEGRAM_BOT_TOKEN", "123456:TEST-TOKEN")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    // Written and closed at once: a bot that read it would answer it on stdout.
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all("два капучино и латте\n".as_bytes());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Nothing of rmcp's or the HTTP client's inner workings in what a person reads.
fn assert_plain(stderr: &str) {
    for internal in [
        "rmcp",
        "reqwest",
        "hyper",
        "Transport",
        "ConnectError",
        "Os {",
    ] {
        assert!(!stderr.contains(internal), "`{internal}` in: {stderr}");
    }
}

#[test]
fn without_a_key_for_openai_the_bots_say_so_before_reading_anything() {
    let history = tempfile::tempdir().unwrap();
    let history = history.path().join("h.sqlite");
    let history = history.to_str().unwrap();
    for command in ["chat", "telegram"] {
        let (code, stdout, stderr) = bot_command(
            &[
                command,
                "--mcp",
                "http://127.0.0.1:9/mcp",
                "--history",
                history,
            ],
            &[],
        );
        assert_eq!(code, 1, "{command}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{command}");
        assert!(
            stderr.starts_with(
                "OPENAI_API_KEY is not set: the model API at https://api.openai.com/v1 needs one"
            ),
            "{command}: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_or_an_unreachable_endpoint_is_said_at_start() {
    let (model, seen) = scripted_model().await;
    let server = Server::start(
        |dir| coffee_config(dir, ""),
        &[("APP_MCP_TOKENS", "demo:demo-token")],
    );
    let history = server.dir.path().join("h.sqlite");
    let history = history.to_str().unwrap();
    let endpoint = server.url("/coffee/mcp");
    // A local model needs no key.
    let local = [("OPENAI_BASE_URL", model.as_str())];
    let cases: [(&str, Vec<&str>, &str); 4] = [
        (
            "chat",
            vec!["--mcp", &endpoint, "--token", "wrong"],
            "the MCP endpoint refused the token (--token / MCP_TOKEN)",
        ),
        (
            "telegram",
            vec![
                "--mcp",
                &endpoint,
                "--token",
                "wrong",
                "--api-url",
                "http://127.0.0.1:9",
            ],
            "the MCP endpoint refused the token (--token / MCP_TOKEN)",
        ),
        (
            "chat",
            vec!["--mcp", &endpoint],
            "the MCP endpoint needs a token: pass --token or set MCP_TOKEN",
        ),
        (
            "chat",
            vec!["--mcp", "http://127.0.0.1:9/mcp", "--token", "demo-token"],
            "cannot reach the MCP endpoint http://127.0.0.1:9/mcp: ",
        ),
    ];
    for (command, args, expected) in cases {
        let mut all = vec![command, "--history", history];
        all.extend(args);
        // The scripted model runs on this runtime: wait for the process on a blocking section.
        let (code, stdout, stderr) = tokio::task::block_in_place(|| bot_command(&all, &local));
        assert_eq!(code, 1, "{command}: {stdout}{stderr}");
        assert_eq!(stdout, "", "no apology, no answer: {command}");
        assert!(stderr.starts_with(expected), "{command}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert_plain(&stderr);
    }
    assert!(seen.lock().unwrap().is_empty(), "the model was never asked");
}

/// The model behind a fault proxy: each fault is the short apology within the model timeout,
/// the failed turn is not stored, and the next message is answered as if nothing happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_model_fault_is_an_apology_in_time_and_the_next_turn_works() {
    use common::faults::{Fault, FaultProxy};
    use std::time::{Duration, Instant};
    let (model, _seen) = scripted_model().await;
    let proxy = FaultProxy::start(model.trim_end_matches("/v1")).await;
    let server = Server::start_demo(&[]);
    let history = server.dir.path().join("agent/history.sqlite");
    let agent = Agent::new(
        ChatClient::new(&format!("{}/v1", proxy.base), Some("sk-test".into()), "m")
            .with_timeout(Duration::from_secs(1)),
        McpConnection::new(&server.url("/coffee/mcp"), Some("demo-token".into())),
        HistoryStore::open(&history).await.unwrap(),
        AgentSettings::default(),
    );
    let store = HistoryStore::open(&history).await.unwrap();
    let faults = [
        Fault::Latency(Duration::from_secs(3)),
        Fault::ResetMidBody,
        Fault::Trickle(Duration::from_millis(100)),
        Fault::TruncatedJson,
        Fault::Status {
            status: 500,
            times: 1,
        },
        Fault::RetryAfter {
            status: 429,
            seconds: 30,
        },
    ];
    for (n, fault) in faults.into_iter().enumerate() {
        let chat = format!("fault-{n}");
        proxy.set(fault.clone());
        let started = Instant::now();
        let answer = agent.reply(&chat, "какое у вас меню?").await;
        assert!(
            started.elapsed() < Duration::from_millis(2500),
            "{fault:?} held the turn {:?}",
            started.elapsed()
        );
        assert_eq!(answer, concierge_agent::APOLOGY, "{fault:?}");
        assert!(store.load(&chat).await.unwrap().is_empty(), "{fault:?}");
        proxy.set(Fault::Pass);
        let answer = agent.reply(&chat, "два капучино и латте").await;
        assert!(answer.starts_with("Заказ №"), "after {fault:?}: {answer}");
    }
}

/// The model fails after `create_order` ran: the guest hears the order's number, not a bare
/// apology, and the turn is kept, so a "did it work?" finds the order instead of placing another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_fails_after_the_order_is_placed_still_names_the_order() {
    use common::faults::{Fault, FaultProxy};
    let (model, _seen) = scripted_model().await;
    let proxy = FaultProxy::start(model.trim_end_matches("/v1")).await;
    let server = Server::start_demo(&[]);
    let history = server.dir.path().join("agent/history.sqlite");
    let agent = make_agent(
        &format!("{}/v1", proxy.base),
        &server,
        &history,
        AgentSettings::default(),
    )
    .await;
    // The first completion asks for create_order; the second, after the tool ran, is cut.
    proxy.set(Fault::After {
        passes: 1,
        then: Box::new(Fault::ResetMidBody),
    });
    let answer = agent.reply("chat-cut", "два капучино и латте").await;
    assert_eq!(
        answer,
        "Извините, ответ прервался, но заказ №1 принят, готовность ~13 мин."
    );
    let kept = HistoryStore::open(&history)
        .await
        .unwrap()
        .load("chat-cut")
        .await
        .unwrap();
    assert!(is_well_formed(&kept), "{kept:?}");
    assert!(
        serde_json::to_string(&kept)
            .unwrap()
            .contains("create_order"),
        "the order is in the history: {kept:?}"
    );
}

/// Telegram behind a fault proxy: polls that are cut, truncated or refused do not stop the bot,
/// and an answer sent into flood control (429, `retry_after`) arrives once the wait is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_telegram_bot_outlives_telegrams_faults_and_waits_out_flood_control() {
    use common::faults::{Fault, FaultProxy};
    let (model, _seen) = scripted_model().await;
    let (telegram, fake) = fake_telegram().await;
    let proxy = FaultProxy::start(&telegram).await;
    let server = Server::start_demo(&[]);
    let mut bot = spawn_telegram_bot(&server, &proxy.base, &model);

    for fault in [
        Fault::ResetMidBody,
        Fault::TruncatedJson,
        Fault::Status {
            status: 502,
            times: 2,
        },
    ] {
        proxy.set_on("getUpdates", fault.clone());
        let polls = proxy.requests();
        // The bot keeps polling through the fault (it waits 2 s between failed polls).
        for _ in 0..100 {
            if proxy.requests() >= polls + 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(
            proxy.requests() >= polls + 2,
            "the bot stopped polling under {fault:?}"
        );
    }
    proxy.set(Fault::Pass);
    fake.push(42, "/start");
    assert_eq!(
        fake.sent(1).await.len(),
        1,
        "answers once the faults are gone"
    );

    proxy.set_on(
        "sendMessage",
        Fault::Canned {
            status: 429,
            body: r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}"#,
            times: 1,
        },
    );
    fake.push(42, "/start");
    let sent = fake.sent(2).await;
    assert_eq!(sent.len(), 2, "the answer arrived after the flood wait");
    let _ = bot.kill();
    let _ = bot.wait();
}
