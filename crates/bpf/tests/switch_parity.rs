//! The switch's BPF program decides as `lagkit_switch::Bridge` does.
//!
//! One switch, configured alike in both: access ports in two VLANs, a
//! trunk with the native VLAN 1 and one with native 99 and three VLANs, a
//! small-MTU access port, a shut port, a port-channel of two bundled
//! trunks (and a third member not bundled), under Cisco's src-dst-ip.
//! A seeded stream of frames (`LAGKIT_SWITCH_PARITY_FRAMES`, default
//! 4,000) enters at random ports: unicast between a pool of stations,
//! broadcast, multicast, slow-protocol and Cisco-multicast control
//! frames, IEEE link-local ones, untagged, priority-tagged and tagged in
//! allowed and other VLANs, tagged runts and giants. Each goes through
//! `Bridge::receive` and, under BPF_PROG_TEST_RUN in a namespace whose
//! veth ends stand for the ports (the copies
//! it floods go to their peers), through the program; the verdict,
//! the VLAN, flooding, each copy's port and tag must agree frame by frame
//! (addresses are learned on the way, in both), and at the end every
//! port's counters, the address table and its moves.

use lagkit_bpf::switch::{Decision, PortVlans, SwitchPath, SwitchPlan, SwitchPort, CHANNEL};
use lagkit_dataplane::netns;
use lagkit_hash::samples::{eth, ipv4, tcp, udp};
use lagkit_hash::Policy;
use lagkit_switch::PortMode;
use lagkit_switch::{Bridge, ChannelId, Distribution, DropReason, Logical, PortConfig, PortId};
use lagkit_switch::{Verdict, VlanSet};
use lagkit_testnet::Lab;

/// (mode, mtu, enabled) of each port; ports 6, 7 and 8 are channel 1's.
fn ports() -> Vec<(PortMode, u32, bool)> {
    let set = |v: &[u16]| {
        let mut s = VlanSet::none();
        for &x in v {
            s.insert(x);
        }
        s
    };
    let all = VlanSet::all();
    vec![
        (PortMode::Access { vlan: 1 }, 1500, true),
        (PortMode::Access { vlan: 10 }, 1500, true),
        (
            PortMode::Trunk {
                native: 1,
                allowed: set(&(1..=20).collect::<Vec<_>>()),
            },
            1500,
            true,
        ),
        (
            PortMode::Trunk {
                native: 99,
                allowed: set(&[10, 20, 30]),
            },
            1500,
            true,
        ),
        (PortMode::Access { vlan: 10 }, 1000, true),
        (PortMode::Access { vlan: 1 }, 1500, false),
        (
            PortMode::Trunk {
                native: 1,
                allowed: all.clone(),
            },
            1500,
            true,
        ),
        (
            PortMode::Trunk {
                native: 1,
                allowed: all.clone(),
            },
            1500,
            true,
        ),
        (
            PortMode::Trunk {
                native: 1,
                allowed: all,
            },
            1500,
            true,
        ),
    ]
}

/// The stream's generator, seeded: the same frames run after run.
struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.u64(..n)
    }
}

fn station(i: u8) -> [u8; 6] {
    [0x02, 0x00, 0x00, 0x00, 0x01, i]
}

