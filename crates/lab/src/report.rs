//! Reports: a terminal table in the layout of IBM's 6513 tables (run
//! number, configuration code columns, CPU, balance ratios per bond,
//! Mbit/s, out-of-order/s), the same as JSON, an HTML page (the `html`
//! module) and SVG charts (the `charts` module) in a report folder.
//!
//! The terminal table is written with `format!` widths, not `comfy-table`
//! or `tabled`: it keeps the column layout of the published measurements
//! it is read next to (groups separated by `|`, one column pair per bond
//! host, a flags column that may run long); `report.html` is the one to
//! read at length.

use crate::converge::LacpSnapshot;
use crate::error::RunError;
use crate::measure::Measurement;
use crate::sys::IoError;
use crate::topology::{LoadBalance, Protocol, Scale, SwitchKind, Topology};
use crate::workload::{WorkloadCode, WorkloadResult};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The configuration code of a run, IBM's 6513 measurements style.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigCode {
    /// Application: `i` iperf3.
    pub app: String,
    /// Flows/processes.
    pub procs: u32,
    /// Switch: load balance - protocol - port mode, e.g. `p-L-v`
    /// (p: L4 ports, i: L3 IP, m: L2 MAC; L: LACP, P: PAgP, M:
    /// manual/static, N: none; v: active, s: passive, d: desirable
    /// non-silent, ds: desirable silent, u/us: auto, o: on, n: none).
    pub switch: String,
    /// Server (host bond): mode - hash, e.g. `8d-st` (8d: 802.3ad, sd:
    /// balance-xor "standard", rn: round-robin, ab: active-backup, ad:
    /// adaptive, tl/al: tlb/alb, bc: broadcast; st: layer3+4 or AIX
    /// src_dst_port, sp/dp: AIX src_port/dst_port, l2: layer2, l3:
    /// layer2+3, sg: strong, en: encap).
    pub server: String,
    /// The host bonds' configured `engine` (auto, bpf, userspace; several
    /// joined by `/`), `-` without bonds; empty in reports from before the
    /// key.
    #[serde(default)]
    pub engine: String,
    /// MTU: S (≤ 1500), J (jumbo) or P (set in only some places).
    pub mtu: String,
    /// Links: `<count per bond>x<rate>`, e.g. `2x100M`.
    pub links: String,
}

impl ConfigCode {
    /// The code of `topo` with workload columns `w`.
    pub fn of(topo: &Topology, w: Option<&WorkloadCode>) -> ConfigCode {
        let mut sw: Vec<String> = Vec::new();
        for s in &topo.switches {
            for c in &s.channels {
                let lb = match c.load_balance {
                    LoadBalance::L4 => "p",
                    LoadBalance::L3 => "i",
                    LoadBalance::L2 => "m",
                };
                let (proto, mode) = match c.protocol {
                    Protocol::LacpActive => ("L", "v"),
                    Protocol::LacpPassive => ("L", "s"),
                    Protocol::Static => ("M", "o"),
                    Protocol::None => ("N", "n"),
                    // IBM's 6513 PAgP runs were desirable non-silent (`d`);
                    // `s` marks silent, `u` auto.
                    Protocol::PagpDesirable => ("P", "ds"),
                    Protocol::PagpDesirableNonSilent => ("P", "d"),
                    Protocol::PagpAuto => ("P", "us"),
                    Protocol::PagpAutoNonSilent => ("P", "u"),
                };
                let code = format!("{lb}-{proto}-{mode}");
                if !sw.contains(&code) {
                    sw.push(code);
                }
            }
        }
        let mut srv: Vec<String> = Vec::new();
        let mut engines: Vec<&str> = Vec::new();
        for h in &topo.hosts {
            if let Some(b) = &h.bond {
                let m = match b.mode.as_str() {
                    "802.3ad" => "8d",
                    "balance-xor" => "sd",
                    "balance-rr" => "rn",
                    "active-backup" => "ab",
                    "adaptive" => "ad",
                    "balance-tlb" => "tl",
                    "balance-alb" => "al",
                    "broadcast" => "bc",
                    other => &other[..other.len().min(2)],
                };
                let hname = b.hash.split(':').next().unwrap_or("");
                let hc = match hname {
                    // IBM's 6513 "st" is AIX src_dst_port, the L4 hash.
                    "layer3+4" | "src_dst_port" => "st",
                    "src_port" => "sp",
                    "dst_port" => "dp",
                    "layer2" => "l2",
                    "layer2+3" => "l3",
                    "strong" => "sg",
                    x if x.starts_with("encap") => "en",
                    other => &other[..other.len().min(2)],
                };
                let code = format!("{m}-{hc}");
                if !srv.contains(&code) {
                    srv.push(code);
                }
                if !engines.contains(&b.engine.as_str()) {
                    engines.push(&b.engine);
                }
            }
        }
        let mtu = topo.links.iter().map(|l| l.max_mtu()).max().unwrap_or(1500);
        // MTU set in only some places: link ends that differ, or a bond
        // whose MTU is not its links'.
        let partial = topo.links.iter().any(|l| l.mtu_mismatch())
            || topo.hosts.iter().any(|h| {
                h.bond.as_ref().is_some_and(|b| {
                    topo.ends_on(&h.name)
                        .any(|(e, l)| l.mtu[usize::from(e != &l.a)] != u32::from(b.config.mtu))
                })
            });
        let per_bond = topo
            .hosts
            .iter()
            .filter_map(|h| h.bond.as_ref().map(|b| b.members.len()))
            .max()
            .unwrap_or(1);
        let rate = match topo.link_rate_mbit() {
            Some(r) if r >= 1000.0 => format!("{}G", r / 1000.0),
            Some(r) => format!("{r}M"),
            None => "unsh".into(),
        };
        ConfigCode {
            app: w.map_or("-".into(), |w| w.app.clone()),
            procs: w.map_or(0, |w| w.procs),
            switch: if sw.is_empty() {
                "-".into()
            } else {
                sw.join("/")
            },
            server: if srv.is_empty() {
                "-".into()
            } else {
                srv.join("/")
            },
            engine: if engines.is_empty() {
                "-".into()
            } else {
                engines.join("/")
            },
            mtu: if partial {
                "P".into()
            } else if mtu > 1500 {
                "J".into()
            } else {
                "S".into()
            },
            links: format!("{per_bond}x{rate}"),
        }
    }
}

