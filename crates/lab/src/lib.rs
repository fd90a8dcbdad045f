//! The lagkit lab: a topology file of hosts (network namespaces, each
//! running a lagkit bond), switches (lagkit's own switch, or Open vSwitch's
//! userspace datapath) and shaped veth links, brought up and down as a
//! unit, with a workload, measurements and reports.
//!
//! The modules form layers; each imports only those above it:
//! - [`sys`]: running programs, namespaces, processes by PID and start time;
//!   the errors of a program, a file and a query.
//! - [`topology`]: the TOML model (`model`, with the workload specs), read
//!   (`parse`) and validated (`validate`), errors with file:line:column.
//! - [`ovs`]: Open vSwitch instances in namespaces (also used by the CLI's
//!   OVS interoperability tests), and their errors.
//! - [`lagkit_switch`]: lagkit's own switch: the IOS configuration written
//!   from a topology, and its `show ... --json` answers.
//! - [`LabError`]: what a lab command reports; [`RunError`]: what fails
//!   while a lab is up, run, measured and reported.
//! - [`lab`]: `up` / `down`, with a state file so `down` works from another
//!   process and after a crash; the OVS ports it makes for channels.
//! - [`converge`]: wait until every bond and port-channel has formed, or say
//!   which has not and why; LACP snapshots.
//! - [`measure`]: before/after snapshots (lagkit counters, TCP counters, CPU).
//! - [`workload`]: the [`workload::Workload`] trait: iperf3 and lagkit-load.
//! - [`report`]: IBM's 6513 table, JSON, SVG charts; the checked findings.
//! - [`findings`]: each seed's claims, checked on a report's runs.
//! - [`run`](mod@run): up → converge → workload → measure → down.
//! - [`scenario`]: built-in scenarios (ibm-6513) swept over configurations.
//!
//! Namespaces are named `lklab-<lab>-<node>`; nothing gets an address in
//! the root namespace. Switches are a role ([`topology::SwitchKind`]):
//! `lagkit` (the default: `lagkit switch` with an IOS configuration the lab
//! writes) or `ovs` (Open vSwitch).

#![forbid(unsafe_code)]

pub mod charts;
pub mod converge;
mod error;
pub mod findings;
mod html;
pub mod lab;
pub mod lagkit_switch;
pub mod measure;
pub mod ovs;
pub mod report;
pub mod run;
pub mod scenario;

pub mod sys;
pub mod topology;
pub mod workload;

pub use error::{ClientError, ConvergeError, LabError, OutputError, RunError, UsageError};
pub use lab::{down, DownReport, Lab, LabState, Options};
pub use run::{run, run_once, LabGuard, RunOptions};
pub use topology::{Topology, TopologyError};

/// Built-in scenarios (`lagkit lab list`): name and one-line description.
/// See [`scenario`].
pub fn builtin_scenarios() -> Vec<(&'static str, &'static str)> {
    scenario::BUILTIN.to_vec()
}
