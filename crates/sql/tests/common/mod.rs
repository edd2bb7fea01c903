//! What the SQL tools' tests share: the engines with one fixture loaded, the kind registered,
//! the config of a shop on one of them, and a customer's call over the platform's HTTP endpoint.

#![allow(dead_code)] // each test file uses its own part

use axum::Router;
use concierge_server::{Apps, section};
use concierge_testkit::{Instance, call_tool, config, instance};
use serde_json::Value;
use sqlx::{Connection, Database, Executor, Row};

/// The fixture, with the one type the engines spell differently.
pub fn fixture(timestamp: &str) -> String {
    format!(
        "CREATE TABLE orders (
            id INTEGER PRIMARY KEY,
            customer VARCHAR(40) NOT NULL,
            status VARCHAR(20) NOT NULL,
            total DECIMAL(10,2) NOT NULL,
            placed_at {timestamp} NOT NULL
        );
        INSERT INTO orders (id, customer, status, total, placed_at) VALUES
            (1, 'acme', 'open', 10.50, '2026-11-01 10:00:00'),
            (2, 'acme', 'paid', 99.99, '2026-11-02 10:00:00'),
            (3, 'acme', 'shipped', 5.00, '2026-11-03 10:00:00'),
            (4, 'bolt', 'open', 7.25, '2026-11-04 10:00:00'),
            (5, 'acme', 'open', 1.00, '2026-11-05 10:00:00');
        CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
        INSERT INTO counters (id, n) VALUES (1, 0);"
    )
}

/// An engine with the fixture loaded: its name and the instance's `url` (plus, for SQLite,
/// the script the instance creates its file from and the folder that holds both).
pub struct Loaded {
    pub engine: &'static str,
    pub url: String,
    pub create_from: Option<std::path::PathBuf>,
    pub _folder: Option<tempfile::TempDir>,
}

impl Loaded {
    /// A server's database at `url` that a test fills itself (or that is not there at all).
    pub fn server(engine: &'static str, url: String) -> Self {
        Self {
            engine,
            url,
            create_from: None,
            _folder: None,
        }
    }

    /// The instance's lines that say where its database is.
    pub fn settings(&self) -> String {
        let url = format!("url = \"{}\"\n", self.url);
        match &self.create_from {
            Some(script) => format!("{url}create_from = \"{}\"\n", script.display()),
            None => url,
        }
    }

    /// The shop serving `tools` read-only from this database, `settings` after the lines that
    /// say where it is.
    pub async fn serve(&self, settings: &str, tools: &str) -> Instance {
        let settings = format!("{}{settings}", self.settings());
        Shop {
            settings: &settings,
            tools,
            ..Shop::default()
        }
        .deploy()
        .await
    }

    /// The shop serving `tools` from this database with writes allowed, `settings` after the
    /// lines that say where it is, and the folder of its store of writes (which must live as
    /// long as the deployment).
    pub async fn serve_writes(&self, settings: &str, tools: &str) -> (Instance, tempfile::TempDir) {
        let folder = tempfile::tempdir().unwrap();
        let shop = Shop {
            platform: &writes_at(&folder.path().join("writes.db")),
            settings: &format!("{}read_only = false\n{settings}", self.settings()),
            tools,
            ..Shop::default()
        };
        (shop.deploy().await, folder)
    }

    /// Runs `statement` on the engine's server behind the tools' back: a test's own set-up.
    pub async fn execute(&self, statement: &str) {
        match self.engine {
            "postgres" => execute::<sqlx::Postgres>(&self.url, statement).await,
            "mariadb" => execute::<sqlx::MySql>(&self.url, statement).await,
            other => panic!("{other} has no server to run statements on"),
        }
    }

    /// Ends every other session on the test's database, as a restart or a failover does:
    /// the connections a pool keeps warm are gone without a word.
    pub async fn end_other_sessions(&self) {
        match self.engine {
            "postgres" => {
                self.number(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                )
                .await;
            }
            "mariadb" => {
                // One connection lists and kills, so it never meets itself; a session that
                // ended between the list and its KILL answers "unknown thread" (1094), which
                // is what was asked for.
                let mut connection = sqlx::MySqlConnection::connect(&self.url).await.unwrap();
                loop {
                    let ids: Vec<i64> = sqlx::query_scalar(
                        "SELECT CAST(id AS SIGNED) FROM information_schema.processlist \
                         WHERE db = DATABASE() AND id <> CONNECTION_ID()",
                    )
                    .fetch_all(&mut connection)
                    .await
                    .unwrap();
                    if ids.is_empty() {
                        break;
                    }
                    for id in ids {
                        let kill = format!("KILL {id}");
                        match sqlx::raw_sql(sqlx::AssertSqlSafe(kill))
                            .execute(&mut connection)
                            .await
                        {
                            Ok(_) => {}
                            Err(sqlx::Error::Database(e))
                                if e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                                    .is_some_and(|e| e.number() == 1094) => {}
                            Err(e) => panic!("KILL {id}: {e}"),
                        }
                    }
                }
                connection.close().await.unwrap();
            }
            other => panic!("{other} has no server whose sessions end"),
        }
    }

    /// The number `query` answers on the engine's server, asked behind the tools' back.
    pub async fn number(&self, query: &str) -> i64 {
        match self.engine {
            "postgres" => number::<sqlx::Postgres>(&self.url, query).await,
            "mariadb" => number::<sqlx::MySql>(&self.url, query).await,
            other => panic!("{other} has no server to ask"),
        }
    }
}

