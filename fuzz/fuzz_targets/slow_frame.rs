//! Any bytes as a slow-protocols frame: never panics, and whatever parses
//! re-emits to a frame that parses to the same thing.
#![no_main]
use lagkit_wire::{MacAddr, SlowPdu};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = lagkit_wire::LacpduRepr::parse(data);
    let _ = lagkit_wire::MarkerRepr::parse(data);
    if let Ok(pdu) = SlowPdu::parse(data) {
        let again = SlowPdu::parse(&pdu.emit_frame(MacAddr::ZERO)).expect("re-emitted frame parses");
        match (pdu, again) {
            (SlowPdu::Lacp(a), SlowPdu::Lacp(b)) => {
                assert_eq!(a.actor, b.actor);
                assert_eq!(a.partner, b.partner);
                assert_eq!(a.collector_max_delay, b.collector_max_delay);
            }
            (a, b) => assert_eq!(a, b),
        }
    }
});
