//! The link-layer headers captures carry, read as the Ethernet frame a
//! bond's link would carry.
//!
//! `tcpdump -i any` writes Linux "cooked" headers (SLL, 16 bytes; SLL2, 20
//! bytes, libpcap 1.10 and later) instead of Ethernet; a capture on a
//! tunnel or an IP interface has raw IP, and one on a BSD loopback a
//! 4-byte address family. Each is turned into an Ethernet header in front
//! of the same network-layer bytes (802.1Q tags libpcap put back stay
//! where they are), so one flow-key parser reads every capture, and the
//! packet's length becomes the length of that Ethernet frame. A cooked
//! header names only the sender's link-layer address: the destination MAC
//! is unknown (zeros), which callers count.

use pcap_file::DataLink;
use std::borrow::Cow;

/// Offsets of the headers' fields.
mod field {
    use std::ops::Range;
    /// Linux cooked SLL (LINKTYPE_LINUX_SLL, 113).
    pub mod sll {
        use super::Range;
        pub const HALEN: Range<usize> = 4..6;
        pub const ADDR: Range<usize> = 6..14;
        pub const PROTOCOL: Range<usize> = 14..16;
        pub const LEN: usize = 16;
    }
    /// Linux cooked SLL2 (LINKTYPE_LINUX_SLL2, 276).
    pub mod sll2 {
        use super::Range;
        pub const PROTOCOL: Range<usize> = 0..2;
        pub const HALEN: usize = 11;
        pub const ADDR: Range<usize> = 12..20;
        pub const LEN: usize = 20;
    }
    /// BSD loopback (LINKTYPE_NULL 0, host byte order; LINKTYPE_LOOP 108,
    /// network byte order): the address family.
    pub const NULL_LEN: usize = 4;
    /// An Ethernet header.
    pub const ETHERNET_LEN: usize = 14;
}

/// Why a packet could not be read as a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// A link type lagkit does not read (Wi-Fi, USB, ...).
    LinkType(DataLink),
    /// The packet is shorter than its link-layer header, or its network
    /// layer is not IP where the header names no protocol.
    Header,
}

/// A packet as an Ethernet frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The frame: the captured bytes, or an Ethernet header made from the
    /// capture's own followed by the captured network layer.
    pub bytes: Cow<'a, [u8]>,
    /// The original length of that frame on an Ethernet link.
    pub len: u32,
    /// The destination MAC (and for raw IP both MACs) is unknown: zeros.
    pub macs_unknown: bool,
}

/// Reads one captured packet of link type `link` whose original length was
/// `orig_len` as an Ethernet frame.
pub fn frame(link: DataLink, data: &[u8], orig_len: u32) -> Result<Frame<'_>, Unreadable> {
    let made = |src: [u8; 6], ethertype: [u8; 2], header: usize| {
        let rest = data.get(header..).ok_or(Unreadable::Header)?;
        let mut b = Vec::with_capacity(field::ETHERNET_LEN + rest.len());
        b.extend_from_slice(&[0; 6]);
        b.extend_from_slice(&src);
        b.extend_from_slice(&ethertype);
        b.extend_from_slice(rest);
        let network = orig_len
            .saturating_sub(header as u32)
            .max(rest.len() as u32);
        Ok(Frame {
            bytes: Cow::Owned(b),
            len: network.saturating_add(field::ETHERNET_LEN as u32),
            macs_unknown: true,
        })
    };
    match link {
        DataLink::ETHERNET => Ok(Frame {
            bytes: Cow::Borrowed(data),
            len: orig_len,
            macs_unknown: false,
        }),
        DataLink::LINUX_SLL => {
            use field::sll;
            let h = data.get(..sll::LEN).ok_or(Unreadable::Header)?;
            let halen = u16::from_be_bytes([h[sll::HALEN][0], h[sll::HALEN][1]]);
            made(
                mac_of(&h[sll::ADDR], usize::from(halen)),
                [h[sll::PROTOCOL][0], h[sll::PROTOCOL][1]],
                sll::LEN,
            )
        }
        DataLink::LINUX_SLL2 => {
            use field::sll2;
            let h = data.get(..sll2::LEN).ok_or(Unreadable::Header)?;
            made(
                mac_of(&h[sll2::ADDR], usize::from(h[sll2::HALEN])),
                [h[sll2::PROTOCOL][0], h[sll2::PROTOCOL][1]],
                sll2::LEN,
            )
        }
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => {
            made([0; 6], ip_ethertype(data.first())?, 0)
        }
        DataLink::NULL | DataLink::LOOP => {
            let h = data.get(..field::NULL_LEN).ok_or(Unreadable::Header)?;
            let family = [h[0], h[1], h[2], h[3]];
            // The writer's byte order: whichever reads as a small number.
            let af = u32::from_le_bytes(family).min(u32::from_be_bytes(family));
            let et = match af {
                2 => [0x08, 0x00],
                // AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD, macOS.
                10 | 24 | 28 | 30 => [0x86, 0xdd],
                _ => return Err(Unreadable::Header),
            };
            made([0; 6], et, field::NULL_LEN)
        }
        other => Err(Unreadable::LinkType(other)),
    }
}

