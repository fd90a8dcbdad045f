//! Deterministic two-system simulations of the PAgP core.
//!
//! Each test states the outcome and the virtual-time bound the reference's
//! PAgP facts imply: hellos every 1 s while detecting, 30 s once up,
//! information aging after 3.5 hellos, a silent wait of 15 s by default.
//! Links have a 100 µs one-way delay.

use lagkit_proto::pagp::{Event, Mode, PortConfig, PortState, Silence, SystemConfig};
use lagkit_proto::{Instant, PortId};
use lagkit_sim::pagp::{channel_ports, pair, states, Peer};
use lagkit_sim::*;
use std::time::Duration;

mod common;

fn sys(name: &str, n: u8) -> SystemConfig {
    SystemConfig::new(name, mac(n, 0))
}

fn port(s: u8, mode: Mode, silence: Silence) -> impl FnMut(u16) -> PortConfig {
    move |n| {
        let mut c = PortConfig::new(&format!("p{n}"), n.into(), mac(s, n));
        c.mode = mode;
        c.silence = silence;
        c
    }
}

fn modes(a: Mode, b: Mode, links: usize) -> Sim<Peer> {
    pair(
        sys("A", 1),
        Some(sys("B", 2)),
        links,
        LinkSpec::default(),
        port(1, a, Silence::Silent),
        port(2, b, Silence::Silent),
        1,
    )
}

fn formed(sim: &Sim<Peer>, links: usize) -> bool {
    channel_ports(sim, 0).len() == links && channel_ports(sim, 1).len() == links
}

#[test]
fn desirable_with_desirable_or_auto_forms_within_two_hellos() {
    for b in [Mode::Desirable, Mode::Auto] {
        let mut sim = modes(Mode::Desirable, b, 2);
        let at = sim.run_until_cond(Instant::from_secs(2), |s| formed(s, 2));
        assert!(at.is_some(), "desirable + {b:?}: {:?}", states(&sim, 0));
        assert_eq!(states(&sim, 1), [PortState::UpPagp; 2]);
    }
}

#[test]
fn auto_with_auto_never_forms_and_never_speaks() {
    let mut sim = modes(Mode::Auto, Mode::Auto, 2);
    sim.run_until(Instant::from_secs(300));
    assert!(channel_ports(&sim, 0).is_empty() && channel_ports(&sim, 1).is_empty());
    assert_eq!(states(&sim, 0), [PortState::Up; 2]);
    assert_eq!(sim.link_counts(0).0, [0, 0], "no frame crossed the link");
}

fn facing_silent(silence: Silence, wait: Option<Duration>) -> Sim<Peer> {
    let mut a = sys("A", 1);
    if let Some(w) = wait {
        a.timers.silent_wait = w;
    }
    pair(
        a,
        None,
        2,
        LinkSpec::default(),
        port(1, Mode::Desirable, silence),
        port(2, Mode::Desirable, silence),
        1,
    )
}

#[test]
fn non_silent_desirable_never_forms_with_a_silent_partner() {
    let mut sim = facing_silent(Silence::NonSilent, None);
    sim.run_until(Instant::from_secs(600));
    assert!(channel_ports(&sim, 0).is_empty());
    assert_eq!(states(&sim, 0), [PortState::Up; 2]);
}

#[test]
fn silent_desirable_attaches_to_a_silent_partner_after_the_wait() {
    let mut sim = facing_silent(Silence::Silent, None);
    sim.run_until(Instant::from_millis(14_999));
    assert!(channel_ports(&sim, 0).is_empty());
    sim.run_until(Instant::from_secs(15));
    assert_eq!(states(&sim, 0), [PortState::UpData; 2]);
    // Both attached at once, so nothing was flushed. A port leaving
    // flushes the other; nobody answers a Flush on a silent link, so flows
    // move after the Flush timeout (1 s).
    let started = |e: &TimelineEntry<Event>| matches!(e.event, Event::FlushStarted { .. });
    assert!(!sim.timeline().iter().any(started));
    sim.schedule(Instant::from_secs(20), 1, Fault::Cut);
    let unanswered = |sim: &Sim<Peer>| {
        sim.timeline()
            .iter()
            .filter(|e| {
                matches!(
                    e.event,
                    Event::FlushDone {
                        port: PortId(0),
                        answered: false,
                        ..
                    }
                )
            })
            .count()
    };
    sim.run_until(Instant::from_millis(20_999));
    assert_eq!(unanswered(&sim), 0);
    sim.run_until(Instant::from_secs(21));
    assert_eq!(unanswered(&sim), 1);
    // The wait is configurable.
    let mut sim = facing_silent(Silence::Silent, Some(Duration::from_secs(4)));
    let at = sim.run_until_cond(Instant::from_secs(20), |s| channel_ports(s, 0).len() == 2);
    assert_eq!(at, Some(Instant::from_secs(4)));
}

#[test]
fn a_cut_link_leaves_and_comes_back() {
    let mut sim = modes(Mode::Desirable, Mode::Desirable, 2);
    sim.schedule(Instant::from_secs(10), 1, Fault::Cut);
    sim.schedule(Instant::from_secs(20), 1, Fault::Restore);
    sim.run_until(Instant::from_secs(11));
    assert_eq!(channel_ports(&sim, 0), [PortId(0)]);
    assert_eq!(states(&sim, 1), [PortState::UpPagp, PortState::Down]);
    let back = sim.run_until_cond(Instant::from_secs(30), |s| formed(s, 2));
    let back = back.expect("the port comes back");
    assert!(back <= Instant::from_secs(22), "back at {back}");
    // Left once and joined twice on each side, and the surviving member was
    // flushed (and answered) before flows moved each time.
    for s in 0..2 {
        let ev: Vec<&Event> = sim
            .timeline()
            .iter()
            .filter(|e| e.system == s)
            .map(|e| &e.event)
            .collect();
        let left = ev.iter().filter(|e| {
            matches!(
                e,
                Event::Left {
                    port: PortId(1),
                    ..
                }
            )
        });
        assert_eq!(left.count(), 1);
        let done = ev.iter().filter(|e| {
            matches!(
                e,
                Event::FlushDone {
                    port: PortId(0),
                    answered: true,
                    ..
                }
            )
        });
        assert!(done.count() >= 2, "system {s}: {ev:#?}");
    }
}

