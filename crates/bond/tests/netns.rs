//! Root network-namespace tests of the bond: two hosts joined by 2 or 4 veth
//! links, a lagkit bond on each side, real TCP through them. Each test
//! builds its own namespaces and removes them on drop (also on failure).
//! Skips with a message when not root.
//!
//! Every test runs twice, once per engine (the `engines!` list at the end
//! makes a `bpf::` and a `userspace::` test of each): the wrapper sets the
//! engine for its thread, and [`settings`] gives it to every bond the test
//! starts.

use lagkit_bond::kernel::EngineChoice;
use lagkit_bond::settings::{BondMode, Settings};
use lagkit_testnet::{tcp_transfer_from, wait_until, Lab, Transfer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

mod support;
use support::running::Running;

struct Pair {
    a: Running,
    b: Running,
    ns_a: String,
    ns_b: String,
    lab: Lab,
}

thread_local! {
    /// The engine of the test running on this thread (set by `engines!`).
    static ENGINE: std::cell::Cell<EngineChoice> = const { std::cell::Cell::new(EngineChoice::Auto) };
}

/// The engine this test runs its bonds with.
fn engine() -> EngineChoice {
    ENGINE.with(|e| e.get())
}

fn settings(lab_tag: &str, side: &str, links: usize, mode: BondMode, addr: &str) -> Settings {
    let members: Vec<String> = (1..=links).map(|i| format!("{side}{i}")).collect();
    let refs: Vec<&str> = members.iter().map(String::as_str).collect();
    let mut s = Settings::new("bond0", &refs, mode);
    s.addresses = vec![addr.parse().expect("an address with a prefix")];
    s.lacp.fast = true;
    s.policy = "strong:seed=0x5eed".parse().expect("policy");
    s.engine = engine();
    let dir = std::env::temp_dir().join(format!(
        "lkt-bond-{}-{lab_tag}-{}",
        std::process::id(),
        s.engine
    ));
    std::fs::create_dir_all(&dir).unwrap();
    s.control_socket = dir.join(format!("{side}.sock"));
    s
}

fn pair(test: &str, links: usize, mode: BondMode, tweak: impl Fn(&mut Settings)) -> Option<Pair> {
    Some(pair_in(Lab::new(test)?, test, links, mode, tweak))
}

/// [`pair`] for a test that measures timing: no other lab of this binary
/// runs meanwhile (see `Lab::alone`).
fn pair_alone(
    test: &str,
    links: usize,
    mode: BondMode,
    tweak: impl Fn(&mut Settings),
) -> Option<Pair> {
    Some(pair_in(Lab::alone(test)?, test, links, mode, tweak))
}

fn pair_in(
    mut lab: Lab,
    test: &str,
    links: usize,
    mode: BondMode,
    tweak: impl Fn(&mut Settings),
) -> Pair {
    let (ns_a, ns_b) = (lab.netns(), lab.netns());
    for i in 1..=links {
        lab.veth(&ns_a, &format!("a{i}"), &ns_b, &format!("b{i}"));
    }
    let mut sa = settings(test, "a", links, mode, "10.77.0.1/24");
    let mut sb = settings(test, "b", links, mode, "10.77.0.2/24");
    tweak(&mut sa);
    tweak(&mut sb);
    let a = Running::start(&ns_a, sa);
    let b = Running::start(&ns_b, sb);
    Pair {
        a,
        b,
        ns_a,
        ns_b,
        lab,
    }
}

/// A source port whose flow to `dst` A's bond puts on `member`, found by
/// asking the bond itself (`lagkit flow`).
fn port_for(p: &Pair, dst: &str, member: &str, taken: &[u16]) -> u16 {
    (41000u16..45000)
        .filter(|sp| !taken.contains(sp))
        .find(|sp| p.a.flow_member(&format!("10.77.0.1:{sp}"), dst).as_deref() == Some(member))
        .unwrap_or_else(|| panic!("no source port maps to {member}"))
}

fn run_flows(p: &Pair, ports: &[u16], bytes: u64) -> Vec<Transfer> {
    let hs: Vec<_> = ports
        .iter()
        .enumerate()
        .map(|(i, &sp)| {
            let (nb, na) = (p.ns_b.clone(), p.ns_a.clone());
            let dst = format!("10.77.0.2:{}", 5201 + i);
            let src: SocketAddr = format!("10.77.0.1:{sp}").parse().unwrap();
            std::thread::spawn(move || tcp_transfer_from(&nb, &dst, &na, Some(src), bytes))
        })
        .collect();
    hs.into_iter().map(|h| h.join().expect("flow")).collect()
}

fn lacp_formed(r: &Running, links: usize) -> bool {
    r.status().lacp.is_some_and(|l| l.number_of_ports == links)
}

fn lacp_carries_tcp_on_every_member(links: usize) {
    let test = format!("lacp_{links}_links");
    let Some(p) = pair(&test, links, BondMode::Lacp, |_| {}) else {
        return;
    };
    wait_until(
        "LACP aggregate on both sides",
        Duration::from_secs(15),
        || lacp_formed(&p.a, links) && lacp_formed(&p.b, links),
    );
    let st = p.a.status();
    let l = st.lacp.as_ref().unwrap();
    assert_eq!(l.partner_mac.as_deref(), Some(p.b.status().mac.as_str()));
    for m in &st.members {
        let lacp = m.lacp.as_ref().unwrap();
        assert_eq!(lacp.actor_state, 0x3f, "{m:?}");
        assert!(m.transmitting && m.collecting);
    }
    // Eight TCP connections; the bond itself says which source port puts
    // each on which member, so the test controls the spread exactly.
    let mut chosen = Vec::new();
    for i in 0..8usize {
        let dst = format!("10.77.0.2:{}", 5201 + i);
        let member = format!("a{}", i % links + 1);
        chosen.push(port_for(&p, &dst, &member, &chosen));
    }
    let before = p.a.stats();
    let t = run_flows(&p, &chosen, 16 << 20);
    for x in &t {
        assert_eq!(x.sent, x.received, "every byte arrives");
        assert_eq!(x.sent_hash, x.recv_hash, "and unchanged");
    }
    let after = p.a.stats();
    let bytes: Vec<u64> = after
        .members
        .iter()
        .zip(&before.members)
        .map(|(a, b)| a.tx_bytes - b.tx_bytes)
        .collect();
    let total: u64 = bytes.iter().sum();
    for (i, b) in bytes.iter().enumerate() {
        assert!(
            *b as f64 >= 0.15 * total as f64,
            "member {} carried {b} of {total} bytes: {bytes:?}",
            i + 1
        );
    }
    drop(p.lab);
}

fn lacp_two_links_tcp_spread() {
    lacp_carries_tcp_on_every_member(2);
}

fn lacp_four_links_tcp_spread() {
    lacp_carries_tcp_on_every_member(4);
}

fn tx_bytes(r: &Running) -> Vec<u64> {
    r.stats().members.iter().map(|m| m.tx_bytes).collect()
}

fn diff(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

fn lacp_failover_under_load_keeps_tcp_connections() {
    let Some(p) = pair("lacp_failover", 2, BondMode::Lacp, |_| {}) else {
        return;
    };
    wait_until("LACP aggregate", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2) && lacp_formed(&p.b, 2)
    });
    let mut ports = Vec::new();
    for i in 0..4usize {
        let dst = format!("10.77.0.2:{}", 5201 + i);
        ports.push(port_for(&p, &dst, &format!("a{}", i % 2 + 1), &ports));
    }
    let retrans_before = lagkit_testnet::tcp_retrans(&p.lab, &p.ns_a);
    let flows = {
        let (ns_a, ns_b) = (p.ns_a.clone(), p.ns_b.clone());
        let ports = ports.clone();
        std::thread::spawn(move || {
            let hs: Vec<_> = ports
                .iter()
                .enumerate()
                .map(|(i, &sp)| {
                    let (nb, na) = (ns_b.clone(), ns_a.clone());
                    let dst = format!("10.77.0.2:{}", 5201 + i);
                    let src: SocketAddr = format!("10.77.0.1:{sp}").parse().unwrap();
                    std::thread::spawn(move || {
                        tcp_transfer_from(&nb, &dst, &na, Some(src), 300 << 20)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("flow"))
                .collect::<Vec<_>>()
        })
    };
    // Let traffic flow on both links, then pull link 1.
    let start = tx_bytes(&p.a);
    wait_until("traffic on both members", Duration::from_secs(10), || {
        diff(&tx_bytes(&p.a), &start).iter().all(|&b| b > 1 << 20)
    });
    let t0 = std::time::Instant::now();
    p.lab
        .sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "down"]);
    wait_until("bond A stops using a1", Duration::from_secs(2), || {
        !p.a.status().members[0].transmitting
    });
    let failover = t0.elapsed();
    let after_cut = tx_bytes(&p.a);
    let results = flows.join().expect("flows");
    for r in &results {
        assert_eq!(r.sent, r.received, "connection survived the pulled cable");
        assert_eq!(r.sent_hash, r.recv_hash);
    }
    let moved = diff(&tx_bytes(&p.a), &after_cut);
    assert!(moved[1] > 100 << 20, "a2 carried the rest: {moved:?}");
    let retrans = lagkit_testnet::tcp_retrans(&p.lab, &p.ns_a) - retrans_before;
    let st = p.a.status();
    assert_eq!(
        st.members[0].mii_status,
        lagkit_api::status::MiiStatus::Down
    );
    assert_eq!(st.members[0].link_failure_count, 1);
    assert_eq!(st.lacp.as_ref().unwrap().number_of_ports, 1);
    eprintln!(
        "failover: map without a1 visible to the control socket {failover:?} after `ip link set a1 down`; {retrans} TCP retransmissions during the run"
    );
    // Restore: a1 rejoins the aggregate.
    p.lab.sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "up"]);
    wait_until("a1 rejoins", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2)
    });
}

