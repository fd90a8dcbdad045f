//! Reading traffic: flow lists (CSV, JSON) and captures (pcap, pcapng).
//!
//! A flow list names each flow's header fields, its volume and optionally
//! its rate; a capture is read as a stream, packet by packet, and folded
//! into one flow per distinct header key, so a capture larger than memory
//! costs memory only for its distinct flows. Every error names the file,
//! the line (or packet) and what to fix; nothing here panics on bad input.

use crate::export::{ExportKind, ExportReader, ExportStats, FlowFormat};
use crate::flow::{Dir, Flow};
use lagkit_hash::{ip_proto, FlowKey, IpFlow, L4};
use pcap_file::pcapng::Block;
use pcap_file::DataLink;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Why traffic could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{path}: {why}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        why: String,
    },
    /// A record or packet was not understood.
    #[error("{path}:{at}: {why}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// The line (`N`) when there is one, else `flow N` (of a JSON
        /// list) or `packet N` (of a capture).
        at: String,
        /// The line, when the file has lines.
        line: Option<u64>,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// The format could not be recognised.
    #[error("{path}: {why}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What was expected.
        why: String,
    },
}

/// What a capture held besides the flows.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CaptureStats {
    /// Packets read.
    pub packets: u64,
    /// Packets on interfaces that are not Ethernet (skipped).
    pub not_ethernet: u64,
    /// Packets (or exported records) neither from nor to the host (when
    /// a host was named).
    pub unrelated: u64,
    /// Packets that are not UDP, in a capture of flow exports (skipped).
    pub not_udp: u64,
    /// Flows left out because the flow table was full
    /// ([`crate::export::MAX_FLOWS`]).
    pub flows_dropped: u64,
    /// When the capture held flow exports: what they held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export: Option<ExportStats>,
    /// Where the capture was damaged or cut short, when it was after at
    /// least one good packet: the flows are those of the packets before.
    pub skipped: Option<Skipped>,
}

/// The part of a capture that was not read: from a damaged or cut packet
/// to the end.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The first packet not read (1-based).
    pub from_packet: u64,
    /// Packets skipped: 1 when the capture ends inside that packet (cut
    /// short); `None` when damage hides how many follow.
    pub packets: Option<u64>,
    /// What was wrong there.
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.packets {
            Some(n) => write!(
                f,
                "packet {} is cut short ({}): {n} packet{} skipped, planned from the {} before it",
                self.from_packet,
                self.why,
                if n == 1 { "" } else { "s" },
                self.from_packet - 1
            ),
            None => write!(
                f,
                "packet {} is damaged ({}): it and the rest of the capture were skipped, planned from the {} packets before it",
                self.from_packet,
                self.why,
                self.from_packet - 1
            ),
        }
    }
}

/// Which frames the bonded host sends, for captures: frames from this MAC
/// or IP are [`Dir::Out`], frames to it [`Dir::In`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// By MAC address.
    Mac([u8; 6]),
    /// By IP address.
    Ip(IpAddr),
}

impl std::str::FromStr for Host {
    type Err = String;
    fn from_str(s: &str) -> Result<Host, String> {
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        parse_mac(s).map(Host::Mac).ok_or_else(|| {
            format!("{s:?} is neither an IP address nor a MAC address (aa:bb:cc:dd:ee:ff)")
        })
    }
}

/// Reads flows from `path` (`-`: standard input): `.csv`, `.json`, or a
/// pcap/pcapng capture (recognised by its first bytes, whatever its name).
/// `host` gives captures their directions; without it every captured
/// frame is `out`. A flow list is read whole, at most
/// [`lagkit_input::FLOW_LIST`]; a capture is a stream of any length.
pub fn read_flows(
    path: &Path,
    host: Option<Host>,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    read_flows_as(path, host, FlowFormat::Auto)
}

/// [`read_flows`], with a capture read as `format`: the traffic itself
/// ([`FlowFormat::Packets`]), NetFlow v9, IPFIX or sFlow v5 exports, or
/// whichever its first UDP datagrams show ([`FlowFormat::Auto`]: exports
/// when every one goes to a collector port, 2055, 9995, 9996, 4739 or
/// 6343, with a matching version field). A format other than auto given
/// for a flow list is an error.
pub fn read_flows_as(
    path: &Path,
    host: Option<Host>,
    format: FlowFormat,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    let input_err = |e: lagkit_input::InputError| InputError::Io {
        path: PathBuf::from(e.file()),
        why: e.reason(),
    };
    let mut input = lagkit_input::Opened::open(path).map_err(input_err)?;
    let magic = input.head(4).map_err(input_err)?.to_vec();
    match capture_kind(&magic) {
        Some(Capture::Pcap) => read_pcap(path, input.into_reader(), host, format),
        Some(Capture::PcapNg) => read_pcapng(path, input.into_reader(), host, format),
        None if !matches!(format, FlowFormat::Auto | FlowFormat::Packets) => {
            read_datagrams(path, input.into_reader(), host, format)
        }
        None => {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let first = magic.iter().find(|b| !b.is_ascii_whitespace());
            let json = ext.eq_ignore_ascii_case("json") || first == Some(&b'[');
            let csv = ext.eq_ignore_ascii_case("csv") || ext.is_empty() || ext == "txt";
            if !(json || csv) {
                return Err(InputError::Format {
                    path: path.to_path_buf(),
                    why: "not a flow list (.csv, .json) nor a capture (pcap, pcapng)".into(),
                });
            }
            let data = input
                .read_all(&lagkit_input::FLOW_LIST, true)
                .map_err(input_err)?;
            let flows = if json {
                read_json(path, &data[..])?
            } else {
                read_csv(path, &data[..])?
            };
            Ok((flows, CaptureStats::default()))
        }
    }
}

