//! Deterministic two-system simulations of the LACP core.
//!
//! Every test states the outcome and the virtual-time bound the standard
//! implies (802.1AX-2020 6.4.4 timers: Fast_Periodic 1 s, Slow_Periodic 30 s,
//! Short_Timeout 3 s, Long_Timeout 90 s, Churn_Detection 60 s,
//! Aggregate_Wait 2 s). Links have a 100 µs one-way delay.

use lagkit_proto::lacp::*;
use lagkit_proto::Instant;
use lagkit_sim::*;
use lagkit_wire::{MacAddr, SlowPdu, SystemId};
use std::time::Duration;

const DELAY: Duration = Duration::from_micros(100);

fn secs(s: f64) -> Instant {
    Instant::from_nanos((s * 1e9) as u64)
}

fn sys(name: &str, n: u8) -> SystemConfig {
    SystemConfig::new(name, mac(n, 0))
}

fn port(sys: u8, activity: Activity, rate: Rate) -> impl FnMut(u16) -> PortConfig {
    move |n| {
        let mut c = PortConfig::new(&format!("p{n}"), n, mac(sys, n));
        c.activity = activity;
        c.rate = rate;
        c
    }
}

fn pair(a: (Activity, Rate), b: (Activity, Rate), links: usize) -> Sim {
    Sim::pair(
        sys("A", 1),
        sys("B", 2),
        links,
        LinkSpec {
            delay: DELAY,
            loss: 0.0,
        },
        port(1, a.0, a.1),
        port(2, b.0, b.1),
        7,
    )
}

fn status(sim: &Sim, s: usize, p: usize) -> PortStatus {
    sim.system(s).port_status(PortId(p)).expect("port exists")
}

/// Ports of system `s` distributing in an aggregate (not individual).
fn bundled(sim: &Sim, s: usize) -> usize {
    sim.system(s)
        .aggregators()
        .iter()
        .filter(|a| !a.individual)
        .map(|a| a.distributing.len())
        .sum()
}

fn all_bundled(sim: &Sim, links: usize) -> bool {
    bundled(sim, 0) == links && bundled(sim, 1) == links && one_aggregate(sim, 0)
}

fn one_aggregate(sim: &Sim, s: usize) -> bool {
    sim.system(s)
        .aggregators()
        .iter()
        .filter(|a| !a.distributing.is_empty())
        .count()
        == 1
}

/// Times at which a port of system `s` stopped distributing (a change
/// from distributing to not distributing).
fn stops(sim: &Sim, s: usize, port: usize) -> Vec<Instant> {
    let mut was = false;
    let mut out = Vec::new();
    for e in sim.timeline().iter().filter(|e| e.system == s) {
        if let Event::Distribution {
            port: PortId(p),
            distributing,
            ..
        } = e.event
        {
            if p == port {
                if was && !distributing {
                    out.push(e.at);
                }
                was = distributing;
            }
        }
    }
    out
}

fn first_transition(sim: &Sim, s: usize, port: usize, to: &str) -> Option<Instant> {
    sim.timeline().iter().find_map(|e| match &e.event {
        Event::Transition {
            port: PortId(p),
            to: t,
            ..
        } if e.system == s && *p == port && *t == to => Some(e.at),
        _ => None,
    })
}

fn transitions_after(sim: &Sim, after: Instant) -> Vec<String> {
    sim.timeline()
        .iter()
        .filter(|e| e.at > after)
        .filter_map(|e| match &e.event {
            Event::Transition { line, .. } => Some(format!("{} {}", e.at, line)),
            _ => None,
        })
        .collect()
}

// Formation needs the first PDU each way (sent when the link comes up, or
// when the passive side hears the active one), then Aggregate_Wait_Time in
// WAITING, then one more PDU each way carrying Synchronization. Bound:
// Aggregate_Wait_Time + 4 link delays + slack of 10 ms.
const FORM_BOUND: f64 = 2.0 + 0.0004 + 0.010;

