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
    /// Packets of link types lagkit does not read (skipped): not
    /// Ethernet, Linux cooked (SLL, SLL2), raw IP or BSD loopback.
    pub not_ethernet: u64,
    /// Packets whose record is damaged (skipped, the rest read on): an
    /// original length shorter than the bytes captured or past 1 MiB, a
    /// link-layer header cut short, an interface never described.
    pub damaged: u64,
    /// Packets without their Ethernet header (Linux cooked, raw IP): read
    /// with the destination MAC unknown (zeros), and the source MAC too
    /// for raw IP.
    pub macs_unknown: u64,
    /// Packets (or exported records) neither from nor to the host (when
    /// a host was named).
    pub unrelated: u64,
    /// Packets that are not UDP, in a capture of flow exports (skipped).
    pub not_udp: u64,
    /// Link-local control frames (LACP and Marker, PAgP, STP, LLDP, CDP:
    /// IEEE's 01:80:c2:00:00:0x group, Cisco's 01:00:0c:cc:cc:cc, the
    /// slow-protocols EtherType): each stays on the link it was sent on,
    /// no hash moves it, so a capture of the members plans without them.
    pub control_frames: u64,
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

impl CaptureStats {
    /// What was left out, one phrase each (empty when nothing was): the
    /// lines `lagkit plan` prints after "dropped:".
    pub fn dropped(&self) -> Vec<String> {
        let mut d = Vec::new();
        let mut add = |n: u64, what: String| {
            if n > 0 {
                d.push(what);
            }
        };
        add(
            self.not_ethernet,
            format!(
                "{} packets of link types lagkit does not read (Ethernet, Linux cooked, raw IP, BSD loopback are read)",
                self.not_ethernet
            ),
        );
        add(
            self.damaged,
            format!(
                "{} packets are damaged (lengths that cannot be true, a link header cut short, or an interface never described)",
                self.damaged
            ),
        );
        if let Some(x) = &self.export {
            add(
                x.before_template_sets,
                format!(
                    "{} data sets ({} bytes) came before their template",
                    x.before_template_sets, x.before_template_bytes
                ),
            );
            add(
                x.unusable_records,
                format!(
                    "{} records name no IP addresses or packet header",
                    x.unusable_records
                ),
            );
            add(
                x.impossible_records,
                format!(
                    "{} records have counters that cannot be true (more bytes than their packets carry, or past 2^50 bytes)",
                    x.impossible_records
                ),
            );
            add(
                x.damaged_datagrams,
                format!("{} datagrams are damaged", x.damaged_datagrams),
            );
            add(
                x.unreadable_datagrams,
                format!(
                    "{} datagrams are exports lagkit cannot read ({})",
                    x.unreadable_datagrams,
                    x.unreadable_kinds.join(", ")
                ),
            );
            add(
                x.snapped_datagrams,
                format!(
                    "{} datagrams were cut by the capture's snap length (capture exports with -s 0)",
                    x.snapped_datagrams
                ),
            );
            add(
                x.over_cap,
                format!(
                    "{} records ({} bytes) of flows past the table's {} flows",
                    x.over_cap,
                    x.over_cap_bytes,
                    crate::export::MAX_FLOWS
                ),
            );
        }
        let what = if self.export.is_some() {
            "records"
        } else {
            "packets"
        };
        add(
            self.unrelated,
            format!("{} {what} neither from nor to the host", self.unrelated),
        );
        add(
            self.control_frames,
            format!(
                "{} link-local control frames (LACP, Marker, PAgP, STP, LLDP, CDP), which stay on their link whatever the hash",
                self.control_frames
            ),
        );
        let not_export = self.export.as_ref().map_or(0, |x| x.not_export) + self.not_udp;
        if self.export.is_some() {
            add(not_export, format!("{not_export} packets are not exports"));
        }
        d
    }

