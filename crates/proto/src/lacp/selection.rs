//! Selection Logic (802.1AX-2020 6.4.14).
//!
//! > The Selection Logic selects a compatible Aggregator for each Aggregation
//! > Port [...]. Aggregation Ports that are capable of aggregating with each
//! > other share the same Link Aggregation Group Identifier (LAG ID): the
//! > same Actor System and key, the same Partner System and key, and both
//! > ends Aggregatable. [...] An Individual port is attached to an
//! > Aggregator of its own.
//!
//! Beyond choosing aggregators, this is where policy that the standard
//! leaves to the system lives: how many aggregators exist, which ports of an
//! oversubscribed aggregate stand by (`max_bundle`, ranked by the port
//! priorities of the system with the better System ID, 6.7.1), and keeping
//! an aggregate down below `min_links`. Both use the standard's STANDBY
//! value of Selected, so the Mux machine keeps such ports WAITING and out of
//! sync, and the partner stops sending on them too.

use super::config::{AdSelect, NoPartner, SystemConfig};
use super::mux::{self, MuxState};
use super::port::{Port, Selected};
use super::receive::RxState;
use crate::Instant;
use lagkit_wire::SystemId;

/// Link Aggregation Group Identifier (6.3.6), from this system's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct LagId {
    pub actor_key: u16,
    pub partner_system: SystemId,
    pub partner_key: u16,
    /// Set for an Individual link: the port it belongs to alone.
    pub individual: Option<usize>,
}

/// One Aggregator and the ports that have selected it.
#[derive(Debug, Clone)]
pub(crate) struct Aggregator {
    /// The LAG this aggregator serves, while any port has it selected.
    pub lag: Option<LagId>,
    /// Ports whose Selected is SELECTED or STANDBY for this aggregator, in
    /// the order they joined.
    pub members: Vec<usize>,
    /// Ready (6.4.8).
    pub ready: bool,
}

impl Aggregator {
    pub fn new() -> Aggregator {
        Aggregator {
            lag: None,
            members: Vec::new(),
            ready: false,
        }
    }
}

/// The LAG ID a port belongs to now.
pub(crate) fn lag_id(p: &Port, idx: usize, system: SystemId) -> LagId {
    let partner = p.partner_oper;
    // A link looped back to this system (same System ID and key at both
    // ends) cannot aggregate with anything: treat it as Individual (6.4.14.1 d).
    let looped = partner.system == system && partner.key == p.actor_oper_key;
    let individual = !p.actor_state.aggregatable() || !partner.state.aggregatable() || looped;
    LagId {
        actor_key: p.actor_oper_key,
        partner_system: partner.system,
        partner_key: partner.key,
        individual: individual.then_some(idx),
    }
}

/// A port can carry traffic if it is up and its partner information is
/// current or administratively defaulted (not EXPIRED).
fn eligible(p: &Port) -> bool {
    p.port_enabled && matches!(p.rx, RxState::Current | RxState::Defaulted)
}

