//! The `lagkit` command: one binary, one subcommand per role.

mod bond_cmd;
mod check_cmd;
mod duration;
mod lab_cmd;
mod load_cmd;
mod notify;
mod plan_cmd;
mod sim_lacp;
mod sim_pagp;
mod sim_run;
mod switch_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lagkit",
    version,
    about = "Link aggregation for Linux: bond, switch, lab, planner"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bond(s) a configuration file describes, in the foreground.
    Up(bond_cmd::UpArgs),
    /// Give back what a bond that is not running left changed (after a crash
    /// or SIGKILL): members' MAC, MTU, ARP, IPv6 and filters, from its state file.
    Down(bond_cmd::DownArgs),
    /// Show a running bond like /proc/net/bonding/bondX.
    Status(bond_cmd::QueryArgs),
    /// Show per-member counters and the balance ratio, like AIX entstat -d.
    Stats(bond_cmd::QueryArgs),
    /// Which member carries a flow, and why.
    Flow(bond_cmd::FlowArgs),
    /// Built-in workloads (socketprocs, netperf stream/maerts/rr, LPM): server and client.
    Load(load_cmd::Args),
    /// Labs: hosts, switches and shaped links in network namespaces.
    Lab {
        #[command(subcommand)]
        what: lab_cmd::LabCommand,
    },
    /// The default lab demo: seed 000's address-vs-port hashing comparison
    /// (the short ibm-6513 sweep) in network namespaces, about a minute.
    Demo(lab_cmd::DemoArgs),
    /// Predict how a configuration spreads given traffic (a flow list or a
    /// capture), explain imbalance, rank the alternatives.
    Plan(plan_cmd::Args),
    /// Read both ends' configurations (lagkit bond, /proc/net/bonding,
    /// Cisco IOS) and flag what does not match, before it costs throughput.
    Check(check_cmd::Args),
    /// lagkit's own switch (Cisco IOS configuration, port-channels with LACP
    /// or `on`), in the foreground; `switch show ...` and `switch test ...`
    /// ask a running one as a Catalyst would answer.
    Switch(switch_cmd::Args),
    /// Simulate protocols in virtual time ("would my server and my switch form a channel?").
    Sim {
        #[command(subcommand)]
        what: SimCommand,
    },
}

#[derive(Subcommand)]
enum SimCommand {
    /// Two LACP systems joined by N links, with faults at chosen times.
    Lacp(sim_lacp::Args),
    /// Two PAgP systems (or one facing a device without PAgP) joined by N links.
    Pagp(sim_pagp::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The daemon logs every state change; one-shot commands only warnings.
    let default_level = match cli.command {
        Command::Up(_) | Command::Load(_) => "info",
        Command::Switch(ref a) if a.is_daemon() => "info",
        _ => "warn",
    };
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LAGKIT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level)),
        )
        .init();
    use bond_cmd::Failure;
    let result = match cli.command {
        Command::Sim {
            what: SimCommand::Lacp(args),
        } => sim_lacp::run(args).map_err(Failure::Usage),
        Command::Sim {
            what: SimCommand::Pagp(args),
        } => sim_pagp::run(args).map_err(Failure::Usage),
        Command::Up(a) => bond_cmd::up(a),
        Command::Down(a) => bond_cmd::down(a),
        Command::Status(a) => bond_cmd::status(a),
        Command::Stats(a) => bond_cmd::stats(a),
        Command::Flow(a) => bond_cmd::flow(a),
        Command::Lab { what } => lab_cmd::run(what),
        Command::Load(a) => load_cmd::run(a),
        Command::Demo(a) => lab_cmd::demo(a),
        Command::Plan(a) => plan_cmd::run(a),
        Command::Switch(a) => switch_cmd::run(a),
        // Its exit status tells the worst finding (0, 1, 3), not just success.
        Command::Check(a) => return check_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(e)) => {
            eprintln!("lagkit: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("lagkit: {e}");
            ExitCode::from(1)
        }
    }
}