/// One frame of the stream.
fn frame(r: &mut Rng) -> Vec<u8> {
    let dst = match r.below(20) {
        0 => [0xff; 6],
        1 => [0x01, 0x00, 0x5e, 0x00, 0x00, 0x01],
        2 => [0x01, 0x80, 0xc2, 0x00, 0x00, 0x02],
        3 => [0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc],
        4 => [
            0x01,
            0x80,
            0xc2,
            0x00,
            0x00,
            [0x00, 0x0e, 0x0f, 0x10][r.below(4) as usize],
        ],
        _ => station(r.below(12) as u8),
    };
    let src = match r.below(30) {
        0 => [0x01, 0x00, 0x5e, 0x00, 0x00, 0x09],
        _ => station(r.below(12) as u8),
    };
    let ip = |r: &mut Rng| [10, 0, r.below(4) as u8, r.below(8) as u8];
    let body = match r.below(10) {
        // About the small port's MTU (1000) and the others' (1500).
        0 => vec![0u8; [960, 1460][r.below(2) as usize] + r.below(80) as usize],
        1 => udp(r.below(65535) as u16, 53, &[7; 20]),
        _ => tcp(r.below(65535) as u16, 80),
    };
    let proto = if body.len() == 8 + 20 { 17 } else { 6 };
    let mut f = eth(dst, src, 0x0800, &ipv4(ip(r), ip(r), proto, 0, &body));
    match r.below(8) {
        0..=3 => {}
        k => {
            let vid: u16 = [0, 1, 10, 20, 30, 99, 100, 4094][r.below(8) as usize];
            let pcp = (r.below(8) as u16) << 13;
            let tci = pcp | vid;
            let tag = [0x81, 0x00, (tci >> 8) as u8, tci as u8];
            f.splice(12..12, tag);
            if k == 7 && r.below(4) == 0 {
                // A tagged runt: 14 to 17 bytes (a frame shorter than an
                // Ethernet header never reaches tc, nor a test run).
                f.truncate(14 + r.below(4) as usize);
            }
        }
    }
    f
}

fn bridge() -> Bridge {
    bridge_with(lagkit_switch::bridge::FDB_LIMIT)
}

fn bridge_with(table: usize) -> Bridge {
    let mut b = Bridge::with_fdb_limit("src-dst-ip".parse::<Policy>().unwrap(), table);
    for (i, (mode, mtu, enabled)) in ports().into_iter().enumerate() {
        b.add_port(PortConfig {
            name: format!("p{i}"),
            mode,
            mtu,
            enabled,
        });
    }
    let members = vec![PortId(6), PortId(7), PortId(8)];
    b.add_channel(ChannelId(1), members, Distribution::Fixed)
        .unwrap();
    b.set_bundled(PortId(6), true);
    b.set_bundled(PortId(7), true);
    b
}

fn plan(b: &Bridge, ifindex: &[u32]) -> SwitchPlan {
    let ch = b.channel(ChannelId(1)).unwrap();
    let ports = ports()
        .into_iter()
        .enumerate()
        .map(|(i, (mode, mtu, enabled))| SwitchPort {
            ifindex: ifindex[i],
            mtu,
            vlans: match mode {
                PortMode::Access { vlan } => PortVlans::Access(vlan),
                PortMode::Trunk { native, allowed } => PortVlans::Trunk {
                    native,
                    allowed: (1..4095).filter(|&v| allowed.contains(v)).collect(),
                },
            },
            enabled,
            channel: (i >= 6).then_some(0),
            standalone: b.is_standalone(PortId(i)),
            bundled: ch.is_bundled(PortId(i)),
        })
        .collect();
    SwitchPlan {
        ports,
        channels: vec![ch.buckets().map(|p| p.map(|p| p.0))],
        policy: b.policy(),
        aging_ns: 300_000_000_000,
        trace: true,
    }
}

/// What the program should decide for `f`, as the bridge did: each copy's
/// tag as `Bridge::frame_for` writes it (the priority bits kept).
fn expected(v: &Verdict, f: &[u8]) -> Decision {
    match v {
        Verdict::Control => Decision::Control,
        Verdict::Drop(r) => Decision::Drop(DropReason::ALL.iter().position(|x| x == r).unwrap()),
        Verdict::Forward {
            vlan,
            egress,
            flooded,
        } => Decision::Forward {
            vlan: *vlan,
            flooded: *flooded,
            egress: egress
                .iter()
                .map(|e| {
                    let out = Bridge::frame_for(f, e.tag);
                    let tci = e.tag.map(|_| u16::from_be_bytes([out[14], out[15]]));
                    (e.port.0, tci)
                })
                .collect(),
        },
    }
}

