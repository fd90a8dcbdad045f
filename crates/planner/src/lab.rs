//! The lab's built-in scenarios as plans, set beside the lab's measurements.
//!
//! Each configuration's workload becomes flows and its bonds and switch
//! channels become the ends that spread them, so the planner's prediction
//! of a configuration can be compared with what the lab measured on it.
//!
//! The flows need their 5-tuples. The LPM pattern fixes its ports before it
//! runs (control and data connections on sequential ports), so it is
//! planned from its topology alone. Every other workload lets the kernel
//! choose the client ports; the lab records each connection's 5-tuple in
//! its report (`workload.connections`), and with that report the planner
//! places those flows exactly as the hashes will. Only the 5-tuples are
//! taken from the run, never its volumes or rates.
//!
//! The comparison ([`compare`]) models the whole lab: every cable, each way,
//! at its shaped rate; each flow's path (the sender's bond or its single
//! link, then the switch's channel or port towards the receiver); a
//! max-min fair allocation over all of them ([`crate::fair::network`]).
//! It predicts, for each bonded host and direction, the share of each
//! member and the rate on the members, against the members' counters.

use crate::fair;
use crate::flow::{Dir, Flow};
use crate::predict::{Chooser, EndConfig, Spread, DEFAULT_STRONG, EVERY_LINK};
use lagkit_bondcfg::{BondConfig, Mode};
use lagkit_hash::FlowKey;
use lagkit_lab::topology::{LoadBalance, Protocol, SwitchKind, Topology};
use lagkit_lab::workload::{Connection, LoadSpec, WorkloadSpec};
use serde::Serialize;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// How a bond spreads what it sends, from its configuration (balance-tlb
/// and balance-alb hash by their policy, unmoved, with `tlb_dynamic_lb =
/// false`, as the bond does).
pub fn spread_of(b: &BondConfig) -> Spread {
    match b.mode {
        Mode::Lacp | Mode::BalanceXor => Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed)),
        Mode::BalanceTlb | Mode::BalanceAlb if !b.tlb_dynamic_lb => {
            Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed))
        }
        Mode::BalanceRr => Spread::RoundRobin,
        Mode::ActiveBackup | Mode::Broadcast => Spread::Single,
        Mode::BalanceTlb | Mode::BalanceAlb | Mode::Adaptive => Spread::Adaptive(DEFAULT_STRONG),
    }
}

/// One bonded host of one configuration, planned.
#[derive(Clone, Debug)]
pub struct LabPlan {
    /// The configuration's key (`src_port`, `k4-rx`).
    pub key: String,
    /// What differs in it.
    pub label: String,
    /// The bonded host.
    pub host: String,
    /// Its flows (`out`: it sends them; `in`: it receives them).
    pub flows: Vec<Flow>,
    /// Its bond.
    pub out: EndConfig,
    /// Who spreads what it receives: the peer's bond back to back, the
    /// switch's channel, or one switch port.
    pub into: EndConfig,
    /// That spreader, in words.
    pub into_by: String,
    /// The flows' ports came from the run's report (the kernel chose them).
    pub ports_from_run: bool,
}

/// Why a configuration could not be planned.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The configuration's key.
    pub key: String,
    /// The reason.
    pub why: String,
}

fn ip_of(t: &Topology, host: &str) -> Option<IpAddr> {
    let a = t.host(host)?.address.as_deref()?;
    a.split('/').next()?.parse().ok()
}

fn mac_of(t: &Topology, host: &str) -> [u8; 6] {
    let mut m = [0u8; 6];
    if let Some((_, text)) = t.l3_port(host) {
        for (b, p) in m.iter_mut().zip(text.split(':')) {
            *b = u8::from_str_radix(p, 16).unwrap_or(0);
        }
    }
    m
}

/// A shaped rate, or 10 Gbit/s for an unshaped veth (such runs are bound
/// by the CPU, which the model does not know).
const UNSHAPED_BPS: f64 = 1e10;

/// One direction of one cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Wire {
    cable: usize,
    /// From the cable's `a` end to its `b` end.
    a_to_b: bool,
}

impl Wire {
    fn index(self) -> usize {
        self.cable * 2 + usize::from(!self.a_to_b)
    }
}

/// The lab as the model sees it: cables and who spreads over which.
struct Lab<'a> {
    t: &'a Topology,
}