/// A switch of a run: what implemented it and how it spread frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchRun {
    /// The switch.
    pub name: String,
    /// `lagkit` or `ovs`.
    pub kind: SwitchKind,
    /// How its channels spread frames: the Catalyst method lagkit's switch
    /// ran (`src-dst-port`), or Open vSwitch's bond mode (`balance-tcp`).
    pub method: String,
}

impl SwitchRun {
    /// The switches of `topo`.
    pub fn of(topo: &Topology) -> Vec<SwitchRun> {
        topo.switches
            .iter()
            .map(|s| SwitchRun {
                name: s.name.clone(),
                kind: s.kind,
                method: match s.kind {
                    SwitchKind::Lagkit => {
                        format!("cisco {}", crate::lagkit_switch::method_of(s))
                    }
                    SwitchKind::Ovs => s
                        .load_balance()
                        .and_then(LoadBalance::ovs_bond_mode)
                        .unwrap_or("no bond")
                        .to_string(),
                },
            })
            .collect()
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run number (1-based).
    pub run: usize,
    /// The sweep configuration's key (built-in scenarios), e.g. `l4`.
    #[serde(default)]
    pub key: String,
    /// What this configuration is, in words.
    #[serde(default)]
    pub label: String,
    /// Configuration code.
    pub code: ConfigCode,
    /// The topology file.
    pub topology: String,
    /// Its switches (reports from before the key: Open vSwitch).
    #[serde(default)]
    pub switches: Vec<SwitchRun>,
    /// What the workload reported.
    pub workload: Option<WorkloadResult>,
    /// What the counters say.
    pub measurement: Option<Measurement>,
    /// Seconds to converge.
    pub converge_seconds: Option<f64>,
    /// LACP at the start of the run.
    pub lacp_start: Option<LacpSnapshot>,
    /// LACP at the end.
    pub lacp_end: Option<LacpSnapshot>,
    /// The physical limit of the links for this workload, Mbit/s (shaped
    /// rate × members × directions), if known.
    pub limit_mbps: Option<f64>,
    /// Flags: "CPU-bound", "shaping lost", "LACP changed", ...
    pub flags: Vec<String>,
    /// Why the run failed, if it did.
    pub error: Option<String>,
    /// Whether the channels formed, and whether they were meant to
    /// (absent in reports from before the key).
    #[serde(default)]
    pub formation: Option<Formation>,
    /// The links' capacity each way the workload sends (absent in
    /// reports from before the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Why a bonded host's traffic spreads as it does, where the planner
    /// can tell from the run's connections (`lagkit lab run` fills it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub balance_why: Vec<BalanceWhy>,
}

/// The links' capacity for a workload, each way it sends: a one-way
/// workload is measured against one direction's capacity, one that sends
/// both ways against each direction's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// One direction's capacity, Mbit/s: shaped rate × members of the
    /// smaller end.
    pub per_direction_mbps: f64,
    /// Links × rate, in words: `2 × 100 Mbit/s`.
    pub links: String,
    /// The workload sends client -> server.
    pub forward: bool,
    /// The workload sends server -> client.
    pub reverse: bool,
    /// The client -> server ends, in words: `h1 -> h2`.
    pub forward_path: String,
}

