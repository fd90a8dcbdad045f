//! Sockets for the threaded workloads: connecting (with retries while the
//! server starts, and from an explicit local port when a workload's port
//! pattern matters), the hello/ack exchange on both sides, a start gate so
//! parallel connections begin together, and the [`Acceptor`] that runs a
//! threaded server until it is stopped.

use crate::report::{ConnError, ConnReport, Cpu, Report, Role, Shape};
use crate::wire::{self, Hello, Refusal};
use crate::{Kind, LoadError};
use lagkit_sys::sock;
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{
    bind, getsockopt, recv, setsockopt, socket, sockopt, AddressFamily, MsgFlags, SockFlag,
    SockType, SockaddrStorage,
};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a peer may take to send its hello, ack or trailer.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long after the bound a connection may take to finish.
pub(crate) const GRACE: Duration = Duration::from_secs(15);

/// A run id: distinguishes concurrent client runs at the server.
pub(crate) fn run_id() -> u64 {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ (u64::from(std::process::id()) << 32) ^ SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Waits until `fd` is readable (or writable) or `timeout` passes; true if ready.
pub(crate) fn wait_fd(fd: BorrowedFd<'_>, write: bool, timeout: Duration) -> io::Result<bool> {
    let events = if write {
        PollFlags::POLLOUT
    } else {
        PollFlags::POLLIN
    };
    let ms = PollTimeout::try_from(sock::timeout_ms(timeout)).unwrap_or(PollTimeout::MAX);
    loop {
        let mut p = [PollFd::new(fd, events)];
        match nix::poll::poll(&mut p, ms) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(r) => return Ok(r > 0),
        }
    }
}

