//! `lagkit capture` as a user runs it: a lagkit bond in 802.3ad facing a
//! lagkit switch's LACP port-channel, each captured for three seconds
//! while it runs, the files read by tshark. Root only (skips with a
//! message otherwise); every namespace, veth and process is removed on
//! drop.
//!
//! The per-interface, per-direction LACPDU counts in a file are held
//! against the daemon's own counters read just before the capture started
//! and just after it ended: every captured frame is counted in that delta
//! (the hooks and the counters run on the daemon's protocol thread, which
//! answers the counters between two of its steps), and the delta holds at
//! most the frames of the gaps before and after the capture window, at
//! the fast rate's one LACPDU a second, plus one for a frame in flight.

mod common;

use common::switch::{
    bond_ports, flags, start, start_switch_engine, switch_ports, tmpdir, write, BIN,
};
use common::TmpDir;
use lagkit_sys::proc::Signal;
use lagkit_testnet::{wait_until, Lab};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// (interface, direction "in"/"out") -> LACPDUs.
type Counts = BTreeMap<(String, String), u64>;

fn json(ns: &str, args: &[&str]) -> Value {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN])
        .args(args)
        .output()
        .expect("lagkit runs");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The bond's own LACPDU counters per member.
fn bond_counts(ns: &str) -> Counts {
    let v = json(ns, &["stats", "--name", "bond0", "--json"]);
    let mut c = Counts::new();
    for m in v[0]["members"].as_array().expect("stats members") {
        let name = m["name"].as_str().unwrap().to_string();
        c.insert(
            (name.clone(), "in".into()),
            m["lacpdu_rx"].as_u64().unwrap(),
        );
        c.insert((name, "out".into()), m["lacpdu_tx"].as_u64().unwrap());
    }
    c
}

/// The switch's own LACPDU counters per port (`show lacp counters`).
fn switch_counts(ns: &str) -> Counts {
    let v = json(ns, &["switch", "show", "lacp", "counters", "--json"]);
    let mut c = Counts::new();
    for m in v["members"].as_array().expect("lacp counters") {
        let name = m["port"].as_str().unwrap().to_string();
        c.insert(
            (name.clone(), "in".into()),
            m["lacpdu_received"].as_u64().unwrap(),
        );
        c.insert((name, "out".into()), m["lacpdu_sent"].as_u64().unwrap());
    }
    c
}

fn tshark(file: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(args)
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Frames matching `filter` per (interface, direction), and the values of
/// `field` seen per direction.
fn read_frames(file: &Path, filter: &str, field: &str) -> (Counts, BTreeMap<String, Vec<String>>) {
    let malformed = tshark(file, &["-Y", "_ws.malformed"]);
    assert!(malformed.trim().is_empty(), "malformed frames: {malformed}");
    let text = tshark(
        file,
        &[
            "-Y",
            filter,
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.packet_flags_direction",
            "-e",
            field,
        ],
    );
    let mut counts = Counts::new();
    let mut actors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "{line}");
        let dir = match u32::from_str_radix(f[1].trim_start_matches("0x"), 16) {
            Ok(1) => "in",
            Ok(2) => "out",
            _ => panic!("no direction in {line:?}"),
        };
        *counts.entry((f[0].to_string(), dir.into())).or_default() += 1;
        let a = actors.entry(dir.into()).or_default();
        if !a.iter().any(|x| x == f[2]) {
            a.push(f[2].to_string());
        }
    }
    (counts, actors)
}

/// Runs `lagkit capture ARGS -w FILE --duration 3s` in `ns` between two
/// reads of the daemon's counters; returns the file's counts, the
/// counters' delta, the seconds outside the capture window, and what the
/// command printed.
fn capture_against(
    ns: &str,
    args: &[&str],
    file: &Path,
    counters: impl Fn() -> Counts,
) -> (Counts, BTreeMap<String, Vec<String>>, Counts, f64, String) {
    capture_frames(ns, args, file, counters, ("lacp", "lacp.actor.sysid"))
}