impl Lab<'_> {
    /// The cables of `host`'s bond, in member order, and the node at each
    /// one's far end; an unbonded host's cables in file order.
    fn cables_of(&self, host: &str) -> Vec<(usize, String, bool)> {
        let ends: Vec<(usize, String, bool)> = self
            .t
            .links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                if l.a.node == host {
                    Some((i, l.a.iface.clone(), true))
                } else if l.b.node == host {
                    Some((i, l.b.iface.clone(), false))
                } else {
                    None
                }
            })
            .collect();
        match self.t.host(host).and_then(|h| h.bond.as_ref()) {
            Some(b) => b
                .members
                .iter()
                .filter_map(|m| ends.iter().find(|(_, iface, _)| iface == m).cloned())
                .collect(),
            None => ends,
        }
    }

    fn far(&self, cable: usize, host_is_a: bool) -> &str {
        let l = &self.t.links[cable];
        if host_is_a {
            &l.b.node
        } else {
            &l.a.node
        }
    }

    fn rate(&self, cable: usize) -> f64 {
        self.t.links[cable]
            .rate
            .as_ref()
            .map_or(UNSHAPED_BPS, |r| r.bits as f64)
    }

    /// The wires from `host` out, in member order (its bond's choices).
    fn wires_out(&self, host: &str) -> Vec<Wire> {
        self.cables_of(host)
            .into_iter()
            .map(|(cable, _, a)| Wire { cable, a_to_b: a })
            .collect()
    }

    /// The wires into `host` from `from` (every neighbour when `None`).
    fn wires_in(&self, host: &str, from: Option<&str>) -> Vec<Wire> {
        self.cables_of(host)
            .into_iter()
            .filter(|&(c, _, a)| from.is_none_or(|f| self.far(c, a) == f))
            .map(|(cable, _, a)| Wire { cable, a_to_b: !a })
            .collect()
    }

    /// Who spreads the frames a switch sends towards `host`, how, and
    /// which header fields it reads.
    fn spread_from_switch(&self, sw: &str, host: &str) -> (Spread, String, KeyFields) {
        let bond = self.t.host(host).and_then(|h| h.bond.as_ref());
        match bond.map(|b| b.config.mode) {
            // balance-tlb receives on one member; balance-alb gives each
            // peer a member by its ARP replies.
            Some(Mode::BalanceTlb) => {
                return (
                    Spread::Single,
                    format!("{host}'s balance-tlb: one member receives"),
                    KeyFields::All,
                )
            }
            Some(Mode::BalanceAlb) => {
                // Each peer (by its address) learns one member's MAC.
                return (
                    Spread::Adaptive(DEFAULT_STRONG),
                    format!("{host}'s balance-alb: its ARP replies spread the peers"),
                    KeyFields::SourceIp,
                );
            }
            _ => {}
        }
        let switch = self.t.switches.iter().find(|s| s.name == sw);
        let channel = switch
            .and_then(|s| s.channels.iter().find(|c| c.host.as_deref() == Some(host)))
            .filter(|c| forms_with(self.t, c, host));
        let lagkit = switch.is_some_and(|s| s.kind == SwitchKind::Lagkit);
        match channel {
            // lagkit's switch: the Catalyst method into 8 buckets, dealt
            // over the members (the switch's own channel code; see
            // `Chooser`). The policy reads the fields it needs.
            Some(c) if c.protocol != Protocol::None && lagkit => {
                let method = c.load_balance.cisco_method();
                let policy = format!("cisco:{method}")
                    .parse::<lagkit_hash::Policy>()
                    .map_or(Spread::Single, Spread::Hash);
                (
                    policy,
                    format!(
                        "{sw}'s channel {} (lagkit switch, port-channel load-balance {method}: 8 buckets)",
                        c.name
                    ),
                    KeyFields::All,
                )
            }
            // Open vSwitch hashes into 256 buckets and moves them by load
            // every second (the lab's bond-rebalance-interval): balance-slb
            // hashes the source MAC (and VLAN), balance-tcp the 5-tuple.
            Some(c) if c.protocol != Protocol::None => {
                let (fields, what) = match c.load_balance {
                    LoadBalance::L2 => (KeyFields::SourceMac, "balance-slb: source MAC"),
                    LoadBalance::L3 => (KeyFields::Ips, "addresses"),
                    LoadBalance::L4 => (KeyFields::All, "balance-tcp: 5-tuple"),
                };
                (
                    Spread::Adaptive(DEFAULT_STRONG),
                    format!(
                        "{sw}'s channel {} (Open vSwitch {what}, rebalanced every second)",
                        c.name
                    ),
                    fields,
                )
            }
            _ => (
                Spread::Single,
                format!("{sw} without a channel: the port that learned {host}'s MAC"),
                KeyFields::All,
            ),
        }
    }
}

/// The header fields a spreader reads: its buckets hold every flow that
/// agrees on them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum KeyFields {
    All,
    SourceMac,
    SourceIp,
    Ips,
}

impl KeyFields {
    fn of(self, k: &FlowKey) -> FlowKey {
        let ips = k.ip.map(|ip| (ip.src, ip.dst));
        let mut out = FlowKey {
            ethertype: k.ethertype,
            vlan_tci: k.vlan_tci,
            ..FlowKey::default()
        };
        match self {
            KeyFields::All => return *k,
            KeyFields::SourceMac => out.src_mac = k.src_mac,
            KeyFields::SourceIp | KeyFields::Ips => {
                if let Some((src, dst)) = ips {
                    let dst = if self == KeyFields::Ips { dst } else { src };
                    out = FlowKey::ports(src, 0, dst, 0, 0).with_ethertype(k.ethertype);
                }
            }
        }
        out
    }
}

/// One planned flow through the lab.
struct LabFlow {
    key: FlowKey,
    from: String,
    to: String,
    /// Bits per second it can use at most (`None`: bulk).
    demand: Option<f64>,
    bytes: u64,
    /// Payload bytes the run carried this way (0 when not from a run).
    carried: u64,
}

/// A connection's direction(s) with data, by what it carried.
fn data_ways(purpose: &str, load: &str) -> (bool, bool) {
    match if purpose.is_empty() { load } else { purpose } {
        "stream" | "lpm-data" | "lpm-control" | "lpm" => (true, false),
        "maerts" => (false, true),
        _ => (true, true),
    }
}

/// Request/response connections keep one small message in flight: their
/// rate is set by latency, not links. Each counts as a token demand, so
/// that shares follow the number of connections per link.
const LATENCY_BOUND_BPS: f64 = 1e3;

/// The workload's flows, both ways; `conns` from a run, else the ports the
/// workload fixes itself (LPM).
fn workload_flows(
    t: &Topology,
    w: &LoadSpec,
    conns: Option<&[Connection]>,
) -> Result<(Vec<LabFlow>, bool), String> {
    let fixed;
    let (conns, from_run) = match conns {
        Some(c) if !c.is_empty() => (c, true),
        _ if w.load == "lpm" => {
            fixed = lpm_connections(t, w)?;
            (&fixed[..], false)
        }
        _ => {
            return Err(format!(
                "the {} workload's client ports are chosen by the kernel at run time; give the run's report (--measured report.json from `lagkit lab run`, which records them), or plan a capture",
                w.load
            ))
        }
    };
    let host_of = |a: &SocketAddr| -> Result<String, String> {
        t.hosts
            .iter()
            .find(|h| ip_of(t, &h.name) == Some(a.ip()))
            .map(|h| h.name.clone())
            .ok_or_else(|| format!("no host has address {}", a.ip()))
    };
    let mut flows = Vec::new();
    for c in conns {
        let (cl, sv) = (host_of(&c.local)?, host_of(&c.remote)?);
        let (fwd, rev) = data_ways(&c.purpose, &w.load);
        let (demand, bytes) = match c.purpose.as_str() {
            // 64 bytes every 100 ms.
            "lpm-control" => (Some(64.0 * 8.0 * 10.0), 64 * 10 * u64::from(w.seconds)),
            "rr" => (Some(LATENCY_BOUND_BPS), 1 << 20),
            _ if w.load == "rr" => (Some(LATENCY_BOUND_BPS), 1 << 20),
            _ => (None, 1 << 30),
        };
        let key = FlowKey::ports(
            c.local.ip(),
            c.local.port(),
            c.remote.ip(),
            c.remote.port(),
            lagkit_hash::ip_proto::TCP,
        )
        .with_macs(mac_of(t, &cl), mac_of(t, &sv))
        .with_ethertype(if c.local.is_ipv4() { 0x0800 } else { 0x86dd });
        if fwd {
            flows.push(LabFlow {
                key,
                from: cl.clone(),
                to: sv.clone(),
                demand,
                bytes,
                carried: c.sent,
            });
        }
        if rev {
            flows.push(LabFlow {
                key: key.reversed(),
                from: sv,
                to: cl,
                demand,
                bytes,
                carried: c.received,
            });
        }
    }
    Ok((flows, from_run))
}

