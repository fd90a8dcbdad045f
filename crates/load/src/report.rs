//! What a run measured, in one serde-serializable shape for every
//! workload: totals with the figure each seed quotes (Mbit/s, transactions
//! per second, CPU), then every connection with its addresses so a lab can
//! put each 4-tuple through the bond's hash, then per-process (socketprocs)
//! and per-migration (LPM) groupings. Also the one-line summaries and the
//! seed-style tables the CLI prints.

use crate::{Kind, Method};
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// Which side a report is from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The side that connects.
    Client,
    /// The side that listens.
    Server,
}

/// CPU time used, seconds.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct Cpu {
    /// User time.
    pub user_s: f64,
    /// System time.
    pub sys_s: f64,
}

impl Cpu {
    /// CPU time of the calling thread so far.
    pub fn thread() -> Cpu {
        Self::usage(UsageWho::RUSAGE_THREAD)
    }

    /// CPU time of the calling process so far.
    pub fn process() -> Cpu {
        Self::usage(UsageWho::RUSAGE_SELF)
    }

    fn usage(who: UsageWho) -> Cpu {
        let Ok(u) = getrusage(who) else {
            return Cpu::default();
        };
        let tv = |t: TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        Cpu {
            user_s: tv(u.user_time()),
            sys_s: tv(u.system_time()),
        }
    }

    /// `self - earlier`.
    pub fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
        }
    }

    /// The sum.
    pub fn plus(self, other: Cpu) -> Cpu {
        Cpu {
            user_s: self.user_s + other.user_s,
            sys_s: self.sys_s + other.sys_s,
        }
    }
}

/// Why one connection did not finish cleanly.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "error", rename_all = "kebab-case")]
pub enum ConnError {
    /// The peer closed in the middle of a message (or before its trailer).
    PeerClosed,
    /// Received payload differs from the pattern at this stream offset.
    Corrupt {
        /// Stream offset of the first wrong byte.
        at: u64,
    },
    /// The receiver counted other bytes than were sent.
    Mismatch {
        /// Bytes this side sent.
        sent: u64,
        /// Bytes the peer says it received.
        received: u64,
    },
    /// The peer's trailer or hello was not lagkit's.
    Protocol,
    /// The peer did not finish within the grace period after the bound.
    Timeout,
    /// The server was stopped while the connection was open.
    Stopped,
    /// The client's hello asked for something this server does not run.
    Refused {
        /// Why.
        why: crate::wire::Refusal,
    },
    /// A socket call failed.
    Io {
        /// The call: connect, read, write, ...
        op: String,
        /// errno (0 if none).
        errno: i32,
    },
}

impl ConnError {
    pub(crate) fn io(op: &str, e: &std::io::Error) -> ConnError {
        match e.kind() {
            std::io::ErrorKind::UnexpectedEof => ConnError::PeerClosed,
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ConnError::Timeout,
            _ => ConnError::Io {
                op: op.to_owned(),
                errno: e.raw_os_error().unwrap_or(0),
            },
        }
    }

    /// True for the errors a connection cut under it ends with.
    pub(crate) fn may_be_cut(&self) -> bool {
        matches!(
            self,
            ConnError::PeerClosed | ConnError::Timeout | ConnError::Io { .. }
        )
    }
}

impl fmt::Display for ConnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnError::PeerClosed => f.write_str("peer closed mid-message"),
            ConnError::Corrupt { at } => write!(f, "payload corrupt at stream offset {at}"),
            ConnError::Mismatch { sent, received } => {
                write!(f, "sent {sent} bytes but the peer received {received}")
            }
            ConnError::Protocol => f.write_str("peer does not speak lagkit load"),
            ConnError::Timeout => f.write_str("peer did not finish in time"),
            ConnError::Stopped => f.write_str("server stopped while open"),
            ConnError::Refused { why } => write!(f, "refused: {why}"),
            ConnError::Io { op, errno } => {
                write!(f, "{op}: {}", std::io::Error::from_raw_os_error(*errno))
            }
        }
    }
}

