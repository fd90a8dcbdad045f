//! A flood on one port of `lagkit switch` must not starve the others: a
//! third access port sends random-source-MAC broadcast and unknown-unicast
//! frames as fast as one thread can, and meanwhile ping (10 ms apart) and
//! a TCP transfer between two hosts on the other ports are measured
//! against the same transfer without the flood. And `storm-control
//! broadcast level pps N` drops a broadcast flood's excess and counts it.
//! Root only; each test skips with a message otherwise. Every namespace,
//! veth and process is removed on drop, also when a test fails.
//!
//! The TCP transfer is paced (300 Mbit/s, segments of the MTU: the hosts'
//! TSO/GSO are off, so the switch carries some 25,000 frames a second of
//! it): on a 2-core machine the flooding thread takes one core, so an
//! unpaced transfer would measure the cores left, not the switch. The
//! unpaced ratio is printed for information.
//!
//! Run: `cargo test -p lagkit --test switch_flood -- --nocapture`.

mod common;

use common::switch::{
    flags, port_counters, show, show_text, start, start_switch, switch_ports, tmpdir, write,
};
use common::{Daemon, TmpDir};

use lagkit_testnet::{flood_random, parse_ping, wait_until, FloodCount, FloodFrames, Lab, Ping};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The paced transfer's rate, bits per second.
const TCP_RATE: u64 = 300_000_000;
/// How long each measurement runs.
const MEASURE: Duration = Duration::from_secs(3);

/// A switch with host `a` on Gi1/1, host `b` on Gi1/2 and a flooder's
/// namespace on Gi1/3. Dropped in field order: the switch, the
/// namespaces, the files.
struct Rig {
    /// `lagkit up` in `b` when `b` is a bond.
    _bond: Option<Daemon>,
    _switch: Daemon,
    _lab: Lab,
    _dir: TmpDir,
    sw: String,
    a: String,
    b: String,
    fl: String,
    net: u8,
}

