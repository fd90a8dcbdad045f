//! The bond's status as the control socket reports it (`lagkit status`),
//! made from the core's state, the plan in force and what the shell knows
//! of each device. Pure, so every verdict it prints (a member transmitting
//! or not, the problems found) is tested without root.

pub mod build;

use crate::core::Core;
use crate::plan::Plan;
use crate::settings::{BondMode, Settings};
use build::Seen;
use lagkit_api::protocol::{FlowAnswer, Response};
use lagkit_api::status::{
    self, ArpMonitor, BondStats, BondStatus, CarrierEvent, DatapathStatus, EngineKind,
    MemberOffloads, MemberStats, MemberStatus, MiiStatus,
};
use lagkit_hash::{flow_key, Policy};
use lagkit_wire::MacAddr;

/// What the shell knows of one member's device.
#[derive(Debug, Clone, Default)]
pub struct MemberFacts {
    /// The bond holds its device.
    pub present: bool,
    /// It exists but was not taken: why (the host still uses it).
    pub refused: Option<String>,
    /// Link speed in Mbit/s, if the driver says.
    pub speed: Option<u32>,
    /// Full duplex (true) or half, if the driver says.
    pub duplex: Option<bool>,
    /// How its data frames are kept from the host stack.
    pub isolation: Option<String>,
    /// Its offloads, when the bond changed them.
    pub offloads: Option<MemberOffloads>,
}

/// What the shell knows of the bond as a whole.
#[derive(Debug, Clone)]
pub struct BondFacts {
    /// The engine running.
    pub engine: EngineKind,
    /// The configured choice, or why `auto` chose it.
    pub engine_reason: String,
    /// The logical interface's MTU.
    pub mtu: u32,
    /// The BPF engine's programs, hooks and pins.
    pub datapath: Option<DatapathStatus>,
    /// Each member's device, in the core's order.
    pub members: Vec<MemberFacts>,
}

/// The API's name for a mode.
pub fn api_mode(m: BondMode) -> status::BondMode {
    match m {
        BondMode::BalanceRr => status::BondMode::BalanceRr,
        BondMode::ActiveBackup => status::BondMode::ActiveBackup,
        BondMode::BalanceXor => status::BondMode::BalanceXor,
        BondMode::Broadcast => status::BondMode::Broadcast,
        BondMode::Lacp => status::BondMode::Lacp,
        BondMode::BalanceTlb => status::BondMode::BalanceTlb,
        BondMode::BalanceAlb => status::BondMode::BalanceAlb,
        BondMode::Adaptive => status::BondMode::Adaptive,
    }
}

/// The API's name for a `fail_over_mac`.
fn api_fail_over_mac(f: crate::settings::FailOverMac) -> status::FailOverMac {
    use crate::settings::FailOverMac as F;
    match f {
        F::None => status::FailOverMac::None,
        F::Active => status::FailOverMac::Active,
        F::Follow => status::FailOverMac::Follow,
    }
}

/// The API's name for a `primary_reselect`.
fn api_reselect(r: crate::settings::Reselect) -> status::PrimaryReselect {
    use crate::settings::Reselect as R;
    match r {
        R::Always => status::PrimaryReselect::Always,
        R::Better => status::PrimaryReselect::Better,
        R::Failure => status::PrimaryReselect::Failure,
    }
}

/// A hash policy's Linux number (`xmit_hash_policy`'s), for Linux's own.
pub fn linux_policy_number(p: &Policy) -> Option<u8> {
    match p {
        Policy::Layer2 => Some(0),
        Policy::Layer34 => Some(1),
        Policy::Layer23 => Some(2),
        Policy::Encap23 => Some(3),
        Policy::Encap34 => Some(4),
        Policy::VlanSrcMac => Some(5),
        _ => None,
    }
}

impl Settings {
    /// A hash picks each flow's member (Linux prints the policy then).
    pub fn uses_xmit_hash(&self) -> bool {
        match self.mode {
            BondMode::Lacp | BondMode::BalanceXor | BondMode::Adaptive => true,
            BondMode::BalanceTlb | BondMode::BalanceAlb => !self.tlb_dynamic_lb,
            BondMode::BalanceRr | BondMode::ActiveBackup | BondMode::Broadcast => false,
        }
    }

    fn arp_monitor(&self) -> Option<ArpMonitor> {
        let a = self.arp.as_ref()?;
        Some(ArpMonitor {
            interval_ms: a.interval.as_millis() as u64,
            missed_max: a.missed_max,
            targets: a.targets.iter().map(|t| t.to_string()).collect(),
            ns_targets: self.ns_targets.iter().map(|t| t.to_string()).collect(),
        })
    }
}

