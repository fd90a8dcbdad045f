//! The hashing modes: 802.3ad, balance-xor and adaptive (and the transmit
//! half of balance-tlb/alb, see [`super::tlb`]).
//!
//! A Linux-compatible policy indexes the usable members by `hash mod n`, in
//! ascending member order as Linux indexes its slave list. `strong` hashes
//! to one of 256 buckets and looks the bucket up in a table ([`Slots`]) that
//! follows membership: a member leaving gives only its own buckets away, so
//! the flows of the others never move.

use super::{carriers, indices, MemberView, Plan};
use lagkit_hash::{BucketMap, Explain, FlowKey, Policy};

/// A transmit hash over a set of members.
#[derive(Debug, Clone, PartialEq)]
pub enum HashTable {
    /// A Linux-compatible (or AIX, Cisco, HP) policy: `hash mod n` indexes
    /// `members`.
    Modulo {
        /// The policy.
        policy: Policy,
        /// Members, ascending.
        members: Vec<usize>,
    },
    /// `strong`: bucket -> slot in `map`, slot -> member in `owners`.
    Buckets {
        /// The policy (always `strong`).
        policy: Policy,
        /// Members, ascending.
        members: Vec<usize>,
        /// Bucket -> slot (boxed: 258 bytes).
        map: Box<BucketMap>,
        /// Slot -> member.
        owners: Vec<usize>,
    },
}

impl HashTable {
    /// The hash over `members` (ascending): bucketed for `strong`, with
    /// `slots` brought up to date, else modulo.
    pub fn new(policy: Policy, members: Vec<usize>, slots: &mut Slots) -> HashTable {
        if matches!(policy, Policy::Strong(_)) {
            slots.update(&members);
            if let Some((map, owners)) = slots.snapshot() {
                return HashTable::Buckets {
                    policy,
                    members,
                    map: Box::new(map),
                    owners,
                };
            }
        }
        HashTable::Modulo { policy, members }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        match self {
            HashTable::Modulo { policy, .. } | HashTable::Buckets { policy, .. } => policy,
        }
    }

    /// Members that transmit, ascending.
    pub fn members(&self) -> &[usize] {
        match self {
            HashTable::Modulo { members, .. } | HashTable::Buckets { members, .. } => members,
        }
    }

    /// The member a flow hashes to.
    #[inline]
    pub fn member_for(&self, key: &FlowKey) -> Option<usize> {
        match self {
            HashTable::Buckets {
                policy,
                map,
                owners,
                ..
            } => owners.get(policy.select_in(key, map)?).copied(),
            HashTable::Modulo { policy, members } => {
                members.get(policy.select(key, members.len())?).copied()
            }
        }
    }

    /// The policy's account of a flow (its `member` is the index among
    /// the policy's choices, not the bond's member number).
    pub fn explain(&self, key: &FlowKey) -> Explain {
        match self {
            HashTable::Buckets { policy, map, .. } => policy.explain_in(key, map),
            HashTable::Modulo { policy, members } => policy.explain(key, members.len()),
        }
    }

    /// `strong`: bucket -> member for all 256 buckets, the table a kernel
    /// engine loads; `None` for modulo policies.
    pub fn bucket_members(&self) -> Option<[Option<usize>; 256]> {
        match self {
            HashTable::Buckets { map, owners, .. } => Some(std::array::from_fn(|b| {
                owners.get(map.member(b as u8)?).copied()
            })),
            HashTable::Modulo { .. } => None,
        }
    }
}

/// 802.3ad: distributing ports transmit, collecting ports receive.
pub fn lacp(view: &[MemberView], policy: Policy, slots: &mut Slots) -> Plan {
    Plan::Hash {
        hash: HashTable::new(policy, indices(view, |m| m.distributing), slots),
        collecting: indices(view, |m| m.collecting),
    }
}

/// balance-xor: every usable member (or the backup adapter) transmits and
/// receives.
pub fn xor(view: &[MemberView], policy: Policy, slots: &mut Slots) -> Plan {
    let members = carriers(view);
    Plan::Hash {
        collecting: members.clone(),
        hash: HashTable::new(policy, members, slots),
    }
}

