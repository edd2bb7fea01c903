//! A small, blind mutator in libFuzzer's manner: erase, insert, flip, splice, and drop in the
//! tokens our parsers split on. Without coverage it finds less than libFuzzer per input, but it
//! reaches every check of a target from its seeds in a debug build the test command has anyway.

use fastrand::Rng;

/// No parser here needs more to go wrong; libFuzzer's default limit is 4 KiB.
pub const MAX_LEN: usize = 64 * 1024;

/// What JSON, forms, queries, TOML, templates and HTML are made of, and values that overflow,
/// escape or change direction.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"-0",
    b"1e999",
    b"9999e9",
    b"0.5",
    b"18446744073709551616",
    b"\"\":",
    b"%",
    b"%00",
    b"%ff",
    b"%zz",
    b"&",
    b"=",
    b"+",
    b"<script>",
    b"</",
    b"<",
    b">",
    b"'",
    b"\n",
    b"\r\n",
    b"\0",
    b"${",
    b":-",
    b"{{",
    b"}}",
    b"*",
    b"..",
    b"/",
    b"#",
    b"https://",
    b"\xc3\xbc",
    b"\xe6\x97\xa5\xe6\x9c\xac",
    b"\xe2\x80\xae",
    b"\xff\xfe",
];

/// One to four stacked edits of `input`; `others` lends material to splice in.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>]) {
    for _ in 0..rng.usize(1..=4) {
        let at = rng.usize(0..=input.len());
        match rng.u8(0..8) {
            0 if at < input.len() => {
                let end = (at + rng.usize(1..=16)).min(input.len());
                input.drain(at..end);
            }
            1 => {
                let bytes: Vec<u8> = (0..rng.usize(1..=8)).map(|_| rng.u8(..)).collect();
                input.splice(at..at, bytes);
            }
            2 if at < input.len() => input[at] ^= 1 << rng.u8(0..8),
            3 if at < input.len() => input[at] = rng.u8(..),
            4 => {
                let token = TOKENS[rng.usize(0..TOKENS.len())];
                input.splice(at..at, token.iter().copied());
            }
            5 if at < input.len() => {
                let end = (at + rng.usize(1..=8)).min(input.len());
                let token = TOKENS[rng.usize(0..TOKENS.len())];
                input.splice(at..end, token.iter().copied());
            }
            6 if !input.is_empty() => {
                let from = rng.usize(0..input.len());
                let end = (from + rng.usize(1..=32)).min(input.len());
                let copy = input[from..end].to_vec();
                input.splice(at..at, copy);
            }
            7 if !others.is_empty() => {
                let other = &others[rng.usize(0..others.len())];
                let from = rng.usize(0..=other.len());
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            _ => {}
        }
    }
    input.truncate(MAX_LEN);
}
