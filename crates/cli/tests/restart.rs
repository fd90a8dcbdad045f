//! Hitless restarts of the BPF engine: two `lagkit up` 802.3ad bonds back
//! to back (fast LACP), `ping -i 0.01` and four TCP connections across,
//! and one side's daemon killed with SIGKILL (or handed off with SIGUSR2)
//! and started again. Its programs stay attached through their bpffs pins
//! and forward with the last plan; the new daemon adopts them, resumes
//! LACP where the old one left it and replaces the programs with its own.
//!
//! Root only; skips with a message otherwise. Each test runs alone (no other
//! lab of this binary runs meanwhile) and cleans up on drop. bpffs is
//! mounted at /run/lagkit/bpffs for the tests' daemons (which `ip netns
//! exec` starts in a mount namespace of their own) if no bpffs is there.

mod common;

use common::{assert_flows_intact, bond_status as status, Daemon, Pinger, TmpDir};
use lagkit_sys::proc::Signal;
use lagkit_testnet::{tcp_until, wait_until, Lab};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");
const BPFFS: &str = "/run/lagkit/bpffs";

/// bpffs at [`BPFFS`] while any test of this binary needs it: mounted by
/// the first, unmounted by the last if a test mounted it.
struct Bpffs;

/// (tests holding it, whether a test mounted it).
static BPFFS_USERS: Mutex<(usize, bool)> = Mutex::new((0, false));

/// Whether `path` is the root of a bpffs (statfs(2), BPF_FS_MAGIC).
fn is_bpffs(path: &str) -> bool {
    #[allow(clippy::unnecessary_cast)]
    nix::sys::statfs::statfs(path).is_ok_and(|s| s.filesystem_type().0 as i64 == 0xcafe_4a11)
}

impl Bpffs {
    fn take() -> Bpffs {
        let mut u = BPFFS_USERS.lock().unwrap_or_else(|e| e.into_inner());
        if !is_bpffs(BPFFS) {
            std::fs::create_dir_all(BPFFS).expect("mkdir bpffs");
            nix::mount::mount(
                Some("bpf"),
                BPFFS,
                Some("bpf"),
                nix::mount::MsFlags::empty(),
                None::<&str>,
            )
            .unwrap_or_else(|e| panic!("mount -t bpf bpf {BPFFS}: {e}"));
            u.1 = true;
        }
        u.0 += 1;
        Bpffs
    }
}

impl Drop for Bpffs {
    fn drop(&mut self) {
        let mut u = BPFFS_USERS.lock().unwrap_or_else(|e| e.into_inner());
        u.0 -= 1;
        if u.0 == 0 && u.1 {
            let _ = nix::mount::umount2(BPFFS, nix::mount::MntFlags::MNT_DETACH);
            let _ = std::fs::remove_dir(BPFFS);
            u.1 = false;
        }
    }
}

/// A running `lagkit up --engine bpf`, its log appended to `log`;
/// `variant`: the build whose programs differ (an upgrade).
fn start_bond(ns: &str, cfg: &Path, log: &Path, variant: bool) -> Daemon {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns, BIN, "up", "--engine", "bpf"])
        .arg(cfg)
        .stdout(Stdio::null())
        .stderr(log);
    if variant {
        cmd.env("LAGKIT_TEST_BPF_VARIANT", "1");
    }
    Daemon(cmd.spawn().expect("lagkit up starts"))
}

fn write_config(path: &Path, addr: &str) {
    let text = format!(
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\n\
         address = [\"{addr}\"]\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\n"
    );
    std::fs::write(path, text).unwrap();
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

fn log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Log lines where a port leaves distribution or the aggregate goes down.
fn interruptions(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            l.contains("aggregator 1: down") || l.contains("mux: COLLECTING_DISTRIBUTING (")
        })
        .collect()
}

/// Waits (polling, with a deadline) until `d` has passed since `from`.
fn wait_from(from: Instant, d: Duration, what: &str) {
    wait_until(what, d + Duration::from_secs(1), || from.elapsed() >= d);
}

struct Rig {
    _lab: Lab,
    _bpffs: Bpffs,
    dir: TmpDir,
    a: String,
    b: String,
    da: Daemon,
    _db: Daemon,
}

