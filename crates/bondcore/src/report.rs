//! The bond's status as the control socket reports it (`lagkit status`),
//! made from the core's state, the plan in force and what the shell knows
//! of each device. Pure, so every verdict it prints (a member transmitting
//! or not, the problems found) is tested without root.

use crate::core::Core;
use crate::plan::Plan;
use lagkit_api::protocol::{flow_key, FlowAnswer, Response};
use lagkit_api::status::{
    self, BondStats, BondStatus, CarrierEvent, DatapathStatus, EngineKind, LacpInfo, MemberLacp,
    MemberOffloads, MemberPagp, MemberStats, MemberStatus, MiiStatus, PagpInfo,
};
use lagkit_wire::MacAddr;

/// What the shell knows of one member's device.
#[derive(Debug, Clone, Default)]
pub struct MemberFacts {
    /// The bond holds its device.
    pub present: bool,
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

impl Core {
    /// The status report: the members as `plan` (the one the data path
    /// runs) carries them, each protocol's state, and the problems seen.
    pub fn status(&self, plan: Option<&Plan>, facts: BondFacts) -> BondStatus {
        let s = self.settings();
        let tx = |i: usize| plan.is_some_and(|p| p.transmitting().contains(&i));
        let rx = |i: usize| plan.is_some_and(|p| p.collects(i));
        let members: Vec<MemberStatus> = self
            .members()
            .iter()
            .zip(facts.members)
            .enumerate()
            .map(|(i, (m, f))| MemberStatus {
                name: m.name().to_string(),
                mii_status: if !f.present {
                    MiiStatus::Missing
                } else if m.carrier_up() {
                    MiiStatus::Up
                } else {
                    MiiStatus::Down
                },
                speed: f.speed.map(|s| format!("{s} Mbps")),
                duplex: f
                    .duplex
                    .map(|full| if full { "full" } else { "half" }.to_string()),
                link_failure_count: m.link_failures(),
                permanent_hw_addr: m.mac().to_string(),
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
                lacp: self.lacp_status(i).map(|p| MemberLacp::from_port(&p)),
                pagp: self.pagp_status(i).map(|p| MemberPagp::from_port(&p)),
            })
            .collect();
        let lacp = self
            .lacp()
            .map(|sys| LacpInfo::of(sys, s.lacp.fast, s.lacp.active));
        let mut problems =
            status::problems(&s.warnings, &members, lacp.as_ref(), s.lacp.no_partner);
        let pagp = s.pagp.filter(|_| self.pagp().is_some()).map(|ps| {
            let ports: Vec<MemberPagp> = members.iter().filter_map(|m| m.pagp.clone()).collect();
            let device = self.pagp().map_or(self.mac(), |s| s.config().device_id);
            PagpInfo::of(ps.mode, ps.silence, ps.fast, device, &ports)
        });
        if let Some(p) = &pagp {
            problems.extend(status::pagp_problems(&members, p));
        }
        let any_up = members.iter().any(|m| m.transmitting);
        BondStatus {
            name: s.name.clone(),
            mode: s.mode.linux_name().into(),
            xmit_hash_policy: s.policy.to_string(),
            engine: facts.engine,
            engine_reason: facts.engine_reason,
            mii_status: if any_up {
                MiiStatus::Up
            } else {
                MiiStatus::Down
            },
            mac: self.mac().to_string(),
            mtu: facts.mtu,
            miimon_ms: s.miimon.as_millis() as u64,
            updelay_ms: s.updelay.as_millis() as u64,
            downdelay_ms: s.downdelay.as_millis() as u64,
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
                    s.set_lacp(&p);
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
