//! The seed papers' workloads, built in, so a lab needs no netperf, no
//! socketprocs binary and no VIOS to reproduce their traffic patterns:
//!
//! - [`Kind::Socketprocs`] (seed 000, §9.1): N client processes each connect
//!   to each of N server processes (N×N connections); every message is a
//!   fixed size (4 KB) that the server receives whole and sends back, with
//!   `select`, level-triggered epoll ("pollset") or edge-triggered epoll on
//!   non-blocking sockets. The processes are real OS processes, because
//!   the paper's CPU figures are per process and its methods differ in how
//!   processes wait.
//! - [`Kind::Stream`], [`Kind::Maerts`] and [`Kind::Rr`] (seeds 001, 003,
//!   004): netperf's TCP_STREAM (client sends), TCP_MAERTS (server sends) and
//!   TCP_RR (one request, one response), over N parallel connections.
//! - [`Kind::Lpm`] (seed 002): K parallel "migrations", each a control
//!   connection then a data connection from sequential client ports, the
//!   pattern that put all of an AIX EtherChannel's LPM data on one link.
//!
//! Every connection is reported with its local and remote address, so a
//! lab can put each flow through the bond's hash and see which link it
//! took. Payloads follow a fixed pattern ([`pattern`]) that receivers check,
//! and bulk senders learn the receiver's byte count at the end, so a
//! result is also an integrity check.
//!
//! This crate never enters a namespace: the caller does (a thread that
//! `setns`-ed, or `ip netns exec`), and sockets and worker processes
//! created from that thread live there.

#![forbid(unsafe_code)]

pub mod lpm;
mod net;
pub mod netperf;
pub mod pattern;
mod poller;
pub mod report;
pub mod socketprocs;
mod wire;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

pub use report::{ConnError, ConnReport, Cpu, MigrationReport, ProcReport, Report, Role};
pub use wire::{Purpose, Refusal};

/// The largest message, request or response (netperf's 256 KB).
pub const MAX_SIZE: usize = 256 * 1024;

/// A workload.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// N×N request/reply connections between N client and N server processes (seed 000).
    Socketprocs,
    /// netperf TCP_STREAM: the client sends, the server sinks.
    Stream,
    /// netperf TCP_MAERTS: the server sends, the client sinks.
    Maerts,
    /// netperf TCP_RR: request/response transactions.
    Rr,
    /// LPM: paired control and data connections from sequential ports (seed 002).
    Lpm,
}

impl Kind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [Kind; 5] = [
        Kind::Socketprocs,
        Kind::Stream,
        Kind::Maerts,
        Kind::Rr,
        Kind::Lpm,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Socketprocs => "socketprocs",
            Kind::Stream => "stream",
            Kind::Maerts => "maerts",
            Kind::Rr => "rr",
            Kind::Lpm => "lpm",
        }
    }

    /// The server's default port: 7000 for socketprocs (first of N),
    /// netserver's 12865 for stream/maerts/rr, and 32791 for LPM (seed
    /// 002's first destination port).
    pub fn default_port(self) -> u16 {
        match self {
            Kind::Socketprocs => 7000,
            Kind::Stream | Kind::Maerts | Kind::Rr => 12865,
            Kind::Lpm => 32791,
        }
    }

    /// The default message (or request) size: 4 KB for socketprocs (seed
    /// 000), 32 KB for streams (HP's runs, seed 001), 1 byte for rr (netperf),
    /// 64 KB for LPM data.
    pub fn default_size(self) -> usize {
        match self {
            Kind::Socketprocs => 4096,
            Kind::Stream | Kind::Maerts => 32 * 1024,
            Kind::Rr => 1,
            Kind::Lpm => 64 * 1024,
        }
    }

    /// The smallest and largest message size this kind accepts.
    pub fn size_range(self) -> (usize, usize) {
        match self {
            // netperf's range in seed 004: 64 B to 256 KB.
            Kind::Stream | Kind::Maerts => (64, MAX_SIZE),
            _ => (1, MAX_SIZE),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "socketprocs" => Ok(Kind::Socketprocs),
            "stream" | "tcp_stream" => Ok(Kind::Stream),
            "maerts" | "tcp_maerts" => Ok(Kind::Maerts),
            "rr" | "tcp_rr" => Ok(Kind::Rr),
            "lpm" => Ok(Kind::Lpm),
            _ => Err(format!(
                "unknown workload '{s}' (use socketprocs, stream, maerts, rr or lpm)"
            )),
        }
    }
}

