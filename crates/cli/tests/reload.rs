//! SIGHUP reloads that change only keys applied in place, under traffic:
//! two `lagkit up` 802.3ad bonds back to back, `ping -i 0.01` and four TCP
//! connections across, and one side reloaded again and again with its LACP
//! rate, hash policy and timers flipped. The aggregate must never go down,
//! no connection may be lost and no ping. Members and
//! addresses changed by a reload are applied too, and only they.
//!
//! Root only; skips with a message otherwise. Each test runs once per
//! engine (`bpf::` and `userspace::`), alone (no other lab of this binary
//! runs meanwhile), and cleans up on drop.

mod common;

use common::{assert_flows_intact, bond_status as status, Daemon, Pinger, TmpDir as Dir};
use lagkit_sys::proc::Signal;
use lagkit_testnet::{tcp_until, wait_until, Lab};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

/// Reloads per test, 0.2 s apart.
const RELOADS: usize = 50;

thread_local! {
    /// The engine of the test running on this thread (set by `engines!`).
    static ENGINE: std::cell::Cell<&'static str> = const { std::cell::Cell::new("auto") };
}

/// A running `lagkit up` with this thread's engine, its log in a file
/// (SIGTERM and reaped on drop).
fn start_bond(ns: &str, cfg: &Path, log: &Path) -> Daemon {
    let log = std::fs::File::create(log).expect("log file");
    let child = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "up", "--engine"])
        .arg(ENGINE.with(|e| e.get()))
        .arg(cfg)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("lagkit up starts");
    Daemon(child)
}

/// One side's configuration; `flip` chooses one of two sets of in-place
/// values (LACP rate, hash policy, carrier polling, delays, min_links).
fn write_config(path: &Path, addrs: &[&str], members: &[&str], flip: bool) {
    let (rate, policy, miimon, delay, min_links) = if flip {
        ("slow", "layer2+3", 100, 200, 1)
    } else {
        ("fast", "layer3+4", 0, 0, 0)
    };
    let members: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    let addr = addrs.join("\", \"");
    let text = format!(
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [{}]\n\
         address = [\"{addr}\"]\nlacp_rate = \"{rate}\"\nxmit_hash_policy = \"{policy}\"\n\
         miimon = {miimon}\nupdelay = {delay}\nmin_links = {min_links}\n",
        members.join(", ")
    );
    // Written to a temporary name and renamed, so a reload never reads
    // half a file.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

fn log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

const IN_PLACE: &str = "reload: every change applied in place";
const TWO: &[&str] = &["eth1", "eth2"];
const THREE: &[&str] = &["eth1", "eth2", "eth3"];

/// Log lines where a port of `ports` leaves distribution or the aggregate
/// goes down.
fn interruptions<'a>(log: &'a str, ports: &[&str]) -> Vec<&'a str> {
    log.lines()
        .filter(|l| {
            l.contains("aggregator 1: down")
                || ports
                    .iter()
                    .any(|p| l.contains(&format!(" {p} mux: COLLECTING_DISTRIBUTING (")))
        })
        .collect()
}

