//! The topology file: hosts (network namespaces running a lagkit bond),
//! switches (Open vSwitch now, lagkit's own later), links between them,
//! the workload, and a note on scale. Every error names the file, line and
//! column of the offending value.
//!
//! ```toml
//! name = "two-hosts-ovs"              # lab name (default: the file's stem)
//! scale = "100 Mbit/s links stand for 1 Gbit/s"   # or [scale] note = ".." factor = 10
//!
//! [[host]]
//! name = "h1"
//! address = "10.0.0.1/24"             # on the bond, or on the only link without a bond
//! bond = { mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4" }
//!
//! [[switch]]
//! name = "sw"
//! kind = "ovs"                        # "lagkit" is reserved for lagkit's own switch
//! [[switch.channel]]                  # a port-channel
//! name = "po1"
//! host = "h1"                         # every port linked to h1 (or: ports = ["p1", "p2"])
//! protocol = "lacp-active"            # lacp-active | lacp-passive | static | none
//! load_balance = "l4"                 # l4 (OVS balance-tcp) | l2 (balance-slb) | l3
//!
//! [[link]]
//! between = ["h1", "sw"]
//! count = 2                           # veth pairs
//! rate = "100mbit"                    # tbf on both ends; absent: unshaped
//! overhead = true                     # count preamble, FCS and gap (tbf overhead 24 mpu 84)
//! mtu = 1500                          # or [9000, 1500]: each end of `between`
//! fault = { loss = 0.01 }             # optional: drop 1% of frames (by the lagkit bond at one end)
//!
//! [workload]
//! kind = "iperf3"
//! client = "h1"
//! server = "h2"
//! flows = 8
//! seconds = 10
//! bidir = true
//! # or lagkit's own workloads (crates/load):
//! # kind = "lagkit-load"
//! # load = "socketprocs"              # socketprocs | stream | maerts | bidir | rr | lpm
//! # clients = ["c1", "c2"]            # instead of client: all at once (stream, maerts, bidir, rr)
//! # migrations = 4                    # lpm: control+data pairs on sequential ports
//! # sockbuf = 131072                  # SO_SNDBUF/SO_RCVBUF, bytes (default: the kernel's autotuning)
//! # procs = 4                         # socketprocs: N per side, N×N connections
//! # method = "epoll-et"               # socketprocs: select | poll | epoll-et
//! # conns = 1                         # stream/maerts/rr: parallel connections
//! # size = 4096                       # message size, bytes (default by load)
//! # seconds = 10
//! ```
//!
//! Interfaces are named by the lab, in file order: a host's links are `e1`,
//! `e2`, ... in its namespace, a switch's ports `p1`, `p2`, .... The bond's
//! `members` default to all of the host's links; `name` defaults to
//! `bond0`, `address` to the host's address and `mtu` to its links' MTU.

use lagkit_bondcfg::{BondConfig, Cidr};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use toml::Spanned;

/// A topology file that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct TopologyError {
    /// The file name as given.
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong, and how to fix it.
    pub message: String,
}

/// The prefix of every namespace a lab creates.
pub const NS_PREFIX: &str = "lklab-";

/// A validated topology.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Topology {
    /// Lab name: `[a-z0-9-]`, at most 24 characters.
    pub name: String,
    /// The file it came from (as given).
    pub file: String,
    /// What the link rates stand for.
    pub scale: Option<Scale>,
    /// Hosts, in file order.
    pub hosts: Vec<Host>,
    /// Switches, in file order.
    pub switches: Vec<Switch>,
    /// One entry per veth pair (a `count = 2` link gives two).
    pub links: Vec<Link>,
    /// What `lagkit lab run` runs.
    pub workload: Option<WorkloadSpec>,
    /// Things that will work but probably not as meant.
    pub warnings: Vec<String>,
}

/// What the lab's rates stand for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// Free text, printed on every report.
    pub note: String,
    /// Real rate / lab rate (e.g. 10 for 100 Mbit/s standing for 1 Gbit/s).
    pub factor: Option<f64>,
}

/// A host: a namespace, optionally a lagkit bond.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Host {
    /// Node name: `[a-z0-9_]`, at most 12 characters.
    pub name: String,
    /// Its address with prefix (on the bond, or on its single link).
    pub address: Option<String>,
    /// The bond it runs, if any.
    pub bond: Option<HostBond>,
    /// Its link interfaces, in file order (`e1`, `e2`, ...).
    pub ifaces: Vec<String>,
}

/// A host's lagkit bond.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostBond {
    /// The validated configuration.
    #[serde(skip)]
    pub config: BondConfig,
    /// Bond name.
    pub name: String,
    /// Linux mode name (e.g. `802.3ad`).
    pub mode: String,
    /// Transmit hash policy.
    pub hash: String,
    /// Members, in order (the first is the "first port" of balance ratios).
    pub members: Vec<String>,
    /// The file handed to `lagkit up`.
    pub toml: String,
}

impl HostBond {
    /// Runs LACP.
    pub fn is_lacp(&self) -> bool {
        self.config.mode.is_lacp()
    }
}

/// What implements a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchKind {
    /// Open vSwitch, userspace datapath.
    Ovs,
    /// lagkit's own switch (reserved: not implemented yet).
    Lagkit,
}

/// A switch and its port-channels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Switch {
    /// Node name.
    pub name: String,
    /// Implementation.
    pub kind: SwitchKind,
    /// Port-channels.
    pub channels: Vec<Channel>,
    /// All its ports, in file order (`p1`, `p2`, ...).
    pub ports: Vec<String>,
}

/// Port-channel protocol (and port mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// LACP, port mode active.
    LacpActive,
    /// LACP, port mode passive.
    LacpPassive,
    /// A channel with no protocol (Cisco "mode on").
    Static,
    /// No channel: each port on its own.
    None,
}

