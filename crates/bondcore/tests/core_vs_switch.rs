//! A host bond's [`lagkit_bondcore::Core`] against a switch's
//! [`lagkit_switch::Core`] in virtual time: both sides' decisions, as the
//! daemons make them, with no root, no socket and no clock. Each bond is
//! read from its own configuration text (as `lagkit bond` reads a file)
//! and each switch from IOS; each test judges both ends: the bond's plan
//! inputs (is the member distributing, is it usable) and the switch's
//! `show etherchannel summary` flags.

use lagkit_bondcore::core::Event;
use lagkit_bondcore::Core as Bond;
use lagkit_proto::PortId as ProtoPort;
use lagkit_sim::{Either, End, Fault, LinkSpec, Sim};
use lagkit_switch::core::PortInfo;
use lagkit_switch::show::MemberFlag;
use lagkit_switch::sim::Peer;
use lagkit_switch::{Core as Switch, PortId};
use lagkit_wire::MacAddr;
use std::time::Duration;

type Node = Either<Bond, Peer>;

const LINKS: usize = 2;
const HOST: usize = 0;
const SWITCH: usize = 1;

/// A bond of two members (eth1, eth2) configured by `keys` (lines of a
/// bond file), its members present, started at time zero.
fn bond(keys: &str) -> Bond {
    bond_of(LINKS, keys)
}

/// A bond of `n` members (eth1...).
fn bond_of(n: usize, keys: &str) -> Bond {
    let members: Vec<String> = (1..=n).map(|i| format!("\"eth{i}\"")).collect();
    let text = format!(
        "name = \"bond0\"\nmembers = [{}]\n{keys}\n",
        members.join(", ")
    );
    let (bonds, _) = lagkit_bondcfg::parse_str(&text, "bond.toml").expect("bond file");
    let s = lagkit_bondcore::config::settings_from(&bonds[0], Vec::new()).expect("settings");
    let mut core = Bond::new(s);
    for i in 0..n {
        let mac = MacAddr([2, 0, 0, 0, 2, i as u8 + 1]);
        core.member_present(i, mac, Some(i as u32 + 2), 0);
    }
    let mac = core.choose_mac();
    core.start(mac, 100, &[], 0);
    core
}

/// The switch configured by `ios` (gi1/0/1 and gi1/0/2) cabled to `host`.
fn testbed(ios: &str, host: Bond) -> Sim<Node> {
    let n = host.members().len();
    let names: Vec<(String, String)> = (1..=n)
        .map(|i| (format!("GigabitEthernet1/0/{i}"), format!("sw{i}")))
        .collect();
    let cfg = lagkit_switch::config::from_ios(ios, &names).expect("IOS configuration");
    let ports: Vec<PortInfo> = (0..n)
        .map(|i| PortInfo {
            mac: MacAddr([2, 0, 0, 0, 1, i as u8 + 1]),
            carrier: false,
        })
        .collect();
    let mut sim = Sim::with_seed(11);
    assert_eq!(sim.add_node(Either::A(host)), HOST);
    let switch = Switch::new(cfg, &ports, 0);
    assert_eq!(
        sim.add_node(Either::B(Peer::Switch(Box::new(switch)))),
        SWITCH
    );
    for i in 0..n {
        let end = |system| End {
            system,
            port: ProtoPort(i),
        };
        sim.connect(end(HOST), end(SWITCH), LinkSpec::default());
    }
    sim
}

fn channel(mode: &str) -> String {
    channel_of(LINKS, mode)
}

fn channel_of(n: usize, mode: &str) -> String {
    format!(
        "hostname sw\ninterface range GigabitEthernet1/0/1 - {n}\n channel-group 1 mode {mode}\n lacp rate fast\n"
    )
}

fn host(sim: &Sim<Node>) -> &Bond {
    sim.system(HOST).a().expect("system 0 is the bond")
}

fn switch(sim: &Sim<Node>) -> &Switch {
    sim.system(SWITCH)
        .b()
        .and_then(Peer::core)
        .expect("system 1 is the switch")
}

/// The switch members' flags.
fn flags(sim: &Sim<Node>) -> Vec<MemberFlag> {
    (0..sim.link_count())
        .map(|i| switch(sim).member_flag(PortId(i)).0)
        .collect()
}

/// Which members the bond's plan transmits on: LACP distributing with a
/// partner, PAgP in the channel, or a static member with carrier.
fn carries(sim: &Sim<Node>) -> Vec<bool> {
    let b = host(sim);
    let views = b.views();
    (0..sim.link_count())
        .map(|i| match b.lacp_status(i) {
            Some(st) => views[i].distributing && st.rx != lagkit_proto::lacp::RxState::Defaulted,
            None => views[i].usable,
        })
        .collect()
}

