//! Event sequences into two LACP systems; the invariants of
//! `lagkit_sim::check_invariants` must hold after every event.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lagkit_sim::fuzz::run_ops(data) {
        panic!("invariant violated: {e}");
    }
});
