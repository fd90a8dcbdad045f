//! Why a bond could not start or keep running: each error names the bond
//! and the object (member, address, socket) it is about.

use crate::journal::JournalError;
use crate::member;
use std::path::PathBuf;

/// Why a bond could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum BondError {
    /// The TAP could not be created.
    #[error("bond {bond}: cannot create TAP interface: {why}")]
    Tap {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// A member could not be set up.
    #[error("bond {bond}: {0}", bond = .1)]
    Member(member::MemberError, String),
    /// Netlink failed.
    #[error("bond {bond}: netlink: {why}")]
    Netlink {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// The control socket could not be created.
    #[error("bond {bond}: control socket {path}: {why}")]
    Control {
        /// Bond name.
        bond: String,
        /// Socket path.
        path: PathBuf,
        /// Reason.
        why: String,
    },
    /// The engine failed.
    #[error("bond {bond}: forwarding engine: {why}")]
    Engine {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// Another daemon runs this bond, or its run directory is unusable.
    #[error("{0}")]
    RunDir(#[from] JournalError),
    /// A member is in use by another bond.
    #[error("bond {bond}: member {member} is in use by bond {owner} (pid {pid}); a member belongs to one bond at a time")]
    InUse {
        /// This bond.
        bond: String,
        /// The member.
        member: String,
        /// The bond that has it.
        owner: String,
        /// The daemon running that bond.
        pid: u32,
    },
    /// A member the host still uses (an address, a route) or that belongs
    /// to something else (a bridge, another bond), not in `force_members`.
    #[error("bond {bond}: {why}")]
    MemberInUse {
        /// This bond.
        bond: String,
        /// Which member, what uses it, and the key that overrides.
        why: String,
    },
    /// An address could not be set.
    #[error("bond {bond}: address {addr}: {why}")]
    Address {
        /// Bond name.
        bond: String,
        /// Address.
        addr: String,
        /// Reason.
        why: String,
    },
}
