//! Flow keys: the header fields that transmit hash policies read, taken from a
//! frame once.
//!
//! Policies differ in which fields they read, not in how the fields are found.
//! If each policy parsed the frame itself, two policies (or the data plane and
//! the planner) could disagree about what "the destination port" of a fragment
//! or a tunnelled packet is. So a frame is parsed exactly once, into a plain
//! `Copy` struct, and every policy is a pure function of that struct. The
//! planner builds the same struct without a frame ([`FlowKey::tcp4`] and
//! friends), so a prediction and a packet go through identical code.
//!
//! Parsing follows the Linux kernel where the kernel's choice is visible in a
//! hash: fragments (first and later ones alike) carry no ports; the "ports" of
//! TCP, UDP, UDP-Lite, DCCP, SCTP and ESP are the first four bytes of the
//! transport header, read even when the rest of that header is cut off; ICMP
//! keeps type, code and the echo identifier; an ICMP error keeps the addresses
//! and ports of the packet it quotes. `etherparse` does the Ethernet, 802.1Q /
//! QinQ, IPv4 and IPv6 (with extension headers and fragments) work. The
//! transport word, ICMP quotes, GRE and VXLAN are read by hand: `etherparse`
//! wants a complete TCP header (the kernel needs four bytes), rejects the
//! truncated packets that ICMP errors quote, and has no GRE or VXLAN support.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{EtherType, LaxLinkExtSlice, LaxNetSlice, LaxSlicedPacket, LinkSlice};

/// EtherType values the hash policies care about.
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// Reverse ARP.
    pub const RARP: u16 = 0x8035;
    /// IEEE 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// IPv6.
    pub const IPV6: u16 = 0x86dd;
    /// MPLS unicast.
    pub const MPLS_UC: u16 = 0x8847;
    /// MPLS multicast.
    pub const MPLS_MC: u16 = 0x8848;
    /// IEEE 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
    /// IEEE 802.1AE MACsec.
    pub const MACSEC: u16 = 0x88e5;
    /// Precision Time Protocol over Ethernet.
    pub const PTP: u16 = 0x88f7;
    /// IEEE 802.1ag connectivity fault management.
    pub const CFM: u16 = 0x8902;
    /// Fibre Channel over Ethernet.
    pub const FCOE: u16 = 0x8906;
    /// Transparent Ethernet bridging: the payload of GRE is an Ethernet frame.
    pub const TEB: u16 = 0x6558;
}

/// IP protocol numbers the hash policies care about.
pub mod ip_proto {
    /// ICMP for IPv4.
    pub const ICMP: u8 = 1;
    /// IPv4 encapsulated in IP.
    pub const IPIP: u8 = 4;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// DCCP.
    pub const DCCP: u8 = 33;
    /// IPv6 encapsulated in IP.
    pub const IPV6: u8 = 41;
    /// Generic routing encapsulation.
    pub const GRE: u8 = 47;
    /// IPsec encapsulating security payload.
    pub const ESP: u8 = 50;
    /// IPsec authentication header.
    pub const AH: u8 = 51;
    /// ICMP for IPv6.
    pub const ICMPV6: u8 = 58;
    /// SCTP.
    pub const SCTP: u8 = 132;
    /// UDP-Lite.
    pub const UDPLITE: u8 = 136;
}

/// The IANA UDP port of VXLAN (RFC 7348).
pub const VXLAN_PORT: u16 = 4789;

/// How many tunnel layers [`FlowKey::from_frame`] looks through.
pub const MAX_TUNNEL_DEPTH: u8 = 4;

/// The transport part of a flow, as far as hashing is concerned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum L4 {
    /// No transport fields: a fragment, an unknown protocol, or a cut-off header.
    #[default]
    None,
    /// The first four bytes of a TCP, UDP, UDP-Lite, DCCP, SCTP or ESP header,
    /// as two host-order numbers (for ESP: the two halves of the SPI).
    Ports {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// An ICMP or ICMPv6 message that is not an error.
    Icmp {
        /// ICMP type.
        ty: u8,
        /// ICMP code.
        code: u8,
        /// The identifier, for the types that carry one (echo, echo reply,
        /// timestamp, timestamp reply), host order.
        id: Option<u16>,
    },
    /// An ICMP or ICMPv6 error message (destination unreachable, time
    /// exceeded, ...), which quotes the start of the packet that caused it.
    IcmpError {
        /// ICMP type.
        ty: u8,
        /// ICMP code.
        code: u8,
        /// The quoted packet's addresses and ports, when at least its IP
        /// header is present.
        quoted: Option<Quoted>,
    },
}