/// How a socketprocs process waits for its sockets (seed 000's "App meth").
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// `s`: select(2) over blocking sockets, as DB2 before 9.5.0.1.
    Select,
    /// `p`: level-triggered epoll (AIX pollset) over blocking sockets.
    Poll,
    /// `e`: edge-triggered epoll over non-blocking sockets, as DB2 9.5.0.1+.
    #[default]
    EpollEt,
}

impl Method {
    /// The paper's one-letter code: s, p or e.
    pub fn letter(self) -> char {
        match self {
            Method::Select => 's',
            Method::Poll => 'p',
            Method::EpollEt => 'e',
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Select => "select",
            Method::Poll => "poll",
            Method::EpollEt => "epoll-et",
        })
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "s" | "select" => Ok(Method::Select),
            "p" | "poll" | "pollset" | "epoll" | "epoll-lt" => Ok(Method::Poll),
            "e" | "epoll-et" | "pollset-et" | "et" => Ok(Method::EpollEt),
            _ => Err(format!(
                "unknown method '{s}' (use select (s), poll (p, level-triggered epoll) or epoll-et (e))"
            )),
        }
    }
}

/// Where the LPM server listens.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LpmPorts {
    /// One control port (`port`) and one data port (`port + 1`) for every migration.
    #[default]
    Fixed,
    /// Migration i on control port `port + 2i` and data port `port + 2i + 1`,
    /// like the destination VIOS in seed 002's `netstat`.
    Sequential,
}

/// How socketprocs starts its worker processes.
#[derive(Clone, Debug, Default)]
pub enum Spawn {
    /// fork(2) without exec: works from any program, including tests.
    #[default]
    Fork,
    /// Run `program args... <config JSON>`, which must call
    /// [`socketprocs::worker_main`] with that last argument (the CLI's
    /// hidden `lagkit load worker`); each worker is then its own program in
    /// `ps` and `top`.
    Exec {
        /// The executable.
        program: PathBuf,
        /// Arguments before the configuration.
        args: Vec<String>,
    },
}

/// What a client run does; fields a kind does not use are ignored.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct ClientConfig {
    /// The workload.
    pub kind: Kind,
    /// The server's address.
    pub server: IpAddr,
    /// The server's (first) port; see [`ClientConfig::server_ports`].
    pub port: u16,
    /// Explicit server ports overriding those derived from `port`:
    /// socketprocs, one per server process; LPM fixed, `[control, data]`.
    pub ports: Vec<u16>,
    /// The local address to send from (default: chosen by routing).
    pub local: Option<IpAddr>,
    /// socketprocs: client (and server) processes, N.
    pub procs: u32,
    /// stream/maerts/rr: parallel connections.
    pub conns: u32,
    /// LPM: parallel migrations, K.
    pub migrations: u32,
    /// socketprocs: how each process waits.
    pub method: Method,
    /// Message size (rr: request size), bytes.
    pub size: usize,
    /// rr: response size; socketprocs replies with `size` bytes.
    pub reply: usize,
    /// Stop after this long.
    #[serde(with = "opt_secs")]
    pub duration: Option<Duration>,
    /// Stop after this many messages (rr: transactions) per connection;
    /// LPM: data messages per migration.
    pub messages: Option<u64>,
    /// Check every received byte against the pattern.
    pub verify: bool,
    /// Set TCP_NODELAY on both ends (netperf -D).
    pub nodelay: bool,
    /// SO_SNDBUF and SO_RCVBUF on both ends (netperf -s/-S; HP used 128 KB).
    pub sockbuf: Option<u32>,
    /// How long to keep retrying a refused connection (the server may still be starting).
    #[serde(with = "secs")]
    pub connect_timeout: Duration,
    /// LPM: the first client port; migration i uses `lpm_base + 2i`
    /// (control) and `lpm_base + 2i + 1` (data).
    pub lpm_base: u16,
    /// LPM: the server's port layout.
    pub lpm_ports: LpmPorts,
    /// LPM: one small control message each way per interval.
    #[serde(with = "secs")]
    pub lpm_interval: Duration,
    /// socketprocs: how worker processes start.
    #[serde(skip)]
    pub spawn: Spawn,
}

