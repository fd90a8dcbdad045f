//! What a run puts on the links. A [`Workload`] starts its servers
//! (recording their PIDs in the lab's state file, so `lab down` stops them
//! after a crash), runs once, and stops them.
//!
//! Implemented: `iperf3` (`iperf3 -s -D` in the server's namespace,
//! `iperf3 -c ... -J` in the client's) and `lagkit-load` (lagkit's own
//! workloads from crates/load: socketprocs, stream, maerts, rr, lpm — the
//! lab's lagkit binary as `lagkit load server` in the server's namespace,
//! its PID in the state file, and `lagkit load client --json` in each
//! client's, all clients at once; `bidir` runs a stream and a maerts client
//! per client host, HP's bidirectional test).

use crate::error::{ClientError, OutputError, RunError};
use crate::lab::Lab;
use crate::sys::{self, poll, IoError, ProcId};
pub use crate::topology::{Iperf3Spec, LoadSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

impl WorkloadSpec {
    /// The runnable workload.
    pub fn workload(&self) -> Box<dyn Workload> {
        match self {
            WorkloadSpec::Iperf3(s) => Box::new(Iperf3::new(s.clone())),
            WorkloadSpec::LagkitLoad(s) => Box::new(LagkitLoad::new(s.clone())),
        }
    }
}

/// How `lagkit load` runs a spec.
impl LoadSpec {
    /// The ports the server listens on.
    fn server_ports(&self) -> u16 {
        match self.load.as_str() {
            "socketprocs" => self.procs.max(1) as u16,
            "lpm" => 2 * self.migrations.max(1) as u16,
            _ => 1,
        }
    }

    /// The `--kind` of `lagkit load server`.
    fn server_kind(&self) -> &str {
        match self.load.as_str() {
            "bidir" => "stream",
            k => k,
        }
    }

    /// The `--kind`s of the `lagkit load client`s each client host runs.
    fn client_kinds(&self) -> &[&'static str] {
        match self.load.as_str() {
            "socketprocs" => &["socketprocs"],
            "stream" => &["stream"],
            "maerts" => &["maerts"],
            "bidir" => &["stream", "maerts"],
            "rr" => &["rr"],
            _ => &["lpm"],
        }
    }

    fn socketprocs(&self) -> bool {
        self.load == "socketprocs"
    }
}

/// What a workload reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Workload kind, e.g. "iperf3".
    pub kind: String,
    /// Goodput, both directions added (IBM's 6513 "transmit plus receive").
    pub mbps: f64,
    /// Client -> server goodput.
    pub forward_mbps: f64,
    /// Server -> client goodput (bidir only).
    pub reverse_mbps: f64,
    /// Retransmits the workload saw (iperf3: senders' counts).
    pub retransmits: u64,
    /// Flows.
    pub flows: u32,
    /// Seconds it ran.
    pub seconds: f64,
    /// Request/reply transactions per second (socketprocs, rr), all clients.
    #[serde(default)]
    pub transactions_per_s: f64,
    /// Every TCP connection the workload made, as its client saw it (the
    /// 5-tuples the kernel chose, so `lagkit plan` can place each flow as
    /// the hashes did). lagkit-load and iperf3 workloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<Connection>,
    /// When the workload started, seconds since the Unix epoch (0: not
    /// known).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub started_unix_s: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// One TCP connection of a workload, from its client's side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Connection {
    /// What it carried, as lagkit load names it: `stream`, `maerts`, `rr`,
    /// `socketprocs`, `lpm-control`, `lpm-data`.
    #[serde(default)]
    pub purpose: String,
    /// The client's address and port.
    pub local: std::net::SocketAddr,
    /// The server's address and port.
    pub remote: std::net::SocketAddr,
    /// Payload bytes the client sent.
    pub sent: u64,
    /// Payload bytes the client received.
    pub received: u64,
}

/// The configuration-code columns a workload contributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadCode {
    /// Application (IBM's 6513 measurements "App meth"): `i` for iperf3.
    pub app: String,
    /// Processes or flows per side (IBM's 6513 measurements "Num procs").
    pub procs: u32,
}

