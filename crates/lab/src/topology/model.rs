//! What a topology is once validated: nodes, port-channels, links, the
//! workload, and the names and addresses the lab derives from them (the
//! namespaces, interface names, host MACs). Nothing here reads a file; the
//! types only say what a valid topology holds and answer questions about it.

use lagkit_bondcfg::BondConfig;
use serde::{Deserialize, Serialize};

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
    /// The data path it asks for (`engine`: auto, bpf or userspace).
    pub engine: String,
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
    /// lagkit's own switch (`lagkit switch`, an IOS configuration the lab
    /// writes from the topology).
    Lagkit,
}

impl SwitchKind {
    /// The kind a `[[switch]]` without `kind` gets, and the built-in
    /// scenarios' switch.
    pub const DEFAULT: SwitchKind = SwitchKind::Lagkit;

    /// As written in a topology file.
    pub fn name(self) -> &'static str {
        match self {
            SwitchKind::Ovs => "ovs",
            SwitchKind::Lagkit => "lagkit",
        }
    }

    /// From a topology file's word.
    pub fn parse(s: &str) -> Option<SwitchKind> {
        match s {
            "ovs" => Some(SwitchKind::Ovs),
            "lagkit" => Some(SwitchKind::Lagkit),
            _ => None,
        }
    }
}

/// A switch and its port-channels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Switch {
    /// Node name.
    pub name: String,
    /// Implementation.
    pub kind: SwitchKind,
    /// lagkit's switch: who forwards its data frames (`auto`, the
    /// default: the kernel where it can).
    pub engine: lagkit_bondcfg::Engine,
    /// Port-channels.
    pub channels: Vec<Channel>,
    /// All its ports, in file order (`p1`, `p2`, ...).
    pub ports: Vec<String>,
}

impl Switch {
    /// The port-channel numbers of its channels, in order: `N` of channels
    /// named `poN` when every channel is so named (and the numbers differ),
    /// otherwise 1, 2, ... in file order.
    pub fn channel_numbers(&self) -> Vec<u32> {
        let named: Vec<Option<u32>> = self
            .channels
            .iter()
            .map(|c| {
                c.name
                    .strip_prefix("po")
                    .and_then(|n| n.parse::<u32>().ok())
                    .filter(|n| (1..=4096).contains(n))
            })
            .collect();
        let mut seen: Vec<u32> = named.iter().flatten().copied().collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() == self.channels.len() {
            named.into_iter().flatten().collect()
        } else {
            (1..=self.channels.len() as u32).collect()
        }
    }

    /// The load balance of its channels that bundle ports (a Catalyst has
    /// one `port-channel load-balance` for the whole switch), if any.
    pub fn load_balance(&self) -> Option<LoadBalance> {
        self.channels
            .iter()
            .find(|c| c.protocol != Protocol::None)
            .map(|c| c.load_balance)
    }
}

/// Port-channel protocol (and port mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// LACP, port mode active.
    LacpActive,
    /// LACP, port mode passive.
    LacpPassive,
    /// PAgP, port mode desirable, silent (Cisco's default: after the silent
    /// wait a port attaches to a partner that never speaks PAgP).
    PagpDesirable,
    /// PAgP, port mode desirable non-silent (a partner must speak PAgP).
    PagpDesirableNonSilent,
    /// PAgP, port mode auto (answers, never starts), silent.
    PagpAuto,
    /// PAgP, port mode auto non-silent.
    PagpAutoNonSilent,
    /// A channel with no protocol (Cisco "mode on").
    Static,
    /// No channel: each port on its own.
    None,
}

impl Protocol {
    /// Every protocol as a topology file writes it, for messages.
    pub const NAMES: &'static str = "lacp-active, lacp-passive, pagp-desirable, pagp-desirable-non-silent, pagp-auto, pagp-auto-non-silent, static or none";

    pub(super) fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "lacp-active" | "lacp" | "active" => Protocol::LacpActive,
            "lacp-passive" | "passive" => Protocol::LacpPassive,
            "pagp-desirable" | "pagp" | "desirable" => Protocol::PagpDesirable,
            "pagp-desirable-non-silent" => Protocol::PagpDesirableNonSilent,
            "pagp-auto" | "auto" => Protocol::PagpAuto,
            "pagp-auto-non-silent" => Protocol::PagpAutoNonSilent,
            "static" | "on" | "manual" => Protocol::Static,
            "none" => Protocol::None,
            _ => return None,
        })
    }

    /// LACP runs.
    pub fn is_lacp(self) -> bool {
        matches!(self, Protocol::LacpActive | Protocol::LacpPassive)
    }

    /// PAgP runs.
    pub fn is_pagp(self) -> bool {
        self.pagp_mode().is_some()
    }

    /// PAgP's IOS port mode (`desirable`, `auto`) and whether it is silent.
    pub fn pagp_mode(self) -> Option<(&'static str, bool)> {
        match self {
            Protocol::PagpDesirable => Some(("desirable", true)),
            Protocol::PagpDesirableNonSilent => Some(("desirable", false)),
            Protocol::PagpAuto => Some(("auto", true)),
            Protocol::PagpAutoNonSilent => Some(("auto", false)),
            _ => None,
        }
    }
}

