//! The bond's status as the control socket reports it (`lagkit status`),
//! made from the core's state, the plan in force and what the shell knows
//! of each device. Pure, so every verdict it prints (a member transmitting
//! or not, the problems found) is tested without root.

use crate::core::Core;
use crate::plan::Plan;
use lagkit_api::status::{
    self, BondStatus, DatapathStatus, EngineKind, LacpInfo, MemberLacp, MemberOffloads, MemberPagp,
    MemberStatus, MiiStatus, PagpInfo,
};

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
