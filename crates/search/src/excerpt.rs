//! Excerpts: the stretch of a document that holds most of the query's terms.

use crate::analyzer::{QueryTerm, tokens};

/// About `max_chars` characters of `text` around the best match of `terms`: the window holding
/// the most distinct terms, opened a little before its first match and cut at word boundaries.
/// Whitespace (Markdown line breaks included) is collapsed; "…" marks a cut. Without any match,
/// the text's beginning.
pub fn excerpt(text: &str, terms: &[QueryTerm], max_chars: usize) -> String {
    let matches: Vec<(usize, usize)> = tokens(text)
        .into_iter()
        .filter_map(|token| {
            terms
                .iter()
                .position(|term| term.matches(&token))
                .map(|which| (token.start, which))
        })
        .collect();
    // Byte budgets approximate characters: German text is nearly all one byte per character.
    let reach = max_chars * 3 / 4;
    let mut best = (0usize, 0usize, 0usize); // (distinct terms, matches, start byte)
    for (i, &(start, _)) in matches.iter().enumerate() {
        let mut seen = vec![false; terms.len()];
        let mut count = 0;
        for &(_, which) in matches[i..]
            .iter()
            .take_while(|(at, _)| *at < start + reach)
        {
            seen[which] = true;
            count += 1;
        }
        let distinct = seen.iter().filter(|s| **s).count();
        if (distinct, count) > (best.0, best.1) {
            best = (distinct, count, start);
        }
    }
    let begin = if best.0 == 0 {
        0
    } else {
        word_start_before(text, best.2, max_chars / 5)
    };
    cut(text, begin, max_chars)
}

/// A word boundary about `lead` characters before `at`, so the match is not the first word.
fn word_start_before(text: &str, at: usize, lead: usize) -> usize {
    let mut begin = at;
    for (index, _) in text[..at].char_indices().rev().take(lead) {
        begin = index;
    }
    if begin == 0 {
        return 0;
    }
    match text[begin..at]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
    {
        Some((space, c)) => begin + space + c.len_utf8(),
        None => begin,
    }
}

fn cut(text: &str, begin: usize, max_chars: usize) -> String {
    let rest = &text[begin..];
    let mut out = String::with_capacity(max_chars + 8);
    if begin > 0 {
        out.push('…');
    }
    let mut chars = 0;
    let mut last_space = None;
    let mut truncated = false;
    let mut pending_space = false;
    for c in rest.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty() && !out.ends_with('…');
            continue;
        }
        if chars >= max_chars {
            truncated = true;
            break;
        }
        if pending_space {
            last_space = Some(out.len());
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push(c);
        chars += 1;
    }
    if truncated {
        if let Some(space) = last_space {
            out.truncate(space);
        }
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::query_terms;

    #[test]
    fn the_window_with_most_terms_wins_and_is_cut_at_words() {
        let filler = "Lorem ipsum dolor sit amet. ".repeat(40);
        let text = format!(
            "Skipass gibt es hier. {filler}Der Skipass und die Halbpension sind inklusive. {filler}"
        );
        let out = excerpt(&text, &query_terms("skipass halbpension"), 120);
        assert!(out.starts_with('…'), "{out}");
        assert!(out.contains("Skipass und die Halbpension"), "{out}");
        assert!(out.ends_with('…'));
        assert!(out.chars().count() <= 122, "{}", out.chars().count());
    }

    #[test]
    fn without_a_match_the_beginning_is_shown() {
        let out = excerpt(
            "Erste Zeile\n\nZweite   Zeile",
            &query_terms("nichtda"),
            600,
        );
        assert_eq!(out, "Erste Zeile Zweite Zeile");
    }

    proptest::proptest! {
        #[test]
        fn excerpts_never_panic_and_stay_short(text in "\\PC{0,400}", query in "\\PC{0,20}") {
            let out = excerpt(&text, &query_terms(&query), 50);
            proptest::prop_assert!(out.chars().count() <= 52);
        }
    }
}