#[test]
fn active_active_forms_within_aggregate_wait_time() {
    for links in [1, 2, 4, 8] {
        let mut sim = pair(
            (Activity::Active, Rate::Fast),
            (Activity::Active, Rate::Fast),
            links,
        );
        let t = sim
            .run_until_cond(secs(60.0), |s| all_bundled(s, links))
            .expect("active/active forms");
        assert!(t <= secs(FORM_BOUND), "{links} links formed at {t}");
        assert!(
            t >= secs(2.0),
            "cannot form before Aggregate_Wait_Time: {t}"
        );
        for p in 0..links {
            let st = status(&sim, 0, p);
            assert_eq!(st.actor.state.0, 0x3f, "healthy fast active port");
            assert!(st.collecting && st.distributing);
        }
    }
}

#[test]
fn active_passive_forms_both_ways_and_rates() {
    for (a, b) in [
        (
            (Activity::Active, Rate::Fast),
            (Activity::Passive, Rate::Slow),
        ),
        (
            (Activity::Passive, Rate::Slow),
            (Activity::Active, Rate::Fast),
        ),
        (
            (Activity::Active, Rate::Slow),
            (Activity::Passive, Rate::Slow),
        ),
        (
            (Activity::Passive, Rate::Fast),
            (Activity::Active, Rate::Slow),
        ),
    ] {
        let mut sim = pair(a, b, 4);
        let t = sim
            .run_until_cond(secs(60.0), |s| all_bundled(s, 4))
            .unwrap_or_else(|| panic!("{a:?}/{b:?} must form"));
        assert!(t <= secs(FORM_BOUND), "{a:?}/{b:?} formed at {t}");
        // Stays formed for a day of virtual time.
        sim.run_until(secs(86_400.0));
        assert!(all_bundled(&sim, 4), "{a:?}/{b:?} fell apart");
        assert!(transitions_after(&sim, secs(60.0)).is_empty());
    }
}

#[test]
fn passive_passive_never_forms_and_stays_silent() {
    let mut sim = pair(
        (Activity::Passive, Rate::Fast),
        (Activity::Passive, Rate::Fast),
        4,
    );
    sim.enable_capture();
    sim.run_until(secs(86_400.0));
    assert_eq!(bundled(&sim, 0), 0);
    assert_eq!(bundled(&sim, 1), 0);
    assert!(
        sim.captured().is_empty(),
        "a passive port never speaks first"
    );
    for p in 0..4 {
        let st = status(&sim, 0, p);
        assert_eq!(st.rx, RxState::Defaulted);
        assert_eq!(st.periodic, PeriodicState::NoPeriodic);
        assert_eq!(st.counters.lacpdu_tx, 0);
        assert_eq!(
            st.not_bundled_reason().as_deref(),
            Some("partner never spoke LACP (defaulted)")
        );
    }
}

#[test]
fn periodic_rates_follow_the_partner_timeout() {
    // A asks for fast (short timeout), B for slow: B must send every 1 s,
    // A every 30 s once formed.
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Slow),
        1,
    );
    sim.run_until(secs(10.0));
    sim.enable_capture();
    sim.run_until(secs(310.0));
    let from = |s: usize| sim.captured().iter().filter(|c| c.from.system == s).count();
    // Periodic PDUs lead by periodic_lead_percent (10%): 300 s / 0.9 s and
    // 300 s / 27 s.
    assert!((332..=334).contains(&from(1)), "B sent {}", from(1));
    assert!((10..=12).contains(&from(0)), "A sent {}", from(0));
}

#[test]
fn silent_partner_expires_then_defaults_short_timeout() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        2,
    );
    sim.run_until(secs(10.0));
    assert!(all_bundled(&sim, 2));
    // Link 0 keeps carrier but loses every frame from t = 10 s.
    sim.schedule(secs(10.0), 0, Fault::Blackhole);
    sim.run_until(secs(30.0));
    // The last PDU arrived at most Fast_Periodic_Time before the fault, so
    // EXPIRED comes between 2 and 3 s after it (Short_Timeout_Time after the
    // last PDU), and DEFAULTED Short_Timeout_Time later.
    let expired = first_transition(&sim, 0, 0, "EXPIRED").expect("expired");
    let expired = sim
        .timeline()
        .iter()
        .filter(|e| e.system == 0 && e.at > secs(10.0))
        .find_map(|e| match &e.event {
            Event::Transition {
                port: PortId(0),
                to: "EXPIRED",
                ..
            } => Some(e.at),
            _ => None,
        })
        .unwrap_or(expired);
    assert!(
        expired > secs(12.0) && expired <= secs(13.0 + 0.001),
        "{expired}"
    );
    let defaulted = first_transition(&sim, 0, 0, "DEFAULTED").expect("defaulted");
    assert_eq!(
        defaulted.saturating_duration_since(expired),
        Duration::from_secs(3)
    );
    // The port left distribution when the partner expired; the other stays.
    let s = stops(&sim, 0, 0);
    assert_eq!(s.first().copied(), Some(expired));
    assert!(status(&sim, 0, 1).distributing);
    let st = status(&sim, 0, 0);
    assert_eq!(st.counters.expired, 2, "once at start, once now");
    assert!(st.counters.defaulted >= 1);
}

