//! Captures written by the real capture tools (tcpdump 4.99 with libpcap
//! 1.10, dumpcap 4.0), as users take them: a snap length of 96, `-i any`
//! (Linux cooked SLL and SLL2), 802.1Q and QinQ tags, nanosecond
//! timestamps, a pcapng of two interfaces of two link types. Made by
//! `scripts/make-capture-fixtures.sh` (two network namespaces and a veth
//! pair; the script says what traffic). The figures each test expects are
//! tshark's reading of the same file (`tshark -r FILE -T fields -e
//! frame.interface_id -e frame.len`), a cooked header's length replaced
//! by an Ethernet header's.

use lagkit_hash::ip_proto;
use lagkit_planner::flow::{Dir, Flow};
use lagkit_planner::input::{read_flows, CaptureStats, Host};
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/captures")
        .join(name)
}

fn read(name: &str, host: Option<Host>) -> (Vec<Flow>, CaptureStats) {
    read_flows(&capture(name), host).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The UDP flows to ports 5001-5004 (the datagrams the script sent): each
/// as (VLAN, port, bytes, packets of 1000 bytes of payload).
fn udp_flows(flows: &[Flow]) -> Vec<(Option<u16>, u16, u64)> {
    let mut v: Vec<_> = flows
        .iter()
        .filter(|f| f.key.ip_proto() == Some(ip_proto::UDP))
        .filter_map(|f| {
            let (_, dport) = f.key.l4_ports()?;
            (5001..=5004)
                .contains(&dport)
                .then_some((f.key.vlan_id(), dport, f.bytes))
        })
        .collect();
    v.sort();
    v
}

fn total(flows: &[Flow]) -> u64 {
    flows.iter().map(|f| f.bytes).sum()
}

/// The 12 datagrams on the wire: untagged (1042 bytes), 802.1Q VLAN 100
/// (1046) and 802.1ad VLAN 200 around VLAN 100 (1050; the outer tag is
/// the key's), to each of four ports.
fn on_the_wire() -> Vec<(Option<u16>, u16, u64)> {
    let mut v = Vec::new();
    for (vlan, bytes) in [(None, 1042), (Some(100), 1046), (Some(200), 1050)] {
        for port in 5001..=5004 {
            v.push((vlan, port, bytes));
        }
    }
    v.sort();
    v
}

#[test]
fn tcpdump_snap_96_with_vlan_and_qinq_tags() {
    let (flows, st) = read("tcpdump-s96-vlan.pcap", None);
    assert_eq!((st.packets, st.damaged, st.skipped.clone()), (21, 0, None));
    assert_eq!(udp_flows(&flows), on_the_wire());
    // Every byte of the original lengths, none of the snap length's.
    assert_eq!(total(&flows), 15262);
    // Directions from the host's address.
    let (flows, st) = read("tcpdump-s96-vlan.pcap", Some("10.1.0.1".parse().unwrap()));
    let out: u64 = flows
        .iter()
        .filter(|f| f.dir == Dir::Out)
        .map(|f| f.bytes)
        .sum();
    assert_eq!(out, 4 * (1042 + 1046 + 1050));
    assert!(st.unrelated > 0, "ARP and neighbour discovery: {st:?}");
}

#[test]
fn tcpdump_nanosecond_timestamps() {
    let (flows, st) = read("tcpdump-nano.pcap", None);
    assert_eq!((st.packets, st.damaged), (24, 0));
    assert_eq!(udp_flows(&flows), on_the_wire());
    assert_eq!(total(&flows), 15512);
}

#[test]
fn tcpdump_any_linux_cooked_sll() {
    let (flows, st) = read("tcpdump-any-sll.pcap", None);
    assert_eq!((st.packets, st.not_ethernet, st.damaged), (24, 0, 0));
    assert_eq!(st.macs_unknown, 24);
    // tshark's frame lengths, each 2 bytes shorter (16-byte SLL header
    // for a 14-byte Ethernet one).
    assert_eq!(total(&flows), 15544 - 2 * 24);
    let udp = udp_flows(&flows);
    assert_eq!(udp.iter().filter(|f| f.2 == 1042).count(), 4, "{udp:?}");
    assert_eq!(udp.len(), 12, "{udp:?}");
    // The sender's MAC is the cooked header's address.
    let f = flows
        .iter()
        .find(|f| f.key.l4_ports() == Some((40000, 5001)) || f.key.src_ip().is_some())
        .unwrap();
    assert_ne!(f.key.src_mac, [0; 6]);
}

#[test]
fn tcpdump_any_linux_cooked_sll2() {
    let (flows, st) = read("tcpdump-any-sll2.pcap", None);
    assert_eq!((st.packets, st.not_ethernet, st.damaged), (23, 0, 0));
    assert_eq!(st.macs_unknown, 23);
    assert_eq!(total(&flows), 15512 - 6 * 23);
    // `-i any` shows the 12 datagrams without their tags (1028 bytes of
    // IP, as tshark shows them too): to each port, the kernel's from its
    // own source port and the two tagged ones from port 40000, now one
    // flow.
    let udp = udp_flows(&flows);
    let want: Vec<_> = (5001..=5004)
        .flat_map(|p| [(None, p, 1042), (None, p, 2 * 1042)])
        .collect();
    assert_eq!(udp, want);
}

#[test]
fn dumpcap_pcapng_of_two_interfaces_and_link_types() {
    let (flows, st) = read("dumpcap-two-interfaces.pcapng", None);
    assert_eq!((st.packets, st.not_ethernet, st.damaged), (50, 0, 0));
    // Interface 1 is `any` (SLL): its 24 packets are cooked.
    assert_eq!(st.macs_unknown, 24);
    assert_eq!(total(&flows), 15672 + 15544 - 2 * 24);
}