/// Runs the Selection Logic once over all ports; returns true if anything
/// changed.
pub(crate) fn run(
    ports: &mut [Option<Port>],
    aggs: &mut [Aggregator],
    cfg: &SystemConfig,
    now: Instant,
) -> bool {
    let system = cfg.system;
    let mut changed = false;

    // 1. Withdraw selections that no longer hold.
    for (i, slot) in ports.iter_mut().enumerate() {
        let Some(p) = slot else { continue };
        if p.selected == Selected::Unselected {
            continue;
        }
        let lag = lag_id(p, i, system);
        let still = p.port_enabled
            && p.lacp_enabled()
            && p.aggregator.and_then(|a| aggs.get(a)).and_then(|a| a.lag) == Some(lag);
        if !still {
            changed |= p.set_selected(Selected::Unselected);
        }
    }
    for (a, agg) in aggs.iter_mut().enumerate() {
        let before = agg.members.len();
        agg.members.retain(|&i| {
            ports[i]
                .as_ref()
                .is_some_and(|p| p.selected != Selected::Unselected && p.aggregator == Some(a))
        });
        changed |= agg.members.len() != before;
    }
    for p in ports.iter_mut().flatten() {
        if p.selected == Selected::Unselected && p.mux == MuxState::Detached {
            p.aggregator = None;
        }
    }
    // An aggregator with no member and no attached mux is free again.
    for (a, agg) in aggs.iter_mut().enumerate() {
        let attached = ports.iter().flatten().any(|p| p.attached == Some(a));
        if agg.members.is_empty() && !attached && agg.lag.is_some() {
            agg.lag = None;
            changed = true;
        }
    }

    // 1b. ad_select (Linux bonding, not 802.1AX): with fewer aggregators
    // than aggregates, `bandwidth` and `count` take an aggregator from an
    // aggregate that a waiting one beats; the ports of the one that lost
    // it detach and wait.
    if cfg.ad_select != AdSelect::Stable {
        changed |= reselect(ports, aggs, cfg);
    }

    // 2. Choose an aggregator for each unselected, detached port, the
    // ports of the best aggregates first (`ad_select`: most bandwidth, or
    // most ports; even `stable` chooses by bandwidth, as Linux does).
    let mut order: Vec<usize> = (0..ports.len()).collect();
    let scores = lag_scores(ports, cfg);
    order.sort_by_key(|&i| {
        let lag = ports[i].as_ref().map(|p| lag_id(p, i, system));
        let score = scores
            .iter()
            .find(|(l, _)| Some(*l) == lag)
            .map_or(0, |s| s.1);
        std::cmp::Reverse(score)
    });
    for i in order {
        let Some(p) = ports[i].as_ref() else { continue };
        let can = p.selected == Selected::Unselected
            && p.mux == MuxState::Detached
            && p.aggregator.is_none()
            && p.port_enabled
            && p.lacp_enabled()
            && matches!(
                p.rx,
                RxState::Expired | RxState::Defaulted | RxState::Current
            );
        if !can {
            continue;
        }
        let lag = lag_id(p, i, system);
        let found = aggs.iter().position(|a| a.lag == Some(lag)).or_else(|| {
            aggs.iter().enumerate().position(|(a, agg)| {
                agg.lag.is_none() && !ports.iter().flatten().any(|q| q.attached == Some(a))
            })
        });
        if let Some(a) = found {
            aggs[a].lag = Some(lag);
            aggs[a].members.push(i);
            if let Some(p) = ports[i].as_mut() {
                p.aggregator = Some(a);
                // Tentative; ranking below decides SELECTED or STANDBY.
                p.set_selected(Selected::Standby);
            }
            changed = true;
        }
    }

    // 3. Rank each aggregator's members: max_bundle and min_links.
    for agg in aggs.iter_mut() {
        let Some(lag) = agg.lag else { continue };
        // Aggregates are small (at most a few dozen ports): a stack array
        // keeps this allocation-free on every settle.
        let mut ranked = [0usize; 64];
        let mut n = 0;
        for &i in agg
            .members
            .iter()
            .filter(|&&i| ports[i].as_ref().is_some_and(eligible))
        {
            if n < ranked.len() {
                ranked[n] = i;
                n += 1;
            }
        }
        let ranked = &mut ranked[..n];
        ranked.sort_by_key(|&i| rank_key(ports[i].as_ref(), system));
        let defaulted = ranked
            .first()
            .and_then(|&i| ports[i].as_ref())
            .is_some_and(|p| p.rx == RxState::Defaulted);
        let mut limit = cfg.max_bundle.unwrap_or(usize::MAX).max(1);
        // Fallback is an explicit one-port mode for a partner without LACP;
        // min_links governs real aggregates only.
        let fallback = defaulted && cfg.no_partner == NoPartner::Fallback;
        if fallback {
            limit = 1;
        }
        let below_min = lag.individual.is_none() && !fallback && ranked.len() < cfg.min_links;
        for &i in &agg.members {
            let pos = ranked.iter().position(|&r| r == i);
            let want = match pos {
                Some(n) if n < limit && !below_min => Selected::Selected,
                _ => Selected::Standby,
            };
            if let Some(p) = ports[i].as_mut() {
                changed |= p.set_selected(want);
            }
        }
    }

    // 4. Ready: every SELECTED port waiting to attach has Ready_N.
    for agg in aggs.iter_mut() {
        let ready = agg.members.iter().all(|&i| {
            ports[i].as_ref().is_none_or(|p| {
                p.selected != Selected::Selected
                    || p.mux != MuxState::Waiting
                    || mux::ready_n(p, now)
            })
        });
        if agg.ready != ready {
            agg.ready = ready;
            changed = true;
        }
    }
    changed
}

