//! Each operation of lagkit-sys done in fresh network namespaces (made with
//! unshare(2), gone with the last descriptor), and checked with what
//! `ip -j` and `tc -j` report, run from a thread inside the namespace.
//! Skipped (with a message) where namespaces cannot be made.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Command;
use std::time::{Duration, Instant};

use lagkit_sys::link::LinkChange;
use lagkit_sys::tc::Direction;
use lagkit_sys::{addr, link, tc, Error};
use nix::errno::Errno;
use nix::sched::{setns, unshare, CloneFlags};
use serde_json::Value;

/// A network namespace, alive while this descriptor is open: its
/// interfaces go with it when it is dropped.
struct Netns(OwnedFd);

impl Netns {
    /// A fresh namespace, or None (with a message) without the privilege.
    fn new(test: &str) -> Option<Netns> {
        let made = std::thread::spawn(|| {
            unshare(CloneFlags::CLONE_NEWNET)?;
            let fd = OwnedFd::from(File::open("/proc/thread-self/ns/net").map_err(|_| Errno::EIO)?);
            Ok::<_, Errno>(fd)
        })
        .join()
        .expect("namespace thread");
        match made {
            Ok(fd) => Some(Netns(fd)),
            Err(e) => {
                eprintln!("SKIP {test}: cannot make a network namespace ({e}); run as root");
                None
            }
        }
    }

    /// Runs `f` on a thread inside the namespace, with loopback up.
    fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            s.spawn(|| {
                setns(&self.0, CloneFlags::CLONE_NEWNET).expect("setns");
                f()
            })
            .join()
            .expect("thread in namespace")
        })
    }
}

/// `ip -j ARGS` (or `tc -j` with `tc` first) run here, as JSON.
fn json(prog: &str, args: &[&str]) -> Value {
    let out = Command::new(prog)
        .arg("-j")
        .args(args)
        .output()
        .expect(prog);
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return Value::Array(vec![]);
    }
    serde_json::from_str(&text).expect("JSON")
}

fn link_json(name: &str) -> Option<Value> {
    let out = Command::new("ip")
        .args(["-j", "link", "show", "dev", name])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice::<Value>(&out.stdout)
        .ok()?
        .get(0)
        .cloned()
}

