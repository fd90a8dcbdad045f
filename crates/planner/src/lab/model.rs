//! The lab as the model sees it: every cable each way at its shaped rate,
//! who spreads over which cables, and each flow's path through them.

use super::flows::{KeyFields, LabFlow};
use super::{rebalancer_settle_s, spread_of};
use crate::flow::{Dir, Flow};
use crate::predict::{Chooser, EndConfig, Spread, DEFAULT_STRONG, EVERY_LINK};
use lagkit_bondcfg::Mode;
use lagkit_lab::topology::{LoadBalance, Protocol, SwitchKind, Topology};
use std::collections::HashMap;
use std::net::IpAddr;

pub(super) fn ip_of(t: &Topology, host: &str) -> Option<IpAddr> {
    let a = t.host(host)?.address.as_deref()?;
    a.split('/').next()?.parse().ok()
}

pub(super) fn mac_of(t: &Topology, host: &str) -> [u8; 6] {
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
pub(super) const UNSHAPED_BPS: f64 = 1e10;

/// One direction of one cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Wire {
    pub(super) cable: usize,
    /// From the cable's `a` end to its `b` end.
    pub(super) a_to_b: bool,
}

impl Wire {
    pub(super) fn index(self) -> usize {
        self.cable * 2 + usize::from(!self.a_to_b)
    }
}

/// The lab as the model sees it: cables and who spreads over which.
pub(super) struct Lab<'a> {
    pub(super) t: &'a Topology,
}

impl Lab<'_> {
    /// The cables of `host`'s bond, in member order, and the node at each
    /// one's far end; an unbonded host's cables in file order.
    pub(super) fn cables_of(&self, host: &str) -> Vec<(usize, String, bool)> {
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

    pub(super) fn far(&self, cable: usize, host_is_a: bool) -> &str {
        let l = &self.t.links[cable];
        if host_is_a {
            &l.b.node
        } else {
            &l.a.node
        }
    }

    pub(super) fn rate(&self, cable: usize) -> f64 {
        self.t.links[cable]
            .rate
            .as_ref()
            .map_or(UNSHAPED_BPS, |r| r.bits as f64)
    }

    /// The wires from `host` out, in member order (its bond's choices).
    pub(super) fn wires_out(&self, host: &str) -> Vec<Wire> {
        self.cables_of(host)
            .into_iter()
            .map(|(cable, _, a)| Wire { cable, a_to_b: a })
            .collect()
    }

    /// The wires into `host` from `from` (every neighbour when `None`).
    pub(super) fn wires_in(&self, host: &str, from: Option<&str>) -> Vec<Wire> {
        self.cables_of(host)
            .into_iter()
            .filter(|&(c, _, a)| from.is_none_or(|f| self.far(c, a) == f))
            .map(|(cable, _, a)| Wire { cable, a_to_b: !a })
            .collect()
    }

    /// Who spreads the frames a switch sends towards `host`, how, and
    /// which header fields it reads.
    pub(super) fn spread_from_switch(&self, sw: &str, host: &str) -> (Spread, String, KeyFields) {
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
                // Each peer (by its address) learns one member's MAC, the
                // one the bond's own rule gives it.
                return (
                    Spread::AlbPeers,
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

/// Whether channel `c` forms with `host`'s bond. One that does not (PAgP
/// non-silent facing a bond that speaks no PAgP, say) is no channel for
/// traffic: lagkit's switch lets its members stand alone, each forwarding
/// as a port of its own (Cisco's `I`).
pub(super) fn forms_with(t: &Topology, c: &lagkit_lab::topology::Channel, host: &str) -> bool {
    t.host(host)
        .and_then(|h| h.bond.as_ref())
        .is_none_or(|b| c.protocol.will_not_form_with(b).is_none())
}

/// Every flow's path through the lab, and the stage spreads that chose it.
pub(super) struct Routed {
    /// Per flow: the wires it crosses, with the fraction of its rate.
    pub(super) paths: Vec<Vec<(Wire, f64)>>,
    /// Per bonded host: its bond, and who spreads into it.
    pub(super) ends: Vec<RoutedEnd>,
}

/// One bonded host's two directions, as [`route`] found them.
pub(super) struct RoutedEnd {
    /// The host.
    pub(super) host: String,
    /// How its bond spreads what it sends.
    pub(super) out: EndConfig,
    /// How what it receives is spread.
    pub(super) into: EndConfig,
    /// Who spreads what it receives, in words.
    pub(super) into_by: String,
    /// Seconds the lagkit bond spreading what it sends may take to move
    /// its first busy bucket ([`super::rebalancer_settle_s`]); `None` when
    /// nothing rebalances it.
    pub(super) out_settle_s: Option<f64>,
    /// The same for what it receives, when a lagkit bond back to back
    /// spreads it.
    pub(super) into_settle_s: Option<f64>,
}

pub(super) fn route(lab: &Lab, flows: &[LabFlow]) -> Routed {
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
        let (into, by, into_settle_s) = match stages.get(&(false, h.name.clone())) {
            Some(s) => (s.0, into_by.get(&h.name).cloned().unwrap_or_default(), None),
            None => match peer.as_deref().and_then(|p| Some((p, bonded(p)?))) {
                Some((p, pb)) => (
                    EndConfig {
                        spread: spread_of(&pb.config),
                        ..out
                    },
                    format!("{p}'s bond ({}), back to back", pb.mode),
                    rebalancer_settle_s(&pb.config),
                ),
                None => (out, "nothing: no traffic into it".into(), None),
            },
        };
        ends.push(RoutedEnd {
            host: h.name.clone(),
            out,
            into,
            into_by: by,
            out_settle_s: rebalancer_settle_s(&b.config),
            into_settle_s,
        });
    }
    Routed { paths, ends }
}
