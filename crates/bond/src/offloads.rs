//! A member's transmit offloads — tx checksumming, TSO and GSO — turned off
//! while the bond holds it when the configuration says `offloads = false`
//! (what `ethtool -K MEMBER tx off tso off gso off` does).
//!
//! lagkit hands each member whole 64 KB GSO frames with partial checksums
//! (the virtio-net header of its packet sockets). A real NIC, or a kernel
//! stack at the far end of a veth, finishes them. A peer that reads the far
//! end of a veth in user space without vnet headers (Open vSwitch's
//! userspace datapath without `userspace-tso-enable`, a packet-processing
//! program) sees unfinished checksums and frames far above the MTU, and TCP
//! through it fails. With these features off on the member, the kernel
//! segments and checksums every frame before the wire.
//!
//! Only features that were wanted on are turned off, and only those are
//! recorded (by name, before the change) and turned back on: a feature the
//! operator had turned off stays off.

use lagkit_dataplane::{Features, Link, SysError};

/// ethtool's groups of kernel features, matched by name as ethtool
/// matches them (`tx-checksum-*`, `tx-tcp*-segmentation`,
/// `tx-generic-segmentation`), so a feature a newer kernel adds to a group
/// (`tx-tcp-accecn-segmentation` in 6.18) is covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// `tx`: `tx-checksumming`.
    Tx,
    /// `tso`: `tcp-segmentation-offload`.
    Tso,
    /// `gso`: `generic-segmentation-offload`.
    Gso,
}

impl Group {
    fn of(feature: &str) -> Option<Group> {
        if feature.starts_with("tx-checksum-") {
            Some(Group::Tx)
        } else if feature.starts_with("tx-tcp") && feature.ends_with("-segmentation") {
            Some(Group::Tso)
        } else if feature == "tx-generic-segmentation" {
            Some(Group::Gso)
        } else {
            None
        }
    }
}

pub use lagkit_api::status::Groups;

/// The groups of `f`.
pub fn groups_of(f: &Features) -> Groups {
    let any = |g: Group| {
        f.names()
            .any(|n| Group::of(n) == Some(g) && f.active(n) == Some(true))
    };
    Groups {
        tx: any(Group::Tx),
        tso: any(Group::Tso),
        gso: any(Group::Gso),
    }
}

/// The features of the three groups that are wanted on and may be changed:
/// what turning the offloads off changes, and what giving them back turns
/// on again.
pub fn to_turn_off(f: &Features) -> Vec<String> {
    f.names()
        .filter(|n| Group::of(n).is_some() && f.requested(n) == Some(true) && f.changeable(n))
        .map(str::to_string)
        .collect()
}

/// Turns the named features off (or back on).
pub fn set(link: &Link, names: &[String], on: bool) -> Result<(), SysError> {
    let wanted: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), on)).collect();
    link.set_features(&wanted)
}

/// The groups of interface `name` now, if it can be read.
pub fn groups(name: &str) -> Option<Groups> {
    let link = Link::open(name).ok()?;
    link.features().ok().map(|f| groups_of(&f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_match_features_as_ethtool_does() {
        assert_eq!(Group::of("tx-checksum-ip-generic"), Some(Group::Tx));
        assert_eq!(Group::of("tx-checksum-sctp"), Some(Group::Tx));
        assert_eq!(Group::of("tx-tcp6-segmentation"), Some(Group::Tso));
        assert_eq!(Group::of("tx-tcp-accecn-segmentation"), Some(Group::Tso));
        assert_eq!(Group::of("tx-generic-segmentation"), Some(Group::Gso));
        assert_eq!(Group::of("tx-udp-segmentation"), None);
        assert_eq!(Group::of("rx-checksum"), None);
        let shown = Groups {
            tx: false,
            tso: false,
            gso: true,
        };
        assert_eq!(shown.to_string(), "tx off, tso off, gso on");
        assert!(!shown.all_off());
    }

    #[test]
    fn loopback_features_read_without_privileges() {
        // Reading features needs no CAP_NET_ADMIN; lo exists everywhere.
        let link = Link::open("lo").expect("lo");
        let f = link.features().expect("ETHTOOL_GFEATURES on lo");
        assert_eq!(f.active("loopback"), Some(true), "{f:?}");
        assert!(!f.changeable("loopback"), "lo's loopback is [fixed]");
        assert_eq!(f.active("no-such-feature"), None);
        // Whatever lo offers, nothing fixed is ever on the list to change.
        for n in to_turn_off(&f) {
            assert!(f.changeable(&n), "{n}");
        }
    }
}
