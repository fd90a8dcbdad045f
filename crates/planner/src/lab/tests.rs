//! The planner's lab model on the built-in scenarios and on reports.

use super::measured::switch_kind;
use super::*;
use crate::predict::predict;
use lagkit_bondcfg::Mode;
use lagkit_hash::FlowKey;

#[test]
fn tlb_without_dynamic_lb_is_predicted_by_its_policy() {
    let mut b = BondConfig::new("b", Mode::BalanceTlb, vec!["e1".into()]);
    b.xmit_hash_policy = "layer3+4".parse().unwrap();
    assert_eq!(
        spread_of(&b),
        Spread::Adaptive(DEFAULT_STRONG),
        "moved by load"
    );
    b.tlb_dynamic_lb = false;
    assert_eq!(spread_of(&b), Spread::Hash("layer3+4".parse().unwrap()));
}

#[test]
fn each_mode_is_predicted_by_the_kind_of_plan_the_bond_builds() {
    let spread = |mode: Mode| spread_of(&BondConfig::new("b", mode, vec!["e1".into()]));
    assert_eq!(spread(Mode::BalanceRr), Spread::RoundRobin);
    assert_eq!(spread(Mode::ActiveBackup), Spread::Single);
    assert_eq!(spread(Mode::Broadcast), Spread::Single);
    assert_eq!(spread(Mode::Adaptive), Spread::Adaptive(DEFAULT_STRONG));
    assert_eq!(spread(Mode::BalanceAlb), Spread::Adaptive(DEFAULT_STRONG));
    for mode in [Mode::Lacp, Mode::BalanceXor] {
        let b = BondConfig::new("b", mode, vec!["e1".into()]);
        assert_eq!(
            spread_of(&b),
            Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed))
        );
    }
}

#[test]
fn lpm_configurations_become_flows_and_ends() {
    let (plans, skipped) = plan_scenario("lpm", true, None).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let src: Vec<&LabPlan> = plans.iter().filter(|p| p.host == "src").collect();
    let keys: Vec<&str> = src.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        ["src_port", "dst_port", "src_dst_port", "strong", "adaptive"]
    );
    let p = src[0];
    assert_eq!(p.flows.iter().filter(|f| f.dir == Dir::Out).count(), 8);
    assert_eq!(p.out.links, 2);
    assert_eq!(p.out.rate_bps, 1e9);
    assert!(
        p.into_by.contains("back to back"),
        "the peer's bond spreads what src receives: {}",
        p.into_by
    );
    // The AIX modes put every data connection on one link; strong with
    // the scenario's seed 1 splits them 2/2.
    for p in &src[..3] {
        let pred = predict(&p.flows, Dir::Out, &p.out);
        assert!(
            pred.links.iter().any(|l| l.share > 0.99),
            "{}: {pred:?}",
            p.key
        );
    }
    let pred = predict(&src[3].flows, Dir::Out, &src[3].out);
    assert!(
        pred.links.iter().all(|l| (l.share - 0.5).abs() < 0.01),
        "{pred:?}"
    );
}

#[test]
fn kernel_chosen_ports_need_the_runs_connections() {
    let (plans, skipped) = plan_scenario("hp-apa", true, None).unwrap();
    assert!(plans.is_empty());
    assert!(
        skipped[0].why.contains("chosen by the kernel"),
        "{skipped:?}"
    );
    assert!(plan_scenario("nope", true, None).is_err());
    // With the connections a run recorded, each flow is placed.
    let s = lagkit_lab::scenario::builtin("hp-apa", true).unwrap();
    let c = s.configs.iter().find(|c| c.key == "k2-tx").unwrap();
    let conns: Vec<Connection> = (1..=8)
        .map(|i| Connection {
            purpose: "maerts".into(),
            local: format!("10.0.1.{}:{}", 10 + i, 40000 + i).parse().unwrap(),
            remote: "10.0.1.1:12865".parse().unwrap(),
            sent: 0,
            received: 1 << 20,
        })
        .collect();
    let plans = plan_topology(&c.topo, &c.key, &c.label, Some(&conns)).unwrap();
    assert_eq!(plans.len(), 1);
    let p = &plans[0];
    assert_eq!(p.host, "srv");
    assert!(p.ports_from_run);
    assert_eq!(p.flows.iter().filter(|f| f.dir == Dir::Out).count(), 8);
    assert_eq!(p.out.links, 2);
}