/// Every engine with the fixture loaded: SQLite, and the servers the test command started.
pub async fn engines() -> Vec<Loaded> {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("shop.sql");
    std::fs::write(&script, fixture("TEXT")).unwrap();
    let mut engines = vec![Loaded {
        engine: "sqlite",
        // Created by the instance itself from `create_from`.
        url: format!("sqlite://{}", folder.path().join("shop.db").display()),
        create_from: Some(script),
        _folder: Some(folder),
    }];
    engines.extend(servers().await);
    engines
}

/// The engines a server runs (PostgreSQL, MariaDB) that the test command started, with the
/// fixture loaded: for what a SQLite file does not do.
pub async fn servers() -> Vec<Loaded> {
    let mut engines = Vec::new();
    if let Some(url) = concierge_testkit::postgres::fresh_database("sql_kind").await {
        execute::<sqlx::Postgres>(&url, &fixture("TIMESTAMP")).await;
        engines.push(Loaded::server("postgres", url));
    }
    if let Some(url) = concierge_testkit::mariadb::fresh_database("sql_kind").await {
        execute::<sqlx::MySql>(&url, &fixture("DATETIME")).await;
        engines.push(Loaded::server("mariadb", url));
    }
    engines
}

/// Runs `sql` (one statement or a script) on the database at `url`.
async fn execute<DB: Database>(url: &str, sql: &str)
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    let mut connection = DB::Connection::connect(url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(&mut connection)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    connection.close().await.unwrap();
}

/// The number the query `sql` answers on the database at `url`.
async fn number<DB: Database>(url: &str, sql: &str) -> i64
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'r> i64: sqlx::Decode<'r, DB> + sqlx::Type<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let mut connection = DB::Connection::connect(url).await.unwrap();
    let row = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(&mut connection)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let number = row.try_get::<i64, _>(0).unwrap();
    connection.close().await.unwrap();
    number
}

pub fn apps() -> Apps {
    Apps::new().tools_async("sql", |settings| async move {
        concierge_sql::build(&section(&settings)?).await
    })
}

pub const TOKENS: &str = "acme:token-acme,bolt:token-bolt";

/// The config of a deployment of `shop`, an instance of the kind, served at `/mcp` to the
/// customers in [`TOKENS`].
#[derive(Default)]
pub struct Shop<'a> {
    /// The platform's sections before the instance (`[writes]`, `[audit.shop]`).
    pub platform: &'a str,
    /// The instance's own lines: where its database is, and its settings.
    pub settings: &'a str,
    /// Its `[[apps.shop.tool]]` tables.
    pub tools: &'a str,
    /// The endpoint's lines of its own.
    pub endpoint: &'a str,
}

impl Shop<'_> {
    pub fn config(&self) -> String {
        format!(
            "{}{}\n[apps.shop]\nkind = \"sql\"\n{}\n{}\n{}{}\n",
            config::server(""),
            self.platform,
            self.settings,
            self.tools,
            config::stateless_endpoint("/mcp", &["shop.*"]),
            self.endpoint,
        )
    }

    /// The deployment of this config, its customers' tokens given.
    pub async fn deploy(&self) -> Instance {
        instance(&self.config(), apps(), &[(config::TOKENS, TOKENS)]).await
    }
}

/// `[writes]`: the platform's store of writes (idempotency, confirmations) at `path`.
pub fn writes_at(path: &std::path::Path) -> String {
    format!("[writes]\ndatabase = \"{}\"\n", path.display())
}

/// A write tool of the caller's own orders, one order a call by its `id`; `settings` are its
/// further lines (`confirm`, `max_affected_rows`).
pub fn order_write(name: &str, description: &str, settings: &str, sql: &str) -> String {
    format!(
        r#"
[[apps.shop.tool]]
name = "{name}"
description = "{description}"
write = true
{settings}
sql = "{sql}"
bind = {{ customer = "client" }}
input_schema = {{ properties = {{ id = {{ type = "integer" }} }}, required = ["id"] }}
"#
    )
}

/// The tool that cancels one of the caller's open orders once the caller confirmed it.
pub fn order_cancel() -> String {
    order_write(
        "order_cancel",
        "Cancel one open order.",
        "confirm = true\nmax_affected_rows = 1",
        "UPDATE orders SET status = 'cancelled' WHERE id = :id AND customer = :customer AND status = 'open'",
    )
}

/// A customer of the shop, calling its tools over `/mcp` with its token in [`TOKENS`].
pub struct Customer<'a> {
    router: &'a Router,
    token: String,
}

impl<'a> Customer<'a> {
    pub fn new(router: &'a Router, name: &str) -> Self {
        Self {
            router,
            token: format!("token-{name}"),
        }
    }

    /// The result of calling `tool` with `arguments`, a tool's failure included.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        call_tool(self.router, &self.token, tool, arguments).await
    }
}

pub fn ids(result: &Value) -> Vec<i64> {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_i64().expect("an id"))
        .collect()
}

pub fn error_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let error: Value = serde_json::from_str(text).expect("a JSON error");
    error["error"]["code"].as_str().unwrap().to_string()
}

/// The status of the order `id` among a listing's rows; empty when it is not there.
pub fn status_of(result: &Value, id: i64) -> String {
    result["structuredContent"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id)
        .map(|row| row["status"].as_str().unwrap().to_string())
        .unwrap_or_default()
}