/// LPM's connections: migration `i`'s control and data connections on the
/// client ports [`lagkit_load::lpm::client_ports`] fixes.
fn lpm_connections(t: &Topology, w: &LoadSpec) -> Result<Vec<Connection>, String> {
    let client = w.clients.first().ok_or("no client")?;
    let (Some(cip), Some(sip)) = (ip_of(t, client), ip_of(t, &w.server)) else {
        return Err("a host without an address".into());
    };
    let mut out = Vec::new();
    for i in 0..w.migrations.max(1) {
        let (c_ctl, c_data) = lagkit_load::lpm::client_ports(lagkit_load::lpm::DEFAULT_BASE, i);
        let s_ctl = w.port().wrapping_add(2 * i as u16);
        for (purpose, cp, sp) in [
            ("lpm-control", c_ctl, s_ctl),
            ("lpm-data", c_data, s_ctl.wrapping_add(1)),
        ] {
            out.push(Connection {
                purpose: purpose.into(),
                local: SocketAddr::new(cip, cp),
                remote: SocketAddr::new(sip, sp),
                sent: 0,
                received: 0,
            });
        }
    }
    Ok(out)
}

/// Every flow's path through the lab, and the stage spreads that chose it.
struct Routed {
    /// Per flow: the wires it crosses, with the fraction of its rate.
    paths: Vec<Vec<(Wire, f64)>>,
    /// Per bonded host: (its bond, who spreads into it).
    ends: Vec<(String, EndConfig, EndConfig, String)>,
}

fn route(lab: &Lab, flows: &[LabFlow]) -> Routed {
    let t = lab.t;
    let bonded = |h: &str| t.host(h).and_then(|x| x.bond.as_ref());
    // A stage: a set of wires one spreader chooses among, with the flows
    // it carries. Keyed by (spreader, host).
    type Stage = (EndConfig, Vec<Wire>, Vec<usize>, KeyFields);
    let mut stages: HashMap<(bool, String), Stage> = HashMap::new();
    let mut into_by: HashMap<String, String> = HashMap::new();
    let mut paths: Vec<Vec<(Wire, f64)>> = vec![Vec::new(); flows.len()];
    for (i, f) in flows.iter().enumerate() {
        // Out of the sender.
        let out = lab.wires_out(&f.from);
        let mut hop_to = None;
        if let Some(b) = bonded(&f.from) {
            let e = stages.entry((true, f.from.clone())).or_insert_with(|| {
                let rate = out.first().map_or(UNSHAPED_BPS, |w| lab.rate(w.cable));
                (
                    EndConfig {
                        spread: spread_of(&b.config),
                        links: out.len(),
                        rate_bps: rate,
                    },
                    out.clone(),
                    Vec::new(),
                    KeyFields::All,
                )
            });
            e.2.push(i);
            hop_to = out.first().map(|w| lab.far(w.cable, w.a_to_b).to_string());
        } else if let Some(w) = out.first() {
            paths[i].push((*w, 1.0));
            hop_to = Some(lab.far(w.cable, w.a_to_b).to_string());
        }
        // Through a switch, into the receiver.
        let Some(next) = hop_to else { continue };
        if next == f.to || t.host(&next).is_some() {
            continue; // back to back: the sender's wire is the receiver's
        }
        let wires = lab.wires_in(&f.to, Some(&next));
        if bonded(&f.to).is_some() || wires.len() > 1 {
            let e = stages.entry((false, f.to.clone())).or_insert_with(|| {
                let (spread, by, fields) = lab.spread_from_switch(&next, &f.to);
                into_by.insert(f.to.clone(), by);
                let rate = wires.first().map_or(UNSHAPED_BPS, |w| lab.rate(w.cable));
                (
                    EndConfig {
                        spread,
                        links: wires.len(),
                        rate_bps: rate,
                    },
                    wires.clone(),
                    Vec::new(),
                    fields,
                )
            });
            e.2.push(i);
        } else if let Some(w) = wires.first() {
            paths[i].push((*w, 1.0));
        }
    }
    for (end, wires, members, fields) in stages.values() {
        let stage: Vec<Flow> = members
            .iter()
            .map(|&i| Flow {
                key: fields.of(&flows[i].key),
                dir: Dir::Out,
                bytes: flows[i].bytes,
                demand_bps: flows[i].demand,
            })
            .collect();
        let choose = Chooser::new(&stage, Dir::Out, end);
        for (f, &i) in stage.iter().zip(members) {
            match choose.link(f) {
                Some(EVERY_LINK) => {
                    let part = 1.0 / wires.len() as f64;
                    paths[i].extend(wires.iter().map(|w| (*w, part)));
                }
                Some(l) => paths[i].extend(wires.get(l).map(|w| (*w, 1.0))),
                None => {}
            }
        }
    }
    let mut ends = Vec::new();
    for h in &t.hosts {
        let Some(b) = h.bond.as_ref() else { continue };
        let out = stages
            .get(&(true, h.name.clone()))
            .map(|s| s.0)
            .unwrap_or(EndConfig {
                spread: spread_of(&b.config),
                links: b.members.len(),
                rate_bps: lab
                    .wires_out(&h.name)
                    .first()
                    .map_or(UNSHAPED_BPS, |w| lab.rate(w.cable)),
            });
        // Back to back, the peer's bond spreads what this host receives.
        let peer = lab
            .wires_out(&h.name)
            .first()
            .map(|w| lab.far(w.cable, w.a_to_b).to_string());
        let (into, by) = match stages.get(&(false, h.name.clone())) {
            Some(s) => (s.0, into_by.get(&h.name).cloned().unwrap_or_default()),
            None => match peer.as_deref().and_then(|p| Some((p, bonded(p)?))) {
                Some((p, pb)) => (
                    EndConfig {
                        spread: spread_of(&pb.config),
                        ..out
                    },
                    format!("{p}'s bond ({}), back to back", pb.mode),
                ),
                None => (out, "nothing: no traffic into it".into()),
            },
        };
        ends.push((h.name.clone(), out, into, by));
    }
    Routed { paths, ends }
}

