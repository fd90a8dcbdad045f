//! The spreads besides hashing (active-backup, round-robin, broadcast),
//! balance-tlb's source-MAC rewrite, per-bucket byte counts for adaptive
//! rebalancing, and ingress's choice of whose frames go up.

mod common;

use common::load;
use lagkit_bpf::{Datapath, Distribution, Spread, Tlb};
use lagkit_dataplane::netns;
use lagkit_hash::samples::{eth, sample_frames, tcp4_frame, MAC_A, MAC_B};
use lagkit_hash::{BucketMap, FlowKey, Policy, Strong};
use lagkit_testnet::Lab;

const TC_ACT_OK: u32 = 0;
const TC_ACT_SHOT: u32 = 2;
const TC_ACT_REDIRECT: u32 = 7;
const TX: [u32; 3] = [1000, 1001, 1002];
/// The members' own MACs (balance-tlb/alb).
const MACS: [[u8; 6]; 3] = [
    [2, 0, 0, 0, 0, 0xa0],
    [2, 0, 0, 0, 0, 0xa1],
    [2, 0, 0, 0, 0, 0xa2],
];

fn plan(spread: Spread<'_>) -> Distribution<'_> {
    Distribution {
        spread,
        tx: &TX,
        rx: &[],
        logical: 0,
        tx_ids: &[],
        rx_ids: &[],
        faults: false,
    }
}

/// balance-tlb (or -alb) over `macs`, member 1 active, the bond's MAC
/// `MAC_A` (the sample frames' source).
fn tlb<'a>(policy: Policy, buckets: &'a BucketMap, macs: &'a [[u8; 6]], alb: bool) -> Spread<'a> {
    Spread::Hash {
        policy,
        buckets,
        tlb: Some(Tlb {
            active: 1,
            macs,
            bond_mac: MAC_A,
            alb,
        }),
        bucket_bytes: false,
    }
}

fn members(dp: &Datapath, runs: usize) -> Vec<usize> {
    let frame = tcp4_frame();
    (0..runs)
        .map(|_| dp.test_run(&frame).unwrap().member.expect("a member"))
        .collect()
}

#[test]
fn active_backup_sends_everything_on_the_active_member() {
    let Some(mut dp) = load("active_backup_sends_everything_on_the_active_member") else {
        return;
    };
    dp.configure(&plan(Spread::Active(1))).unwrap();
    for f in sample_frames() {
        let c = dp.test_run(&f).unwrap();
        assert_eq!(
            (c.member, c.ifindex, c.verdict),
            (Some(1), 1001, TC_ACT_REDIRECT)
        );
    }
    assert!(dp.configure(&plan(Spread::Active(3))).is_err());
}

#[test]
fn round_robin_takes_turns_and_goes_on_across_plans() {
    let Some(mut dp) = load("round_robin_takes_turns_and_goes_on_across_plans") else {
        return;
    };
    let rr = |packets_per_member| plan(Spread::RoundRobin { packets_per_member });
    dp.configure(&rr(2)).unwrap();
    assert_eq!(members(&dp, 7), [0, 0, 1, 1, 2, 2, 0]);
    // A new plan keeps the rotation's place (frame 7 of it).
    dp.configure(&rr(2)).unwrap();
    assert_eq!(members(&dp, 5), [0, 1, 1, 2, 2]);
    // packets_per_member 0: each frame on a member at random.
    dp.configure(&rr(0)).unwrap();
    let mut seen = [0; 3];
    for m in members(&dp, 300) {
        seen[m] += 1;
    }
    assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
}

#[test]
fn tlb_gives_frames_on_other_members_their_own_source_mac() {
    let Some(mut dp) = load("tlb_gives_frames_on_other_members_their_own_source_mac") else {
        return;
    };
    let buckets = BucketMap::new(3).unwrap();
    let policy = Policy::Strong(Strong::new(3));
    dp.configure(&plan(tlb(policy, &buckets, &MACS, false)))
        .unwrap();
    let mut on = [0; 3];
    for port in 1000..1060u16 {
        let mut frame = tcp4_frame();
        frame[34..36].copy_from_slice(&port.to_be_bytes());
        let member = policy
            .select_in(&FlowKey::from_frame(&frame), &buckets)
            .unwrap();
        let (c, out) = dp.test_run_rewrite(&frame).unwrap();
        assert_eq!(c.member, Some(member));
        let mut want = frame.clone();
        if member != 1 {
            want[6..12].copy_from_slice(&MACS[member]);
        }
        assert_eq!(out, want, "member {member}");
        on[member] += 1;
        // A frame from another source (a bridged guest) keeps its MAC.
        let mut guest = frame.clone();
        guest[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x99]);
        assert_eq!(dp.test_run_rewrite(&guest).unwrap().1, guest);
    }
    assert!(on.iter().all(|&n| n > 0), "{on:?}");
    // Broadcasts and multicasts leave by the active member, unchanged.
    for dst in [[0xff; 6], [0x01, 0x00, 0x5e, 0, 0, 1]] {
        let mut frame = tcp4_frame();
        frame[..6].copy_from_slice(&dst);
        let (c, out) = dp.test_run_rewrite(&frame).unwrap();
        assert_eq!((c.member, out), (Some(1), frame));
    }
}

