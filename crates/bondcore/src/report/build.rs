//! The status values (`lagkit_api::status`'s typed leaf) built from the
//! protocol machines' views, and the problems an operator must see, read
//! from the machines' own states (never from the strings shown).

use crate::settings::{LacpSettings, PagpSettings};
use lagkit_api::status::{
    ChurnState, LacpActivity, LacpInfo, LacpRate, MemberLacp, MemberPagp, MemberStats,
    MemberStatus, MiiStatus, PagpInfo, PagpState,
};
use lagkit_proto::lacp::{self, NoPartner, PortStatus, RxState, System};
use lagkit_proto::pagp;
use lagkit_wire::MacAddr;

/// A churn machine's state in `/proc/net/bonding`'s words.
pub fn churn(c: lacp::ChurnState) -> ChurnState {
    match c {
        lacp::ChurnState::Monitor => ChurnState::Monitoring,
        lacp::ChurnState::Churn => ChurnState::Churned,
        lacp::ChurnState::NoChurn => ChurnState::None,
    }
}

/// The 802.3ad details of one port.
pub fn member_lacp(p: &PortStatus) -> MemberLacp {
    MemberLacp {
        aggregator_id: p.aggregator.map(|a| a.0),
        rx_state: p.rx.name().into(),
        mux_state: p.mux.name().into(),
        selected: p.selected.name().into(),
        actor_churn_state: churn(p.actor_churn),
        partner_churn_state: churn(p.partner_churn),
        actor_churned_count: p.counters.actor_churn,
        partner_churned_count: p.counters.partner_churn,
        actor_system_priority: p.actor.system.priority,
        actor_system_mac: p.actor.system.mac.to_string(),
        actor_port_priority: p.actor.port_priority,
        actor_port: p.actor.port,
        actor_key: p.actor.key,
        actor_state: p.actor.state.0,
        partner_system_priority: p.partner.system.priority,
        partner_mac: p.partner.system.mac.to_string(),
        partner_port_priority: p.partner.port_priority,
        partner_port: p.partner.port,
        partner_key: p.partner.key,
        partner_state: p.partner.state.0,
        not_bundled: p.not_bundled_reason(),
    }
}

/// The 802.3ad part of the status: the system, and the aggregator that
/// distributes (if any).
pub fn lacp_info(sys: &System, s: &LacpSettings) -> LacpInfo {
    let agg = sys
        .aggregators()
        .into_iter()
        .find(|a| !a.distributing.is_empty());
    // An individual link with a defaulted partner has no partner to show
    // (its zeros are administrative defaults).
    let partner = agg
        .as_ref()
        .and_then(|a| a.partner_system)
        .filter(|s| !s.mac.is_zero());
    LacpInfo {
        lacp_rate: if s.fast {
            LacpRate::Fast
        } else {
            LacpRate::Slow
        },
        lacp_activity: if s.active {
            LacpActivity::Active
        } else {
            LacpActivity::Passive
        },
        min_links: u32::try_from(s.min_links).unwrap_or(u32::MAX),
        ad_select: s.ad_select,
        system_priority: sys.system_id().priority,
        system_mac: sys.system_id().mac.to_string(),
        aggregator_id: agg.as_ref().map(|a| a.id.0),
        number_of_ports: agg.as_ref().map_or(0, |a| a.distributing.len()),
        actor_key: agg.as_ref().and_then(|a| a.actor_key),
        partner_key: partner.and(agg.as_ref().and_then(|a| a.partner_key)),
        partner_mac: partner.map(|s| s.mac.to_string()),
        partner_priority: partner.map(|s| s.priority),
    }
}

/// A PAgP port state as the API names it.
pub fn pagp_state(s: pagp::PortState) -> PagpState {
    match s {
        pagp::PortState::Down => PagpState::Down,
        pagp::PortState::Up => PagpState::Up,
        pagp::PortState::UpData => PagpState::UpData,
        pagp::PortState::PagpReceived => PagpState::PagpReceived,
        pagp::PortState::BiDirectional => PagpState::BiDirectional,
        pagp::PortState::UpPagp => PagpState::UpPagp,
        pagp::PortState::HotStandby => PagpState::HotStandby,
        pagp::PortState::UpMult => PagpState::UpMult,
    }
}

