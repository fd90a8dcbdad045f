//! `FlowKey::from_frame` on hand-built frames: VLAN, QinQ, IPv6, fragments,
//! ICMP, GRE, IP-in-IP and VXLAN; every prefix of every frame (no panic, and
//! only whole layers appear); and a deterministic fuzz loop over `fuzz_one`.
//!
//! The frames come from `lagkit_hash::samples`, assembled byte by byte.

use std::net::{IpAddr, Ipv6Addr};

use lagkit_hash::samples::*;
use lagkit_hash::{ethertype, fuzz_one, ip_proto, FlowKey, InnerL2, Policy, Strong, Tunnel, L4};

fn assert_flow(key: &FlowKey, src: [u8; 4], dst: [u8; 4], proto: u8, l4: L4) {
    let ip = key.ip.expect("an IP flow");
    assert_eq!(ip.src, IpAddr::from(src));
    assert_eq!(ip.dst, IpAddr::from(dst));
    assert_eq!(ip.proto, proto);
    assert_eq!(ip.l4, l4);
}

#[test]
fn plain_tcp_over_ipv4() {
    let k = FlowKey::from_frame(&tcp4_frame());
    assert_eq!((k.src_mac, k.dst_mac, k.ethertype), (MAC_A, MAC_B, 0x0800));
    assert_eq!(k.vlan_tci, None);
    assert_flow(
        &k,
        A4,
        B4,
        6,
        L4::Ports {
            src: 40000,
            dst: 443,
        },
    );
    assert!(!k.is_fragment());
    assert_eq!(k.inner, None);
    // The parsed key equals the synthetic one the planner would build.
    let synthetic = FlowKey::tcp4(A4.into(), 40000, B4.into(), 443).with_macs(MAC_A, MAC_B);
    assert_eq!(k, synthetic);
}

#[test]
fn ethernet_padding_is_not_payload() {
    // A 60-byte minimum frame carrying a short UDP datagram: the IPv4 total
    // length, not the frame, bounds the packet.
    let mut f = eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, 17, 0, &udp(5353, 5353, &[])),
    );
    f.resize(60, 0xee);
    let k = FlowKey::from_frame(&f);
    assert_eq!(k.l4_ports(), Some((5353, 5353)));
}

#[test]
fn vlan_tag() {
    // PCP 5, VID 100: TCI 0xa064.
    let f = eth(
        MAC_B,
        MAC_A,
        0x8100,
        &tag(0xa064, 0x0800, &ipv4(A4, B4, 6, 0, &tcp(1, 2))),
    );
    let k = FlowKey::from_frame(&f);
    assert_eq!(k.vlan_tci, Some(0xa064));
    assert_eq!(k.vlan_id(), Some(100));
    assert_eq!(k.ethertype, 0x0800);
    assert_flow(&k, A4, B4, 6, L4::Ports { src: 1, dst: 2 });
    // vlan+srcmac XORs the whole TCI, as the kernel does.
    let vendor_dev = 0x0002_0000 ^ 0x0000_000a;
    assert_eq!(Policy::VlanSrcMac.hash(&k), (vendor_dev ^ 0xa064) as u64);
}

#[test]
fn qinq_keeps_the_outer_tag() {
    let inner = tag(200, 0x0800, &ipv4(A4, B4, 17, 0, &udp(53, 53, b"q")));
    let f = eth(MAC_B, MAC_A, 0x88a8, &tag(100, 0x8100, &inner));
    let k = FlowKey::from_frame(&f);
    assert_eq!(k.vlan_id(), Some(100));
    assert_eq!(k.ethertype, 0x0800);
    assert_flow(&k, A4, B4, 17, L4::Ports { src: 53, dst: 53 });
}

