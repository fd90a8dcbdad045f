//! `lagkit switch`'s two engines as a user sees them: the kernel's (tc BPF
//! on every port) and the daemon's loop. The same deterministic traffic
//! through each must be forwarded once and read the same in `show
//! interfaces counters` and `show etherchannel summary`; a member pulled
//! from a channel under the BPF engine has its buckets moved in the kernel
//! in the same wake-up as the core's decision. Root only; every namespace,
//! veth and process is removed on drop, also when a test fails.

mod common;

use common::switch::{bond_ports, show, show_text, start, start_switch_engine, tmpdir, write};
use common::{Daemon, TmpDir};
use lagkit_testnet::{ping, wait_until, Lab};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// A plain host (h1, 10.0.NET.1 on eth0) on the switch's access port
/// Gi1/1, and a lagkit 802.3ad bond (h2, 10.0.NET.2 over eth1, eth2) on
/// the LACP port-channel 1 (Gi1/2, Gi1/3), all in VLAN 10; IPv6 off
/// everywhere, so nothing but what a test sends crosses the switch apart
/// from LACPDUs.
struct Rig {
    // Dropped in this order: the daemons stop before their namespaces go.
    _bond: Daemon,
    _switch: Daemon,
    dir: TmpDir,
    sw: String,
    h1: String,
    h2: String,
    lab: Lab,
}

const SWITCH: &str = "hostname engines\nport-channel load-balance src-dst-ip\ninterface range gi1/1 - 3\n switchport access vlan 10\ninterface range gi1/2 - 3\n channel-group 1 mode active\n lacp rate fast\ninterface port-channel 1\n switchport access vlan 10\n";

fn no_ipv6(lab: &Lab, ns: &str) {
    for k in ["all", "default"] {
        lab.nsexec(
            ns,
            &[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{k}.disable_ipv6=1"),
            ],
        );
    }
}

impl Rig {
    fn new(test: &str, net: u8, engine: &str) -> Option<Rig> {
        let mut lab = Lab::new(test)?;
        let (sw, h1, h2) = (lab.netns(), lab.netns(), lab.netns());
        for ns in [&sw, &h1, &h2] {
            no_ipv6(&lab, ns);
        }
        lab.veth(&h1, "eth0", &sw, "p1");
        lab.veth(&h2, "eth1", &sw, "p2");
        lab.veth(&h2, "eth2", &sw, "p3");
        for p in ["p1", "p2", "p3"] {
            lab.sh(&["ip", "-n", &sw, "link", "set", p, "up"]);
        }
        lab.host(&h1, "eth0", &format!("10.0.{net}.1/24"));
        let dir = TmpDir(tmpdir(&format!("engines-{net}")));
        let d = start_switch_engine(
            &sw,
            &dir.0,
            SWITCH,
            &["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3"],
            Some(engine),
        );
        let bond = write(
            &dir.0,
            "h2.toml",
            &format!("name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\naddress = [\"10.0.{net}.2/24\"]\n"),
        );
        let b = start(&h2, &["up", bond.to_str().unwrap()], &dir.0.join("h2.log"));
        let rig = Rig {
            _bond: b,
            _switch: d,
            dir,
            sw,
            h1,
            h2,
            lab,
        };
        wait_until(
            "both members bundled (P) and the bond aggregating 2 ports",
            Duration::from_secs(30),
            || flags_of(&rig.sw) == ["P", "P"] && bond_ports(&rig.h2) == 2,
        );
        let f = show(&rig.sw, &["platform", "forwarding"]).expect("platform forwarding");
        assert_eq!(f["engine"], engine, "{f}");
        Some(rig)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("switch.log")).unwrap_or_default()
    }
}

/// Per port (in order): [unicast in, unicast out, octets in, octets out
/// and group frames in] (the last two on Gi1/1 only).
type Counts = Vec<(String, [u64; 4])>;

fn flags_of(sw: &str) -> Vec<String> {
    common::switch::flags(sw, 1)
}

/// Each port's unicast frames and octets in and out, and h1's port's
/// multicast and broadcast frames: what the traffic below moves (LACPDUs
/// are multicast on the channel's members, and time-dependent).
fn unicast(sw: &str) -> Counts {
    let c = show(sw, &["interfaces", "counters"]).expect("counters");
    c["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .map(|p| {
            let n = |k: &str, f: &str| p[k][f].as_u64().unwrap_or(0);
            let mut v = [n("rx_cast", "ucast"), n("tx_cast", "ucast"), 0, 0];
            if p["port"] == "GigabitEthernet1/1" {
                v[2] = p["rx_bytes"].as_u64().unwrap_or(0);
                v[3] = p["tx_bytes"].as_u64().unwrap_or(0)
                    + n("rx_cast", "mcast")
                    + n("rx_cast", "bcast");
            }
            (p["port"].as_str().unwrap_or("").to_string(), v)
        })
        .collect()
}

fn delta(a: &Counts, b: &Counts) -> Counts {
    a.iter()
        .zip(b)
        .map(|((n, x), (_, y))| {
            let mut d = [0; 4];
            for i in 0..4 {
                d[i] = y[i] - x[i];
            }
            (n.clone(), d)
        })
        .collect()
}

