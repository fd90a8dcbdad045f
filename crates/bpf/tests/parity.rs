//! The BPF egress program picks exactly the member `lagkit_hash` picks.
//!
//! Every policy (Linux, AIX, Cisco, HP, `strong` seeded and symmetric, with a
//! plain and a reshuffled bucket map), over several member counts, on: the
//! hash crate's sample frames and every prefix of them (truncation at each
//! byte), hand-built frames for the cases that decide a hash (VLAN tags,
//! IPv6 extension headers, fragments, ICMP, tunnels, non-IP), and a seeded
//! stream of mutated and random frames (`LAGKIT_BPF_PARITY_ROUNDS` of them,
//! default 6,000, from `LAGKIT_BPF_PARITY_SEED`, for a longer or another
//! search). The program runs under BPF_PROG_TEST_RUN and leaves its member,
//! hash and bucket in the context; they must equal `Policy::select_in`,
//! `Policy::hash` and `Policy::bucket`; with balance-tlb/alb's rewrite on
//! too (as with `tlb_dynamic_lb = false`), for unicast frames.

use std::net::Ipv6Addr;

mod common;

use common::load;
use lagkit_bpf::{Choice, Datapath, Distribution, Spread, Tlb};
use lagkit_hash::samples::*;
use lagkit_hash::{BucketMap, FlowKey, Policy, Strong};

