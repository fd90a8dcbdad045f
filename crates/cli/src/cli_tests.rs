//! The command line as a whole: every subcommand has help and an about,
//! and every rate and duration flag reads every documented spelling.

use crate::Cli;
use clap::CommandFactory;

/// Every subcommand, nested ones too, with its path from `lagkit`.
fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
    for sub in cmd.get_subcommands() {
        let mut p = path.clone();
        p.push(sub.get_name().to_string());
        out.push((p.clone(), sub.clone()));
        walk(sub, p, out);
    }
}

fn all_commands() -> Vec<(Vec<String>, clap::Command)> {
    let mut v = Vec::new();
    walk(&Cli::command(), Vec::new(), &mut v);
    v
}

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn every_subcommand_has_help_and_an_about() {
    let all = all_commands();
    assert!(all.len() > 20, "{} subcommands", all.len());
    for (path, sub) in &all {
        if sub.is_hide_set() {
            continue;
        }
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        assert!(
            !about.trim().is_empty(),
            "lagkit {} has no about",
            path.join(" ")
        );
        let mut argv = vec!["lagkit".to_string()];
        argv.extend(path.iter().cloned());
        argv.push("--help".into());
        let e = Cli::command()
            .try_get_matches_from(&argv)
            .expect_err("--help ends parsing");
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::DisplayHelp,
            "{}: {e}",
            argv.join(" ")
        );
        assert_eq!(e.exit_code(), 0, "{}", argv.join(" "));
        assert!(
            e.render().to_string().contains("Usage:"),
            "{}",
            argv.join(" ")
        );
    }
}

/// A command line per flag that takes a rate or a duration, with `{}`
/// where the value goes.
const RATE_FLAGS: &[&str] = &["plan flows.csv --rate {}", "lab run ibm-6513 --rate {}"];
const DURATION_FLAGS: &[&str] = &[
    "lab run t.toml --converge-timeout {}",
    "load client --kind stream --to 10.0.0.1 --duration {}",
    "load client --kind stream --to 10.0.0.1 --connect-timeout {}",
    "load client --kind lpm --to 10.0.0.1 --lpm-interval {}",
    "sim lacp --delay {}",
    "sim lacp --duration {}",
    "sim pagp --delay {}",
    "sim pagp --duration {}",
    "sim pair --host h.toml --switch s.cfg --delay {}",
    "sim pair --host h.toml --switch s.cfg --duration {}",
    "top --interval {}",
    "capture --name bond0 -w f.pcapng --duration {}",
];

fn parse(line: &str, value: &str) -> Result<clap::ArgMatches, clap::Error> {
    let mut argv = vec!["lagkit".to_string()];
    argv.extend(line.split(' ').map(|w| w.replace("{}", value)));
    Cli::command().try_get_matches_from(argv)
}

#[test]
fn every_rate_flag_reads_every_spelling() {
    for line in RATE_FLAGS {
        for v in ["1g", "1gbit", "100M", "100mbit", "2.5g", "1000000000"] {
            parse(line, v).unwrap_or_else(|e| panic!("{line} with {v}: {e}"));
        }
        let e = parse(line, "1gbps").unwrap_err().to_string();
        assert!(e.contains("write bits, e.g. 100mbit"), "{line}: {e}");
        let e = parse(line, "1x").unwrap_err().to_string();
        assert!(e.contains("unknown unit `x`"), "{line}: {e}");
    }
}

#[test]
fn every_duration_flag_reads_every_spelling() {
    for line in DURATION_FLAGS {
        for v in ["60s", "1m", "250ms", "1.5s", "60"] {
            parse(line, v).unwrap_or_else(|e| panic!("{line} with {v}: {e}"));
        }
        let e = parse(line, "60x").unwrap_err().to_string();
        assert!(
            e.contains("`60x`: unknown unit `x`; use ms, s, m or h"),
            "{line}: {e}"
        );
    }
}

/// Every flag whose name says it is a rate or a time is in the lists
/// above, so a new one cannot bypass the shared parsers unnoticed.
#[test]
fn the_lists_cover_every_rate_and_duration_flag() {
    let listed: Vec<&str> = RATE_FLAGS.iter().chain(DURATION_FLAGS).copied().collect();
    for (path, sub) in all_commands() {
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            // By word: `--nodelay` is a switch, not a time.
            let timeish = long
                .split('-')
                .any(|w| ["rate", "duration", "timeout", "interval", "delay"].contains(&w));
            if !timeish {
                continue;
            }
            let prefix = path.join(" ");
            assert!(
                listed
                    .iter()
                    .any(|l| l.starts_with(&prefix) && l.contains(&format!("--{long} "))),
                "lagkit {prefix} --{long} is not tested with every spelling"
            );
        }
    }
}

/// A running bond and a running switch are named the same way.
#[test]
fn running_bonds_and_switches_are_named_with_name() {
    for line in [
        "status --name bond0",
        "status -n bond0",
        "stats --name bond0 --json",
        "flow -n bond0 --src 10.0.0.1:1 --dst 10.0.0.2:2",
        "down --name bond0",
        "switch show etherchannel summary --name sw1",
        "switch show etherchannel summary -n sw1",
        "switch test etherchannel load-balance interface po1 ip 10.0.0.1 10.0.0.2 -n sw1",
        "capture --name bond0 -w f.pcapng",
        "capture -n bond0 -w f.pcapng --snaplen 128",
        "capture --switch sw1 -w f.pcapng --data",
        // The old spelling still reads (hidden from help).
        "status bond0",
        "down bond0",
    ] {
        let argv = std::iter::once("lagkit").chain(line.split(' '));
        Cli::command()
            .try_get_matches_from(argv)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    let argv = ["lagkit", "status", "bond0", "--name", "bond1"];
    assert!(Cli::command().try_get_matches_from(argv).is_err());
    // One daemon per capture: a bond or a switch.
    let argv = [
        "lagkit", "capture", "-n", "bond0", "--switch", "sw1", "-w", "f",
    ];
    assert!(Cli::command().try_get_matches_from(argv).is_err());
    let argv = ["lagkit", "capture", "bond0", "--switch", "sw1", "-w", "f"];
    assert!(Cli::command().try_get_matches_from(argv).is_err());
}
