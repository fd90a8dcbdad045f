//! What the planner spreads: flows with a direction, a volume and an
//! optional demand.

use lagkit_hash::FlowKey;
use serde::Serialize;

/// Which end of the aggregated link chooses the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Sent by the bonded host: its bond's policy chooses.
    Out,
    /// Sent towards the bonded host: the switch's port-channel chooses.
    In,
}

impl Dir {
    /// Both directions, `Out` first.
    pub const BOTH: [Dir; 2] = [Dir::Out, Dir::In];

    /// `out` or `in`.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Out => "out",
            Dir::In => "in",
        }
    }
}

/// One flow as its packets look on the wire in its direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// The header fields the hash policies read.
    pub key: FlowKey,
    /// Who chooses its link.
    pub dir: Dir,
    /// Bytes carried (weights the per-link shares; 0 counts as 1 byte so
    /// that a list of flows without volumes still has shares).
    pub bytes: u64,
    /// The rate it would reach alone, bit/s; `None` for a bulk flow that
    /// takes whatever it is given.
    pub demand_bps: Option<f64>,
}

impl Flow {
    /// The weight of the flow in byte shares.
    pub fn weight(&self) -> u64 {
        self.bytes.max(1)
    }
}
