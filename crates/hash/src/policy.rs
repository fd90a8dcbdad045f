//! The `Policy` enum: every transmit hash policy by its config name, and the
//! one dispatch from a [`FlowKey`] to a member.
//!
//! A single enum (rather than a trait object per policy) keeps the per-packet
//! path a `match` with no allocation and no indirection, and lets the config
//! parser, the data plane, the switch and the planner share one list of names.

use core::fmt;
use core::str::FromStr;

use crate::aix::{self, Aix, AixHash};
use crate::buckets::BucketMap;
use crate::cisco::{self, Cisco, CiscoHash};
use crate::hp::{self, Hp, HpHash};
use crate::key::FlowKey;
use crate::linux::{self, Linux, LinuxHash};
use crate::strong::Strong;

/// Whose policy it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// Linux bonding `xmit_hash_policy`.
    Linux,
    /// AIX EtherChannel `hash_mode`.
    Aix,
    /// Cisco Catalyst `port-channel load-balance`.
    Cisco,
    /// HP Auto Port Aggregation.
    Hp,
    /// lagkit's own.
    Lagkit,
}

impl Vendor {
    fn prefix(self) -> &'static str {
        match self {
            Vendor::Linux => "linux",
            Vendor::Aix => "aix",
            Vendor::Cisco => "cisco",
            Vendor::Hp => "hp",
            Vendor::Lagkit => "lagkit",
        }
    }
}