#[test]
fn bytes_are_counted_per_bucket_when_asked() {
    let Some(mut dp) = load("bytes_are_counted_per_bucket_when_asked") else {
        return;
    };
    let buckets = BucketMap::new(3).unwrap();
    let policy = Policy::Strong(Strong::new(9));
    let hash = |bucket_bytes| Spread::Hash {
        policy,
        buckets: &buckets,
        tlb: None,
        bucket_bytes,
    };
    dp.configure(&plan(hash(false))).unwrap();
    for f in sample_frames() {
        dp.test_run(&f).unwrap();
    }
    assert_eq!(dp.bucket_bytes().unwrap(), [0; 256]);
    dp.configure(&plan(hash(true))).unwrap();
    let mut want = [0u64; 256];
    for f in sample_frames().iter().chain(sample_frames().iter()) {
        let b = policy.bucket(&FlowKey::from_frame(f)).unwrap();
        want[usize::from(b)] += f.len() as u64;
        dp.test_run(f).unwrap();
    }
    assert_eq!(dp.bucket_bytes().unwrap(), want);
    // Each bucket that sent has a last-seen time, on the clock the
    // control thread reads (CLOCK_MONOTONIC); the others have none.
    // (The coarse clock lags the fine one by at most a tick.)
    let now = lagkit_dataplane::coarse_now_ns() + 20_000_000;
    for (b, l) in dp.bucket_load().unwrap().iter().enumerate() {
        if want[b] == 0 {
            assert_eq!(l.last_ns, 0, "bucket {b}");
        } else {
            assert!(
                l.last_ns > 0 && l.last_ns <= now && now - l.last_ns < 60_000_000_000,
                "bucket {b}: {l:?}"
            );
        }
    }
}

#[test]
fn ingress_delivers_frames_of_receiving_members_only() {
    let Some(mut dp) = load("ingress_delivers_frames_of_receiving_members_only") else {
        return;
    };
    // Interface 1 (loopback) stands for a member; under BPF_PROG_TEST_RUN a
    // redirect is only a verdict, nothing moves.
    let frame = tcp4_frame();
    let mut lacpdu = frame.clone();
    lacpdu[12..15].copy_from_slice(&[0x88, 0x09, 0x01]);
    assert_eq!(
        dp.test_run_ingress(&frame, 1).unwrap(),
        TC_ACT_SHOT,
        "no plan"
    );
    assert_eq!(dp.test_run_ingress(&lacpdu, 1).unwrap(), TC_ACT_OK);
    let with_rx = |rx| Distribution {
        spread: Spread::Active(0),
        tx: &TX,
        rx,
        logical: 77,
        tx_ids: &[],
        rx_ids: &[],
        faults: false,
    };
    dp.configure(&with_rx(&[5, 1])).unwrap();
    assert_eq!(dp.test_run_ingress(&frame, 1).unwrap(), TC_ACT_REDIRECT);
    assert_eq!(dp.test_run_ingress(&lacpdu, 1).unwrap(), TC_ACT_OK);
    dp.configure(&with_rx(&[5])).unwrap();
    assert_eq!(dp.test_run_ingress(&frame, 1).unwrap(), TC_ACT_SHOT);
    let c = dp.counters().unwrap();
    assert_eq!((c.rx[0].packets, c.rx[1].packets), (0, 1));
    assert_eq!(c.rx_dropped.packets, 2);
}

#[test]
fn broadcast_sends_a_copy_on_every_member() {
    let test = "broadcast_sends_a_copy_on_every_member";
    let Some(mut lab) = Lab::new(test) else {
        return;
    };
    // The copies are really sent: to loopback, in a namespace of our own.
    let ns = lab.netns();
    let (choice, counters) = netns::run_in(&ns, || {
        let mut dp = load(test).expect("root");
        let lo = [1, 1, 1];
        dp.configure(&Distribution {
            spread: Spread::Broadcast { dedup: false },
            tx: &lo,
            rx: &[],
            logical: 0,
            tx_ids: &[],
            rx_ids: &[],
            faults: false,
        })
        .unwrap();
        let choice = dp.test_run(&tcp4_frame()).unwrap();
        (choice, dp.counters().unwrap())
    })
    .unwrap();
    assert_eq!((choice.member, choice.verdict), (Some(2), TC_ACT_REDIRECT));
    let sent: Vec<u64> = counters.tx[..3].iter().map(|c| c.packets).collect();
    assert_eq!((sent, counters.tx_dropped.packets), (vec![1, 1, 1], 0));
}

