//! Every workload over loopback, short runs: exact byte and transaction
//! counts on both ends, the N×N connection pattern of socketprocs with each
//! wait method, LPM's sequential ports, errors as values, and reports that
//! survive JSON.

#![forbid(unsafe_code)]

use lagkit_load::{
    run_client, start_server, ClientConfig, ConnError, Kind, LoadError, LpmPorts, Method, Purpose,
    Report, ServerConfig,
};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

const LO: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn server(kind: Kind, f: impl FnOnce(&mut ServerConfig)) -> lagkit_load::Server {
    let mut cfg = ServerConfig::new(kind);
    cfg.bind = LO;
    cfg.port = 0;
    f(&mut cfg);
    start_server(&cfg).expect("server starts")
}

fn client(kind: Kind, ports: Vec<u16>, f: impl FnOnce(&mut ClientConfig)) -> ClientConfig {
    let mut cfg = ClientConfig::new(kind, LO);
    cfg.ports = ports;
    cfg.duration = None;
    f(&mut cfg);
    cfg
}

/// Equal JSON trees, floats to 12 significant digits (serde_json's float
/// parsing is not bit-exact without its float_roundtrip feature).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if x.fract() != 0.0 || y.fract() != 0.0 => {
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
            _ => x == y,
        },
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Object(x), Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn roundtrip(r: &Report) {
    let json = serde_json::to_string(r).expect("serializes");
    let back: Report = serde_json::from_str(&json).expect("deserializes");
    let (a, b) = (
        serde_json::to_value(r).unwrap(),
        serde_json::to_value(&back).unwrap(),
    );
    assert!(same(&a, &b), "{json}");
    assert_eq!(back.connections.len(), r.connections.len());
    assert!(!r.summary().is_empty());
    assert!(!r.table().is_empty());
}

fn socketprocs(method: Method) {
    const N: u32 = 3;
    const MSGS: u64 = 40;
    let srv = server(Kind::Socketprocs, |c| {
        c.procs = N;
        c.method = method;
    });
    let ports = srv.ports();
    assert_eq!(ports.len(), N as usize);
    let cfg = client(Kind::Socketprocs, ports.clone(), |c| {
        c.procs = N;
        c.method = method;
        c.messages = Some(MSGS);
    });
    let rep = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");

    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert_eq!(rep.connections.len(), (N * N) as usize);
    assert_eq!(rep.processes.len(), N as usize);
    assert_eq!(rep.method, Some(method));
    let size = 4096u64;
    for c in &rep.connections {
        assert_eq!(c.messages, MSGS);
        assert_eq!(c.bytes_sent, MSGS * size);
        assert_eq!(c.bytes_received, MSGS * size);
    }
    for p in &rep.processes {
        // Each client process connected once to each server process.
        let remote: BTreeSet<u16> = p.connections.iter().map(|c| c.remote.port()).collect();
        assert_eq!(remote, ports.iter().copied().collect());
        assert!(
            p.pid != std::process::id(),
            "workers are separate processes"
        );
    }
    let pids: BTreeSet<u32> = rep.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids.len(), N as usize);
    assert_eq!(rep.transactions, u64::from(N * N) * MSGS);
    assert_eq!(rep.bytes_sent, u64::from(N * N) * MSGS * size);

    // The server saw the same N×N connections, from the other end.
    assert_eq!(srep.errors, 0, "{}", srep.table());
    assert_eq!(srep.connections.len(), (N * N) as usize);
    assert_eq!(srep.processes.len(), N as usize);
    let cli: BTreeSet<(SocketAddr, SocketAddr)> = rep
        .connections
        .iter()
        .map(|c| (c.local, c.remote))
        .collect();
    let srv: BTreeSet<(SocketAddr, SocketAddr)> = srep
        .connections
        .iter()
        .map(|c| (c.remote, c.local))
        .collect();
    assert_eq!(cli, srv);
    for c in &srep.connections {
        assert_eq!(c.bytes_received, MSGS * size);
        assert_eq!(c.bytes_sent, MSGS * size);
        assert_eq!(c.messages, MSGS);
    }
    roundtrip(&rep);
    roundtrip(&srep);
}

