//! The named values of the bond options: one enum per option, each spelled
//! as Linux spells it when displayed, and accepting the Linux number and the
//! AIX and Cisco names when parsed.
//!
//! One macro implements them all so every enum parses the same way
//! (case-insensitive, `-` and `_` interchangeable, the Linux number as a
//! string) and its error lists the valid names in the same words.

use core::fmt;
use core::str::FromStr;

use serde::{Serialize, Serializer};

use crate::quote::Quoted;

/// A value that is not one of an option's names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseEnumError {
    /// What was being parsed, e.g. `mode`.
    pub what: &'static str,
    /// The value given.
    pub value: String,
    /// The valid names, for the message.
    pub valid: &'static str,
}

impl fmt::Display for ParseEnumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {}; use one of {}",
            self.what,
            Quoted(&self.value),
            self.valid
        )
    }
}

impl std::error::Error for ParseEnumError {}

/// Lower case with `-` folded into `_`, so `Balance_XOR` matches `balance-xor`.
pub(crate) fn fold(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('-', "_")
}

// The enums are written out (so each variant keeps its own docs and
// `#[default]`); the macro writes the parsing, display and serialization.
macro_rules! named_impls {
    ($name:ident, what = $what:literal, valid = $valid:expr,
     { $( $var:ident = $canon:literal $(| $alias:literal)* ),+ $(,)? }) => {
        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The canonical (Linux) name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$var => $canon),+
                }
            }

            /// The names this value is accepted under, canonical first.
            pub fn spellings(self) -> &'static [&'static str] {
                match self {
                    $($name::$var => &[$canon $(, $alias)*]),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = ParseEnumError;

            /// Accepts the canonical name, the Linux number and the listed
            /// aliases, case-insensitively, with `-` and `_` interchangeable.
            fn from_str(s: &str) -> Result<$name, ParseEnumError> {
                let wanted = fold(s);
                for v in $name::ALL {
                    if v.spellings().iter().any(|n| fold(n) == wanted) {
                        return Ok(*v);
                    }
                }
                Err(ParseEnumError {
                    what: $what,
                    value: s.trim().to_string(),
                    valid: $valid,
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        /// Any spelling [`FromStr`] accepts.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// The bonding mode (Linux `mode`): how frames are spread over members and
/// whether a protocol runs with the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// IEEE 802.3ad / 802.1AX with LACP. Also `8023ad` (AIX), `lacp`, `4`.
    Lacp,
    /// Static hashing, no protocol. Also `standard` (AIX), `on` / `static`
    /// (what the Cisco peer calls it), `2`.
    BalanceXor,
    /// Round robin, packet by packet. Also `round_robin` (AIX), `0`.
    BalanceRr,
    /// One member carries everything; the others stand by. Also
    /// `netif_backup` (AIX), `1`.
    ActiveBackup,
    /// Every frame on every member. Also `3`.
    Broadcast,
    /// Adaptive transmit load balancing. Also `5`.
    BalanceTlb,
    /// Adaptive load balancing, transmit and receive. Also `6`.
    BalanceAlb,
    /// lagkit's own: static like `balance-xor`, with the `strong` hash and
    /// idle buckets moved to the least loaded member by measured load.
    Adaptive,
}

named_impls!(Mode, what = "mode",
    valid = "802.3ad, balance-xor, balance-rr, active-backup, broadcast, balance-tlb, \
             balance-alb, adaptive (AIX: 8023ad, standard, round_robin)",
    {
        Lacp = "802.3ad" | "8023ad" | "lacp" | "4",
        BalanceXor = "balance-xor" | "standard" | "on" | "static" | "2",
        BalanceRr = "balance-rr" | "round_robin" | "0",
        ActiveBackup = "active-backup" | "netif_backup" | "1",
        Broadcast = "broadcast" | "3",
        BalanceTlb = "balance-tlb" | "5",
        BalanceAlb = "balance-alb" | "6",
        Adaptive = "adaptive",
    }
);

impl Mode {
    /// The Linux mode number, if Linux has this mode.
    pub const fn linux_number(self) -> Option<u8> {
        match self {
            Mode::BalanceRr => Some(0),
            Mode::ActiveBackup => Some(1),
            Mode::BalanceXor => Some(2),
            Mode::Broadcast => Some(3),
            Mode::Lacp => Some(4),
            Mode::BalanceTlb => Some(5),
            Mode::BalanceAlb => Some(6),
            Mode::Adaptive => None,
        }
    }

    /// True when LACP runs with the peer (802.3ad).
    pub const fn is_lacp(self) -> bool {
        matches!(self, Mode::Lacp)
    }

    /// True when a transmit hash policy picks the member.
    pub const fn uses_hash(self) -> bool {
        matches!(
            self,
            Mode::Lacp | Mode::BalanceXor | Mode::BalanceTlb | Mode::BalanceAlb | Mode::Adaptive
        )
    }

    /// True when the mode has a primary member (Linux: active-backup, tlb, alb).
    pub const fn uses_primary(self) -> bool {
        matches!(
            self,
            Mode::ActiveBackup | Mode::BalanceTlb | Mode::BalanceAlb
        )
    }

    /// True when Linux allows the ARP monitor (not 802.3ad, tlb or alb).
    pub const fn allows_arp_monitor(self) -> bool {
        !matches!(self, Mode::Lacp | Mode::BalanceTlb | Mode::BalanceAlb)
    }

    /// True for the transmit-load-balancing modes (tlb, alb).
    pub const fn is_tlb(self) -> bool {
        matches!(self, Mode::BalanceTlb | Mode::BalanceAlb)
    }

    /// True for the static modes that may run PAgP towards the switch
    /// (balance-xor, AIX `standard`; active-backup), as AIX and HP APA
    /// answered PAgP in Cisco's measurements.
    pub const fn allows_pagp(self) -> bool {
        matches!(self, Mode::BalanceXor | Mode::ActiveBackup)
    }
}

/// How often LACPDUs are asked of the partner (Linux `lacp_rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LacpRate {
    /// Every 30 s (the Linux default). Also `0`.
    #[default]
    Slow,
    /// Every second. Also `1`.
    Fast,
}

named_impls!(LacpRate, what = "lacp_rate", valid = "slow, fast (or 0, 1)", {
    Slow = "slow" | "0",
    Fast = "fast" | "1",
});

impl Mode {
    /// The mode as Linux describes it in `/proc/net/bonding` (lagkit's
    /// own `adaptive` in the same style).
    pub fn linux_name(self) -> &'static str {
        match self {
            Mode::Lacp => "IEEE 802.3ad Dynamic link aggregation",
            Mode::BalanceXor => "load balancing (xor)",
            Mode::BalanceRr => "load balancing (round-robin)",
            Mode::ActiveBackup => "fault-tolerance (active-backup)",
            Mode::Broadcast => "fault-tolerance (broadcast)",
            Mode::Adaptive => "adaptive load balancing (lagkit: buckets by measured load)",
            Mode::BalanceTlb => "transmit load balancing",
            Mode::BalanceAlb => "adaptive load balancing",
        }
    }

    /// The mode named as [`Mode::linux_name`] writes it (as `lagkit status
    /// --json` and `/proc/net/bonding` show it), or as the configuration
    /// spells it.
    pub fn from_status(s: &str) -> Result<Mode, ParseEnumError> {
        match Mode::ALL.iter().find(|m| m.linux_name() == s.trim()) {
            Some(m) => Ok(*m),
            None => s.parse(),
        }
    }
}

/// How the active aggregator is chosen (Linux `ad_select`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AdSelect {
    /// Keep the active aggregator while it has a member up (default). Also `0`.
    #[default]
    Stable,
    /// The aggregator with the most bandwidth. Also `1`.
    Bandwidth,
    /// The aggregator with the most members. Also `2`.
    Count,
}

named_impls!(AdSelect, what = "ad_select",
    valid = "stable, bandwidth, count (or 0, 1, 2)",
    {
        Stable = "stable" | "0",
        Bandwidth = "bandwidth" | "1",
        Count = "count" | "2",
    }
);

/// When a recovered primary takes over again (Linux `primary_reselect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PrimaryReselect {
    /// Whenever it comes back (default). Also `0`.
    #[default]
    Always,
    /// Only if it is better (speed, duplex) than the active one. Also `1`.
    Better,
    /// Only when the active member fails. Also `2`.
    Failure,
}

