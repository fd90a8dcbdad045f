//! The small closed vocabularies of a bond's status: modes, link states,
//! LACP and PAgP states, each an enum with the spellings Linux, the
//! standard or the MIB give it, so that no reader compares strings.

use serde::{Deserialize, Serialize};

/// Implements `as_str`, `Display` and `FromStr` for a unit enum from one
/// table of (variant, canonical spelling, other accepted spellings).
macro_rules! spelled {
    ($t:ident, $what:literal, { $($v:ident = $s:literal $(| $alt:literal)*),* $(,)? }) => {
        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [$t] = &[$($t::$v),*];

            /// The canonical spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s),*
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                match s {
                    $($s $(| $alt)* => Ok($t::$v),)*
                    _ => Err(format!("'{s}' is not a {}", $what)),
                }
            }
        }

        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// A link's state as `/proc/net/bonding` shows it ("MII Status"). A
/// member inside `downdelay` is `going down` (it still carries traffic),
/// inside `updelay` `going back` (not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MiiStatus {
    /// Carrier (and every link watcher agrees).
    Up,
    /// No carrier, or a watcher says down.
    #[default]
    Down,
    /// A member whose interface does not exist (yet).
    Missing,
    /// Carrier lost, waiting out `downdelay`.
    GoingDown,
    /// Carrier back, waiting out `updelay`.
    GoingBack,
}

spelled!(MiiStatus, "link state (up, down, missing, going down, going back)", {
    Up = "up",
    Down = "down",
    Missing = "missing",
    GoingDown = "going down",
    GoingBack = "going back",
});

impl MiiStatus {
    /// Up: the link carries traffic and every watcher agrees.
    pub fn is_up(self) -> bool {
        self == MiiStatus::Up
    }
}

/// The data path a bond runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// tc BPF programs in the kernel move the frames.
    Bpf,
    /// Forwarding threads in the daemon move them (a TAP device).
    #[default]
    Userspace,
}

spelled!(EngineKind, "data path (bpf, userspace)", {
    Bpf = "bpf",
    Userspace = "userspace",
});

/// A bond's mode, by the name the configuration gives it; Linux's
/// description (`/proc/net/bonding`'s "Bonding Mode") is
/// [`BondMode::description`], which is also read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BondMode {
    /// `balance-rr` (0).
    #[default]
    BalanceRr,
    /// `active-backup` (1).
    ActiveBackup,
    /// `balance-xor` (2).
    BalanceXor,
    /// `broadcast` (3).
    Broadcast,
    /// `802.3ad` (4).
    Lacp,
    /// `balance-tlb` (5).
    BalanceTlb,
    /// `balance-alb` (6).
    BalanceAlb,
    /// lagkit's `adaptive`: a static hash whose idle buckets move by load.
    Adaptive,
}

spelled!(BondMode, "bonding mode", {
    BalanceRr = "balance-rr" | "load balancing (round-robin)",
    ActiveBackup = "active-backup" | "fault-tolerance (active-backup)",
    BalanceXor = "balance-xor" | "load balancing (xor)",
    Broadcast = "broadcast" | "fault-tolerance (broadcast)",
    Lacp = "802.3ad" | "IEEE 802.3ad Dynamic link aggregation",
    BalanceTlb = "balance-tlb" | "transmit load balancing",
    BalanceAlb = "balance-alb" | "adaptive load balancing",
    Adaptive = "adaptive" | "adaptive rebalancing (lagkit)",
});

impl BondMode {
    /// The mode as `/proc/net/bonding` describes it ("Bonding Mode:").
    pub fn description(self) -> &'static str {
        match self {
            BondMode::BalanceRr => "load balancing (round-robin)",
            BondMode::ActiveBackup => "fault-tolerance (active-backup)",
            BondMode::BalanceXor => "load balancing (xor)",
            BondMode::Broadcast => "fault-tolerance (broadcast)",
            BondMode::Lacp => "IEEE 802.3ad Dynamic link aggregation",
            BondMode::BalanceTlb => "transmit load balancing",
            BondMode::BalanceAlb => "adaptive load balancing",
            BondMode::Adaptive => "adaptive rebalancing (lagkit)",
        }
    }

    /// The modes with one active member that owns the bond's MAC
    /// (`Primary Slave` and `Currently Active Slave` are shown for them).
    pub fn has_active_member(self) -> bool {
        matches!(
            self,
            BondMode::ActiveBackup | BondMode::BalanceTlb | BondMode::BalanceAlb
        )
    }

    /// The modes the ARP monitor may watch (Linux refuses it elsewhere).
    pub fn allows_arp_monitor(self) -> bool {
        matches!(
            self,
            BondMode::BalanceRr
                | BondMode::ActiveBackup
                | BondMode::BalanceXor
                | BondMode::Broadcast
        )
    }
}

/// LACPDUs every second (`fast`) or every 30 seconds (`slow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LacpRate {
    /// Every 30 s; the partner times out after 90 s.
    #[default]
    Slow,
    /// Every second; the partner times out after 3 s.
    Fast,
}

spelled!(LacpRate, "LACP rate (slow, fast)", {
    Slow = "slow",
    Fast = "fast",
});

/// Whether the bond sends LACPDUs unasked (`lacp_active`); written as
/// Linux's `LACP active:` line has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LacpActivity {
    /// Sends LACPDUs periodically.
    #[default]
    Active,
    /// Only answers a partner's LACPDUs.
    Passive,
}