enum Capture {
    Pcap,
    PcapNg,
}

/// A capture format recognised by its magic number (either byte order,
/// microsecond or nanosecond pcap).
fn capture_kind(head: &[u8]) -> Option<Capture> {
    match head.get(..4)? {
        [0xd4, 0xc3, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0xc3, 0xd4]
        | [0x4d, 0x3c, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0x3c, 0x4d] => Some(Capture::Pcap),
        [0x0a, 0x0d, 0x0d, 0x0a] => Some(Capture::PcapNg),
        _ => None,
    }
}

/// A number or a string, for fields JSON may give either way.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum NumOrStr {
    Num(f64),
    Str(String),
}

/// One flow as written in a list.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    #[serde(default)]
    proto: Option<String>,
    #[serde(default)]
    src: Option<String>,
    #[serde(default)]
    sport: Option<u16>,
    #[serde(default)]
    dst: Option<String>,
    #[serde(default)]
    dport: Option<u16>,
    #[serde(default)]
    src_mac: Option<String>,
    #[serde(default)]
    dst_mac: Option<String>,
    #[serde(default)]
    vlan: Option<u16>,
    #[serde(default)]
    bytes: Option<u64>,
    #[serde(default)]
    rate: Option<NumOrStr>,
    #[serde(default)]
    dir: Option<String>,
}

/// The most bytes one listed flow may claim: 2^50 (1.1 PB, days of a
/// 100 Gbit/s link). Sums of many such flows saturate instead of wrapping.
pub const MAX_FLOW_BYTES: u64 = 1 << 50;

const COLUMNS: &str = "proto,src,sport,dst,dport,src_mac,dst_mac,vlan,bytes,rate,dir";

fn read_csv(path: &Path, r: impl Read) -> Result<Vec<Flow>, InputError> {
    let mut rd = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(false)
        .from_reader(r);
    let bad = |line: u64, why: String| InputError::Bad {
        path: path.to_path_buf(),
        at: line.to_string(),
        line: Some(line),
        why,
    };
    let headers = rd.headers().map_err(|e| bad(1, csv_why(&e)))?.clone();
    if let Some(h) = headers
        .iter()
        .find(|h| !COLUMNS.split(',').any(|c| c == *h))
    {
        return Err(bad(
            1,
            format!(
                "unknown column {}; the columns are {COLUMNS} (any subset, in any order)",
                cut(h)
            ),
        ));
    }
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            bad(line, csv_why(&e))
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        // Name the column as the header does, and count it as a
        // spreadsheet would (from 1), so the cell can be found.
        let at_column = |e: FieldError| match e.field {
            Some(f) => match headers.iter().position(|h| h == f) {
                Some(i) => format!("column {} ({f}): {}", i + 1, e.why),
                None => format!("{f}: {}", e.why),
            },
            None => e.why,
        };
        let r = record_of(&headers, &rec).map_err(|e| bad(line, at_column(e)))?;
        out.push(to_flow(&r).map_err(|e| bad(line, at_column(e)))?);
    }
    Ok(out)
}

/// Why one flow was refused: the field it is about (when one field is to
/// blame) and what is wrong with it.
#[derive(Debug)]
struct FieldError {
    field: Option<&'static str>,
    why: String,
}

impl FieldError {
    fn of(field: &'static str, why: String) -> FieldError {
        FieldError {
            field: Some(field),
            why,
        }
    }
}

impl From<&str> for FieldError {
    fn from(why: &str) -> FieldError {
        FieldError {
            field: None,
            why: why.into(),
        }
    }
}

/// A value in quotes, cut to 80 characters.
fn quote(s: &str) -> String {
    format!("\"{}\"", cut(s))
}