/// The flow of the packet that an ICMP error quotes.
///
/// Linux's `layer2+3` and `layer3+4` hash an ICMP error like the flow it
/// reports on, so the error follows the flow's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Quoted {
    /// Source address of the quoted packet.
    pub src: IpAddr,
    /// Destination address of the quoted packet.
    pub dst: IpAddr,
    /// The quoted packet's transport word, when present (see [`L4::Ports`]).
    pub ports: Option<(u16, u16)>,
}

/// The network and transport part of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpFlow {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The transport protocol: the IPv4 protocol, or the IPv6 next header
    /// after any extension headers.
    pub proto: u8,
    /// True for any IPv4 fragment (first or later) and for any IPv6 packet
    /// with a fragment header. Fragments never carry transport fields.
    pub fragment: bool,
    /// True when extension headers (IPv6 options, routing, fragment, or an
    /// IPsec AH) were skipped to reach `proto`. Linux's non-encap policies do
    /// not skip them, so they see no ports in such packets.
    pub ext_headers: bool,
    /// Transport fields.
    pub l4: L4,
}

impl IpFlow {
    /// A flow between two addresses with the given transport protocol and fields.
    pub const fn new(src: IpAddr, dst: IpAddr, proto: u8, l4: L4) -> IpFlow {
        IpFlow {
            src,
            dst,
            proto,
            fragment: false,
            ext_headers: false,
            l4,
        }
    }

    /// The port pair, when the protocol is one whose first header word is two ports.
    pub fn ports(&self) -> Option<(u16, u16)> {
        match self.l4 {
            L4::Ports { src, dst } => Some((src, dst)),
            _ => None,
        }
    }

    /// True when this is TCP or UDP with its ports present (what AIX, Cisco
    /// and HP mean by "a TCP or UDP packet").
    pub fn is_tcp_udp(&self) -> bool {
        (self.proto == ip_proto::TCP || self.proto == ip_proto::UDP) && self.ports().is_some()
    }

    /// The same flow seen from the other end.
    pub fn reversed(&self) -> IpFlow {
        let l4 = match self.l4 {
            L4::Ports { src, dst } => L4::Ports { src: dst, dst: src },
            other => other,
        };
        IpFlow {
            src: self.dst,
            dst: self.src,
            l4,
            ..*self
        }
    }
}

/// Ethernet fields of an encapsulated frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InnerL2 {
    /// Source MAC address.
    pub src_mac: [u8; 6],
    /// Destination MAC address.
    pub dst_mac: [u8; 6],
    /// Tag control information of the outermost VLAN tag, if tagged.
    pub vlan_tci: Option<u16>,
}

/// The kind of encapsulation a packet was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tunnel {
    /// IPv4 or IPv6 directly inside IPv4 or IPv6 (protocols 4 and 41).
    IpInIp,
    /// GRE version 0 carrying IP or, with 0x6558, an Ethernet frame.
    Gre,
    /// VXLAN: an Ethernet frame in UDP to port 4789.
    Vxlan,
}

/// The innermost flow found inside tunnels.
///
/// Parsing descends through IP-in-IP, GRE and VXLAN, at most
/// [`MAX_TUNNEL_DEPTH`] layers. It enters VXLAN only as the outermost tunnel:
/// Linux's flow dissector, which `encap2+3`/`encap3+4` use, never parses UDP
/// tunnels, so a VXLAN packet inside GRE ends the descent at the GRE payload,
/// exactly where the kernel stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InnerKey {
    /// The outermost tunnel that was entered.
    pub tunnel: Tunnel,
    /// How many tunnel layers were entered (1 for a plain tunnel).
    pub depth: u8,
    /// The protocol carried by the innermost tunnel, or `None` when the tunnel
    /// header or the inner Ethernet header is cut off.
    pub ethertype: Option<u16>,
    /// The inner Ethernet header, for GRE-TEB and VXLAN.
    pub l2: Option<InnerL2>,
    /// The inner IP flow, when the carried protocol is IP and its header parsed.
    pub ip: Option<IpFlow>,
}