/// A namespace of our own with a veth end per port (p0, p1...), the copies
/// the program sends going to their peers.
fn ports_in_netns(test: &str) -> Option<(Lab, String)> {
    let mut lab = Lab::new(test)?;
    let ns = lab.netns();
    for i in 0..ports().len() {
        let (p, q) = (format!("p{i}"), format!("q{i}"));
        lab.sh(&[
            "ip", "-n", &ns, "link", "add", &p, "type", "veth", "peer", "name", &q,
        ]);
        lab.sh(&["ip", "-n", &ns, "link", "set", &p, "up"]);
        lab.sh(&["ip", "-n", &ns, "link", "set", &q, "up"]);
    }
    Some((lab, ns))
}

fn ifindexes() -> Vec<u32> {
    (0..ports().len())
        .map(|i| nix::net::if_::if_nametoindex(format!("p{i}").as_str()).unwrap())
        .collect()
}

/// A table of 4 addresses: the fifth station is refused, in both, and
/// frames to it flood; the refusals are counted on its port.
#[test]
fn a_full_table_refuses_new_addresses_and_their_frames_flood() {
    let Some((_lab, ns)) = ports_in_netns("switch_table_full") else {
        return;
    };
    netns::run_in(&ns, || {
        let ifindex = ifindexes();
        let mut b = bridge_with(4);
        let sw = SwitchPath::load_with_table(4).unwrap_or_else(|e| panic!("{e}"));
        sw.publish(&plan(&b, &ifindex)).unwrap();
        let udp4 = |dst, src| {
            let ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, 0, &udp(1, 2, b"x"));
            eth(dst, src, 0x0800, &ip)
        };
        // Stations 0..5 speak from port 0 (the fifth is refused), then
        // station 9 (refused too) sends to each from port 2 (a trunk whose
        // native VLAN is port 0's).
        for i in 0..5 {
            let f = udp4([0xff; 6], station(i));
            let want = expected(&b.receive(PortId(0), &f, 0), &f);
            assert_eq!(sw.test_run(&f, ifindex[0]).unwrap(), want);
        }
        for i in 0..5 {
            let f = udp4(station(i), station(9));
            let want = expected(&b.receive(PortId(2), &f, 0), &f);
            let got = sw.test_run(&f, ifindex[2]).unwrap();
            assert_eq!(got, want, "to station {i}");
            let flooded = matches!(got, Decision::Forward { flooded: true, .. });
            assert_eq!(flooded, i == 4, "only the refused station's frames flood");
        }
        for (port, refused) in [(0, 1), (2, 5)] {
            let want = b.counters(PortId(port)).unwrap().learn_full;
            assert_eq!(
                (sw.counters(port).unwrap().learn_full, want),
                (refused, refused)
            );
        }
        assert_eq!(sw.addresses().unwrap().len(), 4);
    })
    .unwrap();
}

/// A port allowed 5 new addresses a second: of 10 new stations sending
/// at once, 5 are learned and 5 refused and counted, in both, and frames
/// to the refused ones flood. Another port learns as before.
#[test]
fn a_port_past_its_learning_rate_is_refused_new_addresses_in_both() {
    let Some((_lab, ns)) = ports_in_netns("switch_learn_rate") else {
        return;
    };
    netns::run_in(&ns, || {
        let ifindex = ifindexes();
        let mut b = bridge();
        b.set_learn_rate(PortId(0), 5);
        let mut sw = SwitchPath::load().unwrap_or_else(|e| panic!("{e}"));
        sw.set_learn_rate(0, 5).unwrap();
        sw.publish(&plan(&b, &ifindex)).unwrap();
        let udp4 = |dst, src| {
            let ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, 0, &udp(1, 2, b"x"));
            eth(dst, src, 0x0800, &ip)
        };
        for i in 0..10 {
            let f = udp4([0xff; 6], station(i));
            let want = expected(&b.receive(PortId(0), &f, 0), &f);
            assert_eq!(sw.test_run(&f, ifindex[0]).unwrap(), want);
        }
        let mut flooded = 0;
        for i in 0..10 {
            let f = udp4(station(i), station(11));
            let want = expected(&b.receive(PortId(2), &f, 0), &f);
            let got = sw.test_run(&f, ifindex[2]).unwrap();
            assert_eq!(got, want, "to station {i}");
            flooded += usize::from(matches!(got, Decision::Forward { flooded: true, .. }));
        }
        assert_eq!(flooded, 5, "frames to the 5 refused stations flood");
        let c = sw.counters(0).unwrap();
        let w = b.counters(PortId(0)).unwrap();
        assert_eq!((c.learn_limited, w.learn_limited), (5, 5));
        assert_eq!(sw.counters(2).unwrap().learn_limited, 0);
        assert_eq!(
            sw.addresses().unwrap().len(),
            6,
            "5 from port 0, 1 from port 2"
        );
    })
    .unwrap();
}