/// One CSV row as a [`Record`]; numbers are read here so that a bad one
/// names its column and the range it must be in.
fn record_of(headers: &csv::StringRecord, rec: &csv::StringRecord) -> Result<Record, FieldError> {
    let mut r = Record::default();
    for (name, v) in headers.iter().zip(rec.iter()) {
        let v = v.trim();
        if v.is_empty() {
            continue;
        }
        let port = |field: &'static str| {
            v.parse::<u16>().map_err(|_| {
                FieldError::of(
                    field,
                    format!("{} is not a port number (0-65535)", quote(v)),
                )
            })
        };
        match name {
            "proto" => r.proto = Some(v.into()),
            "src" => r.src = Some(v.into()),
            "dst" => r.dst = Some(v.into()),
            "src_mac" => r.src_mac = Some(v.into()),
            "dst_mac" => r.dst_mac = Some(v.into()),
            "dir" => r.dir = Some(v.into()),
            "rate" => r.rate = Some(NumOrStr::Str(v.into())),
            "sport" => r.sport = Some(port("sport")?),
            "dport" => r.dport = Some(port("dport")?),
            "vlan" => {
                r.vlan = Some(v.parse::<u16>().map_err(|_| {
                    FieldError::of("vlan", format!("{} is not a VLAN ID (0-4094)", quote(v)))
                })?)
            }
            "bytes" => {
                r.bytes = Some(v.parse::<u64>().map_err(|_| {
                    FieldError::of(
                        "bytes",
                        format!(
                            "{} is not a byte count (a whole number of bytes, e.g. 1500000)",
                            quote(v)
                        ),
                    )
                })?)
            }
            // The header was checked against COLUMNS before any row.
            _ => {}
        }
    }
    Ok(r)
}

fn csv_why(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => "not a text file (invalid UTF-8)".into(),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("{len} fields where the header has {expected_len}")
        }
        csv::ErrorKind::Deserialize { err, .. } => {
            let field = err
                .field()
                .map_or(String::new(), |f| format!("field {}: ", f + 1));
            format!("{field}{}", cut(&err.to_string()))
        }
        _ => cut(&e.to_string()),
    }
}

fn read_json(path: &Path, r: impl Read) -> Result<Vec<Flow>, InputError> {
    let recs: Vec<Record> = serde_json::from_reader(r).map_err(|e| InputError::Bad {
        path: path.to_path_buf(),
        at: e.line().to_string(),
        line: Some(e.line() as u64),
        why: format!(
            "{} (expected a JSON array of objects with fields {COMPACT})",
            cut(&e.to_string()),
            COMPACT = COLUMNS
        ),
    })?;
    recs.iter()
        .enumerate()
        .map(|(i, r)| {
            to_flow(r).map_err(|e| InputError::Bad {
                path: path.to_path_buf(),
                at: format!("flow {}", i + 1),
                line: None,
                why: match e.field {
                    Some(f) => format!("{f}: {}", e.why),
                    None => e.why,
                },
            })
        })
        .collect()
}

/// Cuts a long value to 80 characters and says how long it was.
fn cut(s: &str) -> String {
    match s.char_indices().nth(80) {
        None => s.to_string(),
        Some((i, _)) => format!("{}… ({} characters)", &s[..i], s.chars().count()),
    }
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in &mut out {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// Parses a rate in bit/s as every lagkit flag does (`100M`, `1g`,
/// `250kbit`, `10Gbit/s`, plain bit/s; see `lagkit_units`).
pub fn parse_rate(s: &str) -> Result<f64, lagkit_units::UnitError> {
    lagkit_units::parse_rate(s).map(|b| b as f64)
}

fn to_flow(r: &Record) -> Result<Flow, FieldError> {
    let ip = |f: &Option<String>, what: &'static str| -> Result<Option<IpAddr>, FieldError> {
        match f.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(s) => s.parse().map(Some).map_err(|_| {
                FieldError::of(
                    what,
                    format!(
                        "{} is not an IP address (e.g. 10.0.0.1 or fd00::1)",
                        quote(s)
                    ),
                )
            }),
        }
    };
    let mac = |f: &Option<String>, what: &'static str| -> Result<[u8; 6], FieldError> {
        match f.as_deref().map(str::trim) {
            None | Some("") => Ok([0; 6]),
            Some(s) => parse_mac(s).ok_or_else(|| {
                FieldError::of(
                    what,
                    format!("{} is not a MAC address (aa:bb:cc:dd:ee:ff)", quote(s)),
                )
            }),
        }
    };
    let (src, dst) = (ip(&r.src, "src")?, ip(&r.dst, "dst")?);
    let proto = match r.proto.as_deref().map(|p| p.trim().to_ascii_lowercase()) {
        None => None,
        Some(p) if p.is_empty() => None,
        Some(p) => Some(match p.as_str() {
            "tcp" => ip_proto::TCP,
            "udp" => ip_proto::UDP,
            "icmp" => 1,
            "icmpv6" | "icmp6" => 58,
            n => n.parse::<u8>().map_err(|_| {
                FieldError::of(
                    "proto",
                    format!(
                        "{} is not tcp, udp, icmp or a protocol number (0-255)",
                        quote(n)
                    ),
                )
            })?,
        }),
    };
    let mut key = match (src, dst) {
        (Some(s), Some(d)) => {
            if s.is_ipv4() != d.is_ipv4() {
                return Err("src and dst are of different IP versions".into());
            }
            let proto = proto.unwrap_or(ip_proto::TCP);
            let l4 = match (r.sport, r.dport) {
                (Some(a), Some(b)) => L4::Ports { src: a, dst: b },
                (None, None) => L4::None,
                _ => return Err("give both sport and dport, or neither".into()),
            };
            let et = if s.is_ipv4() { 0x0800 } else { 0x86dd };
            FlowKey::ip(IpFlow::new(s, d, proto, l4)).with_ethertype(et)
        }
        (None, None) => {
            if r.sport.is_some() || r.dport.is_some() {
                return Err("ports without src and dst addresses".into());
            }
            FlowKey::l2([0; 6], [0; 6], 0x88b5)
        }
        _ => return Err("give both src and dst, or neither (a non-IP flow)".into()),
    };
    key = key.with_macs(mac(&r.src_mac, "src_mac")?, mac(&r.dst_mac, "dst_mac")?);
    if let Some(v) = r.vlan {
        if v > 4094 {
            return Err(FieldError::of(
                "vlan",
                format!("\"{v}\" is not a VLAN ID (0-4094)"),
            ));
        }
        key = key.with_vlan(v);
    }
    let demand_bps = match &r.rate {
        None => None,
        Some(NumOrStr::Num(v)) if v.is_finite() && *v >= 0.0 => Some(*v),
        Some(NumOrStr::Num(v)) => {
            return Err(FieldError::of(
                "rate",
                format!("{v} is not a rate (0 or more bit/s)"),
            ))
        }
        Some(NumOrStr::Str(s)) if s.trim().is_empty() => None,
        Some(NumOrStr::Str(s)) => {
            Some(parse_rate(s).map_err(|e| FieldError::of("rate", e.to_string()))?)
        }
    };
    let dir = match r.dir.as_deref().map(|d| d.trim().to_ascii_lowercase()) {
        None => Dir::Out,
        Some(d) => match d.as_str() {
            "" | "out" | "tx" => Dir::Out,
            "in" | "rx" => Dir::In,
            _ => {
                return Err(FieldError::of(
                    "dir",
                    format!(
                        "{} is not out (sent by the bonded host) or in (received by it)",
                        quote(&d)
                    ),
                ))
            }
        },
    };
    let bytes = r.bytes.unwrap_or(0);
    if bytes > MAX_FLOW_BYTES {
        return Err(FieldError::of(
            "bytes",
            format!(
                "{bytes} is more than one flow can carry in any plan (at most 2^50, about 1.1 PB)"
            ),
        ));
    }
    Ok(Flow {
        key,
        dir,
        bytes,
        demand_bps,
    })
}

