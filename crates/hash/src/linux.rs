//! Linux bonding's `xmit_hash_policy`, reproduced bit for bit.
//!
//! The kernel (`drivers/net/bonding/bond_main.c`, `__bond_xmit_hash`) builds a
//! 32-bit value and the bond sends on `usable[hash % count]`. The value is not
//! a "hash" in the usual sense: it is an XOR of header words, folded. Which
//! words, and in which byte order, decides which link a flow takes, so this
//! module mirrors the kernel exactly, including its quirks:
//!
//! - Addresses and the port word are XORed as the kernel reads them: raw
//!   network-order bytes loaded as a *native* `u32`. On x86 and arm64 (little
//!   endian) 10.0.0.1 is `0x0100000a` and ports 1234→80 are `0x5000d204`. We
//!   always compute the little-endian result, whatever the host, so lagkit
//!   agrees with every little-endian Linux bond; a big-endian kernel computes
//!   something else.
//! - The EtherType in the layer-2 part is converted to host order (`0x0800`).
//! - IPv6 addresses are folded to 32 bits by XORing their four words.
//! - `layer3+4` and `encap3+4` drop the lowest bit (`>> 1`): since Linux 4.2
//!   `connect()` prefers even source ports, which would otherwise all land on
//!   the same link of an even-sized bond.
//! - Non-IP traffic falls back to the layer-2 value, unfolded.
//!
//! Where lagkit's key cannot express the kernel's view exactly, the gap is
//! documented at [`crate::Policy`].

use core::net::IpAddr;

use crate::key::{ethertype, FlowKey, IpFlow, Tunnel, L4};

/// Which of the six Linux policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Linux {
    Layer2,
    Layer23,
    Layer34,
    Encap23,
    Encap34,
    VlanSrcMac,
}

/// The word XORed with the addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    /// No transport word (layer2+3, fragments, unknown protocols).
    Zero,
    /// The layer-2 value (layer2+3 and encap2+3).
    Eth(u32),
    /// The two ports as they lie in the header.
    Ports { src: u16, dst: u16 },
    /// ICMP type, code and identifier, laid out as `struct flow_dissector_key_icmp`.
    Icmp { ty: u8, code: u8, id: u16 },
}

impl Word {
    fn value(self) -> u32 {
        match self {
            Word::Zero => 0,
            Word::Eth(v) => v,
            Word::Ports { src, dst } => port_word(src, dst),
            Word::Icmp { ty, code, id } => {
                u32::from_le_bytes([ty, code, id as u8, (id >> 8) as u8])
            }
        }
    }
}

/// How the kernel's value came about, for [`crate::Explain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trace {
    /// `srcmac[5] ^ dstmac[5] ^ ethertype`; `fallback` when a layer-3 policy met non-IP traffic.
    Eth {
        src5: u8,
        dst5: u8,
        ethertype: u16,
        fallback: bool,
    },
    /// `vlan+srcmac`.
    VlanSrcMac { vendor: u32, dev: u32, tci: u16 },
    /// An IP policy.
    Ip {
        word: Word,
        saddr: u32,
        daddr: u32,
        folded: u32,
        shifted: bool,
        /// The addresses came from a tunnel's inner header.
        inner: bool,
        /// The addresses and ports came from the packet an ICMP error quotes.
        quoted: bool,
    },
}

/// The kernel's 32-bit value and how it was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinuxHash {
    pub hash: u32,
    pub trace: Trace,
}

/// The port word as the kernel loads it: `[sport_hi, sport_lo, dport_hi, dport_lo]` as a little-endian `u32`.
pub(crate) fn port_word(src: u16, dst: u16) -> u32 {
    let (s, d) = (src.to_be_bytes(), dst.to_be_bytes());
    u32::from_le_bytes([s[0], s[1], d[0], d[1]])
}

/// An address as the kernel's `flow_get_u32_src`/`_dst` returns it on a little-endian host.
pub(crate) fn addr_word(addr: IpAddr) -> u32 {
    match addr {
        IpAddr::V4(a) => u32::from_le_bytes(a.octets()),
        IpAddr::V6(a) => {
            let o = a.octets();
            let w = |i: usize| u32::from_le_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
            w(0) ^ w(4) ^ w(8) ^ w(12)
        }
    }
}