/// adaptive: as balance-xor, with buckets the rebalancer moves
/// (`lagkit_bond::rebalance`).
pub fn adaptive(view: &[MemberView], policy: Policy, slots: &mut Slots) -> Plan {
    Plan::Adaptive {
        hash: HashTable::new(policy, carriers(view), slots),
    }
}

/// Keeps the bucket table of `strong` hashing in step with the usable set:
/// a member leaving gives its buckets to the others, a member joining takes
/// its share, everything else stays where it is.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    map: Option<BucketMap>,
    owners: Vec<usize>,
}

impl Slots {
    /// Makes the table serve exactly `usable` (member indices).
    pub fn update(&mut self, usable: &[usize]) {
        // Remove members that left (highest slot first keeps indices valid).
        let mut gone: Vec<usize> = (0..self.owners.len())
            .filter(|&s| !usable.contains(&self.owners[s]))
            .collect();
        gone.sort_unstable_by(|a, b| b.cmp(a));
        for s in gone {
            if let Some(m) = self.map.as_mut() {
                let _ = m.remove_member(s);
            }
            self.owners.remove(s);
        }
        for &m in usable {
            if self.owners.contains(&m) {
                continue;
            }
            match self.map.as_mut() {
                Some(map) if map.members() > 0 => {
                    if map.add_member().is_ok() {
                        self.owners.push(m);
                    }
                }
                _ => {
                    self.map = BucketMap::new(1).ok();
                    self.owners = vec![m];
                }
            }
        }
        if self.owners.is_empty() {
            self.map = None;
        }
    }

    /// The table and its slot owners, if any member is usable.
    pub fn snapshot(&self) -> Option<(BucketMap, Vec<usize>)> {
        self.map.clone().map(|m| (m, self.owners.clone()))
    }

    /// Replaces the table (adaptive rebalancing edits it).
    pub fn set_map(&mut self, map: BucketMap) {
        if map.members() == self.owners.len() {
            self.map = Some(map);
        }
    }

    /// The current table.
    pub fn map(&self) -> Option<&BucketMap> {
        self.map.as_ref()
    }