/// How many UDP datagrams [`FlowFormat::Auto`] looks at before it decides
/// whether a capture is the traffic or flow exports.
const DECIDE_AFTER: usize = 32;

/// How many packets [`FlowFormat::Auto`] holds at most while it decides:
/// a capture without UDP among its first 1024 packets is the traffic.
const DECIDE_WITHIN: usize = 1024;

/// And how many bytes of them: 16 MiB (a capture's packets may each be
/// megabytes).
const DECIDE_BYTES: usize = 16 << 20;

/// Folds packets into flows: as the traffic itself, or as the flow
/// exports they carry ([`FlowFormat`]).
struct Folder {
    flows: HashMap<(FlowKey, Dir), u64>,
    stats: CaptureStats,
    host: Option<Host>,
    format: FlowFormat,
    /// While [`FlowFormat::Auto`] has not decided: the packets so far.
    pending: Vec<(Option<DataLink>, Vec<u8>, u32)>,
    /// UDP datagrams among `pending`, and how many of them are exports.
    pending_udp: (usize, usize),
    /// The bytes held in `pending`.
    pending_bytes: usize,
    export: Option<ExportReader>,
    /// Auto found exports and other UDP traffic mixed: what to say.
    ambiguous: Option<String>,
}

impl Folder {
    fn new(host: Option<Host>, format: FlowFormat) -> Folder {
        let export = match format {
            FlowFormat::Netflow => Some(ExportKind::Netflow),
            FlowFormat::Ipfix => Some(ExportKind::Ipfix),
            FlowFormat::Sflow => Some(ExportKind::Sflow),
            FlowFormat::Auto | FlowFormat::Packets => None,
        }
        .map(|k| ExportReader::new(Some(k), host, crate::export::MAX_FLOWS));
        Folder {
            flows: HashMap::new(),
            stats: CaptureStats::default(),
            host,
            format,
            pending: Vec::new(),
            pending_udp: (0, 0),
            pending_bytes: 0,
            export,
            ambiguous: None,
        }
    }

    /// One captured frame, from an interface of link type `link`.
    fn packet(&mut self, link: Option<DataLink>, data: &[u8], len: u32) {
        self.stats.packets += 1;
        if self.format == FlowFormat::Auto && self.ambiguous.is_none() {
            if let Some((_, port, payload)) = udp_in(link, data) {
                self.pending_udp.0 += 1;
                self.pending_udp.1 += usize::from(crate::export::sniff(port, payload).is_some());
            }
            self.pending.push((link, data.to_vec(), len));
            self.pending_bytes += data.len();
            if self.pending_udp.0 >= DECIDE_AFTER
                || self.pending.len() >= DECIDE_WITHIN
                || self.pending_bytes >= DECIDE_BYTES
            {
                self.decide();
            }
            return;
        }
        self.take(link, data, len);
    }