fn active_backup_uses_only_the_active_member_and_fails_over() {
    let Some(p) = pair("active_backup", 2, BondMode::ActiveBackup, |s| {
        s.primary = Some(format!("{}1", &s.members[0][..1]));
        s.num_grat_arp = 3;
    }) else {
        return;
    };
    wait_until("active member", Duration::from_secs(10), || {
        p.a.status().active_member.as_deref() == Some("a1")
    });
    let before = tx_bytes(&p.a);
    let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:5301", &p.ns_a, 4, 8 << 20);
    assert!(t
        .iter()
        .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash));
    let d = diff(&tx_bytes(&p.a), &before);
    assert!(
        d[0] > 30 << 20 && d[1] == 0,
        "only the active member transmits: {d:?}"
    );
    // A's gratuitous ARPs (sender and target 10.77.0.1), as b2 receives
    // them from a2.
    let announced = lagkit_testnet::SlowCapture::start_matching(&p.ns_b, "b2", |f| {
        let a = [10, 77, 0, 1];
        f.len() >= 42 && f[12..14] == [0x08, 0x06] && f[28..32] == a && f[38..42] == a
    });
    p.lab
        .sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "down"]);
    wait_until("failover to a2", Duration::from_secs(5), || {
        p.a.status().active_member.as_deref() == Some("a2")
    });
    let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:5311", &p.ns_a, 2, 4 << 20);
    assert!(t.iter().all(|x| x.sent == x.received));
    // num_grat_arp = 3: three rounds on the new active member, 100 ms
    // apart (no miimon here: the core's default spacing).
    wait_until("3 gratuitous ARPs on a2", Duration::from_secs(5), || {
        announced.count() >= 3
    });
    let times = announced.finish();
    assert_eq!(times.len(), 3, "{times:?}");
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= Duration::from_millis(80), "{gap:?} apart: {times:?}");
    }
    // The primary returns and takes over again (primary_reselect always).
    p.lab.sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "up"]);
    wait_until("back to the primary", Duration::from_secs(5), || {
        p.a.status().active_member.as_deref() == Some("a1")
    });
}

