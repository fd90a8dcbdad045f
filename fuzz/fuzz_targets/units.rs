//! Any text as a rate or a duration: errors are values, never panics; a
//! rate that parses prints back (as tc reads it) to the same bit/s.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(bits) = lagkit_units::parse_rate(s) {
        assert_eq!(
            lagkit_units::parse_rate(&lagkit_units::format_rate(bits)),
            Ok(bits)
        );
    }
    let _ = lagkit_units::parse_duration(s);
});