/// Every field a transmit hash policy reads, for one packet.
///
/// A plain `Copy` struct: building one, from a frame or by hand, never
/// allocates. The VLAN tag is modelled the way a Linux bond sees it: as
/// metadata beside the frame (VLAN devices hand tags to the bond for hardware
/// insertion), so `ethertype` is the one after the tags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// Source MAC address.
    pub src_mac: [u8; 6],
    /// Destination MAC address.
    pub dst_mac: [u8; 6],
    /// EtherType after any VLAN tags (host order).
    pub ethertype: u16,
    /// Tag control information (priority, DEI, VLAN id) of the outermost VLAN tag.
    pub vlan_tci: Option<u16>,
    /// IP addresses, protocol and transport fields.
    pub ip: Option<IpFlow>,
    /// The innermost flow, when the packet is a recognised tunnel.
    pub inner: Option<InnerKey>,
}

impl FlowKey {
    /// Parses a raw Ethernet II frame (without FCS) into a key. Never panics:
    /// a truncated or garbage frame yields a key with the layers that parsed
    /// (all zero when not even the 14-byte Ethernet header is present).
    pub fn from_frame(frame: &[u8]) -> FlowKey {
        let Some(outer) = parse_ethernet(frame) else {
            return FlowKey::default();
        };
        let l2 = outer.l2.unwrap_or_default();
        FlowKey {
            src_mac: l2.src_mac,
            dst_mac: l2.dst_mac,
            ethertype: outer.ethertype,
            vlan_tci: l2.vlan_tci,
            ip: outer.ip,
            inner: descend(&outer),
        }
    }

    /// A non-IP key with the given MAC addresses and EtherType.
    pub const fn l2(src_mac: [u8; 6], dst_mac: [u8; 6], ethertype: u16) -> FlowKey {
        FlowKey {
            src_mac,
            dst_mac,
            ethertype,
            vlan_tci: None,
            ip: None,
            inner: None,
        }
    }

    /// An IP key; the EtherType follows the address family of `flow.src`.
    pub fn ip(flow: IpFlow) -> FlowKey {
        let ethertype = match flow.src {
            IpAddr::V4(_) => ethertype::IPV4,
            IpAddr::V6(_) => ethertype::IPV6,
        };
        FlowKey {
            ethertype,
            ip: Some(flow),
            ..FlowKey::default()
        }
    }

    /// A TCP over IPv4 key.
    pub fn tcp4(src: Ipv4Addr, src_port: u16, dst: Ipv4Addr, dst_port: u16) -> FlowKey {
        FlowKey::ports(src.into(), src_port, dst.into(), dst_port, ip_proto::TCP)
    }

    /// A UDP over IPv4 key.
    pub fn udp4(src: Ipv4Addr, src_port: u16, dst: Ipv4Addr, dst_port: u16) -> FlowKey {
        FlowKey::ports(src.into(), src_port, dst.into(), dst_port, ip_proto::UDP)
    }

    /// A TCP over IPv6 key.
    pub fn tcp6(src: Ipv6Addr, src_port: u16, dst: Ipv6Addr, dst_port: u16) -> FlowKey {
        FlowKey::ports(src.into(), src_port, dst.into(), dst_port, ip_proto::TCP)
    }

    /// A UDP over IPv6 key.
    pub fn udp6(src: Ipv6Addr, src_port: u16, dst: Ipv6Addr, dst_port: u16) -> FlowKey {
        FlowKey::ports(src.into(), src_port, dst.into(), dst_port, ip_proto::UDP)
    }

    /// A key for any protocol whose first header word is two ports.
    pub fn ports(src: IpAddr, src_port: u16, dst: IpAddr, dst_port: u16, proto: u8) -> FlowKey {
        FlowKey::ip(IpFlow::new(
            src,
            dst,
            proto,
            L4::Ports {
                src: src_port,
                dst: dst_port,
            },
        ))
    }

    /// An ICMP (IPv4) or ICMPv6 (IPv6) echo request with the given identifier.
    pub fn echo(src: IpAddr, dst: IpAddr, id: u16) -> FlowKey {
        let (proto, ty) = match src {
            IpAddr::V4(_) => (ip_proto::ICMP, 8),
            IpAddr::V6(_) => (ip_proto::ICMPV6, 128),
        };
        let l4 = L4::Icmp {
            ty,
            code: 0,
            id: Some(id),
        };
        FlowKey::ip(IpFlow::new(src, dst, proto, l4))
    }

