//! Opening devices inside a named network namespace (`ip netns add NAME`).
//!
//! Why: a TAP is created, and an AF_PACKET socket bound, in the namespace of
//! the calling *thread*; the descriptors keep working from any thread
//! afterwards. So the daemon (or a test) opens its devices on a short-lived
//! thread that has entered the namespace with `setns`, and forwards from
//! threads that never leave the root namespace.

use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sched::{setns, CloneFlags};

/// Why a namespace could not be entered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetnsError {
    /// The name is empty or contains '/'.
    #[error("network namespace name {0:?} is not valid")]
    BadName(String),
    /// `/run/netns/NAME` could not be opened.
    #[error("cannot open /run/netns/{name}: {errno} (does `ip netns list` show it?)")]
    Open {
        /// The namespace name.
        name: String,
        /// The errno.
        errno: Errno,
    },
    /// `setns` failed (needs CAP_SYS_ADMIN).
    #[error("setns into {name} failed: {errno}")]
    Setns {
        /// The namespace name.
        name: String,
        /// The errno.
        errno: Errno,
    },
    /// The helper thread could not be started.
    #[error("cannot start a thread to enter network namespace {0}")]
    Thread(String),
}

fn open_ns(name: &str) -> Result<OwnedFd, NetnsError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(NetnsError::BadName(name.to_owned()));
    }
    let path = format!("/run/netns/{name}");
    std::fs::File::open(&path)
        .map(OwnedFd::from)
        .map_err(|e| NetnsError::Open {
            name: name.to_owned(),
            errno: Errno::from_raw(e.raw_os_error().unwrap_or(0)),
        })
}

/// Moves the calling thread into network namespace `name` for good.
pub fn enter(name: &str) -> Result<(), NetnsError> {
    let fd = open_ns(name)?;
    setns(&fd, CloneFlags::CLONE_NEWNET).map_err(|errno| NetnsError::Setns {
        name: name.to_owned(),
        errno,
    })
}

/// Runs `f` on a helper thread inside network namespace `name` and returns
/// its result; the caller's thread stays where it is.
pub fn run_in<F, R>(name: &str, f: F) -> Result<R, NetnsError>
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let fd = open_ns(name)?;
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name(format!("netns-{name}"))
            .spawn_scoped(s, move || {
                setns(&fd, CloneFlags::CLONE_NEWNET).map_err(|errno| NetnsError::Setns {
                    name: name.to_owned(),
                    errno,
                })?;
                Ok(f())
            })
            .map_err(|_| NetnsError::Thread(name.to_owned()))?;
        match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_and_missing_names() {
        assert_eq!(enter("a/b"), Err(NetnsError::BadName("a/b".into())));
        assert!(matches!(run_in("", || ()), Err(NetnsError::BadName(_))));
        assert!(matches!(
            run_in("lkdp-surely-missing", || ()),
            Err(NetnsError::Open { .. })
        ));
    }
}