impl Protocol {
    fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "lacp-active" | "lacp" | "active" => Protocol::LacpActive,
            "lacp-passive" | "passive" => Protocol::LacpPassive,
            "static" | "on" | "manual" => Protocol::Static,
            "none" => Protocol::None,
            _ => return None,
        })
    }

    /// LACP runs.
    pub fn is_lacp(self) -> bool {
        matches!(self, Protocol::LacpActive | Protocol::LacpPassive)
    }
}

/// Frame distribution of a port-channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadBalance {
    /// MAC addresses (OVS `balance-slb`).
    L2,
    /// IP addresses (no OVS equivalent).
    L3,
    /// TCP/UDP ports (OVS `balance-tcp`).
    L4,
}

impl LoadBalance {
    /// The OVS `bond_mode` for it, if OVS has one.
    pub fn ovs_bond_mode(self) -> Option<&'static str> {
        match self {
            LoadBalance::L4 => Some("balance-tcp"),
            LoadBalance::L2 => Some("balance-slb"),
            LoadBalance::L3 => None,
        }
    }
}

/// One port-channel of a switch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Channel {
    /// Name (the OVS bond port's name).
    pub name: String,
    /// The host at the other end, when given as `host`.
    pub host: Option<String>,
    /// Its ports, in order.
    pub ports: Vec<String>,
    /// Protocol and port mode.
    pub protocol: Protocol,
    /// Frame distribution.
    pub load_balance: LoadBalance,
}

/// A link rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// Bits per second.
    pub bits: u64,
    /// As written (normalized to lower case), e.g. `100mbit`.
    pub text: String,
}

impl Rate {
    /// Parses `100mbit`, `1gbit`, `2.5gbit`, `500kbit`, `64000bit`.
    pub fn parse(s: &str) -> Result<Rate, String> {
        let t = s.trim().to_ascii_lowercase();
        let (num, mult) = if let Some(n) = t.strip_suffix("gbit") {
            (n, 1e9)
        } else if let Some(n) = t.strip_suffix("mbit") {
            (n, 1e6)
        } else if let Some(n) = t.strip_suffix("kbit") {
            (n, 1e3)
        } else if let Some(n) = t.strip_suffix("bit") {
            (n, 1.0)
        } else if t.ends_with("bps") {
            return Err(format!(
                "rate '{s}': tc reads 'bps' as bytes per second; write bits: '100mbit', '1gbit'"
            ));
        } else {
            return Err(format!(
                "rate '{s}': use a number and kbit, mbit or gbit, e.g. '100mbit' or '1gbit'"
            ));
        };
        let v: f64 = num
            .trim()
            .parse()
            .map_err(|_| format!("rate '{s}': '{num}' is not a number"))?;
        let bits = (v * mult).round();
        if !(8000.0..=400e9).contains(&bits) {
            return Err(format!("rate '{s}': must be between 8kbit and 400gbit"));
        }
        Ok(Rate {
            bits: bits as u64,
            text: t,
        })
    }

    /// Mbit/s.
    pub fn mbit(&self) -> f64 {
        self.bits as f64 / 1e6
    }
}

/// One end of a veth pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct End {
    /// Node (host or switch) name.
    pub node: String,
    /// Interface name in the node's namespace.
    pub iface: String,
}

/// One veth pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// First end (as written in `between`).
    pub a: End,
    /// Second end.
    pub b: End,
    /// Shaping on both ends; `None`: unshaped.
    pub rate: Option<Rate>,
    /// Real-wire accounting (tbf `overhead 24 mpu 84`).
    pub overhead: bool,
    /// MTU of each end: `[a, b]` (`mtu = 9000` sets both; `mtu = [9000,
    /// 1500]` sets them apart, as when a switch port was left at 1500).
    pub mtu: [u32; 2],
    /// Injected loss (share of frames, both directions), applied by the
    /// lagkit bond at the first end that is a bonded host.
    pub loss: Option<f64>,
}

impl Link {
    /// The larger of the two ends' MTUs.
    pub fn max_mtu(&self) -> u32 {
        self.mtu[0].max(self.mtu[1])
    }

    /// The two ends' MTUs differ.
    pub fn mtu_mismatch(&self) -> bool {
        self.mtu[0] != self.mtu[1]
    }
}

/// A workload as the topology file describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// iperf3 between two hosts.
    Iperf3(Iperf3Spec),
    /// lagkit's own workloads (crates/load), run as `lagkit load server`
    /// and `lagkit load client` in the hosts' namespaces.
    LagkitLoad(LoadSpec),
}

impl WorkloadSpec {
    /// The client hosts and the server host.
    pub fn ends(&self) -> (&[String], &str) {
        match self {
            WorkloadSpec::Iperf3(s) => (std::slice::from_ref(&s.client), &s.server),
            WorkloadSpec::LagkitLoad(s) => (&s.clients, &s.server),
        }
    }
}

/// `lagkit load` options (`kind = "lagkit-load"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSpec {
    /// Hosts running `lagkit load client`, all at once (at least one).
    pub clients: Vec<String>,
    /// Host running `lagkit load server`.
    pub server: String,
    /// The workload: socketprocs, stream, maerts, bidir (stream and maerts
    /// at once), rr or lpm.
    pub load: String,
    /// socketprocs: processes per side (N×N connections).
    pub procs: u32,
    /// socketprocs: select, poll or epoll-et.
    pub method: String,
    /// stream/maerts/rr: parallel connections.
    pub conns: u32,
    /// Message size, bytes (None: the kind's default).
    pub size: Option<u64>,
    /// Duration, seconds.
    pub seconds: u32,
    /// (First) server port (None: the kind's default).
    pub port: Option<u16>,
    /// lpm: parallel migrations (control+data pairs with sequential ports).
    #[serde(default)]
    pub migrations: u32,
    /// Socket buffers, bytes (None: the kernel's autotuning). Small
    /// buffers keep the data queued at the end of a slow run short.
    #[serde(default)]
    pub sockbuf: Option<u64>,
}

