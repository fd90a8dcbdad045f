//! The distribution plan: each bonding mode as a pure function from what is
//! known about the members (one [`MemberView`] each) and the settings to a
//! [`Plan`], an engine-neutral description of who transmits what and which
//! received frames go up.
//!
//! As teamd keeps one file per runner, each mode or family of modes has a
//! module of its own ([`hash`]: 802.3ad, balance-xor, adaptive;
//! [`roundrobin`]; [`activebackup`]; [`broadcast`]; [`tlb`]: balance-tlb and
//! balance-alb). None of them reads a clock or touches a device, so every
//! mode's rule is unit-tested without root. The state a mode keeps between
//! two plans (the active member, the strong bucket table) is passed in and
//! out explicitly as [`PlanState`].
//!
//! The control thread publishes a plan inside a `BondMap` (`lagkit_bond::map`);
//! the userspace engine selects from it, `lagkit flow` asks the same
//! [`Plan::member_for`], and a kernel engine can load the same plain data
//! (a policy, member indices, a 256-entry bucket table:
//! [`HashTable::bucket_members`]) into its own maps.

pub mod activebackup;
pub mod broadcast;
pub mod hash;
pub mod roundrobin;
pub mod tlb;

use crate::settings::{BondMode, Settings};
use lagkit_hash::{Explain, FlowKey, Policy};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

pub use hash::{HashTable, Slots};

/// What a plan needs to know about one member (by its index in the bond).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberView {
    /// Present, and every link watcher says up.
    pub usable: bool,
    /// AIX `backup_adapter`: carries traffic only when no other member can.
    pub backup: bool,
    /// The configured `primary` (active-backup, tlb, alb).
    pub primary: bool,
    /// 802.3ad: present, and its port's mux distributes through it.
    pub distributing: bool,
    /// 802.3ad: present, and its port's mux collects from it.
    pub collecting: bool,
    /// Its own MAC (balance-tlb/alb transmit with it).
    pub mac: [u8; 6],
}

/// Views of `n` members, the ones in `up` usable and nothing else known
/// of them: what models and tests plan with.
pub fn views(n: usize, up: &[usize]) -> Vec<MemberView> {
    (0..n)
        .map(|i| MemberView {
            usable: up.contains(&i),
            ..MemberView::default()
        })
        .collect()
}

/// balance-alb: client (peer IPv4 address) -> the member it sends to.
pub type Clients = BTreeMap<Ipv4Addr, usize>;

/// What a plan needs to know about the bond beyond its members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The bond's MAC.
    pub bond_mac: [u8; 6],
    /// balance-alb: the clients learned so far.
    pub clients: Clients,
}

/// balance-tlb/alb: the MACs the engine rewrites frames with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Macs {
    /// The bond's MAC (owned by the active member).
    pub bond: [u8; 6],
    /// Each member's own MAC, by member index.
    pub members: Vec<[u8; 6]>,
}

/// What a mode remembers from one plan to the next.
#[derive(Debug, Clone, Default)]
pub struct PlanState {
    /// active-backup, balance-tlb, balance-alb: the member that carries
    /// (and, in tlb/alb, receives) traffic.
    pub active: Option<usize>,
    /// `strong` hashing: the bucket table that follows the usable set.
    pub slots: Slots,
}

