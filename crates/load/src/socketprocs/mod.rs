//! socketprocs, as seed 000 §9.1 describes it: "N processes each connect
//! to each of N processes on the other, for a total of N*N connections
//! ... On the server machine, all processes act as servers and listen,
//! accept, and then recv and reply. On the client machine, all processes
//! connect and send, and recv the reply, until the specified number of
//! messages has been sent. All messages are a fixed size, with a default
//! size of 4K."
//!
//! Server process j listens on `port + j`; client process i connects once
//! to every server process, so the N×N connections share addresses and
//! differ only in ports, the property that made Layer 3 hashing leave one
//! link idle in the paper. Each connection keeps one message in flight: the
//! client sends it, the server receives all of it and sends it back, the
//! client receives all of the reply and sends the next. `messages` counts
//! per connection.
//!
//! The processes are real processes (forked, or this program re-executed
//! through [`Spawn::Exec`]) because the paper's CPU columns are per process
//! and its three wait methods differ in how a process sleeps. A worker
//! talks to its parent over its stdin and stdout: JSON lines out (ready,
//! failed, report), `go` or `stop` in; EOF on stdin (the parent died) stops
//! it too, so no worker outlives its parent.

mod worker;

use crate::net::{self, HANDSHAKE_TIMEOUT};
use crate::report::{ConnReport, Cpu, ProcReport, Report, Role, Shape};
use crate::{ClientConfig, Kind, LoadError, Method, ServerConfig, Spawn};
use lagkit_sys::proc::{self, Pid};
use nix::fcntl::OFlag;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::pipe2;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use worker::worker_main;

/// What a worker process is asked to do.
#[derive(Serialize, Deserialize, Clone, Debug)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub(crate) enum Job {
    /// Listen on `bind:port`, serve until told to stop.
    Server {
        index: u32,
        bind: IpAddr,
        port: u16,
        method: Method,
    },
    /// Connect to every port of `cfg.server`, run when told to go.
    Client {
        index: u32,
        cfg: Box<ClientConfig>,
        ports: Vec<u16>,
        run: u64,
    },
}

/// What a worker says, one JSON line each.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "msg", rename_all = "kebab-case")]
pub(crate) enum FromWorker {
    /// Set up (server: listening on `port`); waiting.
    Ready { port: u16 },
    /// Could not set up.
    Failed { why: String },
    /// Finished.
    Report { report: ProcReport },
}

/// A worker process and its two pipes.
struct WorkerProc {
    index: u32,
    pid: Pid,
    input: Option<File>,
    lines: mpsc::Receiver<String>,
    reaped: bool,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(pipe2(OFlag::O_CLOEXEC)?)
}