/// Plans topology `t` (configuration `key`): one plan per bonded host.
/// `conns`: the connections a run of it recorded.
pub fn plan_topology(
    t: &Topology,
    key: &str,
    label: &str,
    conns: Option<&[Connection]>,
) -> Result<Vec<LabPlan>, Skipped> {
    let skip = |why: String| Skipped {
        key: key.to_string(),
        why,
    };
    let Some(WorkloadSpec::LagkitLoad(w)) = &t.workload else {
        return Err(skip(
            "its workload is not lagkit load (iperf3 runs record no 5-tuples); use kind = \"lagkit-load\" to plan it"
                .into(),
        ));
    };
    let (flows, from_run) = workload_flows(t, w, conns).map_err(skip)?;
    let lab = Lab { t };
    let routed = route(&lab, &flows);
    let plans: Vec<LabPlan> = routed
        .ends
        .into_iter()
        .map(|(host, out, into, into_by)| LabPlan {
            key: key.to_string(),
            label: label.to_string(),
            flows: flows
                .iter()
                .filter(|f| f.from == host || f.to == host)
                .map(|f| Flow {
                    key: f.key,
                    dir: if f.from == host { Dir::Out } else { Dir::In },
                    bytes: f.bytes,
                    demand_bps: None,
                })
                .collect(),
            host,
            out,
            into,
            into_by,
            ports_from_run: from_run,
        })
        .collect();
    if plans.is_empty() {
        return Err(skip("no bonded host".into()));
    }
    Ok(plans)
}

/// The run of `key` in a lab report.
fn run_of<'a>(report: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    report["runs"].as_array()?.iter().find(|r| r["key"] == key)
}

/// The connections a run recorded (`workload.connections`).
fn connections_of(run: &serde_json::Value) -> Option<Vec<Connection>> {
    serde_json::from_value(run["workload"]["connections"].clone()).ok()
}

/// The switch a lab report's runs went through: the kind its runs record,
/// Open vSwitch for a report from before they did, the default kind
/// without a report.
fn switch_kind(report: Option<&serde_json::Value>) -> SwitchKind {
    let Some(r) = report else {
        return SwitchKind::DEFAULT;
    };
    r["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|run| run["switches"].as_array().into_iter().flatten())
        .find_map(|sw| serde_json::from_value(sw["kind"].clone()).ok())
        .unwrap_or(SwitchKind::Ovs)
}

/// The configurations of built-in scenario `name` (its switches of
/// `kind`), or the one of a topology file `name` (key `""`, as `lagkit lab
/// run FILE` records it).
fn configs(
    name: &str,
    short: bool,
    kind: SwitchKind,
) -> Result<Vec<lagkit_lab::scenario::Config>, String> {
    if let Some(s) = lagkit_lab::scenario::builtin_on(name, short, kind) {
        return Ok(s.configs);
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(format!(
            "no built-in scenario {name:?} (see `lagkit lab list`) and no such topology file"
        ));
    }
    let text = lagkit_input::read_text(path, &lagkit_input::CONFIG).map_err(|e| e.to_string())?;
    let topo = Topology::load(path).map_err(|e| e.to_string())?;
    Ok(vec![lagkit_lab::scenario::Config {
        key: String::new(),
        label: topo.name.clone(),
        topo,
        text,
        expect_formed: true,
        run_unformed: false,
    }])
}

/// Plans every configuration of built-in scenario `name` (or the topology
/// file `name`), with the connections of `report`'s runs where it has
/// them.
pub fn plan_scenario(
    name: &str,
    short: bool,
    report: Option<&serde_json::Value>,
) -> Result<(Vec<LabPlan>, Vec<Skipped>), String> {
    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    for c in &configs(name, short, switch_kind(report))? {
        let conns = report
            .and_then(|r| run_of(r, &c.key))
            .and_then(connections_of);
        match plan_topology(&c.topo, &c.key, &c.label, conns.as_deref()) {
            Ok(p) => plans.extend(p),
            Err(e) => skipped.push(e),
        }
    }
    Ok((plans, skipped))
}

/// One bonded host's one direction, planned beside the lab's measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Accuracy {
    /// The configuration's key.
    pub key: String,
    /// The bonded host.
    pub host: String,
    /// `sends` (its members' transmit counters) or `receives`.
    pub dir: &'static str,
    /// Who spreads this direction.
    pub spread_by: String,
    /// Predicted share per member, in member order (sorted largest first
    /// when the spreader's choice of member is not fixed by a hash).
    pub predicted: Vec<f64>,
    /// Measured share per member (its byte counter), ordered likewise.
    pub measured: Vec<f64>,
    /// The largest difference, percentage points.
    pub max_diff_pp: f64,
    /// Predicted goodput of this direction's flows, Mbit/s (the flows'
    /// max-min fair rates on the wire × TCP payload per byte of wire).
    pub predicted_mbps: f64,
    /// Measured goodput: the payload the run's connections carried this
    /// way over the workload's seconds; for a report without connections,
    /// the members' byte counters × payload per frame byte.
    pub measured_mbps: f64,
    /// Predicted over measured rate, minus 1.
    pub rate_error: f64,
    /// The rate is not compared, and why (request/response, CPU-bound,
    /// unshaped links); `None` when it is.
    pub rate_not_compared: Option<String>,
    /// The run broke the model's assumption that every flow fills its fair
    /// share, and how: TCP lost 1% or more of its segments, so loss
    /// recovery (timeouts, shrunken windows) set the flows' rates. Shares
    /// and rate may then differ; the row says so instead of failing.
    pub lossy: Option<String>,
    /// The spreader places flows by the load it measures (Open vSwitch's
    /// rebalancing, balance-alb, adaptive), not by a fixed function of
    /// their headers.
    pub rebalanced: bool,
    /// The model fills at least one of these members (99% or more): the
    /// flows' rates are set here, not at a bottleneck elsewhere.
    pub bottleneck: bool,
    /// The split is a race the model cannot predict, and which.
    pub race: Option<String>,
    /// Shares compare frames, not bytes (round-robin deals frames).
    pub by_frames: bool,
    /// The predicted placement weighted by the bytes each connection
    /// carried in the run: the shares had every flow gone where the plan
    /// put it at the rate it actually got (ordered as `measured`).
    pub placed: Option<Vec<f64>>,
    /// The largest difference between `placed` and `measured`, percentage
    /// points: the placement's own error, without TCP's unequal rates.
    pub placement_diff_pp: Option<f64>,
    /// The run was CPU-bound (the machine, or a switch's forwarding
    /// thread).
    pub cpu_bound: bool,
}