/// One TCP connection.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ConnReport {
    /// Index within its process (socketprocs), run (netperf) or migration (LPM).
    pub index: u32,
    /// What it carried: socketprocs, stream, maerts, rr, lpm-control, lpm-data.
    pub purpose: crate::wire::Purpose,
    /// socketprocs: the process that owned it on this side.
    pub process: Option<u32>,
    /// LPM: the migration it belongs to.
    pub migration: Option<u32>,
    /// This side's address and port.
    pub local: SocketAddr,
    /// The peer's address and port.
    pub remote: SocketAddr,
    /// Payload bytes written.
    pub bytes_sent: u64,
    /// Payload bytes read.
    pub bytes_received: u64,
    /// Messages sent (stream, LPM), transactions completed (socketprocs, rr).
    pub messages: u64,
    /// Seconds from start to its last byte.
    pub elapsed_s: f64,
    /// (sent + received) × 8 / elapsed, 10^6 bit/s.
    pub mbit_s: f64,
    /// Transactions per second (socketprocs, rr; 0 otherwise).
    pub transactions_per_s: f64,
    /// CPU time of the thread that drove it (threaded workloads).
    pub cpu: Option<Cpu>,
    /// Bytes the peer reported receiving (stream, rr, LPM data).
    pub peer_received: Option<u64>,
    /// The socket buffer sizes in effect (SO_SNDBUF, SO_RCVBUF).
    pub sndbuf: u32,
    /// See `sndbuf`.
    pub rcvbuf: u32,
    /// Why it did not finish cleanly.
    pub error: Option<ConnError>,
}

impl ConnReport {
    pub(crate) fn new(
        purpose: crate::wire::Purpose,
        index: u32,
        local: SocketAddr,
        remote: SocketAddr,
    ) -> ConnReport {
        ConnReport {
            index,
            purpose,
            process: None,
            migration: None,
            local,
            remote,
            bytes_sent: 0,
            bytes_received: 0,
            messages: 0,
            elapsed_s: 0.0,
            mbit_s: 0.0,
            transactions_per_s: 0.0,
            cpu: None,
            peer_received: None,
            sndbuf: 0,
            rcvbuf: 0,
            error: None,
        }
    }

    /// Fills `elapsed_s`, `mbit_s` and (when `transactional`) `transactions_per_s`.
    pub(crate) fn finish(&mut self, elapsed: Duration, transactional: bool) {
        self.elapsed_s = elapsed.as_secs_f64();
        self.mbit_s = mbit(self.bytes_sent + self.bytes_received, self.elapsed_s);
        if transactional {
            self.transactions_per_s = per_s(self.messages, self.elapsed_s);
        }
    }
}

/// One socketprocs process.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ProcReport {
    /// Its index, 0..N.
    pub index: u32,
    /// Its process id.
    pub pid: u32,
    /// Server: the port it listened on.
    pub port: Option<u16>,
    /// Seconds it ran its loop.
    pub elapsed_s: f64,
    /// Payload bytes written by it.
    pub bytes_sent: u64,
    /// Payload bytes read by it.
    pub bytes_received: u64,
    /// Request/reply transactions completed.
    pub transactions: u64,
    /// (sent + received) × 8 / elapsed.
    pub mbit_s: f64,
    /// Its CPU time.
    pub cpu: Cpu,
    /// Connections with errors.
    pub errors: u64,
    /// Its connections.
    pub connections: Vec<ConnReport>,
}

/// One LPM migration.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MigrationReport {
    /// Its index, 0..K.
    pub index: u32,
    /// The control connection's local address (port `base + 2i` on the client).
    pub control_local: SocketAddr,
    /// The control connection's remote address.
    pub control_remote: SocketAddr,
    /// The data connection's local address (port `base + 2i + 1` on the client).
    pub data_local: SocketAddr,
    /// The data connection's remote address.
    pub data_remote: SocketAddr,
    /// Control payload bytes, both directions.
    pub control_bytes: u64,
    /// Data bytes moved.
    pub data_bytes: u64,
    /// Seconds the data transfer took.
    pub elapsed_s: f64,
    /// Data throughput, 10^6 bit/s.
    pub mbit_s: f64,
    /// Either connection's error.
    pub error: Option<ConnError>,
}