/// Who carries what: one variant per way of distributing, each carrying
/// exactly what its modes need. Member numbers are indices into the bond's
/// member list.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// 802.3ad and balance-xor: each flow hashed to one of `hash`'s members;
    /// frames received on `collecting` go up.
    Hash {
        /// The transmit hash.
        hash: HashTable,
        /// Members whose received frames go up (802.3ad: the collecting
        /// ports, which may differ from the distributing ones).
        collecting: Vec<usize>,
    },
    /// adaptive: `strong` buckets that the control thread moves by load;
    /// the engine counts bytes per bucket. Every hashed member collects.
    Adaptive {
        /// The transmit hash.
        hash: HashTable,
    },
    /// balance-rr: frames dealt to `members` in turn.
    RoundRobin {
        /// Members in turn, ascending.
        members: Vec<usize>,
        /// Frames on one member before the next (Linux `packets_per_slave`;
        /// 0 = a member at random).
        packets_per_member: u32,
    },
    /// active-backup: everything on one member, received only there.
    ActiveBackup {
        /// The active member, if any is usable.
        active: Option<usize>,
    },
    /// broadcast: every frame on every member; only the first copy of a
    /// received frame goes up.
    Broadcast {
        /// Members every frame goes to.
        members: Vec<usize>,
    },
    /// balance-tlb: hashed (and load-balanced) on every usable member, each
    /// with its own source MAC; broadcasts and multicasts use `active`, the
    /// one member that owns the bond MAC and receives them.
    Tlb {
        /// The transmit hash.
        hash: HashTable,
        /// The member that owns the bond MAC.
        active: Option<usize>,
        /// Source MACs: a frame leaving through another member than the
        /// active one carries that member's MAC.
        macs: Macs,
    },
    /// balance-alb: tlb, plus receive balancing: each client is told (by
    /// ARP) the MAC of the member it sends to, and frames arriving for a
    /// member's MAC go up as if sent to the bond's.
    Alb {
        /// The transmit hash.
        hash: HashTable,
        /// The member that owns the bond MAC.
        active: Option<usize>,
        /// Source MACs as in tlb; received frames for a member's MAC go up
        /// with the bond's.
        macs: Macs,
        /// Client -> member.
        clients: Arc<Clients>,
    },
}

/// The plan for the current member views: the mode's own rule.
pub fn plan(view: &[MemberView], s: &Settings, state: &mut PlanState, ctx: &Context) -> Plan {
    match s.mode {
        BondMode::Lacp => hash::lacp(view, s.policy, &mut state.slots),
        BondMode::BalanceXor => hash::xor(view, s.policy, &mut state.slots),
        BondMode::Adaptive => hash::adaptive(view, s.policy, &mut state.slots),
        BondMode::BalanceRr => roundrobin::plan(view, s.packets_per_slave),
        BondMode::ActiveBackup => {
            state.active =
                activebackup::choose(view, state.active, s.primary_reselect, s.auto_recovery);
            Plan::ActiveBackup {
                active: state.active,
            }
        }
        BondMode::Broadcast => broadcast::plan(view),
        BondMode::BalanceTlb => tlb::tlb(view, s, state, ctx.bond_mac),
        BondMode::BalanceAlb => tlb::alb(view, s, state, ctx),
    }
}

/// Usable members other than a backup adapter, ascending; the first usable
/// backup adapter when there are none (AIX `backup_adapter`). The members of
/// balance-xor, adaptive, balance-rr and broadcast.
pub fn carriers(view: &[MemberView]) -> Vec<usize> {
    let main: Vec<usize> = indices(view, |m| m.usable && !m.backup);
    if !main.is_empty() {
        return main;
    }
    view.iter()
        .position(|m| m.backup && m.usable)
        .into_iter()
        .collect()
}

/// Indices of the members that satisfy `f`, ascending.
pub fn indices(view: &[MemberView], f: impl Fn(&MemberView) -> bool) -> Vec<usize> {
    (0..view.len()).filter(|&i| f(&view[i])).collect()
}

impl Plan {
    /// Members that may transmit, ascending (where `Target::All` goes).
    pub fn transmitting(&self) -> &[usize] {
        match self {
            Plan::Hash { hash, .. }
            | Plan::Adaptive { hash }
            | Plan::Tlb { hash, .. }
            | Plan::Alb { hash, .. } => hash.members(),
            Plan::RoundRobin { members, .. } | Plan::Broadcast { members } => members,
            Plan::ActiveBackup { active } => active.as_slice(),
        }
    }

    /// Frames received on member `m` may go up.
    pub fn collects(&self, m: usize) -> bool {
        match self {
            Plan::Hash { collecting, .. } => collecting.contains(&m),
            Plan::ActiveBackup { active } => *active == Some(m),
            _ => self.transmitting().contains(&m),
        }
    }

    /// The active member (active-backup, tlb, alb).
    pub fn active(&self) -> Option<usize> {
        match self {
            Plan::ActiveBackup { active } | Plan::Tlb { active, .. } | Plan::Alb { active, .. } => {
                *active
            }
            _ => None,
        }
    }

    /// The transmit hash, for the modes that hash flows.
    pub fn hash(&self) -> Option<&HashTable> {
        match self {
            Plan::Hash { hash, .. }
            | Plan::Adaptive { hash }
            | Plan::Tlb { hash, .. }
            | Plan::Alb { hash, .. } => Some(hash),
            _ => None,
        }
    }

