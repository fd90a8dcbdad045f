//! Flow exports: NetFlow v1, v5, v7, v9, IPFIX and sFlow v5 datagrams, read
//! from a capture of the export traffic, become the planner's flows.
//!
//! Routers and switches already summarise their traffic for collectors;
//! a capture of what they send (UDP to 2055, 4739 or 6343) is a compact
//! picture of a day's traffic. NetFlow v9 and IPFIX are decoded by
//! [`crate::sets`], with one template cache per exporter and observation
//! domain (source ID), so two routers' template 256 never mix, and every
//! element the planner does not read (enterprise-specific, variable
//! length) only stepped over; NetFlow v5 and v7, whose layout is fixed,
//! by the `netflow_parser` crate, v1 (which it does not read) here; sFlow v5 by the `sflow-parser` crate (no dependencies, every
//! structure of the sFlow v5 specification and its extensions, each with
//! a test; kept rather than a decoder of our own), whose flow samples
//! carry the first bytes of a sampled packet.
//!
//! Records are scaled by their sampling rate (a NetFlow/IPFIX record's own
//! sampling field, else the last sampling interval the exporter announced
//! in options data; an sFlow flow sample's `sampling_rate`) and folded
//! into a table of distinct flows that never holds more than
//! [`MAX_FLOWS`] entries, so an export of any length is read in bounded
//! memory. What could not be used is counted, never fatal: data sets that
//! came before their template, records without addresses, records whose
//! counters cannot be true, exports in versions lagkit cannot read, flows
//! past the table's cap.

use crate::flow::{Dir, Flow};
use crate::input::Host;
use lagkit_hash::{FlowKey, IpFlow, L4};
use netflow_parser::{NetflowPacket, NetflowParser};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The most distinct flows (header key and direction) one input is folded
/// into: 2^19. A flow first seen when the table is full is counted in
/// [`ExportStats::over_cap`] and left out; its bytes are reported. About
/// 220 MiB at the cap.
pub const MAX_FLOWS: usize = 1 << 19;

/// The most exporters (address and observation domain) whose sampling
/// interval is remembered, and counted: 10,000.
pub const MAX_EXPORTERS: usize = 10_000;

/// Bytes a NetFlow/IPFIX octet count leaves out of each packet's frame:
/// the Ethernet header (the IP packet is what they count), added back so
/// that shares match what the links carry.
pub const ETHERNET_HEADER: u64 = 14;

/// The most bytes one record may stand for once scaled by its sampling
/// rate: 2^50 (1.1 PB, days of a 100 Gbit/s link), as for a listed flow.
pub const MAX_RECORD_BYTES: u64 = crate::input::MAX_FLOW_BYTES;

/// The most bytes one input's records may add up to: 2^62. A record that
/// would take the total past it is counted as impossible, so that no sum
/// the planner prints saturates.
pub const MAX_TOTAL_BYTES: u64 = 1 << 62;

/// The largest IP packet a record's octets may stand for (IPv4's total
/// length; IPv6 jumbograms are not exported in practice).
const MAX_IP_PACKET: u64 = 65_535;

/// How to read a capture: as the traffic itself, or as flow exports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowFormat {
    /// Decide from the first UDP datagrams: exports when every one is
    /// addressed to a collector port and carries a matching version.
    #[default]
    Auto,
    /// The packets are the traffic.
    Packets,
    /// NetFlow datagrams (v1, v5, v7 or v9), whatever their port.
    Netflow,
    /// IPFIX messages, whatever their port.
    Ipfix,
    /// sFlow v5 datagrams, whatever their port.
    Sflow,
}

impl std::str::FromStr for FlowFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<FlowFormat, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "auto" => FlowFormat::Auto,
            "packets" => FlowFormat::Packets,
            "netflow" | "netflow9" | "v9" | "netflow5" | "v5" => FlowFormat::Netflow,
            "ipfix" => FlowFormat::Ipfix,
            "sflow" => FlowFormat::Sflow,
            _ => {
                return Err(format!(
                    "{s:?} is not auto, packets, netflow, ipfix or sflow"
                ))
            }
        })
    }
}

/// One of the export protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportKind {
    /// NetFlow version 9 (RFC 3954).
    Netflow,
    /// NetFlow version 1 (the first fixed layout: a 16-byte header and
    /// 48-byte IPv4 records).
    #[serde(rename = "netflow1")]
    NetflowV1,
    /// NetFlow version 5 (Cisco's fixed layout: a 24-byte header and
    /// 48-byte IPv4 records).
    #[serde(rename = "netflow5")]
    NetflowV5,
    /// NetFlow version 7 (v5's layout for Catalyst switches, 52-byte
    /// records).
    #[serde(rename = "netflow7")]
    NetflowV7,
    /// IPFIX (RFC 7011).
    Ipfix,
    /// sFlow version 5.
    Sflow,
}

impl ExportKind {
    /// How a user names it.
    pub fn name(self) -> &'static str {
        match self {
            ExportKind::Netflow => "NetFlow v9",
            ExportKind::NetflowV1 => "NetFlow v1",
            ExportKind::NetflowV5 => "NetFlow v5",
            ExportKind::NetflowV7 => "NetFlow v7",
            ExportKind::Ipfix => "IPFIX",
            ExportKind::Sflow => "sFlow v5",
        }
    }

    /// Whether `--flow-format` names this kind's protocol.
    fn is(self, format: ExportKind) -> bool {
        let family = |k| match k {
            ExportKind::NetflowV1 | ExportKind::NetflowV5 | ExportKind::NetflowV7 => {
                ExportKind::Netflow
            }
            k => k,
        };
        family(self) == family(format)
    }

    /// The kind whose version field `payload` starts with. NetFlow v1, v5
    /// and v7 have no set structure to check, so their length must be
    /// exactly what their record count says.
    pub fn of_payload(payload: &[u8]) -> Option<ExportKind> {
        // The record count (0, never read, when the payload has none).
        let count = |p: &[u8]| {
            p.get(2..4)
                .map_or(0, |c| usize::from(u16::from_be_bytes([c[0], c[1]])))
        };
        match payload {
            [0, 1, ..]
                if (1..=24).contains(&count(payload))
                    && payload.len() == v1::HEADER + v1::RECORD * count(payload) =>
            {
                Some(ExportKind::NetflowV1)
            }
            [0, 5, ..]
                if (1..=30).contains(&count(payload))
                    && payload.len() == 24 + 48 * count(payload) =>
            {
                Some(ExportKind::NetflowV5)
            }
            [0, 7, ..]
                if (1..=28).contains(&count(payload))
                    && payload.len() == 24 + 52 * count(payload) =>
            {
                Some(ExportKind::NetflowV7)
            }
            [0, 9, ..] if payload.len() >= 20 => Some(ExportKind::Netflow),
            [0, 10, ..] if payload.len() >= 16 => Some(ExportKind::Ipfix),
            [0, 0, 0, 5, ..] if payload.len() >= 28 => Some(ExportKind::Sflow),
            _ => None,
        }
    }
}

/// The UDP ports collectors listen on: NetFlow's 2055 (and Cisco's 9995,
/// 9996), IPFIX's 4739, sFlow's 6343.
pub const COLLECTOR_PORTS: [u16; 5] = [2055, 9995, 9996, 4739, 6343];

/// The export a UDP datagram to `port` holds, judged by the port and the
/// version field (both must agree; see [`FlowFormat::Auto`]).
pub fn sniff(port: u16, payload: &[u8]) -> Option<ExportKind> {
    let kind = ExportKind::of_payload(payload)?;
    let port_fits = match kind {
        ExportKind::Netflow
        | ExportKind::NetflowV1
        | ExportKind::NetflowV5
        | ExportKind::NetflowV7
        | ExportKind::Ipfix => {
            matches!(port, 2055 | 9995 | 9996 | 4739)
        }
        ExportKind::Sflow => port == 6343,
    };
    port_fits.then_some(kind)
}