/// A whole run, one side.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Report {
    /// The workload.
    pub kind: Kind,
    /// Which side.
    pub role: Role,
    /// socketprocs: the wait method.
    pub method: Option<Method>,
    /// Processes (socketprocs), connections (netperf) or migrations (LPM).
    pub parallel: u32,
    /// Message (request) size, bytes.
    pub size: usize,
    /// Response size (rr, socketprocs), bytes.
    pub reply: usize,
    /// Seconds from the common start to the last connection's end.
    pub elapsed_s: f64,
    /// Payload bytes written, all connections.
    pub bytes_sent: u64,
    /// Payload bytes read, all connections.
    pub bytes_received: u64,
    /// The kind's headline rate, 10^6 bit/s: socketprocs and rr transmit
    /// plus receive (seed 000's "aggregate"), stream and LPM sent, maerts received.
    pub mbit_s: f64,
    /// Sent bytes × 8 / elapsed.
    pub tx_mbit_s: f64,
    /// Received bytes × 8 / elapsed.
    pub rx_mbit_s: f64,
    /// Request/reply transactions (socketprocs, rr), else messages sent.
    pub transactions: u64,
    /// Transactions per second (socketprocs, rr).
    pub transactions_per_s: f64,
    /// Connections that ended with an error.
    pub errors: u64,
    /// CPU time of this side's workers.
    pub cpu: Cpu,
    /// CPUs on this machine (for utilisation: cpu / elapsed / cpus).
    pub cpus: u32,
    /// User CPU, percent of the machine over the run (seed 000's "usr").
    pub cpu_usr_pct: f64,
    /// System CPU, percent of the machine (seed 000's "sys").
    pub cpu_sys_pct: f64,
    /// When the run started, seconds since the Unix epoch (the time the
    /// report was made less `elapsed_s`), so that the runs of several
    /// client processes can be laid on one time line.
    #[serde(default)]
    pub started_unix_s: f64,
    /// Every connection.
    pub connections: Vec<ConnReport>,
    /// socketprocs: every process (its connections are also in `connections`).
    pub processes: Vec<ProcReport>,
    /// LPM: every migration.
    pub migrations: Vec<MigrationReport>,
}

/// What ran, for [`Report::total`].
pub(crate) struct Shape {
    pub kind: Kind,
    pub role: Role,
    pub parallel: u32,
    pub size: usize,
    pub reply: usize,
}

pub(crate) fn mbit(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    }
}