#[test]
fn silent_partner_expires_long_timeout() {
    let mut sim = pair(
        (Activity::Active, Rate::Slow),
        (Activity::Active, Rate::Slow),
        1,
    );
    sim.run_until(secs(100.0));
    assert!(all_bundled(&sim, 1));
    sim.schedule(secs(100.0), 0, Fault::Blackhole);
    sim.run_until(secs(400.0));
    let expired = sim
        .timeline()
        .iter()
        .find_map(|e| match &e.event {
            Event::Transition {
                port: PortId(0),
                to: "EXPIRED",
                ..
            } if e.system == 0 && e.at > secs(100.0) => Some(e.at),
            _ => None,
        })
        .expect("expires");
    // PDUs came every Slow_Periodic_Time (30 s); expiry is Long_Timeout_Time
    // (90 s) after the last one: between 60 and 90 s after the fault.
    assert!(
        expired > secs(160.0) && expired <= secs(190.001),
        "{expired}"
    );
}

#[test]
fn cut_link_leaves_distribution_immediately_and_rejoins() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        4,
    );
    sim.schedule(secs(30.0), 1, Fault::Cut);
    sim.schedule(secs(40.0), 1, Fault::Restore);
    sim.run_until(secs(35.0));
    // Carrier loss is port_enabled = FALSE: out at the same instant, both ends.
    assert_eq!(stops(&sim, 0, 1), vec![secs(30.0)]);
    assert_eq!(stops(&sim, 1, 1), vec![secs(30.0)]);
    assert_eq!(bundled(&sim, 0), 3);
    assert!(!sim.system(0).port_status(PortId(1)).unwrap().enabled);
    let back = sim
        .run_until_cond(secs(60.0), |s| all_bundled(s, 4))
        .expect("rejoins");
    assert!(back <= secs(40.0 + FORM_BOUND), "rejoined at {back}");
    // The other ports never flapped.
    for p in [0, 2, 3] {
        assert!(stops(&sim, 0, p).is_empty());
    }
}

#[test]
fn blackholed_link_leaves_by_timeout_and_rejoins() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        2,
    );
    sim.schedule(secs(20.0), 0, Fault::Blackhole);
    sim.schedule(secs(40.0), 0, Fault::Clear);
    sim.run_until(secs(39.0));
    let s = stops(&sim, 0, 0);
    assert_eq!(s.len(), 1);
    assert!(
        s[0] > secs(20.0) && s[0] <= secs(23.001),
        "left at {}",
        s[0]
    );
    // Within one Fast_Periodic_Time after the fault clears, PDUs flow again;
    // then Aggregate_Wait_Time.
    let back = sim
        .run_until_cond(secs(60.0), |s| all_bundled(s, 2))
        .expect("rejoins");
    assert!(back <= secs(40.0 + 1.0 + FORM_BOUND), "rejoined at {back}");
}

#[test]
fn different_keys_land_in_different_aggregators() {
    // Ports 1-2 key 10, ports 3-4 key 20, at both ends.
    let key = |n: u16| if n <= 2 { 10 } else { 20 };
    let mut sim = Sim::pair(
        sys("A", 1),
        sys("B", 2),
        4,
        LinkSpec::default(),
        move |n| PortConfig {
            key: key(n),
            ..PortConfig::new(&format!("p{n}"), n, mac(1, n))
        },
        move |n| PortConfig {
            key: key(n),
            ..PortConfig::new(&format!("p{n}"), n, mac(2, n))
        },
        1,
    );
    sim.run_until(secs(10.0));
    for s in 0..2 {
        let aggs = sim.system(s).aggregators();
        let used: Vec<_> = aggs.iter().filter(|a| !a.distributing.is_empty()).collect();
        assert_eq!(used.len(), 2, "two aggregates");
        for a in used {
            assert_eq!(a.distributing.len(), 2);
            let keys: Vec<u16> = a
                .distributing
                .iter()
                .map(|p| status(&sim, s, p.0).actor.key)
                .collect();
            assert_eq!(keys[0], keys[1]);
        }
    }
}

