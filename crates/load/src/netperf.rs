//! netperf's TCP_STREAM, TCP_MAERTS and TCP_RR, as seeds 001, 003 and 004
//! ran them: fixed-size messages written as fast as the connection takes
//! them (64 B to 256 KB; HP used 32 KB), the reverse direction, and one
//! request answered by one response at a time. One server serves all three,
//! like `netserver`; each connection's hello says which. N connections run
//! in parallel from one common start (seed 003's 1, 10 and 50 "threads").
//!
//! Stream ends when the client shuts down its side; the server then sends
//! a trailer with what it received, so the client's figure is of delivered
//! bytes and a shortfall is an error. Maerts ends when the client sends a
//! stop byte (or after `messages`); the server then closes. Rr ends like
//! stream, and the trailer counts the transactions the server answered.

use crate::net::{self, Acceptor, GRACE, HANDSHAKE_TIMEOUT};
use crate::pattern;
use crate::report::{ConnError, ConnReport, Cpu, Report, Role, Shape};
use crate::wire::{Hello, Purpose, Refusal, Trailer};
use crate::{ClientConfig, Kind, LoadError, ServerConfig};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts a server for stream, maerts and rr on `cfg.port`.
pub(crate) fn start_server(cfg: &ServerConfig) -> Result<Acceptor, LoadError> {
    let handler: Arc<net::Handler> = Arc::new(|s, _| serve(s));
    Acceptor::start(cfg.kind, cfg.bind, &[cfg.port], handler)
}

fn purpose(kind: Kind) -> Purpose {
    match kind {
        Kind::Maerts => Purpose::Maerts,
        Kind::Rr => Purpose::Rr,
        _ => Purpose::Stream,
    }
}

/// Runs `cfg.conns` connections of `cfg.kind` and reports them.
pub(crate) fn run_client(cfg: &ClientConfig) -> Result<Report, LoadError> {
    let addr = SocketAddr::new(cfg.server, cfg.server_ports()[0]);
    let run = net::run_id();
    let c = Arc::new(cfg.clone());
    let c2 = c.clone();
    let setup = move |i: u32| {
        let hello = Hello {
            purpose: purpose(c.kind),
            verify: c.verify,
            nodelay: c.nodelay,
            size: c.size as u32,
            reply: c.reply as u32,
            index: i,
            sockbuf: c.sockbuf.unwrap_or(0),
            count: if c.kind == Kind::Maerts {
                c.messages.unwrap_or(0)
            } else {
                0
            },
            run,
        };
        let local = c.local.map(|ip| SocketAddr::new(ip, 0));
        net::open(local, addr, c.connect_timeout, &hello)
    };
    let body = move |i: u32, s: TcpStream, start: Instant| {
        let cpu0 = Cpu::thread();
        let deadline = c2.duration.map(|d| start + d);
        let mut rep = net::conn_report(&s, purpose(c2.kind), i);
        let r = match c2.kind {
            Kind::Maerts => maerts_client(s, &c2, deadline, &mut rep),
            Kind::Rr => rr_client(s, &c2, deadline, &mut rep),
            _ => stream_client(s, &c2, deadline, &mut rep),
        };
        if let Err(e) = r {
            rep.error = Some(e);
        }
        rep.finish(start.elapsed(), c2.kind == Kind::Rr);
        rep.cpu = Some(Cpu::thread().since(cpu0));
        rep
    };
    let setup_timeout = cfg.connect_timeout + HANDSHAKE_TIMEOUT;
    let (start, conns) = net::run_parallel(cfg.conns, setup_timeout, setup, body)?;
    let elapsed = conns
        .iter()
        .map(|c| Duration::from_secs_f64(c.elapsed_s))
        .max()
        .unwrap_or_else(|| start.elapsed());
    let cpu = conns
        .iter()
        .filter_map(|c| c.cpu)
        .fold(Cpu::default(), Cpu::plus);
    let shape = Shape {
        kind: cfg.kind,
        role: Role::Client,
        parallel: cfg.conns,
        size: cfg.size,
        reply: if cfg.kind == Kind::Rr { cfg.reply } else { 0 },
    };
    Ok(Report::total(shape, elapsed, cpu, conns))
}

fn more(sent: u64, limit: Option<u64>, deadline: Option<Instant>) -> bool {
    limit.is_none_or(|m| sent < m) && deadline.is_none_or(|d| Instant::now() < d)
}

