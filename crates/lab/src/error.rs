//! The errors of the lab: at the boundary the CLI sees ([`LabError`]: a
//! topology that cannot be used, a request that cannot be served, or a
//! system that failed), and what fails while a lab is brought up, run and
//! reported ([`RunError`], with a workload's output that says it failed
//! ([`OutputError`], [`ClientError`]) and bonds that did not form
//! ([`ConvergeError`])).
//!
//! The errors of a program, a file and a query ([`CommandError`],
//! [`IoError`], [`QueryError`]) are [`crate::sys`]'s, those of an Open
//! vSwitch instance [`crate::ovs::OvsError`].

use crate::ovs::OvsError;
use crate::sys::{CommandError, IoError, QueryError};
use crate::topology::TopologyError;
use lagkit_chart::ChartError;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// Why a lab command failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The topology file is wrong.
    #[error("{0}")]
    Topology(#[from] TopologyError),
    /// The request cannot be served as asked (not root, already up, ...).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The system failed (a command, a daemon, convergence).
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A request that cannot be served as asked.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// `lab up` runs as root only.
    #[error("lab up needs root (network namespaces, veths, tc)")]
    NotRoot,
    /// The lab has a state file already.
    #[error(
        "lab '{lab}' is already up (state file {}, phase {phase}); run `lagkit lab down {file}` first",
        .state_file.display()
    )]
    AlreadyUp {
        /// The lab's name.
        lab: String,
        /// Its state file.
        state_file: PathBuf,
        /// The phase the state file records.
        phase: String,
        /// The topology file.
        file: String,
    },
    /// The lab has no state file.
    #[error("lab '{lab}' is not up")]
    NotUp {
        /// The lab's name.
        lab: String,
    },
    /// The topology has no workload to run.
    #[error("{file}: no [workload] table; add one (kind = \"iperf3\", client, server)")]
    NoWorkload {
        /// The topology file.
        file: String,
    },
}

