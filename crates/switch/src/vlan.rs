//! VLAN membership of a port and 802.1Q classification.

use crate::bridge::DropReason;
use std::fmt;

/// A VLAN id, 1..=4094.
pub type VlanId = u16;

/// The default VLAN of an access port and the native VLAN of a trunk.
pub const DEFAULT_VLAN: VlanId = 1;

/// A set of VLAN ids (a 4096-bit map).
#[derive(Clone, PartialEq, Eq)]
pub struct VlanSet(Box<[u64; 64]>);

/// Why a VLAN list cannot be read (IOS's reader, shared with `lagkit check`).
pub use lagkit_ios::VlanListError;

impl VlanSet {
    /// No VLAN.
    pub fn none() -> VlanSet {
        VlanSet(Box::new([0; 64]))
    }

    /// Every VLAN, 1..=4094 (a trunk's default).
    pub fn all() -> VlanSet {
        let mut s = VlanSet::none();
        for v in 1..=4094 {
            s.insert(v);
        }
        s
    }

    /// Adds `v` (ids outside 1..=4094 are ignored).
    pub fn insert(&mut self, v: VlanId) {
        if (1..=4094).contains(&v) {
            self.0[usize::from(v / 64)] |= 1 << (v % 64);
        }
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: VlanId) -> bool {
        v < 4096 && self.0[usize::from(v / 64)] & (1 << (v % 64)) != 0
    }

    /// Parses IOS's list syntax: `1-10,20,30-32`, `all`, `none`
    /// ([`lagkit_ios::vlan_ranges`]).
    pub fn parse(s: &str) -> Result<VlanSet, VlanListError> {
        let mut set = VlanSet::none();
        for (a, b) in lagkit_ios::vlan_ranges(s)? {
            for v in a..=b {
                set.insert(v);
            }
        }
        Ok(set)
    }
}

impl fmt::Debug for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Ranges, as IOS prints them.
        let mut parts = Vec::new();
        let mut v = 1u16;
        while v <= 4094 {
            if self.contains(v) {
                let start = v;
                while v < 4094 && self.contains(v + 1) {
                    v += 1;
                }
                parts.push(if start == v {
                    start.to_string()
                } else {
                    format!("{start}-{v}")
                });
            }
            v += 1;
        }
        write!(
            f,
            "{}",
            if parts.is_empty() {
                "none".into()
            } else {
                parts.join(",")
            }
        )
    }
}

/// How a port carries VLANs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortMode {
    /// `switchport mode access` (`switchport access vlan N`): untagged frames
    /// in VLAN `vlan`; a tagged frame is refused unless priority-tagged
    /// (VLAN id 0).
    Access {
        /// The access VLAN.
        vlan: VlanId,
    },
    /// `switchport mode trunk`: untagged frames belong to `native`, tagged
    /// ones to their VLAN if `allowed` has it; frames leave tagged except in
    /// the native VLAN.
    Trunk {
        /// The native VLAN.
        native: VlanId,
        /// `switchport trunk allowed vlan ...`.
        allowed: VlanSet,
    },
}

impl Default for PortMode {
    fn default() -> PortMode {
        PortMode::Access { vlan: DEFAULT_VLAN }
    }
}

impl PortMode {
    /// The VLAN a frame with 802.1Q tag `tag` (its VLAN id, if tagged)
    /// arriving on this port belongs to.
    pub fn classify(&self, tag: Option<VlanId>) -> Result<VlanId, DropReason> {
        match (self, tag) {
            (PortMode::Access { vlan }, None | Some(0)) => Ok(*vlan),
            (PortMode::Access { .. }, Some(_)) => Err(DropReason::TaggedOnAccess),
            (PortMode::Trunk { native, .. }, None | Some(0)) => Ok(*native),
            (PortMode::Trunk { allowed, .. }, Some(v)) if allowed.contains(v) => Ok(v),
            (PortMode::Trunk { .. }, Some(_)) => Err(DropReason::VlanNotAllowed),
        }
    }

    /// How a frame of `vlan` leaves this port: `None` if it may not,
    /// `Some(None)` untagged, `Some(Some(vlan))` tagged.
    pub fn egress(&self, vlan: VlanId) -> Option<Option<VlanId>> {
        match self {
            PortMode::Access { vlan: v } => (*v == vlan).then_some(None),
            PortMode::Trunk { native, allowed } => {
                if vlan == *native {
                    Some(None)
                } else if allowed.contains(vlan) {
                    Some(Some(vlan))
                } else {
                    None
                }
            }
        }
    }

    /// Whether frames of `vlan` may use this port at all.
    pub fn carries(&self, vlan: VlanId) -> bool {
        self.egress(vlan).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ios_vlan_lists() {
        let s = VlanSet::parse("1-3,10, 20-21").unwrap();
        assert_eq!(format!("{s:?}"), "1-3,10,20-21");
        assert!(s.contains(2) && !s.contains(4) && s.contains(21));
        assert_eq!(format!("{:?}", VlanSet::all()), "1-4094");
        assert_eq!(format!("{:?}", VlanSet::parse("none").unwrap()), "none");
        assert_eq!(VlanSet::parse("0"), Err(VlanListError::OutOfRange(0)));
        assert_eq!(VlanSet::parse("4095"), Err(VlanListError::OutOfRange(4095)));
        assert_eq!(VlanSet::parse("5-3"), Err(VlanListError::Backwards(5, 3)));
        assert!(VlanSet::parse("x")
            .unwrap_err()
            .to_string()
            .contains("not a VLAN"));
        assert!(!VlanSet::all().contains(4095) && !VlanSet::all().contains(0));
    }

    #[test]
    fn access_and_trunk_classify_and_tag() {
        let access = PortMode::Access { vlan: 129 };
        assert_eq!(access.classify(None), Ok(129));
        assert_eq!(access.classify(Some(0)), Ok(129), "priority-tagged");
        assert_eq!(access.classify(Some(129)), Err(DropReason::TaggedOnAccess));
        assert_eq!(access.egress(129), Some(None));
        assert_eq!(access.egress(1), None);
        let trunk = PortMode::Trunk {
            native: 1,
            allowed: VlanSet::parse("1,129").unwrap(),
        };
        assert_eq!(trunk.classify(None), Ok(1));
        assert_eq!(trunk.classify(Some(129)), Ok(129));
        assert_eq!(trunk.classify(Some(130)), Err(DropReason::VlanNotAllowed));
        assert_eq!(trunk.egress(1), Some(None), "native leaves untagged");
        assert_eq!(trunk.egress(129), Some(Some(129)));
        assert_eq!(trunk.egress(130), None);
    }
}