/// A has 4 ports: 1-2 to system B, 3-4 to system C.
fn two_partners(aggregators: usize) -> Sim {
    let mut sim = Sim::new(3);
    let mut a_cfg = sys("A", 1);
    a_cfg.aggregators = aggregators;
    let a = sim.add_system(a_cfg);
    let b = sim.add_system(sys("B", 2));
    let c = sim.add_system(sys("C", 3));
    for n in 1..=4u16 {
        let pa = sim.add_port(a, PortConfig::new(&format!("p{n}"), n, mac(1, n)));
        let (other, s) = if n <= 2 { (b, 2) } else { (c, 3) };
        let po = sim.add_port(other, PortConfig::new(&format!("p{n}"), n, mac(s, n)));
        sim.connect(
            End {
                system: a,
                port: pa,
            },
            End {
                system: other,
                port: po,
            },
            LinkSpec::default(),
        );
    }
    sim
}

#[test]
fn two_partner_systems_land_in_different_aggregators() {
    let mut sim = two_partners(0);
    sim.run_until(secs(10.0));
    let aggs = sim.system(0).aggregators();
    let used: Vec<_> = aggs.iter().filter(|a| !a.distributing.is_empty()).collect();
    assert_eq!(used.len(), 2);
    let partners: Vec<_> = used.iter().map(|a| a.partner_system.unwrap()).collect();
    assert_ne!(partners[0], partners[1]);
    assert!(used.iter().all(|a| a.distributing.len() == 2));
}

#[test]
fn single_aggregator_selects_one_group_and_the_other_churns() {
    let mut sim = two_partners(1);
    sim.run_until(secs(120.0));
    let aggs = sim.system(0).aggregators();
    assert_eq!(aggs.len(), 1);
    assert_eq!(aggs[0].distributing.len(), 2);
    let winner = aggs[0].partner_system.unwrap();
    assert_eq!(winner, SystemId::new(32768, mac(2, 0)), "first come");
    for p in [2, 3] {
        let st = status(&sim, 0, p);
        assert_eq!(st.selected, Selected::Unselected);
        assert!(!st.distributing);
        assert_eq!(
            st.not_bundled_reason().as_deref(),
            Some("no aggregator available for this partner/key")
        );
        // Churn_Detection_Time after the port came up at 0 s without ever
        // reaching sync.
        assert_eq!(st.actor_churn, ChurnState::Churn);
        assert_eq!(
            first_transition(&sim, 0, p, "ACTOR_CHURN"),
            Some(secs(60.0))
        );
        assert_eq!(st.counters.actor_churn, 1);
        // C's ports see A never in sync: partner churn on C at 60 s as well.
        let c = status(&sim, 2, p - 2);
        assert_eq!(c.partner_churn, ChurnState::Churn);
    }
    // The group that lost can take over once the winner goes away.
    sim.schedule(secs(120.0), 0, Fault::Cut);
    sim.schedule(secs(120.0), 1, Fault::Cut);
    sim.run_until(secs(130.0));
    let aggs = sim.system(0).aggregators();
    assert_eq!(aggs.len(), 1);
    assert_eq!(
        aggs[0].partner_system,
        Some(SystemId::new(32768, mac(3, 0)))
    );
    assert_eq!(aggs[0].distributing.len(), 2);
    assert_eq!(status(&sim, 0, 2).actor_churn, ChurnState::NoChurn);
}

fn bundle_sim(max_bundle: Option<usize>, min_links: usize, links: usize) -> Sim {
    let mut a = sys("A", 1);
    a.max_bundle = max_bundle;
    a.min_links = min_links;
    let mut b = sys("B", 2);
    b.max_bundle = max_bundle;
    b.min_links = min_links;
    Sim::pair(
        a,
        b,
        links,
        LinkSpec::default(),
        port(1, Activity::Active, Rate::Fast),
        port(2, Activity::Active, Rate::Fast),
        5,
    )
}

