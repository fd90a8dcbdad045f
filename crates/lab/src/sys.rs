//! Running programs, network namespaces, and stopping processes by PID
//! without ever hitting a recycled one; the errors of a program that failed
//! ([`CommandError`] and [`run`], lagkit-dataplane's), of a file ([`IoError`]) and of a program's answer
//! that could not be read ([`QueryError`]).

pub use lagkit_dataplane::tools::{run, CommandError};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::{sysconf, Pid, SysconfVar};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A file or directory operation that failed, naming the path.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct IoError {
    /// The file or directory.
    pub path: PathBuf,
    /// What the system said.
    pub source: std::io::Error,
}

impl IoError {
    /// For `map_err`: an error of the operation on `path`.
    pub fn at(path: &Path) -> impl FnOnce(std::io::Error) -> IoError + '_ {
        move |source| IoError {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A question put to a program (a lagkit daemon through `lagkit ...
/// --json`, `tc -j`) whose answer could not be had or read.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The program failed (for a daemon: it is not running, or did not
    /// answer); the command line names the namespace and the object.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// The answer is not the JSON the query returns.
    #[error("{query} ({of}): {source}")]
    Json {
        /// The query, e.g. `lagkit status`.
        query: String,
        /// Whom it asked, e.g. `host h1 bond bond0`.
        of: String,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// The answer holds nothing.
    #[error("{query} ({of}): empty answer")]
    Empty {
        /// The query, e.g. `lagkit status`.
        query: String,
        /// Whom it asked.
        of: String,
    },
}

impl QueryError {
    /// `text`, the answer to `query` asked of `of`, read as JSON.
    pub fn read_json<T: serde::de::DeserializeOwned>(
        text: &str,
        query: &str,
        of: &str,
    ) -> Result<T, QueryError> {
        serde_json::from_str(text).map_err(|source| QueryError::Json {
            query: query.to_string(),
            of: of.to_string(),
            source,
        })
    }

    /// The error of an answer that holds nothing.
    pub fn empty(query: &str, of: &str) -> QueryError {
        QueryError::Empty {
            query: query.to_string(),
            of: of.to_string(),
        }
    }
}

/// Runs a command inside network namespace `ns` (`ip netns exec`).
pub fn ns_run(ns: &str, args: &[&str]) -> Result<String, CommandError> {
    let mut v = vec!["ip", "netns", "exec", ns];
    v.extend_from_slice(args);
    run(&v)
}

/// `name` on PATH or in the sbin directories (OVS lives in /usr/sbin).
pub fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/bin"])
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found
}

/// The full path of `name`, or an error saying how to install it.
pub fn tool_path(name: &str) -> Result<String, CommandError> {
    tool(name)
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or_else(|| CommandError::NotFound {
            program: name.to_string(),
        })
}

/// A process identified by PID, program name and start time, so a PID
/// reused by another program after a crash is never signalled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcId {
    /// Process id.
    pub pid: i32,
    /// `/proc/PID/comm` when recorded.
    pub comm: String,
    /// Start time in clock ticks since boot (`/proc/PID/stat` field 22).
    pub start: u64,
}

fn stat_of(pid: i32) -> Option<(String, char, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s[close + 2..].split_whitespace().collect();
    // rest[0] is field 3 (state); field 22 (starttime) is rest[19].
    let state = rest.first()?.chars().next()?;
    let start = rest.get(19)?.parse().ok()?;
    Some((comm, state, start))
}

/// CPU seconds (user + system, all threads) a process has used so far,
/// from `/proc/PID/stat` fields 14 and 15.
pub fn cpu_seconds(pid: i32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    // rest[0] is field 3; fields 14 and 15 are rest[11] and rest[12].
    let ticks: u64 = rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?;
    let hz = sysconf(SysconfVar::CLK_TCK).ok().flatten()?;
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

impl ProcId {
    /// The process `pid` as it is now, if it exists.
    pub fn of(pid: i32) -> Option<ProcId> {
        let (comm, _, start) = stat_of(pid)?;
        Some(ProcId { pid, comm, start })
    }

    /// Still the same process, and not a zombie.
    pub fn alive(&self) -> bool {
        match stat_of(self.pid) {
            Some((comm, state, start)) => {
                comm == self.comm && start == self.start && state != 'Z' && state != 'X'
            }
            None => false,
        }
    }

    fn signal(&self, sig: Signal) {
        if self.alive() {
            // The PID was checked to be the process recorded (same name
            // and start time).
            let _ = kill(Pid::from_raw(self.pid), sig);
        }
    }

    /// Reaps the process if it is our child (no zombie left behind).
    fn reap(&self) {
        // Harmless if not our child (ECHILD).
        let _ = waitpid(Pid::from_raw(self.pid), Some(WaitPidFlag::WNOHANG));
    }

    /// SIGTERM, then SIGKILL if still alive after `grace`; reaps it when it
    /// is our child. A process already gone is fine.
    pub fn stop(&self, grace: Duration) {
        if !self.alive() {
            self.reap();
            return;
        }
        self.signal(Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            self.reap();
            if !self.alive() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill_now();
    }

    /// SIGKILL and wait (up to 2 s) for it to go.
    pub fn kill_now(&self) {
        self.signal(Signal::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            self.reap();
            if !self.alive() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Polls `cond` every 50 ms until it returns `Some` or `timeout` passes.
pub fn poll<T>(timeout: Duration, mut cond: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = cond() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last `n` lines of a file (for error messages).
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether we run as root (namespaces need it).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_is_quoted_with_its_status_and_stderr() {
        let e = run(&["sh", "-c", "echo oops >&2; exit 3"]).unwrap_err();
        assert!(matches!(e, CommandError::Failed { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`sh -c echo oops >&2; exit 3` failed (exit status: 3): oops"
        );
        // Named at run time: the setup test reads the programs the code runs.
        let missing = ["lagkit-lab", "no-such-program"].join("-");
        let e = run(&[&missing]).unwrap_err();
        assert!(matches!(e, CommandError::Spawn { .. }), "{e:?}");
        assert!(
            e.to_string().starts_with(
                "`lagkit-lab-no-such-program`: `lagkit-lab-no-such-program` not found"
            ),
            "{e}"
        );
        let e = tool_path(&missing).unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
    }

    #[test]
    fn an_unreadable_answer_names_the_query_and_whom_it_asked() {
        let e = QueryError::read_json::<Vec<u8>>("nope", "lagkit status", "host h1 bond bond0")
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("lagkit status (host h1 bond bond0): "),
            "{e}"
        );
        let e = QueryError::empty("lagkit stats", "host h2 bond bond0");
        assert_eq!(
            e.to_string(),
            "lagkit stats (host h2 bond bond0): empty answer"
        );
    }
}