/// A transmit hash policy.
///
/// Member selection, for `n` usable members (none when `n` is 0):
/// Linux and AIX take their value mod `n`; Cisco takes the 3-bit bucket mod
/// `n`; HP takes its 8-bit table index mod `n`; `strong` looks its 8-bit
/// bucket up in a [`BucketMap`] (bucket mod `n` when no map is given, which is
/// what [`BucketMap::new`] builds).
///
/// The Linux policies match a little-endian kernel (x86, arm64) bit for bit:
/// header words are XORed as raw network-order bytes loaded as a
/// little-endian `u32` (10.0.0.1 is `0x0100000a`, ports 1234→80 are
/// `0x5000d204`), the EtherType in the layer-2 part is in host order, and a
/// VLAN tag is taken as the bond sees it, as metadata. Known gaps, all in rare
/// traffic: an IPsec AH header is skipped rather than hashed as the kernel's
/// "ports" (its SPI); PPTP (GRE version 1), PPPoE, TIPC and HSR payloads are
/// not dissected; more than [`crate::MAX_TUNNEL_DEPTH`] nested tunnels; IP
/// headers that `etherparse` rejects (bad version or IHL) count as non-IP;
/// `encap3+4` ignores `skb->hash`, which the kernel uses when a socket set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Linux `layer2`: `srcmac[5] ^ dstmac[5] ^ ethertype`.
    Layer2,
    /// Linux `layer2+3`: `h = layer2 ^ saddr ^ daddr; h ^= h >> 16; h ^= h >> 8`.
    /// IPv6 addresses are first folded to the XOR of their four 32-bit words.
    /// An ICMP error uses the addresses of the packet it quotes. Non-IP
    /// traffic (or an ICMP error whose quote is cut short) uses the unfolded
    /// `layer2` value.
    Layer23,
    /// Linux `layer3+4`: `h = ports ^ saddr ^ daddr; h ^= h >> 16; h ^= h >> 8;
    /// h >>= 1`, where `ports` is the first transport word (source port in
    /// the low 16 bits, both byte-swapped as loaded). ICMP messages with an
    /// identifier use `type | code << 8 | id << 16` instead (id 0 counts as 1);
    /// ICMP errors use the quoted packet's addresses and ports. Fragments,
    /// IPv6 packets with extension headers and protocols without ports use 0.
    /// Non-IP traffic uses the unfolded `layer2` value. The kernel documents
    /// this policy as not fully 802.3ad compliant (it may reorder fragments).
    Layer34,
    /// Linux `encap2+3`: `layer2+3` with the addresses of the innermost IP
    /// header the kernel's flow dissector reaches (through IP-in-IP and GRE,
    /// not VXLAN, whose outer UDP source port already carries the inner flow's
    /// entropy); the layer-2 part stays the outer Ethernet header. ARP, MPLS,
    /// FCoE, PTP and CFM hash as zero addresses (folded); other non-IP traffic
    /// uses the unfolded `layer2` value.
    Encap23,
    /// Linux `encap3+4`: `layer3+4` on the innermost IP header and transport
    /// word, as for `encap2+3`; IPv6 extension headers are followed. ARP, MPLS,
    /// FCoE, PTP and CFM hash as 0; other non-IP traffic uses `layer2`.
    Encap34,
    /// Linux `vlan+srcmac`: `srcmac[0..3] ^ srcmac[3..6] ^ tci` with each MAC
    /// half read as a 24-bit big-endian number and `tci` the full tag control
    /// word (priority bits included, as the kernel does), 0 when untagged.
    VlanSrcMac,
    /// AIX `default`: last byte of the destination IP; non-IP: last byte of
    /// the destination MAC.
    AixDefault,
    /// AIX `src_port`: the TCP/UDP source port; not TCP/UDP (including
    /// fragments): last byte of the destination IP; non-IP: last byte of the
    /// destination MAC.
    AixSrcPort,
    /// AIX `dst_port`: the TCP/UDP destination port; fallbacks as `src_port`.
    AixDstPort,
    /// AIX `src_dst_port`: `(source port + destination port) / 2`, truncating;
    /// fallbacks as `src_port`.
    AixSrcDstPort,
    /// Cisco `src-mac`: `srcmac[5] & 7` is the bucket.
    CiscoSrcMac,
    /// Cisco `dst-mac`: `dstmac[5] & 7`.
    CiscoDstMac,
    /// Cisco `src-dst-mac`: `(srcmac[5] ^ dstmac[5]) & 7`.
    CiscoSrcDstMac,
    /// Cisco `src-ip`: last byte of the source IP `& 7`; non-IP: `src-mac`.
    CiscoSrcIp,
    /// Cisco `dst-ip`: last byte of the destination IP `& 7`; non-IP: `dst-mac`.
    CiscoDstIp,
    /// Cisco `src-dst-ip`: XOR of the last address bytes `& 7`; non-IP: `src-dst-mac`.
    CiscoSrcDstIp,
    /// Cisco `src-port`: TCP/UDP source port `& 7`; otherwise `src-ip`, then `src-mac`.
    CiscoSrcPort,
    /// Cisco `dst-port`: TCP/UDP destination port `& 7`; otherwise `dst-ip`, then `dst-mac`.
    CiscoDstPort,
    /// Cisco `src-dst-port`: XOR of the ports `& 7`; otherwise `src-dst-ip`, then `src-dst-mac`.
    CiscoSrcDstPort,
    /// Cisco `src-dst-mixed-ip-port`: XOR of the last address bytes and both
    /// ports `& 7`; otherwise `src-dst-ip`, then `src-dst-mac`.
    CiscoSrcDstMixedIpPort,
    /// HP `LB_MAC`: table index = last byte of the destination MAC.
    HpLbMac,
    /// HP `LB_IP`: index = last byte of source IP ^ last byte of destination
    /// IP; non-IP: `LB_MAC`.
    HpLbIp,
    /// HP `LB_PORT`: index = low byte of (source port ^ destination port) for
    /// TCP/UDP; anything else: `LB_MAC`.
    HpLbPort,
    /// lagkit `strong`: seeded xxh3 of the (innermost) 5-tuple and VLAN id, or
    /// of MACs, EtherType and VLAN id without IP; low 8 bits pick a bucket of
    /// a [`BucketMap`]. See [`Strong`].
    Strong(Strong),
}

/// Why a policy name was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParsePolicyError {
    /// No policy has this name.
    Unknown {
        /// The name given.
        name: String,
    },
    /// An option of `strong` is malformed.
    BadStrongOption {
        /// The option given.
        option: String,
    },
}