/// A workload a run can drive.
pub trait Workload {
    /// Its columns in the configuration code.
    fn code(&self) -> WorkloadCode;
    /// One line describing it.
    fn describe(&self) -> String;
    /// Starts what must run before the measurement (servers).
    fn prepare(&mut self, lab: &mut Lab) -> Result<(), RunError>;
    /// Runs once and reports.
    fn run(&mut self, lab: &Lab) -> Result<WorkloadResult, RunError>;
    /// Stops what `prepare` started (also after a failed run).
    fn finish(&mut self, lab: &mut Lab);
}

/// iperf3 between two hosts.
#[derive(Debug)]
pub struct Iperf3 {
    spec: Iperf3Spec,
    server: Option<ProcId>,
}

impl Iperf3 {
    /// A workload for `spec`.
    pub fn new(spec: Iperf3Spec) -> Iperf3 {
        Iperf3 { spec, server: None }
    }
}

/// The address (without prefix length) of the workload's server `host`.
fn server_addr(lab: &Lab, host: &str) -> Result<String, RunError> {
    lab.topo
        .host(host)
        .and_then(|h| h.address.as_deref())
        .and_then(|a| a.split('/').next())
        .map(String::from)
        .ok_or_else(|| RunError::NoAddress {
            host: host.to_string(),
        })
}

/// The test's TCP connections from `iperf3 -J` output, as its client saw
/// them (`start.connected`): each stream's 5-tuple, `stream` when the
/// client sent on it and `maerts` when it received (`--bidir`'s reverse
/// streams, or `-R`), with the bytes `end.streams` counts. The control
/// connection carries no data and is not listed by iperf3.
fn iperf3_connections(v: &serde_json::Value) -> Vec<Connection> {
    let streams = v["end"]["streams"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let addr = |c: &serde_json::Value, host: &str, port: &str| {
        let ip: std::net::IpAddr = c[host].as_str()?.parse().ok()?;
        let port = u16::try_from(c[port].as_u64()?).ok()?;
        Some(std::net::SocketAddr::new(ip.to_canonical(), port))
    };
    let Some(connected) = v["start"]["connected"].as_array() else {
        return Vec::new();
    };
    connected
        .iter()
        .filter_map(|c| {
            let local = addr(c, "local_host", "local_port")?;
            let remote = addr(c, "remote_host", "remote_port")?;
            let socket = c["socket"].as_u64();
            let s = streams
                .iter()
                .find(|s| s["sender"]["socket"].as_u64() == socket);
            let sends = s.is_none_or(|s| s["sender"]["sender"].as_bool() != Some(false));
            let bytes = s.and_then(|s| s["receiver"]["bytes"].as_u64()).unwrap_or(0);
            Some(Connection {
                purpose: if sends { "stream" } else { "maerts" }.into(),
                local,
                remote,
                sent: if sends { bytes } else { 0 },
                received: if sends { 0 } else { bytes },
            })
        })
        .collect()
}

/// Goodput and retransmits from `iperf3 -J` output.
pub fn parse_iperf3(json: &str) -> Result<WorkloadResult, OutputError> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(OutputError::Iperf3Json)?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(OutputError::Iperf3(e.to_string()));
    }
    let end = v.get("end").ok_or(OutputError::Iperf3Field("end"))?;
    let bps = |k: &str| end[k]["bits_per_second"].as_f64();
    let fwd = bps("sum_received").ok_or(OutputError::Iperf3Field("end.sum_received"))?;
    let rev = bps("sum_received_bidir_reverse").unwrap_or(0.0);
    let retr = end["sum_sent"]["retransmits"].as_u64().unwrap_or(0)
        + end["sum_sent_bidir_reverse"]["retransmits"]
            .as_u64()
            .unwrap_or(0);
    let secs = end["sum_received"]["seconds"].as_f64().unwrap_or(0.0);
    let flows = v["start"]["test_start"]["num_streams"]
        .as_u64()
        .unwrap_or(0) as u32;
    Ok(WorkloadResult {
        kind: "iperf3".into(),
        connections: iperf3_connections(&v),
        mbps: (fwd + rev) / 1e6,
        forward_mbps: fwd / 1e6,
        reverse_mbps: rev / 1e6,
        retransmits: retr,
        flows,
        seconds: secs,
        ..WorkloadResult::default()
    })
}