named_impls!(PrimaryReselect, what = "primary_reselect",
    valid = "always, better, failure (or 0, 1, 2)",
    {
        Always = "always" | "0",
        Better = "better" | "1",
        Failure = "failure" | "2",
    }
);

/// Which data path moves the bond's frames (`engine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Engine {
    /// `bpf` where the kernel allows it (clsact, BPF programs, the JIT),
    /// else `userspace` (default).
    #[default]
    Auto,
    /// tc BPF programs on the members and the logical interface (a veth
    /// end): frames never leave the kernel.
    Bpf,
    /// lagkit's forwarding threads between a TAP device and packet sockets.
    Userspace,
}

named_impls!(Engine, what = "engine",
    valid = "auto, bpf, userspace",
    {
        Auto = "auto",
        Bpf = "bpf",
        Userspace = "userspace",
    }
);

/// Whether and how a static bond speaks Cisco's PAgP to the switch
/// (lagkit `pagp`, the switch's `channel-group N mode desirable|auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Pagp {
    /// No PAgP (default): the members carry traffic by their link state.
    #[default]
    Off,
    /// Speaks first: hellos from carrier up; forms with `desirable` and
    /// `auto` switch ports.
    Desirable,
    /// Answers only: forms with a `desirable` switch port, never with `auto`.
    Auto,
}

