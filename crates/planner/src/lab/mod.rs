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
//!
//! - `flows`: a workload's connections as flows, both ways;
//! - `model`: the lab's cables, who spreads over which, and each flow's
//!   path (`route`);
//! - `measured`: what a lab report recorded, read through the lab's own
//!   report types;
//! - `compare`: the model beside the measurement ([`Accuracy`]).

mod compare;
mod flows;
mod measured;
mod model;
#[cfg(test)]
mod tests;

pub use compare::{compare, Accuracy, Settling};

use crate::flow::{Dir, Flow};
use crate::platform::Platform;
use crate::predict::{EndConfig, Spread, DEFAULT_STRONG};
use flows::{iperf3_flows, workload_flows};
use lagkit_bondcfg::BondConfig;
use lagkit_lab::report::{BalanceWhy, Report, RunRecord};
use lagkit_lab::topology::{LoadBalance, SwitchKind, Topology, WorkloadSpec};
use lagkit_lab::workload::Connection;
use model::{route, Lab};

/// How a bond spreads what it sends: the kind of plan the bond itself
/// builds for its configuration ([`lagkit_bondcore::plan::plan`], every
/// member usable), and whether its settings move flows by load. A hashing
/// plan that is rebalanced (adaptive; balance-tlb and balance-alb unless
/// `tlb_dynamic_lb = false`) is modelled where the rebalancer converges; a
/// fixed one by its policy.
pub fn spread_of(b: &BondConfig) -> Spread {
    use lagkit_bondcore::plan::{self, Context, MemberView, Plan, PlanState};
    let Ok(s) = lagkit_bondcore::config::settings_from(b, Vec::new()) else {
        return Spread::Single;
    };
    let s = s.normalised();
    let view: Vec<MemberView> = (0..2u8)
        .map(|i| MemberView {
            usable: true,
            distributing: true,
            collecting: true,
            mac: [2, 0, 0, 0, 0, i + 1],
            ..MemberView::default()
        })
        .collect();
    let p = plan::plan(&view, &s, &mut PlanState::default(), &Context::default());
    match p {
        Plan::RoundRobin { .. } => Spread::RoundRobin,
        Plan::ActiveBackup { .. } | Plan::Broadcast { .. } => Spread::Single,
        _ if s.rebalances() => Spread::Adaptive(DEFAULT_STRONG),
        // The lab runs each bond with the default seed unless it names one.
        _ => Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed)),
    }
}

/// How long a lagkit bond's rebalancer may leave flows where the hash
/// first put them, in seconds, or `None` for a bond that does not
/// rebalance. A saturating TCP flow never pauses for the idle gap, so a
/// busy bucket moves only once `busy_patience` passes in a row were
/// refused: the first move comes `busy_patience + 1` intervals after the
/// bond began to rebalance.
pub fn rebalancer_settle_s(b: &BondConfig) -> Option<f64> {
    let s = lagkit_bondcore::config::settings_from(b, Vec::new()).ok()?;
    let s = s.normalised();
    if !s.rebalances() {
        return None;
    }
    let c = s.adaptive_config();
    Some(f64::from(c.busy_patience.saturating_add(1)) * c.interval_ns as f64 / 1e9)
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
    /// What that spreader can be set to: lagkit's switch, a Catalyst,
    /// takes the methods a topology's `load_balance` names.
    pub into_platform: Platform,
    /// The flows' ports came from the run's report (the kernel chose them).
    pub ports_from_run: bool,
}

/// Why a scenario's configurations could not be had ([`plan_scenario`],
/// [`compare`]).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// Neither a built-in scenario nor a file.
    #[error("no built-in scenario {name:?} (see `lagkit lab list`) and no such topology file")]
    Unknown {
        /// The name given.
        name: String,
    },
    /// The topology file could not be read (the message names it).
    #[error(transparent)]
    Read(#[from] lagkit_input::InputError),
    /// The topology file is not a topology (the message names the line).
    #[error(transparent)]
    Topology(#[from] lagkit_lab::topology::TopologyError),
}

/// Why a configuration could not be planned.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The configuration's key.
    pub key: String,
    /// The reason.
    pub why: String,
}