/// What an export lagkit cannot read is, when a UDP datagram to a
/// collector port ([`COLLECTOR_PORTS`]) carries a version field of NetFlow
/// (1 to 10) or sFlow (2 to 5) and is not one lagkit reads: `NetFlow v8`,
/// `sFlow v4`, `NetFlow v5 of the wrong length`. Such datagrams are never
/// planned as traffic.
pub fn unreadable_export(port: u16, payload: &[u8]) -> Option<String> {
    if !COLLECTOR_PORTS.contains(&port) || ExportKind::of_payload(payload).is_some() {
        return None;
    }
    match payload {
        [0, 0, 0, v @ 2..=5, ..] => Some(format!("sFlow v{v}")),
        [0, v @ (1 | 5 | 7), ..] => Some(format!("NetFlow v{v} of the wrong length")),
        [0, v @ 2..=8, ..] => Some(format!("NetFlow v{v}")),
        [0, 9 | 10, ..] => Some("NetFlow or IPFIX cut short".into()),
        _ => None,
    }
}

/// Whether a datagram to `port` looks like an export lagkit cannot read
/// ([`unreadable_export`]).
pub fn looks_like_export(port: u16, payload: &[u8]) -> bool {
    unreadable_export(port, payload).is_some()
}

/// What reading the exports found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExportStats {
    /// Datagrams read, per protocol.
    pub datagrams: u64,
    /// The protocols seen.
    pub kinds: Vec<ExportKind>,
    /// Distinct exporters (address, and observation domain or source ID
    /// for NetFlow/IPFIX; agent and sub-agent for sFlow).
    pub exporters: u64,
    /// Flow records (NetFlow/IPFIX) or flow samples (sFlow) used.
    pub records: u64,
    /// Records scaled by a sampling rate above 1.
    pub sampled_records: u64,
    /// Data sets that arrived before their template (NetFlow/IPFIX): their
    /// records cannot be decoded and were dropped.
    pub before_template_sets: u64,
    /// The bytes of those data sets.
    pub before_template_bytes: u64,
    /// Records without IP addresses, or sFlow samples without a packet
    /// header record: dropped.
    pub unusable_records: u64,
    /// Datagrams the decoder refused (damaged or cut), in part or whole.
    pub damaged_datagrams: u64,
    /// Datagrams to collector ports in versions lagkit cannot read (see
    /// [`unreadable_export`]): dropped, and named in `unreadable_kinds`.
    pub unreadable_datagrams: u64,
    /// What those datagrams were, e.g. `NetFlow v8`.
    pub unreadable_kinds: Vec<String>,
    /// Export datagrams the capture's snap length cut: dropped.
    pub snapped_datagrams: u64,
    /// Records whose counters cannot be true (more bytes than their
    /// packets can carry, more than [`MAX_RECORD_BYTES`] once sampled, or
    /// a total past [`MAX_TOTAL_BYTES`]): dropped, never summed.
    pub impossible_records: u64,
    /// UDP datagrams of the capture that are not exports of the format read.
    pub not_export: u64,
    /// Records of flows first seen after the table held [`MAX_FLOWS`]: dropped.
    pub over_cap: u64,
    /// The bytes (scaled) of those records.
    pub over_cap_bytes: u64,
    /// Flows of ICMP or ICMPv6: exports carry no echo identifier, which
    /// Linux's layer3+4 and encap3+4 hash ([`CaptureStats::notes`]).
    ///
    /// [`CaptureStats::notes`]: crate::input::CaptureStats::notes
    pub icmp_flows: u64,
    /// Flows whose records carried no MAC address (zeros for MAC hashes).
    pub macless_flows: u64,
}

/// Distinct flows and their (scaled) bytes, at most `cap` of them.
#[derive(Debug)]
pub struct FlowTable {
    flows: HashMap<(FlowKey, Dir), u64>,
    cap: usize,
}

impl Default for FlowTable {
    fn default() -> FlowTable {
        FlowTable::with_cap(MAX_FLOWS)
    }
}

impl FlowTable {
    /// A table of at most `cap` flows.
    pub fn with_cap(cap: usize) -> FlowTable {
        FlowTable {
            flows: HashMap::new(),
            cap,
        }
    }

    /// Adds `bytes` to a flow; false (nothing added) when the flow is new
    /// and the table full.
    pub fn add(&mut self, key: FlowKey, dir: Dir, bytes: u64) -> bool {
        let full = self.flows.len() >= self.cap;
        match self.flows.get_mut(&(key, dir)) {
            Some(b) => *b = b.saturating_add(bytes),
            None if full => return false,
            None => {
                self.flows.insert((key, dir), bytes);
            }
        }
        true
    }

    /// Distinct flows held.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// No flow yet.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// The flows, largest first (then by key, for a stable order).
    pub fn into_flows(self) -> Vec<Flow> {
        let mut v: Vec<Flow> = self
            .flows
            .into_iter()
            .map(|((key, dir), bytes)| Flow {
                key,
                dir,
                bytes: bytes.min(crate::input::MAX_FLOW_BYTES),
                demand_bps: None,
            })
            .collect();
        v.sort_by_cached_key(|f| (std::cmp::Reverse(f.bytes), format!("{:?}", f.key)));
        v
    }
}

/// A sampling rate as a fraction: a record stands for `num / den` times
/// its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rate {
    num: u64,
    den: u64,
}

impl Rate {
    const ONE: Rate = Rate { num: 1, den: 1 };

    fn of(num: u64, den: u64) -> Option<Rate> {
        (num > 0 && den > 0).then_some(Rate { num, den })
    }

    fn scale(self, n: u64) -> u64 {
        let v = u128::from(n) * u128::from(self.num) / u128::from(self.den);
        u64::try_from(v).unwrap_or(u64::MAX)
    }

    fn is_one(self) -> bool {
        self.num == self.den
    }
}

/// The fields of one NetFlow/IPFIX record the planner reads, by
/// information element number (the same numbers in both).
#[derive(Default)]
struct Fields {
    src: Option<IpAddr>,
    dst: Option<IpAddr>,
    sport: Option<u16>,
    dport: Option<u16>,
    proto: Option<u8>,
    octets: Option<u64>,
    packets: Option<u64>,
    l2_octets: Option<u64>,
    src_mac: Option<[u8; 6]>,
    dst_mac: Option<[u8; 6]>,
    /// postSourceMacAddress (81) and postDestinationMacAddress (57): the
    /// MACs after the observation point, as the egress link carries them.
    post_src_mac: Option<[u8; 6]>,
    post_dst_mac: Option<[u8; 6]>,
    /// flowDirection (61): 0 ingress, 1 egress.
    direction: Option<u64>,
    vlan: Option<u16>,
    sampling: Sampling,
}

/// Sampling fields of a record or of options data.
#[derive(Default)]
struct Sampling {
    /// samplingInterval (34) or samplerRandomInterval (50): 1 in N.
    interval: Option<u64>,
    /// samplingPacketInterval (305) and samplingPacketSpace (306): N
    /// selected, then M skipped.
    packet_interval: Option<u64>,
    packet_space: Option<u64>,
    /// samplingSize (309) out of samplingPopulation (310).
    size: Option<u64>,
    population: Option<u64>,
}

impl Sampling {
    fn rate(&self) -> Option<Rate> {
        if let Some(n) = self.interval.filter(|n| *n > 0) {
            return Rate::of(n, 1);
        }
        if let Some(i) = self.packet_interval.filter(|n| *n > 0) {
            let space = self.packet_space.unwrap_or(0);
            return Rate::of(i.saturating_add(space), i);
        }
        match (self.size, self.population) {
            (Some(s), Some(p)) if s > 0 && p >= s => Rate::of(p, s),
            _ => None,
        }
    }
}

