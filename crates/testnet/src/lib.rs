//! Test support for root network-namespace tests: a [`Lab`] owns the
//! namespaces it creates (and any daemon it starts) and removes them on
//! drop, also when the test panics; [`tcp_transfer`] and [`tcp_flows`] move
//! real TCP between namespaces and check every byte.
//!
//! Namespaces are named `lkt-<pid>-<n>`, so parallel tests and other
//! sessions never collide, and leftovers of a killed run (pid gone) are
//! removed by the next [`Lab::new`]. Nothing in the root namespace gets an
//! address or an interface.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use lagkit_dataplane::netns;
use lagkit_dataplane::tools::run;
pub use lagkit_dataplane::tools::CommandError;
use lagkit_sys::packet;
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, Signal};
use nix::sys::socket::{
    bind, getsockopt, send, setsockopt, socket, sockopt, AddressFamily, MsgFlags, SockFlag,
    SockType, SockaddrIn,
};
use nix::unistd::Pid;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The tests of one binary run in parallel on a 2-core machine. Most only
/// need the data to arrive, but a test that measures timing (LACPDU
/// intervals, failover, LACP expiry under a junk flood) measures the
/// machine instead when a dozen other labs push TCP at the same time: such
/// a test runs alone ([`Lab::alone`]) while the others share their turn
/// ([`Lab::new`]).
static TURN: RwLock<()> = RwLock::new(());

thread_local! {
    /// Whether this thread already holds a turn (a test with two labs).
    static HOLDS_TURN: Cell<bool> = const { Cell::new(false) };
}

/// A lab's turn on the machine, released after its namespaces are gone.
enum Turn {
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
    /// This thread's other lab holds the turn.
    Nested,
}

impl Turn {
    fn take(alone: bool) -> Turn {
        if HOLDS_TURN.with(Cell::get) {
            return Turn::Nested;
        }
        HOLDS_TURN.with(|h| h.set(true));
        // A test that panicked while holding the lock poisons it; the
        // lock still only orders tests, so go on.
        if alone {
            Turn::Alone(TURN.write().unwrap_or_else(|e| e.into_inner()))
        } else {
            Turn::Shared(TURN.read().unwrap_or_else(|e| e.into_inner()))
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if !matches!(self, Turn::Nested) {
            HOLDS_TURN.with(|h| h.set(false));
        }
    }
}

/// Namespaces (and daemons) owned by one test.
pub struct Lab {
    pids: Vec<i32>,
    namespaces: lagkit_netns::Namespaces,
    // Last: released after the namespaces are removed.
    _turn: Turn,
}

impl Lab {
    /// A lab, or None (with a message) when the test cannot run here. It
    /// runs alongside other labs of the same test binary.
    pub fn new(test: &str) -> Option<Lab> {
        Lab::make(test, false)
    }

    /// A lab for a test that measures timing: it waits until no other lab
    /// of this test binary runs, and none starts until it is dropped.
    pub fn alone(test: &str) -> Option<Lab> {
        Lab::make(test, true)
    }

    fn make(test: &str, alone: bool) -> Option<Lab> {
        let root = nix::unistd::geteuid().is_root();
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
            eprintln!("SKIP {test}: {why}; run as root: `sudo -E cargo test`");
            return None;
        }
        let turn = Turn::take(alone);
        Self::remove_stale();
        Some(Lab {
            pids: Vec::new(),
            namespaces: lagkit_netns::Namespaces::new(),
            _turn: turn,
        })
    }