impl Workload for Iperf3 {
    fn code(&self) -> WorkloadCode {
        WorkloadCode {
            app: "i".into(),
            procs: self.spec.flows,
        }
    }

    fn describe(&self) -> String {
        format!(
            "iperf3 {} -> {}, {} flows, {} s{}",
            self.spec.client,
            self.spec.server,
            self.spec.flows,
            self.spec.seconds,
            if self.spec.bidir {
                ", both directions"
            } else {
                ""
            }
        )
    }

    fn prepare(&mut self, lab: &mut Lab) -> Result<(), RunError> {
        let iperf3 = sys::tool_path("iperf3")?;
        let ns = lab.ns(&self.spec.server);
        let pidfile = lab.dir().join(format!("iperf3-{}.pid", self.spec.server));
        let logfile = lab.dir().join(format!("iperf3-{}.log", self.spec.server));
        let _ = std::fs::remove_file(&pidfile);
        let port = self.spec.port.to_string();
        sys::ns_run(
            &ns,
            &[
                &iperf3,
                "-s",
                "-D",
                "-p",
                &port,
                "-I",
                &pidfile.to_string_lossy(),
                "--logfile",
                &logfile.to_string_lossy(),
            ],
        )?;
        let p = poll(Duration::from_secs(5), || {
            let pid = std::fs::read_to_string(&pidfile)
                .ok()?
                .trim_end_matches('\0')
                .trim()
                .parse::<i32>()
                .ok()?;
            ProcId::of(pid).filter(|p| p.comm == "iperf3")
        })
        .ok_or_else(|| RunError::NotStarted {
            daemon: "iperf3 -s -D".into(),
            log: sys::tail(&logfile, 5),
        })?;
        lab.track(&format!("iperf3 server {}", self.spec.server), p.clone())?;
        self.server = Some(p);
        let filter = format!("sport = :{port}");
        poll(Duration::from_secs(5), || {
            sys::ns_run(&ns, &["ss", "-Hltn", &filter])
                .ok()
                .filter(|o| !o.trim().is_empty())
        })
        .ok_or_else(|| RunError::Silent {
            daemon: "iperf3 server".into(),
            doing: "listen".into(),
            after: Duration::from_secs(5),
            log: String::new(),
        })?;
        Ok(())
    }

    fn run(&mut self, lab: &Lab) -> Result<WorkloadResult, RunError> {
        let iperf3 = sys::tool_path("iperf3")?;
        let addr = server_addr(lab, &self.spec.server)?;
        let ns = lab.ns(&self.spec.client);
        let t = self.spec.seconds.to_string();
        let p = self.spec.flows.to_string();
        let port = self.spec.port.to_string();
        let limit = (self.spec.seconds + 30).to_string();
        let mut args = vec![
            "timeout",
            &limit,
            &iperf3,
            "-c",
            &addr,
            "-p",
            &port,
            "-t",
            &t,
            "-P",
            &p,
            "-J",
            "--connect-timeout",
            "5000",
        ];
        if self.spec.bidir {
            args.push("--bidir");
        }
        let t0 = Instant::now();
        // The server answers "busy" for a moment after a previous test:
        // up to 10 tries.
        let mut tries = 0;
        loop {
            let mut v = vec!["ip", "netns", "exec", &ns];
            v.extend_from_slice(&args);
            let out = std::process::Command::new(v[0])
                .args(&v[1..])
                .output()
                .map_err(|source| RunError::Process {
                    what: "iperf3".into(),
                    source,
                })?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            match parse_iperf3(&text) {
                Ok(mut r) => {
                    if r.seconds == 0.0 {
                        r.seconds = t0.elapsed().as_secs_f64();
                    }
                    return Ok(r);
                }
                Err(e) if e.is_busy() => {
                    std::thread::sleep(Duration::from_millis(300));
                    tries += 1;
                    if tries == 10 {
                        return Err(RunError::Output {
                            source: e,
                            stderr: String::new(),
                        });
                    }
                }
                Err(e) => {
                    return Err(RunError::Output {
                        source: e,
                        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                    })
                }
            }
        }
    }

