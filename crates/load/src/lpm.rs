//! LPM (Live Partition Mobility) traffic as seed 002 found it: each
//! migration's mover opens a control connection and then a data connection,
//! with ports allocated one after the other, so control and data always
//! differ by one in their low port bit. With two links and any port-based
//! hash that parity puts every data connection on the same link.
//!
//! Here migration i binds control to client port `base + 2i` and data to
//! `base + 2i + 1`, explicitly, so the pattern is reproducible; the server
//! listens on one control and one data port ([`LpmPorts::Fixed`]) or on
//! sequential pairs ([`LpmPorts::Sequential`], like the destination VIOS in
//! the seed's `netstat`). Data flows client to server in bulk; the control
//! connection carries one 64-byte message each way per interval, and at
//! the end the total the client sent, so the server closes both
//! connections first: the client's fixed ports never sit in TIME_WAIT,
//! and since the client waits for its own FIN to be acknowledged
//! ([`net::close_after_peer`]) a rerun can reuse them as soon as the
//! previous run returns.

use crate::net::{self, Acceptor, GRACE, HANDSHAKE_TIMEOUT};
use crate::netperf::sink;
use crate::pattern;
use crate::report::{ConnError, ConnReport, Cpu, MigrationReport, Report, Role, Shape};
use crate::wire::{Control, Hello, Purpose, Refusal, Trailer};
use crate::{ClientConfig, Kind, LoadError, LpmPorts, ServerConfig};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The ports an LPM server listens on: even indices control, odd data.
pub fn server_ports(port: u16, layout: LpmPorts, migrations: u32) -> Vec<u16> {
    let n = match layout {
        LpmPorts::Fixed => 2,
        LpmPorts::Sequential => 2 * migrations.max(1),
    };
    if port == 0 {
        return vec![0; n as usize];
    }
    (0..n).map(|k| port.wrapping_add(k as u16)).collect()
}

/// The first client port when none is given (`lagkit load client --lpm-base`).
pub const DEFAULT_BASE: u16 = 32788;

/// Client ports of migration `i`: (control, data).
pub fn client_ports(base: u16, i: u32) -> (u16, u16) {
    let c = u32::from(base) + 2 * i;
    (c as u16, (c + 1) as u16)
}

/// Per-migration meeting point of the server's control and data handlers.
#[derive(Default)]
struct Slot {
    received: AtomicU64,
    expected: Mutex<Option<u64>>,
    finished: Mutex<Option<u64>>,
    cv: Condvar,
}

type Registry = Mutex<HashMap<(u64, u32), Arc<Slot>>>;

fn slot(reg: &Registry, run: u64, index: u32) -> Arc<Slot> {
    reg.lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((run, index))
        .or_default()
        .clone()
}

/// Starts an LPM server.
pub(crate) fn start_server(cfg: &ServerConfig) -> Result<Acceptor, LoadError> {
    let ports = server_ports(cfg.port, cfg.lpm_ports, cfg.migrations);
    let reg: Arc<Registry> = Arc::default();
    let handler: Arc<net::Handler> = Arc::new(move |s, li| serve(s, li % 2 == 0, &reg));
    Acceptor::start(Kind::Lpm, cfg.bind, &ports, handler)
}

fn serve(mut s: TcpStream, control_port: bool, reg: &Registry) -> ConnReport {
    let began = Instant::now();
    let want = if control_port {
        Purpose::LpmControl
    } else {
        Purpose::LpmData
    };
    let hello = net::accept_hello(&mut s, |h| {
        if h.purpose != want {
            Err(Refusal::WrongKind)
        } else {
            net::size_ok(h.size, 1)
        }
    });
    let index = hello.as_ref().map(|h| h.index).unwrap_or(0);
    let mut rep = net::conn_report(&s, want, index);
    rep.migration = Some(index);
    let r = hello.and_then(|h| {
        let sl = slot(reg, h.run, h.index);
        if control_port {
            let r = control_server(&mut s, &sl, &mut rep);
            reg.lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&(h.run, h.index));
            r
        } else {
            data_server(&mut s, &h, &sl, &mut rep)
        }
    });
    if let Err(e) = r {
        rep.error = Some(e);
    }
    rep.finish(began.elapsed(), false);
    rep
}