fn fold(mut h: u32) -> u32 {
    h ^= h >> 16;
    h ^= h >> 8;
    h
}

fn eth(key: &FlowKey) -> u32 {
    u32::from(key.src_mac[5]) ^ u32::from(key.dst_mac[5]) ^ u32::from(key.ethertype)
}

/// What `bond_flow_dissect` extracts: addresses plus the transport word.
#[derive(Clone, Copy)]
struct View {
    saddr: u32,
    daddr: u32,
    word: Word,
    inner: bool,
    quoted: bool,
}

/// `bond_flow_ip` + the ICMP handling of `bond_flow_dissect` (layer2+3 and
/// layer3+4). `None` means the kernel falls back to the layer-2 value.
fn plain_view(key: &FlowKey, l34: bool) -> Option<View> {
    let ip = key.ip?;
    let mut view = View {
        saddr: addr_word(ip.src),
        daddr: addr_word(ip.dst),
        word: Word::Zero,
        inner: false,
        quoted: false,
    };
    // The kernel reads the protocol straight from the IP header: a fragment
    // has none, and behind an IPv6 extension header it sees that header.
    if ip.fragment || ip.ext_headers {
        return Some(view);
    }
    match ip.l4 {
        L4::Ports { src, dst } if l34 => view.word = Word::Ports { src, dst },
        L4::Icmp {
            ty,
            code,
            id: Some(id),
        } => {
            // A zero identifier is stored as 1: zero means "no identifier".
            let id = if id == 0 { 1 } else { id };
            if l34 {
                view.word = Word::Icmp { ty, code, id };
            }
        }
        L4::IcmpError { quoted, .. } => {
            let q = quoted?;
            view.saddr = addr_word(q.src);
            view.daddr = addr_word(q.dst);
            view.quoted = true;
            if let (true, Some((src, dst))) = (l34, q.ports) {
                view.word = Word::Ports { src, dst };
            }
        }
        _ => {}
    }
    Some(view)
}

/// EtherTypes for which the kernel's full flow dissector succeeds without
/// finding addresses (it then hashes zero addresses instead of falling back).
fn dissector_accepts(ethertype: u16) -> bool {
    matches!(
        ethertype,
        ethertype::ARP
            | ethertype::RARP
            | ethertype::MPLS_UC
            | ethertype::MPLS_MC
            | ethertype::FCOE
            | ethertype::PTP
            | ethertype::CFM
    )
}

fn dissected(ip: &IpFlow, inner: bool) -> View {
    let word = match ip.l4 {
        _ if ip.fragment => Word::Zero,
        L4::Ports { src, dst } => Word::Ports { src, dst },
        L4::Icmp {
            ty,
            code,
            id: Some(id),
        } => Word::Icmp {
            ty,
            code,
            id: if id == 0 { 1 } else { id },
        },
        _ => Word::Zero,
    };
    View {
        saddr: addr_word(ip.src),
        daddr: addr_word(ip.dst),
        word,
        inner,
        quoted: false,
    }
}

/// `__skb_flow_dissect` with the bonding keys (encap2+3 and encap3+4): the
/// innermost IP header through IP-in-IP and GRE, never through VXLAN.
fn encap_view(key: &FlowKey) -> Option<View> {
    let zero = |ip: Option<IpFlow>, inner| View {
        saddr: ip.map_or(0, |ip| addr_word(ip.src)),
        daddr: ip.map_or(0, |ip| addr_word(ip.dst)),
        word: Word::Zero,
        inner,
        quoted: false,
    };
    match key.inner {
        Some(inner) if inner.tunnel != Tunnel::Vxlan => match (inner.ip, inner.ethertype) {
            (Some(ip), _) => Some(dissected(&ip, true)),
            // A known non-IP payload keeps the outer addresses, with no ports.
            (None, Some(et)) if dissector_accepts(et) => Some(zero(key.ip, false)),
            _ => None,
        },
        _ => match key.ip {
            Some(ip) => Some(dissected(&ip, false)),
            None if dissector_accepts(key.ethertype) => Some(zero(None, false)),
            None => None,
        },
    }
}