    /// Slot -> member.
    pub fn owners(&self) -> &[usize] {
        &self.owners
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{flows, view};
    use super::*;
    use lagkit_hash::Strong;

    fn strong() -> Policy {
        Policy::Strong(Strong::new(7))
    }

    #[test]
    fn strong_failure_moves_only_the_failed_members_flows() {
        let mut slots = Slots::default();
        let before: Vec<_> = {
            let p = xor(&view(4, &[0, 1, 2, 3]), strong(), &mut slots);
            flows(400).iter().map(|k| p.member_for(k)).collect()
        };
        let p = xor(&view(4, &[0, 1, 3]), strong(), &mut slots);
        for (k, b) in flows(400).iter().zip(&before) {
            let now = p.member_for(k);
            if *b != Some(2) {
                assert_eq!(now, *b, "a flow not on member 2 moved");
            } else {
                assert_ne!(now, Some(2));
            }
        }
        // Member 2 returns: it takes a share back.
        let back = xor(&view(4, &[0, 1, 2, 3]), strong(), &mut slots);
        let on2 = flows(400)
            .iter()
            .filter(|k| back.member_for(k) == Some(2))
            .count();
        assert!(on2 > 50, "member 2 carries {on2} of 400 flows again");
    }

    #[test]
    fn compat_policy_indexes_the_sorted_usable_list() {
        let policy: Policy = "layer3+4".parse().unwrap();
        let p = xor(&view(4, &[1, 3]), policy, &mut Slots::default());
        assert!(matches!(p.hash(), Some(HashTable::Modulo { .. })));
        for k in flows(50) {
            let i = policy.select(&k, 2).unwrap();
            assert_eq!(p.member_for(&k), Some([1, 3][i]));
        }
        assert!(p.collects(3) && !p.collects(2) && !p.collects(5));
    }

    #[test]
    fn lacp_transmits_on_distributing_and_receives_on_collecting_ports() {
        let mut v = view(3, &[0, 1, 2]);
        // Independent control: port 1 collects before it distributes.
        v[0].distributing = true;
        v[0].collecting = true;
        v[1].collecting = true;
        let p = lacp(&v, strong(), &mut Slots::default());
        assert_eq!(p.transmitting(), [0]);
        assert!(p.collects(0) && p.collects(1) && !p.collects(2));
        for k in flows(20) {
            assert_eq!(p.member_for(&k), Some(0));
        }
    }

    #[test]
    fn lacp_below_min_links_or_beyond_max_bundle_is_what_the_mux_says() {
        // The LACP core keeps ports out of distribution for min_links and
        // max_bundle; the plan follows the mux and nothing else, even for
        // a member whose watchers say up.
        let mut v = view(3, &[0, 1, 2]);
        let p = lacp(&v, strong(), &mut Slots::default());
        assert!(p.transmitting().is_empty());
        assert_eq!(p.member_for(&flows(1)[0]), None);
        v[2].distributing = true;
        v[2].collecting = true;
        v[0].distributing = true;
        v[0].usable = false;
        let p = lacp(&v, strong(), &mut Slots::default());
        assert_eq!(p.transmitting(), [0, 2]);
    }

    /// The member views of bond A after 10 s of LACP with a peer over
    /// `links` links, A configured by `lacp` as the daemon configures it.
    fn negotiated(lacp: &crate::settings::LacpSettings, links: usize) -> Vec<MemberView> {
        use lagkit_sim::{mac, LinkSpec, Sim};
        let peer = crate::settings::LacpSettings {
            fast: true,
            ..Default::default()
        };
        let (a, b) = (lacp.clone(), peer.clone());
        let mut sim = Sim::pair(
            lacp.system_config("A", mac(1, 0)),
            peer.system_config("B", mac(2, 0)),
            links,
            LinkSpec::default(),
            move |n| a.port_config(&format!("a{n}"), n, mac(1, n)),
            move |n| b.port_config(&format!("b{n}"), n, mac(2, n)),
            1,
        );
        sim.run_for(std::time::Duration::from_secs(10));
        let sys = sim.system(0);
        sys.port_ids()
            .into_iter()
            .map(|p| {
                let st = sys.port_status(p).expect("port");
                MemberView {
                    usable: true,
                    distributing: st.distributing,
                    collecting: st.collecting,
                    ..MemberView::default()
                }
            })
            .collect()
    }

    #[test]
    fn lacp_max_bundle_and_min_links_outcomes() {
        let mut l = crate::settings::LacpSettings {
            fast: true,
            ..Default::default()
        };
        let all = lacp(&negotiated(&l, 4), strong(), &mut Slots::default());
        assert_eq!(all.transmitting(), [0, 1, 2, 3]);
        l.max_bundle = Some(2);
        let two = lacp(&negotiated(&l, 4), strong(), &mut Slots::default());
        assert_eq!(two.transmitting().len(), 2, "{two:?}");
        for k in flows(100) {
            assert!(two.transmitting().contains(&two.member_for(&k).unwrap()));
        }
        l.max_bundle = None;
        l.min_links = 3;
        let below = lacp(&negotiated(&l, 2), strong(), &mut Slots::default());
        assert!(below.transmitting().is_empty(), "{below:?}");
        assert_eq!(below.member_for(&flows(1)[0]), None);
        let enough = lacp(&negotiated(&l, 3), strong(), &mut Slots::default());
        assert_eq!(enough.transmitting(), [0, 1, 2]);
    }

    #[test]
    fn bucket_table_for_a_kernel_engine_agrees_with_selection() {
        let mut slots = Slots::default();
        let p = adaptive(&view(3, &[0, 2]), strong(), &mut slots);
        let h = p.hash().unwrap();
        let table = h.bucket_members().expect("strong has buckets");
        for k in flows(100) {
            let b = strong().bucket(&k).unwrap();
            assert_eq!(table[usize::from(b)], h.member_for(&k));
        }
        assert!(table.iter().all(|m| matches!(m, Some(0 | 2))));
        let none = adaptive(&view(3, &[]), strong(), &mut slots);
        assert!(none.hash().unwrap().bucket_members().is_none());
        assert!(none.transmitting().is_empty());
    }
}