/// A report with the given per-member counters for one run.
fn report(key: &str, members: &[(&str, f64, f64)], flags: &[&str], conns: &[Connection]) -> Report {
    use lagkit_lab::measure::{BondMeasure, Measurement, MemberDelta};
    use lagkit_lab::report::{ConfigCode, Machine, RunRecord};
    use lagkit_lab::workload::WorkloadResult;
    let run = RunRecord {
        run: 1,
        key: key.into(),
        label: String::new(),
        code: ConfigCode {
            app: "l".into(),
            procs: 8,
            switch: String::new(),
            server: String::new(),
            engine: String::new(),
            mtu: String::new(),
            links: String::new(),
        },
        topology: String::new(),
        switches: Vec::new(),
        workload: Some(WorkloadResult {
            connections: conns.to_vec(),
            ..WorkloadResult::default()
        }),
        measurement: Some(Measurement {
            seconds: 10.0,
            bonds: vec![BondMeasure {
                host: "srv".into(),
                members: members
                    .iter()
                    .map(|(n, tx, rx)| MemberDelta {
                        name: n.to_string(),
                        tx_bytes: *tx as u64,
                        rx_bytes: *rx as u64,
                        ..MemberDelta::default()
                    })
                    .collect(),
                ..BondMeasure::default()
            }],
            ..Measurement::default()
        }),
        converge_seconds: None,
        lacp_start: None,
        lacp_end: None,
        limit_mbps: None,
        flags: flags.iter().map(|f| f.to_string()).collect(),
        error: None,
        formation: None,
        capacity: None,
        balance_why: Vec::new(),
    };
    Report {
        title: "test".into(),
        scale: None,
        machine: Machine {
            cores: 2,
            kernel: String::new(),
        },
        runs: vec![run],
        findings: Vec::new(),
        command: None,
    }
}

/// hp-apa's eight clients each streaming 1 MB into the server.
fn streams_into_srv() -> Vec<Connection> {
    (1..=8)
        .map(|i| Connection {
            purpose: "stream".into(),
            local: format!("10.0.1.{}:{}", 10 + i, 40000 + i).parse().unwrap(),
            remote: "10.0.1.1:12865".parse().unwrap(),
            sent: 1 << 20,
            received: 0,
        })
        .collect()
}

#[test]
fn the_model_spreads_over_the_whole_lab() {
    // hp-apa k2-rx: 8 single-link clients (25 Mbit/s each) stream into
    // a 2-link server through an Open vSwitch channel: the channel is
    // the bottleneck, its two links full and even.
    let conns = streams_into_srv();
    // 25 Mbit/s of wire for 10 s, less preamble, gap and FCS.
    let full = 25e6 * 10.0 / 8.0 * 1514.0 / 1538.0;
    let r = report(
        "k2-rx",
        &[("e1", 3e5, full), ("e2", 3e5, full * 0.96)],
        &[],
        &conns,
    );
    let acc = compare("hp-apa", true, &r).unwrap();
    assert_eq!(
        acc.len(),
        1,
        "only the receive direction carries data: {acc:?}"
    );
    let a = &acc[0];
    assert_eq!(a.dir, "receives");
    assert!(a.spread_by.contains("Open vSwitch"), "{a:?}");
    assert!(a.max_diff_pp < 1.5, "{a:?}");
    // 2 × 25 Mbit/s of wire × 1448 payload bytes per 1538 on the wire.
    assert!((a.predicted_mbps - 47.07).abs() < 0.01, "{a:?}");
    assert!(a.agrees(), "{a:?}");
    // Every connection carried as much: the placement gives 0.5/0.5.
    assert_eq!(a.placed.as_deref(), Some(&[0.5, 0.5][..]));
    assert!(a.placement_diff_pp.unwrap() < 1.5 && !a.by_frames);
    // Counters that say one link carried it all disagree.
    let r = report(
        "k2-rx",
        &[("e1", 3e5, full), ("e2", 3e5, 0.0)],
        &["CPU-bound"],
        &conns,
    );
    let a = &compare("hp-apa", true, &r).unwrap()[0];
    assert!(a.max_diff_pp > 40.0 && !a.agrees(), "{a:?}");
    assert!(!a.placement_holds(), "{a:?}");
    assert!(a.rate_not_compared.as_deref().unwrap().contains("CPU"));
}