/// Runs 100 pings and 50 UDP datagrams from h1 to the bond under
/// `engine`: what the counters moved, and `show etherchannel summary`.
fn traffic_under(engine: &str, net: u8) -> Option<(Counts, Value)> {
    let rig = Rig::new(&format!("switch_engines_{engine}"), net, engine)?;
    let dst = format!("10.0.{net}.2");
    // ARP resolved both ways first: what follows is unicast only.
    let warm = ping(&rig.h1, &dst, 2);
    assert_eq!(warm.received, 2, "{warm:?}");
    let before = unicast(&rig.sw);
    let p = ping(&rig.h1, &dst, 100);
    assert_eq!((p.received, p.duplicates), (100, 0), "{engine}: {p:?}");
    let after = unicast(&rig.sw);
    let d = delta(&before, &after);
    let summary = show(&rig.sw, &["etherchannel", "summary"]).expect("summary");
    Some((d, summary))
}

#[test]
fn both_engines_forward_once_and_count_the_same_traffic_alike() {
    let Some((bpf, sum_bpf)) = traffic_under("bpf", 71) else {
        return;
    };
    let Some((user, sum_user)) = traffic_under("userspace", 71) else {
        return;
    };
    // 100 echo requests in on Gi1/1 and out on the channel, 100 replies
    // back: each once.
    let gi1 = &bpf[0].1;
    assert_eq!((gi1[0], gi1[1]), (100, 100), "{bpf:?}");
    assert_eq!(gi1[2], 100 * 98, "the requests' octets: {bpf:?}");
    let (rx, tx): (u64, u64) = bpf[1..]
        .iter()
        .fold((0, 0), |(r, t), (_, v)| (r + v[0], t + v[1]));
    assert_eq!(
        (rx, tx),
        (100, 100),
        "the channel carried each once: {bpf:?}"
    );
    // What the switch decided (which member sends each frame) and what it
    // counted alike; which member the bond sends its replies on is the
    // bond's choice (the order its members joined), so only their sum is
    // compared.
    let switch_side = |c: &Counts| {
        let mut v = c.clone();
        let rx: u64 = v[1..].iter().map(|(_, x)| x[0]).sum();
        for (_, x) in &mut v[1..] {
            x[0] = 0;
        }
        (v, rx)
    };
    assert_eq!(
        switch_side(&bpf),
        switch_side(&user),
        "the same counters under both engines: {bpf:?} vs {user:?}"
    );
    assert_eq!(sum_bpf, sum_user, "the same etherchannel summary");
}

/// The port carrying h1's requests towards the bond (the one whose
/// unicast out count moves).
fn carrying(sw: &str, h1: &str, dst: &str) -> usize {
    let before = unicast(sw);
    let p = ping(h1, dst, 10);
    assert_eq!(p.received, 10, "{p:?}");
    let d = delta(&before, &unicast(sw));
    (1..3)
        .find(|&i| d[i].1[1] >= 10)
        .expect("a member carried the requests")
}

/// Timestamps (µs since midnight) of the log lines containing `what`.
fn times(log: &str, what: &str) -> Vec<u64> {
    log.lines()
        .filter(|l| l.contains(what))
        .filter_map(|l| {
            let t = l.split_whitespace().next()?;
            let hms = t.split('T').nth(1)?.trim_end_matches('Z');
            let mut it = hms.split(':');
            let (h, m, s): (u64, u64, f64) = (
                it.next()?.parse().ok()?,
                it.next()?.parse().ok()?,
                it.next()?.parse().ok()?,
            );
            Some((h * 3600 + m * 60) * 1_000_000 + (s * 1e6).round() as u64)
        })
        .collect()
}