/// Runs `f` with freshly loaded programs in a namespace of our own that
/// holds two interfaces (a veth pair) standing for two members under
/// BPF_PROG_TEST_RUN (nothing is sent), given by index.
fn with_two_members(test: &str, f: impl FnOnce(&mut Datapath, [u32; 2]) + Send) {
    let Some(mut lab) = Lab::new(test) else {
        return;
    };
    let ns = lab.netns();
    lab.sh(&[
        "ip", "-n", &ns, "link", "add", "x0", "type", "veth", "peer", "name", "x1",
    ]);
    netns::run_in(&ns, || {
        let members = ["x0", "x1"].map(|m| nix::net::if_::if_nametoindex(m).unwrap());
        f(&mut load(test).expect("root"), members);
    })
    .unwrap();
}

/// Publishes balance-tlb (or -alb) over two members that both receive;
/// returns their MACs.
fn tlb_over(dp: &mut Datapath, members: [u32; 2], alb: bool) -> [[u8; 6]; 2] {
    let buckets = BucketMap::new(2).unwrap();
    let macs = [[2, 0, 0, 0, 0, 0xa0], [2, 0, 0, 0, 0, 0xa1]];
    dp.configure(&Distribution {
        spread: tlb(Policy::Layer2, &buckets, &macs, alb),
        tx: &members,
        rx: &members,
        logical: 77,
        tx_ids: &[],
        rx_ids: &[],
        faults: false,
    })
    .unwrap();
    macs
}

#[test]
fn tlb_takes_group_frames_from_the_active_member_only() {
    let test = "tlb_takes_group_frames_from_the_active_member_only";
    with_two_members(test, |dp, [x0, x1]| {
        tlb_over(dp, [x0, x1], false);
        let unicast = tcp4_frame();
        let mut broadcast = unicast.clone();
        broadcast[..6].copy_from_slice(&[0xff; 6]);
        let verdicts = [
            dp.test_run_ingress(&unicast, x0).unwrap(),
            dp.test_run_ingress(&unicast, x1).unwrap(),
            dp.test_run_ingress(&broadcast, x0).unwrap(),
            dp.test_run_ingress(&broadcast, x1).unwrap(),
        ];
        use TC_ACT_REDIRECT as UP;
        assert_eq!(verdicts, [UP, UP, TC_ACT_SHOT, UP]);
    });
}

#[test]
fn broadcast_takes_the_first_copy_of_a_frame_up() {
    let test = "broadcast_takes_the_first_copy_of_a_frame_up";
    with_two_members(test, |dp, [x0, x1]| {
        let members = [x0, x1];
        let with = |dedup| Distribution {
            spread: Spread::Broadcast { dedup },
            tx: &members,
            rx: &members,
            logical: 77,
            tx_ids: &[],
            rx_ids: &[],
            faults: false,
        };
        let a = tcp4_frame();
        let mut b = a.clone();
        b[18..20].copy_from_slice(&[0x43, 0x21]); // another IP ID
        dp.configure(&with(true)).unwrap();
        let verdicts = [
            dp.test_run_ingress(&a, x0).unwrap(), // first copy: up
            dp.test_run_ingress(&a, x1).unwrap(), // its copy on the other member
            dp.test_run_ingress(&a, x0).unwrap(), // again on the first: a resend
            dp.test_run_ingress(&b, x1).unwrap(), // another frame
        ];
        use TC_ACT_REDIRECT as UP;
        assert_eq!(verdicts, [UP, TC_ACT_SHOT, UP, UP]);
        let c = dp.counters().unwrap();
        assert_eq!(
            (c.rx_copies.packets, c.rx[0].packets, c.rx[1].packets),
            (1, 2, 1)
        );
        // Without dedup every copy goes up.
        dp.configure(&with(false)).unwrap();
        assert_eq!(dp.test_run_ingress(&a, x1).unwrap(), UP);
    });
}

/// An Ethernet/IPv4 ARP packet.
fn arp(op: u16, sender: ([u8; 6], [u8; 4]), target: ([u8; 6], [u8; 4])) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4];
    a.extend_from_slice(&op.to_be_bytes());
    for (mac, ip) in [sender, target] {
        a.extend_from_slice(&mac);
        a.extend_from_slice(&ip);
    }
    a
}

