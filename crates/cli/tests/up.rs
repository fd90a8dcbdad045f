//! `lagkit up` as a user runs it: the binary inside two network namespaces
//! with the README's minimal configuration, queried with `lagkit status`,
//! carrying TCP, surviving a pulled cable, reloading on SIGHUP and giving
//! the members back on SIGTERM. Root only; skips with a message otherwise.
//!
//! Every test runs twice, once per engine (the `engines!` list at the end
//! makes a `bpf::` and a `userspace::` test of each): every `lagkit up`
//! a test starts gets `--engine` for its thread's engine.

use lagkit_api::status::{BondStats, BondStatus};
use lagkit_sys::proc::Signal;
use lagkit_testnet::{tcp_transfer, wait_until, Lab};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

thread_local! {
    /// The engine of the test running on this thread (set by `engines!`).
    static ENGINE: std::cell::Cell<&'static str> = const { std::cell::Cell::new("auto") };
}

/// `up` and the options that choose this test's engine.
fn up_args() -> [&'static str; 3] {
    ["up", "--engine", ENGINE.with(|e| e.get())]
}

fn config(dir: &Path, side: &str, members: &[&str], addr: &str) -> PathBuf {
    let list: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    let text = format!(
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [{}]\nxmit_hash_policy = \"layer3+4\"\nlacp_rate = \"fast\"\naddress = [\"{addr}\"]\n",
        list.join(", ")
    );
    let p = dir.join(format!("{side}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// A running `lagkit up`; SIGTERM and reaped on drop (also on failure).
struct Daemon(Child);

impl Daemon {
    fn signal(&self, sig: Signal) {
        let _ = lagkit_sys::proc::kill(self.0.id(), sig);
    }

    /// SIGTERM, then its exit status.
    fn stop(&mut self) -> std::process::ExitStatus {
        self.signal(Signal::SIGTERM);
        self.0.wait().expect("wait")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.signal(Signal::SIGTERM);
            let _ = self.0.wait();
        }
    }
}

fn up(ns: &str, cfg: &Path) -> Daemon {
    let child = Command::new("ip")
        .args(["netns", "exec", ns, BIN])
        .args(up_args())
        .arg(cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lagkit up starts");
    Daemon(child)
}

fn status(ns: &str) -> Option<BondStatus> {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, BIN, "status", "--name", "bond0", "--json",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v: Vec<BondStatus> = serde_json::from_slice(&out.stdout).ok()?;
    v.pop()
}

fn stats(ns: &str) -> BondStats {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, BIN, "stats", "--name", "bond0", "--json",
        ])
        .output()
        .expect("lagkit stats runs");
    assert!(out.status.success(), "lagkit stats: {out:?}");
    let mut v: Vec<BondStats> = serde_json::from_slice(&out.stdout).expect("stats JSON");
    v.pop().expect("one bond")
}

/// Bytes member `name` sent and received.
fn bytes(s: &BondStats, name: &str) -> u64 {
    let m = s.members.iter().find(|m| m.name == name).expect("member");
    m.tx_bytes + m.rx_bytes
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

fn tmpdir(tag: &str) -> PathBuf {
    let engine = ENGINE.with(|e| e.get());
    let d = std::env::temp_dir().join(format!("lkt-up-{}-{tag}-{engine}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn readme_minimal_config_bonds_carries_tcp_survives_a_pulled_cable_and_restores() {
    let Some(mut lab) = Lab::new("readme_minimal_config") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("readme");
    let ca = config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    let cb = config(&dir, "b", &["eth1", "eth2"], "10.0.0.2/24");
    let mut pa = up(&a, &ca);
    let mut pb = up(&b, &cb);
    wait_until(
        "both bonds aggregate 2 ports",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    // A long transfer, and a cable pulled in the middle of it.
    let (na, nb) = (a.clone(), b.clone());
    let t = std::thread::spawn(move || tcp_transfer(&nb, "10.0.0.2:6001", &na, 400 << 20));
    std::thread::sleep(Duration::from_millis(200));
    lab.sh(&["ip", "-n", &a, "link", "set", "eth2", "down"]);
    let t = t.join().expect("transfer");
    assert_eq!(t.sent, t.received, "the TCP session survived");
    assert_eq!(t.sent_hash, t.recv_hash);
    wait_until("status shows one port", Duration::from_secs(5), || {
        ports(&a) == 1
    });
    let st = status(&a).unwrap();
    assert_eq!(
        st.members[1].mii_status,
        lagkit_api::status::MiiStatus::Down
    );
    // The pulled cable is timed from its link event to the plan without
    // eth2: the failover figure, within the bond's failover budget.
    let down = stats(&a).latency(false).expect("the pull is timed");
    assert_eq!(down.count, 1, "one link went down");
    assert!(
        down.max_ns < 50_000_000,
        "link down to new plan took {} µs",
        down.max_ns / 1000
    );
    let ups = stats(&a).latency(true).map_or(0, |l| l.count);
    lab.sh(&["ip", "-n", &a, "link", "set", "eth2", "up"]);
    wait_until("eth2 rejoins", Duration::from_secs(20), || ports(&a) == 2);
    // Its return is timed apart, to the plan once LACP agreed.
    wait_until("eth2's return is timed", Duration::from_secs(5), || {
        stats(&a).latency(true).is_some_and(|l| l.count > ups)
    });

    // SIGTERM: the daemon exits 0, the TAP is gone, members are restored.
    let ea = pa.stop();
    let _ = pb.stop();
    assert!(ea.success(), "lagkit up exits 0 on SIGTERM");
    let links = lab.sh(&["ip", "-n", &a, "-o", "link"]);
    assert!(!links.contains("bond0"), "TAP removed: {links}");
    assert!(!links.contains("NOARP"), "ARP restored on members: {links}");
    let _ = std::fs::remove_dir_all(dir);
}

fn invalid_config_exits_2_names_the_line_and_touches_nothing() {
    let Some(mut lab) = Lab::new("invalid_config") else {
        return;
    };
    let a = lab.netns();
    lab.veth(&a, "eth1", &a, "eth9");
    let dir = tmpdir("invalid");
    let p = dir.join("bad.toml");
    std::fs::write(
        &p,
        "name = \"bond0\"\nmembers = [\"eth1\"]\nmode = \"balance-foo\"\n",
    )
    .unwrap();
    let before = lab.sh(&["ip", "-n", &a, "-o", "link"]);
    let out = Command::new("ip")
        .args(["netns", "exec", &a, BIN])
        .args(up_args())
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:3"), "names the line: {err}");
    assert!(
        err.contains("mode") && err.contains("802.3ad"),
        "names key and fix: {err}"
    );
    assert_eq!(
        lab.sh(&["ip", "-n", &a, "-o", "link"]),
        before,
        "no interface touched"
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn sighup_adds_and_removes_members_without_disturbing_the_others() {
    let Some(mut lab) = Lab::new("sighup") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=3 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("sighup");
    let ca = config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    let cb = config(&dir, "b", &["eth1", "eth2", "eth3"], "10.0.0.2/24");
    let pa = up(&a, &ca);
    let _pb = up(&b, &cb);
    wait_until("2 ports", Duration::from_secs(20), || ports(&a) == 2);
    let churn_before = status(&a).unwrap().members[0].link_failure_count;
    // Traffic runs while the configuration grows by one member.
    let (na, nb) = (a.clone(), b.clone());
    let t = std::thread::spawn(move || tcp_transfer(&nb, "10.0.0.2:6101", &na, 300 << 20));
    config(&dir, "a", &["eth1", "eth2", "eth3"], "10.0.0.1/24");
    pa.signal(Signal::SIGHUP);
    wait_until("3 ports after SIGHUP", Duration::from_secs(20), || {
        ports(&a) == 3
    });
    let t = t.join().unwrap();
    assert_eq!(t.sent, t.received);
    assert_eq!(t.sent_hash, t.recv_hash);
    let st = status(&a).unwrap();
    assert_eq!(
        st.members[0].link_failure_count, churn_before,
        "eth1 was not disturbed"
    );
    // And shrinks again, by its first member: the members that stay keep
    // their own counts (the kernel's counters are by position).
    let before = stats(&a);
    config(&dir, "a", &["eth2", "eth3"], "10.0.0.1/24");
    pa.signal(Signal::SIGHUP);
    wait_until("2 members after SIGHUP", Duration::from_secs(20), || {
        status(&a).is_some_and(|s| s.members.len() == 2) && ports(&a) == 2
    });
    let after = stats(&a);
    for name in ["eth2", "eth3"] {
        let (was, is) = (bytes(&before, name), bytes(&after, name));
        assert!(
            is >= was && is - was < 1 << 20,
            "{name}: {was} bytes before the reload, {is} after (another member's count?)"
        );
    }
    let links = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "eth1"]);
    assert!(!links.contains("NOARP"), "eth1 given back: {links}");
    let _ = std::fs::remove_dir_all(dir);
}

fn two_bonds_in_one_file_run_side_by_side() {
    let Some(mut lab) = Lab::new("two_bonds") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=4 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("two");
    let file = |side: &str, n: u8| {
        let p = dir.join(format!("{side}.toml"));
        std::fs::write(
            &p,
            format!(
                "mode = \"802.3ad\"\nlacp_rate = \"fast\"\n\n[bond0]\nmembers = [\"eth1\", \"eth2\"]\naddress = [\"10.0.0.{n}/24\"]\n\n[bond1]\nmembers = [\"eth3\", \"eth4\"]\naddress = [\"10.0.1.{n}/24\"]\n"
            ),
        )
        .unwrap();
        p
    };
    let (fa, fb) = (file("a", 1), file("b", 2));
    let _pa = up(&a, &fa);
    let _pb = up(&b, &fb);
    let bond_ports = |ns: &str, bond: &str| -> usize {
        Command::new("ip")
            .args(["netns", "exec", ns, BIN, "status", "--name", bond, "--json"])
            .output()
            .ok()
            .and_then(|o| serde_json::from_slice::<Vec<BondStatus>>(&o.stdout).ok())
            .and_then(|mut v| v.pop())
            .and_then(|s| s.lacp)
            .map_or(0, |l| l.number_of_ports)
    };
    wait_until("both bonds aggregate", Duration::from_secs(20), || {
        bond_ports(&a, "bond0") == 2 && bond_ports(&a, "bond1") == 2
    });
    let t0 = tcp_transfer(&b, "10.0.0.2:6601", &a, 8 << 20);
    let t1 = tcp_transfer(&b, "10.0.1.2:6602", &a, 8 << 20);
    assert!(t0.sent == t0.received && t1.sent == t1.received);
    // `lagkit status` with no bond lists both.
    let all = lab.nsexec(&a, &[BIN, "status"]);
    assert!(
        all.contains("Bond: bond0") && all.contains("Bond: bond1"),
        "{all}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `lagkit ARGS` in a namespace to completion: (exit code, stderr+stdout).
fn run(ns: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN])
        .args(match args {
            ["up", rest @ ..] => up_args().iter().chain(rest).copied().collect::<Vec<_>>(),
            _ => args.to_vec(),
        })
        .output()
        .expect("lagkit runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.code(), text)
}

/// One line per interface of a namespace, without the qdisc (the kernel
/// attaches `noqueue` the first time an interface goes up; not lagkit's).
/// `ip -o link` in `ns` without qdisc names, read once the kernel's link
/// watcher has caught up: a member set up or down a moment ago keeps its old
/// operational state (and RUNNING flag) for up to a second, and two reads
/// straddling that update would differ though nothing was touched.
fn links(lab: &Lab, ns: &str) -> String {
    let read = || lab.sh(&["ip", "-n", ns, "-o", "link"]);
    let settled = |text: &str| {
        text.lines().filter(|l| !l.contains("LOOPBACK")).all(|l| {
            let flags = l.split(['<', '>']).nth(1).unwrap_or("");
            let has = |f: &str| flags.split(',').any(|x| x == f);
            if !has("UP") {
                l.contains("state DOWN")
            } else if has("LOWER_UP") {
                l.contains("state UP")
            } else {
                has("NO-CARRIER") && l.contains("state DOWN")
            }
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    let mut text = read();
    while !settled(&text) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        text = read();
    }
    text.lines()
        .map(|l| {
            let mut w: Vec<&str> = l.split(' ').collect();
            if let Some(i) = w.iter().position(|x| *x == "qdisc") {
                w.drain(i..(i + 2).min(w.len()));
            }
            w.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The run-time files of every bond in a namespace (`/run/lagkit/<netns>/`).
fn run_files(ns: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c"])
        .arg("d=/run/lagkit/$(stat -L -c %i /proc/self/ns/net); [ -d $d ] && find $d || true")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn a_failed_start_gives_everything_back() {
    let Some(mut lab) = Lab::new("failed_start") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("failed");
    // New devices get no IPv6 here, so the bond's IPv6 address fails after
    // the members were taken.
    lab.nsexec(
        &a,
        &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
    );
    let before = links(&lab, &a);
    let cfg = config(&dir, "v6", &["eth1", "eth2"], "fd00::1/64");
    let (code, text) = run(&a, &["up", cfg.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("fd00::1/64"), "names the address: {text}");
    assert_eq!(links(&lab, &a), before, "members as they were, no bond0");
    assert!(
        run_files(&a).is_empty(),
        "no run files: {:?}",
        run_files(&a)
    );

    // The loopback interface is refused, and left alone.
    let lo_before = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "lo"]);
    let cfg = config(&dir, "lo", &["lo"], "10.0.0.1/24");
    let (code, text) = run(&a, &["up", cfg.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("loopback"), "{text}");
    assert_eq!(
        lab.sh(&["ip", "-n", &a, "-o", "link", "show", "lo"]),
        lo_before
    );
    assert!(run_files(&a).is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

fn sigkill_then_restart_restores_originals_and_reforms_within_3s() {
    let Some(mut lab) = Lab::new("sigkill") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    lab.sh(&["ip", "-n", &a, "link", "set", "eth1", "mtu", "1400"]);
    let originals = links(&lab, &a);
    let dir = tmpdir("sigkill");
    let ca = config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    let cb = config(&dir, "b", &["eth1", "eth2"], "10.0.0.2/24");
    let mut pa = up(&a, &ca);
    let _pb = up(&b, &cb);
    wait_until("2 ports", Duration::from_secs(20), || {
        ports(&a) == 2 && ports(&b) == 2
    });
    pa.signal(Signal::SIGKILL);
    let _ = pa.0.wait();
    assert!(
        run_files(&a).iter().any(|f| f.ends_with("state.json")),
        "the state file outlives a SIGKILL"
    );
    // A second daemon meanwhile is refused before touching anything.
    let t0 = std::time::Instant::now();
    let mut pa = up(&a, &ca);
    wait_until("2 ports again", Duration::from_secs(20), || ports(&a) == 2);
    let reformed = t0.elapsed();
    eprintln!("aggregate back {reformed:?} after restart");
    assert!(reformed < Duration::from_secs(3), "{reformed:?}");
    let (code, text) = run(&a, &["up", ca.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(text.contains("already running (pid"), "{text}");
    // A clean stop now restores the true originals (MTU 1400, ARP on),
    // not what the killed daemon had set.
    assert!(pa.stop().success());
    assert_eq!(links(&lab, &a), originals);
    assert!(run_files(&a).is_empty(), "{:?}", run_files(&a));

    // `lagkit down` restores after a SIGKILL without starting anything.
    let mut pa = up(&a, &ca);
    wait_until("2 ports", Duration::from_secs(20), || ports(&a) == 2);
    pa.signal(Signal::SIGKILL);
    let _ = pa.0.wait();
    let (code, text) = run(&a, &["down", "--name", "bond0"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("restored eth1, eth2"), "{text}");
    assert_eq!(links(&lab, &a), originals);
    assert!(run_files(&a).is_empty());
    let (code, text) = run(&a, &["down", "--name", "bond0"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("nothing to restore"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

fn a_member_belongs_to_one_bond() {
    let Some(mut lab) = Lab::new("exclusive") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=3 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("exclusive");
    let ca = config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    let _pa = up(&a, &ca);
    wait_until("bond0 runs", Duration::from_secs(10), || {
        status(&a).is_some()
    });
    let pid = _pa.0.id();
    // Another daemon, another bond name, one shared member.
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        "name = \"bond7\"\nmode = \"balance-xor\"\nmembers = [\"eth2\", \"eth3\"]\n",
    )
    .unwrap();
    let before = links(&lab, &a);
    let (code, text) = run(&a, &["up", other.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("eth2 is in use by bond bond0") && text.contains(&format!("pid {pid}")),
        "{text}"
    );
    assert_eq!(links(&lab, &a), before, "nothing touched");
    // Two bonds of one file sharing a member: a configuration mistake.
    let both = dir.join("both.toml");
    std::fs::write(
        &both,
        "mode = \"balance-xor\"\n[bond5]\nmembers = [\"eth3\"]\n[bond6]\nmembers = [\"eth3\"]\n",
    )
    .unwrap();
    let (code, text) = run(&a, &["up", both.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("'eth3' is already in bond 'bond5'"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

fn link_failure_count_counts_failures_only_and_permission_is_explained() {
    let Some(mut lab) = Lab::new("failure_count") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = tmpdir("count");
    let ca = config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    let cb = config(&dir, "b", &["eth1", "eth2"], "10.0.0.2/24");
    let _pa = up(&a, &ca);
    let _pb = up(&b, &cb);
    wait_until("2 ports", Duration::from_secs(20), || ports(&a) == 2);
    let st = status(&a).unwrap();
    assert!(
        st.members.iter().all(|m| m.link_failure_count == 0),
        "starting is no failure: {:?}",
        st.members
    );
    lab.sh(&["ip", "-n", &a, "link", "set", "eth2", "down"]);
    wait_until("one failure", Duration::from_secs(5), || {
        status(&a).is_some_and(|s| s.members[1].link_failure_count == 1)
    });
    lab.sh(&["ip", "-n", &a, "link", "set", "eth2", "up"]);
    // Any local user reads the status, as any user reads
    // /proc/net/bonding, without what the kernel keeps to CAP_NET_ADMIN;
    // capturing frames stays root's.
    let sock = run_files(&a)
        .into_iter()
        .find(|f| f.ends_with("bond0.sock"))
        .expect("control socket");
    let as_nobody = |args: &[&str]| {
        let mut cmd = Command::new("ip");
        cmd.args([
            "netns",
            "exec",
            &a,
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
        ])
        .args(["--clear-groups", "--inh-caps=-all", BIN])
        .args(args);
        cmd.output().unwrap()
    };
    let out = as_nobody(&["status", "--socket", &sock, "--format", "proc"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Bonding Mode: IEEE 802.3ad Dynamic link aggregation\n"),
        "{text}"
    );
    assert!(
        text.contains("Aggregator selection policy (ad_select): stable\n"),
        "{text}"
    );
    assert!(text.contains("Slave Interface: eth2\n"), "{text}");
    for kept_back in [
        "System MAC address",
        "details actor lacp pdu",
        "Active Aggregator Info",
    ] {
        assert!(
            !text.contains(kept_back),
            "{kept_back} shown to nobody: {text}"
        );
    }
    let root = Command::new("ip")
        .args([
            "netns", "exec", &a, BIN, "status", "--socket", &sock, "--format", "proc",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&root.stdout).contains("details actor lacp pdu"));
    let cap = dir.join("nobody.pcapng");
    let out = as_nobody(&[
        "capture",
        "--socket",
        &sock,
        "-w",
        cap.to_str().unwrap(),
        "--duration",
        "1s",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs root or CAP_NET_ADMIN"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

fn check_warns_about_a_missing_member_and_up_waits_for_it() {
    let Some(mut lab) = Lab::new("check_missing") else {
        return;
    };
    let a = lab.netns();
    lab.veth(&a, "eth1", &a, "peer1");
    let dir = tmpdir("check");
    let cfg = config(&dir, "a", &["eth1", "eth9"], "10.0.0.1/24");
    let (code, text) = run(&a, &["up", "--check", cfg.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("warning: member eth9 does not exist"),
        "{text}"
    );
    assert!(!text.contains("eth1 does not exist"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------- offloads --

/// A lab for an offload test, or None (with a SKIP) without root or
/// `ethtool`; a missing `ethtool` fails the test when `CI` is set.
fn ethtool_lab(test: &str) -> Option<Lab> {
    let lab = Lab::new(test)?;
    if Command::new("ethtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some(lab);
    }
    let why = "needs ethtool (apt-get install -y ethtool)";
    if std::env::var_os("CI").is_some() {
        panic!("{test}: CI is set but the test cannot run: {why}");
    }
    eprintln!("SKIP {test}: {why}");
    None
}

/// A test's directory of files, removed on drop (also when the test fails).
struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `ethtool -k IF` in a namespace.
fn features(lab: &Lab, ns: &str, ifname: &str) -> String {
    lab.nsexec(ns, &["ethtool", "-k", ifname])
}

/// tx-checksumming, TSO and GSO as `ethtool -k` shows them: "on"/"off".
fn tx_tso_gso(lab: &Lab, ns: &str, ifname: &str) -> [String; 3] {
    let text = features(lab, ns, ifname);
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    [
        get("tx-checksumming"),
        get("tcp-segmentation-offload"),
        get("generic-segmentation-offload"),
    ]
}

/// An active-backup bond0 on `members` with `offloads` as given.
fn offloads_config(path: &Path, members: &[&str], addr: &str, offloads: &str) {
    let list: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    let text = format!(
        "name = \"bond0\"\nmode = \"active-backup\"\nmembers = [{}]\naddress = [\"{addr}\"]\noffloads = {offloads}\n",
        list.join(", ")
    );
    std::fs::write(path, text).unwrap();
}

/// Whether the status shows every member taken with lagkit keeping its
/// offloads off (`off`) or leaving them alone.
fn offloads_kept_off(ns: &str, off: bool) -> bool {
    status(ns).is_some_and(|s| {
        s.members
            .iter()
            .all(|m| m.offloads.as_ref().is_some_and(|o| o.kept_off == off))
    })
}

fn offloads_false_turns_tx_tso_gso_off_and_every_exit_gives_them_back() {
    let test = "offloads_false";
    let Some(mut lab) = ethtool_lab(test) else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    // The operator had GSO off on eth2: it stays off after lagkit.
    lab.nsexec(&a, &["ethtool", "-K", "eth2", "gso", "off"]);
    let before = [features(&lab, &a, "eth1"), features(&lab, &a, "eth2")];
    let now = |lab: &Lab| [features(lab, &a, "eth1"), features(lab, &a, "eth2")];
    assert_eq!(tx_tso_gso(&lab, &a, "eth1"), ["on", "on", "on"]);
    let dir = TmpDir(tmpdir("offloads"));
    let cfg = dir.0.join("a.toml");
    offloads_config(&cfg, &["eth1", "eth2"], "10.0.0.1/24", "false");

    let mut pa = up(&a, &cfg);
    wait_until(
        "both members taken, offloads off",
        Duration::from_secs(20),
        || offloads_kept_off(&a, true),
    );
    for m in ["eth1", "eth2"] {
        assert_eq!(tx_tso_gso(&lab, &a, m), ["off", "off", "off"], "{m}");
    }
    let st = status(&a).unwrap();
    let eth1 = st.members[0].offloads.clone().unwrap();
    assert!((eth1.tx, eth1.tso, eth1.gso) == (false, false, false));
    assert!(
        eth1.turned_off
            .iter()
            .any(|f| f == "tx-checksum-ip-generic"),
        "{eth1:?}"
    );
    assert!(eth1
        .turned_off
        .iter()
        .any(|f| f == "tx-generic-segmentation"));
    let eth2 = st.members[1].offloads.clone().unwrap();
    assert!(
        !eth2
            .turned_off
            .iter()
            .any(|f| f == "tx-generic-segmentation"),
        "GSO was off already, so lagkit neither turns it off nor back on: {eth2:?}"
    );
    let (code, text) = run(&a, &["status", "--name", "bond0"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("Transmit offloads: tx off, tso off, gso off (offloads = false: turned off by lagkit; turned back on at exit: "),
        "{text}"
    );
    assert!(pa.stop().success());
    assert_eq!(
        now(&lab),
        before,
        "SIGTERM gives every feature back as it was"
    );

    // SIGKILL: nothing runs at exit; the next start gives the features back
    // before it takes the members, so it records the true originals.
    let mut pa = up(&a, &cfg);
    wait_until("offloads off", Duration::from_secs(20), || {
        offloads_kept_off(&a, true)
    });
    pa.signal(Signal::SIGKILL);
    let _ = pa.0.wait();
    assert_eq!(
        tx_tso_gso(&lab, &a, "eth1"),
        ["off", "off", "off"],
        "left off by the killed daemon"
    );
    let mut pa = up(&a, &cfg);
    wait_until("offloads off again", Duration::from_secs(20), || {
        offloads_kept_off(&a, true)
    });
    let again = status(&a).unwrap().members[0].offloads.clone().unwrap();
    assert_eq!(
        again.turned_off, eth1.turned_off,
        "originals, not what the killed daemon set"
    );
    assert!(pa.stop().success());
    assert_eq!(now(&lab), before, "after SIGKILL and a restart");

    // `lagkit down` after a SIGKILL gives them back too.
    let mut pa = up(&a, &cfg);
    wait_until("offloads off", Duration::from_secs(20), || {
        offloads_kept_off(&a, true)
    });
    pa.signal(Signal::SIGKILL);
    let _ = pa.0.wait();
    let (code, text) = run(&a, &["down", "--name", "bond0"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(now(&lab), before, "after SIGKILL and lagkit down");
}

/// TCP from the bond through a peer that forwards frames in user space
/// without vnet headers: with `offloads = false` every byte arrives once;
/// with the offloads on (changed in place by SIGHUP) the peer copies
/// unfinished checksums onto the wire and the connection never opens.
fn tcp_through_a_user_space_wire_needs_offloads_false() {
    let test = "user_space_wire";
    let Some(mut lab) = ethtool_lab(test) else {
        return;
    };
    // bond0 (eth1) -- w1 [user-space forwarder] w2 -- p1 (a kernel host)
    let (b, w, p) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&b, "eth1", &w, "w1");
    lab.veth(&w, "w2", &p, "p1");
    for i in ["w1", "w2"] {
        lab.sh(&["ip", "-n", &w, "link", "set", i, "up"]);
    }
    // The far host is a kernel sender on a virtual wire too: its own
    // offloads go off by hand, as lab-recipes.md says.
    lab.nsexec(
        &p,
        &[
            "ethtool", "-K", "p1", "tx", "off", "tso", "off", "gso", "off",
        ],
    );
    lab.host(&p, "p1", "10.0.9.2/24");
    let wire = lagkit_testnet::UserWire::start(&w, "w1", "w2");
    let dir = TmpDir(tmpdir("wire"));
    let cfg = dir.0.join("b.toml");
    offloads_config(&cfg, &["eth1"], "10.0.9.1/24", "false");
    let mut pb = up(&b, &cfg);
    wait_until("eth1 taken, offloads off", Duration::from_secs(20), || {
        offloads_kept_off(&b, true)
    });
    let once = |t: lagkit_testnet::Transfer| {
        assert_eq!(t.sent, t.received, "every byte arrives");
        assert_eq!(t.sent_hash, t.recv_hash, "once and in order");
    };
    once(tcp_transfer(&p, "10.0.9.2:6301", &b, 8 << 20));
    once(tcp_transfer(&b, "10.0.9.1:6302", &p, 8 << 20));
    let (from_bond, _) = wire.counts();
    eprintln!("offloads off, bond to wire: {from_bond:?}");
    assert!(from_bond.frames > 1000, "{from_bond:?}");
    assert_eq!(
        (from_bond.unfinished_csum, from_bond.oversize),
        (0, 0),
        "the kernel finished every frame before the wire"
    );

    // SIGHUP with `offloads` changed: applied in place.
    let reload = |pb: &Daemon, off: bool| {
        offloads_config(&cfg, &["eth1"], "10.0.9.1/24", &(!off).to_string());
        pb.signal(Signal::SIGHUP);
        wait_until("the reload's offloads", Duration::from_secs(20), || {
            offloads_kept_off(&b, off)
        });
    };
    reload(&pb, false);
    assert_eq!(tx_tso_gso(&lab, &b, "eth1"), ["on", "on", "on"]);
    let listener =
        lagkit_dataplane::netns::run_in(&p, || std::net::TcpListener::bind("10.0.9.2:6303"))
            .unwrap()
            .unwrap();
    let server: std::net::SocketAddr = "10.0.9.2:6303".parse().unwrap();
    let tried = lagkit_dataplane::netns::run_in(&b, || {
        std::net::TcpStream::connect_timeout(&server, Duration::from_secs(3))
    })
    .unwrap();
    let (on, _) = wire.counts();
    eprintln!(
        "offloads on, bond to wire: {on:?}; connect: {:?}",
        tried.as_ref().map(|_| ())
    );
    assert!(
        on.unfinished_csum > from_bond.unfinished_csum,
        "frames with unfinished checksums reached the user-space peer: {on:?}"
    );
    assert!(
        tried.is_err(),
        "TCP cannot open through the peer with offloads on"
    );
    drop(listener);

    // And off again: TCP runs again.
    reload(&pb, true);
    once(tcp_transfer(&p, "10.0.9.2:6304", &b, 4 << 20));
    assert!(pb.stop().success());
    assert_eq!(
        tx_tso_gso(&lab, &b, "eth1"),
        ["on", "on", "on"],
        "given back at exit"
    );
    drop(wire);
}

/// `ip link show DEV` in `ns`: its flags (`<...>`) and its `state`.
fn link_flags(lab: &Lab, ns: &str, dev: &str) -> (String, String) {
    let out = lab.sh(&["ip", "-n", ns, "-o", "link", "show", dev]);
    let flags = out
        .split_once('<')
        .and_then(|(_, r)| r.split_once('>'))
        .map_or(String::new(), |(f, _)| f.to_string());
    let state = out
        .split_whitespace()
        .skip_while(|w| *w != "state")
        .nth(1)
        .unwrap_or("")
        .to_string();
    (flags, state)
}

/// `/sys/class/net/DEV/FILE` in `ns`, trimmed.
fn sysfs(lab: &Lab, ns: &str, dev: &str, file: &str) -> String {
    let path = format!("/sys/class/net/{dev}/{file}");
    lab.nsexec(ns, &["cat", &path]).trim().to_string()
}

/// The logical interface's carrier, operstate and speed as the host reads
/// them (`ip link`, sysfs): what routing daemons, keepalived and
/// wait-online follow.
fn host_view(lab: &Lab, ns: &str) -> (bool, String, String) {
    // ip link and sysfs are read one after the other: a snapshot counts
    // when ip link reads the same before and after sysfs.
    loop {
        let (flags, state) = link_flags(lab, ns, "bond0");
        let carrier_file = sysfs(lab, ns, "bond0", "carrier");
        let operstate = sysfs(lab, ns, "bond0", "operstate");
        let speed = sysfs(lab, ns, "bond0", "speed");
        if link_flags(lab, ns, "bond0") != (flags.clone(), state.clone()) {
            continue;
        }
        let lower_up = flags.split(',').any(|f| f == "LOWER_UP");
        assert_eq!(
            lower_up,
            carrier_file == "1",
            "ip link's flags <{flags}> and sysfs carrier {carrier_file} agree"
        );
        assert_eq!(state.to_lowercase(), operstate);
        return (lower_up, state, speed);
    }
}

fn the_bond_carrier_and_speed_follow_its_members_in_every_mode() {
    let Some(mut lab) = Lab::new("carrier_every_mode") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    let members = ["eth1", "eth2", "eth3"];
    for m in members {
        lab.veth(&a, m, &b, m);
        lab.prep_member(&b, m, 1500);
    }
    let engine = ENGINE.with(|e| e.get());
    let dir = tmpdir("carrier");
    // Each veth member says 10000 Mb/s. The userspace engine's TAP shows
    // the aggregate's speed; the BPF engine's veth end keeps veth's fixed
    // 10000 (docs/bond.md says why it stays a veth).
    let speed = |n: usize, mode: &str| -> String {
        if engine == "bpf" {
            return "10000".into();
        }
        match mode {
            "active-backup" | "broadcast" => 10_000,
            _ => 10_000 * n,
        }
        .to_string()
    };
    for mode in [
        "802.3ad",
        "balance-rr",
        "active-backup",
        "balance-xor",
        "broadcast",
        "balance-tlb",
        "balance-alb",
        "adaptive",
    ] {
        let text = format!(
            "name = \"bond0\"\nmode = \"{mode}\"\nmembers = [\"eth1\", \"eth2\", \"eth3\"]\nlacp_rate = \"fast\"\naddress = [\"10.0.9.1/24\"]\n"
        );
        let ca = dir.join(format!("a-{mode}.toml"));
        std::fs::write(&ca, &text).unwrap();
        let cb = dir.join(format!("b-{mode}.toml"));
        std::fs::write(&cb, text.replace("10.0.9.1", "10.0.9.2")).unwrap();
        let mut pa = up(&a, &ca);
        // 802.3ad needs an LACP partner; the other modes carry traffic
        // over any link with carrier.
        let mut pb = (mode == "802.3ad").then(|| up(&b, &cb));
        wait_until(
            &format!("{mode}: bond0 has carrier"),
            Duration::from_secs(20),
            || status(&a).is_some() && host_view(&lab, &a).0,
        );
        let (_, state, s) = host_view(&lab, &a);
        assert_eq!(
            (state.as_str(), s),
            ("UP", speed(3, mode)),
            "{mode}: all up"
        );
        // Cables pulled one by one at the far end: carrier stays while a
        // member carries traffic, and goes with the last.
        for (pulled, m) in members.iter().enumerate() {
            lab.sh(&["ip", "-n", &b, "link", "set", m, "down"]);
            let left = members.len() - pulled - 1;
            if left > 0 {
                let want = speed(left, mode);
                wait_until(
                    &format!("{mode}: {left} members left, speed {want}"),
                    Duration::from_secs(5),
                    || {
                        let (up, _, s) = host_view(&lab, &a);
                        up && s == want
                    },
                );
            } else {
                wait_until(
                    &format!("{mode}: every member down, so bond0 has no carrier"),
                    Duration::from_secs(5),
                    || !host_view(&lab, &a).0,
                );
                let (flags, state) = link_flags(&lab, &a, "bond0");
                assert!(flags.contains("NO-CARRIER"), "{mode}: <{flags}>");
                assert!(
                    state == "DOWN" || state == "LOWERLAYERDOWN",
                    "{mode}: operstate {state}"
                );
                let st = status(&a).unwrap();
                assert_eq!(st.mii_status, lagkit_api::status::MiiStatus::Down);
            }
        }
        // One cable back: carrier again.
        lab.sh(&["ip", "-n", &b, "link", "set", "eth2", "up"]);
        wait_until(
            &format!("{mode}: carrier back with eth2"),
            Duration::from_secs(20),
            || {
                let (up, state, s) = host_view(&lab, &a);
                up && state == "UP" && s == speed(1, mode)
            },
        );
        pa.stop();
        if let Some(p) = pb.as_mut() {
            p.stop();
        }
        for m in members {
            lab.sh(&["ip", "-n", &b, "link", "set", m, "up"]);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A member the host still uses is refused, naming why and the key that
/// overrides, before anything is touched: an address and the default route
/// through it (the management NIC of a server), a bridge port. `up
/// --check` says the same; `force_members` takes it anyway.
fn a_member_the_host_uses_is_refused_and_force_members_takes_it() {
    let Some(mut lab) = Lab::new("member_in_use") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for m in ["eth1", "eth2", "eth3"] {
        lab.veth(&a, m, &b, m);
        lab.prep_member(&b, m, 1500);
    }
    lab.sh(&[
        "ip",
        "-n",
        &a,
        "addr",
        "add",
        "192.168.77.1/24",
        "dev",
        "eth1",
    ]);
    lab.sh(&["ip", "-n", &a, "link", "set", "eth1", "up"]);
    lab.sh(&[
        "ip",
        "-n",
        &a,
        "route",
        "add",
        "default",
        "via",
        "192.168.77.254",
    ]);
    lab.bridge(&a, "br0", &["eth3".to_string()]);
    let dir = tmpdir("in_use");
    let cfg = config(&dir, "mgmt", &["eth1", "eth2"], "10.0.0.1/24");
    let before = links(&lab, &a);
    let (code, text) = run(&a, &["up", "--check", cfg.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    for part in [
        "member eth1 is in use: it holds 192.168.77.1/24",
        "the default route goes through it (default via 192.168.77.254)",
        "force_members = [\"eth1\"]",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
    let (code, text) = run(&a, &["up", cfg.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("member eth1 is in use"), "{text}");
    assert_eq!(links(&lab, &a), before, "nothing was touched");
    let addrs = lab.sh(&["ip", "-n", &a, "-o", "addr", "show", "dev", "eth1"]);
    assert!(addrs.contains("192.168.77.1/24"), "{addrs}");
    // A bridge port is refused too.
    let cfg3 = config(&dir, "port", &["eth3", "eth2"], "10.0.0.1/24");
    let (code, text) = run(&a, &["up", "--check", cfg3.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("member eth3 is in use: it is a port of bridge br0"),
        "{text}"
    );
    // Listed in force_members, it is taken.
    let forced = dir.join("forced.toml");
    let text = std::fs::read_to_string(&cfg).unwrap() + "force_members = [\"eth1\"]\n";
    std::fs::write(&forced, text).unwrap();
    let (code, text) = run(&a, &["up", "--check", forced.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    let mut d = up(&a, &forced);
    wait_until("the forced bond runs", Duration::from_secs(10), || {
        status(&a).is_some_and(|s| s.members.iter().all(|m| m.mii_status.is_up()))
    });
    let alias = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "eth1"]);
    assert!(
        alias.contains("alias member of lagkit bond bond0"),
        "{alias}"
    );
    let logical = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "bond0"]);
    assert!(
        logical.contains("alias lagkit bond bond0 (802.3ad)"),
        "{logical}"
    );
    assert!(d.stop().success());
    let alias = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "eth1"]);
    assert!(!alias.contains("alias"), "the alias is given back: {alias}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `lagkit up` runs the bond a host already defines, in its own dialect:
/// a netplan file, a systemd-networkd directory and NetworkManager
/// keyfiles each come up with their mode, members, addresses and MTU; a
/// setting lagkit cannot carry (a default route) is refused until
/// `--drop-unsupported`, and `lagkit convert` prints what it would run.
#[test]
fn up_runs_a_bond_written_in_another_dialect() {
    let Some(mut lab) = Lab::new("up_dialects") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for m in ["eth1", "eth2"] {
        lab.veth(&a, m, &b, m);
        lab.prep_member(&b, m, 1400);
    }
    let dir = tmpdir("dialects");
    let netplan = dir.join("01-bond.yaml");
    std::fs::write(
        &netplan,
        "network:\n  version: 2\n  ethernets:\n    eth1: {}\n    eth2: {}\n  bonds:\n    bond0:\n      interfaces: [eth1, eth2]\n      mtu: 1400\n      addresses: [10.0.61.1/24]\n      routes:\n        - to: default\n          via: 10.0.61.254\n      parameters:\n        mode: balance-xor\n        transmit-hash-policy: layer3+4\n        mii-monitor-interval: 100\n",
    )
    .unwrap();
    let networkd = dir.join("networkd");
    std::fs::create_dir_all(&networkd).unwrap();
    std::fs::write(networkd.join("25-bond0.netdev"), "[NetDev]\nName=bond0\nKind=bond\nMTUBytes=1400\n\n[Bond]\nMode=active-backup\nMIIMonitorSec=0.1\nPrimaryReselectPolicy=always\n").unwrap();
    std::fs::write(
        networkd.join("25-bond0.network"),
        "[Match]\nName=bond0\n\n[Network]\nAddress=10.0.62.1/24\n",
    )
    .unwrap();
    std::fs::write(
        networkd.join("25-eth1.network"),
        "[Match]\nName=eth1\n\n[Network]\nBond=bond0\nPrimarySlave=yes\n",
    )
    .unwrap();
    std::fs::write(
        networkd.join("25-eth2.network"),
        "[Match]\nName=eth2\n\n[Network]\nBond=bond0\n",
    )
    .unwrap();
    let nm = dir.join("nm");
    std::fs::create_dir_all(&nm).unwrap();
    std::fs::write(nm.join("bond0.nmconnection"), "[connection]\nid=bond0\nuuid=5d2a1c40-9b1e-4c7e-8f3a-0c9d2e6b7a11\ntype=bond\ninterface-name=bond0\n\n[ethernet]\nmtu=1400\n\n[bond]\nmiimon=100\nmode=balance-xor\nxmit_hash_policy=layer2+3\n\n[ipv4]\naddress1=10.0.63.1/24\nmethod=manual\n\n[ipv6]\nmethod=disabled\n").unwrap();
    for m in ["eth1", "eth2"] {
        // One port names the bond by its UUID, as NetworkManager may.
        let controller = if m == "eth1" {
            "bond0"
        } else {
            "5d2a1c40-9b1e-4c7e-8f3a-0c9d2e6b7a11"
        };
        std::fs::write(nm.join(format!("bond0-{m}.nmconnection")), format!("[connection]\nid=bond0-{m}\ntype=ethernet\ninterface-name={m}\ncontroller={controller}\nport-type=bond\n")).unwrap();
    }
    // A default route is not carried: refused until told to drop it.
    let (code, text) = run(&a, &["up", netplan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("routes: lagkit sets the bond's addresses, not routes"),
        "{text}"
    );
    assert!(text.contains("--drop-unsupported"), "{text}");
    let (code, text) = run(&a, &["convert", netplan.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("mode = \"balance-xor\"") && text.contains("# not carried: routes"),
        "{text}"
    );
    for (what, path, extra, mode, addr) in [
        (
            "netplan",
            &netplan,
            Some("--drop-unsupported"),
            lagkit_api::status::BondMode::BalanceXor,
            "10.0.61.1/24",
        ),
        (
            "networkd",
            &networkd,
            None,
            lagkit_api::status::BondMode::ActiveBackup,
            "10.0.62.1/24",
        ),
        (
            "NetworkManager",
            &nm,
            None,
            lagkit_api::status::BondMode::BalanceXor,
            "10.0.63.1/24",
        ),
    ] {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &a, BIN, "up"]).arg(path);
        if let Some(e) = extra {
            cmd.arg(e);
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut d = Daemon(child);
        wait_until(
            &format!("the {what} bond runs"),
            Duration::from_secs(10),
            || status(&a).is_some_and(|s| s.members.iter().all(|m| m.mii_status.is_up())),
        );
        let st = status(&a).unwrap();
        assert_eq!(st.mode, mode, "{what}");
        let members: Vec<&str> = st.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(members, ["eth1", "eth2"], "{what}");
        assert_eq!(st.mtu, 1400, "{what}");
        let ip = lab.sh(&["ip", "-n", &a, "-o", "addr", "show", "dev", "bond0"]);
        assert!(ip.contains(addr), "{what}: {ip}");
        if what == "networkd" {
            assert_eq!(st.primary.as_deref(), Some("eth1"), "PrimarySlave=yes");
            assert_eq!(st.miimon_ms, 100, "MIIMonitorSec=0.1 is 100 ms");
        }
        assert!(d.stop().success(), "{what}");
    }
    let _ = std::fs::remove_dir_all(dir);
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
    readme_minimal_config_bonds_carries_tcp_survives_a_pulled_cable_and_restores,
    invalid_config_exits_2_names_the_line_and_touches_nothing,
    sighup_adds_and_removes_members_without_disturbing_the_others,
    two_bonds_in_one_file_run_side_by_side,
    a_failed_start_gives_everything_back,
    sigkill_then_restart_restores_originals_and_reforms_within_3s,
    a_member_belongs_to_one_bond,
    link_failure_count_counts_failures_only_and_permission_is_explained,
    check_warns_about_a_missing_member_and_up_waits_for_it,
    offloads_false_turns_tx_tso_gso_off_and_every_exit_gives_them_back,
    tcp_through_a_user_space_wire_needs_offloads_false,
    the_bond_carrier_and_speed_follow_its_members_in_every_mode,
    a_member_the_host_uses_is_refused_and_force_members_takes_it,
);
