//! The planner: how would a configuration spread this traffic?
//!
//! Input is a list of [`Flow`]s (from CSV or JSON, or aggregated from a
//! pcap/pcapng capture read as a stream) and the two ends of one
//! aggregated link: the host's bond, which spreads what the host sends
//! ([`Dir::Out`]), and the switch's port-channel, which spreads what the
//! host receives ([`Dir::In`]). Every member choice is made by
//! `lagkit_hash`, the very code the bond (and later the switch) forwards
//! with, so a prediction and a packet cannot disagree.
//!
//! Per direction and link the planner gives flows, bytes and shares, and a
//! throughput from a max-min fair allocation over the links (each flow capped
//! by its own demand and by one link's rate, since a flow never spans links
//! under a hash); it ranks every alternative spreading ([`alternatives`]) and
//! names the causes of an imbalance the way a network engineer would
//! ([`explain`]).

#![forbid(unsafe_code)]

pub mod explain;
pub mod fair;
pub mod flow;
pub mod input;
pub mod predict;
pub mod report;

pub use explain::{explain, Cause};
pub use flow::{Dir, Flow};
pub use input::{read_flows, InputError};
pub use predict::{alternatives, predict, EndConfig, LinkLoad, Prediction, Spread};