fn balance_rr_uses_every_member_and_xor_and_broadcast_carry_tcp() {
    let Some(p) = pair("balance_rr", 2, BondMode::BalanceRr, |_| {}) else {
        return;
    };
    // The kernel moves 32 MB in a few ms: measure once both members deal.
    wait_until("both members transmit", Duration::from_secs(10), || {
        p.a.status().members.iter().all(|m| m.transmitting)
    });
    let before = tx_bytes(&p.a);
    let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:5401", &p.ns_a, 1, 32 << 20);
    assert!(t
        .iter()
        .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash));
    let d = diff(&tx_bytes(&p.a), &before);
    let total: u64 = d.iter().sum();
    assert!(
        d.iter().all(|&b| b as f64 > 0.3 * total as f64),
        "one TCP flow spread over both members: {d:?} {:?}",
        p.a.stats()
    );
    drop(p);
    for mode in [
        BondMode::BalanceXor,
        BondMode::Broadcast,
        BondMode::Adaptive,
    ] {
        let Some(p) = pair(&format!("{mode:?}"), 2, mode, |_| {}) else {
            return;
        };
        let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:5501", &p.ns_a, 2, 8 << 20);
        assert!(
            t.iter()
                .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash),
            "{mode:?}"
        );
    }
}

fn mtu_9000_end_to_end() {
    let Some(p) = pair("mtu9000", 2, BondMode::Lacp, |s| s.mtu = Some(9000)) else {
        return;
    };
    wait_until("LACP aggregate", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2) && lacp_formed(&p.b, 2)
    });
    assert_eq!(p.a.status().mtu, 9000);
    let link_mtu = p.lab.sh(&["ip", "-n", &p.ns_a, "-o", "link", "show", "a1"]);
    assert!(
        link_mtu.contains("mtu 9000"),
        "member MTU follows: {link_mtu}"
    );
    // A datagram that fits only in a jumbo frame, with DF set by the kernel's
    // default PMTU discovery on UDP sockets of this size.
    let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:5601", &p.ns_a, 2, 16 << 20);
    assert!(t
        .iter()
        .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash));
    let route = p.lab.nsexec(&p.ns_a, &["ip", "route", "get", "10.77.0.2"]);
    assert!(!route.contains("mtu 1500"), "{route}");
}

fn lacp_against_a_static_peer_says_so() {
    let Some(mut lab) = Lab::new("lacp_vs_static") else {
        return;
    };
    let (ns_a, ns_b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&ns_a, &format!("a{i}"), &ns_b, &format!("b{i}"));
    }
    let a = Running::start(
        &ns_a,
        settings("lacp_vs_static", "a", 2, BondMode::Lacp, "10.77.0.1/24"),
    );
    let _b = Running::start(
        &ns_b,
        settings(
            "lacp_vs_static",
            "b",
            2,
            BondMode::BalanceXor,
            "10.77.0.2/24",
        ),
    );
    wait_until("the mismatch is reported", Duration::from_secs(15), || {
        a.status()
            .problems
            .iter()
            .any(|p| p.contains("does not run LACP") && p.contains("balance-xor"))
    });
    let st = a.status();
    assert!(st.render().contains("Problems:"), "{}", st.render());
}

fn adaptive_moves_buckets_off_an_overloaded_member() {
    let Some(p) = pair("adaptive", 2, BondMode::Adaptive, |s| {
        s.adaptive_interval = Duration::from_millis(200);
    }) else {
        return;
    };
    for (ns, side) in [(&p.ns_a, "a"), (&p.ns_b, "b")] {
        for i in 1..=2 {
            p.lab.sh(&[
                "tc",
                "-n",
                ns,
                "qdisc",
                "add",
                "dev",
                &format!("{side}{i}"),
                "root",
                "tbf",
                "rate",
                "200mbit",
                "burst",
                "256kb",
                "latency",
                "50ms",
            ]);
        }
    }
    // Four flows that the hash puts on a1 alone.
    let mut ports = Vec::new();
    for i in 0..4usize {
        let dst = format!("10.77.0.2:{}", 5701 + i);
        ports.push(port_for(&p, &dst, "a1", &ports));
    }
    let before = tx_bytes(&p.a);
    let hs: Vec<_> = ports
        .iter()
        .enumerate()
        .map(|(i, &sp)| {
            let (nb, na) = (p.ns_b.clone(), p.ns_a.clone());
            let dst = format!("10.77.0.2:{}", 5701 + i);
            let src: SocketAddr = format!("10.77.0.1:{sp}").parse().unwrap();
            std::thread::spawn(move || tcp_transfer_from(&nb, &dst, &na, Some(src), 24 << 20))
        })
        .collect();
    for h in hs {
        let t = h.join().expect("flow");
        assert_eq!(t.sent, t.received);
        assert_eq!(t.sent_hash, t.recv_hash);
    }
    let d = diff(&tx_bytes(&p.a), &before);
    let total: u64 = d.iter().sum();
    assert!(
        d[1] as f64 > 0.2 * total as f64,
        "adaptive moved load to a2: {d:?}"
    );
}

/// A server with a bond over 2 links into a Linux bridge (the switch), and
/// two client hosts on the same bridge: the topology of Linux balance-alb
/// (seed 004) and balance-tlb.
struct Switched {
    a: Running,
    ns_a: String,
    /// The namespace of the Linux bridge `br0` (ports s1..s4).
    ns_s: String,
    clients: Vec<String>,
    lab: Lab,
}

