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

/// The protocols (hex, as `/proc/net/packet` has them) of the packet
/// sockets in namespace `ns`, sorted.
fn packet_sockets(lab: &Lab, ns: &str) -> Vec<String> {
    let text = lab.nsexec(ns, &["cat", "/proc/net/packet"]);
    let mut v: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_string))
        .collect();
    v.sort();
    v
}

/// Runs 100 pings and 50 UDP datagrams from h1 to the bond under
/// `engine`: what the counters moved, and `show etherchannel summary`.
fn traffic_under(engine: &str, net: u8) -> Option<(Counts, Value)> {
    let rig = Rig::new(&format!("switch_engines_{engine}"), net, engine)?;
    let dst = format!("10.0.{net}.2");
    // ARP resolved both ways first: what follows is unicast only.
    let warm = ping(&rig.h1, &dst, 2);
    assert_eq!(warm.received, 2, "{warm:?}");
    if engine == "bpf" {
        // The kernel forwards: the switch's sockets are bound to the
        // control protocols (slow protocols, 802.2), one of each per
        // port, so no data frame visits them; none taps every protocol.
        let protocols = packet_sockets(&rig.lab, &rig.sw);
        assert_eq!(
            protocols,
            ["0004", "0004", "0004", "8809", "8809", "8809"],
            "the switch's packet sockets' protocols"
        );
    }
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
