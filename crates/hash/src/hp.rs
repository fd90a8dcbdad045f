//! HP Auto Port Aggregation load-balancing algorithms.
//!
//! APA takes one byte of the header and uses it to index a 256-entry table of
//! ports. HP documents which fields feed the byte but not how two of them are
//! combined nor how the table is filled, so lagkit fixes both and says so:
//!
//! - `LB_MAC` (HP's default): index = last byte of the destination MAC.
//! - `LB_IP`: index = last byte of the source IP XOR last byte of the
//!   destination IP; non-IP traffic uses `LB_MAC`.
//! - `LB_PORT`: index = low byte of (source port XOR destination port) for TCP
//!   and UDP; everything else uses `LB_MAC` (HP's documented fallback).
//! - The table is filled round-robin, entry `i` = port `i mod n`, so the
//!   link is `index mod n`.

use crate::aix::last_byte;
use crate::key::FlowKey;

/// Which APA algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hp {
    Mac,
    Ip,
    Port,
}

/// The fields used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    DstMac(u8),
    Ip(u8, u8),
    Ports(u16, u16),
}

/// The table index and how it was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HpHash {
    pub index: u8,
    pub input: Input,
    pub fallback: bool,
}

pub(crate) fn hash(alg: Hp, key: &FlowKey) -> HpHash {
    let ip = key.ip;
    let input = match alg {
        Hp::Ip => ip.map(|ip| Input::Ip(last_byte(ip.src), last_byte(ip.dst))),
        Hp::Port => ip
            .filter(|ip| ip.is_tcp_udp())
            .and_then(|ip| ip.ports())
            .map(|(s, d)| Input::Ports(s, d)),
        Hp::Mac => None,
    };
    let fallback = input.is_none() && alg != Hp::Mac;
    let input = input.unwrap_or(Input::DstMac(key.dst_mac[5]));
    let index = match input {
        Input::DstMac(b) => b,
        Input::Ip(s, d) => s ^ d,
        Input::Ports(s, d) => ((s ^ d) & 0xff) as u8,
    };
    HpHash {
        index,
        input,
        fallback,
    }
}

pub(crate) fn describe(h: &HpHash) -> String {
    let f = match h.input {
        Input::DstMac(b) => format!("destination mac[5] {b:#04x}"),
        Input::Ip(s, d) => format!("source ip last byte {s} ^ destination ip last byte {d}"),
        Input::Ports(s, d) => format!("low byte of (source port {s} ^ destination port {d})"),
    };
    format!(
        "{}{f} = table index {}",
        if h.fallback {
            "fallback to LB_MAC: "
        } else {
            ""
        },
        h.index
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples() {
        let k = FlowKey::tcp4([10, 0, 0, 5].into(), 0x1234, [10, 0, 0, 9].into(), 0x0050)
            .with_macs([0; 6], [0, 0, 0, 0, 0, 0xa7]);
        assert_eq!(hash(Hp::Mac, &k).index, 0xa7);
        assert_eq!(hash(Hp::Ip, &k).index, 5 ^ 9); // 0b0101 ^ 0b1001 = 12
                                                   // 0x1234 ^ 0x0050 = 0x1264 -> low byte 0x64
        assert_eq!(hash(Hp::Port, &k).index, 0x64);
        let echo = FlowKey::echo([10, 0, 0, 5].into(), [10, 0, 0, 9].into(), 1)
            .with_macs([0; 6], [0, 0, 0, 0, 0, 0x03]);
        let h = hash(Hp::Port, &echo);
        assert!(h.fallback);
        assert_eq!(h.index, 3);
    }
}
