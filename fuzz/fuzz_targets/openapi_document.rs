//! libFuzzer's entry to `concierge_fuzz::targets::openapi_document` (what it feeds and checks is
//! documented there); the test command's smoke runs the same body on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| concierge_fuzz::targets::openapi_document::run(data));
