//! The order book: `orders.xlsx`, written so that no acknowledged order is ever lost.
//!
//! One writer task owns the file. Callers send it a new order and wait; the writer takes every
//! order waiting at that moment (a group commit), gives them the next ids, writes the whole
//! workbook to a temporary file, fsyncs it, renames it over `orders.xlsx` and fsyncs the directory.
//! Only then are the callers answered. A crash at any point leaves either the old file or the new
//! one — never a torn one — and every answered order is in it. Ids continue from the file on
//! restart.
//!
//! The workbook has two sheets a person can read: `заказы` (номер | создан | всего_мин) and
//! `позиции` (номер | напиток | количество | минут_за_штуку).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use calamine::{Data, Reader, Xlsx, open_workbook};
use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use rust_xlsxwriter::Workbook;
use tokio::sync::{mpsc, oneshot};

const ORDERS_SHEET: &str = "заказы";
const LINES_SHEET: &str = "позиции";
/// Orders waiting beyond this many make callers wait for the channel, which is the backpressure.
const QUEUE: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct OrderLine {
    pub drink: String,
    pub qty: u32,
    /// Minutes for one, as on the menu when the order was taken.
    pub minutes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub id: u64,
    pub created: DateTime<Utc>,
    pub lines: Vec<OrderLine>,
}

impl Order {
    /// One barista, one drink after another: the seed's deliberate simplification.
    pub fn total_minutes(&self) -> u32 {
        self.lines.iter().map(|l| l.minutes * l.qty).sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("building the workbook: {0}")]
    Workbook(String),
    #[error("the order writer has stopped")]
    WriterGone,
}

struct Pending {
    created: DateTime<Utc>,
    lines: Vec<OrderLine>,
    reply: oneshot::Sender<Result<Order, Arc<StoreError>>>,
}

/// A handle to the order book; cheap to clone.
#[derive(Clone)]
pub struct OrderBook {
    sender: mpsc::Sender<Pending>,
    orders: Arc<RwLock<BTreeMap<u64, Order>>>,
}

impl OrderBook {
    /// Opens (or prepares to create) the order book at `path` and starts its writer task.
    pub fn open(path: PathBuf) -> Result<Self, StoreError> {
        let existing = read_orders(&path)?;
        let orders = Arc::new(RwLock::new(existing));
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(writer(path, orders.clone(), receiver));
        Ok(Self { sender, orders })
    }

    /// Records an order and returns it with its id once it is durably on disk.
    pub async fn create(
        &self,
        created: DateTime<Utc>,
        lines: Vec<OrderLine>,
    ) -> Result<Order, Arc<StoreError>> {
        let (reply, answer) = oneshot::channel();
        self.sender
            .send(Pending {
                created,
                lines,
                reply,
            })
            .await
            .map_err(|_| Arc::new(StoreError::WriterGone))?;
        answer.await.map_err(|_| Arc::new(StoreError::WriterGone))?
    }

    pub fn get(&self, id: u64) -> Option<Order> {
        let orders = self.orders.read().unwrap_or_else(|e| e.into_inner());
        orders.get(&id).cloned()
    }
}

async fn writer(
    path: PathBuf,
    orders: Arc<RwLock<BTreeMap<u64, Order>>>,
    mut receiver: mpsc::Receiver<Pending>,
) {
    let mut batch = Vec::new();
    while receiver.recv_many(&mut batch, QUEUE).await > 0 {
        let mut all = orders.read().unwrap_or_else(|e| e.into_inner()).clone();
        let first_id = all.keys().next_back().map_or(1, |last| last + 1);
        let mut created = Vec::with_capacity(batch.len());
        for (id, pending) in (first_id..).zip(&batch) {
            let order = Order {
                id,
                // The file keeps milliseconds; keep the same in memory so a restart changes nothing.
                created: pending.created.trunc_subsecs(3),
                lines: pending.lines.clone(),
            };
            all.insert(order.id, order.clone());
            created.push(order);
        }
        let target = path.clone();
        let snapshot: Vec<Order> = all.values().cloned().collect();
        let written = tokio::task::spawn_blocking(move || write_orders(&target, &snapshot))
            .await
            .unwrap_or_else(|e| Err(StoreError::Workbook(e.to_string())));
        match written {
            Ok(()) => {
                *orders.write().unwrap_or_else(|e| e.into_inner()) = all;
                for (pending, order) in batch.drain(..).zip(created) {
                    let _ = pending.reply.send(Ok(order));
                }
            }
            Err(error) => {
                tracing::error!(%error, "orders not written; the batch is refused");
                let error = Arc::new(error);
                for pending in batch.drain(..) {
                    let _ = pending.reply.send(Err(error.clone()));
                }
            }
        }
    }
}