fn read_control(s: &mut TcpStream) -> Result<Option<Control>, ConnError> {
    let mut b = [0u8; Control::LEN];
    let mut got = 0;
    while got < b.len() {
        match s.read(&mut b[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(ConnError::PeerClosed),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ConnError::io("read", &e)),
        }
    }
    Control::parse(&b).map(Some).ok_or(ConnError::Protocol)
}

fn write_control(s: &mut TcpStream, c: Control) -> Result<(), ConnError> {
    s.write_all(&c.emit())
        .map_err(|e| ConnError::io("write", &e))
}

fn control_server(s: &mut TcpStream, sl: &Slot, rep: &mut ConnReport) -> Result<(), ConnError> {
    let _ = s.set_read_timeout(Some(GRACE * 4));
    loop {
        let Some(m) = read_control(s)? else {
            return Err(ConnError::PeerClosed);
        };
        rep.bytes_received += Control::LEN as u64;
        rep.messages += 1;
        if !m.done {
            write_control(
                s,
                Control {
                    seq: m.seq,
                    data: sl.received.load(Ordering::Relaxed),
                    done: false,
                },
            )?;
            rep.bytes_sent += Control::LEN as u64;
            continue;
        }
        *sl.expected.lock().unwrap_or_else(|e| e.into_inner()) = Some(m.data);
        let fin = sl.finished.lock().unwrap_or_else(|e| e.into_inner());
        let (fin, _) = sl
            .cv
            .wait_timeout_while(fin, GRACE, |f| f.is_none())
            .unwrap_or_else(|e| e.into_inner());
        let got = fin.unwrap_or_else(|| sl.received.load(Ordering::Relaxed));
        drop(fin);
        write_control(
            s,
            Control {
                seq: m.seq,
                data: got,
                done: true,
            },
        )?;
        rep.bytes_sent += Control::LEN as u64;
        let _ = s.shutdown(std::net::Shutdown::Write);
        net::drain_to_eof(s, HANDSHAKE_TIMEOUT);
        return Ok(());
    }
}

fn data_server(
    s: &mut TcpStream,
    h: &Hello,
    sl: &Slot,
    rep: &mut ConnReport,
) -> Result<(), ConnError> {
    // Short read timeouts: the end is announced on the control connection,
    // not by EOF, so the loop must look at `expected` while data is idle.
    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    let (mut corrupt, mut first_bad) = (0, None);
    let mut idle_since = Instant::now();
    let mut last = 0;
    let r = sink(
        s,
        h.verify,
        &mut rep.bytes_received,
        &mut corrupt,
        &mut first_bad,
        |n| {
            sl.received.store(n, Ordering::Relaxed);
            if n != last {
                last = n;
                idle_since = Instant::now();
            }
            let expected = *sl.expected.lock().unwrap_or_else(|e| e.into_inner());
            expected.is_some_and(|e| n >= e) || (expected.is_some() && idle_since.elapsed() > GRACE)
        },
    );
    let expected = *sl.expected.lock().unwrap_or_else(|e| e.into_inner());
    {
        let mut fin = sl.finished.lock().unwrap_or_else(|e| e.into_inner());
        *fin = Some(rep.bytes_received);
        sl.cv.notify_all();
    }
    r?;
    rep.messages = rep.bytes_received / u64::from(h.size.max(1));
    if expected.is_none_or(|e| rep.bytes_received < e) {
        // EOF before the client announced its total: it gave up.
        return Err(ConnError::PeerClosed);
    }
    s.write_all(
        &Trailer {
            bytes: rep.bytes_received,
            transactions: rep.messages,
            corrupt,
        }
        .emit(),
    )
    .map_err(|e| ConnError::io("write", &e))?;
    let _ = s.shutdown(std::net::Shutdown::Write);
    net::drain_to_eof(s, HANDSHAKE_TIMEOUT);
    match first_bad {
        Some(at) => Err(ConnError::Corrupt { at }),
        None => Ok(()),
    }
}