/// The kernel's value for `policy` on `key`.
pub(crate) fn hash(policy: Linux, key: &FlowKey) -> LinuxHash {
    let l2 = |fallback| LinuxHash {
        hash: eth(key),
        trace: Trace::Eth {
            src5: key.src_mac[5],
            dst5: key.dst_mac[5],
            ethertype: key.ethertype,
            fallback,
        },
    };
    let view = match policy {
        Linux::Layer2 => return l2(false),
        Linux::VlanSrcMac => {
            let m = key.src_mac;
            let vendor = u32::from_be_bytes([0, m[0], m[1], m[2]]);
            let dev = u32::from_be_bytes([0, m[3], m[4], m[5]]);
            let tci = key.vlan_tci.unwrap_or(0);
            return LinuxHash {
                hash: vendor ^ dev ^ u32::from(tci),
                trace: Trace::VlanSrcMac { vendor, dev, tci },
            };
        }
        Linux::Layer23 => plain_view(key, false),
        Linux::Layer34 => plain_view(key, true),
        Linux::Encap23 | Linux::Encap34 => encap_view(key),
    };
    let Some(mut view) = view else {
        return l2(true);
    };
    let shifted = matches!(policy, Linux::Layer34 | Linux::Encap34);
    if !shifted {
        view.word = Word::Eth(eth(key));
    }
    let folded = fold(view.word.value() ^ view.saddr ^ view.daddr);
    LinuxHash {
        hash: if shifted { folded >> 1 } else { folded },
        trace: Trace::Ip {
            word: view.word,
            saddr: view.saddr,
            daddr: view.daddr,
            folded,
            shifted,
            inner: view.inner,
            quoted: view.quoted,
        },
    }
}

