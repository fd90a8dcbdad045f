//! The 256-bucket indirection table between a hash and a member.
//!
//! Hashing straight to `hash mod n` moves almost every flow when `n` changes
//! (a member fails or returns): with 4 links, removing one re-deals 3/4 of
//! all flows, and every moved TCP flow risks reordering. Hashing to one of 256
//! buckets and looking the bucket up in a table lets membership changes touch
//! only what must move: a removed member's buckets are dealt to the others,
//! an added member takes its share from the others, and everything else stays
//! put. The table is also what adaptive rebalancing edits ([`crate::adaptive`]).
//! At 258 bytes it is cheap to clone, so the data plane can build a new one
//! and publish it atomically.

use core::fmt;

/// Number of buckets in a [`BucketMap`].
pub const BUCKETS: usize = 256;

/// Largest member count a [`BucketMap`] holds (one bucket each at most).
pub const MAX_MEMBERS: usize = BUCKETS;

/// Why a [`BucketMap`] operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketMapError {
    /// More members than buckets were asked for.
    TooManyMembers {
        /// The member count asked for.
        requested: usize,
    },
    /// The member index does not exist.
    NoSuchMember {
        /// The index given.
        member: usize,
        /// How many members the map has.
        members: usize,
    },
}

impl fmt::Display for BucketMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketMapError::TooManyMembers { requested } => write!(
                f,
                "{requested} members requested but a bucket map holds at most {MAX_MEMBERS}"
            ),
            BucketMapError::NoSuchMember { member, members } => write!(
                f,
                "member {member} does not exist (the map has {members} members)"
            ),
        }
    }
}

impl std::error::Error for BucketMapError {}

/// Maps each of 256 buckets to a member index (0-based, among usable members).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BucketMap {
    slots: [u8; BUCKETS],
    members: u16,
}

impl BucketMap {
    /// A map over `members` members with bucket `b` on member `b mod members`
    /// (an empty map when `members` is 0).
    pub fn new(members: usize) -> Result<BucketMap, BucketMapError> {
        if members > MAX_MEMBERS {
            return Err(BucketMapError::TooManyMembers { requested: members });
        }
        let mut slots = [0u8; BUCKETS];
        if members > 0 {
            for (b, slot) in slots.iter_mut().enumerate() {
                *slot = (b % members) as u8;
            }
        }
        Ok(BucketMap {
            slots,
            members: members as u16,
        })
    }

    /// The map a bond holds when members `0..members` became usable one
    /// after the other: [`BucketMap::new`]`(1)`, then [`BucketMap::add_member`]
    /// for each further member. This, not `bucket mod n`, is where a running
    /// lagkit bond's `strong` buckets are, so the planner predicts with it.
    pub fn grown(members: usize) -> Result<BucketMap, BucketMapError> {
        let mut m = BucketMap::new(members.min(1))?;
        for _ in 1..members {
            m.add_member()?;
        }
        Ok(m)
    }

    /// Builds a map from an explicit table; every entry must be below `members`.
    pub fn from_slots(slots: [u8; BUCKETS], members: usize) -> Result<BucketMap, BucketMapError> {
        if members > MAX_MEMBERS {
            return Err(BucketMapError::TooManyMembers { requested: members });
        }
        if let Some(&bad) = slots.iter().find(|&&m| usize::from(m) >= members) {
            return Err(BucketMapError::NoSuchMember {
                member: usize::from(bad),
                members,
            });
        }
        Ok(BucketMap {
            slots,
            members: members as u16,
        })
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        usize::from(self.members)
    }

    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.members == 0
    }

    /// The member that carries `bucket`, or `None` when there are no members.
    #[inline]
    pub fn member(&self, bucket: u8) -> Option<usize> {
        if self.members == 0 {
            None
        } else {
            Some(usize::from(self.slots[usize::from(bucket)]))
        }
    }

    /// The raw table (meaningless when there are no members).
    pub fn slots(&self) -> &[u8; BUCKETS] {
        &self.slots
    }

    /// How many buckets `member` carries.
    pub fn count(&self, member: usize) -> usize {
        if member >= self.members() {
            return 0;
        }
        self.slots
            .iter()
            .filter(|&&m| usize::from(m) == member)
            .count()
    }

    /// Buckets per member.
    pub fn counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.members()];
        if !c.is_empty() {
            for &m in &self.slots {
                c[usize::from(m)] += 1;
            }
        }
        c
    }

    /// The buckets `member` carries, in increasing order.
    pub fn buckets_of(&self, member: usize) -> impl Iterator<Item = u8> + '_ {
        let active = member < self.members();
        (0..=u8::MAX).filter(move |&b| active && usize::from(self.slots[usize::from(b)]) == member)
    }

    /// Moves `bucket` to `member`; returns whether anything changed.
    pub fn assign(&mut self, bucket: u8, member: usize) -> Result<bool, BucketMapError> {
        self.check(member)?;
        let slot = &mut self.slots[usize::from(bucket)];
        let changed = usize::from(*slot) != member;
        *slot = member as u8;
        Ok(changed)
    }

    /// Removes `member`. Its buckets are dealt one at a time to whichever
    /// remaining member has the fewest (lowest index on ties), so they spread
    /// evenly; no other bucket moves. Members above `member` shift down by one,
    /// matching a usable-member list with that member taken out.
    pub fn remove_member(&mut self, member: usize) -> Result<(), BucketMapError> {
        self.check(member)?;
        let n = self.members();
        if n == 1 {
            self.slots = [0; BUCKETS];
            self.members = 0;
            return Ok(());
        }
        let mut counts = self.counts();
        counts[member] = usize::MAX;
        for b in 0..BUCKETS {
            if usize::from(self.slots[b]) != member {
                continue;
            }
            let to = argmin(&counts);
            counts[to] += 1;
            self.slots[b] = to as u8;
        }
        for slot in self.slots.iter_mut() {
            if usize::from(*slot) > member {
                *slot -= 1;
            }
        }
        self.members -= 1;
        Ok(())
    }

    /// Adds a member at the next index and returns that index. It takes
    /// `256 / (n + 1)` buckets, one at a time from whichever member has the
    /// most (lowest index on ties, that member's highest bucket), so each
    /// existing member gives up about `1/(n + 1)` of its buckets.
    pub fn add_member(&mut self) -> Result<usize, BucketMapError> {
        let n = self.members();
        if n >= MAX_MEMBERS {
            return Err(BucketMapError::TooManyMembers { requested: n + 1 });
        }
        self.members += 1;
        if n == 0 {
            self.slots = [0; BUCKETS];
            return Ok(0);
        }
        let mut counts = self.counts();
        for _ in 0..BUCKETS / (n + 1) {
            let from = argmax(&counts[..n]);
            let Some(b) = (0..BUCKETS)
                .rev()
                .find(|&b| usize::from(self.slots[b]) == from)
            else {
                break;
            };
            self.slots[b] = n as u8;
            counts[from] -= 1;
            counts[n] += 1;
        }
        Ok(n)
    }

    fn check(&self, member: usize) -> Result<(), BucketMapError> {
        if member < self.members() {
            Ok(())
        } else {
            Err(BucketMapError::NoSuchMember {
                member,
                members: self.members(),
            })
        }
    }
}