impl Capacity {
    /// Directions the workload sends in (1 or 2).
    pub fn directions(&self) -> u8 {
        u8::from(self.forward) + u8::from(self.reverse)
    }

    /// The limit of the goodput, both ways added, Mbit/s.
    pub fn total_mbps(&self) -> f64 {
        self.per_direction_mbps * f64::from(self.directions().max(1))
    }

    /// Goodput `w` as a share of each direction's capacity, the way the
    /// workload sends: `89%` one way, `45%/45%` both ways (forward first).
    pub fn used(&self, w: &WorkloadResult) -> String {
        let pct = |x: f64| format!("{:.0}%", 100.0 * x / self.per_direction_mbps);
        match (self.forward, self.reverse) {
            (true, true) => format!("{}/{}", pct(w.forward_mbps), pct(w.reverse_mbps)),
            (true, false) => pct(w.forward_mbps),
            (false, true) => pct(w.reverse_mbps),
            (false, false) => pct(w.mbps),
        }
    }

    /// The capacity line: what the links could carry each way the
    /// workload sends, and what it carried.
    pub fn line(&self, w: Option<&WorkloadResult>) -> String {
        let back: String = {
            let mut parts: Vec<&str> = self.forward_path.split(" -> ").collect();
            parts.reverse();
            parts.join(" -> ")
        };
        let got = |x: f64| {
            format!(
                "{x:.1} Mbit/s ({:.0}%)",
                100.0 * x / self.per_direction_mbps
            )
        };
        let cap = self.per_direction_mbps;
        match (self.forward, self.reverse, w) {
            (true, true, Some(w)) => format!(
                "capacity {cap:.0} Mbit/s each way ({}): {} {}, {back} {}",
                self.links,
                self.forward_path,
                got(w.forward_mbps),
                got(w.reverse_mbps)
            ),
            (true, true, None) => format!("capacity {cap:.0} Mbit/s each way ({})", self.links),
            (f, _, w) => {
                let path = if f { self.forward_path.as_str() } else { &back };
                let mbps = w.map(|w| if f { w.forward_mbps } else { w.reverse_mbps });
                format!(
                    "capacity {cap:.0} Mbit/s one way, {path} ({}){}",
                    self.links,
                    mbps.map_or(String::new(), |x| format!(": {}", got(x)))
                )
            }
        }
    }
}

/// Why one bonded host's traffic one way spreads as it does, as the
/// planner explains it from the run's own connections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BalanceWhy {
    /// The bonded host.
    pub host: String,
    /// `tx` (its bond spreads what it sends) or `rx` (what it receives,
    /// spread by the switch's channel or its peer).
    pub direction: String,
    /// Who spreads it, in words.
    pub by: String,
    /// The cause, in a network engineer's words.
    pub cause: String,
    /// What to change, in the terms of whoever spreads it.
    pub fix: String,
}

impl BalanceWhy {
    /// One line: `why h2 rx is 0.00 (sw's channel po2 ...): cause; fix:
    /// ...`, with the balance ratio measured (`ratio`) when there is one.
    pub fn line(&self, ratio: Option<f64>) -> String {
        format!(
            "why {} {} is {} ({}): {}; fix: {}",
            self.host,
            self.direction,
            ratio.map_or("uneven".into(), |r| format!("{r:.2}")),
            self.by,
            self.cause,
            self.fix
        )
    }
}

