//! `lagkit lab up|down|run|list`: topologies of hosts, switches and shaped
//! links in network namespaces (see the `lagkit-lab` crate).

use crate::bond_cmd::Failure;
use crate::privilege::{require, Need};
use lagkit_lab::topology::SwitchKind;
use lagkit_lab::{LabError, Options, RunOptions, Topology};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `lagkit lab ...`.
#[derive(clap::Subcommand, Debug)]
pub enum LabCommand {
    /// Create the namespaces, links, switches and bonds a topology file
    /// describes, and leave them running (state in /run/lagkit/lab/).
    #[command(after_long_help = crate::examples::LAB_FILE)]
    Up(FileArgs),
    /// Remove everything `lab up` made for this topology (idempotent; also
    /// after a crash).
    #[command(after_long_help = crate::examples::LAB_FILE)]
    Down(FileArgs),
    /// Up, wait for the aggregates, run the workload, measure, report, down
    /// (a built-in scenario's name runs its whole sweep; see `lab list`).
    #[command(after_long_help = crate::examples::LAB_RUN)]
    Run(RunArgs),
    /// List the built-in scenarios.
    List,
    /// Print a built-in scenario's topology files (one per configuration).
    Show(ShowArgs),
    /// IBM's AIX/Cisco 6513 LACP hashing comparison (the short ibm-6513
    /// sweep, about 25 seconds; also `lagkit demo`).
    Demo(DemoArgs),
}

/// A topology file.
#[derive(clap::Args, Debug)]
pub struct FileArgs {
    /// The topology (TOML: [[host]], [[switch]], [[link]], [workload]).
    file: PathBuf,
    /// No progress messages.
    #[arg(long, short)]
    quiet: bool,
}

/// Options of `lagkit lab show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// A built-in scenario's name (`lagkit lab list`).
    name: String,
    /// The short sweep's configurations.
    #[arg(long)]
    short: bool,
    /// The switch the scenario's topologies use: lagkit (its own, the
    /// default) or ovs (Open vSwitch).
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    switch: Option<SwitchKind>,
}

fn parse_kind(s: &str) -> Result<SwitchKind, String> {
    SwitchKind::parse(s)
        .ok_or_else(|| format!("'{s}': use lagkit (lagkit's own switch) or ovs (Open vSwitch)"))
}

/// Options of `lagkit lab run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The topology (TOML: [[host]], [[switch]], [[link]], [workload]), or
    /// a built-in scenario's name (`lagkit lab list`).
    file: PathBuf,
    /// Built-in scenario: the short sweep (fewer, shorter runs).
    #[arg(long)]
    short: bool,
    /// Built-in scenario: its switches' kind, lagkit (lagkit's own switch,
    /// the default) or ovs (Open vSwitch). A topology file says it per
    /// switch (`kind`).
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    switch: Option<SwitchKind>,
    /// Built-in scenario: shape every link to RATE in bit/s (1g, 1gbit,
    /// 100M, 2.5g; a plain number is bit/s; 1g is the speed of IBM's AIX/Cisco measurements)
    /// instead of the scenario's scaled-down rate; reports say so in their
    /// scale line and flag runs the CPU or the switch held back.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    rate: Option<lagkit_lab::topology::Rate>,
    /// Write report.html (tables, findings and charts in one page), report.txt, report.json and SVG charts into this folder.
    #[arg(long)]
    report: Option<PathBuf>,
    /// How long to wait for every bond and port-channel to form (60s, 1m,
    /// 1.5m; a plain number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = lagkit_units::duration_arg)]
    converge_timeout: Duration,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress messages.
    #[arg(long, short)]
    quiet: bool,
}

/// A topology file's error, with its file and line apart for `--json`.
fn topology_failure(t: lagkit_lab::topology::TopologyError) -> Failure {
    Failure::Input {
        file: t.file,
        line: (t.line > 0).then_some(t.line as u64),
        column: (t.column > 0).then_some(t.column as u64),
        why: t.message,
    }
}

fn failure(e: LabError) -> Failure {
    match e {
        LabError::Topology(t) => topology_failure(t),
        LabError::Usage(e) => Failure::Usage(e.to_string()),
        LabError::Run(e) => Failure::Runtime(e.to_string()),
    }
}

fn options(quiet: bool) -> Result<Options, Failure> {
    let me = std::env::current_exe()
        .map_err(|e| Failure::Runtime(format!("cannot find the lagkit binary: {e}")))?;
    let mut o = Options::new(me);
    o.verbose = !quiet;
    Ok(o)
}