/// What failed while a lab was brought up, run, measured or reported.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A program failed (`ip`, `tc`, `sysctl`, `ping`, ...).
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A network namespace or veth could not be made.
    #[error(transparent)]
    Netns(#[from] lagkit_netns::NetnsError),
    /// A file or directory (state file, configuration, log, report).
    #[error(transparent)]
    Io(#[from] IoError),
    /// An Open vSwitch instance did not start or could not be configured.
    #[error(transparent)]
    Ovs(#[from] OvsError),
    /// The topology has an Open vSwitch switch, and OVS is not installed.
    #[error("{0}; or use lagkit's own switch (kind = \"lagkit\")")]
    NoOvs(OvsError),
    /// A lagkit daemon (or `tc`) did not answer a query as expected.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The bonds and channels did not form in time.
    #[error(transparent)]
    Converge(#[from] ConvergeError),
    /// A workload's output says it failed, or cannot be read.
    #[error("{source}{}", wrap(" (", .stderr, ")"))]
    Output {
        /// What is wrong with the output.
        source: OutputError,
        /// The workload's standard error, trimmed (may be empty).
        stderr: String,
    },
    /// A process the lab starts could not be started or waited for.
    #[error("{what}: {source}")]
    Process {
        /// The process, e.g. the lagkit binary or `lagkit load client h1 stream`.
        what: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A daemon the lab started did not come up.
    #[error("{daemon} did not start: {log}")]
    NotStarted {
        /// The daemon, e.g. `lagkit up h1`.
        daemon: String,
        /// The last lines of its log.
        log: String,
    },
    /// A daemon the lab started exited while it was awaited.
    #[error("{daemon} exited: {log}")]
    Exited {
        /// The daemon, e.g. `lagkit switch sw`.
        daemon: String,
        /// The last lines of its log.
        log: String,
    },
    /// A daemon the lab started runs but does not do what it should.
    #[error("{daemon} does not {doing} after {} s{}", .after.as_secs(), wrap(": ", .log, ""))]
    Silent {
        /// The daemon, e.g. `lagkit load server`.
        daemon: String,
        /// What it does not do, e.g. "answer `lagkit status`".
        doing: String,
        /// How long the lab waited.
        after: Duration,
        /// The last lines of its log (may be empty).
        log: String,
    },
    /// Clients of a `lagkit load` workload failed.
    #[error("{}", join(.0, "; "))]
    Clients(Vec<ClientError>),
    /// A host the workload needs has no address.
    #[error("host {host} has no address")]
    NoAddress {
        /// The host.
        host: String,
    },
    /// A workload host cannot reach a balance-alb host.
    #[error("{peer} cannot reach the balance-alb host {target} ({ip}): {source}")]
    Unreachable {
        /// The host that pinged.
        peer: String,
        /// The balance-alb host.
        target: String,
        /// Its address.
        ip: String,
        /// The failed ping (boxed: the error stays small).
        source: Box<CommandError>,
    },
    /// A state file that is not one.
    #[error("{}: unreadable state file: {source}", .path.display())]
    StateFile {
        /// The state file.
        path: PathBuf,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// Something the lab writes could not be written as JSON.
    #[error("{what}: {source}")]
    Serialize {
        /// What was written, e.g. the state file's path.
        what: String,
        /// What the JSON writer said.
        source: serde_json::Error,
    },
    /// A report's chart could not be drawn.
    #[error("{file}: {source}")]
    Chart {
        /// The SVG file it was for.
        file: String,
        /// What the chart library said.
        source: ChartError,
    },
    /// `lab up` failed; everything it made was removed (or what could
    /// not be is said).
    #[error(
        "lab up failed: {cause}{}{}",
        wrap("\n", .logs, ""),
        wrap("\ncleanup also failed: ", &.cleanup.join("; "), "")
    )]
    Up {
        /// What failed.
        cause: Box<RunError>,
        /// The last lines of the lab's logs.
        logs: String,
        /// What the cleanup could not remove.
        cleanup: Vec<String>,
    },
}

/// A workload's output that says the workload failed, or cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// `iperf3 -J` wrote no JSON.
    #[error("iperf3 -J output is not JSON: {0}")]
    Iperf3Json(serde_json::Error),
    /// iperf3 reported an error (its message).
    #[error("iperf3: {0}")]
    Iperf3(String),
    /// `iperf3 -J` output without a field the result needs.
    #[error("iperf3 -J output has no '{0}'")]
    Iperf3Field(&'static str),
    /// `lagkit load --json` wrote something other than its report.
    #[error("lagkit load --json output is not its report: {0}")]
    LoadJson(serde_json::Error),
    /// `lagkit load` reports failed connections.
    #[error("lagkit load {kind}: {failed} of {connections} connection(s) failed; first: {first}")]
    LoadFailed {
        /// The load, e.g. `stream`.
        kind: String,
        /// Connections that failed.
        failed: u64,
        /// Connections in all.
        connections: u32,
        /// The first failed connection's error.
        first: String,
    },
}

impl OutputError {
    /// iperf3's server is still busy with a previous test (try again).
    pub fn is_busy(&self) -> bool {
        matches!(self, OutputError::Iperf3(m) if m.contains("busy"))
    }
}

/// One `lagkit load client` of a workload that failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// It wrote its report but exited unsuccessfully.
    #[error("lagkit load client ({who}) exited with {status}: {stderr}")]
    Exited {
        /// Client host and kind, e.g. `h1 stream`.
        who: String,
        /// How it exited.
        status: ExitStatus,
        /// Its standard error, trimmed.
        stderr: String,
    },
    /// It wrote nothing.
    #[error("lagkit load client ({who}, {status}): {stderr}")]
    NoReport {
        /// Client host and kind.
        who: String,
        /// How it exited.
        status: ExitStatus,
        /// Its standard error, trimmed.
        stderr: String,
    },
    /// Its report says it failed, or is not a report.
    #[error("{who}: {source}")]
    Report {
        /// Client host and kind.
        who: String,
        /// What is wrong.
        source: OutputError,
    },
}

/// Bonds or channels that did not form within the deadline.
#[derive(Debug, thiserror::Error)]
#[error("not converged after {after:.0?}:\n  {}", .sides.join("\n  "))]
pub struct ConvergeError {
    /// How long the lab waited.
    pub after: Duration,
    /// One line per side that has not formed, with the reasons
    /// ([`crate::converge::LacpSnapshot::not_converged`]).
    pub sides: Vec<String>,
}

/// `s` between `before` and `after`, or nothing when `s` is empty.
fn wrap(before: &str, s: &str, after: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("{before}{s}{after}")
    }
}

/// The items' messages, `sep` between them.
fn join<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_the_strings_did() {
        let c = ConvergeError {
            after: Duration::from_secs(30),
            sides: vec!["host h1 bond bond0".into(), "switch sw channel po1".into()],
        };
        assert_eq!(
            c.to_string(),
            "not converged after 30s:\n  host h1 bond bond0\n  switch sw channel po1"
        );
        let cause = || Box::new(RunError::NoAddress { host: "h2".into() });
        let up = RunError::Up {
            cause: cause(),
            logs: String::new(),
            cleanup: Vec::new(),
        };
        assert_eq!(up.to_string(), "lab up failed: host h2 has no address");
        let up = RunError::Up {
            cause: cause(),
            logs: "--- h1.log ---\nbye".into(),
            cleanup: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            up.to_string(),
            "lab up failed: host h2 has no address\n--- h1.log ---\nbye\ncleanup also failed: a; b"
        );
        let silent = |log: &str| RunError::Silent {
            daemon: "iperf3 server".into(),
            doing: "listen".into(),
            after: Duration::from_secs(5),
            log: log.into(),
        };
        assert_eq!(
            silent("").to_string(),
            "iperf3 server does not listen after 5 s"
        );
        assert_eq!(
            silent("bind: in use").to_string(),
            "iperf3 server does not listen after 5 s: bind: in use"
        );
        let out = |stderr: &str| RunError::Output {
            source: OutputError::Iperf3("the server is busy".into()),
            stderr: stderr.into(),
        };
        assert_eq!(out("").to_string(), "iperf3: the server is busy");
        assert_eq!(
            out("refused").to_string(),
            "iperf3: the server is busy (refused)"
        );
        assert!(OutputError::Iperf3("the server is busy".into()).is_busy());
        assert!(!OutputError::Iperf3Field("end").is_busy());
        let usage = LabError::from(UsageError::NotUp { lab: "t".into() });
        assert_eq!(usage.to_string(), "lab 't' is not up");
    }
}
