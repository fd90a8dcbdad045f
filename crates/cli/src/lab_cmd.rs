//! `lagkit lab up|down|run|list`: topologies of hosts, switches and shaped
//! links in network namespaces (see the `lagkit-lab` crate).

use crate::bond_cmd::Failure;
use lagkit_lab::{LabError, Options, RunOptions, Topology};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `lagkit lab ...`.
#[derive(clap::Subcommand, Debug)]
pub enum LabCommand {
    /// Create the namespaces, links, switches and bonds a topology file
    /// describes, and leave them running (state in /run/lagkit/lab/).
    Up(FileArgs),
    /// Remove everything `lab up` made for this topology (idempotent; also
    /// after a crash).
    Down(FileArgs),
    /// Up, wait for the aggregates, run the workload, measure, report, down.
    Run(RunArgs),
    /// List the built-in scenarios.
    List,
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

/// Options of `lagkit lab run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The topology (TOML: [[host]], [[switch]], [[link]], [workload]).
    file: PathBuf,
    /// Write report.txt, report.json and SVG charts into this folder.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Seconds to wait for every bond and port-channel to form.
    #[arg(long, default_value_t = 60)]
    converge_timeout: u64,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress messages.
    #[arg(long, short)]
    quiet: bool,
}

fn failure(e: LabError) -> Failure {
    match e {
        LabError::Topology(t) => Failure::Usage(t.to_string()),
        LabError::Usage(m) => Failure::Usage(m),
        LabError::Run(m) => Failure::Runtime(m),
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
    let t = Topology::load(file).map_err(|e| Failure::Usage(e.to_string()))?;
    for w in &t.warnings {
        eprintln!("lagkit: warning: {w}");
    }
    Ok(t)
}

/// Runs one `lagkit lab` command.
pub fn run(cmd: LabCommand) -> Result<(), Failure> {
    match cmd {
        LabCommand::List => {
            let list = lagkit_lab::builtin_scenarios();
            if list.is_empty() {
                println!(
                    "No built-in scenarios yet (planned: ibm-6513, hp-apa, lpm, zvm, linux-alb)."
                );
                println!("Write a topology file instead; example: examples/lab/two-hosts-ovs.toml");
            }
            for (name, what) in list {
                println!("{name:<14} {what}");
            }
            Ok(())
        }
        LabCommand::Up(a) => {
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
                        "  host {:<8} ip netns exec {} lagkit status {}",
                        h.name,
                        lab.ns(&h.name),
                        b.name
                    );
                }
            }
            for s in &lab.topo.switches {
                println!(
                    "  switch {:<6} ovs-appctl -t {}/ovs-vswitchd.ctl bond/show",
                    s.name,
                    lab.dir().join(format!("ovs-{}", s.name)).display()
                );
            }
            println!("  remove it with: lagkit lab down {}", a.file.display());
            Ok(())
        }
        LabCommand::Down(a) => {
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
                println!(
                    "lab '{name}': removed {} namespaces, stopped {} processes and {} switches",
                    rep.namespaces.len(),
                    rep.processes,
                    rep.ovs
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
            let topo = load(&a.file)?;
            let mut opts = RunOptions::new(options(a.quiet)?);
            opts.converge_timeout = Duration::from_secs(a.converge_timeout);
            let (report, files) =
                lagkit_lab::run(&topo, &opts, a.report.as_deref()).map_err(failure)?;
            if a.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                );
            } else {
                print!("{}", report.table());
            }
            for f in files {
                eprintln!("wrote {}", f.display());
            }
            match report.runs.iter().find_map(|r| r.error.clone()) {
                Some(e) => Err(Failure::Runtime(format!("the run failed: {e}"))),
                None => Ok(()),
            }
        }
    }
}
