//! What a run puts on the links. A [`Workload`] starts its servers
//! (recording their PIDs in the lab's state file, so `lab down` stops them
//! after a crash), runs once, and stops them.
//!
//! Implemented: `iperf3` (`iperf3 -s -D` in the server's namespace,
//! `iperf3 -c ... -J` in the client's). Slot: lagkit's own workloads
//! (`lagkit load`: socketprocs, stream, rr, lpm — crates/load) go in
//! [`WorkloadSpec`] as a new variant and a new [`Workload`] impl; nothing
//! else in the lab changes.

use crate::lab::Lab;
use crate::sys::{self, poll, ProcId};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A workload as the topology file describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// iperf3 between two hosts.
    Iperf3(Iperf3Spec),
    // SLOT (not implemented yet): `LagkitLoad(LoadSpec)` — lagkit's own
    // workloads from crates/load (`lagkit load ...`), once that crate is
    // ready. The topology parser refuses `kind = "lagkit-load"` until then.
}

impl WorkloadSpec {
    /// The runnable workload.
    pub fn workload(&self) -> Box<dyn Workload> {
        match self {
            WorkloadSpec::Iperf3(s) => Box::new(Iperf3::new(s.clone())),
        }
    }
}

/// iperf3 options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iperf3Spec {
    /// Host running `iperf3 -c`.
    pub client: String,
    /// Host running `iperf3 -s`.
    pub server: String,
    /// Parallel flows (`-P`).
    pub flows: u32,
    /// Duration (`-t`).
    pub seconds: u32,
    /// Both directions at once (`--bidir`).
    pub bidir: bool,
    /// Server port.
    pub port: u16,
}

/// What a workload reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Workload kind, e.g. "iperf3".
    pub kind: String,
    /// Goodput, both directions added (seed 000's "transmit plus receive").
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
}

/// The configuration-code columns a workload contributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadCode {
    /// Application (seed 000 "App meth"): `i` for iperf3.
    pub app: String,
    /// Processes or flows per side (seed 000 "Num procs").
    pub procs: u32,
}

/// A workload a run can drive.
pub trait Workload {
    /// Its columns in the configuration code.
    fn code(&self) -> WorkloadCode;
    /// One line describing it.
    fn describe(&self) -> String;
    /// Starts what must run before the measurement (servers).
    fn prepare(&mut self, lab: &mut Lab) -> Result<(), String>;
    /// Runs once and reports.
    fn run(&mut self, lab: &Lab) -> Result<WorkloadResult, String>;
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

    fn server_addr(&self, lab: &Lab) -> Result<String, String> {
        lab.topo
            .host(&self.spec.server)
            .and_then(|h| h.address.as_deref())
            .and_then(|a| a.split('/').next())
            .map(String::from)
            .ok_or_else(|| format!("host {} has no address", self.spec.server))
    }
}

/// Goodput and retransmits from `iperf3 -J` output.
pub fn parse_iperf3(json: &str) -> Result<WorkloadResult, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("iperf3 -J output is not JSON: {e}"))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(format!("iperf3: {e}"));
    }
    let end = v.get("end").ok_or("iperf3 -J output has no 'end'")?;
    let bps = |k: &str| end[k]["bits_per_second"].as_f64();
    let fwd = bps("sum_received").ok_or("iperf3 -J: no end.sum_received")?;
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
        mbps: (fwd + rev) / 1e6,
        forward_mbps: fwd / 1e6,
        reverse_mbps: rev / 1e6,
        retransmits: retr,
        flows,
        seconds: secs,
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

    fn prepare(&mut self, lab: &mut Lab) -> Result<(), String> {
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
        .ok_or_else(|| format!("iperf3 -s -D did not start: {}", sys::tail(&logfile, 5)))?;
        lab.track(&format!("iperf3 server {}", self.spec.server), p.clone())?;
        self.server = Some(p);
        let filter = format!("sport = :{port}");
        poll(Duration::from_secs(5), || {
            sys::ns_run(&ns, &["ss", "-Hltn", &filter])
                .ok()
                .filter(|o| !o.trim().is_empty())
        })
        .ok_or("iperf3 server does not listen after 5 s")?;
        Ok(())
    }

    fn run(&mut self, lab: &Lab) -> Result<WorkloadResult, String> {
        let iperf3 = sys::tool_path("iperf3")?;
        let addr = self.server_addr(lab)?;
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
        let mut last = String::new();
        // The server answers "busy" for a moment after a previous test.
        for _ in 0..10 {
            let mut v = vec!["ip", "netns", "exec", &ns];
            v.extend_from_slice(&args);
            let out = std::process::Command::new(v[0])
                .args(&v[1..])
                .output()
                .map_err(|e| format!("iperf3: {e}"))?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            match parse_iperf3(&text) {
                Ok(mut r) => {
                    if r.seconds == 0.0 {
                        r.seconds = t0.elapsed().as_secs_f64();
                    }
                    return Ok(r);
                }
                Err(e) if e.contains("busy") => {
                    last = e;
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(e) => {
                    return Err(format!(
                        "{e}{}",
                        if out.stderr.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", String::from_utf8_lossy(&out.stderr).trim())
                        }
                    ))
                }
            }
        }
        Err(last)
    }

    fn finish(&mut self, lab: &mut Lab) {
        if let Some(p) = self.server.take() {
            p.stop(Duration::from_secs(3));
            let _ = lab.untrack(p.pid);
        }
    }
}

#[cfg(test)]
mod tests {
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
        assert!(e.contains("busy"));
    }
}
