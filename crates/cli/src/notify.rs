//! Telling systemd how a daemon (`lagkit up`, `lagkit switch`) is doing,
//! for units of `Type=notify`: READY=1 once it does its job, RELOADING=1
//! and READY=1 around a reload, STOPPING=1 on the way out, and a STATUS=
//! line for `systemctl status`. Without `NOTIFY_SOCKET` (not started by
//! systemd) every call does nothing.

use sd_notify::NotifyState;

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