impl Core {
    /// The status report: the members as `plan` (the one the data path
    /// runs) carries them, each protocol's state, and the problems seen.
    pub fn status(&self, plan: Option<&Plan>, facts: BondFacts) -> BondStatus {
        let s = self.settings();
        let tx = |i: usize| plan.is_some_and(|p| p.transmitting().contains(&i));
        let rx = |i: usize| plan.is_some_and(|p| p.collects(i));
        let link = plan.map(|p| {
            let f = &facts.members;
            p.logical_link(s.lacp.min_links, |i| {
                f.get(i).map_or((None, None), |m| (m.speed, m.duplex))
            })
        });
        let refused: Vec<String> = (facts.members.iter())
            .filter_map(|f| f.refused.clone())
            .collect();
        let ports: Vec<_> = (0..self.members().len())
            .map(|i| self.lacp_status(i))
            .collect();
        let pagp_ports: Vec<_> = (0..self.members().len())
            .map(|i| self.pagp_status(i))
            .collect();
        let members: Vec<MemberStatus> = self
            .members()
            .iter()
            .zip(facts.members)
            .enumerate()
            .map(|(i, (m, f))| MemberStatus {
                name: m.name().to_string(),
                mii_status: match (f.present, &f.refused) {
                    (true, _) => m.mii_status(),
                    // It exists; the bond left it to the host.
                    (false, Some(_)) => MiiStatus::Down,
                    (false, None) => MiiStatus::Missing,
                },
                speed_mbps: f.speed,
                full_duplex: f.duplex,
                link_failure_count: m.link_failures(),
                permanent_hw_addr: m.mac().to_string(),
                queue_id: 0,
                transmitting: tx(i),
                collecting: rx(i),
                leaving: m.is_leaving(),
                watchers: m
                    .watchers()
                    .verdicts()
                    .iter()
                    .map(|(n, u)| (n.to_string(), *u))
                    .collect(),
                isolation: f.isolation,
                offloads: f.offloads,
                lacp: ports[i].as_ref().map(build::member_lacp),
                pagp: pagp_ports[i].as_ref().map(build::member_pagp),
            })
            .collect();
        let seen: Vec<Seen<'_>> = (members.iter().enumerate())
            .map(|(i, m)| Seen::new(m, ports[i].as_ref(), pagp_ports[i].as_ref()))
            .collect();
        let lacp = self.lacp().map(|sys| build::lacp_info(sys, &s.lacp));
        let mut problems = build::problems(&s.warnings, &seen, lacp.as_ref(), s.lacp.no_partner);
        problems.extend(refused);
        let pagp = s.pagp.filter(|_| self.pagp().is_some()).map(|ps| {
            problems.extend(build::pagp_problems(&seen, &ps));
            let device = self.pagp().map_or(self.mac(), |s| s.config().device_id);
            let held: Vec<_> = pagp_ports.iter().flatten().cloned().collect();
            build::pagp_info(&ps, device, &held)
        });
        let (hash_seed, hash_symmetric) = match &s.policy {
            Policy::Strong(st) => (Some(st.seed), st.symmetric),
            _ => (None, false),
        };
        let carrier = link.is_some_and(|l| l.carrier);
        BondStatus {
            name: s.name.clone(),
            mode: api_mode(s.mode),
            xmit_hash_policy: s.policy.name().to_string(),
            xmit_hash_number: linux_policy_number(&s.policy),
            hash_seed,
            hash_symmetric,
            uses_xmit_hash: s.uses_xmit_hash(),
            engine: facts.engine,
            engine_reason: facts.engine_reason,
            mii_status: if carrier {
                MiiStatus::Up
            } else {
                MiiStatus::Down
            },
            speed_mbps: link.and_then(|l| l.speed_mbps),
            mac: self.mac().to_string(),
            mtu: facts.mtu,
            miimon_ms: s.miimon.as_millis() as u64,
            updelay_ms: s.updelay.as_millis() as u64,
            downdelay_ms: s.downdelay.as_millis() as u64,
            peer_notif_delay_ms: s.peer_notif_delay.as_millis() as u64,
            arp: s.arp_monitor(),
            fail_over_mac: api_fail_over_mac(s.fail_over_mac),
            primary: s.primary.clone(),
            primary_reselect: api_reselect(s.primary_reselect),
            active_member: self
                .plan_state()
                .active
                .and_then(|a| self.members().get(a))
                .map(|m| m.name().to_string()),
            lacp,
            pagp,
            members,
            problems,
            datapath: facts.datapath,
            details_withheld: false,
        }
    }
}