    fn finish(&mut self, lab: &mut Lab) {
        if let Some(p) = self.server.take() {
            p.stop(Duration::from_secs(3));
            let _ = lab.untrack(p.pid);
        }
    }
}

/// Goodput from `lagkit load client --json` output (its own
/// [`lagkit_load::Report`], so a field renamed there fails to build here
/// rather than reading as zero).
pub fn parse_lagkit_load(json: &str) -> Result<WorkloadResult, OutputError> {
    let r: lagkit_load::Report =
        serde_json::from_str(json.trim()).map_err(OutputError::LoadJson)?;
    let kind = r.kind.name();
    let conns = r.connections.len() as u32;
    if r.errors > 0 {
        let first = r
            .connections
            .iter()
            .find_map(|c| c.error.as_ref())
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err(OutputError::LoadFailed {
            kind: kind.to_string(),
            failed: r.errors,
            connections: conns,
            first,
        });
    }
    Ok(WorkloadResult {
        kind: format!("lagkit-load {kind}"),
        mbps: r.mbit_s,
        forward_mbps: r.tx_mbit_s,
        reverse_mbps: r.rx_mbit_s,
        retransmits: 0,
        flows: conns,
        seconds: r.elapsed_s,
        transactions_per_s: r.transactions_per_s,
        started_unix_s: r.started_unix_s,
        connections: r
            .connections
            .iter()
            .map(|c| Connection {
                purpose: c.purpose.name().to_string(),
                local: c.local,
                remote: c.remote,
                sent: c.bytes_sent,
                received: c.bytes_received,
            })
            .collect(),
    })
}

/// Several clients' results as one: bytes and transactions add up over
/// the time the clients ran together, from the first one's start to the
/// last one's end (adding their rates would count the same seconds of link
/// time several times; taking the longest client's time alone would miss
/// that on a busy machine their starts lie a second or two apart); flows
/// add up. Without start times, the longest client's time.
pub fn sum_results(parts: &[WorkloadResult]) -> WorkloadResult {
    let mut longest = parts.iter().map(|p| p.seconds).fold(0.0, f64::max);
    if !parts.is_empty() && parts.iter().all(|p| p.started_unix_s > 0.0) {
        let first = parts
            .iter()
            .map(|p| p.started_unix_s)
            .fold(f64::INFINITY, f64::min);
        let last = parts
            .iter()
            .map(|p| p.started_unix_s + p.seconds)
            .fold(0.0, f64::max);
        longest = longest.max(last - first);
    }
    let over = |f: fn(&WorkloadResult) -> f64| -> f64 {
        if longest <= 0.0 {
            return parts.iter().map(f).sum();
        }
        parts.iter().map(|p| f(p) * p.seconds).sum::<f64>() / longest
    };
    let mut r = WorkloadResult {
        kind: parts.first().map(|p| p.kind.clone()).unwrap_or_default(),
        ..WorkloadResult::default()
    };
    for p in parts {
        if p.kind != r.kind && !r.kind.ends_with("+") {
            r.kind = format!("{}+", r.kind);
        }
        r.retransmits += p.retransmits;
        r.flows += p.flows;
        r.connections.extend(p.connections.iter().cloned());
    }
    r.seconds = longest;
    if !parts.is_empty() && parts.iter().all(|p| p.started_unix_s > 0.0) {
        r.started_unix_s = parts
            .iter()
            .map(|p| p.started_unix_s)
            .fold(f64::INFINITY, f64::min);
    }
    r.mbps = over(|p| p.mbps);
    r.forward_mbps = over(|p| p.forward_mbps);
    r.reverse_mbps = over(|p| p.reverse_mbps);
    r.transactions_per_s = over(|p| p.transactions_per_s);
    r
}