    /// Auto's choice, from the datagrams seen: exports when every UDP
    /// datagram is one (and there is one), the traffic when none is.
    fn decide(&mut self) {
        let (udp, exports) = self.pending_udp;
        if exports > 0 && exports < udp {
            self.ambiguous = Some(format!(
                "{exports} of the first {udp} UDP datagrams are flow exports (NetFlow, IPFIX or sFlow to a collector port) and the others are not: \
                 give --flow-format netflow, ipfix or sflow to read the exports, or --flow-format packets to plan the packets themselves"
            ));
            self.pending.clear();
            return;
        }
        self.format = if exports > 0 {
            self.export = Some(ExportReader::new(None, self.host, crate::export::MAX_FLOWS));
            FlowFormat::Netflow
        } else {
            FlowFormat::Packets
        };
        for (link, data, len) in std::mem::take(&mut self.pending) {
            self.take(link, &data, len);
        }
    }

    fn take(&mut self, link: Option<DataLink>, data: &[u8], len: u32) {
        if let Some(x) = &mut self.export {
            match udp_in(link, data) {
                Some((from, _, payload)) if x.takes(payload) => x.datagram(from, payload),
                Some(_) => x.not_export(),
                None => self.stats.not_udp += 1,
            }
            return;
        }
        if link != Some(DataLink::ETHERNET) {
            self.stats.not_ethernet += 1;
            return;
        }
        let key = FlowKey::from_frame(data);
        let Some(dir) = crate::export::dir_of(&key, self.host) else {
            self.stats.unrelated += 1;
            return;
        };
        *self.flows.entry((key, dir)).or_default() += u64::from(len);
    }

    fn finish(mut self, path: &Path) -> Result<(Vec<Flow>, CaptureStats), InputError> {
        if self.format == FlowFormat::Auto && self.ambiguous.is_none() {
            self.decide();
        }
        if let Some(why) = self.ambiguous {
            return Err(InputError::Format {
                path: path.to_path_buf(),
                why,
            });
        }
        if let Some(x) = self.export {
            let (flows, st, unrelated) = x.finish();
            self.stats.unrelated += unrelated;
            self.stats.flows_dropped = st.over_cap;
            self.stats.export = Some(st);
            return Ok((flows, self.stats));
        }
        let mut v: Vec<Flow> = self
            .flows
            .into_iter()
            .map(|((key, dir), bytes)| Flow {
                key,
                dir,
                bytes,
                demand_bps: None,
            })
            .collect();
        // A stable order (HashMap's is random): largest first.
        v.sort_by_cached_key(|f| (std::cmp::Reverse(f.bytes), format!("{:?}", f.key)));
        Ok((v, self.stats))
    }
}

/// A UDP datagram in a frame of link type `link` (Ethernet, or raw IP).
fn udp_in(link: Option<DataLink>, data: &[u8]) -> Option<(std::net::SocketAddr, u16, &[u8])> {
    match link? {
        DataLink::ETHERNET => crate::export::udp_of(data, false),
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => crate::export::udp_of(data, true),
        _ => None,
    }
}

fn capture_err(path: &Path, packet: u64, e: pcap_file::PcapError) -> InputError {
    InputError::Bad {
        path: path.to_path_buf(),
        at: format!("packet {}", packet + 1),
        line: None,
        why: format!(
            "{} (the capture is damaged or cut short here, before any packet could be read)",
            cut(&e.to_string())
        ),
    }
}

/// A capture damaged at packet `f.stats.packets + 1`: an error when no
/// packet was read before it, else the flows so far and what was skipped.
fn damaged(
    path: &Path,
    mut f: Folder,
    e: pcap_file::PcapError,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    if f.stats.packets == 0 {
        return Err(capture_err(path, 0, e));
    }
    // The reader's buffer ran dry inside a packet: the file ends there.
    let cut_short = matches!(&e, pcap_file::PcapError::IoError(io)
        if io.kind() == std::io::ErrorKind::UnexpectedEof);
    f.stats.skipped = Some(Skipped {
        from_packet: f.stats.packets + 1,
        packets: cut_short.then_some(1),
        why: if cut_short {
            "the capture ends inside it, or its length is damaged".into()
        } else {
            cut(&e.to_string())
        },
    });
    f.finish(path)
}

/// A packet no capture holds: length 0 (what zeros after a header read
/// as). Refused as damage, so that a file of zeros is not read as
/// gigabytes of empty packets.
fn empty_packet() -> pcap_file::PcapError {
    pcap_file::PcapError::InvalidField("a packet of length 0")
}

fn read_pcap(
    path: &Path,
    r: impl Read,
    host: Option<Host>,
    format: FlowFormat,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    let mut rd = pcap_file::pcap::PcapReader::new(r).map_err(|e| capture_err(path, 0, e))?;
    let link = Some(rd.header().datalink);
    let mut f = Folder::new(host, format);
    while let Some(p) = rd.next_packet() {
        match p {
            Ok(p) if p.orig_len == 0 => return damaged(path, f, empty_packet()),
            Ok(p) => f.packet(link, &p.data, p.orig_len),
            Err(e) => return damaged(path, f, e),
        }
    }
    f.finish(path)
}