/// Reads the peer's trailer and its close; checks it against what was sent.
fn read_trailer(s: &mut TcpStream, rep: &mut ConnReport) -> Result<Trailer, ConnError> {
    s.set_read_timeout(Some(GRACE))
        .map_err(|e| ConnError::io("setsockopt", &e))?;
    let mut b = [0u8; Trailer::LEN];
    s.read_exact(&mut b)
        .map_err(|e| ConnError::io("read", &e))?;
    let t = Trailer::parse(&b).ok_or(ConnError::Protocol)?;
    rep.peer_received = Some(t.bytes);
    net::drain_to_eof(s, HANDSHAKE_TIMEOUT);
    if t.corrupt > 0 {
        return Err(ConnError::Corrupt { at: 0 });
    }
    if t.bytes != rep.bytes_sent {
        return Err(ConnError::Mismatch {
            sent: rep.bytes_sent,
            received: t.bytes,
        });
    }
    Ok(t)
}

fn stream_client(
    mut s: TcpStream,
    cfg: &ClientConfig,
    deadline: Option<Instant>,
    rep: &mut ConnReport,
) -> Result<(), ConnError> {
    let size = cfg.size;
    while more(rep.messages, cfg.messages, deadline) {
        s.write_all(pattern::slice(rep.bytes_sent, size))
            .map_err(|e| ConnError::io("write", &e))?;
        rep.bytes_sent += size as u64;
        rep.messages += 1;
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(|e| ConnError::io("shutdown", &e))?;
    read_trailer(&mut s, rep).map(|_| ())
}

fn rr_client(
    mut s: TcpStream,
    cfg: &ClientConfig,
    deadline: Option<Instant>,
    rep: &mut ConnReport,
) -> Result<(), ConnError> {
    let mut buf = vec![0u8; cfg.reply];
    s.set_read_timeout(Some(GRACE))
        .map_err(|e| ConnError::io("setsockopt", &e))?;
    while more(rep.messages, cfg.messages, deadline) {
        s.write_all(pattern::slice(rep.bytes_sent, cfg.size))
            .map_err(|e| ConnError::io("write", &e))?;
        rep.bytes_sent += cfg.size as u64;
        s.read_exact(&mut buf)
            .map_err(|e| ConnError::io("read", &e))?;
        if cfg.verify {
            if let Some(at) = pattern::check(rep.bytes_received, &buf) {
                return Err(ConnError::Corrupt { at });
            }
        }
        rep.bytes_received += buf.len() as u64;
        rep.messages += 1;
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(|e| ConnError::io("shutdown", &e))?;
    let t = read_trailer(&mut s, rep)?;
    if t.transactions != rep.messages {
        return Err(ConnError::Mismatch {
            sent: rep.messages,
            received: t.transactions,
        });
    }
    Ok(())
}

fn maerts_client(
    mut s: TcpStream,
    cfg: &ClientConfig,
    deadline: Option<Instant>,
    rep: &mut ConnReport,
) -> Result<(), ConnError> {
    let mut buf = vec![0u8; cfg.size.max(64 * 1024)];
    let mut stopped = false;
    let mut stop_at = None;
    // Short timeouts while running so the deadline is kept even if data stalls.
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| ConnError::io("setsockopt", &e))?;
    loop {
        if !stopped && deadline.is_some_and(|d| Instant::now() >= d) {
            s.write_all(b"S").map_err(|e| ConnError::io("write", &e))?;
            stopped = true;
            stop_at = Some(Instant::now());
        }
        if stop_at.is_some_and(|t: Instant| t.elapsed() > GRACE) {
            return Err(ConnError::Timeout);
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                if cfg.verify {
                    if let Some(at) = pattern::check(rep.bytes_received, &buf[..k]) {
                        return Err(ConnError::Corrupt { at });
                    }
                }
                rep.bytes_received += k as u64;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(ConnError::io("read", &e)),
        }
    }
    rep.messages = rep.bytes_received / cfg.size as u64;
    if let Some(m) = cfg.messages {
        if !stopped && rep.bytes_received != m * cfg.size as u64 {
            return Err(ConnError::Mismatch {
                sent: m * cfg.size as u64,
                received: rep.bytes_received,
            });
        }
    }
    let size = cfg.size as u64;
    if rep.bytes_received / size * size != rep.bytes_received {
        // The server always ends on a message boundary.
        return Err(ConnError::PeerClosed);
    }
    Ok(())
}

/// Serves one stream, maerts or rr connection.
fn serve(mut s: TcpStream) -> ConnReport {
    let began = Instant::now();
    let hello = net::accept_hello(&mut s, |h| match h.purpose {
        Purpose::Stream | Purpose::Maerts => net::size_ok(h.size, 1),
        Purpose::Rr => net::size_ok(h.size, 1).and(net::size_ok(h.reply, 1)),
        _ => Err(Refusal::WrongKind),
    });
    let (purpose, index) = match &hello {
        Ok(h) => (h.purpose, h.index),
        Err(_) => (Purpose::Stream, 0),
    };
    let mut rep = net::conn_report(&s, purpose, index);
    let r = hello.and_then(|h| match h.purpose {
        Purpose::Maerts => maerts_server(&mut s, &h, &mut rep),
        Purpose::Rr => rr_server(&mut s, &h, &mut rep),
        _ => stream_server(&mut s, &h, &mut rep),
    });
    if let Err(e) = r {
        rep.error = Some(e);
    }
    rep.finish(began.elapsed(), purpose == Purpose::Rr);
    rep
}

fn send_trailer(s: &mut TcpStream, t: Trailer) -> Result<(), ConnError> {
    s.write_all(&t.emit())
        .map_err(|e| ConnError::io("write", &e))?;
    // The server closes first, so TIME_WAIT stays on this side.
    let _ = s.shutdown(std::net::Shutdown::Write);
    net::drain_to_eof(s, HANDSHAKE_TIMEOUT);
    Ok(())
}

/// Reads until EOF, checking the pattern; first wrong offset kept.
pub(crate) fn sink(
    s: &mut TcpStream,
    verify: bool,
    bytes: &mut u64,
    corrupt: &mut u64,
    first_bad: &mut Option<u64>,
    mut until: impl FnMut(u64) -> bool,
) -> Result<(), ConnError> {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        if until(*bytes) {
            return Ok(());
        }
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(k) => {
                if verify {
                    if let Some(at) = pattern::check(*bytes, &buf[..k]) {
                        *corrupt += k as u64;
                        first_bad.get_or_insert(at);
                    }
                }
                *bytes += k as u64;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(ConnError::io("read", &e)),
        }
    }
}

