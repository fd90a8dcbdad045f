//! `lab run`: up, wait for convergence (with a deadline), run the workload
//! between two snapshots, collect, down — down also when anything fails.

use crate::converge::{snapshot as lacp_snapshot, wait_formed};
use crate::error::{ConvergeError, LabError, RunError, UsageError};
use crate::lab::{DownReport, Lab, Options};
use crate::measure;
use crate::report::{Capacity, ConfigCode, Formation, Report, RunRecord};
use crate::topology::Topology;
use std::time::Duration;

/// Options of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Lab options.
    pub lab: Options,
    /// How long to wait for the aggregates.
    pub converge_timeout: Duration,
    /// Pause after convergence before measuring (lets OVS rebalance).
    pub settle: Duration,
    /// Run number in the report.
    pub run: usize,
    /// The command line, recorded in sweep reports.
    pub command: Option<String>,
    /// The configuration's bonds and channels are expected to form (a
    /// built-in scenario's rows that show a pairing that does not form
    /// set this false: then not forming is the run's result).
    pub expect_formed: bool,
    /// How long to wait for a configuration expected not to form before
    /// taking "not formed" as its result.
    pub unformed_wait: Duration,
    /// A configuration expected not to form still carries traffic (its
    /// switch's members stand alone): run the workload after the wait.
    pub run_unformed: bool,
}

/// How long a run expected not to form waits: PAgP's silent wait (15 s,
/// after which a silent desirable port attaches to a partner that never
/// speaks PAgP) and a margin, so a channel that would form late still does
/// within it.
pub const UNFORMED_WAIT: Duration = Duration::from_secs(20);

impl RunOptions {
    /// Defaults: 60 s to converge, 1 s to settle, run 1, expected to form
    /// ([`UNFORMED_WAIT`] otherwise).
    pub fn new(lab: Options) -> RunOptions {
        RunOptions {
            lab,
            converge_timeout: Duration::from_secs(60),
            settle: Duration::from_secs(1),
            run: 1,
            command: None,
            expect_formed: true,
            unformed_wait: UNFORMED_WAIT,
            run_unformed: false,
        }
    }
}

/// Brings a lab down when dropped (also on panic).
pub struct LabGuard {
    lab: Option<Lab>,
}

impl LabGuard {
    /// Guards `lab`.
    pub fn new(lab: Lab) -> LabGuard {
        LabGuard { lab: Some(lab) }
    }

    /// The lab.
    pub fn lab(&mut self) -> &mut Lab {
        self.lab.as_mut().expect("lab is up")
    }

    /// Brings it down now.
    pub fn down(mut self) -> DownReport {
        self.lab.take().map(|mut l| l.down()).unwrap_or_default()
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        if let Some(mut l) = self.lab.take() {
            let r = l.down();
            for e in r.errors {
                eprintln!("lab down: {e}");
            }
        }
    }
}

/// One run of `topo`'s workload: returns the record (with `error` set if the
/// run failed after the lab came up); `Err` only when the lab could not be
/// brought up at all, or has no workload.
pub fn run_once(topo: &Topology, opts: &RunOptions) -> Result<RunRecord, LabError> {
    let spec = topo
        .workload
        .clone()
        .ok_or_else(|| UsageError::NoWorkload {
            file: topo.file.clone(),
        })?;
    let mut w = spec.workload();
    let code = ConfigCode::of(topo, Some(&w.code()));
    let mut rec = RunRecord::new(opts.run, topo, code);
    let say = |m: &str| {
        if opts.lab.verbose {
            eprintln!("[lab {} run {}] {m}", topo.name, opts.run);
        }
    };
    let mut guard = LabGuard::new(Lab::up(topo.clone(), opts.lab.clone())?);
    let result = (|| -> Result<(), RunError> {
        let lab = guard.lab();
        let wait = if opts.expect_formed {
            opts.converge_timeout
        } else {
            opts.unformed_wait
        };
        let (took, snap) = wait_formed(lab, wait);
        let formed = snap.all_ok();
        rec.formation = Some(Formation {
            expected: opts.expect_formed,
            formed,
            seconds: took.as_secs_f64(),
            why: snap.not_converged(),
        });
        if !formed {
            let why = ConvergeError {
                after: wait,
                sides: snap.not_converged(),
            };
            if opts.expect_formed {
                rec.lacp_start = Some(snap);
                return Err(why.into());
            }
            say(&why.to_string());
            if !opts.run_unformed {
                // The result: it did not form, as expected; nothing to
                // measure.
                rec.lacp_start = Some(snap);
                return Ok(());
            }
        } else {
            rec.converge_seconds = Some(took.as_secs_f64());
            say(&format!("converged in {:.1} s", took.as_secs_f64()));
        }
        rec.lacp_start = Some(snap);
        w.prepare(lab)?;
        steer_alb_peers(lab, &spec)?;
        std::thread::sleep(opts.settle);
        say(&w.describe());
        let before = measure::snapshot(lab)?;
        let res = w.run(lab);
        let after = measure::snapshot(lab);
        rec.lacp_end = Some(lacp_snapshot(lab));
        w.finish(lab);
        let res = res?;
        rec.measurement = Some(measure::diff(&before, &after?));
        rec.capacity = capacity(topo, &spec);
        rec.limit_mbps = rec.capacity.as_ref().map(Capacity::total_mbps);
        rec.workload = Some(res);
        Ok(())
    })();
    if let Err(e) = result {
        let logs = guard.lab().logs_tail();
        rec.error = Some(if logs.is_empty() {
            e.to_string()
        } else {
            format!("{e}\n{logs}")
        });
    }
    let down = guard.down();
    if !down.errors.is_empty() {
        rec.flags
            .push(format!("cleanup: {}", down.errors.join("; ")));
    }
    let extra = rec.flags.clone();
    rec.derive_flags();
    rec.flags.extend(extra);
    Ok(rec)
}

