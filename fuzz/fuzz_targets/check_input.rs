//! Any bytes as a `lagkit check` input (every dialect: Cisco IOS, Open
//! vSwitch, /proc/net/bonding, lagkit TOML, netplan YAML, systemd files, ...):
//! errors are values, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_check::fuzz_one(data);
});