impl LoadSpec {
    /// The loads the lab runs.
    pub const LOADS: [&'static str; 6] = ["socketprocs", "stream", "maerts", "bidir", "rr", "lpm"];
    /// The socketprocs methods.
    pub const METHODS: [&'static str; 3] = ["select", "poll", "epoll-et"];

    /// Seed 000's "App meth" letter for socketprocs (s/p/e); `n` (netperf
    /// stream/maerts/rr) otherwise.
    pub fn app_code(&self) -> String {
        if self.load != "socketprocs" {
            return match self.load.as_str() {
                "stream" => "ns",
                "maerts" => "nm",
                "bidir" => "nb",
                "rr" => "nr",
                "lpm" => "l",
                _ => "n",
            }
            .into();
        }
        match self.method.as_str() {
            "select" | "s" => "s",
            "poll" | "p" => "p",
            _ => "e",
        }
        .into()
    }

    /// The (first) server port: the one given, or the kind's default.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(match self.load.as_str() {
            "socketprocs" => 7000,
            "lpm" => 32791,
            _ => 12865,
        })
    }
}

/// iperf3 options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iperf3Spec {
    /// Host running `iperf3 -c`.
    pub client: String,
    /// Host running `iperf3 -s`.
    pub server: String,
    /// Parallel flows (`-P`).
    pub flows: u32,
    /// Duration (`-t`).
    pub seconds: u32,
    /// Both directions at once (`--bidir`).
    pub bidir: bool,
    /// Server port.
    pub port: u16,
}

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TopologyError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read the topology file: {e}"),
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Topology::parse(&text, &file, &stem)
    }

    /// Parses and validates topology text; `default_name` is used when the
    /// file has no `name`.
    pub fn parse(text: &str, file: &str, default_name: &str) -> Result<Topology, TopologyError> {
        let cx = Cx { text, file };
        let raw: RawTopology = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            cx.err(at, e.message().trim().to_string())
        })?;
        build(&cx, raw, default_name)
    }

    /// The namespace of node `node`.
    pub fn ns(&self, node: &str) -> String {
        ns_name(&self.name, node)
    }

    /// Host `name`.
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// Every node (hosts, then switches).
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.hosts
            .iter()
            .map(|h| h.name.as_str())
            .chain(self.switches.iter().map(|s| s.name.as_str()))
    }

    /// The link ends on node `node`.
    pub fn ends_on<'a>(&'a self, node: &'a str) -> impl Iterator<Item = (&'a End, &'a Link)> + 'a {
        self.links.iter().flat_map(move |l| {
            [&l.a, &l.b]
                .into_iter()
                .filter(move |e| e.node == node)
                .map(move |e| (e, l))
        })
    }

    /// The MAC the lab gives a host's link end: `02:6c:6b:00:<link>:<host>`
    /// (locally administered), both numbers 1-based in file order, so runs
    /// repeat exactly and MAC-based hashes (Linux `layer2`, the last byte
    /// xor) see consecutive last bytes across hosts, as a lab of real
    /// servers from one vendor would. A bond takes its first member's.
    /// `None` for switch ports (OVS owns those).
    pub fn host_mac(&self, end: &End) -> Option<String> {
        let h = self.hosts.iter().position(|h| h.name == end.node)? + 1;
        let i: usize = end.iface.strip_prefix('e')?.parse().ok()?;
        Some(format!("02:6c:6b:00:{:02x}:{:02x}", i & 0xff, h & 0xff))
    }

    /// The device that carries host `name`'s address (its bond, or its
    /// only link) and that device's MAC (a bond takes its first member's).
    pub fn l3_port(&self, name: &str) -> Option<(String, String)> {
        let h = self.host(name)?;
        let (dev, first) = match &h.bond {
            Some(b) => (b.name.clone(), b.members.first()?.clone()),
            None => (h.ifaces.first()?.clone(), h.ifaces.first()?.clone()),
        };
        let end = self
            .ends_on(name)
            .map(|(e, _)| e)
            .find(|e| e.iface == first)?;
        Some((dev, self.host_mac(end)?))
    }

    /// The `--fault-loss` arguments of host `name`'s `lagkit up`: its
    /// member ends of lossy links where it is the first bonded end.
    pub fn fault_losses(&self, name: &str) -> Vec<(String, f64)> {
        let bonded = |n: &str| self.host(n).is_some_and(|h| h.bond.is_some());
        self.links
            .iter()
            .filter_map(|l| {
                let p = l.loss?;
                let end = [&l.a, &l.b].into_iter().find(|e| bonded(&e.node))?;
                (end.node == name).then(|| (end.iface.clone(), p))
            })
            .collect()
    }

    /// Whether hosts need static ARP entries: Open vSwitch's static
    /// (`lacp=off`) bonds drop broadcasts that arrive on any member but
    /// the one they elected for multicast, so a host's ARP request sent on
    /// another member (standard mode hashes it there) is never answered,
    /// unlike on a Cisco "mode on" channel. The lab then gives every host
    /// the others' addresses, as an operator of such a switch would.
    pub fn needs_static_arp(&self) -> bool {
        self.switches.iter().any(|s| {
            s.kind == SwitchKind::Ovs && s.channels.iter().any(|c| c.protocol == Protocol::Static)
        })
    }

    /// The fastest shaped link rate in Mbit/s, if any link is shaped.
    pub fn link_rate_mbit(&self) -> Option<f64> {
        self.links
            .iter()
            .filter_map(|l| l.rate.as_ref().map(Rate::mbit))
            .reduce(f64::max)
    }
}

