//! Any bytes as a `lagkit check` input (Cisco IOS, /proc/net/bonding, lagkit
//! TOML): errors are values, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_check::fuzz_one(data);
});
