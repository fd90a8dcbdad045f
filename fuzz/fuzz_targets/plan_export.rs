//! Any bytes as a file of NetFlow v9, IPFIX or sFlow v5 datagrams read by
//! `lagkit plan`: errors are counts, never panics, and the flow table
//! keeps its cap.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_planner::export::fuzz_one(data);
});
