//! Why a kernel change was refused, in words a user can act on.

#![forbid(unsafe_code)]

use nix::errno::Errno;

/// A refused or failed rtnetlink request: the operation, its object and
/// the kernel's errno (or the socket's error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A link operation (`add veth`, `delete`, `set`) failed.
    #[error("cannot {op} link {name}: {}", explain(*errno))]
    Link {
        /// The operation, e.g. `add veth`.
        op: &'static str,
        /// The interface.
        name: String,
        /// The kernel's answer.
        errno: Errno,
    },
    /// An address operation (`add`, `replace`, `delete`) failed.
    #[error("cannot {op} address {addr} on {dev}: {}", explain(*errno))]
    Address {
        /// The operation.
        op: &'static str,
        /// The address with its prefix, e.g. `10.0.0.1/24`.
        addr: String,
        /// The interface.
        dev: String,
        /// The kernel's answer.
        errno: Errno,
    },
    /// A qdisc or filter operation failed.
    #[error("cannot {op} on {dev}: {}", explain(*errno))]
    Tc {
        /// The operation, e.g. `add clsact qdisc`.
        op: &'static str,
        /// The interface.
        dev: String,
        /// The kernel's answer.
        errno: Errno,
    },
    /// The netlink socket itself failed (not a refusal by the kernel).
    #[error("cannot {op} {object}: the rtnetlink socket failed: {source}")]
    Socket {
        /// The operation.
        op: &'static str,
        /// Its object.
        object: String,
        /// The socket's error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The kernel's errno, if the kernel refused the request.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Error::Link { errno, .. } | Error::Address { errno, .. } | Error::Tc { errno, .. } => {
                Some(*errno)
            }
            Error::Socket { .. } => None,
        }
    }

    /// Why, without the operation and the object: for a caller whose own
    /// message names them already.
    pub fn reason(&self) -> String {
        match self {
            Error::Socket { source, .. } => format!("the rtnetlink socket failed: {source}"),
            _ => self.errno().map(explain).unwrap_or_default(),
        }
    }
}

/// What an errno means for these requests, and what to do about it.
fn explain(errno: Errno) -> String {
    let hint = match errno {
        Errno::EEXIST => "it already exists (remove it first, or choose another name)",
        Errno::EPERM | Errno::EACCES => {
            "not permitted: changing interfaces needs CAP_NET_ADMIN (run as root)"
        }
        Errno::ENODEV => {
            "no such interface in this network namespace (check the name, or create it first)"
        }
        Errno::ENOENT => "not found (it may have been removed already)",
        Errno::EOPNOTSUPP => "the kernel does not support this (a module may be missing)",
        Errno::EBUSY => "the interface is busy (another program holds it)",
        _ => return format!("{} ({errno:?})", errno.desc()),
    };
    format!("{hint} ({errno:?})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_operation_object_and_remedy() {
        let e = Error::Link {
            op: "add veth",
            name: "v0".into(),
            errno: Errno::EEXIST,
        };
        assert_eq!(
            e.to_string(),
            "cannot add veth link v0: it already exists (remove it first, or choose another name) (EEXIST)"
        );
        let e = Error::Address {
            op: "replace",
            addr: "10.0.0.1/24".into(),
            dev: "bond0".into(),
            errno: Errno::EPERM,
        };
        assert!(e.to_string().contains("CAP_NET_ADMIN"), "{e}");
        assert!(e.reason().starts_with("not permitted"), "{}", e.reason());
        assert!(
            e.to_string()
                .starts_with("cannot replace address 10.0.0.1/24 on bond0"),
            "{e}"
        );
        let e = Error::Tc {
            op: "add clsact qdisc",
            dev: "eth9".into(),
            errno: Errno::ENODEV,
        };
        assert!(e.to_string().contains("no such interface"), "{e}");
        assert_eq!(e.errno(), Some(Errno::ENODEV));
        let e = Error::Tc {
            op: "add drop filter",
            dev: "eth9".into(),
            errno: Errno::EMSGSIZE,
        };
        assert!(e.to_string().ends_with("(EMSGSIZE)"), "{e}");
    }
}