/// Whether a run's bonds and channels formed, against what its
/// configuration expected. A configuration that is expected not to form
/// (PAgP auto facing auto, a non-silent desirable port facing a bond
/// that speaks no PAgP) is waited for all the same; when it indeed does
/// not form, that is the run's result, and no workload runs over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Formation {
    /// Expected to form.
    pub expected: bool,
    /// Formed within the wait.
    pub formed: bool,
    /// Seconds waited (to forming, or the whole wait).
    pub seconds: f64,
    /// What had not formed at the end of the wait, and why.
    #[serde(default)]
    pub why: Vec<String>,
}

impl Formation {
    /// It did not form, as expected.
    pub fn not_formed_as_expected(&self) -> bool {
        !self.expected && !self.formed
    }
}

impl RunRecord {
    /// A record with only the code filled.
    pub fn new(run: usize, topo: &Topology, code: ConfigCode) -> RunRecord {
        RunRecord {
            run,
            key: String::new(),
            label: String::new(),
            code,
            topology: topo.file.clone(),
            switches: SwitchRun::of(topo),
            workload: None,
            measurement: None,
            converge_seconds: None,
            lacp_start: None,
            lacp_end: None,
            limit_mbps: None,
            flags: Vec::new(),
            error: None,
            formation: None,
            capacity: None,
            balance_why: Vec::new(),
        }
    }

    /// The run's flags as the table shows them: first its failure or its
    /// formation against what was expected, then each flag's first words.
    pub fn flag_words(&self) -> Vec<String> {
        let r = self;
        let mut flags: Vec<String> = r
            .flags
            .iter()
            .map(|f| f.split(':').next().unwrap_or(f).to_string())
            .collect();
        if let Some(e) = &r.error {
            flags.insert(0, format!("FAILED: {}", e.lines().next().unwrap_or("")));
        }
        match &r.formation {
            Some(f) if f.not_formed_as_expected() => flags.insert(
                0,
                format!(
                    "not formed, as expected: {}",
                    f.why.first().map_or("", String::as_str)
                ),
            ),
            Some(f) if !f.expected && f.formed => {
                flags.insert(0, "formed, though expected not to".into())
            }
            _ => {}
        }
        flags
    }

    /// The `limit` column: goodput against the capacity of each direction
    /// the workload sends in (`89%`, or `45%/45%` both ways); reports
    /// from before the capacity was recorded, against their total limit.
    pub fn limit_words(&self) -> String {
        let w = self.workload.as_ref();
        match (&self.capacity, w, self.limit_mbps) {
            (Some(c), Some(w), _) if c.per_direction_mbps > 0.0 => c.used(w),
            (None, Some(w), Some(l)) if l > 0.0 => format!("{:.0}%", 100.0 * w.mbps / l),
            _ => "-".into(),
        }
    }

    /// What the report says of this run below the table: its capacity,
    /// its flags in full, why its balance is what it is.
    pub fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(c) = &self.capacity {
            v.push(c.line(self.workload.as_ref()));
        }
        v.extend(self.flags.iter().cloned());
        v.extend(self.balance_why.iter().map(|w| {
            let bond = self
                .measurement
                .iter()
                .flat_map(|m| &m.bonds)
                .find(|b| b.host == w.host);
            let ratio = bond.and_then(|b| match w.direction.as_str() {
                "tx" => b.tx_ratio,
                _ => b.rx_ratio,
            });
            w.line(ratio)
        }));
        v
    }

    /// Sets the flags from the measurements.
    pub fn derive_flags(&mut self) {
        let mut f = Vec::new();
        if let Some(m) = &self.measurement {
            if m.cpu.cpu_bound {
                f.push(format!(
                    "CPU-bound ({:.0}% busy): the CPU, not the links, may have set the rate",
                    m.cpu.busy_pct
                ));
            }
            if m.cpu.starved {
                f.push(format!(
                    "starved ({:.0}% steal: the hypervisor kept the CPUs from running): the machine's host, not the links, may have set the rate",
                    m.cpu.steal_pct
                ));
            }
            for sw in &m.switch_cpu {
                if sw.cores >= crate::measure::SWITCH_BOUND_CORES {
                    f.push(format!(
                        "switch-bound ({} used {:.2} of a core): the switch, not the links, may have set the rate",
                        sw.switch, sw.cores
                    ));
                }
            }
            if !m.shaping_problems.is_empty() {
                f.push(format!("shaping: {}", m.shaping_problems.join(", ")));
            }
        }
        if let (Some(a), Some(b)) = (&self.lacp_start, &self.lacp_end) {
            if a.all_ok() && !b.all_ok() {
                f.push(format!(
                    "LACP changed during the run: {}",
                    b.not_converged().join("; ")
                ));
            }
        }
        self.flags = f;
    }
}