    /// What a reader should know of the plan's figures, one phrase each
    /// (empty when nothing): the lines `lagkit plan` prints after
    /// "note:".
    pub fn notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        if let Some(x) = self.export.as_ref().filter(|x| x.icmp_flows > 0) {
            n.push(format!(
                "{} ICMP flows: exports carry no ICMP echo identifier, which Linux's layer3+4 and encap3+4 hash from the packets; under those policies their links are estimates (a capture of the same traffic places them exactly)",
                x.icmp_flows
            ));
        }
        if let Some(x) = self.export.as_ref().filter(|x| x.macless_flows > 0) {
            n.push(format!(
                "{} flows without MAC addresses (their exporter sends none): layer2 and layer2+3 (and Cisco's MAC methods) hash zeros for them, so plan those policies from a capture",
                x.macless_flows
            ));
        }
        n
    }

    /// Why an input gave no flow to plan, naming what it held and what
    /// was left out, for the error `lagkit plan` gives then.
    pub fn why_no_flows(&self) -> String {
        let held = match &self.export {
            Some(x) if x.datagrams > 0 => format!(
                "{} datagrams of flow exports gave no flow",
                x.datagrams
            ),
            Some(_) if self.packets > 0 => format!(
                "none of the {} packets is a flow export lagkit reads (NetFlow v1, v5, v7, v9, IPFIX, sFlow v5)",
                self.packets
            ),
            Some(_) => "no export datagrams".into(),
            None if self.packets > 0 => format!("none of the {} packets gave a flow", self.packets),
            None => "it holds no flows (an empty flow list or capture)".into(),
        };
        let mut dropped = self.dropped();
        if self.unrelated > 0 {
            dropped.push("is --host the bonded host's IP or MAC?".into());
        }
        let mut why = if dropped.is_empty() {
            format!("no flows to plan: {held}")
        } else {
            format!("no flows to plan: {held}: {}", dropped.join("; "))
        };
        if let Some(sk) = &self.skipped {
            why += &format!("; {sk}");
        }
        why
    }
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
/// ([`FlowFormat::Packets`]), NetFlow (v1, v5, v7, v9), IPFIX or sFlow v5 exports, or
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
    /// While [`FlowFormat::Auto`] has not decided: the frames so far.
    pending: Vec<(Vec<u8>, u32)>,
    /// UDP datagrams among `pending`, how many of them are exports lagkit
    /// reads, and how many look like exports it cannot read.
    pending_udp: (usize, usize, usize),
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
            pending_udp: (0, 0, 0),
            pending_bytes: 0,
            export,
            ambiguous: None,
        }
    }

    /// One captured packet of original length `len`, from an interface of
    /// link type `link` (`None`: an interface the capture never described).
    fn packet(&mut self, link: Option<DataLink>, data: &[u8], len: u32) {
        self.stats.packets += 1;
        let Some(link) = link else {
            self.stats.damaged += 1;
            return;
        };
        if len < data.len() as u32 || len > MAX_PACKET_LEN {
            self.stats.damaged += 1;
            return;
        }
        let frame = match crate::link::frame(link, data, len) {
            Ok(f) => f,
            Err(crate::link::Unreadable::LinkType(_)) => {
                self.stats.not_ethernet += 1;
                return;
            }
            Err(crate::link::Unreadable::Header) => {
                self.stats.damaged += 1;
                return;
            }
        };
        self.stats.macs_unknown += u64::from(frame.macs_unknown);
        let (data, len) = (&frame.bytes[..], frame.len);
        if self.format == FlowFormat::Auto && self.ambiguous.is_none() {
            if let Some((_, port, payload)) = crate::export::udp_of(data, false) {
                self.pending_udp.0 += 1;
                if crate::export::sniff(port, payload).is_some() {
                    self.pending_udp.1 += 1;
                } else if crate::export::looks_like_export(port, payload) {
                    self.pending_udp.2 += 1;
                }
            }
            self.pending.push((data.to_vec(), len));
            self.pending_bytes += data.len();
            if self.pending_udp.0 >= DECIDE_AFTER
                || self.pending.len() >= DECIDE_WITHIN
                || self.pending_bytes >= DECIDE_BYTES
            {
                self.decide();
            }
            return;
        }
        self.take(data, len);
    }

    /// Auto's choice, from the datagrams seen: exports when every UDP
    /// datagram is one (and there is one), the traffic when none is. A
    /// datagram to a collector port with the version field of an export
    /// lagkit cannot read (NetFlow v8, sFlow v4, ...) counts as an export:
    /// it is never planned as traffic.
    fn decide(&mut self) {
        let (udp, readable, unreadable) = self.pending_udp;
        let exports = readable + unreadable;
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
        for (data, len) in std::mem::take(&mut self.pending) {
            self.take(&data, len);
        }
    }

    /// One Ethernet frame of original length `len`.
    fn take(&mut self, data: &[u8], len: u32) {
        if let Some(x) = &mut self.export {
            match crate::export::udp_of(data, false) {
                Some((from, port, payload)) => {
                    let export =
                        x.takes(payload) || crate::export::looks_like_export(port, payload);
                    if export && data.len() < len as usize {
                        // A datagram the capture's snap length cut cannot
                        // be decoded.
                        x.snapped();
                    } else if x.takes(payload) {
                        x.datagram(from, payload);
                    } else if !x.unreadable(port, payload) {
                        x.not_export();
                    }
                }
                None => self.stats.not_udp += 1,
            }
            return;
        }
        if is_link_local_control(data) {
            self.stats.control_frames += 1;
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
            let (flows, mut st, unrelated) = x.finish();
            st.icmp_flows = (flows.iter())
                .filter(|f| f.key.ip.is_some_and(|ip| matches!(ip.proto, 1 | 58)))
                .count() as u64;
            st.macless_flows = (flows.iter())
                .filter(|f| f.key.src_mac == [0; 6] && f.key.dst_mac == [0; 6])
                .count() as u64;
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

/// Whether Ethernet frame `data` is a link-local control frame: to
/// IEEE's reserved group 01:80:c2:00:00:00-0f (STP, LACP and Marker,
/// LLDP, ...), to Cisco's 01:00:0c:cc:cc:cc (PAgP, CDP, DTP, VTP), or of
/// the slow-protocols EtherType (a Linux cooked capture's frame has no
/// destination MAC).
fn is_link_local_control(data: &[u8]) -> bool {
    const IEEE: [u8; 5] = [0x01, 0x80, 0xc2, 0x00, 0x00];
    const CISCO: [u8; 6] = [0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc];
    const SLOW: [u8; 2] = [0x88, 0x09];
    let (Some(dst), Some(et)) = (data.get(..6), data.get(12..14)) else {
        return false;
    };
    (dst[..5] == IEEE && dst[5] < 0x10) || dst == CISCO || et == SLOW
}

/// The longest packet a capture's record may claim: 1 MiB. libpcap
/// captures at most 256 KiB of a packet, and a packet's original length
/// is at most 64 KiB, or a few hundred KiB with GSO and BIG TCP; a record
/// claiming more is damaged.
pub const MAX_PACKET_LEN: u32 = 1 << 20;

/// The most bytes one pcap record may hold: libpcap's largest snap length
/// (256 KiB). A longer record means the file's framing is lost: the rest
/// is skipped.
const MAX_RECORD: u32 = 262_144;

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
    // Raw records: the header's snap length bounds nothing (tcpdump -s 96
    // writes original lengths past it, and some writers a snap length of
    // 0), and the timestamps are not needed.
    while let Some(p) = rd.next_raw_packet() {
        match p {
            Ok(p) if p.incl_len == 0 && p.orig_len == 0 => return damaged(path, f, empty_packet()),
            Ok(p) if p.incl_len > MAX_RECORD => {
                return damaged(
                    path,
                    f,
                    pcap_file::PcapError::InvalidField("a record longer than 256 KiB"),
                )
            }
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
    // Each section's interfaces, by their order: their link types and
    // snap lengths.
    let mut links: Vec<(DataLink, u32)> = Vec::new();
    loop {
        // The byte order of the section a block is in (a new section's
        // own header is read by the reader).
        let big = rd.section().endianness == pcap_file::Endianness::Big;
        let Some(b) = rd.next_raw_block() else { break };
        let b = match b {
            Ok(b) => b,
            Err(e) => return damaged(path, f, e),
        };
        match pcapng_block(b.type_, &b.body, big, &links) {
            NgBlock::Section => links.clear(),
            NgBlock::Interface(link, snaplen) => links.push((link, snaplen)),
            NgBlock::Packet(_, data, len) if len == 0 && data.is_empty() => {
                return damaged(path, f, empty_packet())
            }
            NgBlock::Packet(link, data, len) => f.packet(link, data, len),
            NgBlock::Damaged => {
                f.stats.packets += 1;
                f.stats.damaged += 1;
            }
            NgBlock::Other => {}
        }
    }
    f.finish(path)
}

/// One pcapng block, as the planner reads it.
#[derive(Debug, PartialEq, Eq)]
enum NgBlock<'a> {
    /// A section header: the interfaces start again.
    Section,
    /// An interface description: its link type and snap length.
    Interface(DataLink, u32),
    /// A packet (enhanced, simple or obsolete packet block): its
    /// interface's link type (`None`: never described), captured bytes,
    /// original length.
    Packet(Option<DataLink>, &'a [u8], u32),
    /// A packet block whose fields contradict its length.
    Damaged,
    /// Anything else (statistics, name resolution, custom blocks).
    Other,
}

/// Reads a pcapng block's body (pcapng, draft-ietf-opsawg-pcapng: 4.1
/// Section Header, 4.2 Interface Description, 4.3 Enhanced Packet, 4.4
/// Simple Packet; Appendix A, the obsolete Packet Block) in the section's
/// byte order. Timestamps and options are not needed.
fn pcapng_block<'a>(
    type_: u32,
    body: &'a [u8],
    big: bool,
    links: &[(DataLink, u32)],
) -> NgBlock<'a> {
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = body.get(at..at + 4)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let u16_at = |at: usize| -> Option<u16> {
        let b: [u8; 2] = body.get(at..at + 2)?.try_into().ok()?;
        Some(if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    };
    let link_of = |id: usize| links.get(id).map(|l| l.0);
    // Interface, captured length and original length at these offsets,
    // the data after them.
    let packet = |id: Option<usize>, cap_at: usize, data_at: usize| -> NgBlock<'a> {
        let (Some(id), Some(cap), Some(orig)) = (id, u32_at(cap_at), u32_at(cap_at + 4)) else {
            return NgBlock::Damaged;
        };
        match body.get(data_at..data_at.saturating_add(cap as usize)) {
            Some(data) => NgBlock::Packet(link_of(id), data, orig),
            None => NgBlock::Damaged,
        }
    };
    match type_ {
        0x0A0D_0D0A => NgBlock::Section,
        1 => match (u16_at(0), u32_at(4)) {
            (Some(link), Some(snaplen)) => {
                NgBlock::Interface(DataLink::from(u32::from(link)), snaplen)
            }
            _ => NgBlock::Other,
        },
        // Obsolete Packet Block: a 16-bit interface and a drop count.
        2 => packet(u16_at(0).map(usize::from), 12, 20),
        3 => {
            // Simple Packet Block: interface 0; the data is the original
            // length cut to the interface's snap length and the block.
            let Some(orig) = u32_at(0) else {
                return NgBlock::Damaged;
            };
            let rest = &body[4..];
            let snap = links.first().map_or(0, |l| l.1);
            let mut cap = (orig as usize).min(rest.len());
            if snap > 0 {
                cap = cap.min(snap as usize);
            }
            NgBlock::Packet(link_of(0), &rest[..cap], orig)
        }
        6 => packet(u32_at(0).map(|i| i as usize), 12, 20),
        _ => NgBlock::Other,
    }
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
            let d = &buf[..n];
            // No port to go by: each datagram is judged as if sent to
            // NetFlow's.
            if x.takes(d) {
                x.datagram(from, d);
            } else if !x.unreadable(crate::export::COLLECTOR_PORTS[0], d) {
                x.not_export();
            }
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
    fn link_local_control_frames_are_counted_not_planned() {
        let mut f = Folder::new(None, FlowFormat::Packets);
        // An LACPDU (slow protocols, to 01:80:c2:00:00:02), a PAgP frame
        // (to Cisco's 01:00:0c:cc:cc:cc), a Linux cooked capture's LACPDU
        // (no destination MAC, EtherType 0x8809), an STP BPDU.
        let mut lacp = vec![
            0x01, 0x80, 0xc2, 0, 0, 0x02, 2, 0, 0, 0, 0, 1, 0x88, 0x09, 1, 1,
        ];
        lacp.resize(124, 0);
        let mut pagp = vec![
            0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc, 2, 0, 0, 0, 0, 1, 0, 0x30,
        ];
        pagp.resize(64, 0);
        let mut cooked = vec![0; 12];
        cooked.extend([0x88, 0x09, 1, 1]);
        cooked.resize(124, 0);
        let mut stp = vec![0x01, 0x80, 0xc2, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0x26];
        stp.resize(64, 0);
        // An IPv4 frame to a multicast group outside 01:80:c2:00:00:0x is
        // traffic.
        let mut ip = vec![0x01, 0x80, 0xc2, 0, 0, 0x10, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        ip.extend([
            0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
        for frame in [&lacp, &pagp, &cooked, &stp, &ip] {
            f.take(frame, frame.len() as u32);
        }
        let (flows, st) = f.finish(Path::new("t.pcap")).unwrap();
        assert_eq!(st.control_frames, 4);
        assert_eq!(flows.len(), 1, "{flows:?}");
        assert!(st.dropped()[0].starts_with("4 link-local control frames"));
    }

    #[test]
    fn exports_say_what_they_cannot_tell() {
        let st = CaptureStats {
            export: Some(ExportStats {
                icmp_flows: 2,
                macless_flows: 18,
                ..ExportStats::default()
            }),
            ..CaptureStats::default()
        };
        let notes = st.notes();
        assert!(notes[0].starts_with("2 ICMP flows: exports carry no ICMP echo identifier"));
        assert!(notes[1].starts_with("18 flows without MAC addresses"));
        assert!(CaptureStats::default().notes().is_empty());
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
        // A damaged record between good packets: counted and skipped, the
        // packets after it read.
        let two = pcap_of(&frames[..2]);
        let mut junk = two.clone();
        // A packet header (big-endian, as the writer's) claiming more
        // bytes than the packet had (100,000 of 5), then those bytes.
        for word in [1u32, 0, 100_000, 5] {
            junk.extend_from_slice(&word.to_be_bytes());
        }
        junk.extend(std::iter::repeat_n(0xeeu8, 100_000));
        junk.extend_from_slice(&pcap_of(&frames[2..])[24..]);
        let (f, st) = read_bytes("c.pcap", &junk).unwrap();
        assert_eq!((st.packets, st.damaged, f.len()), (4, 1, 2));
        assert_eq!(
            f[0].bytes,
            2 * frames[0].len() as u64,
            "the packet after it"
        );
        assert_eq!(st.skipped, None);
        // A record longer than libpcap ever writes (256 KiB): the framing
        // is lost, the rest skipped.
        let mut lost = two.clone();
        for word in [1u32, 0, 300_000, 300_000] {
            lost.extend_from_slice(&word.to_be_bytes());
        }
        lost.extend(std::iter::repeat_n(0xeeu8, 300_000));
        let (f, st) = read_bytes("c.pcap", &lost).unwrap();
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
        let (f, st) = read_bytes("e.pcap", &pcap_of(&[frame.clone()])).unwrap();
        assert_eq!(st.export.unwrap().records, 1);
        assert_eq!((f.len(), f[0].bytes), (1, 114));
        // The same export captured with a snap length of 60 (18 bytes of
        // the datagram) and of 96: still exports, never traffic, and
        // counted as cut by the snap length.
        use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
        for snap in [60usize, 96] {
            let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
            let p = PcapPacket::new(
                std::time::Duration::ZERO,
                frame.len() as u32,
                &frame[..snap],
            );
            w.write_packet(&p).unwrap();
            let (f, st) = read_bytes("e.pcap", &w.into_writer()).unwrap();
            assert!(f.is_empty(), "snap {snap}: {f:?}");
            let x = st.export.clone().expect("read as exports");
            assert_eq!(x.snapped_datagrams, 1, "snap {snap}");
            assert!(st
                .why_no_flows()
                .contains("cut by the capture's snap length"));
        }
    }

    /// tcpdump -s 96: each record holds 96 bytes and the original length,
    /// past the header's snap length. The key comes from the headers
    /// captured, the bytes from the original length.
    #[test]
    fn a_snap_length_keeps_keys_and_original_lengths() {
        use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
        for endianness in [pcap_file::Endianness::Big, pcap_file::Endianness::Little] {
            let header = PcapHeader {
                snaplen: 96,
                endianness,
                ..PcapHeader::default()
            };
            let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
            let frame = tcp_frame(1000);
            let mut big = Vec::new();
            etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                .single_vlan(100.try_into().unwrap())
                .ipv4([10, 0, 0, 1], [10, 0, 0, 3], 64)
                .udp(5000, 53)
                .write(&mut big, &[0u8; 1400])
                .unwrap();
            for f in [&frame, &big, &big] {
                let cut = &f[..f.len().min(96)];
                let p = PcapPacket::new(std::time::Duration::ZERO, f.len() as u32, cut);
                w.write_packet(&p).unwrap();
            }
            let (flows, st) = read_bytes("s.pcap", &w.into_writer()).unwrap();
            assert_eq!((st.packets, st.damaged, st.skipped.clone()), (3, 0, None));
            assert_eq!(flows[0].bytes, 2 * big.len() as u64);
            assert_eq!(flows[0].key.vlan_id(), Some(100));
            assert_eq!(flows[0].key.l4_ports(), Some((5000, 53)));
            assert_eq!(flows[1].bytes, frame.len() as u64);
        }
    }

    /// A pcapng in either byte order with an Ethernet and a Linux cooked
    /// interface; a packet of an interface never described and one whose
    /// captured length runs past its block are counted as damaged, and
    /// the packets after them read.
    #[test]
    fn pcapng_interfaces_link_types_and_damaged_blocks() {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
        use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
        use pcap_file::pcapng::PcapNgWriter;
        for endianness in [pcap_file::Endianness::Big, pcap_file::Endianness::Little] {
            let section = SectionHeaderBlock {
                endianness,
                ..SectionHeaderBlock::default()
            };
            let mut w = PcapNgWriter::with_section_header(Vec::new(), section).unwrap();
            for linktype in [DataLink::ETHERNET, DataLink::LINUX_SLL] {
                w.write_pcapng_block(InterfaceDescriptionBlock {
                    linktype,
                    snaplen: 96,
                    options: vec![],
                })
                .unwrap();
            }
            let eth = tcp_frame(1000);
            // The same packet as SLL: outgoing, ARPHRD_ETHER, the MAC.
            let mut sll = vec![0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 8, 0];
            sll.extend_from_slice(&eth[14..]);
            let start = w.get_ref().len();
            let mut epb = |interface_id: u32, data: &[u8]| {
                w.write_pcapng_block(EnhancedPacketBlock {
                    interface_id,
                    timestamp: std::time::Duration::ZERO,
                    original_len: data.len() as u32 + 1000,
                    data: data[..96].to_vec().into(),
                    options: vec![],
                })
                .unwrap();
            };
            epb(0, &eth);
            epb(0, &eth);
            epb(1, &sll);
            let mut data = w.into_inner();
            // Each block: type, length, interface, timestamp (2 words),
            // captured and original length, 96 bytes, length: 128 bytes.
            let u32_of = |v: u32| match endianness {
                pcap_file::Endianness::Big => v.to_be_bytes(),
                pcap_file::Endianness::Little => v.to_le_bytes(),
            };
            let good = data[start..start + 128].to_vec();
            // The second block's interface 7 was never described.
            data[start + 128 + 8..start + 128 + 12].copy_from_slice(&u32_of(7));
            // A block whose captured length says 4,000 bytes, then a good one.
            let mut bad = good.clone();
            bad[20..24].copy_from_slice(&u32_of(4000));
            data.extend_from_slice(&bad);
            data.extend_from_slice(&good);
            let (flows, st) = read_bytes("n.pcapng", &data).unwrap();
            assert_eq!(
                (st.packets, st.damaged, st.macs_unknown, st.not_ethernet),
                (5, 2, 1, 0),
                "{endianness:?}"
            );
            assert_eq!(st.skipped, None);
            // One flow: the Ethernet frame and its cooked twin (whose
            // destination MAC is unknown) differ only in the MAC.
            let bytes: u64 = flows.iter().map(|f| f.bytes).sum();
            assert_eq!(bytes, 3 * (eth.len() as u64 + 1000));
        }
    }

    #[test]
    fn no_flows_says_why() {
        let st = CaptureStats {
            packets: 13,
            not_ethernet: 13,
            ..CaptureStats::default()
        };
        assert_eq!(
            st.why_no_flows(),
            "no flows to plan: none of the 13 packets gave a flow: 13 packets of link types lagkit does not read (Ethernet, Linux cooked, raw IP, BSD loopback are read)"
        );
        let st = CaptureStats {
            packets: 487,
            export: Some(ExportStats {
                datagrams: 487,
                unreadable_datagrams: 3,
                unreadable_kinds: vec!["NetFlow v8".into()],
                impossible_records: 2,
                ..ExportStats::default()
            }),
            ..CaptureStats::default()
        };
        let why = st.why_no_flows();
        assert!(
            why.starts_with("no flows to plan: 487 datagrams of flow exports gave no flow: "),
            "{why}"
        );
        assert!(
            why.contains("2 records have counters that cannot be true"),
            "{why}"
        );
        assert!(
            why.contains("3 datagrams are exports lagkit cannot read (NetFlow v8)"),
            "{why}"
        );
        assert_eq!(
            CaptureStats::default().why_no_flows(),
            "no flows to plan: it holds no flows (an empty flow list or capture)"
        );
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