const TC_ACT_SHOT: u32 = 2;
const TC_ACT_REDIRECT: u32 = 7;

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// Frames for the cases that decide a hash, beyond the samples.
fn shapes() -> Vec<Vec<u8>> {
    let (a, b) = (v6("2001:db8::1"), v6("2001:db8:1::2"));
    let tcp4 = ipv4(A4, B4, 6, 0, &tcp(40000, 443));
    let udp4 = ipv4(A4, B4, 17, 0, &udp(5353, 53, b"q"));
    let tcp6 = ipv6(a, b, 6, &tcp(50000, 80));
    let udp6 = ipv6(a, b, 17, &udp(1, 2, b"x"));
    let inner = eth(
        MAC_A,
        MAC_B,
        0x0800,
        &ipv4([9, 9, 9, 9], [8, 8, 8, 8], 6, 0, &tcp(1, 2)),
    );
    let arp = [
        0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0x0a, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
    ];
    let gre = |flags: &[u8], body: &[u8]| {
        let mut g = flags.to_vec();
        g.extend_from_slice(body);
        ipv4(A4, B4, 47, 0, &g)
    };
    let ext = |next: u8, len: u8, body: &[u8]| {
        let mut e = vec![next, len, 0, 0, 0, 0, 0, 0];
        e.resize(8 * (usize::from(len) + 1), 0);
        e.extend_from_slice(body);
        e
    };
    let frag6 = |next: u8, field: u16, body: &[u8]| {
        let mut f = vec![next, 0];
        f.extend_from_slice(&field.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 9]);
        f.extend_from_slice(body);
        f
    };
    let ah = |next: u8, body: &[u8]| {
        let mut h = vec![next, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
        h.extend_from_slice(body);
        h
    };
    let mut mpls = 0x0001_41ffu32.to_be_bytes().to_vec();
    mpls.extend_from_slice(&tcp4);
    let mut macsec = vec![0x20, 0, 0, 0, 0, 1, 0x08, 0x00];
    macsec.extend_from_slice(&tcp4);
    let mut v4_options = ipv4(A4, B4, 6, 0, &[]);
    v4_options[0] = 0x46;
    v4_options[3] += 4 + 20;
    v4_options.extend_from_slice(&[1, 1, 1, 0]);
    v4_options.extend_from_slice(&tcp(7, 8));
    let mut padded = tcp4.clone();
    padded.extend_from_slice(&[0xee; 12]);
    let mut tcp6_len0 = tcp6.clone();
    // IPv6 payload length 0 (a jumbogram, or unset) means "the rest of the
    // frame"; under EtherType 0x0800 too (the version nibble decides).
    tcp6_len0[4] = 0;
    tcp6_len0[5] = 0;
    let e = |et: u16, payload: &[u8]| eth(MAC_B, MAC_A, et, payload);
    let mut frames = vec![
        // Plain, and tagged once, twice (QinQ), three and four times.
        e(0x0800, &tcp4),
        e(0x8100, &tag(0xe064, 0x0800, &tcp4)),
        e(0x8100, &tag(0x0fff, 0x86dd, &udp6)),
        e(0x88a8, &tag(10, 0x8100, &tag(20, 0x0800, &udp4))),
        e(
            0x9100,
            &tag(1, 0x8100, &tag(2, 0x88a8, &tag(3, 0x0800, &udp4))),
        ),
        e(
            0x8100,
            &tag(
                1,
                0x8100,
                &tag(2, 0x8100, &tag(3, 0x8100, &tag(4, 0x0800, &udp4))),
            ),
        ),
        e(0x0800, &udp4),
        e(0x86dd, &tcp6),
        e(0x86dd, &udp6),
        e(0x0800, &padded),
        e(0x0800, &v4_options),
        e(0x0800, &tcp6_len0),
        e(0x86dd, &tcp6_len0),
        // Fragments: first, middle, last; IPv6 fragmenting, atomic, cut.
        e(0x0800, &ipv4(A4, B4, 17, 0x2000, &udp(1, 2, b"f"))),
        e(0x0800, &ipv4(A4, B4, 17, 0x2010, b"middle")),
        e(0x0800, &ipv4(A4, B4, 6, 0x0020, b"last")),
        e(0x86dd, &ipv6(a, b, 44, &frag6(6, 0x0001, &tcp(3, 4)))),
        e(0x86dd, &ipv6(a, b, 44, &frag6(6, 0x0000, &tcp(3, 4)))),
        e(0x86dd, &ipv6(a, b, 44, &[6, 0, 0])),
        // IPv6 extension chains; hop-by-hop out of place; AH in v4 and v6.
        e(
            0x86dd,
            &ipv6(a, b, 60, &ext(43, 0, &ext(17, 1, &udp(9, 10, b"")))),
        ),
        e(0x86dd, &ipv6(a, b, 60, &ext(0, 0, &ext(6, 0, &tcp(1, 1))))),
        e(0x86dd, &ipv6(a, b, 51, &ah(6, &tcp(11, 12)))),
        e(0x0800, &ipv4(A4, B4, 51, 0, &ah(17, &udp(13, 14, b"")))),
        e(
            0x0800,
            &ipv4(A4, B4, 51, 0, &[6, 0, 0, 0, 0, 1, 0, 2, 0, 3]),
        ),
        // ICMP: echo (id 0 and not), timestamp, errors, other types; ICMPv6.
        e(0x0800, &ipv4(A4, B4, 1, 0, &icmp(8, 0, [0, 0, 0, 1], &[]))),
        e(
            0x0800,
            &ipv4(A4, B4, 1, 0, &icmp(3, 3, [0; 4], &udp4[..20])),
        ),
        // Non-IP: ARP (the dissector accepts it), MPLS, LLDP, MACsec.
        eth([0xff; 6], MAC_A, 0x0806, &arp),
        e(0x8847, &mpls),
        eth(
            [0x01, 0x80, 0xc2, 0, 0, 0x0e],
            MAC_A,
            0x88cc,
            &[2, 7, 4, 0, 0, 0, 0, 0, 1],
        ),
        e(0x88e5, &macsec),
        e(0x8100, &tag(5, 0x88e5, &macsec)),
        // Tunnels: GRE with key and sequence, GRE-TEB, GRE carrying ARP,
        // PPTP-style GRE v1, IP-in-IP, 6in4, VXLAN, VXLAN in GRE, nesting.
        e(
            0x0800,
            &gre(&[0x30, 0, 0x08, 0, 0, 0, 0, 1, 0, 0, 0, 2], &udp4),
        ),
        e(0x0800, &gre(&[0x00, 0, 0x65, 0x58], &inner)),
        e(0x0800, &gre(&[0x00, 0, 0x08, 0x06], &arp)),
        e(
            0x0800,
            &gre(&[0x00, 0, 0x65, 0x58], &eth(MAC_A, MAC_B, 0x0806, &arp)),
        ),
        e(0x0800, &gre(&[0x00, 0, 0x88, 0xcc], &arp)),
        e(0x0800, &gre(&[0x30, 1, 0x88, 0x0b, 0, 0, 0, 0], &udp4)),
        e(0x0800, &gre(&[0x20, 0, 0x08, 0x00, 0, 0], &[])),
        e(0x0800, &ipv4(A4, B4, 4, 0, &udp4)),
        e(0x0800, &ipv4(A4, B4, 41, 0, &tcp6)),
        e(0x86dd, &ipv6(b, a, 4, &ipv4(B4, A4, 41, 0, &udp6))),
        e(
            0x0800,
            &gre(
                &[0, 0, 0x08, 0],
                &ipv4([5; 4], [6; 4], 17, 0, &udp(1, 4789, &vxlan(&inner))),
            ),
        ),
        e(
            0x0800,
            &ipv4(
                A4,
                B4,
                4,
                0,
                &ipv4(
                    B4,
                    A4,
                    4,
                    0,
                    &ipv4(
                        [1; 4],
                        [2; 4],
                        4,
                        0,
                        &ipv4(
                            [3; 4],
                            [4; 4],
                            4,
                            0,
                            &ipv4([5; 4], [6; 4], 6, 0, &tcp(5, 6)),
                        ),
                    ),
                ),
            ),
        ),
    ];
    // Every ICMP type that decides something (identifier, error, neither),
    // each quoting a packet, in both families.
    for ty in (0..=20).chain([30, 40, 255]) {
        let quote = ipv4(B4, A4, 17, 0, &udp(7, 9, b""));
        frames.push(e(
            0x0800,
            &ipv4(A4, B4, 1, 0, &icmp(ty, 1, [0, 5, 0, 1], &quote)),
        ));
        frames.push(e(
            0x0800,
            &ipv4(A4, B4, 58, 0, &icmp(ty, 1, [0, 5, 0, 1], &quote)),
        ));
    }
    for ty in [0, 1, 2, 3, 4, 5, 8, 13, 14, 127, 128, 129, 130, 135, 255] {
        let quote = ipv6(b, a, 6, &tcp(7, 9));
        frames.push(e(
            0x86dd,
            &ipv6(a, b, 58, &icmp(ty, 2, [0, 6, 0, 1], &quote)),
        ));
        frames.push(e(
            0x86dd,
            &ipv6(a, b, 1, &icmp(ty, 2, [0, 6, 0, 1], &quote)),
        ));
    }
    // Quoted IPv4 headers: options, a bogus IHL, a fragment, AH's offset.
    for (ihl, frag, proto) in [
        (6, 0, 6),
        (2, 0, 17),
        (0, 0, 6),
        (5, 0x2000, 6),
        (5, 0, 51),
        (15, 0, 6),
    ] {
        let mut q = ipv4(B4, A4, proto, frag, &[0x11; 48]);
        q[0] = 0x40 | ihl;
        frames.push(e(0x0800, &ipv4(A4, B4, 1, 0, &icmp(3, 0, [0; 4], &q))));
    }
    // Every protocol with a port word, and some without, over both families.
    for proto in [6, 17, 33, 50, 51, 132, 136, 0, 2, 103, 255] {
        let body = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4];
        frames.push(e(0x0800, &ipv4(A4, B4, proto, 0, &body)));
        frames.push(e(0x86dd, &ipv6(a, b, proto, &body)));
    }
    // GRE header flags: checksum, routing, key, sequence, versions.
    for flags in [
        0x8000u16, 0x4000, 0x2000, 0x1000, 0xb000, 0x0001, 0x0007, 0x3000,
    ] {
        let mut g = flags.to_be_bytes().to_vec();
        g.extend_from_slice(&[0x08, 0x00, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
        frames.push(e(0x0800, &gre(&g, &udp4)));
    }
    // EtherTypes the kernel's full dissector accepts without addresses, on
    // the wire and inside GRE; and their neighbours.
    for et in [
        0x0806u16, 0x8035, 0x8847, 0x8848, 0x8906, 0x88f7, 0x8902, 0x88cc, 0x8809, 0x0000,
    ] {
        frames.push(e(et, &arp));
        let mut g = vec![0, 0];
        g.extend_from_slice(&et.to_be_bytes());
        frames.push(e(0x0800, &gre(&g, &arp)));
        frames.push(e(0x86dd, &ipv6(a, b, 47, &[&g[..], &arp[..]].concat())));
    }
    // VXLAN flags with and without "VNI valid", on and off port 4789.
    for (flags, port) in [(0x08u8, 4789u16), (0x0c, 4789), (0x00, 4789), (0x08, 4790)] {
        let mut v = vxlan(&inner);
        v[0] = flags;
        frames.push(e(0x0800, &ipv4(A4, B4, 17, 0, &udp(7, port, &v))));
    }
    // AH with a zero length field (not an AH header etherparse accepts).
    frames.push(e(
        0x0800,
        &ipv4(A4, B4, 51, 0, &[6, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ));
    frames.push(e(
        0x86dd,
        &ipv6(a, b, 51, &[6, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ));
    frames
}

/// Every frame the test feeds: samples and shapes, every prefix of both
/// (from the Ethernet header on: BPF_PROG_TEST_RUN wants 14 bytes), and a
/// seeded stream of mutated and random frames.
fn corpus() -> Vec<Vec<u8>> {
    let whole: Vec<Vec<u8>> = sample_frames().into_iter().chain(shapes()).collect();
    let mut all = Vec::new();
    for f in &whole {
        for len in 14..=f.len() {
            all.push(f[..len].to_vec());
        }
    }
    // LAGKIT_BPF_PARITY_ROUNDS raises the count for a deeper search.
    let rounds: u64 = std::env::var("LAGKIT_BPF_PARITY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(6_000);
    let seed = std::env::var("LAGKIT_BPF_PARITY_SEED")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let mut rng = XorShift(seed);
    for round in 0..rounds {
        let mut f = if round % 4 != 3 {
            let mut f = whole[(rng.next() % whole.len() as u64) as usize].clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() % f.len() as u64) as usize;
                f[at] = rng.next() as u8;
            }
            f
        } else {
            let len = 14 + (rng.next() % 160) as usize;
            (0..len).map(|_| rng.next() as u8).collect()
        };
        if rng.next() & 3 == 0 {
            let cut = 14 + (rng.next() % (f.len() as u64 - 13)) as usize;
            f.truncate(cut);
        }
        all.push(f);
    }
    all
}

/// An IPv4 or IPv6 frame (by its EtherType) too short for the fixed IP
/// header, which BPF_PROG_TEST_RUN refuses.
fn runt(frame: &[u8]) -> bool {
    match u16::from_be_bytes([frame[12], frame[13]]) {
        0x0800 => frame.len() < 14 + 20,
        0x86dd => frame.len() < 14 + 40,
        _ => false,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Runs every frame of `corpus` through `egress` configured with `policy`
/// over `map` (as balance-tlb/alb's transmit half with `tlb`), and returns
/// the disagreements with the Rust side.
fn disagreements(
    egress: &mut Datapath,
    policy: Policy,
    map: &BucketMap,
    corpus: &[Vec<u8>],
    tlb: Option<Tlb<'_>>,
) -> Vec<String> {
    let ifindexes: Vec<u32> = (0..map.members() as u32).map(|i| 1000 + i).collect();
    egress
        .configure(&Distribution {
            spread: Spread::Hash {
                policy,
                buckets: map,
                tlb,
                bucket_bytes: false,
            },
            tx: &ifindexes,
            rx: &[],
            logical: 0,
            tx_ids: &[],
            rx_ids: &[],
            faults: false,
        })
        .unwrap();
    let mut bad = Vec::new();
    for frame in corpus {
        let key = FlowKey::from_frame(frame);
        let member = policy.select_in(&key, map);
        let want = Choice {
            member,
            hash: policy.hash(&key),
            bucket: policy.bucket(&key),
            ifindex: member.map_or(0, |m| ifindexes[m]),
            verdict: if map.is_empty() {
                TC_ACT_SHOT
            } else {
                TC_ACT_REDIRECT
            },
        };
        let got = match egress.test_run(frame) {
            Ok(got) => got,
            // The kernel will not build an skb whose IP header it cannot
            // pull; such frames never leave a host's stack either.
            Err(_) if runt(frame) => continue,
            Err(e) => panic!("{e} on {}", hex(frame)),
        };
        if got != want {
            bad.push(format!(
                "{policy} n={}: bpf {got:?}, rust {want:?}\n  frame {}\n  key {key:?}",
                map.members(),
                hex(frame)
            ));
        }
    }
    bad
}

#[test]
fn every_policy_picks_the_member_lagkit_hash_picks() {
    let Some(mut egress) = load("every_policy_picks_the_member_lagkit_hash_picks") else {
        return;
    };
    let corpus = corpus();
    let strongs = [
        Strong::new(0),
        Strong::new(42),
        Strong::new(u64::MAX).with_symmetric(true),
        Strong::new(0x2545_f491_4f6c_dd1d).with_symmetric(true),
    ];
    let policies: Vec<Policy> = Policy::COMPAT
        .into_iter()
        .chain(strongs.map(Policy::Strong))
        .collect();
    // A map whose buckets are not `b mod n`, so strong must use the table.
    let mut shuffled = [0u8; 256];
    let mut rng = XorShift(7);
    for slot in &mut shuffled {
        *slot = (rng.next() % 5) as u8;
    }
    let maps = [
        BucketMap::new(2).unwrap(),
        BucketMap::new(3).unwrap(),
        BucketMap::new(7).unwrap(),
        BucketMap::from_slots(shuffled, 5).unwrap(),
    ];
    let mut bad = Vec::new();
    for policy in &policies {
        for map in &maps {
            bad.extend(disagreements(&mut egress, *policy, map, &corpus, None));
        }
    }
    let runs = policies.len() * maps.len() * corpus.len();
    assert!(
        bad.is_empty(),
        "{} of {runs} runs disagree; the first:\n{}",
        bad.len(),
        bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
    eprintln!("{runs} runs ({} frames) agree", corpus.len());
}

/// balance-tlb/alb with `tlb_dynamic_lb = false` hash by their configured
/// policy: with the tlb rewrite on, every policy still sends each unicast
/// frame where `lagkit_hash` does (group frames leave by the active member,
/// as Linux sends them, so they are left out here; alb answers ARP by its
/// client table, not tested here).
#[test]
fn tlb_sends_unicast_frames_where_every_policy_picks() {
    let Some(mut egress) = load("tlb_sends_unicast_frames_where_every_policy_picks") else {
        return;
    };
    let corpus: Vec<Vec<u8>> = corpus().into_iter().filter(|f| f[0] & 1 == 0).collect();
    let mut bad = Vec::new();
    let mut runs = 0;
    for n in [2u8, 3, 7] {
        let map = BucketMap::new(n.into()).unwrap();
        let macs: Vec<[u8; 6]> = (0..n).map(|i| [2, 0x6c, 0, 0, 0, i]).collect();
        for policy in Policy::COMPAT
            .into_iter()
            .chain([Policy::Strong(Strong::new(9))])
        {
            let tlb = Tlb {
                active: 0,
                macs: &macs,
                bond_mac: [2, 0x6c, 0xbb, 0, 0, 1],
                alb: false,
            };
            bad.extend(disagreements(&mut egress, policy, &map, &corpus, Some(tlb)));
            runs += corpus.len();
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {runs} runs disagree; the first:\n{}",
        bad.len(),
        bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
    eprintln!("{runs} tlb runs agree");
}
