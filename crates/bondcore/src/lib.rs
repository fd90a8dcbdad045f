//! The host bond's decisions, with no I/O: what a bond is configured to
//! do ([`settings`], read from its file by [`config`]), each bonding mode's
//! rule for who carries what ([`plan`]), balance-alb's clients ([`alb`]),
//! the [`Core`] that holds the members' state, LACP or PAgP and the
//! link watchers and builds the plan, the status and counters it reports
//! ([`report`]), and whether an interface may become a member
//! ([`guard`]).
//!
//! `lagkit-bond` runs this core behind its daemon (sockets, the engines,
//! the control socket) and re-exports it; `lagkit sim`, the planner and the
//! tests use it directly. Nothing here reads a clock, opens a socket or
//! needs the BPF toolchain, so it builds and tests anywhere. The one read
//! of the system is [`config`]'s: a `strong` seed the file does not give
//! is drawn from `/dev/urandom`.

#![forbid(unsafe_code)]

pub mod alb;
pub mod config;
pub mod core;
pub mod guard;
pub mod plan;
pub mod report;
pub mod settings;

pub use crate::core::Core;
