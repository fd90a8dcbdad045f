//! Why a switch could not start.

use lagkit_switch::config::ConfigError;

/// Why a switch could not start.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The configuration cannot be used (exit status 2; nothing touched).
    #[error("{0}")]
    Config(ConfigError),
    /// A port's device could not be opened.
    #[error("port {port} (device {device}): {why}")]
    Port {
        /// The interface name.
        port: String,
        /// The Linux device.
        device: String,
        /// Reason.
        why: String,
    },
    /// Netlink, epoll or the control socket failed.
    #[error("{what}: {why}")]
    System {
        /// What was being done.
        what: String,
        /// Reason.
        why: String,
    },
}

pub(crate) fn sys(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SwitchError {
    let what = what.into();
    move |e| SwitchError::System {
        what,
        why: e.to_string(),
    }
}