impl Accuracy {
    /// Shares within 5 percentage points, and the rate within 10% where
    /// it is compared: the bar.
    pub fn agrees(&self) -> bool {
        self.max_diff_pp <= 5.0
            && (self.rate_not_compared.is_some() || self.rate_error.abs() <= 0.10)
    }

    /// Agrees, or the run says why it need not: a spreader that places
    /// flows by the load it measured, in a run whose TCP lost segments
    /// ([`Accuracy::lossy`]), follows the stalls of loss recovery, which
    /// the fair-share model does not have. A spreader that hashes headers
    /// must agree whatever TCP did.
    pub fn agrees_or_explained(&self) -> bool {
        self.agrees()
            || self.race.is_some()
            || self.placement_holds()
            || (self.lossy.is_some() && (self.rebalanced || !self.bottleneck))
            || (self.cpu_bound && self.rebalanced)
    }

    /// The shares differ, but only by the rates TCP gave the flows: with
    /// the bytes each connection carried, the predicted placement matches
    /// the counters within 5 percentage points (and the rate agrees or is
    /// not compared).
    pub fn placement_holds(&self) -> bool {
        self.placement_diff_pp.is_some_and(|d| d <= 5.0)
            && (self.rate_not_compared.is_some() || self.rate_error.abs() <= 0.10)
    }

    /// Why a row that does not agree need not, in words.
    pub fn why_not(&self) -> Option<String> {
        if self.agrees() {
            return None;
        }
        if let Some(r) = &self.race {
            return Some(r.clone());
        }
        if self.placement_holds() {
            let f = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join("/")
            };
            return Some(format!(
                "the placement holds: with the bytes each connection carried, the predicted links give {} ({:.1} pp from the counters); the connections' rates differed, which TCP, not the spreading, decides",
                f(self.placed.as_deref().unwrap_or_default()),
                self.placement_diff_pp.unwrap_or_default()
            ));
        }
        if self.cpu_bound && self.rebalanced && self.lossy.is_none() {
            return Some(
                "the run was CPU-bound, and the spreader moves flows by the load it measured, which a starved CPU skews"
                    .into(),
            );
        }
        let lossy = self.lossy.as_ref()?;
        if self.rebalanced {
            Some(format!(
                "{lossy}; the spreader moves flows by the load it measured, which loss recovery skews"
            ))
        } else if !self.bottleneck {
            Some(format!(
                "{lossy}; these links are not the bottleneck, so each flow's rate was set further on, where TCP under loss shares unequally"
            ))
        } else {
            // Said, but not excused: a hash at the bottleneck should hold.
            Some(format!("{lossy}; the flows did not fill these links"))
        }
    }
}

/// Whether channel `c` forms with `host`'s bond. One that does not (PAgP
/// non-silent facing a bond that speaks no PAgP, say) is no channel for
/// traffic: lagkit's switch lets its members stand alone, each forwarding
/// as a port of its own (Cisco's `I`).
fn forms_with(t: &Topology, c: &lagkit_lab::topology::Channel, host: &str) -> bool {
    t.host(host)
        .and_then(|h| h.bond.as_ref())
        .is_none_or(|b| c.protocol.will_not_form_with(b).is_none())
}

/// A host whose bond sends from its one MAC on several links, facing a
/// switch with no channel for it: the switch learns the MAC on whichever
/// port saw its last frame, and what the host receives follows that race.
fn mac_race(t: &Topology, host: &str) -> Option<String> {
    let b = t.host(host)?.bond.as_ref()?;
    let spreads = matches!(
        b.config.mode,
        Mode::Lacp | Mode::BalanceXor | Mode::BalanceRr | Mode::Broadcast
    ) && b.members.len() > 1;
    let sw = t.switches.iter().find(|sw| {
        t.links.iter().any(|l| {
            (l.a.node == host && l.b.node == sw.name) || (l.b.node == host && l.a.node == sw.name)
        })
    })?;
    let channel = sw.channels.iter().any(|c| {
        c.host.as_deref() == Some(host) && c.protocol != Protocol::None && forms_with(t, c, host)
    });
    let standalone = sw
        .channels
        .iter()
        .any(|c| c.host.as_deref() == Some(host) && c.protocol != Protocol::None);
    (spreads && !channel).then(|| {
        format!(
            "{} has {} for {host}, whose bond sends from one MAC on {} links: the switch moves that MAC to the port of its latest frame, and what {host} receives follows that race",
            sw.name,
            if standalone {
                "a channel that does not form (its ports stand alone)"
            } else {
                "no channel"
            },
            b.members.len()
        )
    })
}

/// The share of segments TCP retransmitted in a run, from the lab's
/// counters: retransmits over (payload carried / 1448-byte segments).
fn retransmitted(run: &serde_json::Value, payload: u64) -> Option<f64> {
    let r = run["measurement"]["retransmits"].as_f64()?;
    (payload > 0).then(|| r / (payload as f64 / 1448.0))
}

