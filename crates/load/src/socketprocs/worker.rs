//! One socketprocs process: an event loop over its connections (and its
//! stdin, where the parent says go or stop) with the chosen wait method.
//!
//! With `select` and level-triggered epoll the sockets block, as in the
//! paper: each readiness gets one `recv`, and a complete message is
//! answered with one blocking send. With edge-triggered epoll the sockets
//! are non-blocking and every event is drained until `EAGAIN`, since an
//! edge is reported only once.

use super::{FromWorker, Job};
use crate::net::{self, GRACE};
use crate::pattern;
use crate::poller::{Event, Poller};
use crate::report::{mbit, ConnError, ConnReport, Cpu, ProcReport};
use crate::wire::{self, Hello, Purpose, Refusal};
use crate::{ClientConfig, Method};
use lagkit_sys::proc::{self, Signal};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// Entry point of a worker started with [`crate::Spawn::Exec`]: `config`
/// is the JSON the parent passed as the last argument; the parent talks to
/// this process over its stdin and stdout. Returns the exit status.
pub fn worker_main(config: &str) -> i32 {
    match serde_json::from_str::<Job>(config) {
        Ok(job) => run(&job),
        Err(e) => {
            say(&FromWorker::Failed {
                why: format!("bad worker configuration: {e}"),
            });
            2
        }
    }
}

/// Writes one JSON line to fd 1 without std's stdout (whose lock a forked
/// child must not touch).
fn say(m: &FromWorker) {
    if let Ok(mut line) = serde_json::to_vec(m) {
        line.push(b'\n');
        let _ = proc::write_stdout_all(&line);
    }
}