impl Rig {
    /// `b` is a plain host, or with `bond` a lagkit LACP bond of two
    /// members on Gi1/2 and Gi1/4 (port-channel 1, `lacp rate fast`).
    fn new(test: &str, net: u8, gi3: &str, bond: bool) -> Option<Rig> {
        let mut lab = Lab::alone(test)?;
        let sw = lab.netns();
        let (a, b, fl) = (lab.netns(), lab.netns(), lab.netns());
        lab.veth(&a, "eth0", &sw, "p1");
        lab.veth(&fl, "eth0", &sw, "p3");
        let hosts: &[(&String, u8)] = if bond {
            lab.veth(&b, "eth1", &sw, "p2");
            lab.veth(&b, "eth2", &sw, "p4");
            lab.nsexec(&b, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
            &[(&a, 1)]
        } else {
            lab.veth(&b, "eth0", &sw, "p2");
            &[(&a, 1), (&b, 2)]
        };
        for &(ns, ip) in hosts {
            lab.nsexec(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
            // Frames of the MTU, not 64 KB super-frames: the transfer is
            // then as many frames as a wire carries.
            lab.nsexec(
                ns,
                &[
                    "ethtool", "-K", "eth0", "tso", "off", "gso", "off", "gro", "off",
                ],
            );
            lab.host(ns, "eth0", &format!("10.{net}.0.{ip}/24"));
        }
        lab.nsexec(&fl, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        lab.sh(&["ip", "-n", &fl, "link", "set", "eth0", "up"]);
        let dir = TmpDir(tmpdir(test));
        let access = "switchport access vlan 1";
        let (ports, config): (&[&str], String) = if bond {
            (
                &["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3", "Gi1/4=p4"],
                format!("hostname flood\ninterface gigabitethernet 1/1\n {access}\ninterface gigabitethernet 1/3\n {access}\n{gi3}interface range gigabitethernet 1/2 , gigabitethernet 1/4\n channel-group 1 mode active\n lacp rate fast\n"),
            )
        } else {
            (
                &["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3"],
                format!("hostname flood\ninterface range gigabitethernet 1/1 - 2\n {access}\ninterface gigabitethernet 1/3\n {access}\n{gi3}"),
            )
        };
        let devs: Vec<&str> = ports.iter().filter_map(|p| p.split('=').nth(1)).collect();
        switch_ports(&lab, &sw, &devs, None);
        let switch = start_switch(&sw, &dir.0, &config, ports);
        let bond_daemon = bond.then(|| {
            let toml = format!(
                "name = \"bond0\"\nmembers = [\"eth1\", \"eth2\"]\naddress = [\"10.{net}.0.2/24\"]\nmode = \"802.3ad\"\nlacp_rate = \"fast\"\n"
            );
            let cfg = write(&dir.0, "bond.toml", &toml);
            let d = start(&b, &["up", cfg.to_str().unwrap()], &dir.0.join("bond.log"));
            wait_until("Po1 bundles both members", Duration::from_secs(20), || {
                flags(&sw, 1) == ["P", "P"]
            });
            d
        });
        let rig = Rig {
            _bond: bond_daemon,
            _switch: switch,
            _lab: lab,
            _dir: dir,
            sw,
            a,
            b,
            fl,
            net,
        };
        let to_b = rig.addr(2);
        wait_until(
            "a reaches b through the switch",
            Duration::from_secs(10),
            || ping_at(&rig.a, &to_b, 1, "0.2").received == 1,
        );
        Some(rig)
    }

    fn addr(&self, host: u8) -> String {
        format!("10.{}.0.{host}", self.net)
    }

    /// Starts flooding from Gi1/3's host in a thread; stopped (and its
    /// count returned) by [`Flood::stop`], or at the latest after 20 s.
    fn flood(&self, frames: FloodFrames) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let (ns, s) = (self.fl.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            flood_random(&ns, "eth0", frames, &s, Duration::from_secs(20))
        });
        Flood { stop, thread }
    }

    /// Frames the switch read on port `port`.
    fn rx_frames(&self, port: &str) -> u64 {
        port_counters(&self.sw, port)["rx_frames"]
            .as_u64()
            .unwrap_or(0)
    }
}

struct Flood {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<FloodCount>,
}

impl Flood {
    fn stop(self) -> FloodCount {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("flood thread")
    }
}

/// `ping -c COUNT -i INTERVAL DST` in `ns`, parsed (loss is no error).
fn ping_at(ns: &str, dst: &str, count: u32, interval: &str) -> Ping {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "ping", "-n", "-q", "-W", "1"])
        .args(["-i", interval, "-c", &count.to_string(), dst])
        .output()
        .expect("ping runs");
    parse_ping(&String::from_utf8_lossy(&out.stdout))
}

/// Bytes a TCP transfer from `client_ns` to `server` (in `server_ns`)
/// delivers in `d`, the sender paced at `rate` bits per second (`None`:
/// as fast as it can).
fn tcp_within(
    server_ns: &str,
    server: &str,
    client_ns: &str,
    rate: Option<u64>,
    d: Duration,
) -> u64 {
    use lagkit_dataplane::netns::run_in;
    let server: SocketAddr = server.parse().unwrap();
    let l = run_in(server_ns, || TcpListener::bind(server))
        .expect("enter namespace")
        .expect("bind");
    let srv = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let (mut buf, mut n) = (vec![0u8; 1 << 16], 0u64);
        // Counted from the first byte, for `d`.
        let mut end: Option<Instant> = None;
        loop {
            if end.is_some_and(|e| Instant::now() >= e) {
                break;
            }
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    end.get_or_insert_with(|| Instant::now() + d);
                    n += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => break,
            }
        }
        n
    });
    let mut s = run_in(client_ns, || {
        TcpStream::connect_timeout(&server, Duration::from_secs(5))
    })
    .expect("enter namespace")
    .expect("connect");
    s.set_nonblocking(true).unwrap();
    let buf = vec![0x5au8; 16 << 10];
    let start = Instant::now();
    let end = start + d + Duration::from_millis(500);
    let mut sent = 0u64;
    while Instant::now() < end && !srv.is_finished() {
        let due = rate.map_or(u64::MAX, |r| {
            (start.elapsed().as_secs_f64() * r as f64 / 8.0) as u64
        });
        if sent >= due {
            std::thread::sleep(Duration::from_micros(500));
            continue;
        }
        let want = (due - sent).min(buf.len() as u64) as usize;
        match s.write(&buf[..want]) {
            Ok(k) => sent += k as u64,
            Err(_) => std::thread::sleep(Duration::from_micros(500)),
        }
    }
    let n = srv.join().expect("server");
    drop(s);
    n
}