/// Compares built-in scenario `name` with a lab report (`report.json` of
/// `lagkit lab run`): every bonded host, each direction that carries data.
pub fn compare(
    name: &str,
    short: bool,
    report: &serde_json::Value,
) -> Result<Vec<Accuracy>, String> {
    let mut out = Vec::new();
    for c in &configs(name, short, switch_kind(Some(report)))? {
        let Some(run) = run_of(report, &c.key) else {
            continue;
        };
        let t = &c.topo;
        let Some(WorkloadSpec::LagkitLoad(w)) = &t.workload else {
            continue;
        };
        let conns = connections_of(run);
        let Ok((flows, _)) = workload_flows(t, w, conns.as_deref()) else {
            continue;
        };
        let lab = Lab { t };
        let routed = route(&lab, &flows);
        let caps: Vec<f64> = (0..t.links.len() * 2).map(|i| lab.rate(i / 2)).collect();
        let model: Vec<fair::PathFlow> = flows
            .iter()
            .zip(&routed.paths)
            .map(|(f, p)| (f.demand, p.iter().map(|&(w, x)| (w.index(), x)).collect()))
            .collect();
        let rates = fair::network(&caps, &model);
        let mut load = vec![0.0; caps.len()];
        for (r, (_, p)) in rates.iter().zip(&model) {
            for &(l, x) in p {
                load[l] += r * x;
            }
        }
        let meas = &run["measurement"];
        let seconds = meas["seconds"].as_f64().unwrap_or(0.0);
        let cpu_bound = meas["cpu"]["cpu_bound"].as_bool().unwrap_or(false)
            || run["flags"].as_array().is_some_and(|f| {
                f.iter()
                    .any(|x| x.as_str().is_some_and(|s| s.contains("CPU")))
            });
        // Open vSwitch forwards on one thread: near a whole core, it sets
        // the rate of what crosses it.
        let switch_bound = meas["switch_cpu"].as_array().and_then(|v| {
            v.iter()
                .filter_map(|s| Some((s["switch"].as_str()?, s["cores"].as_f64()?)))
                .find(|&(_, c)| c >= lagkit_lab::measure::SWITCH_BOUND_CORES)
                .map(|(sw, c)| {
                    format!(
                        "{sw}'s Open vSwitch kept {c:.2} of a core busy: the switch, not the links, set the rate"
                    )
                })
        });
        let latency_bound = flows.iter().all(|f| f.demand.is_some());
        let shaped = t.links.iter().all(|l| l.rate.is_some());
        // The same for every host and direction of this run.
        let lossy = retransmitted(run, flows.iter().map(|f| f.carried).sum())
            .filter(|&x| x >= 0.01)
            .map(|x| {
                format!(
                    "TCP retransmitted {:.1}% of its segments: loss recovery, not a fair share of the links, set the flows' rates",
                    x * 100.0
                )
            });
        let reorders = t.hosts.iter().any(|h| {
            h.bond
                .as_ref()
                .is_some_and(|b| b.config.mode == Mode::BalanceRr)
        });
        for (host, out_end, into_end, into_by) in &routed.ends {
            let Some(bond) = meas["bonds"]
                .as_array()
                .and_then(|b| b.iter().find(|b| b["host"] == host.as_str()))
            else {
                continue;
            };
            let Some(hb) = t.host(host).and_then(|h| h.bond.as_ref()) else {
                continue;
            };
            for (dir, wires, end, by, counter) in [
                (
                    "sends",
                    lab.wires_out(host),
                    out_end,
                    format!("{host}'s bond ({})", hb.mode),
                    "tx_bytes",
                ),
                (
                    "receives",
                    lab.wires_in(host, None),
                    into_end,
                    into_by.clone(),
                    "rx_bytes",
                ),
            ] {
                // Only directions with data (not just acknowledgements).
                let carries = flows.iter().any(|f| {
                    f.demand.is_none_or(|d| d >= LATENCY_BOUND_BPS)
                        && if dir == "sends" {
                            &f.from == host
                        } else {
                            &f.to == host
                        }
                });
                if !carries {
                    continue;
                }
                let mut predicted: Vec<f64> = wires.iter().map(|w| load[w.index()]).collect();
                let read = |counter: &str| -> Vec<f64> {
                    hb.members
                        .iter()
                        .map(|m| {
                            bond["members"]
                                .as_array()
                                .and_then(|ms| ms.iter().find(|x| x["name"] == m.as_str()))
                                .and_then(|x| x[counter].as_f64())
                                .unwrap_or(0.0)
                        })
                        .collect()
                };
                let counted_bps = if seconds > 0.0 {
                    read(counter).iter().sum::<f64>() * 8.0 / seconds
                } else {
                    0.0
                };
                // Round-robin deals frames, not bytes: a repeating pattern
                // of frame sizes (a 4 KB message is 3 segments) can put
                // more bytes on one member while every member gets its
                // turn. Its shares are compared in frames.
                let by_frames = end.spread == Spread::RoundRobin;
                let mut measured = read(&if by_frames {
                    counter.replace("bytes", "packets")
                } else {
                    counter.to_string()
                });
                let mine = |f: &LabFlow| {
                    if dir == "sends" {
                        &f.from == host
                    } else {
                        &f.to == host
                    }
                };
                let predicted_bps: f64 = flows
                    .iter()
                    .zip(&rates)
                    .filter(|(f, _)| mine(f))
                    .map(|(_, r)| r)
                    .sum();
                let carried: u64 = flows.iter().filter(|f| mine(f)).map(|f| f.carried).sum();
                normalise(&mut predicted);
                normalise(&mut measured);
                // The predicted placement weighted by the bytes each
                // connection actually carried: whether the flows went
                // where the plan put them, apart from the rates TCP gave
                // them.
                let mut placed: Vec<f64> = wires
                    .iter()
                    .map(|w| {
                        flows
                            .iter()
                            .zip(&routed.paths)
                            .filter(|(f, _)| mine(f))
                            .flat_map(|(f, p)| {
                                p.iter()
                                    .filter(|(x, _)| x == w)
                                    .map(move |(_, part)| part * f.carried as f64)
                            })
                            .sum()
                    })
                    .collect();
                let have_placed = !by_frames && placed.iter().sum::<f64>() > 0.0;
                normalise(&mut placed);
                if !matches!(end.spread, Spread::Hash(_) | Spread::RoundRobin) {
                    // Which member the switch or the rebalancer picks is
                    // not fixed; how much each carries is.
                    predicted.sort_by(|a, b| b.total_cmp(a));
                    measured.sort_by(|a, b| b.total_cmp(a));
                    placed.sort_by(|a, b| b.total_cmp(a));
                }
                let placement_diff_pp = have_placed.then(|| {
                    placed
                        .iter()
                        .zip(&measured)
                        .map(|(a, b)| (a - b).abs() * 100.0)
                        .fold(0.0, f64::max)
                });
                // Towards or from a switch (not back to back).
                let through_switch = wires.iter().any(|w| {
                    let l = &t.links[w.cable];
                    t.switches
                        .iter()
                        .any(|sw| l.a.node == sw.name || l.b.node == sw.name)
                });
                let max_diff_pp = predicted
                    .iter()
                    .zip(&measured)
                    .map(|(a, b)| (a - b).abs() * 100.0)
                    .fold(0.0, f64::max);
                // TCP payload per byte of wire (IP, TCP and timestamps:
                // 52 bytes) and per byte the counters count (frames
                // without the preamble, gap and FCS a real-wire shaper
                // also charges).
                let (per_wire, per_frame) = wires
                    .first()
                    .map(|w| {
                        let l = &t.links[w.cable];
                        let mtu = f64::from(l.mtu[0].min(l.mtu[1]));
                        let extra = if l.overhead { 24.0 } else { 0.0 };
                        (
                            (mtu - 52.0) / (mtu + 14.0 + extra),
                            (mtu - 52.0) / (mtu + 14.0),
                        )
                    })
                    .unwrap_or((1.0, 1.0));
                let predicted_mbps = predicted_bps * per_wire / 1e6;
                let run_seconds = run["workload"]["seconds"].as_f64().unwrap_or(0.0);
                let measured_mbps = if carried > 0 && run_seconds > 0.0 {
                    carried as f64 * 8.0 / run_seconds / 1e6
                } else {
                    counted_bps * per_frame / 1e6
                };
                let rate_not_compared = if latency_bound {
                    Some("request/response: latency, not the links, sets the rate".to_string())
                } else if w.load == "socketprocs" {
                    // Its many connections fill the links when the links
                    // are the bottleneck (their shares follow the links),
                    // but with one message in flight each, a queue
                    // anywhere on the path lowers the rate.
                    Some(
                        "socketprocs keeps one message in flight per connection: latency on the path, not only the links, sets the rate"
                            .to_string(),
                    )
                } else if reorders {
                    Some(
                        "round-robin reorders segments, and TCP's reaction to that, not the links, sets the rate"
                            .to_string(),
                    )
                } else if !shaped {
                    Some("unshaped links: the CPU sets the rate".to_string())
                } else if cpu_bound {
                    Some("the run was CPU-bound".to_string())
                } else if through_switch {
                    switch_bound.clone()
                } else {
                    None
                };
                out.push(Accuracy {
                    key: c.key.clone(),
                    host: host.clone(),
                    dir,
                    spread_by: by,
                    predicted,
                    measured,
                    max_diff_pp,
                    predicted_mbps,
                    measured_mbps,
                    rate_error: if measured_mbps > 0.0 {
                        predicted_mbps / measured_mbps - 1.0
                    } else {
                        f64::INFINITY
                    },
                    rate_not_compared,
                    rebalanced: matches!(end.spread, Spread::Adaptive(_)),
                    bottleneck: wires
                        .iter()
                        .any(|w| load[w.index()] >= 0.99 * caps[w.index()]),
                    cpu_bound: cpu_bound || (through_switch && switch_bound.is_some()),
                    by_frames,
                    placed: have_placed.then(|| placed.clone()),
                    placement_diff_pp,
                    race: if dir == "receives" {
                        mac_race(t, host)
                    } else {
                        None
                    },
                    lossy: lossy.clone(),
                });
            }
        }
    }
    Ok(out)
}