impl Fields {
    /// One IANA element's value bytes (numbers in reduced-size encoding,
    /// RFC 7011 6.2; a value of a length the element cannot have is left
    /// unset).
    fn set(&mut self, id: u16, v: &[u8]) {
        let num = || crate::sets::number(v);
        match id {
            1 => self.octets = num(),
            2 => self.packets = num(),
            85 if self.octets.is_none() => self.octets = num(),
            86 if self.packets.is_none() => self.packets = num(),
            352 => self.l2_octets = num(),
            4 => self.proto = num().and_then(|n| u8::try_from(n).ok()),
            7 => self.sport = num().and_then(|n| u16::try_from(n).ok()),
            11 => self.dport = num().and_then(|n| u16::try_from(n).ok()),
            8 | 27 => self.src = ip_of(v),
            12 | 28 => self.dst = ip_of(v),
            56 => self.src_mac = mac_of(v),
            80 => self.dst_mac = mac_of(v),
            81 => self.post_src_mac = mac_of(v),
            57 => self.post_dst_mac = mac_of(v),
            61 => self.direction = num(),
            58 => self.vlan = num().and_then(|n| u16::try_from(n).ok()),
            34 | 50 => self.sampling.interval = num(),
            305 => self.sampling.packet_interval = num(),
            306 => self.sampling.packet_space = num(),
            309 => self.sampling.size = num(),
            310 => self.sampling.population = num(),
            _ => {}
        }
    }

    /// The flow key, when the record names both addresses.
    fn key(&self) -> Option<FlowKey> {
        let (src, dst) = (self.src?, self.dst?);
        if src.is_ipv4() != dst.is_ipv4() {
            return None;
        }
        let proto = self.proto.unwrap_or(0);
        let l4 = match (self.sport, self.dport) {
            (Some(s), Some(d)) if matches!(proto, 6 | 17 | 132 | 33) => {
                L4::Ports { src: s, dst: d }
            }
            _ => L4::None,
        };
        let mut key = FlowKey::ip(IpFlow::new(src, dst, proto, l4));
        let (s, d) = self.macs();
        if s.is_some() || d.is_some() {
            key = key.with_macs(s.unwrap_or_default(), d.unwrap_or_default());
        }
        if let Some(v) = self.vlan.filter(|v| (1..=4094).contains(v)) {
            key = key.with_vlan(v);
        }
        Some(key)
    }

    /// The MACs of the frames a record counts. An egress record (flow
    /// direction 1) counts frames as the egress link carries them: its
    /// post-MACs (81, 57) first; any other record its MACs as received
    /// (56, 80) first. Each falls back to the other element.
    fn macs(&self) -> (Option<[u8; 6]>, Option<[u8; 6]>) {
        let ingress = (self.src_mac, self.dst_mac);
        let egress = (self.post_src_mac, self.post_dst_mac);
        let (first, then) = if self.direction == Some(1) {
            (egress, ingress)
        } else {
            (ingress, egress)
        };
        (first.0.or(then.0), first.1.or(then.1))
    }

    /// Whether the counters can be true: no more octets than the packets
    /// can carry (65,535 bytes each), at least one packet when there are
    /// octets.
    fn possible(&self) -> bool {
        match (self.octets.or(self.l2_octets), self.packets) {
            (Some(o), Some(p)) => {
                u128::from(o) <= u128::from(p) * u128::from(MAX_IP_PACKET + ETHERNET_HEADER)
            }
            _ => true,
        }
    }

    /// Frame bytes: the layer-2 count when given, else the IP count plus
    /// an Ethernet header per packet.
    fn frame_bytes(&self) -> u64 {
        match self.l2_octets {
            Some(b) => b,
            None => self
                .octets
                .unwrap_or(0)
                .saturating_add(self.packets.unwrap_or(0).saturating_mul(ETHERNET_HEADER)),
        }
    }
}

fn ip_of(v: &[u8]) -> Option<IpAddr> {
    match v.len() {
        4 => <[u8; 4]>::try_from(v).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(v).ok().map(IpAddr::from),
        _ => None,
    }
}

fn mac_of(v: &[u8]) -> Option<[u8; 6]> {
    v.try_into().ok()
}

/// The direction of a flow under `host`, or `None` when it is neither
/// from nor to it.
pub(crate) fn dir_of(key: &FlowKey, host: Option<Host>) -> Option<Dir> {
    match host {
        None => Some(Dir::Out),
        Some(Host::Mac(m)) if key.src_mac == m => Some(Dir::Out),
        Some(Host::Mac(m)) if key.dst_mac == m => Some(Dir::In),
        Some(Host::Ip(a)) if key.src_ip() == Some(a) => Some(Dir::Out),
        Some(Host::Ip(a)) if key.dst_ip() == Some(a) => Some(Dir::In),
        Some(_) => None,
    }
}

/// Reads export datagrams one at a time and folds their records into
/// flows. Sans-IO: the caller hands it each datagram with its sender.
pub struct ExportReader {
    only: Option<ExportKind>,
    host: Option<Host>,
    /// NetFlow v9 and IPFIX: templates per exporter and domain.
    sets: crate::sets::Decoder,
    /// NetFlow v5 and v7 (no state between datagrams).
    fixed: NetflowParser,
    sampling: HashMap<(SocketAddr, u32), Rate>,
    exporters: std::collections::HashSet<(SocketAddr, u32)>,
    table: FlowTable,
    stats: ExportStats,
    unrelated: u64,
    /// The bytes of every record taken so far (at most [`MAX_TOTAL_BYTES`]).
    total: u64,
}

impl ExportReader {
    /// A reader of the kind `only` (every kind when `None`), with
    /// directions given by `host`, into a table of at most `cap` flows.
    pub fn new(only: Option<ExportKind>, host: Option<Host>, cap: usize) -> ExportReader {
        ExportReader {
            only,
            host,
            sets: crate::sets::Decoder::new(),
            fixed: NetflowParser::default(),
            sampling: HashMap::new(),
            exporters: Default::default(),
            table: FlowTable::with_cap(cap),
            stats: ExportStats::default(),
            unrelated: 0,
            total: 0,
        }
    }

    /// What was read so far.
    pub fn stats(&self) -> &ExportStats {
        &self.stats
    }

    /// Distinct flows held so far.
    pub fn flows_held(&self) -> usize {
        self.table.len()
    }

