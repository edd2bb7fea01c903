//! A tool's SQL as written in the config, read once into pieces: text, `:name` parameters and
//! `{name}` fragments. Each engine renders the pieces in its own form (`$1`, `?`), so the
//! config's one statement runs on all three, and no value ever becomes SQL text.
//!
//! The reader knows just enough SQL to find the placeholders: string literals, quoted
//! identifiers and comments are skipped, and `::` (PostgreSQL's cast) is not a parameter. An
//! array parameter written as `IN (:ids)` (or `NOT IN (:ids)`) is one piece, because each
//! engine needs that whole predicate in its own form (`= ANY($1)`, or a list of `?`).

/// One piece of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// `:name`, bound as one value.
    Param(String),
    /// `IN (:name)` or `NOT IN (:name)`: membership in an array parameter.
    InList {
        name: String,
        negated: bool,
    },
    /// `{name}`: one of the SQL choices the config wrote, picked by an enum argument.
    Fragment(String),
}

/// A statement the reader cannot split safely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// Splits `sql` into pieces.
pub fn pieces(sql: &str) -> Result<Vec<Piece>, Unreadable> {
    let bytes = sql.as_bytes();
    let mut out: Vec<Piece> = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' | b'`' => {
                let end = closing(bytes, i, c).ok_or_else(|| {
                    Unreadable(format!("a quote `{}` is never closed", c as char))
                })?;
                text.push_str(&sql[i..end]);
                i = end;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                let end = sql[i..].find('\n').map_or(bytes.len(), |n| i + n);
                text.push_str(&sql[i..end]);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = sql[i + 2..]
                    .find("*/")
                    .map(|n| i + 2 + n + 2)
                    .ok_or_else(|| Unreadable("a `/*` comment is never closed".into()))?;
                text.push_str(&sql[i..end]);
                i = end;
            }
            b':' if bytes.get(i + 1) == Some(&b':') => {
                text.push_str("::");
                i += 2;
            }
            b':' if bytes.get(i + 1).is_some_and(|b| is_name_start(*b)) => {
                let end = name_end(bytes, i + 1);
                let name = sql[i + 1..end].to_string();
                i = end;
                if let Some((negated, before)) = in_list_opening(&text)
                    && let Some(after) = list_closing(bytes, i)
                {
                    text.truncate(before);
                    flush(&mut out, &mut text);
                    out.push(Piece::InList { name, negated });
                    i = after;
                } else {
                    flush(&mut out, &mut text);
                    out.push(Piece::Param(name));
                }
            }
            b'{' => {
                let end = name_end(bytes, i + 1);
                if end == i + 1 || bytes.get(end) != Some(&b'}') {
                    return Err(Unreadable(
                        "a `{` must open a fragment: `{name}` with a name of letters, digits and `_`"
                            .into(),
                    ));
                }
                flush(&mut out, &mut text);
                out.push(Piece::Fragment(sql[i + 1..end].to_string()));
                i = end + 1;
            }
            b'?' => {
                return Err(Unreadable(
                    "`?` is not a parameter here: write `:name` and declare `name`".into(),
                ));
            }
            b'$' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                return Err(Unreadable(
                    "`$1` is not a parameter here: write `:name` and declare `name`".into(),
                ));
            }
            _ => {
                let next = sql[i..].chars().next().map_or(1, char::len_utf8);
                text.push_str(&sql[i..i + next]);
                i += next;
            }
        }
    }
    flush(&mut out, &mut text);
    Ok(out)
}

fn flush(out: &mut Vec<Piece>, text: &mut String) {
    if !text.is_empty() {
        out.push(Piece::Text(std::mem::take(text)));
    }
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn name_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    end
}

/// The end of a quoted run that starts at `start` (a doubled quote stays inside; so does a
/// backslash-escaped one, which MariaDB reads in strings).
fn closing(bytes: &[u8], start: usize, quote: u8) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote == b'\'' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Whether `text` ends in `IN (` (or `NOT IN (`), whitespace anywhere between: whether it is
/// negated, and where the predicate's keyword starts.
fn in_list_opening(text: &str) -> Option<(bool, usize)> {
    let rest = text.trim_end().strip_suffix('(')?.trim_end();
    let keyword = rest.len().checked_sub(2)?;
    if !rest[keyword..].eq_ignore_ascii_case("in")
        || rest[..keyword]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let before = rest[..keyword].trim_end();
    match before.len().checked_sub(3) {
        Some(not)
            if before[not..].eq_ignore_ascii_case("not")
                && !before[..not]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            Some((true, not))
        }
        _ => Some((false, keyword)),
    }
}

/// After a parameter that ends at `from`: the position after the `)` that closes the list,
/// when only whitespace stands between.
fn list_closing(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    (bytes.get(i) == Some(&b')')).then_some(i + 1)
}

/// The names of the statement's parameters, each once, in order of first use.
pub fn parameters(pieces: &[Piece]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for piece in pieces {
        let name = match piece {
            Piece::Param(name) | Piece::InList { name, .. } => name.as_str(),
            _ => continue,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The names of the statement's fragments, each once.
pub fn fragments(pieces: &[Piece]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for piece in pieces {
        if let Piece::Fragment(name) = piece
            && !names.contains(&name.as_str())
        {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use Piece::*;

    fn text(s: &str) -> Piece {
        Text(s.into())
    }

    #[test]
    fn parameters_fragments_and_lists_are_found() {
        let sql = "SELECT id FROM orders WHERE customer = :customer AND (:ids IS NULL OR id IN (:ids)) ORDER BY {sort} LIMIT :limit";
        assert_eq!(
            pieces(sql).unwrap(),
            [
                text("SELECT id FROM orders WHERE customer = "),
                Param("customer".into()),
                text(" AND ("),
                Param("ids".into()),
                text(" IS NULL OR id "),
                InList {
                    name: "ids".into(),
                    negated: false
                },
                text(") ORDER BY "),
                Fragment("sort".into()),
                text(" LIMIT "),
                Param("limit".into()),
            ]
        );
        let names = pieces(sql).unwrap();
        assert_eq!(parameters(&names), ["customer", "ids", "limit"]);
        assert_eq!(fragments(&names), ["sort"]);
    }

    #[test]
    fn not_in_is_one_piece_and_lists_need_their_parentheses() {
        assert_eq!(
            pieces("x NOT  IN( :ids )").unwrap(),
            [
                text("x "),
                InList {
                    name: "ids".into(),
                    negated: true
                }
            ]
        );
        assert_eq!(
            pieces("x IN (:a, :b)").unwrap(),
            [
                text("x IN ("),
                Param("a".into()),
                text(", "),
                Param("b".into()),
                text(")")
            ]
        );
        assert_eq!(
            pieces("LOGIN(:a)").unwrap(),
            [text("LOGIN("), Param("a".into()), text(")")]
        );
    }

    #[test]
    fn quotes_comments_and_casts_are_not_parameters() {
        let sql = "SELECT ':no', \"a:b\", `c:d`, 'it''s :no', x::int -- :no\n/* :no {no} */ FROM t WHERE a = :yes";
        let found = pieces(sql).unwrap();
        assert_eq!(parameters(&found), ["yes"]);
        assert!(fragments(&found).is_empty());
    }

    #[test]
    fn other_placeholder_styles_and_broken_quotes_are_refused() {
        for sql in [
            "SELECT * FROM t WHERE a = ?",
            "SELECT * FROM t WHERE a = $1",
            "SELECT 'open",
            "SELECT 1 /* open",
            "SELECT { }",
        ] {
            assert!(pieces(sql).is_err(), "{sql}");
        }
    }
}