#[test]
fn ipv6_tcp_and_extension_headers() {
    let (a, b): (Ipv6Addr, Ipv6Addr) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x86dd, &ipv6(a, b, 6, &tcp(5000, 22))));
    assert_eq!(k.ethertype, 0x86dd);
    assert_eq!(k.src_ip(), Some(IpAddr::V6(a)));
    assert_eq!(k.l4_ports(), Some((5000, 22)));
    assert!(!k.ip.unwrap().ext_headers);
    assert_eq!(k, FlowKey::tcp6(a, 5000, b, 22).with_macs(MAC_A, MAC_B));

    // Hop-by-hop options (8 bytes: next header TCP, length 0, PadN) before TCP.
    let mut hbh = vec![6, 0, 1, 4, 0, 0, 0, 0];
    hbh.extend_from_slice(&tcp(5000, 22));
    let k2 = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x86dd, &ipv6(a, b, 0, &hbh)));
    let ip = k2.ip.unwrap();
    assert_eq!((ip.proto, ip.ext_headers), (6, true));
    assert_eq!(k2.l4_ports(), Some((5000, 22)));
    // Linux layer3+4 reads the protocol from the fixed header, sees
    // hop-by-hop, and hashes no ports: same value as a portless packet.
    let portless = FlowKey::ip(lagkit_hash::IpFlow::new(a.into(), b.into(), 6, L4::None));
    assert_eq!(Policy::Layer34.hash(&k2), Policy::Layer34.hash(&portless));
    // The full dissector behind encap3+4 does walk the options.
    assert_eq!(Policy::Encap34.hash(&k2), Policy::Encap34.hash(&k));
}

#[test]
fn ipv6_with_a_cut_extension_chain() {
    // Hop-by-hop announces a routing header of which only 4 bytes follow.
    // etherparse stops there (and its extension iterator would read past the
    // slice, which is why the key walks the headers itself).
    let (a, b) = (Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST);
    let chain = [43, 0, 1, 4, 0, 0, 0, 0, 6, 0, 0, 0];
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x86dd, &ipv6(a, b, 0, &chain)));
    let ip = k.ip.unwrap();
    assert!(ip.ext_headers && !ip.fragment);
    assert_eq!((ip.proto, ip.l4), (43, L4::None));
}

#[test]
fn ipv4_fragments_first_and_later_hash_alike() {
    // First fragment: MF set, offset 0, still carries the TCP header.
    let first = eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, 6, 0x2000, &tcp(40000, 443)),
    );
    // A later fragment: offset 185 (x8 = 1480 bytes), no TCP header.
    let later = eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 6, 185, &[0xab; 32]));
    let (kf, kl) = (FlowKey::from_frame(&first), FlowKey::from_frame(&later));
    for k in [&kf, &kl] {
        assert!(k.is_fragment());
        assert_eq!(k.l4_ports(), None);
        assert_eq!(k.ip_proto(), Some(6));
    }
    assert_eq!(kf, kl);
    for p in Policy::COMPAT
        .into_iter()
        .chain([Policy::Strong(Strong::new(3))])
    {
        assert_eq!(p.select(&kf, 4), p.select(&kl, 4), "{p}");
    }
    // The synthetic form of a fragment is the same key.
    assert_eq!(
        kf,
        FlowKey::tcp4(A4.into(), 0, B4.into(), 0)
            .with_macs(MAC_A, MAC_B)
            .as_fragment()
    );
}

#[test]
fn ipv6_fragment_header() {
    let (a, b) = (Ipv6Addr::LOCALHOST, Ipv6Addr::UNSPECIFIED);
    // Fragment header: next UDP, offset 0, M=1, id 7, then the UDP header.
    let mut fh = vec![17, 0, 0x00, 0x01, 0, 0, 0, 7];
    fh.extend_from_slice(&udp(1, 2, &[0; 8]));
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x86dd, &ipv6(a, b, 44, &fh)));
    let ip = k.ip.unwrap();
    assert!(ip.fragment && ip.ext_headers);
    assert_eq!((ip.proto, ip.l4), (17, L4::None));
}

