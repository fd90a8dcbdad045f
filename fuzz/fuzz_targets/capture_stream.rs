//! Any bytes as what a daemon streams to `lagkit capture` (a start line,
//! then frames and drop counts), written as pcapng and read back: every
//! accepted frame is one packet, cut to the snapshot length; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_bond::pcapng::fuzz_one(data);
});