fn switched(test: &str, mode: BondMode) -> Option<Switched> {
    let mut lab = Lab::new(test)?;
    let (ns_a, ns_s) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&ns_a, &format!("a{i}"), &ns_s, &format!("s{i}"));
    }
    let mut clients = Vec::new();
    for c in 1..=2 {
        let ns_c = lab.netns();
        lab.veth(&ns_c, &format!("c{c}"), &ns_s, &format!("s{}", c + 2));
        lab.host(&ns_c, &format!("c{c}"), &format!("10.77.0.1{c}/24"));
        clients.push(ns_c);
    }
    let ports: Vec<String> = (1..=4).map(|i| format!("s{i}")).collect();
    lab.bridge(&ns_s, "br0", &ports);
    let a = Running::start(&ns_a, settings(test, "a", 2, mode, "10.77.0.1/24"));
    Some(Switched {
        a,
        ns_a,
        ns_s,
        clients,
        lab,
    })
}

fn rx_bytes(r: &Running) -> Vec<u64> {
    r.stats().members.iter().map(|m| m.rx_bytes).collect()
}

fn balance_alb_balances_receive_across_clients() {
    let Some(sw) = switched("alb", BondMode::BalanceAlb) else {
        return;
    };
    // Each client sends to the server; alb tells each its own member's MAC.
    let before = rx_bytes(&sw.a);
    let hs: Vec<_> = sw
        .clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (na, nc) = (sw.ns_a.clone(), c.clone());
            std::thread::spawn(move || {
                lagkit_testnet::tcp_transfer(&na, &format!("10.77.0.1:{}", 5801 + i), &nc, 24 << 20)
            })
        })
        .collect();
    for h in hs {
        let t = h.join().expect("flow");
        assert_eq!(t.sent, t.received);
        assert_eq!(t.sent_hash, t.recv_hash);
    }
    let d = diff(&rx_bytes(&sw.a), &before);
    let total: u64 = d.iter().sum();
    assert!(
        d.iter().all(|&b| b as f64 > 0.3 * total as f64),
        "both members receive: {d:?}"
    );
    let _ = &sw.lab;
}

fn balance_tlb_transmits_on_every_member_and_receives_on_the_active_one() {
    let Some(sw) = switched("tlb", BondMode::BalanceTlb) else {
        return;
    };
    // Learning frames teach the switch the bond's MAC on the active
    // member's port (s1), and keep it there while the bond is quiet: the
    // bridge forgets a MAC after 1.5 s here, the bond re-teaches every 1 s.
    let mac = sw.a.status().mac;
    sw.lab.sh(&[
        "ip",
        "-n",
        &sw.ns_s,
        "link",
        "set",
        "br0",
        "type",
        "bridge",
        "ageing_time",
        "150",
    ]);
    let learned = || {
        let fdb = sw
            .lab
            .sh(&["bridge", "-n", &sw.ns_s, "fdb", "show", "br", "br0"]);
        fdb.lines()
            .any(|l| l.starts_with(&mac) && l.contains("dev s1 "))
    };
    wait_until(
        "the switch learns the bond's MAC on s1",
        Duration::from_secs(5),
        learned,
    );
    let quiet = std::time::Instant::now() + Duration::from_secs(4);
    while std::time::Instant::now() < quiet {
        assert!(
            learned(),
            "the bond's MAC stays learned on s1 while the bond is quiet"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let before_tx = tx_bytes(&sw.a);
    let before_rx = rx_bytes(&sw.a);
    // Server on each client; the bond's host sends. Choose flows the hash
    // puts on each member.
    let mut handles = Vec::new();
    let mut taken = Vec::new();
    for (i, c) in sw.clients.iter().enumerate() {
        let dst = format!("10.77.0.1{}:{}", i + 1, 5901 + i);
        let member = format!("a{}", i + 1);
        let sp = (41000u16..45000)
            .filter(|p| !taken.contains(p))
            .find(|sp| {
                sw.a.flow_member(&format!("10.77.0.1:{sp}"), &dst)
                    .as_deref()
                    == Some(&member)
            })
            .expect("port");
        taken.push(sp);
        let (na, nc) = (sw.ns_a.clone(), c.clone());
        let src: SocketAddr = format!("10.77.0.1:{sp}").parse().unwrap();
        handles.push(std::thread::spawn(move || {
            tcp_transfer_from(&nc, &dst, &na, Some(src), 24 << 20)
        }));
    }
    for h in handles {
        let t = h.join().expect("flow");
        assert_eq!(t.sent, t.received);
        assert_eq!(t.sent_hash, t.recv_hash);
    }
    let tx = diff(&tx_bytes(&sw.a), &before_tx);
    let total: u64 = tx.iter().sum();
    assert!(
        tx.iter().all(|&b| b as f64 > 0.3 * total as f64),
        "both transmit: {tx:?}"
    );
    let rx = diff(&rx_bytes(&sw.a), &before_rx);
    assert!(
        rx[0] > 0 && rx[1] < rx[0] / 10,
        "acks come back to the active member: {rx:?}"
    );
    assert_eq!(sw.a.status().active_member.as_deref(), Some("a1"));
    let _ = &sw.lab;
}

fn arp_monitor_fails_over_when_the_path_dies_behind_a_live_carrier() {
    // A (active-backup, ARP probing B) -- a1,a2 -- bridge S -- b1 -- B.
    let Some(mut lab) = Lab::new("arp_monitor") else {
        return;
    };
    let (ns_a, ns_s, ns_b) = (lab.netns(), lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&ns_a, &format!("a{i}"), &ns_s, &format!("s{i}"));
    }
    lab.veth(&ns_b, "b1", &ns_s, "s3");
    let ports: Vec<String> = (1..=3).map(|i| format!("s{i}")).collect();
    lab.bridge(&ns_s, "br0", &ports);
    lab.host(&ns_b, "b1", "10.77.0.2/24");
    let mut s = settings(
        "arp_monitor",
        "a",
        2,
        BondMode::ActiveBackup,
        "10.77.0.1/24",
    );
    s.primary = Some("a1".into());
    s.arp = Some(lagkit_monitor::arp::ArpConfig {
        interval: Duration::from_millis(100),
        targets: vec!["10.77.0.2".parse().unwrap()],
        missed_max: 2,
        validate: true,
        all_targets: lagkit_monitor::Combine::Any,
    });
    let a = Running::start(&ns_a, s);
    wait_until("a1 active", Duration::from_secs(5), || {
        a.status().active_member.as_deref() == Some("a1")
    });
    // Traffic runs while a1's switch port leaves the bridge: a1 keeps its
    // carrier, so only the probes can tell.
    let (na, nb) = (ns_a.clone(), ns_b.clone());
    let t = std::thread::spawn(move || {
        lagkit_testnet::tcp_transfer(&nb, "10.77.0.2:6201", &na, 200 << 20)
    });
    std::thread::sleep(Duration::from_millis(100));
    lab.sh(&["ip", "-n", &ns_s, "link", "set", "s1", "nomaster"]);
    wait_until(
        "probe monitor fails over to a2",
        Duration::from_secs(5),
        || a.status().active_member.as_deref() == Some("a2"),
    );
    let st = a.status();
    assert_eq!(
        st.members[0].mii_status,
        lagkit_api::status::MiiStatus::Up,
        "carrier still up on a1"
    );
    assert!(
        st.members[0].watchers.contains(&("arp".to_string(), false)),
        "{:?}",
        st.members[0]
    );
    let t = t.join().expect("transfer");
    assert_eq!(
        t.sent, t.received,
        "the session survived the silent failure"
    );
    assert_eq!(t.sent_hash, t.recv_hash);
}

fn fail_over_mac_active_and_follow() {
    use lagkit_bond::settings::FailOverMac;
    for policy in [FailOverMac::Active, FailOverMac::Follow] {
        let Some(p) = pair(&format!("fom_{policy:?}"), 2, BondMode::ActiveBackup, |s| {
            s.fail_over_mac = policy;
            s.primary = Some(format!("{}1", &s.members[0][..1]));
        }) else {
            return;
        };
        wait_until("a1 active", Duration::from_secs(5), || {
            p.a.status().active_member.as_deref() == Some("a1")
        });
        let st = p.a.status();
        let (bond_mac, a2_mac) = (st.mac.clone(), st.members[1].permanent_hw_addr.clone());
        p.lab
            .sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "down"]);
        wait_until("failover", Duration::from_secs(5), || {
            p.a.status().active_member.as_deref() == Some("a2")
        });
        let st = p.a.status();
        match policy {
            FailOverMac::Active => assert_eq!(st.mac, a2_mac, "the bond took a2's MAC"),
            _ => {
                assert_eq!(st.mac, bond_mac, "the bond kept its MAC");
                let link = p.lab.sh(&["ip", "-n", &p.ns_a, "-o", "link", "show", "a2"]);
                assert!(link.contains(&bond_mac), "a2 took the bond's MAC: {link}");
            }
        }
        let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:6301", &p.ns_a, 1, 4 << 20);
        assert!(t.iter().all(|x| x.sent == x.received));
    }
}

