//! Descriptors one daemon hands to the next, so that a restart of the
//! userspace engines keeps their devices and sockets (and the frames
//! queued in them) instead of making new ones.
//!
//! The userspace engines own everything the host sees of them through
//! descriptors: the bond's TAP (which disappears with its last one), each
//! member's packet socket (its promiscuous membership and its queue of
//! received frames) and the tcx link that keeps member frames from the
//! host stack (detached with its last one). A daemon that hands over
//! [`give`]s each under a name; the process then passes them on:
//!
//! - under systemd, to the unit's file-descriptor store (`FDSTORE=1`,
//!   `FDNAME=`), which gives them to the next start of the unit as
//!   `LISTEN_FDS`/`LISTEN_FDNAMES`;
//! - otherwise, across an `exec` of itself: the descriptors stay open
//!   under their numbers and [`ENV`] names them.
//!
//! The next daemon [`inherit`]s both forms once at start, and each bond or
//! switch [`take`]s what is its own by name; what nobody takes is closed
//! by [`drain_unclaimed`]. Names are `lagkit.<owner>.<what>[.<member>]`:
//! printable, no colon, as systemd requires.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};

/// The environment variable that names the descriptors an `exec`ing
/// daemon kept open: `<pid>:<name>=<fd>,<name>=<fd>...` (the pid is the
/// process's own, which an `exec` keeps).
pub const ENV: &str = "LAGKIT_HANDOFF_FDS";

/// The prefix of every name lagkit stores (systemd's store is the unit's,
/// and may hold other descriptors).
pub const PREFIX: &str = "lagkit.";

static INHERITED: Mutex<BTreeMap<String, OwnedFd>> = Mutex::new(BTreeMap::new());
static GIVEN: Mutex<Vec<(String, OwnedFd)>> = Mutex::new(Vec::new());
static READ: OnceLock<()> = OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name of `what` of `owner` (`tap`, `sock`, `isolation`), for
/// `member` if it is a member's.
pub fn name(owner: &str, what: &str, member: Option<&str>) -> String {
    match member {
        Some(m) => format!("{PREFIX}{owner}.{what}.{m}"),
        None => format!("{PREFIX}{owner}.{what}"),
    }
}

/// `(name, number)` pairs of `LISTEN_FDS`/`LISTEN_FDNAMES` (systemd: the
/// numbers run from 3) when `LISTEN_PID` is `pid`, and of [`ENV`] when its
/// pid is `pid`; lagkit's names only.
pub fn parse_env(
    pid: u32,
    listen_pid: Option<&str>,
    listen_fds: Option<&str>,
    listen_names: Option<&str>,
    ours: Option<&str>,
) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    if listen_pid.and_then(|p| p.trim().parse::<u32>().ok()) == Some(pid) {
        let n = listen_fds.and_then(|n| n.trim().parse::<i32>().ok());
        let names: Vec<&str> = listen_names.map_or_else(Vec::new, |s| s.split(':').collect());
        for i in 0..n.unwrap_or(0).clamp(0, 4096) {
            if let Some(name) = names.get(i as usize).filter(|n| n.starts_with(PREFIX)) {
                out.push((name.to_string(), 3 + i));
            }
        }
    }
    if let Some((p, list)) = ours.and_then(|s| s.split_once(':')) {
        if p.trim().parse::<u32>().ok() == Some(pid) {
            for item in list.split(',').filter(|i| !i.is_empty()) {
                let Some((name, fd)) = item.split_once('=') else {
                    continue;
                };
                if let (true, Ok(fd)) = (name.starts_with(PREFIX), fd.parse::<i32>()) {
                    out.push((name.to_string(), fd));
                }
            }
        }
    }
    out
}