#[test]
fn the_program_decides_and_counts_as_the_bridge() {
    let Some((_lab, ns)) = ports_in_netns("switch_parity") else {
        return;
    };
    let n = ports().len();
    let frames: u64 = std::env::var("LAGKIT_SWITCH_PARITY_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    netns::run_in(&ns, || {
        let ifindex = ifindexes();
        let mut b = bridge();
        let sw = SwitchPath::load().unwrap_or_else(|e| panic!("{e}"));
        sw.publish(&plan(&b, &ifindex)).unwrap();
        let mut r = Rng(fastrand::Rng::with_seed(0x005e_ed0f_5a1c));
        let mut kinds = [0usize; 3];
        // Drops by reason; copies sent known and flooded, and through the
        // channel; tags added, kept and removed.
        let mut drops = [0usize; 10];
        let (mut known, mut flooded, mut via_channel) = (0, 0, 0);
        let mut tags = [0usize; 3];
        for k in 0..frames {
            let f = frame(&mut r);
            let at = r.below(n as u64) as usize;
            let want = expected(&b.receive(PortId(at), &f, 0), &f);
            let got = sw.test_run(&f, ifindex[at]).unwrap();
            assert_eq!(got, want, "frame {k} on port {at}: {f:02x?}");
            let tagged_in = f.len() >= 16 && f[12..14] == [0x81, 0x00] && f[15] | f[14] & 0x0f != 0;
            match &want {
                Decision::Control => kinds[0] += 1,
                Decision::Forward {
                    flooded: fl,
                    egress,
                    ..
                } => {
                    kinds[1] += 1;
                    *if *fl { &mut flooded } else { &mut known } += 1;
                    via_channel += egress.iter().filter(|e| e.0 >= 6).count();
                    for e in egress {
                        tags[match (tagged_in, e.1.is_some()) {
                            (false, true) => 0,
                            (true, true) => 1,
                            (true, false) => 2,
                            (false, false) => continue,
                        }] += 1;
                    }
                }
                Decision::Drop(r) => {
                    kinds[2] += 1;
                    drops[*r] += 1;
                }
            }
        }
        for i in 0..n {
            let want = b.counters(PortId(i)).unwrap();
            let got = sw.counters(i).unwrap();
            let pair = |c: &lagkit_switch::PortCounters| {
                (
                    [c.rx_frames, c.rx_bytes, c.tx_frames, c.tx_bytes],
                    [c.control, c.flooded, c.tx_too_big, c.learn_full, c.learn_limited],
                    [c.rx_cast.ucast, c.rx_cast.mcast, c.rx_cast.bcast],
                    [c.tx_cast.ucast, c.tx_cast.mcast, c.tx_cast.bcast],
                    c.drops,
                )
            };
            let mine = (
                [got.rx_frames, got.rx_bytes, got.tx_frames, got.tx_bytes],
                [got.control, got.flooded, got.tx_too_big, got.learn_full, got.learn_limited],
                [got.rx_ucast, got.rx_mcast, got.rx_bcast],
                [got.tx_ucast, got.tx_mcast, got.tx_bcast],
                got.drops,
            );
            assert_eq!(mine, pair(want), "port {i}'s counters");
        }
        // The address table: the same entries, each in the same place, and
        // the same moves.
        let mut table: Vec<((u16, [u8; 6]), u32)> = sw.addresses().unwrap();
        table.sort();
        let mut want: Vec<((u16, [u8; 6]), u32)> = b
            .fdb()
            .rows(0)
            .iter()
            .map(|r| {
                let at = match r.at {
                    Logical::Port(p) => p.0 as u32,
                    Logical::Channel(_) => CHANNEL,
                };
                ((r.vlan, r.mac), at)
            })
            .collect();
        want.sort();
        assert_eq!(table, want, "the address tables");
        let moves = sw.moves().unwrap();
        assert_eq!(moves, b.fdb().moves(), "moves");
        assert!(moves > 0 && table.len() > 12, "{moves} moves, {} addresses", table.len());
        eprintln!(
            "{frames} frames agree: {kinds:?} control/forwarded/dropped; drops by reason {drops:?}; \
             {known} sent to a learned port, {flooded} flooded, {via_channel} copies through the channel; \
             tags added/kept/removed {tags:?}; {} addresses learned, {moves} moves", table.len()
        );
        // The stream reaches every decision but storm control's (which
        // the kernel engine leaves to the userspace one).
        assert!(kinds.iter().all(|&k| k > 0), "{kinds:?}");
        assert!(drops[..9].iter().all(|&d| d > 0), "{drops:?}");
        assert!(known > 0 && flooded > 0 && via_channel > 0);
        assert!(tags.iter().all(|&t| t > 0), "{tags:?}");
    })
    .unwrap();
}

