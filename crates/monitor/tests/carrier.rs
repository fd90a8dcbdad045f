//! Root network-namespace test: netlink events report carrier changes of a
//! veth pair promptly. Skips with a message when not root.

use lagkit_monitor::carrier::{poll_carrier, CarrierWatcher};
use std::process::Command;
use std::time::{Duration, Instant};

struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Option<Netns> {
        let name = format!("lkmon-{}-{tag}", std::process::id());
        let ok = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .ok()?
            .success();
        ok.then_some(Netns(name))
    }
    fn ip(&self, args: &[&str]) {
        let st = Command::new("ip")
            .args(["-n", &self.0])
            .args(args)
            .status()
            .expect("ip runs");
        assert!(st.success(), "ip -n {} {args:?}", self.0);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn netlink_reports_carrier_changes() {
    if !is_root() {
        eprintln!("SKIPPED netlink_reports_carrier_changes: needs root for network namespaces");
        return;
    }
    let ns = Netns::new("c").expect("ip netns add");
    ns.ip(&["link", "add", "m0", "type", "veth", "peer", "name", "m1"]);
    ns.ip(&["link", "set", "m0", "up"]);
    ns.ip(&["link", "set", "m1", "up"]);
    let name = ns.0.clone();
    let events = std::thread::spawn(move || {
        lagkit_dataplane::netns::enter(&name).expect("setns");
        let start = CarrierWatcher::dump().expect("dump");
        let m0 = start
            .iter()
            .find(|l| l.name == "m0")
            .cloned()
            .expect("m0 listed");
        let mut w = CarrierWatcher::open().expect("subscribe");
        // Pull the far end: m0 loses carrier.
        let st = Command::new("ip")
            .args(["link", "set", "m1", "down"])
            .status()
            .unwrap();
        assert!(st.success());
        let t0 = Instant::now();
        let mut down_after = None;
        while t0.elapsed() < Duration::from_secs(5) && down_after.is_none() {
            for e in w.recv(Duration::from_millis(100)).unwrap() {
                if e.name == "m0" && !e.carrier {
                    down_after = Some(t0.elapsed());
                }
            }
        }
        let polled = poll_carrier("m0");
        let st = Command::new("ip")
            .args(["link", "set", "m1", "up"])
            .status()
            .unwrap();
        assert!(st.success());
        let t1 = Instant::now();
        let mut up_after = None;
        while t1.elapsed() < Duration::from_secs(5) && up_after.is_none() {
            for e in w.recv(Duration::from_millis(100)).unwrap() {
                if e.name == "m0" && e.usable() {
                    up_after = Some(t1.elapsed());
                }
            }
        }
        (m0, down_after, up_after, polled)
    })
    .join()
    .expect("thread");
    let (m0, down, up, polled) = events;
    assert!(m0.usable() && m0.mtu == Some(1500) && m0.mac.is_some());
    let down = down.expect("carrier-down event within 5 s");
    let up = up.expect("carrier-up event within 5 s");
    assert_eq!(polled, Some(false), "miimon polling agrees");
    eprintln!("carrier down seen after {down:?}, up after {up:?}");
    assert!(down < Duration::from_millis(500));
}
