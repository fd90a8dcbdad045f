//! Any bytes as a bond configuration file: parse errors are values, never
//! panics, and whatever parses survives `to_toml` and back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_bondcfg::fuzz_one(data);
});