/// Ping 10 ms apart and a paced TCP transfer, side by side, for
/// [`MEASURE`]: (ping, bytes delivered).
fn measure(rig: &Rig, port: u16) -> (Ping, u64) {
    let (a, dst) = (rig.a.clone(), rig.addr(2));
    let count = (MEASURE.as_millis() / 10) as u32;
    let pinger = std::thread::spawn(move || ping_at(&a, &dst, count, "0.01"));
    let server = format!("{}:{port}", rig.addr(2));
    let bytes = tcp_within(&rig.b, &server, &rig.a, Some(TCP_RATE), MEASURE);
    (pinger.join().expect("ping thread"), bytes)
}

fn loss(p: &Ping) -> f64 {
    1.0 - p.received as f64 / p.transmitted.max(1) as f64
}

#[test]
fn a_flood_on_one_port_starves_neither_ping_nor_tcp_between_the_others() {
    let Some(rig) = Rig::new("switch_flood", 93, "", false) else {
        return;
    };
    let (quiet_ping, quiet) = measure(&rig, 5001);
    let unpaced_quiet = tcp_within(
        &rig.b,
        &format!("{}:5002", rig.addr(2)),
        &rig.a,
        None,
        Duration::from_secs(1),
    );

    let before = rig.rx_frames("GigabitEthernet1/3");
    let flood = rig.flood(FloodFrames::new(64, 0x5eed, false));
    wait_until("the switch reads the flood", Duration::from_secs(5), || {
        rig.rx_frames("GigabitEthernet1/3") > before + 10_000
    });
    let t0 = Instant::now();
    let read0 = rig.rx_frames("GigabitEthernet1/3");
    let (ping, flooded) = measure(&rig, 5003);
    let unpaced_flooded = tcp_within(
        &rig.b,
        &format!("{}:5004", rig.addr(2)),
        &rig.a,
        None,
        Duration::from_secs(1),
    );
    let read = rig.rx_frames("GigabitEthernet1/3") - read0;
    let took = t0.elapsed();
    let sent = flood.stop();

    let ratio = flooded as f64 / quiet.max(1) as f64;
    let c = port_counters(&rig.sw, "GigabitEthernet1/3");
    eprintln!(
        "flood: {:.0} frames/s sent, the switch read {:.0}/s; ping loss {:.2}% (quiet {:.2}%); paced TCP {:.0} vs {:.0} Mbit/s quiet: ratio {ratio:.3}; unpaced TCP {:.0} vs {:.0} Mbit/s quiet: ratio {:.3}; learn_limited {}, fdb entries {}",
        sent.rate(),
        read as f64 / took.as_secs_f64(),
        100.0 * loss(&ping),
        100.0 * loss(&quiet_ping),
        flooded as f64 * 8.0 / MEASURE.as_secs_f64() / 1e6,
        quiet as f64 * 8.0 / MEASURE.as_secs_f64() / 1e6,
        unpaced_flooded as f64 * 8.0 / 1e6,
        unpaced_quiet as f64 * 8.0 / 1e6,
        unpaced_flooded as f64 / unpaced_quiet.max(1) as f64,
        c["learn_limited"],
        show(&rig.sw, &["mac", "address-table"]).map_or(0, |m| m["entries"].as_array().map_or(0, Vec::len)),
    );
    assert!(sent.sent > 100_000, "the flooder sent {sent:?}");
    assert!(quiet_ping.transmitted > 0 && ping.transmitted > 0);
    assert!(
        loss(&ping) <= 0.01,
        "ping lost {:.2}% during the flood",
        100.0 * loss(&ping)
    );
    assert!(
        ratio >= 0.9,
        "TCP reached {ratio:.3} of its quiet rate during the flood"
    );
    // Learning was bounded: the flooder's port was refused most of its
    // new addresses, and said so.
    assert!(c["learn_limited"].as_u64().unwrap_or(0) > 0, "{c}");
}