/// Plans change whole under traffic: while one thread publishes, by turns,
/// a plan with every port an access port in VLAN 1 and one with every port
/// in VLAN 2, another sends broadcasts in at port 0. Each must flood to the
/// same six other ports (port 5 is shut) in one VLAN or the other: a frame
/// classified by one plan and flooded by the other would find no port
/// carrying its VLAN.
#[test]
fn a_frame_meets_one_whole_plan_while_plans_change() {
    let Some((_lab, ns)) = ports_in_netns("switch_plan_swap") else {
        return;
    };
    netns::run_in(&ns, || {
        let ifindex = ifindexes();
        let sw = SwitchPath::load().unwrap_or_else(|e| panic!("{e}"));
        let all_in = |vlan: u16| SwitchPlan {
            ports: (0..ports().len())
                .map(|i| SwitchPort {
                    ifindex: ifindex[i],
                    mtu: 1500,
                    vlans: PortVlans::Access(vlan),
                    enabled: i != 5,
                    channel: None,
                    standalone: false,
                    bundled: false,
                })
                .collect(),
            channels: Vec::new(),
            policy: "src-dst-ip".parse().unwrap(),
            aging_ns: 300_000_000_000,
            trace: true,
        };
        let (one, two) = (all_in(1), all_in(2));
        sw.publish(&one).unwrap();
        let frame = eth(
            [0xff; 6],
            station(1),
            0x0800,
            &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 6, 0, &tcp(1, 2)),
        );
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (mut seen, mut swaps, mut mixed) = ([0usize; 2], 0usize, None);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    sw.publish(if swaps % 2 == 0 { &two } else { &one })
                        .unwrap();
                    swaps += 1;
                }
            });
            let others: Vec<(usize, Option<u16>)> =
                [1, 2, 3, 4, 6, 7, 8].iter().map(|&p| (p, None)).collect();
            // Never panic here: the publisher would spin on.
            for _ in 0..20_000 {
                match sw.test_run(&frame, ifindex[0]) {
                    Ok(Decision::Forward {
                        vlan,
                        flooded: true,
                        egress,
                    }) if egress == others && (1..=2).contains(&vlan) => {
                        seen[usize::from(vlan) - 1] += 1
                    }
                    d => {
                        mixed = Some(format!("{d:?}"));
                        break;
                    }
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(mixed, None, "a frame met two plans");
        eprintln!("{seen:?} frames in VLAN 1 and 2 over {swaps} plan changes");
        assert!(
            seen[0] > 0 && seen[1] > 0 && swaps > 100,
            "{seen:?} {swaps}"
        );
    })
    .unwrap();
}