/// The text a user gave, as the message quotes it: whole up to 80
/// characters, else its start and its length (a config value can be of
/// any size, and one error must not flood a log).
struct Given<'a>(&'a str);

impl fmt::Display for Given<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(80) {
            None => write!(f, "{:?}", self.0),
            Some((end, _)) => write!(
                f,
                "{:?} ({} characters)",
                format!("{}…", &self.0[..end]),
                self.0.chars().count()
            ),
        }
    }
}

impl fmt::Display for ParsePolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParsePolicyError::Unknown { name } => {
                let name = Given(name);
                write!(f, "unknown transmit hash policy {name}; valid policies: ")?;
                for (i, p) in Policy::COMPAT.iter().enumerate() {
                    write!(f, "{}{p}", if i == 0 { "" } else { ", " })?;
                }
                write!(
                    f,
                    ", strong[:seed=N][,symmetric] (an aix:, cisco:, hp: or linux: prefix \
                     accepts either '_' or '-')"
                )
            }
            ParsePolicyError::BadStrongOption { option } => write!(
                f,
                "bad option {} for the strong policy; expected seed=N (decimal or 0x hex) \
                 or symmetric[=true|false], e.g. strong:seed=0x2a,symmetric",
                Given(option)
            ),
        }
    }
}

impl std::error::Error for ParsePolicyError {}

/// The computed value of a policy, before reduction to a member.
#[derive(Clone, Copy, Debug)]
enum Computed {
    Linux(LinuxHash),
    Aix(AixHash),
    Cisco(CiscoHash),
    Hp(HpHash),
    Strong { hash: u64, bucket: u8 },
}

impl Computed {
    fn hash(&self) -> u64 {
        match self {
            Computed::Linux(h) => u64::from(h.hash),
            Computed::Aix(h) => u64::from(h.value),
            Computed::Cisco(h) => u64::from(h.value),
            Computed::Hp(h) => u64::from(h.index),
            Computed::Strong { hash, .. } => *hash,
        }
    }

    fn bucket(&self) -> Option<u8> {
        match self {
            Computed::Cisco(h) => Some(h.bucket),
            Computed::Hp(h) => Some(h.index),
            Computed::Strong { bucket, .. } => Some(*bucket),
            _ => None,
        }
    }

    fn member(&self, n: usize) -> Option<usize> {
        if n == 0 {
            return None;
        }
        let v = match self {
            Computed::Cisco(h) => return Some(cisco::link_of(h.bucket, n)),
            Computed::Strong { bucket, .. } => u64::from(*bucket),
            other => other.hash(),
        };
        // n fits in u64 on every supported target; the result is below n.
        Some((v % n as u64) as usize)
    }
}

impl Policy {
    /// Every policy except `strong`, in documentation order.
    pub const COMPAT: [Policy; 23] = [
        Policy::Layer2,
        Policy::Layer23,
        Policy::Layer34,
        Policy::Encap23,
        Policy::Encap34,
        Policy::VlanSrcMac,
        Policy::AixDefault,
        Policy::AixSrcPort,
        Policy::AixDstPort,
        Policy::AixSrcDstPort,
        Policy::CiscoSrcMac,
        Policy::CiscoDstMac,
        Policy::CiscoSrcDstMac,
        Policy::CiscoSrcIp,
        Policy::CiscoDstIp,
        Policy::CiscoSrcDstIp,
        Policy::CiscoSrcPort,
        Policy::CiscoDstPort,
        Policy::CiscoSrcDstPort,
        Policy::CiscoSrcDstMixedIpPort,
        Policy::HpLbMac,
        Policy::HpLbIp,
        Policy::HpLbPort,
    ];