/// A port that could carry traffic in an aggregate now.
fn candidate(p: &Port) -> bool {
    p.port_enabled && p.lacp_enabled() && matches!(p.rx, RxState::Current | RxState::Defaulted)
}

/// Each aggregate the candidate ports form, with its score under
/// `ad_select`: its ports' total speed (`stable`, `bandwidth`; unknown
/// speeds count 1 Mbit/s, so that more ports still win), or its ports
/// (`count`).
fn lag_scores(ports: &[Option<Port>], cfg: &SystemConfig) -> Vec<(LagId, u64)> {
    let mut scores: Vec<(LagId, u64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let Some(p) = p.as_ref().filter(|p| candidate(p)) else {
            continue;
        };
        let lag = lag_id(p, i, cfg.system);
        let add = match cfg.ad_select {
            AdSelect::Count => 1,
            AdSelect::Stable | AdSelect::Bandwidth => u64::from(p.cfg.speed_mbps.max(1)),
        };
        match scores.iter_mut().find(|(l, _)| *l == lag) {
            Some((_, s)) => *s += add,
            None => scores.push((lag, add)),
        }
    }
    scores
}

/// `ad_select` `bandwidth` or `count`: when no aggregator is free and an
/// aggregate that has none beats (strictly) the weakest that has one,
/// that one's ports are unselected, so their muxes detach and the
/// aggregator goes to the better aggregate. Returns true if anything
/// changed.
fn reselect(ports: &mut [Option<Port>], aggs: &mut [Aggregator], cfg: &SystemConfig) -> bool {
    let scores = lag_scores(ports, cfg);
    let score = |lag: &LagId| scores.iter().find(|(l, _)| l == lag).map_or(0, |s| s.1);
    let served: Vec<LagId> = aggs.iter().filter_map(|a| a.lag).collect();
    if aggs.iter().any(|a| a.lag.is_none()) {
        return false;
    }
    let Some(best_waiting) = scores
        .iter()
        .filter(|(l, _)| !served.contains(l))
        .map(|(_, s)| *s)
        .max()
    else {
        return false;
    };
    let Some((weakest, _)) = aggs
        .iter()
        .enumerate()
        .filter_map(|(a, agg)| Some((a, score(agg.lag.as_ref()?))))
        .min_by_key(|(_, s)| *s)
        .filter(|(_, s)| *s < best_waiting)
    else {
        return false;
    };
    let mut changed = false;
    for i in std::mem::take(&mut aggs[weakest].members) {
        if let Some(p) = ports[i].as_mut() {
            changed |= p.set_selected(Selected::Unselected);
        }
    }
    if changed {
        tracing::info!(target: "lagkit::lacp", system = %cfg.name, aggregator = weakest + 1, policy = ?cfg.ad_select, "ad_select: an aggregate with more {} takes the aggregator", if cfg.ad_select == AdSelect::Count { "ports" } else { "bandwidth" });
    }
    changed
}