/// Runs `cfg.migrations` migrations and reports each.
pub(crate) fn run_client(cfg: &ClientConfig) -> Result<Report, LoadError> {
    let ports = cfg.server_ports();
    let run = net::run_id();
    let c = Arc::new(cfg.clone());
    let c2 = c.clone();
    let setup = move |i: u32| {
        let (cport, dport) = match c.lpm_ports {
            LpmPorts::Fixed => (ports[0], ports[1]),
            LpmPorts::Sequential => (ports[2 * i as usize], ports[2 * i as usize + 1]),
        };
        let ip = c.local.unwrap_or(match c.server {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        });
        let (lc, ld) = client_ports(c.lpm_base, i);
        let hello = |purpose| Hello {
            purpose,
            verify: c.verify,
            nodelay: c.nodelay,
            size: c.size as u32,
            reply: 0,
            index: i,
            sockbuf: c.sockbuf.unwrap_or(0),
            count: 0,
            run,
        };
        // Control first, then data: the order LPM's mover opens them in.
        let ctrl = net::open(
            Some(SocketAddr::new(ip, lc)),
            SocketAddr::new(c.server, cport),
            c.connect_timeout,
            &hello(Purpose::LpmControl),
        )?;
        let data = net::open(
            Some(SocketAddr::new(ip, ld)),
            SocketAddr::new(c.server, dport),
            c.connect_timeout,
            &hello(Purpose::LpmData),
        )?;
        Ok((ctrl, data))
    };
    let body = move |i: u32, (ctrl, data): (TcpStream, TcpStream), start: Instant| {
        migrate(i, ctrl, data, &c2, start)
    };
    let setup_timeout = 2 * (cfg.connect_timeout + HANDSHAKE_TIMEOUT);
    let (start, migs) = net::run_parallel(cfg.migrations, setup_timeout, setup, body)?;
    let mut conns = Vec::new();
    let mut reports = Vec::new();
    for (ctl, dat) in migs {
        reports.push(MigrationReport {
            index: dat.index,
            control_local: ctl.local,
            control_remote: ctl.remote,
            data_local: dat.local,
            data_remote: dat.remote,
            control_bytes: ctl.bytes_sent + ctl.bytes_received,
            data_bytes: dat.bytes_sent,
            elapsed_s: dat.elapsed_s,
            mbit_s: dat.mbit_s,
            error: dat.error.clone().or_else(|| ctl.error.clone()),
        });
        conns.push(ctl);
        conns.push(dat);
    }
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
        kind: Kind::Lpm,
        role: Role::Client,
        parallel: cfg.migrations,
        size: cfg.size,
        reply: Control::LEN,
    };
    let mut rep = Report::total(shape, elapsed, cpu, conns);
    rep.migrations = reports;
    Ok(rep)
}