#[test]
fn socketprocs_select() {
    socketprocs(Method::Select);
}

#[test]
fn socketprocs_poll() {
    socketprocs(Method::Poll);
}

#[test]
fn socketprocs_epoll_et() {
    socketprocs(Method::EpollEt);
}

#[test]
fn socketprocs_duration_and_odd_size() {
    let srv = server(Kind::Socketprocs, |c| {
        c.procs = 2;
        c.method = Method::EpollEt;
    });
    let cfg = client(Kind::Socketprocs, srv.ports(), |c| {
        c.procs = 2;
        c.method = Method::Select;
        c.size = 100_000;
        c.duration = Some(Duration::from_millis(500));
    });
    let rep = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert_eq!(rep.connections.len(), 4);
    assert!(
        rep.elapsed_s >= 0.45 && rep.elapsed_s < 5.0,
        "{}",
        rep.elapsed_s
    );
    for c in &rep.connections {
        assert!(c.messages > 0);
        assert_eq!(c.bytes_received, c.messages * 100_000);
    }
    assert_eq!(srep.bytes_received, rep.bytes_sent);
    assert!(rep.mbit_s > 0.0 && rep.transactions_per_s > 0.0);
}

#[test]
fn stream_exact_bytes() {
    let srv = server(Kind::Stream, |_| {});
    let cfg = client(Kind::Stream, srv.ports(), |c| {
        c.conns = 3;
        c.size = 64;
        c.messages = Some(5000);
    });
    let rep = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert_eq!(rep.connections.len(), 3);
    for c in &rep.connections {
        assert_eq!(c.bytes_sent, 5000 * 64);
        assert_eq!(c.peer_received, Some(5000 * 64));
        assert_eq!(c.purpose, Purpose::Stream);
    }
    assert_eq!(srep.bytes_received, 3 * 5000 * 64);
    assert_eq!(srep.errors, 0);
    roundtrip(&rep);
    roundtrip(&srep);
}

#[test]
fn stream_duration_large_messages() {
    let srv = server(Kind::Stream, |_| {});
    let cfg = client(Kind::Stream, srv.ports(), |c| {
        c.conns = 2;
        c.size = 256 * 1024;
        c.sockbuf = Some(128 * 1024);
        c.duration = Some(Duration::from_millis(500));
    });
    let rep = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert!(rep.bytes_sent > 0 && rep.mbit_s > 0.0);
    assert_eq!(srep.bytes_received, rep.bytes_sent);
    assert!(rep.elapsed_s >= 0.45);
}

#[test]
fn maerts_exact_and_duration() {
    let srv = server(Kind::Maerts, |_| {});
    let cfg = client(Kind::Maerts, srv.ports(), |c| {
        c.conns = 2;
        c.size = 1000;
        c.messages = Some(3000);
    });
    let rep = run_client(&cfg).expect("client runs");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    for c in &rep.connections {
        assert_eq!(c.bytes_received, 3_000_000);
        assert_eq!(c.bytes_sent, 0);
    }
    let cfg = client(Kind::Maerts, srv.ports(), |c| {
        c.size = 32 * 1024;
        c.duration = Some(Duration::from_millis(400));
    });
    let rep2 = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep2.errors, 0, "{}", rep2.table());
    assert!(rep2.bytes_received > 0);
    assert_eq!(srep.bytes_sent, 6_000_000 + rep2.bytes_received);
    assert_eq!(srep.errors, 0, "{}", srep.table());
    roundtrip(&rep2);
}