/// `lagkit load server` in the server's namespace, `lagkit load client` in
/// the client's.
#[derive(Debug)]
pub struct LagkitLoad {
    spec: LoadSpec,
    server: Option<ProcId>,
}

impl LagkitLoad {
    /// A workload for `spec`.
    pub fn new(spec: LoadSpec) -> LagkitLoad {
        LagkitLoad { spec, server: None }
    }

    fn listening(&self, lab: &Lab) -> usize {
        let ns = lab.ns(&self.spec.server);
        let lo = self.spec.port();
        let n = self.spec.server_ports();
        let filter = format!("( sport >= :{lo} and sport <= :{} )", lo + n - 1);
        sys::ns_run(&ns, &["ss", "-Hltn", &filter])
            .map(|o| o.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0)
    }
}

impl Workload for LagkitLoad {
    fn code(&self) -> WorkloadCode {
        WorkloadCode {
            app: self.spec.app_code(),
            procs: if self.spec.socketprocs() {
                self.spec.procs
            } else {
                self.spec.conns
            },
        }
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        let size = s.size.map_or("default size".into(), |b| format!("{b} B"));
        if s.socketprocs() {
            format!(
                "lagkit load socketprocs {} -> {}, {} procs ({} connections), {}, {size}, {} s",
                s.clients.join(","),
                s.server,
                s.procs,
                s.procs * s.procs,
                s.method,
                s.seconds
            )
        } else if s.load == "lpm" {
            format!(
                "lagkit load lpm {} -> {}, {} migrations (control+data pairs, sequential ports), {size}, {} s",
                s.clients.join(","), s.server, s.migrations, s.seconds
            )
        } else {
            format!(
                "lagkit load {} {} -> {}, {} connection(s) per client, {size}, {} s",
                s.load,
                s.clients.join(","),
                s.server,
                s.conns,
                s.seconds
            )
        }
    }