/// Ranking of ports inside an aggregate (6.7.1): the port priorities and
/// numbers of whichever system has the better (lower) System ID decide,
/// so both ends pick the same active ports.
fn rank_key(p: Option<&Port>, system: SystemId) -> (u16, u16, u16, u16) {
    let Some(p) = p else {
        return (u16::MAX, u16::MAX, u16::MAX, u16::MAX);
    };
    let actor = (p.cfg.port_priority, p.cfg.port_number);
    let partner = (p.partner_oper.port_priority, p.partner_oper.port);
    if system <= p.partner_oper.system || p.rx == RxState::Defaulted {
        (actor.0, actor.1, 0, 0)
    } else {
        (partner.0, partner.1, actor.0, actor.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::port::Timer;
    use crate::lacp::testkit::{cfg, ms, peer_info, port, PEER_KEY, UP};
    use lagkit_wire::{MacAddr, PortState};

    /// Port `n` with current information from the partner's port `peer`.
    fn current(cfg: &SystemConfig, n: u16, peer: u16) -> Option<Port> {
        let mut p = port(cfg, n);
        p.rx = RxState::Current;
        p.partner_oper = peer_info(peer, UP);
        Some(p)
    }

    fn aggs(n: usize) -> Vec<Aggregator> {
        (0..n).map(|_| Aggregator::new()).collect()
    }

    fn sel(ports: &[Option<Port>]) -> Vec<(Selected, Option<usize>)> {
        ports
            .iter()
            .flatten()
            .map(|p| (p.selected, p.aggregator))
            .collect()
    }

    /// Members facing two partners, one aggregator (a host bond): ports 1
    /// and 2 face system A, ports 3, 4 and 5 system B, each port's speed
    /// `speeds[n - 1]`; ports `up` have current partner information.
    fn two_partners(cfg: &SystemConfig, speeds: [u32; 5], up: &[u16]) -> Vec<Option<Port>> {
        (1..=5u16)
            .map(|n| {
                let mut p = current(cfg, n, n + 10)?;
                p.cfg.speed_mbps = speeds[usize::from(n) - 1];
                if n >= 3 {
                    p.partner_oper.system.mac = MacAddr([2, 0, 0, 0, 3, 0]);
                }
                if !up.contains(&n) {
                    p.rx = RxState::PortDisabled;
                    p.port_enabled = false;
                }
                Some(p)
            })
            .collect()
    }

    /// The ports that have the aggregator, once what lost it has detached.
    fn holders(ports: &mut [Option<Port>], a: &mut [Aggregator], cfg: &SystemConfig) -> Vec<u16> {
        for _ in 0..4 {
            run(ports, a, cfg, ms(0));
            // The muxes of unselected ports detach (the Mux machine's part).
            for p in ports.iter_mut().flatten() {
                if p.selected == Selected::Unselected {
                    p.mux = MuxState::Detached;
                    p.attached = None;
                }
            }
        }
        (ports.iter().flatten())
            .filter(|p| p.selected == Selected::Selected)
            .map(|p| p.cfg.port_number)
            .collect()
    }

    /// Not in 802.1AX (Linux `ad_select`): with one aggregator and two
    /// partners, `stable` keeps the aggregate that has it, `count` moves it
    /// to the one with more ports, `bandwidth` to the one with more speed.
    #[test]
    fn sel_ad_select_moves_the_aggregator_to_the_better_aggregate() {
        let gig = [1000; 5];
        for (policy, speeds, want) in [
            (AdSelect::Stable, gig, vec![1, 2]),
            (AdSelect::Count, gig, vec![3, 4, 5]),
            // Two 10G ports beat three 1G ones on bandwidth, not on count.
            (
                AdSelect::Bandwidth,
                [10_000, 10_000, 1000, 1000, 1000],
                vec![1, 2],
            ),
            (
                AdSelect::Count,
                [10_000, 10_000, 1000, 1000, 1000],
                vec![3, 4, 5],
            ),
            (AdSelect::Bandwidth, gig, vec![3, 4, 5]),
        ] {
            let mut cfg = cfg();
            cfg.aggregators = 1;
            cfg.ad_select = policy;
            // A's two ports come first and take the only aggregator.
            let mut ports = two_partners(&cfg, speeds, &[1, 2]);
            let mut a = aggs(1);
            assert_eq!(holders(&mut ports, &mut a, &cfg), [1, 2], "{policy:?}");
            // B's three ports come up.
            for p in ports
                .iter_mut()
                .flatten()
                .filter(|p| p.cfg.port_number >= 3)
            {
                p.port_enabled = true;
                p.rx = RxState::Current;
            }
            assert_eq!(
                holders(&mut ports, &mut a, &cfg),
                want,
                "{policy:?} {speeds:?}"
            );
            // Nothing changed: it stays (no flapping between equals).
            assert_eq!(
                holders(&mut ports, &mut a, &cfg),
                want,
                "{policy:?} settles"
            );
        }
        // With both present from the start, even stable picks the aggregate
        // with the most bandwidth, as Linux does.
        let mut cfg = cfg();
        cfg.aggregators = 1;
        let mut ports = two_partners(&cfg, [1000; 5], &[1, 2, 3, 4, 5]);
        let mut a = aggs(1);
        assert_eq!(holders(&mut ports, &mut a, &cfg), [3, 4, 5]);
    }

    /// 802.1AX-2020 6.4.14.1: ports with the same LAG ID (actor key,
    /// partner system and key, both aggregatable) select the same
    /// Aggregator; with no limit both are SELECTED.
    #[test]
    fn sel_6_4_14_same_lag_id_shares_an_aggregator() {
        let cfg = cfg();
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        let mut a = aggs(2);
        assert!(run(&mut ports, &mut a, &cfg, ms(0)));
        assert_eq!(
            sel(&ports),
            [(Selected::Selected, Some(0)), (Selected::Selected, Some(0))]
        );
        let lag = a[0].lag.unwrap();
        assert_eq!((lag.actor_key, lag.partner_key), (1, PEER_KEY));
        assert_eq!(lag.individual, None);
        assert_eq!(a[0].members, [0, 1]);
        assert!(a[1].lag.is_none());
        // A second run with nothing changed changes nothing.
        assert!(!run(&mut ports, &mut a, &cfg, ms(0)));
    }

    /// 6.4.14.1: a different actor key, partner key or partner system is a
    /// different LAG ID, hence a different Aggregator.
    #[test]
    fn sel_6_4_14_different_lag_id_gets_its_own_aggregator() {
        let cfg = cfg();
        let changes: [fn(&mut Port); 3] = [
            |p| p.actor_oper_key = 2,
            |p| p.partner_oper.key = PEER_KEY + 1,
            |p| p.partner_oper.system.mac = MacAddr([2, 0, 0, 0, 3, 0]),
        ];
        for change in changes {
            let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
            change(ports[1].as_mut().unwrap());
            let mut a = aggs(2);
            run(&mut ports, &mut a, &cfg, ms(0));
            assert_eq!(
                sel(&ports),
                [(Selected::Selected, Some(0)), (Selected::Selected, Some(1))]
            );
        }
    }

    /// 6.4.14.1: an Individual link (either end's Aggregation bit FALSE, or
    /// a link looped back to this system) is alone on its Aggregator.
    #[test]
    fn sel_6_4_14_individual_and_looped_links_are_alone() {
        let cfg = cfg();
        let changes: [fn(&mut Port); 3] = [
            |p| p.partner_oper.state.set(PortState::AGGREGATION, false),
            |p| p.actor_state.set(PortState::AGGREGATION, false),
            |_| {},
        ];
        for (k, change) in changes.into_iter().enumerate() {
            let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
            for p in ports.iter_mut().flatten() {
                change(p);
                if k == 2 {
                    // Looped back: the partner is this system, same key.
                    p.partner_oper.system = cfg.system;
                    p.partner_oper.key = p.actor_oper_key;
                }
            }
            let mut a = aggs(2);
            run(&mut ports, &mut a, &cfg, ms(0));
            assert_eq!(
                sel(&ports),
                [(Selected::Selected, Some(0)), (Selected::Selected, Some(1))],
                "case {k}"
            );
            assert_eq!(a[0].lag.unwrap().individual, Some(0));
            assert_eq!(a[1].lag.unwrap().individual, Some(1));
        }
    }

    /// 6.4.14.1: with no free Aggregator a port stays UNSELECTED.
    #[test]
    fn sel_6_4_14_no_free_aggregator_leaves_a_port_unselected() {
        let cfg = cfg();
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        ports[1].as_mut().unwrap().partner_oper.key = 99;
        let mut a = aggs(1);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(
            sel(&ports),
            [(Selected::Selected, Some(0)), (Selected::Unselected, None)]
        );
    }

    /// 6.4.14 / 6.4.9: a port whose LAG ID changed (new partner key) is
    /// UNSELECTED; once its mux is DETACHED it selects again, here on the
    /// Aggregator its old LAG freed.
    #[test]
    fn sel_6_4_14_changed_partner_withdraws_then_reselects() {
        let cfg = cfg();
        let mut ports = vec![current(&cfg, 1, 7)];
        let mut a = aggs(1);
        run(&mut ports, &mut a, &cfg, ms(0));
        let p = ports[0].as_mut().unwrap();
        p.mux = MuxState::Attached;
        p.attached = Some(0);
        p.partner_oper.key = 42;
        assert!(run(&mut ports, &mut a, &cfg, ms(0)));
        assert_eq!(sel(&ports), [(Selected::Unselected, Some(0))]);
        assert!(a[0].members.is_empty());
        assert!(a[0].lag.is_some(), "held while the mux is attached");
        let p = ports[0].as_mut().unwrap();
        p.mux = MuxState::Detached;
        p.attached = None;
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(sel(&ports), [(Selected::Selected, Some(0))]);
        assert_eq!(a[0].lag.unwrap().partner_key, 42);
    }

    /// 6.4.14.1 / 6.7.1 with `max_bundle` (Cisco `lacp max-bundle`): the
    /// ports ranked first by the better System ID's port priority are
    /// SELECTED, the rest STANDBY. This system (02:..:01:00) is better than
    /// the partner (02:..:02:00), so its own port priorities decide.
    #[test]
    fn sel_6_7_1_max_bundle_ranks_by_the_better_systems_port_priority() {
        let mut cfg = cfg();
        cfg.max_bundle = Some(1);
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        ports[1].as_mut().unwrap().cfg.port_priority = 100;
        let mut a = aggs(2);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(
            sel(&ports),
            [(Selected::Standby, Some(0)), (Selected::Selected, Some(0))]
        );
        // A partner with a better System ID: its priorities decide, and it
        // prefers its port 7, which is on our port 1.
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        ports[1].as_mut().unwrap().cfg.port_priority = 100;
        for p in ports.iter_mut().flatten() {
            p.partner_oper.system.priority = 1;
        }
        ports[1].as_mut().unwrap().partner_oper.port_priority = 40_000;
        let mut a = aggs(2);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(
            sel(&ports),
            [(Selected::Selected, Some(0)), (Selected::Standby, Some(0))]
        );
    }

    /// Not in 802.1AX (`min_links`): an aggregate with fewer eligible ports
    /// keeps them all STANDBY; an Individual link is exempt.
    #[test]
    fn sel_min_links_keeps_a_short_aggregate_in_standby() {
        let mut cfg = cfg();
        cfg.min_links = 3;
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        let mut a = aggs(2);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(
            sel(&ports),
            [(Selected::Standby, Some(0)), (Selected::Standby, Some(0))]
        );
        let mut ports = vec![current(&cfg, 1, 7)];
        ports[0]
            .as_mut()
            .unwrap()
            .partner_oper
            .state
            .set(PortState::AGGREGATION, false);
        run(&mut ports, &mut aggs(1), &cfg, ms(0));
        assert_eq!(sel(&ports), [(Selected::Selected, Some(0))]);
    }

    /// Not in 802.1AX (`NoPartner::Fallback`, Open vSwitch
    /// `lacp-fallback-ab`): defaulted ports aggregate, one SELECTED.
    #[test]
    fn sel_fallback_selects_one_defaulted_port() {
        let mut cfg = cfg();
        cfg.no_partner = NoPartner::Fallback;
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        for p in ports.iter_mut().flatten() {
            p.rx = RxState::Defaulted;
            p.record_default();
        }
        let mut a = aggs(2);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(
            sel(&ports),
            [(Selected::Selected, Some(0)), (Selected::Standby, Some(0))]
        );
    }

    /// 6.4.14.1 g) / 6.4.8 Ready: TRUE once every SELECTED port waiting to
    /// attach to the Aggregator has Ready_N (its wait_while_timer expired).
    #[test]
    fn sel_6_4_8_ready_when_all_waiting_ports_have_ready_n() {
        let cfg = cfg();
        let mut ports = vec![current(&cfg, 1, 7), current(&cfg, 2, 8)];
        let mut a = aggs(2);
        run(&mut ports, &mut a, &cfg, ms(0));
        // Both WAITING, the second started its wait 1 s later.
        for (p, at) in ports.iter_mut().flatten().zip([0, 1000]) {
            p.mux = MuxState::Waiting;
            p.start(Timer::WaitWhile, ms(at), cfg.timers.aggregate_wait);
        }
        run(&mut ports, &mut a, &cfg, ms(2500));
        assert!(!a[0].ready, "the second port waits until 3 s");
        assert!(run(&mut ports, &mut a, &cfg, ms(3000)));
        assert!(a[0].ready);
    }

    /// An EXPIRED port may select an Aggregator but, its partner
    /// information being stale, is ranked out: STANDBY until CURRENT.
    #[test]
    fn sel_expired_port_waits_in_standby() {
        let cfg = cfg();
        let mut ports = vec![current(&cfg, 1, 7)];
        ports[0].as_mut().unwrap().rx = RxState::Expired;
        let mut a = aggs(1);
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(sel(&ports), [(Selected::Standby, Some(0))]);
        ports[0].as_mut().unwrap().rx = RxState::Current;
        run(&mut ports, &mut a, &cfg, ms(0));
        assert_eq!(sel(&ports), [(Selected::Selected, Some(0))]);
    }
}