impl Protocol {
    /// Why a channel of this protocol facing host bond `b` will not form
    /// (IBM's 6513 measurements, 6.3: desirable forms with desirable or auto, auto never
    /// with auto; a silent desirable port attaches after the silent wait
    /// to a partner that never speaks PAgP, a non-silent one never does),
    /// or `None` when it will.
    pub fn will_not_form_with(self, b: &HostBond) -> Option<String> {
        use lagkit_bondcfg::Pagp;
        let host = &b.config;
        let (lacp, pagp) = (host.mode.is_lacp(), host.pagp);
        match self {
            Protocol::None => None,
            Protocol::LacpActive | Protocol::LacpPassive => {
                (!lacp).then(|| format!("the channel runs LACP but the bond's mode is {}", b.mode))
            }
            Protocol::Static => {
                if lacp {
                    Some(format!(
                        "the channel runs no protocol but the bond's mode is {}",
                        b.mode
                    ))
                } else if pagp == Pagp::Off || (pagp == Pagp::Desirable && host.pagp_silent) {
                    None
                } else {
                    Some(format!(
                        "the bond runs PAgP ({pagp}{}) but the channel is `mode on`",
                        if host.pagp_silent { "" } else { ", non-silent" }
                    ))
                }
            }
            p => {
                let (mode, silent) = p.pagp_mode()?;
                match (mode, pagp) {
                    (_, Pagp::Off) if lacp => Some(format!(
                        "the channel runs PAgP but the bond runs LACP ({})",
                        b.mode
                    )),
                    ("desirable", Pagp::Off) if silent => None,
                    (_, Pagp::Off) => Some(format!(
                        "PAgP {mode}{} and a bond that speaks no PAgP",
                        if silent { "" } else { " non-silent" }
                    )),
                    ("auto", Pagp::Auto) => {
                        Some("PAgP auto on both ends: neither starts".to_string())
                    }
                    _ => None,
                }
            }
        }
    }
}

/// Frame distribution of a port-channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadBalance {
    /// MAC addresses (OVS `balance-slb`, Cisco `src-dst-mac`).
    L2,
    /// IP addresses (no OVS equivalent; Cisco `src-dst-ip`).
    L3,
    /// TCP/UDP ports (OVS `balance-tcp`, Cisco `src-dst-port`).
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

    /// As written in a topology file.
    pub fn name(self) -> &'static str {
        match self {
            LoadBalance::L2 => "l2",
            LoadBalance::L3 => "l3",
            LoadBalance::L4 => "l4",
        }
    }

    /// The Catalyst `port-channel load-balance` method lagkit's switch runs
    /// for it: both ends' fields, as IBM's 6513 switch hashed (its L3 run
    /// was `src-dst-ip`, its L4 run `src-dst-port`).
    pub fn cisco_method(self) -> &'static str {
        match self {
            LoadBalance::L2 => "src-dst-mac",
            LoadBalance::L3 => "src-dst-ip",
            LoadBalance::L4 => "src-dst-port",
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
    /// As tc reads it, e.g. `100mbit` (also for `100M` or `0.1g`).
    pub text: String,
}

/// A link rate that is not one, or not one tc shapes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    /// Not a rate.
    #[error("rate {0}")]
    Unit(#[from] lagkit_units::UnitError),
    /// Outside what tc shapes (the value as given).
    #[error("rate `{0}`: must be between 8kbit and 400gbit")]
    OutOfRange(String),
}

impl Rate {
    /// Parses a rate as every lagkit flag does (`100mbit`, `100M`, `1g`,
    /// `2.5gbit`, plain bit/s; see `lagkit_units`), within what tc shapes.
    pub fn parse(s: &str) -> Result<Rate, RateError> {
        let bits = lagkit_units::parse_rate(s)?;
        if !(8000..=400_000_000_000).contains(&bits) {
            return Err(RateError::OutOfRange(s.trim().to_string()));
        }
        Ok(Rate {
            bits,
            // tc reads this spelling; `1g` alone would not do.
            text: lagkit_units::format_rate(bits),
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
    /// The directions it sends data in: (client -> server, server ->
    /// client). iperf3 sends client to server, both ways with `bidir`;
    /// lagkit load's stream and lpm send client to server, maerts server
    /// to client, bidir both, and the request/reply loads (rr,
    /// socketprocs) both ways.
    pub fn directions(&self) -> (bool, bool) {
        match self {
            WorkloadSpec::Iperf3(s) => (true, s.bidir),
            WorkloadSpec::LagkitLoad(s) => match s.load.as_str() {
                "stream" | "lpm" => (true, false),
                "maerts" => (false, true),
                _ => (true, true),
            },
        }
    }

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

    /// IBM's 6513 "App meth" letter for socketprocs (s/p/e); `n` (netperf
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
    /// `None` for switch ports (see [`Topology::switch_port_mac`]).
    pub fn host_mac(&self, end: &End) -> Option<String> {
        let h = self.hosts.iter().position(|h| h.name == end.node)? + 1;
        let i: usize = end.iface.strip_prefix('e')?.parse().ok()?;
        Some(format!("02:6c:6b:00:{:02x}:{:02x}", i & 0xff, h & 0xff))
    }

    /// The MAC the lab gives port `port` (`pN`) of the `i`-th switch (0-based)
    /// when lagkit's switch runs it: `02:00:00:0a:<switch>:<port>`, so its
    /// LACP system (the first port's MAC) is the same every run. Open
    /// vSwitch sets its own.
    pub fn switch_port_mac(&self, i: usize, port: &str) -> Option<String> {
        let n: usize = port.strip_prefix('p')?.parse().ok()?;
        Some(format!(
            "02:00:00:0a:{:02x}:{:02x}",
            (i + 1) & 0xff,
            n & 0xff
        ))
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

pub(super) fn valid_node(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 12
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