fn flags(link: &Value) -> Vec<String> {
    link["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

fn addresses(dev: &str) -> Vec<String> {
    json("ip", &["addr", "show", "dev", dev])[0]["addr_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| format!("{}/{}", a["local"].as_str().unwrap(), a["prefixlen"]))
        .collect()
}

/// Whether `ping -c1 -W1 DST` from here gets an answer.
fn ping(dst: &str) -> bool {
    Command::new("ping")
        .args(["-n", "-q", "-c", "1", "-W", "1", dst])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Polls `cond` until it holds, or panics with `what` after `timeout`.
fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn errno(r: Result<(), Error>) -> Errno {
    r.expect_err("an error")
        .errno()
        .expect("the kernel's errno")
}

#[test]
fn veth_pair_made_set_and_deleted() {
    let Some(ns) = Netns::new("veth_pair_made_set_and_deleted") else {
        return;
    };
    ns.run(|| {
        link::add_veth("lkv0", "lkv1", None).unwrap();
        let v0 = link_json("lkv0").expect("lkv0 exists");
        assert_eq!(v0["link"], "lkv1", "{v0}");
        assert!(!flags(&v0).contains(&"UP".to_string()), "made down: {v0}");

        let mac = [0x02, 0x6c, 0x6b, 0, 0, 1];
        link::set(
            "lkv0",
            &LinkChange {
                up: Some(true),
                mtu: Some(1400),
                address: Some(mac),
                ..LinkChange::default()
            },
        )
        .unwrap();
        link::set(
            "lkv1",
            &LinkChange {
                up: Some(true),
                arp: Some(false),
                ..LinkChange::default()
            },
        )
        .unwrap();
        let v0 = link_json("lkv0").unwrap();
        assert_eq!(v0["mtu"], 1400, "{v0}");
        assert_eq!(v0["address"], "02:6c:6b:00:00:01", "{v0}");
        assert!(flags(&v0).contains(&"UP".to_string()), "{v0}");
        wait_until("lkv0's carrier", Duration::from_secs(5), || {
            link_json("lkv0").is_some_and(|l| l["operstate"] == "UP")
        });
        let v1 = link_json("lkv1").unwrap();
        assert!(flags(&v1).contains(&"NOARP".to_string()), "{v1}");
        link::set("lkv0", &LinkChange::up(false)).unwrap();
        assert!(!flags(&link_json("lkv0").unwrap()).contains(&"UP".to_string()));

        // Typed refusals: a taken name, a missing link.
        let e = link::add_veth("lkv0", "lkv9", None).unwrap_err();
        assert!(matches!(&e, Error::Link { op: "add veth", name, errno: Errno::EEXIST } if name == "lkv0"), "{e:?}");
        assert!(e.to_string().contains("already exists"), "{e}");

        link::delete("lkv0").unwrap();
        assert!(link_json("lkv0").is_none() && link_json("lkv1").is_none(), "both ends gone");
        let e = link::delete("lkv0").unwrap_err();
        assert!(matches!(&e, Error::Link { op: "delete", errno: Errno::ENODEV, .. }), "{e:?}");
        assert!(e.to_string().contains("no such interface"), "{e}");
        assert_eq!(errno(link::set("lkv0", &LinkChange::up(true))), Errno::ENODEV);
    });
}

#[test]
fn addresses_added_replaced_and_deleted() {
    let Some(ns) = Netns::new("addresses_added_replaced_and_deleted") else {
        return;
    };
    ns.run(|| {
        link::add_veth("lka0", "lka1", None).unwrap();
        let v4 = "10.77.0.1".parse().unwrap();
        let v6 = "fd00:77::1".parse().unwrap();
        addr::add("lka0", v4, 24).unwrap();
        addr::replace("lka0", v6, 64).unwrap();
        let got = addresses("lka0");
        assert!(got.contains(&"10.77.0.1/24".to_string()), "{got:?}");
        assert!(got.contains(&"fd00:77::1/64".to_string()), "{got:?}");

        // Replace is idempotent; add is not.
        addr::replace("lka0", v4, 24).unwrap();
        let e = addr::add("lka0", v4, 24).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Address {
                    op: "add",
                    errno: Errno::EEXIST,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("10.77.0.1/24 on lka0"), "{e}");

        addr::delete("lka0", v4, 24).unwrap();
        addr::delete("lka0", v6, 64).unwrap();
        let got = addresses("lka0");
        assert!(
            !got.iter()
                .any(|a| a.starts_with("10.77.") || a.starts_with("fd00:77:")),
            "{got:?}"
        );
        assert_eq!(errno(addr::delete("lka0", v4, 24)), Errno::EADDRNOTAVAIL);
        assert_eq!(errno(addr::add("lka9", v4, 24)), Errno::ENODEV);
    });
}

/// The pair `lkt0` (here, 10.78.0.1) / `lkt1` (in `b`, 10.78.0.2), up.
fn pair(a: &Netns, b: &Netns) {
    a.run(|| {
        link::add_veth("lkt0", "lkt1", Some(b.0.as_fd())).unwrap();
        assert!(
            link_json("lkt1").is_none(),
            "the peer is in the other namespace"
        );
        addr::add("lkt0", "10.78.0.1".parse().unwrap(), 24).unwrap();
        link::set("lkt0", &LinkChange::up(true)).unwrap();
    });
    b.run(|| {
        addr::add("lkt1", "10.78.0.2".parse().unwrap(), 24).unwrap();
        link::set("lkt1", &LinkChange::up(true)).unwrap();
    });
}

fn pings(a: &Netns) -> bool {
    a.run(|| ping("10.78.0.2"))
}

#[test]
fn the_drop_filter_drops_every_frame_until_removed() {
    let (Some(a), Some(b)) = (Netns::new("drop_filter a"), Netns::new("drop_filter b")) else {
        return;
    };
    pair(&a, &b);
    wait_until("a ping across the pair", Duration::from_secs(10), || {
        pings(&a)
    });

    b.run(|| {
        tc::add_clsact("lkt1").unwrap();
        let e = tc::add_clsact("lkt1").unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Tc {
                    errno: Errno::EEXIST,
                    ..
                }
            ),
            "{e:?}"
        );
        tc::add_drop_filter("lkt1", Direction::Ingress, 49_411).unwrap();
        let q = json("tc", &["qdisc", "show", "dev", "lkt1"]);
        assert!(
            q.as_array().unwrap().iter().any(|q| q["kind"] == "clsact"),
            "{q}"
        );
        let f = json("tc", &["filter", "show", "dev", "lkt1", "ingress"]);
        let ours = f
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f.get("options").is_some())
            .expect("the filter");
        assert_eq!(ours["kind"], "bpf", "{f}");
        assert_eq!(ours["pref"], 49_411, "{f}");
        assert_eq!(ours["protocol"], "all", "{f}");
        assert_eq!(ours["options"]["direct-action"], true, "{f}");
        assert_eq!(
            ours["options"]["bytecode"]["insns"][0]["k"], 2,
            "ret #2: {f}"
        );
    });
    assert!(!pings(&a), "a ping passed the ingress drop filter");

    b.run(|| tc::delete_filter("lkt1", Direction::Ingress, 49_411).unwrap());
    wait_until(
        "a ping once the filter is gone",
        Duration::from_secs(10),
        || pings(&a),
    );
    b.run(|| {
        assert_eq!(
            errno(tc::delete_filter("lkt1", Direction::Ingress, 49_411)),
            Errno::ENOENT
        );
        let f = json("tc", &["filter", "show", "dev", "lkt1", "ingress"]);
        assert_eq!(f.as_array().map(Vec::len), Some(0), "{f}");
    });

    // The same filter on egress, on the other end: refused without a
    // clsact qdisc, dropping with one, and gone with the qdisc.
    a.run(|| {
        assert_eq!(
            errno(tc::add_drop_filter("lkt0", Direction::Egress, 7)),
            Errno::EINVAL
        );
        tc::add_clsact("lkt0").unwrap();
        tc::add_drop_filter("lkt0", Direction::Egress, 7).unwrap();
    });
    assert!(!pings(&a), "a ping passed the egress drop filter");
    a.run(|| tc::delete_clsact("lkt0").unwrap());
    wait_until(
        "a ping once the qdisc is gone",
        Duration::from_secs(10),
        || pings(&a),
    );
    // Deleting the qdisc takes its filters with it.
    b.run(|| {
        tc::delete_clsact("lkt1").unwrap();
        let q = json("tc", &["qdisc", "show", "dev", "lkt1"]);
        assert!(
            !q.as_array().unwrap().iter().any(|q| q["kind"] == "clsact"),
            "{q}"
        );
        assert_eq!(errno(tc::delete_clsact("lkt1")), Errno::EINVAL);
    });
}

/// What tc(8) made before (an older lagkit's fallback filter, left by a
/// crash) is removed by preference, and the filter made over netlink reads
/// back exactly as tc's did.
#[test]
fn the_drop_filter_is_the_one_tc_made() {
    let Some(ns) = Netns::new("the_drop_filter_is_the_one_tc_made") else {
        return;
    };
    ns.run(|| {
        link::add_veth("lkc0", "lkc1", None).unwrap();
        let tc_cmd = |args: &[&str]| {
            let st = Command::new("tc").args(args).status().expect("tc");
            assert!(st.success(), "tc {args:?}");
        };
        tc_cmd(&["qdisc", "add", "dev", "lkc0", "clsact"]);
        tc_cmd(&[
            "filter",
            "add",
            "dev",
            "lkc0",
            "ingress",
            "pref",
            "49411",
            "protocol",
            "all",
            "bpf",
            "da",
            "bytecode",
            "1,6 0 0 2,",
        ]);
        let by_tc = json("tc", &["filter", "show", "dev", "lkc0", "ingress"]);
        tc::delete_filter("lkc0", Direction::Ingress, 49_411).unwrap();
        let none = json("tc", &["filter", "show", "dev", "lkc0", "ingress"]);
        assert_eq!(none.as_array().map(Vec::len), Some(0), "{none}");
        tc::add_drop_filter("lkc0", Direction::Ingress, 49_411).unwrap();
        let ours = json("tc", &["filter", "show", "dev", "lkc0", "ingress"]);
        assert_eq!(ours, by_tc, "the same filter, attribute for attribute");
    });
}