named_impls!(Pagp, what = "pagp",
    valid = "off, desirable, auto",
    {
        Off = "off" | "none",
        Desirable = "desirable",
        Auto = "auto",
    }
);

/// How often a PAgP member says hello once it is in the channel
/// (lagkit `pagp_rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PagpRate {
    /// Every 30 s, as Cisco does (default); the switch keeps what it heard
    /// 105 s. Also `normal`.
    #[default]
    Slow,
    /// Every second; the switch keeps what it heard 3.5 s.
    Fast,
}

named_impls!(PagpRate, what = "pagp_rate",
    valid = "slow, fast",
    {
        Slow = "slow" | "normal",
        Fast = "fast",
    }
);

/// Which ARP replies count as proof of a working member (Linux `arp_validate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ArpValidate {
    /// Any received traffic counts (default). Also `0`.
    #[default]
    None,
    /// Validate on the active member only. Also `1`.
    Active,
    /// Validate on backup members only. Also `2`.
    Backup,
    /// Validate on all members. Also `3`.
    All,
    /// Any ARP counts, not only replies to our probes. Also `4`.
    Filter,
    /// `filter`, active member only. Also `5`.
    FilterActive,
    /// `filter`, backup members only. Also `6`.
    FilterBackup,
}

named_impls!(ArpValidate, what = "arp_validate",
    valid = "none, active, backup, all, filter, filter_active, filter_backup (or 0 to 6)",
    {
        None = "none" | "0",
        Active = "active" | "1",
        Backup = "backup" | "2",
        All = "all" | "3",
        Filter = "filter" | "4",
        FilterActive = "filter_active" | "5",
        FilterBackup = "filter_backup" | "6",
    }
);

/// With several ARP targets, whether one or all must answer (Linux `arp_all_targets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ArpAllTargets {
    /// Any one target answering keeps a member up (default). Also `0`.
    #[default]
    Any,
    /// Every target must answer. Also `1`.
    All,
}

named_impls!(ArpAllTargets, what = "arp_all_targets", valid = "any, all (or 0, 1)", {
    Any = "any" | "0",
    All = "all" | "1",
});