#[test]
fn icmp_echo_and_icmpv6_echo() {
    let f = eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, 1, 0, &icmp(8, 0, [0x12, 0x34, 0, 1], b"ping")),
    );
    let k = FlowKey::from_frame(&f);
    assert_eq!(k.echo_id(), Some(0x1234));
    assert_eq!(k.src_port(), 0x1234);
    assert_flow(
        &k,
        A4,
        B4,
        1,
        L4::Icmp {
            ty: 8,
            code: 0,
            id: Some(0x1234),
        },
    );
    assert_eq!(
        k,
        FlowKey::echo(A4.into(), B4.into(), 0x1234).with_macs(MAC_A, MAC_B)
    );

    let (a, b) = (Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST);
    let f6 = eth(
        MAC_B,
        MAC_A,
        0x86dd,
        &ipv6(a, b, 58, &icmp(129, 0, [0, 9, 0, 1], &[])),
    );
    let k6 = FlowKey::from_frame(&f6);
    assert_eq!(k6.echo_id(), Some(9));
    // A router advertisement has no identifier.
    let ra = eth(
        MAC_B,
        MAC_A,
        0x86dd,
        &ipv6(a, b, 58, &icmp(134, 0, [64, 0, 0, 0], &[])),
    );
    assert_eq!(
        FlowKey::from_frame(&ra).ip.unwrap().l4,
        L4::Icmp {
            ty: 134,
            code: 0,
            id: None
        }
    );
}

#[test]
fn icmp_error_quotes_the_offending_flow() {
    // 10.0.0.2 tells 10.0.0.1 that its TCP packet 10.0.0.1:40000 -> 10.0.0.2:443
    // could not be delivered; the quote is cut after 8 bytes of TCP, as usual.
    let original = ipv4(A4, B4, 6, 0, &tcp(40000, 443));
    let quote = &original[..28];
    let f = eth(
        MAC_A,
        MAC_B,
        0x0800,
        &ipv4(B4, A4, 1, 0, &icmp(3, 3, [0; 4], quote)),
    );
    let k = FlowKey::from_frame(&f);
    match k.ip.unwrap().l4 {
        L4::IcmpError {
            ty: 3,
            code: 3,
            quoted: Some(q),
        } => {
            assert_eq!((q.src, q.dst), (IpAddr::from(A4), IpAddr::from(B4)));
            assert_eq!(q.ports, Some((40000, 443)));
        }
        other => panic!("{other:?}"),
    }
    // layer3+4 hashes the error exactly like the quoted flow.
    let flow = FlowKey::tcp4(A4.into(), 40000, B4.into(), 443);
    assert_eq!(Policy::Layer34.hash(&k), Policy::Layer34.hash(&flow));
    // A quote too short for an IP header: the kernel falls back to layer2.
    let cut = eth(
        MAC_A,
        MAC_B,
        0x0800,
        &ipv4(B4, A4, 1, 0, &icmp(11, 0, [0; 4], &quote[..12])),
    );
    let kc = FlowKey::from_frame(&cut);
    assert_eq!(Policy::Layer34.hash(&kc), Policy::Layer2.hash(&kc));
}

#[test]
fn gre_carrying_ipv4() {
    let inner = ipv4([172, 16, 0, 1], [172, 16, 0, 2], 6, 0, &tcp(1111, 2222));
    // GRE with key and sequence number: flags 0x3000, protocol IPv4.
    let mut gre = vec![0x30, 0x00, 0x08, 0x00];
    gre.extend_from_slice(&[0, 0, 0, 42, 0, 0, 0, 1]);
    gre.extend_from_slice(&inner);
    let f = eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &gre));
    let k = FlowKey::from_frame(&f);
    assert_flow(&k, A4, B4, 47, L4::None);
    let i = k.inner.expect("inner flow");
    assert_eq!(
        (i.tunnel, i.depth, i.ethertype),
        (Tunnel::Gre, 1, Some(0x0800))
    );
    let ip = i.ip.unwrap();
    assert_eq!(
        ip.l4,
        L4::Ports {
            src: 1111,
            dst: 2222
        }
    );
    // encap3+4 hashes the inner flow, layer3+4 the outer (portless) one.
    let inner_only = FlowKey::tcp4([172, 16, 0, 1].into(), 1111, [172, 16, 0, 2].into(), 2222);
    assert_eq!(Policy::Encap34.hash(&k), Policy::Layer34.hash(&inner_only));
    let outer_only = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &[])));
    assert_eq!(Policy::Layer34.hash(&k), Policy::Layer34.hash(&outer_only));
    // strong spreads tunnels by their inner flows.
    let s = Strong::new(8);
    assert_eq!(s.hash(&k), s.hash(&inner_only.with_macs(MAC_A, MAC_B)));
}