impl WorkerProc {
    fn spawn(spawn: &Spawn, index: u32, job: &Job) -> Result<WorkerProc, LoadError> {
        let (pid, input, output) = match spawn {
            Spawn::Fork => {
                let (in_r, in_w) = pipe().map_err(LoadError::Spawn)?;
                let (out_r, out_w) = pipe().map_err(LoadError::Spawn)?;
                // The child runs the worker: it never touches std's stdout,
                // the environment or the logger (see `worker::say`).
                let pid = proc::fork_with_stdio(in_r, out_w, || worker::run(job))
                    .map_err(LoadError::Spawn)?;
                (pid, File::from(in_w), File::from(out_r))
            }
            Spawn::Exec { program, args } => {
                let json = serde_json::to_string(job).map_err(|e| {
                    LoadError::Spawn(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
                })?;
                let mut child = std::process::Command::new(program)
                    .args(args)
                    .arg(json)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(LoadError::Spawn)?;
                let (Some(i), Some(o)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(LoadError::Spawn(std::io::Error::other("no pipes")));
                };
                // Reaped by pid below; dropping `child` neither waits nor kills.
                (
                    Pid::from_raw(child.id() as i32),
                    File::from(OwnedFd::from(i)),
                    File::from(OwnedFd::from(o)),
                )
            }
        };
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::Builder::new()
            .name(format!("socketprocs-{index}-out"))
            .spawn(move || {
                for line in BufReader::new(output).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        let mut w = WorkerProc {
            index,
            pid,
            input: Some(input),
            lines: rx,
            reaped: false,
        };
        if let Err(e) = reader {
            w.kill();
            return Err(LoadError::Thread(e));
        }
        Ok(w)
    }

    fn send(&mut self, line: &str) {
        if let Some(f) = &mut self.input {
            let _ = f.write_all(line.as_bytes());
            let _ = f.write_all(b"\n");
        }
    }

    /// The worker's next message, within `timeout` (None: no limit).
    fn recv(&mut self, timeout: Option<Duration>) -> Result<FromWorker, LoadError> {
        loop {
            let line = match timeout {
                Some(t) => self.lines.recv_timeout(t).map_err(|e| match e {
                    mpsc::RecvTimeoutError::Timeout => "did not answer in time".to_string(),
                    mpsc::RecvTimeoutError::Disconnected => "exited".to_string(),
                }),
                None => self.lines.recv().map_err(|_| "exited".to_string()),
            };
            let line = line.map_err(|why| LoadError::Worker {
                index: self.index,
                why,
            })?;
            // Anything that is not ours (a stray print) is skipped.
            if let Ok(m) = serde_json::from_str::<FromWorker>(&line) {
                return Ok(m);
            }
        }
    }

    fn try_reap(&mut self) -> bool {
        if self.reaped {
            return true;
        }
        match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {}
            Ok(_) | Err(_) => self.reaped = true,
        }
        self.reaped
    }

    /// Closes its stdin (it stops), waits up to `grace`, then kills it.
    fn finish(&mut self, grace: Duration) {
        self.input = None;
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.try_reap() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill();
    }

    fn kill(&mut self) {
        self.input = None;
        if self.try_reap() {
            return;
        }
        let _ = kill(self.pid, Signal::SIGKILL);
        let _ = waitpid(self.pid, None);
        self.reaped = true;
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        if !self.reaped {
            self.finish(Duration::from_secs(2));
        }
    }
}

fn abort_all(procs: &mut [WorkerProc]) {
    for p in procs.iter_mut() {
        p.input = None;
    }
    for p in procs.iter_mut() {
        p.finish(Duration::from_secs(2));
    }
}

/// Starts N client processes, lets them connect, starts them together,
/// and gathers their reports.
pub(crate) fn run_client(cfg: &ClientConfig) -> Result<Report, LoadError> {
    let ports = cfg.server_ports();
    let run = net::run_id();
    let mut procs = Vec::new();
    for i in 0..cfg.procs {
        let job = Job::Client {
            index: i,
            cfg: Box::new(cfg.clone()),
            ports: ports.clone(),
            run,
        };
        match WorkerProc::spawn(&cfg.spawn, i, &job) {
            Ok(p) => procs.push(p),
            Err(e) => {
                abort_all(&mut procs);
                return Err(e);
            }
        }
    }
    // Every process connects to every server, sequentially, each connect
    // retried up to the connect timeout.
    let setup = cfg.connect_timeout + HANDSHAKE_TIMEOUT + Duration::from_secs(5);
    for p in procs.iter_mut() {
        match p.recv(Some(setup)) {
            Ok(FromWorker::Ready { .. }) => {}
            Ok(FromWorker::Failed { why }) => {
                let index = p.index;
                abort_all(&mut procs);
                return Err(LoadError::Worker { index, why });
            }
            Ok(FromWorker::Report { .. }) | Err(_) => {
                let index = p.index;
                abort_all(&mut procs);
                return Err(LoadError::Worker {
                    index,
                    why: "did not get ready".into(),
                });
            }
        }
    }
    let start = Instant::now();
    for p in procs.iter_mut() {
        p.send("go");
    }
    let limit = cfg
        .duration
        .map(|d| d + net::GRACE + Duration::from_secs(5));
    let mut reports = Vec::new();
    for p in procs.iter_mut() {
        let left = limit.map(|l| {
            l.saturating_sub(start.elapsed())
                .max(Duration::from_secs(1))
        });
        match p.recv(left) {
            Ok(FromWorker::Report { report }) => reports.push(report),
            Ok(_) | Err(_) => {
                let index = p.index;
                abort_all(&mut procs);
                return Err(LoadError::Worker {
                    index,
                    why: "no report".into(),
                });
            }
        }
    }
    for p in procs.iter_mut() {
        p.finish(Duration::from_secs(5));
    }
    Ok(assemble(
        cfg.kind,
        Role::Client,
        cfg.procs,
        cfg.size,
        cfg.method,
        reports,
    ))
}

fn assemble(
    kind: Kind,
    role: Role,
    n: u32,
    size: usize,
    method: Method,
    processes: Vec<ProcReport>,
) -> Report {
    let elapsed = processes
        .iter()
        .map(|p| Duration::from_secs_f64(p.elapsed_s))
        .max()
        .unwrap_or_default();
    let cpu = processes
        .iter()
        .map(|p| p.cpu)
        .fold(Cpu::default(), Cpu::plus);
    let conns: Vec<ConnReport> = processes
        .iter()
        .flat_map(|p| p.connections.iter().cloned())
        .collect();
    let shape = Shape {
        kind,
        role,
        parallel: n,
        size,
        reply: size,
    };
    let mut r = Report::total(shape, elapsed, cpu, conns);
    r.method = Some(method);
    r.processes = processes;
    r
}

/// N server processes.
pub(crate) struct ServerProcs {
    procs: Vec<WorkerProc>,
    ports: Vec<u16>,
    method: Method,
}

/// Starts N server processes on `port..port+N` (or free ports for port 0).
pub(crate) fn start_server(cfg: &ServerConfig) -> Result<ServerProcs, LoadError> {
    if cfg.port != 0 && u32::from(cfg.port) + cfg.procs > 65536 {
        return Err(LoadError::PortRange);
    }
    let mut procs = Vec::new();
    let mut ports = Vec::new();
    for j in 0..cfg.procs {
        let port = if cfg.port == 0 {
            0
        } else {
            cfg.port + j as u16
        };
        let job = Job::Server {
            index: j,
            bind: cfg.bind,
            port,
            method: cfg.method,
        };
        let mut p = match WorkerProc::spawn(&cfg.spawn, j, &job) {
            Ok(p) => p,
            Err(e) => {
                abort_all(&mut procs);
                return Err(e);
            }
        };
        match p.recv(Some(Duration::from_secs(10))) {
            Ok(FromWorker::Ready { port }) => ports.push(port),
            Ok(FromWorker::Failed { why }) => {
                procs.push(p);
                abort_all(&mut procs);
                return Err(LoadError::Worker { index: j, why });
            }
            Ok(FromWorker::Report { .. }) | Err(_) => {
                procs.push(p);
                abort_all(&mut procs);
                return Err(LoadError::Worker {
                    index: j,
                    why: "did not start listening".into(),
                });
            }
        }
        procs.push(p);
    }
    Ok(ServerProcs {
        procs,
        ports,
        method: cfg.method,
    })
}

impl ServerProcs {
    pub(crate) fn ports(&self) -> Vec<u16> {
        self.ports.clone()
    }

    /// Tells every server process to stop and gathers what each served.
    pub(crate) fn stop(mut self) -> Result<Report, LoadError> {
        for p in self.procs.iter_mut() {
            p.send("stop");
        }
        let mut reports = Vec::new();
        let mut failed = None;
        for p in self.procs.iter_mut() {
            match p.recv(Some(Duration::from_secs(10))) {
                Ok(FromWorker::Report { report }) => reports.push(report),
                _ => {
                    failed.get_or_insert(p.index);
                }
            }
        }
        for p in self.procs.iter_mut() {
            p.finish(Duration::from_secs(5));
        }
        if let Some(index) = failed {
            return Err(LoadError::Worker {
                index,
                why: "no report at stop".into(),
            });
        }
        let n = self.procs.len() as u32;
        Ok(assemble(
            Kind::Socketprocs,
            Role::Server,
            n,
            0,
            self.method,
            reports,
        ))
    }
}