fn prometheus_metrics_on_loopback() {
    let Some(p) = pair("metrics", 2, BondMode::Lacp, |s| {
        s.metrics_listen = Some(lagkit_api::metrics::loopback(9464))
    }) else {
        return;
    };
    wait_until("LACP aggregate", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2)
    });
    let ns = p.ns_a.clone();
    let fetch = move || {
        let ns = ns.clone();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            lagkit_dataplane::netns::enter(&ns).unwrap();
            let mut s = std::net::TcpStream::connect("127.0.0.1:9464").ok()?;
            s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
            let mut body = String::new();
            s.read_to_string(&mut body).ok()?;
            Some(body)
        })
        .join()
        .unwrap()
        .unwrap_or_default()
    };
    wait_until(
        "metrics show both members up",
        Duration::from_secs(5),
        || {
            let b = fetch();
            b.contains(r#"lagkit_member_link_up{bond="bond0",member="a1"} 1"#)
                && b.contains(r#"lagkit_aggregate_ports{bond="bond0"} 2"#)
                && b.contains("lagkit_member_lacpdu_tx_total")
        },
    );
}

fn a_member_missing_at_start_is_taken_when_it_appears() {
    let Some(mut lab) = Lab::new("late_member") else {
        return;
    };
    let (ns_a, ns_b) = (lab.netns(), lab.netns());
    lab.veth(&ns_a, "a1", &ns_b, "b1");
    let a = Running::start(
        &ns_a,
        settings("late_member", "a", 2, BondMode::Lacp, "10.77.0.1/24"),
    );
    let b = Running::start(
        &ns_b,
        settings("late_member", "b", 2, BondMode::Lacp, "10.77.0.2/24"),
    );
    wait_until("one port aggregated", Duration::from_secs(15), || {
        lacp_formed(&a, 1)
    });
    let st = a.status();
    assert_eq!(
        st.members[1].mii_status,
        lagkit_api::status::MiiStatus::Missing
    );
    assert!(
        st.problems.iter().any(|p| p.contains("a2 does not exist")),
        "{:?}",
        st.problems
    );
    // The cable arrives: both bonds take it and aggregate it.
    lab.veth(&ns_a, "a2", &ns_b, "b2");
    wait_until("both ports aggregated", Duration::from_secs(15), || {
        lacp_formed(&a, 2) && lacp_formed(&b, 2)
    });
    let t = lagkit_testnet::tcp_flows(&ns_b, "10.77.0.2:6401", &ns_a, 2, 4 << 20);
    assert!(t
        .iter()
        .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash));
}