#[test]
fn gre_transparent_ethernet_bridging() {
    let inner_frame = eth(
        [0x02, 0, 0, 0, 0, 0x22],
        [0x02, 0, 0, 0, 0, 0x11],
        0x8100,
        &tag(
            7,
            0x0800,
            &ipv4([192, 168, 9, 1], [192, 168, 9, 2], 17, 0, &udp(9, 10, b"x")),
        ),
    );
    let mut gre = vec![0x00, 0x00, 0x65, 0x58];
    gre.extend_from_slice(&inner_frame);
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &gre)));
    let i = k.inner.unwrap();
    assert_eq!(i.ethertype, Some(0x0800));
    assert_eq!(
        i.l2,
        Some(InnerL2 {
            src_mac: [0x02, 0, 0, 0, 0, 0x11],
            dst_mac: [0x02, 0, 0, 0, 0, 0x22],
            vlan_tci: Some(7),
        })
    );
    assert_eq!(i.ip.unwrap().ports(), Some((9, 10)));
    // encap2+3: outer Ethernet part, inner addresses.
    let inner_addrs = FlowKey::tcp4([192, 168, 9, 1].into(), 0, [192, 168, 9, 2].into(), 0)
        .with_macs(MAC_A, MAC_B);
    assert_eq!(Policy::Encap23.hash(&k), Policy::Layer23.hash(&inner_addrs));
}

#[test]
fn gre_with_a_cut_payload_falls_back_like_the_kernel() {
    // TEB with only 6 bytes of inner Ethernet: the kernel's dissector fails,
    // and encap policies use the layer-2 value.
    let gre = [0x00, 0x00, 0x65, 0x58, 1, 2, 3, 4, 5, 6];
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &gre)));
    assert_eq!(k.inner.unwrap().ethertype, None);
    assert_eq!(Policy::Encap34.hash(&k), Policy::Layer2.hash(&k));
}

#[test]
fn ip_in_ip_and_6in4() {
    let inner4 = ipv4([1, 1, 1, 1], [2, 2, 2, 2], 17, 0, &udp(100, 200, &[]));
    let k = FlowKey::from_frame(&eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, ip_proto::IPIP, 0, &inner4),
    ));
    let i = k.inner.unwrap();
    assert_eq!(
        (i.tunnel, i.ethertype),
        (Tunnel::IpInIp, Some(ethertype::IPV4))
    );
    assert_eq!(i.ip.unwrap().ports(), Some((100, 200)));

    let (a, b) = (Ipv6Addr::LOCALHOST, "fe80::1".parse().unwrap());
    let inner6 = ipv6(a, b, 6, &tcp(7, 8));
    let k6 = FlowKey::from_frame(&eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, ip_proto::IPV6, 0, &inner6),
    ));
    let i6 = k6.inner.unwrap();
    assert_eq!(i6.ethertype, Some(ethertype::IPV6));
    assert_eq!(i6.ip.unwrap().src, IpAddr::V6(a));
}

#[test]
fn vxlan_inner_flow_is_parsed_but_linux_stays_outside() {
    let inner_frame = eth(
        [0x02, 0, 0, 0, 0, 0x22],
        [0x02, 0, 0, 0, 0, 0x11],
        0x0800,
        &ipv4([192, 168, 9, 1], [192, 168, 9, 2], 6, 0, &tcp(3333, 80)),
    );
    let outer = udp(49321, 4789, &vxlan(&inner_frame));
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 17, 0, &outer)));
    assert_eq!(k.l4_ports(), Some((49321, 4789)));
    let i = k.inner.unwrap();
    assert_eq!((i.tunnel, i.ethertype), (Tunnel::Vxlan, Some(0x0800)));
    assert_eq!(i.ip.unwrap().ports(), Some((3333, 80)));
    // The kernel's dissector does not parse UDP tunnels: encap3+4 == layer3+4 here.
    assert_eq!(Policy::Encap34.hash(&k), Policy::Layer34.hash(&k));
    // strong does use the inner flow.
    let inner_only = FlowKey::tcp4([192, 168, 9, 1].into(), 3333, [192, 168, 9, 2].into(), 80);
    assert_eq!(Strong::new(1).hash(&k), Strong::new(1).hash(&inner_only));
    // A UDP packet to 4789 without the VNI flag is just UDP.
    let mut bogus = vxlan(&inner_frame);
    bogus[0] = 0;
    let kb = FlowKey::from_frame(&eth(
        MAC_B,
        MAC_A,
        0x0800,
        &ipv4(A4, B4, 17, 0, &udp(1, 4789, &bogus)),
    ));
    assert_eq!(kb.inner, None);
}

