//! The switch's core against a host's LACP or PAgP system (or a host that
//! speaks neither) in virtual time: what the root tests of `lagkit switch`
//! check through namespaces, decided here with no root, no socket and no
//! clock. Each test reads the switch's own configuration text and judges
//! it by the flags `show etherchannel summary` would print.

use lagkit_api::resume::PortRecord;
use lagkit_proto::{lacp, pagp, Instant, PortId as ProtoPort};
use lagkit_sim::{End, Fault, LinkSpec, Sim};
use lagkit_switch::core::PortInfo;
use lagkit_switch::show::MemberFlag;
use lagkit_switch::sim::Peer;
use lagkit_switch::{Core, PortId};
use lagkit_wire::MacAddr;
use std::time::Duration;

/// The host end.
enum Host {
    Lacp { active: bool },
    Pagp { desirable: bool },
    Quiet,
}

const LINKS: usize = 2;
const SWITCH: usize = 0;
const HOST: usize = 1;

/// A switch configured by `ios` (its ports gi1/0/1 and gi1/0/2) cabled to
/// `host` by two links, started at time zero.
fn testbed(ios: &str, host: Host) -> Sim<Peer> {
    let switch = switch_core(ios, false, 0, &[]);
    let host_mac = |i: usize| MacAddr([2, 0, 0, 0, 2, i as u8 + 1]);
    let host = match host {
        Host::Lacp { active } => {
            let mut s = lacp::System::new(lacp::SystemConfig::new("host", host_mac(0)));
            for i in 0..LINKS {
                let mut pc = lacp::PortConfig::new(&format!("eth{i}"), i as u16 + 1, host_mac(i));
                pc.activity = if active {
                    lacp::Activity::Active
                } else {
                    lacp::Activity::Passive
                };
                pc.rate = lacp::Rate::Fast;
                pc.key = 1;
                s.add_port(pc, Instant::ZERO);
            }
            Peer::Lacp(Box::new(s))
        }
        Host::Pagp { desirable } => {
            let mut s = pagp::System::new(pagp::SystemConfig::new("host", host_mac(0)));
            for i in 0..LINKS {
                let mut pc = pagp::PortConfig::new(&format!("eth{i}"), i as u32 + 1, host_mac(i));
                pc.mode = if desirable {
                    pagp::Mode::Desirable
                } else {
                    pagp::Mode::Auto
                };
                s.add_port(pc, Instant::ZERO);
            }
            Peer::Pagp(Box::new(s))
        }
        Host::Quiet => Peer::Quiet,
    };
    let mut sim = Sim::with_seed(7);
    assert_eq!(sim.add_node(Peer::Switch(Box::new(switch))), SWITCH);
    assert_eq!(sim.add_node(host), HOST);
    for i in 0..LINKS {
        sim.connect(
            End {
                system: SWITCH,
                port: ProtoPort(i),
            },
            End {
                system: HOST,
                port: ProtoPort(i),
            },
            LinkSpec::default(),
        );
    }
    sim
}

/// The switch of `ios` (ports gi1/0/1-2, carrier `carrier`) started at
/// `now`, resuming from `resume`.
fn switch_core(ios: &str, carrier: bool, now: u64, resume: &[PortRecord]) -> Core {
    let names: Vec<(String, String)> = (1..=LINKS)
        .map(|i| (format!("GigabitEthernet1/0/{i}"), format!("sw{i}")))
        .collect();
    let cfg = lagkit_switch::config::from_ios(ios, &names).expect("configuration");
    let ports: Vec<PortInfo> = (0..LINKS)
        .map(|i| PortInfo {
            mac: MacAddr([2, 0, 0, 0, 1, i as u8 + 1]),
            carrier,
        })
        .collect();
    Core::resume(cfg, &ports, now, resume)
}

fn core(sim: &Sim<Peer>) -> &Core {
    sim.system(SWITCH).core().expect("system 0 is the switch")
}