/// [`capture_against`], counting the frames tshark's `filter` matches.
fn capture_frames(
    ns: &str,
    args: &[&str],
    file: &Path,
    counters: impl Fn() -> Counts,
    (filter, field): (&str, &str),
) -> (Counts, BTreeMap<String, Vec<String>>, Counts, f64, String) {
    let t0 = Instant::now();
    let before = counters();
    let t1 = Instant::now();
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "capture"])
        .args(args)
        .arg("-w")
        .arg(file)
        .args(["--duration", "3s"])
        .output()
        .expect("lagkit capture runs");
    let t2 = Instant::now();
    let after = counters();
    let t3 = Instant::now();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "capture {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let delta: Counts = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .collect();
    // Outside the window: both counter reads, the command's start and its
    // end (what it took beyond its three seconds).
    let gaps = ((t1 - t0) + (t3 - t2)).as_secs_f64() + ((t2 - t1).as_secs_f64() - 3.0).max(0.0);
    let (counts, actors) = read_frames(file, filter, field);
    (counts, actors, delta, gaps, stdout)
}

/// Every counted direction of every interface: the file holds no more
/// LACPDUs than the daemon counted, and no fewer than the count less the
/// gaps' frames (one a second, rounded up) and one in flight.
/// `busy` names the directions that send at the fast rate (at least two
/// PDUs in the window); the others are held to the counters only.
fn assert_matches(what: &str, counts: &Counts, delta: &Counts, gaps: f64, busy: &[&str]) {
    // The fast rates, LACP's and PAgP's, both send one PDU a second.
    let slack = gaps.ceil() as u64 + 1;
    eprintln!("{what}: file {counts:?}, counted {delta:?}, {gaps:.2}s outside the window");
    assert!(!delta.is_empty(), "{what}: no counters");
    for (k, d) in delta {
        let got = counts.get(k).copied().unwrap_or(0);
        assert!(
            got <= *d && d - got <= slack,
            "{what} {k:?}: {got} in the file, {d} counted (slack {slack}, gaps {gaps:.2}s)\nfile {counts:?}\ncounters {delta:?}"
        );
        if busy.contains(&k.1.as_str()) {
            assert!(got >= 2, "{what} {k:?}: {got} PDUs in 3 s at the fast rate");
        }
    }
    for k in counts.keys() {
        assert!(delta.contains_key(k), "{what}: {k:?} in the file only");
    }
}

/// A bond (namespace `a`, members eth1 and eth2) cabled to a lagkit
/// switch (namespace `sw`, ports Gi1/1 and Gi1/2, `--engine ENGINE` when
/// given), both started with the configurations given; everything goes
/// on drop.
struct Rig {
    // Dropped in this order: the daemons, the files, the namespaces.
    _daemons: (common::Daemon, common::Daemon),
    dir: TmpDir,
    _lab: Lab,
    sw: String,
    a: String,
}

impl Rig {
    fn new(tag: &str, switch: &str, bond: &str, engine: Option<&str>) -> Option<Rig> {
        let mut lab = Lab::new(tag)?;
        assert!(
            Command::new("tshark").arg("--version").output().is_ok(),
            "tshark is not installed: bash scripts/setup.sh test installs it"
        );
        let (sw, a) = (lab.netns(), lab.netns());
        lab.veth(&a, "eth1", &sw, "a1");
        lab.veth(&a, "eth2", &sw, "a2");
        switch_ports(&lab, &sw, &["a1", "a2"], None);
        let dir = TmpDir(tmpdir(tag));
        let s = start_switch_engine(&sw, &dir.0, switch, &["Gi1/1=a1", "Gi1/2=a2"], engine);
        let bond = write(&dir.0, "a.toml", bond);
        let b = start(&a, &["up", bond.to_str().unwrap()], &dir.0.join("a.log"));
        Some(Rig {
            sw,
            a,
            dir,
            _daemons: (b, s),
            _lab: lab,
        })
    }
}