#[test]
fn vxlan_inside_gre_stops_at_the_gre_payload() {
    let innermost = eth(
        MAC_A,
        MAC_B,
        0x0800,
        &ipv4([9, 9, 9, 9], [8, 8, 8, 8], 6, 0, &tcp(1, 2)),
    );
    let middle = ipv4(
        [5, 5, 5, 5],
        [6, 6, 6, 6],
        17,
        0,
        &udp(1000, 4789, &vxlan(&innermost)),
    );
    let mut gre = vec![0x00, 0x00, 0x08, 0x00];
    gre.extend_from_slice(&middle);
    let k = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x0800, &ipv4(A4, B4, 47, 0, &gre)));
    let i = k.inner.unwrap();
    assert_eq!((i.tunnel, i.depth), (Tunnel::Gre, 1));
    assert_eq!(i.ip.unwrap().dst, IpAddr::from([6, 6, 6, 6]));
}

#[test]
fn arp_and_macsec_are_not_ip() {
    let arp_body = [
        0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0x0a, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
    ];
    let k = FlowKey::from_frame(&eth([0xff; 6], MAC_A, 0x0806, &arp_body));
    assert_eq!((k.ethertype, k.ip), (ethertype::ARP, None));
    // MACsec with an unencrypted IPv4 payload: a bond only sees 0x88e5.
    let mut sectag = vec![0x20, 0, 0, 0, 0, 1];
    sectag.extend_from_slice(&[0x08, 0x00]);
    sectag.extend_from_slice(&ipv4(A4, B4, 6, 0, &tcp(1, 2)));
    let km = FlowKey::from_frame(&eth(MAC_B, MAC_A, 0x88e5, &sectag));
    assert_eq!((km.ethertype, km.ip), (ethertype::MACSEC, None));
}

#[test]
fn every_prefix_parses_without_panic_and_layers_only_grow() {
    for frame in sample_frames() {
        let full = FlowKey::from_frame(&frame);
        for len in 0..=frame.len() {
            let k = FlowKey::from_frame(&frame[..len]);
            if len < 14 {
                assert_eq!(k, FlowKey::default(), "len {len}");
                continue;
            }
            // Ethernet addresses never depend on what follows them.
            assert_eq!((k.src_mac, k.dst_mac), (full.src_mac, full.dst_mac));
            // An address pair, once present, is the full frame's pair.
            if let (Some(ip), Some(fip)) = (k.ip, full.ip) {
                assert_eq!((ip.src, ip.dst), (fip.src, fip.dst), "len {len}");
            }
            fuzz_one(&frame[..len]);
        }
    }
}

#[test]
fn deterministic_fuzz_loop() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let frames = sample_frames();
    for round in 0..20_000 {
        let mut buf = if round & 1 == 0 {
            // A mutated real frame: flip a few bytes, maybe cut it.
            let mut f = frames[(rng.next() % frames.len() as u64) as usize].clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() % f.len() as u64) as usize;
                f[at] = rng.next() as u8;
            }
            f
        } else {
            let len = (rng.next() % 160) as usize;
            (0..len).map(|_| rng.next() as u8).collect()
        };
        if rng.next() & 3 == 0 {
            let cut = (rng.next() % (buf.len() as u64 + 1)) as usize;
            buf.truncate(cut);
        }
        fuzz_one(&buf);
    }
}
