//! The `lagkit` command: one binary, one subcommand per role.

mod duration;
mod sim_lacp;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim {
            what: SimCommand::Lacp(args),
        } => sim_lacp::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lagkit: {e}");
            ExitCode::from(2)
        }
    }
}