/// A run the hypervisor starved (steal ≥ 10% of the machine's time): the
/// shares are still held to the plan, the rate is not, and the row says
/// why. Without the steal the same slow rate disagrees.
#[test]
fn a_starved_run_keeps_its_shares_to_the_plan_but_not_its_rate() {
    use lagkit_lab::measure::CpuUse;
    let conns = streams_into_srv();
    // Both links even, at 85% of what they carry full.
    let slow = 0.85 * 25e6 * 10.0 / 8.0 * 1514.0 / 1538.0;
    let mut r = report(
        "k2-rx",
        &[("e1", 3e5, slow), ("e2", 3e5, slow)],
        &[],
        &conns,
    );
    let a = &compare("hp-apa", true, &r).unwrap()[0];
    assert!(a.max_diff_pp < 1.5 && a.rate_error > 0.10, "{a:?}");
    assert!(!a.agrees() && !a.agrees_or_explained(), "{a:?}");
    r.runs[0].measurement.as_mut().unwrap().cpu = CpuUse {
        busy_pct: 66.0,
        steal_pct: 36.0,
        starved: true,
        ..CpuUse::default()
    };
    let a = &compare("hp-apa", true, &r).unwrap()[0];
    let why = a.rate_not_compared.as_deref().unwrap_or_default();
    assert!(why.contains("36% of the run (steal)"), "{a:?}");
    assert!(a.agrees(), "{a:?}");
    // One link carrying it all still disagrees, starved or not.
    let m = r.runs[0].measurement.as_mut().unwrap();
    m.bonds[0].members[1].rx_bytes = 0;
    let a = &compare("hp-apa", true, &r).unwrap()[0];
    assert!(a.max_diff_pp > 40.0 && !a.agrees(), "{a:?}");
}

#[test]
fn a_lagkit_switch_deals_its_eight_buckets_like_the_switch() {
    // hp-apa k2-rx through lagkit's switch (its runs record the kind):
    // src-dst-mac, clients' MACs ending 2..9 against the server's 1:
    // buckets 3 2 5 4 7 6 1 0, four on each member.
    let conns = streams_into_srv();
    let mut r = report("k2-rx", &[("e1", 3e5, 1e6), ("e2", 3e5, 1e6)], &[], &conns);
    r.runs[0].switches = vec![lagkit_lab::report::SwitchRun {
        name: "sw".into(),
        kind: SwitchKind::Lagkit,
        method: "cisco src-dst-mac".into(),
    }];
    assert_eq!(switch_kind(Some(&r)), SwitchKind::Lagkit);
    let a = &compare("hp-apa", true, &r).unwrap()[0];
    assert!(a.spread_by.contains("lagkit switch"), "{a:?}");
    assert!(a.spread_by.contains("src-dst-mac"), "{a:?}");
    assert!(!a.rebalanced, "a fixed function of the headers");
    assert_eq!(a.predicted, [0.5, 0.5], "{a:?}");
    // The same flows' members, asked of the switch's own channel.
    let policy: lagkit_hash::Policy = "cisco:src-dst-mac".parse().unwrap();
    let ch = lagkit_switch::Channel::all_bundled(2, lagkit_switch::Distribution::Fixed);
    let on_first = (2u8..=9)
        .filter(|&c| {
            let k = FlowKey::l2([2, 0x6c, 0x6b, 0, 1, c], [2, 0x6c, 0x6b, 0, 1, 1], 0x0800);
            ch.member_for(&policy, &k) == Some(lagkit_switch::PortId(0))
        })
        .count();
    assert_eq!(on_first, 4);
}