fn load(file: &Path) -> Result<Topology, Failure> {
    let t = Topology::load(file).map_err(topology_failure)?;
    for w in &t.warnings {
        eprintln!("lagkit: warning: {w}");
    }
    Ok(t)
}

/// Runs one `lagkit lab` command.
pub fn run(cmd: LabCommand) -> Result<(), Failure> {
    match cmd {
        LabCommand::List => {
            for (name, what) in lagkit_lab::builtin_scenarios() {
                println!("{name:<14} {what}");
            }
            println!("(run one: lagkit lab run NAME [--short] --report DIR; or a topology file, e.g. examples/lab/two-hosts-ovs.toml)");
            Ok(())
        }
        LabCommand::Demo(a) => demo(a),
        LabCommand::Show(a) => {
            let kind = a.switch.unwrap_or(SwitchKind::DEFAULT);
            let sc = lagkit_lab::scenario::builtin_on(&a.name, a.short, kind).ok_or_else(|| {
                Failure::Usage(format!(
                    "no built-in scenario '{}' (lagkit lab list shows them)",
                    a.name
                ))
            })?;
            for (i, c) in sc.configs.iter().enumerate() {
                println!("# --- run {}: {} (key {}) ---", i + 1, c.label, c.key);
                println!("{}", c.text);
            }
            Ok(())
        }
        LabCommand::Up(a) => {
            require("lagkit lab up", Need::Namespaces)?;
            let topo = load(&a.file)?;
            let lab = lagkit_lab::Lab::up(topo, options(a.quiet)?).map_err(failure)?;
            println!(
                "lab '{}' is up ({} namespaces; state {})",
                lab.topo.name,
                lab.state.namespaces.len(),
                lagkit_lab::LabState::path(&lab.opts.state_root, &lab.topo.name).display()
            );
            for h in &lab.topo.hosts {
                if let Some(b) = &h.bond {
                    println!(
                        "  host {:<8} ip netns exec {} lagkit status --name {}",
                        h.name,
                        lab.ns(&h.name),
                        b.name
                    );
                }
            }
            for s in &lab.topo.switches {
                match s.kind {
                    SwitchKind::Lagkit => println!(
                        "  switch {:<6} ip netns exec {} lagkit switch show etherchannel summary (config {})",
                        s.name,
                        lab.ns(&s.name),
                        lab.dir().join(format!("{}-switch.cfg", s.name)).display()
                    ),
                    SwitchKind::Ovs => println!(
                        "  switch {:<6} ovs-appctl -t {}/ovs-vswitchd.ctl bond/show",
                        s.name,
                        lab.dir().join(format!("ovs-{}", s.name)).display()
                    ),
                }
            }
            println!("  remove it with: lagkit lab down {}", a.file.display());
            Ok(())
        }
        LabCommand::Down(a) => {
            require("lagkit lab down", Need::Namespaces)?;
            let name = match Topology::load(&a.file) {
                Ok(t) => t.name,
                Err(e) => lagkit_lab::topology::lab_name_of(&a.file).ok_or_else(|| {
                    Failure::Usage(format!("{e}; cannot tell the lab's name from it"))
                })?,
            };
            let root = lagkit_lab::lab::state_root();
            let rep = lagkit_lab::down(&root, &name);
            if rep.was_noop() {
                if !a.quiet {
                    println!("lab '{name}': nothing to remove");
                }
            } else if !a.quiet {
                let ovs = if rep.ovs > 0 {
                    format!(" and {} Open vSwitch instances", rep.ovs)
                } else {
                    String::new()
                };
                println!(
                    "lab '{name}': removed {} namespaces, stopped {} processes (bonds, lagkit switches, workloads){ovs}",
                    rep.namespaces.len(),
                    rep.processes,
                );
            }
            if rep.errors.is_empty() {
                Ok(())
            } else {
                Err(Failure::Runtime(format!(
                    "lab '{name}': could not remove everything: {}",
                    rep.errors.join("; ")
                )))
            }
        }
        LabCommand::Run(a) => {
            require("lagkit lab run", Need::Namespaces)?;
            let name = a.file.to_string_lossy().into_owned();
            if !a.file.exists() {
                let kind = a.switch.unwrap_or(SwitchKind::DEFAULT);
                if let Some(mut sc) = lagkit_lab::scenario::builtin_on(&name, a.short, kind) {
                    if let Some(r) = &a.rate {
                        sc = sc.at_rate(r);
                    }
                    return run_scenario(&sc, &a);
                }
            }
            if a.short || a.switch.is_some() || a.rate.is_some() {
                return Err(Failure::Usage(
                    "--short, --switch and --rate are for built-in scenarios (lagkit lab list); a topology file gives each switch its kind and each link its rate".into(),
                ));
            }
            let topo = load(&a.file)?;
            let mut opts = RunOptions::new(options(a.quiet)?);
            opts.converge_timeout = a.converge_timeout;
            let (mut report, _) = lagkit_lab::run(&topo, &opts, None).map_err(failure)?;
            for r in &mut report.runs {
                r.balance_why = lagkit_planner::lab::balance_why(&topo, r);
            }
            let files = write_report(&report, a.report.as_deref())?;
            print_report(&report, &files, a.json)?;
            match report.runs.iter().find_map(|r| r.error.clone()) {
                Some(e) => Err(Failure::Runtime(format!("the run failed: {e}"))),
                None => Ok(()),
            }
        }
    }
}