fn normalise(v: &mut [f64]) {
    let total: f64 = v.iter().sum();
    if total > 0.0 {
        v.iter_mut().for_each(|x| *x /= total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::predict;

    #[test]
    fn tlb_without_dynamic_lb_is_predicted_by_its_policy() {
        let mut b = BondConfig::new("b", Mode::BalanceTlb, vec!["e1".into()]);
        b.xmit_hash_policy = "layer3+4".parse().unwrap();
        assert_eq!(
            spread_of(&b),
            Spread::Adaptive(DEFAULT_STRONG),
            "moved by load"
        );
        b.tlb_dynamic_lb = false;
        assert_eq!(spread_of(&b), Spread::Hash("layer3+4".parse().unwrap()));
    }

    #[test]
    fn lpm_configurations_become_flows_and_ends() {
        let (plans, skipped) = plan_scenario("lpm", true, None).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let src: Vec<&LabPlan> = plans.iter().filter(|p| p.host == "src").collect();
        let keys: Vec<&str> = src.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            ["src_port", "dst_port", "src_dst_port", "strong", "adaptive"]
        );
        let p = src[0];
        assert_eq!(p.flows.iter().filter(|f| f.dir == Dir::Out).count(), 8);
        assert_eq!(p.out.links, 2);
        assert_eq!(p.out.rate_bps, 1e8);
        assert!(
            p.into_by.contains("back to back"),
            "the peer's bond spreads what src receives: {}",
            p.into_by
        );
        // The AIX modes put every data connection on one link; strong with
        // the scenario's seed 1 splits them 2/2.
        for p in &src[..3] {
            let pred = predict(&p.flows, Dir::Out, &p.out);
            assert!(
                pred.links.iter().any(|l| l.share > 0.99),
                "{}: {pred:?}",
                p.key
            );
        }
        let pred = predict(&src[3].flows, Dir::Out, &src[3].out);
        assert!(
            pred.links.iter().all(|l| (l.share - 0.5).abs() < 0.01),
            "{pred:?}"
        );
    }

    #[test]
    fn kernel_chosen_ports_need_the_runs_connections() {
        let (plans, skipped) = plan_scenario("hp-apa", true, None).unwrap();
        assert!(plans.is_empty());
        assert!(
            skipped[0].why.contains("chosen by the kernel"),
            "{skipped:?}"
        );
        assert!(plan_scenario("nope", true, None).is_err());
        // With the connections a run recorded, each flow is placed.
        let s = lagkit_lab::scenario::builtin("hp-apa", true).unwrap();
        let c = s.configs.iter().find(|c| c.key == "k2-tx").unwrap();
        let conns: Vec<Connection> = (1..=8)
            .map(|i| Connection {
                purpose: "maerts".into(),
                local: format!("10.0.1.{}:{}", 10 + i, 40000 + i).parse().unwrap(),
                remote: "10.0.1.1:12865".parse().unwrap(),
                sent: 0,
                received: 1 << 20,
            })
            .collect();
        let plans = plan_topology(&c.topo, &c.key, &c.label, Some(&conns)).unwrap();
        assert_eq!(plans.len(), 1);
        let p = &plans[0];
        assert_eq!(p.host, "srv");
        assert!(p.ports_from_run);
        assert_eq!(p.flows.iter().filter(|f| f.dir == Dir::Out).count(), 8);
        assert_eq!(p.out.links, 2);
    }

    /// A report with the given per-member counters for one run.
    fn report(
        key: &str,
        members: &[(&str, f64, f64)],
        flags: &[&str],
        conns: &[Connection],
    ) -> serde_json::Value {
        let ms: Vec<serde_json::Value> = members
            .iter()
            .map(|(n, tx, rx)| serde_json::json!({"name": n, "tx_bytes": tx, "rx_bytes": rx}))
            .collect();
        serde_json::json!({"runs": [{
            "key": key,
            "flags": flags,
            "workload": {"connections": conns},
            "measurement": {"seconds": 10.0, "cpu": {"cpu_bound": false},
                "bonds": [{"host": "srv", "members": ms}]},
        }]})
    }

    /// hp-apa's eight clients each streaming 1 MB into the server.
    fn streams_into_srv() -> Vec<Connection> {
        (1..=8)
            .map(|i| Connection {
                purpose: "stream".into(),
                local: format!("10.0.1.{}:{}", 10 + i, 40000 + i).parse().unwrap(),
                remote: "10.0.1.1:12865".parse().unwrap(),
                sent: 1 << 20,
                received: 0,
            })
            .collect()
    }

    #[test]
    fn the_model_spreads_over_the_whole_lab() {
        // hp-apa k2-rx: 8 single-link clients (25 Mbit/s each) stream into
        // a 2-link server through an Open vSwitch channel: the channel is
        // the bottleneck, its two links full and even.
        let conns = streams_into_srv();
        // 25 Mbit/s of wire for 10 s, less preamble, gap and FCS.
        let full = 25e6 * 10.0 / 8.0 * 1514.0 / 1538.0;
        let r = report(
            "k2-rx",
            &[("e1", 3e5, full), ("e2", 3e5, full * 0.96)],
            &[],
            &conns,
        );
        let acc = compare("hp-apa", true, &r).unwrap();
        assert_eq!(
            acc.len(),
            1,
            "only the receive direction carries data: {acc:?}"
        );
        let a = &acc[0];
        assert_eq!(a.dir, "receives");
        assert!(a.spread_by.contains("Open vSwitch"), "{a:?}");
        assert!(a.max_diff_pp < 1.5, "{a:?}");
        // 2 × 25 Mbit/s of wire × 1448 payload bytes per 1538 on the wire.
        assert!((a.predicted_mbps - 47.07).abs() < 0.01, "{a:?}");
        assert!(a.agrees(), "{a:?}");
        // Every connection carried as much: the placement gives 0.5/0.5.
        assert_eq!(a.placed.as_deref(), Some(&[0.5, 0.5][..]));
        assert!(a.placement_diff_pp.unwrap() < 1.5 && !a.by_frames);
        // Counters that say one link carried it all disagree.
        let r = report(
            "k2-rx",
            &[("e1", 3e5, full), ("e2", 3e5, 0.0)],
            &["CPU-bound"],
            &conns,
        );
        let a = &compare("hp-apa", true, &r).unwrap()[0];
        assert!(a.max_diff_pp > 40.0 && !a.agrees(), "{a:?}");
        assert!(!a.placement_holds(), "{a:?}");
        assert!(a.rate_not_compared.as_deref().unwrap().contains("CPU"));
    }

    #[test]
    fn a_lagkit_switch_deals_its_eight_buckets_like_the_switch() {
        // hp-apa k2-rx through lagkit's switch (its runs record the kind):
        // src-dst-mac, clients' MACs ending 2..9 against the server's 1:
        // buckets 3 2 5 4 7 6 1 0, four on each member.
        let conns = streams_into_srv();
        let mut r = report("k2-rx", &[("e1", 3e5, 1e6), ("e2", 3e5, 1e6)], &[], &conns);
        r["runs"][0]["switches"] =
            serde_json::json!([{"name": "sw", "kind": "lagkit", "method": "cisco src-dst-mac"}]);
        assert_eq!(switch_kind(Some(&r)), SwitchKind::Lagkit);
        let a = &compare("hp-apa", true, &r).unwrap()[0];
        assert!(a.spread_by.contains("lagkit switch"), "{a:?}");
        assert!(a.spread_by.contains("src-dst-mac"), "{a:?}");
        assert!(!a.rebalanced, "a fixed function of the headers");
        assert_eq!(a.predicted, [0.5, 0.5], "{a:?}");
        // The same flows' members, asked of the switch's own channel.
        let policy: lagkit_hash::Policy = "cisco:src-dst-mac".parse().unwrap();
        let ch = lagkit_switch::Channel::all_bundled(2, lagkit_switch::Distribution::Fixed);
        let on_first = (2u8..=9)
            .filter(|&c| {
                let k = FlowKey::l2([2, 0x6c, 0x6b, 0, 1, c], [2, 0x6c, 0x6b, 0, 1, 1], 0x0800);
                ch.member_for(&policy, &k) == Some(lagkit_switch::PortId(0))
            })
            .count();
        assert_eq!(on_first, 4);
    }

    /// The committed full lpm run (docs/results/lpm) against the plan:
    /// every configuration's per-link shares within 5 percentage points.
    #[test]
    fn lpm_plan_matches_the_committed_lab_run() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/results/lpm/report.json"
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let acc = compare("lpm", false, &report).unwrap();
        let src: Vec<&Accuracy> = acc.iter().filter(|a| a.host == "src").collect();
        assert_eq!(src.len(), 5, "{acc:?}");
        for a in &src {
            assert_eq!(a.dir, "sends");
            assert!(a.max_diff_pp <= 5.0, "{a:?}");
        }
    }
}
