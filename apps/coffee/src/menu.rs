//! The menu as the shop keeps it: one sheet, a header row, a drink per row.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use calamine::{Data, Reader, Xlsx, open_workbook};
use schemars::JsonSchema;
use serde::Serialize;

use crate::text::fold;

/// The header names the seed fixes, in any column order.
pub const COLUMNS: [&str; 4] = ["напиток", "цена", "время_приготовления_мин", "состав"];

/// One drink as the tools return it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Drink {
    /// The drink's name as on the menu.
    pub drink: String,
    /// Price in roubles.
    pub price: f64,
    /// Minutes to prepare one.
    pub minutes: u32,
    /// Ingredients, as written on the menu.
    pub composition: String,
}

#[derive(Debug, Clone)]
pub struct Menu {
    drinks: Vec<Drink>,
    folded_names: Vec<String>,
    folded_compositions: Vec<String>,
}

/// Why a menu file could not be used; the message names the row and column.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct MenuError {
    pub path: PathBuf,
    pub message: String,
}

impl Menu {
    pub fn new(drinks: Vec<Drink>) -> Self {
        let folded_names = drinks.iter().map(|d| fold(&d.drink)).collect();
        let folded_compositions = drinks.iter().map(|d| fold(&d.composition)).collect();
        Self {
            drinks,
            folded_names,
            folded_compositions,
        }
    }

    pub fn load(path: &Path) -> Result<Self, MenuError> {
        let error = |message: String| MenuError {
            path: path.to_path_buf(),
            message,
        };
        let workbook: Xlsx<_> =
            open_workbook(path).map_err(|e| error(format!("cannot open: {e}")))?;
        Self::read_guarded(workbook).map_err(error)
    }

    /// A menu from a workbook's bytes: how the fuzz target hands over hostile spreadsheets.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let workbook =
            Xlsx::new(std::io::Cursor::new(bytes)).map_err(|e| format!("cannot open: {e}"))?;
        Self::read_guarded(workbook)
    }

    /// Reads the workbook, a panic of the spreadsheet library included: a malformed file is
    /// refused, and the reloading task that met it lives on (found by the `coffee_menu` fuzz
    /// target: calamine 0.38 overflows on a cell reference of many letters).
    fn read_guarded<R: std::io::Read + std::io::Seek>(workbook: Xlsx<R>) -> Result<Self, String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Self::from_workbook(workbook)
        }))
        .unwrap_or_else(|_| Err("the workbook is malformed".to_string()))
    }

    fn from_workbook<R: std::io::Read + std::io::Seek>(
        mut workbook: Xlsx<R>,
    ) -> Result<Self, String> {
        let range = workbook
            .worksheet_range_at(0)
            .ok_or_else(|| "the workbook has no sheet".to_string())?
            .map_err(|e| format!("cannot read the first sheet: {e}"))?;
        let mut rows = range.rows();
        let header: Vec<String> = rows
            .next()
            .ok_or_else(|| "the sheet is empty".to_string())?
            .iter()
            .map(|cell| fold(&cell.to_string()))
            .collect();
        let column = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| format!("no column `{name}` in the header row"))
        };
        let [name_col, price_col, minutes_col, composition_col] = [
            column(COLUMNS[0])?,
            column(COLUMNS[1])?,
            column(COLUMNS[2])?,
            column(COLUMNS[3])?,
        ];

        let mut drinks = Vec::new();
        // Folded names seen so far: a check per row that stays linear in a long sheet.
        let mut seen = std::collections::HashSet::new();
        for (index, row) in rows.enumerate() {
            let line = index + 2;
            let cell = |col: usize| row.get(col).unwrap_or(&Data::Empty);
            let name = cell(name_col).to_string().trim().to_string();
            if name.is_empty() {
                continue; // blank lines between sections are normal in a hand-kept sheet
            }
            let price = number(cell(price_col))
                .filter(|p| *p >= 0.0)
                .ok_or_else(|| format!("row {line}: `цена` must be a number ≥ 0"))?;
            let minutes = number(cell(minutes_col))
                .filter(|m| *m >= 0.0 && m.fract() == 0.0 && *m <= 240.0)
                .ok_or_else(|| {
                    format!("row {line}: `время_приготовления_мин` must be a whole number 0..240")
                })? as u32;
            let composition = cell(composition_col).to_string().trim().to_string();
            if !seen.insert(fold(&name)) {
                return Err(format!("row {line}: `{name}` is listed twice"));
            }
            drinks.push(Drink {
                drink: name,
                price,
                minutes,
                composition,
            });
        }
        if drinks.is_empty() {
            return Err("the menu lists no drinks".to_string());
        }
        Ok(Self::new(drinks))
    }

    pub fn drinks(&self) -> &[Drink] {
        &self.drinks
    }

    /// The drink whose name matches `name` up to case, ё/е and spacing.
    pub fn find(&self, name: &str) -> Option<&Drink> {
        let wanted = fold(name);
        self.folded_names
            .iter()
            .position(|n| *n == wanted)
            .map(|i| &self.drinks[i])
    }

    /// Drinks whose name or composition contains `keyword` (case- and ё/е-insensitive).
    pub fn search(&self, keyword: &str) -> Vec<&Drink> {
        let wanted = fold(keyword);
        self.drinks
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                self.folded_names[*i].contains(&wanted)
                    || self.folded_compositions[*i].contains(&wanted)
            })
            .map(|(_, d)| d)
            .collect()
    }

    /// Up to three menu names close to `name`, best first, for "did you mean".
    pub fn close_matches(&self, name: &str) -> Vec<&str> {
        let wanted = fold(name);
        let mut scored: Vec<(f64, usize)> = self
            .folded_names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let contains = !wanted.is_empty() && (n.contains(&wanted) || wanted.contains(n));
                let score = strsim::normalized_levenshtein(n, &wanted);
                (if contains { score.max(0.75) } else { score }, i)
            })
            .filter(|(score, _)| *score >= 0.5)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored
            .into_iter()
            .take(3)
            .map(|(_, i)| self.drinks[i].drink.as_str())
            .collect()
    }
}