/// Takes the descriptors this process was started with (see the module's
/// documentation), once; later calls do nothing. Returns the names taken.
pub fn inherit() -> Vec<String> {
    if READ.set(()).is_err() {
        return Vec::new();
    }
    let var = |k: &str| std::env::var(k).ok();
    let pairs = parse_env(
        std::process::id(),
        var("LISTEN_PID").as_deref(),
        var("LISTEN_FDS").as_deref(),
        var("LISTEN_FDNAMES").as_deref(),
        var(ENV).as_deref(),
    );
    let mut held = lock(&INHERITED);
    let mut names = Vec::new();
    for (name, raw) in pairs {
        if let Some(fd) = lagkit_sys::fd::inherited(raw) {
            names.push(name.clone());
            held.insert(name, fd);
        }
    }
    names
}

/// The inherited descriptor of that name, now the caller's.
pub fn take(name: &str) -> Option<OwnedFd> {
    lock(&INHERITED).remove(name)
}

/// Closes every inherited descriptor of `owner` not taken (a start that
/// did not adopt them: a TAP kept open would stop a new one of its name
/// from being made). Returns their names.
pub fn drop_owner(owner: &str) -> Vec<String> {
    let prefix = format!("{PREFIX}{owner}.");
    let mut held = lock(&INHERITED);
    let names: Vec<String> = (held.keys())
        .filter(|k| k.starts_with(&prefix))
        .cloned()
        .collect();
    for n in &names {
        held.remove(n);
    }
    names
}

/// Closes every inherited descriptor nobody took. Returns their names.
pub fn drain_unclaimed() -> Vec<String> {
    std::mem::take(&mut *lock(&INHERITED)).into_keys().collect()
}

/// Hands `fd` to the next daemon under `name`.
pub fn give(name: String, fd: OwnedFd) {
    lock(&GIVEN).push((name, fd));
}

/// What was handed over so far, for the process to pass on.
pub fn given() -> Vec<(String, OwnedFd)> {
    std::mem::take(&mut *lock(&GIVEN))
}

/// [`ENV`]'s value naming `fds` for an `exec` of process `pid`.
pub fn env_value(pid: u32, fds: &[(String, OwnedFd)]) -> String {
    let list: Vec<String> = (fds.iter())
        .map(|(n, fd)| format!("{n}={}", fd.as_raw_fd()))
        .collect();
    format!("{pid}:{}", list.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_for_this_process_only() {
        let got = parse_env(
            42,
            Some("42"),
            Some("3"),
            Some("lagkit.bond0.tap:other:lagkit.bond0.sock.eth1"),
            None,
        );
        assert_eq!(
            got,
            vec![
                ("lagkit.bond0.tap".to_string(), 3),
                ("lagkit.bond0.sock.eth1".to_string(), 5)
            ]
        );
        // Another process's (a child that inherited the environment).
        assert!(parse_env(7, Some("42"), Some("3"), Some("lagkit.a.tap"), None).is_empty());
        let ours = "42:lagkit.bond0.tap=9,lagkit.bond0.sock.eth1=12,junk,x=3,lagkit.a.b=q";
        assert_eq!(
            parse_env(42, None, None, None, Some(ours)),
            vec![
                ("lagkit.bond0.tap".to_string(), 9),
                ("lagkit.bond0.sock.eth1".to_string(), 12)
            ]
        );
        assert!(parse_env(43, None, None, None, Some(ours)).is_empty());
        // Garbage is no descriptor, never a panic.
        for bad in ["", ":", "x:y", "42", "42:=,=,==", "-1:lagkit.a=-5"] {
            let _ = parse_env(42, Some(bad), Some(bad), Some(bad), Some(bad));
        }
        assert!(parse_env(42, Some("42"), Some("-3"), None, None).is_empty());
    }

    #[test]
    fn a_name_says_whose_and_what() {
        assert_eq!(name("bond0", "tap", None), "lagkit.bond0.tap");
        assert_eq!(
            name("bond0", "sock", Some("eth1")),
            "lagkit.bond0.sock.eth1"
        );
    }
}
