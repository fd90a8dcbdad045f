//! Any bytes as a PAgP frame or PDU: never panics, and whatever parses
//! re-emits to bytes that parse to the same thing.
#![no_main]
use lagkit_wire::{MacAddr, PagpRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(pdu) = PagpRepr::parse(data) {
        let mut buf = vec![0; pdu.buffer_len()];
        // Names are read lossily as UTF-8: replacement characters can grow a
        // name past a 16-bit TLV length, which emit refuses (never panics).
        if pdu.emit(&mut buf).is_err() {
            return;
        }
        let again = PagpRepr::parse(&buf).expect("re-emitted PDU parses");
        // Names are read lossily as UTF-8, so compare after one round.
        let mut buf2 = vec![0; again.buffer_len()];
        again.emit(&mut buf2).expect("emits");
        assert_eq!(PagpRepr::parse(&buf2).as_ref(), Ok(&again));
    }
    if let Ok(pdu) = PagpRepr::parse_frame(data) {
        // As above, a lossily read name may no longer fit 1500 octets.
        let Ok(f) = pdu.emit_frame(MacAddr::ZERO) else {
            return;
        };
        let again = PagpRepr::parse_frame(&f).expect("re-emitted frame parses");
        assert_eq!(again.buffer_len(), pdu.buffer_len());
    }
});