pub(crate) fn per_s(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn cpus() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

impl Report {
    /// Totals over `connections` for a run of `elapsed`.
    pub(crate) fn total(
        shape: Shape,
        elapsed: Duration,
        cpu: Cpu,
        connections: Vec<ConnReport>,
    ) -> Report {
        let Shape {
            kind,
            role,
            parallel,
            size,
            reply,
        } = shape;
        let elapsed_s = elapsed.as_secs_f64();
        let bytes_sent = connections.iter().map(|c| c.bytes_sent).sum();
        let bytes_received = connections.iter().map(|c| c.bytes_received).sum();
        let transactions = connections
            .iter()
            .filter(|c| c.purpose != crate::wire::Purpose::LpmControl)
            .map(|c| c.messages)
            .sum();
        let errors = connections.iter().filter(|c| c.error.is_some()).count() as u64;
        let tx = mbit(bytes_sent, elapsed_s);
        let rx = mbit(bytes_received, elapsed_s);
        let headline = match (kind, role) {
            (Kind::Socketprocs | Kind::Rr, _) => tx + rx,
            (Kind::Stream | Kind::Lpm, Role::Client) | (Kind::Maerts, Role::Server) => tx,
            (Kind::Stream | Kind::Lpm, Role::Server) | (Kind::Maerts, Role::Client) => rx,
        };
        let transactional = matches!(kind, Kind::Socketprocs | Kind::Rr);
        let cpus = cpus();
        let pct = |s: f64| {
            if elapsed_s > 0.0 {
                s / elapsed_s / cpus as f64 * 100.0
            } else {
                0.0
            }
        };
        Report {
            kind,
            role,
            method: None,
            parallel,
            size,
            reply,
            elapsed_s,
            bytes_sent,
            bytes_received,
            mbit_s: headline,
            tx_mbit_s: tx,
            rx_mbit_s: rx,
            transactions,
            transactions_per_s: if transactional {
                per_s(transactions, elapsed_s)
            } else {
                0.0
            },
            errors,
            cpu,
            cpus,
            cpu_usr_pct: pct(cpu.user_s),
            cpu_sys_pct: pct(cpu.sys_s),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
                - elapsed_s,
            connections,
            processes: Vec::new(),
            migrations: Vec::new(),
        }
    }

    fn client_what(&self) -> String {
        match self.kind {
            Kind::Socketprocs => format!(
                "socketprocs {} {} procs, {} conns, {} B",
                self.method.map(|m| m.letter()).unwrap_or('?'),
                self.parallel,
                self.connections.len(),
                self.size
            ),
            Kind::Stream | Kind::Maerts => format!(
                "{} {} conns, {} B messages",
                self.kind, self.parallel, self.size
            ),
            Kind::Rr => format!("rr {} conns, {}/{} B", self.parallel, self.size, self.reply),
            Kind::Lpm => format!(
                "lpm {} migrations, {} B data messages",
                self.parallel, self.size
            ),
        }
    }

    /// One line for people: what ran and what it achieved.
    pub fn summary(&self) -> String {
        let role = match self.role {
            Role::Client => "client",
            Role::Server => "server",
        };
        let what = match (self.role, self.kind) {
            (Role::Server, Kind::Socketprocs) => format!(
                "socketprocs {} {} procs, {} conns",
                self.method.map(|m| m.letter()).unwrap_or('?'),
                self.parallel,
                self.connections.len()
            ),
            (Role::Server, kind) => format!("{kind} {} conns", self.connections.len()),
            (Role::Client, _) => self.client_what(),
        };
        let mut s = format!(
            "{role} {what}: {:.1} Mbit/s (tx {:.1}, rx {:.1}) in {:.2} s",
            self.mbit_s, self.tx_mbit_s, self.rx_mbit_s, self.elapsed_s
        );
        if self.transactions_per_s > 0.0 {
            s += &format!(
                ", {} transactions, {:.1}/s",
                self.transactions, self.transactions_per_s
            );
        }
        s += &format!(
            ", cpu usr {:.1}% sys {:.1}%, {} error{}",
            self.cpu_usr_pct,
            self.cpu_sys_pct,
            self.errors,
            if self.errors == 1 { "" } else { "s" }
        );
        s
    }

    /// The seed's own table layout for this kind: socketprocs as seed 000's
    /// columns, stream/maerts as netperf's TCP_STREAM output, rr as
    /// netperf's TCP_RR output, LPM as per-migration lines like seed 002's
    /// `netstat` plus bytes.
    pub fn table(&self) -> String {
        let mut out = String::new();
        match self.kind {
            Kind::Socketprocs => {
                out += "App  Num    Conns  Msg    usr    sys    Mbits\n";
                out += "meth procs         bytes  %      %      /sec\n";
                out += &format!(
                    "{:<4} {:<6} {:<6} {:<6} {:<6.1} {:<6.1} {:.0}\n",
                    self.method.map(|m| m.letter()).unwrap_or('?'),
                    self.parallel,
                    self.connections.len(),
                    self.size,
                    self.cpu_usr_pct,
                    self.cpu_sys_pct,
                    self.mbit_s
                );
                for p in &self.processes {
                    out += &format!(
                        "  proc {:<3} pid {:<7} {:>10.1} Mbit/s {:>9} transactions  usr {:.2}s sys {:.2}s{}\n",
                        p.index,
                        p.pid,
                        p.mbit_s,
                        p.transactions,
                        p.cpu.user_s,
                        p.cpu.sys_s,
                        if p.errors > 0 { format!("  {} errors", p.errors) } else { String::new() }
                    );
                }
            }
            Kind::Stream | Kind::Maerts => {
                let test = if self.kind == Kind::Stream {
                    "TCP_STREAM"
                } else {
                    "TCP_MAERTS"
                };
                out += &format!("{test} lagkit load, {} connection(s)\n", self.parallel);
                out += "Recv   Send    Send\n";
                out += "Socket Socket  Message  Elapsed\n";
                out += "Size   Size    Size     Time     Throughput\n";
                out += "bytes  bytes   bytes    secs.    10^6bits/sec\n\n";
                for c in &self.connections {
                    out += &format!(
                        "{:>6} {:>6} {:>6}    {:>6.2}   {:>8.2}   {} -> {}{}\n",
                        c.rcvbuf,
                        c.sndbuf,
                        self.size,
                        c.elapsed_s,
                        c.mbit_s,
                        c.local,
                        c.remote,
                        err_suffix(&c.error)
                    );
                }
                if self.connections.len() > 1 {
                    out += &format!(
                        "{:>6} {:>6} {:>6}    {:>6.2}   {:>8.2}   total\n",
                        "", "", self.size, self.elapsed_s, self.mbit_s
                    );
                }
            }
            Kind::Rr => {
                out += &format!("TCP_RR lagkit load, {} connection(s)\n", self.parallel);
                out += "Local /Remote\n";
                out += "Socket Size   Request  Resp.   Elapsed  Trans.\n";
                out += "Send   Recv   Size     Size    Time     Rate\n";
                out += "bytes  Bytes  bytes    bytes   secs.    per sec\n\n";
                for c in &self.connections {
                    out += &format!(
                        "{:<6} {:<6} {:<8} {:<7} {:<8.2} {:<10.2} {} -> {}{}\n",
                        c.sndbuf,
                        c.rcvbuf,
                        self.size,
                        self.reply,
                        c.elapsed_s,
                        c.transactions_per_s,
                        c.local,
                        c.remote,
                        err_suffix(&c.error)
                    );
                }
                if self.connections.len() > 1 {
                    out += &format!(
                        "{:<6} {:<6} {:<8} {:<7} {:<8.2} {:<10.2} total\n",
                        "", "", self.size, self.reply, self.elapsed_s, self.transactions_per_s
                    );
                }
            }
            Kind::Lpm if self.role == Role::Server => {
                out += "connection                                  purpose       bytes in     bytes out\n";
                for c in &self.connections {
                    out += &format!(
                        "{:<43} {:<12} {:>10} {:>12}{}\n",
                        format!("{} <- {}", c.local, c.remote),
                        match c.purpose {
                            crate::wire::Purpose::LpmControl => "control",
                            _ => "data",
                        },
                        c.bytes_received,
                        c.bytes_sent,
                        err_suffix(&c.error)
                    );
                }
            }
            Kind::Lpm => {
                out += "migration  control                                   data                                      data bytes     Mbit/s\n";
                for m in &self.migrations {
                    out += &format!(
                        "{:<10} {:<41} {:<41} {:>13} {:>10.1}{}\n",
                        m.index,
                        format!("{} -> {}", m.control_local, m.control_remote),
                        format!("{} -> {}", m.data_local, m.data_remote),
                        m.data_bytes,
                        m.mbit_s,
                        err_suffix(&m.error)
                    );
                }
            }
        }
        out
    }
}

fn err_suffix(e: &Option<ConnError>) -> String {
    match e {
        Some(e) => format!("  ERROR: {e}"),
        None => String::new(),
    }
}
