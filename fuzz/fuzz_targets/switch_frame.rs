//! Any bytes as frames through lagkit's switch core (an access port, a
//! trunk, a two-member channel) or as its IOS configuration: never a frame
//! back out the way it came, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_switch::fuzz_one(data);
});
