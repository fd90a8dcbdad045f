//! Root tests in network namespaces: two namespaces joined by two veth
//! pairs, a lagkit forwarder (TAP + AF_PACKET members) on each side, kernel
//! TCP on top with its default offloads. They skip (pass with a message)
//! when not run as root.
//!
//! Run: `sudo -E cargo test -p lagkit-dataplane --test netns` (add
//! `-- --nocapture` for throughput and GSO counts). Namespaces are named
//! `lkdp-<pid>-<n>` and deleted when each test ends, panics included.

#![forbid(unsafe_code)]

mod common;

use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use lagkit_dataplane::device::plain_packet;
use lagkit_dataplane::forward::{ethertype, ETHERTYPE_SLOW};
use lagkit_dataplane::isolate::{Isolation, TC_PREF};
use lagkit_dataplane::vnet::{complete_checksum_in_place, VnetHeader, VnetRepr};
use lagkit_dataplane::{
    netns, Device, DistMap, DropReason, Engine, EngineConfig, EngineDrop, FaultInjector,
    PacketConfig, PacketSocket, Receive, RxBatch, Tap, TapConfig,
};

/// Two namespaces A and B with veths a0-b0 and a1-b1 prepared as members.
fn two_namespaces(lab: &mut Lab, mtu: u32) -> (String, String) {
    let (a, b) = (lab.netns(), lab.netns());
    for i in 0..2 {
        let (x, y) = (format!("a{i}"), format!("b{i}"));
        lab.veth(&a, &x, &b, &y);
        lab.prep_member(&a, &x, mtu);
        lab.prep_member(&b, &y, mtu);
    }
    (a, b)
}

fn sum_members(side: &BondSide, f: impl Fn(&lagkit_dataplane::CounterSnapshot) -> u64) -> u64 {
    side.members
        .iter()
        .map(|m| f(&m.counters().snapshot()))
        .sum()
}

/// (a) 200 MB of TCP through both forwarders with default offloads: the data
/// arrives intact, GSO super-frames were forwarded both ways, and neither
/// kernel saw a checksum error.
#[test]
fn tcp_with_default_offloads_passes_gso_frames() {
    let Some(mut lab) = Lab::new("tcp_with_default_offloads_passes_gso_frames") else {
        return;
    };
    let (a, b) = two_namespaces(&mut lab, 1500);
    let sa = bond_side(
        &lab,
        &a,
        "lk0",
        &["a0", "a1"],
        &SideOpts::new(1, "10.77.0.1/24"),
    );
    let sb = bond_side(
        &lab,
        &b,
        "lk0",
        &["b0", "b1"],
        &SideOpts::new(2, "10.77.0.2/24"),
    );

    let t = tcp_transfer(&b, "10.77.0.2:5001", &a, 200 << 20);
    assert_eq!(t.received, t.sent, "bytes received");
    assert_eq!(t.recv_hash, t.sent_hash, "data hash");

    let tap_a = sa.tap.counters().snapshot();
    let tap_b = sb.tap.counters().snapshot();
    let gso_b_members = sum_members(&sb, |s| s.rx_gso);
    eprintln!(
        "200 MiB in {:?} ({:.2} Gbit/s); A tap rx {} frames ({} GSO); B members rx {} ({} GSO); B tap tx {} ({} GSO); \
         drops A {:?} B {:?}; retrans {}",
        t.elapsed,
        t.sent as f64 * 8.0 / t.elapsed.as_secs_f64() / 1e9,
        tap_a.rx_packets,
        tap_a.rx_gso,
        sum_members(&sb, |s| s.rx_packets),
        gso_b_members,
        tap_b.tx_packets,
        tap_b.tx_gso,
        sa.engine.stats().drops,
        sb.engine.stats().drops,
        tcp_retrans(&lab, &a),
    );
    assert!(tap_a.rx_gso > 0, "no GSO frame came out of A's TAP");
    assert!(gso_b_members > 0, "no GSO frame crossed a member");
    assert!(tap_b.tx_gso > 0, "no GSO frame went into B's TAP");
    // Most of the payload should travel as super-frames, not MTU frames.
    assert!(
        tap_a.rx_gso * 4 > tap_a.rx_packets / 2,
        "too few GSO frames: {tap_a:?}"
    );
    assert_eq!(csum_errors(&lab, &a), 0, "checksum errors in A");
    assert_eq!(csum_errors(&lab, &b), 0, "checksum errors in B");
}