/// Writes all orders to `path` atomically and durably (temp file, fsync, rename, fsync dir).
fn write_orders(path: &Path, orders: &[Order]) -> Result<(), StoreError> {
    let bytes = workbook_bytes(orders)?;
    let io = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let temporary = path.with_extension("xlsx.tmp");
    let mut file = std::fs::File::create(&temporary).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(io)?;
    std::fs::File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

fn workbook_bytes(orders: &[Order]) -> Result<Vec<u8>, StoreError> {
    let fail = |e: rust_xlsxwriter::XlsxError| StoreError::Workbook(e.to_string());
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    sheet.set_name(ORDERS_SHEET).map_err(fail)?;
    for (col, title) in ["номер", "создан", "всего_мин"].iter().enumerate() {
        sheet.write_string(0, col as u16, *title).map_err(fail)?;
    }
    for (row, order) in orders.iter().enumerate() {
        let row = row as u32 + 1;
        sheet.write_number(row, 0, order.id as f64).map_err(fail)?;
        let created = order.created.to_rfc3339_opts(SecondsFormat::Millis, true);
        sheet.write_string(row, 1, created).map_err(fail)?;
        sheet
            .write_number(row, 2, order.total_minutes() as f64)
            .map_err(fail)?;
    }
    let sheet = workbook.add_worksheet();
    sheet.set_name(LINES_SHEET).map_err(fail)?;
    for (col, title) in ["номер", "напиток", "количество", "минут_за_штуку"]
        .iter()
        .enumerate()
    {
        sheet.write_string(0, col as u16, *title).map_err(fail)?;
    }
    let mut row = 1u32;
    for order in orders {
        for line in &order.lines {
            sheet.write_number(row, 0, order.id as f64).map_err(fail)?;
            sheet.write_string(row, 1, &line.drink).map_err(fail)?;
            sheet.write_number(row, 2, line.qty as f64).map_err(fail)?;
            sheet
                .write_number(row, 3, line.minutes as f64)
                .map_err(fail)?;
            row += 1;
        }
    }
    workbook.save_to_buffer().map_err(fail)
}

/// Reads every order back from `path`; a missing file is an empty book.
pub fn read_orders(path: &Path) -> Result<BTreeMap<u64, Order>, StoreError> {
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let unreadable = |message: String| StoreError::Unreadable {
        path: path.to_path_buf(),
        message,
    };
    let mut workbook: Xlsx<_> =
        open_workbook(path).map_err(|e| unreadable(format!("cannot open: {e}")))?;
    let sheet = |workbook: &mut Xlsx<_>, name: &str| {
        workbook
            .worksheet_range(name)
            .map_err(|e| unreadable(format!("sheet `{name}`: {e}")))
    };
    let mut orders = BTreeMap::new();
    for (index, row) in sheet(&mut workbook, ORDERS_SHEET)?
        .rows()
        .enumerate()
        .skip(1)
    {
        let id = whole(row.first())
            .ok_or_else(|| unreadable(format!("{ORDERS_SHEET} row {}: bad номер", index + 1)))?;
        let created = row
            .get(1)
            .map(|c| c.to_string())
            .and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
            .ok_or_else(|| unreadable(format!("{ORDERS_SHEET} row {}: bad создан", index + 1)))?
            .with_timezone(&Utc);
        orders.insert(
            id,
            Order {
                id,
                created,
                lines: Vec::new(),
            },
        );
    }
    for (index, row) in sheet(&mut workbook, LINES_SHEET)?
        .rows()
        .enumerate()
        .skip(1)
    {
        let bad = || unreadable(format!("{LINES_SHEET} row {}", index + 1));
        let id = whole(row.first()).ok_or_else(bad)?;
        let line = OrderLine {
            drink: row.get(1).map(|c| c.to_string()).ok_or_else(bad)?,
            qty: whole(row.get(2)).ok_or_else(bad)? as u32,
            minutes: whole(row.get(3)).ok_or_else(bad)? as u32,
        };
        orders.get_mut(&id).ok_or_else(bad)?.lines.push(line);
    }
    Ok(orders)
}

fn whole(cell: Option<&Data>) -> Option<u64> {
    match cell? {
        Data::Int(i) if *i >= 0 => Some(*i as u64),
        Data::Float(f) if *f >= 0.0 && f.fract() == 0.0 => Some(*f as u64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(drink: &str, qty: u32, minutes: u32) -> OrderLine {
        OrderLine {
            drink: drink.into(),
            qty,
            minutes,
        }
    }

    #[tokio::test]
    async fn concurrent_orders_get_distinct_ids_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("orders.xlsx");
        let book = OrderBook::open(path.clone()).unwrap();
        let mut tasks = Vec::new();
        for i in 0..50 {
            let book = book.clone();
            tasks.push(tokio::spawn(async move {
                book.create(Utc::now(), vec![line("Латте", 1 + i % 3, 5)])
                    .await
                    .unwrap()
                    .id
            }));
        }
        let mut ids = Vec::new();
        for task in tasks {
            ids.push(task.await.unwrap());
        }
        ids.sort();
        assert_eq!(ids, (1..=50).collect::<Vec<_>>());

        let reread = read_orders(&path).unwrap();
        assert_eq!(reread.len(), 50);
        assert_eq!(reread[&7], book.get(7).unwrap());

        let reopened = OrderBook::open(path).unwrap();
        let next = reopened
            .create(Utc::now(), vec![line("Капучино", 2, 4)])
            .await
            .unwrap();
        assert_eq!(next.id, 51);
        assert_eq!(next.total_minutes(), 8);
    }

    #[tokio::test]
    async fn an_unwritable_place_refuses_the_order() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("not-a-dir");
        std::fs::write(&blocker, b"x").unwrap();
        let book = OrderBook::open(blocker.join("orders.xlsx")).unwrap();
        let result = book.create(Utc::now(), vec![line("Латте", 1, 5)]).await;
        assert!(result.is_err());
        assert!(book.get(1).is_none());
    }
}
