//! Any bytes through lagkit's bounded readers (`lagkit_input`: whole
//! inputs as bytes and as text, and lines), under a limit of 0 to 255
//! bytes: nothing kept past the limit, nothing within it refused.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lagkit_input::fuzz_one(data);
});