/// Reads what the parent sent on fd 0: None at EOF (the parent is gone).
fn hear() -> Option<String> {
    let mut buf = [0u8; 64];
    loop {
        match proc::read_stdin(&mut buf) {
            Ok(0) => return None,
            Ok(k) => return Some(String::from_utf8_lossy(&buf[..k]).into_owned()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

pub(super) fn run(job: &Job) -> i32 {
    // Only the parent decides when a worker stops (it forwards Ctrl-C and
    // SIGTERM as `stop`, so every worker still reports); if the parent
    // dies, stdin reaches EOF and the worker stops anyway.
    let _ = proc::ignore_signal(Signal::SIGINT);
    let _ = proc::ignore_signal(Signal::SIGTERM);
    match job {
        Job::Server {
            index,
            bind,
            port,
            method,
        } => serve(*index, *bind, *port, *method),
        Job::Client {
            index,
            cfg,
            ports,
            run,
        } => client(*index, cfg, ports, *run),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Server: reading the client's hello.
    Hello,
    /// Server: sending the ack (then `Recv`) or a refusal (then close).
    Ack { refused: bool },
    /// Reading a message (server) or a reply (client).
    Recv,
    /// Writing a reply (server) or a message (client).
    Send,
    /// Finished cleanly.
    Done,
}

struct Conn {
    s: TcpStream,
    server: bool,
    nonblocking: bool,
    verify: bool,
    phase: Phase,
    buf: Vec<u8>,
    got: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    rep: ConnReport,
    began: Instant,
    ended: Option<Instant>,
}

/// What a client connection should do after a complete reply.
struct Plan {
    limit: Option<u64>,
    deadline: Option<Instant>,
    stopping: bool,
}

impl Conn {
    fn new(s: TcpStream, server: bool, method: Method, index: u32, process: u32) -> Conn {
        let mut rep = net::conn_report(&s, Purpose::Socketprocs, index);
        rep.process = Some(process);
        Conn {
            s,
            server,
            nonblocking: method == Method::EpollEt,
            verify: true,
            phase: if server { Phase::Hello } else { Phase::Send },
            buf: vec![0; if server { Hello::LEN } else { 0 }],
            got: 0,
            wbuf: Vec::new(),
            wpos: 0,
            rep,
            began: Instant::now(),
            ended: None,
        }
    }

    fn fd(&self) -> RawFd {
        self.s.as_raw_fd()
    }

    /// Client: queue the next message.
    fn queue_message(&mut self, size: usize) {
        self.wbuf.clear();
        self.wbuf
            .extend_from_slice(pattern::slice(self.rep.bytes_sent, size));
        self.wpos = 0;
        self.phase = Phase::Send;
    }

    /// A complete hello (server), message (server) or reply (client).
    fn on_full(&mut self, plan: &Plan) -> Result<(), ConnError> {
        match self.phase {
            Phase::Hello => {
                let mut b = [0u8; Hello::LEN];
                b.copy_from_slice(&self.buf);
                self.got = 0;
                let verdict = match Hello::parse(&b) {
                    Ok(h) if h.purpose != Purpose::Socketprocs => Err(Refusal::WrongKind),
                    Ok(h) => net::size_ok(h.size, 1).map(|()| h),
                    Err(_) => Err(Refusal::BadHello),
                };
                self.wbuf = wire::emit_ack(verdict.map(|_| ())).to_vec();
                self.wpos = 0;
                match verdict {
                    Ok(h) => {
                        self.verify = h.verify;
                        let sockbuf = (h.sockbuf > 0).then_some(h.sockbuf);
                        let _ = net::tune(&self.s, sockbuf, h.nodelay);
                        (self.rep.sndbuf, self.rep.rcvbuf) = net::bufs(&self.s);
                        self.rep.index = h.index;
                        self.buf = vec![0; h.size as usize];
                        self.phase = Phase::Ack { refused: false };
                    }
                    Err(why) => {
                        self.rep.error = Some(ConnError::Refused { why });
                        self.phase = Phase::Ack { refused: true };
                    }
                }
            }
            Phase::Recv => {
                let at = self.rep.bytes_received - self.buf.len() as u64;
                if self.verify {
                    if let Some(bad) = pattern::check(at, &self.buf) {
                        return Err(ConnError::Corrupt { at: bad });
                    }
                }
                self.got = 0;
                if self.server {
                    // Reply with exactly what came in.
                    std::mem::swap(&mut self.buf, &mut self.wbuf);
                    self.buf.resize(self.wbuf.len(), 0);
                    self.wpos = 0;
                    self.phase = Phase::Send;
                } else {
                    self.rep.messages += 1;
                    let more = !plan.stopping
                        && plan.limit.is_none_or(|m| self.rep.messages < m)
                        && plan.deadline.is_none_or(|d| Instant::now() < d);
                    if more {
                        self.queue_message(self.buf.len());
                    } else {
                        self.phase = Phase::Done;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A complete write.
    fn on_sent(&mut self) -> Result<(), ConnError> {
        match self.phase {
            Phase::Ack { refused: true } => {
                return Err(self.rep.error.clone().unwrap_or(ConnError::Protocol))
            }
            Phase::Ack { refused: false } => {
                // Payload timing starts after the handshake.
                self.began = Instant::now();
                self.phase = Phase::Recv;
            }
            Phase::Send => {
                if self.server {
                    self.rep.messages += 1;
                }
                self.phase = Phase::Recv;
            }
            _ => {}
        }
        Ok(())
    }

    /// Makes what progress the socket allows; Ok(true) when finished cleanly.
    fn drive(&mut self, mut readable: bool, plan: &Plan) -> Result<bool, ConnError> {
        loop {
            match self.phase {
                Phase::Done => return Ok(true),
                Phase::Hello | Phase::Recv => {
                    // Blocking sockets: one recv per readiness, as a
                    // select or pollset loop does.
                    if !self.nonblocking && !readable {
                        return Ok(false);
                    }
                    let want = self.buf.len();
                    match self.s.read(&mut self.buf[self.got..want]) {
                        Ok(0) => {
                            return if self.server && self.phase == Phase::Recv && self.got == 0 {
                                Ok(true)
                            } else {
                                Err(ConnError::PeerClosed)
                            };
                        }
                        Ok(k) => {
                            self.got += k;
                            if self.phase == Phase::Recv {
                                self.rep.bytes_received += k as u64;
                            }
                            readable = false;
                            if self.got == want {
                                self.on_full(plan)?;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(ConnError::io("recv", &e)),
                    }
                }
                Phase::Ack { .. } | Phase::Send => {
                    let counted = self.phase == Phase::Send;
                    match self.s.write(&self.wbuf[self.wpos..]) {
                        Ok(k) => {
                            self.wpos += k;
                            if counted {
                                self.rep.bytes_sent += k as u64;
                            }
                            if self.wpos == self.wbuf.len() {
                                self.on_sent()?;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(ConnError::io("send", &e)),
                    }
                }
            }
        }
    }

    /// The interval its payload moved in: (first message, end).
    fn span(&self) -> (Instant, Instant) {
        (self.began, self.ended.unwrap_or_else(Instant::now))
    }

    fn close(mut self, error: Option<ConnError>, transactional: bool) -> ConnReport {
        let end = self.ended.unwrap_or_else(Instant::now);
        if error.is_some() {
            self.rep.error = error;
        }
        self.rep
            .finish(end.saturating_duration_since(self.began), transactional);
        self.rep
    }
}

fn proc_report(
    index: u32,
    port: Option<u16>,
    elapsed: Duration,
    cpu: Cpu,
    connections: Vec<ConnReport>,
) -> ProcReport {
    let secs = elapsed.as_secs_f64();
    let bytes_sent: u64 = connections.iter().map(|c| c.bytes_sent).sum();
    let bytes_received: u64 = connections.iter().map(|c| c.bytes_received).sum();
    ProcReport {
        index,
        pid: std::process::id(),
        port,
        elapsed_s: secs,
        bytes_sent,
        bytes_received,
        transactions: connections.iter().map(|c| c.messages).sum(),
        mbit_s: mbit(bytes_sent + bytes_received, secs),
        cpu,
        errors: connections.iter().filter(|c| c.error.is_some()).count() as u64,
        connections,
    }
}

const STDIN: RawFd = 0;

fn serve(index: u32, bind: IpAddr, port: u16, method: Method) -> i32 {
    let fail = |why: String| {
        say(&FromWorker::Failed { why });
        1
    };
    let addr = SocketAddr::new(bind, port);
    let listener = match TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
    };
    let mut poller = match Poller::new(method) {
        Ok(p) => p,
        Err(e) => return fail(format!("cannot create the poller: {e}")),
    };
    let lfd = listener.as_raw_fd();
    if let Err(e) = listener
        .set_nonblocking(true)
        .and_then(|()| poller.add(lfd))
        .and_then(|()| poller.add(STDIN))
    {
        return fail(format!("cannot watch the listener: {e}"));
    }
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    say(&FromWorker::Ready { port });

    let plan = Plan {
        limit: None,
        deadline: None,
        stopping: false,
    };
    let cpu0 = Cpu::process();
    let mut conns: HashMap<RawFd, Conn> = HashMap::new();
    let mut done: Vec<ConnReport> = Vec::new();
    let mut spans: Vec<(Instant, Instant)> = Vec::new();
    let mut events = Vec::new();
    let mut stop = false;
    while !stop {
        if let Err(e) = poller.wait(Duration::from_millis(200), &mut events) {
            say(&FromWorker::Failed {
                why: format!("wait: {e}"),
            });
            break;
        }
        for &Event { fd, read, write } in &events {
            if fd == STDIN {
                match hear() {
                    None => stop = true,
                    Some(s) if s.contains("stop") => stop = true,
                    Some(_) => {}
                }
            } else if fd == lfd {
                loop {
                    match listener.accept() {
                        Ok((s, _)) => {
                            let nonblocking = method == Method::EpollEt;
                            if s.set_nonblocking(nonblocking).is_err() {
                                continue;
                            }
                            let c = Conn::new(s, true, method, 0, index);
                            let cfd = c.fd();
                            if let Err(e) = poller.add(cfd) {
                                done.push(c.close(Some(ConnError::io("poll", &e)), true));
                                continue;
                            }
                            conns.insert(cfd, c);
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            } else if let Some(c) = conns.get_mut(&fd) {
                let _ = write;
                let r = c.drive(read, &plan);
                if !matches!(r, Ok(false)) {
                    if let Some(mut c) = conns.remove(&fd) {
                        poller.remove(fd);
                        c.ended = Some(Instant::now());
                        spans.push(c.span());
                        done.push(c.close(r.err(), true));
                    }
                }
            }
        }
    }
    for (fd, mut c) in conns.drain() {
        poller.remove(fd);
        c.ended = Some(Instant::now());
        if c.rep.bytes_received > 0 {
            spans.push(c.span());
        }
        // Open but idle between messages is not an error; mid-message is.
        let err = (c.phase != Phase::Recv || c.got != 0).then_some(ConnError::Stopped);
        done.push(c.close(err, true));
    }
    // From the first connection's first message to the last one's end.
    let first = spans.iter().map(|s| s.0).min();
    let last = spans.iter().map(|s| s.1).max();
    let elapsed = match (first, last) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    };
    let cpu = Cpu::process().since(cpu0);
    say(&FromWorker::Report {
        report: proc_report(index, Some(port), elapsed, cpu, done),
    });
    0
}

fn client(index: u32, cfg: &ClientConfig, ports: &[u16], run: u64) -> i32 {
    let fail = |why: String| {
        say(&FromWorker::Failed { why });
        1
    };
    let mut poller = match Poller::new(cfg.method) {
        Ok(p) => p,
        Err(e) => return fail(format!("cannot create the poller: {e}")),
    };
    let local = cfg.local.map(|ip| SocketAddr::new(ip, 0));
    let mut conns: HashMap<RawFd, Conn> = HashMap::new();
    for (j, &port) in ports.iter().enumerate() {
        let hello = Hello {
            purpose: Purpose::Socketprocs,
            verify: cfg.verify,
            nodelay: cfg.nodelay,
            size: cfg.size as u32,
            reply: cfg.size as u32,
            index: index * ports.len() as u32 + j as u32,
            sockbuf: cfg.sockbuf.unwrap_or(0),
            count: 0,
            run,
        };
        let addr = SocketAddr::new(cfg.server, port);
        let s = match net::open(local, addr, cfg.connect_timeout, &hello) {
            Ok(s) => s,
            Err(e) => return fail(e.to_string()),
        };
        if let Err(e) = s.set_nonblocking(cfg.method == Method::EpollEt) {
            return fail(format!("{addr}: {e}"));
        }
        let mut c = Conn::new(s, false, cfg.method, hello.index, index);
        c.verify = cfg.verify;
        c.buf = vec![0; cfg.size];
        conns.insert(c.fd(), c);
    }
    say(&FromWorker::Ready { port: 0 });
    loop {
        match hear() {
            None => return 0,
            Some(s) if s.contains("go") => break,
            Some(s) if s.contains("stop") => return 0,
            Some(_) => {}
        }
    }
    let start = Instant::now();
    let cpu0 = Cpu::process();
    let mut plan = Plan {
        limit: cfg.messages,
        deadline: cfg.duration.map(|d| start + d),
        stopping: false,
    };
    let mut done: Vec<ConnReport> = Vec::new();
    if let Err(e) = poller.add(STDIN) {
        return fail(format!("cannot watch stdin: {e}"));
    }
    // Register and send the first message on every connection.
    let fds: Vec<RawFd> = conns.keys().copied().collect();
    for fd in fds {
        let Some(c) = conns.get_mut(&fd) else {
            continue;
        };
        c.began = start;
        c.queue_message(cfg.size);
        let r = poller
            .add(fd)
            .map_err(|e| ConnError::io("poll", &e))
            .and_then(|()| c.drive(false, &plan));
        if let Err(e) = r {
            if let Some(c) = conns.remove(&fd) {
                poller.remove(fd);
                done.push(c.close(Some(e), true));
            }
        }
    }
    let mut events = Vec::new();
    let mut last_progress = Instant::now();
    while !conns.is_empty() {
        let now = Instant::now();
        let wait = match plan.deadline {
            Some(d) if d > now => (d - now).min(Duration::from_millis(100)),
            _ => Duration::from_millis(100),
        };
        if let Err(e) = poller.wait(wait, &mut events) {
            for (_, c) in conns.drain() {
                done.push(c.close(Some(ConnError::io("wait", &e)), true));
            }
            break;
        }
        for &Event { fd, read, .. } in &events {
            if fd == STDIN {
                if !matches!(hear(), Some(s) if !s.contains("stop")) {
                    plan.stopping = true;
                }
                continue;
            }
            let Some(c) = conns.get_mut(&fd) else {
                continue;
            };
            last_progress = Instant::now();
            let r = c.drive(read, &plan);
            if !matches!(r, Ok(false)) {
                if let Some(mut c) = conns.remove(&fd) {
                    poller.remove(fd);
                    c.ended = Some(Instant::now());
                    done.push(c.close(r.err(), true));
                }
            }
        }
        // A connection that stalls past the bound (or, with only a count,
        // makes no progress for the grace period) is given up.
        let late = plan.deadline.is_some_and(|d| Instant::now() > d + GRACE)
            || last_progress.elapsed() > GRACE;
        if late {
            for (fd, c) in conns.drain() {
                poller.remove(fd);
                done.push(c.close(Some(ConnError::Timeout), true));
            }
        }
    }
    let elapsed = done
        .iter()
        .map(|c| Duration::from_secs_f64(c.elapsed_s))
        .max()
        .unwrap_or_else(|| start.elapsed());
    let cpu = Cpu::process().since(cpu0);
    done.sort_by_key(|c| c.index);
    say(&FromWorker::Report {
        report: proc_report(index, None, elapsed, cpu, done),
    });
    0
}
