//! PostgreSQL's binary NUMERIC written as its decimal text, straight from the wire, and a decimal
//! text written as one (a parameter of type `numeric`): four 16-bit header fields (digit count,
//! weight, sign, display scale), then base-10000 digits, the first of them worth 10000^weight.
//!
//! Why not sqlx's `BigDecimal`: it turns the digits into a big integer and back into decimal
//! text — a few thousand instructions a value, the largest cost of a page of rows with money
//! columns. The text is the same: every digit the display scale asks for, no more, no fewer.

use std::fmt::Write;

const NEGATIVE: u16 = 0x4000;
const NAN: u16 = 0xC000;
const INFINITY: u16 = 0xD000;
const NEGATIVE_INFINITY: u16 = 0xF000;

/// The decimal text of a binary NUMERIC (`-12.50`, `NaN`, `Infinity`); `None` when the bytes
/// are not one.
pub(super) fn decimal_text(bytes: &[u8]) -> Option<String> {
    let field = |at: usize| -> Option<u16> {
        let pair = bytes.get(at..at + 2)?;
        Some(u16::from_be_bytes([pair[0], pair[1]]))
    };
    let count = usize::from(field(0)?);
    let weight = i64::from(field(2)? as i16);
    let sign = field(4)?;
    let scale = usize::from(field(6)?);
    let digits: Vec<u16> = (0..count)
        .map(|i| field(8 + 2 * i))
        .collect::<Option<_>>()?;
    if digits.iter().any(|&d| d > 9999) {
        return None;
    }
    match sign {
        NAN => return Some("NaN".into()),
        INFINITY => return Some("Infinity".into()),
        NEGATIVE_INFINITY => return Some("-Infinity".into()),
        0 | NEGATIVE => {}
        _ => return None,
    }
    // The group `index` places after the first: worth 10000^(weight - index); 0 past the ends.
    let group = |index: i64| -> u16 {
        usize::try_from(index)
            .ok()
            .and_then(|i| digits.get(i).copied())
            .unwrap_or(0)
    };
    let mut text = String::with_capacity(8 + 4 * count + scale);
    if sign == NEGATIVE && digits.iter().any(|&d| d != 0) {
        text.push('-');
    }
    if weight < 0 {
        text.push('0');
    } else {
        // The first group without leading zeros, every later one with its four digits.
        let _ = write!(text, "{}", group(0));
        for index in 1..=weight {
            let _ = write!(text, "{:04}", group(index));
        }
    }
    if scale > 0 {
        text.push('.');
        let mut written = 0;
        let mut index = weight + 1;
        while written < scale {
            let four = group(index);
            for place in [1000, 100, 10, 1] {
                if written < scale {
                    text.push(char::from(b'0' + (four / place % 10) as u8));
                    written += 1;
                }
            }
            index += 1;
        }
    }
    Some(text)
}

/// The binary NUMERIC of a decimal text (`-12.50`, `1.5e3`, `NaN`, `Infinity`), its display
/// scale the text's own as PostgreSQL reads it (`12.50` keeps two places); `None` when the text
/// is not a decimal, or is past what a NUMERIC holds.
pub(super) fn binary(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let special = match unsigned.to_ascii_lowercase().as_str() {
        "nan" if unsigned.len() == text.len() => Some(NAN),
        "infinity" | "inf" if negative => Some(NEGATIVE_INFINITY),
        "infinity" | "inf" => Some(INFINITY),
        _ => None,
    };
    if let Some(sign) = special {
        return Some(header(0, 0, sign, 0));
    }
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    // PostgreSQL's bounds: 131072 digits before the point, 16383 after.
    if exponent.abs() > 140_000 || whole.len() + fraction.len() > 150_000 {
        return None;
    }
    let scale = u16::try_from((fraction.len() as i64 - exponent).max(0)).ok()?;
    // The digits without the point, and the power of ten of the first: `12.5` is 1·10^1.
    let digits: Vec<u8> = whole
        .bytes()
        .chain(fraction.bytes())
        .map(|b| b - b'0')
        .collect();
    let first = digits.iter().position(|&d| d != 0);
    let last = digits.iter().rposition(|&d| d != 0);
    let (Some(first), Some(last)) = (first, last) else {
        return Some(header(0, 0, 0, scale));
    };
    let top = whole.len() as i64 + exponent - 1 - first as i64;
    // Base-10000 groups: a digit worth 10^p sits in group ⌊p/4⌋, place p mod 4.
    let group_of = |power: i64| power.div_euclid(4);
    let weight = group_of(top);
    let bottom = group_of(top - (last - first) as i64);
    let mut groups = vec![0u16; usize::try_from(weight - bottom + 1).ok()?];
    for (offset, &digit) in digits[first..=last].iter().enumerate() {
        let power = top - offset as i64;
        let index = usize::try_from(weight - group_of(power)).ok()?;
        groups[index] += u16::from(digit) * 10u16.pow(power.rem_euclid(4) as u32);
    }
    let count = u16::try_from(groups.len()).ok()?;
    let sign = if negative { NEGATIVE } else { 0 };
    let mut bytes = header(count, i16::try_from(weight).ok()?, sign, scale);
    for group in groups {
        bytes.extend(group.to_be_bytes());
    }
    Some(bytes)
}

