//! How lagkit's daemons talk to the outside, apart from the daemons: the
//! control socket's line framing (server in [`control`], client in
//! [`protocol`]), the bond's and the switch's ([`switch`]) typed requests
//! and answers, the status and
//! counter types `lagkit status` and `lagkit stats` show, the capture
//! stream ([`capture`]) and the Prometheus page ([`metrics`]).
//!
//! A reader of the control socket (the lab, the planner, `lagkit top`,
//! the switch daemon's own server) depends on this crate alone, so it
//! builds without the bond's BPF programs and their compiler. JSON crosses
//! processes only through these types.

#![forbid(unsafe_code)]

pub mod capture;
pub mod control;
pub mod metrics;
pub mod protocol;
pub mod resume;
pub mod status;
pub mod switch;
