//! Telling systemd how a daemon (`lagkit up`, `lagkit switch`) is doing,
//! for units of `Type=notify`: READY=1 once it does its job, RELOADING=1
//! and READY=1 around a reload, STOPPING=1 on the way out, and a STATUS=
//! line for `systemctl status`. Without `NOTIFY_SOCKET` (not started by
//! systemd) every call does nothing.

use sd_notify::NotifyState;
use std::os::fd::{AsFd, OwnedFd};

fn send(states: &[NotifyState]) {
    // A service manager that cannot be told is not a reason to stop
    // serving; systemd notices a missing READY=1 by its start timeout.
    if let Err(e) = sd_notify::notify(states) {
        tracing::warn!("cannot notify the service manager (NOTIFY_SOCKET): {e}");
    }
}

/// Started (or reloaded): the daemon does its job now.
pub fn ready(status: &str) {
    send(&[NotifyState::Status(status), NotifyState::Ready]);
}

/// A reload begins; [`ready`] ends it.
pub fn reloading() {
    let mut states = vec![
        NotifyState::Status("reloading the configuration"),
        NotifyState::Reloading,
    ];
    // systemd 253 and later tell reloads apart by this time (a unit of
    // Type=notify-reload needs it); older ones ignore it.
    if let Ok(now) = NotifyState::monotonic_usec_now() {
        states.push(now);
    }
    send(&states);
}

/// Shutting down.
pub fn stopping(status: &str) {
    send(&[NotifyState::Status(status), NotifyState::Stopping]);
}

/// Whether a service manager started this process (`NOTIFY_SOCKET`).
pub fn under_service_manager() -> bool {
    std::env::var_os("NOTIFY_SOCKET").is_some()
}

/// Hands `fds` to the service manager's file-descriptor store, each under
/// its name: systemd gives them to the unit's next start (the unit needs
/// `FileDescriptorStoreMax=`). Returns how many it took.
pub fn store_fds(fds: &[(String, OwnedFd)]) -> usize {
    let mut n = 0;
    for (name, fd) in fds {
        let states = [NotifyState::FdStore, NotifyState::FdName(name)];
        match sd_notify::notify_with_fds(&states, &[fd.as_fd()]) {
            Ok(()) => n += 1,
            Err(e) => {
                tracing::warn!(descriptor = %name, "cannot hand the descriptor to the service manager: {e}")
            }
        }
    }
    n
}

/// Takes descriptors `names` out of the service manager's store (this
/// process holds them now; left there, a TAP would outlive its bond).
pub fn unstore_fds(names: &[String]) {
    for name in names {
        send(&[NotifyState::FdStoreRemove, NotifyState::FdName(name)]);
    }
}
