//! A host bond's [`lagkit_bond::Core`] against a switch's
//! [`lagkit_switch::Core`] in virtual time: both sides' decisions, as the
//! daemons make them, with no root, no socket and no clock. Each bond is
//! read from its own configuration text (as `lagkit bond` reads a file)
//! and each switch from IOS; each test judges both ends: the bond's plan
//! inputs (is the member distributing, is it usable) and the switch's
//! `show etherchannel summary` flags.

use lagkit_bond::core::Event;
use lagkit_bond::Core as Bond;
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
    let text = format!("name = \"bond0\"\nmembers = [\"eth1\", \"eth2\"]\n{keys}\n");
    let (bonds, _) = lagkit_bondcfg::parse_str(&text, "bond.toml").expect("bond file");
    let s = lagkit_bond::config::settings_from(&bonds[0], Vec::new()).expect("settings");
    let mut core = Bond::new(s);
    for i in 0..LINKS {
        let mac = MacAddr([2, 0, 0, 0, 2, i as u8 + 1]);
        core.member_present(i, mac, Some(i as u32 + 2), 0);
    }
    let mac = core.choose_mac();
    core.start(mac, 100, &[], 0);
    core
}

/// The switch configured by `ios` (gi1/0/1 and gi1/0/2) cabled to `host`.
fn testbed(ios: &str, host: Bond) -> Sim<Node> {
    let names: Vec<(String, String)> = (1..=LINKS)
        .map(|i| (format!("GigabitEthernet1/0/{i}"), format!("sw{i}")))
        .collect();
    let cfg = lagkit_switch::config::from_ios(ios, &names).expect("IOS configuration");
    let ports: Vec<PortInfo> = (0..LINKS)
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
    for i in 0..LINKS {
        let end = |system| End {
            system,
            port: ProtoPort(i),
        };
        sim.connect(end(HOST), end(SWITCH), LinkSpec::default());
    }
    sim
}

fn channel(mode: &str) -> String {
    format!(
        "hostname sw\ninterface range GigabitEthernet1/0/1 - 2\n channel-group 1 mode {mode}\n lacp rate fast\n"
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
    (0..LINKS)
        .map(|i| switch(sim).member_flag(PortId(i)).0)
        .collect()
}

/// Which members the bond's plan transmits on: LACP distributing with a
/// partner, PAgP in the channel, or a static member with carrier.
fn carries(sim: &Sim<Node>) -> Vec<bool> {
    let b = host(sim);
    let views = b.views();
    (0..LINKS)
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
        if flags(sim) == [MemberFlag::Bundled; LINKS] && carries(sim) == [true; LINKS] {
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
    }
    let mut sim = testbed(&channel("passive"), bond(LACP_PASSIVE));
    run(&mut sim, 60.0);
    assert_eq!(flags(&sim), [MemberFlag::Individual; LINKS]);
    assert_eq!(carries(&sim), [false; LINKS], "the bond aggregates nothing");
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
    // Fast hellos (1 s): the partner is declared gone after 3.5 of them.
    run(&mut sim, 5.0);
    assert_eq!(carries(&sim), [true, false]);
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

#[test]
fn max_bundle_on_the_switch_leaves_one_member_to_the_bond() {
    let ios = format!(
        "{}interface port-channel 1\n lacp max-bundle 1\n",
        channel("active")
    );
    let mut sim = testbed(&ios, bond(LACP));
    run(&mut sim, 5.0);
    let mut f = flags(&sim);
    f.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(f, [MemberFlag::Bundled, MemberFlag::HotStandby]);
    assert_eq!(carries(&sim).iter().filter(|&&c| c).count(), 1);

    // The bond's own min_links: one member left is not enough.
    let mut sim = testbed(&channel("active"), bond(&format!("{LACP}\nmin_links = 2")));
    forms_within(&mut sim, 10);
    fault(&mut sim, 1, Fault::Cut);
    run(&mut sim, 1.0);
    assert_eq!(carries(&sim), [false, false], "fewer than min_links 2");
    fault(&mut sim, 1, Fault::Restore);
    forms_within(&mut sim, 10);
}
