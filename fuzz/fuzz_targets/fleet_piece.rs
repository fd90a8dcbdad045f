//! Any bytes as one file of a fleet (a CSV map, an LLDP table, or any
//! configuration `lagkit check` reads), paired and checked beside a known
//! host and switch: errors are values, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_check::fleet::fuzz_one(data);
});
