//! `lagkit top` in a terminal: tmux runs it against a bond carrying TCP
//! traffic, the test sends keys and reads the screen (`capture-pane`):
//! member names, rates that are not zero, the LACP state, help, freeze,
//! a member's link going down, a terminal too small, and quitting.
//!
//! Root only; skips with a message otherwise. Everything it starts (the
//! lab, the daemons, the tmux server on a socket of its own) goes on drop.

mod common;

use common::{bond_status as status, Daemon, TmpDir};
use lagkit_testnet::{tcp_until, wait_until, Lab};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

/// A tmux server of the test's own (`tmux -L NAME`), killed on drop.
struct Tmux(String);

impl Tmux {
    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.0)
            .args(args)
            .output()
            .expect("tmux runs (apt-get install tmux)")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "top"]).stdout)
            .into_owned()
    }

    fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", "top", keys]);
    }

    /// Polls the screen until `ok` holds (with a deadline); returns it.
    fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let found = (0..100).any(|_| {
            last = self.screen();
            ok(&last) || {
                std::thread::sleep(Duration::from_millis(100));
                false
            }
        });
        assert!(found, "{what}; the screen was:\n{last}");
        last
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn start_bond(ns: &str, cfg: &Path) -> Daemon {
    Daemon(
        Command::new("ip")
            .args(["netns", "exec", ns, BIN, "up"])
            .arg(cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("lagkit up"),
    )
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

/// A rate that is not zero, as top prints it ("12.3 Mb/s").
fn moving(screen: &str, member: &str) -> bool {
    screen.lines().any(|l| {
        l.contains(member)
            && ["kb/s", "Mb/s", "Gb/s"]
                .iter()
                .any(|u| l.contains(u) && !l.contains(&format!(" 0.0 {u}")))
    })
}

#[test]
fn top_shows_a_bond_under_traffic_and_follows_a_link_going_down() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIP top: needs tmux (apt-get install tmux)");
        return;
    }
    let Some(mut lab) = Lab::alone("top") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = TmpDir(std::env::temp_dir().join(format!("lkt-top-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    for (side, addr) in [("a", "10.0.0.1/24"), ("b", "10.0.0.2/24")] {
        std::fs::write(
            dir.0.join(format!("{side}.toml")),
            format!(
                "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\n\
                 address = [\"{addr}\"]\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\n"
            ),
        )
        .unwrap();
    }
    let _da = start_bond(&a, &dir.0.join("a.toml"));
    let _db = start_bond(&b, &dir.0.join("b.toml"));
    wait_until(
        "both bonds aggregate 2 ports",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let tcp = tcp_until(&b, "10.0.0.2:6700", &a, 4, stop.clone());

    let t = Tmux(format!("lkt-top-{}", std::process::id()));
    let cmd = format!("ip netns exec {a} {BIN} top --interval 300ms");
    let out = t.tmux(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "80",
        "-y",
        "24",
        &cmd,
    ]);
    assert!(out.status.success(), "{out:?}");

    // 80x24: the bond, both members aggregated, traffic on each.
    let s = t.wait("members with LACP state and moving rates", |s| {
        s.contains("bond bond0")
            && s.matches("coll+dist").count() == 2
            && moving(s, "eth1")
            && moving(s, "eth2")
    });
    assert!(s.contains("802.3ad"), "{s}");
    eprintln!("lagkit top at 80x24:\n{s}");

    t.keys("?");
    t.wait("help shown", |s| s.contains("freeze: keep this screen"));
    t.keys("?");
    t.wait("help gone", |s| !s.contains("freeze: keep this screen"));
    t.keys("f");
    t.wait("frozen", |s| s.contains("FROZEN"));
    t.keys("f");
    t.wait("refreshing again", |s| !s.contains("FROZEN"));

    // The partner's end of eth2 goes down: our eth2 loses its carrier.
    lab.sh(&["ip", "-n", &b, "link", "set", "eth2", "down"]);
    let s = t.wait("eth2 down, with an event", |s| {
        s.lines()
            .any(|l| l.starts_with("│eth2") && l.contains(" down "))
            && s.contains("eth2 carrier down")
    });
    eprintln!("after eth2's cable was pulled:\n{s}");
    assert!(
        s.lines()
            .any(|l| l.starts_with("│eth1") && l.contains("coll+dist")),
        "{s}"
    );

    t.tmux(&["resize-window", "-t", "top", "-x", "60", "-y", "20"]);
    t.wait("a too-small terminal is told so", |s| {
        s.contains("needs a terminal of at least 80x24")
    });
    t.tmux(&["resize-window", "-t", "top", "-x", "80", "-y", "24"]);
    t.wait("drawn again", |s| s.contains("bond bond0"));

    t.keys("q");
    wait_until("top exits on q", Duration::from_secs(5), || {
        !t.tmux(&["has-session", "-t", "top"]).status.success()
    });
    stop.store(true, Ordering::Relaxed);
    let flows = tcp.join().expect("TCP threads");
    assert!(flows.iter().any(|f| f.as_ref().is_ok_and(|f| f.sent > 0)));
}