    /// Sets the MAC addresses.
    pub const fn with_macs(mut self, src_mac: [u8; 6], dst_mac: [u8; 6]) -> FlowKey {
        self.src_mac = src_mac;
        self.dst_mac = dst_mac;
        self
    }

    /// Tags the key with a VLAN id (priority 0); ids above 4095 are masked.
    pub const fn with_vlan(mut self, vlan_id: u16) -> FlowKey {
        self.vlan_tci = Some(vlan_id & 0x0fff);
        self
    }

    /// Tags the key with a full tag control information word.
    pub const fn with_vlan_tci(mut self, tci: Option<u16>) -> FlowKey {
        self.vlan_tci = tci;
        self
    }

    /// Sets the EtherType.
    pub const fn with_ethertype(mut self, ethertype: u16) -> FlowKey {
        self.ethertype = ethertype;
        self
    }

    /// Marks the packet as an IP fragment, which drops its transport fields.
    pub fn as_fragment(mut self) -> FlowKey {
        if let Some(ip) = self.ip.as_mut() {
            ip.fragment = true;
            ip.l4 = L4::None;
        }
        self
    }

    /// Sets the innermost tunnelled flow.
    pub const fn with_inner(mut self, inner: Option<InnerKey>) -> FlowKey {
        self.inner = inner;
        self
    }

    /// The same packet travelling the other way (MACs, addresses and ports swapped).
    pub fn reversed(&self) -> FlowKey {
        let inner = self.inner.map(|mut i| {
            i.ip = i.ip.map(|ip| ip.reversed());
            i.l2 = i.l2.map(|l2| InnerL2 {
                src_mac: l2.dst_mac,
                dst_mac: l2.src_mac,
                ..l2
            });
            i
        });
        FlowKey {
            src_mac: self.dst_mac,
            dst_mac: self.src_mac,
            ip: self.ip.map(|ip| ip.reversed()),
            inner,
            ..*self
        }
    }

    /// The VLAN id (low 12 bits of the outermost tag), if tagged.
    pub fn vlan_id(&self) -> Option<u16> {
        self.vlan_tci.map(|tci| tci & 0x0fff)
    }

    /// Source IP address.
    pub fn src_ip(&self) -> Option<IpAddr> {
        self.ip.map(|ip| ip.src)
    }

    /// Destination IP address.
    pub fn dst_ip(&self) -> Option<IpAddr> {
        self.ip.map(|ip| ip.dst)
    }

    /// IP protocol (after IPv6 extension headers).
    pub fn ip_proto(&self) -> Option<u8> {
        self.ip.map(|ip| ip.proto)
    }

    /// Source and destination port, for protocols whose header starts with two ports.
    pub fn l4_ports(&self) -> Option<(u16, u16)> {
        self.ip.and_then(|ip| ip.ports())
    }

    /// Source port, or the echo identifier for ICMP echo; 0 when neither.
    pub fn src_port(&self) -> u16 {
        match self.ip.map(|ip| ip.l4) {
            Some(L4::Ports { src, .. }) => src,
            Some(L4::Icmp { id: Some(id), .. }) => id,
            _ => 0,
        }
    }

    /// Destination port, or the echo identifier for ICMP echo; 0 when neither.
    pub fn dst_port(&self) -> u16 {
        match self.ip.map(|ip| ip.l4) {
            Some(L4::Ports { dst, .. }) => dst,
            Some(L4::Icmp { id: Some(id), .. }) => id,
            _ => 0,
        }
    }

    /// The ICMP identifier of an echo-like message.
    pub fn echo_id(&self) -> Option<u16> {
        match self.ip.map(|ip| ip.l4) {
            Some(L4::Icmp { id, .. }) => id,
            _ => None,
        }
    }

    /// True for an IP fragment.
    pub fn is_fragment(&self) -> bool {
        self.ip.is_some_and(|ip| ip.fragment)
    }
}

/// One parsed layer: an Ethernet frame, or a typed payload inside a tunnel.
struct Layer<'a> {
    l2: Option<InnerL2>,
    ethertype: u16,
    ip: Option<IpFlow>,
    /// The IP payload after extension headers (empty for fragments and non-IP).
    ip_payload: &'a [u8],
}