/// (b) MTU 9000 end to end: a 8972-byte UDP datagram with DF set arrives
/// whole (one 9014-byte frame, no GSO), and TCP works with jumbo MSS.
#[test]
fn jumbo_mtu_9000_end_to_end() {
    let Some(mut lab) = Lab::new("jumbo_mtu_9000_end_to_end") else {
        return;
    };
    let (a, b) = two_namespaces(&mut lab, 9000);
    let mut oa = SideOpts::new(1, "10.77.0.1/24");
    oa.mtu = 9000;
    let mut ob = SideOpts::new(2, "10.77.0.2/24");
    ob.mtu = 9000;
    let _sa = bond_side(&lab, &a, "lk0", &["a0", "a1"], &oa);
    let sb = bond_side(&lab, &b, "lk0", &["b0", "b1"], &ob);
    assert_eq!(sb.tap.link().mtu().unwrap(), 9000);

    let rx = netns::run_in(&b, || UdpSocket::bind("10.77.0.2:6000").expect("bind")).unwrap();
    rx.set_nonblocking(true).unwrap();
    let tx = netns::run_in(&a, || UdpSocket::bind("10.77.0.1:0").expect("bind")).unwrap();
    lagkit_sys::packet::setsockopt_int(
        tx.as_fd(),
        libc::IPPROTO_IP,
        libc::IP_MTU_DISCOVER,
        libc::IP_PMTUDISC_DO,
    )
    .expect("setsockopt(IP_MTU_DISCOVER)");
    let payload: Vec<u8> = (0..8972u32).map(|i| (i % 251) as u8).collect();
    let mut buf = vec![0u8; 10000];
    let mut got = 0;
    wait_until("a jumbo datagram", Duration::from_secs(10), || {
        // The first sends may wait for ARP; keep offering.
        let _ = tx.send_to(&payload, "10.77.0.2:6000");
        std::thread::sleep(Duration::from_millis(20));
        if let Ok((n, _)) = rx.recv_from(&mut buf) {
            got = n;
            return true;
        }
        false
    });
    assert_eq!(got, 8972);
    assert_eq!(&buf[..got], &payload[..]);

    let t = tcp_transfer(&b, "10.77.0.2:5002", &a, 50 << 20);
    assert_eq!((t.received, t.recv_hash), (t.sent, t.sent_hash));
    assert_eq!(csum_errors(&lab, &b), 0);
}

fn lacp_like(src_last: u8, tag: u8) -> Vec<u8> {
    let mut f = vec![0u8; 124];
    f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0xbb, src_last]);
    f[12..14].copy_from_slice(&ETHERTYPE_SLOW.to_be_bytes());
    f[14] = 1; // LACP subtype
    f[15] = 1;
    f[16] = tag;
    f
}

fn count_slow(dev: &PacketSocket, batch: &mut RxBatch) -> (usize, usize) {
    let (mut slow, mut other) = (0, 0);
    loop {
        batch.clear();
        if dev.recv(batch).unwrap_or(0) == 0 {
            return (slow, other);
        }
        for i in 0..batch.len() {
            if ethertype(batch.frame(i)) == Some(ETHERTYPE_SLOW) {
                slow += 1;
            } else {
                other += 1;
            }
        }
    }
}

