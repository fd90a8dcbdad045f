//! Link watchers: how the bond learns that a member can carry traffic.
//!
//! Three sources, as in Linux bonding and teamd: the carrier reported by the
//! kernel (netlink link events, no polling; or, as an option, `miimon`
//! polling of the driver's link state, `ETHTOOL_GLINK`), an ARP/ping probe that proves
//! frames get through (Linux `arp_ip_target`, AIX `netaddr`), and LACP's own
//! view (supplied by the bond from the protocol core). Each source yields a
//! raw up/down; [`debounce::Debounce`] applies `updelay`/`downdelay`, and
//! [`combine`] merges several watchers with an explicit any/all policy.
//!
//! Everything except [`carrier`]'s socket is sans-IO: time is passed in.
//! Changing an interface (up, down, MTU) is `lagkit-sys`'s.

#![forbid(unsafe_code)]

pub mod arp;
pub mod carrier;
pub mod combine;
pub mod debounce;
pub mod ethtool;

pub use combine::{Combine, Watchers};
pub use debounce::Debounce;
