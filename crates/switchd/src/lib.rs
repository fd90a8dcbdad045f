//! lagkit switch daemon: the I/O shell around the sans-IO forwarding core
//! in `lagkit-switch`, as the bond's daemon is around `lagkit-proto`
//! (boringtun's split: the core decides, the shell owns the descriptors
//! and the loop).
//!
//! - [`daemon`]: the epoll loop and link events around
//!   [`lagkit_switch::Core`], which decides forwarding, LACP, PAgP and
//!   `mode on` port-channels; `port`: each port's device (a packet socket
//!   with virtio-net headers, so GSO frames cross whole) opened and set
//!   up or down; `error`: why a switch could not start.
//! - [`kernel`]: the BPF engine: the core's bridge published to the
//!   kernel's switch program as plans, its counters and address table
//!   copied back into the core.
//! - [`frames`]: the MTU a GSO frame is judged by, and VLAN tags rewritten
//!   with the virtio-net header's offsets moved.
//! - [`state`]: what a switch whose ports keep forwarding without it
//!   leaves for the next one (its pins, and each port's partner).
//! - [`protocol`]: the control requests and answers, socket paths and the
//!   client; the server is `lagkit-api`'s, generic over both daemons.
//! - [`metrics`]: the Prometheus page (a snapshot of the counters taken
//!   between two wake-ups, rendered and served apart from the loop).
//! - `report`, `report_lag`: Cisco's `show` text and the same facts as
//!   JSON (`report_lag`: the LACP/PAgP/EtherChannel family in IOS's
//!   layouts, as Genie and ntc-templates read them).

#![forbid(unsafe_code)]

pub mod daemon;
mod error;
pub mod frames;
pub mod kernel;
pub mod metrics;
mod port;
pub mod protocol;
mod report;
mod report_lag;
pub mod state;

pub use daemon::{Options, Switch, SwitchError};
