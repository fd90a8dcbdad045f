//! Failover latency under load: how long from a member's carrier change to
//! the new plan in the data path, and whether TCP survives many flaps.
//!
//! ```text
//! sudo target/release/examples/failover [--engine bpf|userspace|both]
//!      [--mode 802.3ad|active-backup|balance-xor] [--flaps N] [--flows F]
//! ```
//! (build with `cargo build --release -p lagkit-bond --example failover`;
//! `scripts/bench-failover.sh` builds and runs it per engine and mode).
//!
//! Two network namespaces joined by two veth links, a lagkit bond on each
//! side (started in this process, as the integration tests do), F TCP flows
//! from A to B for the whole run. Then N times, members taking turns: B's
//! end of the link is set down (an ioctl, the time taken just before it),
//! A's bond sees its member's carrier drop and publishes a plan without it;
//! then the link comes back and the run waits until the member carries
//! traffic again. Per engine it prints the distribution of
//! - *from the carrier change*: the ioctl on B to the new plan in A's data
//!   path (the BPF programs' plan swapped, or the userspace engine's map
//!   published), both on CLOCK_MONOTONIC, and
//! - *from the link event*: A's daemon reading the kernel's netlink message
//!   (or, with `--miimon`, polling the link state) to the new plan (what the
//!   daemon itself adds),
//!
//! and whether every flow's bytes all arrived, in order (none was reset).
//!
//! The kernel's link watch sends the netlink event of a carrier loss at
//! once only for kernel bond and team ports (and devices whose index differs
//! from their link's, as a veth's mostly does); for other devices it
//! batches events up to a second. `--miimon MS` polls each member's link
//! state (`ETHTOOL_GLINK`) as well, as Linux bonding's miimon does.
//! A run removes its namespaces when it ends, also on failure.

use lagkit_api::status::CarrierEvent;
use lagkit_bond::kernel::EngineChoice;
use lagkit_bond::settings::{BondMode, Settings};
use lagkit_dataplane::{monotonic_now_ns, netns, Link};
use lagkit_testnet::{wait_until, Lab};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

struct Args {
    engines: Vec<EngineChoice>,
    mode: BondMode,
    flaps: usize,
    flows: u16,
    miimon: Duration,
}

