//! Any bytes as a Catalyst's show output for `lagkit check` (prompts,
//! commands, tables, pager remnants), read and held against a running
//! bond: errors are values, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_check::fuzz_show(data);
});