fn number(cell: &Data) -> Option<f64> {
    match cell {
        Data::Int(i) => Some(*i as f64),
        Data::Float(f) => Some(*f),
        Data::String(s) => s.trim().replace(',', ".").parse().ok(),
        _ => None,
    }
}

/// The menu file, re-read when the shop saves a new version: editing the Excel file is how the
/// shop changes its menu, and nobody should have to restart a server for that.
pub struct MenuFile {
    path: PathBuf,
    current: RwLock<(Option<SystemTime>, Arc<Menu>)>,
    opened: std::time::Instant,
    /// Milliseconds after `opened` when the file's time was last looked at: a stat per call would
    /// cost more than the call, and an atomic keeps concurrent calls from queueing on a lock.
    checked_ms: std::sync::atomic::AtomicU64,
}

/// How often a changed menu file is noticed.
const RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

impl MenuFile {
    pub fn open(path: PathBuf) -> Result<Self, MenuError> {
        let modified = modified(&path);
        let menu = Menu::load(&path)?;
        Ok(Self {
            path,
            current: RwLock::new((modified, Arc::new(menu))),
            opened: std::time::Instant::now(),
            checked_ms: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The current menu. A changed file that does not parse keeps the last good menu (and logs
    /// why), so a half-saved sheet never takes ordering down.
    pub fn get(&self) -> Arc<Menu> {
        use std::sync::atomic::Ordering;
        let now_ms = self.opened.elapsed().as_millis() as u64;
        let last = self.checked_ms.load(Ordering::Relaxed);
        // One caller per second wins the exchange and looks at the file; the others use the menu.
        let due = now_ms.saturating_sub(last) >= RECHECK.as_millis() as u64
            && self
                .checked_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if !due {
            return self
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .1
                .clone();
        }
        let modified = modified(&self.path);
        {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if current.0 == modified {
                return current.1.clone();
            }
        }
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.0 != modified {
            match Menu::load(&self.path) {
                Ok(menu) => *current = (modified, Arc::new(menu)),
                Err(error) => {
                    tracing::warn!(%error, "menu changed but cannot be read; keeping the last good menu");
                    current.0 = modified;
                }
            }
        }
        current.1.clone()
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn menu() -> Menu {
        Menu::new(vec![
            Drink {
                drink: "Капучино".into(),
                price: 220.0,
                minutes: 4,
                composition: "эспрессо, молоко".into(),
            },
            Drink {
                drink: "Розовая волна".into(),
                price: 310.0,
                minutes: 5,
                composition: "арбузный сироп, тоник, лёд".into(),
            },
        ])
    }

    #[test]
    fn search_finds_composition_case_and_yo_insensitively() {
        let menu = menu();
        let found: Vec<_> = menu.search("ЛЕД").iter().map(|d| d.drink.clone()).collect();
        assert_eq!(found, ["Розовая волна"]);
        assert_eq!(menu.search("арбуз").len(), 1);
        assert_eq!(menu.search("капуч").len(), 1);
        assert!(menu.search("чай").is_empty());
    }

    #[test]
    fn close_matches_suggest_the_intended_drink() {
        let menu = menu();
        assert_eq!(menu.close_matches("капучина"), ["Капучино"]);
        assert!(menu.close_matches("борщ").is_empty());
    }
}
