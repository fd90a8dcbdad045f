//! The test network's own socket helpers, as root: a user-space wire
//! between two hosts forwards their TCP, a client bound to a fixed port
//! connects from it, and `reaches_from` tells an answered attempt (a
//! closed port's reset) from silence.

use lagkit_testnet::{reaches_from, tcp_transfer, tcp_transfer_from, Lab, UserWire};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

#[test]
fn user_wire_forwards_and_sockets_connect_from_fixed_ports() {
    let Some(mut lab) = Lab::new("user_wire_forwards_and_sockets_connect_from_fixed_ports") else {
        return;
    };
    // a (a1) -- w1 [user-space wire] w2 -- b (b1)
    let (a, w, b) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&a, "a1", &w, "w1");
    lab.veth(&w, "w2", &b, "b1");
    for i in ["w1", "w2"] {
        lab.sh(&["ip", "-n", &w, "link", "set", i, "up"]);
    }
    // Frames no larger than the MTU, with finished checksums, as a wire
    // without vnet headers needs.
    for (ns, i) in [(&a, "a1"), (&b, "b1")] {
        lab.nsexec(
            ns,
            &["ethtool", "-K", i, "tx", "off", "tso", "off", "gso", "off"],
        );
    }
    lab.host(&a, "a1", "10.0.7.1/24");
    lab.host(&b, "b1", "10.0.7.2/24");
    let wire = UserWire::start(&w, "w1", "w2");

    let t = tcp_transfer(&b, "10.0.7.2:6401", &a, 1 << 20);
    assert_eq!((t.sent, t.sent_hash), (t.received, t.recv_hash), "{t:?}");
    let src: SocketAddr = "10.0.7.1:40123".parse().unwrap();
    let t = tcp_transfer_from(&b, "10.0.7.2:6402", &a, Some(src), 64 << 10);
    assert_eq!((t.sent, t.sent_hash), (t.received, t.recv_hash), "{t:?}");

    let (ab, ba) = wire.counts();
    assert!(ab.frames > 100 && ba.frames > 100, "{ab:?} {ba:?}");
    assert!(ab.forwarded > 100 && ba.forwarded > 100, "{ab:?} {ba:?}");
    assert_eq!((ab.unfinished_csum, ab.oversize), (0, 0), "{ab:?}");

    let me = Ipv4Addr::new(10, 0, 7, 1);
    let closed: SocketAddr = "10.0.7.2:6499".parse().unwrap();
    assert!(reaches_from(&a, me, closed, Duration::from_secs(2)));
    let nobody: SocketAddr = "10.0.7.99:6499".parse().unwrap();
    assert!(!reaches_from(&a, me, nobody, Duration::from_millis(300)));
    drop(wire);
    assert!(!reaches_from(&a, me, closed, Duration::from_millis(300)));
}