/// A one-line account of how the value was built.
pub(crate) fn describe(t: &LinuxHash) -> String {
    match t.trace {
        Trace::Eth {
            src5,
            dst5,
            ethertype,
            fallback,
        } => {
            format!(
            "{}srcmac[5] {src5:#04x} ^ dstmac[5] {dst5:#04x} ^ ethertype {ethertype:#06x} = {:#x}",
            if fallback { "no IP flow, layer2 fallback: " } else { "" },
            t.hash
        )
        }
        Trace::VlanSrcMac { vendor, dev, tci } => format!(
            "srcmac[0..3] {vendor:#08x} ^ srcmac[3..6] {dev:#08x} ^ vlan tci {tci:#06x} = {:#x}",
            t.hash
        ),
        Trace::Ip {
            word,
            saddr,
            daddr,
            folded,
            shifted,
            inner,
            quoted,
        } => {
            let xored = word.value() ^ saddr ^ daddr;
            let word = match word {
                Word::Zero => "no ports 0".to_string(),
                Word::Eth(v) => format!("layer2 {v:#x}"),
                Word::Ports { src, dst } => {
                    format!("ports {src}->{dst} {:#010x}", port_word(src, dst))
                }
                Word::Icmp { ty, code, id } => {
                    let v = Word::Icmp { ty, code, id }.value();
                    format!("icmp type {ty} code {code} id {id} {v:#010x}")
                }
            };
            let from = match (inner, quoted) {
                (true, _) => "inner ",
                (_, true) => "quoted ",
                _ => "",
            };
            let shift = if shifted {
                format!(", >>1 = {:#x}", t.hash)
            } else {
                String::new()
            };
            format!(
                "{word} ^ {from}saddr {saddr:#010x} ^ {from}daddr {daddr:#010x} = {:#010x}, \
                 folded (^>>16, ^>>8) = {folded:#x}{shift}",
                xored
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv6Addr;

    #[test]
    fn byte_order_matches_a_little_endian_kernel() {
        // 10.0.0.1 in memory is 0a 00 00 01; loaded little-endian: 0x0100000a.
        assert_eq!(addr_word([10, 0, 0, 1].into()), 0x0100_000a);
        // Ports 1234 (0x04d2) -> 80 (0x0050): bytes 04 d2 00 50 -> 0x5000d204.
        assert_eq!(port_word(1234, 80), 0x5000_d204);
    }

    #[test]
    fn ipv6_addresses_fold_to_the_xor_of_their_words() {
        // 2001:db8::1 = 20 01 0d b8 | 00.. | 00.. | 00 00 00 01
        // words (LE): 0xb80d0120 ^ 0 ^ 0 ^ 0x01000000 = 0xb90d0120
        let a: Ipv6Addr = "2001:db8::1".parse().unwrap();
        assert_eq!(addr_word(a.into()), 0xb90d_0120);
    }

    #[test]
    fn layer2_worked_example() {
        // srcmac[5] 0x11 ^ dstmac[5] 0x22 ^ 0x0800 = 0x0833
        let k = FlowKey::l2([0, 0, 0, 0, 0, 0x11], [0, 0, 0, 0, 0, 0x22], 0x0800);
        assert_eq!(hash(Linux::Layer2, &k).hash, 0x0833);
    }

    #[test]
    fn layer23_worked_example() {
        // 10.0.0.1 -> 10.0.0.2, MACs ..:01 -> ..:02, IPv4.
        // eth   = 0x01 ^ 0x02 ^ 0x0800           = 0x00000803
        // addrs = 0x0100000a ^ 0x0200000a         = 0x03000000
        // h     = 0x03000803; h ^= h>>16 (0x0300) = 0x03000b03
        // h ^= h>>8 (0x00030000b)                 = 0x03030b08
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80)
            .with_macs([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2]);
        assert_eq!(hash(Linux::Layer23, &k).hash, 0x0303_0b08);
    }

    #[test]
    fn layer34_worked_example() {
        // word  = ports 1234->80                 = 0x5000d204
        // addrs = 0x0100000a ^ 0x0200000a         = 0x03000000
        // h     = 0x5300d204
        // h ^= h >> 16 (0x00005300)               = 0x53008104
        // h ^= h >> 8  (0x00530081)               = 0x53538185
        // h >>= 1                                 = 0x29a9c0c2 (698_990_786)
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
        let h = hash(Linux::Layer34, &k);
        assert_eq!(h.hash, 0x29a9_c0c2);
        // mod 2: even -> 0; mod 3: digit sum 62 -> 62 mod 3 = 2
        assert_eq!(h.hash % 2, 0);
        assert_eq!(h.hash % 3, 2);
    }

    #[test]
    fn icmp_echo_uses_type_code_and_id() {
        // echo request type 8 code 0 id 0x1234 -> word bytes 08 00 34 12 = 0x12340008
        let k = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 0x1234);
        let h = hash(Linux::Layer34, &k);
        match h.trace {
            Trace::Ip { word, .. } => assert_eq!(word.value(), 0x1234_0008),
            t => panic!("{t:?}"),
        }
        // An identifier of 0 hashes as 1.
        let k0 = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 0);
        let k1 = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 1);
        assert_eq!(hash(Linux::Layer34, &k0), hash(Linux::Layer34, &k1));
    }

    #[test]
    fn vlan_srcmac_worked_example() {
        // 00:11:22 ^ 33:44:55 = 0x001122 ^ 0x334455 = 0x335577; ^ vlan 100 (0x64) = 0x335513
        let k = FlowKey::default()
            .with_macs([0x00, 0x11, 0x22, 0x33, 0x44, 0x55], [0; 6])
            .with_vlan(100);
        assert_eq!(hash(Linux::VlanSrcMac, &k).hash, 0x0033_5513);
    }

    #[test]
    fn non_ip_falls_back_unfolded() {
        let k = FlowKey::l2([0, 0, 0, 0, 0, 0x11], [0, 0, 0, 0, 0, 0x22], 0x88cc);
        for p in [
            Linux::Layer23,
            Linux::Layer34,
            Linux::Encap23,
            Linux::Encap34,
        ] {
            assert_eq!(hash(p, &k).hash, 0x11 ^ 0x22 ^ 0x88cc, "{p:?}");
        }
    }

    #[test]
    fn encap34_hashes_arp_as_zero() {
        // The full dissector accepts ARP without addresses: fold(0) >> 1 = 0,
        // while encap2+3 folds the layer-2 value.
        let k = FlowKey::l2([0, 0, 0, 0, 0, 0x11], [0, 0, 0, 0, 0, 0x22], ethertype::ARP);
        assert_eq!(hash(Linux::Encap34, &k).hash, 0);
        // 0x11 ^ 0x22 ^ 0x0806 = 0x0835; ^>>16 = 0x0835; ^>>8 = 0x0835 ^ 0x08 = 0x083d
        assert_eq!(hash(Linux::Encap23, &k).hash, 0x083d);
        assert_eq!(hash(Linux::Layer23, &k).hash, 0x0835);
    }
}