/// The links' capacity for the workload, each way it sends: shaped rate ×
/// members of the smaller end (the clients' links together against the
/// server's).
pub fn capacity(topo: &Topology, spec: &crate::workload::WorkloadSpec) -> Option<Capacity> {
    let rate = topo.link_rate_mbit()?;
    let (clients, server) = spec.ends();
    let links = |h: &str| topo.host(h).map(|h| h.ifaces.len()).unwrap_or(0);
    let k = clients
        .iter()
        .map(|c| links(c))
        .sum::<usize>()
        .min(links(server));
    let (forward, reverse) = spec.directions();
    (k > 0).then(|| Capacity {
        per_direction_mbps: rate * k as f64,
        links: format!("{k} × {rate} Mbit/s"),
        forward,
        reverse,
        forward_path: format!("{} -> {server}", clients.join("+")),
    })
}

/// `lab run`: one run, a report written to `report_dir` (if given).
pub fn run(
    topo: &Topology,
    opts: &RunOptions,
    report_dir: Option<&std::path::Path>,
) -> Result<(Report, Vec<std::path::PathBuf>), LabError> {
    let rec = run_once(topo, opts)?;
    let mut report = Report::new(&topo.name, topo.scale.clone());
    report.runs.push(rec);
    let files = match report_dir {
        Some(d) => report.write(d)?,
        None => Vec::new(),
    };
    Ok((report, files))
}

/// How long a balance-alb bond goes on telling a new peer its member: it
/// sends its ARP reply 3 times, 1.1 s apart (`lagkit_bond`'s alb module),
/// because a peer's neighbour table ignores a new reply within its lock
/// time; plus a margin.
const ALB_STEERING: Duration = Duration::from_millis(3 * 1100 + 400);

/// balance-alb steers each peer to a member by ARP replies. A peer that
/// first speaks to the bond during the measured seconds sends to the
/// bond's own MAC (its first member) until a reply gets through, a second
/// or three, which skews a short run's receive shares. So each workload
/// host resolves every alb host before the counters start (one ping), and
/// the run starts when the bond has sent its last notification.
fn steer_alb_peers(lab: &Lab, spec: &crate::workload::WorkloadSpec) -> Result<(), RunError> {
    let (clients, server) = spec.ends();
    let ends: Vec<&str> = clients
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(server))
        .collect();
    let alb = |h: &str| {
        lab.topo
            .host(h)
            .and_then(|x| x.bond.as_ref())
            .is_some_and(|b| b.config.mode == lagkit_bondcfg::Mode::BalanceAlb)
    };
    let mut pinged = false;
    for &target in ends.iter().filter(|h| alb(h)) {
        let Some(ip) = lab
            .topo
            .host(target)
            .and_then(|h| h.address.as_deref())
            .and_then(|a| a.split('/').next())
        else {
            continue;
        };
        for &peer in ends.iter().filter(|&&p| p != target) {
            crate::sys::ns_run(&lab.ns(peer), &["ping", "-c", "1", "-W", "2", "-q", ip]).map_err(
                |source| RunError::Unreachable {
                    peer: peer.to_string(),
                    target: target.to_string(),
                    ip: ip.to_string(),
                    source: Box::new(source),
                },
            )?;
            pinged = true;
        }
    }
    if pinged {
        std::thread::sleep(ALB_STEERING);
    }
    Ok(())
}
