//! Root network-namespace tests of the bond: two hosts joined by 2 or 4 veth
//! links, a lagkit bond on each side, real TCP through them. Each test
//! builds its own namespaces and removes them on drop (also on failure).
//! Skips with a message when not root.

use lagkit_bond::daemon::{request, Bond, Request, Response};
use lagkit_bond::settings::{BondMode, Settings};
use lagkit_bond::status::{BondStats, BondStatus};
use lagkit_testnet::{tcp_transfer_from, wait_until, Lab, Transfer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A bond running on its own thread inside a namespace; stopped on drop.
struct Running {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    socket: PathBuf,
}

impl Running {
    fn start(ns: &str, s: Settings) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let socket = s.control_socket.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let ns = ns.to_string();
        let st = stop.clone();
        let handle = std::thread::spawn(move || {
            lagkit_dataplane::netns::enter(&ns).expect("setns");
            let mut b = match Bond::start(s) {
                Ok(b) => b,
                Err(e) => {
                    tx.send(Err(e.to_string())).ok();
                    return;
                }
            };
            tx.send(Ok(())).ok();
            b.run(&st);
            b.shutdown();
        });
        rx.recv_timeout(Duration::from_secs(10))
            .expect("bond thread answers")
            .expect("bond starts");
        Running {
            stop,
            handle: Some(handle),
            socket,
        }
    }

    fn status(&self) -> BondStatus {
        match request(&self.socket, &Request::Status).expect("status") {
            Response::Status(s) => *s,
            r => panic!("unexpected {r:?}"),
        }
    }

    fn stats(&self) -> BondStats {
        match request(&self.socket, &Request::Stats).expect("stats") {
            Response::Stats(s) => s,
            r => panic!("unexpected {r:?}"),
        }
    }

    fn flow_member(&self, src: &str, dst: &str) -> Option<String> {
        let r = request(
            &self.socket,
            &Request::Flow {
                proto: "tcp".into(),
                src: src.into(),
                dst: dst.into(),
            },
        )
        .expect("flow");
        match r {
            Response::Flow(f) => f.member,
            r => panic!("unexpected {r:?}"),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

struct Pair {
    a: Running,
    b: Running,
    ns_a: String,
    ns_b: String,
    lab: Lab,
}

fn settings(lab_tag: &str, side: &str, links: usize, mode: BondMode, addr: &str) -> Settings {
    let members: Vec<String> = (1..=links).map(|i| format!("{side}{i}")).collect();
    let refs: Vec<&str> = members.iter().map(String::as_str).collect();
    let mut s = Settings::new("bond0", &refs, mode);
    s.addresses = vec![addr.to_string()];
    s.lacp.fast = true;
    s.policy = "strong:seed=0x5eed".parse().expect("policy");
    let dir = std::env::temp_dir().join(format!("lkt-bond-{}-{lab_tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    s.control_socket = dir.join(format!("{side}.sock"));
    s
}

fn pair(test: &str, links: usize, mode: BondMode, tweak: impl Fn(&mut Settings)) -> Option<Pair> {
    let mut lab = Lab::new(test)?;
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
    Some(Pair {
        a,
        b,
        ns_a,
        ns_b,
        lab,
    })
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

#[test]
fn lacp_two_links_tcp_spread() {
    lacp_carries_tcp_on_every_member(2);
}

#[test]
fn lacp_four_links_tcp_spread() {
    lacp_carries_tcp_on_every_member(4);
}
