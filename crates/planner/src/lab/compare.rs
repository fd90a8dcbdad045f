//! The model beside the measurement: per bonded host and direction, the
//! predicted share and rate of each member against its counters.

use super::flows::{workload_flows, LabFlow, LATENCY_BOUND_BPS};
use super::measured::{connections_of, retransmitted, run_of, switch_kind};
use super::model::{forms_with, route, Lab};
use super::{configs, ScenarioError};
use crate::fair;
use crate::predict::Spread;
use lagkit_bondcfg::Mode;
use lagkit_lab::report::Report;
use lagkit_lab::topology::{Protocol, Topology, WorkloadSpec};
use serde::Serialize;

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
    /// A lagkit bond's rebalancer spreads this direction, and the run was
    /// short enough for its first placement to show (see [`Settling`]).
    pub settling: Option<Settling>,
}

/// How far a run's counters may sit from the rebalancer's steady state
/// because the run includes the time before its first move: the hash's
/// first placement may put every flow on one member, and a saturating flow
/// moves only after the rebalancer's patience (`busy_patience + 1`
/// intervals). The bound assumes that worst start: one member carries
/// everything, at its link's rate, for `seconds`, then the plan holds.
#[derive(Clone, Debug, Serialize)]
pub struct Settling {
    /// Seconds until the rebalancer's first move of a busy bucket.
    pub seconds: f64,
    /// The run's seconds.
    pub run_seconds: f64,
    /// The largest share difference that start can cause, percentage points.
    pub max_pp: f64,
    /// The largest rate error (predicted over measured, minus 1) it can cause.
    pub max_rate_error: f64,
}