fn parse_rate(s: &str) -> Result<lagkit_lab::topology::Rate, lagkit_lab::topology::RateError> {
    lagkit_lab::topology::Rate::parse(s)
}

/// Says why each run of a sweep of `sc` spreads as it does, where the
/// planner can tell (the runs are `sc`'s configurations, in order).
fn explain_runs(report: &mut lagkit_lab::report::Report, sc: &lagkit_lab::scenario::Scenario) {
    for (r, c) in report.runs.iter_mut().zip(&sc.configs) {
        r.balance_why = lagkit_planner::lab::balance_why(&c.topo, r);
    }
}

/// Writes the report's files into `dir`, when one was asked for.
fn write_report(
    report: &lagkit_lab::report::Report,
    dir: Option<&std::path::Path>,
) -> Result<Vec<PathBuf>, Failure> {
    match dir {
        Some(d) => report.write(d).map_err(|e| failure(e.into())),
        None => Ok(Vec::new()),
    }
}

fn print_report(
    report: &lagkit_lab::report::Report,
    files: &[PathBuf],
    json: bool,
) -> Result<(), Failure> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(report).unwrap_or_default()
        );
    } else {
        print!("{}", report.table());
    }
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// `lagkit lab run NAME`: a built-in scenario's sweep; fails (exit 1) only
/// when every run failed.
fn run_scenario(sc: &lagkit_lab::scenario::Scenario, a: &RunArgs) -> Result<(), Failure> {
    let mut opts = RunOptions::new(options(true)?);
    opts.lab.verbose = false;
    opts.converge_timeout = a.converge_timeout;
    let quiet = a.quiet;
    if !quiet {
        eprintln!(
            "lab scenario {}: {} configuration(s)",
            sc.name,
            sc.configs.len()
        );
    }
    opts.command = Some(command_line());
    let mut bar = SweepBar::new(quiet);
    let (mut report, _) =
        lagkit_lab::scenario::run_sweep(sc, &opts, None, |p| bar.update(&p)).map_err(failure)?;
    bar.finish();
    explain_runs(&mut report, sc);
    let files = write_report(&report, a.report.as_deref())?;
    print_report(&report, &files, a.json)?;
    let failed = report.runs.iter().filter(|r| r.error.is_some()).count();
    if failed == report.runs.len() {
        Err(Failure::Runtime(format!("all {failed} runs failed")))
    } else {
        if failed > 0 {
            eprintln!("lagkit: {failed} of {} runs failed", report.runs.len());
        }
        Ok(())
    }
}

/// The command line as typed (for the report).
fn command_line() -> String {
    let mut v: Vec<String> = std::env::args().collect();
    if let Some(first) = v.first_mut() {
        *first = "lagkit".into();
    }
    v.join(" ")
}