    /// Whether `payload` is an export this reader takes.
    pub fn takes(&self, payload: &[u8]) -> bool {
        match (ExportKind::of_payload(payload), self.only) {
            (Some(k), Some(o)) => k.is(o),
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// A UDP datagram that is not an export of the format read.
    pub fn not_export(&mut self) {
        self.stats.not_export += 1;
    }

    /// An export datagram the capture's snap length cut.
    pub fn snapped(&mut self) {
        self.stats.snapped_datagrams += 1;
    }

    /// Counts `payload`, sent to `port`, when it is an export lagkit
    /// cannot read ([`unreadable_export`]): true when it was one.
    pub fn unreadable(&mut self, port: u16, payload: &[u8]) -> bool {
        let Some(what) = unreadable_export(port, payload) else {
            return false;
        };
        self.stats.unreadable_datagrams += 1;
        if !self.stats.unreadable_kinds.contains(&what) && self.stats.unreadable_kinds.len() < 16 {
            self.stats.unreadable_kinds.push(what);
        }
        true
    }

    /// One datagram's payload from `from`.
    pub fn datagram(&mut self, from: SocketAddr, payload: &[u8]) {
        let Some(kind) =
            ExportKind::of_payload(payload).filter(|k| self.only.is_none_or(|o| k.is(o)))
        else {
            self.stats.not_export += 1;
            return;
        };
        self.stats.datagrams += 1;
        if !self.stats.kinds.contains(&kind) {
            self.stats.kinds.push(kind);
        }
        match kind {
            ExportKind::Sflow => self.sflow_datagram(payload),
            _ => self.netflow_datagram(kind, from, payload),
        }
    }

    fn exporter(&mut self, id: (SocketAddr, u32)) {
        if self.exporters.len() < MAX_EXPORTERS && self.exporters.insert(id) {
            self.stats.exporters += 1;
        }
    }

    fn announce(&mut self, id: (SocketAddr, u32), s: &Sampling) {
        if let Some(r) = s.rate() {
            if self.sampling.len() < MAX_EXPORTERS || self.sampling.contains_key(&id) {
                self.sampling.insert(id, r);
            }
        }
    }

    fn netflow_datagram(&mut self, kind: ExportKind, from: SocketAddr, payload: &[u8]) {
        // An exporter is its address: a restarted exporter sends from
        // another port, and its templates come again anyway.
        let from = SocketAddr::new(from.ip(), 0);
        if matches!(kind, ExportKind::Netflow | ExportKind::Ipfix) {
            let mut counts = crate::sets::Counts::default();
            let mut records = Vec::new();
            let mut options = Vec::new();
            let domain = self.sets.message(from, payload, &mut counts, &mut |_, r| {
                let f = fields(r.values.iter().map(|(k, v)| (*k, *v)));
                if r.options {
                    options.push(f);
                } else {
                    records.push(f);
                }
            });
            if counts.damaged {
                self.stats.damaged_datagrams += 1;
            }
            self.stats.before_template_sets += counts.before_template_sets;
            self.stats.before_template_bytes += counts.before_template_bytes;
            if let Some(domain) = domain {
                let id = (from, domain);
                self.exporter(id);
                // Sampling announced in this message applies to its own
                // records too, wherever the sets came.
                for o in &options {
                    self.announce(id, &o.sampling);
                }
                for f in &records {
                    self.record(id, f);
                }
            }
            return;
        }
        if kind == ExportKind::NetflowV1 {
            let id = (from, 0);
            self.exporter(id);
            for f in v1::records(payload) {
                self.record(id, &f);
            }
            return;
        }
        let result = self.fixed.parse_bytes(payload);
        if result.error.is_some() {
            self.stats.damaged_datagrams += 1;
        }
        for p in &result.packets {
            match p {
                NetflowPacket::V5(v5) => {
                    let h = &v5.header;
                    let id = (from, u32::from(h.engine_type) << 8 | u32::from(h.engine_id));
                    self.exporter(id);
                    // The top two bits are the sampling mode, the other
                    // 14 the interval (1 in N).
                    let interval = u64::from(h.sampling_interval & 0x3fff);
                    let sampled = h.sampling_interval >> 14 != 0 && interval > 1;
                    for r in &v5.flowsets {
                        let mut f = fixed_record(
                            r.src_addr,
                            r.dst_addr,
                            (r.src_port, r.dst_port, r.protocol_number),
                            r.d_octets,
                            r.d_pkts,
                        );
                        f.sampling.interval = sampled.then_some(interval);
                        self.record(id, &f);
                    }
                }
                NetflowPacket::V7(v7) => {
                    let id = (from, 0);
                    self.exporter(id);
                    for r in &v7.flowsets {
                        let f = fixed_record(
                            r.src_addr,
                            r.dst_addr,
                            (r.src_port, r.dst_port, r.protocol_number),
                            r.d_octets,
                            r.d_pkts,
                        );
                        self.record(id, &f);
                    }
                }
                // The enum is non-exhaustive: a version a later crate
                // decodes is counted as not read.
                _ => self.stats.damaged_datagrams += 1,
            }
        }
    }

    fn record(&mut self, id: (SocketAddr, u32), f: &Fields) {
        let Some(key) = f.key() else {
            self.stats.unusable_records += 1;
            return;
        };
        if !f.possible() {
            self.stats.impossible_records += 1;
            return;
        }
        let rate = f
            .sampling
            .rate()
            .or_else(|| self.sampling.get(&id).copied())
            .unwrap_or(Rate::ONE);
        self.add(key, rate.scale(f.frame_bytes()), rate);
    }

    fn add(&mut self, key: FlowKey, bytes: u64, rate: Rate) {
        let Some(dir) = dir_of(&key, self.host) else {
            self.unrelated += 1;
            return;
        };
        if bytes > MAX_RECORD_BYTES || self.total.saturating_add(bytes) > MAX_TOTAL_BYTES {
            self.stats.impossible_records += 1;
            return;
        }
        self.total += bytes;
        self.stats.records += 1;
        if !rate.is_one() {
            self.stats.sampled_records += 1;
        }
        if !self.table.add(key, dir, bytes) {
            self.stats.over_cap += 1;
            self.stats.over_cap_bytes = self.stats.over_cap_bytes.saturating_add(bytes);
        }
    }

    /// sflow-parser holds a datagram's samples and records in vectors whose
    /// preallocation it caps at 1024 entries, and refuses opaque fields
    /// over 100 MB (a zeroed allocation, never written, before the read
    /// fails), so a hostile datagram costs memory in proportion to its
    /// own length.
    fn sflow_datagram(&mut self, payload: &[u8]) {
        use sflow_parser::models::{FlowData, SampleData};
        let d = match sflow_parser::parse_datagram(payload) {
            Ok(d) => d,
            Err(_) => {
                self.stats.damaged_datagrams += 1;
                return;
            }
        };
        let agent = match d.agent_address {
            sflow_parser::models::Address::IPv4(a) => IpAddr::V4(a),
            sflow_parser::models::Address::IPv6(a) => IpAddr::V6(a),
            _ => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        self.exporter((SocketAddr::new(agent, 0), d.sub_agent_id));
        for s in &d.samples {
            let (rate, records) = match &s.sample_data {
                SampleData::FlowSample(f) => (f.sampling_rate, &f.flow_records),
                SampleData::FlowSampleExpanded(f) => (f.sampling_rate, &f.flow_records),
                _ => continue,
            };
            let header = records.iter().find_map(|r| match &r.flow_data {
                FlowData::SampledHeader(h) => Some(h),
                _ => None,
            });
            let Some(h) = header else {
                self.stats.unusable_records += 1;
                continue;
            };
            let Some(key) = sampled_key(h) else {
                self.stats.unusable_records += 1;
                continue;
            };
            let rate = Rate::of(u64::from(rate), 1).unwrap_or(Rate::ONE);
            self.add(key, rate.scale(frame_bytes(h)), rate);
        }
    }

    /// The flows and what was counted; `unrelated` counts records neither
    /// from nor to the host.
    pub fn finish(self) -> (Vec<Flow>, ExportStats, u64) {
        (self.table.into_flows(), self.stats, self.unrelated)
    }
}

/// The bytes of an sFlow sampled packet as a capture counts them. sFlow
/// v5 (section "Packet Header Data") counts a layer-2 frame with its
/// frame check sequence, which captures leave out: 4 bytes less. An IP
/// header's length gets an Ethernet header, as NetFlow's do.
fn frame_bytes(h: &sflow_parser::models::record_flows::SampledHeader) -> u64 {
    use sflow_parser::models::record_flows::HeaderProtocol as P;
    let len = u64::from(h.frame_length);
    match h.protocol {
        P::EthernetIso88023 => len.saturating_sub(4),
        _ => len + ETHERNET_HEADER,
    }
}

/// The flow key of an sFlow sampled header: an Ethernet frame, or an IP
/// packet (given an Ethernet header of zeros to be read the same way).
fn sampled_key(h: &sflow_parser::models::record_flows::SampledHeader) -> Option<FlowKey> {
    use sflow_parser::models::record_flows::HeaderProtocol as P;
    let et: [u8; 2] = match h.protocol {
        P::EthernetIso88023 => return Some(FlowKey::from_frame(&h.header)),
        P::Ipv4 => [0x08, 0x00],
        P::Ipv6 => [0x86, 0xdd],
        _ => return None,
    };
    let mut frame = Vec::with_capacity(14 + h.header.len());
    frame.extend_from_slice(&[0; 12]);
    frame.extend_from_slice(&et);
    frame.extend_from_slice(&h.header);
    Some(FlowKey::from_frame(&frame))
}

/// NetFlow version 1, which netflow_parser does not read (fprobe and
/// softflowd export it): a 16-byte header (version, count, uptime,
/// seconds, nanoseconds) and `count` records of 48 bytes.
mod v1 {
    use super::{fixed_record, Fields};
    use std::net::Ipv4Addr;

    pub const HEADER: usize = 16;
    pub const RECORD: usize = 48;

    /// Offsets in a record.
    mod field {
        use std::ops::Range;
        pub const SRC: Range<usize> = 0..4;
        pub const DST: Range<usize> = 4..8;
        pub const PACKETS: Range<usize> = 16..20;
        pub const OCTETS: Range<usize> = 20..24;
        pub const SPORT: Range<usize> = 32..34;
        pub const DPORT: Range<usize> = 34..36;
        pub const PROTOCOL: usize = 38;
    }

    /// The records of a datagram whose length [`super::ExportKind::of_payload`]
    /// checked (a shorter one gives the records it holds whole).
    pub fn records(payload: &[u8]) -> impl Iterator<Item = Fields> + '_ {
        payload
            .get(HEADER..)
            .unwrap_or_default()
            .chunks_exact(RECORD)
            .map(|r| {
                let ip = |f: std::ops::Range<usize>| {
                    Ipv4Addr::from(<[u8; 4]>::try_from(&r[f]).unwrap_or_default())
                };
                let n16 =
                    |f: std::ops::Range<usize>| u16::from_be_bytes([r[f.start], r[f.start + 1]]);
                let n32 = |f: std::ops::Range<usize>| {
                    u32::from_be_bytes(<[u8; 4]>::try_from(&r[f]).unwrap_or_default())
                };
                fixed_record(
                    ip(field::SRC),
                    ip(field::DST),
                    (n16(field::SPORT), n16(field::DPORT), r[field::PROTOCOL]),
                    n32(field::OCTETS),
                    n32(field::PACKETS),
                )
            })
    }
}

/// The fields of a NetFlow v1, v5 or v7 record (IPv4, fixed layout).
fn fixed_record(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    (sport, dport, proto): (u16, u16, u8),
    octets: u32,
    packets: u32,
) -> Fields {
    Fields {
        src: Some(IpAddr::V4(src)),
        dst: Some(IpAddr::V4(dst)),
        sport: Some(sport),
        dport: Some(dport),
        proto: Some(proto),
        octets: Some(u64::from(octets)),
        packets: Some(u64::from(packets)),
        ..Fields::default()
    }
}

fn fields<'a>(it: impl Iterator<Item = (u16, &'a [u8])>) -> Fields {
    let mut f = Fields::default();
    for (id, v) in it {
        f.set(id, v);
    }
    f
}

