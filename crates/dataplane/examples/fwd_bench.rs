//! Forwarder throughput and CPU cost, as a ratio to a bare veth measured in
//! the same run.
//!
//! Topology (all in fresh namespaces, removed at exit or Ctrl-C):
//! - bond: A and B joined by k veth pairs; a lagkit forwarder (TAP `lk0` +
//!   AF_PACKET members) on each side; 10.77.0.1 <-> 10.77.0.2.
//! - bare: C and D joined by one veth pair; 10.78.0.1 <-> 10.78.0.2.
//!
//! iperf3 runs unshaped, then with `tbf rate 1gbit burst 256kb latency
//! 50ms` on every member veth (both ends) and on the bare veth. Reported:
//! Gbit/s, the ratio to the bare link (shaped: to k x bare), the forwarders'
//! CPU seconds per GB (getrusage of this process, which runs both
//! forwarders) and the whole machine's busy CPU seconds per GB (/proc/stat).
//!
//! Run as root: `cargo run --release -p lagkit-dataplane --example fwd_bench -- [-P 8] [-t 5] [-k 2] [-r 1]`

#![forbid(unsafe_code)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::process::Command;
use std::time::Duration;

use common::*;
use lagkit_dataplane::{netns, Device, Offloads};

struct Args {
    parallel: u32,
    seconds: u32,
    members: usize,
    reps: u32,
}

fn parse_args() -> Args {
    let mut a = Args {
        parallel: 8,
        seconds: 5,
        members: 2,
        reps: 1,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < v.len() {
        let val = v.get(i + 1).and_then(|s| s.parse::<u32>().ok());
        match (v[i].as_str(), val) {
            ("-P", Some(n)) => a.parallel = n.max(1),
            ("-t", Some(n)) => a.seconds = n.max(1),
            ("-k", Some(n)) => a.members = (n as usize).clamp(1, 8),
            ("-r", Some(n)) => a.reps = n.clamp(1, 9),
            (other, _) => {
                eprintln!("unknown or incomplete argument {other:?}; usage: fwd_bench [-P streams] [-t seconds] [-k members] [-r repetitions]");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    a
}

/// Busy and total jiffies of all CPUs from /proc/stat.
fn cpu_busy_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = s.lines().next().unwrap_or("");
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: f64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0.0) + v.get(4).copied().unwrap_or(0.0);
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(-1)
        .max(1) as f64;
    (total - idle) / hz
}

/// User + system CPU seconds of this process (all its threads).
fn self_cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    use nix::sys::time::TimeValLike;
    let Ok(ru) = getrusage(UsageWho::RUSAGE_SELF) else {
        return 0.0;
    };
    let tv = |t: nix::sys::time::TimeVal| t.num_microseconds() as f64 / 1e6;
    tv(ru.user_time()) + tv(ru.system_time())
}

struct Run {
    gbps: f64,
    bytes: f64,
    retrans: u64,
    fwd_cpu: f64,
    sys_cpu: f64,
}

fn iperf(client_ns: &str, server: &str, a: &Args) -> Run {
    let mut tries = 0;
    loop {
        let (c0, s0) = (self_cpu_seconds(), cpu_busy_seconds());
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                client_ns,
                "iperf3",
                "-c",
                server,
                "-P",
                &a.parallel.to_string(),
                "-t",
                &a.seconds.to_string(),
                "-J",
            ])
            .output()
            .expect("run iperf3");
        let (c1, s1) = (self_cpu_seconds(), cpu_busy_seconds());
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "iperf3 output is not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        if let Some(err) = j.get("error") {
            // The readiness probe may still occupy the server for a moment.
            if err.as_str().is_some_and(|e| e.contains("busy")) && tries < 50 {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            panic!("iperf3: {err}");
        }
        return parse_run(&j, c1 - c0, s1 - s0);
    }
}

fn parse_run(j: &serde_json::Value, fwd_cpu: f64, sys_cpu: f64) -> Run {
    let recv = &j["end"]["sum_received"];
    Run {
        gbps: recv["bits_per_second"].as_f64().unwrap_or(0.0) / 1e9,
        bytes: recv["bytes"].as_f64().unwrap_or(0.0),
        retrans: j["end"]["sum_sent"]["retransmits"].as_u64().unwrap_or(0),
        fwd_cpu,
        sys_cpu,
    }
}

/// Starts `iperf3 -s -D` in `ns`, tracked for cleanup, and waits until it accepts connections.
fn start_iperf_server(lab: &mut Lab, ns: &str, addr: &str) {
    let pidfile = format!("/tmp/{ns}-iperf3.pid");
    let _ = std::fs::remove_file(&pidfile);
    lab.nsexec(ns, &["iperf3", "-s", "-D", "-I", &pidfile]);
    wait_until("the iperf3 pid file", Duration::from_secs(5), || {
        std::fs::read_to_string(&pidfile).is_ok_and(|s| !s.trim().is_empty())
    });
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap_or_default()
        .trim()
        .trim_end_matches('\0')
        .parse()
        .expect("iperf3 pid");
    lab.track_pid(pid);
    let _ = std::fs::remove_file(&pidfile);
    wait_listening(ns, addr);
}