/// (c) Slow-protocol frames received on members go to the control queue and
/// never into the TAP; ones the host sends into the TAP never leave on a
/// member; the control plane can send on a chosen member.
#[test]
fn slow_protocol_frames_stay_out_of_the_tap() {
    let Some(mut lab) = Lab::new("slow_protocol_frames_stay_out_of_the_tap") else {
        return;
    };
    let (a, b) = two_namespaces(&mut lab, 1500);
    let sa = bond_side(&lab, &a, "lk0", &["a0", "a1"], &SideOpts::new(1, ""));
    // Raw sockets standing in for the partner (B) and a sniffer on A's TAP.
    let (b0, b1) = netns::run_in(&b, || {
        (
            PacketSocket::open(&PacketConfig::new("b0")).unwrap(),
            PacketSocket::open(&PacketConfig::new("b1")).unwrap(),
        )
    })
    .unwrap();
    let lk0 = netns::run_in(&a, || {
        PacketSocket::open(&PacketConfig::new("lk0")).unwrap()
    })
    .unwrap();

    for i in 0..5 {
        b0.send(&plain_packet(&lacp_like(0, i))).unwrap();
    }
    for i in 0..3 {
        b1.send(&plain_packet(&lacp_like(1, i))).unwrap();
    }
    // A control frame that must reach the TAP (local experimental EtherType).
    let mut probe = lacp_like(0, 99);
    probe[..6].copy_from_slice(&[0x02, 0x6c, 0x6b, 0, 0, 1]);
    probe[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    b0.send(&plain_packet(&probe)).unwrap();

    let mut slow = Vec::new();
    wait_until(
        "8 slow frames in the control queue",
        Duration::from_secs(5),
        || {
            slow.extend(sa.slow.try_iter());
            slow.len() >= 8
        },
    );
    assert_eq!(slow.iter().filter(|s| s.member == 0).count(), 5);
    assert_eq!(slow.iter().filter(|s| s.member == 1).count(), 3);
    assert_eq!(slow[0].frame, lacp_like(0, 0));

    let mut batch = RxBatch::new(64);
    let (mut tap_slow, mut tap_other) = (0, 0);
    wait_until("the probe frame on lk0", Duration::from_secs(5), || {
        let (s, o) = count_slow(&lk0, &mut batch);
        tap_slow += s;
        tap_other += o;
        tap_other > 0
    });
    assert_eq!(tap_slow, 0, "a slow-protocol frame entered the TAP");

    // Control-plane transmit on member 1 reaches b1 only.
    sa.engine
        .member_sender(1)
        .unwrap()
        .send_frame(&lacp_like(0xaa, 7))
        .unwrap();
    let mut on_b1 = 0;
    wait_until("the LACPDU on b1", Duration::from_secs(5), || {
        on_b1 += count_slow(&b1, &mut batch).0;
        on_b1 > 0
    });

    // The host sends a slow frame into the TAP: the engine drops it.
    lk0.send(&plain_packet(&lacp_like(0xcc, 1))).unwrap();
    wait_until("the slow-from-TAP drop", Duration::from_secs(5), || {
        sa.engine.stats().dropped(EngineDrop::SlowFromUpper) >= 1
    });
    let (s0, _) = count_slow(&b0, &mut batch);
    let (s1, _) = count_slow(&b1, &mut batch);
    assert_eq!(
        (s0, s1),
        (0, 0),
        "a slow frame from the TAP left on a member"
    );
    let (s, _) = count_slow(&lk0, &mut batch);
    assert_eq!(s, 0);
    assert_eq!(sa.engine.stats().members[1].slow_tx, 1);
}

fn tagged(dst_last: u8, vid: u16, tag: u8) -> Vec<u8> {
    let mut f = vec![0u8; 100];
    f[..6].copy_from_slice(&[0x02, 0x6c, 0x6b, 0, 0, dst_last]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0xee, tag]);
    f[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
    f[14..16].copy_from_slice(&vid.to_be_bytes());
    f[16..18].copy_from_slice(&0x88b5u16.to_be_bytes());
    f[18] = tag;
    f
}

/// Waits for a frame whose byte 18 is `tag` (ignoring unrelated traffic).
fn expect_frame(dev: &PacketSocket, tag: u8, what: &str) -> Vec<u8> {
    let mut batch = RxBatch::new(64);
    let mut found = None;
    wait_until(what, Duration::from_secs(5), || {
        batch.clear();
        let _ = dev.recv(&mut batch);
        found = (0..batch.len())
            .map(|i| batch.frame(i))
            .find(|f| f.len() > 18 && f[18] == tag && f[6..10] == [2, 0, 0, 0])
            .map(|f| f.to_vec());
        found.is_some()
    });
    found.unwrap_or_default()
}

/// VLAN tags survive the bond in both directions. The kernel takes a received
/// frame's 802.1Q tag out of the data before packet sockets see it; the
/// member puts it back from PACKET_AUXDATA. (This kernel has no 8021q module,
/// so raw tagged frames stand in for VLAN interfaces.)
#[test]
fn vlan_tags_cross_the_bond_both_ways() {
    let Some(mut lab) = Lab::new("vlan_tags_cross_the_bond_both_ways") else {
        return;
    };
    let (a, b) = two_namespaces(&mut lab, 1500);
    let _sa = bond_side(&lab, &a, "lk0", &["a0", "a1"], &SideOpts::new(1, ""));
    let (b0, b1) = netns::run_in(&b, || {
        (
            PacketSocket::open(&PacketConfig::new("b0")).unwrap(),
            PacketSocket::open(&PacketConfig::new("b1")).unwrap(),
        )
    })
    .unwrap();
    let lk0 = netns::run_in(&a, || {
        PacketSocket::open(&PacketConfig::new("lk0")).unwrap()
    })
    .unwrap();

    // Up: partner -> member -> TAP keeps VLAN 100.
    let up = tagged(1, 100, 0x41);
    b0.send(&plain_packet(&up)).unwrap();
    assert_eq!(expect_frame(&lk0, 0x41, "the tagged frame on lk0"), up);

    // Down: host -> TAP -> member keeps VLAN 4094 with priority 5.
    let down = tagged(2, (5 << 13) | 4094, 0x42);
    lk0.send(&plain_packet(&down)).unwrap();
    let mut seen = None;
    wait_until(
        "the tagged frame on b0 or b1",
        Duration::from_secs(5),
        || {
            for dev in [&b0, &b1] {
                let mut batch = RxBatch::new(64);
                let _ = dev.recv(&mut batch);
                if let Some(f) = (0..batch.len())
                    .map(|i| batch.frame(i))
                    .find(|f| f.len() > 18 && f[18] == 0x42)
                {
                    seen = Some(f.to_vec());
                }
            }
            seen.is_some()
        },
    );
    assert_eq!(seen.unwrap_or_default(), down);
}

/// The software checksum fallback on real kernel output: frames read from a
/// TAP carry partial checksums (NEEDS_CSUM); completing them gives what
/// etherparse computes independently.
#[test]
fn kernel_partial_checksums_complete_in_software() {
    let Some(mut lab) = Lab::new("kernel_partial_checksums_complete_in_software") else {
        return;
    };
    let a = lab.netns();
    let tap = netns::run_in(&a, || {
        let t = Tap::open(&TapConfig::new("lk0")).unwrap();
        t.link().set_up(true).unwrap();
        t
    })
    .unwrap();
    lab.sh(&["ip", "-n", &a, "addr", "add", "10.77.0.1/24", "dev", "lk0"]);
    lab.sh(&[
        "ip",
        "-n",
        &a,
        "neigh",
        "add",
        "10.77.0.9",
        "lladdr",
        "02:00:00:00:00:09",
        "dev",
        "lk0",
    ]);

    let udp = netns::run_in(&a, || UdpSocket::bind("10.77.0.1:0").unwrap()).unwrap();
    let tcp_thread = {
        let a = a.clone();
        // A SYN towards a silent peer: connect times out, the SYN is what we want.
        std::thread::spawn(move || {
            netns::enter(&a).unwrap();
            let _ = std::net::TcpStream::connect_timeout(
                &"10.77.0.9:80".parse().unwrap(),
                Duration::from_secs(1),
            );
        })
    };
    let payload = vec![0x5au8; 333];
    let mut batch = RxBatch::new(64);
    let (mut udp_done, mut tcp_done) = (false, false);
    wait_until(
        "a partial UDP datagram and a partial TCP SYN",
        Duration::from_secs(5),
        || {
            let _ = udp.send_to(&payload, "10.77.0.9:9999");
            batch.clear();
            let _ = tap.recv(&mut batch);
            for i in 0..batch.len() {
                let mut pkt = batch.packet(i).to_vec();
                let repr = VnetRepr::parse(&VnetHeader::new_checked(&pkt[..]).unwrap()).unwrap();
                let is_udp = {
                    let Ok(sliced) = etherparse::SlicedPacket::from_ethernet(&pkt[10..]) else {
                        continue;
                    };
                    let Some(etherparse::NetSlice::Ipv4(ip)) = &sliced.net else {
                        continue;
                    };
                    if ip.header().destination() != [10, 77, 0, 9] || !repr.flags.needs_csum() {
                        continue;
                    }
                    matches!(sliced.transport, Some(etherparse::TransportSlice::Udp(_)))
                };
                assert!(complete_checksum_in_place(&mut pkt).unwrap());
                let done = etherparse::SlicedPacket::from_ethernet(&pkt[10..]).unwrap();
                let Some(etherparse::NetSlice::Ipv4(ip)) = &done.net else {
                    unreachable!()
                };
                let (src, dst) = (ip.header().source(), ip.header().destination());
                match &done.transport {
                    Some(etherparse::TransportSlice::Udp(u)) if is_udp => {
                        let want = u
                            .to_header()
                            .calc_checksum_ipv4_raw(src, dst, u.payload())
                            .unwrap();
                        assert_eq!(u.checksum(), want, "UDP checksum");
                        udp_done = true;
                    }
                    Some(etherparse::TransportSlice::Tcp(t)) => {
                        assert_eq!(
                            t.checksum(),
                            t.calc_checksum_ipv4(src, dst).unwrap(),
                            "TCP checksum"
                        );
                        tcp_done = true;
                    }
                    _ => {}
                }
            }
            udp_done && tcp_done
        },
    );
    tcp_thread.join().unwrap();

    // A non-persistent TAP disappears with its last descriptor.
    drop(tap);
    wait_until("lk0 removed", Duration::from_secs(5), || {
        lab.try_sh(&["ip", "-n", &a, "link", "show", "lk0"])
            .is_err()
    });
}

/// A member is cut (fault injector) in the middle of a TCP transfer; once
/// the control side publishes maps without it on both ends, the transfer
/// completes intact over the other member.
#[test]
fn cut_member_then_republish_map_mid_transfer() {
    let Some(mut lab) = Lab::new("cut_member_then_republish_map_mid_transfer") else {
        return;
    };
    let (a, b) = two_namespaces(&mut lab, 1500);
    let (tap, socks) = netns::run_in(&a, || {
        let t = Tap::open(&TapConfig::new("lk0")).unwrap();
        t.link().set_mac([0x02, 0x6c, 0x6b, 0, 0, 1]).unwrap();
        t.link().set_up(true).unwrap();
        let s: Vec<PacketSocket> = ["a0", "a1"]
            .iter()
            .map(|m| PacketSocket::open(&PacketConfig::new(m)).unwrap())
            .collect();
        (t, s)
    })
    .unwrap();
    lab.sh(&["ip", "-n", &a, "addr", "add", "10.77.0.1/24", "dev", "lk0"]);
    let faults: Vec<Arc<FaultInjector<PacketSocket>>> = socks
        .into_iter()
        .enumerate()
        .map(|(i, s)| Arc::new(FaultInjector::new(s, 42 + i as u64)))
        .collect();
    let devs: Vec<Arc<dyn Device>> = faults
        .iter()
        .map(|f| f.clone() as Arc<dyn Device>)
        .collect();
    let (eng_a, _slow_a) = Engine::start(
        Arc::new(tap),
        devs,
        DistMap::new([0, 1], 1),
        flow_selector,
        EngineConfig::default(),
    )
    .unwrap();
    let sb = bond_side(
        &lab,
        &b,
        "lk0",
        &["b0", "b1"],
        &SideOpts::new(2, "10.77.0.2/24"),
    );

    let (a2, b2) = (a.clone(), b.clone());
    let transfer = std::thread::spawn(move || tcp_transfer(&b2, "10.77.0.2:5004", &a2, 300 << 20));
    wait_until("20 MB forwarded", Duration::from_secs(20), || {
        eng_a
            .stats()
            .members
            .iter()
            .any(|m| m.down_bytes > 20 << 20)
    });
    let st = eng_a.stats();
    let busy = if st.members[0].down_bytes >= st.members[1].down_bytes {
        0
    } else {
        1
    };
    let other = 1 - busy;
    let ctl = faults[busy].control();
    ctl.set_cut(true);
    wait_until("frames dropped by the cut", Duration::from_secs(5), || {
        ctl.dropped() > 0
    });
    let before_other = eng_a.stats().members[other].down_bytes;
    eng_a.publisher().publish(DistMap::new([other], 2));
    sb.engine.publisher().publish(DistMap::new([other], 2));

    let t = transfer.join().expect("transfer");
    assert_eq!((t.received, t.recv_hash), (t.sent, t.sent_hash));
    let st = eng_a.stats();
    assert!(
        st.members[other].down_bytes > before_other + (10 << 20),
        "traffic did not move: {st:?}"
    );
    let c = faults[busy].counters().snapshot();
    assert!(c.dropped(DropReason::TxFault) + c.dropped(DropReason::RxFault) > 0);
    eprintln!(
        "cut member {busy}: {} frames dropped by the fault injector, {} retransmissions",
        ctl.dropped(),
        tcp_retrans(&lab, &a)
    );
}

/// Counts the frames a packet socket reads within `d`.
fn frames_read(sock: &PacketSocket, d: Duration) -> usize {
    let mut batch = RxBatch::new(64);
    let mut n = 0;
    let end = std::time::Instant::now() + d;
    while std::time::Instant::now() < end {
        batch.clear();
        if sock.recv(&mut batch).is_ok() {
            n += batch.len();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    n
}

/// Member isolation: with the ingress drop attached, a member's packet
/// socket still reads every frame while the host stack on that interface
/// answers nothing; detached (the descriptor closed, as when the process
/// dies), the stack answers again.
#[test]
fn isolated_member_feeds_the_packet_socket_but_not_the_stack() {
    let Some(mut lab) = Lab::new("isolated_member") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    lab.veth(&a, "m0", &b, "p0");
    lab.nsexec(&a, &["ip", "addr", "add", "10.78.0.1/24", "dev", "m0"]);
    lab.nsexec(&a, &["ip", "link", "set", "m0", "up"]);
    lab.nsexec(&b, &["ip", "addr", "add", "10.78.0.2/24", "dev", "p0"]);
    lab.nsexec(&b, &["ip", "link", "set", "p0", "up"]);
    let ping = |n: &str| {
        std::process::Command::new("ip")
            .args(["netns", "exec", &b, "ping", "-c", n, "-i", "0.2", "-W", "1"])
            .arg("10.78.0.1")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    wait_until(
        "the stack answers before isolation",
        Duration::from_secs(5),
        || ping("1"),
    );
    let (sock, iso) = netns::run_in(&a, || {
        let sock = PacketSocket::open(&PacketConfig::new("m0")).expect("packet socket");
        let iso = lagkit_dataplane::isolate_ingress(sock.link()).expect("isolation");
        (sock, iso)
    })
    .expect("enter namespace");
    eprintln!("isolation: {}", iso.kind());
    let t = {
        let b = b.clone();
        std::thread::spawn(move || {
            std::process::Command::new("ip")
                .args([
                    "netns", "exec", &b, "ping", "-c", "3", "-i", "0.2", "-W", "1",
                ])
                .arg("10.78.0.1")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        })
    };
    let seen = frames_read(&sock, Duration::from_millis(1500));
    assert!(
        !t.join().unwrap(),
        "no answer from an isolated member's stack"
    );
    assert!(
        seen >= 3,
        "the packet socket still reads the frames ({seen})"
    );
    drop(iso);
    wait_until("the stack answers again", Duration::from_secs(5), || {
        ping("1")
    });
}

/// The tc fallback (kernels without tcx), forced here: the `cls_bpf`
/// filter and its clsact qdisc are installed over netlink as tc(8) made
/// them, the packet socket still reads every frame while the stack answers
/// nothing, and dropping the isolation removes both.
#[test]
fn tc_fallback_isolates_a_member_and_is_removed_on_drop() {
    let Some(mut lab) = Lab::new("tc_fallback") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    lab.veth(&a, "m0", &b, "p0");
    lab.host(&a, "m0", "10.77.0.1/24");
    lab.host(&b, "p0", "10.77.0.2/24");
    let ping = || lagkit_testnet::ping(&b, "10.77.0.1", 1).received == 1;
    wait_until(
        "the stack answers before isolation",
        Duration::from_secs(5),
        ping,
    );
    let (sock, iso) = netns::run_in(&a, || {
        let sock = PacketSocket::open(&PacketConfig::new("m0")).expect("packet socket");
        let iso = lagkit_dataplane::isolate::isolate_ingress_tc(sock.link()).expect("tc filter");
        (sock, iso)
    })
    .expect("enter namespace");
    assert_eq!(iso.kind(), "tc-clsact");
    assert!(
        matches!(
            iso,
            Isolation::TcClassic {
                created_qdisc: true,
                ..
            }
        ),
        "{iso:?}"
    );
    let filters = lab.nsexec(&a, &["tc", "-j", "filter", "show", "dev", "m0", "ingress"]);
    let filters: serde_json::Value = serde_json::from_str(&filters).expect("tc -j");
    let ours = filters
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f.get("options").is_some())
        .expect("a filter");
    assert_eq!(ours["kind"], "bpf", "{filters}");
    assert_eq!(ours["pref"], TC_PREF, "{filters}");
    assert_eq!(ours["options"]["direct-action"], true, "{filters}");
    let t = {
        let b = b.clone();
        std::thread::spawn(move || lagkit_testnet::ping(&b, "10.77.0.1", 3).received)
    };
    let seen = frames_read(&sock, Duration::from_millis(1500));
    assert_eq!(
        t.join().unwrap(),
        0,
        "no answer from an isolated member's stack"
    );
    assert!(
        seen >= 3,
        "the packet socket still reads the frames ({seen})"
    );
    // Removed by name, so in the namespace the member is in.
    netns::run_in(&a, move || drop(iso)).expect("enter namespace");
    let qdiscs = lab.nsexec(&a, &["tc", "-j", "qdisc", "show", "dev", "m0"]);
    assert!(
        !qdiscs.contains("clsact"),
        "the qdisc lagkit made is gone: {qdiscs}"
    );
    wait_until("the stack answers again", Duration::from_secs(5), ping);
}

/// Fault injection: a blackholed link drops what it sends, keeps its
/// carrier, and heals when the descriptor closes.
#[test]
fn blackhole_egress_fails_a_link_silently_one_way() {
    let Some(mut lab) = Lab::new("blackhole") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    lab.veth(&a, "m0", &b, "p0");
    lab.host(&a, "m0", "10.79.0.1/24");
    lab.host(&b, "p0", "10.79.0.2/24");
    let ping = || lagkit_testnet::ping(&a, "10.79.0.2", 1).received == 1;
    wait_until("ping works", Duration::from_secs(5), ping);
    let link = netns::run_in(&b, || lagkit_dataplane::Link::open("p0"))
        .unwrap()
        .unwrap();
    // IFF_RUNNING follows the operational state, which the kernel's link
    // watch updates asynchronously (up to a second late on a busy
    // machine), so frames may flow before it says so.
    wait_until("carrier reported", Duration::from_secs(5), || {
        link.carrier().unwrap()
    });
    let hole = netns::run_in(&b, || lagkit_dataplane::isolate::blackhole_egress("p0"))
        .unwrap()
        .expect("blackhole");
    assert!(!ping(), "replies vanish");
    assert!(link.carrier().unwrap(), "carrier stays up");
    drop(hole);
    wait_until("healed", Duration::from_secs(5), ping);
}

/// The BPF engine's member sockets read control frames and nothing else:
/// with [`Receive::Control`] LACP, ARP and PAgP frames, with
/// [`Receive::Slow`] LACP only.
#[test]
fn control_sockets_read_control_frames_only() {
    let frame = |dst: [u8; 6], ethertype: [u8; 2], first: u8| {
        let mut f = dst.to_vec();
        f.extend_from_slice(&[2, 0, 0, 0, 0, 9]);
        f.extend_from_slice(&ethertype);
        f.push(first);
        f.resize(128, 0);
        f
    };
    let bcast = [0xff; 6];
    let slow_mac = [0x01, 0x80, 0xc2, 0, 0, 2];
    let cisco = [0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc];
    let unicast = [2, 0, 0, 0, 0, 1];
    let lacp = frame(slow_mac, [0x88, 0x09], 1);
    let arp = frame(bcast, [0x08, 0x06], 0);
    // 802.3 length + LLC/SNAP, as PAgP is framed.
    let pagp = frame(cisco, [0x00, 0x40], 0xaa);
    let data = [
        frame(unicast, [0x08, 0x00], 0x45),
        frame(bcast, [0x86, 0xdd], 0x60),
        frame([0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcd], [0x00, 0x40], 0xaa),
        frame([0x01, 0x00, 0x0c, 0xcc, 0xcd, 0xcc], [0x00, 0x40], 0xaa),
    ];
    let control = [lacp.clone(), arp.clone(), pagp.clone()];
    let cases = [
        (Receive::Control, control.to_vec(), data.to_vec()),
        (
            Receive::Slow,
            vec![lacp],
            [&data[..], &[arp, pagp]].concat(),
        ),
    ];
    for (receive, wanted, unwanted) in cases {
        let Some(mut lab) = Lab::new("control_only") else {
            return;
        };
        let (a, b) = (lab.netns(), lab.netns());
        lab.veth(&a, "m0", &b, "p0");
        lab.prep_member(&a, "m0", 1500);
        lab.prep_member(&b, "p0", 1500);
        let ours = netns::run_in(&a, || {
            PacketSocket::open(&PacketConfig {
                receive,
                ..PacketConfig::new("m0")
            })
            .expect("control socket")
        })
        .expect("enter namespace");
        let peer = netns::run_in(&b, || PacketSocket::open(&PacketConfig::new("p0")).unwrap())
            .expect("enter namespace");
        for f in unwanted.iter().chain(&wanted).chain(&unwanted) {
            peer.send(&plain_packet(f)).expect("send");
        }
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut batch = RxBatch::new(64);
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while got.len() < wanted.len() && std::time::Instant::now() < end {
            batch.clear();
            if ours.recv(&mut batch).is_ok() {
                got.extend(batch.iter().map(|p| p[10..].to_vec()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // Anything else would have been queued before the last wanted frame.
        batch.clear();
        let _ = ours.recv(&mut batch);
        got.extend(batch.iter().map(|p| p[10..].to_vec()));
        assert_eq!(
            got, wanted,
            "{receive:?}: exactly its control frames, in order"
        );
    }
}