spelled!(LacpActivity, "LACP activity (on, off)", {
    Active = "on",
    Passive = "off (passive)" | "off",
});

/// How the active aggregator is chosen (Linux `ad_select`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AdSelect {
    /// Kept until it has no port left.
    #[default]
    Stable,
    /// The aggregator with the most bandwidth.
    Bandwidth,
    /// The aggregator with the most ports.
    Count,
}

spelled!(AdSelect, "aggregator selection policy (stable, bandwidth, count)", {
    Stable = "stable",
    Bandwidth = "bandwidth",
    Count = "count",
});

/// A churn detection machine's state (802.1AX 6.4.17), in the words
/// `/proc/net/bonding` uses; [`ChurnState::standard_name`] gives the
/// standard's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChurnState {
    /// ACTOR_CHURN_MONITOR / PARTNER_CHURN_MONITOR: out of sync, timing.
    Monitoring,
    /// ACTOR_CHURN / PARTNER_CHURN: out of sync for the churn time.
    Churned,
    /// NO_ACTOR_CHURN / NO_PARTNER_CHURN: in sync.
    #[default]
    None,
}

spelled!(ChurnState, "churn state (monitoring, churned, none)", {
    Monitoring = "monitoring" | "ACTOR_CHURN_MONITOR" | "PARTNER_CHURN_MONITOR",
    Churned = "churned" | "ACTOR_CHURN" | "PARTNER_CHURN",
    None = "none" | "NO_ACTOR_CHURN" | "NO_PARTNER_CHURN",
});

impl ChurnState {
    /// The standard's name, for the actor's machine or the partner's.
    pub fn standard_name(self, partner: bool) -> &'static str {
        match (self, partner) {
            (ChurnState::Monitoring, false) => "ACTOR_CHURN_MONITOR",
            (ChurnState::None, false) => "NO_ACTOR_CHURN",
            (ChurnState::Churned, false) => "ACTOR_CHURN",
            (ChurnState::Monitoring, true) => "PARTNER_CHURN_MONITOR",
            (ChurnState::None, true) => "NO_PARTNER_CHURN",
            (ChurnState::Churned, true) => "PARTNER_CHURN",
        }
    }
}

/// A PAgP port's state, named as CISCO-PAGP-MIB names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PagpState {
    /// `portDown`.
    #[default]
    Down,
    /// `portUp`: up, nothing heard.
    Up,
    /// `upData`: in the channel without PAgP (silent mode).
    UpData,
    /// `pagpReceived`.
    PagpReceived,
    /// `biDirectional`: both ends hear each other, not yet in the channel.
    BiDirectional,
    /// `upPagp`: in the channel.
    UpPagp,
    /// `hotStandby`.
    HotStandby,
    /// `upMult`: more than one partner heard.
    UpMult,
}

spelled!(PagpState, "PAgP port state", {
    Down = "portDown",
    Up = "portUp",
    UpData = "upData",
    PagpReceived = "pagpReceived",
    BiDirectional = "biDirectional",
    UpPagp = "upPagp",
    HotStandby = "hotStandby",
    UpMult = "upMult",
});

impl PagpState {
    /// The port carries the channel's traffic.
    pub fn in_channel(self) -> bool {
        matches!(self, PagpState::UpPagp | PagpState::UpData)
    }
}

/// Which MAC moves on an active-backup failover (Linux `fail_over_mac`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailOverMac {
    /// The bond keeps its MAC, members theirs.
    #[default]
    None,
    /// The bond takes the active member's MAC.
    Active,
    /// The active member takes the bond's MAC.
    Follow,
}

spelled!(FailOverMac, "fail_over_mac (none, active, follow)", {
    None = "none",
    Active = "active",
    Follow = "follow",
});

/// When a recovered primary takes over again (Linux `primary_reselect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrimaryReselect {
    /// As soon as it is back.
    #[default]
    Always,
    /// When it is better than the active member.
    Better,
    /// Only when the active member fails.
    Failure,
}

spelled!(PrimaryReselect, "primary_reselect (always, better, failure)", {
    Always = "always",
    Better = "better",
    Failure = "failure",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips_and_old_spellings_still_read() {
        for m in BondMode::ALL {
            assert_eq!(m.as_str().parse::<BondMode>(), Ok(*m));
            assert_eq!(m.description().parse::<BondMode>(), Ok(*m));
            let json = serde_json::to_string(m).unwrap();
            assert_eq!(serde_json::from_str::<BondMode>(&json).unwrap(), *m);
        }
        for s in MiiStatus::ALL {
            assert_eq!(s.as_str().parse::<MiiStatus>(), Ok(*s));
        }
        assert_eq!(
            serde_json::to_string(&MiiStatus::GoingBack).unwrap(),
            "\"going back\""
        );
        // A status written before the churn states were typed still reads.
        assert_eq!(
            serde_json::from_str::<ChurnState>("\"NO_PARTNER_CHURN\"").unwrap(),
            ChurnState::None
        );
        assert_eq!(
            ChurnState::Monitoring.standard_name(true),
            "PARTNER_CHURN_MONITOR"
        );
        assert_eq!(LacpActivity::Passive.to_string(), "off (passive)");
        assert!("medium".parse::<LacpRate>().is_err());
        for p in PagpState::ALL {
            assert_eq!(p.as_str().parse::<PagpState>(), Ok(*p));
        }
        assert!(PagpState::UpData.in_channel() && !PagpState::HotStandby.in_channel());
    }
}