/// A PAgP mode as the configuration spells it.
fn pagp_mode_name(m: pagp::Mode) -> &'static str {
    match m {
        pagp::Mode::Desirable => "desirable",
        pagp::Mode::Auto => "auto",
    }
}

/// The PAgP details of one port.
pub fn member_pagp(p: &pagp::PortStatus) -> MemberPagp {
    MemberPagp {
        state: pagp_state(p.state),
        in_channel: p.state.in_channel(),
        partner_device_id: p.partner_device.map(|d| d.to_string()),
        partner_port: p.partner_ifindex,
        partner_port_name: p.partner_port_name.clone(),
        partner_device_name: p.partner_device_name.clone(),
        partner_group_capability: p.partner_group_capability,
        partner_group_ifindex: p.partner_group_ifindex,
        partner_mode: p.partner_mode.map(|m| pagp_mode_name(m).into()),
        partner_learn: p.partner_learn.map(|l| l.to_string()),
        hellos_rx: p.counters.info_rx,
        hellos_tx: p.counters.info_tx,
        bad_rx: p.counters.bad_rx,
    }
}

/// The PAgP part of the status of a bond whose ports are `ports`.
pub fn pagp_info(s: &PagpSettings, device_id: MacAddr, ports: &[pagp::PortStatus]) -> PagpInfo {
    PagpInfo {
        mode: pagp_mode_name(s.mode).into(),
        silent: s.silence == pagp::Silence::Silent,
        rate: if s.fast { "fast" } else { "slow" }.into(),
        device_id: device_id.to_string(),
        members_in_channel: ports.iter().filter(|p| p.state.in_channel()).count(),
    }
}

/// Takes the LACP counters of the member's port.
pub fn lacp_counts(stats: &mut MemberStats, p: &PortStatus) {
    stats.lacpdu_rx = p.counters.lacpdu_rx;
    stats.lacpdu_tx = p.counters.lacpdu_tx;
    stats.lacpdu_bad = p.counters.bad_rx;
    stats.marker_rx = p.counters.marker_rx;
    stats.marker_tx = p.counters.marker_response_tx;
}

/// One member as the problems read it: its status, and what its machines
/// say in their own terms.
pub struct Seen<'a> {
    /// What status shows of it.
    pub status: &'a MemberStatus,
    /// 802.3ad: its partner never spoke LACP (Receive machine DEFAULTED).
    pub defaulted: bool,
    /// PAgP: its port's state, and the partner's mode when heard.
    pub pagp: Option<(pagp::PortState, Option<pagp::Mode>)>,
}

impl<'a> Seen<'a> {
    /// Member `status` with its LACP port `lacp` and PAgP port `pagp`.
    pub fn new(
        status: &'a MemberStatus,
        lacp: Option<&PortStatus>,
        pagp: Option<&pagp::PortStatus>,
    ) -> Seen<'a> {
        Seen {
            status,
            defaulted: lacp.is_some_and(|p| p.rx == RxState::Defaulted),
            pagp: pagp.map(|p| (p.state, p.partner_mode)),
        }
    }

    fn up(&self) -> bool {
        self.status.mii_status.is_up()
    }

    fn name(&self) -> &str {
        &self.status.name
    }

    /// Why its LACP port carries nothing, if it does not.
    fn not_bundled(&self) -> Option<&str> {
        self.status.lacp.as_ref()?.not_bundled.as_deref()
    }
}