impl fmt::Debug for BucketMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketMap")
            .field("members", &self.members)
            .field("buckets_per_member", &self.counts())
            .finish()
    }
}

fn argmin(v: &[usize]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x < v[best] {
            best = i;
        }
    }
    best
}

fn argmax(v: &[usize]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_spreads_round_robin() {
        let m = BucketMap::new(3).unwrap();
        assert_eq!(m.counts(), [86, 85, 85]);
        assert_eq!(m.member(0), Some(0));
        assert_eq!(m.member(4), Some(1));
        assert_eq!(BucketMap::new(0).unwrap().member(7), None);
        assert!(BucketMap::new(257).is_err());
    }

    #[test]
    fn remove_moves_only_the_removed_members_buckets_evenly() {
        for n in 2..=8 {
            for victim in 0..n {
                let before = BucketMap::new(n).unwrap();
                let mut after = before.clone();
                after.remove_member(victim).unwrap();
                assert_eq!(after.members(), n - 1);
                for b in 0..=255u8 {
                    let old = before.member(b).unwrap();
                    let new = after.member(b).unwrap();
                    if old != victim {
                        // Unmoved, renumbered past the victim.
                        let expect = if old > victim { old - 1 } else { old };
                        assert_eq!(new, expect, "n={n} victim={victim} bucket={b}");
                    }
                }
                let c = after.counts();
                assert!(
                    c.iter().max().unwrap() - c.iter().min().unwrap() <= 1,
                    "{c:?}"
                );
            }
        }
    }

    #[test]
    fn add_takes_a_fair_share_from_the_others() {
        let mut m = BucketMap::new(3).unwrap();
        let before = m.clone();
        assert_eq!(m.add_member().unwrap(), 3);
        assert_eq!(m.counts(), [64, 64, 64, 64]);
        let moved = (0..=255u8)
            .filter(|&b| before.member(b) != m.member(b))
            .count();
        assert_eq!(moved, 64);
        // Every moved bucket went to the new member.
        assert!((0..=255u8)
            .filter(|&b| before.member(b) != m.member(b))
            .all(|b| m.member(b) == Some(3)));
    }

    #[test]
    fn grow_from_empty_and_shrink_to_empty() {
        let mut m = BucketMap::new(0).unwrap();
        assert_eq!(m.add_member().unwrap(), 0);
        assert_eq!(m.counts(), [256]);
        assert_eq!(m.add_member().unwrap(), 1);
        assert_eq!(m.counts(), [128, 128]);
        m.remove_member(0).unwrap();
        m.remove_member(0).unwrap();
        assert!(m.is_empty());
        assert!(m.remove_member(0).is_err());
    }

    #[test]
    fn assign_and_from_slots_check_members() {
        let mut m = BucketMap::new(2).unwrap();
        assert_eq!(m.assign(0, 1), Ok(true));
        assert_eq!(m.assign(0, 1), Ok(false));
        assert!(m.assign(0, 2).is_err());
        assert!(BucketMap::from_slots([2; BUCKETS], 2).is_err());
        assert_eq!(
            BucketMap::from_slots([1; BUCKETS], 2).unwrap().counts(),
            [0, 256]
        );
    }

    #[test]
    fn grown_is_new_then_add_member() {
        assert!(BucketMap::grown(0).unwrap().is_empty());
        assert_eq!(BucketMap::grown(1).unwrap(), BucketMap::new(1).unwrap());
        let g = BucketMap::grown(2).unwrap();
        assert_ne!(
            g,
            BucketMap::new(2).unwrap(),
            "the second member takes the top half, not every other bucket"
        );
        assert_eq!(g.counts(), vec![128, 128]);
        assert_eq!(g.member(214), Some(1));
        assert!(BucketMap::grown(MAX_MEMBERS + 1).is_err());
    }
}