    /// The engine counts bytes per bucket for the rebalancer.
    pub fn counts_load(&self) -> bool {
        matches!(
            self,
            Plan::Adaptive { .. } | Plan::Tlb { .. } | Plan::Alb { .. }
        )
    }

    /// The member a unicast frame of flow `key` leaves through, when a flow
    /// has one member (hashing modes, active-backup); `None` for modes that
    /// spread single frames (round-robin, broadcast) or when nothing is usable.
    pub fn member_for(&self, key: &FlowKey) -> Option<usize> {
        match self.hash() {
            Some(h) => h.member_for(key),
            None => self.active(),
        }
    }

    /// Why flow `key` goes where it goes, for `lagkit flow`. `policy`
    /// supplies the hash shown for modes that do not hash.
    pub fn explain(&self, key: &FlowKey, policy: &Policy) -> (Option<usize>, Explain) {
        let member = self.member_for(key);
        let mut e = match self.hash() {
            Some(h) => h.explain(key),
            None => policy.explain(key, self.transmitting().len()),
        };
        match self {
            Plan::ActiveBackup { .. } => {
                e.reason = "active-backup: every flow uses the active member".into()
            }
            Plan::RoundRobin { .. } => {
                e.reason = "round-robin: every frame goes to the next member in turn".into()
            }
            Plan::Broadcast { .. } => {
                e.reason = "broadcast: every frame goes to every member".into()
            }
            _ => {}
        }
        (member, e)
    }

    /// What the logical interface shows the host under this plan, as the
    /// bonding driver's carrier (`bond_set_carrier`) and ethtool speed
    /// (`bond_ethtool_get_link_ksettings`) do: carrier while at least
    /// `max(min_links, 1)` members transmit (802.3ad's selection already
    /// keeps an aggregate shorter than `min_links` from distributing), and
    /// the speed of the members that transmit: their sum, broadcast's
    /// slowest (every frame crosses every member), active-backup's active.
    /// `link_of(i)`: member `i`'s speed in Mbit/s and full duplex, where its
    /// driver says.
    pub fn logical_link(
        &self,
        min_links: usize,
        link_of: impl Fn(usize) -> (Option<u32>, Option<bool>),
    ) -> LogicalLink {
        let tx = self.transmitting();
        let links: Vec<(Option<u32>, Option<bool>)> = tx.iter().map(|&i| link_of(i)).collect();
        let speeds = links.iter().filter_map(|l| l.0);
        let speed_mbps = match self {
            Plan::Broadcast { .. } => speeds.min(),
            _ => speeds.reduce(|a, b| a.saturating_add(b)),
        };
        let duplexes: Vec<bool> = links.iter().filter_map(|l| l.1).collect();
        let carrier = !tx.is_empty() && tx.len() >= min_links;
        LogicalLink {
            carrier,
            speed_mbps: speed_mbps.filter(|_| carrier),
            full_duplex: (carrier && !duplexes.is_empty()).then(|| duplexes.iter().all(|&f| f)),
        }
    }
}