/// The configuration's `warnings` and the run-time problems the members'
/// and LACP's state show: links whose peer never spoke LACP, an 802.3ad
/// bond with no aggregate, offloads a driver keeps on, members that do not
/// exist.
pub fn problems(
    warnings: &[String],
    members: &[Seen<'_>],
    lacp: Option<&LacpInfo>,
    no_partner: NoPartner,
) -> Vec<String> {
    let mut problems = warnings.to_vec();
    let defaulted: Vec<&str> = members
        .iter()
        .filter(|m| m.up() && m.defaulted)
        .map(Seen::name)
        .collect();
    let carries = match no_partner {
        NoPartner::Individual => "; at most one of them carries traffic, as an individual link",
        NoPartner::Fallback => "; one of them carries traffic (fallback)",
        NoPartner::Suspend => " and carry nothing (suspended)",
    };
    let passive = lacp.is_some_and(|l| l.lacp_activity == LacpActivity::Passive);
    if !defaulted.is_empty() && passive {
        problems.push(format!(
            "802.3ad: no LACPDU ever received on {}: this bond is passive (lacp_active = false) and only answers, so the peer is passive too (Cisco 'channel-group N mode passive'), or runs no LACP. Those links are not aggregated{carries}. Make one end active: lacp_active = true here, or mode active on the peer.",
            defaulted.join(", "),
        ));
    } else if !defaulted.is_empty() {
        problems.push(format!(
            "802.3ad: no LACPDU ever received on {}: the peer does not run LACP (a static 'mode on' channel, or no channel). Those links are not aggregated{carries}. Enable LACP on the peer, or use mode balance-xor here to match a static channel.",
            defaulted.join(", "),
        ));
    }
    let no_aggregate = lacp.is_some_and(|l| l.aggregator_id.is_none());
    if no_aggregate && defaulted.is_empty() && members.iter().any(Seen::up) {
        let why: Vec<String> = members
            .iter()
            .filter_map(|m| Some(format!("{}: {}", m.name(), m.not_bundled()?)))
            .collect();
        problems.push(format!(
            "802.3ad: no aggregate with the partner; traffic is not flowing ({}). If the peer is a static channel (Cisco 'mode on'), use mode balance-xor here or enable LACP there.",
            why.join("; ")
        ));
    }
    for m in members {
        if let Some(o) =
            (m.status.offloads.as_ref()).filter(|o| o.kept_off && !o.groups().all_off())
        {
            problems.push(format!(
                "member {}: offloads = false, but its driver keeps some on ({}); a peer that reads this link in user space will see unfinished frames",
                m.name(),
                o.groups()
            ));
        }
        if m.status.mii_status == MiiStatus::Missing {
            problems.push(format!(
                "member {} does not exist; it is used as soon as it appears",
                m.name()
            ));
        }
    }
    problems
}

/// What PAgP's state shows an operator must fix: members with carrier that
/// hear no PAgP (an auto bond facing an auto or non-PAgP port, a
/// non-silent one facing a port without PAgP), and members that hear the
/// switch but stay out of the channel.
pub fn pagp_problems(members: &[Seen<'_>], s: &PagpSettings) -> Vec<String> {
    let mut problems = Vec::new();
    let ports = members
        .iter()
        .filter(|m| m.up())
        .filter_map(|m| Some((m, m.pagp?)));
    let heard = |m: &Seen<'_>| {
        m.status
            .pagp
            .as_ref()
            .is_some_and(|p| p.partner_device_id.is_some())
    };
    let silent: Vec<&str> = ports
        .clone()
        .filter(|(m, (state, _))| *state == pagp::PortState::Up && !heard(m))
        .map(|(m, _)| m.name())
        .collect();
    if !silent.is_empty() && s.mode == pagp::Mode::Auto {
        problems.push(format!(
            "PAgP: no PAgP heard on {}: pagp = \"auto\" only answers, so facing an auto port (or one without PAgP) nothing forms and those links carry nothing. Set pagp = \"desirable\" here, or channel-group N mode desirable on the switch.",
            silent.join(", ")
        ));
    } else if !silent.is_empty() && s.silence == pagp::Silence::NonSilent {
        problems.push(format!(
            "PAgP: no PAgP heard on {}: the switch port does not run PAgP (mode on, LACP, or no channel) and pagp_silent = false keeps those links out for good. Configure channel-group N mode desirable or auto on the switch.",
            silent.join(", ")
        ));
    }
    for (m, (_, partner_mode)) in ports.filter(|(_, (st, _))| *st == pagp::PortState::BiDirectional)
    {
        let partner = m
            .status
            .pagp
            .as_ref()
            .and_then(|p| p.partner_device_id.as_deref());
        let why = match (s.mode, partner_mode) {
            (pagp::Mode::Auto, Some(pagp::Mode::Auto)) => {
                "both ends are auto; set pagp = \"desirable\" here or mode desirable on the switch"
                    .to_string()
            }
            _ => format!(
                "its partner ({}) is not the channel's, or it is waiting for the partner to put it in",
                partner.unwrap_or("?")
            ),
        };
        problems.push(format!(
            "PAgP: member {} hears the switch but is not in the channel: {why}",
            m.name()
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_api::status::MemberOffloads;

    pub(crate) fn member(name: &str, mii: MiiStatus, not_bundled: Option<&str>) -> MemberStatus {
        MemberStatus {
            name: name.into(),
            mii_status: mii,
            speed_mbps: None,
            full_duplex: None,
            link_failure_count: 0,
            permanent_hw_addr: String::new(),
            queue_id: 0,
            transmitting: false,
            collecting: false,
            leaving: false,
            watchers: Vec::new(),
            isolation: None,
            offloads: None,
            lacp: not_bundled.map(|why| MemberLacp {
                aggregator_id: None,
                rx_state: "CURRENT".into(),
                mux_state: "DETACHED".into(),
                selected: "UNSELECTED".into(),
                actor_churn_state: ChurnState::None,
                partner_churn_state: ChurnState::None,
                actor_churned_count: 0,
                partner_churned_count: 0,
                actor_system_priority: 65535,
                actor_system_mac: String::new(),
                actor_port_priority: 255,
                actor_port: 1,
                actor_key: 1,
                actor_state: 0,
                partner_system_priority: 0,
                partner_mac: String::new(),
                partner_port_priority: 0,
                partner_port: 0,
                partner_key: 0,
                partner_state: 0,
                not_bundled: (!why.is_empty()).then(|| why.to_string()),
            }),
            pagp: None,
        }
    }

    fn seen(status: &MemberStatus, defaulted: bool) -> Seen<'_> {
        Seen {
            status,
            defaulted,
            pagp: None,
        }
    }

    fn lacp(aggregator: Option<u16>, activity: LacpActivity) -> LacpInfo {
        LacpInfo {
            lacp_rate: LacpRate::Slow,
            lacp_activity: activity,
            min_links: 0,
            ad_select: lagkit_api::status::AdSelect::Stable,
            system_priority: 65535,
            system_mac: String::new(),
            aggregator_id: aggregator,
            number_of_ports: 0,
            actor_key: None,
            partner_key: None,
            partner_mac: None,
            partner_priority: None,
        }
    }

    #[test]
    fn a_peer_without_lacp_is_named_with_the_fix() {
        let (a, b) = (
            member("a", MiiStatus::Up, Some("")),
            member("b", MiiStatus::Down, Some("")),
        );
        let active = lacp(None, LacpActivity::Active);
        let p = problems(
            &[],
            &[seen(&a, true), seen(&b, true)],
            Some(&active),
            NoPartner::Suspend,
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("no LACPDU ever received on a:"), "{}", p[0]);
        assert!(p[0].contains("carry nothing (suspended)"));
        let passive = lacp(None, LacpActivity::Passive);
        let p = problems(
            &[],
            &[seen(&a, true)],
            Some(&passive),
            NoPartner::Individual,
        );
        assert!(p[0].contains("this bond is passive"), "{p:?}");
    }

    #[test]
    fn no_aggregate_lists_each_members_reason() {
        let a = member("a", MiiStatus::Up, Some("partner key differs"));
        let b = member("b", MiiStatus::Up, Some(""));
        let members = [seen(&a, false), seen(&b, false)];
        let none = lacp(None, LacpActivity::Active);
        let p = problems(&["w".into()], &members, Some(&none), NoPartner::Individual);
        assert_eq!(p[0], "w", "configuration warnings first");
        assert!(
            p[1].contains(
                "no aggregate with the partner; traffic is not flowing (a: partner key differs)"
            ),
            "{}",
            p[1]
        );
        let formed = lacp(Some(1), LacpActivity::Active);
        assert!(problems(&[], &members, Some(&formed), NoPartner::Individual).is_empty());
    }

    #[test]
    fn missing_members_and_offloads_kept_on_are_reported_in_every_mode() {
        let a = member("a", MiiStatus::Up, None);
        let gone = member("gone", MiiStatus::Missing, None);
        let p = problems(
            &[],
            &[seen(&a, false), seen(&gone, false)],
            None,
            NoPartner::Individual,
        );
        assert_eq!(
            p,
            ["member gone does not exist; it is used as soon as it appears"]
        );
        let mut stuck = member("eth3", MiiStatus::Up, None);
        stuck.offloads = Some(MemberOffloads {
            tx: true,
            tso: false,
            gso: false,
            kept_off: true,
            turned_off: Vec::new(),
        });
        let p = problems(&[], &[seen(&stuck, false)], None, NoPartner::Individual);
        assert_eq!(p.len(), 1);
        assert!(p[0].starts_with("member eth3: offloads = false, but its driver keeps some on (tx on, tso off, gso off)"), "{p:?}");
    }

    #[test]
    fn pagp_silence_and_auto_auto_are_explained() {
        let settings = |mode, silence| PagpSettings {
            mode,
            silence,
            fast: false,
            max_ports: None,
        };
        let partner = |state: PagpState| MemberPagp {
            state,
            in_channel: state.in_channel(),
            partner_device_id: Some("02:00:00:00:00:09".into()),
            partner_port: Some(2),
            partner_port_name: Some("Gi1/2".into()),
            partner_device_name: Some("core".into()),
            partner_group_capability: Some(0x0001_0001),
            partner_group_ifindex: Some(7),
            partner_mode: Some("auto".into()),
            partner_learn: Some("aggregation-port".into()),
            hellos_rx: 3,
            hellos_tx: 4,
            bad_rx: 0,
        };
        let mut a = member("eth1", MiiStatus::Up, None);
        a.pagp = Some(partner(PagpState::UpPagp));
        let mut b = member("eth2", MiiStatus::Up, None);
        b.pagp = Some(MemberPagp {
            partner_device_id: None,
            ..partner(PagpState::Up)
        });
        let down = member("eth3", MiiStatus::Down, None);
        let ports = |a, b, d| {
            vec![
                Seen {
                    status: a,
                    defaulted: false,
                    pagp: Some((pagp::PortState::UpPagp, Some(pagp::Mode::Auto))),
                },
                Seen {
                    status: b,
                    defaulted: false,
                    pagp: Some((pagp::PortState::Up, None)),
                },
                Seen {
                    status: d,
                    defaulted: false,
                    pagp: Some((pagp::PortState::Down, None)),
                },
            ]
        };
        let members = ports(&a, &b, &down);
        let p = pagp_problems(&members, &settings(pagp::Mode::Auto, pagp::Silence::Silent));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("no PAgP heard on eth2:"), "{}", p[0]);
        assert!(p[0].contains("Set pagp = \"desirable\""), "{}", p[0]);
        let p = pagp_problems(
            &members,
            &settings(pagp::Mode::Desirable, pagp::Silence::NonSilent),
        );
        assert!(p[0].contains("pagp_silent = false"), "{p:?}");
        assert!(pagp_problems(
            &members,
            &settings(pagp::Mode::Desirable, pagp::Silence::Silent)
        )
        .is_empty());
        let both_auto = [Seen {
            status: &a,
            defaulted: false,
            pagp: Some((pagp::PortState::BiDirectional, Some(pagp::Mode::Auto))),
        }];
        let p = pagp_problems(
            &both_auto,
            &settings(pagp::Mode::Auto, pagp::Silence::Silent),
        );
        assert!(p[0].contains("both ends are auto"), "{p:?}");
    }
}