impl ClientConfig {
    /// Defaults for `kind` against `server` (port, size, 10 s).
    pub fn new(kind: Kind, server: IpAddr) -> ClientConfig {
        ClientConfig {
            kind,
            server,
            port: kind.default_port(),
            ports: Vec::new(),
            local: None,
            procs: 4,
            conns: 1,
            migrations: 4,
            method: Method::default(),
            size: kind.default_size(),
            reply: kind.default_size(),
            duration: Some(Duration::from_secs(10)),
            messages: None,
            verify: true,
            nodelay: false,
            sockbuf: None,
            connect_timeout: Duration::from_secs(5),
            lpm_base: lpm::DEFAULT_BASE,
            lpm_ports: LpmPorts::Fixed,
            lpm_interval: Duration::from_millis(100),
            spawn: Spawn::Fork,
        }
    }

    /// The server ports this run connects to: socketprocs N ports, netperf
    /// one, LPM fixed `[control, data]`, LPM sequential `2K`.
    pub fn server_ports(&self) -> Vec<u16> {
        let count = match self.kind {
            Kind::Socketprocs => self.procs as usize,
            Kind::Stream | Kind::Maerts | Kind::Rr => 1,
            Kind::Lpm => match self.lpm_ports {
                LpmPorts::Fixed => 2,
                LpmPorts::Sequential => 2 * self.migrations as usize,
            },
        };
        if !self.ports.is_empty() {
            return self.ports.clone();
        }
        (0..count)
            .map(|i| self.port.wrapping_add(i as u16))
            .collect()
    }

    /// Checks the parameters before any socket is opened.
    pub fn validate(&self) -> Result<(), LoadError> {
        if self.duration.is_none() && self.messages.is_none() {
            return Err(LoadError::NoBound);
        }
        if self.messages == Some(0) {
            return Err(LoadError::Zero("messages"));
        }
        let (count, what) = match self.kind {
            Kind::Socketprocs => (self.procs, "procs"),
            Kind::Stream | Kind::Maerts | Kind::Rr => (self.conns, "conns"),
            Kind::Lpm => (self.migrations, "migrations"),
        };
        if count == 0 {
            return Err(LoadError::Zero(what));
        }
        if count > MAX_PARALLEL {
            return Err(LoadError::TooMany {
                what,
                count,
                max: MAX_PARALLEL,
            });
        }
        let (min, max) = self.kind.size_range();
        check_size("size", self.size, min, max)?;
        if self.kind == Kind::Rr {
            check_size("reply", self.reply, 1, MAX_SIZE)?;
        }
        let ports = self.server_ports();
        let want = ClientConfig {
            ports: Vec::new(),
            ..self.clone()
        }
        .server_ports()
        .len();
        if ports.len() != want {
            return Err(LoadError::PortCount {
                given: ports.len(),
                want,
            });
        }
        let derived_past_end = self.ports.is_empty() && u32::from(self.port) + want as u32 > 65536;
        if ports.contains(&0) || derived_past_end {
            return Err(LoadError::PortRange);
        }
        if self.kind == Kind::Lpm
            && (self.lpm_base == 0 || u32::from(self.lpm_base) + 2 * self.migrations > 65536)
        {
            return Err(LoadError::PortRange);
        }
        Ok(())
    }
}

/// What a server does.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct ServerConfig {
    /// The workload family: stream, maerts and rr share one server (like netserver).
    pub kind: Kind,
    /// The address to listen on (default 0.0.0.0).
    pub bind: IpAddr,
    /// The (first) port; 0 picks free ports (see [`Server::ports`]).
    pub port: u16,
    /// socketprocs: server processes, each listening on `port + j`.
    pub procs: u32,
    /// socketprocs: how each process waits.
    pub method: Method,
    /// LPM: the port layout.
    pub lpm_ports: LpmPorts,
    /// LPM sequential: how many port pairs to listen on.
    pub migrations: u32,
    /// socketprocs: how worker processes start.
    #[serde(skip)]
    pub spawn: Spawn,
}

impl ServerConfig {
    /// Defaults for `kind`, on all addresses.
    pub fn new(kind: Kind) -> ServerConfig {
        ServerConfig {
            kind,
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: kind.default_port(),
            procs: 4,
            method: Method::default(),
            lpm_ports: LpmPorts::Fixed,
            migrations: 4,
            spawn: Spawn::Fork,
        }
    }
}

/// At most this many processes, connections or migrations in one run.
pub const MAX_PARALLEL: u32 = 1024;

fn check_size(what: &'static str, size: usize, min: usize, max: usize) -> Result<(), LoadError> {
    if (min..=max).contains(&size) {
        Ok(())
    } else {
        Err(LoadError::Size {
            what,
            size,
            min,
            max,
        })
    }
}

