//! Any bytes as a `lagkit plan` traffic file (CSV, JSON, pcap, pcapng):
//! errors are values, never panics, and predictions stay consistent.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_planner::fuzz_one(data);
});