/// One migration: bulk on `data` from a helper thread while this thread
/// exchanges control messages; returns (control, data) reports.
fn migrate(
    i: u32,
    mut ctrl: TcpStream,
    data: TcpStream,
    cfg: &ClientConfig,
    start: Instant,
) -> (ConnReport, ConnReport) {
    let cpu0 = Cpu::thread();
    let mut crep = net::conn_report(&ctrl, Purpose::LpmControl, i);
    crep.migration = Some(i);
    let mut drep = net::conn_report(&data, Purpose::LpmData, i);
    drep.migration = Some(i);
    let sent = Arc::new(AtomicU64::new(0));
    let writing_done = Arc::new(AtomicBool::new(false));
    let deadline = cfg.duration.map(|d| start + d);
    let (size, limit) = (cfg.size, cfg.messages);
    let data_cut = data.try_clone().ok();
    let (sent2, done2) = (sent.clone(), writing_done.clone());
    let mut drep2 = drep.clone();
    let sender = std::thread::Builder::new()
        .name(format!("lpm-data-{i}"))
        .spawn(move || {
            let cpu0 = Cpu::thread();
            let mut data = data;
            let mut peer_closed = false;
            let r = (|| {
                while limit.is_none_or(|m| drep2.messages < m)
                    && deadline.is_none_or(|d| Instant::now() < d)
                {
                    data.write_all(pattern::slice(drep2.bytes_sent, size))
                        .map_err(|e| ConnError::io("write", &e))?;
                    drep2.bytes_sent += size as u64;
                    drep2.messages += 1;
                    sent2.store(drep2.bytes_sent, Ordering::Relaxed);
                }
                done2.store(true, Ordering::SeqCst);
                data.set_read_timeout(Some(GRACE))
                    .map_err(|e| ConnError::io("setsockopt", &e))?;
                let mut b = [0u8; Trailer::LEN];
                data.read_exact(&mut b)
                    .map_err(|e| ConnError::io("read", &e))?;
                let t = Trailer::parse(&b).ok_or(ConnError::Protocol)?;
                drep2.peer_received = Some(t.bytes);
                peer_closed = net::drain_to_eof(&mut data, HANDSHAKE_TIMEOUT);
                if t.corrupt > 0 {
                    return Err(ConnError::Corrupt { at: 0 });
                }
                if t.bytes != drep2.bytes_sent {
                    return Err(ConnError::Mismatch {
                        sent: drep2.bytes_sent,
                        received: t.bytes,
                    });
                }
                Ok(())
            })();
            done2.store(true, Ordering::SeqCst);
            if let Err(e) = r {
                drep2.error = Some(e);
            }
            drep2.finish(start.elapsed(), false);
            drep2.cpu = Some(Cpu::thread().since(cpu0));
            if peer_closed {
                net::close_after_peer(data, HANDSHAKE_TIMEOUT);
            }
            drep2
        });
    let sender = match sender {
        Ok(h) => h,
        Err(e) => {
            drep.error = Some(ConnError::io("thread", &e));
            crep.error = Some(ConnError::Stopped);
            return (crep, drep);
        }
    };
    let mut peer_closed = false;
    let r = (|| {
        let _ = ctrl.set_read_timeout(Some(GRACE * 2));
        let mut seq = 0u64;
        let mut next = Instant::now();
        loop {
            let done = writing_done.load(Ordering::SeqCst);
            if !done && Instant::now() < next {
                std::thread::sleep(Duration::from_millis(5).min(cfg.lpm_interval));
                continue;
            }
            next = Instant::now() + cfg.lpm_interval;
            write_control(
                &mut ctrl,
                Control {
                    seq,
                    data: sent.load(Ordering::Relaxed),
                    done,
                },
            )?;
            seq += 1;
            crep.bytes_sent += Control::LEN as u64;
            crep.messages += 1;
            let Some(_reply) = read_control(&mut ctrl)? else {
                return Err(ConnError::PeerClosed);
            };
            crep.bytes_received += Control::LEN as u64;
            if done {
                peer_closed = net::drain_to_eof(&mut ctrl, HANDSHAKE_TIMEOUT);
                return Ok(());
            }
        }
    })();
    if let Err(e) = r {
        crep.error = Some(e);
        // Unblock the sender so the migration ends.
        let _ = ctrl.shutdown(std::net::Shutdown::Both);
        if let Some(d) = &data_cut {
            let _ = d.shutdown(std::net::Shutdown::Both);
        }
    }
    let drep = sender.join().unwrap_or_else(|_| {
        let mut d = drep.clone();
        d.error = Some(ConnError::Stopped);
        d
    });
    crep.finish(start.elapsed(), false);
    crep.cpu = Some(Cpu::thread().since(cpu0));
    if peer_closed {
        net::close_after_peer(ctrl, HANDSHAKE_TIMEOUT);
    }
    (crep, drep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_layouts() {
        assert_eq!(client_ports(32788, 0), (32788, 32789));
        assert_eq!(client_ports(32788, 3), (32794, 32795));
        assert_eq!(server_ports(32791, LpmPorts::Fixed, 4), vec![32791, 32792]);
        assert_eq!(
            server_ports(32791, LpmPorts::Sequential, 2),
            vec![32791, 32792, 32793, 32794]
        );
    }
}