fn read_pcapng(
    path: &Path,
    r: impl Read,
    host: Option<Host>,
    format: FlowFormat,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    let mut rd = pcap_file::pcapng::PcapNgReader::new(r).map_err(|e| capture_err(path, 0, e))?;
    let mut f = Folder::new(host, format);
    let mut links: Vec<DataLink> = Vec::new();
    while let Some(b) = rd.next_block() {
        let b = match b {
            Ok(b) => b,
            Err(e) => return damaged(path, f, e),
        };
        match b {
            Block::SectionHeader(_) => links.clear(),
            Block::InterfaceDescription(i) => links.push(i.linktype),
            Block::EnhancedPacket(p) if p.original_len == 0 => {
                return damaged(path, f, empty_packet())
            }
            Block::EnhancedPacket(p) => {
                let id = usize::try_from(p.interface_id).unwrap_or(usize::MAX);
                f.packet(links.get(id).copied(), &p.data, p.original_len);
            }
            Block::SimplePacket(p) if p.original_len == 0 => {
                return damaged(path, f, empty_packet())
            }
            Block::SimplePacket(p) => {
                f.packet(links.first().copied(), &p.data, p.original_len);
            }
            _ => {}
        }
    }
    f.finish(path)
}

/// The longest datagram a file of datagrams holds: a UDP payload.
const MAX_DATAGRAM: usize = 65_535;

/// Reads a file of export datagrams, each a 2-byte big-endian length and
/// that many bytes of UDP payload (what a collector that saves raw
/// datagrams writes), all from one exporter. A length running past the
/// end is a cut: the datagrams before it are planned.
fn read_datagrams(
    path: &Path,
    mut r: impl Read,
    host: Option<Host>,
    format: FlowFormat,
) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    let mut f = Folder::new(host, format);
    let from = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let io = |e: std::io::Error| InputError::Io {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    loop {
        let mut len = [0u8; 2];
        match read_full(&mut r, &mut len).map_err(io)? {
            0 => break,
            2 => {}
            _ => return cut_datagram(path, f),
        }
        let n = usize::from(u16::from_be_bytes(len));
        if read_full(&mut r, &mut buf[..n]).map_err(io)? < n {
            return cut_datagram(path, f);
        }
        f.stats.packets += 1;
        if let Some(x) = &mut f.export {
            x.datagram(from, &buf[..n]);
        }
    }
    f.finish(path)
}

/// Reads until `buf` is full or the input ends: how many bytes were read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn cut_datagram(path: &Path, mut f: Folder) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    if f.stats.packets == 0 {
        return Err(InputError::Bad {
            path: path.to_path_buf(),
            at: "packet 1".into(),
            line: None,
            why: "not a file of datagrams (each a 2-byte big-endian length, then the UDP payload): the first is cut short".into(),
        });
    }
    f.stats.skipped = Some(Skipped {
        from_packet: f.stats.packets + 1,
        packets: Some(1),
        why: "the file ends inside its length or payload".into(),
    });
    f.finish(path)
}