/// The sender, destination port and payload of a UDP datagram in a frame
/// of link type Ethernet (or raw IP when `raw_ip`). Read laxly: a
/// datagram a capture's snap length cut is still one (its payload is what
/// was captured), so that exports are told apart however they were
/// captured.
pub fn udp_of(frame: &[u8], raw_ip: bool) -> Option<(SocketAddr, u16, &[u8])> {
    use etherparse::{LaxNetSlice, LaxSlicedPacket, TransportSlice};
    let p = if raw_ip {
        LaxSlicedPacket::from_ip(frame).ok()?
    } else {
        LaxSlicedPacket::from_ethernet(frame).ok()?
    };
    let src = match p.net? {
        LaxNetSlice::Ipv4(v4) => IpAddr::V4(v4.header().source_addr()),
        LaxNetSlice::Ipv6(v6) => IpAddr::V6(v6.header().source_addr()),
        _ => return None,
    };
    match p.transport? {
        TransportSlice::Udp(u) => Some((
            SocketAddr::new(src, u.source_port()),
            u.destination_port(),
            u.payload(),
        )),
        _ => None,
    }
}

/// Runs arbitrary bytes through the export decoders as a file of
/// datagrams (each a 2-byte big-endian length and its payload; what does
/// not fit is one last datagram), so that templates and their data can
/// come in separate datagrams, then predicts the flows: never panics (for
/// the `plan_export` fuzz target). Returns how many flows it read.
pub fn fuzz_one(data: &[u8]) -> usize {
    let from = SocketAddr::from(([192, 0, 2, 1], 2055));
    let mut r = ExportReader::new(None, None, 64);
    let mut rest = data;
    while !rest.is_empty() {
        let n = match rest {
            [a, b, ..] => usize::from(u16::from_be_bytes([*a, *b])),
            _ => usize::MAX,
        };
        if rest.len() >= 2 && n <= rest.len() - 2 {
            r.datagram(from, &rest[2..2 + n]);
            rest = &rest[2 + n..];
        } else {
            r.datagram(from, rest);
            break;
        }
    }
    let (flows, st, _) = r.finish();
    assert!(flows.len() <= 64, "{} flows over the cap", flows.len());
    assert!(st.records >= flows.len() as u64, "{st:?}");
    if !flows.is_empty() {
        let end = crate::EndConfig {
            spread: crate::Spread::candidates()[0],
            links: 2,
            rate_bps: 1e9,
        };
        let p = crate::predict(&flows, Dir::Out, &end);
        let shares: f64 = p.links.iter().map(|l| l.share).sum();
        assert!(p.bytes == 0 || (shares - 1.0).abs() < 1e-6);
    }
    flows.len()
}