#[test]
fn rr_transactions() {
    let srv = server(Kind::Rr, |_| {});
    let cfg = client(Kind::Rr, srv.ports(), |c| {
        c.conns = 2;
        c.size = 1;
        c.reply = 1;
        c.messages = Some(500);
    });
    let rep = run_client(&cfg).expect("client runs");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert_eq!(rep.transactions, 1000);
    assert!(rep.transactions_per_s > 0.0);
    // z/VM's AWM request/response shape: small request, larger response.
    let cfg = client(Kind::Rr, srv.ports(), |c| {
        c.conns = 3;
        c.size = 200;
        c.reply = 1000;
        c.nodelay = true;
        c.duration = Some(Duration::from_millis(300));
    });
    let rep2 = run_client(&cfg).expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep2.errors, 0, "{}", rep2.table());
    for c in &rep2.connections {
        assert_eq!(c.bytes_sent, c.messages * 200);
        assert_eq!(c.bytes_received, c.messages * 1000);
    }
    assert_eq!(srep.transactions, rep.transactions + rep2.transactions);
    roundtrip(&rep2);
}

fn lpm(layout: LpmPorts, base: u16, local: Ipv4Addr, server_ip: Ipv4Addr, server_port: u16) {
    const K: u32 = 4;
    let srv = server(Kind::Lpm, |c| {
        c.bind = IpAddr::V4(server_ip);
        c.port = server_port;
        c.lpm_ports = layout;
        c.migrations = K;
    });
    let sports = srv.ports();
    for round in 0..2 {
        // Twice on the same client ports: the server closes first, so the
        // client's fixed ports are free again at once.
        let mut cfg = client(Kind::Lpm, Vec::new(), |c| {
            c.server = IpAddr::V4(server_ip);
            c.port = server_port;
            c.local = Some(IpAddr::V4(local));
            c.migrations = K;
            c.lpm_base = base;
            c.lpm_ports = layout;
            c.lpm_interval = Duration::from_millis(20);
            c.size = 16 * 1024;
            c.messages = Some(200);
        });
        if round == 1 {
            cfg.messages = None;
            cfg.duration = Some(Duration::from_millis(300));
        }
        let rep = run_client(&cfg).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(rep.errors, 0, "{}", rep.table());
        assert_eq!(rep.migrations.len(), K as usize);
        assert_eq!(rep.connections.len(), 2 * K as usize);
        for (i, m) in rep.migrations.iter().enumerate() {
            let i = i as u16;
            assert_eq!(m.index, u32::from(i));
            assert_eq!(m.control_local.port(), base + 2 * i);
            assert_eq!(m.data_local.port(), base + 2 * i + 1);
            let (c, d) = match layout {
                LpmPorts::Fixed => (sports[0], sports[1]),
                LpmPorts::Sequential => (sports[2 * i as usize], sports[2 * i as usize + 1]),
            };
            assert_eq!(m.control_remote.port(), c);
            assert_eq!(m.data_remote.port(), d);
            if round == 0 {
                assert_eq!(m.data_bytes, 200 * 16 * 1024);
            }
            assert!(m.data_bytes > 0 && m.control_bytes > 0);
        }
        roundtrip(&rep);
    }
    let srep = srv.stop().expect("server stops");
    assert_eq!(srep.errors, 0, "{}", srep.table());
    assert_eq!(srep.connections.len(), 4 * K as usize);
}

#[test]
fn lpm_sequential_client_ports_fixed_server() {
    lpm(
        LpmPorts::Fixed,
        29741,
        Ipv4Addr::new(127, 91, 0, 1),
        Ipv4Addr::new(127, 91, 0, 2),
        29791,
    );
}

#[test]
fn lpm_sequential_both_sides() {
    lpm(
        LpmPorts::Sequential,
        29841,
        Ipv4Addr::new(127, 92, 0, 1),
        Ipv4Addr::new(127, 92, 0, 2),
        29891,
    );
}

