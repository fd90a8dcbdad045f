//! IEEE 802.1AX-2020 Link Aggregation Control Protocol, clause 6.4.
//!
//! Layout: one module per state machine (`receive`, `periodic`, `mux`,
//! `transmit`, `churn`), the system-wide Selection Logic in `selection`, the
//! per-port variables of clause 6.4.7 in `port`, and the public sans-IO
//! [`System`] that owns ports and aggregators in `system`.
//!
//! How the machines run: a machine never polls on a tick. Each one is a
//! function from its current state and the standard's variables to an
//! optional `(event, next state)`; `System::settle` evaluates all machines of
//! all ports and the Selection Logic repeatedly until none moves, then lets
//! the Transmit machine send at most one LACPDU per port. Timers are
//! deadlines; an expired deadline is the standard's "timer expired" condition.

mod churn;
mod config;
mod mux;
mod periodic;
mod port;
mod receive;
mod selection;
mod system;
#[cfg(test)]
mod testkit;
mod transmit;

pub use churn::ChurnState;
pub use config::{
    Activity, AdSelect, MuxControl, NoPartner, PortConfig, Rate, SystemConfig, Timers,
};
pub use mux::MuxState;
pub use periodic::PeriodicState;
pub use port::{PortCounters, Selected};
pub use receive::RxState;
pub use system::{
    AggregatorId, AggregatorStatus, Event, Machine, PortId, PortStatus, System, Transmit,
};
pub use transmit::TxState;