    fn prepare(&mut self, lab: &mut Lab) -> Result<(), RunError> {
        let ns = lab.ns(&self.spec.server);
        let bin = lab.opts.lagkit.to_string_lossy().into_owned();
        let logfile = lab
            .dir()
            .join(format!("lagkit-load-{}.log", self.spec.server));
        let log = std::fs::File::create(&logfile).map_err(IoError::at(&logfile))?;
        let log2 = log.try_clone().map_err(IoError::at(&logfile))?;
        let port = self.spec.port().to_string();
        let procs = self.spec.procs.to_string();
        let migrations = self.spec.migrations.max(1).to_string();
        let mut args = vec![
            "netns",
            "exec",
            &ns,
            &bin,
            "load",
            "server",
            "--kind",
            self.spec.server_kind(),
            "--port",
            &port,
        ];
        if self.spec.socketprocs() {
            args.extend_from_slice(&["--procs", &procs, "--method", &self.spec.method]);
        }
        if self.spec.load == "lpm" {
            args.extend_from_slice(&["--lpm-ports", "sequential", "--migrations", &migrations]);
        }
        // `ip netns exec` execs the program: the child's PID is the server's.
        let child = std::process::Command::new("ip")
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|source| RunError::Process {
                what: format!("ip netns exec {ns} lagkit load server"),
                source,
            })?;
        let pid = child.id() as i32;
        // Reaped by ProcId::stop (waitpid) in finish, or by `lab down`.
        drop(child);
        let p = poll(Duration::from_secs(5), || {
            ProcId::of(pid).filter(|p| p.comm != "ip")
        })
        .ok_or_else(|| RunError::NotStarted {
            daemon: "lagkit load server".into(),
            log: sys::tail(&logfile, 5),
        })?;
        lab.track(
            &format!("lagkit load server {}", self.spec.server),
            p.clone(),
        )?;
        self.server = Some(p.clone());
        let want = self.spec.server_ports() as usize;
        let up = poll(Duration::from_secs(10), || {
            if !p.alive() {
                return Some(false);
            }
            (self.listening(lab) >= want).then_some(true)
        });
        let (daemon, log) = ("lagkit load server".to_string(), sys::tail(&logfile, 5));
        match up {
            Some(true) => Ok(()),
            Some(false) => Err(RunError::Exited { daemon, log }),
            None => Err(RunError::Silent {
                daemon,
                doing: format!("listen on {want} port(s)"),
                after: Duration::from_secs(10),
                log,
            }),
        }
    }

    fn run(&mut self, lab: &Lab) -> Result<WorkloadResult, RunError> {
        let addr = server_addr(lab, &self.spec.server)?;
        let bin = lab.opts.lagkit.to_string_lossy().into_owned();
        let s = &self.spec;
        let limit = (s.seconds + 30).to_string();
        let port = s.port().to_string();
        let dur = format!("{}s", s.seconds);
        let procs = s.procs.to_string();
        let conns = s.conns.to_string();
        let migrations = s.migrations.max(1).to_string();
        let size = s.size.map(|s| s.to_string());
        let sockbuf = s.sockbuf.map(|s| s.to_string());
        // Every client process starts before any is waited for, so they
        // overlap for (almost) the whole run.
        let mut running = Vec::new();
        for client in &s.clients {
            let ns = lab.ns(client);
            for kind in s.client_kinds() {
                let mut args = vec![
                    "netns",
                    "exec",
                    &ns,
                    "timeout",
                    &limit,
                    &bin,
                    "load",
                    "client",
                    "--kind",
                    kind,
                    "--to",
                    &addr,
                    "--port",
                    &port,
                    "--duration",
                    &dur,
                    "--json",
                ];
                match *kind {
                    "socketprocs" => {
                        args.extend_from_slice(&["--procs", &procs, "--method", &s.method])
                    }
                    "lpm" => args.extend_from_slice(&[
                        "--lpm-ports",
                        "sequential",
                        "--migrations",
                        &migrations,
                    ]),
                    _ => args.extend_from_slice(&["--conns", &conns]),
                }
                if let Some(sz) = &size {
                    args.extend_from_slice(&["--size", sz]);
                }
                if let Some(b) = &sockbuf {
                    args.extend_from_slice(&["--sockbuf", b]);
                }
                let child = std::process::Command::new("ip")
                    .args(&args)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|source| RunError::Process {
                        what: "lagkit load client".into(),
                        source,
                    })?;
                running.push((format!("{client} {kind}"), child));
            }
        }
        let mut parts = Vec::new();
        let mut failures = Vec::new();
        for (who, child) in running {
            let out = child
                .wait_with_output()
                .map_err(|source| RunError::Process {
                    what: format!("lagkit load client {who}"),
                    source,
                })?;
            let text = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            let status = out.status;
            match parse_lagkit_load(&text) {
                Ok(r) if status.success() => parts.push(r),
                Ok(_) => failures.push(ClientError::Exited {
                    who,
                    status,
                    stderr,
                }),
                Err(_) if text.trim().is_empty() => failures.push(ClientError::NoReport {
                    who,
                    status,
                    stderr,
                }),
                Err(source) => failures.push(ClientError::Report { who, source }),
            }
        }
        if !failures.is_empty() {
            return Err(RunError::Clients(failures));
        }
        Ok(sum_results(&parts))
    }

    fn finish(&mut self, lab: &mut Lab) {
        if let Some(p) = self.server.take() {
            p.stop(Duration::from_secs(5));
            let _ = lab.untrack(p.pid);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sum_results_adds_bytes_over_the_longest_time() {
        let p = |mbps: f64, seconds: f64| WorkloadResult {
            kind: "lagkit-load stream".into(),
            mbps,
            forward_mbps: mbps,
            flows: 1,
            seconds,
            ..WorkloadResult::default()
        };
        // 10 Mbit/s for 6 s and 20 Mbit/s for 12 s: 300 Mbit in 12 s.
        let r = sum_results(&[p(10.0, 6.0), p(20.0, 12.0)]);
        assert!((r.mbps - 25.0).abs() < 1e-9, "{r:?}");
        assert!((r.forward_mbps - 25.0).abs() < 1e-9);
        assert_eq!((r.flows, r.seconds), (2, 12.0));
        assert_eq!(sum_results(&[p(7.0, 3.0)]).mbps, 7.0);
        // Started 2 s apart, 6 s each: 8 s together.
        let at = |start: f64| WorkloadResult {
            started_unix_s: start,
            ..p(10.0, 6.0)
        };
        let r = sum_results(&[at(100.0), at(102.0)]);
        assert!(
            (r.seconds - 8.0).abs() < 1e-9 && (r.mbps - 15.0).abs() < 1e-9,
            "{r:?}"
        );
    }

    use super::*;

    #[test]
    fn parses_iperf3_bidir_json() {
        let j = r#"{"start":{"test_start":{"num_streams":4}},"end":{
            "sum_sent":{"seconds":10,"bits_per_second":1.9e8,"retransmits":3},
            "sum_received":{"seconds":10,"bits_per_second":1.8e8},
            "sum_sent_bidir_reverse":{"seconds":10,"bits_per_second":1.7e8,"retransmits":2},
            "sum_received_bidir_reverse":{"seconds":10,"bits_per_second":1.6e8}}}"#;
        let r = parse_iperf3(j).unwrap();
        assert!((r.mbps - 340.0).abs() < 1e-6);
        assert!((r.forward_mbps - 180.0).abs() < 1e-6);
        assert_eq!(r.retransmits, 5);
        assert_eq!(r.flows, 4);
        let e = parse_iperf3(
            r#"{"start":{},"end":{},"error":"the server is busy running a test. try again later"}"#,
        )
        .unwrap_err();
        assert!(e.is_busy() && e.to_string().contains("busy"), "{e}");
    }

    /// iperf3 3.12's `-P 3 --bidir -J` (trimmed to the fields read): the
    /// client's six connections, three it sends on and three it receives
    /// on, each with its 5-tuple and bytes, so the planner can place them.
    #[test]
    fn iperf3_records_its_connections() {
        let j = r#"{"start": {"connected": [
            {"socket": 5, "local_host": "127.0.0.1", "local_port": 58016, "remote_host": "127.0.0.1", "remote_port": 5201},
            {"socket": 7, "local_host": "127.0.0.1", "local_port": 58020, "remote_host": "127.0.0.1", "remote_port": 5201},
            {"socket": 9, "local_host": "127.0.0.1", "local_port": 58026, "remote_host": "127.0.0.1", "remote_port": 5201},
            {"socket": 12, "local_host": "::ffff:127.0.0.1", "local_port": 58040, "remote_host": "127.0.0.1", "remote_port": 5201},
            {"socket": 14, "local_host": "127.0.0.1", "local_port": 58052, "remote_host": "127.0.0.1", "remote_port": 5201},
            {"socket": 16, "local_host": "127.0.0.1", "local_port": 58062, "remote_host": "127.0.0.1", "remote_port": 5201}],
            "test_start": {"num_streams": 3}},
          "end": {"sum_sent": {"seconds": 1.001104, "bits_per_second": 10935061132.5},
            "sum_received": {"seconds": 1.005944, "bits_per_second": 10492076401.8},
            "sum_sent_bidir_reverse": {"seconds": 1.001104, "bits_per_second": 6253095302.7},
            "sum_received_bidir_reverse": {"seconds": 1.005944, "bits_per_second": 6144830646.6},
            "streams": [
            {"sender": {"socket": 5, "bytes": 457441280, "sender": true}, "receiver": {"socket": 5, "bytes": 440664064, "sender": true}},
            {"sender": {"socket": 7, "bytes": 458752000, "sender": true}, "receiver": {"socket": 7, "bytes": 441974784, "sender": true}},
            {"sender": {"socket": 9, "bytes": 452198400, "sender": true}, "receiver": {"socket": 9, "bytes": 436666315, "sender": true}},
            {"sender": {"socket": 12, "bytes": 260833280, "sender": false}, "receiver": {"socket": 12, "bytes": 257556480, "sender": false}},
            {"sender": {"socket": 14, "bytes": 259522560, "sender": false}, "receiver": {"socket": 14, "bytes": 256245760, "sender": false}},
            {"sender": {"socket": 16, "bytes": 262144000, "sender": false}, "receiver": {"socket": 16, "bytes": 258867200, "sender": false}}]}}"#;
        let r = parse_iperf3(j).unwrap();
        let c = &r.connections;
        assert_eq!(c.len(), 6);
        let purposes: Vec<&str> = c.iter().map(|c| c.purpose.as_str()).collect();
        assert_eq!(
            purposes,
            ["stream", "stream", "stream", "maerts", "maerts", "maerts"]
        );
        assert_eq!(c[0].local, "127.0.0.1:58016".parse().unwrap());
        assert_eq!(c[3].local, "127.0.0.1:58040".parse().unwrap(), "v4-mapped");
        assert_eq!(c[0].remote, "127.0.0.1:5201".parse().unwrap());
        assert_eq!((c[0].sent, c[0].received), (440664064, 0));
        assert_eq!((c[3].sent, c[3].received), (0, 257556480));
        // Output without the start section (an old iperf3) gives none.
        assert!(
            parse_iperf3(r#"{"end":{"sum_received":{"bits_per_second":1}}}"#)
                .unwrap()
                .connections
                .is_empty()
        );
    }

    /// A `lagkit load client --json` report, as that command writes it.
    fn load_report(errors: u64, error: serde_json::Value) -> String {
        let conn = |i: u32, local: &str, error: serde_json::Value| {
            serde_json::json!({
                "index": i, "purpose": "stream", "process": null, "migration": null,
                "local": local, "remote": "10.0.0.2:5001", "bytes_sent": 1000,
                "bytes_received": 20, "messages": 1, "elapsed_s": 3.0, "mbit_s": 0.0,
                "transactions_per_s": 0.0, "cpu": null, "peer_received": null,
                "sndbuf": 0, "rcvbuf": 0, "error": error
            })
        };
        serde_json::json!({
            "kind": "socketprocs", "role": "client", "method": null, "parallel": 2,
            "size": 1, "reply": 1, "elapsed_s": 3.0, "bytes_sent": 2000,
            "bytes_received": 40, "mbit_s": 180.5, "tx_mbit_s": 90.0,
            "rx_mbit_s": 90.5, "transactions": 2, "transactions_per_s": 0.5,
            "errors": errors, "cpu": {"user_s": 0.0, "sys_s": 0.0}, "cpus": 2,
            "cpu_usr_pct": 0.0, "cpu_sys_pct": 0.0, "started_unix_s": 100.0,
            "connections": [conn(0, "10.0.0.1:40022", serde_json::Value::Null),
                            conn(1, "10.0.0.1:40023", error)],
            "processes": [], "migrations": []
        })
        .to_string()
    }

    #[test]
    fn parses_lagkit_load_json() {
        let r = parse_lagkit_load(&load_report(0, serde_json::Value::Null)).unwrap();
        assert_eq!(r.flows, 2);
        // The 5-tuple the kernel chose is kept.
        assert_eq!(
            r.connections[1],
            Connection {
                purpose: "stream".into(),
                local: "10.0.0.1:40023".parse().unwrap(),
                remote: "10.0.0.2:5001".parse().unwrap(),
                sent: 1000,
                received: 20,
            }
        );
        assert!((r.mbps - 180.5).abs() < 1e-9);
        assert!((r.started_unix_s - 100.0).abs() < 1e-9);
        assert_eq!(r.kind, "lagkit-load socketprocs");
        let bad = load_report(1, serde_json::json!({"error": "peer-closed"}));
        let e = parse_lagkit_load(&bad).unwrap_err().to_string();
        assert!(
            e.contains("1 of 2") && e.contains("peer closed mid-message"),
            "{e}"
        );
        // Not a report (a field missing) is refused, not read as zero.
        let e = parse_lagkit_load(r#"{"kind":"stream","mbit_s":1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not its report"), "{e}");
    }
}