/// A port on 127.0.0.1 that refuses connections while the returned
/// socket lives: bound, never listening. A listener dropped at once would
/// free its port for a test running in parallel to take, and a connect
/// to a free port can pick that same port as its source and connect to
/// itself; the kernel never hands out a bound port either way.
fn refusing_port() -> (OwnedFd, u16) {
    use nix::sys::socket::{
        bind, getsockname, socket, AddressFamily, SockFlag, SockType, SockaddrIn,
    };
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .expect("socket");
    let any_port = SockaddrIn::from(std::net::SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));
    bind(fd.as_raw_fd(), &any_port).expect("bind");
    let bound: SockaddrIn = getsockname(fd.as_raw_fd()).expect("getsockname");
    (fd, bound.port())
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut cfg = ClientConfig::new(Kind::Stream, LO);
    cfg.size = 10;
    assert!(matches!(run_client(&cfg), Err(LoadError::Size { .. })));
    cfg.size = 1 << 20;
    assert!(matches!(run_client(&cfg), Err(LoadError::Size { .. })));
    let mut cfg = ClientConfig::new(Kind::Rr, LO);
    cfg.duration = None;
    assert!(matches!(run_client(&cfg), Err(LoadError::NoBound)));
    cfg.messages = Some(0);
    assert!(matches!(run_client(&cfg), Err(LoadError::Zero(_))));
    let mut cfg = ClientConfig::new(Kind::Socketprocs, LO);
    cfg.procs = 0;
    assert!(matches!(run_client(&cfg), Err(LoadError::Zero("procs"))));
    cfg.procs = 2;
    cfg.ports = vec![1];
    assert!(matches!(
        run_client(&cfg),
        Err(LoadError::PortCount { given: 1, want: 2 })
    ));
    let mut cfg = ClientConfig::new(Kind::Lpm, LO);
    cfg.lpm_base = 65534;
    assert!(matches!(run_client(&cfg), Err(LoadError::PortRange)));

    // Nobody listening: a connect error after the timeout.
    let (_hold, port) = refusing_port();
    let mut cfg = ClientConfig::new(Kind::Rr, LO);
    cfg.port = port;
    cfg.connect_timeout = Duration::from_millis(200);
    assert!(matches!(run_client(&cfg), Err(LoadError::Connect { .. })));
    let mut cfg = ClientConfig::new(Kind::Socketprocs, LO);
    cfg.port = port;
    cfg.procs = 1;
    cfg.connect_timeout = Duration::from_millis(200);
    assert!(matches!(run_client(&cfg), Err(LoadError::Worker { .. })));
}

#[test]
fn wrong_server_kind_is_refused() {
    let srv = server(Kind::Lpm, |_| {});
    let cfg = client(Kind::Stream, vec![srv.ports()[0]], |c| c.messages = Some(1));
    match run_client(&cfg) {
        Err(LoadError::Refused { .. }) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    let srep = srv.stop().expect("stops");
    assert_eq!(srep.errors, 1);
    assert!(matches!(
        srep.connections[0].error,
        Some(ConnError::Refused { .. })
    ));
}

/// A fake server: accepts, acks the hello, then does `then` with the socket.
fn fake(
    then: impl FnOnce(std::net::TcpStream) + Send + 'static,
) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind((LO, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut hello = [0u8; 40];
        s.read_exact(&mut hello).unwrap();
        s.write_all(b"LKAK\0\0\0\0").unwrap();
        then(s);
    });
    (port, h)
}

#[test]
fn peer_closing_early_is_counted() {
    // A stream server that reads a little and hangs up without a trailer.
    let (port, h) = fake(|mut s| {
        let mut b = [0u8; 1000];
        let _ = s.read(&mut b);
    });
    let cfg = client(Kind::Stream, vec![port], |c| {
        c.duration = Some(Duration::from_millis(300));
    });
    let rep = run_client(&cfg).expect("a report, not a failure");
    h.join().unwrap();
    assert_eq!(rep.errors, 1);
    assert!(rep.connections[0].error.is_some());

    // An rr server that answers with the wrong bytes.
    let (port, h) = fake(|mut s| {
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        s.write_all(&[b[0] ^ 0x5a ^ 0xff]).unwrap();
        let _ = s.read(&mut b);
    });
    let cfg = client(Kind::Rr, vec![port], |c| c.messages = Some(10));
    let rep = run_client(&cfg).expect("a report");
    h.join().unwrap();
    assert_eq!(rep.errors, 1);
    assert!(
        matches!(rep.connections[0].error, Some(ConnError::Corrupt { .. })),
        "{:?}",
        rep.connections[0].error
    );
}
