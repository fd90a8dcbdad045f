//! A small lab for root tests: network namespaces and veth pairs made with
//! `ip`, removed on drop (also when the test panics), plus helpers to put a
//! lagkit forwarder on one side and to move TCP through it.
//!
//! Namespaces are named `lkdp-<pid>-<n>`, so parallel tests and other
//! sessions never collide, and leftovers of a killed run (pid gone) are
//! removed by the next [`Lab::new`]. Nothing in the root namespace gets an
//! address or an interface.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lagkit_dataplane::{
    netns, DistMap, Engine, EngineConfig, Offloads, PacketConfig, PacketSocket, SlowFrame, Tap,
    TapConfig,
};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Namespaces (and daemons) owned by one test.
pub struct Lab {
    namespaces: Vec<String>,
    pids: Vec<i32>,
}

fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Lab {
    /// A lab, or None (with a message) when the test cannot run here.
    pub fn new(test: &str) -> Option<Lab> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let why = if !root {
            Some("needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for namespaces, TAPs and packet sockets)")
        } else if !std::path::Path::new("/dev/net/tun").exists() {
            Some("needs /dev/net/tun")
        } else if run(&["ip", "-V"]).is_err() {
            Some("needs iproute2 (`ip`)")
        } else {
            None
        };
        if let Some(why) = why {
            eprintln!("SKIP {test}: {why}; run as root: `sudo -E cargo test -p lagkit-dataplane --test netns`");
            return None;
        }
        Self::remove_stale();
        Some(Lab {
            namespaces: Vec::new(),
            pids: Vec::new(),
        })
    }

    /// Deletes `lkdp-<pid>-<n>` namespaces whose process is gone.
    fn remove_stale() {
        let Ok(list) = run(&["ip", "netns", "list"]) else {
            return;
        };
        for line in list.lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            let mut parts = name.split('-');
            if parts.next() != Some("lkdp") {
                continue;
            }
            let Some(pid) = parts.next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = run(&["ip", "netns", "del", name]);
            }
        }
    }

    /// Creates a fresh namespace with loopback up.
    pub fn netns(&mut self) -> String {
        let name = format!(
            "lkdp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.sh(&["ip", "netns", "add", &name]);
        self.namespaces.push(name.clone());
        self.sh(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        name
    }

    /// Runs a command; panics with its stderr if it fails.
    pub fn sh(&self, args: &[&str]) -> String {
        run(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs a command; returns its stdout or an error message.
    pub fn try_sh(&self, args: &[&str]) -> Result<String, String> {
        run(args)
    }

    /// Runs a command inside a namespace.
    pub fn nsexec(&self, ns: &str, args: &[&str]) -> String {
        let mut v = vec!["ip", "netns", "exec", ns];
        v.extend_from_slice(args);
        self.sh(&v)
    }

    /// A veth pair with one end in each namespace (never in the root namespace).
    pub fn veth(&self, ns_a: &str, a: &str, ns_b: &str, b: &str) {
        self.sh(&[
            "ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b,
        ]);
    }

    /// Prepares a bond member: no ARP, no IPv6 (so the namespace's kernel never
    /// answers on it), the MTU, up.
    pub fn prep_member(&self, ns: &str, ifname: &str, mtu: u32) {
        let mtu = mtu.to_string();
        self.sh(&[
            "ip", "-n", ns, "link", "set", ifname, "arp", "off", "mtu", &mtu,
        ]);
        self.nsexec(
            ns,
            &[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{ifname}.disable_ipv6=1"),
            ],
        );
        self.sh(&["ip", "-n", ns, "link", "set", ifname, "up"]);
    }

    /// Stops this process at drop.
    pub fn track_pid(&mut self, pid: i32) {
        self.pids.push(pid);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for &pid in &self.pids {
            // SAFETY: sending a signal to a process we started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        for ns in &self.namespaces {
            if let Err(e) = run(&["ip", "netns", "del", ns]) {
                eprintln!("lab cleanup: {e}");
            }
        }
    }
}

/// Polls `cond` until it holds or `timeout` passes (then panics with `what`).
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A flow hash over IP addresses and TCP/UDP ports (a stand-in for
/// lagkit-hash in these tests).
pub fn flow_hash(frame: &[u8]) -> u64 {
    let be16 = |o: usize| {
        frame
            .get(o..o + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .unwrap_or(0)
    };
    let mut l3 = 14;
    let mut et = be16(12);
    if et == 0x8100 || et == 0x88a8 {
        et = be16(16);
        l3 = 18;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h = (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    };
    match et {
        0x0800 => {
            let ihl = usize::from(frame.get(l3).copied().unwrap_or(0) & 0xf) * 4;
            let proto = frame.get(l3 + 9).copied().unwrap_or(0);
            eat(frame.get(l3 + 12..l3 + 20).unwrap_or(&[]));
            if proto == 6 || proto == 17 {
                eat(frame.get(l3 + ihl..l3 + ihl + 4).unwrap_or(&[]));
            }
        }
        0x86dd => {
            let next = frame.get(l3 + 6).copied().unwrap_or(0);
            eat(frame.get(l3 + 8..l3 + 40).unwrap_or(&[]));
            if next == 6 || next == 17 {
                eat(frame.get(l3 + 40..l3 + 44).unwrap_or(&[]));
            }
        }
        _ => eat(frame.get(..12).unwrap_or(&[])),
    }
    h ^ (h >> 29)
}

/// Picks a usable member by [`flow_hash`].
pub fn flow_selector(frame: &[u8], map: &DistMap) -> Option<usize> {
    map.pick(flow_hash(frame))
}

/// How to build one bond side.
#[derive(Clone)]
pub struct SideOpts {
    /// The TAP's MAC.
    pub mac: [u8; 6],
    /// TAP MTU.
    pub mtu: u32,
    /// Address with prefix for the TAP, e.g. "10.77.0.1/24".
    pub addr: String,
    /// recvmmsg/sendmmsg batching on members.
    pub batched: bool,
    /// Engine batch size.
    pub batch: usize,
    /// Offloads the TAP advertises.
    pub offloads: Offloads,
}

impl SideOpts {
    pub fn new(last_mac_byte: u8, addr: &str) -> SideOpts {
        SideOpts {
            mac: [0x02, 0x6c, 0x6b, 0, 0, last_mac_byte],
            mtu: 1500,
            addr: addr.into(),
            batched: true,
            batch: 32,
            offloads: Offloads::DEFAULT,
        }
    }
}

/// A TAP and its members in one namespace, forwarded by an engine.
pub struct BondSide {
    pub ns: String,
    pub engine: Engine<DistMap>,
    pub slow: Receiver<SlowFrame>,
    pub tap: Arc<Tap>,
    pub members: Vec<Arc<PacketSocket>>,
}

/// Opens a TAP `tap` and the `members` inside `ns`, gives the TAP its
/// address, and starts an engine with every member usable.
pub fn bond_side(lab: &Lab, ns: &str, tap: &str, members: &[&str], o: &SideOpts) -> BondSide {
    let (tapdev, socks) = netns::run_in(ns, || {
        let t = Tap::open(&TapConfig {
            offloads: o.offloads,
            ..TapConfig::new(tap)
        })
        .expect("open tap");
        t.link().set_mac(o.mac).expect("set mac");
        t.link().set_mtu(o.mtu).expect("set mtu");
        t.link().set_up(true).expect("set up");
        let socks: Vec<PacketSocket> = members
            .iter()
            .map(|m| {
                let mut c = PacketConfig::new(m);
                c.batched = o.batched;
                PacketSocket::open(&c).expect("open member")
            })
            .collect();
        (t, socks)
    })
    .expect("enter namespace");
    if !o.addr.is_empty() {
        lab.sh(&["ip", "-n", ns, "addr", "add", &o.addr, "dev", tap]);
    }
    let tap = Arc::new(tapdev);
    let members: Vec<Arc<PacketSocket>> = socks.into_iter().map(Arc::new).collect();
    let devs: Vec<Arc<dyn lagkit_dataplane::Device>> = members
        .iter()
        .map(|m| m.clone() as Arc<dyn lagkit_dataplane::Device>)
        .collect();
    let cfg = EngineConfig {
        batch: o.batch,
        ..EngineConfig::default()
    };
    let (engine, slow) = Engine::start(
        tap.clone(),
        devs,
        DistMap::new(0..members.len(), 1),
        flow_selector,
        cfg,
    )
    .expect("start engine");
    BondSide {
        ns: ns.to_owned(),
        engine,
        slow,
        tap,
        members,
    }
}

/// The result of one TCP transfer.
#[derive(Debug)]
pub struct Transfer {
    pub sent_hash: u64,
    pub recv_hash: u64,
    pub sent: u64,
    pub received: u64,
    pub elapsed: Duration,
}

/// Sends `bytes` of pseudo-random data over TCP from `client_ns` to a server
/// listening on `server` in `server_ns`, hashing both ends.
pub fn tcp_transfer(server_ns: &str, server: &str, client_ns: &str, bytes: u64) -> Transfer {
    let server: SocketAddr = server.parse().expect("address");
    let io_timeout = Some(Duration::from_secs(30));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let sns = server_ns.to_owned();
    let srv = std::thread::spawn(move || {
        netns::enter(&sns).expect("enter server ns");
        let l = TcpListener::bind(server).expect("bind");
        l.set_nonblocking(true).expect("nonblocking");
        ready_tx.send(()).expect("ready");
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut s = loop {
            match l.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(Instant::now() < deadline, "no connection within 30 s");
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("accept: {e}"),
            }
        };
        s.set_nonblocking(false).expect("blocking");
        s.set_read_timeout(io_timeout).expect("timeout");
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    h.update(&buf[..k]);
                    n += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => panic!("read after {n} bytes: {e}"),
            }
        }
        (h.digest(), n)
    });
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("server ready");
    let cns = client_ns.to_owned();
    let cli = std::thread::spawn(move || {
        netns::enter(&cns).expect("enter client ns");
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut s = loop {
            match TcpStream::connect_timeout(&server, Duration::from_secs(2)) {
                Ok(s) => break s,
                Err(e) => {
                    assert!(Instant::now() < deadline, "connect: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        s.set_write_timeout(io_timeout).expect("timeout");
        let start = Instant::now();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut left = bytes;
        while left > 0 {
            for c in buf.chunks_exact_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                c.copy_from_slice(&x.to_le_bytes());
            }
            let k = left.min(buf.len() as u64) as usize;
            s.write_all(&buf[..k])
                .unwrap_or_else(|e| panic!("write with {left} bytes left: {e}"));
            h.update(&buf[..k]);
            left -= k as u64;
        }
        s.shutdown(std::net::Shutdown::Write).expect("shutdown");
        // Wait for the server to close so `elapsed` covers delivery.
        let mut one = [0u8; 1];
        let _ = s.set_read_timeout(io_timeout);
        let _ = s.read(&mut one);
        (h.digest(), start.elapsed())
    });
    let (sent_hash, elapsed) = cli.join().expect("client thread");
    let (recv_hash, received) = srv.join().expect("server thread");
    Transfer {
        sent_hash,
        recv_hash,
        sent: bytes,
        received,
        elapsed,
    }
}

/// Sum of `InCsumErrors` over IP/TCP/UDP/ICMP in a namespace's `/proc/net/snmp`.
pub fn csum_errors(lab: &Lab, ns: &str) -> u64 {
    snmp(lab, ns)
        .iter()
        .filter(|(k, _)| k.ends_with(":InCsumErrors"))
        .map(|(_, v)| *v)
        .sum()
}

/// `Tcp: RetransSegs` in a namespace.
pub fn tcp_retrans(lab: &Lab, ns: &str) -> u64 {
    snmp(lab, ns)
        .iter()
        .find(|(k, _)| k == "Tcp:RetransSegs")
        .map(|(_, v)| *v)
        .unwrap_or(0)
}

/// `/proc/net/snmp` of a namespace as ("Proto:Field", value) pairs.
pub fn snmp(lab: &Lab, ns: &str) -> Vec<(String, u64)> {
    let text = lab.nsexec(ns, &["cat", "/proc/net/snmp"]);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let mut n = names.split_whitespace();
        let mut v = values.split_whitespace();
        let proto = n.next().unwrap_or("");
        v.next();
        for (k, val) in n.zip(v) {
            out.push((format!("{proto}{k}"), val.parse().unwrap_or(0)));
        }
    }
    out
}
