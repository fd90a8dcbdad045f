//! Root network-namespace test: netlink events report carrier changes of a
//! veth pair promptly. Skips with a message when not root.

use lagkit_monitor::carrier::{poll_carrier, CarrierWatcher};
use lagkit_testnet::Lab;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn netlink_reports_carrier_changes() {
    let Some(mut lab) = Lab::new("netlink_reports_carrier_changes") else {
        return;
    };
    let ns = lab.netns();
    lab.veth(&ns, "m0", &ns, "m1");
    lab.sh(&["ip", "-n", &ns, "link", "set", "m0", "up"]);
    lab.sh(&["ip", "-n", &ns, "link", "set", "m1", "up"]);
    let name = ns.clone();
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
        let speed = lagkit_monitor::ethtool::speed_duplex("m1");
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
        (m0, down_after, up_after, polled, speed)
    })
    .join()
    .expect("thread");
    let (m0, down, up, polled, speed) = events;
    // veth reports 10000 Mb/s full duplex.
    assert_eq!(speed, (Some(10000), Some(true)));
    assert!(m0.usable() && m0.mtu == Some(1500) && m0.mac.is_some());
    let down = down.expect("carrier-down event within 5 s");
    let up = up.expect("carrier-up event within 5 s");
    assert_eq!(polled, Some(false), "miimon polling agrees");
    eprintln!("carrier down seen after {down:?}, up after {up:?}");
    assert!(down < Duration::from_millis(500));
}
