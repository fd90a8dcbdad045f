//! Any bytes as an Ethernet frame: never panics; a parsed header re-emits
//! byte for byte.
#![no_main]
use lagkit_wire::{EthernetFrame, EthernetRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = EthernetFrame::new_checked(data) {
        let r = EthernetRepr::parse(&f);
        let _ = f.payload();
        let _ = lagkit_wire::ArpRepr::parse_frame(data);
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut out).expect("buffer sized by buffer_len");
        assert_eq!(&out[..], &data[..r.buffer_len()]);
    }
});