/// Why a run could not start or finish (per-connection trouble is a
/// [`ConnError`] inside the report instead).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Neither a duration nor a message count.
    #[error("no bound: give a duration or a message count")]
    NoBound,
    /// A count that must be positive is zero.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// Too many parallel processes or connections.
    #[error("{what} = {count} is more than {max}")]
    TooMany {
        /// Which count.
        what: &'static str,
        /// Given.
        count: u32,
        /// Allowed.
        max: u32,
    },
    /// A size outside the kind's range.
    #[error("{what} = {size} bytes is outside {min}..={max}")]
    Size {
        /// Which size.
        what: &'static str,
        /// Given.
        size: usize,
        /// Smallest allowed.
        min: usize,
        /// Largest allowed.
        max: usize,
    },
    /// Explicit ports that do not match the kind's layout.
    #[error("{given} server ports given, this run needs {want}")]
    PortCount {
        /// Given.
        given: usize,
        /// Needed.
        want: usize,
    },
    /// Ports would run past 65535 or include 0.
    #[error("ports out of range: the port sequence must stay within 1..=65535")]
    PortRange,
    /// Could not listen.
    #[error("cannot listen on {addr}: {source} (is another server using the port?)")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Could not connect (after retrying refusals for the connect timeout).
    #[error(
        "cannot connect {local:?} -> {addr}: {source} (is `lagkit load server` running there?)"
    )]
    Connect {
        /// The explicit local address, if any.
        local: Option<SocketAddr>,
        /// The server.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The server answered but refused this workload.
    #[error("{addr} refused the connection: {why}")]
    Refused {
        /// The server.
        addr: SocketAddr,
        /// Its reason.
        why: wire::Refusal,
    },
    /// Setting up a connection failed after connect (hello, options).
    #[error("setting up {addr}: {source}")]
    Setup {
        /// The server.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A worker process could not be started.
    #[error("cannot start worker process: {0}")]
    Spawn(std::io::Error),
    /// A worker process failed or vanished.
    #[error("worker process {index}: {why}")]
    Worker {
        /// Which worker.
        index: u32,
        /// What it said or what happened to it.
        why: String,
    },
    /// A thread of this run could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}

/// Runs one client side of `cfg.kind` to completion and reports it.
pub fn run_client(cfg: &ClientConfig) -> Result<Report, LoadError> {
    cfg.validate()?;
    match cfg.kind {
        Kind::Socketprocs => socketprocs::run_client(cfg),
        Kind::Stream | Kind::Maerts | Kind::Rr => netperf::run_client(cfg),
        Kind::Lpm => lpm::run_client(cfg),
    }
}

/// A running server; [`Server::stop`] ends it and returns what it served.
pub struct Server {
    inner: ServerInner,
}

enum ServerInner {
    Threads(net::Acceptor),
    Procs(socketprocs::ServerProcs),
}

/// Starts the server side of `cfg.kind`; it serves until stopped.
pub fn start_server(cfg: &ServerConfig) -> Result<Server, LoadError> {
    let inner = match cfg.kind {
        Kind::Socketprocs => {
            if cfg.procs == 0 {
                return Err(LoadError::Zero("procs"));
            }
            if cfg.procs > MAX_PARALLEL {
                return Err(LoadError::TooMany {
                    what: "procs",
                    count: cfg.procs,
                    max: MAX_PARALLEL,
                });
            }
            ServerInner::Procs(socketprocs::start_server(cfg)?)
        }
        Kind::Stream | Kind::Maerts | Kind::Rr => ServerInner::Threads(netperf::start_server(cfg)?),
        Kind::Lpm => ServerInner::Threads(lpm::start_server(cfg)?),
    };
    Ok(Server { inner })
}

impl Server {
    /// The ports actually listened on, in order (useful with port 0).
    pub fn ports(&self) -> Vec<u16> {
        match &self.inner {
            ServerInner::Threads(a) => a.ports(),
            ServerInner::Procs(p) => p.ports(),
        }
    }

    /// Stops accepting, cuts connections still open, and reports every
    /// connection served.
    pub fn stop(self) -> Result<Report, LoadError> {
        match self.inner {
            ServerInner::Threads(a) => Ok(a.stop()),
            ServerInner::Procs(p) => p.stop(),
        }
    }
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<f64>::deserialize(d)? {
            Some(v) => Duration::try_from_secs_f64(v)
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}