/// The sender's MAC from a cooked header's address field, when it is one.
fn mac_of(addr: &[u8], halen: usize) -> [u8; 6] {
    let mut m = [0; 6];
    if halen == 6 {
        m.copy_from_slice(&addr[..6]);
    }
    m
}

/// The EtherType of a raw IP packet, from its version nibble.
fn ip_ethertype(first: Option<&u8>) -> Result<[u8; 2], Unreadable> {
    match first.map(|b| b >> 4) {
        Some(4) => Ok([0x08, 0x00]),
        Some(6) => Ok([0x86, 0xdd]),
        _ => Err(Unreadable::Header),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_hash::FlowKey;

    /// An IPv4 UDP packet 10.0.0.1:1000 -> 10.0.0.2:53, 8 bytes of payload.
    fn ipv4_udp() -> Vec<u8> {
        let mut v = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(1000, 53)
            .write(&mut v, &[0; 8])
            .unwrap();
        v
    }

    /// SLL as tcpdump -i any -y LINUX_SLL wrote it (an outgoing frame of
    /// 02:00:00:00:01:01): packet type 4, ARPHRD_ETHER, address length 6,
    /// the address padded to 8 bytes, protocol 0x0800.
    #[test]
    fn sll_is_16_bytes_and_names_the_sender() {
        let ip = ipv4_udp();
        let mut p = vec![
            0x00, 0x04, 0x00, 0x01, 0x00, 0x06, 0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
            0x08, 0x00,
        ];
        p.extend_from_slice(&ip);
        let f = frame(DataLink::LINUX_SLL, &p, p.len() as u32 + 100).unwrap();
        assert_eq!(f.len, (ip.len() + 100 + 14) as u32, "orig - 16 + 14");
        assert!(f.macs_unknown);
        let k = FlowKey::from_frame(&f.bytes);
        assert_eq!(k.src_mac, [2, 0, 0, 0, 1, 1]);
        assert_eq!(k.dst_mac, [0; 6]);
        assert_eq!(k.l4_ports(), Some((1000, 53)));
        // Cut inside the header: unreadable, never a panic.
        for n in 0..16 {
            assert_eq!(
                frame(DataLink::LINUX_SLL, &p[..n], 100),
                Err(Unreadable::Header)
            );
        }
    }

    /// SLL2 (libpcap 1.10's `-i any`): protocol first, reserved, interface
    /// index, ARPHRD type, packet type, address length, 8 address bytes.
    /// An 802.1Q tag put back by libpcap follows the header.
    #[test]
    fn sll2_is_20_bytes_and_keeps_a_vlan_tag() {
        let ip = ipv4_udp();
        let mut p = vec![
            0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x04, 0x06, 0x02, 0x00,
            0x00, 0x00, 0x01, 0x01, 0x00, 0x00, // header
            0x00, 0x64, 0x08, 0x00, // VLAN 100, then IPv4
        ];
        p.extend_from_slice(&ip);
        let f = frame(DataLink::LINUX_SLL2, &p, p.len() as u32).unwrap();
        assert_eq!(f.len, (4 + ip.len() + 14) as u32);
        let k = FlowKey::from_frame(&f.bytes);
        assert_eq!(k.vlan_id(), Some(100));
        assert_eq!(k.src_mac, [2, 0, 0, 0, 1, 1]);
        assert_eq!(k.l4_ports(), Some((1000, 53)));
        // An address that is not a MAC (halen 0, as on a tunnel): zeros.
        p[11] = 0;
        let k = FlowKey::from_frame(&frame(DataLink::LINUX_SLL2, &p, 0).unwrap().bytes);
        assert_eq!(k.src_mac, [0; 6]);
    }

    #[test]
    fn raw_ip_and_bsd_loopback() {
        let ip = ipv4_udp();
        let f = frame(DataLink::RAW, &ip, ip.len() as u32).unwrap();
        assert_eq!(f.len, ip.len() as u32 + 14);
        assert_eq!(FlowKey::from_frame(&f.bytes).l4_ports(), Some((1000, 53)));
        assert_eq!(frame(DataLink::RAW, &[0x50], 1), Err(Unreadable::Header));
        for family in [[2, 0, 0, 0], [0, 0, 0, 2]] {
            let mut p = family.to_vec();
            p.extend_from_slice(&ip);
            let f = frame(DataLink::LOOP, &p, p.len() as u32).unwrap();
            assert_eq!(FlowKey::from_frame(&f.bytes).l4_ports(), Some((1000, 53)));
        }
        assert_eq!(
            frame(DataLink::IEEE802_11, &ip, 1),
            Err(Unreadable::LinkType(DataLink::IEEE802_11))
        );
        let e = frame(DataLink::ETHERNET, &ip, 7).unwrap();
        assert_eq!((e.len, e.macs_unknown), (7, false));
    }
}