    /// The config name (for `strong`, without options).
    pub const fn name(&self) -> &'static str {
        match self {
            Policy::Layer2 => "layer2",
            Policy::Layer23 => "layer2+3",
            Policy::Layer34 => "layer3+4",
            Policy::Encap23 => "encap2+3",
            Policy::Encap34 => "encap3+4",
            Policy::VlanSrcMac => "vlan+srcmac",
            Policy::AixDefault => "default",
            Policy::AixSrcPort => "src_port",
            Policy::AixDstPort => "dst_port",
            Policy::AixSrcDstPort => "src_dst_port",
            Policy::CiscoSrcMac => "src-mac",
            Policy::CiscoDstMac => "dst-mac",
            Policy::CiscoSrcDstMac => "src-dst-mac",
            Policy::CiscoSrcIp => "src-ip",
            Policy::CiscoDstIp => "dst-ip",
            Policy::CiscoSrcDstIp => "src-dst-ip",
            Policy::CiscoSrcPort => "src-port",
            Policy::CiscoDstPort => "dst-port",
            Policy::CiscoSrcDstPort => "src-dst-port",
            Policy::CiscoSrcDstMixedIpPort => "src-dst-mixed-ip-port",
            Policy::HpLbMac => "LB_MAC",
            Policy::HpLbIp => "LB_IP",
            Policy::HpLbPort => "LB_PORT",
            Policy::Strong(_) => "strong",
        }
    }

    /// Whose policy this is.
    pub const fn vendor(&self) -> Vendor {
        match self {
            Policy::Layer2
            | Policy::Layer23
            | Policy::Layer34
            | Policy::Encap23
            | Policy::Encap34
            | Policy::VlanSrcMac => Vendor::Linux,
            Policy::AixDefault
            | Policy::AixSrcPort
            | Policy::AixDstPort
            | Policy::AixSrcDstPort => Vendor::Aix,
            Policy::HpLbMac | Policy::HpLbIp | Policy::HpLbPort => Vendor::Hp,
            Policy::Strong(_) => Vendor::Lagkit,
            _ => Vendor::Cisco,
        }
    }

    fn compute(&self, key: &FlowKey) -> Computed {
        let linux = |p| Computed::Linux(linux::hash(p, key));
        let aix = |m| Computed::Aix(aix::hash(m, key));
        let cisco = |m| Computed::Cisco(cisco::hash(m, key));
        let hp = |a| Computed::Hp(hp::hash(a, key));
        match *self {
            Policy::Layer2 => linux(Linux::Layer2),
            Policy::Layer23 => linux(Linux::Layer23),
            Policy::Layer34 => linux(Linux::Layer34),
            Policy::Encap23 => linux(Linux::Encap23),
            Policy::Encap34 => linux(Linux::Encap34),
            Policy::VlanSrcMac => linux(Linux::VlanSrcMac),
            Policy::AixDefault => aix(Aix::Default),
            Policy::AixSrcPort => aix(Aix::SrcPort),
            Policy::AixDstPort => aix(Aix::DstPort),
            Policy::AixSrcDstPort => aix(Aix::SrcDstPort),
            Policy::CiscoSrcMac => cisco(Cisco::SrcMac),
            Policy::CiscoDstMac => cisco(Cisco::DstMac),
            Policy::CiscoSrcDstMac => cisco(Cisco::SrcDstMac),
            Policy::CiscoSrcIp => cisco(Cisco::SrcIp),
            Policy::CiscoDstIp => cisco(Cisco::DstIp),
            Policy::CiscoSrcDstIp => cisco(Cisco::SrcDstIp),
            Policy::CiscoSrcPort => cisco(Cisco::SrcPort),
            Policy::CiscoDstPort => cisco(Cisco::DstPort),
            Policy::CiscoSrcDstPort => cisco(Cisco::SrcDstPort),
            Policy::CiscoSrcDstMixedIpPort => cisco(Cisco::Mixed),
            Policy::HpLbMac => hp(Hp::Mac),
            Policy::HpLbIp => hp(Hp::Ip),
            Policy::HpLbPort => hp(Hp::Port),
            Policy::Strong(s) => {
                let hash = s.hash(key);
                Computed::Strong {
                    hash,
                    bucket: hash as u8,
                }
            }
        }
    }

    /// The policy's raw value for `key`: the kernel's 32-bit value for Linux,
    /// the field value for AIX and Cisco, the table index for HP, the 64-bit
    /// hash for `strong`.
    pub fn hash(&self, key: &FlowKey) -> u64 {
        self.compute(key).hash()
    }

    /// The bucket, for policies that have one: Cisco (0..8), HP (table
    /// index, 0..256) and `strong` (0..256).
    pub fn bucket(&self, key: &FlowKey) -> Option<u8> {
        self.compute(key).bucket()
    }

    /// The member index among `n` usable members; `None` when `n` is 0.
    #[inline]
    pub fn select(&self, key: &FlowKey, n: usize) -> Option<usize> {
        self.compute(key).member(n)
    }

    /// Like [`Policy::select`], with `strong`'s buckets looked up in `map`;
    /// the other policies are defined by their member count alone and use
    /// `map.members()`.
    #[inline]
    pub fn select_in(&self, key: &FlowKey, map: &BucketMap) -> Option<usize> {
        match self.compute(key) {
            Computed::Strong { bucket, .. } => map.member(bucket),
            other => other.member(map.members()),
        }
    }

    /// Why `key` goes where it goes among `n` members, for `lagkit flow`.
    pub fn explain(&self, key: &FlowKey, n: usize) -> Explain {
        self.explain_with(key, n, None)
    }

    /// Like [`Policy::explain`], with `strong`'s buckets looked up in `map`.
    pub fn explain_in(&self, key: &FlowKey, map: &BucketMap) -> Explain {
        self.explain_with(key, map.members(), Some(map))
    }

    fn explain_with(&self, key: &FlowKey, n: usize, map: Option<&BucketMap>) -> Explain {
        let c = self.compute(key);
        let member = match (c, map) {
            (Computed::Strong { bucket, .. }, Some(map)) => map.member(bucket),
            _ => c.member(n),
        };
        let how = match &c {
            Computed::Linux(h) => linux::describe(h),
            Computed::Aix(h) => aix::describe(h),
            Computed::Cisco(h) => cisco::describe(h),
            Computed::Hp(h) => hp::describe(h),
            Computed::Strong { hash, bucket } => describe_strong(key, *hash, *bucket),
        };
        let pick = match (member, &c) {
            (None, _) => "no usable member".to_string(),
            (Some(m), Computed::Strong { bucket, .. }) if map.is_some() => {
                format!("bucket {bucket} -> member {m} (bucket map)")
            }
            (Some(m), Computed::Strong { bucket, .. }) => format!("bucket {bucket} mod {n} = {m}"),
            (Some(m), Computed::Cisco(h)) => format!("bucket {} mod {n} = link {m}", h.bucket),
            (Some(m), Computed::Hp(h)) => format!("index {} mod {n} = {m}", h.index),
            (Some(m), other) => format!("{:#x} mod {n} = {m}", other.hash()),
        };
        Explain {
            policy: *self,
            hash: c.hash(),
            bucket: c.bucket(),
            member,
            members: n,
            reason: format!("{self}: {how}; {pick}"),
        }
    }
}