fn parse_ethernet(frame: &[u8]) -> Option<Layer<'_>> {
    let pkt = LaxSlicedPacket::from_ethernet(frame).ok()?;
    let Some(LinkSlice::Ethernet2(eth)) = &pkt.link else {
        return None;
    };
    let l2 = InnerL2 {
        src_mac: eth.source(),
        dst_mac: eth.destination(),
        vlan_tci: None,
    };
    let ethertype = eth.ether_type().0;
    Some(layer_from(pkt, ethertype, Some(l2)))
}

fn parse_typed(ethertype: u16, payload: &[u8]) -> Layer<'_> {
    layer_from(
        LaxSlicedPacket::from_ether_type(EtherType(ethertype), payload),
        ethertype,
        None,
    )
}

fn layer_from<'a>(
    pkt: LaxSlicedPacket<'a>,
    mut ethertype: u16,
    mut l2: Option<InnerL2>,
) -> Layer<'a> {
    let mut vlan_tci = None;
    for ext in &pkt.link_exts {
        match ext {
            LaxLinkExtSlice::Vlan(vlan) => {
                if vlan_tci.is_none() {
                    let tag = vlan.slice();
                    vlan_tci = Some(u16::from_be_bytes([tag[0], tag[1]]));
                }
                ethertype = vlan.ether_type().0;
            }
            // A bond sees MACsec as an opaque EtherType: stop here even though
            // etherparse may have looked inside an unencrypted payload.
            LaxLinkExtSlice::Macsec(_) => {
                if let Some(l2) = l2.as_mut() {
                    l2.vlan_tci = vlan_tci;
                }
                return Layer {
                    l2,
                    ethertype: ethertype::MACSEC,
                    ip: None,
                    ip_payload: &[],
                };
            }
        }
    }
    if let Some(l2) = l2.as_mut() {
        l2.vlan_tci = vlan_tci;
    }
    let (ip, ip_payload) = match &pkt.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let p = v4.payload();
            let ext_headers = !v4.extensions().is_empty();
            flow_from(
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                p.ip_number.0,
                p.fragmented,
                ext_headers,
                p.payload,
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let p = v6.payload();
            let exts = v6.extensions();
            let has_frag_header = has_fragment_header(h.next_header().0, exts.slice());
            flow_from(
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                p.ip_number.0,
                p.fragmented || has_frag_header,
                !exts.is_empty(),
                p.payload,
            )
        }
        _ => (None, &[][..]),
    };
    Layer {
        l2,
        ethertype,
        ip,
        ip_payload,
    }
}

/// Whether IPv6 extension headers (as etherparse delimited them) include a
/// fragment header, atomic fragments included. Walked by hand: etherparse
/// 0.21's extension iterator reads past the slice when parsing stopped at a
/// truncated header (found by the fuzz loop in `tests/frames.rs`).
fn has_fragment_header(first: u8, mut exts: &[u8]) -> bool {
    let mut next = first;
    loop {
        let len = match (next, exts) {
            (44, _) => return true,
            (0 | 43 | 60, [_, l, ..]) => (usize::from(*l) + 1) * 8,
            (ip_proto::AH, [_, l, ..]) => (usize::from(*l) + 2) * 4,
            _ => return false,
        };
        match exts.get(len..) {
            Some(rest) => {
                next = exts[0];
                exts = rest;
            }
            None => return false,
        }
    }
}

fn flow_from(
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    fragment: bool,
    ext_headers: bool,
    payload: &[u8],
) -> (Option<IpFlow>, &[u8]) {
    let (l4, payload) = if fragment {
        (L4::None, &[][..])
    } else {
        (l4_from(src.is_ipv6(), proto, payload), payload)
    };
    let flow = IpFlow {
        src,
        dst,
        proto,
        fragment,
        ext_headers,
        l4,
    };
    (Some(flow), payload)
}