#[test]
fn alb_answers_each_client_by_its_member() {
    let Some(mut dp) = load("alb_answers_each_client_by_its_member") else {
        return;
    };
    let buckets = BucketMap::new(3).unwrap();
    dp.configure(&plan(tlb(Policy::Layer2, &buckets, &MACS, true)))
        .unwrap();
    let client = [10, 0, 0, 9];
    let reply = eth(
        MAC_B,
        MAC_A,
        0x0806,
        &arp(2, (MAC_A, [10, 0, 0, 1]), (MAC_B, client)),
    );
    let by_address = (u32::from_be_bytes(client) % 3) as usize; // alb_member_for
    let advertised = |member: usize| {
        let mut f = reply.clone();
        if member != 1 {
            f[6..12].copy_from_slice(&MACS[member]);
            f[22..28].copy_from_slice(&MACS[member]);
        }
        f
    };
    let check = |dp: &Datapath, member: usize| {
        let (c, out) = dp.test_run_rewrite(&reply).unwrap();
        assert_eq!((c.member, out), (Some(member), advertised(member)));
    };
    check(&dp, by_address);
    dp.set_alb_client(client.into(), TX[2]).unwrap();
    check(&dp, 2);
    dp.set_alb_client(client.into(), TX[0]).unwrap();
    check(&dp, 0);
    // A member no longer in the plan: as if unknown.
    dp.set_alb_client(client.into(), 5555).unwrap();
    check(&dp, by_address);
    dp.remove_alb_client(client.into()).unwrap();
    dp.remove_alb_client(client.into()).unwrap();
    check(&dp, by_address);
    // A request (or a reply not from the bond) leaves by the active member.
    let request = eth(
        [0xff; 6],
        MAC_A,
        0x0806,
        &arp(1, (MAC_A, [10, 0, 0, 1]), ([0; 6], client)),
    );
    let (c, out) = dp.test_run_rewrite(&request).unwrap();
    assert_eq!((c.member, out), (Some(1), request));
}

#[test]
fn alb_takes_frames_to_member_macs_up_as_the_bonds() {
    let test = "alb_takes_frames_to_member_macs_up_as_the_bonds";
    with_two_members(test, |dp, [x0, x1]| {
        let macs = tlb_over(dp, [x0, x1], true);
        let mut to_member = tcp4_frame();
        to_member[..6].copy_from_slice(&macs[0]);
        let mut to_bond = to_member.clone();
        to_bond[..6].copy_from_slice(&MAC_A);
        // Sent to member 0's MAC, arriving on member 1 (no switch between).
        let (verdict, out) = dp.test_run_ingress_rewrite(&to_member, x1).unwrap();
        assert_eq!((verdict, out), (TC_ACT_REDIRECT, to_bond));
        let other = tcp4_frame();
        assert_eq!(dp.test_run_ingress_rewrite(&other, x0).unwrap().1, other);
    });
}

#[test]
fn counters_follow_member_ids_and_injected_loss_is_counted() {
    let Some(mut dp) = load("counters_follow_member_ids_and_injected_loss_is_counted") else {
        return;
    };
    // Active-backup on the second position, which a bond calls member 5.
    dp.configure(&Distribution {
        tx_ids: &[4, 5, 6],
        ..plan(Spread::Active(1))
    })
    .unwrap();
    for _ in 0..3 {
        assert_eq!(dp.test_run(&tcp4_frame()).unwrap().member, Some(1));
    }
    let c = dp.counters().unwrap();
    let sent: Vec<u64> = c.tx[..7].iter().map(|c| c.packets).collect();
    assert_eq!(sent, [0, 0, 0, 0, 0, 3, 0]);
    // Every frame on the active member's interface is lost, and counted as
    // injected loss rather than as sent; without `faults` the table is not
    // consulted.
    dp.set_fault_loss(TX[1], 1.0).unwrap();
    assert_eq!(dp.test_run(&tcp4_frame()).unwrap().verdict, TC_ACT_REDIRECT);
    dp.configure(&Distribution {
        tx_ids: &[4, 5, 6],
        faults: true,
        ..plan(Spread::Active(1))
    })
    .unwrap();
    assert_eq!(dp.test_run(&tcp4_frame()).unwrap().verdict, TC_ACT_SHOT);
    let c = dp.counters().unwrap();
    assert_eq!((c.tx[5].packets, c.tx_faults.packets), (4, 1));
    // Ids past the counters are refused.
    let err = dp
        .configure(&Distribution {
            tx_ids: &[0, 1, 256],
            ..plan(Spread::Active(1))
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("256") || err.to_string().contains("257"),
        "{err}"
    );
}
