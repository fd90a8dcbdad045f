//! Built-in scenarios: a topology swept over a list of configurations
//! (`lagkit lab list`, `lagkit lab run NAME`, `lagkit demo`).
//!
//! `ibm-6513` models seed 000's test system 1: two servers, each with a
//! 2-link 802.3ad bond, through one switch (a Cisco 6513 there, Open
//! vSwitch here) with an LACP port-channel per server, running socketprocs.
//! The sweep compares the switch's frame distribution: L4 ports (Cisco
//! `src-dst-port`, OVS `balance-tcp`, code `p-L-v`) against address
//! hashing (Cisco `src-dst-ip` in the seed, code `i-L-v`; OVS has no IP
//! hash, so `balance-slb` on source MAC stands for it, code `m-L-v` — with
//! two hosts both put every frame to one server on one link). Hosts are
//! `cli` and `srv` (the seed's "cli" columns), the switch `c6513`.

use crate::lab::Options;
use crate::report::{ConfigCode, Report, RunRecord};
use crate::run::{run_once, RunOptions};
use crate::topology::Topology;
use crate::LabError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One configuration of a sweep.
#[derive(Debug, Clone)]
pub struct Config {
    /// Short label, e.g. "switch L2 (balance-slb), server layer2+3".
    pub label: String,
    /// The topology of this configuration.
    pub topo: Topology,
}

/// A built-in scenario: a name, a description and its configurations.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name (`lagkit lab run NAME`).
    pub name: &'static str,
    /// One line.
    pub description: &'static str,
    /// The sweep, run in order.
    pub configs: Vec<Config>,
}

/// The built-in scenarios: name and one-line description.
pub const BUILTIN: [(&str, &str); 1] = [(
    "ibm-6513",
    "seed 000 test system 1: 2 servers × 2-link LACP bonds via one switch, socketprocs; switch L2/L3 vs L4 hashing (--short: 2 runs, ~20 s; full: 4 runs, ~1 min)",
)];

/// The scenario `name`, short (fewer, shorter runs) or full.
pub fn builtin(name: &str, short: bool) -> Option<Scenario> {
    match name {
        "ibm-6513" => Some(ibm_6513(short)),
        _ => None,
    }
}

/// socketprocs processes per side (N×N connections). The seed ran 8–16;
/// 8 (64 connections) overruns the shaped links' queues on 2 cores
/// (hundreds of retransmits/s), 4 (16 connections) does not.
pub const IBM_6513_PROCS: u32 = 4;

/// Rate of the scaled links, and what it stands for.
pub const IBM_6513_RATE: &str = "100mbit";
/// The scale note of ibm-6513's reports.
pub const IBM_6513_SCALE: &str = "100 Mbit/s links stand for the seed's 1 Gbit/s ones (factor 10): on 2 cores Open vSwitch's userspace datapath tops out near 1 Gbit/s";

fn ibm_6513_toml(switch_lb: &str, server_hash: &str, procs: u32, seconds: u32) -> String {
    format!(
        r#"name = "ibm-6513"

[scale]
note = "{IBM_6513_SCALE}"
factor = 10

[[host]]
name = "cli"
address = "10.65.13.1/24"
bond = {{ mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "{server_hash}" }}

[[host]]
name = "srv"
address = "10.65.13.2/24"
bond = {{ mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "{server_hash}" }}

[[switch]]
name = "c6513"
kind = "ovs"

[[switch.channel]]
name = "po3"
host = "cli"
protocol = "lacp-active"
load_balance = "{switch_lb}"

[[switch.channel]]
name = "po4"
host = "srv"
protocol = "lacp-active"
load_balance = "{switch_lb}"

[[link]]
between = ["cli", "c6513"]
count = 2
rate = "{IBM_6513_RATE}"
overhead = true
mtu = 1500

[[link]]
between = ["srv", "c6513"]
count = 2
rate = "{IBM_6513_RATE}"
overhead = true
mtu = 1500

[workload]
kind = "lagkit-load"
load = "socketprocs"
client = "cli"
server = "srv"
procs = {procs}
method = "epoll-et"
size = 4096
seconds = {seconds}
"#
    )
}