fn stream_server(s: &mut TcpStream, h: &Hello, rep: &mut ConnReport) -> Result<(), ConnError> {
    let (mut corrupt, mut first_bad) = (0, None);
    sink(
        s,
        h.verify,
        &mut rep.bytes_received,
        &mut corrupt,
        &mut first_bad,
        |_| false,
    )?;
    rep.messages = rep.bytes_received / u64::from(h.size.max(1));
    send_trailer(
        s,
        Trailer {
            bytes: rep.bytes_received,
            transactions: rep.messages,
            corrupt,
        },
    )?;
    match first_bad {
        Some(at) => Err(ConnError::Corrupt { at }),
        None => Ok(()),
    }
}

fn rr_server(s: &mut TcpStream, h: &Hello, rep: &mut ConnReport) -> Result<(), ConnError> {
    let mut req = vec![0u8; h.size as usize];
    let (mut corrupt, mut first_bad) = (0u64, None);
    loop {
        // A clean end is EOF exactly at a request boundary.
        let mut got = 0;
        while got < req.len() {
            match s.read(&mut req[got..]) {
                Ok(0) if got == 0 => {
                    send_trailer(
                        s,
                        Trailer {
                            bytes: rep.bytes_received,
                            transactions: rep.messages,
                            corrupt,
                        },
                    )?;
                    return match first_bad {
                        Some(at) => Err(ConnError::Corrupt { at }),
                        None => Ok(()),
                    };
                }
                Ok(0) => return Err(ConnError::PeerClosed),
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ConnError::io("read", &e)),
            }
        }
        if h.verify {
            if let Some(at) = pattern::check(rep.bytes_received, &req) {
                corrupt += req.len() as u64;
                first_bad.get_or_insert(at);
            }
        }
        rep.bytes_received += req.len() as u64;
        s.write_all(pattern::slice(rep.bytes_sent, h.reply as usize))
            .map_err(|e| ConnError::io("write", &e))?;
        rep.bytes_sent += u64::from(h.reply);
        rep.messages += 1;
    }
}

fn maerts_server(s: &mut TcpStream, h: &Hello, rep: &mut ConnReport) -> Result<(), ConnError> {
    let size = h.size as usize;
    // Look for the client's stop byte every ~64 KB written: one cheap
    // non-blocking peek, not one per small message.
    let every = (64 * 1024 / size).max(1);
    let mut until_peek = every;
    let limit = (h.count > 0).then_some(h.count);
    let mut stop = false;
    while !stop && limit.is_none_or(|m| rep.messages < m) {
        s.write_all(pattern::slice(rep.bytes_sent, size))
            .map_err(|e| ConnError::io("write", &e))?;
        rep.bytes_sent += size as u64;
        rep.messages += 1;
        until_peek -= 1;
        if until_peek == 0 {
            until_peek = every;
            match net::peek_now(s) {
                Ok(true) => stop = true,
                Ok(false) => {}
                Err(e) => return Err(ConnError::io("read", &e)),
            }
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    net::drain_to_eof(s, GRACE);
    Ok(())
}