/// A member that disappears between the record of its originals and the
/// first change to it (a cable pulled or a driver unloaded in the middle of
/// a start): the start goes on without it, the state file does not keep
/// it, the bond takes it when it comes back, and a stop gives the other
/// member back as it was.
fn a_member_removed_mid_start_is_waited_for_and_not_recorded() {
    use std::os::unix::fs::MetadataExt;
    let Some(mut lab) = Lab::new("mid_start") else {
        return;
    };
    let (ns_a, ns_b) = (lab.netns(), lab.netns());
    lab.veth(&ns_a, "a1", &ns_b, "b1");
    lab.veth(&ns_a, "a2", &ns_b, "b2");
    let ino = std::fs::metadata(format!("/run/netns/{ns_a}"))
        .unwrap()
        .ino();
    let state = PathBuf::from(format!("/run/lagkit/{ino}/bond0/state.json"));
    let before = lab.nsexec(&ns_a, &["ip", "-o", "link", "show", "a1"]);
    assert!(!before.contains("NOARP"), "{before}");
    // The bond thread runs in ns_a, so `ip` forked from it does too.
    let a = Running::start_with(
        &ns_a,
        settings("mid_start", "a", 2, BondMode::Lacp, "10.77.0.1/24"),
        |m| {
            if m == "a2" {
                let st = std::process::Command::new("ip")
                    .args(["link", "del", "a2"])
                    .status()
                    .expect("ip");
                assert!(st.success());
            }
        },
    );
    let b = Running::start(
        &ns_b,
        settings("mid_start", "b", 2, BondMode::Lacp, "10.77.0.2/24"),
    );
    wait_until("one port aggregated", Duration::from_secs(15), || {
        lacp_formed(&a, 1) && lacp_formed(&b, 1)
    });
    assert_eq!(
        a.status().members[1].mii_status,
        lagkit_api::status::MiiStatus::Missing
    );
    let recorded = std::fs::read_to_string(&state).expect("state file");
    // The members whose originals are recorded (a pinned data path's
    // record, where bpffs is mounted, names every configured member by
    // design: the programs number them).
    let v: serde_json::Value = serde_json::from_str(&recorded).expect("JSON");
    let saved: Vec<&str> = (v["members"].as_array().expect("members").iter())
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert_eq!(saved, ["a1"], "{recorded}");
    // The cable comes back: both bonds take it and aggregate it.
    lab.veth(&ns_a, "a2", &ns_b, "b2");
    wait_until("both ports aggregated", Duration::from_secs(15), || {
        lacp_formed(&a, 2) && lacp_formed(&b, 2)
    });
    let t = lagkit_testnet::tcp_flows(&ns_b, "10.77.0.2:6402", &ns_a, 2, 4 << 20);
    assert!(t
        .iter()
        .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash));
    drop(a);
    let after = lab.nsexec(&ns_a, &["ip", "-o", "link", "show", "a1"]);
    assert!(!after.contains("NOARP"), "a1 given back: {after}");
    assert!(!state.exists(), "state file removed on exit");
    drop(b);
}

fn aix_backup_adapter_with_auto_recovery() {
    // AIX: a main adapter and a backup adapter used only when every main
    // adapter failed; auto_recovery returns to the main one.
    let Some(p) = pair("backup_adapter", 2, BondMode::BalanceXor, |s| {
        let side = s.members[0][..1].to_string();
        s.members = vec![format!("{side}1")];
        s.backup = Some(format!("{side}2"));
        s.auto_recovery = true;
    }) else {
        return;
    };
    let tx = |i: usize| p.a.status().members[i].transmitting;
    wait_until(
        "main adapter carries traffic",
        Duration::from_secs(5),
        || tx(0) && !tx(1),
    );
    p.lab
        .sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "down"]);
    wait_until("backup takes over", Duration::from_secs(5), || tx(1));
    let t = lagkit_testnet::tcp_flows(&p.ns_b, "10.77.0.2:6501", &p.ns_a, 1, 4 << 20);
    assert!(t.iter().all(|x| x.sent == x.received));
    p.lab.sh(&["ip", "-n", &p.ns_a, "link", "set", "a1", "up"]);
    wait_until(
        "auto_recovery back to the main adapter",
        Duration::from_secs(5),
        || tx(0) && !tx(1),
    );
}

/// Every frame once, in `mode`: no ping reply twice, (almost) no TCP
/// duplicate-SACKs during a transfer, and the receiving namespace's IP
/// input equals what its bond delivered (the kernel took nothing from the
/// members directly: lagkit isolates them from the host stack).
/// balance-tlb and balance-alb are built for a switch (broadcasts arrive on
/// the active member only because a switch floods them everywhere), so
/// they are checked behind a bridge, with a plain host sending to the bond.
fn delivered_once(mode: BondMode) {
    if matches!(mode, BondMode::BalanceTlb | BondMode::BalanceAlb) {
        let Some(sw) = switched(&format!("once_{mode:?}"), mode) else {
            return;
        };
        check_once(
            mode,
            &sw.lab,
            &sw.clients[0],
            (&sw.ns_a, "10.77.0.1", &sw.a),
            &[&sw.a],
        );
    } else {
        let Some(p) = pair(&format!("once_{mode:?}"), 2, mode, |_| {}) else {
            return;
        };
        check_once(
            mode,
            &p.lab,
            &p.ns_a,
            (&p.ns_b, "10.77.0.2", &p.b),
            &[&p.a, &p.b],
        );
    }
}

