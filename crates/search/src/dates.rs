//! When a document's trips happen: a date range in its text ("03.01.2026 – 10.01.2026", a row of
//! a trip's dates) names the months it covers, so a question's month ("im März") matches the
//! trips that run then. A single date ("bei Buchung bis zum 28.03.2026") is a deadline, not
//! when anything happens, and names nothing.

/// German month names, as a question says them (folding makes "Maerz" and "Marz" the same).
const MONTHS: [&str; 12] = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

/// The months the date ranges of `body` cover, each once, in calendar order, as one line of
/// words.
pub(crate) fn months(body: &str) -> String {
    let mut covered = [false; 12];
    let dates = dates(body);
    for pair in dates.windows(2) {
        let ((from, _, start_end), (to, end_start, _)) = (pair[0], pair[1]);
        let between = body[start_end..end_start].trim();
        if !matches!(between, "–" | "-" | "—" | "bis") {
            continue;
        }
        // At most a year: a range ending in an earlier month runs over New Year.
        let mut month = from;
        for _ in 0..12 {
            covered[month] = true;
            if month == to {
                break;
            }
            month = (month + 1) % 12;
        }
    }
    MONTHS
        .iter()
        .zip(covered)
        .filter(|(_, covered)| *covered)
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every `d.m.yyyy` / `dd.mm.yyyy` of `body`: its month (0 for January), where it starts and
/// where it ends.
fn dates(body: &str) -> Vec<(usize, usize, usize)> {
    let bytes = body.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if let Some((month, end)) = date_at(bytes, at)
            && (at == 0 || !bytes[at - 1].is_ascii_digit())
        {
            found.push((month, at, end));
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

/// The month (0 for January) of the date starting at `at`, and where the date ends.
fn date_at(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let digits = |from: usize, min: usize, max: usize| -> Option<(usize, usize)> {
        let count = bytes[from..]
            .iter()
            .take(max + 1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if count < min || count > max {
            return None;
        }
        let value = std::str::from_utf8(&bytes[from..from + count])
            .ok()?
            .parse()
            .ok()?;
        Some((value, from + count))
    };
    let (day, next) = digits(at, 1, 2)?;
    (bytes.get(next) == Some(&b'.')).then_some(())?;
    let (month, next) = digits(next + 1, 1, 2)?;
    (bytes.get(next) == Some(&b'.')).then_some(())?;
    let (_year, end) = digits(next + 1, 4, 4)?;
    ((1..=31).contains(&day) && (1..=12).contains(&month)).then_some((month - 1, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_names_its_months_a_deadline_names_none() {
        let body = "| 03.01.2026 – 10.01.2026 | 8 Tage |\n| 25.02.2026 - 04.03.2026 | 8 Tage |\n\
                    Bei Buchung bis zum 28.05.2026 gibt es Rabatt.";
        assert_eq!(months(body), "Januar Februar März");
        assert_eq!(
            months("Abreise 27.12.2026 bis 03.01.2027"),
            "Januar Dezember"
        );
        assert_eq!(months("Stand 12.10.2026."), "");
        assert_eq!(
            months("Telefon 0911.123456 und 99.99.2026 – 01.01.2026"),
            ""
        );
    }
}
