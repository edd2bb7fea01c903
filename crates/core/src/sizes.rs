//! How a config writes a number of bytes: `65536`, `"64KiB"`, `"1 MiB"` — one reading for
//! every kind's settings (`deserialize_with = "concierge_core::sizes::size"`).

use serde::{Deserialize, Deserializer};

/// A size from 1 KiB to 64 MiB.
pub fn size<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Bytes(u64),
        Text(String),
    }
    let bytes = match Written::deserialize(deserializer)? {
        Written::Bytes(bytes) => Some(bytes),
        Written::Text(text) => parse_size(&text),
    };
    match bytes {
        Some(bytes) if (1024..=64 * 1024 * 1024).contains(&bytes) => Ok(bytes as usize),
        _ => Err(serde::de::Error::custom(
            "must be a size from 1KiB to 64MiB: a number of bytes, or \"64KiB\", \"1MiB\"",
        )),
    }
}

/// [`size`], for an optional key.
pub fn optional_size<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<usize>, D::Error> {
    size(deserializer).map(Some)
}

/// `"64KiB"`, `"1 MiB"`, `"512B"`, `"2KB"` (a kilobyte here is 1024 bytes, as people mean it).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => return None,
    };
    number.checked_mul(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("1 MiB"), Some(1 << 20));
        assert_eq!(parse_size("2048"), Some(2048));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("1GiB"), None);
    }
}