/// The logical interface's link as the host sees it: what the shell sets
/// on the device (`NO-CARRIER`, operstate, `ethtool`'s speed) after each
/// plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogicalLink {
    /// Enough members carry traffic.
    pub carrier: bool,
    /// What they carry together, in Mbit/s; `None` without carrier or when
    /// no member's driver says.
    pub speed_mbps: Option<u32>,
    /// Every member that says is full duplex; `None` when none says.
    pub full_duplex: Option<bool>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_logical_link_follows_the_members_that_transmit() {
        let hash = |members: &[usize]| Plan::RoundRobin {
            members: members.to_vec(),
            packets_per_member: 1,
        };
        let gig = |_| (Some(1000), Some(true));
        // Every mode sums what transmits; none transmitting is no carrier.
        let l = hash(&[0, 1, 2]).logical_link(0, gig);
        assert_eq!(
            l,
            LogicalLink {
                carrier: true,
                speed_mbps: Some(3000),
                full_duplex: Some(true)
            }
        );
        assert_eq!(hash(&[]).logical_link(0, gig), LogicalLink::default());
        // min_links: fewer members than it is no carrier (0 and 1 alike).
        assert!(!hash(&[0]).logical_link(2, gig).carrier);
        assert!(hash(&[0, 2]).logical_link(2, gig).carrier);
        assert!(hash(&[0]).logical_link(1, gig).carrier);
        // active-backup: the active member's speed alone.
        let ab = Plan::ActiveBackup { active: Some(1) };
        let speeds = |i: usize| (Some([1000, 10_000, 100][i]), Some(i != 2));
        assert_eq!(ab.logical_link(0, speeds).speed_mbps, Some(10_000));
        assert!(
            !Plan::ActiveBackup { active: None }
                .logical_link(0, speeds)
                .carrier
        );
        // broadcast: the slowest, since every frame crosses every member.
        let b = Plan::Broadcast {
            members: vec![0, 1, 2],
        };
        let l = b.logical_link(0, speeds);
        assert_eq!((l.speed_mbps, l.full_duplex), (Some(100), Some(false)));
        // Unknown speeds are left out; none known is unknown.
        let some = |i: usize| ([Some(1000), None, Some(100)][i], None);
        let l = hash(&[0, 1, 2]).logical_link(0, some);
        assert_eq!(
            (l.carrier, l.speed_mbps, l.full_duplex),
            (true, Some(1100), None)
        );
        let none = hash(&[1]).logical_link(0, |_| (None, None));
        assert_eq!((none.carrier, none.speed_mbps), (true, None));
    }

    pub use super::views as view;

    pub fn flows(n: u16) -> Vec<FlowKey> {
        (0..n)
            .map(|i| {
                FlowKey::tcp4(
                    Ipv4Addr::new(10, 0, 0, 1),
                    40000 + i,
                    Ipv4Addr::new(10, 0, 0, 2),
                    5201,
                )
            })
            .collect()
    }

    #[test]
    fn every_mode_plans_its_own_variant() {
        let v = view(3, &[0, 2]);
        let modes = [
            (BondMode::Lacp, "Hash"),
            (BondMode::BalanceXor, "Hash"),
            (BondMode::Adaptive, "Adaptive"),
            (BondMode::BalanceRr, "RoundRobin"),
            (BondMode::ActiveBackup, "ActiveBackup"),
            (BondMode::Broadcast, "Broadcast"),
            (BondMode::BalanceTlb, "Tlb"),
            (BondMode::BalanceAlb, "Alb"),
        ];
        for (mode, variant) in modes {
            let s = Settings::new("b", &["a", "b", "c"], mode);
            let p = plan(&v, &s, &mut PlanState::default(), &Context::default());
            assert!(
                format!("{p:?}").starts_with(variant),
                "{mode:?} planned {p:?}"
            );
            let tx = p.transmitting();
            match mode {
                // No LACP port distributes in these views.
                BondMode::Lacp => assert!(tx.is_empty()),
                BondMode::ActiveBackup => assert_eq!(tx, [0]),
                _ => assert_eq!(tx, [0, 2], "{mode:?}"),
            }
            assert!(!p.collects(1), "{mode:?}: a member that is down collects");
        }
    }

    #[test]
    fn backup_adapter_carries_only_when_every_member_failed() {
        let mut v = view(3, &[0, 2]);
        v[2].backup = true;
        assert_eq!(carriers(&v), [0]);
        v[0].usable = false;
        assert_eq!(carriers(&v), [2]);
        v[2].usable = false;
        assert!(carriers(&v).is_empty());
    }

    #[test]
    fn flow_answers_come_from_the_plan() {
        let policy: Policy = "layer3+4".parse().unwrap();
        let k = flows(1)[0];
        let ab = Plan::ActiveBackup { active: Some(2) };
        let (m, e) = ab.explain(&k, &policy);
        assert_eq!(m, Some(2));
        assert!(e.reason.starts_with("active-backup"));
        let rr = Plan::RoundRobin {
            members: vec![0, 1],
            packets_per_member: 1,
        };
        assert_eq!(rr.explain(&k, &policy).0, None);
        let mut slots = Slots::default();
        let h = hash::xor(&view(2, &[0, 1]), policy, &mut slots);
        let (m, e) = h.explain(&k, &policy);
        assert_eq!(m, h.member_for(&k));
        assert!(e.reason.starts_with("layer3+4"), "{}", e.reason);
    }
}
