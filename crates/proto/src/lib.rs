//! The protocol core of lagkit: IEEE 802.1AX-2020 LACP (clause 6.4), the
//! Marker responder (clause 6.5) and Cisco's PAgP ([`pagp`]), with no clock,
//! no sockets and no threads.
//!
//! The shape follows quinn-proto: a [`lacp::System`] is fed events
//! (`handle_frame`, `set_port_enabled`, `handle_timeout`) together with the
//! current time, and is drained of outputs (`poll_transmit`, `poll_event`,
//! `poll_timeout`). Everything it does is a pure function of those inputs, so
//! two systems can be stepped against each other in virtual time and the
//! same run always gives the same result.
//!
//! Each 802.1AX state machine is an explicit state enum and an event enum
//! named as in the standard, in its own module; the standard's pseudocode is
//! quoted above the code that implements it.

#![forbid(unsafe_code)]

pub mod lacp;
pub mod pagp;
pub mod time;

pub use time::Instant;

/// Index of a port in its system (LACP or PAgP), as the caller added it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortId(pub usize);
