//! lagkit switch: the forwarding core of a software Ethernet switch with
//! port-channels, the other end of a lagkit bond.
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
//! - [`police`]: storm control (IOS's `storm-control ... level`, metered
//!   over 1-second intervals) and the bound on new addresses a port may
//!   teach the table per second.
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
//! - [`core`]: the whole switch's decisions around the bridge: LACP and
//!   PAgP on the members of their channels, `mode on` following carrier,
//!   stand-alone members, the mismatch note of a partner that speaks a
//!   protocol the port does not run (`foreign`), and each member's `show`
//!   flag. The daemon (`lagkit-switchd`) only moves frames, carrier
//!   changes and time in and out of it.

#![forbid(unsafe_code)]

pub mod bridge;
pub mod channel;
pub mod config;
pub mod core;
pub mod fdb;
mod foreign;
pub mod police;
pub mod running;
pub mod show;
pub mod sim;
pub mod vlan;

pub use bridge::{
    Bridge, Cast, ChannelError, DropReason, Egress, PortConfig, PortCounters, Verdict,
};
pub use channel::{Channel, Distribution};
pub use core::Core;
pub use fdb::{Fdb, Learned};
pub use vlan::{PortMode, VlanId, VlanListError, VlanSet};

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

/// Runs arbitrary bytes through the switch as a fuzz target does: with the
/// top bit of the first byte set, the rest is an IOS configuration for a
/// four-port switch (errors are values; one taken prints a running-config
/// that reads back into the same switch); otherwise the bytes are frames
/// (each one a length byte and its bytes, on a port the first byte picks)
/// through a switch with an access port, a trunk and a two-member channel,
/// with the time advancing. Panics only when an invariant breaks: a frame
/// leaving by the port or channel it came in on, a port twice in one
/// verdict, a tag the egress port would not send, or a rewritten frame of
/// the wrong length.
pub fn fuzz_one(data: &[u8]) {
    use crate::bridge::{Bridge, Verdict};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let ports: Vec<(String, String)> = ["gi1/1", "gi1/2", "gi1/3", "gi1/4"]
        .iter()
        .map(|n| (n.to_string(), String::new()))
        .collect();
    if first & 0x80 != 0 {
        // A configuration taken prints a running-config that is taken
        // again and prints itself.
        if let Ok(c) = config::from_ios(&String::from_utf8_lossy(rest), &ports) {
            let run = running::running_config(&c);
            let again = config::from_ios(&run, &ports).expect("running-config reads back");
            assert_eq!(
                running::running_config(&again),
                run,
                "running-config: a fixed point"
            );
            assert_eq!(again.suspended, c.suspended, "the same suspensions");
        }
        return;
    }
    const CONFIG: &str = "port-channel load-balance src-dst-mixed-ip-port\ninterface gi1/1\n switchport access vlan 10\n storm-control broadcast level pps 3\n storm-control unicast level 0.01\ninterface gi1/2\n switchport mode trunk\n switchport trunk allowed vlan 1,10,20\n mtu 9000\ninterface range gi1/3 - 4\n channel-group 1 mode on\n";
    let Ok(mut cfg) = config::from_ios(CONFIG, &ports) else {
        panic!("the fuzz switch's own configuration is refused");
    };
    if first & 1 == 0 {
        cfg.bridge.set_bundled(PortId(2), true);
    }
    cfg.bridge.set_bundled(PortId(3), true);
    let b: &mut Bridge = &mut cfg.bridge;
    let mut rest = rest;
    let mut now = 0u64;
    while let Some((&len, tail)) = rest.split_first() {
        let n = usize::from(len).min(tail.len());
        let (frame, more) = tail.split_at(n);
        rest = more;
        let ingress = PortId(usize::from(len) % 4);
        now += u64::from(len) * 1_000_000_000;
        match b.receive(ingress, frame, now) {
            Verdict::Forward { vlan, egress, .. } => {
                let from = b.logical(ingress);
                let mut seen = Vec::new();
                for e in &egress {
                    assert_ne!(b.logical(e.port), from, "out by the way it came in");
                    assert!(!seen.contains(&e.port), "a port twice");
                    seen.push(e.port);
                    let mode = &b.port(e.port).expect("port").mode;
                    assert_eq!(
                        mode.egress(vlan),
                        Some(e.tag),
                        "a tag the port would not send"
                    );
                    let out = Bridge::frame_for(frame, e.tag);
                    let tagged = |f: &[u8]| f.len() >= 18 && f[12..14] == [0x81, 0x00];
                    let expect = frame.len() - if tagged(frame) { 4 } else { 0 }
                        + if e.tag.is_some() { 4 } else { 0 };
                    assert_eq!(out.len(), expect, "rewritten length");
                }
            }
            Verdict::Control => {
                assert!(frame.len() >= 6);
                assert!(
                    frame[..6] == bridge::SLOW_PROTOCOLS || frame[..6] == bridge::CISCO_MULTICAST
                );
            }
            Verdict::Drop(_) => {}
        }
        if len % 7 == 0 {
            b.set_bundled(PortId(2 + usize::from(len % 2)), len % 3 == 0);
        }
    }
}
