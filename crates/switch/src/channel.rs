//! A port-channel: its member ports and Cisco's result-bundle-hash
//! buckets.
//!
//! A Catalyst hashes each frame with the switch's `port-channel
//! load-balance` method into one of 8 buckets and sends it on the member
//! that owns the bucket. With 3, 5, 6 or 7 members the 8 buckets cannot be
//! shared evenly (3 links: 3/3/2). When a member joins or leaves,
//! `port-channel hash-distribution fixed` deals every bucket out again
//! (bucket mod n over the members in port order), which moves flows that
//! were on members still up; `adaptive` moves only the buckets of the
//! member that changed.

use crate::PortId;
use lagkit_hash::{FlowKey, Policy, CISCO_BUCKETS};

/// How buckets move when a member joins or leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Every bucket dealt out again (bucket mod n); the default.
    #[default]
    Fixed,
    /// Only the changed member's buckets move.
    Adaptive,
}

/// One port-channel.
#[derive(Clone, Debug)]
pub struct Channel {
    /// Member ports, in port order.
    members: Vec<PortId>,
    /// Which members carry traffic (bundled), parallel to `members`.
    bundled: Vec<bool>,
    /// Bucket -> member index, `None` when no member is bundled.
    buckets: [Option<usize>; CISCO_BUCKETS],
    distribution: Distribution,
}

impl Channel {
    /// A channel of `members` (in port order), none of them bundled yet.
    pub fn new(mut members: Vec<PortId>, distribution: Distribution) -> Channel {
        members.sort();
        members.dedup();
        Channel {
            bundled: vec![false; members.len()],
            members,
            buckets: [None; CISCO_BUCKETS],
            distribution,
        }
    }

    /// A channel of ports `0..n`, every one bundled in port order: the
    /// buckets as a running switch deals them once all have joined (what
    /// `lagkit plan` predicts with).
    pub fn all_bundled(n: usize, distribution: Distribution) -> Channel {
        let mut c = Channel::new((0..n).map(PortId).collect(), distribution);
        for p in 0..n {
            c.set_bundled(PortId(p), true);
        }
        c
    }

    /// The member ports.
    pub fn members(&self) -> &[PortId] {
        &self.members
    }

    /// Whether `p` is a member.
    pub fn has(&self, p: PortId) -> bool {
        self.members.contains(&p)
    }