fn describe_strong(key: &FlowKey, hash: u64, bucket: u8) -> String {
    let inner = key.inner.and_then(|i| i.ip);
    let flow = match inner.or(key.ip) {
        Some(ip) => {
            let ports = match ip.l4 {
                crate::L4::Ports { src, dst } => format!(" ports {src}->{dst}"),
                crate::L4::Icmp { id: Some(id), .. } => format!(" icmp id {id}"),
                _ => String::new(),
            };
            format!(
                "{}proto {} {} -> {}{ports}",
                if inner.is_some() { "inner " } else { "" },
                ip.proto,
                ip.src,
                ip.dst
            )
        }
        None => format!("ethertype {:#06x} (no IP)", key.ethertype),
    };
    format!("xxh3({flow}) = {hash:#018x}, low 8 bits = bucket {bucket}")
}

/// Why a flow goes to the member it goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explain {
    /// The policy that decided.
    pub policy: Policy,
    /// Its raw value (see [`Policy::hash`]).
    pub hash: u64,
    /// The bucket, for policies that have one.
    pub bucket: Option<u8>,
    /// The chosen member, `None` when there was none to choose.
    pub member: Option<usize>,
    /// The number of usable members considered.
    pub members: usize,
    /// A one-line human account, e.g. `layer3+4: ports 1234->80 ... mod 2 = 0`.
    pub reason: String,
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Strong(s) => {
                f.write_str("strong")?;
                let mut sep = ':';
                if s.seed != 0 {
                    write!(f, "{sep}seed={}", s.seed)?;
                    sep = ',';
                }
                if s.symmetric {
                    write!(f, "{sep}symmetric")?;
                }
                Ok(())
            }
            other => f.write_str(other.name()),
        }
    }
}

