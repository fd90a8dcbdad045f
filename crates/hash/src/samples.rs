//! Frames built byte by byte for tests: the hash crate's own parser tests
//! and the BPF data path's parity test (`lagkit-bpf`) use the same ones, so
//! the in-kernel parser is held to exactly the frames the Rust parser is.
//!
//! Assembled by hand rather than with etherparse's builder, so the parser is
//! checked against an independent encoding.

use std::net::Ipv6Addr;

/// A unicast MAC address used as a source.
pub const MAC_A: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0a];
/// A unicast MAC address used as a destination.
pub const MAC_B: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0b];

/// An Ethernet II frame.
pub fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A VLAN tag (TCI, inner EtherType) followed by `payload`.
pub fn tag(tci: u16, inner: u16, payload: &[u8]) -> Vec<u8> {
    let mut t = tci.to_be_bytes().to_vec();
    t.extend_from_slice(&inner.to_be_bytes());
    t.extend_from_slice(payload);
    t
}

/// IPv4 with the given fragment field (flags and offset); checksum left 0.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, frag: u16, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()) as u16;
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&[0x12, 0x34]);
    p.extend_from_slice(&frag.to_be_bytes());
    p.extend_from_slice(&[64, proto, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(payload);
    p
}

/// IPv6 with the given next header.
pub fn ipv6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    p.extend_from_slice(&[next, 64]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(payload);
    p
}

/// A TCP header with the given ports.
pub fn tcp(sp: u16, dp: u16) -> Vec<u8> {
    let mut t = sp.to_be_bytes().to_vec();
    t.extend_from_slice(&dp.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    t
}

/// A UDP header (length set, checksum 0) and payload.
pub fn udp(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = sp.to_be_bytes().to_vec();
    u.extend_from_slice(&dp.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

/// An ICMP or ICMPv6 message: type, code, the 4 bytes after the checksum, payload.
pub fn icmp(ty: u8, code: u8, rest: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut i = vec![ty, code, 0, 0];
    i.extend_from_slice(&rest);
    i.extend_from_slice(payload);
    i
}

/// An IPv4 source address.
pub const A4: [u8; 4] = [10, 0, 0, 1];
/// An IPv4 destination address.
pub const B4: [u8; 4] = [10, 0, 0, 2];

/// TCP over IPv4, 10.0.0.1:40000 -> 10.0.0.2:443, don't-fragment set.
pub fn tcp4_frame() -> Vec<u8> {
    eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, 6, 0x4000, &tcp(40000, 443)),
    )
}

/// A VXLAN header (VNI 4096) followed by an Ethernet frame.
pub fn vxlan(inner_frame: &[u8]) -> Vec<u8> {
    let mut v = vec![0x08, 0, 0, 0, 0, 0x10, 0x00, 0]; // VNI 4096
    v.extend_from_slice(inner_frame);
    v
}

/// One frame of each shape the parser knows: TCP/IPv4, QinQ-tagged UDP,
/// IPv6 with a hop-by-hop header, an IPv4 fragment, ICMP echo, ICMP and
/// ICMPv6 errors quoting a flow, GRE (TEB, with checksum and key), VXLAN
/// and IP-in-IP carrying ESP.
pub fn sample_frames() -> Vec<Vec<u8>> {
    let (a, b): (Ipv6Addr, Ipv6Addr) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    let inner = eth(
        MAC_A,
        MAC_B,
        0x0800,
        &ipv4([9, 9, 9, 9], [8, 8, 8, 8], 6, 0, &tcp(1, 2)),
    );
    let mut gre = vec![0xb0, 0x00, 0x65, 0x58, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2];
    gre.extend_from_slice(&inner);
    let quote = ipv4(A4, B4, 6, 0, &tcp(40000, 443));
    vec![
        tcp4_frame(),
        eth(
            MAC_B,
            MAC_A,
            0x88a8,
            &tag(
                1,
                0x8100,
                &tag(2, 0x0800, &ipv4(A4, B4, 17, 0, &udp(1, 2, b"abc"))),
            ),
        ),
        eth(
            MAC_B,
            MAC_A,
            0x86dd,
            &ipv6(a, b, 0, &[6, 0, 1, 4, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0]),
        ),
        eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 6, 0x2000, &tcp(5, 6))),
        eth(
            MAC_B,
            MAC_A,
            0x0800,
            &ipv4(A4, B4, 1, 0, &icmp(8, 0, [0, 1, 0, 1], &[])),
        ),
        eth(
            MAC_B,
            MAC_A,
            0x0800,
            &ipv4(A4, B4, 1, 0, &icmp(3, 1, [0; 4], &quote)),
        ),
        eth(
            MAC_B,
            MAC_A,
            0x86dd,
            &ipv6(
                a,
                b,
                58,
                &icmp(1, 0, [0; 4], &ipv6(b, a, 17, &udp(1, 2, &[]))),
            ),
        ),
        eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &gre)),
        eth(
            MAC_B,
            MAC_A,
            0x0800,
            &ipv4(A4, B4, 17, 0, &udp(7, 4789, &vxlan(&inner))),
        ),
        eth(
            MAC_B,
            MAC_A,
            0x0800,
            &ipv4(
                A4,
                B4,
                4,
                0,
                &ipv4(B4, A4, 50, 0, &[0xde, 0xad, 0xbe, 0xef]),
            ),
        ),
    ]
}

/// A small deterministic generator: the fuzz loop needs no dependency.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next value.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