/// Hand-built export datagrams with known fields: the tests' byte
/// vectors and the fuzz target's seeds.
pub mod build {
    /// A NetFlow v9 template flowset: template `id` of `fields` (element
    /// number, length).
    pub fn v9_template(id: u16, fields: &[(u16, u16)]) -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0];
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&(fields.len() as u16).to_be_bytes());
        for (t, l) in fields {
            b.extend_from_slice(&t.to_be_bytes());
            b.extend_from_slice(&l.to_be_bytes());
        }
        set_len(b)
    }

    /// A NetFlow v9 options template flowset: one system scope of 4 bytes
    /// and `fields`.
    pub fn v9_options_template(id: u16, fields: &[(u16, u16)]) -> Vec<u8> {
        let mut b = vec![0, 1, 0, 0];
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&4u16.to_be_bytes());
        b.extend_from_slice(&((fields.len() * 4) as u16).to_be_bytes());
        b.extend_from_slice(&[0, 1, 0, 4]);
        for (t, l) in fields {
            b.extend_from_slice(&t.to_be_bytes());
            b.extend_from_slice(&l.to_be_bytes());
        }
        set_len(b)
    }

    /// An IPFIX template set: template `id` of `fields`.
    pub fn ipfix_template(id: u16, fields: &[(u16, u16)]) -> Vec<u8> {
        let mut b = v9_template(id, fields);
        b[1] = 2;
        b
    }

    /// A data set (either protocol) of template `id` holding `records`.
    pub fn data(id: u16, records: &[Vec<u8>]) -> Vec<u8> {
        let mut b = id.to_be_bytes().to_vec();
        b.extend_from_slice(&[0, 0]);
        for r in records {
            b.extend_from_slice(r);
        }
        set_len(b)
    }

    fn set_len(mut b: Vec<u8>) -> Vec<u8> {
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        b
    }

    /// A NetFlow v9 datagram from source ID `source` holding `sets`.
    pub fn v9(source: u32, sets: &[Vec<u8>]) -> Vec<u8> {
        let mut b = vec![0, 9];
        b.extend_from_slice(&(sets.len() as u16).to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 1, 0x60, 0, 0, 0, 0, 0, 0, 1]);
        b.extend_from_slice(&source.to_be_bytes());
        for s in sets {
            b.extend_from_slice(s);
        }
        b
    }

    /// An IPFIX message from observation domain `domain` holding `sets`.
    pub fn ipfix(domain: u32, sets: &[Vec<u8>]) -> Vec<u8> {
        let mut b = vec![0, 10, 0, 0, 0x60, 0, 0, 0, 0, 0, 0, 1];
        b.extend_from_slice(&domain.to_be_bytes());
        for s in sets {
            b.extend_from_slice(s);
        }
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        b
    }

    /// The template [`record`] fills: IPv4 addresses, ports, protocol,
    /// octets and packets.
    pub const FIVE_TUPLE: [(u16, u16); 7] =
        [(8, 4), (12, 4), (7, 2), (11, 2), (4, 1), (1, 4), (2, 4)];

    /// A record of [`FIVE_TUPLE`].
    pub fn record(
        src: [u8; 4],
        dst: [u8; 4],
        sport: u16,
        dport: u16,
        octets: u32,
        packets: u32,
    ) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&src);
        r.extend_from_slice(&dst);
        r.extend_from_slice(&sport.to_be_bytes());
        r.extend_from_slice(&dport.to_be_bytes());
        r.push(6);
        r.extend_from_slice(&octets.to_be_bytes());
        r.extend_from_slice(&packets.to_be_bytes());
        r
    }

    /// One record of [`v5`] or [`v1`]: source, destination, their ports,
    /// octets, packets (TCP).
    pub type FixedRecord = ([u8; 4], [u8; 4], u16, u16, u32, u32);

    /// A NetFlow v5 datagram (Cisco's layout: a 24-byte header, 48-byte
    /// records) with `sampling` in its header (mode in the top two bits,
    /// interval in the other 14) and one record per (src, dst, sport,
    /// dport, octets, packets), TCP.
    pub fn v5(sampling: u16, records: &[FixedRecord]) -> Vec<u8> {
        let mut b = vec![0, 5];
        b.extend_from_slice(&(records.len() as u16).to_be_bytes());
        // sys_uptime, unix_secs, unix_nsecs, flow_sequence
        b.extend_from_slice(&[0, 0, 0x10, 0, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        b.extend_from_slice(&[0, 7]); // engine type and id
        b.extend_from_slice(&sampling.to_be_bytes());
        for (src, dst, sport, dport, octets, packets) in records {
            b.extend_from_slice(src);
            b.extend_from_slice(dst);
            b.extend_from_slice(&[0; 4]); // next hop
            b.extend_from_slice(&[0, 1, 0, 2]); // input, output interfaces
            b.extend_from_slice(&packets.to_be_bytes());
            b.extend_from_slice(&octets.to_be_bytes());
            b.extend_from_slice(&[0, 0, 0x0f, 0, 0, 0, 0x10, 0]); // first, last
            b.extend_from_slice(&sport.to_be_bytes());
            b.extend_from_slice(&dport.to_be_bytes());
            b.extend_from_slice(&[0, 0x18, 6, 0]); // pad, TCP flags, protocol, ToS
            b.extend_from_slice(&[0; 8]); // AS numbers, masks, pad
        }
        b
    }

    /// A NetFlow v1 datagram: [`v5`]'s records under v1's 16-byte header
    /// (the two records agree on every field the planner reads:
    /// addresses, counters, ports, protocol).
    pub fn v1(records: &[FixedRecord]) -> Vec<u8> {
        let b = v5(0, records);
        let mut out = vec![0, 1];
        out.extend_from_slice(&b[2..16]);
        out.extend_from_slice(&b[24..]);
        out
    }

    /// An sFlow v5 datagram from agent `agent` with one flow sample of
    /// sampling rate `rate` whose raw packet header record holds `frame`
    /// (an Ethernet frame) of original length `frame_length`.
    pub fn sflow(agent: [u8; 4], rate: u32, frame: &[u8], frame_length: u32) -> Vec<u8> {
        let be = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_be_bytes());
        // The raw packet header record (format 0:1).
        let mut hdr = Vec::new();
        be(&mut hdr, 1); // header protocol: Ethernet
        be(&mut hdr, frame_length);
        be(&mut hdr, 4); // stripped: the FCS
        be(&mut hdr, frame.len() as u32);
        hdr.extend_from_slice(frame);
        while !hdr.len().is_multiple_of(4) {
            hdr.push(0);
        }
        // The flow sample (format 0:1).
        let mut fs = Vec::new();
        for v in [1, 3, rate, 1000, 0, 3, 0, 1] {
            be(&mut fs, v);
        }
        be(&mut fs, 1);
        be(&mut fs, hdr.len() as u32);
        fs.extend_from_slice(&hdr);
        let mut d = Vec::new();
        be(&mut d, 5);
        be(&mut d, 1);
        d.extend_from_slice(&agent);
        for v in [0, 7, 1000, 1] {
            be(&mut d, v);
        }
        be(&mut d, 1);
        be(&mut d, fs.len() as u32);
        d.extend_from_slice(&fs);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;

    fn from() -> SocketAddr {
        "192.0.2.1:40000".parse().unwrap()
    }

    fn read(datagrams: &[Vec<u8>]) -> (Vec<Flow>, ExportStats) {
        let mut r = ExportReader::new(None, None, MAX_FLOWS);
        for d in datagrams {
            r.datagram(from(), d);
        }
        let (f, st, _) = r.finish();
        (f, st)
    }

    #[test]
    fn sniffing_takes_the_port_and_the_version_field() {
        let v9 = v9(1, &[]);
        assert_eq!(sniff(2055, &v9), Some(ExportKind::Netflow));
        assert_eq!(sniff(80, &v9), None);
        let ipfix = ipfix(1, &[]);
        assert_eq!(sniff(4739, &ipfix), Some(ExportKind::Ipfix));
        let sf = sflow([10, 0, 0, 9], 1, &[0; 20], 24);
        assert_eq!(sniff(6343, &sf), Some(ExportKind::Sflow));
        assert_eq!(sniff(2055, &sf), None, "sFlow to NetFlow's port");
        assert_eq!(sniff(6343, &v9), None);
        assert_eq!(ExportKind::of_payload(&[0, 9, 0]), None, "too short");
        // A version field and nothing else (found by fuzzing: the record
        // count was read past the end).
        for v in [1u8, 5, 7, 9, 10] {
            assert_eq!(ExportKind::of_payload(&[0, v]), None);
            assert_eq!(ExportKind::of_payload(&[0, v, 0]), None);
        }
        assert_eq!("IPFIX".parse::<FlowFormat>(), Ok(FlowFormat::Ipfix));
        assert!("nf5".parse::<FlowFormat>().is_err());
    }

    #[test]
    fn netflow_v9_records_become_flows_with_ethernet_headers() {
        let d = v9(
            7,
            &[
                v9_template(256, &FIVE_TUPLE),
                data(
                    256,
                    &[
                        record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 1500, 10),
                        record([10, 0, 0, 1], [10, 0, 0, 3], 1001, 443, 400, 2),
                    ],
                ),
            ],
        );
        let (f, st) = read(&[d]);
        assert_eq!((st.datagrams, st.records, st.exporters), (1, 2, 1));
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].bytes, 1500 + 10 * 14);
        assert_eq!(f[0].key.l4_ports(), Some((1000, 80)));
        assert_eq!(f[0].key.dst_ip(), Some("10.0.0.2".parse().unwrap()));
        assert_eq!(f[0].key.ip_proto(), Some(6));
        assert_eq!(f[1].bytes, 400 + 2 * 14);
    }

    /// NetFlow v5 byte for byte: the header's count and the 48-byte
    /// records, the sampling interval in the header's last 14 bits.
    #[test]
    fn netflow_v5_records_and_header_sampling() {
        let d = v5(
            0,
            &[
                ([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 1500, 10),
                ([10, 0, 0, 1], [10, 0, 0, 3], 1001, 443, 400, 2),
            ],
        );
        assert_eq!(d.len(), 24 + 2 * 48);
        assert_eq!(&d[..4], &[0, 5, 0, 2]);
        // Record 1: addresses at 24 and 28, packets at 40, octets at 44,
        // ports at 56 and 58, protocol at 62.
        assert_eq!(&d[24..32], &[10, 0, 0, 1, 10, 0, 0, 2]);
        assert_eq!(&d[40..48], &[0, 0, 0, 10, 0, 0, 5, 220]);
        assert_eq!(&d[56..60], &[3, 232, 0, 80]);
        assert_eq!(d[62], 6);
        assert_eq!(sniff(2055, &d), Some(ExportKind::NetflowV5));
        let (f, st) = read(std::slice::from_ref(&d));
        assert_eq!((st.datagrams, st.records, st.exporters), (1, 2, 1));
        assert_eq!(st.kinds, vec![ExportKind::NetflowV5]);
        assert_eq!(f[0].bytes, 1500 + 10 * 14);
        assert_eq!(f[0].key.l4_ports(), Some((1000, 80)));
        assert_eq!(f[0].key.ip_proto(), Some(6));
        // Sampled 1 in 100 (mode 1): scaled.
        let d = v5(
            0x4000 | 100,
            &[([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 1000, 4)],
        );
        let (f, st) = read(std::slice::from_ref(&d));
        assert_eq!(st.sampled_records, 1);
        assert_eq!(f[0].bytes, 100 * (1000 + 4 * 14));
        // A length that disagrees with the count is not v5 ...
        let mut long = d.clone();
        long.push(0);
        assert_eq!(ExportKind::of_payload(&long), None);
        // ... but is never traffic: an export lagkit cannot read.
        assert_eq!(
            unreadable_export(2055, &long).as_deref(),
            Some("NetFlow v5 of the wrong length")
        );
        assert_eq!(
            unreadable_export(2055, &[0, 8, 0, 1, 0, 0]).as_deref(),
            Some("NetFlow v8")
        );
        assert_eq!(
            unreadable_export(6343, &[0, 0, 0, 4, 0]).as_deref(),
            Some("sFlow v4")
        );
        assert_eq!(
            unreadable_export(53, &[0, 8, 0, 1]),
            None,
            "not a collector port"
        );
        // NetFlow v1: 16-byte header, the same 48-byte records.
        let d1 = v1(&[([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 1500, 10)]);
        assert_eq!(d1.len(), 16 + 48);
        assert_eq!(&d1[..4], &[0, 1, 0, 1]);
        assert_eq!(sniff(2055, &d1), Some(ExportKind::NetflowV1));
        let (f, st) = read(std::slice::from_ref(&d1));
        assert_eq!(
            (st.records, st.kinds.clone()),
            (1, vec![ExportKind::NetflowV1])
        );
        assert_eq!(f[0].bytes, 1500 + 10 * 14);
        assert_eq!(f[0].key.l4_ports(), Some((1000, 80)));
        assert_eq!(f[0].key.ip_proto(), Some(6));
        // --flow-format netflow reads v5 too.
        let mut r = ExportReader::new(Some(ExportKind::Netflow), None, 8);
        assert!(r.takes(&d));
        r.datagram(from(), &d);
        assert_eq!(r.stats().records, 1);
    }

    /// Egress records carry the frames' MACs after the observation point
    /// (postSourceMacAddress 81, postDestinationMacAddress 57); ingress
    /// records as received (56, 80). Each falls back to the other.
    #[test]
    fn mac_elements_follow_the_flow_direction() {
        let mut t = FIVE_TUPLE.to_vec();
        t.extend_from_slice(&[(56, 6), (80, 6), (81, 6), (57, 6), (61, 1)]);
        let rec = |dir: u8| {
            let mut r = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 100, 1);
            for last in [1u8, 2, 3, 4] {
                r.extend_from_slice(&[2, 0, 0, 0, 0, last]);
            }
            r.push(dir);
            r
        };
        for (dir, src, dst) in [(0u8, 1u8, 2u8), (1, 3, 4)] {
            for proto in [ExportKind::Netflow, ExportKind::Ipfix] {
                let d = if proto == ExportKind::Netflow {
                    v9(1, &[v9_template(256, &t), data(256, &[rec(dir)])])
                } else {
                    ipfix(1, &[ipfix_template(256, &t), data(256, &[rec(dir)])])
                };
                let (f, _) = read(&[d]);
                assert_eq!(
                    f[0].key.src_mac,
                    [2, 0, 0, 0, 0, src],
                    "{proto:?} dir {dir}"
                );
                assert_eq!(
                    f[0].key.dst_mac,
                    [2, 0, 0, 0, 0, dst],
                    "{proto:?} dir {dir}"
                );
            }
        }
        // Only post-MACs, no direction: they are used.
        let t = [FIVE_TUPLE.as_slice(), &[(81, 6), (57, 6)]].concat();
        let mut r = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 100, 1);
        r.extend_from_slice(&[2, 0, 0, 0, 0, 7, 2, 0, 0, 0, 0, 8]);
        let (f, _) = read(&[ipfix(1, &[ipfix_template(256, &t), data(256, &[r])])]);
        assert_eq!((f[0].key.src_mac[5], f[0].key.dst_mac[5]), (7, 8));
    }

    /// Counters that cannot be true are counted and left out: more octets
    /// than the packets can carry, octets without packets, a total past
    /// 2^62; no figure saturates.
    #[test]
    fn impossible_counters_are_counted_not_summed() {
        let t = v9(1, &[v9_template(256, &FIVE_TUPLE)]);
        let good = record([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 1500, 1);
        let too_many = record([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 4_000_000_000, 3);
        let no_packets = record([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 100, 0);
        let (f, st) = read(&[
            t.clone(),
            v9(1, &[data(256, &[good.clone(), too_many, no_packets])]),
        ]);
        assert_eq!((st.records, st.impossible_records), (1, 2));
        assert_eq!(f[0].bytes, 1500 + 14);
        // Sampled past 2^50 bytes a record: impossible. 64-bit counters
        // of garbage templates: the total stays below 2^62.
        let mut t64 = FIVE_TUPLE.to_vec();
        t64[5] = (1, 8);
        t64[6] = (2, 8);
        let mut r = ExportReader::new(None, None, 1 << 10);
        r.datagram(from(), &v9(2, &[v9_template(256, &t64)]));
        for i in 0..10_000u32 {
            let mut rec = Vec::new();
            rec.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
            rec.extend_from_slice(&(i as u16).to_be_bytes());
            rec.extend_from_slice(&[0, 80, 6]);
            rec.extend_from_slice(&(1u64 << 49).to_be_bytes());
            rec.extend_from_slice(&(1u64 << 40).to_be_bytes());
            r.datagram(from(), &v9(2, &[data(256, &[rec])]));
        }
        let (f, st, _) = r.finish();
        let total: u128 = f.iter().map(|f| u128::from(f.bytes)).sum();
        assert!(total <= u128::from(MAX_TOTAL_BYTES), "{total}");
        assert!(st.impossible_records > 0, "{st:?}");
        assert_eq!(st.records + st.impossible_records, 10_000);
    }

    #[test]
    fn data_before_its_template_is_counted_and_dropped() {
        let rec = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 100, 1);
        let early = v9(7, &[data(256, std::slice::from_ref(&rec))]);
        let template = v9(7, &[v9_template(256, &FIVE_TUPLE)]);
        let late = v9(7, &[data(256, &[rec.clone(), rec])]);
        let (f, st) = read(&[early.clone(), template, late]);
        assert_eq!(st.before_template_sets, 1);
        assert_eq!(st.before_template_bytes, 4 + 17 + 3, "the set's body");
        assert_eq!(st.records, 2);
        assert_eq!(f[0].bytes, 2 * (100 + 14));
        // Another source ID's template does not decode it.
        let other = v9(8, &[v9_template(256, &FIVE_TUPLE)]);
        let (f, st) = read(&[other, early]);
        assert_eq!((f.len(), st.before_template_sets), (0, 1));
    }

    #[test]
    fn v9_options_sampling_interval_scales_the_exporters_records() {
        let opts = v9(
            7,
            &[
                v9_options_template(257, &[(34, 4), (35, 1)]),
                data(257, &[vec![0, 0, 0, 0, 0, 0, 0, 100, 1]]),
                v9_template(256, &FIVE_TUPLE),
                data(256, &[record([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 1000, 4)]),
            ],
        );
        let (f, st) = read(&[opts]);
        assert_eq!(st.sampled_records, 1);
        assert_eq!(f[0].bytes, 100 * (1000 + 4 * 14));
    }

    #[test]
    fn ipfix_record_sampling_and_domains_apart() {
        // Domain 1: template 300 with samplingPacketInterval 1 and
        // samplingPacketSpace 9 (1 in 10). Domain 2: template 300 without
        // sampling and with the ports swapped in the layout.
        let mut t1 = FIVE_TUPLE.to_vec();
        t1.extend_from_slice(&[(305, 4), (306, 4)]);
        let mut r1 = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 200, 2);
        r1.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 9]);
        let m1 = ipfix(1, &[ipfix_template(300, &t1), data(300, &[r1])]);
        let mut t2 = FIVE_TUPLE.to_vec();
        t2.swap(2, 3);
        let r2 = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 200, 2);
        let m2 = ipfix(2, &[ipfix_template(300, &t2), data(300, &[r2])]);
        let (f, st) = read(&[m1, m2]);
        assert_eq!((st.records, st.exporters, st.sampled_records), (2, 2, 1));
        assert_eq!(f[0].bytes, 10 * (200 + 2 * 14));
        assert_eq!(f[0].key.l4_ports(), Some((1000, 80)));
        assert_eq!(f[1].key.l4_ports(), Some((80, 1000)), "domain 2's layout");
        assert_eq!(st.kinds, vec![ExportKind::Ipfix]);
    }

    #[test]
    fn sflow_samples_are_scaled_by_their_rate_without_the_fcs() {
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(5000, 53)
            .write(&mut frame, &[0; 20])
            .unwrap();
        let d = sflow([10, 0, 0, 9], 512, &frame, 1518);
        let (f, st) = read(std::slice::from_ref(&d));
        assert_eq!((st.records, st.sampled_records, st.exporters), (1, 1, 1));
        assert_eq!(f[0].bytes, 512 * 1514);
        assert_eq!(f[0].key.l4_ports(), Some((5000, 53)));
        assert_eq!(f[0].key.src_mac, [2, 0, 0, 0, 0, 1]);
        // Cut anywhere: counted as damaged, never a panic.
        let mut r = ExportReader::new(None, None, 8);
        for n in 0..d.len() {
            r.datagram(from(), &d[..n]);
        }
        assert!(r.stats().damaged_datagrams > 0);
    }

    #[test]
    fn the_table_keeps_at_most_its_cap_and_counts_the_rest() {
        let mut r = ExportReader::new(None, None, 3);
        let t = v9(1, &[v9_template(256, &FIVE_TUPLE)]);
        r.datagram(from(), &t);
        let recs: Vec<Vec<u8>> = (0..5)
            .map(|i| record([10, 0, 0, 1], [10, 0, 0, 2], 1000 + i, 80, 100, 1))
            .collect();
        r.datagram(from(), &v9(1, &[data(256, &recs)]));
        r.datagram(from(), &v9(1, &[data(256, &recs[..1])]));
        let (f, st, _) = r.finish();
        assert_eq!(f.len(), 3);
        assert_eq!(
            (st.records, st.over_cap, st.over_cap_bytes),
            (6, 2, 2 * 114)
        );
        assert_eq!(f[0].bytes, 2 * 114, "a known flow still grows");
    }

    /// docs/reference/limits.md gives both caps with their values, and
    /// the table's memory at the cap is what it says (about 220 MiB).
    #[test]
    fn the_limits_page_gives_the_caps() {
        let page = include_str!("../../../docs/reference/limits.md");
        let grouped = |v: usize| {
            let s = v.to_string();
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        for (name, v) in [
            ("MAX_FLOWS", MAX_FLOWS),
            ("MAX_EXPORTERS", MAX_EXPORTERS),
            ("MAX_TEMPLATES", crate::sets::MAX_TEMPLATES),
            ("MAX_PACKET_LEN", crate::input::MAX_PACKET_LEN as usize),
        ] {
            let row = page
                .lines()
                .find(|l| l.starts_with(&format!("| `{name}`")))
                .unwrap_or_else(|| panic!("limits.md has no row for {name}"));
            assert!(row.contains(&grouped(v)), "{name} = {v}: {row}");
        }
        // hashbrown: the entry and one control byte per bucket, buckets a
        // power of two at most 7/8 full.
        let entry = std::mem::size_of::<((FlowKey, Dir), u64)>() + 1;
        let buckets = (MAX_FLOWS * 8 / 7).next_power_of_two();
        let mib = (entry * buckets) >> 20;
        eprintln!("{entry} bytes a flow, {mib} MiB at the cap");
        assert!((150..250).contains(&mib), "{mib} MiB at the cap");
    }

    /// The peak resident memory of this process, in KiB (Linux).
    fn peak_kib() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// 10^7 records (LAGKIT_EXPORT_RECORDS to change it) of as many
    /// distinct flows stream through the reader: the table stops at its
    /// cap, the rest is counted, and the peak memory grows by less than
    /// 128 MiB (about 42 MiB measured, the same for 10^6 records; holding
    /// every flow would take over 1 GiB). About 10 s.
    #[test]
    fn ten_million_records_stream_in_bounded_memory() {
        let n: u64 = std::env::var("LAGKIT_EXPORT_RECORDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000_000);
        let cap = 100_000;
        let before = peak_kib();
        let t0 = std::time::Instant::now();
        let mut r = ExportReader::new(None, None, cap);
        r.datagram(from(), &ipfix(1, &[ipfix_template(256, &FIVE_TUPLE)]));
        let per = 50u64;
        let mut done = 0u64;
        while done < n {
            let recs: Vec<Vec<u8>> = (0..per.min(n - done))
                .map(|i| {
                    let k = done + i;
                    let [a, b, c, d] = (k as u32).to_be_bytes();
                    record([10, a, b, c], [10, 0, 0, d], (k % 60000) as u16, 80, 100, 1)
                })
                .collect();
            done += recs.len() as u64;
            r.datagram(from(), &ipfix(1, &[data(256, &recs)]));
            assert!(r.flows_held() <= cap);
        }
        let grew = peak_kib().saturating_sub(before);
        let (f, st, _) = r.finish();
        eprintln!(
            "{n} records in {:.1} s, {} flows held, peak memory +{grew} KiB",
            t0.elapsed().as_secs_f64(),
            f.len()
        );
        assert_eq!(st.records, n);
        assert_eq!(f.len() as u64, n.min(cap as u64));
        assert_eq!(st.over_cap, n.saturating_sub(cap as u64));
        assert!(grew < 128 << 10, "peak memory grew by {grew} KiB");
    }
}

#[cfg(test)]
mod fuzz_corpus {
    /// Every input the `plan_export` fuzz target has kept (fuzz/corpus,
    /// replayed here because cargo-fuzz needs a nightly toolchain) is
    /// read without breaking an invariant, and many give flows (its seeds
    /// were datagrams softflowd and pmacct sent).
    #[test]
    fn the_plan_export_corpus_holds_its_invariants() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/plan_export");
        let mut with_flows = 0;
        let mut n = 0;
        for f in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
            let data = std::fs::read(f.unwrap().path()).unwrap();
            with_flows += usize::from(super::fuzz_one(&data) > 0);
            n += 1;
        }
        assert!(n > 1000, "{dir} holds only {n} files");
        assert!(
            with_flows > 100,
            "only {with_flows} corpus files give flows"
        );
    }
}
