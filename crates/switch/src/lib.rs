//! lagkit switch: the forwarding core of a software Ethernet switch with
//! port-channels, the other end of a lagkit bond (issue 11).
//!
//! Sans-IO and deterministic, like the protocol core: [`Bridge::receive`]
//! takes a frame, the port it came in on and the time, and answers what to
//! do with it ([`Verdict`]); the caller moves the bytes. Nothing here reads
//! a clock or touches a device. What it decides:
//!
//! - [`vlan`]: each port is an access port (one VLAN, untagged) or an
//!   802.1Q trunk (a native VLAN and the allowed VLANs); a frame is
//!   classified into a VLAN on the way in and tagged or untagged on the way
//!   out.
//! - [`fdb`]: the MAC address table per VLAN, learned from source
//!   addresses, aged, with moves between ports counted.
//! - [`channel`]: a port-channel's members and Cisco's 8 result-bundle-hash
//!   buckets (uneven over 3, 5, 6 and 7 links), redistributed `fixed` or
//!   `adaptive` when a member comes or goes.
//! - [`config`]: a switch from the IOS subset the seeds print, with
//!   Cisco's refusals and suspensions.
//! - [`show`]: Cisco's `show etherchannel summary`, `show mac
//!   address-table` and the others as text.
//! - [`bridge`]: the forwarding decision: slow-protocol and Cisco-multicast
//!   (PAgP, CDP) frames go to the port's control plane and are never
//!   flooded; other IEEE link-local frames are not forwarded; oversize
//!   frames are dropped and counted as giants; unknown unicast, broadcast
//!   and multicast are flooded within the VLAN; a frame never leaves by the
//!   port or channel it came in on; every drop is counted by reason.

#![forbid(unsafe_code)]

pub mod bridge;
pub mod channel;
pub mod config;
pub mod fdb;
pub mod show;
pub mod vlan;

pub use bridge::{Bridge, DropReason, Egress, PortConfig, PortCounters, Verdict};
pub use channel::{Channel, Distribution};
pub use fdb::{Fdb, Learned};
pub use vlan::{PortMode, VlanId, VlanSet};

/// A port of the switch, by its index in the order ports were added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct PortId(pub usize);

/// A port-channel, by its number (`channel-group N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ChannelId(pub u32);

/// Where a MAC address lives: a port, or a port-channel as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Logical {
    /// A port on its own.
    Port(PortId),
    /// A port-channel.
    Channel(ChannelId),
}
