/// Folds text for matching the way a guest types it: lower case, ё as е, single spaces.
pub fn fold(text: &str) -> String {
    let lowered = text.to_lowercase().replace('ё', "е");
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_case_yo_and_spaces() {
        assert_eq!(fold("  Раф   Ёлочный "), "раф елочный");
        assert_eq!(fold("КАПУЧИНО"), "капучино");
    }
}