/// The committed full lpm run (docs/results/lpm/report.json).
fn committed_lpm_report() -> Report {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/results/lpm/report.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The committed full lpm run (docs/results/lpm) against the plan:
/// every configuration's per-link shares within 5 percentage points.
#[test]
fn lpm_plan_matches_the_committed_lab_run() {
    let report = committed_lpm_report();
    let acc = compare("lpm", false, &report).unwrap();
    let src: Vec<&Accuracy> = acc.iter().filter(|a| a.host == "src").collect();
    assert_eq!(src.len(), 5, "{acc:?}");
    for a in &src {
        assert_eq!(a.dir, "sends");
        assert!(a.max_diff_pp <= 5.0, "{a:?}");
    }
}

/// The bound on a rebalancer's first placement: two 1 Gbit/s links, both
/// full in the plan, a 6 s run, the first busy move after 2 s. Every flow
/// on one link for 2 s gives it (2 + 4) / (2 + 8) = 60% of the bytes, and
/// the run 10 Gbit of the 12 the plan carries.
#[test]
fn a_rebalancers_first_placement_is_bounded() {
    let s = Settling::bound(2.0, 6.0, &[0.5, 0.5], 2e9, 1e9).unwrap();
    assert!((s.max_pp - 10.0).abs() < 1e-9, "{s:?}");
    assert!((s.max_rate_error - 0.2).abs() < 1e-9, "{s:?}");
    // Flows that never fill one link: the start costs no rate.
    let s = Settling::bound(2.0, 6.0, &[0.5, 0.5], 0.5e9, 1e9).unwrap();
    assert!(s.max_rate_error.abs() < 1e-9, "{s:?}");
    // A run shorter than the wait: all of it may be the first placement.
    let s = Settling::bound(2.0, 1.0, &[0.5, 0.5], 2e9, 1e9).unwrap();
    assert!((s.max_pp - 50.0).abs() < 1e-9, "{s:?}");
    assert!(Settling::bound(2.0, 0.0, &[0.5, 0.5], 2e9, 1e9).is_none());
}

/// The committed full lpm run with the adaptive bond's counters moved as
/// far as a worst first placement can move them (every data flow on one
/// link until the rebalancer's first busy move, 2 s into 10 s: 55.6%) is
/// explained; moved further (60%) it is not.
#[test]
fn an_adaptive_row_is_excused_only_within_its_first_placement() {
    let report = committed_lpm_report();
    let row = |first: f64| {
        let mut r = report.clone();
        let run = r.runs.iter_mut().find(|x| x.key == "adaptive").unwrap();
        let bond = run
            .measurement
            .as_mut()
            .unwrap()
            .bonds
            .iter_mut()
            .find(|b| b.host == "src")
            .unwrap();
        let total: u64 = bond.members.iter().map(|m| m.tx_bytes).sum();
        bond.members[0].tx_bytes = (total as f64 * first) as u64;
        bond.members[1].tx_bytes = total - bond.members[0].tx_bytes;
        compare("lpm", false, &r)
            .unwrap()
            .into_iter()
            .find(|a| a.key == "adaptive" && a.host == "src" && a.dir == "sends")
            .unwrap()
    };
    let a = row(0.554);
    let s = a.settling.as_ref().expect("adaptive is rebalanced");
    assert_eq!(s.seconds, 2.0, "busy_patience 3 + 1 passes of 500 ms");
    assert!(!a.agrees() && a.agrees_or_explained(), "{a:#?}");
    assert!(a.why_not().unwrap().contains("first placement"), "{a:#?}");
    let a = row(0.60);
    assert!(!a.agrees_or_explained(), "{a:#?}");
    // A hash that does not rebalance has no such excuse.
    let strong = compare("lpm", false, &report)
        .unwrap()
        .into_iter()
        .find(|a| a.key == "strong" && a.host == "src")
        .unwrap();
    assert!(strong.settling.is_none());
}

/// The two-hosts example as `lagkit lab run` records it: iperf3's eight
/// streams each way, on the even client ports Linux's connect() takes, to
/// port 5201. lagkit's switch runs src-dst-port: every XOR is odd, so
/// each receiving bond gets all its flows on one member. The report's
/// explanation names the parity, for what each host receives, and
/// names no method the topology cannot give the switch as a fix.
#[test]
fn the_two_hosts_example_is_explained_by_port_parity() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/lab/two-hosts.toml"
    );
    let t = Topology::load(std::path::Path::new(path)).unwrap();
    let conns: Vec<Connection> = (0..16u16)
        .map(|i| Connection {
            purpose: if i < 8 { "stream" } else { "maerts" }.into(),
            local: format!("10.0.0.1:{}", 45000 + 2 * i).parse().unwrap(),
            remote: "10.0.0.2:5201".parse().unwrap(),
            sent: 1 << 20,
            received: 1 << 20,
        })
        .collect();
    let r = report("", &[], &[], &conns);
    let why = balance_why(&t, &r.runs[0]);
    let rx: Vec<_> = why.iter().filter(|w| w.direction == "rx").collect();
    let hosts: Vec<&str> = rx.iter().map(|w| w.host.as_str()).collect();
    assert!(hosts.contains(&"h1") && hosts.contains(&"h2"), "{why:#?}");
    for w in &rx {
        assert!(
            w.by.contains("port-channel load-balance src-dst-port"),
            "{w:?}"
        );
        assert!(w.cause.contains("ports of one parity"), "{w:?}");
        assert!(w.cause.contains("1 of 2 links"), "{w:?}");
        assert!(!w.cause.contains('\n'), "one line: {w:?}");
        assert!(w.fix.contains("sees past the parity"), "{w:?}");
        for lagkit_only in ["strong", "adaptive"] {
            assert!(!w.fix.contains(lagkit_only), "{w:?}");
        }
    }
    // Ports of both parities spread evenly: nothing to explain there.
    let mixed: Vec<Connection> = conns
        .iter()
        .enumerate()
        .map(|(i, c)| Connection {
            local: format!("10.0.0.1:{}", 45000 + i).parse().unwrap(),
            ..c.clone()
        })
        .collect();
    let r = report("", &[], &[], &mixed);
    let why = balance_why(&t, &r.runs[0]);
    assert!(why.iter().all(|w| w.direction != "rx"), "{why:#?}");
    // A run that recorded no connections: the planner cannot tell.
    assert!(balance_why(&t, &report("", &[], &[], &[]).runs[0]).is_empty());
}