/// The machine the runs ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// CPUs.
    pub cores: usize,
    /// `uname -r`.
    pub kernel: String,
}

impl Machine {
    /// This machine.
    pub fn here() -> Machine {
        Machine {
            cores: crate::measure::CpuTimes::now().cores,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
        }
    }
}

/// A set of runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Title (the lab name).
    pub title: String,
    /// What the rates stand for.
    pub scale: Option<Scale>,
    /// Where it ran.
    pub machine: Machine,
    /// The runs.
    pub runs: Vec<RunRecord>,
    /// The seed's findings, checked on these runs (built-in scenarios).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The command that produced the report, if recorded.
    #[serde(default)]
    pub command: Option<String>,
}

/// One of a seed's findings, checked on a report's runs (the `findings`
/// module checks them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What the seed found, with the threshold checked.
    pub claim: String,
    /// What this sweep measured.
    pub measured: String,
    /// Whether the measurement meets the threshold (`None`: informational).
    pub holds: Option<bool>,
}

/// What the `limit` column means (the text table's and the page's).
pub(crate) const LIMIT: &str = "limit: goodput as a share of the links' capacity (links × rate) in each direction the workload sends, client to server first when it sends both ways";

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}"))
}

impl Report {
    /// An empty report.
    pub fn new(title: &str, scale: Option<Scale>) -> Report {
        Report {
            title: title.to_string(),
            scale,
            machine: Machine::here(),
            runs: Vec::new(),
            findings: Vec::new(),
            command: None,
        }
    }

    /// "scale: ..." — what the rates stand for.
    pub fn scale_line(&self) -> String {
        match &self.scale {
            Some(s) => format!(
                "scale: {}{}",
                s.note,
                // A note that names its factor is not told it twice.
                s.factor
                    .filter(|_| !s.note.contains("factor"))
                    .map_or(String::new(), |f| format!(" (factor {f})"))
            ),
            None => "scale: 1:1 (no scale note in the topology)".into(),
        }
    }

    /// "machine: ..." — where the runs ran, and what CPU-bound means.
    pub fn machine_line(&self) -> String {
        format!(
            "machine: {} cores, kernel {}; CPU is the whole machine's (all hosts and switches share it); a run at ≥ {:.0}% busy is flagged CPU-bound, one whose CPUs the hypervisor held back ≥ {:.0}% of the time (steal) starved",
            self.machine.cores,
            self.machine.kernel,
            crate::measure::CPU_BOUND_PCT,
            crate::measure::STEAL_PCT
        )
    }

    /// Hosts with a bond measured in any run, in first-seen order.
    pub(crate) fn bond_hosts(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in &self.runs {
            for b in r.measurement.iter().flat_map(|m| &m.bonds) {
                if !v.contains(&b.host) {
                    v.push(b.host.clone());
                }
            }
        }
        v
    }