/// What happens to MAC addresses at failover in active-backup (Linux `fail_over_mac`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FailOverMac {
    /// All members share the bond's MAC (default). Also `0`.
    #[default]
    None,
    /// The bond takes the MAC of the active member. Also `1`.
    Active,
    /// The new active member takes the bond's MAC; the old one gets its own. Also `2`.
    Follow,
}

named_impls!(FailOverMac, what = "fail_over_mac",
    valid = "none, active, follow (or 0, 1, 2)",
    {
        None = "none" | "0",
        Active = "active" | "1",
        Follow = "follow" | "2",
    }
);

/// What an 802.3ad member does when no LACP partner answers (lagkit `lacp_no_partner`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NoPartner {
    /// Run as an individual link, as Linux does, so a host without a
    /// configured switch (PXE, first boot) still has a path (default).
    #[default]
    Individual,
    /// Carry traffic statically on all such members, like `balance-xor`
    /// (Arista and Cisco "LACP fallback").
    Fallback,
    /// Carry no traffic (Cisco `lacp suspend-individual`).
    Suspend,
}

named_impls!(NoPartner, what = "lacp_no_partner",
    valid = "individual, fallback, suspend",
    {
        Individual = "individual",
        Fallback = "fallback",
        Suspend = "suspend",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<
        T: FromStr<Err = ParseEnumError> + fmt::Display + PartialEq + fmt::Debug + Copy,
    >(
        all: &[T],
        spellings: impl Fn(T) -> &'static [&'static str],
    ) {
        for &v in all {
            assert_eq!(v.to_string().parse::<T>(), Ok(v));
            for s in spellings(v) {
                assert_eq!(s.parse::<T>(), Ok(v), "{s}");
                assert_eq!(s.to_ascii_uppercase().parse::<T>(), Ok(v), "{s}");
            }
        }
    }

    #[test]
    fn every_spelling_parses_and_displays_canonically() {
        round_trip(Mode::ALL, Mode::spellings);
        round_trip(LacpRate::ALL, LacpRate::spellings);
        round_trip(AdSelect::ALL, AdSelect::spellings);
        round_trip(PrimaryReselect::ALL, PrimaryReselect::spellings);
        round_trip(ArpValidate::ALL, ArpValidate::spellings);
        round_trip(ArpAllTargets::ALL, ArpAllTargets::spellings);
        round_trip(FailOverMac::ALL, FailOverMac::spellings);
        round_trip(Engine::ALL, Engine::spellings);
        round_trip(NoPartner::ALL, NoPartner::spellings);
        round_trip(Pagp::ALL, Pagp::spellings);
        round_trip(PagpRate::ALL, PagpRate::spellings);
    }

    #[test]
    fn mode_numbers_match_linux() {
        for m in Mode::ALL {
            if let Some(n) = m.linux_number() {
                assert_eq!(n.to_string().parse::<Mode>(), Ok(*m));
            }
        }
        assert_eq!("balance_xor".parse::<Mode>(), Ok(Mode::BalanceXor));
        assert_eq!("round-robin".parse::<Mode>(), Ok(Mode::BalanceRr));
        assert_eq!(
            "filter-active".parse::<ArpValidate>(),
            Ok(ArpValidate::FilterActive)
        );
    }

    #[test]
    fn unknown_value_lists_the_valid_ones() {
        let e = "balance-foo".parse::<Mode>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown mode 'balance-foo'; use one of 802.3ad, balance-xor, balance-rr, \
             active-backup, broadcast, balance-tlb, balance-alb, adaptive (AIX: 8023ad, \
             standard, round_robin)"
        );
    }

    #[test]
    fn modes_read_back_from_their_status_names() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_status(m.linux_name()).unwrap(), *m);
            assert_eq!(Mode::from_status(m.name()).unwrap(), *m);
        }
        assert!(Mode::from_status("load balancing").is_err());
    }

    #[test]
    fn serializes_as_the_linux_name() {
        assert_eq!(serde_json::to_string(&Mode::Lacp).unwrap(), "\"802.3ad\"");
        assert_eq!(
            serde_json::to_string(&ArpValidate::FilterBackup).unwrap(),
            "\"filter_backup\""
        );
    }
}
