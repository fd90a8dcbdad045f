//! `lagkit up` as a user runs it: the binary inside two network namespaces
//! with the README's minimal configuration, queried with `lagkit status`,
//! carrying TCP, surviving a pulled cable, reloading on SIGHUP and giving
//! the members back on SIGTERM. Root only; skips with a message otherwise.

use lagkit_bond::status::BondStatus;
use lagkit_testnet::{tcp_transfer, wait_until, Lab};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

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
    fn signal(&self, sig: i32) {
        // SAFETY: signalling a process this test started.
        unsafe { libc::kill(self.0.id() as i32, sig) };
    }

    /// SIGTERM, then its exit status.
    fn stop(&mut self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        self.0.wait().expect("wait")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.signal(libc::SIGTERM);
            let _ = self.0.wait();
        }
    }
}

fn up(ns: &str, cfg: &Path) -> Daemon {
    let child = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "up"])
        .arg(cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lagkit up starts");
    Daemon(child)
}

fn status(ns: &str) -> Option<BondStatus> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "status", "bond0", "--json"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v: Vec<BondStatus> = serde_json::from_slice(&out.stdout).ok()?;
    v.pop()
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lkt-up-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
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
    assert_eq!(st.members[1].mii_status, "down");
    lab.sh(&["ip", "-n", &a, "link", "set", "eth2", "up"]);
    wait_until("eth2 rejoins", Duration::from_secs(20), || ports(&a) == 2);

    // SIGTERM: the daemon exits 0, the TAP is gone, members are restored.
    let ea = pa.stop();
    let _ = pb.stop();
    assert!(ea.success(), "lagkit up exits 0 on SIGTERM");
    let links = lab.sh(&["ip", "-n", &a, "-o", "link"]);
    assert!(!links.contains("bond0"), "TAP removed: {links}");
    assert!(!links.contains("NOARP"), "ARP restored on members: {links}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
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
        .args(["netns", "exec", &a, BIN, "up"])
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

#[test]
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
    pa.signal(libc::SIGHUP);
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
    // And shrinks again.
    config(&dir, "a", &["eth1", "eth2"], "10.0.0.1/24");
    pa.signal(libc::SIGHUP);
    wait_until("2 members after SIGHUP", Duration::from_secs(20), || {
        status(&a).is_some_and(|s| s.members.len() == 2) && ports(&a) == 2
    });
    let links = lab.sh(&["ip", "-n", &a, "-o", "link", "show", "eth3"]);
    assert!(!links.contains("NOARP"), "eth3 given back: {links}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
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
            .args(["netns", "exec", ns, BIN, "status", bond, "--json"])
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