#[test]
fn max_bundle_keeps_extra_ports_in_standby_and_promotes_on_failure() {
    let mut sim = bundle_sim(Some(2), 0, 4);
    sim.run_until(secs(10.0));
    for s in 0..2 {
        assert_eq!(bundled(&sim, s), 2);
        // Lowest port numbers win (equal priorities): ports 1 and 2.
        assert!(status(&sim, s, 0).distributing && status(&sim, s, 1).distributing);
        for p in [2, 3] {
            let st = status(&sim, s, p);
            assert_eq!(st.selected, Selected::Standby);
            assert_eq!(st.mux, MuxState::Waiting);
            assert!(!st.actor.state.in_sync());
        }
    }
    sim.schedule(secs(10.0), 0, Fault::Cut);
    let t = sim
        .run_until_cond(secs(30.0), |s| {
            s.system(0).port_status(PortId(2)).unwrap().distributing
                && s.system(1).port_status(PortId(2)).unwrap().distributing
        })
        .expect("standby promoted");
    // The standby port has already waited; it attaches as soon as it is
    // SELECTED (Ready holds), then one PDU exchange.
    assert!(t <= secs(10.0 + FORM_BOUND), "promoted at {t}");
    assert_eq!(bundled(&sim, 0), 2);
    assert_eq!(status(&sim, 0, 3).selected, Selected::Standby);
    check_invariants(sim.system(0)).unwrap();
    check_invariants(sim.system(1)).unwrap();
}

#[test]
fn min_links_takes_the_aggregate_down_and_back_up() {
    let mut sim = bundle_sim(None, 3, 4);
    sim.run_until(secs(10.0));
    assert!(all_bundled(&sim, 4));
    sim.schedule(secs(10.0), 0, Fault::Cut);
    sim.run_until(secs(15.0));
    assert_eq!(bundled(&sim, 0), 3, "3 links still meet min_links 3");
    sim.schedule(secs(15.0), 1, Fault::Cut);
    sim.run_until(secs(15.001));
    assert_eq!(
        bundled(&sim, 0),
        0,
        "below min_links: aggregate down at once"
    );
    assert_eq!(bundled(&sim, 1), 0);
    let agg = &sim.system(0).aggregators()[0];
    assert!(!agg.up);
    check_invariants(sim.system(0)).unwrap();
    assert_eq!(status(&sim, 0, 2).selected, Selected::Standby);
    sim.schedule(secs(20.0), 1, Fault::Restore);
    let t = sim
        .run_until_cond(secs(40.0), |s| bundled(s, 0) == 3 && bundled(s, 1) == 3)
        .expect("back up");
    // A port sends once its partner's LACPDU says it collects; after the
    // burst of LACPDUs a re-forming link sends, that one may wait out
    // LACP's limit of 3 a second.
    assert!(t <= secs(20.0 + FORM_BOUND + 1.0), "up again at {t}");
}

#[test]
fn one_or_two_lost_pdus_never_flap_a_fast_aggregate() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        2,
    );
    sim.run_until(secs(10.0));
    for (i, n) in [1u32, 2, 1, 2, 2].iter().enumerate() {
        let at = secs(10.0 + 10.0 * i as f64 + 0.5);
        sim.schedule(at, 0, Fault::DropNextFromA(*n));
        sim.schedule(at, 1, Fault::DropNextFromB(*n));
    }
    sim.run_until(secs(120.0));
    let (_, lost) = sim.link_counts(0);
    assert_eq!(lost[0], 8);
    for s in 0..2 {
        for p in 0..2 {
            assert!(stops(&sim, s, p).is_empty(), "system {s} port {p} flapped");
        }
    }
    // Three in a row do expire the partner (3 s of silence at 1 PDU/s).
    sim.schedule(secs(120.5), 0, Fault::DropNextFromB(3));
    sim.run_until(secs(130.0));
    assert_eq!(stops(&sim, 0, 0).len(), 1);
}