    /// The bundled members.
    pub fn bundled(&self) -> impl Iterator<Item = PortId> + '_ {
        self.members
            .iter()
            .zip(&self.bundled)
            .filter(|(_, b)| **b)
            .map(|(p, _)| *p)
    }

    /// Whether `p` is a bundled member.
    pub fn is_bundled(&self, p: PortId) -> bool {
        self.index(p).is_some_and(|i| self.bundled[i])
    }

    fn index(&self, p: PortId) -> Option<usize> {
        self.members.iter().position(|&m| m == p)
    }

    /// Bundles or unbundles member `p` (its protocol agreed, or it went
    /// down); returns the buckets that changed member.
    pub fn set_bundled(&mut self, p: PortId, up: bool) -> Vec<usize> {
        let Some(i) = self.index(p) else {
            return Vec::new();
        };
        if self.bundled[i] == up {
            return Vec::new();
        }
        self.bundled[i] = up;
        let before = self.buckets;
        let active: Vec<usize> = (0..self.members.len())
            .filter(|&j| self.bundled[j])
            .collect();
        match self.distribution {
            Distribution::Fixed => self.deal(&active),
            Distribution::Adaptive => {
                if active.is_empty() {
                    self.buckets = [None; CISCO_BUCKETS];
                } else if (up && active.len() == 1) || before.iter().all(Option::is_none) {
                    self.deal(&active);
                } else if up {
                    // Take buckets from the members with the most until
                    // the newcomer has its share.
                    let share = CISCO_BUCKETS / active.len();
                    for _ in 0..share {
                        let counts = self.counts();
                        let Some((from, _)) = counts
                            .iter()
                            .enumerate()
                            .filter(|&(j, _)| j != i)
                            .max_by_key(|&(j, c)| (*c, usize::MAX - j))
                        else {
                            break;
                        };
                        if counts[from] <= share {
                            break;
                        }
                        // Its highest bucket moves.
                        if let Some(b) = (0..CISCO_BUCKETS)
                            .rev()
                            .find(|&b| self.buckets[b] == Some(from))
                        {
                            self.buckets[b] = Some(i);
                        }
                    }
                } else {
                    // The leaver's buckets go, one by one, to the member
                    // with the fewest.
                    for b in 0..CISCO_BUCKETS {
                        if self.buckets[b] == Some(i) {
                            let counts = self.counts();
                            let to = active
                                .iter()
                                .copied()
                                .min_by_key(|&j| (counts[j], j))
                                .unwrap_or(i);
                            self.buckets[b] = Some(to);
                        }
                    }
                }
            }
        }
        (0..CISCO_BUCKETS)
            .filter(|&b| before[b] != self.buckets[b])
            .collect()
    }

    fn deal(&mut self, active: &[usize]) {
        for (b, slot) in self.buckets.iter_mut().enumerate() {
            *slot = (!active.is_empty()).then(|| active[b % active.len()]);
        }
    }

    fn counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.members.len()];
        for m in self.buckets.iter().flatten() {
            c[*m] += 1;
        }
        c
    }

    /// Bucket -> member port.
    pub fn buckets(&self) -> [Option<PortId>; CISCO_BUCKETS] {
        self.buckets.map(|b| b.map(|i| self.members[i]))
    }

    /// The bucket `policy` gives `key` (a policy without buckets of its own
    /// is taken mod 8).
    pub fn bucket_of(policy: &Policy, key: &FlowKey) -> usize {
        policy
            .bucket(key)
            .map(usize::from)
            .or_else(|| policy.select(key, CISCO_BUCKETS))
            .unwrap_or(0)
            % CISCO_BUCKETS
    }

    /// The member a frame with `key` leaves on, under `policy`.
    pub fn member_for(&self, policy: &Policy, key: &FlowKey) -> Option<PortId> {
        self.buckets[Self::bucket_of(policy, key)].map(|i| self.members[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(c: &Channel) -> Vec<usize> {
        let mut v = vec![0; c.members().len()];
        for p in c.buckets().iter().flatten() {
            v[c.members().iter().position(|m| m == p).unwrap()] += 1;
        }
        v
    }

    fn up(n: usize, d: Distribution) -> Channel {
        Channel::all_bundled(n, d)
    }

    #[test]
    fn eight_buckets_share_unevenly_over_three_five_six_and_seven() {
        assert_eq!(shares(&up(2, Distribution::Fixed)), [4, 4]);
        assert_eq!(shares(&up(3, Distribution::Fixed)), [3, 3, 2]);
        assert_eq!(shares(&up(4, Distribution::Fixed)), [2, 2, 2, 2]);
        assert_eq!(shares(&up(5, Distribution::Fixed)), [2, 2, 2, 1, 1]);
        assert_eq!(shares(&up(6, Distribution::Fixed)), [2, 2, 1, 1, 1, 1]);
        assert_eq!(shares(&up(7, Distribution::Fixed)), [2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(shares(&up(8, Distribution::Fixed)), [1; 8]);
        let none = Channel::new(vec![PortId(0)], Distribution::Fixed);
        assert_eq!(none.buckets(), [None; 8]);
    }

    #[test]
    fn fixed_deals_everything_again_adaptive_moves_only_the_changed_members() {
        // 4 members, member 1 fails.
        let mut fixed = up(4, Distribution::Fixed);
        let moved = fixed.set_bundled(PortId(1), false);
        // bucket mod 3 over members 0, 2, 3: buckets of members still up
        // move too.
        assert_eq!(moved.len(), 7, "{:?}", fixed.buckets());
        let mut adaptive = up(4, Distribution::Adaptive);
        let before = adaptive.buckets();
        let its: Vec<usize> = (0..8).filter(|&b| before[b] == Some(PortId(1))).collect();
        let moved = adaptive.set_bundled(PortId(1), false);
        assert_eq!(moved, its, "only member 1's buckets");
        for (b, was) in before.iter().enumerate() {
            if *was != Some(PortId(1)) {
                assert_eq!(adaptive.buckets()[b], *was);
            }
        }
        assert_eq!(shares(&adaptive), [3, 0, 3, 2]);
        // It comes back: it takes 2 buckets from the members with most.
        let moved = adaptive.set_bundled(PortId(1), true);
        assert_eq!(moved.len(), 2);
        assert_eq!(shares(&adaptive), [2, 2, 2, 2]);
        // Unchanged state changes nothing; an unknown port neither.
        assert!(adaptive.set_bundled(PortId(1), true).is_empty());
        assert!(adaptive.set_bundled(PortId(9), false).is_empty());
    }

    #[test]
    fn cisco_methods_pick_their_bucket() {
        let c = up(2, Distribution::Fixed);
        let policy: Policy = "cisco:src-dst-mac".parse().unwrap();
        // (srcmac[5] ^ dstmac[5]) & 7 = (1 ^ 2) = 3 -> bucket 3 -> member 1.
        let k = FlowKey::l2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0800);
        assert_eq!(Channel::bucket_of(&policy, &k), 3);
        assert_eq!(c.member_for(&policy, &k), Some(PortId(1)));
    }
}
