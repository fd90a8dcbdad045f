//! lagkit's own socketprocs workload through the example topology, as root:
//! `lagkit load server` in h2's namespace, `lagkit load client` in h1's,
//! N×N connections, a rate, and nothing of the lab left afterwards.
//!
//! Needs the `lagkit` binary (`$LAGKIT_BIN`, or `lagkit` next to this
//! test's target directory: `cargo build -p lagkit`). Skips with a message
//! when not root or the binary is missing; fails instead when `CI` is set.

use lagkit_lab::workload::{LoadSpec, WorkloadSpec};
use lagkit_lab::{LabState, Topology};
use lagkit_netns::list as netns_list;

mod common;
use common::{procs_with, EXAMPLE};

#[test]
fn socketprocs_runs_through_the_example_lab() {
    let Some(bin) = common::can_run("lab load e2e") else {
        return;
    };
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    let mut topo = Topology::parse(&text, EXAMPLE, "x").unwrap();
    topo.name = format!("lde2e-{}", std::process::id());
    let n = 3;
    topo.workload = Some(WorkloadSpec::LagkitLoad(LoadSpec {
        clients: vec!["h1".into()],
        server: "h2".into(),
        load: "socketprocs".into(),
        procs: n,
        method: "epoll-et".into(),
        conns: 1,
        size: Some(4096),
        seconds: 3,
        port: None,
        migrations: 0,
        sockbuf: None,
    }));
    let root = std::env::temp_dir().join(format!("lklab-lde2e-{}", std::process::id()));
    let ropts = common::run_options(bin.clone(), &root);

    let (report, _) = lagkit_lab::run(&topo, &ropts, None).expect("lab run");
    eprintln!("{}", report.table());

    // Nothing left: namespaces, the load server and its workers, state.
    let left: Vec<String> = netns_list()
        .into_iter()
        .filter(|x| x.starts_with(&format!("lklab-{}-", topo.name)))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    let procs = procs_with(&root.to_string_lossy());
    assert!(procs.is_empty(), "processes left: {procs:?}");
    let loads: Vec<String> = procs_with("load server")
        .into_iter()
        .chain(procs_with("load worker"))
        .filter(|p| p.contains(&*bin.to_string_lossy()))
        .collect();
    assert!(loads.is_empty(), "lagkit load processes left: {loads:?}");
    assert!(
        !LabState::path(&root, &topo.name).exists(),
        "state file left"
    );

    let r = &report.runs[0];
    assert!(r.error.is_none(), "run failed: {:?}", r.error);
    let w = r.workload.as_ref().unwrap();
    assert_eq!(w.kind, "lagkit-load socketprocs");
    assert_eq!(w.flows, n * n, "N×N connections: {w:?}");
    assert!(w.mbps > 0.0, "{w:?}");
    assert!(w.forward_mbps > 0.0 && w.reverse_mbps > 0.0, "{w:?}");
    assert!(
        w.mbps <= 2.0 * 2.0 * 100.0 * 1.05,
        "beyond the links: {w:?}"
    );
    assert_eq!(r.code.app, "e");
    assert_eq!(r.code.procs, n);
    assert_eq!(r.code.switch, "p-L-v");
    let m = r.measurement.as_ref().unwrap();
    assert_eq!(m.bonds.len(), 2);
    assert!(report.table().contains("   e     3 p-L-v"));
    let _ = std::fs::remove_dir_all(&root);
}