#[test]
fn random_loss_is_reproducible() {
    let run = || {
        let mut sim = Sim::pair(
            sys("A", 1),
            sys("B", 2),
            2,
            LinkSpec {
                delay: DELAY,
                loss: 0.3,
            },
            port(1, Activity::Active, Rate::Fast),
            port(2, Activity::Active, Rate::Fast),
            42,
        );
        for t in 1..=600 {
            sim.run_until(secs(f64::from(t)));
            check_invariants(sim.system(0)).unwrap();
            check_invariants(sim.system(1)).unwrap();
        }
        sim.timeline().to_vec()
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.len() > 10);
}

#[test]
fn peer_with_a_new_system_id_reforms_the_aggregate() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        2,
    );
    sim.run_until(secs(10.0));
    let new_id = SystemId::new(100, MacAddr([0x02, 0xaa, 0, 0, 0, 1]));
    sim.update(1, |s, now| s.set_system_id(new_id, now));
    // The new ID reaches A at once (NTT); A re-selects, waits again.
    let t = sim
        .run_until_cond(secs(30.0), |s| {
            all_bundled(s, 2) && status(s, 0, 0).partner.system == new_id
        })
        .expect("re-forms");
    assert!(t <= secs(10.0 + FORM_BOUND), "re-formed at {t}");
    assert!(
        !stops(&sim, 0, 0).is_empty(),
        "it did leave the old aggregate"
    );
    assert_eq!(sim.system(0).aggregators()[0].partner_system, Some(new_id));
}

#[test]
fn marker_request_gets_a_marker_response() {
    use lagkit_wire::{MarkerKind, MarkerRepr};
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        1,
    );
    sim.run_until(secs(5.0));
    sim.enable_capture();
    let req = MarkerRepr {
        kind: MarkerKind::Information,
        requester_port: 1,
        requester_system: mac(2, 0),
        transaction_id: 0x0102_0304,
    };
    let frame = SlowPdu::Marker(req).emit_frame(mac(2, 1));
    sim.inject(0, PortId(0), &frame);
    sim.run_until(secs(5.1));
    let resp: Vec<_> = sim
        .captured()
        .iter()
        .filter_map(|c| match SlowPdu::parse(&c.frame) {
            Ok(SlowPdu::Marker(m)) => Some((c.from, c.frame.clone(), m)),
            _ => None,
        })
        .collect();
    assert_eq!(resp.len(), 1);
    let (from, bytes, m) = &resp[0];
    assert_eq!(from.system, 0);
    assert_eq!(*m, req.response());
    assert_eq!(&bytes[6..12], &mac(1, 1).0, "sent from the port's own MAC");
    assert_eq!(status(&sim, 0, 0).counters.marker_rx, 1);
    assert_eq!(status(&sim, 0, 0).counters.marker_response_tx, 1);
    assert_eq!(status(&sim, 1, 0).counters.marker_response_rx, 1);
}

/// A valid LACPDU frame as B's port 1 would send it once formed.
fn valid_frame(sim: &mut Sim) -> Vec<u8> {
    sim.enable_capture();
    sim.run_for(Duration::from_secs(2));
    sim.captured()
        .iter()
        .rev()
        .find(|c| c.from.system == 1 && c.from.port == PortId(0))
        .map(|c| c.frame.clone())
        .expect("B sends")
}

#[test]
fn every_malformed_pdu_shape_is_counted_and_ignored() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        1,
    );
    sim.run_until(secs(10.0));
    let good = valid_frame(&mut sim);
    assert_eq!(good.len(), 124);
    let mut bad: Vec<Vec<u8>> = Vec::new();
    // Every truncation: 0..124 octets (14 + 110 needed).
    for n in 0..good.len() {
        bad.push(good[..n].to_vec());
    }
    // Bad TLV types and lengths of Actor, Partner, Collector, Terminator.
    for (at, v) in [
        (16, 0u8),
        (17, 19),
        (17, 0),
        (36, 1),
        (37, 21),
        (56, 4),
        (57, 17),
        (73, 1),
        (72, 5),
    ] {
        let mut f = good.clone();
        f[at] = v;
        bad.push(f);
    }
    // Wrong subtypes (OAM = 3, ESMC = 10, 0) and version 0.
    for sub in [0u8, 3, 10, 0xff] {
        let mut f = good.clone();
        f[14] = sub;
        bad.push(f);
    }
    let mut f = good.clone();
    f[15] = 0;
    bad.push(f);
    let before = status(&sim, 0, 0);
    for f in &bad {
        sim.inject(0, PortId(0), f);
    }
    let after = status(&sim, 0, 0);
    assert_eq!(
        after.counters.bad_rx - before.counters.bad_rx,
        bad.len() as u64
    );
    assert_eq!(after.counters.unknown_rx - before.counters.unknown_rx, 4);
    assert_eq!(after.counters.lacpdu_rx, before.counters.lacpdu_rx);
    assert_eq!(after.partner, before.partner, "nothing recorded");
    sim.run_for(Duration::from_secs(5));
    assert!(all_bundled(&sim, 1));
    assert!(stops(&sim, 0, 0).is_empty());
}

