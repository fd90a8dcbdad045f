//! AIX EtherChannel `hash_mode` (modes `standard` and `8023ad`).
//!
//! AIX does not hash at all: it takes one header field and reduces it modulo
//! the number of adapters, in `adapter_names` order. That is why its modes are
//! so easy to defeat (seed 002: paired connections with sequential ports put
//! every data connection on one adapter whatever the mode), and why lagkit
//! models them exactly rather than "improving" them. The field choices and
//! fallbacks are IBM's documented ones; the integer rounding of
//! `src_dst_port` (truncating division) and the use of the last address byte
//! for IPv6 are lagkit's reading of that documentation.

use core::net::IpAddr;

use crate::key::FlowKey;

/// Which AIX hash mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Aix {
    Default,
    SrcPort,
    DstPort,
    SrcDstPort,
}

/// The field AIX used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    SrcPort(u16),
    DstPort(u16),
    HalfSum(u16, u16),
    DstIpByte(u8),
    DstMacByte(u8),
}

/// The value AIX reduces modulo the adapter count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AixHash {
    pub value: u32,
    pub input: Input,
    pub mode: Aix,
}

/// The last byte of an address (AIX's documented field for IP fallbacks).
pub(crate) fn last_byte(addr: IpAddr) -> u8 {
    match addr {
        IpAddr::V4(a) => a.octets()[3],
        IpAddr::V6(a) => a.octets()[15],
    }
}

pub(crate) fn hash(mode: Aix, key: &FlowKey) -> AixHash {
    let input = match (mode, key.ip) {
        (Aix::SrcPort, Some(ip)) if ip.is_tcp_udp() => Input::SrcPort(key.src_port()),
        (Aix::DstPort, Some(ip)) if ip.is_tcp_udp() => Input::DstPort(key.dst_port()),
        (Aix::SrcDstPort, Some(ip)) if ip.is_tcp_udp() => {
            Input::HalfSum(key.src_port(), key.dst_port())
        }
        (_, Some(ip)) => Input::DstIpByte(last_byte(ip.dst)),
        (_, None) => Input::DstMacByte(key.dst_mac[5]),
    };
    let value = match input {
        Input::SrcPort(p) | Input::DstPort(p) => u32::from(p),
        Input::HalfSum(s, d) => (u32::from(s) + u32::from(d)) / 2,
        Input::DstIpByte(b) | Input::DstMacByte(b) => u32::from(b),
    };
    AixHash { value, input, mode }
}

pub(crate) fn describe(h: &AixHash) -> String {
    match h.input {
        Input::SrcPort(p) => format!("source port {p}"),
        Input::DstPort(p) => format!("destination port {p}"),
        Input::HalfSum(s, d) => {
            format!("(source port {s} + destination port {d}) / 2 = {}", h.value)
        }
        Input::DstIpByte(b) if h.mode == Aix::Default => {
            format!("last byte of destination IP = {b}")
        }
        Input::DstIpByte(b) => format!("not TCP/UDP: last byte of destination IP = {b}"),
        Input::DstMacByte(b) => format!("not IP: last byte of destination MAC = {b:#04x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 32789, [10, 0, 0, 2].into(), 32792)
            .with_macs([0; 6], [0, 0, 0, 0, 0, 0x0b]);
        assert_eq!(hash(Aix::Default, &k).value, 2); // 10.0.0.2 -> 2
        assert_eq!(hash(Aix::SrcPort, &k).value, 32789);
        assert_eq!(hash(Aix::DstPort, &k).value, 32792);
        // (32789 + 32792) / 2 = 65581 / 2 = 32790 (no overflow: the sum is done in 32 bits)
        assert_eq!(hash(Aix::SrcDstPort, &k).value, 32790);
        let big = FlowKey::tcp4([10, 0, 0, 1].into(), 65535, [10, 0, 0, 2].into(), 65535);
        assert_eq!(hash(Aix::SrcDstPort, &big).value, 65535);
    }

    #[test]
    fn fallbacks() {
        let echo = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 7].into(), 9);
        assert_eq!(hash(Aix::SrcPort, &echo).input, Input::DstIpByte(7));
        let arp = FlowKey::l2([0; 6], [0, 0, 0, 0, 0, 0x2a], 0x0806);
        assert_eq!(hash(Aix::SrcDstPort, &arp).input, Input::DstMacByte(0x2a));
        assert_eq!(hash(Aix::Default, &arp).value, 0x2a);
        // Fragments have no ports, so they use the destination IP.
        let frag = FlowKey::tcp4([10, 0, 0, 1].into(), 1, [10, 0, 0, 3].into(), 2).as_fragment();
        assert_eq!(hash(Aix::DstPort, &frag).input, Input::DstIpByte(3));
    }
}
