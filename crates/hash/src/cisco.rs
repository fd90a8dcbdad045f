//! Cisco Catalyst `port-channel load-balance` methods.
//!
//! Catalyst switches reduce the selected fields to 3 bits: 8 "result bundle
//! hash" buckets spread over the active links. With a link count that does not
//! divide 8 the split is uneven by construction (3 links: 3:3:2 buckets, 5
//! links: 2:2:2:1:1, 6: 2:2:1:1:1:1, 7: 2:1:1:1:1:1:1), and with more than 8
//! links the extra ones carry nothing. The src-dst forms XOR the two fields.
//!
//! lagkit's model: the field value is the last byte of a MAC or IP address or
//! the whole 16-bit port; the bucket is `value & 7`; bucket `b` goes to link
//! `b mod n`, so buckets 0,3,6 / 1,4,7 / 2,5 make the 3-link split (the masks
//! 0x49/0x92/0x24 that `show etherchannel` prints). Real hardware mixes more
//! bits into the 3; what matters for planning, the 8-bucket granularity and
//! which field drives it, is kept. Fallbacks: a port method on traffic without
//! TCP/UDP ports uses the IP form of the same direction, an IP method on
//! non-IP traffic uses the MAC form; `src-dst-mixed-ip-port` falls back to
//! `src-dst-ip`, then `src-dst-mac`.

use crate::aix::last_byte;
use crate::key::FlowKey;

/// Number of result-bundle-hash buckets.
pub const CISCO_BUCKETS: usize = 8;

/// Which Cisco method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cisco {
    SrcMac,
    DstMac,
    SrcDstMac,
    SrcIp,
    DstIp,
    SrcDstIp,
    SrcPort,
    DstPort,
    SrcDstPort,
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Src,
    Dst,
    Both,
}

/// The fields that were actually used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Mac(Dir2<u8>),
    Ip(Dir2<u8>),
    Port(Dir2<u16>),
    Mixed { ip: (u8, u8), port: (u16, u16) },
}

/// A source field, a destination field, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir2<T> {
    Src(T),
    Dst(T),
    Both(T, T),
}

/// The field value and the bucket it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CiscoHash {
    pub value: u32,
    pub bucket: u8,
    pub input: Input,
    pub fallback: bool,
}

fn pick<T>(dir: Dir, src: T, dst: T) -> Dir2<T> {
    match dir {
        Dir::Src => Dir2::Src(src),
        Dir::Dst => Dir2::Dst(dst),
        Dir::Both => Dir2::Both(src, dst),
    }
}

fn value<T: Into<u32>>(d: Dir2<T>) -> u32 {
    match d {
        Dir2::Src(v) | Dir2::Dst(v) => v.into(),
        Dir2::Both(s, d) => s.into() ^ d.into(),
    }
}

pub(crate) fn hash(method: Cisco, key: &FlowKey) -> CiscoHash {
    use Cisco::*;
    let (level, dir) = match method {
        SrcMac => (0, Dir::Src),
        DstMac => (0, Dir::Dst),
        SrcDstMac => (0, Dir::Both),
        SrcIp => (1, Dir::Src),
        DstIp => (1, Dir::Dst),
        SrcDstIp => (1, Dir::Both),
        SrcPort => (2, Dir::Src),
        DstPort => (2, Dir::Dst),
        SrcDstPort => (2, Dir::Both),
        Mixed => (3, Dir::Both),
    };
    let ip = key.ip;
    let ports = ip.filter(|ip| ip.is_tcp_udp()).and_then(|ip| ip.ports());
    let ip_bytes = ip.map(|ip| (last_byte(ip.src), last_byte(ip.dst)));
    let mac = || Input::Mac(pick(dir, key.src_mac[5], key.dst_mac[5]));
    let ipf = |(s, d)| Input::Ip(pick(dir, s, d));
    let input = match (level, ip_bytes, ports) {
        (3, Some(ip), Some(port)) => Input::Mixed { ip, port },
        (2, _, Some((s, d))) => Input::Port(pick(dir, s, d)),
        (1..=3, Some(ipb), _) => ipf(ipb),
        _ => mac(),
    };
    let used = match input {
        Input::Mac(_) => 0,
        Input::Ip(_) => 1,
        Input::Port(_) => 2,
        Input::Mixed { .. } => 3,
    };
    let value = match input {
        Input::Mac(d) | Input::Ip(d) => value(d),
        Input::Port(d) => value(d),
        Input::Mixed { ip, port } => {
            u32::from(ip.0) ^ u32::from(ip.1) ^ u32::from(port.0) ^ u32::from(port.1)
        }
    };
    CiscoHash {
        value,
        bucket: (value & 7) as u8,
        input,
        fallback: used != level,
    }
}