impl Core {
    /// `lagkit flow`: the member `plan` (the one the data path runs) sends
    /// a flow from `src` to `dst` on, and why; the flow's frames are taken
    /// to leave with the bond's MAC for the broadcast address, as a host's
    /// first frames do.
    pub fn flow(&self, plan: Option<&Plan>, proto: &str, src: &str, dst: &str) -> Response {
        let key = match flow_key(proto, src, dst) {
            Ok(k) => k.with_macs(self.mac().0, MacAddr::BROADCAST.0),
            Err(e) => return Response::Error(e.to_string()),
        };
        let Some(plan) = plan else {
            return Response::Error("no plan published yet".into());
        };
        let policy = &self.settings().policy;
        let (member, e) = plan.explain(&key, policy);
        Response::Flow(FlowAnswer {
            member: member
                .and_then(|m| self.members().get(m))
                .map(|m| m.name().to_string()),
            policy: policy.to_string(),
            hash: e.hash,
            bucket: e.bucket,
            reason: e.reason,
        })
    }

    /// The metrics page's facts about the bond as a whole: its mode and
    /// hash policy, the plans built, and `rebalances` (the data path's
    /// rebalancing passes that moved buckets).
    pub fn metrics_facts(&self, rebalances: u64) -> lagkit_api::metrics::BondFacts {
        lagkit_api::metrics::BondFacts {
            mode: self.settings().mode.name().to_string(),
            policy: self.settings().policy.name().to_string(),
            plans_published: self.generation(),
            rebalances,
        }
    }

    /// The counters: each member's as the data path counted them
    /// (`counted(i, name)`) with its LACP port's, the engine's drops and
    /// the carrier changes with their failover latencies.
    pub fn stats(
        &self,
        mut counted: impl FnMut(usize, &str) -> MemberStats,
        engine_drops: Vec<(String, u64)>,
        carrier_events: Vec<CarrierEvent>,
    ) -> BondStats {
        let members = (self.members().iter().enumerate())
            .map(|(i, m)| {
                let mut s = counted(i, m.name());
                if let Some(p) = self.lacp_status(i) {
                    build::lacp_counts(&mut s, &p);
                }
                s
            })
            .collect();
        BondStats {
            name: self.settings().name.clone(),
            members,
            tx_balance: None,
            rx_balance: None,
            engine_drops,
            carrier_events,
        }
        .with_ratios()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{BondMode, Settings};

    fn up_xor(policy: &str) -> Core {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::BalanceXor);
        s.policy = policy.parse().unwrap();
        crate::core::tests::running(s)
    }

    /// The members 63 UDP flows between two hosts go on.
    fn members_of_flows(c: &mut Core) -> std::collections::BTreeSet<String> {
        let plan = c.build_plan(0);
        let mut members = std::collections::BTreeSet::new();
        for port in 1..64u16 {
            let dst = format!("10.0.0.2:{port}");
            let Response::Flow(a) = c.flow(Some(&plan), "udp", "10.0.0.1:1", &dst) else {
                panic!("no answer");
            };
            assert_eq!(a.policy, c.settings().policy.to_string());
            members.insert(a.member.expect("an up member carries every flow"));
        }
        members
    }

    #[test]
    fn a_flow_is_explained_by_the_plan_in_force() {
        let mut c = up_xor("layer2");
        let none = c.flow(None, "tcp", "10.0.0.1:1", "10.0.0.2:2");
        assert!(matches!(none, Response::Error(e) if e.contains("no plan")));
        let bad = c.flow(None, "sctp?", "x", "y");
        assert!(matches!(bad, Response::Error(_)));
        // layer2 sends every flow between two hosts on one member,
        // layer3+4 spreads them.
        assert_eq!(members_of_flows(&mut c).len(), 1);
        let mut c = up_xor("layer3+4");
        assert_eq!(members_of_flows(&mut c).len(), 2);
    }

    #[test]
    fn the_metrics_facts_name_the_mode_and_policy_and_count_the_plans() {
        let mut c = up_xor("layer3+4");
        c.build_plan(0);
        c.build_plan(1);
        let f = c.metrics_facts(7);
        assert_eq!(
            (f.mode.as_str(), f.policy.as_str()),
            ("balance-xor", "layer3+4")
        );
        assert_eq!((f.plans_published, f.rebalances), (2, 7));
    }

    #[test]
    fn stats_are_the_data_paths_counts_per_member_in_order() {
        let c = up_xor("layer2");
        let st = c.stats(
            |i, name| MemberStats {
                name: name.to_string(),
                tx_packets: 10 * (i as u64 + 1),
                ..Default::default()
            },
            vec![("no member up".into(), 3)],
            Vec::new(),
        );
        assert_eq!(st.name, "bond0");
        let got: Vec<(&str, u64)> = st
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.tx_packets))
            .collect();
        assert_eq!(got, [("a1", 10), ("a2", 20)]);
        assert_eq!(st.engine_drops, [("no member up".to_string(), 3)]);
        assert!(st.tx_balance.is_some(), "ratios are filled in");
    }
}