/// Pings and TCP from namespace `from` to `to` = (namespace, address, its
/// bond) arrive once.
fn check_once(
    mode: BondMode,
    lab: &Lab,
    from: &str,
    (to, to_ip, to_bond): (&str, &str, &Running),
    bonds: &[&Running],
) {
    use lagkit_testnet::{counter, link_counter, ping};
    wait_until("the bond carries pings", Duration::from_secs(20), || {
        ping(from, to_ip, 1).received == 1
    });
    for r in bonds {
        assert!(
            r.status()
                .members
                .iter()
                .all(|m| m.isolation.as_deref().is_some_and(|i| !i.is_empty())),
            "every member isolated from the host stack"
        );
    }
    let pg = ping(from, to_ip, 50);
    assert_eq!(pg.received, 50, "{mode:?}: {pg:?}");
    assert_eq!(pg.duplicates, 0, "{mode:?}: duplicate replies: {pg:?}");

    let dsack = |ns: &str| {
        counter(lab, ns, "TcpExt:TCPDSACKRecv") + counter(lab, ns, "TcpExt:TCPDSACKOfoRecv")
    };
    let ip_in = |ns: &str| counter(lab, ns, "Ip:InReceives");
    // What the bond delivered: the logical interface's own counter, but
    // the BPF engine's ingress program hands frames to the veth end
    // without the device counting them; its programs count them instead.
    let bond_rx = |ns: &str| match engine() {
        EngineChoice::Bpf => to_bond.stats().members.iter().map(|m| m.rx_packets).sum(),
        _ => link_counter(lab, ns, "bond0", "rx_packets"),
    };
    let retrans = |ns: &str| lagkit_testnet::tcp_retrans(lab, ns);
    let (d0, i0, r0, s0) = (dsack(from), ip_in(to), bond_rx(to), retrans(from));
    let t = lagkit_testnet::tcp_flows(to, &format!("{to_ip}:5601"), from, 2, 24 << 20);
    assert!(
        t.iter()
            .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash),
        "{mode:?}: every byte once"
    );
    let (d1, i1, r1, s1) = (dsack(from), ip_in(to), bond_rx(to), retrans(from));
    let (dsacks, ip, rx, resent) = (d1 - d0, i1 - i0, r1 - r0, s1 - s0);
    eprintln!(
        "{mode:?}: DSACKs {dsacks}, segments the sender retransmitted {resent}, receiver IP input {ip}, bond delivered {rx}"
    );
    // A duplicate SACK reports a segment that arrived twice. A segment
    // the sender retransmitted spuriously (round-robin reorders by design,
    // a moved bucket can, and a loaded machine can delay a queue past the
    // retransmission timer) is answered by at most one; only a DSACK
    // beyond the sender's retransmissions is a copy made on the way.
    assert!(
        dsacks <= resent + 2,
        "{mode:?}: {dsacks} duplicate SACKs for {resent} retransmitted segments: segments arrived twice"
    );
    // The bond's counter also has the few non-IP frames (ARP).
    assert!(
        ip <= rx && rx - ip <= 10 + rx / 100,
        "{mode:?}: IP input {ip} vs {rx} frames delivered by the bond"
    );
}

fn once_lacp() {
    delivered_once(BondMode::Lacp);
}
fn once_balance_xor() {
    delivered_once(BondMode::BalanceXor);
}
fn once_balance_rr() {
    delivered_once(BondMode::BalanceRr);
}
fn once_active_backup() {
    delivered_once(BondMode::ActiveBackup);
}
fn once_broadcast() {
    delivered_once(BondMode::Broadcast);
}
fn once_adaptive() {
    delivered_once(BondMode::Adaptive);
}
fn once_balance_tlb() {
    delivered_once(BondMode::BalanceTlb);
}
fn once_balance_alb() {
    delivered_once(BondMode::BalanceAlb);
}

/// Keeps `n` connections to a control socket open (half of them with half
/// a request written), reconnecting any the server closes, until `stop`.
/// Returns how many connections it made.
fn hog_control(path: PathBuf, n: usize, stop: Arc<AtomicBool>) -> JoinHandle<u64> {
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        use std::os::unix::net::UnixStream;
        let open = |i: usize| {
            let s = UnixStream::connect(&path).ok()?;
            s.set_nonblocking(true).ok()?;
            if i % 2 == 1 {
                let _ = (&s).write_all(b"{\"cmd\":\"sta");
            }
            Some(s)
        };
        let mut made = 0u64;
        let mut conns: Vec<Option<UnixStream>> = (0..n).map(|_| None).collect();
        while !stop.load(Ordering::Relaxed) {
            for (i, c) in conns.iter_mut().enumerate() {
                let closed = match c {
                    None => true,
                    Some(s) => {
                        let mut b = [0u8; 256];
                        // Ok(0): closed; Ok(n): an answer ("busy"), then closed.
                        s.read(&mut b).is_ok()
                    }
                };
                if closed {
                    *c = open(i);
                    made += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        made
    })
}

/// A hundred idle or half-written control clients, held (and re-opened
/// when the server closes them) for 30 s: the bond's LACPDUs still leave
/// on time on both links and the partner never sees a member leave.
fn control_clients_cannot_stall_the_control_plane() {
    use lagkit_testnet::{longest_gap, SlowCapture};
    let Some(p) = pair_alone("control_stall", 2, BondMode::Lacp, |_| {}) else {
        return;
    };
    wait_until("aggregate", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2) && lacp_formed(&p.b, 2)
    });
    let caps = [
        SlowCapture::start(&p.ns_b, "b1"),
        SlowCapture::start(&p.ns_b, "b2"),
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let hog = hog_control(p.a.socket.clone(), 100, stop.clone());
    let hold = Duration::from_secs(30);
    let t0 = std::time::Instant::now();
    let mut samples = 0;
    while t0.elapsed() < hold {
        assert!(
            lacp_formed(&p.b, 2),
            "the partner lost a member after {:?}",
            t0.elapsed()
        );
        samples += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, Ordering::Relaxed);
    let made = hog.join().unwrap();
    for (i, c) in caps.into_iter().enumerate() {
        let times = c.finish();
        let gap = longest_gap(&times);
        eprintln!(
            "campaign | control_clients | link {}: {} LACPDUs from A in {hold:?} while 100 idle/half-written control clients were held, longest gap {gap:?}",
            i + 1,
            times.len()
        );
        assert!(times.len() >= 25, "{} LACPDUs", times.len());
        assert!(
            gap <= Duration::from_millis(1500),
            "an LACPDU was late: {gap:?}"
        );
    }
    eprintln!("campaign | control_clients | {made} control connections made in {hold:?}; the partner showed 2 ports in all {samples} samples");
    assert!(made >= 100);
    // And the bond still answers a real client once they are gone.
    assert!(lacp_formed(&p.a, 2));
}