/// seed 000 test system 1, scaled (see the module documentation). Short:
/// L2/L3 (switch balance-slb, servers layer2+3) against L4 (balance-tcp,
/// layer3+4), 4 procs, 6 s each (OVS rebalances every second meanwhile). Full: also the crossed combinations (the
/// seed's runs 1 and 22: address hashing on the switch, layer3+4 on the
/// servers), 10 s each.
pub fn ibm_6513(short: bool) -> Scenario {
    let seconds = if short { 6 } else { 10 };
    let mut combos = vec![
        (
            "l2",
            "layer2+3",
            "switch L2 (balance-slb), servers layer2+3",
        ),
        (
            "l4",
            "layer3+4",
            "switch L4 (balance-tcp), servers layer3+4",
        ),
    ];
    if !short {
        combos.push((
            "l2",
            "layer3+4",
            "switch L2 (balance-slb), servers layer3+4",
        ));
        combos.push((
            "l4",
            "layer2+3",
            "switch L4 (balance-tcp), servers layer2+3",
        ));
    }
    let configs = combos
        .into_iter()
        .map(|(lb, hash, label)| {
            let text = ibm_6513_toml(lb, hash, IBM_6513_PROCS, seconds);
            let topo = Topology::parse(&text, "builtin:ibm-6513", "ibm-6513")
                .expect("the built-in ibm-6513 topology is valid");
            Config {
                label: label.to_string(),
                topo,
            }
        })
        .collect();
    Scenario {
        name: "ibm-6513",
        description: BUILTIN[0].1,
        configs,
    }
}

/// Runs every configuration of `sc` in order (each: up → converge →
/// workload → measure → down), calling `progress` with one line per run;
/// a failed run is recorded as failed and the sweep goes on. Writes the
/// report into `report_dir` if given.
pub fn run_sweep(
    sc: &Scenario,
    opts: &RunOptions,
    report_dir: Option<&Path>,
    mut progress: impl FnMut(&str),
) -> Result<(Report, Vec<PathBuf>), LabError> {
    let scale = sc.configs.first().and_then(|c| c.topo.scale.clone());
    let mut report = Report::new(sc.name, scale);
    let t0 = Instant::now();
    let n = sc.configs.len();
    for (i, c) in sc.configs.iter().enumerate() {
        let mut o = opts.clone();
        o.run = i + 1;
        let started = Instant::now();
        progress(&format!("[{}/{n}] {} ...", i + 1, c.label));
        let rec = match run_once(&c.topo, &o) {
            Ok(r) => r,
            Err(e) => {
                let code = ConfigCode::of(
                    &c.topo,
                    c.topo
                        .workload
                        .as_ref()
                        .map(|w| w.workload().code())
                        .as_ref(),
                );
                let mut r = RunRecord::new(i + 1, &c.topo, code);
                r.error = Some(e.to_string());
                r
            }
        };
        let took = started.elapsed();
        let done = i + 1;
        let eta = t0.elapsed().as_secs_f64() / done as f64 * (n - done) as f64;
        let what = match (&rec.error, &rec.workload) {
            (Some(e), _) => format!("FAILED: {}", e.lines().next().unwrap_or("")),
            (None, Some(w)) => format!("{:.1} Mbit/s", w.mbps),
            (None, None) => "no result".into(),
        };
        progress(&format!(
            "[{done}/{n}] {} {} {}: {what} ({:.0} s; elapsed {:.0} s, ETA {:.0} s)",
            rec.code.switch,
            rec.code.server,
            rec.code.app,
            took.as_secs_f64(),
            t0.elapsed().as_secs_f64(),
            eta
        ));
        report.runs.push(rec);
    }
    let files = match report_dir {
        Some(d) => report.write(d).map_err(LabError::Run)?,
        None => Vec::new(),
    };
    Ok((report, files))
}

/// The short ibm-6513 comparison for `lagkit demo`, with `lagkit` as the
/// lab's binary; the report goes to `report_dir`.
pub fn demo(
    lab: Options,
    report_dir: &Path,
    progress: impl FnMut(&str),
) -> Result<(Report, Vec<PathBuf>), LabError> {
    let sc = ibm_6513(true);
    let mut o = RunOptions::new(lab);
    o.converge_timeout = Duration::from_secs(40);
    run_sweep(&sc, &o, Some(report_dir), progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibm_6513_configurations() {
        let s = ibm_6513(true);
        assert_eq!(s.configs.len(), 2);
        let codes: Vec<ConfigCode> = s
            .configs
            .iter()
            .map(|c| {
                ConfigCode::of(
                    &c.topo,
                    Some(&c.topo.workload.as_ref().unwrap().workload().code()),
                )
            })
            .collect();
        assert_eq!(codes[0].switch, "m-L-v");
        assert_eq!(codes[0].server, "8d-l3");
        assert_eq!(codes[1].switch, "p-L-v");
        assert_eq!(codes[1].server, "8d-st");
        assert_eq!(
            (codes[0].app.as_str(), codes[0].procs),
            ("e", IBM_6513_PROCS)
        );
        assert_eq!(codes[0].links, "2x100M");
        assert_eq!(ibm_6513(false).configs.len(), 4);
        assert!(builtin("ibm-6513", true).is_some());
        assert!(builtin("nope", true).is_none());
    }
}
