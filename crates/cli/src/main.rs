//! The `lagkit` command: one binary, one subcommand per role.

#![forbid(unsafe_code)]

mod bond_cmd;
mod capture_cmd;
mod check_cmd;
#[cfg(test)]
mod cli_tests;
mod examples;
mod gen_docs;
mod inputs;
mod lab_cmd;
mod load_cmd;
mod notify;
mod output;
mod plan_cmd;
mod privilege;
mod sim_lacp;
mod sim_pagp;
mod sim_pair;
mod sim_run;
mod switch_cmd;
mod top;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lagkit",
    version,
    about = "Link aggregation for Linux: bond, switch, lab, planner",
    after_help = "A running bond or switch is named with --name NAME (-n).\n\
Rates are bit/s (1g, 1gbit, 100M, 2.5g; a plain number is bit/s); durations\n\
are 250ms, 1.5s, 60s, 1m, 1h (a plain number is seconds).\n\
Exit status: 0 success, 1 the system refused or a run failed, 2 bad input or\n\
usage, 4 the command needs root or capabilities (check: 1 warnings, 3 errors).\n\
With --json an error is one JSON object on stderr: {\"error\", \"file\", \"line\",\n\
\"column\", \"exit\"} (file, line and column null when not known).\n\
A closed pipe (lagkit sim lacp | head) ends a one-shot command quietly, as\n\
SIGPIPE ends other tools: status 141 in the shell (0 if all was written first)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bond(s) a configuration file describes, in the foreground.
    Up(bond_cmd::UpArgs),
    /// Print lagkit's configuration of the bond(s) a host already has
    /// (netplan YAML, a systemd-networkd directory or .netdev/.network
    /// files, NetworkManager keyfiles, ifupdown interfaces, teamd JSON),
    /// with a comment for every setting it cannot carry.
    Convert(bond_cmd::ConvertArgs),
    /// Give back what a bond (--name NAME) that is not running left changed
    /// (after a crash or SIGKILL): members' MAC, MTU, ARP, IPv6 and filters,
    /// from its state file.
    Down(bond_cmd::DownArgs),
    /// Show a running bond (--name NAME, default every bond here) like
    /// /proc/net/bonding/bondX.
    Status(bond_cmd::QueryArgs),
    /// Show a running bond's (--name NAME, default every bond here)
    /// per-member counters and balance ratio, like AIX entstat -d.
    Stats(bond_cmd::QueryArgs),
    /// Ask a running bond (--name NAME, default the only one here) which
    /// member carries a flow, and why.
    Flow(bond_cmd::FlowArgs),
    /// Write the control frames (LACP, Marker, PAgP, ARP) a running bond
    /// (--name NAME) or switch (--switch NAME) sends and receives to a
    /// pcapng file, without stopping it.
    Capture(capture_cmd::Args),
    /// Built-in workloads without netperf (socketprocs, netperf-style
    /// stream/maerts/rr, LPM): a server and a client.
    Load(load_cmd::Args),
    /// Labs: hosts, switches and shaped links in network namespaces.
    Lab {
        #[command(subcommand)]
        what: lab_cmd::LabCommand,
    },
    /// IBM's AIX/Cisco 6513 address-vs-port hashing comparison (the short
    /// ibm-6513 sweep, two runs) in network namespaces, about 25 seconds.
    Demo(lab_cmd::DemoArgs),
    /// Predict how a configuration spreads given traffic (a flow list or a
    /// capture), explain imbalance, rank the alternatives.
    Plan(plan_cmd::Args),
    /// Read both ends' configurations (lagkit bond TOML, /proc/net/bonding,
    /// ifupdown, systemd-networkd, netplan, NetworkManager, teamd, AIX
    /// lsattr, Cisco IOS, Open vSwitch), captured LACPDUs or running bonds,
    /// and flag what does not match, before it costs throughput.
    Check(check_cmd::Args),
    /// lagkit's own switch (Cisco IOS configuration, port-channels with
    /// LACP, PAgP or `on`), in the foreground; `switch show ...` and `switch
    /// test ...` ask a running one as a Catalyst would answer.
    Switch(switch_cmd::Args),
    /// A live view of the bonds and switches of network namespaces: each
    /// member's or port's rates, link, LACP/PAgP state and partner, drops,
    /// and the latest state changes, refreshed as you watch.
    Top(top::Args),
    /// Simulate protocols in virtual time ("would my server and my switch form a channel?").
    Sim {
        #[command(subcommand)]
        what: SimCommand,
    },
    /// Write the man pages, shell completions and key reference (for packagers).
    #[command(hide = true)]
    GenerateDocs(gen_docs::Args),
}

#[derive(Subcommand)]
enum SimCommand {
    /// Two LACP systems joined by N links, with faults at chosen times.
    Lacp(sim_lacp::Args),
    /// Two PAgP systems (or one facing a device without PAgP) joined by N links.
    Pagp(sim_pagp::Args),
    /// Your bond's configuration against your switch's IOS configuration:
    /// would they form a channel, and which links carry it?
    Pair(sim_pair::Args),
}

impl Command {
    /// Whether this runs a daemon or a workload, which write to sockets
    /// and must outlive a peer that goes away, or drives other processes.
    fn keeps_running(&self) -> bool {
        match self {
            Command::Lab {
                what: lab_cmd::LabCommand::List | lab_cmd::LabCommand::Show(_),
            } => false,
            Command::Up(_) | Command::Load(_) | Command::Lab { .. } | Command::Demo(_) => true,
            Command::Switch(a) => a.is_daemon(),
            _ => false,
        }
    }
}

fn main() -> ExitCode {
    let json = output::json_requested(std::env::args_os());
    let cli = Cli::try_parse().unwrap_or_else(|e| output::clap_error(e, json));
    if !cli.command.keeps_running() {
        output::die_on_closed_stdout();
    }
    // The daemon logs every state change; one-shot commands only warnings.
    let default_level = match cli.command {
        Command::Up(_) | Command::Load(_) => "info",
        Command::Switch(ref a) if a.is_daemon() => "info",
        // The simulated cores log as the daemons do; the report says it all.
        Command::Sim { .. } => "error",
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
        Command::Sim {
            what: SimCommand::Pair(args),
        } => sim_pair::run(args).map_err(Failure::Usage),
        Command::Up(a) => bond_cmd::up(a),
        Command::Down(a) => bond_cmd::down(a),
        Command::Status(a) => bond_cmd::status(a),
        Command::Stats(a) => bond_cmd::stats(a),
        Command::Convert(a) => bond_cmd::convert(a),
        Command::Flow(a) => bond_cmd::flow(a),
        Command::Capture(a) => capture_cmd::run(a),
        Command::Lab { what } => lab_cmd::run(what),
        Command::Load(a) => load_cmd::run(a),
        Command::Demo(a) => lab_cmd::demo(a),
        Command::Plan(a) => plan_cmd::run(a),
        Command::Switch(a) => switch_cmd::run(a),
        Command::Top(a) => top::run(a),
        Command::GenerateDocs(a) => gen_docs::run(a),
        // Its exit status tells the worst finding (0, 1, 3), not just success.
        Command::Check(a) => return check_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => output::fail(&f, json),
    }
}
