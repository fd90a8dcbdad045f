//! The example topology end to end, as root: up → converge → iperf3 →
//! measure → report → down, then nothing of the lab is left (namespaces,
//! processes, state file).
//!
//! Needs the `lagkit` binary (for `lagkit up` in the host namespaces):
//! `$LAGKIT_BIN`, or `lagkit` next to this test's target directory — build
//! it first (`cargo build -p lagkit`; `cargo test --workspace` does).
//! Runs the example on lagkit's switch and on Open vSwitch. Skips with a
//! message when not root or when iperf3 or the binary (or, for the OVS
//! run, OVS) is missing; fails instead when `CI` is set.

use lagkit_lab::report::Report;
use lagkit_lab::sys::tool;
use lagkit_lab::topology::SwitchKind;
use lagkit_lab::{LabState, Topology};
use lagkit_netns::list as netns_list;
use std::sync::Mutex;

mod common;
use common::{procs_with, EXAMPLE, EXAMPLE_OVS};

/// The two runs measure throughput: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn example_lab_runs_iperf3_reports_and_leaves_nothing() {
    run_example(EXAMPLE, SwitchKind::Lagkit);
}

#[test]
fn example_lab_on_open_vswitch_runs_iperf3_reports_and_leaves_nothing() {
    run_example(EXAMPLE_OVS, SwitchKind::Ovs);
}

fn run_example(file: &str, kind: SwitchKind) {
    let what = format!("lab e2e ({})", kind.name());
    let Some(bin) = common::can_run_on(&what, kind) else {
        return;
    };
    if tool("iperf3").is_none() && common::skip(&what, "iperf3 missing (apt-get install iperf3)") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(file).unwrap();
    let mut topo = Topology::parse(&text, file, "x").unwrap();
    assert_eq!(topo.switches[0].kind, kind);
    // A name and a state root of our own: never meets a lab a user brought up.
    topo.name = format!("e2e{}-{}", kind.name(), std::process::id());
    // Short run: the test stays well under a minute.
    if let Some(lagkit_lab::workload::WorkloadSpec::Iperf3(w)) = topo.workload.as_mut() {
        w.seconds = 5;
    }
    let root = std::env::temp_dir().join(format!("lklab-{}", topo.name));
    let ropts = common::run_options(bin, &root);
    let report_dir = root.join("report");

    let t0 = std::time::Instant::now();
    let (report, files) = lagkit_lab::run(&topo, &ropts, Some(&report_dir)).expect("lab run");
    eprintln!("{}", report.table());
    eprintln!("lab run took {:?}", t0.elapsed());

    // Nothing of the lab is left.
    let left: Vec<String> = netns_list()
        .into_iter()
        .filter(|n| n.starts_with(&format!("lklab-{}-", topo.name)))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    let procs = procs_with(&root.to_string_lossy());
    assert!(procs.is_empty(), "processes left: {procs:?}");
    assert!(
        !LabState::path(&root, &topo.name).exists(),
        "state file left"
    );
    assert!(!root.join(&topo.name).exists(), "lab directory left");

    // The run itself.
    let r = &report.runs[0];
    assert!(r.error.is_none(), "run failed: {:?}", r.error);
    let w = r.workload.as_ref().unwrap();
    assert!(w.mbps > 0.0, "{w:?}");
    assert!(w.reverse_mbps > 0.0, "bidir: {w:?}");
    // iperf3's connections, recorded for the planner: 8 streams each way.
    let sends = w
        .connections
        .iter()
        .filter(|c| c.purpose == "stream")
        .count();
    assert_eq!((w.connections.len(), sends), (16, 8), "{:?}", w.connections);
    // Both ways: measured against each direction's 2 × 100 Mbit/s.
    let cap = r.capacity.as_ref().expect("capacity");
    assert!(cap.forward && cap.reverse, "{cap:?}");
    assert_eq!(cap.per_direction_mbps, 200.0);
    assert_eq!(r.limit_mbps, Some(400.0));
    // 2 × 100 Mbit/s each way: more than one link's worth is aggregation.
    assert!(
        w.mbps <= 2.0 * 2.0 * 100.0 * 1.05,
        "beyond the links: {w:?}"
    );
    let m = r.measurement.as_ref().unwrap();
    assert_eq!(m.bonds.len(), 2);
    for b in &m.bonds {
        for x in [b.tx_ratio, b.rx_ratio] {
            let x = x.expect("traffic through every bond both ways");
            assert!((0.0..=1.0).contains(&x), "{b:?}");
        }
        assert!(b.mbps > 0.0);
        assert_eq!(b.members.len(), 2);
    }
    assert!(
        m.cpu.busy_pct > 0.0 && m.cpu.busy_pct <= 100.0,
        "{:?}",
        m.cpu
    );
    assert_eq!(m.cpu.cores, report.machine.cores);
    assert!(m.shaping_problems.is_empty(), "{:?}", m.shaping_problems);
    assert!(r.lacp_start.as_ref().unwrap().all_ok());
    assert!(r.converge_seconds.unwrap() < 30.0);
    assert_eq!(r.code.switch, "p-L-v");
    assert_eq!(r.code.server, "8d-st");
    assert_eq!(r.code.links, "2x100M");
    assert_eq!(r.switches.len(), 1);
    assert_eq!(r.switches[0].kind, kind);
    let method = match kind {
        SwitchKind::Lagkit => "cisco src-dst-port",
        SwitchKind::Ovs => "balance-tcp",
    };
    assert_eq!(r.switches[0].method, method);
    assert_eq!(m.switch_cpu.len(), 1, "the switch's CPU is read");
    // lagkit's switch's ports are counted. Every port received (the
    // bonds' layer3+4 spreads); towards the hosts src-dst-port may keep to
    // one member per channel: iperf3's one server port against Linux's
    // even ports for connect() give every flow the same low bit.
    match kind {
        SwitchKind::Lagkit => {
            assert_eq!(m.switch_ports.len(), 4, "{:?}", m.switch_ports);
            assert!(
                m.switch_ports.iter().all(|p| p.rx_frames > 0),
                "{:?}",
                m.switch_ports
            );
            let sending = m.switch_ports.iter().filter(|p| p.tx_frames > 1000).count();
            assert!(sending >= 2, "{:?}", m.switch_ports);
        }
        SwitchKind::Ovs => assert!(m.switch_ports.is_empty()),
    }

    // The report folder.
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for n in [
        "report.txt",
        "report.json",
        "report.html",
        "mbps.svg",
        "links-run1.svg",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
    }
    let again: Report =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(again.runs.len(), 1);
    assert_eq!(again.runs[0].code, r.code);
    let back = again.runs[0].workload.as_ref().unwrap().mbps;
    assert!((back - w.mbps).abs() < 1e-6 * w.mbps.max(1.0));
    let svg = std::fs::read_to_string(report_dir.join("links-run1.svg")).unwrap();
    assert!(svg.contains("h1/e1") && svg.contains("h2/e2"));
    let table = std::fs::read_to_string(report_dir.join("report.txt")).unwrap();
    assert!(table.contains("scale: 100 Mbit/s links stand for 1 Gbit/s"));
    assert!(table.contains("p-L-v"));
    std::fs::remove_dir_all(&root).unwrap();

    // And down once more is a no-op.
    assert!(lagkit_lab::down(&root, &topo.name).was_noop());
    let _ = std::fs::remove_dir_all(&root);
}