#[test]
fn a_bond_and_its_switch_captured_while_running_read_cleanly_in_tshark() {
    let Some(r) = Rig::new(
        "capture_lacp",
        "hostname cap\ninterface range gi1/1 - 2\n channel-group 1 mode active\n lacp rate fast\ninterface port-channel 1\n",
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\nlacp_rate = \"fast\"\naddress = [\"10.0.31.1/24\"]\n",
        // The switch's `--data` capture below needs the daemon's own
        // forwarding loop (the kernel engine's frames never reach it).
        Some("userspace"),
    ) else {
        return;
    };
    let (sw, a, dir) = (r.sw.clone(), r.a.clone(), &r.dir);
    wait_until(
        "the bond aggregates 2 ports",
        Duration::from_secs(40),
        || bond_ports(&a) == 2,
    );

    let bond_file = dir.0.join("bond.pcapng");
    let (counts, bond_actors, delta, gaps, out) =
        capture_against(&a, &["--name", "bond0"], &bond_file, || bond_counts(&a));
    eprintln!("{out}");
    assert_matches("bond", &counts, &delta, gaps, &["in", "out"]);
    assert!(out.contains("eth1: ") && out.contains("0 dropped"), "{out}");

    let switch_file = dir.0.join("switch.pcapng");
    let (counts, switch_actors, delta, gaps, out) =
        capture_against(&sw, &["--switch", "cap"], &switch_file, || {
            switch_counts(&sw)
        });
    assert_matches("switch", &counts, &delta, gaps, &["in", "out"]);
    assert!(out.contains("GigabitEthernet1/1: "), "{out}");

    // Directions: what the bond sends carries one actor (the bond), what
    // it receives another (the switch), and the switch's file says the
    // same the other way round.
    assert_eq!(bond_actors["out"].len(), 1, "{bond_actors:?}");
    assert_eq!(bond_actors["in"].len(), 1, "{bond_actors:?}");
    assert_ne!(bond_actors["out"], bond_actors["in"]);
    assert_eq!(bond_actors["out"], switch_actors["in"], "{switch_actors:?}");
    assert_eq!(bond_actors["in"], switch_actors["out"], "{switch_actors:?}");

    // One IDB per member, named, nanosecond timestamps.
    let ifaces = tshark(
        &bond_file,
        &[
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.time_epoch",
        ],
    );
    let names: std::collections::BTreeSet<&str> = ifaces
        .lines()
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(names, ["eth1", "eth2"].into_iter().collect(), "{ifaces}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    for l in ifaces.lines() {
        let t: f64 = l.split('\t').nth(1).unwrap().parse().unwrap();
        assert!((now - t).abs() < 120.0, "a real timestamp: {l}");
    }

    // A second capture at the same time is fine; the daemon refuses
    // garbage arguments with an error, and keeps serving.
    let e = Command::new("ip")
        .args(["netns", "exec", &a, BIN, "capture", "--name", "bond0"])
        .args(["-w", "/dev/null", "--snaplen", "3", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2), "{e:?}");
    sigint_ends_a_data_capture_with_a_valid_file(&a, &sw, &dir.0.join("data.pcapng"));
    a_bonds_data_capture_holds_each_frame_once(&a, &dir.0.join("bond-data.pcapng"));
    garbage_captures_get_errors(&socket_of(&a, None));
    garbage_captures_get_errors(&socket_of(&sw, Some("cap")));
    assert_eq!(bond_ports(&a), 2, "the bond still runs and answers");
    assert!(
        json(&sw, &["switch", "show", "lacp", "counters", "--json"])["members"].is_array(),
        "the switch still answers"
    );
}

/// The control socket of bond0 (or of switch `switch`) in namespace `ns`,
/// reached from outside it (the socket is a file).
fn socket_of(ns: &str, switch: Option<&str>) -> std::path::PathBuf {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(format!("/run/netns/{ns}"))
        .expect("the namespace is mounted")
        .ino();
    match switch {
        None => lagkit_bondcfg::paths::control_socket_in(Some(ino), "bond0"),
        Some(n) => lagkit_switchd::protocol::socket_path(Some(ino), n),
    }
}

