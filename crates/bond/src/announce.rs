//! Telling the network where the bond is after a failover: gratuitous ARP
//! for IPv4 (built with `lagkit-wire`) and unsolicited Neighbor
//! Advertisements for IPv6 (RFC 4861 7.2.6, built with `etherparse`, which
//! computes the ICMPv6 checksum), so switches move the bond's MAC to the new
//! port and neighbours refresh their caches at once.

use etherparse::icmpv6::NeighborAdvertisementHeader;
use etherparse::{Icmpv6Type, PacketBuilder};
use lagkit_wire::{ArpRepr, MacAddr};
use std::net::{Ipv4Addr, Ipv6Addr};

/// A gratuitous ARP request for `ip` at `mac`.
pub fn gratuitous_arp(mac: MacAddr, ip: Ipv4Addr) -> Vec<u8> {
    ArpRepr::gratuitous(mac, ip).emit_frame(mac, MacAddr::BROADCAST)
}

/// An unsolicited Neighbor Advertisement (override set) for `addr` at
/// `mac`, to all nodes (ff02::1).
pub fn unsolicited_na(mac: MacAddr, addr: Ipv6Addr) -> Vec<u8> {
    let all_nodes = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
    let builder = PacketBuilder::ethernet2(mac.0, [0x33, 0x33, 0, 0, 0, 1])
        .ipv6(addr.octets(), all_nodes.octets(), 255)
        .icmpv6(Icmpv6Type::NeighborAdvertisement(
            NeighborAdvertisementHeader {
                router: false,
                solicited: false,
                r#override: true,
            },
        ));
    // Body: target address, then the Target Link-Layer Address option
    // (type 2, length 1 = 8 octets).
    let mut body = Vec::with_capacity(24);
    body.extend_from_slice(&addr.octets());
    body.extend_from_slice(&[2, 1]);
    body.extend_from_slice(&mac.0);
    let mut out = Vec::with_capacity(builder.size(body.len()));
    // Writing into a Vec cannot fail; a builder error would be a bug in the
    // fixed layout above and leaves an empty (never sent) frame.
    if builder.write(&mut out, &body).is_err() {
        out.clear();
    }
    out
}

/// The IPv6 addresses of interface `name`, from `/proc/net/if_inet6` (of
/// this process's network namespace).
pub fn ipv6_addresses(name: &str) -> Vec<Ipv6Addr> {
    let Ok(text) = std::fs::read_to_string("/proc/net/if_inet6") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 6 || f[5] != name || f[0].len() != 32 {
                return None;
            }
            let v = u128::from_str_radix(f[0], 16).ok()?;
            Some(Ipv6Addr::from(v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    #[test]
    fn na_parses_back_with_a_valid_checksum() {
        let mac = MacAddr([2, 0, 0, 0, 0, 9]);
        let addr: Ipv6Addr = "fe80::9".parse().unwrap();
        let f = unsolicited_na(mac, addr);
        let p = SlicedPacket::from_ethernet(&f).unwrap();
        let Some(NetSlice::Ipv6(ip)) = &p.net else {
            panic!("IPv6")
        };
        assert_eq!(ip.header().hop_limit(), 255);
        let Some(TransportSlice::Icmpv6(icmp)) = &p.transport else {
            panic!("ICMPv6")
        };
        assert!(matches!(
            icmp.icmp_type(),
            Icmpv6Type::NeighborAdvertisement(h) if h.r#override && !h.solicited
        ));
        let payload = icmp.payload();
        assert_eq!(&payload[..16], &addr.octets());
        assert_eq!(&payload[16..], &[2, 1, 2, 0, 0, 0, 0, 9]);
        let sum = icmp
            .header()
            .icmp_type
            .calc_checksum(ip.header().source(), ip.header().destination(), payload)
            .unwrap();
        assert_eq!(sum, icmp.checksum());
    }

    #[test]
    fn garp_announces_the_address() {
        let f = gratuitous_arp(MacAddr([2, 0, 0, 0, 0, 9]), Ipv4Addr::new(10, 0, 0, 1));
        let a = ArpRepr::parse_frame(&f).unwrap();
        assert_eq!(a.sender_ip, a.target_ip);
    }
}
