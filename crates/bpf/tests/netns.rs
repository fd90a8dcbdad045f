//! Two namespaces joined by two veth links, a BPF bond on each side built by
//! the test (a veth end as the logical interface, egress and ingress
//! programs attached with tcx): TCP through it arrives whole, each link
//! carries the flows `lagkit_hash` puts on it, slow-protocol frames stay on
//! the members, a VLAN tag handed down as metadata is hashed, and nothing
//! is left attached afterwards.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use aya::maps::Array;
use aya::programs::tc::TcAttachOptions;
use aya::programs::{LinkOrder, SchedClassifier, TcAttachType};
use aya::Ebpf;
use lagkit_bpf::{Datapath, Distribution, Logical};
use lagkit_dataplane::netns;
use lagkit_hash::{BucketMap, FlowKey, Policy};
use lagkit_testnet::{flood, junk_slow_frames, tcp_transfer_from, wait_until, Lab, SlowCapture};

/// tests/bpf/vlan_push.bpf.c, compiled by build.rs.
static VLAN_PUSH: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/vlan_push.bpf.o"));

/// A BPF bond in `ns`: logical interface `bond0` (a veth end; its peer
/// `bond0p` stays up and idle) with `cidr`, members `members`.
fn bond(lab: &Lab, ns: &str, cidr: &str, members: &[&str], policy: Policy) -> (Datapath, Logical) {
    for m in members {
        lab.prep_member(ns, m, 1500);
    }
    let members: Vec<String> = members.iter().map(|m| m.to_string()).collect();
    let bond = netns::run_in(ns, move || {
        let logical = Logical::create("bond0", "bond0p").unwrap_or_else(|e| panic!("{e}"));
        let mut dp = Datapath::load().unwrap_or_else(|e| panic!("{e}"));
        dp.attach_egress(logical.name())
            .unwrap_or_else(|e| panic!("{e}"));
        let ifindexes: Vec<u32> = members
            .iter()
            .map(|m| dp.attach_ingress(m).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        let buckets = BucketMap::new(ifindexes.len()).unwrap();
        let plan = Distribution::hashed(policy, &buckets, &ifindexes, logical.ifindex());
        dp.configure(&plan).unwrap_or_else(|e| panic!("{e}"));
        (dp, logical)
    })
    .expect("enter namespace");
    let sysctl = "net.ipv6.conf.bond0.disable_ipv6=1";
    lab.nsexec(ns, &["sysctl", "-qw", sysctl]);
    lab.host(ns, "bond0", cidr);
    bond
}

/// A client port whose flow to `server` `policy` puts on `member` of 2.
fn port_for(policy: Policy, client: [u8; 4], server: SocketAddr, member: usize) -> u16 {
    let SocketAddr::V4(s) = server else {
        unreachable!()
    };
    (40000..41000)
        .find(|&p| {
            let key = FlowKey::tcp4(client.into(), p, *s.ip(), s.port());
            policy.select(&key, 2) == Some(member)
        })
        .expect("a port for each member")
}

#[test]
fn tcp_through_two_bpf_bonds_arrives_once_on_the_links_lagkit_hash_picks() {
    let test = "tcp_through_two_bpf_bonds_arrives_once_on_the_links_lagkit_hash_picks";
    let Some(mut lab) = Lab::new(test) else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    lab.veth(&a, "a0", &b, "b0");
    lab.veth(&a, "a1", &b, "b1");
    let policy = Policy::Layer34;
    let (bond_a, logical_a) = bond(&lab, &a, "10.77.0.1/24", &["a0", "a1"], policy);
    let (bond_b, logical_b) = bond(&lab, &b, "10.77.0.2/24", &["b0", "b1"], policy);
    // Each side: egress on bond0, ingress on both members, as tcx links.
    let ids: Vec<[u32; 2]> = [&bond_a, &bond_b]
        .iter()
        .map(|d| d.program_ids().unwrap())
        .collect();
    let links = |prog: u32| {
        let out = lab.sh(&["bpftool", "link", "show"]);
        let prog = format!("prog {prog} ");
        out.lines().filter(|l| l.contains(&prog)).count()
    };
    for [egress, ingress] in &ids {
        assert_eq!((links(*egress), links(*ingress)), (1, 2));
    }

    // One flow for each member of A, chosen with lagkit_hash.
    for (member, server_port) in [(0, 5001), (1, 5002)] {
        let server: SocketAddr = format!("10.77.0.2:{server_port}").parse().unwrap();
        let port = port_for(policy, [10, 77, 0, 1], server, member);
        let src: SocketAddr = format!("10.77.0.1:{port}").parse().unwrap();
        let before = bond_a.counters().unwrap().tx;
        let t = tcp_transfer_from(&b, &server.to_string(), &a, Some(src), 8 << 20);
        assert_eq!((t.received, t.recv_hash), (t.sent, t.sent_hash), "{t:?}");
        let after = bond_a.counters().unwrap().tx;
        let sent = |m: usize| after[m].bytes - before[m].bytes;
        // The data went out on the member lagkit_hash chose (the other one
        // carried at most the ARP exchange).
        assert!(sent(member) >= 8 << 20, "member {member}: {after:?}");
        assert!(sent(1 - member) < 4096, "member {}: {after:?}", 1 - member);
    }
    // Every frame found its member, and B's ingress delivered all it got
    // (data and ACKs: the member counts add up to the transfers at least).
    let (ca, cb) = (bond_a.counters().unwrap(), bond_b.counters().unwrap());
    assert_eq!((ca.tx_dropped.packets, ca.rx_dropped.packets), (0, 0));
    assert_eq!((cb.tx_dropped.packets, cb.rx_dropped.packets), (0, 0));
    assert!(
        cb.rx[0].bytes + cb.rx[1].bytes >= 16 << 20,
        "{:?}",
        &cb.rx[..2]
    );

    // Slow-protocol frames stay on the member: a packet socket there sees
    // them, one on the logical interface does not (redirected frames reach
    // packet taps but not veth's own counters, so taps are the judge).
    let on_member = SlowCapture::start(&a, "a0");
    let on_bond = SlowCapture::start(&a, "bond0");
    let sent = flood(
        &b,
        "b0",
        &junk_slow_frames(7),
        400,
        Duration::from_millis(500),
    );
    std::thread::sleep(Duration::from_millis(100));
    let (member, logical) = (on_member.finish().len(), on_bond.finish().len());
    // A quarter of the junk frames are LACPDU-shaped, which is what the
    // captures count.
    assert!(
        sent >= 40 && member as u64 >= sent / 4,
        "sent {sent}, member saw {member}"
    );
    assert_eq!(logical, 0, "bond0 saw {logical} of {sent}");

    // Nothing left behind: dropping the bonds detaches every link and
    // frees the programs (and with them their maps); dropping the logical
    // interfaces (here, from outside their namespaces) removes them.
    drop((bond_a, bond_b));
    drop((logical_a, logical_b));
    for ns in [&a, &b] {
        let links = lab.sh(&["ip", "-n", ns, "-o", "link", "show"]);
        assert!(!links.contains("bond0"), "{ns}: {links}");
    }
    for id in ids.iter().flatten() {
        assert_eq!(links(*id), 0, "links of program {id}");
        let id = id.to_string();
        wait_until("programs freed", Duration::from_secs(5), || {
            lab.try_sh(&["bpftool", "prog", "show", "id", &id]).is_err()
        });
    }
}

/// The MAC address of `ifname` in `ns`.
fn mac_of(lab: &Lab, ns: &str, ifname: &str) -> [u8; 6] {
    let out = lab.sh(&["ip", "-n", ns, "-o", "link", "show", ifname]);
    let hex = out
        .split_whitespace()
        .skip_while(|w| *w != "link/ether")
        .nth(1)
        .expect("an Ethernet address");
    let mut mac = [0u8; 6];
    for (b, h) in mac.iter_mut().zip(hex.split(':')) {
        *b = u8::from_str_radix(h, 16).expect("hex");
    }
    mac
}

#[test]
fn a_tag_handed_down_as_metadata_is_hashed() {
    let test = "a_tag_handed_down_as_metadata_is_hashed";
    let Some(mut lab) = Lab::new(test) else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    lab.veth(&a, "a0", &b, "b0");
    lab.veth(&a, "a1", &b, "b1");
    lab.prep_member(&b, "b0", 1500);
    lab.prep_member(&b, "b1", 1500);
    // vlan+srcmac: the source MAC is fixed, so only the tag can move a flow.
    let policy = Policy::VlanSrcMac;
    let (bond_a, _logical_a) = bond(&lab, &a, "10.79.0.1/24", &["a0", "a1"], policy);
    let peer = "10.79.0.9";
    lab.sh(&[
        "ip",
        "-n",
        &a,
        "neigh",
        "add",
        peer,
        "lladdr",
        "02:00:00:00:00:99",
        "dev",
        "bond0",
    ]);
    // A VLAN device above bond0 would hand its tag down as metadata; this
    // kernel has no 8021q, so a helper program ahead of lagkit's does it.
    let mut tagger = netns::run_in(&a, || {
        let mut ebpf = Ebpf::load(VLAN_PUSH).unwrap();
        let prog: &mut SchedClassifier = ebpf
            .program_mut("test_vlan_push")
            .unwrap()
            .try_into()
            .unwrap();
        prog.load().unwrap();
        let first = TcAttachOptions::TcxOrder(LinkOrder::first());
        prog.attach_with_options("bond0", TcAttachType::Egress, first)
            .unwrap();
        ebpf
    })
    .unwrap();
    let mac = mac_of(&lab, &a, "bond0");
    let member_of = |vid: u16| {
        let key = FlowKey::l2(mac, [0; 6], 0x0800).with_vlan(vid);
        policy.select(&key, 2).unwrap()
    };
    for member in [0, 1] {
        let vid = (2..4000u16).find(|&v| member_of(v) == member).unwrap();
        let mut map = Array::<_, u32>::try_from(tagger.map_mut("vid").unwrap()).unwrap();
        map.set(0, u32::from(vid), 0).unwrap();
        let before = bond_a.counters().unwrap().tx;
        netns::run_in(&a, || {
            let sock = UdpSocket::bind("10.79.0.1:0").unwrap();
            for _ in 0..100 {
                sock.send_to(b"tagged", (peer, 9)).unwrap();
            }
        })
        .unwrap();
        let after = bond_a.counters().unwrap().tx;
        let sent = |m: usize| after[m].packets - before[m].packets;
        assert!(
            sent(member) >= 100,
            "vlan {vid}, member {member}: {:?}",
            &after[..2]
        );
        assert_eq!(sent(1 - member), 0, "vlan {vid}: {:?}", &after[..2]);
    }
}
