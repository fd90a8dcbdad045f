//! Byte-driven event sequences against two PAgP systems (or one facing a
//! silent device): `lagkit_sim::pagp::check_invariants` must hold after
//! every event.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lagkit_sim::fuzz::run_pagp_ops(data) {
        panic!("{e}");
    }
});