/// True if `s` has a byte to read or is at EOF, without blocking or consuming.
pub(crate) fn peek_now(s: &TcpStream) -> io::Result<bool> {
    let mut b = [0u8; 1];
    match recv(
        s.as_raw_fd(),
        &mut b,
        MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT,
    ) {
        Ok(_) => Ok(true),
        Err(Errno::EAGAIN | Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// One connect attempt from `local` (if given) within `timeout`.
///
/// Every client socket gets SO_REUSEADDR, not only those bound to a fixed
/// port: a connection that closed first leaves its port in TIME_WAIT, and
/// without the flag on that socket a later bind to the same port (LPM's
/// sequential client ports lie in the ephemeral range) fails with
/// EADDRINUSE for a minute.
fn connect_once(
    local: Option<SocketAddr>,
    addr: SocketAddr,
    timeout: Duration,
) -> io::Result<TcpStream> {
    let family = if addr.is_ipv4() {
        AddressFamily::Inet
    } else {
        AddressFamily::Inet6
    };
    let fd = socket(
        family,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )?;
    setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    if let Some(local) = local {
        bind(fd.as_raw_fd(), &SockaddrStorage::from(local))?;
    }
    match nix::sys::socket::connect(fd.as_raw_fd(), &SockaddrStorage::from(addr)) {
        Ok(()) => {}
        Err(Errno::EINPROGRESS) => {
            if !wait_fd(fd.as_fd(), true, timeout)? {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            let err = getsockopt(&fd, sockopt::SocketError)?;
            if err != 0 {
                return Err(io::Error::from_raw_os_error(err));
            }
        }
        Err(e) => return Err(e.into()),
    }
    let stream = TcpStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Connects, retrying refusals (a server still starting) until `timeout`.
pub(crate) fn connect(
    local: Option<SocketAddr>,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<TcpStream, LoadError> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match connect_once(local, addr, left.max(Duration::from_millis(100))) {
            Ok(s) => return Ok(s),
            Err(e)
                if Instant::now() < deadline
                    && matches!(
                        e.raw_os_error(),
                        Some(libc::ECONNREFUSED) | Some(libc::EADDRINUSE) | Some(libc::EAGAIN)
                    ) =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(source) => {
                return Err(LoadError::Connect {
                    local,
                    addr,
                    source,
                })
            }
        }
    }
}

/// Applies socket buffer size and TCP_NODELAY.
pub(crate) fn tune(s: &TcpStream, sockbuf: Option<u32>, nodelay: bool) -> io::Result<()> {
    if let Some(b) = sockbuf.filter(|&b| b > 0) {
        let b = b.min(i32::MAX as u32) as usize;
        setsockopt(s, sockopt::SndBuf, &b)?;
        setsockopt(s, sockopt::RcvBuf, &b)?;
    }
    if nodelay {
        s.set_nodelay(true)?;
    }
    Ok(())
}

/// SO_SNDBUF and SO_RCVBUF in effect.
pub(crate) fn bufs(s: &TcpStream) -> (u32, u32) {
    (
        getsockopt(s, sockopt::SndBuf).unwrap_or(0) as u32,
        getsockopt(s, sockopt::RcvBuf).unwrap_or(0) as u32,
    )
}

/// A fresh report for `s` with its addresses and buffer sizes.
pub(crate) fn conn_report(s: &TcpStream, purpose: wire::Purpose, index: u32) -> ConnReport {
    let unspec = SocketAddr::from(([0, 0, 0, 0], 0));
    let mut r = ConnReport::new(
        purpose,
        index,
        s.local_addr().unwrap_or(unspec),
        s.peer_addr().unwrap_or(unspec),
    );
    (r.sndbuf, r.rcvbuf) = bufs(s);
    r
}

/// Client side of a connection's setup: connect, tune, hello, ack.
pub(crate) fn open(
    local: Option<SocketAddr>,
    addr: SocketAddr,
    connect_timeout: Duration,
    hello: &Hello,
) -> Result<TcpStream, LoadError> {
    let mut s = connect(local, addr, connect_timeout)?;
    let setup = |source| LoadError::Setup { addr, source };
    let sockbuf = (hello.sockbuf > 0).then_some(hello.sockbuf);
    tune(&s, sockbuf, hello.nodelay).map_err(setup)?;
    s.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).map_err(setup)?;
    s.write_all(&hello.emit()).map_err(setup)?;
    let mut ack = [0u8; 8];
    s.read_exact(&mut ack).map_err(setup)?;
    wire::parse_ack(&ack).map_err(|why| LoadError::Refused { addr, why })?;
    s.set_read_timeout(None).map_err(setup)?;
    Ok(s)
}

/// Server side of a connection's setup: read the hello, ask `accept`
/// whether to serve it, answer. A refused or garbled hello is an error.
pub(crate) fn accept_hello(
    s: &mut TcpStream,
    accept: impl Fn(&Hello) -> Result<(), Refusal>,
) -> Result<Hello, ConnError> {
    s.set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|e| ConnError::io("setsockopt", &e))?;
    let mut b = [0u8; Hello::LEN];
    s.read_exact(&mut b)
        .map_err(|e| ConnError::io("read", &e))?;
    let verdict = match Hello::parse(&b) {
        Ok(h) => accept(&h).map(|()| h),
        Err(_) => Err(Refusal::BadHello),
    };
    s.write_all(&wire::emit_ack(verdict.map(|_| ())))
        .map_err(|e| ConnError::io("write", &e))?;
    s.set_read_timeout(None)
        .map_err(|e| ConnError::io("setsockopt", &e))?;
    let hello = verdict.map_err(|why| ConnError::Refused { why })?;
    let sockbuf = (hello.sockbuf > 0).then_some(hello.sockbuf);
    tune(s, sockbuf, hello.nodelay).map_err(|e| ConnError::io("setsockopt", &e))?;
    Ok(hello)
}

/// Checks a server-side message size.
pub(crate) fn size_ok(size: u32, min: usize) -> Result<(), Refusal> {
    if (min..=crate::MAX_SIZE).contains(&(size as usize)) {
        Ok(())
    } else {
        Err(Refusal::BadSize)
    }
}

/// Reads until EOF or `timeout`, discarding; true on a clean EOF.
pub(crate) fn drain_to_eof(s: &mut TcpStream, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return false;
        }
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// `TCP_CLOSE` from linux/tcp_states.h (libc does not export the TCP states).
const TCP_CLOSE: u8 = 7;

/// Closes a connection the peer has already closed (its EOF was read) and
/// returns once the kernel has forgotten it, or after `timeout`.
///
/// Closing second leaves no TIME_WAIT on this side, but the socket still
/// holds its address pair in LAST_ACK until the peer acknowledges our FIN;
/// until then a new connection between the same two ports fails with
/// EADDRNOTAVAIL. Sending the FIN with the descriptor still open and
/// waiting for the socket to reach CLOSE makes a fixed local port (LPM's)
/// free again when the run returns.
pub(crate) fn close_after_peer(s: TcpStream, timeout: Duration) {
    if s.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        match sock::tcp_info(&s).map(|i| i.tcpi_state) {
            Ok(TCP_CLOSE) | Err(_) => return,
            // The ACK crosses the wire in one round trip; look often.
            Ok(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// Lets parallel connections set up, then start together (or not at all).
pub(crate) struct Gate {
    state: Mutex<Option<Option<Instant>>>,
    cv: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Gate {
        Gate {
            state: Mutex::new(None),
            cv: Condvar::new(),
        }
    }

    /// Opens the gate: `Some(start)` to go, `None` to abort.
    pub(crate) fn open(&self, start: Option<Instant>) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *g = Some(start);
        self.cv.notify_all();
    }

    /// Blocks until opened; the common start time, or None to abort.
    pub(crate) fn wait(&self) -> Option<Instant> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(v) = *g {
                return v;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Runs `n` workers on threads: each sets up (`setup`), all wait at a gate,
/// then run (`body`) from one common start. If any setup fails, none runs
/// and the first error is returned. Returns the start and each result.
pub(crate) fn run_parallel<S, R>(
    n: u32,
    setup_timeout: Duration,
    setup: impl Fn(u32) -> Result<S, LoadError> + Send + Sync + 'static,
    body: impl Fn(u32, S, Instant) -> R + Send + Sync + 'static,
) -> Result<(Instant, Vec<R>), LoadError>
where
    S: Send + 'static,
    R: Send + 'static,
{
    let gate = Arc::new(Gate::new());
    let setup = Arc::new(setup);
    let body = Arc::new(body);
    let (tx, rx) = mpsc::channel::<(u32, Result<(), LoadError>)>();
    let mut handles = Vec::new();
    let mut spawn_err = None;
    for i in 0..n {
        let (gate, setup, body, tx) = (gate.clone(), setup.clone(), body.clone(), tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("load-{i}"))
            .spawn(move || {
                let s = match setup(i) {
                    Ok(s) => {
                        let _ = tx.send((i, Ok(())));
                        s
                    }
                    Err(e) => {
                        let _ = tx.send((i, Err(e)));
                        return None;
                    }
                };
                let start = gate.wait()?;
                Some(body(i, s, start))
            });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                spawn_err = Some(LoadError::Thread(e));
                break;
            }
        }
    }
    drop(tx);
    let mut first_err = spawn_err;
    let deadline = Instant::now() + setup_timeout;
    let mut ready = 0;
    while first_err.is_none() && ready < handles.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, Ok(()))) => ready += 1,
            Ok((_, Err(e))) => first_err = Some(e),
            Err(_) => {
                first_err = Some(LoadError::Setup {
                    addr: SocketAddr::from(([0, 0, 0, 0], 0)),
                    source: io::Error::new(
                        io::ErrorKind::TimedOut,
                        "connections not set up in time",
                    ),
                })
            }
        }
    }
    if let Some(e) = first_err {
        gate.open(None);
        for h in handles {
            let _ = h.join();
        }
        return Err(e);
    }
    let start = Instant::now();
    gate.open(Some(start));
    let mut out = Vec::with_capacity(handles.len());
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Some(r)) => out.push(r),
            Ok(None) | Err(_) => {
                return Err(LoadError::Worker {
                    index: i as u32,
                    why: "connection thread failed".into(),
                })
            }
        }
    }
    Ok((start, out))
}