/// A NUMERIC's four header fields.
fn header(count: u16, weight: i16, sign: u16, scale: u16) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(8 + 2 * usize::from(count));
    for field in [count, weight as u16, sign, scale] {
        bytes.extend(field.to_be_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_as_postgresql_reads_them() {
        for (text, back) in [
            ("0", "0"),
            ("0.00", "0.00"),
            ("12.50", "12.50"),
            ("-0.001", "-0.001"),
            ("0.00000012", "0.00000012"),
            ("10000", "10000"),
            ("123456789.12345", "123456789.12345"),
            ("-700000003.0", "-700000003.0"),
            ("+5", "5"),
            ("99.99", "99.99"),
            (".5", "0.5"),
            ("7.", "7"),
            ("1.5e3", "1500"),
            ("1.25E-2", "0.0125"),
            ("-2e0", "-2"),
            ("00042.1000", "42.1000"),
            ("NaN", "NaN"),
            ("infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
        ] {
            let bytes = binary(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(decimal_text(&bytes).as_deref(), Some(back), "{text}");
        }
        // The groups sit on the decimal point: 12345.6789 is 1|2345.6789.
        assert_eq!(binary("12345.6789"), Some(wire(1, 0, 4, &[1, 2345, 6789])));
    }

    #[test]
    fn what_is_not_a_decimal_is_not_written() {
        for text in [
            "", "-", ".", "1.2.3", "12a", "1e", "e5", "1e999999", "0x10", "- 1", "-NaN",
        ] {
            assert_eq!(binary(text), None, "{text}");
        }
    }

    /// The wire form of a numeric: its header, then its digits.
    fn wire(weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for field in [digits.len() as u16, weight as u16, sign, scale] {
            bytes.extend(field.to_be_bytes());
        }
        for digit in digits {
            bytes.extend(digit.to_be_bytes());
        }
        bytes
    }

    #[test]
    fn numerics_read_as_postgresql_writes_them() {
        for (case, bytes, text) in [
            ("zero", wire(0, 0, 0, &[]), "0"),
            ("zero with a scale", wire(0, 0, 2, &[]), "0.00"),
            ("a price", wire(0, 0, 2, &[10, 5000]), "10.50"),
            ("a thousandth", wire(-1, NEGATIVE, 3, &[10]), "-0.001"),
            ("far below one", wire(-2, 0, 8, &[12]), "0.00000012"),
            ("ten thousand", wire(1, 0, 0, &[1]), "10000"),
            (
                "long",
                wire(2, 0, 5, &[1, 2345, 6789, 1234, 5000]),
                "123456789.12345",
            ),
            (
                "inner zero groups",
                wire(2, NEGATIVE, 1, &[7, 0, 3]),
                "-700000003.0",
            ),
            ("negative zero", wire(0, NEGATIVE, 1, &[]), "0.0"),
            ("not a number", wire(0, NAN, 0, &[]), "NaN"),
            ("infinity", wire(0, INFINITY, 0, &[]), "Infinity"),
            (
                "minus infinity",
                wire(0, NEGATIVE_INFINITY, 0, &[]),
                "-Infinity",
            ),
        ] {
            assert_eq!(decimal_text(&bytes).as_deref(), Some(text), "{case}");
        }
    }

    #[test]
    fn what_is_not_a_numeric_is_refused() {
        assert_eq!(decimal_text(&[0, 1]), None, "a short header");
        assert_eq!(
            decimal_text(&wire(0, 0, 0, &[1])[..9]),
            None,
            "a digit cut off"
        );
        assert_eq!(
            decimal_text(&wire(0, 0, 0, &[10_000])),
            None,
            "a digit past base 10000"
        );
        assert_eq!(
            decimal_text(&wire(0, 0x1234, 0, &[1])),
            None,
            "an unknown sign"
        );
    }
}