    /// Deletes `lkt-<pid>-<n>` namespaces whose process is gone.
    fn remove_stale() {
        for name in lagkit_netns::list() {
            let mut parts = name.split('-');
            if parts.next() != Some("lkt") {
                continue;
            }
            let Some(pid) = parts.next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = lagkit_netns::remove(&name);
            }
        }
    }

    /// Creates a fresh namespace with loopback up.
    pub fn netns(&mut self) -> String {
        let name = format!(
            "lkt-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        if let Err(e) = self.namespaces.create(&name) {
            panic!("{e}");
        }
        name
    }

    /// Runs a command; panics with its stderr if it fails.
    pub fn sh(&self, args: &[&str]) -> String {
        run(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs a command; returns its stdout, or which command failed and why.
    pub fn try_sh(&self, args: &[&str]) -> Result<String, CommandError> {
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
        if let Err(e) = lagkit_netns::veth(ns_a, a, ns_b, b) {
            panic!("{e}");
        }
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

    /// A Linux bridge `name` in `ns` (a stand-in switch) with `ports` enslaved, all up.
    pub fn bridge(&self, ns: &str, name: &str, ports: &[String]) {
        self.sh(&["ip", "-n", ns, "link", "add", name, "type", "bridge"]);
        for p in ports {
            self.sh(&["ip", "-n", ns, "link", "set", p, "master", name, "up"]);
        }
        self.sh(&["ip", "-n", ns, "link", "set", name, "up"]);
    }

    /// Gives `ifname` in `ns` the address `cidr` and brings it up (a plain host).
    pub fn host(&self, ns: &str, ifname: &str, cidr: &str) {
        self.sh(&["ip", "-n", ns, "addr", "add", cidr, "dev", ifname]);
        self.sh(&["ip", "-n", ns, "link", "set", ifname, "up"]);
    }

    /// Stops this process at drop.
    pub fn track_pid(&mut self, pid: i32) {
        self.pids.push(pid);
    }
}

impl Drop for Lab {
    /// The processes this lab started get SIGTERM and up to 5 s to clean up
    /// (a bond gives its members back and removes its pins); then its
    /// namespaces go, with anything still running in them.
    fn drop(&mut self) {
        for &pid in &self.pids {
            // A process we started.
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && self.pids.iter().any(|&p| running(p)) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Whether process `pid` exists and has not exited (a child not yet reaped
/// is a zombie: exited).
fn running(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z") | Some("X"))
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

/// Polls `cond` for `duration` and panics with `what` the first time it
/// does not hold: a condition that must stay true, such as a member that
/// must not leave.
pub fn holds_for(what: &str, duration: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    loop {
        assert!(cond(), "{what} stopped holding after {:?}", start.elapsed());
        if start.elapsed() >= duration {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Why a TCP connection of [`tcp_until`] was lost.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// A namespace could not be entered.
    #[error(transparent)]
    Netns(#[from] netns::NetnsError),
    /// A socket operation failed: `op` names it (`bind 10.0.0.2:6600`,
    /// `accept`, `read after 1024 bytes`, ...).
    #[error("{op}: {source}")]
    Io {
        /// The operation.
        op: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A thread of the transfer panicked: the client side, or its server.
    #[error("{0} panicked")]
    Panicked(&'static str),
}

impl TransferError {
    /// For `map_err`: the failed socket operation `op`.
    fn io(op: impl Into<String>) -> impl FnOnce(std::io::Error) -> TransferError {
        let op = op.into();
        move |source| TransferError::Io { op, source }
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
    tcp_transfer_from(server_ns, server, client_ns, None, bytes)
}

/// As [`tcp_transfer`], with the client bound to `src` (IP:port) when given,
/// so a test can choose which hash bucket a flow lands in.
pub fn tcp_transfer_from(
    server_ns: &str,
    server: &str,
    client_ns: &str,
    src: Option<SocketAddr>,
    bytes: u64,
) -> Transfer {
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
        let connect = || -> std::io::Result<TcpStream> {
            match src {
                None => TcpStream::connect_timeout(&server, Duration::from_secs(2)),
                Some(src) => connect_from(src, server),
            }
        };
        let mut s = loop {
            match connect() {
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
    proc_counters(lab, ns, "/proc/net/snmp")
}

/// `/proc/net/netstat` of a namespace (`TcpExt:`, `IpExt:`) as pairs.
pub fn netstat(lab: &Lab, ns: &str) -> Vec<(String, u64)> {
    proc_counters(lab, ns, "/proc/net/netstat")
}

/// One named counter of a namespace, from `/proc/net/snmp` or `/proc/net/netstat`
/// (e.g. `Ip:InReceives`, `TcpExt:TCPDSACKRecv`); 0 if absent.
pub fn counter(lab: &Lab, ns: &str, name: &str) -> u64 {
    let file = if name.starts_with("TcpExt:") || name.starts_with("IpExt:") {
        "/proc/net/netstat"
    } else {
        "/proc/net/snmp"
    };
    proc_counters(lab, ns, file)
        .into_iter()
        .find(|(k, _)| k == name)
        .map_or(0, |(_, v)| v)
}

/// An interface's counter from `/sys/class/net/IF/statistics/NAME` in a namespace.
pub fn link_counter(lab: &Lab, ns: &str, ifname: &str, name: &str) -> u64 {
    let path = format!("/sys/class/net/{ifname}/statistics/{name}");
    lab.nsexec(ns, &["cat", &path]).trim().parse().unwrap_or(0)
}

/// What `ping` reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ping {
    /// Echo requests sent.
    pub transmitted: u64,
    /// Distinct replies received.
    pub received: u64,
    /// Replies received more than once.
    pub duplicates: u64,
}

/// Pings `dst` from namespace `ns` `count` times, 20 ms apart.
pub fn ping(ns: &str, dst: &str, count: u32) -> Ping {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, "ping", "-n", "-q", "-i", "0.02", "-W", "1", "-c",
        ])
        .arg(count.to_string())
        .arg(dst)
        .output()
        .expect("ping runs (iputils-ping installed?)");
    parse_ping(&String::from_utf8_lossy(&out.stdout))
}

/// At most this many echo requests at the end of a ping that was stopped
/// (SIGINT) may still be waiting for their replies: 0.2 s at `-i 0.01`.
pub const PING_IN_FLIGHT: u64 = 20;

/// Parses the output of a ping (without `-q`) that was stopped by SIGINT:
/// the summary, with the requests sent after the last reply not counted as
/// sent when there are at most [`PING_IN_FLIGHT`] of them (they were in
/// flight when it stopped, not lost). Requests without a reply before the
/// last reply are lost, as are all of a longer unanswered tail.
pub fn parse_stopped_ping(text: &str) -> Ping {
    let mut p = parse_ping(text);
    let last = text
        .lines()
        .filter(|l| l.contains(" bytes from "))
        .filter_map(|l| {
            let seq = l.split("icmp_seq=").nth(1)?;
            seq.split_whitespace().next()?.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0);
    let tail = p.transmitted.saturating_sub(last);
    if tail <= PING_IN_FLIGHT {
        p.transmitted -= tail;
    }
    p
}

/// Parses ping's summary line: `N packets transmitted, M received, +D duplicates, ...`.
pub fn parse_ping(text: &str) -> Ping {
    let mut p = Ping {
        transmitted: 0,
        received: 0,
        duplicates: 0,
    };
    if let Some(line) = text.lines().find(|l| l.contains("packets transmitted")) {
        for part in line.split(',') {
            let mut w = part.split_whitespace();
            let n = w
                .next()
                .map(|x| x.trim_start_matches('+'))
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            match w.next() {
                Some("packets") => p.transmitted = n,
                Some("received") => p.received = n,
                Some("duplicates") => p.duplicates = n,
                _ => {}
            }
        }
    }
    p
}

fn proc_counters(lab: &Lab, ns: &str, file: &str) -> Vec<(String, u64)> {
    let text = lab.nsexec(ns, &["cat", file]);
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

/// Runs `flows` TCP connections at once from `client_ns` to `server` in
/// `server_ns`, `bytes` each, checking every byte; returns the transfers.
pub fn tcp_flows(
    server_ns: &str,
    server: &str,
    client_ns: &str,
    flows: u16,
    bytes: u64,
) -> Vec<Transfer> {
    let base: SocketAddr = server.parse().expect("address");
    let handles: Vec<_> = (0..flows)
        .map(|i| {
            let mut addr = base;
            addr.set_port(base.port() + i);
            let (s, c) = (server_ns.to_owned(), client_ns.to_owned());
            std::thread::spawn(move || tcp_transfer(&s, &addr.to_string(), &c, bytes))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("transfer thread"))
        .collect()
}

/// Connects to `dst` from the fixed local address `src` (SO_REUSEADDR set).
pub fn connect_from(src: SocketAddr, dst: SocketAddr) -> std::io::Result<TcpStream> {
    let (SocketAddr::V4(src), SocketAddr::V4(dst)) = (src, dst) else {
        return Err(std::io::Error::other("IPv4 only"));
    };
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let _ = setsockopt(&fd, sockopt::ReuseAddr, &true);
    bind(fd.as_raw_fd(), &SockaddrIn::from(src))?;
    nix::sys::socket::connect(fd.as_raw_fd(), &SockaddrIn::from(dst))?;
    Ok(TcpStream::from(fd))
}

/// Whether a TCP connection attempt from address `src` in namespace `ns`
/// reaches `dst` within `timeout`: answered, by a listener or by a reset
/// from a closed port, proves the path both ways; silence does not.
pub fn reaches_from(ns: &str, src: std::net::Ipv4Addr, dst: SocketAddr, timeout: Duration) -> bool {
    let SocketAddr::V4(dst) = dst else {
        return false;
    };
    let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    netns::run_in(ns, move || {
        let Ok(fd) = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
            None,
        ) else {
            return false;
        };
        let src = SockaddrIn::from(std::net::SocketAddrV4::new(src, 0));
        if bind(fd.as_raw_fd(), &src).is_err() {
            return false;
        }
        match nix::sys::socket::connect(fd.as_raw_fd(), &SockaddrIn::from(dst)) {
            Ok(()) => return true,
            Err(Errno::EINPROGRESS) => {}
            Err(Errno::ECONNREFUSED) => return true,
            Err(_) => return false,
        }
        let mut p = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
        if nix::poll::poll(&mut p, ms) != Ok(1) {
            return false;
        }
        let err = getsockopt(&fd, sockopt::SocketError).unwrap_or(0);
        err == 0 || err == libc::ECONNREFUSED
    })
    .unwrap_or(false)
}

/// `n` TCP connections from `client_ns` to `server` (ports `server.port() + i`)
/// in `server_ns`, sending pseudo-random data until `stop` is set.
/// Each result is the connection's transfer (both ends hashed), or why the
/// connection was lost: a fault campaign counts losses instead of
/// panicking at the first.
pub fn tcp_until(
    server_ns: &str,
    server: &str,
    client_ns: &str,
    n: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Vec<Result<Transfer, TransferError>>> {
    let base: SocketAddr = server.parse().expect("address");
    let (sns, cns) = (server_ns.to_owned(), client_ns.to_owned());
    std::thread::spawn(move || {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let mut addr = base;
                addr.set_port(base.port() + i);
                let (sns, cns, stop) = (sns.clone(), cns.clone(), stop.clone());
                std::thread::spawn(move || stream_until(&sns, addr, &cns, &stop))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or(Err(TransferError::Panicked("thread"))))
            .collect()
    })
}

fn stream_until(
    server_ns: &str,
    server: SocketAddr,
    client_ns: &str,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Transfer, TransferError> {
    let timeout = Some(Duration::from_secs(60));
    let l = netns::run_in(server_ns, || TcpListener::bind(server))?
        .map_err(TransferError::io(format!("bind {server}")))?;
    let srv = std::thread::spawn(move || -> Result<(u64, u64), TransferError> {
        let (mut s, _) = l.accept().map_err(TransferError::io("accept"))?;
        s.set_read_timeout(timeout)
            .map_err(TransferError::io("set read timeout"))?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; 1 << 18];
        let mut n = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) => return Ok((h.digest(), n)),
                Ok(k) => {
                    h.update(&buf[..k]);
                    n += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransferError::io(format!("read after {n} bytes"))(e)),
            }
        }
    });
    let mut s = netns::run_in(client_ns, || {
        TcpStream::connect_timeout(&server, Duration::from_secs(10))
    })?
    .map_err(TransferError::io(format!("connect {server}")))?;
    s.set_write_timeout(timeout)
        .map_err(TransferError::io("set write timeout"))?;
    let start = Instant::now();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d ^ u64::from(server.port());
    let mut sent = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for c in buf.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        s.write_all(&buf).map_err(|source| TransferError::Io {
            op: format!("write after {sent} bytes"),
            source,
        })?;
        h.update(&buf);
        sent += buf.len() as u64;
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(TransferError::io("shutdown"))?;
    let (recv_hash, received) = srv
        .join()
        .map_err(|_| TransferError::Panicked("server"))??;
    Ok(Transfer {
        sent_hash: h.digest(),
        recv_hash,
        sent,
        received,
        elapsed: start.elapsed(),
    })
}

/// Records when slow-protocol frames (LACPDUs, Markers), or any frames a
/// test picks, arrive on an interface, from a packet socket of its own
/// (the bond's socket is not disturbed: every packet socket gets its copy).
pub struct SlowCapture {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    kept: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    handle: Option<std::thread::JoinHandle<Vec<Instant>>>,
}

impl SlowCapture {
    /// Starts capturing LACPDUs on `ifname` in namespace `ns`.
    pub fn start(ns: &str, ifname: &str) -> SlowCapture {
        SlowCapture::start_matching(ns, ifname, |f| {
            f.get(12..15) == Some(&[0x88, 0x09, 0x01][..])
        })
    }

    /// Starts capturing the frames `keep` accepts (whole Ethernet frames)
    /// on `ifname` in namespace `ns`.
    pub fn start_matching(ns: &str, ifname: &str, keep: fn(&[u8]) -> bool) -> SlowCapture {
        use lagkit_dataplane::{Device, PacketConfig, PacketSocket, RxBatch};
        let mut cfg = PacketConfig::new(ifname);
        cfg.promisc = false;
        let sock = netns::run_in(ns, || PacketSocket::open(&cfg))
            .expect("enter namespace")
            .expect("capture socket");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let kept = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (st, n) = (stop.clone(), kept.clone());
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut batch = RxBatch::new(64);
            while !st.load(Ordering::Relaxed) {
                batch.clear();
                if sock.recv(&mut batch).unwrap_or(0) == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                let now = Instant::now();
                for f in batch.iter() {
                    if keep(&f[lagkit_dataplane::vnet::HEADER_LEN..]) {
                        seen.push(now);
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            seen
        });
        SlowCapture {
            stop,
            kept,
            handle: Some(handle),
        }
    }

    /// How many frames were kept so far.
    pub fn count(&self) -> usize {
        self.kept.load(Ordering::Relaxed)
    }

    /// Stops; returns the arrival times of the frames kept.
    pub fn finish(mut self) -> Vec<Instant> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for SlowCapture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The longest gap between consecutive instants (zero with fewer than two).
pub fn longest_gap(times: &[Instant]) -> Duration {
    times
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default()
}

/// Frames a junk flood sends: alternately garbage of an unknown
/// slow-protocol subtype, and LACPDU-shaped frames whose TLVs are junk.
pub fn junk_slow_frames(src_last: u8) -> Vec<Vec<u8>> {
    let head = |len: usize, subtype: u8| {
        let mut f = vec![0xa5u8; len];
        f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
        f[6..12].copy_from_slice(&[0x02, 0x6a, 0x75, 0x6e, 0x6b, src_last]);
        f[12..14].copy_from_slice(&[0x88, 0x09]);
        f[14] = subtype;
        f[15] = 1;
        f
    };
    vec![head(60, 0x77), head(124, 1), head(60, 2), head(124, 0x0a)]
}

/// Sends `frames` round and round on `ifname` in `ns` for `d`, at most
/// `rate` frames per second; returns how many were sent.
pub fn flood(ns: &str, ifname: &str, frames: &[Vec<u8>], rate: u64, d: Duration) -> u64 {
    use lagkit_dataplane::{device::plain_packet, Device, PacketConfig, PacketSocket};
    let mut cfg = PacketConfig::new(ifname);
    cfg.promisc = false;
    let sock = netns::run_in(ns, || PacketSocket::open(&cfg))
        .expect("enter namespace")
        .expect("flood socket");
    let packets: Vec<Vec<u8>> = frames.iter().map(|f| plain_packet(f)).collect();
    let refs: Vec<&[u8]> = (0..64).map(|i| &packets[i % packets.len()][..]).collect();
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < d {
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        if sent >= due {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        sent += sock.send_batch(&refs) as u64;
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_summaries_parse() {
        let dup = "--- 10.0.0.2 ping statistics ---\n10 packets transmitted, 10 received, +9 duplicates, 0% packet loss, time 9012ms\n";
        assert_eq!(
            parse_ping(dup),
            Ping {
                transmitted: 10,
                received: 10,
                duplicates: 9
            }
        );
        let clean = "5 packets transmitted, 4 received, 20% packet loss, time 4005ms\n";
        assert_eq!(
            parse_ping(clean),
            Ping {
                transmitted: 5,
                received: 4,
                duplicates: 0
            }
        );
        assert_eq!(parse_ping("").transmitted, 0);
    }

    /// Replies missing before the last one are lost; a short unanswered
    /// tail was in flight when ping stopped; a long one is lost.
    #[test]
    fn a_stopped_ping_counts_gaps_not_requests_in_flight() {
        let reply = |n: u64| format!("64 bytes from 10.0.0.2: icmp_seq={n} ttl=64 time=0.1 ms\n");
        let run = |replied: &[u64], sent: u64| {
            let mut t: String = replied.iter().map(|&n| reply(n)).collect();
            t += &format!(
                "--- 10.0.0.2 ping statistics ---\n{sent} packets transmitted, {} received, 1% packet loss, time 1ms\n",
                replied.len()
            );
            let p = parse_stopped_ping(&t);
            (p.transmitted, p.received)
        };
        let all: Vec<u64> = (1..=100).collect();
        assert_eq!(run(&all, 100), (100, 100));
        assert_eq!(run(&all, 102), (100, 100), "two in flight");
        let gap: Vec<u64> = (1..=100).filter(|&n| n != 50).collect();
        assert_eq!(run(&gap, 101), (100, 99), "one lost, one in flight");
        assert_eq!(run(&all[..50], 100), (100, 50), "the last 50 lost");
    }
}

/// What one direction of a [`UserWire`] saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireCounts {
    /// Frames read.
    pub frames: u64,
    /// Frames written to the other side.
    pub forwarded: u64,
    /// Frames whose checksum the sender left unfinished
    /// (`TP_STATUS_CSUMNOTREADY`): copied as they are, wrong on the wire.
    pub unfinished_csum: u64,
    /// Frames longer than the MTU (GSO super-frames): the other side
    /// refuses them.
    pub oversize: u64,
}

/// A peer that forwards frames between two interfaces in user space the
/// way a user-space switch does without vnet headers (Open vSwitch's
/// userspace datapath without `userspace-tso-enable`): raw AF_PACKET
/// sockets, every frame copied as read. Stopped on drop.
pub struct UserWire {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    counts: [std::sync::Arc<std::sync::Mutex<WireCounts>>; 2],
    handles: Vec<std::thread::JoinHandle<()>>,
}

/// Waits up to 50 ms for a frame on `fd`, reads it into `buf`: its length
/// and whether its checksum is unfinished, or None.
fn raw_recv(fd: BorrowedFd<'_>, buf: &mut [u8]) -> Option<(usize, bool)> {
    let mut pfd = [PollFd::new(fd, PollFlags::POLLIN)];
    if !matches!(nix::poll::poll(&mut pfd, 50u16), Ok(n) if n > 0) {
        return None;
    }
    match packet::recv_frame(fd, buf) {
        Ok((n, unfinished)) if n > 0 => Some((n, unfinished)),
        _ => None,
    }
}

impl UserWire {
    /// Forwards between `a` and `b` in namespace `ns`, both ways, until dropped.
    pub fn start(ns: &str, a: &str, b: &str) -> UserWire {
        let (sa, sb) = netns::run_in(ns, || {
            (packet::raw_packet_socket(a), packet::raw_packet_socket(b))
        })
        .expect("enter the wire's namespace");
        let sa = std::sync::Arc::new(sa.expect("packet socket on a"));
        let sb = std::sync::Arc::new(sb.expect("packet socket on b"));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let counts: [std::sync::Arc<std::sync::Mutex<WireCounts>>; 2] = Default::default();
        let handles = [(sa.clone(), sb.clone(), &counts[0]), (sb, sa, &counts[1])]
            .into_iter()
            .map(|(from, to, counts)| {
                let (stop, counts) = (stop.clone(), counts.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 1 << 17];
                    while !stop.load(Ordering::Relaxed) {
                        let Some((n, unfinished)) = raw_recv(from.as_fd(), &mut buf) else {
                            continue;
                        };
                        let w = send(to.as_raw_fd(), &buf[..n], MsgFlags::MSG_DONTWAIT);
                        let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
                        c.frames += 1;
                        c.unfinished_csum += u64::from(unfinished);
                        c.oversize += u64::from(n > 1514);
                        c.forwarded += u64::from(matches!(w, Ok(w) if w > 0));
                    }
                })
            })
            .collect();
        UserWire {
            stop,
            counts,
            handles,
        }
    }

    /// What each direction has seen so far (a to b, b to a).
    pub fn counts(&self) -> (WireCounts, WireCounts) {
        let get = |c: &std::sync::Mutex<WireCounts>| *c.lock().unwrap_or_else(|e| e.into_inner());
        (get(&self.counts[0]), get(&self.counts[1]))
    }
}

impl Drop for UserWire {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// What [`flood_random`] sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FloodCount {
    /// Frames the kernel took.
    pub sent: u64,
    /// How long it sent.
    pub elapsed: Duration,
}

impl FloodCount {
    /// Frames per second.
    pub fn rate(&self) -> f64 {
        self.sent as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The frames [`flood_random`] sends, batch by batch: 64-byte frames, each
/// from a new pseudo-random locally administered source MAC (xorshift from
/// `seed`), every other one to broadcast, the rest to unknown unicast
/// addresses; `broadcast_only` sends only broadcast.
pub struct FloodFrames {
    packets: Vec<Vec<u8>>,
    state: u64,
    broadcast_only: bool,
    /// Source addresses cycle over this many values (0: every frame new).
    sources: u64,
    sent: u64,
}

impl FloodFrames {
    /// A batch of `n` frames, rewritten by each [`FloodFrames::next_batch`].
    pub fn new(n: usize, seed: u64, broadcast_only: bool) -> FloodFrames {
        let mut frame = vec![0u8; 60];
        // IEEE 802 local experimental EtherType: no host stack handles it.
        frame[12..14].copy_from_slice(&[0x88, 0xb5]);
        frame[14..].iter_mut().for_each(|b| *b = 0x5a);
        let one = lagkit_dataplane::device::plain_packet(&frame);
        FloodFrames {
            packets: vec![one; n],
            state: seed | 1,
            broadcast_only,
            sources: 0,
            sent: 0,
        }
    }

    /// Source addresses from a pool of `n` instead of new ones each frame.
    pub fn with_sources(mut self, n: u64) -> FloodFrames {
        self.sources = n;
        self
    }

    fn rand(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// New addresses in every frame; the batch to send.
    pub fn next_batch(&mut self) -> Vec<&[u8]> {
        let h = lagkit_dataplane::vnet::HEADER_LEN;
        for k in 0..self.packets.len() {
            let r = self.rand().to_be_bytes();
            self.sent += 1;
            let src = match self.sources {
                0 => [0x02, r[0], r[1], r[2], r[3], r[4]],
                n => {
                    let s = (self.sent % n).to_be_bytes();
                    [0x02, 0x5a, s[4], s[5], s[6], s[7]]
                }
            };
            let dst = if self.broadcast_only || k % 2 == 0 {
                [0xff; 6]
            } else {
                // Unicast (I/G bit clear), locally administered, never learnt.
                [0x06, r[5], r[6], r[7], r[0], r[1]]
            };
            let p = &mut self.packets[k];
            p[h..h + 6].copy_from_slice(&dst);
            p[h + 6..h + 12].copy_from_slice(&src);
        }
        self.packets.iter().map(|p| &p[..]).collect()
    }
}

/// Sends `frames` ([`FloodFrames`]) on `ifname` in `ns` as fast as one thread can
/// (`sendmmsg` batches of 64) until `stop` is set or `max` has passed.
pub fn flood_random(
    ns: &str,
    ifname: &str,
    mut frames: FloodFrames,
    stop: &std::sync::atomic::AtomicBool,
    max: Duration,
) -> FloodCount {
    use lagkit_dataplane::{Device, PacketConfig, PacketSocket};
    let mut cfg = PacketConfig::new(ifname);
    cfg.promisc = false;
    let sock = netns::run_in(ns, || PacketSocket::open(&cfg))
        .expect("enter namespace")
        .expect("flood socket");
    let start = Instant::now();
    let mut sent = 0u64;
    while !stop.load(Ordering::Relaxed) && start.elapsed() < max {
        let batch = frames.next_batch();
        let n = sock.send_batch(&batch) as u64;
        sent += n;
        if n == 0 {
            std::thread::yield_now();
        }
    }
    FloodCount {
        sent,
        elapsed: start.elapsed(),
    }
}