fn run(sim: &mut Sim<Node>, secs: f64) {
    sim.run_for(Duration::from_secs_f64(secs));
}

/// Runs until both ends carry the channel on both links; the virtual
/// seconds it took.
fn forms_within(sim: &mut Sim<Node>, secs: u64) -> f64 {
    let start = sim.now();
    let until = start + Duration::from_secs(secs);
    while sim.now() < until {
        let n = sim.link_count();
        if flags(sim) == vec![MemberFlag::Bundled; n] && carries(sim) == vec![true; n] {
            return (sim.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
        }
        run(sim, 0.1);
    }
    panic!(
        "not formed after {secs} s: switch {:?}, bond {:?}",
        flags(sim),
        carries(sim)
    );
}

fn fault(sim: &mut Sim<Node>, link: usize, f: Fault) {
    let at = sim.now() + Duration::from_millis(10);
    sim.schedule(at, link, f);
}

const LACP: &str = "mode = \"802.3ad\"\nlacp_rate = \"fast\"";
const LACP_PASSIVE: &str = "mode = \"802.3ad\"\nlacp_rate = \"fast\"\nlacp_active = false";

#[test]
fn lacp_forms_when_either_end_is_active_and_not_when_both_are_passive() {
    for (sw, b) in [
        ("active", LACP),
        ("passive", LACP),
        ("active", LACP_PASSIVE),
    ] {
        let mut sim = testbed(&channel(sw), bond(b));
        let took = forms_within(&mut sim, 10);
        assert!(took < 5.0, "switch {sw}, bond {b}: {took} s");
        let plan = sim.system(HOST).a().unwrap().plan_state().clone();
        assert_eq!(plan.active, None, "802.3ad has no active member");
        // What a daemon adopting this one's data path resumes from: the
        // switch, on every member.
        for m in ["eth1", "eth2"] {
            let p = host(&sim).aggregated_partner(m).expect("aggregated");
            assert_eq!(p.info().system, switch(&sim).lacp_system(), "{m}");
        }
    }
    let mut sim = testbed(&channel("passive"), bond(LACP_PASSIVE));
    run(&mut sim, 60.0);
    assert_eq!(flags(&sim), [MemberFlag::Individual; LINKS]);
    assert_eq!(carries(&sim), [false; LINKS], "the bond aggregates nothing");
    assert_eq!(host(&sim).aggregated_partner("eth1"), None);
    assert_eq!(host(&sim).aggregated_partner("nosuch"), None);
}

#[test]
fn pagp_bond_forms_with_desirable_and_auto_switch_ports() {
    for (sw, b) in [
        ("desirable", "desirable"),
        ("auto", "desirable"),
        ("desirable", "auto"),
    ] {
        let mut sim = testbed(
            &channel(sw),
            bond(&format!("mode = \"balance-xor\"\npagp = \"{b}\"")),
        );
        forms_within(&mut sim, 10);
        // The bond's PAgP gate let both members in, with the switch named.
        let joined: Vec<_> = sim
            .timeline()
            .iter()
            .filter_map(|e| match &e.event {
                Either::A(Event::Pagp {
                    joined: true,
                    partner,
                    ..
                }) => Some(*partner),
                _ => None,
            })
            .collect();
        assert_eq!(joined.len(), LINKS, "switch {sw}, bond {b}");
        assert!(joined.iter().all(|p| p.is_some()), "{joined:?}");
    }
    // auto facing auto: nobody speaks first.
    let mut sim = testbed(
        &channel("auto"),
        bond("mode = \"balance-xor\"\npagp = \"auto\""),
    );
    run(&mut sim, 60.0);
    assert!(!flags(&sim).contains(&MemberFlag::Bundled));
    assert_eq!(carries(&sim), [false; LINKS]);
    for i in 0..LINKS {
        let st = host(&sim).pagp_status(i).expect("a PAgP port");
        assert_eq!(st.state, lagkit_proto::pagp::PortState::Up, "portUp");
        assert_eq!(st.counters.info_tx, 0, "an auto port stays silent");
        assert!(host(&sim).members()[i].carrier_up());
    }
}

/// active-backup with `pagp = "desirable"` and `primary = "eth2"`: PAgP
/// lets only eth2 into the channel (the switch holds Gi1/0/1 hot
/// standby), so the switch sends only where the bond receives. Pulling
/// eth2's cable moves the channel and the active member to eth1.
#[test]
fn an_active_backup_pagp_bond_keeps_one_member_in_the_channel() {
    use lagkit_proto::pagp::PortState;
    let keys = "mode = \"active-backup\"\npagp = \"desirable\"\nprimary = \"eth2\"";
    let mut sim = testbed(&channel("desirable"), bond(keys));
    run(&mut sim, 10.0);
    assert_eq!(flags(&sim), [MemberFlag::HotStandby, MemberFlag::Bundled]);
    let b = host(&sim);
    assert_eq!(b.plan_state().active, Some(1), "eth2 is active");
    assert_eq!(b.pagp_status(1).unwrap().state, PortState::UpPagp);
    assert_eq!(b.pagp_status(0).unwrap().state, PortState::HotStandby);
    assert!(!b.members()[0].usable(), "eth1 carries nothing");
    fault(&mut sim, 1, Fault::Cut);
    run(&mut sim, 5.0);
    assert_eq!(flags(&sim), [MemberFlag::Bundled, MemberFlag::Down]);
    let b = host(&sim);
    assert_eq!(b.plan_state().active, Some(0), "eth1 took over");
    assert_eq!(b.pagp_status(0).unwrap().state, PortState::UpPagp);
    // eth2 leaves at once; eth1 is active once PAgP has let it in.
    let moves: Vec<_> = sim
        .timeline()
        .iter()
        .filter_map(|e| match e.event {
            Either::A(Event::Active { from, to }) => Some((from, to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        moves,
        [(None, Some(1)), (Some(1), None), (None, Some(0))],
        "the bond reported each change of active member"
    );
}

#[test]
fn a_static_bond_facing_pagp_forms_only_after_the_silent_wait() {
    let xor = "mode = \"balance-xor\"";
    let mut sim = testbed(&channel("desirable"), bond(xor));
    run(&mut sim, 5.0);
    assert!(
        !flags(&sim).contains(&MemberFlag::Bundled),
        "{:?}",
        flags(&sim)
    );
    assert_eq!(
        carries(&sim),
        [true; LINKS],
        "the static bond sends at once"
    );
    let took = forms_within(&mut sim, 30);
    assert!(took > 5.0, "after the silent wait: {took} s");

    let mut sim = testbed(&channel("desirable non-silent"), bond(xor));
    run(&mut sim, 60.0);
    assert_eq!(flags(&sim), [MemberFlag::Individual; LINKS]);
}

#[test]
fn mode_on_facing_an_lacp_bond_is_a_black_hole() {
    let mut sim = testbed(&channel("on"), bond(LACP));
    run(&mut sim, 10.0);
    assert_eq!(flags(&sim), [MemberFlag::Bundled; LINKS]);
    assert_eq!(carries(&sim), [false; LINKS]);
    let note = switch(&sim).mismatch(PortId(0)).expect("a mismatch note");
    assert!(note.contains("the partner speaks LACP"), "{note}");
}

#[test]
fn a_silent_failure_unbundles_one_member_at_both_ends_until_it_heals() {
    let mut sim = testbed(&channel("active"), bond(LACP));
    forms_within(&mut sim, 10);
    fault(&mut sim, 0, Fault::Blackhole);
    run(&mut sim, 2.0);
    assert_eq!(carries(&sim), [true; LINKS], "within the 3 s timeout");
    run(&mut sim, 2.0);
    // Carrier stays up: only LACP's timeout notices, at both ends.
    assert_eq!(carries(&sim), [false, true]);
    assert_ne!(flags(&sim)[0], MemberFlag::Bundled);
    assert_eq!(flags(&sim)[1], MemberFlag::Bundled);
    assert!(host(&sim).members()[0].carrier_up());
    fault(&mut sim, 0, Fault::Clear);
    forms_within(&mut sim, 10);
}

#[test]
fn a_pagp_silent_failure_takes_the_member_out_after_the_hold_time() {
    let mut sim = testbed(
        &channel("desirable"),
        bond("mode = \"balance-xor\"\npagp = \"desirable\"\npagp_rate = \"fast\""),
    );
    forms_within(&mut sim, 10);
    fault(&mut sim, 1, Fault::Blackhole);
    // The bond's fast hellos (1 s): the switch declares it gone after 3.5
    // of them.
    run(&mut sim, 5.0);
    assert_ne!(flags(&sim)[1], MemberFlag::Bundled);
    // The switch's hellos are slow (30 s) and say so: the bond keeps what
    // it heard 3.5 of those, whatever its own rate, and sends into the
    // hole until then (PAgP's timers are per direction).
    assert_eq!(carries(&sim), [true, true]);
    run(&mut sim, 60.0);
    assert_eq!(carries(&sim), [true, true]);
    run(&mut sim, 50.0);
    assert_eq!(
        carries(&sim),
        [true, false],
        "105 s after the last slow hello"
    );
    assert!(!host(&sim).members()[1].usable());
    fault(&mut sim, 1, Fault::Clear);
    forms_within(&mut sim, 10);
}

#[test]
fn a_flapped_member_goes_down_at_both_ends_and_rebundles() {
    let cases = [
        ("active", LACP),
        ("desirable", "mode = \"balance-xor\"\npagp = \"desirable\""),
        ("on", "mode = \"balance-xor\""),
    ];
    for (sw, b) in cases {
        let mut sim = testbed(&channel(sw), bond(b));
        let first = forms_within(&mut sim, 30);
        fault(&mut sim, 1, Fault::Cut);
        run(&mut sim, 0.5);
        assert_eq!(flags(&sim)[1], MemberFlag::Down, "{sw}");
        assert_eq!(flags(&sim)[0], MemberFlag::Bundled, "{sw}");
        assert_eq!(carries(&sim), [true, false], "{sw}");
        assert!(!host(&sim).members()[1].carrier_up());
        fault(&mut sim, 1, Fault::Restore);
        let took = forms_within(&mut sim, 30);
        assert!(took < first.max(5.0), "{sw}: {took} s");
        let failures = host(&sim).members()[1].link_failures();
        assert_eq!(failures, 1, "{sw}");
    }
}

/// A 3-member bond into a channel with `lacp max-bundle 2`: two members
/// carry traffic and own every bucket, the third stands by (H, no bucket)
/// and takes over when one fails; with `port-channel min-links 3` the
/// channel is down once a member fails, and the switch says why.
#[test]
fn max_bundle_keeps_a_hot_standby_and_min_links_takes_the_channel_down() {
    use lagkit_switch::ChannelId;
    let count = |f: &[MemberFlag], x: MemberFlag| f.iter().filter(|&&y| y == x).count();
    let ios = format!(
        "{}interface port-channel 1\n lacp max-bundle 2\n",
        channel_of(3, "active")
    );
    let mut sim = testbed(&ios, bond_of(3, LACP));
    run(&mut sim, 5.0);
    let f = flags(&sim);
    assert_eq!(count(&f, MemberFlag::Bundled), 2, "{f:?}");
    assert_eq!(count(&f, MemberFlag::HotStandby), 1, "{f:?}");
    let c = carries(&sim);
    assert_eq!(c.iter().filter(|&&x| x).count(), 2, "{c:?}");
    // The bond carries exactly where the switch bundles.
    for i in 0..3 {
        assert_eq!(c[i], f[i] == MemberFlag::Bundled, "member {i}");
    }
    let buckets = |sim: &Sim<Node>| {
        let ch = switch(sim)
            .bridge()
            .channel(ChannelId(1))
            .expect("channel 1");
        ch.buckets()
    };
    let standby = f.iter().position(|&x| x == MemberFlag::HotStandby).unwrap();
    let owners = buckets(&sim);
    assert!(
        owners.iter().all(|o| o.is_some_and(|p| p.0 != standby)),
        "{owners:?}"
    );
    // A bundled member fails: the standby takes its place at both ends.
    let failed = f.iter().position(|&x| x == MemberFlag::Bundled).unwrap();
    fault(&mut sim, failed, Fault::Cut);
    run(&mut sim, 5.0);
    let f = flags(&sim);
    assert_eq!(f[failed], MemberFlag::Down);
    assert_eq!(f[standby], MemberFlag::Bundled, "{f:?}");
    assert!(carries(&sim)[standby]);
    assert!(buckets(&sim).contains(&Some(PortId(standby))));

    let ios = format!(
        "{}interface port-channel 1\n port-channel min-links 3\n",
        channel_of(3, "active")
    );
    let mut sim = testbed(&ios, bond_of(3, LACP));
    forms_within(&mut sim, 10);
    fault(&mut sim, 2, Fault::Cut);
    run(&mut sim, 2.0);
    assert_eq!(
        count(&flags(&sim), MemberFlag::Bundled),
        0,
        "{:?}",
        flags(&sim)
    );
    let (_, why) = switch(&sim).member_flag(PortId(0));
    assert!(why.contains("fewer than min-links 3"), "{why}");
}

/// The bond's own `min_links`: one member left of two is not enough.
#[test]
fn the_bonds_min_links_takes_its_aggregate_down() {
    let mut sim = testbed(&channel("active"), bond(&format!("{LACP}\nmin_links = 2")));
    forms_within(&mut sim, 10);
    fault(&mut sim, 1, Fault::Cut);
    run(&mut sim, 1.0);
    assert_eq!(carries(&sim), [false, false], "fewer than min_links 2");
    fault(&mut sim, 1, Fault::Restore);
    forms_within(&mut sim, 10);
}

/// A member a reload removes from a formed LACP bond tells the switch at
/// once (its port's last LACPDU, out of sync), and still passes up what
/// it receives until the switch's answer says the switch stopped sending
/// on the link; then the bond may give it back. The other member carries
/// on throughout.
#[test]
fn a_removed_member_leaves_at_once_and_collects_until_the_switch_stopped() {
    let mut sim = testbed(&channel("active"), bond(LACP));
    forms_within(&mut sim, 10);
    // Steady state: LACP's limit of 3 LACPDUs a second does not hold the
    // switch's answer back (as it may right after forming).
    run(&mut sim, 5.0);
    sim.update(HOST, |n, now| {
        if let Either::A(b) = n {
            b.remove_member(1, now.as_nanos());
        }
    });
    let v = host(&sim).views();
    assert!(!v[1].distributing && v[1].collecting, "{:?}", v[1]);
    assert!(host(&sim).members()[1].is_leaving());
    assert_eq!(host(&sim).members_left(), [0usize; 0]);
    // The status says so.
    let facts = lagkit_bondcore::report::BondFacts {
        engine: lagkit_api::status::EngineKind::Userspace,
        engine_reason: "virtual time".into(),
        mtu: 1500,
        datapath: None,
        members: vec![
            lagkit_bondcore::report::MemberFacts {
                present: true,
                ..Default::default()
            };
            LINKS
        ],
    };
    let st = host(&sim).status(None, facts);
    let leaving: Vec<bool> = st.members.iter().map(|m| m.leaving).collect();
    assert_eq!(leaving, [false, true]);
    assert_eq!(st.render().matches("Leaving: removed").count(), 1);
    // Well before the switch's own timeout (3 s at the fast rate).
    run(&mut sim, 0.1);
    assert_eq!(flags(&sim)[0], MemberFlag::Bundled);
    assert_ne!(
        flags(&sim)[1],
        MemberFlag::Bundled,
        "the switch still sends on it"
    );
    assert_eq!(
        host(&sim).members_left(),
        [1],
        "the switch's answer ended the drain"
    );
    assert_eq!(carries(&sim), [true, false]);
}

/// The status report the bond's control socket gives comes from the core:
/// a formed LACP bond is up, every member transmitting and collecting, no
/// problem; a passive bond facing a passive switch aggregates nothing (at
/// most one individual link) and says that one end must be active.
#[test]
fn the_status_report_says_what_formed_and_what_did_not() {
    use lagkit_api::status::{EngineKind, MiiStatus};
    use lagkit_bondcore::report::{BondFacts, MemberFacts};
    for (sw, b, formed) in [("active", LACP, true), ("passive", LACP_PASSIVE, false)] {
        let mut sim = testbed(&channel(sw), bond(b));
        run(&mut sim, 10.0);
        let mut plan = None;
        sim.update(HOST, |n, now| {
            if let Either::A(c) = n {
                plan = Some(c.build_plan(now.as_nanos()));
            }
        });
        let facts = BondFacts {
            engine: EngineKind::Userspace,
            engine_reason: "virtual time".into(),
            mtu: 1500,
            datapath: None,
            members: vec![
                MemberFacts {
                    present: true,
                    ..MemberFacts::default()
                };
                LINKS
            ],
        };
        let st = host(&sim).status(plan.as_ref(), facts);
        let carried: Vec<(bool, bool)> = st
            .members
            .iter()
            .map(|m| (m.transmitting, m.collecting))
            .collect();
        assert!(st.members.iter().all(|m| m.mii_status == MiiStatus::Up));
        if formed {
            assert_eq!(st.mii_status, MiiStatus::Up);
            assert_eq!(carried, [(true, true); LINKS]);
            assert!(st.problems.is_empty(), "{:?}", st.problems);
            assert_eq!(st.lacp.as_ref().map(|l| l.number_of_ports), Some(LINKS));
        } else {
            // No aggregate: one link at most, as an individual link.
            assert!(carried.iter().filter(|c| c.0).count() <= 1, "{carried:?}");
            assert!(
                st.problems
                    .iter()
                    .any(|p| p.contains("Make one end active")),
                "{:?}",
                st.problems
            );
        }
    }
}