impl Rig {
    fn new(test: &str) -> Option<Rig> {
        let mut lab = Lab::alone(test)?;
        let bpffs = Bpffs::take();
        let (a, b) = (lab.netns(), lab.netns());
        for i in 1..=2 {
            lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
        }
        let dir = TmpDir(std::env::temp_dir().join(format!("lkt-{test}-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).unwrap();
        write_config(&dir.0.join("a.toml"), "10.0.0.1/24");
        write_config(&dir.0.join("b.toml"), "10.0.0.2/24");
        let da = start_bond(&a, &dir.0.join("a.toml"), &dir.0.join("a.log"), false);
        let db = start_bond(&b, &dir.0.join("b.toml"), &dir.0.join("b.log"), false);
        wait_until(
            "both bonds aggregate 2 ports",
            Duration::from_secs(20),
            || ports(&a) == 2 && ports(&b) == 2,
        );
        Some(Rig {
            _lab: lab,
            _bpffs: bpffs,
            dir,
            a,
            b,
            da,
            _db: db,
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.0.join(name)
    }

    /// Starts side a's daemon again; waits until it has adopted the data
    /// path and aggregates both ports.
    fn restart_a(&mut self, variant: bool) {
        self.da = start_bond(&self.a, &self.path("a.toml"), &self.path("a.log"), variant);
        wait_until(
            "the new daemon answers and aggregates 2 ports",
            Duration::from_secs(10),
            || ports(&self.a) == 2,
        );
    }
}

/// The programs a's daemon loaded (id, tag) and the pin directory, and
/// checks that exactly those run on every hook, pinned.
fn programs_in_force(ns: &str) -> (Vec<(u32, String)>, String) {
    let st = status(ns).expect("status");
    let d = st.datapath.expect("the BPF engine reports its data path");
    let ids: Vec<u32> = d.programs.iter().map(|p| p.id).collect();
    assert_eq!(
        d.attached.len(),
        3,
        "bond0 egress, two members' ingress: {d:?}"
    );
    for h in &d.attached {
        assert_eq!(h.program_ids.len(), 1, "one program on each hook: {d:?}");
        assert!(
            ids.contains(&h.program_ids[0]),
            "this daemon's program runs: {d:?}"
        );
    }
    let pinned = d.pinned.expect("the links are pinned");
    assert!(Path::new(&pinned).is_dir(), "{pinned}");
    (
        d.programs.iter().map(|p| (p.id, p.tag.clone())).collect(),
        pinned,
    )
}

/// SIGKILL (or, `handoff`, SIGUSR2) of one side's daemon under traffic,
/// the new daemon started 1 s later (`variant`: programs that differ).
/// No ping is lost, every TCP byte arrives once and in order, the partner
/// never takes a port out, and the new daemon's programs replace the old
/// ones on every hook.
fn restart_loses_nothing(test: &str, handoff: bool, variant: bool) {
    let Some(mut r) = Rig::new(test) else {
        return;
    };
    let (before, pins_before) = programs_in_force(&r.a);
    let stop = Arc::new(AtomicBool::new(false));
    let tcp = tcp_until(&r.b, "10.0.0.2:6600", &r.a, 4, stop.clone());
    let wire = WireWatch::start(&r.b, "eth1", r.path("a-frames.pcap"));
    let ping = Pinger::start(&r.b, "10.0.0.1");
    let b_before = log(&r.path("b.log")).len();
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    let killed = Instant::now();
    if handoff {
        r.da.signal(Signal::SIGUSR2);
        let st = r.da.0.wait().expect("wait");
        assert_eq!(
            st.code(),
            Some(75),
            "a handoff exits with 75 (EX_TEMPFAIL): {st:?}"
        );
    } else {
        r.da.signal(Signal::SIGKILL);
        let _ = r.da.0.wait();
    }
    assert!(status(&r.a).is_none(), "no daemon answers");
    assert!(
        Path::new(&pins_before).is_dir(),
        "the pins outlive the daemon"
    );
    wait_from(killed, Duration::from_secs(1), "1 s without a daemon");
    r.restart_a(variant);
    let gap = killed.elapsed();
    wait_from(
        Instant::now(),
        Duration::from_secs(2),
        "traffic after the restart",
    );
    let ping = ping.finish();
    stop.store(true, Ordering::Relaxed);
    let flows = tcp.join().expect("TCP threads");
    wire.judge("a's LACPDUs on b's eth1", 2);

    let (after, pins_after) = programs_in_force(&r.a);
    let b_log = log(&r.path("b.log"));
    let down = interruptions(&b_log[b_before..]);
    assert!(
        down.is_empty(),
        "the partner took a port out: {down:#?}\nA: {}",
        log(&r.path("a.log"))
            .lines()
            .filter(|l| !l.contains("lagkit::lacp") || l.contains("mux"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let a_log = log(&r.path("a.log"));
    assert!(a_log.contains("adopting the data path"), "{a_log}");
    assert!(a_log.contains("resuming LACP"), "{a_log}");
    assert_flows_intact(&flows);
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "{test}: daemon away {gap:?}; ping {} sent, {lost} lost, {} duplicates; TCP {} MB",
        ping.transmitted,
        ping.duplicates,
        flows.iter().flatten().map(|f| f.sent).sum::<u64>() >> 20
    );
    assert!(ping.transmitted > 200, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");
    // New programs on every hook, the old ones gone with their pins.
    let (old_ids, new_ids): (Vec<u32>, Vec<u32>) = (
        before.iter().map(|p| p.0).collect(),
        after.iter().map(|p| p.0).collect(),
    );
    assert!(
        old_ids.iter().all(|i| !new_ids.contains(i)),
        "{before:?} {after:?}"
    );
    assert_ne!(pins_before, pins_after);
    assert!(
        !Path::new(&pins_before).exists(),
        "the old pins are released"
    );
    let tags_differ = before.iter().zip(&after).all(|(x, y)| x.1 != y.1);
    assert_eq!(
        tags_differ, variant,
        "tags before {before:?}, after {after:?}"
    );

    // `lagkit down` after a kill: the pins go, so does the bond, and the
    // members are given back.
    r.da.signal(Signal::SIGKILL);
    let _ = r.da.0.wait();
    let out = Command::new("ip")
        .args(["netns", "exec", &r.a, BIN, "down", "--name", "bond0"])
        .output()
        .expect("lagkit down");
    assert!(out.status.success(), "{out:?}");
    assert!(
        !Path::new(&pins_after).exists(),
        "lagkit down releases the pins"
    );
    let links = Command::new("ip")
        .args(["-n", &r.a, "-o", "link", "show"])
        .output()
        .expect("ip link");
    assert!(!String::from_utf8_lossy(&links.stdout).contains("bond0"));
}

#[test]
fn sigkill_and_restart_after_1s_loses_no_ping() {
    restart_loses_nothing("restart_kill", false, false);
}

#[test]
fn an_upgrade_to_other_programs_after_sigkill_loses_no_ping() {
    restart_loses_nothing("restart_upgrade", false, true);
}

#[test]
fn a_handoff_on_sigusr2_then_an_upgrade_loses_no_ping() {
    restart_loses_nothing("restart_handoff", true, true);
}

/// A chain of twenty restarts, SIGKILL and SIGUSR2 in turn, each new
/// daemon started at once and given a moment to settle: every one adopts
/// the data path its predecessor left and resumes LACP from what that one
/// recorded, so no ping is lost. (A daemon that adopted used to record no
/// partner, so the second restart in a row could not resume and lost the
/// aggregate for good.)
#[test]
fn twenty_restarts_in_a_row_lose_no_ping() {
    let Some(mut r) = Rig::new("restart_chain") else {
        return;
    };
    let wire = WireWatch::start(&r.b, "eth1", r.path("a-frames.pcap"));
    let ping = Pinger::start(&r.b, "10.0.0.1");
    let b_before = log(&r.path("b.log")).len();
    for n in 0..20 {
        if n % 2 == 0 {
            r.da.signal(Signal::SIGKILL);
            let _ = r.da.0.wait();
        } else {
            r.da.signal(Signal::SIGUSR2);
            let st = r.da.0.wait().expect("wait");
            assert_eq!(st.code(), Some(75), "restart {n}: {st:?}");
        }
        r.restart_a(n % 4 == 1);
        wait_until(
            &format!("restart {n}: the new daemon records both partners"),
            Duration::from_secs(5),
            || {
                let text = std::fs::read_to_string(run_state(&r.a)).unwrap_or_default();
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                (v["kernel"]["lacp"].as_array())
                    .is_some_and(|l| l.len() == 2 && l.iter().all(|p| !p.is_null()))
            },
        );
        wait_from(Instant::now(), Duration::from_millis(300), "settle");
    }
    let ping = ping.finish();
    wire.judge("a's LACPDUs on b's eth1", 20);
    let b_log = log(&r.path("b.log"));
    let down = interruptions(&b_log[b_before..]);
    assert!(down.is_empty(), "the partner took a port out: {down:#?}");
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "twenty restarts: ping {} sent, {lost} lost",
        ping.transmitted
    );
    assert!(ping.transmitted > 500, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");
    assert_eq!(ports(&r.a), 2);
}

/// A killed daemon's pins moved where lagkit does not look (as a user
/// could once do in a world-writable bpffs): its programs stay attached
/// with nothing holding them, first on every hook. The next daemon starts
/// afresh and must detach them, or they drop every data frame the members
/// receive. One program on each hook, its own, and no ping lost once it
/// aggregates.
#[test]
fn programs_whose_pins_were_moved_away_are_detached_at_the_next_start() {
    let Some(mut r) = Rig::new("restart_hidden") else {
        return;
    };
    let (before, pins) = programs_in_force(&r.a);
    let bond_dir = Path::new(&pins).parent().expect("bond0's pin directory");
    let root = bond_dir.ancestors().nth(3).expect("the bpffs root");
    let hidden = TmpDir(root.join(format!("hidden-{}", std::process::id())));
    std::fs::rename(bond_dir, &hidden.0).expect("move the pins away");
    r.da.signal(Signal::SIGKILL);
    let _ = r.da.0.wait();
    r.restart_a(false);
    let (after, _) = programs_in_force(&r.a);
    let old: Vec<u32> = before.iter().map(|p| p.0).collect();
    assert!(
        after.iter().all(|p| !old.contains(&p.0)),
        "{before:?} {after:?}"
    );
    let a_log = log(&r.path("a.log"));
    assert!(
        a_log.contains("detached a lagkit program that no daemon held"),
        "{a_log}"
    );
    wait_until(
        "b reaches a across the bond",
        Duration::from_secs(5),
        || lagkit_testnet::ping(&r.b, "10.0.0.1", 1).received == 1,
    );
    let p = lagkit_testnet::ping(&r.b, "10.0.0.1", 50);
    assert_eq!((p.received, p.duplicates), (50, 0), "{p:?}");
}

/// The state file of bond0 in namespace `ns`.
fn run_state(ns: &str) -> PathBuf {
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "stat",
            "-L",
            "-c",
            "%i",
            "/proc/self/ns/net",
        ])
        .output()
        .expect("stat");
    let ino = String::from_utf8_lossy(&out.stdout).trim().to_string();
    PathBuf::from(format!("/run/lagkit/{ino}/bond0/state.json"))
}

/// Away longer than the partner's timeout (3 s at the fast rate): the
/// kernel forwards on with the last plan, the partner takes the ports out
/// when its LACP information expires (802.1AX), and the new daemon's
/// aggregate forms again as a new one would (after the partner's 2 s
/// aggregate wait). Measured, and bounded: within 5 s of the restart
/// everything crosses again.
#[test]
fn away_past_the_partners_timeout_the_aggregate_re_forms() {
    let Some(mut r) = Rig::new("restart_late") else {
        return;
    };
    let ping = Pinger::start(&r.b, "10.0.0.1");
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    let killed = Instant::now();
    r.da.signal(Signal::SIGKILL);
    let _ = r.da.0.wait();
    wait_from(
        killed,
        Duration::from_millis(4500),
        "past the partner's timeout",
    );
    let restarted = Instant::now();
    r.restart_a(false);
    // The partner, which expired us, forms the aggregate again too, and
    // its bond has carrier again: its host then resolves our address anew
    // (the kernel flushed its neighbours when the carrier went, as for a
    // kernel bond). Only then does everything cross.
    wait_until(
        "the partner aggregates both ports again and reaches us",
        Duration::from_secs(6),
        || ports(&r.b) == 2 && lagkit_testnet::ping(&r.b, "10.0.0.1", 1).received == 1,
    );
    let formed = restarted.elapsed();
    let p = lagkit_testnet::ping(&r.b, "10.0.0.1", 20);
    let ping = ping.finish();
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "away 4.5 s: re-formed {formed:?} after the restart; {lost} of {} pings lost (10 ms apart)",
        ping.transmitted
    );
    assert!(formed < Duration::from_secs(5), "{formed:?}");
    assert_eq!((p.received, p.duplicates), (20, 0), "{p:?}");
    let b_log = log(&r.path("b.log"));
    assert!(
        b_log.contains("current_while_timer expired"),
        "the partner expired us"
    );
}

/// `lagkit lab down` on drop, so a failed test leaves no lab behind.
struct LabUp(PathBuf);

impl Drop for LabUp {
    fn drop(&mut self) {
        let _ = Command::new(BIN)
            .args(["lab", "down"])
            .arg(&self.0)
            .output();
    }
}

/// A lab whose BPF bond was killed with SIGKILL (its data path still
/// pinned) leaves no pin, run directory or namespace after `lagkit lab
/// down`: the pins would otherwise hold the programs and maps after the
/// namespace is gone.
#[test]
fn lab_down_after_a_killed_bond_leaves_no_pins() {
    use std::os::unix::fs::MetadataExt;
    let _fs = Bpffs::take();
    let dir = TmpDir(std::env::temp_dir().join(format!("lkt-lab-pins-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let name = format!("pins{}", std::process::id() % 100_000);
    let topo = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/lab/two-hosts.toml"
    ))
    .unwrap()
    .replace("name = \"two-hosts\"", &format!("name = \"{name}\""));
    let file = dir.0.join("lab.toml");
    std::fs::write(&file, topo).unwrap();
    let _down = LabUp(file.clone());
    let up = Command::new(BIN)
        .args(["lab", "up"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let ns = format!("lklab-{name}-h1");
    let ino = std::fs::metadata(format!("/run/netns/{ns}")).unwrap().ino();
    let pins = Path::new(BPFFS).join("lagkit").join(ino.to_string());
    let run = PathBuf::from(format!("/run/lagkit/{ino}"));
    wait_until(
        "h1's bond pins its data path",
        Duration::from_secs(20),
        || pins.join("bond0").exists(),
    );
    let pids = Command::new("ip")
        .args(["netns", "pids", &ns])
        .output()
        .unwrap();
    let mut killed = 0;
    for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "lagkit" {
            let _ = lagkit_sys::proc::kill(pid.parse().unwrap(), Signal::SIGKILL);
            killed += 1;
        }
    }
    assert_eq!(killed, 1, "one bond daemon in {ns}");
    assert!(pins.join("bond0").exists(), "a killed bond leaves its pins");
    let down = Command::new(BIN)
        .args(["lab", "down"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(!pins.exists(), "{} left behind", pins.display());
    assert!(!run.exists(), "{} left behind", run.display());
    assert!(!Path::new(&format!("/run/netns/{ns}")).exists());
}

/// The switch's side: a `lagkit up` bond (a) on Port-channel 1 of a
/// `lagkit switch --engine bpf` (Gi1/1-2 on p1, p2), a host (b, 10.0.0.2)
/// on access port Gi1/3 (p3).
struct SwitchRig {
    lab: Lab,
    _bpffs: Bpffs,
    dir: TmpDir,
    a: String,
    b: String,
    sw: String,
    da: Daemon,
    switch: Option<Daemon>,
    starts: usize,
    /// The switch's `--engine`.
    engine: &'static str,
}

const SW_PORTS: [&str; 3] = ["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3"];

impl SwitchRig {
    /// `bond`: the bond's protocol lines; `channel`: the switch members'
    /// `channel-group` and rate lines.
    fn new(test: &str, bond: &str, channel: &str) -> Option<SwitchRig> {
        SwitchRig::with_engine(test, bond, channel, "bpf")
    }

    fn with_engine(
        test: &str,
        bond: &str,
        channel: &str,
        engine: &'static str,
    ) -> Option<SwitchRig> {
        let mut lab = Lab::alone(test)?;
        let bpffs = Bpffs::take();
        let (a, b, sw) = (lab.netns(), lab.netns(), lab.netns());
        lab.veth(&a, "eth1", &sw, "p1");
        lab.veth(&a, "eth2", &sw, "p2");
        lab.veth(&b, "eth0", &sw, "p3");
        for ns in [&a, &b] {
            lab.nsexec(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        }
        lab.host(&b, "eth0", "10.0.0.2/24");
        common::switch::switch_ports(&lab, &sw, &["p1", "p2", "p3"], None);
        let dir = TmpDir(std::env::temp_dir().join(format!("lkt-{test}-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).unwrap();
        std::fs::write(
            dir.0.join("a.toml"),
            format!("name = \"bond0\"\nmembers = [\"eth1\", \"eth2\"]\naddress = [\"10.0.0.1/24\"]\n{bond}"),
        )
        .unwrap();
        std::fs::write(
            dir.0.join("switch.cfg"),
            format!("hostname sw\ninterface range gigabitethernet 1/1 - 2\n{channel}interface gigabitethernet 1/3\n switchport access vlan 1\n"),
        )
        .unwrap();
        let da = start_bond(&a, &dir.0.join("a.toml"), &dir.0.join("a.log"), false);
        let mut r = SwitchRig {
            lab,
            _bpffs: bpffs,
            dir,
            a,
            b,
            sw,
            da,
            switch: None,
            starts: 0,
            engine,
        };
        r.start_switch();
        wait_until("Po1 bundles both members", Duration::from_secs(40), || {
            r.bundled()
        });
        wait_until("the bond reaches the host", Duration::from_secs(10), || {
            lagkit_testnet::ping(&r.b, "10.0.0.1", 1).received == 1
        });
        Some(r)
    }

    fn bundled(&self) -> bool {
        common::switch::flags(&self.sw, 1) == ["P", "P"]
    }

    /// Starts the switch (log `sw-N.log`) and waits until it answers.
    fn start_switch(&mut self) {
        self.starts += 1;
        let log = self.dir.0.join(format!("sw-{}.log", self.starts));
        let cfg = self.dir.0.join("switch.cfg");
        let mut args = vec!["switch", cfg.to_str().unwrap(), "--engine", self.engine];
        for p in SW_PORTS {
            args.extend(["--port", p]);
        }
        self.switch = Some(common::switch::start(&self.sw, &args, &log));
        wait_until("the switch answers", Duration::from_secs(10), || {
            common::switch::show(&self.sw, &["etherchannel", "load-balance"]).is_some()
        });
    }

    fn switch_log(&self) -> String {
        log(&self.dir.0.join(format!("sw-{}.log", self.starts)))
    }
}

impl Drop for SwitchRig {
    fn drop(&mut self) {
        // A switch left pinned would forward on after the test.
        self.switch.take();
        let _ = Command::new("ip")
            .args(["netns", "exec", &self.sw, BIN, "switch", "down"])
            .output();
        let _ = &self.lab;
    }
}

/// The switch survives its daemon: killed (SIGKILL) and started again 1 s
/// later, or handed over on SIGUSR2 (exit 75, what `systemctl restart`
/// sends), its program stays pinned and forwards meanwhile, and the next
/// switch adopts it and resumes the channel from the recorded partners:
/// no ping from the host to the bond is lost, the bond never takes a port
/// out, for LACP (fast) and PAgP. After a kill, `lagkit switch down`
/// detaches what the dead switch left (nothing forwards any more).
fn switch_survives(test: &str, bond: &str, channel: &str, resumed: &str, out_of: &str) {
    let Some(mut r) = SwitchRig::new(test, bond, channel) else {
        return;
    };
    let a_before = log(&r.dir.0.join("a.log")).len();
    let wire = WireWatch::start(&r.a, "eth1", r.dir.0.join("switch-frames.pcap"));
    let ping = Pinger::start(&r.b, "10.0.0.1");
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    for round in 0..4 {
        let mut old = r.switch.take().expect("the switch runs");
        let handoff = round % 2 == 1;
        if handoff {
            old.signal(Signal::SIGUSR2);
            let st = old.0.wait().expect("wait");
            assert_eq!(st.code(), Some(75), "a handoff exits with 75: {st:?}");
        } else {
            old.signal(Signal::SIGKILL);
            let _ = old.0.wait();
        }
        let away = Instant::now();
        if !handoff {
            wait_from(away, Duration::from_secs(1), "1 s without a switch");
        }
        r.start_switch();
        wait_until(
            "Po1 bundled in the new switch",
            Duration::from_secs(10),
            || r.bundled(),
        );
        let sw_log = r.switch_log();
        assert!(sw_log.contains("adopting the ports"), "{sw_log}");
        assert!(sw_log.contains(resumed), "{sw_log}");
        assert!(sw_log.contains("took over the ports"), "{sw_log}");
        wait_from(Instant::now(), Duration::from_millis(500), "traffic after");
    }
    let ping = ping.finish();
    wire.judge("the switch's control frames on the bond's eth1", 4);
    let a_log = log(&r.dir.0.join("a.log"));
    let out: Vec<&str> = a_log[a_before..]
        .lines()
        .filter(|l| l.contains(out_of))
        .collect();
    assert!(out.is_empty(), "the bond took a port out: {out:#?}");
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "{test}: 4 switch restarts (SIGKILL + 1 s, SIGUSR2 in turn): ping {} sent, {lost} lost, {} duplicates",
        ping.transmitted, ping.duplicates
    );
    assert!(ping.transmitted > 300, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");

    // Killed and cleared: nothing forwards any more.
    let mut last = r.switch.take().expect("the switch runs");
    last.signal(Signal::SIGKILL);
    let _ = last.0.wait();
    assert_eq!(
        lagkit_testnet::ping(&r.b, "10.0.0.1", 3).received,
        3,
        "the kernel forwards while no switch runs"
    );
    let out = Command::new("ip")
        .args(["netns", "exec", &r.sw, BIN, "switch", "down"])
        .output()
        .expect("lagkit switch down");
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("detached the programs a killed switch left on 3 port(s)"),
        "{said}"
    );
    assert_eq!(
        lagkit_testnet::ping(&r.b, "10.0.0.1", 3).received,
        0,
        "nothing forwards after `lagkit switch down`"
    );
}

#[test]
fn the_switch_survives_its_daemon_lacp() {
    switch_survives(
        "sw_survives_lacp",
        "mode = \"802.3ad\"\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\n",
        " channel-group 1 mode active\n lacp rate fast\n",
        "resuming LACP",
        "mux: COLLECTING_DISTRIBUTING (",
    );
}

#[test]
fn the_switch_survives_its_daemon_pagp() {
    switch_survives(
        "sw_survives_pagp",
        "mode = \"balance-xor\"\npagp = \"desirable\"\nxmit_hash_policy = \"layer3+4\"\n",
        " channel-group 1 mode desirable\n",
        "resuming PAgP",
        "pagp: upPagp (",
    );
}

/// The userspace switch hands over in place: SIGUSR2 and the switch
/// executes itself again (same process) with its ports' packet sockets
/// kept open, adopts them and resumes each port's LACP from the partner
/// it recorded. Three handoffs under a ping from the host behind the
/// switch to the bond: none lost, the bond never takes a port out.
#[test]
fn a_userspace_switch_hands_over_in_place_on_sigusr2() {
    let Some(mut r) = SwitchRig::with_engine(
        "sw_handoff_us",
        "mode = \"802.3ad\"\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\n",
        " channel-group 1 mode active\n lacp rate fast\n",
        "userspace",
    ) else {
        return;
    };
    let a_before = log(&r.dir.0.join("a.log")).len();
    let ping = Pinger::start(&r.b, "10.0.0.1");
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    for n in 1..=3 {
        r.switch.as_ref().expect("runs").signal(Signal::SIGUSR2);
        wait_until(
            &format!("handoff {n}: the switch adopted its sockets and bundles Po1"),
            Duration::from_secs(10),
            || r.switch_log().matches("adopting the port sockets").count() == n && r.bundled(),
        );
        let alive = r.switch.as_mut().expect("runs").0.try_wait().expect("wait");
        assert!(alive.is_none(), "one process: {}", r.switch_log());
        wait_from(Instant::now(), Duration::from_millis(300), "settle");
    }
    wait_from(Instant::now(), Duration::from_millis(500), "traffic after");
    let ping = ping.finish();
    let sw_log = r.switch_log();
    assert_eq!(sw_log.matches("resuming LACP").count(), 6, "{sw_log}");
    assert!(!sw_log.contains("not adopting"), "{sw_log}");
    let a_log = log(&r.dir.0.join("a.log"));
    let out: Vec<&str> = (a_log[a_before..].lines())
        .filter(|l| l.contains("mux: COLLECTING_DISTRIBUTING ("))
        .collect();
    assert!(out.is_empty(), "the bond took a port out: {out:#?}");
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "userspace switch: 3 handoffs: ping {} sent, {lost} lost, {} duplicates",
        ping.transmitted, ping.duplicates
    );
    assert!(ping.transmitted > 100, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");
}

/// `systemctl restart lagkit@bond0` under a real systemd (the host's own,
/// as PID 1 of namespaces of its own: `scripts/systemd-restart.sh`), with
/// the packaged unit: each restart sends SIGUSR2 (RestartKillSignal), the
/// daemon exits 75 and the next one adopts, so no 5 ms probe is lost; a
/// `systemctl stop` leaves no program, pin or daemon. Skips where no
/// systemd is installed.
#[test]
fn systemctl_restart_under_a_real_systemd_loses_no_probe() {
    systemctl_restart("systemd_restart", "bpf", "3");
}

/// The same under the userspace engine, which has nothing pinned: each
/// restart's daemon hands its TAP and its members' packet sockets to
/// systemd's file-descriptor store (`FileDescriptorStoreMax=` in the
/// unit), and the next start adopts them, frames queued meanwhile
/// included; stop removes the TAP.
#[test]
fn systemctl_restart_of_a_userspace_engine_loses_no_probe() {
    systemctl_restart("systemd_restart_us", "userspace", "2");
}

fn systemctl_restart(test: &str, engine: &str, restarts: &str) {
    if !Path::new("/lib/systemd/systemd").exists() {
        eprintln!("skipped: no /lib/systemd/systemd");
        return;
    }
    let Some(_lab) = Lab::alone(test) else {
        return;
    };
    let _bpffs = Bpffs::take();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/systemd-restart.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["-n", restarts, "--no-settle", "--engine", engine])
        .env("LAGKIT", BIN)
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("systemd-restart:"))
        .unwrap_or_else(|| panic!("no summary: {text}"));
    eprintln!("{summary}");
    assert!(summary.contains(": 0 of "), "{summary}");
    assert!(summary.contains(&format!("({engine} engine)")), "{summary}");
}

/// The userspace engine hands over in place: SIGUSR2 stops its threads
/// and the daemon executes itself again (same process, same arguments)
/// with the TAP, the members' packet sockets and their isolation links
/// kept open across the exec; the new program adopts them and resumes
/// LACP. Four handoffs under ping and TCP: no ping lost or duplicated,
/// every TCP byte once and in order, the partner never takes a port out,
/// and one process throughout. SIGTERM afterwards removes the TAP and
/// gives the members back.
#[test]
fn a_userspace_bond_hands_over_in_place_on_sigusr2() {
    let Some(mut lab) = Lab::alone("handoff_userspace") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = TmpDir(std::env::temp_dir().join(format!("lkt-hous-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let p = |n: &str| dir.0.join(n);
    write_config(&p("a.toml"), "10.0.0.1/24");
    write_config(&p("b.toml"), "10.0.0.2/24");
    let start = |ns: &str, side: &str| {
        let log = std::fs::File::create(p(&format!("{side}.log"))).expect("log");
        Daemon(
            Command::new("ip")
                .args(["netns", "exec", ns, BIN, "up", "--engine", "userspace"])
                .arg(p(&format!("{side}.toml")))
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("lagkit up starts"),
        )
    };
    let mut da = start(&a, "a");
    let _db = start(&b, "b");
    wait_until(
        "both bonds aggregate 2 ports",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let tcp = tcp_until(&b, "10.0.0.2:6600", &a, 4, stop.clone());
    let ping = Pinger::start(&b, "10.0.0.1");
    let b_before = log(&p("b.log")).len();
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    for n in 1..=4 {
        da.signal(Signal::SIGUSR2);
        wait_until(
            &format!("handoff {n}: the daemon adopted and aggregates 2 ports"),
            Duration::from_secs(10),
            || log(&p("a.log")).matches("adopting the TAP").count() == n && ports(&a) == 2,
        );
        assert!(
            da.0.try_wait().expect("wait").is_none(),
            "one process throughout: {}",
            log(&p("a.log"))
        );
        wait_from(Instant::now(), Duration::from_millis(300), "settle");
    }
    wait_from(Instant::now(), Duration::from_secs(1), "traffic after");
    let ping = ping.finish();
    stop.store(true, Ordering::Relaxed);
    let flows = tcp.join().expect("TCP threads");
    let a_log = log(&p("a.log"));
    assert_eq!(a_log.matches("resuming LACP").count(), 8, "{a_log}");
    assert!(!a_log.contains("not adopting"), "{a_log}");
    let b_log = log(&p("b.log"));
    let down = interruptions(&b_log[b_before..]);
    assert!(down.is_empty(), "the partner took a port out: {down:#?}");
    assert_flows_intact(&flows);
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "userspace handoffs: ping {} sent, {lost} lost, {} duplicates; TCP {} MB",
        ping.transmitted,
        ping.duplicates,
        flows.iter().flatten().map(|f| f.sent).sum::<u64>() >> 20
    );
    assert!(ping.transmitted > 200, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");
    // A stop after the handoffs removes what the first daemon made.
    let st = da.stop();
    assert!(st.success(), "{st:?}");
    let links = Command::new("ip")
        .args(["-n", &a, "-o", "link", "show"])
        .output()
        .expect("ip link");
    let links = String::from_utf8_lossy(&links.stdout);
    assert!(!links.contains("bond0"), "{links}");
    assert!(!links.contains("NOARP"), "members given back: {links}");
}

/// The bond's side of PAgP: a `lagkit up` balance-xor bond speaking PAgP
/// (desirable) to the switch, its daemon killed (SIGKILL, started again
/// 1 s later) or handed over (SIGUSR2), four times: each new daemon
/// adopts the data path and resumes PAgP from the recorded partner, so
/// the switch never takes a member out of its channel and no ping is
/// lost.
#[test]
fn a_pagp_bond_restarts_unseen_by_its_switch() {
    let Some(mut r) = SwitchRig::new(
        "bond_pagp_restart",
        "mode = \"balance-xor\"\npagp = \"desirable\"\nxmit_hash_policy = \"layer3+4\"\n",
        " channel-group 1 mode desirable\n",
    ) else {
        return;
    };
    let sw_before = r.switch_log().len();
    let wire = WireWatch::start(&r.sw, "p1", r.dir.0.join("bond-frames.pcap"));
    let ping = Pinger::start(&r.b, "10.0.0.1");
    wait_from(Instant::now(), Duration::from_millis(500), "traffic runs");
    let a_toml = r.dir.0.join("a.toml");
    let a_log = r.dir.0.join("a.log");
    for round in 0..4 {
        let handoff = round % 2 == 1;
        if handoff {
            r.da.signal(Signal::SIGUSR2);
            let st = r.da.0.wait().expect("wait");
            assert_eq!(st.code(), Some(75), "a handoff exits with 75: {st:?}");
        } else {
            r.da.signal(Signal::SIGKILL);
            let _ = r.da.0.wait();
            wait_from(
                Instant::now(),
                Duration::from_secs(1),
                "1 s without a daemon",
            );
        }
        let before = log(&a_log).len();
        r.da = start_bond(&r.a, &a_toml, &a_log, false);
        wait_until(
            "the new daemon resumes PAgP on both members",
            Duration::from_secs(10),
            || log(&a_log)[before..].matches("resuming PAgP").count() == 2,
        );
        wait_from(Instant::now(), Duration::from_millis(700), "traffic after");
    }
    let ping = ping.finish();
    // One hello at each resume (slow hellos are 30 s apart).
    wire.judge("the bond's PAgP hellos on the switch's p1", 2);
    let sw_log = r.switch_log();
    let out: Vec<&str> = sw_log[sw_before..]
        .lines()
        .filter(|l| l.contains("pagp: upPagp ("))
        .collect();
    assert!(out.is_empty(), "the switch took a member out: {out:#?}");
    assert!(r.bundled());
    let lost = ping.transmitted.saturating_sub(ping.received);
    eprintln!(
        "bond_pagp_restart: 4 bond restarts (SIGKILL + 1 s, SIGUSR2 in turn): ping {} sent, {lost} lost, {} duplicates",
        ping.transmitted, ping.duplicates
    );
    assert!(ping.transmitted > 300, "{ping:?}");
    assert_eq!((lost, ping.duplicates), (0, 0), "{ping:?}");
}

/// The control frames one end receives on a member (`tcpdump -Q in`),
/// checked for what the sender's partner would see change: every LACPDU's
/// actor in sync, collecting and distributing, with one system, key and
/// port number throughout; every PAgP hello consistent and in a channel
/// (group ifindex set), with one device id, port and group throughout.
struct WireWatch {
    tcpdump: Option<std::process::Child>,
    file: PathBuf,
}

impl WireWatch {
    fn start(ns: &str, dev: &str, file: PathBuf) -> WireWatch {
        let tcpdump = Command::new("ip")
            .args([
                "netns", "exec", ns, "tcpdump", "-Q", "in", "-U", "-s", "256", "-i", dev, "-w",
            ])
            .arg(&file)
            .args(["ether proto 0x8809 or ether dst 01:00:0c:cc:cc:cc"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcpdump runs");
        let w = WireWatch {
            tcpdump: Some(tcpdump),
            file,
        };
        wait_until("tcpdump writes its file", Duration::from_secs(5), || {
            std::fs::metadata(&w.file).is_ok_and(|m| m.len() >= 24)
        });
        w
    }

    /// Stops the capture; the control frames received, and the
    /// partner-visible changes found among them from the first frame that
    /// shows the port in its aggregate (the capture may start while the
    /// sender's mux is still on its way there).
    fn finish(mut self) -> (usize, Vec<String>) {
        if let Some(mut c) = self.tcpdump.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(c.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            );
            let _ = c.wait();
        }
        let data = std::fs::read(&self.file).expect("capture file");
        let mut r = pcap_file::pcap::PcapReader::new(&data[..]).expect("a pcap file");
        let (mut n, mut changes) = (0, Vec::new());
        let mut lacp_id = None;
        let mut pagp_id = None;
        while let Some(p) = r.next_packet() {
            let p = p.expect("a whole packet");
            let f = &p.data[..];
            if f.len() > 15 && f[12..14] == [0x88, 0x09] && f[14] == 1 {
                let pdu = lagkit_wire::LacpduRepr::parse(&f[14..]).expect("an LACPDU");
                n += 1;
                let a = pdu.actor;
                let id = (a.system, a.key, a.port);
                let carrying = a.state.in_sync() && a.state.collecting() && a.state.distributing();
                if lacp_id.is_none() && !carrying {
                    continue;
                }
                if *lacp_id.get_or_insert(id) != id {
                    changes.push(format!("{:?}: actor now {id:?}", p.timestamp));
                }
                if !carrying {
                    changes.push(format!("{:?}: actor state {:?}", p.timestamp, a.state));
                }
            } else if let Ok(lagkit_wire::PagpRepr::Info(i)) = lagkit_wire::PagpRepr::parse_frame(f)
            {
                n += 1;
                let id = (i.local.device_id, i.local.ifindex, i.local.group_ifindex);
                let in_channel =
                    i.flags.has(lagkit_wire::pagp::Flags::CONSISTENT) && i.local.group_ifindex != 0;
                if pagp_id.is_none() && !in_channel {
                    continue;
                }
                if *pagp_id.get_or_insert(id) != id {
                    changes.push(format!("{:?}: PAgP now {id:?}", p.timestamp));
                }
                if !in_channel {
                    changes.push(format!(
                        "{:?}: PAgP hello out of the channel: {:?}",
                        p.timestamp, i.flags
                    ));
                }
            }
        }
        (n, changes)
    }
}

impl WireWatch {
    /// Stops the capture and reports what the partner saw (`what`, at
    /// least `min` frames expected). The frame-level targets (no
    /// partner-visible change at all) are not all met yet: they fail the
    /// test only with `LAGKIT_WIRE_STRICT=1` (the campaign's setting);
    /// otherwise they are printed, for the campaign's table.
    fn judge(self, what: &str, min: usize) {
        let (frames, changes) = self.finish();
        let strict = std::env::var_os("LAGKIT_WIRE_STRICT").is_some();
        eprintln!(
            "wire: {what}: {frames} frames, {} partner-visible changes{}",
            changes.len(),
            if changes.is_empty() {
                String::new()
            } else {
                format!(": {changes:?}")
            }
        );
        if strict {
            assert!(frames >= min, "{what}: {frames} frames, {min} expected");
            assert!(changes.is_empty(), "{what}: {changes:#?}");
        }
    }
}

impl Drop for WireWatch {
    fn drop(&mut self) {
        if let Some(mut c) = self.tcpdump.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