/// A sweep's progress: a bar with time estimate on a terminal, one line
/// per run otherwise (logs, CI).
struct SweepBar {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl SweepBar {
    fn new(quiet: bool) -> SweepBar {
        use std::io::IsTerminal;
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} runs, {elapsed_precise} elapsed, ETA {eta_precise}  {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(500));
            b
        });
        SweepBar { bar, quiet }
    }

    fn update(&mut self, p: &lagkit_lab::scenario::Progress<'_>) {
        use lagkit_lab::scenario::Progress;
        match (&self.bar, p) {
            (_, _) if self.quiet => {}
            (Some(b), Progress::Start { total, label, .. }) => {
                b.set_length(*total as u64);
                b.set_message(label.to_string());
            }
            (Some(b), Progress::Done { index, .. }) => {
                b.println(p.line());
                b.set_position(*index as u64 + 1);
            }
            (None, _) => eprintln!("{}", p.line()),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Options of `lagkit demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Where to write report.html, report.txt, report.json and the SVG charts.
    #[arg(long, default_value = "/tmp/lagkit-demo")]
    report: PathBuf,
    /// The switch: lagkit (its own, the default) or ovs (Open vSwitch).
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    switch: Option<SwitchKind>,
}

/// `lagkit demo`: IBM's AIX/Cisco 6513 finding in about 25 seconds — with two hosts,
/// address (L2/L3) hashing leaves one link of each bond idle and halves
/// the throughput that L4 (port) hashing gets over LACP.
pub fn demo(a: DemoArgs) -> Result<(), Failure> {
    require("lagkit demo", Need::Namespaces)?;
    let kind = a.switch.unwrap_or(SwitchKind::DEFAULT);
    let ovs = kind == SwitchKind::Ovs;
    if ovs {
        if let Some(m) = lagkit_lab::ovs::missing() {
            return Err(Failure::Usage(format!(
                "lagkit demo needs Open vSwitch: {m}"
            )));
        }
    }
    println!("lagkit demo: IBM's AIX/Cisco Catalyst 6513 measurements in network namespaces.");
    println!(
        "  Two servers, each a 2-link 802.3ad lagkit bond, to one {} switch",
        if ovs { "Open vSwitch" } else { "lagkit" }
    );
    let n = lagkit_lab::scenario::IBM_6513_PROCS;
    println!("  with an LACP port-channel per server; socketprocs (epoll-et, {n}×{n} connections, 4 KB).");
    if ovs {
        println!(
            "  Run 1: address hashing (switch balance-slb for Cisco src-dst-ip, servers layer2+3)."
        );
        println!("  Run 2: port hashing (switch balance-tcp for src-dst-port, servers layer3+4).");
    } else {
        println!("  Run 1: address hashing (switch src-dst-ip, servers layer2+3).");
        println!("  Run 2: port hashing (switch src-dst-port, servers layer3+4).");
    }
    println!("  {}", lagkit_lab::scenario::ibm_6513_scale(kind).note);
    let mut o = options(true)?;
    o.verbose = false;
    let t0 = std::time::Instant::now();
    let mut bar = SweepBar::new(false);
    let (mut report, _) =
        lagkit_lab::scenario::demo(o, kind, None, |p| bar.update(&p)).map_err(failure)?;
    bar.finish();
    explain_runs(&mut report, &lagkit_lab::scenario::demo_scenario(kind));
    let files = write_report(&report, Some(&a.report))?;
    println!();
    print!("{}", report.table());
    println!();
    let get = |i: usize| {
        report.runs.get(i).and_then(|r| {
            let w = r.workload.as_ref()?;
            let m = r.measurement.as_ref()?;
            let rx = m
                .bonds
                .iter()
                .find(|b| b.host == "srv")
                .and_then(|b| b.rx_ratio)?;
            Some((w.mbps, rx))
        })
    };
    if let (Some((l2, rx2)), Some((l4, rx4))) = (get(0), get(1)) {
        println!(
            "Finding: address hashing puts {:.0}% of the receiving server's packets on one link \
             and gets {l2:.0} Mbit/s, {:.0}% of port hashing's {l4:.0} Mbit/s \
             (which splits them {:.2}/{:.2}).",
            100.0 * rx2.max(1.0 - rx2),
            100.0 * l2 / l4.max(1e-9),
            rx4,
            1.0 - rx4
        );
    }
    println!(
        "Report: {} (open it in a browser: findings, table and charts); also report.txt, report.json, mbps.svg, links-run<N>.svg",
        a.report.join("report.html").display()
    );
    println!(
        "Done in {:.0} s; the lab was removed after each run.",
        t0.elapsed().as_secs_f64()
    );
    let _ = files;
    match report.runs.iter().find_map(|r| r.error.clone()) {
        Some(e) => Err(Failure::Runtime(format!("a run failed: {e}"))),
        None => Ok(()),
    }
}