fn reloads_in_place_keep_the_aggregate_up_and_every_connection() {
    let Some(mut lab) = Lab::alone("reload_in_place") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let engine = ENGINE.with(|e| e.get());
    let dir = Dir(std::env::temp_dir().join(format!("lkt-reload-{}-{engine}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let (ca, cb) = (dir.0.join("a.toml"), dir.0.join("b.toml"));
    let (la, lb) = (dir.0.join("a.log"), dir.0.join("b.log"));
    write_config(&ca, &["10.0.0.1/24"], TWO, false);
    write_config(&cb, &["10.0.0.2/24"], TWO, false);
    let da = start_bond(&a, &ca, &la);
    let _db = start_bond(&b, &cb, &lb);
    wait_until(
        "both bonds aggregate 2 ports",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let tcp = tcp_until(&b, "10.0.0.2:6400", &a, 4, stop.clone());
    let ping = Pinger::start(&a, "10.0.0.2");
    let logged_before = log(&la).len();
    let started = Instant::now();
    for i in 1..=RELOADS {
        let at = Instant::now();
        write_config(&ca, &["10.0.0.1/24"], TWO, i % 2 == 1);
        da.signal(Signal::SIGHUP);
        wait_until(
            &format!("reload {i} applied in place"),
            Duration::from_secs(5),
            || log(&la)[logged_before..].matches(IN_PLACE).count() >= i,
        );
        wait_until("0.2 s between reloads", Duration::from_secs(1), || {
            at.elapsed() >= Duration::from_millis(200)
        });
    }
    let took = started.elapsed();
    let ping = ping.finish();
    stop.store(true, Ordering::Relaxed);
    let flows = tcp.join().expect("TCP threads");

    let text = log(&la);
    let during = &text[logged_before..];
    assert!(
        !during.contains("restarting the bond"),
        "a reload restarted the bond:\n{during}"
    );
    let b_text = log(&lb);
    for (side, t) in [("a", during), ("b", b_text.as_str())] {
        let down: Vec<&str> = t
            .lines()
            .filter(|l| {
                l.contains("aggregator 1: down") || l.contains("mux: COLLECTING_DISTRIBUTING (")
            })
            .collect();
        assert!(
            down.is_empty(),
            "{side}: the aggregate went down: {down:#?}"
        );
    }
    assert_flows_intact(&flows);
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "{engine}: {RELOADS} reloads in {took:?}; ping {} sent, {lost} lost; TCP {} MB",
        ping.transmitted,
        flows.iter().flatten().map(|f| f.sent).sum::<u64>() >> 20
    );
    assert!(ping.transmitted > 500, "{ping:?}");
    assert!(
        (lost, ping.duplicates) == (0, 0),
        "{lost} of {} pings lost across {RELOADS} reloads",
        ping.transmitted
    );
    // The last reload's values are the ones running (RELOADS is even: the
    // first set).
    let st = status(&a).expect("status");
    let lacp = st.lacp.expect("lacp");
    assert_eq!(
        (lacp.lacp_rate, lacp.number_of_ports),
        (lagkit_api::status::LacpRate::Fast, 2)
    );
}

/// A member added or removed by a reload joins or leaves alone: the
/// members that stay never leave distribution, and the traffic over them
/// goes on (the engine takes the new member set without a gap).
fn members_added_and_removed_by_reload_leave_the_others_alone() {
    let Some(mut lab) = Lab::alone("reload_members") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=3 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let engine = ENGINE.with(|e| e.get());
    let dir = Dir(std::env::temp_dir().join(format!(
        "lkt-reload-members-{}-{engine}",
        std::process::id()
    )));
    std::fs::create_dir_all(&dir.0).unwrap();
    let (ca, cb) = (dir.0.join("a.toml"), dir.0.join("b.toml"));
    let (la, lb) = (dir.0.join("a.log"), dir.0.join("b.log"));
    write_config(&ca, &["10.0.0.1/24"], TWO, false);
    write_config(&cb, &["10.0.0.2/24"], THREE, false);
    let da = start_bond(&a, &ca, &la);
    let _db = start_bond(&b, &cb, &lb);
    wait_until(
        "both bonds aggregate 2 ports",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let tcp = tcp_until(&b, "10.0.0.2:6500", &a, 4, stop.clone());
    let ping = Pinger::start(&a, "10.0.0.2");
    let (a_before, b_before) = (log(&la).len(), log(&lb).len());
    for i in 1..=4 {
        let (members, want) = if i % 2 == 1 { (THREE, 3) } else { (TWO, 2) };
        write_config(&ca, &["10.0.0.1/24"], members, false);
        da.signal(Signal::SIGHUP);
        wait_until(
            &format!("reload {i}: {want} ports on both sides"),
            Duration::from_secs(15),
            || ports(&a) == want && ports(&b) == want,
        );
    }
    let ping = ping.finish();
    stop.store(true, Ordering::Relaxed);
    let flows = tcp.join().expect("TCP threads");
    let (ta, tb) = (log(&la), log(&lb));
    assert_eq!(ta[a_before..].matches("member added by reload").count(), 2);
    assert_eq!(
        ta[a_before..].matches("member removed by reload").count(),
        2
    );
    for (side, t) in [("a", &ta[a_before..]), ("b", &tb[b_before..])] {
        let down = interruptions(t, TWO);
        assert!(
            down.is_empty(),
            "{side}: a member that stayed was disturbed: {down:#?}"
        );
    }
    assert_flows_intact(&flows);
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "{engine}: 4 member reloads; ping {} sent, {lost} lost",
        ping.transmitted
    );
    assert!(
        (lost, ping.duplicates) == (0, 0),
        "{lost} of {} pings lost while a member came and went",
        ping.transmitted
    );
}

/// The global addresses of `bond0` in namespace `ns`, as `ip` lists them.
fn addresses(ns: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args([
            "-n", ns, "-o", "addr", "show", "dev", "bond0", "scope", "global",
        ])
        .output()
        .expect("ip addr");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut got: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            w.find(|w| *w == "inet" || *w == "inet6")?;
            w.next().map(str::to_string)
        })
        .collect();
    got.sort();
    got
}

/// A reload that changes `address`: the addresses no longer listed are
/// removed from the bond, the new ones (IPv4 and IPv6) added, and back.
fn addresses_changed_by_reload_are_replaced() {
    let Some(mut lab) = Lab::alone("reload_addresses") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let engine = ENGINE.with(|e| e.get());
    let dir = Dir(std::env::temp_dir().join(format!(
        "lkt-reload-addresses-{}-{engine}",
        std::process::id()
    )));
    std::fs::create_dir_all(&dir.0).unwrap();
    let (ca, la) = (dir.0.join("a.toml"), dir.0.join("a.log"));
    write_config(&ca, &["10.0.0.1/24"], TWO, false);
    let da = start_bond(&a, &ca, &la);
    let want = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    wait_until("the bond's address", Duration::from_secs(20), || {
        addresses(&a) == want(&["10.0.0.1/24"])
    });
    write_config(&ca, &["10.0.0.9/24", "fd00::9/64"], TWO, false);
    da.signal(Signal::SIGHUP);
    wait_until(
        "the addresses of the reload",
        Duration::from_secs(10),
        || addresses(&a) == want(&["10.0.0.9/24", "fd00::9/64"]),
    );
    write_config(&ca, &["10.0.0.1/24"], TWO, false);
    da.signal(Signal::SIGHUP);
    wait_until("the first address back", Duration::from_secs(10), || {
        addresses(&a) == want(&["10.0.0.1/24"])
    });
    let text = log(&la);
    assert!(
        !text.contains("address not removed") && !text.contains("address not added"),
        "{text}"
    );
}

/// A `bpf::NAME` and a `userspace::NAME` test for each test function.
macro_rules! engines {
    ($($name:ident),* $(,)?) => {
        mod bpf {
            $(#[test]
            fn $name() {
                super::ENGINE.with(|e| e.set("bpf"));
                super::$name();
            })*
        }
        mod userspace {
            $(#[test]
            fn $name() {
                super::ENGINE.with(|e| e.set("userspace"));
                super::$name();
            })*
        }
    };
}

engines!(
    reloads_in_place_keep_the_aggregate_up_and_every_connection,
    members_added_and_removed_by_reload_leave_the_others_alone,
    addresses_changed_by_reload_are_replaced,
);
