//! Any bytes as a frame through FlowKey parsing, every hash policy, the
//! bucket map and the adaptive balancer (`lagkit_hash::fuzz_one`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_hash::fuzz_one(data);
});