/// What the spreader of `into` can be set to: a Cisco method is lagkit's
/// switch, whose channels a topology sets to the methods its
/// `load_balance` names (l2, l3, l4); anything else is a bond or Open
/// vSwitch, told nothing more.
fn platform_of(into: &EndConfig) -> Platform {
    match into.spread {
        Spread::Hash(p) if p.vendor() == lagkit_hash::Vendor::Cisco => Platform::Catalyst {
            methods: [LoadBalance::L2, LoadBalance::L3, LoadBalance::L4]
                .into_iter()
                .filter_map(|l| format!("cisco:{}", l.cisco_method()).parse().ok())
                .collect(),
        },
        _ => Platform::Any,
    }
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
    let (flows, from_run) = match &t.workload {
        Some(WorkloadSpec::LagkitLoad(w)) => workload_flows(t, w, conns),
        Some(WorkloadSpec::Iperf3(s)) => iperf3_flows(t, s, conns),
        None => return Err(skip("it has no workload".into())),
    }
    .map_err(|e| skip(e.to_string()))?;
    let lab = Lab { t };
    let routed = route(&lab, &flows);
    let plans: Vec<LabPlan> = routed
        .ends
        .into_iter()
        .map(|e| LabPlan {
            key: key.to_string(),
            label: label.to_string(),
            flows: flows
                .iter()
                .filter(|f| f.from == e.host || f.to == e.host)
                .map(|f| Flow {
                    key: f.key,
                    dir: if f.from == e.host { Dir::Out } else { Dir::In },
                    bytes: f.bytes,
                    demand_bps: None,
                })
                .collect(),
            host: e.host,
            out: e.out,
            into_platform: platform_of(&e.into),
            into: e.into,
            into_by: e.into_by,
            ports_from_run: from_run,
        })
        .collect();
    if plans.is_empty() {
        return Err(skip("no bonded host".into()));
    }
    Ok(plans)
}

/// Why each bonded host's traffic in `run` (a run of topology `t`) spreads
/// as it does, where the planner can tell from the connections the run
/// recorded: one entry per host, direction and cause; none when the run
/// recorded no connections or every spread is even. A lagkit switch's
/// fixes name the methods a topology can give it.
pub fn balance_why(t: &Topology, run: &RunRecord) -> Vec<BalanceWhy> {
    let conns = measured::connections_of(run);
    let Ok(plans) = plan_topology(t, &run.key, &run.label, conns) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &plans {
        let r = crate::report::plan(&p.flows, &p.out, &p.into, true, &p.into_platform);
        for d in &r.directions {
            let (direction, by) = match d.prediction.dir {
                Dir::Out => ("tx", format!("{}'s bond, {}", p.host, d.prediction.spread)),
                Dir::In => ("rx", p.into_by.clone()),
            };
            out.extend(d.causes.iter().map(|c| {
                BalanceWhy {
                    host: p.host.clone(),
                    direction: direction.into(),
                    by: by.clone(),
                    // The planner's text gives the arithmetic of a few flows
                    // on lines of their own; one line here, with one flow's.
                    cause: c
                        .text
                        .lines()
                        .take(2)
                        .map(str::trim)
                        .collect::<Vec<_>>()
                        .join("; e.g. "),
                    fix: c.fix.clone(),
                }
            }));
        }
    }
    out
}

/// The configurations of built-in scenario `name` (its switches of
/// `kind`), or the one of a topology file `name` (key `""`, as `lagkit lab
/// run FILE` records it).
fn configs(
    name: &str,
    short: bool,
    kind: SwitchKind,
) -> Result<Vec<lagkit_lab::scenario::Config>, ScenarioError> {
    if let Some(s) = lagkit_lab::scenario::builtin_on(name, short, kind) {
        return Ok(s.configs);
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(ScenarioError::Unknown { name: name.into() });
    }
    let text = lagkit_input::read_text(path, &lagkit_input::CONFIG)?;
    let topo = Topology::load(path)?;
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
    report: Option<&Report>,
) -> Result<(Vec<LabPlan>, Vec<Skipped>), ScenarioError> {
    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    for c in &configs(name, short, measured::switch_kind(report))? {
        let conns = report
            .and_then(|r| measured::run_of(r, &c.key))
            .and_then(measured::connections_of);
        match plan_topology(&c.topo, &c.key, &c.label, conns) {
            Ok(p) => plans.extend(p),
            Err(e) => skipped.push(e),
        }
    }
    Ok((plans, skipped))
}
