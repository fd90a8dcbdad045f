//! LACPDUs captured from a real peer (Open vSwitch 3.1, userspace datapath;
//! see `tests/vectors/README.md` and `scripts/capture-ovs-lacpdus.sh`) as
//! byte vectors both ways: each parses to exactly the values tshark decoded
//! from the same bytes, and lagkit re-emits the identical 124 octets.

use lagkit_wire::{MacAddr, SlowPdu};
use std::path::Path;

fn read_vector(name: &str) -> (Vec<u8>, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let hex = std::fs::read_to_string(dir.join(format!("{name}.hex"))).expect("vector file");
    let bytes: Vec<u8> = hex
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| {
            let l = l.trim();
            (0..l.len() / 2)
                .map(move |i| u8::from_str_radix(&l[2 * i..2 * i + 2], 16).expect("hex"))
        })
        .collect();
    let tshark =
        std::fs::read_to_string(dir.join(format!("{name}.tshark.txt"))).expect("tshark text");
    (bytes, tshark)
}

/// The value after `label: ` in tshark's text, up to a space or comma; for
/// addresses tshark prints as `Name_xx:xx:xx (raw)`, the raw form.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&format!("{label}:")))
        .unwrap_or_else(|| panic!("no '{label}' in tshark output"));
    let v = line[label.len() + 1..].trim();
    if let (Some(a), Some(b)) = (v.find('('), v.find(')')) {
        if a < b && v[a + 1..b].len() == 17 {
            return &v[a + 1..b];
        }
    }
    v.split([' ', ',']).next().unwrap_or("")
}

const VECTORS: [&str; 7] = [
    "ovs-active-fast-initial",
    "ovs-active-fast-nopartner-defaulted",
    "ovs-active-fast-synced",
    "ovs-active-slow-synced",
    "ovs-passive-synced",
    "ovs-active-fast-partner-expired",
    "ovs-active-fast-partner-defaulted",
];

#[test]
fn ovs_lacpdus_parse_to_what_tshark_decoded_and_reemit_identically() {
    for name in VECTORS {
        let (bytes, t) = read_vector(name);
        assert_eq!(bytes.len(), 124, "{name}");
        let SlowPdu::Lacp(p) = SlowPdu::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
        else {
            panic!("{name}: not a LACPDU");
        };
        let hex = |v: u8| format!("0x{v:02x}");
        assert_eq!(p.version, 1, "{name}");
        assert_eq!(
            field(&t, "Actor System Priority"),
            p.actor.system.priority.to_string(),
            "{name}"
        );
        assert_eq!(
            field(&t, "Actor System ID"),
            p.actor.system.mac.to_string(),
            "{name}"
        );
        assert_eq!(field(&t, "Actor Key"), p.actor.key.to_string(), "{name}");
        assert_eq!(
            field(&t, "Actor Port Priority"),
            p.actor.port_priority.to_string(),
            "{name}"
        );
        assert_eq!(field(&t, "Actor Port"), p.actor.port.to_string(), "{name}");
        assert_eq!(field(&t, "Actor State"), hex(p.actor.state.0), "{name}");
        assert_eq!(
            field(&t, "Partner System Priority"),
            p.partner.system.priority.to_string(),
            "{name}"
        );
        assert_eq!(
            field(&t, "Partner System"),
            p.partner.system.mac.to_string(),
            "{name}"
        );
        assert_eq!(
            field(&t, "Partner Key"),
            p.partner.key.to_string(),
            "{name}"
        );
        assert_eq!(
            field(&t, "Partner Port"),
            p.partner.port.to_string(),
            "{name}"
        );
        assert_eq!(field(&t, "Partner State"), hex(p.partner.state.0), "{name}");
        assert_eq!(
            field(&t, "Collector Max Delay"),
            p.collector_max_delay.to_string(),
            "{name}"
        );
        // And back: the same PDU emitted by lagkit is byte-identical.
        let src = MacAddr::from_slice(&bytes[6..12]).unwrap();
        assert_eq!(
            SlowPdu::Lacp(p).emit_frame(src),
            bytes,
            "{name}: re-emitted bytes differ"
        );
    }
}

#[test]
fn ovs_states_are_the_documented_ones() {
    let state = |name: &str| match SlowPdu::parse(&read_vector(name).0) {
        Ok(SlowPdu::Lacp(p)) => (p.actor.state.0, p.partner.state.0),
        _ => panic!("{name}"),
    };
    assert_eq!(state("ovs-active-fast-synced"), (0x3f, 0x3f));
    assert_eq!(state("ovs-active-slow-synced"), (0x3d, 0x3d));
    assert_eq!(state("ovs-passive-synced"), (0x3e, 0x3f));
    assert_eq!(state("ovs-active-fast-initial").0, 0xbf);
    assert_eq!(state("ovs-active-fast-partner-defaulted").0, 0x47);
}
