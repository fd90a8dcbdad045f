//! How `lagkit` ends: errors as text or, when a command was given
//! `--json`, as one JSON object; and quietly when its reader goes away.
//!
//! Errors go to stderr in both forms, so stdout carries only results: a
//! script reading `lagkit status --json` from stdout never parses an error
//! as a status. The JSON form is one line,
//! `{"error": "...", "file": "...", "line": N, "column": N, "exit": N}`
//! (`file`, `line` and `column` when known, else null), with the same exit
//! status as the text.

use crate::bond_cmd::Failure;
use std::ffi::OsString;
use std::process::ExitCode;

/// Whether `--json` is among the arguments (before a `--`). Read from the
/// raw arguments so that errors clap finds itself are JSON too.
pub fn json_requested(args: impl IntoIterator<Item = OsString>) -> bool {
    args.into_iter()
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// The exit status of a failure: 2 bad input, 4 missing privileges, 1
/// anything else.
pub fn exit_status(f: &Failure) -> u8 {
    match f {
        Failure::Usage(_) | Failure::Input { .. } => 2,
        Failure::Privilege(_) => 4,
        Failure::Runtime(_) => 1,
    }
}

/// The JSON form of an error.
pub fn json_error(why: &str, at: Option<(&str, Option<u64>, Option<u64>)>, exit: u8) -> String {
    let (file, line, column) = match at {
        Some((f, l, c)) => (Some(f), l, c),
        None => (None, None, None),
    };
    serde_json::json!({ "error": why, "file": file, "line": line, "column": column, "exit": exit })
        .to_string()
}

/// Prints a failure (to stderr) and gives its exit status.
pub fn fail(f: &Failure, json: bool) -> ExitCode {
    let code = exit_status(f);
    if json {
        let (why, at) = match f {
            Failure::Input {
                file,
                line,
                column,
                why,
            } => (why.clone(), Some((file.as_str(), *line, *column))),
            other => (other.to_string(), None),
        };
        eprintln!("{}", json_error(&why, at, code));
    } else {
        eprintln!("lagkit: {f}");
    }
    ExitCode::from(code)
}

/// A command-line error clap found: as clap prints it, or as JSON.
pub fn clap_error(e: clap::Error, json: bool) -> ! {
    use clap::error::ErrorKind;
    let info = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !json || info {
        e.exit()
    }
    let text = e.render().to_string();
    let first = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ");
    eprintln!("{}", json_error(first, None, 2));
    std::process::exit(2)
}

/// Lets a closed stdout end the command as it ends `cat` or `grep`: killed
/// by SIGPIPE, which a shell reports as status 141, with no message. Rust
/// ignores SIGPIPE, so without this `println!` panics on EPIPE. Only for
/// commands whose sockets, if any, are one request to a local daemon: the
/// daemons and the workloads keep SIGPIPE ignored, or a peer that goes
/// away would kill them.
pub fn die_on_closed_stdout() {
    // Before any thread is started: the disposition is process-wide.
    lagkit_sys::fd::default_sigpipe();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_seen_before_a_double_dash_only() {
        let a = |v: &[&str]| json_requested(v.iter().map(OsString::from));
        assert!(a(&["lagkit", "status", "--json"]));
        assert!(!a(&["lagkit", "status"]));
        assert!(!a(&["lagkit", "check", "--", "--json"]));
    }

    #[test]
    fn errors_as_json_keep_file_line_and_status() {
        let f = Failure::Input {
            file: "flows.csv".into(),
            line: Some(3),
            column: None,
            why: "column 5 (dport): \"8o80\" is not a port number (0-65535)".into(),
        };
        assert_eq!(
            f.to_string(),
            "flows.csv:3: column 5 (dport): \"8o80\" is not a port number (0-65535)"
        );
        assert_eq!(exit_status(&f), 2);
        let v: serde_json::Value =
            serde_json::from_str(&json_error("x", Some(("flows.csv", Some(3), None)), 2)).unwrap();
        assert_eq!(v["file"], "flows.csv");
        assert_eq!(v["line"], 3);
        assert_eq!(v["exit"], 2);
        let v: serde_json::Value = serde_json::from_str(&json_error("no bond", None, 1)).unwrap();
        assert!(v["file"].is_null() && v["line"].is_null() && v["column"].is_null());
        assert_eq!(exit_status(&Failure::Privilege(String::new())), 4);
        assert_eq!(exit_status(&Failure::Runtime(String::new())), 1);
    }
}