/// Reads flows from bytes, as [`read_flows`] would from a file of that
/// content (for the fuzz target: never panics).
pub fn read_bytes(name: &str, data: &[u8]) -> Result<(Vec<Flow>, CaptureStats), InputError> {
    let path = Path::new(name);
    match capture_kind(data) {
        Some(Capture::Pcap) => read_pcap(path, data, None, FlowFormat::Auto),
        Some(Capture::PcapNg) => read_pcapng(path, data, None, FlowFormat::Auto),
        None if data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') => {
            read_json(path, data).map(|f| (f, CaptureStats::default()))
        }
        None => read_csv(path, data).map(|f| (f, CaptureStats::default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> Result<Vec<Flow>, InputError> {
        read_bytes("t.csv", text.as_bytes()).map(|r| r.0)
    }

    #[test]
    fn csv_flows_with_every_column() {
        let f = csv("proto,src,sport,dst,dport,src_mac,dst_mac,vlan,bytes,rate,dir\n\
                     tcp,10.0.0.1,32789,10.0.0.2,32792,02:00:00:00:00:01,02:00:00:00:00:02,129,1000,100M,out\n\
                     udp,fd00::2,53,fd00::1,5353,,,,,,in\n")
            .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].key.l4_ports(), Some((32789, 32792)));
        assert_eq!(f[0].key.vlan_id(), Some(129));
        assert_eq!(f[0].key.src_mac, [2, 0, 0, 0, 0, 1]);
        assert_eq!(f[0].demand_bps, Some(1e8));
        assert_eq!(f[1].dir, Dir::In);
        assert_eq!(f[1].key.ip_proto(), Some(ip_proto::UDP));
        assert_eq!(f[1].demand_bps, None);
    }

    #[test]
    fn csv_errors_name_the_line_and_the_fix() {
        let e =
            csv("src,dst,sport,dport\n10.0.0.1,10.0.0.2,1,2\n10.0.0.1,nothere,1,2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:3: column 2 (dst): \"nothere\" is not an IP address (e.g. 10.0.0.1 or fd00::1)"
        );
        // Line, column (counted from 1, named by the header), value, range.
        let e = csv("# a comment\nproto,src,sport,dst,dport\ntcp,10.0.0.1,1,10.0.0.2,8o80\n")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:3: column 5 (dport): \"8o80\" is not a port number (0-65535)"
        );
        assert!(matches!(e, InputError::Bad { line: Some(3), .. }));
        let e = csv("src,dst,vlan\n10.0.0.1,10.0.0.2,5000\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:2: column 3 (vlan): \"5000\" is not a VLAN ID (0-4094)"
        );
        let e = csv("src,dst,bytes\n10.0.0.1,10.0.0.2,1.5k\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.csv:2: column 3 (bytes): \"1.5k\" is not a byte count"),
            "{e}"
        );
        let e = csv("dir,src,dst\nsideways,10.0.0.1,10.0.0.2\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.csv:2: column 1 (dir): \"sideways\""),
            "{e}"
        );
        let e = csv("src,dst,src_mac\n10.0.0.1,10.0.0.2,zz\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.csv:2: column 3 (src_mac): \"zz\" is not a MAC"),
            "{e}"
        );
        let e = csv("src,dst,proto\n10.0.0.1,10.0.0.2,sctpx\n").unwrap_err();
        assert!(e.to_string().contains("column 3 (proto)"), "{e}");
        // A problem of the row, not of one cell, names no column.
        let e = csv("src,dst,sport\n10.0.0.1,10.0.0.2,1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:2: give both sport and dport, or neither"
        );
        let e = csv("src,dst,colour\n").unwrap_err();
        assert!(e.to_string().contains("unknown column colour"), "{e}");
        let e = csv("src,dst\n10.0.0.1\n").unwrap_err();
        assert!(
            e.to_string().starts_with("t.csv:2: ") && e.to_string().contains("1 fields"),
            "{e}"
        );
        let e = csv("src,dst,sport\n10.0.0.1,10.0.0.2,99999\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:2: column 3 (sport): \"99999\" is not a port number (0-65535)"
        );
        let e = csv(&format!("src,dst\n10.0.0.1,{}\n", "x".repeat(10_000))).unwrap_err();
        assert!(e.to_string().len() < 200, "long values are cut: {e}");
        let e = csv("src,dst,rate\n10.0.0.1,10.0.0.2,fast\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.csv:2: column 3 (rate): `fast`: unknown unit"),
            "{e}"
        );
        // A volume past 2^50 bytes (found by fuzzing: such sums wrapped).
        let e = csv("src,dst,bytes\n10.0.0.1,10.0.0.2,18446744073709551615\n").unwrap_err();
        assert!(e.to_string().contains("t.csv:2: column 3 (bytes)"), "{e}");
        assert!(csv("").unwrap().is_empty());
    }

    #[test]
    fn json_flows_and_errors() {
        let f = read_bytes(
            "t.json",
            br#"[{"proto":"tcp","src":"10.0.0.1","sport":1,"dst":"10.0.0.2","dport":2,"bytes":5,"rate":1e6},
                {"src_mac":"02:00:00:00:00:01","dst_mac":"02:00:00:00:00:02"}]"#,
        )
        .unwrap()
        .0;
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].demand_bps, Some(1e6));
        assert!(f[1].key.ip.is_none());
        let e = read_bytes(
            "t.json",
            br#"[{"src":"10.0.0.1","dst":"10.0.0.2"},{"srcc":1}]"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = read_bytes("t.json", b"[{\"src\":\"10.0.0.1\"").unwrap_err();
        assert!(e.to_string().starts_with("t.json:1: "), "{e}");
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1g").unwrap(), 1e9);
        assert_eq!(parse_rate("250kbit").unwrap(), 2.5e5);
        assert_eq!(parse_rate("10Gbit/s").unwrap(), 1e10);
        assert_eq!(parse_rate("1500").unwrap(), 1500.0);
        assert!(parse_rate("-1").is_err());
        assert!(parse_rate("3x").is_err());
    }

    fn pcap_of(frames: &[Vec<u8>]) -> Vec<u8> {
        use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
        let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
        for (i, f) in frames.iter().enumerate() {
            let p = PcapPacket::new(
                std::time::Duration::from_millis(i as u64),
                f.len() as u32,
                f,
            );
            w.write_packet(&p).unwrap();
        }
        w.into_writer()
    }

    fn tcp_frame(sport: u16) -> Vec<u8> {
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(sport, 80, 1, 1000);
        let mut v = Vec::new();
        b.write(&mut v, &[0u8; 100]).unwrap();
        v
    }

    #[test]
    fn pcap_is_folded_into_flows_and_a_cut_capture_plans_from_what_was_read() {
        let frames = vec![tcp_frame(1000), tcp_frame(1001), tcp_frame(1000)];
        let data = pcap_of(&frames);
        let (f, st) = read_bytes("c.pcap", &data).unwrap();
        assert_eq!(st.packets, 3);
        assert_eq!(st.skipped, None);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].bytes, 2 * frames[0].len() as u64);
        // The last packet cut short: the two before it are planned.
        let cut = &data[..data.len() - 10];
        let (f, st) = read_bytes("c.pcap", cut).unwrap();
        assert_eq!(st.packets, 2);
        assert_eq!(f.len(), 2);
        let sk = st.skipped.unwrap();
        assert_eq!((sk.from_packet, sk.packets), (3, Some(1)));
        assert_eq!(
            sk.to_string(),
            "packet 3 is cut short (the capture ends inside it, or its length is damaged): 1 packet skipped, planned from the 2 before it"
        );
        // Garbage after two good packets: they are planned, the rest skipped.
        let two = pcap_of(&frames[..2]);
        let mut junk = two.clone();
        // A packet header (big-endian, as the writer's) claiming more than
        // the snap length, then junk.
        for word in [1u32, 0, 100_000, 5] {
            junk.extend_from_slice(&word.to_be_bytes());
        }
        junk.extend(std::iter::repeat_n(0xeeu8, 100_000));
        let (f, st) = read_bytes("c.pcap", &junk).unwrap();
        assert_eq!((st.packets, f.len()), (2, 2));
        let sk = st.skipped.unwrap();
        assert_eq!((sk.from_packet, sk.packets), (3, None));
        assert!(sk.to_string().contains("the rest of the capture"), "{sk}");
        // Zeros after them read as empty packets: damage too, at once.
        let mut zeros = two.clone();
        zeros.extend(std::iter::repeat_n(0u8, 1 << 20));
        let (_, st) = read_bytes("c.pcap", &zeros).unwrap();
        assert!(st.skipped.unwrap().why.contains("length 0"));
        // Damage before any packet is an error.
        let header_only = &data[..24 + 8];
        let e = read_bytes("c.pcap", header_only).unwrap_err();
        assert!(e.to_string().contains("packet 1"), "{e}");
        let mut bad = data[..24].to_vec();
        bad.extend(std::iter::repeat_n(0u8, 1 << 20));
        assert!(read_bytes("c.pcap", &bad).is_err());
    }

    #[test]
    fn a_cut_pcapng_plans_from_what_was_read() {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
        use pcap_file::pcapng::PcapNgWriter;
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen: 0,
            options: vec![],
        })
        .unwrap();
        for port in [1000u16, 1001, 1002] {
            let frame = tcp_frame(port);
            w.write_pcapng_block(EnhancedPacketBlock {
                interface_id: 0,
                timestamp: std::time::Duration::ZERO,
                original_len: frame.len() as u32,
                data: frame.into(),
                options: vec![],
            })
            .unwrap();
        }
        let data = w.into_inner();
        assert_eq!(read_bytes("c.pcapng", &data).unwrap().1.packets, 3);
        let (f, st) = read_bytes("c.pcapng", &data[..data.len() - 7]).unwrap();
        assert_eq!((st.packets, f.len()), (2, 2));
        assert_eq!(st.skipped.unwrap().packets, Some(1));
    }

    #[test]
    fn flow_lists_past_the_limit_or_not_text_are_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("lkt-plan-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("flows.csv");
        std::fs::File::create(&p).unwrap().set_len(2 << 30).unwrap();
        let t = std::time::Instant::now();
        let e = read_flows(&p, None).unwrap_err();
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
        let e = read_flows(Path::new("/dev/zero"), None).unwrap_err();
        assert_eq!(e.to_string(), "/dev/zero: not a text file (byte 0 is NUL)");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Auto holds the first packets while it decides, then plans every
    /// one of them: past its 1024-packet window, and within it.
    #[test]
    fn auto_decides_and_plans_every_packet_it_held() {
        for n in [3u16, 1500] {
            let frames: Vec<Vec<u8>> = (0..n).map(|i| tcp_frame(1000 + i % 7)).collect();
            let (f, st) = read_bytes("c.pcap", &pcap_of(&frames)).unwrap();
            assert_eq!((st.packets, f.len()), (u64::from(n), 7.min(usize::from(n))));
            assert!(st.export.is_none());
            let bytes: u64 = f.iter().map(|f| f.bytes).sum();
            assert_eq!(bytes, u64::from(n) * frames[0].len() as u64);
        }
        // NetFlow v9 to 2055 from 192.0.2.9: exports.
        use crate::export::build::*;
        let d = v9(
            1,
            &[
                v9_template(256, &FIVE_TUPLE),
                data(256, &[record([10, 0, 0, 1], [10, 0, 0, 2], 5, 6, 100, 1)]),
            ],
        );
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 1])
            .ipv4([192, 0, 2, 9], [192, 0, 2, 1], 64)
            .udp(40000, 2055)
            .write(&mut frame, &d)
            .unwrap();
        let (f, st) = read_bytes("e.pcap", &pcap_of(&[frame])).unwrap();
        assert_eq!(st.export.unwrap().records, 1);
        assert_eq!((f.len(), f[0].bytes), (1, 114));
    }

    #[test]
    fn host_gives_directions() {
        let data = pcap_of(&[tcp_frame(1000)]);
        let dir = std::env::temp_dir().join(format!("lkt-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.pcap");
        std::fs::write(&p, &data).unwrap();
        let (f, _) = read_flows(&p, Some("10.0.0.2".parse().unwrap())).unwrap();
        assert_eq!(f[0].dir, Dir::In);
        let (f, st) = read_flows(&p, Some("10.9.9.9".parse().unwrap())).unwrap();
        assert!(f.is_empty());
        assert_eq!(st.unrelated, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