#[test]
fn transmit_rate_limit_three_per_fast_periodic_time() {
    // Flood a port with PDUs whose partner info keeps changing, so every
    // one sets NTT; the port may still send only 3 per second.
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        1,
    );
    sim.run_until(secs(10.0));
    let good = valid_frame(&mut sim);
    let start = sim.now();
    for i in 0..40u8 {
        let mut f = good.clone();
        f[14 + 38] ^= 0x02 * (i & 1); // flip the partner's view of our timeout
        sim.inject(0, PortId(0), &f);
        sim.run_for(Duration::from_millis(50));
    }
    let sent: Vec<Instant> = sim
        .captured()
        .iter()
        .filter(|c| c.from.system == 0 && c.at >= start)
        .map(|c| c.at)
        .collect();
    assert!(sent.len() >= 6);
    for w in sent.windows(4) {
        assert!(
            w[3].saturating_duration_since(w[0]) >= Duration::from_secs(1),
            "4 PDUs within 1 s: {w:?}"
        );
    }
    assert!(status(&sim, 0, 0).counters.tx_deferred > 0);
}

#[test]
fn independent_control_collects_then_distributes() {
    let mut a = sys("A", 1);
    a.mux_control = MuxControl::Independent;
    let mut b = sys("B", 2);
    b.mux_control = MuxControl::Independent;
    let mut sim = Sim::pair(
        a,
        b,
        2,
        LinkSpec::default(),
        port(1, Activity::Active, Rate::Fast),
        port(2, Activity::Active, Rate::Fast),
        1,
    );
    let t = sim
        .run_until_cond(secs(30.0), |s| all_bundled(s, 2))
        .expect("forms");
    assert!(t <= secs(FORM_BOUND + 0.001));
    assert_eq!(status(&sim, 0, 0).mux, MuxState::Distributing);
    assert_eq!(
        first_transition(&sim, 0, 0, "COLLECTING").map(|c| c <= t),
        Some(true)
    );
    assert_eq!(status(&sim, 0, 0).actor.state.0, 0x3f);
}

#[test]
fn independent_against_coupled_interoperates() {
    let mut a = sys("A", 1);
    a.mux_control = MuxControl::Independent;
    let mut sim = Sim::pair(
        a,
        sys("B", 2),
        2,
        LinkSpec::default(),
        port(1, Activity::Active, Rate::Fast),
        port(2, Activity::Passive, Rate::Slow),
        1,
    );
    assert!(sim
        .run_until_cond(secs(30.0), |s| all_bundled(s, 2))
        .is_some());
}

fn no_partner(policy: NoPartner) -> Sim {
    // B's ports have LACP disabled: a partner that never speaks LACP.
    let mut a = sys("A", 1);
    a.no_partner = policy;
    Sim::pair(
        a,
        sys("B", 2),
        3,
        LinkSpec::default(),
        port(1, Activity::Active, Rate::Fast),
        |n| PortConfig {
            lacp_enabled: false,
            ..PortConfig::new(&format!("p{n}"), n, mac(2, n))
        },
        1,
    )
}