fn wait_listening(ns: &str, addr: &str) {
    let sa: std::net::SocketAddr = addr.parse().expect("addr");
    wait_until("iperf3 listening", Duration::from_secs(10), || {
        netns::run_in(ns, || {
            std::net::TcpStream::connect_timeout(&sa, Duration::from_millis(200)).is_ok()
        })
        .unwrap_or(false)
    });
}

fn shape(lab: &Lab, ns: &str, ifname: &str) {
    lab.sh(&[
        "tc", "-n", ns, "qdisc", "replace", "dev", ifname, "root", "tbf", "rate", "1gbit", "burst",
        "256kb", "latency", "50ms",
    ]);
}

fn main() {
    let a = parse_args();
    install_signal_cleanup();
    let Some(mut lab) = Lab::new("fwd_bench") else {
        return;
    };
    let k = a.members;

    // Bond topology.
    let (na, nb) = (lab.netns(), lab.netns());
    let mut ma = Vec::new();
    let mut mb = Vec::new();
    for i in 0..k {
        let (x, y) = (format!("a{i}"), format!("b{i}"));
        lab.veth(&na, &x, &nb, &y);
        lab.prep_member(&na, &x, 1500);
        lab.prep_member(&nb, &y, 1500);
        ma.push(x);
        mb.push(y);
    }
    let ma_ref: Vec<&str> = ma.iter().map(String::as_str).collect();
    let mb_ref: Vec<&str> = mb.iter().map(String::as_str).collect();

    // Bare topology.
    let (nc, nd) = (lab.netns(), lab.netns());
    lab.veth(&nc, "c0", &nd, "d0");
    for (ns, ifn, ip) in [(&nc, "c0", "10.78.0.1/24"), (&nd, "d0", "10.78.0.2/24")] {
        lab.sh(&["ip", "-n", ns, "addr", "add", ip, "dev", ifn]);
        lab.sh(&["ip", "-n", ns, "link", "set", ifn, "up"]);
    }

    start_iperf_server(&mut lab, &nd, "10.78.0.2:5201");
    start_iperf_server(&mut lab, &nb, "0.0.0.0:5201");
    println!(
        "fwd_bench: {k} member(s), iperf3 -P {} -t {}, median of {} run(s); fwd CPU = this process (both forwarders), all CPU = /proc/stat busy (includes anything else running)",
        a.parallel, a.seconds, a.reps
    );
    println!(
        "{:<52} {:>8} {:>7} {:>12} {:>12} {:>8} {:>6}",
        "case", "Gbit/s", "ratio", "fwd CPU-s/GB", "all CPU-s/GB", "retrans", "GSO %"
    );

    let bond = Bond {
        na: &na,
        nb: &nb,
        ma: &ma_ref,
        mb: &mb_ref,
    };
    for shaped in [false, true] {
        if shaped {
            shape(&lab, &nc, "c0");
            shape(&lab, &nd, "d0");
            for (x, y) in ma.iter().zip(&mb) {
                shape(&lab, &na, x);
                shape(&lab, &nb, y);
            }
        }
        let suffix = if shaped { "tbf 1gbit" } else { "unshaped" };
        let bare = median((0..a.reps).map(|_| iperf(&nc, "10.78.0.2", &a)).collect());
        report(&format!("bare veth, {suffix}"), &bare, 1.0, None);
        let base = if shaped {
            bare.gbps * k as f64
        } else {
            bare.gbps
        };

        let cases: &[(bool, Offloads)] = if shaped {
            &[(true, Offloads::DEFAULT)]
        } else {
            &[
                (true, Offloads::DEFAULT),
                (false, Offloads::DEFAULT),
                (true, Offloads::NONE),
                (false, Offloads::NONE),
            ]
        };
        for &(batched, offloads) in cases {
            let mode = if batched { "mmsg" } else { "1 syscall/frame" };
            let off = if offloads == Offloads::NONE {
                ", TAP offloads off"
            } else {
                ""
            };
            let (r, gso, per_member) = bond.measure(&lab, &a, batched, offloads);
            report(
                &format!("bond x{k} ({mode}{off}), {suffix}"),
                &r,
                r.gbps / base.max(1e-9),
                Some(gso),
            );
            println!("{:<52} per-member Gbit/s into B: {per_member}", "");
        }
    }
    println!("ratio: bond / bare veth (unshaped); bond / ({k} x bare veth) (shaped)");
}

struct Bond<'a> {
    na: &'a str,
    nb: &'a str,
    ma: &'a [&'a str],
    mb: &'a [&'a str],
}