    /// The table, IBM's 6513 measurements layout.
    pub fn table(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "lagkit lab report: {}", self.title);
        let _ = writeln!(o, "{}", self.scale_line());
        let _ = writeln!(o, "{}", self.machine_line());
        let hosts = self.bond_hosts();
        let mut head1 = format!(
            "{:>3} {:>3} {:>5} {:<7} {:<7} {:<9} {:>3} {:<7} | {:>5} {:>5} {:>5} |",
            "Run",
            "App",
            "Procs",
            "Switch",
            "Server",
            "Engine",
            "MTU",
            "Links",
            "usr%",
            "sys%",
            "idle%"
        );
        for h in &hosts {
            let _ = write!(
                head1,
                " {:>6} {:>6} |",
                format!("{h} tx"),
                format!("{h} rx")
            );
        }
        let trans = self.runs.iter().any(|r| {
            r.workload
                .as_ref()
                .is_some_and(|w| w.transactions_per_s > 0.0)
        });
        let _ = write!(head1, " {:>8} {:>7}", "Mbit/s", "limit");
        if trans {
            let _ = write!(head1, " {:>9}", "Trans/s");
        }
        let _ = write!(head1, " {:>8} {:>8}  Flags", "OOO/s", "Retr/s");
        let _ = writeln!(o, "{}", "-".repeat(head1.chars().count()));
        let _ = writeln!(o, "{head1}");
        let _ = writeln!(o, "{}", "-".repeat(head1.chars().count()));
        for r in &self.runs {
            let c = &r.code;
            let mut line = format!(
                "{:>3} {:>3} {:>5} {:<7} {:<7} {:<9} {:>3} {:<7} |",
                r.run,
                c.app,
                c.procs,
                c.switch,
                c.server,
                if c.engine.is_empty() { "-" } else { &c.engine },
                c.mtu,
                c.links
            );
            match &r.measurement {
                Some(m) => {
                    let _ = write!(
                        line,
                        " {:>5.1} {:>5.1} {:>5.1} |",
                        m.cpu.user_pct, m.cpu.sys_pct, m.cpu.headroom_pct
                    );
                    for h in &hosts {
                        let b = m.bonds.iter().find(|b| &b.host == h);
                        let _ = write!(
                            line,
                            " {:>6} {:>6} |",
                            ratio(b.and_then(|b| b.tx_ratio)),
                            ratio(b.and_then(|b| b.rx_ratio))
                        );
                    }
                }
                None => {
                    let _ = write!(line, " {:>5} {:>5} {:>5} |", "-", "-", "-");
                    for _ in &hosts {
                        let _ = write!(line, " {:>6} {:>6} |", "-", "-");
                    }
                }
            }
            let mbps = r.workload.as_ref().map(|w| w.mbps);
            let limit = r.limit_words();
            let _ = write!(
                line,
                " {:>8} {:>7}",
                mbps.map_or("-".into(), |x| format!("{x:.1}")),
                limit
            );
            if trans {
                let t = r.workload.as_ref().map(|w| w.transactions_per_s);
                let _ = write!(line, " {:>9}", t.map_or("-".into(), |x| format!("{x:.0}")));
            }
            let _ = write!(
                line,
                " {:>8} {:>8}  ",
                r.measurement
                    .as_ref()
                    .map_or("-".into(), |m| format!("{:.1}", m.out_of_order_per_s)),
                r.measurement
                    .as_ref()
                    .map_or("-".into(), |m| format!("{:.1}", m.retransmits_per_s)),
            );
            line.push_str(&r.flag_words().join(", "));
            let _ = writeln!(o, "{}", line.trim_end());
        }
        let _ = writeln!(
            o,
            "Mbit/s: workload goodput, transmit plus receive; {LIMIT}; \
             tx/rx: balance ratio (share of packets through the bond's first member, 0.50 = even); \
             OOO/s: TCP segments queued out of order (TcpExt TCPOFOQueue), all hosts; Retr/s: Tcp RetransSegs."
        );
        if trans {
            let _ = writeln!(
                o,
                "Trans/s: request/reply transactions per second, all clients."
            );
        }
        for r in &self.runs {
            if !r.label.is_empty() {
                let _ = writeln!(o, "run {}: {}", r.run, r.label);
            }
            for sw in &r.switches {
                let cores = r
                    .measurement
                    .as_ref()
                    .and_then(|m| m.switch_cpu.iter().find(|c| c.switch == sw.name))
                    .map_or(String::new(), |c| format!(", {:.2} cores busy", c.cores));
                let what = match sw.kind {
                    SwitchKind::Lagkit => "lagkit switch",
                    SwitchKind::Ovs => "Open vSwitch",
                };
                let _ = writeln!(
                    o,
                    "run {}: switch {}: {what}, {}{cores}",
                    r.run, sw.name, sw.method
                );
            }
            for line in r.notes() {
                let _ = writeln!(o, "run {}: {line}", r.run);
            }
        }
        if !self.findings.is_empty() {
            let _ = writeln!(
                o,
                "Findings (the original measurements', checked on these runs):"
            );
            for f in &self.findings {
                let mark = match f.holds {
                    Some(true) => "holds  ",
                    Some(false) => "NOT MET",
                    None => "info   ",
                };
                let _ = writeln!(
                    o,
                    "  [{mark}] {}\n            measured: {}",
                    f.claim, f.measured
                );
            }
        }
        if let Some(c) = &self.command {
            let _ = writeln!(o, "command: {c}");
        }
        o
    }

    /// Writes `report.txt`, `report.json`, `report.html` (everything in
    /// one page, the charts inline), `mbps.svg` and one
    /// `links-run<N>.svg` per measured run into `dir`; returns the paths.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, RunError> {
        std::fs::create_dir_all(dir).map_err(IoError::at(dir))?;
        let mut out = Vec::new();
        let mut put = |name: &str, text: String| -> Result<(), IoError> {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(IoError::at(&p))?;
            out.push(p);
            Ok(())
        };
        put("report.txt", self.table())?;
        let json = serde_json::to_string_pretty(self).map_err(|source| RunError::Serialize {
            what: "report.json".into(),
            source,
        })?;
        put("report.json", json)?;
        put("report.html", self.html())?;
        let svg = |file: &str, c: lagkit_chart::BarChart| {
            c.svg().map_err(|source| RunError::Chart {
                file: file.to_string(),
                source,
            })
        };
        put("mbps.svg", svg("mbps.svg", crate::charts::mbps(self))?)?;
        for r in &self.runs {
            if let Some(c) = crate::charts::links(self, r) {
                let file = format!("links-run{}.svg", r.run);
                put(&file, svg(&file, c)?)?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two bonded hosts back to back; `h1`'s bond table body is `bond`.
    fn topo(bond: &str) -> Topology {
        let text = crate::topology::testing::two_bonded_hosts(bond);
        Topology::parse(&text, "t.toml", "t").unwrap()
    }

    /// The words of the table's first line that starts with `start`.
    fn words<'a>(table: &'a str, start: &str) -> Vec<&'a str> {
        let line = table.lines().find(|l| l.trim_start().starts_with(start));
        line.unwrap().split_whitespace().collect()
    }

    #[test]
    fn the_code_records_each_configured_engine() {
        let same = topo(r#"mode = "802.3ad", xmit_hash_policy = "layer3+4""#);
        let c = ConfigCode::of(&same, None);
        assert_eq!((c.server.as_str(), c.engine.as_str()), ("8d-st", "auto"));
        let mixed = topo(r#"mode = "802.3ad", xmit_hash_policy = "layer3+4", engine = "bpf""#);
        assert_eq!(ConfigCode::of(&mixed, None).engine, "bpf/auto");
        let none = Topology::parse(
            "name = \"t\"\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[link]]\nbetween = [\"a\", \"b\"]\n",
            "t.toml",
            "t",
        )
        .unwrap();
        assert_eq!(ConfigCode::of(&none, None).engine, "-");
    }

    /// A run the hypervisor starved says so, with its steal; one it did
    /// not starve has no such flag. The flag is read back by the planner
    /// (its rate is not compared) and by hp-apa's findings.
    #[test]
    fn a_starved_run_is_flagged_with_its_steal() {
        let t = topo(r#"mode = "802.3ad", xmit_hash_policy = "layer3+4""#);
        let mut r = RunRecord::new(1, &t, ConfigCode::of(&t, None));
        r.measurement = Some(crate::measure::Measurement {
            cpu: crate::measure::CpuUse {
                busy_pct: 66.0,
                steal_pct: 36.2,
                starved: true,
                ..Default::default()
            },
            ..Default::default()
        });
        r.derive_flags();
        assert_eq!(r.flags.len(), 1, "{:?}", r.flags);
        assert!(
            r.flags[0].starts_with("starved (36% steal"),
            "{:?}",
            r.flags
        );
        r.measurement.as_mut().unwrap().cpu.starved = false;
        r.derive_flags();
        assert!(r.flags.is_empty(), "{:?}", r.flags);
    }

    #[test]
    fn the_table_has_an_engine_column() {
        let t = topo(r#"mode = "802.3ad", xmit_hash_policy = "layer3+4", engine = "userspace""#);
        let mut r = Report::new("t", None);
        r.runs.push(RunRecord::new(1, &t, ConfigCode::of(&t, None)));
        let table = r.table();
        let head = words(&table, "Run");
        let row = words(&table, "1 ");
        assert_eq!(head[4..6], ["Server", "Engine"], "{table}");
        assert_eq!(row[4..6], ["8d-st", "userspace/auto"], "{table}");
    }

    #[test]
    fn reports_from_before_the_engine_key_still_read() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/results/lpm/report.json"
        );
        // A real report, as written before the key (were it written again
        // today, its engine fields are taken out).
        fn strip(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("engine");
                    m.values_mut().for_each(strip);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        strip(&mut v);
        let r: Report = serde_json::from_value(v).unwrap();
        assert!(r.runs.iter().all(|x| x.code.engine.is_empty()));
        let mut host_views = r
            .runs
            .iter()
            .flat_map(|x| x.lacp_start.iter().flat_map(|s| &s.hosts));
        assert!(host_views.clone().count() > 0);
        assert!(host_views.all(|h| h.engine.is_empty()));
        // Shown as unknown, not as a made-up engine.
        let table = r.table();
        let row = words(&table, "1 ");
        assert_eq!(row[5], "-", "{table}");
    }

    /// The capacity follows the workload's directions: a one-way workload
    /// is measured against one direction's links, one that sends both
    /// ways against each direction's, and the line names both figures.
    #[test]
    fn the_capacity_follows_the_workloads_directions() {
        use crate::topology::{Iperf3Spec, WorkloadSpec};
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/lab/two-hosts.toml"
        );
        let t = Topology::load(Path::new(path)).unwrap();
        let Some(WorkloadSpec::Iperf3(spec)) = t.workload.clone() else {
            panic!("two-hosts runs iperf3")
        };
        let both = crate::run::capacity(&t, &WorkloadSpec::Iperf3(spec.clone())).unwrap();
        let one = crate::run::capacity(
            &t,
            &WorkloadSpec::Iperf3(Iperf3Spec {
                bidir: false,
                ..spec
            }),
        )
        .unwrap();
        assert_eq!(both.per_direction_mbps, 200.0);
        assert_eq!((both.total_mbps(), one.total_mbps()), (400.0, 200.0));
        let w = |f: f64, r: f64| WorkloadResult {
            mbps: f + r,
            forward_mbps: f,
            reverse_mbps: r,
            ..WorkloadResult::default()
        };
        // One way, nearly full: 95%, not the 48% of both directions.
        let full = w(190.0, 0.4);
        assert_eq!(one.used(&full), "95%");
        assert_eq!(
            one.line(Some(&full)),
            "capacity 200 Mbit/s one way, h1 -> h2 (2 × 100 Mbit/s): 190.0 Mbit/s (95%)"
        );
        // Both ways: each direction.
        let two = w(89.3, 89.3);
        assert_eq!(both.used(&two), "45%/45%");
        assert_eq!(
            both.line(Some(&two)),
            "capacity 200 Mbit/s each way (2 × 100 Mbit/s): h1 -> h2 89.3 Mbit/s (45%), h2 -> h1 89.3 Mbit/s (45%)"
        );
        // In the table's limit column and the notes below it.
        let mut r = RunRecord::new(1, &t, ConfigCode::of(&t, None));
        r.workload = Some(full);
        r.capacity = Some(one);
        r.limit_mbps = Some(400.0);
        assert_eq!(r.limit_words(), "95%");
        let mut rep = Report::new("t", None);
        rep.runs.push(r);
        let table = rep.table();
        assert!(
            table.contains("run 1: capacity 200 Mbit/s one way"),
            "{table}"
        );
        assert!(words(&table, "1 ").contains(&"95%"), "{table}");
        // A report from before the capacity: its total limit, as before.
        rep.runs[0].capacity = None;
        assert_eq!(rep.runs[0].limit_words(), "48%");
    }

    /// Why a run's balance is what it is, where the planner could tell,
    /// is a note of the run in the table and the page.
    #[test]
    fn the_balance_cause_is_a_note_of_the_run() {
        let t = topo(r#"mode = "802.3ad", xmit_hash_policy = "layer3+4""#);
        let mut r = RunRecord::new(1, &t, ConfigCode::of(&t, None));
        r.balance_why.push(BalanceWhy {
            host: "h2".into(),
            direction: "rx".into(),
            by: "sw's channel po2".into(),
            cause: "port pattern under src-dst-port: ports of one parity".into(),
            fix: "give the connections source ports of both parities".into(),
        });
        // With the ratio the run measured for that bond and direction.
        r.measurement = Some(crate::measure::Measurement {
            bonds: vec![crate::measure::BondMeasure {
                host: "h2".into(),
                tx_ratio: Some(0.5),
                rx_ratio: Some(0.0),
                ..Default::default()
            }],
            ..Default::default()
        });
        let mut rep = Report::new("t", None);
        rep.runs.push(r);
        let line = "run 1: why h2 rx is 0.00 (sw's channel po2): port pattern under src-dst-port: ports of one parity; fix: give the connections source ports of both parities";
        assert!(rep.table().contains(line), "{}", rep.table());
        assert!(
            rep.html().contains(&format!("<li>{line}</li>")),
            "{}",
            rep.html()
        );
        let back: Report = serde_json::from_str(&serde_json::to_string(&rep).unwrap()).unwrap();
        assert_eq!(back, rep);
    }
}