/// The namespace name of `node` in lab `lab`: `lklab-<lab>-<node>`. Node
/// names have no `-`, so lab `a` never claims lab `a-b`'s namespaces.
pub fn ns_name(lab: &str, node: &str) -> String {
    format!("{NS_PREFIX}{lab}-{node}")
}

/// Whether namespace `ns` belongs to lab `lab` by its name.
pub fn ns_of_lab(lab: &str, ns: &str) -> bool {
    ns.strip_prefix(NS_PREFIX)
        .and_then(|r| r.strip_prefix(lab))
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|node| !node.is_empty() && valid_node(node))
}

/// Lab names: `[a-z0-9-]`, starting with a letter or digit, at most 24.
pub fn valid_lab_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 24
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
}

fn valid_node(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 12
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

// ------------------------------------------------------------------ raw --

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    name: Option<Spanned<String>>,
    scale: Option<Spanned<RawScale>>,
    #[serde(default)]
    host: Vec<RawHost>,
    #[serde(default)]
    switch: Vec<RawSwitch>,
    #[serde(default)]
    link: Vec<RawLink>,
    workload: Option<Spanned<RawWorkload>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawScale {
    Note(String),
    Table { note: String, factor: Option<f64> },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    name: Spanned<String>,
    address: Option<Spanned<String>>,
    bond: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    name: Spanned<String>,
    kind: Option<Spanned<String>>,
    #[serde(default)]
    channel: Vec<RawChannel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChannel {
    name: Spanned<String>,
    host: Option<Spanned<String>>,
    ports: Option<Spanned<Vec<String>>>,
    protocol: Spanned<String>,
    load_balance: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    between: Spanned<Vec<String>>,
    count: Option<Spanned<i64>>,
    rate: Option<Spanned<String>>,
    overhead: Option<bool>,
    mtu: Option<Spanned<toml::Value>>,
    fault: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    kind: Spanned<String>,
    client: Option<Spanned<String>>,
    clients: Option<Spanned<Vec<String>>>,
    server: Option<Spanned<String>>,
    migrations: Option<Spanned<i64>>,
    sockbuf: Option<Spanned<i64>>,
    flows: Option<Spanned<i64>>,
    seconds: Option<Spanned<i64>>,
    bidir: Option<bool>,
    port: Option<Spanned<i64>>,
    load: Option<Spanned<String>>,
    procs: Option<Spanned<i64>>,
    method: Option<Spanned<String>>,
    conns: Option<Spanned<i64>>,
    size: Option<Spanned<i64>>,
}

// ------------------------------------------------------------ validation --

struct Cx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Cx<'_> {
    fn err(&self, at: usize, message: String) -> TopologyError {
        let (line, column) = line_col(self.text, at);
        TopologyError {
            file: self.file.to_string(),
            line,
            column,
            message,
        }
    }

    fn at<T>(&self, s: &Spanned<T>, message: String) -> TopologyError {
        self.err(s.span().start, message)
    }
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn node_name(cx: &Cx<'_>, s: &Spanned<String>, what: &str) -> Result<String, TopologyError> {
    let n = s.get_ref();
    if !valid_node(n) {
        return Err(cx.at(
            s,
            format!("{what} name '{n}': use 1 to 12 of a-z, 0-9 and _ (it goes into namespace and file names)"),
        ));
    }
    Ok(n.clone())
}

fn build(cx: &Cx<'_>, raw: RawTopology, default_name: &str) -> Result<Topology, TopologyError> {
    let mut warnings = Vec::new();
    let name = match &raw.name {
        Some(n) => {
            if !valid_lab_name(n.get_ref()) {
                return Err(cx.at(
                    n,
                    format!(
                        "lab name '{}': use 1 to 24 of a-z, 0-9 and - (not first)",
                        n.get_ref()
                    ),
                ));
            }
            n.get_ref().clone()
        }
        None => {
            if !valid_lab_name(default_name) {
                return Err(cx.err(
                    0,
                    format!("the file name '{default_name}' is not a valid lab name; add name = \"my-lab\" (1 to 24 of a-z, 0-9 and -)"),
                ));
            }
            default_name.to_string()
        }
    };
    let scale = raw.scale.map(|s| match s.into_inner() {
        RawScale::Note(note) => Scale { note, factor: None },
        RawScale::Table { note, factor } => Scale { note, factor },
    });

    // Nodes.
    let mut kinds: BTreeMap<String, &'static str> = BTreeMap::new();
    for h in &raw.host {
        let n = node_name(cx, &h.name, "host")?;
        if kinds.insert(n.clone(), "host").is_some() {
            return Err(cx.at(&h.name, format!("host '{n}' is defined twice")));
        }
    }
    for s in &raw.switch {
        let n = node_name(cx, &s.name, "switch")?;
        if let Some(k) = kinds.insert(n.clone(), "switch") {
            return Err(cx.at(
                &s.name,
                format!("switch '{n}': a {k} already has this name"),
            ));
        }
    }

    // Links, expanded into veth pairs; interface names per node in file order.
    let mut links = Vec::new();
    let mut next_if: BTreeMap<String, usize> = BTreeMap::new();
    for l in &raw.link {
        let b = l.between.get_ref();
        if b.len() != 2 {
            return Err(cx.at(
                &l.between,
                "between: name exactly two nodes, e.g. [\"h1\", \"sw\"]".into(),
            ));
        }
        for n in b {
            if !kinds.contains_key(n) {
                let known: Vec<&str> = kinds.keys().map(String::as_str).collect();
                return Err(cx.at(
                    &l.between,
                    format!(
                        "between: no host or switch '{n}' (known: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        if b[0] == b[1] {
            return Err(cx.at(&l.between, format!("between: '{}' linked to itself", b[0])));
        }
        if kinds[&b[0]] == "switch" && kinds[&b[1]] == "switch" {
            return Err(cx.at(
                &l.between,
                "between: switch-to-switch links are not supported yet".into(),
            ));
        }
        let count = match &l.count {
            Some(c) if !(1..=16).contains(c.get_ref()) => {
                return Err(cx.at(c, "count: between 1 and 16 veth pairs".into()))
            }
            Some(c) => *c.get_ref() as usize,
            None => 1,
        };
        let rate = match &l.rate {
            Some(r) => Some(Rate::parse(r.get_ref()).map_err(|e| cx.at(r, e))?),
            None => None,
        };
        let mtu = match &l.mtu {
            Some(m) => {
                let bad = || {
                    cx.at(
                        m,
                        "mtu: a number between 576 and 65535 for both ends, or [a, b] for each end of `between`".into(),
                    )
                };
                let one = |v: &toml::Value| match v.as_integer() {
                    Some(n) if (576..=65535).contains(&n) => Ok(n as u32),
                    _ => Err(bad()),
                };
                match m.get_ref() {
                    toml::Value::Array(a) if a.len() == 2 => [one(&a[0])?, one(&a[1])?],
                    v @ toml::Value::Integer(_) => {
                        let n = one(v)?;
                        [n, n]
                    }
                    _ => return Err(bad()),
                }
            }
            None => [1500, 1500],
        };
        let loss = match &l.fault {
            None => None,
            Some(f) => {
                let bad = |m: &str| cx.at(f, format!("fault: {m}"));
                let t = f
                    .get_ref()
                    .as_table()
                    .ok_or_else(|| bad("write a table, e.g. fault = { loss = 0.01 }"))?;
                if let Some(k) = t.keys().find(|k| k.as_str() != "loss") {
                    return Err(bad(&format!(
                        "'{k}': only loss is injected (lagkit's fault wrapper drops frames; it does not delay them), e.g. fault = {{ loss = 0.01 }}"
                    )));
                }
                let p = t
                    .get("loss")
                    .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                    .ok_or_else(|| bad("give loss as a share from 0 to 1, e.g. loss = 0.01"))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(bad("loss is a share from 0 to 1 (0.01 = 1%)"));
                }
                // The drops are lagkit's: one end must be a bonded host.
                let bonded = |n: &str| {
                    raw.host
                        .iter()
                        .any(|h| h.name.get_ref() == n && h.bond.is_some())
                };
                if !b.iter().any(|n| bonded(n)) {
                    return Err(bad(&format!(
                        "link {} — {}: neither end runs a lagkit bond, and only lagkit injects faults here (this kernel has no netem); give one of the hosts a bond",
                        b[0], b[1]
                    )));
                }
                Some(p)
            }
        };
        if l.overhead == Some(true) && rate.is_none() {
            warnings.push(format!(
                "{}:{}: overhead = true has no effect on an unshaped link (give a rate)",
                cx.file,
                line_col(cx.text, l.between.span().start).0
            ));
        }
        if mtu[0] != mtu[1] {
            warnings.push(format!(
                "{}:{}: link {} — {}: MTU {} on one end, {} on the other; frames above {} are dropped where they arrive",
                cx.file,
                line_col(cx.text, l.between.span().start).0,
                b[0],
                b[1],
                mtu[0],
                mtu[1],
                mtu[0].min(mtu[1])
            ));
        }
        let mut end = |node: &str| {
            let n = next_if.entry(node.to_string()).or_insert(0);
            *n += 1;
            let prefix = if kinds[node] == "switch" { "p" } else { "e" };
            End {
                node: node.to_string(),
                iface: format!("{prefix}{n}"),
            }
        };
        for _ in 0..count {
            let a = end(&b[0]);
            let bb = end(&b[1]);
            links.push(Link {
                a,
                b: bb,
                rate: rate.clone(),
                overhead: l.overhead.unwrap_or(false),
                mtu,
                loss,
            });
        }
    }
    let ifaces_of = |node: &str| -> Vec<(String, u32, String)> {
        links
            .iter()
            .flat_map(|l| [(&l.a, &l.b, l.mtu[0]), (&l.b, &l.a, l.mtu[1])])
            .filter(|(e, _, _)| e.node == node)
            .map(|(e, peer, mtu)| (e.iface.clone(), mtu, peer.node.clone()))
            .collect()
    };

    // Hosts.
    let mut hosts = Vec::new();
    for h in &raw.host {
        let name = h.name.get_ref().clone();
        let ifs = ifaces_of(&name);
        let address = match &h.address {
            Some(a) => {
                a.get_ref().parse::<Cidr>().map_err(|e| {
                    cx.at(
                        a,
                        format!(
                            "address '{}': {e:?}; write e.g. \"10.0.0.1/24\"",
                            a.get_ref()
                        ),
                    )
                })?;
                if !a.get_ref().contains('/') {
                    return Err(cx.at(
                        a,
                        format!(
                            "address '{}': give the prefix length, e.g. \"{}/24\"",
                            a.get_ref(),
                            a.get_ref()
                        ),
                    ));
                }
                Some(a.get_ref().clone())
            }
            None => None,
        };
        if ifs.is_empty() {
            warnings.push(format!("host '{name}' has no link"));
        }
        let bond = match &h.bond {
            Some(t) => Some(host_bond(
                cx,
                &name,
                t,
                &ifs,
                address.as_deref(),
                &mut warnings,
            )?),
            None => {
                if ifs.len() > 1 {
                    return Err(cx.at(
                        &h.name,
                        format!("host '{name}' has {} links but no bond; give it a bond table (bond = {{ mode = \"802.3ad\" }})", ifs.len()),
                    ));
                }
                None
            }
        };
        hosts.push(Host {
            name,
            address,
            bond,
            ifaces: ifs.into_iter().map(|(i, _, _)| i).collect(),
        });
    }

    // Switches.
    let mut switches = Vec::new();
    for s in &raw.switch {
        let name = s.name.get_ref().clone();
        let kind = match s.kind.as_ref().map(|k| (k, k.get_ref().as_str())) {
            None | Some((_, "ovs")) => SwitchKind::Ovs,
            Some((k, "lagkit")) => {
                return Err(cx.at(
                    k,
                    "kind 'lagkit': reserved for lagkit's own switch, which is not written yet; use kind = \"ovs\"".into(),
                ))
            }
            Some((k, other)) => {
                return Err(cx.at(k, format!("kind '{other}': use \"ovs\" (\"lagkit\" later)")))
            }
        };
        let ports = ifaces_of(&name);
        if ports.is_empty() {
            warnings.push(format!("switch '{name}' has no link"));
        }
        let mut used: BTreeMap<String, String> = BTreeMap::new();
        let mut chan_names = BTreeSet::new();
        let mut channels = Vec::new();
        for c in &s.channel {
            let cname = c.name.get_ref();
            if cname.is_empty()
                || cname.len() > 15
                || !cname
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
                || ports.iter().any(|(p, _, _)| p == cname)
                || cname == "br0"
            {
                return Err(cx.at(
                    &c.name,
                    format!("channel name '{cname}': 1 to 15 of a-z, 0-9, _ and -, not a port name nor br0"),
                ));
            }
            if !chan_names.insert(cname.clone()) {
                return Err(cx.at(&c.name, format!("channel '{cname}' is defined twice")));
            }
            let (host, cports) = match (&c.host, &c.ports) {
                (Some(hn), None) => {
                    let v: Vec<String> = ports
                        .iter()
                        .filter(|(_, _, peer)| peer == hn.get_ref())
                        .map(|(p, _, _)| p.clone())
                        .collect();
                    if v.is_empty() {
                        return Err(cx.at(
                            hn,
                            format!("host: switch '{name}' has no link to '{}'", hn.get_ref()),
                        ));
                    }
                    (Some(hn.get_ref().clone()), v)
                }
                (None, Some(ps)) => {
                    for p in ps.get_ref() {
                        if !ports.iter().any(|(q, _, _)| q == p) {
                            let all: Vec<&str> = ports.iter().map(|(q, _, _)| q.as_str()).collect();
                            return Err(cx.at(
                                ps,
                                format!("ports: switch '{name}' has no port '{p}' (its ports: {})", all.join(", ")),
                            ));
                        }
                    }
                    if ps.get_ref().is_empty() {
                        return Err(cx.at(ps, "ports: name at least one port".into()));
                    }
                    (None, ps.get_ref().clone())
                }
                _ => {
                    return Err(cx.at(
                        &c.name,
                        format!("channel '{cname}': give either host = \"HOST\" (every port linked to it) or ports = [\"p1\", ...]"),
                    ))
                }
            };
            for p in &cports {
                if let Some(prev) = used.insert(p.clone(), cname.clone()) {
                    return Err(cx.at(
                        &c.name,
                        format!("channel '{cname}': port {p} is already in channel '{prev}'"),
                    ));
                }
            }
            let protocol = Protocol::parse(c.protocol.get_ref()).ok_or_else(|| {
                cx.at(
                    &c.protocol,
                    format!(
                        "protocol '{}': use lacp-active, lacp-passive, static or none",
                        c.protocol.get_ref()
                    ),
                )
            })?;
            let load_balance = match &c.load_balance {
                None => LoadBalance::L4,
                Some(lb) => match lb.get_ref().as_str() {
                    "l4" => LoadBalance::L4,
                    "l3" => LoadBalance::L3,
                    "l2" => LoadBalance::L2,
                    other => {
                        return Err(cx.at(
                            lb,
                            format!("load_balance '{other}': use l4 (TCP/UDP ports), l3 (IP addresses) or l2 (MAC addresses)"),
                        ))
                    }
                },
            };
            if kind == SwitchKind::Ovs && protocol != Protocol::None {
                if load_balance == LoadBalance::L3 {
                    let at = c
                        .load_balance
                        .as_ref()
                        .map_or(c.name.span().start, |s| s.span().start);
                    return Err(cx.err(
                        at,
                        "load_balance 'l3': Open vSwitch bonds hash on L4 (balance-tcp) or L2 (balance-slb) only; use l4 or l2".into(),
                    ));
                }
                if protocol == Protocol::Static && load_balance == LoadBalance::L4 {
                    let at = c
                        .load_balance
                        .as_ref()
                        .map_or(c.protocol.span().start, |s| s.span().start);
                    return Err(cx.err(
                        at,
                        "Open vSwitch's balance-tcp needs negotiated LACP (a static channel would carry nothing); use load_balance = \"l2\" (balance-slb) or an LACP protocol".into(),
                    ));
                }
            }
            if let Some(hn) = &host {
                if let Some(hb) = hosts
                    .iter()
                    .find(|x| &x.name == hn)
                    .and_then(|x| x.bond.as_ref())
                {
                    if protocol.is_lacp() != hb.is_lacp() && protocol != Protocol::None {
                        warnings.push(format!(
                            "{}:{}: channel '{cname}' runs {} but host '{hn}' bond mode is {}: they will not agree",
                            cx.file,
                            line_col(cx.text, c.protocol.span().start).0,
                            if protocol.is_lacp() { "LACP" } else { "no LACP" },
                            hb.mode
                        ));
                    }
                }
            }
            channels.push(Channel {
                name: cname.clone(),
                host,
                ports: cports,
                protocol,
                load_balance,
            });
        }
        switches.push(Switch {
            name,
            kind,
            channels,
            ports: ports.into_iter().map(|(p, _, _)| p).collect(),
        });
    }

    let workload = match &raw.workload {
        Some(w) => Some(workload(cx, w, &hosts)?),
        None => None,
    };
    Ok(Topology {
        name,
        file: cx.file.to_string(),
        scale,
        hosts,
        switches,
        links,
        workload,
        warnings,
    })
}

/// Where `key` is written inside the bond table (an inline table, or a
/// `[host.bond]` table up to the next header), else the table's start.
fn key_offset(cx: &Cx<'_>, span: std::ops::Range<usize>, key: &str) -> usize {
    let end = if cx.text[span.clone()].trim_start().starts_with('{') {
        span.end
    } else {
        let body = cx.text[span.start..]
            .find('\n')
            .map_or(cx.text.len(), |n| span.start + n);
        cx.text[body..]
            .find("\n[")
            .map_or(cx.text.len(), |n| body + n)
    };
    cx.text[span.start..end.max(span.start)]
        .find(key)
        .map_or(span.start, |off| span.start + off)
}

fn host_bond(
    cx: &Cx<'_>,
    host: &str,
    t: &Spanned<toml::Table>,
    ifs: &[(String, u32, String)],
    address: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<HostBond, TopologyError> {
    let mut table = t.get_ref().clone();
    let span = t.span();
    let at_key = |k: &str| key_offset(cx, span.clone(), k);
    if ifs.is_empty() {
        return Err(cx.at(t, format!("host '{host}' has a bond but no links")));
    }
    if !table.contains_key("name") {
        table.insert("name".into(), toml::Value::String("bond0".into()));
    }
    // Members: the host's links unless listed (then they must be links).
    let member_key = ["members", "slaves", "adapter_names"]
        .into_iter()
        .find(|k| table.contains_key(*k));
    let members: Vec<String> = match member_key {
        None => {
            let v: Vec<String> = ifs.iter().map(|(i, _, _)| i.clone()).collect();
            table.insert(
                "members".into(),
                toml::Value::Array(v.iter().cloned().map(toml::Value::String).collect()),
            );
            v
        }
        Some(k) => {
            let v: Vec<String> = table[k]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            for m in &v {
                if !ifs.iter().any(|(i, _, _)| i == m) {
                    let all: Vec<&str> = ifs.iter().map(|(i, _, _)| i.as_str()).collect();
                    return Err(cx.err(
                        at_key(k),
                        format!("host '{host}' bond: member '{m}' is not one of its links ({}); leave '{k}' out to use them all", all.join(", ")),
                    ));
                }
            }
            v
        }
    };
    if let Some(a) = address {
        if table.contains_key("address") {
            return Err(cx.err(
                at_key("address"),
                format!("host '{host}': the address is given both for the host and in its bond; keep one"),
            ));
        }
        table.insert(
            "address".into(),
            toml::Value::Array(vec![toml::Value::String(a.to_string())]),
        );
    }
    let mtus: BTreeSet<u32> = ifs
        .iter()
        .filter(|(i, _, _)| members.contains(i))
        .map(|(_, m, _)| *m)
        .collect();
    if mtus.len() > 1 {
        return Err(cx.at(
            t,
            format!("host '{host}' bond: its links have different MTUs ({mtus:?}); give them one"),
        ));
    }
    let link_mtu = mtus.into_iter().next().unwrap_or(1500);
    if !table.contains_key("mtu") && !table.contains_key("use_jumbo_frame") {
        table.insert("mtu".into(), toml::Value::Integer(link_mtu as i64));
    }
    let text = toml::to_string(&table).map_err(|e| cx.at(t, format!("host '{host}' bond: {e}")))?;
    let (bonds, warns) =
        lagkit_bondcfg::parse_str(&text, "bond").map_err(|e| match e.invalid() {
            Some(i) => {
                let at = i.key.as_deref().map_or(span.start, at_key);
                let key = i
                    .key
                    .as_deref()
                    .map(|k| format!("key '{k}': "))
                    .unwrap_or_default();
                cx.err(at, format!("host '{host}' bond: {key}{}", i.kind))
            }
            None => cx.at(t, format!("host '{host}' bond: {e}")),
        })?;
    let _ = warns; // bondcfg warnings are shown again by `lagkit up` in the host's log.
    let config = match bonds.as_slice() {
        [b] => b.clone(),
        _ => return Err(cx.at(t, format!("host '{host}': one bond per host"))),
    };
    if config.mtu as u32 != link_mtu {
        // Allowed (seed 000 measured MTUs set in only some places), but
        // frames larger than a member's MTU cannot leave: say so.
        warnings.push(format!(
            "{}:{}: host '{host}' bond: mtu {} differs from its links' mtu {link_mtu}; {}",
            cx.file,
            line_col(cx.text, at_key("mtu")).0,
            config.mtu,
            if config.mtu as u32 > link_mtu {
                "frames above the links' MTU are dropped (counted as tx errors)"
            } else {
                "the links' larger MTU goes unused"
            }
        ));
    }
    Ok(HostBond {
        name: config.name.clone(),
        mode: config.mode.to_string(),
        hash: config.xmit_hash_policy.to_string(),
        members: config.members.clone(),
        toml: config.to_toml(),
        config,
    })
}

fn workload(
    cx: &Cx<'_>,
    w: &Spanned<RawWorkload>,
    hosts: &[Host],
) -> Result<WorkloadSpec, TopologyError> {
    let r = w.get_ref();
    let lagkit_load = match r.kind.get_ref().as_str() {
        "iperf3" => false,
        "lagkit-load" => true,
        other => {
            return Err(cx.at(
                &r.kind,
                format!("kind '{other}': use \"iperf3\" or \"lagkit-load\""),
            ))
        }
    };
    let only = |set: bool, key: &str, kind: &str| -> Result<(), TopologyError> {
        if set {
            Err(cx.at(w, format!("workload: '{key}' is for kind = \"{kind}\"")))
        } else {
            Ok(())
        }
    };
    if lagkit_load {
        only(
            r.flows.is_some(),
            "flows",
            "iperf3 (lagkit-load: procs or conns)",
        )?;
        only(r.bidir.is_some(), "bidir", "iperf3")?;
    } else {
        only(r.migrations.is_some(), "migrations", "lagkit-load")?;
        only(r.sockbuf.is_some(), "sockbuf", "lagkit-load")?;
        for (set, key) in [
            (r.load.is_some(), "load"),
            (r.procs.is_some(), "procs"),
            (r.method.is_some(), "method"),
            (r.conns.is_some(), "conns"),
            (r.size.is_some(), "size"),
        ] {
            only(set, key, "lagkit-load")?;
        }
    }
    let host = |s: &Option<Spanned<String>>, what: &str| -> Result<String, TopologyError> {
        let Some(s) = s else {
            return Err(cx.at(w, format!("workload: give {what} = \"HOST\"")));
        };
        let Some(h) = hosts.iter().find(|h| &h.name == s.get_ref()) else {
            return Err(cx.at(s, format!("{what}: no host '{}'", s.get_ref())));
        };
        if h.address.is_none() {
            return Err(cx.at(s, format!("{what}: host '{}' has no address", h.name)));
        }
        Ok(h.name.clone())
    };
    let server = host(&r.server, "server")?;
    let clients = match (&r.client, &r.clients) {
        (Some(_), Some(c)) => {
            return Err(cx.at(
                c,
                "workload: give 'client' (one host) or 'clients' (a list), not both".into(),
            ))
        }
        (None, Some(list)) if lagkit_load => {
            if list.get_ref().is_empty() {
                return Err(cx.at(list, "clients: name at least one host".into()));
            }
            let mut v = Vec::new();
            for c in list.get_ref() {
                let one = Spanned::new(list.span(), c.clone());
                let h = host(&Some(one), "clients")?;
                if v.contains(&h) {
                    return Err(cx.at(list, format!("clients: '{h}' is named twice")));
                }
                v.push(h);
            }
            v
        }
        (None, Some(list)) => return Err(cx.at(
            list,
            "clients: several clients are for kind = \"lagkit-load\"; iperf3 takes one 'client'"
                .into(),
        )),
        _ => vec![host(&r.client, "client")?],
    };
    if clients.contains(&server) {
        return Err(cx.at(
            w,
            "workload: client and server must be different hosts".into(),
        ));
    }
    let client = clients[0].clone();
    let int = |v: &Option<Spanned<i64>>, what: &str, lo: i64, hi: i64, def: i64| match v {
        None => Ok(def),
        Some(s) if (lo..=hi).contains(s.get_ref()) => Ok(*s.get_ref()),
        Some(s) => Err(cx.at(s, format!("{what}: between {lo} and {hi}"))),
    };
    if lagkit_load {
        let load = match &r.load {
            None => "socketprocs".to_string(),
            Some(l) if LoadSpec::LOADS.contains(&l.get_ref().as_str()) => l.get_ref().clone(),
            Some(l) => {
                return Err(cx.at(
                    l,
                    format!("load '{}': use {}", l.get_ref(), LoadSpec::LOADS.join(", ")),
                ))
            }
        };
        let method = match &r.method {
            None => "epoll-et".to_string(),
            Some(m) => match m.get_ref().as_str() {
                "select" | "s" => "select".into(),
                "poll" | "p" => "poll".into(),
                "epoll-et" | "e" => "epoll-et".into(),
                other => {
                    return Err(cx.at(
                        m,
                        format!(
                            "method '{other}': use {} (or s, p, e)",
                            LoadSpec::METHODS.join(", ")
                        ),
                    ))
                }
            },
        };
        if clients.len() > 1 && matches!(load.as_str(), "socketprocs" | "lpm") {
            return Err(cx.at(
                w,
                format!("workload: load '{load}' runs between two hosts; several clients are for stream, maerts, bidir and rr"),
            ));
        }
        if r.migrations.is_some() && load != "lpm" {
            return Err(cx.at(w, "workload: 'migrations' is for load = \"lpm\"".into()));
        }
        return Ok(WorkloadSpec::LagkitLoad(LoadSpec {
            clients,
            server,
            migrations: int(&r.migrations, "migrations", 1, 32, 4)? as u32,
            sockbuf: r
                .sockbuf
                .as_ref()
                .map(|_| int(&r.sockbuf, "sockbuf", 4096, 64 << 20, 131072))
                .transpose()?
                .map(|s| s as u64),
            load,
            procs: int(&r.procs, "procs", 1, 64, 4)? as u32,
            method,
            conns: int(&r.conns, "conns", 1, 128, 1)? as u32,
            size: r
                .size
                .as_ref()
                .map(|_| int(&r.size, "size", 1, 16 << 20, 4096))
                .transpose()?
                .map(|s| s as u64),
            seconds: int(&r.seconds, "seconds", 1, 3600, 10)? as u32,
            port: r
                .port
                .as_ref()
                .map(|_| int(&r.port, "port", 1024, 65000, 7000))
                .transpose()?
                .map(|p| p as u16),
        }));
    }
    Ok(WorkloadSpec::Iperf3(Iperf3Spec {
        client,
        server,
        flows: int(&r.flows, "flows", 1, 128, 8)? as u32,
        seconds: int(&r.seconds, "seconds", 1, 3600, 10)? as u32,
        bidir: r.bidir.unwrap_or(true),
        port: int(&r.port, "port", 1024, 65535, 5201)? as u16,
    }))
}

/// The lab name a topology file would give, read leniently (for `lab down`
/// on a file that no longer validates): its `name` key if it has one,
/// else the file's stem.
pub fn lab_name_of(path: &Path) -> Option<String> {
    if let Ok(t) = std::fs::read_to_string(path) {
        if let Ok(table) = toml::from_str::<toml::Table>(&t) {
            if let Some(n) = table.get("name").and_then(|v| v.as_str()) {
                return valid_lab_name(n).then(|| n.to_string());
            }
        }
    }
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    valid_lab_name(&stem).then_some(stem)
}