/// The switch members' flags, in port order.
fn flags(sim: &Sim<Peer>) -> Vec<MemberFlag> {
    (0..LINKS)
        .map(|i| core(sim).member_flag(PortId(i)).0)
        .collect()
}

/// Whether the host's ports carry the channel with the switch: LACP
/// ports distributing with a partner heard (a port that never heard one
/// distributes on its own, as an individual link), PAgP ports in the
/// channel.
fn host_carries(sim: &Sim<Peer>) -> Vec<bool> {
    match sim.system(HOST) {
        Peer::Lacp(s) => s
            .port_ids()
            .into_iter()
            .map(|p| {
                s.port_status(p)
                    .is_some_and(|st| st.distributing && st.rx != lacp::RxState::Defaulted)
            })
            .collect(),
        Peer::Pagp(s) => {
            let ch = s.channel_ports();
            s.port_ids().into_iter().map(|p| ch.contains(&p)).collect()
        }
        _ => Vec::new(),
    }
}

fn run(sim: &mut Sim<Peer>, secs: f64) {
    sim.run_for(Duration::from_secs_f64(secs));
}

/// Runs until both switch members are bundled; the virtual seconds it
/// took, or a failure naming the flags.
fn forms_within(sim: &mut Sim<Peer>, secs: u64) -> f64 {
    let start = sim.now();
    let until = start + Duration::from_secs(secs);
    while sim.now() < until {
        if flags(sim) == [MemberFlag::Bundled; LINKS] {
            return (sim.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
        }
        run(sim, 0.1);
    }
    panic!(
        "not bundled after {secs} s: {:?} ({:?})",
        flags(sim),
        (0..LINKS)
            .map(|i| core(sim).member_flag(PortId(i)).1)
            .collect::<Vec<_>>()
    );
}

fn channel(mode: &str) -> String {
    format!(
        "hostname sw\ninterface range GigabitEthernet1/0/1 - 2\n channel-group 1 mode {mode}\n lacp rate fast\n"
    )
}

/// Whether the host's ports are in the channel with the switch as its
/// partner has it: LACP, the partner (the switch) in sync, collecting and
/// distributing; PAgP, in the channel.
fn host_sees_switch_carrying(sim: &Sim<Peer>) -> Vec<bool> {
    match sim.system(HOST) {
        Peer::Lacp(s) => s
            .port_ids()
            .into_iter()
            .map(|p| {
                s.port_status(p).is_some_and(|st| {
                    let ps = st.partner.state;
                    st.distributing && ps.in_sync() && ps.collecting() && ps.distributing()
                })
            })
            .collect(),
        _ => host_carries(sim),
    }
}

/// A switch replaced by a new run of itself that resumes from what the
/// old one recorded (as a `lagkit switch` adopting the kernel data path a
/// killed or handed-over one left) is never seen to restart: sampled
/// every 5 ms for two minutes after, every host port stays in the channel
/// with the switch in sync, collecting and distributing, and every switch
/// member stays bundled, for LACP (either end active) and PAgP (either
/// end desirable). Without the records the host's ports leave the
/// channel.
#[test]
fn a_resumed_switch_is_not_seen_to_restart_by_lacp_or_pagp_hosts() {
    let cases = [
        ("active", Host::Lacp { active: true }),
        ("passive", Host::Lacp { active: true }),
        ("active", Host::Lacp { active: false }),
        ("desirable", Host::Pagp { desirable: false }),
        ("auto", Host::Pagp { desirable: true }),
        ("desirable", Host::Pagp { desirable: true }),
    ];
    for (mode, host) in cases {
        for resumed in [true, false] {
            let ios = channel(mode);
            let mut sim = testbed(&ios, host_copy(&host));
            forms_within(&mut sim, 60);
            run(&mut sim, 45.0);
            let records = core(&sim).records();
            if resumed {
                assert!(
                    records.iter().all(|r| r.lacp.is_some() || r.pagp.is_some()),
                    "{mode}: {records:?}"
                );
            }
            let resume = if resumed { records } else { Vec::new() };
            sim.update(SWITCH, |n, now| {
                *n = Peer::Switch(Box::new(switch_core(&ios, true, now.as_nanos(), &resume)))
            });
            if resumed {
                // What it records at once, should it be replaced again.
                assert_eq!(core(&sim).records(), resume, "{mode}: recorded at start");
            }
            let from = sim.timeline().len();
            let mut seen = Vec::new();
            for _ in 0..(120_000 / 5) {
                sim.run_for(Duration::from_millis(5));
                let host = host_sees_switch_carrying(&sim);
                let sw = flags(&sim);
                if host != [true; LINKS] || sw != [MemberFlag::Bundled; LINKS] {
                    seen.push(format!(
                        "at {:?} the host sees {host:?}, the switch {sw:?}",
                        sim.now()
                    ));
                    break;
                }
            }
            // What the host's protocol reported after the switch restarted.
            seen.extend(
                sim.timeline()[from..]
                    .iter()
                    .filter(|e| e.system == HOST)
                    .map(|e| format!("{:?}: {}", e.at, e.event)),
            );
            if resumed {
                assert!(seen.is_empty(), "{mode}: {seen:#?}");
                // And it records as much for the next one.
                assert_eq!(
                    core(&sim).records(),
                    resume,
                    "{mode}: the resumed switch's record"
                );
            } else {
                assert!(
                    !seen.is_empty(),
                    "{mode}: a switch started afresh is seen to restart"
                );
            }
        }
    }
}

fn host_copy(h: &Host) -> Host {
    match h {
        Host::Lacp { active } => Host::Lacp { active: *active },
        Host::Pagp { desirable } => Host::Pagp {
            desirable: *desirable,
        },
        Host::Quiet => Host::Quiet,
    }
}

#[test]
fn lacp_forms_when_either_end_is_active() {
    for (switch, host) in [("active", true), ("passive", true), ("active", false)] {
        let mut sim = testbed(&channel(switch), Host::Lacp { active: host });
        let took = forms_within(&mut sim, 10);
        assert!(took < 5.0, "{switch}/{host}: {took} s");
        assert_eq!(host_carries(&sim), [true; LINKS], "{switch}/{host}");
        assert!(core(&sim).control_counters().lacp_in > 0);
    }
}

#[test]
fn lacp_passive_facing_passive_never_forms_and_the_members_stand_alone() {
    let mut sim = testbed(&channel("passive"), Host::Lacp { active: false });
    run(&mut sim, 60.0);
    assert_eq!(flags(&sim), [MemberFlag::Individual; LINKS]);
    assert_eq!(
        host_carries(&sim),
        [false; LINKS],
        "the host never aggregates"
    );
    assert_eq!(core(&sim).control_counters().lacp_in, 0, "nobody spoke");
}

#[test]
fn pagp_desirable_forms_with_auto_and_desirable() {
    for desirable in [true, false] {
        let mut sim = testbed(&channel("desirable"), Host::Pagp { desirable });
        forms_within(&mut sim, 10);
        assert_eq!(
            host_carries(&sim),
            [true; LINKS],
            "host desirable={desirable}"
        );
    }
    // auto facing auto: nobody speaks first.
    let mut sim = testbed(&channel("auto"), Host::Pagp { desirable: false });
    run(&mut sim, 60.0);
    assert!(
        !flags(&sim).contains(&MemberFlag::Bundled),
        "{:?}",
        flags(&sim)
    );
    assert_eq!(host_carries(&sim), [false; LINKS]);
}

#[test]
fn pagp_facing_a_host_without_pagp_waits_silently_or_stands_alone() {
    // Silent desirable (IOS's default): joins after the silent wait.
    let mut sim = testbed(&channel("desirable"), Host::Quiet);
    run(&mut sim, 5.0);
    assert!(
        !flags(&sim).contains(&MemberFlag::Bundled),
        "{:?}",
        flags(&sim)
    );
    let took = forms_within(&mut sim, 30);
    assert!(took > 5.0, "only after the silent wait: {took}");
    // Non-silent: never joins; the members forward alone.
    let mut sim = testbed(&channel("desirable non-silent"), Host::Quiet);
    run(&mut sim, 60.0);
    assert_eq!(flags(&sim), [MemberFlag::Individual; LINKS]);
}

#[test]
fn mode_on_facing_lacp_bundles_alone_and_names_the_mismatch() {
    let mut sim = testbed(&channel("on"), Host::Lacp { active: true });
    run(&mut sim, 10.0);
    // The switch deals frames over both links as one channel; the host
    // heard no LACP partner and aggregates none of them (each port at
    // most an individual link): what the switch spreads by its hash
    // arrives on ports the host's bond does not treat as one.
    assert_eq!(flags(&sim), [MemberFlag::Bundled; LINKS]);
    assert_eq!(host_carries(&sim), [false; LINKS]);
    let note = core(&sim).mismatch(PortId(0)).expect("a mismatch note");
    assert!(
        note.contains("the partner speaks LACP, this port runs mode on"),
        "{note}"
    );
    assert!(core(&sim).control_counters().slow_ignored > 0);
}

#[test]
fn a_silent_failure_unbundles_one_member_until_it_heals() {
    let mut sim = testbed(&channel("active"), Host::Lacp { active: true });
    forms_within(&mut sim, 10);
    let at = sim.now() + Duration::from_millis(10);
    sim.schedule(at, 0, Fault::Blackhole);
    // Fast rate: three missed LACPDUs (3 s), then the member leaves.
    run(&mut sim, 2.0);
    assert_eq!(
        flags(&sim)[0],
        MemberFlag::Bundled,
        "still within the timeout"
    );
    run(&mut sim, 2.0);
    assert_ne!(flags(&sim)[0], MemberFlag::Bundled, "{:?}", flags(&sim));
    assert_eq!(flags(&sim)[1], MemberFlag::Bundled, "the other stays");
    assert_eq!(host_carries(&sim), [false, true]);
    let at = sim.now() + Duration::from_millis(10);
    sim.schedule(at, 0, Fault::Clear);
    forms_within(&mut sim, 10);
}

#[test]
fn a_flapped_member_goes_down_and_rebundles() {
    for mode in ["active", "on", "desirable"] {
        let host = match mode {
            "active" => Host::Lacp { active: true },
            "desirable" => Host::Pagp { desirable: true },
            _ => Host::Quiet,
        };
        let mut sim = testbed(&channel(mode), host);
        forms_within(&mut sim, 10);
        let at = sim.now() + Duration::from_millis(10);
        sim.schedule(at, 1, Fault::Cut);
        run(&mut sim, 0.5);
        assert_eq!(flags(&sim)[1], MemberFlag::Down, "{mode}");
        assert_eq!(flags(&sim)[0], MemberFlag::Bundled, "{mode}");
        let at = sim.now() + Duration::from_millis(10);
        sim.schedule(at, 1, Fault::Restore);
        let took = forms_within(&mut sim, 10);
        assert!(took < 5.0, "{mode}: {took} s");
    }
}

#[test]
fn max_bundle_holds_a_member_in_standby_and_min_links_takes_the_channel_down() {
    let ios = format!(
        "{}interface port-channel 1\n lacp max-bundle 1\n",
        channel("active")
    );
    let mut sim = testbed(&ios, Host::Lacp { active: true });
    run(&mut sim, 5.0);
    let mut f = flags(&sim);
    f.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(f, [MemberFlag::Bundled, MemberFlag::HotStandby]);
    assert_eq!(host_carries(&sim).iter().filter(|&&c| c).count(), 1);

    let ios = format!(
        "{}interface port-channel 1\n port-channel min-links 2\n",
        channel("active")
    );
    let mut sim = testbed(&ios, Host::Lacp { active: true });
    forms_within(&mut sim, 10);
    let at = sim.now() + Duration::from_millis(10);
    sim.schedule(at, 1, Fault::Cut);
    run(&mut sim, 1.0);
    assert_eq!(flags(&sim)[1], MemberFlag::Down);
    let (flag, why) = core(&sim).member_flag(PortId(0));
    assert_eq!(flag, MemberFlag::Waiting, "{why}");
    assert!(why.contains("min-links 2"), "{why}");
    let at = sim.now() + Duration::from_millis(10);
    sim.schedule(at, 1, Fault::Restore);
    forms_within(&mut sim, 10);
}

#[test]
fn a_mismatch_note_ends_when_the_foreign_protocol_falls_silent() {
    // PAgP heard on an LACP member, then the partner stops: the note
    // lasts PAgP's hold time (3.5 slow hellos, 105 s), then clears.
    let mut sim = testbed(&channel("active"), Host::Pagp { desirable: true });
    run(&mut sim, 5.0);
    let note = core(&sim).mismatch(PortId(0)).expect("a mismatch note");
    assert!(note.contains("the partner speaks PAgP"), "{note}");
    assert!(core(&sim).control_counters().pagp_ignored > 0);
    // The host's PAgP goes quiet (the bond restarts without it; carrier
    // stays): the note stands for the hold time, then clears.
    sim.update(HOST, |n, _| *n = Peer::Quiet);
    run(&mut sim, 60.0);
    assert!(core(&sim).mismatch(PortId(0)).is_some(), "within the hold");
    run(&mut sim, 60.0);
    assert_eq!(core(&sim).mismatch(PortId(0)), None);
}

/// Two switches joined by two links in a PAgP channel: desirable facing
/// auto forms at both ends; auto facing auto never does, and neither end
/// ever sends a PDU.
#[test]
fn two_switches_form_desirable_with_auto_and_never_auto_with_auto() {
    let switch = |mode: &str, id: u8| {
        let names: Vec<(String, String)> = (1..=LINKS)
            .map(|i| (format!("GigabitEthernet1/0/{i}"), format!("s{id}p{i}")))
            .collect();
        let ios = format!("hostname s{id}\n{}", channel(mode));
        let cfg = lagkit_switch::config::from_ios(&ios, &names).expect("configuration");
        let ports: Vec<PortInfo> = (0..LINKS)
            .map(|i| PortInfo {
                mac: MacAddr([2, 0, 0, id, 1, i as u8 + 1]),
                carrier: false,
            })
            .collect();
        Peer::Switch(Box::new(Core::new(cfg, &ports, 0)))
    };
    for (x, y, forms) in [("desirable", "auto", true), ("auto", "auto", false)] {
        let mut sim: Sim<Peer> = Sim::with_seed(3);
        sim.add_node(switch(x, 1));
        sim.add_node(switch(y, 2));
        for i in 0..LINKS {
            let end = |system| End {
                system,
                port: ProtoPort(i),
            };
            sim.connect(end(0), end(1), LinkSpec::default());
        }
        run(&mut sim, 60.0);
        for s in 0..2 {
            let core = sim.system(s).core().unwrap();
            let f: Vec<MemberFlag> = (0..LINKS).map(|i| core.member_flag(PortId(i)).0).collect();
            if forms {
                assert_eq!(f, [MemberFlag::Bundled; LINKS], "{x}/{y}: switch {s}");
            } else {
                assert!(!f.contains(&MemberFlag::Bundled), "{x}/{y}: {f:?}");
                assert_eq!(core.control_counters().pagp_out, 0, "auto stays silent");
            }
        }
    }
}
