//! Cisco's Port Aggregation Protocol (PAgP), the first open implementation
//! of its machines, written from the facts in the reference's "PAgP" section
//! (frame layout, modes, silent/non-silent, timers, learn method, port
//! priority) and checked with tshark and two-system simulations.
//!
//! No standard describes PAgP's state machines, so lagkit's are its own,
//! named after CISCO-PAGP-MIB's port states (portDown, portUp, upData,
//! pagpReceived, biDirectional, upPagp, upMult) plus a hot-standby state.
//! Where the reference is silent a choice is made and said where it is made
//! (who decides hot standby, how a Flush is answered).
//!
//! The shape is the LACP core's: a sans-IO [`System`] fed frames, carrier
//! changes and deadlines with the current time, drained of frames to send
//! and events. One explicit [`PortState`] per port; every transition goes
//! through one function and is logged as `port pagp: OLD (why) -> NEW`.

mod config;
mod driver;
mod gate;
mod port;
mod system;

pub use config::{Mode, PortConfig, Silence, SystemConfig, Timers};
pub use driver::{Driver, Gate, Poll, Transition};
pub use gate::FlushGate;
pub use lagkit_wire::pagp::LearnMethod;
pub use port::{PortCounters, PortState};
pub use system::{Event, PortId, PortStatus, System, Transmit};