fn normalize(s: &str) -> String {
    s.to_ascii_lowercase().replace('_', "-")
}

fn parse_strong(opts: &str) -> Result<Strong, ParsePolicyError> {
    let mut strong = Strong::default();
    for opt in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let bad = || ParsePolicyError::BadStrongOption {
            option: opt.to_string(),
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (opt, None),
        };
        match (name.to_ascii_lowercase().as_str(), value) {
            ("seed", Some(v)) => {
                let v = v.replace('_', "");
                strong.seed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => v.parse(),
                }
                .map_err(|_| bad())?;
            }
            ("symmetric", None) => strong.symmetric = true,
            ("symmetric", Some(v)) => {
                strong.symmetric = match v.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "1" => true,
                    "false" | "no" | "off" | "0" => false,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(strong)
}

impl FromStr for Policy {
    type Err = ParsePolicyError;

    /// Parses a config name, case-insensitively. AIX's port modes are spelt
    /// with `_` and Cisco's with `-` (`src_port` is AIX, `src-port` Cisco);
    /// other names accept either separator, and a vendor prefix (`aix:`,
    /// `cisco:`, `hp:`, `linux:`) makes the separator free for all. `strong`
    /// takes options: `strong:seed=42,symmetric`.
    fn from_str(s: &str) -> Result<Policy, ParsePolicyError> {
        let input = s.trim();
        let unknown = || ParsePolicyError::Unknown {
            name: input.to_string(),
        };
        let lower = input.to_ascii_lowercase();
        let lower = lower.strip_prefix("lagkit:").unwrap_or(&lower);
        if lower == "strong" {
            return Ok(Policy::Strong(Strong::default()));
        }
        if let Some(opts) = lower.strip_prefix("strong:") {
            return Ok(Policy::Strong(parse_strong(opts)?));
        }
        let (vendor, name) = match lower.split_once(':') {
            Some((v, n)) => {
                let vendor = [Vendor::Linux, Vendor::Aix, Vendor::Cisco, Vendor::Hp]
                    .into_iter()
                    .find(|vendor| vendor.prefix() == v)
                    .ok_or_else(unknown)?;
                (Some(vendor), n.trim())
            }
            None => (None, lower),
        };
        let candidates = Policy::COMPAT
            .into_iter()
            .filter(|p| vendor.is_none_or(|v| p.vendor() == v));
        if vendor.is_none() {
            if let Some(p) = candidates
                .clone()
                .find(|p| p.name().eq_ignore_ascii_case(name))
            {
                return Ok(p);
            }
        }
        let wanted = normalize(name);
        let mut found = candidates.filter(|p| normalize(p.name()) == wanted);
        match (found.next(), found.next()) {
            (Some(p), None) => Ok(p),
            _ => Err(unknown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for p in Policy::COMPAT {
            assert_eq!(p.to_string().parse::<Policy>(), Ok(p), "{p}");
        }
        for s in [
            Strong::default(),
            Strong::new(42),
            Strong::new(0).with_symmetric(true),
            Strong::new(u64::MAX).with_symmetric(true),
        ] {
            let p = Policy::Strong(s);
            assert_eq!(p.to_string().parse::<Policy>(), Ok(p), "{p}");
        }
    }

    #[test]
    fn separators_and_case() {
        let ok = |s: &str, p: Policy| assert_eq!(s.parse::<Policy>(), Ok(p), "{s}");
        ok("src_port", Policy::AixSrcPort);
        ok("src-port", Policy::CiscoSrcPort);
        ok("SRC_DST_PORT", Policy::AixSrcDstPort);
        ok("aix:src-dst-port", Policy::AixSrcDstPort);
        ok("cisco:src_port", Policy::CiscoSrcPort);
        ok("src_dst_mixed_ip_port", Policy::CiscoSrcDstMixedIpPort);
        ok("lb-mac", Policy::HpLbMac);
        ok("hp:lb_ip", Policy::HpLbIp);
        ok("Layer3+4", Policy::Layer34);
        ok("linux:vlan+srcmac", Policy::VlanSrcMac);
        ok("aix:default", Policy::AixDefault);
        ok(" strong ", Policy::Strong(Strong::default()));
        ok(
            "strong:seed=0x2a, symmetric",
            Policy::Strong(Strong::new(42).with_symmetric(true)),
        );
        ok("strong:symmetric=no,seed=7", Policy::Strong(Strong::new(7)));
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = "layer5".parse::<Policy>().unwrap_err();
        let msg = err.to_string();
        for p in Policy::COMPAT {
            assert!(msg.contains(p.name()), "{msg}");
        }
        assert!(msg.contains("strong"));
        assert!("cisco:default".parse::<Policy>().is_err());
        assert!("ibm:src_port".parse::<Policy>().is_err());
        assert!("".parse::<Policy>().is_err());
        assert!(matches!(
            "strong:seed=zz".parse::<Policy>(),
            Err(ParsePolicyError::BadStrongOption { .. })
        ));
        assert!("strong:fast".parse::<Policy>().is_err());
    }

    #[test]
    fn zero_members_select_nothing() {
        let k = FlowKey::tcp4([1, 1, 1, 1].into(), 1, [2, 2, 2, 2].into(), 2);
        for p in Policy::COMPAT
            .into_iter()
            .chain([Policy::Strong(Strong::new(1))])
        {
            assert_eq!(p.select(&k, 0), None);
            assert_eq!(p.explain(&k, 0).member, None);
            assert!(p.explain(&k, 0).reason.contains("no usable member"));
        }
    }

    #[test]
    fn explain_agrees_with_select() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
        for p in Policy::COMPAT
            .into_iter()
            .chain([Policy::Strong(Strong::new(9))])
        {
            for n in 1..=9 {
                let e = p.explain(&k, n);
                assert_eq!(e.member, p.select(&k, n), "{p} n={n}");
                assert_eq!(e.hash, p.hash(&k));
                assert!(e.reason.starts_with(&p.to_string()), "{}", e.reason);
            }
        }
    }

    #[test]
    fn explain_layer34_reads_like_the_arithmetic() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
        let e = Policy::Layer34.explain(&k, 2);
        assert_eq!(e.hash, 0x29a9_c0c2);
        assert_eq!(e.member, Some(0));
        assert_eq!(
            e.reason,
            "layer3+4: ports 1234->80 0x5000d204 ^ saddr 0x0100000a ^ daddr 0x0200000a = \
             0x5300d204, folded (^>>16, ^>>8) = 0x53538185, >>1 = 0x29a9c0c2; 0x29a9c0c2 mod 2 = 0"
        );
    }

    #[test]
    fn select_in_uses_the_map_only_for_strong() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
        let s = Policy::Strong(Strong::new(5));
        let b = s.bucket(&k).unwrap();
        let mut map = BucketMap::new(2).unwrap();
        let other = 1 - map.member(b).unwrap();
        map.assign(b, other).unwrap();
        assert_eq!(s.select_in(&k, &map), Some(other));
        assert_eq!(s.explain_in(&k, &map).member, Some(other));
        assert_eq!(
            Policy::Layer34.select_in(&k, &map),
            Policy::Layer34.select(&k, 2)
        );
    }
}