impl Settling {
    /// The bound for a direction whose plan gives `predicted` shares of
    /// `total_bps` over links of `link_bps` each, in a run of `run_seconds`
    /// whose rebalancer first moves a busy bucket after `settle_s`.
    pub fn bound(
        settle_s: f64,
        run_seconds: f64,
        predicted: &[f64],
        total_bps: f64,
        link_bps: f64,
    ) -> Option<Settling> {
        if !(run_seconds > 0.0 && settle_s > 0.0 && total_bps > 0.0 && link_bps > 0.0) {
            return None;
        }
        let d = run_seconds;
        let t = settle_s.min(d);
        // Everything on one member: it carries what it can of the total.
        let first = t * link_bps.min(total_bps);
        let after = (d - t) * total_bps;
        let bytes = first + after;
        let mut max_pp = 0.0f64;
        for i in 0..predicted.len() {
            for (j, &p) in predicted.iter().enumerate() {
                let on_j = if i == j { first } else { 0.0 };
                let share = (on_j + after * p) / bytes;
                max_pp = max_pp.max((share - p).abs() * 100.0);
            }
        }
        Some(Settling {
            seconds: t,
            run_seconds: d,
            max_pp,
            max_rate_error: total_bps * d / bytes - 1.0,
        })
    }
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
            || self.settling_explains()
    }

    /// The shares and the rate are within what the rebalancer's first
    /// placement can cause before its first move ([`Settling`]), and the
    /// rate is otherwise within the usual 10%.
    pub fn settling_explains(&self) -> bool {
        self.settling.as_ref().is_some_and(|s| {
            self.max_diff_pp <= s.max_pp
                && (self.rate_not_compared.is_some()
                    || (self.rate_error >= -0.10 && self.rate_error <= s.max_rate_error + 0.10))
        })
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
        if let Some(s) = self.settling.as_ref().filter(|_| self.settling_explains()) {
            return Some(format!(
                "the rebalancer moves a saturating flow only after {:.1} s, so this {:.0} s run may include its first placement, every flow on one member until then: that shifts shares by up to {:.1} pp and the rate by up to {:.0}%",
                s.seconds,
                s.run_seconds,
                s.max_pp,
                s.max_rate_error * 100.0
            ));
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

/// A host whose bond sends from its one MAC on several links, facing a
/// switch with no channel for it: the switch learns the MAC on whichever
/// port saw its last frame, and what the host receives follows that race.
pub(super) fn mac_race(t: &Topology, host: &str) -> Option<String> {
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

/// Compares built-in scenario `name` with a lab report (`report.json` of
/// `lagkit lab run`): every bonded host, each direction that carries data.
pub fn compare(name: &str, short: bool, report: &Report) -> Result<Vec<Accuracy>, ScenarioError> {
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
        let Ok((flows, _)) = workload_flows(t, w, conns) else {
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
        let none = lagkit_lab::measure::Measurement::default();
        let meas = run.measurement.as_ref().unwrap_or(&none);
        let seconds = meas.seconds;
        let cpu_bound = meas.cpu.cpu_bound || run.flags.iter().any(|s| s.contains("CPU"));
        // A shaped veth sends only while a CPU runs its queue: time the
        // hypervisor took from the CPUs is time the links did not send.
        let starved = (meas.cpu.starved || run.flags.iter().any(|s| s.starts_with("starved")))
            .then(|| {
                format!(
                    "the hypervisor kept the CPUs from running {:.0}% of the run (steal): the machine's host, not the links, set the rate",
                    meas.cpu.steal_pct
                )
            });
        // Open vSwitch forwards on one thread: near a whole core, it sets
        // the rate of what crosses it.
        let switch_bound = meas
            .switch_cpu
            .iter()
            .find(|s| s.cores >= lagkit_lab::measure::SWITCH_BOUND_CORES)
            .map(|s| {
                format!(
                    "{}'s Open vSwitch kept {:.2} of a core busy: the switch, not the links, set the rate",
                    s.switch, s.cores
                )
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
        for e in &routed.ends {
            let (host, out_end, into_end, into_by) = (&e.host, &e.out, &e.into, &e.into_by);
            let Some(bond) = meas.bonds.iter().find(|b| &b.host == host) else {
                continue;
            };
            let Some(hb) = t.host(host).and_then(|h| h.bond.as_ref()) else {
                continue;
            };
            for (dir, wires, end, by, counter, settle_s) in [
                (
                    "sends",
                    lab.wires_out(host),
                    out_end,
                    format!("{host}'s bond ({})", hb.mode),
                    Counter::TxBytes,
                    e.out_settle_s,
                ),
                (
                    "receives",
                    lab.wires_in(host, None),
                    into_end,
                    into_by.clone(),
                    Counter::RxBytes,
                    e.into_settle_s,
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
                let predicted_wire_bps: f64 = predicted.iter().sum();
                let link_bps = wires.iter().map(|w| caps[w.index()]).fold(0.0, f64::max);
                let read = |counter: Counter| -> Vec<f64> {
                    hb.members
                        .iter()
                        .map(|m| {
                            bond.members
                                .iter()
                                .find(|x| &x.name == m)
                                .map_or(0.0, |x| counter.of(x) as f64)
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
                let mut measured = read(if by_frames { counter.frames() } else { counter });
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
                let run_seconds = run.workload.as_ref().map_or(0.0, |w| w.seconds);
                let settling = settle_s
                    .filter(|_| matches!(end.spread, Spread::Adaptive(_)))
                    .and_then(|t| {
                        Settling::bound(t, run_seconds, &predicted, predicted_wire_bps, link_bps)
                    });
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
                } else if starved.is_some() {
                    starved.clone()
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
                    settling,
                });
            }
        }
    }
    Ok(out)
}

/// A member counter the comparison reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counter {
    TxBytes,
    RxBytes,
    TxPackets,
    RxPackets,
}

impl Counter {
    fn of(self, m: &lagkit_lab::measure::MemberDelta) -> u64 {
        match self {
            Counter::TxBytes => m.tx_bytes,
            Counter::RxBytes => m.rx_bytes,
            Counter::TxPackets => m.tx_packets,
            Counter::RxPackets => m.rx_packets,
        }
    }

    /// The frame counter of the same direction.
    fn frames(self) -> Counter {
        match self {
            Counter::TxBytes | Counter::TxPackets => Counter::TxPackets,
            Counter::RxBytes | Counter::RxPackets => Counter::RxPackets,
        }
    }
}

fn normalise(v: &mut [f64]) {
    let total: f64 = v.iter().sum();
    if total > 0.0 {
        v.iter_mut().for_each(|x| *x /= total);
    }
}