/// Serves one accepted connection; `listener` is the index of the port it came in on.
pub(crate) type Handler = dyn Fn(TcpStream, usize) -> ConnReport + Send + Sync;

struct Shared {
    stop: AtomicBool,
    done: Mutex<Vec<ConnReport>>,
    open: Mutex<HashMap<u64, TcpStream>>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    span: Mutex<(Option<Instant>, Option<Instant>)>,
}

/// A threaded server: listeners polled by one thread, a thread per connection.
pub(crate) struct Acceptor {
    kind: Kind,
    ports: Vec<u16>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Acceptor {
    /// Listens on `bind:port` for each port and serves with `handler`.
    pub(crate) fn start(
        kind: Kind,
        bind: IpAddr,
        ports: &[u16],
        handler: Arc<Handler>,
    ) -> Result<Acceptor, LoadError> {
        let mut listeners = Vec::new();
        for &p in ports {
            let addr = SocketAddr::new(bind, p);
            let l = TcpListener::bind(addr).map_err(|source| LoadError::Listen { addr, source })?;
            l.set_nonblocking(true)
                .map_err(|source| LoadError::Listen { addr, source })?;
            listeners.push(l);
        }
        let ports = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()).unwrap_or(0))
            .collect();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            done: Mutex::new(Vec::new()),
            open: Mutex::new(HashMap::new()),
            handles: Mutex::new(Vec::new()),
            span: Mutex::new((None, None)),
        });
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("load-{kind}-accept"))
            .spawn(move || accept_loop(listeners, sh, handler))
            .map_err(LoadError::Thread)?;
        Ok(Acceptor {
            kind,
            ports,
            shared,
            thread: Some(thread),
        })
    }

    pub(crate) fn ports(&self) -> Vec<u16> {
        self.ports.clone()
    }

    /// Stops, cuts open connections, and reports all served.
    pub(crate) fn stop(mut self) -> Report {
        self.shutdown();
        let conns = std::mem::take(&mut *lock(&self.shared.done));
        let (first, last) = *lock(&self.shared.span);
        let elapsed = match (first, last) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        };
        let cpu = conns
            .iter()
            .filter_map(|c| c.cpu)
            .fold(Cpu::default(), Cpu::plus);
        let n = conns.len() as u32;
        let shape = Shape {
            kind: self.kind,
            role: Role::Server,
            parallel: n,
            size: 0,
            reply: 0,
        };
        Report::total(shape, elapsed, cpu, conns)
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Taking a connection out of `open` marks it as cut (see accept_loop).
        for (_, s) in lock(&self.shared.open).drain() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        let handles = std::mem::take(&mut *lock(&self.shared.handles));
        for h in handles {
            let _ = h.join();
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn accept_loop(listeners: Vec<TcpListener>, sh: Arc<Shared>, handler: Arc<Handler>) {
    let mut next_id = 0u64;
    let mut fds: Vec<PollFd<'_>> = listeners
        .iter()
        .map(|l| PollFd::new(l.as_fd(), PollFlags::POLLIN))
        .collect();
    while !sh.stop.load(Ordering::SeqCst) {
        match nix::poll::poll(&mut fds, 100u16) {
            Ok(r) if r > 0 => {}
            _ => continue,
        }
        for (li, l) in listeners.iter().enumerate() {
            // Unknown revents bits (None) are still an event.
            if !fds[li].any().unwrap_or(true) {
                continue;
            }
            while let Ok((s, peer)) = l.accept() {
                let _ = s.set_nonblocking(false);
                let id = next_id;
                next_id += 1;
                let tracked = match s.try_clone() {
                    Ok(c) => lock(&sh.open).insert(id, c).is_none(),
                    Err(_) => false,
                };
                let (sh2, h2) = (sh.clone(), handler.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("load-conn-{id}"))
                    .spawn(move || {
                        let began = Instant::now();
                        {
                            let mut span = lock(&sh2.span);
                            if span.0.is_none() {
                                span.0 = Some(began);
                            }
                        }
                        let cpu0 = Cpu::thread();
                        let mut rep = h2(s, li);
                        rep.cpu = Some(Cpu::thread().since(cpu0));
                        // Stopped only if the stop cut this connection and
                        // the error is one a cut causes: a refusal or a
                        // corrupt stream sent before the stop stays itself.
                        let cut = tracked && lock(&sh2.open).remove(&id).is_none();
                        if cut && rep.error.as_ref().is_some_and(ConnError::may_be_cut) {
                            rep.error = Some(ConnError::Stopped);
                        }
                        if let Some(e) = &rep.error {
                            tracing::warn!(local = %rep.local, remote = %rep.remote, "connection: {e}");
                        } else {
                            tracing::info!(
                                local = %rep.local, remote = %rep.remote,
                                "{:?} done: {} B in, {} B out, {:.1} Mbit/s",
                                rep.purpose, rep.bytes_received, rep.bytes_sent, rep.mbit_s
                            );
                        }
                        lock(&sh2.span).1 = Some(Instant::now());
                        lock(&sh2.done).push(rep);
                    });
                match spawned {
                    Ok(h) => {
                        let mut hs = lock(&sh.handles);
                        hs.retain(|h| !h.is_finished());
                        hs.push(h);
                    }
                    Err(e) => {
                        tracing::warn!(%peer, "cannot start a connection thread: {e}");
                        lock(&sh.open).remove(&id);
                    }
                }
            }
        }
    }
}
