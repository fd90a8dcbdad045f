//! The planner and a running bond put a flow on the same member: the bond's
//! `strong` bucket table is what its members' joining built, a
//! balance-alb bond's peers send to the member its ARP replies gave them,
//! and the planner models exactly that, with the bond's own code
//! (`lagkit-bondcore`, which builds without the BPF toolchain).

use lagkit_bondcore::plan::{Plan, Slots};
use lagkit_bondcore::settings::{BondMode, Settings};
use lagkit_bondcore::Core;
use lagkit_hash::{BucketMap, FlowKey, IpFlow, L4};
use lagkit_planner::predict::Chooser;
use lagkit_planner::{Dir, EndConfig, Flow, Spread};
use lagkit_wire::{ArpOp, ArpRepr, MacAddr};
use std::net::{IpAddr, Ipv4Addr};

#[test]
fn a_bond_whose_members_all_came_up_holds_the_grown_map() {
    for n in 1..=8usize {
        let mut s = Slots::default();
        let usable: Vec<usize> = (0..n).collect();
        s.update(&usable);
        let (map, owners) = s.snapshot().expect("members");
        assert_eq!(owners, usable);
        assert_eq!(map, BucketMap::grown(n).unwrap(), "{n} members");
    }
}

/// A flow from `peer` to the bond.
fn from_peer(peer: Ipv4Addr) -> Flow {
    Flow {
        key: FlowKey {
            ethertype: 0x0800,
            ip: Some(IpFlow::new(
                IpAddr::V4(peer),
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                6,
                L4::Ports {
                    src: 40000,
                    dst: 5001,
                },
            )),
            ..FlowKey::default()
        },
        dir: Dir::In,
        bytes: 1,
        demand_bps: None,
    }
}

#[test]
fn a_balance_alb_bond_gives_each_peer_the_member_the_planner_predicts() {
    for n in 2..=4usize {
        let names: Vec<String> = (1..=n).map(|i| format!("eth{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut core = Core::new(Settings::new("bond0", &refs, BondMode::BalanceAlb));
        for i in 0..n {
            core.member_present(i, MacAddr([2, 0, 0, 0, 0, i as u8 + 1]), None, 0);
            core.handle_carrier(i, true, 0);
        }
        let mac = core.choose_mac();
        core.start(mac, 9, &[], 0);
        core.set_ipv4(vec![Ipv4Addr::new(10, 0, 0, 1)]);
        let peers: Vec<Ipv4Addr> = (2..60).map(|h| Ipv4Addr::new(10, 0, 0, h)).collect();
        for (k, &peer) in peers.iter().enumerate() {
            let arp = ArpRepr {
                op: ArpOp::Request,
                sender_mac: MacAddr([2, 9, 0, 0, 0, k as u8]),
                sender_ip: peer,
                target_mac: MacAddr::ZERO,
                target_ip: Ipv4Addr::new(10, 0, 0, 1),
            };
            let frame = arp.emit_frame(arp.sender_mac, MacAddr::BROADCAST);
            core.handle_frame(k % n, &frame, 1);
        }
        let Plan::Alb { clients, .. } = core.build_plan(2) else {
            panic!("balance-alb plans Plan::Alb");
        };
        let flows: Vec<Flow> = peers.iter().map(|&p| from_peer(p)).collect();
        let end = EndConfig {
            spread: Spread::AlbPeers,
            links: n,
            rate_bps: 1e9,
        };
        let chooser = Chooser::new(&flows, Dir::In, &end);
        for (peer, f) in peers.iter().zip(&flows) {
            assert_eq!(
                chooser.link(f),
                clients.get(peer).copied(),
                "{n} members, peer {peer}"
            );
        }
    }
}