/// Where the kernel's `proto_ports_offset` finds the port word of a protocol.
pub(crate) fn port_offset(proto: u8) -> Option<usize> {
    match proto {
        ip_proto::TCP
        | ip_proto::UDP
        | ip_proto::DCCP
        | ip_proto::ESP
        | ip_proto::SCTP
        | ip_proto::UDPLITE => Some(0),
        ip_proto::AH => Some(4),
        _ => None,
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

fn port_word(proto: u8, l4: &[u8]) -> Option<(u16, u16)> {
    let at = port_offset(proto)?;
    Some((be16(l4, at)?, be16(l4, at + 2)?))
}

/// ICMP types that carry an identifier, as the kernel's `icmp_has_id` lists
/// them (it does not look at the address family).
fn icmp_has_id(ty: u8) -> bool {
    matches!(ty, 0 | 8 | 13 | 14 | 128 | 129)
}

fn icmp_is_error(proto: u8, ty: u8) -> bool {
    match proto {
        ip_proto::ICMP => matches!(ty, 3 | 4 | 5 | 11 | 12),
        _ => matches!(ty, 1..=4),
    }
}

fn l4_from(v6: bool, proto: u8, payload: &[u8]) -> L4 {
    match proto {
        ip_proto::ICMP | ip_proto::ICMPV6 => {
            // The kernel reads a full 8-byte ICMP header or nothing.
            if payload.len() < 8 {
                return L4::None;
            }
            let (ty, code) = (payload[0], payload[1]);
            if icmp_has_id(ty) {
                L4::Icmp {
                    ty,
                    code,
                    id: be16(payload, 4),
                }
            } else if icmp_is_error(proto, ty) {
                L4::IcmpError {
                    ty,
                    code,
                    quoted: quoted(v6, &payload[8..]),
                }
            } else {
                L4::Icmp { ty, code, id: None }
            }
        }
        _ => match port_word(proto, payload) {
            Some((src, dst)) => L4::Ports { src, dst },
            None => L4::None,
        },
    }
}

/// Reads the packet an ICMP error quotes the way the kernel's bonding code
/// does: as the same address family as the outer packet, without validating
/// it, needing only the fixed IP header.
fn quoted(v6: bool, b: &[u8]) -> Option<Quoted> {
    if v6 {
        let hdr = b.get(..40)?;
        let mut src = [0u8; 16];
        let mut dst = [0u8; 16];
        src.copy_from_slice(&hdr[8..24]);
        dst.copy_from_slice(&hdr[24..40]);
        Some(Quoted {
            src: IpAddr::from(src),
            dst: IpAddr::from(dst),
            ports: port_word(hdr[6], &b[40..]),
        })
    } else {
        let hdr = b.get(..20)?;
        let src = [hdr[12], hdr[13], hdr[14], hdr[15]];
        let dst = [hdr[16], hdr[17], hdr[18], hdr[19]];
        let ihl = usize::from(hdr[0] & 0x0f) * 4;
        let fragment = u16::from_be_bytes([hdr[6], hdr[7]]) & 0x3fff != 0;
        let ports = if fragment {
            None
        } else {
            port_word(hdr[9], b.get(ihl..).unwrap_or(&[]))
        };
        Some(Quoted {
            src: IpAddr::from(src),
            dst: IpAddr::from(dst),
            ports,
        })
    }
}

/// What a tunnel header says follows it.
enum Carried<'a> {
    Ethernet(&'a [u8]),
    Typed(u16, &'a [u8]),
    Truncated,
}

fn tunnel_in<'a>(ip: &IpFlow, payload: &'a [u8]) -> Option<(Tunnel, Carried<'a>)> {
    if ip.fragment {
        return None;
    }
    match ip.proto {
        ip_proto::IPIP => Some((Tunnel::IpInIp, Carried::Typed(ethertype::IPV4, payload))),
        ip_proto::IPV6 => Some((Tunnel::IpInIp, Carried::Typed(ethertype::IPV6, payload))),
        ip_proto::GRE => gre(payload),
        ip_proto::UDP if ip.ports().is_some_and(|(_, dst)| dst == VXLAN_PORT) => vxlan(payload),
        _ => None,
    }
}

/// GRE (RFC 2784/2890) by hand, following the kernel's flow dissector:
/// version 0 only, no routing, optional checksum, key and sequence words.
fn gre(b: &[u8]) -> Option<(Tunnel, Carried<'_>)> {
    const CSUM: u16 = 0x8000;
    const ROUTING: u16 = 0x4000;
    const KEY: u16 = 0x2000;
    const SEQ: u16 = 0x1000;
    const VERSION: u16 = 0x0007;
    let (Some(flags), Some(proto)) = (be16(b, 0), be16(b, 2)) else {
        return Some((Tunnel::Gre, Carried::Truncated));
    };
    if flags & (ROUTING | VERSION) != 0 {
        // The kernel does not look inside GRE with routing or PPTP's version 1.
        return None;
    }
    let mut offset = 4;
    if flags & CSUM != 0 {
        offset += 4;
    }
    if flags & KEY != 0 {
        if b.len() < offset + 4 {
            return Some((Tunnel::Gre, Carried::Truncated));
        }
        offset += 4;
    }
    if flags & SEQ != 0 {
        offset += 4;
    }
    let rest = b.get(offset..).unwrap_or(&[]);
    if proto == ethertype::TEB {
        if rest.len() < 14 {
            return Some((Tunnel::Gre, Carried::Truncated));
        }
        return Some((Tunnel::Gre, Carried::Ethernet(rest)));
    }
    Some((Tunnel::Gre, Carried::Typed(proto, rest)))
}

/// VXLAN (RFC 7348) by hand: 8 bytes of UDP, 8 bytes of VXLAN with the
/// "VNI valid" flag, then an Ethernet frame.
fn vxlan(udp: &[u8]) -> Option<(Tunnel, Carried<'_>)> {
    let flags = *udp.get(8)?;
    if flags & 0x08 == 0 || udp.len() < 16 {
        return None;
    }
    let inner = &udp[16..];
    if inner.len() < 14 {
        return Some((Tunnel::Vxlan, Carried::Truncated));
    }
    Some((Tunnel::Vxlan, Carried::Ethernet(inner)))
}

fn descend(outer: &Layer<'_>) -> Option<InnerKey> {
    let mut inner = None;
    let mut ip = outer.ip;
    let mut payload = outer.ip_payload;
    let mut first: Option<Tunnel> = None;
    for depth in 1..=MAX_TUNNEL_DEPTH {
        let Some(flow) = ip else { break };
        let Some((kind, carried)) = tunnel_in(&flow, payload) else {
            break;
        };
        if kind == Tunnel::Vxlan && first.is_some() {
            break;
        }
        let tunnel = *first.get_or_insert(kind);
        let layer = match carried {
            Carried::Ethernet(frame) => parse_ethernet(frame),
            Carried::Typed(ethertype, bytes) => Some(parse_typed(ethertype, bytes)),
            Carried::Truncated => None,
        };
        let Some(layer) = layer else {
            inner = Some(InnerKey {
                tunnel,
                depth,
                ethertype: None,
                l2: None,
                ip: None,
            });
            break;
        };
        inner = Some(InnerKey {
            tunnel,
            depth,
            ethertype: Some(layer.ethertype),
            l2: layer.l2,
            ip: layer.ip,
        });
        ip = layer.ip;
        payload = layer.ip_payload;
    }
    inner
}

/// Why a `lagkit flow` request names no flow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlowKeyError {
    /// An address is not IP:PORT.
    #[error("flow: '{src}' and '{dst}' must be IP:PORT (e.g. 10.0.0.1:40000)")]
    NotAddresses {
        /// The source given.
        src: String,
        /// The destination given.
        dst: String,
    },
    /// Not tcp/udp, or an IPv4 and an IPv6 address.
    #[error("flow: --proto must be tcp or udp, and both addresses of one family")]
    ProtoOrFamily,
}

/// The flow a `lagkit flow` request (or the switch's `test etherchannel
/// load-balance`) names: `proto` tcp or udp, `src` and `dst` as IP:PORT;
/// its MACs are the caller's.
pub fn flow_key(proto: &str, src: &str, dst: &str) -> Result<FlowKey, FlowKeyError> {
    let parse = |s: &str| s.parse::<std::net::SocketAddr>();
    let (Ok(a), Ok(b)) = (parse(src), parse(dst)) else {
        return Err(FlowKeyError::NotAddresses {
            src: src.into(),
            dst: dst.into(),
        });
    };
    let key = match (proto, a, b) {
        ("tcp", std::net::SocketAddr::V4(a), std::net::SocketAddr::V4(b)) => {
            FlowKey::tcp4(*a.ip(), a.port(), *b.ip(), b.port())
        }
        ("udp", std::net::SocketAddr::V4(a), std::net::SocketAddr::V4(b)) => {
            FlowKey::udp4(*a.ip(), a.port(), *b.ip(), b.port())
        }
        ("tcp", std::net::SocketAddr::V6(a), std::net::SocketAddr::V6(b)) => {
            FlowKey::tcp6(*a.ip(), a.port(), *b.ip(), b.port())
        }
        ("udp", std::net::SocketAddr::V6(a), std::net::SocketAddr::V6(b)) => {
            FlowKey::udp6(*a.ip(), a.port(), *b.ip(), b.port())
        }
        _ => return Err(FlowKeyError::ProtoOrFamily),
    };
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_keys_from_addresses() {
        let k = flow_key("tcp", "10.0.0.1:40000", "10.0.0.2:5201").unwrap();
        assert_eq!(
            k,
            FlowKey::tcp4(
                "10.0.0.1".parse().unwrap(),
                40000,
                "10.0.0.2".parse().unwrap(),
                5201
            )
        );
        assert!(flow_key("udp", "[::1]:1", "[::2]:2").is_ok());
        let bad = flow_key("tcp", "10.0.0.1", "10.0.0.2:1").unwrap_err();
        assert!(bad.to_string().contains("must be IP:PORT"), "{bad}");
        let mixed = flow_key("tcp", "10.0.0.1:1", "[::2]:2").unwrap_err();
        assert_eq!(mixed, FlowKeyError::ProtoOrFamily);
        assert!(mixed.to_string().contains("one family"), "{mixed}");
        assert!(flow_key("sctp", "10.0.0.1:1", "10.0.0.2:2").is_err());
    }

    #[test]
    fn flow_key_stays_small_and_copy() {
        fn copy<T: Copy>() {}
        copy::<FlowKey>();
        // 200 bytes on 64-bit targets today; the guard catches accidental growth.
        assert!(core::mem::size_of::<FlowKey>() <= 256);
    }

    #[test]
    fn synthetic_keys_have_matching_ethertypes() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
        assert_eq!(k.ethertype, ethertype::IPV4);
        assert_eq!(k.l4_ports(), Some((1234, 80)));
        let k6 = FlowKey::udp6(Ipv6Addr::LOCALHOST, 1, Ipv6Addr::LOCALHOST, 2);
        assert_eq!(k6.ethertype, ethertype::IPV6);
        assert_eq!(k6.ip_proto(), Some(ip_proto::UDP));
    }

    #[test]
    fn fragment_drops_ports() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80).as_fragment();
        assert!(k.is_fragment());
        assert_eq!(k.l4_ports(), None);
        assert_eq!(k.src_port(), 0);
    }

    #[test]
    fn reversed_swaps_everything() {
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80)
            .with_macs([1; 6], [2; 6]);
        let r = k.reversed();
        assert_eq!(r.src_mac, [2; 6]);
        assert_eq!(r.src_ip(), Some(IpAddr::from([10, 0, 0, 2])));
        assert_eq!(r.l4_ports(), Some((80, 1234)));
        assert_eq!(r.reversed(), k);
    }

    #[test]
    fn vlan_setter_masks_the_id() {
        let k = FlowKey::default().with_vlan(0xf123);
        assert_eq!(k.vlan_tci, Some(0x0123));
        assert_eq!(k.vlan_id(), Some(0x0123));
    }

    #[test]
    fn fragment_header_walk_is_bounded() {
        // Hop-by-hop (next: fragment) then the fragment header itself.
        assert!(has_fragment_header(0, &[44, 0, 1, 4, 0, 0, 0, 0]));
        // Destination options claiming 16 bytes with only 8 present.
        assert!(!has_fragment_header(60, &[44, 1, 0, 0, 0, 0, 0, 0]));
        assert!(!has_fragment_header(0, &[]));
        assert!(!has_fragment_header(6, &[]));
    }

    #[test]
    fn quoted_ipv4_reads_ports_after_options() {
        // IHL 6 (24-byte header), TCP, 10.0.0.1 -> 10.0.0.2, ports 1000 -> 80.
        let mut b = [0u8; 28];
        b[0] = 0x46;
        b[9] = ip_proto::TCP;
        b[12..16].copy_from_slice(&[10, 0, 0, 1]);
        b[16..20].copy_from_slice(&[10, 0, 0, 2]);
        b[24..28].copy_from_slice(&[0x03, 0xe8, 0x00, 0x50]);
        let q = quoted(false, &b).unwrap();
        assert_eq!(q.ports, Some((1000, 80)));
        // Cut before the ports: addresses but no ports. Cut inside the header: nothing.
        assert_eq!(quoted(false, &b[..25]).unwrap().ports, None);
        assert_eq!(quoted(false, &b[..19]), None);
    }
}