impl Bond<'_> {
    /// Builds both forwarders, runs iperf3 `reps` times, returns the median
    /// run, the share of GSO frames read from A's TAP and per-member rates.
    fn measure(
        &self,
        lab: &Lab,
        a: &Args,
        batched: bool,
        offloads: Offloads,
    ) -> (Run, f64, String) {
        let mut oa = SideOpts::new(1, "10.77.0.1/24");
        let mut ob = SideOpts::new(2, "10.77.0.2/24");
        for o in [&mut oa, &mut ob] {
            o.batched = batched;
            o.offloads = offloads;
        }
        let sa = bond_side(lab, self.na, "lk0", self.ma, &oa);
        let sb = bond_side(lab, self.nb, "lk0", self.mb, &ob);
        // First contact through the new bond (ARP) before measuring.
        wait_listening(self.na, "10.77.0.2:5201");
        let before = sa.tap.counters().snapshot();
        let member_bytes = |s: &BondSide| -> Vec<u64> {
            s.members
                .iter()
                .map(|m| m.counters().snapshot().rx_bytes)
                .collect()
        };
        let mb0 = member_bytes(&sb);
        let runs: Vec<Run> = (0..a.reps)
            .map(|_| iperf(self.na, "10.77.0.2", a))
            .collect();
        let secs = (a.seconds * a.reps) as f64;
        let per_member: Vec<String> = member_bytes(&sb)
            .iter()
            .zip(&mb0)
            .map(|(x, y)| format!("{:.2}", (x - y) as f64 * 8.0 / 1e9 / secs))
            .collect();
        let after = sa.tap.counters().snapshot();
        let pkts = after.rx_packets - before.rx_packets;
        let gso = if pkts > 0 {
            100.0 * (after.rx_gso - before.rx_gso) as f64 / pkts as f64
        } else {
            0.0
        };
        let drops: u64 = sa
            .members
            .iter()
            .chain(&sb.members)
            .map(|m| m.counters().snapshot().dropped_total())
            .sum();
        let tap_drops = [self.na, self.nb].map(|ns| kernel_tx_dropped(lab, ns, "lk0"));
        (
            median(runs),
            gso,
            format!(
                "[{}], member drops {drops}, kernel TAP tx_dropped A/B {}/{}",
                per_member.join(", "),
                tap_drops[0],
                tap_drops[1]
            ),
        )
    }
}

/// The kernel's transmit drop count of an interface (e.g. a TAP whose queue
/// overflowed because the forwarder did not read fast enough).
fn kernel_tx_dropped(lab: &Lab, ns: &str, ifname: &str) -> u64 {
    let out = lab.sh(&["ip", "-n", ns, "-s", "-j", "link", "show", ifname]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    j[0]["stats64"]["tx"]["dropped"].as_u64().unwrap_or(0)
}

fn median(mut runs: Vec<Run>) -> Run {
    runs.sort_by(|x, y| x.gbps.total_cmp(&y.gbps));
    let mid = runs.len() / 2;
    runs.swap_remove(mid)
}

fn report(case: &str, r: &Run, ratio: f64, gso: Option<f64>) {
    let gb = r.bytes / 1e9;
    let g = gso.map(|g| format!("{g:.1}")).unwrap_or_else(|| "-".into());
    println!(
        "{:<52} {:>8.2} {:>7.3} {:>12.3} {:>12.3} {:>8} {:>6}",
        case,
        r.gbps,
        ratio,
        r.fwd_cpu / gb.max(1e-9),
        r.sys_cpu / gb.max(1e-9),
        r.retrans,
        g
    );
}

/// On SIGINT/SIGTERM, delete this process's namespaces and stop the iperf3
/// daemons in them before exiting (the lab's Drop would not run). A handler
/// rather than a blocked mask, so children (iperf3) keep default signals.
fn install_signal_cleanup() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    // The handlers only store the signal's number.
    let signalled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_usize(sig, signalled.clone(), sig as usize)
            .expect("install a signal handler");
    }
    std::thread::spawn(move || loop {
        let sig = signalled.load(std::sync::atomic::Ordering::SeqCst);
        if sig == 0 {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        eprintln!("fwd_bench: signal {sig}, cleaning up");
        let prefix = format!("lkdp-{}-", std::process::id());
        if let Ok(out) = Command::new("ip").args(["netns", "list"]).output() {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let name = line.split_whitespace().next().unwrap_or("");
                if !name.starts_with(&prefix) {
                    continue;
                }
                if let Ok(p) = Command::new("ip").args(["netns", "pids", name]).output() {
                    for pid in String::from_utf8_lossy(&p.stdout).split_whitespace() {
                        if let Ok(pid) = pid.parse::<i32>() {
                            // A process inside a namespace this run created.
                            let _ = nix::sys::signal::kill(
                                nix::unistd::Pid::from_raw(pid),
                                nix::sys::signal::Signal::SIGTERM,
                            );
                        }
                    }
                }
                let _ = Command::new("ip").args(["netns", "del", name]).status();
            }
        }
        std::process::exit(130);
    });
}