#[test]
fn a_pulled_member_leaves_the_kernels_plan_in_the_same_wake_up() {
    let Some(rig) = Rig::new("switch_engines_failover", 72, "bpf") else {
        return;
    };
    let dst = "10.0.72.2";
    let port = carrying(&rig.sw, &rig.h1, dst);
    let member = ["", "eth1", "eth2"][port];
    // 3 s of pings 10 ms apart; the member carrying them is pulled 1 s in.
    let pinger = Command::new("ip")
        .args([
            "netns", "exec", &rig.h1, "ping", "-n", "-q", "-i", "0.01", "-c", "300", "-W", "1", dst,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("ping");
    std::thread::sleep(Duration::from_secs(1));
    rig.lab
        .sh(&["ip", "-n", &rig.h2, "link", "set", member, "down"]);
    let out = pinger.wait_with_output().expect("ping ends");
    let p = lagkit_testnet::parse_ping(&String::from_utf8_lossy(&out.stdout));
    wait_until(
        "the pulled member is down (D)",
        Duration::from_secs(5),
        || flags_of(&rig.sw).iter().filter(|f| *f == "P").count() == 1,
    );
    let log = rig.log();
    let port_name = format!("port=GigabitEthernet1/{}", port + 1);
    let unbundled: Vec<u64> = times(&log, "member unbundled")
        .into_iter()
        .zip(log.lines().filter(|l| l.contains("member unbundled")))
        .filter(|(_, l)| l.contains(&port_name))
        .map(|(t, _)| t)
        .collect();
    let published = times(&log, "kernel plan published");
    let at = *unbundled
        .first()
        .unwrap_or_else(|| panic!("no unbundling of {port_name}:\n{log}"));
    let next = published
        .iter()
        .find(|&&t| t >= at)
        .unwrap_or_else(|| panic!("no plan published after the unbundling:\n{log}"));
    eprintln!(
        "member pulled: {} of {} pings lost, plan published {} µs after the core's decision",
        p.transmitted - p.received,
        p.transmitted,
        next - at
    );
    assert!(
        next - at <= 1_000,
        "published {} µs after the decision:\n{log}",
        next - at
    );
    assert_eq!(p.duplicates, 0, "{p:?}");
    assert!(
        p.transmitted - p.received <= 3,
        "a pulled member cost more than its frames in flight: {p:?}"
    );
    let text = show_text(&rig.sw, &["platform", "forwarding"]);
    assert!(text.contains("Forwarding engine: bpf"), "{text}");
}

/// The ports sending straight to their veth peer, as `show platform
/// forwarding` says.
fn direct_ports(sw: &str) -> Option<u64> {
    show(sw, &["platform", "forwarding"]).and_then(|f| f["direct_ports"].as_u64())
}

/// What a port's root qdisc sent: (packets, bytes).
fn qdisc_sent(lab: &Lab, ns: &str, dev: &str) -> (u64, u64) {
    let out = lab.nsexec(ns, &["tc", "-s", "-j", "qdisc", "show", "dev", dev, "root"]);
    let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    let q = &v[0];
    (
        q["packets"].as_u64().unwrap_or(0),
        q["bytes"].as_u64().unwrap_or(0),
    )
}

#[test]
fn a_port_shaped_after_start_sends_through_its_qdisc_and_straight_again_once_unshaped() {
    let Some(rig) = Rig::new("switch_engines_direct", 73, "bpf") else {
        return;
    };
    // Three veths with their peers in the hosts' namespaces, no qdisc.
    assert_eq!(direct_ports(&rig.sw), Some(3));
    let text = show_text(&rig.sw, &["platform", "forwarding"]);
    assert!(
        text.contains("Sending straight to their veth peer: 3 of 3 ports"),
        "{text}"
    );
    let (h1, bond) = ("10.0.73.1", "10.0.73.2");
    let p = ping(&rig.h2, h1, 20);
    assert_eq!((p.received, p.duplicates), (20, 0), "straight: {p:?}");
    // Shaped while the switch runs, as the lab shapes a switch's ports.
    rig.lab.sh(&[
        "tc", "-n", &rig.sw, "qdisc", "replace", "dev", "p1", "root", "tbf", "rate", "100mbit",
        "burst", "64kb", "latency", "50ms",
    ]);
    wait_until(
        "the shaped port sending through its qdisc",
        Duration::from_secs(5),
        || direct_ports(&rig.sw) == Some(2),
    );
    let before = qdisc_sent(&rig.lab, &rig.sw, "p1");
    let p = ping(&rig.h2, h1, 20);
    assert_eq!((p.received, p.duplicates), (20, 0), "shaped: {p:?}");
    let p2 = ping(&rig.h1, bond, 20);
    assert_eq!((p2.received, p2.duplicates), (20, 0), "to the bond: {p2:?}");
    let after = qdisc_sent(&rig.lab, &rig.sw, "p1");
    // Each echo request from h2 and reply to h1 left by p1: through tbf.
    assert!(
        after.0 >= before.0 + 40,
        "the tbf on p1 sent {before:?} -> {after:?}: frames went around it\n{}",
        rig.log()
    );
    rig.lab
        .sh(&["tc", "-n", &rig.sw, "qdisc", "del", "dev", "p1", "root"]);
    wait_until(
        "the port straight again once its qdisc is gone",
        Duration::from_secs(5),
        || direct_ports(&rig.sw) == Some(3),
    );
    let p = ping(&rig.h2, h1, 20);
    assert_eq!((p.received, p.duplicates), (20, 0), "straight again: {p:?}");
    // A capture on p1 (a packet socket for every protocol) sees what p1
    // sends only through its transmit path.
    let tap =
        lagkit_dataplane::netns::run_in(&rig.sw, || lagkit_sys::packet::raw_packet_socket("p1"))
            .expect("enter namespace")
            .expect("a packet socket on p1");
    wait_until(
        "the captured port sending through its transmit path",
        Duration::from_secs(2),
        || direct_ports(&rig.sw) == Some(2),
    );
    drop(tap);
    wait_until(
        "the port straight again once the capture ends",
        Duration::from_secs(2),
        || direct_ports(&rig.sw) == Some(3),
    );
    let log = rig.log();
    assert!(log.contains("sends through its transmit path"), "{log}");
}