#[test]
fn a_black_hole_ages_out_after_three_and_a_half_slow_hellos() {
    let mut sim = modes(Mode::Desirable, Mode::Desirable, 2);
    sim.schedule(Instant::from_secs(10), 1, Fault::Blackhole);
    sim.schedule(Instant::from_secs(200), 1, Fault::Clear);
    sim.run_until(Instant::from_secs(100));
    assert!(formed(&sim, 2), "slow hellos: nothing ages before 105 s");
    let gone = sim.run_until_cond(Instant::from_secs(200), |s| channel_ports(s, 0).len() == 1);
    let gone = gone.expect("ages out");
    // The last hello before the black hole was sent at most 30 s before it.
    assert!(gone <= Instant::from_secs(10 + 105), "gone at {gone}");
    let back = sim.run_until_cond(Instant::from_secs(230), |s| formed(s, 2));
    assert!(back.is_some_and(|t| t <= Instant::from_secs(203)));
}

#[test]
fn port_priority_picks_the_hot_standby_port() {
    let mut a = sys("A", 1);
    a.max_ports = Some(1);
    let mut pa = port(1, Mode::Desirable, Silence::Silent);
    let mut sim = pair(
        a,
        Some(sys("B", 2)),
        3,
        LinkSpec::default(),
        move |n| {
            let mut c = pa(n);
            c.port_priority = if n == 3 { 250 } else { 128 };
            c
        },
        port(2, Mode::Auto, Silence::Silent),
        1,
    );
    use PortState::*;
    sim.schedule(Instant::from_secs(10), 2, Fault::Cut);
    sim.schedule(Instant::from_secs(20), 2, Fault::Restore);
    sim.run_until(Instant::from_secs(5));
    assert_eq!(states(&sim, 0), [HotStandby, HotStandby, UpPagp]);
    assert_eq!(states(&sim, 1), [HotStandby, HotStandby, UpPagp]);
    // The deciding end waited for all three ports (join wait, 2 s) and
    // ranked them together: the preferred port joined first, nobody left.
    let joins: Vec<(Instant, PortId)> = sim
        .timeline()
        .iter()
        .filter_map(|e| match e.event {
            Event::Joined { port, .. } if e.system == 0 => Some((e.at, port)),
            Event::Left { .. } if e.system == 0 => panic!("a port left at {}", e.at),
            _ => None,
        })
        .collect();
    assert_eq!(joins.len(), 1, "{joins:?}");
    assert_eq!(joins[0].1, PortId(2));
    assert!(joins[0].0 >= Instant::from_secs(2) && joins[0].0 < Instant::from_millis(2010));
    // The preferred port fails: the next (equal priority, lower ifindex) takes over.
    sim.run_until(Instant::from_secs(12));
    assert_eq!(states(&sim, 0), [UpPagp, HotStandby, Down]);
    assert_eq!(states(&sim, 1), [UpPagp, HotStandby, Down]);
    // It returns and takes the traffic back.
    sim.run_until(Instant::from_secs(25));
    assert_eq!(states(&sim, 0), [HotStandby, HotStandby, UpPagp]);
    assert_eq!(states(&sim, 1), [HotStandby, HotStandby, UpPagp]);
}

#[test]
fn lossy_runs_are_reproducible_and_still_form() {
    let run = |seed| {
        let mut sim = pair(
            sys("A", 1),
            Some(sys("B", 2)),
            4,
            LinkSpec {
                delay: Duration::from_micros(100),
                loss: 0.3,
            },
            port(1, Mode::Desirable, Silence::NonSilent),
            port(2, Mode::Auto, Silence::NonSilent),
            seed,
        );
        sim.run_until(Instant::from_secs(60));
        (sim.timeline().to_vec(), formed(&sim, 4))
    };
    let (t1, ok) = run(7);
    assert!(ok);
    assert_eq!(t1, run(7).0);
    assert_ne!(t1, run(8).0);
}

#[test]
fn tshark_finds_nothing_wrong_with_a_simulated_run() {
    if !common::tshark_available("tshark_finds_nothing_wrong_with_a_simulated_run") {
        return;
    }
    let mut sim = modes(Mode::Desirable, Mode::Auto, 2);
    sim.enable_capture();
    sim.schedule(Instant::from_secs(10), 1, Fault::Cut);
    sim.schedule(Instant::from_secs(20), 1, Fault::Restore);
    sim.run_until(Instant::from_secs(90));
    let frames = sim.captured().to_vec();
    assert!(frames.len() > 10);
    let fields = ["pagp.version", "_ws.malformed", "_ws.expert.severity"];
    let rows = common::tshark_fields(&frames, &fields);
    assert_eq!(rows.len(), frames.len());
    let mut flushes = 0;
    for r in &rows {
        assert!(
            r[0] == "0x01" || r[0] == "0x02",
            "not decoded as PAgP: {r:?}"
        );
        assert_eq!(&r[1..], ["", ""], "tshark complains: {r:?}");
        flushes += usize::from(r[0] == "0x02");
    }
    assert!(flushes >= 2, "requests and answers");
}