#[test]
fn storm_control_drops_the_broadcast_excess_and_counts_it() {
    let Some(rig) = Rig::new(
        "switch_flood_storm",
        94,
        " storm-control broadcast level pps 1k\n",
        false,
    ) else {
        return;
    };
    let run = show_text(&rig.sw, &["running-config"]);
    assert!(
        run.contains(" storm-control broadcast level pps 1k\n"),
        "{run}"
    );
    let to_a = |sw: &str| {
        port_counters(sw, "GigabitEthernet1/1")["tx_frames"]
            .as_u64()
            .unwrap_or(0)
    };
    let out0 = to_a(&rig.sw);
    let t0 = Instant::now();
    let flood = rig.flood(FloodFrames::new(64, 0xb0ad, true));
    wait_until(
        "storm control drops the excess",
        Duration::from_secs(5),
        || {
            port_counters(&rig.sw, "GigabitEthernet1/3")["storm_drops"]["bcast"]
                .as_u64()
                .unwrap_or(0)
                > 50_000
        },
    );
    // Once a whole second has passed, `Current` shows what it offered.
    let mut sc = serde_json::Value::Null;
    wait_until("a whole second measured", Duration::from_secs(5), || {
        sc = show(&rig.sw, &["storm-control"]).unwrap_or_default();
        sc["ports"][0]["current"]
            .as_str()
            .is_some_and(|c| c != "0 pps")
    });
    let text = show_text(&rig.sw, &["storm-control"]);
    let sent = flood.stop();
    let secs = t0.elapsed().as_secs_f64();
    let passed = to_a(&rig.sw) - out0;
    let c = port_counters(&rig.sw, "GigabitEthernet1/3");
    eprintln!(
        "broadcast flood {:.0} frames/s for {secs:.1} s: {passed} reached Gi1/1, {} dropped by storm control\n{text}",
        sent.rate(),
        c["storm_drops"]["bcast"]
    );
    // At most 1000 a second (each started second may pass its 1000),
    // plus the few frames of the ping that set the rig up.
    let most = 1000.0 * (secs.ceil() + 1.0) + 50.0;
    assert!(
        (passed as f64) <= most,
        "{passed} passed in {secs:.1} s, more than {most}"
    );
    assert!(passed >= 1000, "the level's own frames pass: {passed}");
    assert_eq!(c["drops"]["stormcontrol"], c["storm_drops"]["bcast"], "{c}");
    let row = &sc["ports"][0];
    assert_eq!(row["port"], "Gi1/3", "{sc}");
    assert_eq!(row["class"], "broadcast");
    assert_eq!(row["upper"], "1k pps");
    assert!(row["dropped"].as_u64().unwrap_or(0) > 50_000, "{sc}");
    assert!(text.contains("Gi1/3") && text.contains("1k pps"), "{text}");
    // Unicast between the others still flows.
    let p = ping_at(&rig.a, &rig.addr(2), 20, "0.01");
    assert_eq!(p.received, 20, "{p:?}");
}

#[test]
fn a_flood_does_not_starve_a_bond_behind_a_port_channel() {
    let Some(rig) = Rig::new("switch_flood_bond", 95, "", true) else {
        return;
    };
    let before = rig.rx_frames("GigabitEthernet1/3");
    let flood = rig.flood(FloodFrames::new(64, 0xb0d, false));
    wait_until("the switch reads the flood", Duration::from_secs(5), || {
        rig.rx_frames("GigabitEthernet1/3") > before + 10_000
    });
    let (ping, bytes) = measure(&rig, 5005);
    let sent = flood.stop();
    let mbps = bytes as f64 * 8.0 / MEASURE.as_secs_f64() / 1e6;
    eprintln!(
        "flood {:.0} frames/s; host to bond: ping loss {:.2}%, paced TCP {mbps:.0} of {} Mbit/s; Po1 {:?}",
        sent.rate(),
        100.0 * loss(&ping),
        TCP_RATE / 1_000_000,
        flags(&rig.sw, 1)
    );
    assert!(
        loss(&ping) <= 0.01,
        "ping lost {:.2}% during the flood",
        100.0 * loss(&ping)
    );
    assert!(
        mbps >= 0.9 * TCP_RATE as f64 / 1e6,
        "TCP to the bond reached {mbps:.0} Mbit/s"
    );
    assert_eq!(flags(&rig.sw, 1), ["P", "P"], "the channel stayed up");
}
