//! Any bytes as a virtio-net header plus frame: parsing and software
//! checksum completion never panic.
#![no_main]
use lagkit_dataplane::vnet::{complete_checksum_in_place, VnetHeader, VnetRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = VnetHeader::new_checked(data) {
        let _ = VnetRepr::parse(&h);
    }
    let mut buf = data.to_vec();
    let _ = complete_checksum_in_place(&mut buf);
});