fn args() -> Args {
    let mut a = Args {
        engines: vec![EngineChoice::Bpf, EngineChoice::Userspace],
        mode: BondMode::Lacp,
        flaps: 200,
        flows: 4,
        miimon: Duration::ZERO,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(k) = it.next() {
        let v = it
            .next()
            .unwrap_or_else(|| usage(&format!("{k} needs a value")));
        match k.as_str() {
            "--engine" if v == "both" => {}
            "--engine" => a.engines = vec![v.parse().unwrap_or_else(|e| usage(&format!("{e}")))],
            "--mode" => a.mode = v.parse().unwrap_or_else(|e| usage(&format!("{e}"))),
            "--flaps" => a.flaps = v.parse().unwrap_or_else(|_| usage("--flaps N")),
            "--flows" => a.flows = v.parse().unwrap_or_else(|_| usage("--flows F")),
            "--miimon" => {
                a.miimon = Duration::from_millis(v.parse().unwrap_or_else(|_| usage("--miimon MS")))
            }
            _ => usage(&format!("unknown option {k}")),
        }
    }
    a
}

fn usage(why: &str) -> ! {
    eprintln!("failover: {why}\nusage: failover [--engine bpf|userspace|both] [--mode MODE] [--flaps N] [--flows F] [--miimon MS]");
    std::process::exit(2)
}

#[path = "../tests/support/running.rs"]
#[allow(dead_code)] // the tests use more of it than this benchmark
mod running;
use running::Running;

fn settings(tag: &str, side: &str, args: &Args, engine: EngineChoice, addr: &str) -> Settings {
    let mode = args.mode;
    let members = [format!("{side}1"), format!("{side}2")];
    let refs: Vec<&str> = members.iter().map(String::as_str).collect();
    let mut s = Settings::new("bond0", &refs, mode);
    s.addresses = vec![addr.parse().expect("an address with a prefix")];
    s.lacp.fast = true;
    s.engine = engine;
    s.miimon = args.miimon;
    let dir = std::env::temp_dir().join(format!("lk-failover-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    s.control_socket = dir.join(format!("{side}.sock"));
    s
}

/// A TCP flow from A to B that sends until told to stop, then checks
/// that B received every byte in order.
struct Flow {
    stop: Arc<AtomicBool>,
    sender: JoinHandle<std::io::Result<u64>>,
    receiver: JoinHandle<std::io::Result<(u64, bool)>>,
}

/// The byte at stream offset `i`: a pattern a receiver can check.
fn pattern(i: u64) -> u8 {
    (i.wrapping_mul(0x9e37_79b9) >> 13) as u8
}

fn flow(ns_a: &str, ns_b: &str, port: u16) -> Flow {
    let (tx, rx) = std::sync::mpsc::channel();
    let nb = ns_b.to_string();
    let receiver = std::thread::spawn(move || -> std::io::Result<(u64, bool)> {
        netns::enter(&nb).map_err(std::io::Error::other)?;
        let l = TcpListener::bind(("10.77.0.2", port))?;
        tx.send(()).ok();
        let (mut s, _) = l.accept()?;
        let mut buf = vec![0u8; 1 << 16];
        let (mut n, mut intact) = (0u64, true);
        loop {
            let k = s.read(&mut buf)?;
            if k == 0 {
                return Ok((n, intact));
            }
            intact &= buf[..k]
                .iter()
                .enumerate()
                .all(|(j, &b)| b == pattern(n + j as u64));
            n += k as u64;
        }
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("receiver listens");
    let stop = Arc::new(AtomicBool::new(false));
    let (na, st) = (ns_a.to_string(), stop.clone());
    let sender = std::thread::spawn(move || -> std::io::Result<u64> {
        netns::enter(&na).map_err(std::io::Error::other)?;
        let mut s = TcpStream::connect(("10.77.0.2", port))?;
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        while !st.load(Ordering::Relaxed) {
            for (j, b) in buf.iter_mut().enumerate() {
                *b = pattern(n + j as u64);
            }
            s.write_all(&buf)?;
            n += buf.len() as u64;
        }
        s.shutdown(std::net::Shutdown::Write)?;
        Ok(n)
    });
    Flow {
        stop,
        sender,
        receiver,
    }
}

/// Percentiles of `v` (µs), as "min p50 p90 p99 max".
fn spread(mut v: Vec<u64>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    format!(
        "min {:.0}, median {:.0}, p90 {:.0}, p99 {:.0}, max {:.0} µs ({} changes)",
        at(0.0),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        v.len()
    )
}

/// The first event for `member` going `up` published at or after `t0`.
fn event_after(a: &Running, member: &str, up: bool, t0: u64) -> Option<CarrierEvent> {
    a.stats()
        .carrier_events
        .into_iter()
        .find(|e| e.member == member && e.up == up && e.published_ns >= t0)
}

fn run(engine: EngineChoice, args: &Args) -> bool {
    let tag = format!("{engine}");
    let Some(mut lab) = Lab::alone(&format!("failover-{tag}")) else {
        eprintln!("failover: needs root");
        std::process::exit(1);
    };
    let (ns_a, ns_b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&ns_a, &format!("a{i}"), &ns_b, &format!("b{i}"));
    }
    let a = Running::start(&ns_a, settings(&tag, "a", args, engine, "10.77.0.1/24"));
    let b = Running::start(&ns_b, settings(&tag, "b", args, engine, "10.77.0.2/24"));
    let carrying = |a: &Running| {
        let st = a.status();
        match args.mode {
            BondMode::ActiveBackup => st.active_member.is_some(),
            _ => st.members.iter().all(|m| m.transmitting),
        }
    };
    wait_until("the bond forms", Duration::from_secs(30), || carrying(&a));
    let engine_ran = a.status().engine;
    let flows: Vec<Flow> = (0..args.flows)
        .map(|i| flow(&ns_a, &ns_b, 5800 + i))
        .collect();
    // B's ends, set down and up from a thread inside B.
    let (req_tx, req_rx) = std::sync::mpsc::channel::<(String, bool)>();
    let (t0_tx, t0_rx) = std::sync::mpsc::channel::<u64>();
    let nb = ns_b.clone();
    let flapper = std::thread::spawn(move || {
        netns::enter(&nb).expect("setns");
        for (ifname, up) in req_rx {
            let link = Link::open(&ifname).expect("B's link");
            let t0 = monotonic_now_ns();
            link.set_up(up).expect("set link state");
            t0_tx.send(t0).ok();
        }
    });
    let (mut from_change, mut from_event, mut missing) = (Vec::new(), Vec::new(), 0usize);
    let started = std::time::Instant::now();
    for k in 0..args.flaps {
        let i = 1 + k % 2;
        let (ours, theirs) = (format!("a{i}"), format!("b{i}"));
        req_tx.send((theirs.clone(), false)).expect("flapper");
        let t0 = t0_rx.recv().expect("flapper");
        let mut seen = None;
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while seen.is_none() && std::time::Instant::now() < end {
            seen = event_after(&a, &ours, false, t0);
            if seen.is_none() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        match seen {
            Some(e) => {
                from_change.push(e.published_ns.saturating_sub(t0));
                from_event.push(e.published_ns.saturating_sub(e.seen_ns));
            }
            None => missing += 1,
        }
        std::thread::sleep(Duration::from_millis(20));
        req_tx.send((theirs, true)).expect("flapper");
        t0_rx.recv().expect("flapper");
        wait_until("the member carries again", Duration::from_secs(30), || {
            carrying(&a)
        });
    }
    let flapping = started.elapsed();
    drop(req_tx);
    let _ = flapper.join();
    let mut lost = 0;
    let mut moved = 0u64;
    for f in flows {
        f.stop.store(true, Ordering::Relaxed);
        let sent = f.sender.join().expect("sender thread");
        let got = f.receiver.join().expect("receiver thread");
        match (sent, got) {
            (Ok(s), Ok((r, true))) if s == r => moved += s,
            (s, r) => {
                lost += 1;
                eprintln!("  flow lost or damaged: sent {s:?}, received {r:?}");
            }
        }
    }
    println!(
        "engine {engine_ran} (asked {engine}), {}, miimon {} ms, {} flaps in {:.0} s under {} TCP flows ({:.1} GB moved):",
        args.mode.linux_name(),
        args.miimon.as_millis(),
        args.flaps,
        flapping.as_secs_f64(),
        args.flows,
        moved as f64 / 1e9
    );
    println!("  carrier change to new plan: {}", spread(from_change));
    println!("  link event to new plan:     {}", spread(from_event));
    println!(
        "  TCP flows intact: {} of {}{}",
        args.flows as usize - lost,
        args.flows,
        if missing > 0 {
            format!("; {missing} changes without a published plan within 5 s")
        } else {
            String::new()
        }
    );
    drop((a, b));
    drop(lab);
    lost == 0 && missing == 0
}

fn main() {
    let args = args();
    let mut ok = true;
    for &e in &args.engines {
        ok &= run(e, &args);
    }
    std::process::exit(if ok { 0 } else { 1 });
}
