//! A lab run through lagkit's own switch, as root, with the switch's
//! per-port counters (`lagkit switch show interfaces counters`) set beside
//! the hosts' bond member counters (`lagkit stats`): every data frame a
//! host sent on a member arrived at its switch port, left towards the
//! other host exactly once, and arrived there; once the hosts' MACs are
//! learned nothing is flooded but their broadcasts.
//!
//! The links are shaped but the sockets' buffers keep the queues short
//! (64 KB per connection against tbf's 50 ms at 100 Mbit/s), so no queue
//! drops a frame between two counters. Skips when not root or the `lagkit`
//! binary is missing; fails instead when `CI` is set. Nothing of the lab
//! is left afterwards (checked).

use lagkit_lab::measure::{Measurement, SwitchPortDelta};
use lagkit_lab::{run_once, Topology};
use lagkit_netns::list as netns_list;

mod common;

const TOPOLOGY: &str = r#"name = "sw"
[[host]]
name = "h1"
address = "10.0.7.1/24"
bond = { mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4" }
[[host]]
name = "h2"
address = "10.0.7.2/24"
bond = { mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4" }
[[switch]]
name = "sw"
kind = "lagkit"
[[switch.channel]]
name = "po1"
host = "h1"
protocol = "lacp-active"
load_balance = "l4"
[[switch.channel]]
name = "po2"
host = "h2"
protocol = "lacp-passive"
load_balance = "l4"
[[link]]
between = ["h1", "sw"]
count = 2
rate = "100mbit"
[[link]]
between = ["h2", "sw"]
count = 2
rate = "100mbit"
[workload]
kind = "lagkit-load"
load = "bidir"
clients = ["h1"]
server = "h2"
conns = 4
seconds = 4
sockbuf = 65536
"#;

/// The switch port at the far end of host `host`'s member `iface`.
fn port_of<'a>(t: &Topology, m: &'a Measurement, host: &str, iface: &str) -> &'a SwitchPortDelta {
    let l = t
        .links
        .iter()
        .find(|l| {
            (l.a.node == host && l.a.iface == iface) || (l.b.node == host && l.b.iface == iface)
        })
        .unwrap();
    let dev = if l.a.node == host {
        &l.b.iface
    } else {
        &l.a.iface
    };
    m.switch_ports
        .iter()
        .find(|p| &p.device == dev)
        .unwrap_or_else(|| panic!("no switch port {dev} in {:?}", m.switch_ports))
}

/// `a` and `b` agree within a few frames (LACP and ARP timing between two
/// readings) or 0.2%.
fn close(a: u64, b: u64) -> bool {
    a.abs_diff(b) <= 10.max(a.max(b) / 500)
}

#[test]
fn the_switchs_counters_add_up_with_the_hosts() {
    let Some(bin) = common::can_run_on(
        "lagkit switch lab",
        lagkit_lab::topology::SwitchKind::Lagkit,
    ) else {
        return;
    };
    let mut topo = Topology::parse(TOPOLOGY, "sw.toml", "sw").unwrap();
    topo.name = format!("lsw-{}", std::process::id());
    let root = std::env::temp_dir().join(format!("lklab-{}", topo.name));
    let ropts = common::run_options(bin, &root);
    let r = run_once(&topo, &ropts).expect("lab up");
    let left: Vec<String> = netns_list()
        .into_iter()
        .filter(|n| n.starts_with(&format!("lklab-{}-", topo.name)))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    assert!(lagkit_lab::down(&root, &topo.name).was_noop());
    let procs = common::procs_with(&root.to_string_lossy());
    assert!(procs.is_empty(), "processes left: {procs:?}");
    let _ = std::fs::remove_dir_all(&root);
    assert!(r.error.is_none(), "run failed: {:?}", r.error);

    // The channels formed on the switch, LACP active against passive.
    let start = r.lacp_start.as_ref().unwrap();
    assert_eq!(start.channels.len(), 2, "{start:?}");
    assert!(start.all_ok(), "{start:?}");
    assert!(start.channels.iter().all(|c| c.status.ends_with("lacp")));

    let m = r.measurement.as_ref().unwrap();
    assert_eq!(m.switch_ports.len(), 4, "{:?}", m.switch_ports);
    let w = r.workload.as_ref().unwrap();
    assert!(w.forward_mbps > 10.0 && w.reverse_mbps > 10.0, "{w:?}");
    let mut sent_by = [0u64; 2];
    let mut sent_to = [0u64; 2];
    for (i, host) in ["h1", "h2"].into_iter().enumerate() {
        let b = m.bonds.iter().find(|b| b.host == host).unwrap();
        for member in &b.members {
            let p = port_of(&topo, m, host, &member.name);
            eprintln!(
                "{host}/{} {p:?} host tx {} rx {}",
                member.name, member.tx_packets, member.rx_packets
            );
            // What the host sent on this member, the switch took in (its
            // own LACPDUs apart); what the switch sent out of the port,
            // the host took in.
            let data_in = p.rx_frames.saturating_sub(p.control);
            assert!(
                close(data_in, member.tx_packets),
                "{host}/{}: sent {} frames, the switch's {} received {data_in}",
                member.name,
                member.tx_packets,
                p.port
            );
            assert!(
                close(p.tx_frames, member.rx_packets),
                "{host}/{}: received {} frames, the switch's {} sent {}",
                member.name,
                member.rx_packets,
                p.port,
                p.tx_frames
            );
            assert_eq!(p.dropped, 0, "{p:?}");
            sent_by[i] += data_in;
            sent_to[i] += p.tx_frames;
        }
    }
    // Each frame one host sent left towards the other once: no copies, no
    // floods of unknown unicast (the hosts' MACs are learned before the
    // run; what may flood is a broadcast, to the other host's two ports).
    let flooded: u64 = m.switch_ports.iter().map(|p| p.flooded).sum();
    assert!(
        flooded <= 50,
        "{flooded} frames flooded: {:?}",
        m.switch_ports
    );
    // Frames, not segments: GSO frames cross the switch whole.
    assert!(sent_by[0] > 1000 && sent_by[1] > 1000, "{sent_by:?}");
    for (from, to) in [(0, 1), (1, 0)] {
        assert!(
            sent_to[to] <= sent_by[from] + flooded && sent_to[to] + 10 >= sent_by[from],
            "h{} sent {} frames into the switch, h{} got {} from it ({flooded} flooded)",
            from + 1,
            sent_by[from],
            to + 1,
            sent_to[to]
        );
    }
}
