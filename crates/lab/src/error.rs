//! The error of a lab command, at the boundary the CLI sees: a topology
//! that cannot be used, a request that cannot be served, or a system that
//! failed.

use crate::topology::TopologyError;

/// Why a lab command failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The topology file is wrong.
    #[error("{0}")]
    Topology(#[from] TopologyError),
    /// The request cannot be served as asked (not root, already up, ...).
    #[error("{0}")]
    Usage(String),
    /// The system failed (a command, a daemon, convergence).
    #[error("{0}")]
    Run(String),
}