/// ~100k junk slow-protocol frames per second on one member while the
/// partner runs LACP at the fast rate: the other member never leaves the
/// aggregate, the junk is counted on the flooded member only, and TCP keeps
/// flowing (throughput with and without the flood is printed).
fn a_junk_flood_on_one_member_never_knocks_out_the_other() {
    use lagkit_testnet::{flood, junk_slow_frames, tcp_flows};
    let Some(p) = pair_alone("junk_flood", 2, BondMode::Lacp, |_| {}) else {
        return;
    };
    wait_until("aggregate", Duration::from_secs(15), || {
        lacp_formed(&p.a, 2) && lacp_formed(&p.b, 2)
    });
    let rate = |t: &[Transfer]| {
        let bytes: u64 = t.iter().map(|x| x.received).sum();
        let secs = t.iter().map(|x| x.elapsed).max().unwrap().as_secs_f64();
        bytes as f64 * 8.0 / secs / 1e6
    };
    let quiet = tcp_flows(&p.ns_b, "10.77.0.2:5701", &p.ns_a, 4, 16 << 20);
    let nb = p.ns_b.clone();
    let dur = Duration::from_secs(10);
    let flooder = std::thread::spawn(move || flood(&nb, "b1", &junk_slow_frames(1), 100_000, dur));
    let t0 = std::time::Instant::now();
    let mut loud = Vec::new();
    let mut checks = 0;
    while t0.elapsed() < dur {
        let st = p.a.status();
        let a2 = &st.members[1];
        let l = a2.lacp.as_ref().unwrap();
        assert!(
            a2.transmitting && a2.collecting && l.rx_state == "CURRENT",
            "a2 left the aggregate during the flood after {:?}: {a2:?}",
            t0.elapsed()
        );
        checks += 1;
        if loud.is_empty() {
            loud = tcp_flows(&p.ns_b, "10.77.0.2:5711", &p.ns_a, 4, 16 << 20);
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let sent = flooder.join().unwrap();
    let fps = sent as f64 / dur.as_secs_f64();
    assert!(
        loud.iter()
            .all(|x| x.sent == x.received && x.sent_hash == x.recv_hash),
        "TCP intact during the flood"
    );
    let st = p.a.stats();
    eprintln!(
        "campaign | junk_flood | {sent} junk slow-protocol frames on a1 ({fps:.0}/s, 10 s); a2 stayed in the aggregate in all {checks} checks; TCP {:.0} Mbit/s quiet, {:.0} Mbit/s flooded; a1 dropped {} malformed, {} queue-full, {} bad LACPDUs",
        rate(&quiet),
        rate(&loud),
        st.members[0].control_malformed,
        st.members[0].control_queue_full,
        st.members[0].lacpdu_bad
    );
    assert!(fps >= 50_000.0, "the flood was only {fps:.0} frames/s");
    assert!(st.members[0].control_malformed > 0, "junk counted on a1");
    assert_eq!(
        (
            st.members[1].control_malformed,
            st.members[1].control_queue_full
        ),
        (0, 0),
        "nothing dropped on a2"
    );
}

/// A `bpf::NAME` and a `userspace::NAME` test for each test function.
macro_rules! engines {
    ($($name:ident),* $(,)?) => {
        mod bpf {
            $(#[test]
            fn $name() {
                super::ENGINE.with(|e| e.set(super::EngineChoice::Bpf));
                super::$name();
            })*
        }
        mod userspace {
            $(#[test]
            fn $name() {
                super::ENGINE.with(|e| e.set(super::EngineChoice::Userspace));
                super::$name();
            })*
        }
    };
}

engines!(
    lacp_two_links_tcp_spread,
    lacp_four_links_tcp_spread,
    lacp_failover_under_load_keeps_tcp_connections,
    active_backup_uses_only_the_active_member_and_fails_over,
    balance_rr_uses_every_member_and_xor_and_broadcast_carry_tcp,
    mtu_9000_end_to_end,
    lacp_against_a_static_peer_says_so,
    adaptive_moves_buckets_off_an_overloaded_member,
    balance_alb_balances_receive_across_clients,
    balance_tlb_transmits_on_every_member_and_receives_on_the_active_one,
    arp_monitor_fails_over_when_the_path_dies_behind_a_live_carrier,
    fail_over_mac_active_and_follow,
    prometheus_metrics_on_loopback,
    a_member_missing_at_start_is_taken_when_it_appears,
    a_member_removed_mid_start_is_waited_for_and_not_recorded,
    aix_backup_adapter_with_auto_recovery,
    once_lacp,
    once_balance_xor,
    once_balance_rr,
    once_active_backup,
    once_broadcast,
    once_adaptive,
    once_balance_tlb,
    once_balance_alb,
    control_clients_cannot_stall_the_control_plane,
    a_junk_flood_on_one_member_never_knocks_out_the_other,
);