/// Capture requests with arguments of every wrong kind, each on a
/// connection of its own: every one is answered with an error line (the
/// daemon neither panics nor starts a stream).
fn garbage_captures_get_errors(path: &Path) {
    use std::io::{BufRead, BufReader, Write};
    let values = [
        "null",
        "true",
        "-1",
        "0",
        "13",
        "65536",
        "4294967296",
        "1e9",
        "\"x\"",
        "[]",
        "{}",
        "[1,2]",
        "{\"a\":1}",
        "18446744073709551616",
        "\"\\u0000\"",
    ];
    let mut lines = vec![
        "{\"cmd\":\"capture\",\"data\":true,\"snaplen\":1,\"x\":".to_string(),
        "{\"cmd\":\"capture\"".to_string(),
        "{\"cmd\":\"CAPTURE\"}".to_string(),
        "{\"cmd\":[\"capture\"]}".to_string(),
        "\u{0}\u{1}{\"cmd\":\"capture\"}".to_string(),
    ];
    for v in values {
        // `"snaplen":null` is the default, a valid request.
        if v != "null" {
            lines.push(format!("{{\"cmd\":\"capture\",\"snaplen\":{v}}}"));
        }
        lines.push(format!(
            "{{\"cmd\":\"capture\",\"data\":{v},\"snaplen\":0}}"
        ));
    }
    for l in &lines {
        let s = std::os::unix::net::UnixStream::connect(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        (&s).write_all(format!("{l}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(&s).read_line(&mut answer).unwrap();
        let v: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        assert!(v["error"].is_string(), "{l} -> {answer:?}");
    }
}

/// `--data` on the switch until SIGINT: the bond's ARP requests (for an
/// address nobody has) arrive as data frames on the switch's ports, and
/// the file is whole after the signal.
fn sigint_ends_a_data_capture_with_a_valid_file(a: &str, sw: &str, file: &Path) {
    use std::io::BufRead;
    let mut child = Command::new("ip")
        .args(["netns", "exec", sw, BIN])
        .args(["capture", "--switch", "cap", "--data", "-w"])
        .arg(file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("lagkit capture starts");
    let mut started = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut started)
        .unwrap();
    assert!(
        started.starts_with("capturing control and data"),
        "{started}"
    );
    let _ = Command::new("ip")
        .args([
            "netns", "exec", a, "ping", "-c", "3", "-i", "0.2", "-W", "1",
        ])
        .arg("10.0.31.9")
        .output();
    // `ip netns exec` execs lagkit: the child's pid is lagkit's.
    let _ = lagkit_sys::proc::kill(child.id(), Signal::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "capture still runs after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(status.success(), "{status:?} {out}");
    assert!(out.contains("frames written"), "{out}");
    let malformed = tshark(file, &["-Y", "_ws.malformed"]);
    assert!(malformed.trim().is_empty(), "{malformed}");
    let arp = tshark(
        file,
        &[
            "-Y",
            "arp.dst.proto_ipv4 == 10.0.31.9",
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.packet_flags_direction",
        ],
    );
    assert!(arp.lines().count() >= 1, "ARP requests as data: {arp}");
    for l in arp.lines() {
        assert!(
            l.starts_with("GigabitEthernet1/") && l.ends_with('1'),
            "{l}"
        );
    }
}

/// Frames sent and received per member, as the kernel counts them.
fn kernel_counts(ns: &str) -> Counts {
    let out = Command::new("ip")
        .args(["-n", ns, "-s", "-j", "link", "show"])
        .output()
        .expect("ip runs");
    let links: Value = serde_json::from_slice(&out.stdout).expect("ip -j");
    let mut c = Counts::new();
    for l in links.as_array().unwrap() {
        let name = l["ifname"].as_str().unwrap();
        if !["eth1", "eth2"].contains(&name) {
            continue;
        }
        let st = &l["stats64"];
        c.insert(
            (name.into(), "in".into()),
            st["rx"]["packets"].as_u64().unwrap(),
        );
        c.insert(
            (name.into(), "out".into()),
            st["tx"]["packets"].as_u64().unwrap(),
        );
    }
    c
}

/// `--data` on a bond: the members' frames are read off the wire beside
/// the control frames the bond copies. Every frame the kernel counted on
/// a member in the window is in the file once: no LACPDU twice (the bond
/// copies them, the members' reader leaves them out), no ARP twice, and
/// nothing missing but what crossed the window's edges.
fn a_bonds_data_capture_holds_each_frame_once(a: &str, file: &Path) {
    // ARP requests for an address nobody has: data frames the bond sends.
    let mut ping = Command::new("ip")
        .args([
            "netns",
            "exec",
            a,
            "ping",
            "-i",
            "0.2",
            "-w",
            "8",
            "10.0.31.10",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("ping starts");
    let (all, _, delta, gaps, out) = capture_frames(
        a,
        &["--name", "bond0", "--data"],
        file,
        || kernel_counts(a),
        ("frame", "frame.protocols"),
    );
    let _ = ping.kill();
    let _ = ping.wait();
    eprintln!("{out}");
    // LACP at the fast rate, ARP at one a second: at most 3 frames a
    // second per direction cross an edge.
    let slack = (gaps.ceil() as u64 + 1) * 3;
    eprintln!("bond --data: file {all:?}, kernel counted {delta:?}, {gaps:.2}s outside");
    for (k, d) in &delta {
        let got = all.get(k).copied().unwrap_or(0);
        assert!(
            got <= *d && d - got <= slack,
            "{k:?}: {got} frames in the file, the kernel counted {d} (slack {slack})"
        );
    }
    let (lacp, _) = read_frames(file, "lacp", "lacp.actor.sysid");
    let lacp_out: u64 = lacp
        .iter()
        .filter(|(k, _)| k.1 == "out")
        .map(|(_, v)| v)
        .sum();
    assert!(lacp_out >= 4, "LACPDUs from the bond: {lacp:?}");
    let (arp, _) = read_frames(file, "arp.dst.proto_ipv4 == 10.0.31.10", "arp.opcode");
    let arp_out: u64 = arp
        .iter()
        .filter(|(k, _)| k.1 == "out")
        .map(|(_, v)| v)
        .sum();
    assert!(arp_out >= 2, "ARP requests sent as data frames: {arp:?}");
    // Written in time order, whichever reader saw each frame.
    let deltas = tshark(file, &["-T", "fields", "-e", "frame.time_delta"]);
    assert!(
        deltas.lines().all(|d| !d.starts_with('-')),
        "frames out of order: {deltas}"
    );
    assert!(out.contains("eth1: ") && out.contains("0 dropped"), "{out}");
}

/// The bond's PAgP hello counters per member.
fn pagp_counts(ns: &str) -> Counts {
    let v = json(ns, &["status", "--name", "bond0", "--json"]);
    let mut c = Counts::new();
    for m in v[0]["members"].as_array().expect("status members") {
        let name = m["name"].as_str().unwrap().to_string();
        let p = &m["pagp"];
        c.insert(
            (name.clone(), "in".into()),
            p["hellos_rx"].as_u64().unwrap(),
        );
        c.insert((name, "out".into()), p["hellos_tx"].as_u64().unwrap());
    }
    c
}

/// A balance-xor bond running PAgP (desirable, fast) into a lagkit
/// switch's `mode desirable` channel: the bond's capture holds its PAgP
/// hellos, each direction as many as it counted.
#[test]
fn a_pagp_bond_captured_while_running_holds_its_hellos() {
    let Some(r) = Rig::new(
        "capture_pagp",
        "hostname capp\ninterface range gi1/1 - 2\n channel-group 5 mode desirable non-silent\n",
        "name = \"bond0\"\nmode = \"balance-xor\"\nmembers = [\"eth1\", \"eth2\"]\npagp = \"desirable\"\npagp_rate = \"fast\"\naddress = [\"10.0.32.1/24\"]\n",
        Some("bpf"),
    ) else {
        return;
    };
    // Under the kernel engine a data capture is refused, saying why and
    // what works instead.
    let refused = Command::new("ip")
        .args([
            "netns", "exec", &r.sw, BIN, "capture", "--switch", "capp", "--data",
        ])
        .args(["-w", "/dev/null", "--duration", "1s"])
        .output()
        .unwrap();
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && why.contains("forwards data frames in the kernel")
            && why.contains("--engine userspace"),
        "{refused:?}"
    );
    let (sw, a, dir) = (r.sw.clone(), r.a.clone(), &r.dir);
    wait_until(
        "both members in the PAgP channel, on both sides",
        Duration::from_secs(40),
        || {
            json(&a, &["status", "--name", "bond0", "--json"])[0]["pagp"]["members_in_channel"]
                .as_u64()
                == Some(2)
                && flags(&sw, 5) == ["P", "P"]
        },
    );
    let file = dir.0.join("pagp.pcapng");
    let (counts, _, delta, gaps, out) = capture_frames(
        &a,
        &["--name", "bond0"],
        &file,
        || pagp_counts(&a),
        // Information PDUs (version 1), which the counters count; the
        // Flush PDUs of a join are version 2.
        ("pagp.version == 1", "pagp.version"),
    );
    eprintln!("{out}");
    // The switch's hellos follow its own timers, not the bond's fast rate:
    // what the bond received is held to its counter, not to a minimum.
    assert_matches("pagp bond", &counts, &delta, gaps, &["out"]);
}
