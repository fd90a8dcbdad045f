//! The host bond: N member interfaces become one logical interface, in any
//! bonding mode, with LACP, link monitoring and failover.
//!
//! Control and data are separate: one control thread owns the LACP core,
//! the link watchers and the control socket, and publishes each mode's
//! [`plan::Plan`] to the data path: either the kernel (tc BPF programs,
//! [`kernel`], with a veth end as the logical interface) or the forwarding
//! threads of `lagkit-dataplane` (a TAP device), which only read it.

#![forbid(unsafe_code)]

mod adopt;
pub mod announce;
mod control;
pub mod daemon;
mod datapath;
pub mod error;
pub mod guard;
pub mod journal;
pub mod kernel;
pub mod map;
pub mod member;
mod members;
pub mod offloads;
pub mod pcapng;
pub mod rebalance;
pub mod status;
pub mod supervise;
pub mod upper;

pub use lagkit_bondcore::{alb, config, core, plan, settings, Core};