#[test]
fn partner_without_lacp_policies() {
    // individual: every port carries traffic on its own, none bundled.
    let mut sim = no_partner(NoPartner::Individual);
    sim.run_until(secs(30.0));
    let aggs = sim.system(0).aggregators();
    assert_eq!(aggs.len(), 3);
    assert!(aggs
        .iter()
        .all(|a| a.individual && a.distributing.len() == 1));
    assert_eq!(bundled(&sim, 0), 0);
    // Defaulted after Short_Timeout_Time, then Aggregate_Wait_Time.
    let t = first_transition(&sim, 0, 0, "COLLECTING_DISTRIBUTING").unwrap();
    assert!(t <= secs(3.0 + 2.0 + 0.001), "{t}");
    // B ignored everything A sent.
    assert!(status(&sim, 1, 0).counters.lacpdu_ignored > 0);

    // fallback: one port carries traffic, the others stand by.
    let mut sim = no_partner(NoPartner::Fallback);
    sim.run_until(secs(30.0));
    let aggs = sim.system(0).aggregators();
    assert_eq!(aggs.len(), 1);
    assert_eq!(aggs[0].distributing, vec![PortId(0)]);
    assert_eq!(status(&sim, 0, 1).selected, Selected::Standby);
    // ... and the standby takes over when the active link fails.
    sim.schedule(secs(30.0), 0, Fault::Cut);
    sim.run_until(secs(30.0 + 2.1));
    assert_eq!(sim.system(0).aggregators()[0].distributing, vec![PortId(1)]);

    // suspend: nothing carries traffic.
    let mut sim = no_partner(NoPartner::Suspend);
    sim.run_until(secs(30.0));
    assert!(sim
        .system(0)
        .aggregators()
        .iter()
        .all(|a| a.distributing.is_empty()));
}

#[test]
fn lacp_partner_appearing_replaces_individual_mode() {
    let mut sim = no_partner(NoPartner::Individual);
    sim.run_until(secs(30.0));
    assert_eq!(bundled(&sim, 0), 0);
    // The partner's ports are reconfigured to speak LACP at 30 s: A's
    // defaulted ports hear it within one periodic interval, leave their
    // individual aggregators and form one aggregate.
    sim.update(1, |s, now| {
        for p in s.port_ids() {
            s.set_lacp_enabled(p, true, now);
        }
    });
    let t = sim
        .run_until_cond(secs(60.0), |s| all_bundled(s, 3))
        .expect("aggregates once the partner speaks LACP");
    assert!(t <= secs(30.0 + FORM_BOUND), "formed at {t}");
}

#[test]
fn a_day_of_virtual_time_is_quiet_once_formed() {
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        8,
    );
    sim.run_until(secs(86_400.0));
    assert!(all_bundled(&sim, 8));
    assert!(transitions_after(&sim, secs(10.0)).is_empty());
    // One PDU every 0.9 s per port per direction, plus formation.
    let per_port = status(&sim, 0, 0).counters.lacpdu_tx;
    assert!((96_000..96_020).contains(&per_port), "{per_port}");
    assert_eq!(sim.system(0).settle_overflows, 0);
}

#[test]
fn port_moved_to_another_port_reinitializes() {
    // Two links; A's port 1 loses carrier, then B's port 1 PDUs show up on
    // A's port 2 (recabling): A's port 1 is reinitialized (port_moved).
    let mut sim = pair(
        (Activity::Active, Rate::Fast),
        (Activity::Active, Rate::Fast),
        2,
    );
    sim.run_until(secs(10.0));
    sim.schedule(secs(10.0), 0, Fault::Cut);
    sim.enable_capture();
    sim.run_until(secs(12.0));
    // Take a PDU B port 1 sent earlier and deliver it on A port 2.
    let b1 = sim
        .captured()
        .iter()
        .find(|c| c.from.system == 1 && c.from.port == PortId(0))
        .map(|c| c.frame.clone());
    let b1 = b1.unwrap_or_else(|| {
        // B port 1 is down (cut), so no capture: build one from status.
        let st = status(&sim, 1, 0);
        SlowPdu::Lacp(lagkit_wire::LacpduRepr {
            version: 1,
            actor: st.actor,
            partner: st.partner,
            collector_max_delay: 0,
        })
        .emit_frame(mac(2, 1))
    });
    sim.inject(0, PortId(1), &b1);
    assert!(sim.timeline().iter().any(|e| matches!(&e.event,
        Event::Transition { port: PortId(0), from: "PORT_DISABLED", reason: "port moved", to: "INITIALIZE", .. } if e.system == 0)));
}