fn map2<T, U>(d: Dir2<T>, f: impl Fn(T) -> U) -> Dir2<U> {
    match d {
        Dir2::Src(v) => Dir2::Src(f(v)),
        Dir2::Dst(v) => Dir2::Dst(f(v)),
        Dir2::Both(s, d) => Dir2::Both(f(s), f(d)),
    }
}

fn show<T: core::fmt::Display>(what: &str, d: Dir2<T>) -> String {
    match d {
        Dir2::Src(v) => format!("source {what} {v}"),
        Dir2::Dst(v) => format!("destination {what} {v}"),
        Dir2::Both(s, d) => format!("source {what} {s} ^ destination {what} {d}"),
    }
}

pub(crate) fn describe(h: &CiscoHash) -> String {
    let fields = match h.input {
        Input::Mac(d) => show("mac[5]", map2(d, |b| format!("{b:#04x}"))),
        Input::Ip(d) => show("ip last byte", d),
        Input::Port(d) => show("port", d),
        Input::Mixed { ip, port } => format!(
            "ip last bytes {} ^ {} ^ ports {} ^ {}",
            ip.0, ip.1, port.0, port.1
        ),
    };
    format!(
        "{}{fields} = {:#x}, low 3 bits = bucket {}",
        if h.fallback { "fallback: " } else { "" },
        h.value,
        h.bucket
    )
}

/// Which link bucket `bucket` (0..8) goes to with `n` links.
pub(crate) fn link_of(bucket: u8, n: usize) -> usize {
    usize::from(bucket) % n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples() {
        let k = FlowKey::tcp4([10, 0, 0, 0x21].into(), 1000, [10, 0, 0, 0x0e].into(), 80)
            .with_macs([0, 0, 0, 0, 0, 0x05], [0, 0, 0, 0, 0, 0x0c]);
        // src-dst-mac: 0x05 ^ 0x0c = 0x09 -> bucket 1
        assert_eq!(hash(Cisco::SrcDstMac, &k).bucket, 1);
        // src-dst-ip: 0x21 ^ 0x0e = 0x2f -> bucket 7
        assert_eq!(hash(Cisco::SrcDstIp, &k).bucket, 7);
        // dst-ip: 0x0e -> bucket 6
        assert_eq!(hash(Cisco::DstIp, &k).bucket, 6);
        // src-dst-port: 1000 ^ 80 = 0x3e8 ^ 0x50 = 0x3b8 -> bucket 0
        assert_eq!(hash(Cisco::SrcDstPort, &k).bucket, 0);
        // mixed: 0x21 ^ 0x0e ^ 0x3e8 ^ 0x50 = 0x2f ^ 0x3b8 = 0x397 -> bucket 7
        let m = hash(Cisco::Mixed, &k);
        assert_eq!((m.value, m.bucket), (0x397, 7));
    }

    #[test]
    fn fallbacks() {
        let echo = FlowKey::echo([10, 0, 0, 3].into(), [10, 0, 0, 4].into(), 1);
        let h = hash(Cisco::SrcDstPort, &echo);
        assert!(h.fallback);
        assert_eq!(h.value, 3 ^ 4);
        let arp = FlowKey::l2([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 6], 0x0806);
        let h = hash(Cisco::Mixed, &arp);
        assert_eq!(h.input, Input::Mac(Dir2::Both(1, 6)));
        assert_eq!(h.bucket, 7);
    }

    #[test]
    fn bucket_to_link_mapping() {
        let counts = |n: usize| {
            let mut c = vec![0; n];
            for b in 0..8u8 {
                c[link_of(b, n)] += 1;
            }
            c
        };
        assert_eq!(counts(2), [4, 4]);
        assert_eq!(counts(3), [3, 3, 2]);
        assert_eq!(counts(4), [2, 2, 2, 2]);
        assert_eq!(counts(5), [2, 2, 2, 1, 1]);
        assert_eq!(counts(6), [2, 2, 1, 1, 1, 1]);
        assert_eq!(counts(7), [2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(counts(8), [1; 8]);
        assert_eq!(counts(9)[8], 0);
    }
}
