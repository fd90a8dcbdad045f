//! The MAC address table: which port or channel each (VLAN, MAC) was last
//! seen on, learned from source addresses and forgotten after the aging
//! time (Cisco's default: 300 s).

use crate::vlan::VlanId;
use crate::Logical;
use std::collections::HashMap;

/// Cisco's `mac address-table aging-time` default, in nanoseconds.
pub const DEFAULT_AGING_NS: u64 = 300_000_000_000;

/// What learning a source address did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learned {
    /// A new entry.
    New,
    /// The entry was there, on the same port; its age starts again.
    Refreshed,
    /// The address moved here from another port or channel.
    Moved {
        /// Where it was.
        from: Logical,
    },
    /// The table is full; the address was not learned (its frames flood).
    Full,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Logical,
    seen: u64,
}

/// One row of `show mac address-table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    /// VLAN.
    pub vlan: VlanId,
    /// The address.
    pub mac: [u8; 6],
    /// Where it is.
    pub at: Logical,
    /// Nanoseconds since it was last seen.
    pub age_ns: u64,
}

/// The table.
#[derive(Clone, Debug)]
pub struct Fdb {
    entries: HashMap<(VlanId, [u8; 6]), Entry>,
    aging_ns: u64,
    limit: usize,
    moves: u64,
    /// Addresses not learned because the table was full.
    refused: u64,
    /// No entry was seen before this (a lower bound: refreshing and
    /// removing entries only raise the true oldest). A full table is
    /// scanned for expired entries only once one can have expired, so a
    /// flood of new source addresses against a full table costs a hash
    /// look-up per frame, not a walk over every entry.
    oldest: Option<u64>,
}

impl Fdb {
    /// An empty table forgetting entries after `aging_ns` and holding at
    /// most `limit` of them.
    pub fn new(aging_ns: u64, limit: usize) -> Fdb {
        Fdb {
            entries: HashMap::new(),
            aging_ns,
            limit,
            moves: 0,
            refused: 0,
            oldest: None,
        }
    }

    /// Learns that `mac` (a unicast source) in `vlan` was seen on `at` at
    /// `now` (nanoseconds on the caller's monotonic clock).
    pub fn learn(&mut self, vlan: VlanId, mac: [u8; 6], at: Logical, now: u64) -> Learned {
        if let Some(e) = self.entries.get_mut(&(vlan, mac)) {
            let expired = now.saturating_sub(e.seen) > self.aging_ns;
            let from = e.at;
            e.seen = now;
            e.at = at;
            return match (from == at, expired) {
                (true, _) => Learned::Refreshed,
                // Gone and back elsewhere: a new entry, not a move.
                (false, true) => Learned::New,
                (false, false) => {
                    self.moves += 1;
                    Learned::Moved { from }
                }
            };
        }
        if self.entries.len() >= self.limit {
            // Make room from expired entries before refusing, when one can
            // have expired.
            let due = self
                .oldest
                .is_some_and(|o| now.saturating_sub(o) > self.aging_ns);
            if due {
                self.age(now);
            }
            if self.entries.len() >= self.limit {
                self.refused += 1;
                return Learned::Full;
            }
        }
        self.entries.insert((vlan, mac), Entry { at, seen: now });
        self.oldest = Some(self.oldest.map_or(now, |o| o.min(now)));
        Learned::New
    }

    /// Whether `mac` in `vlan` has an entry (live or not yet aged away):
    /// learning it again is no new address.
    pub fn knows(&self, vlan: VlanId, mac: [u8; 6]) -> bool {
        self.entries.contains_key(&(vlan, mac))
    }

    /// Where `mac` in `vlan` lives, unless unknown or aged out.
    pub fn lookup(&self, vlan: VlanId, mac: [u8; 6], now: u64) -> Option<Logical> {
        self.entries
            .get(&(vlan, mac))
            .filter(|e| now.saturating_sub(e.seen) <= self.aging_ns)
            .map(|e| e.at)
    }

    /// Removes entries older than the aging time; returns how many.
    pub fn age(&mut self, now: u64) -> usize {
        let before = self.entries.len();
        let aging = self.aging_ns;
        let mut oldest: Option<u64> = None;
        self.entries.retain(|_, e| {
            let keep = now.saturating_sub(e.seen) <= aging;
            if keep {
                oldest = Some(oldest.map_or(e.seen, |o| o.min(e.seen)));
            }
            keep
        });
        self.oldest = oldest;
        before - self.entries.len()
    }

    /// Forgets every address on `at` (a port went down, left its channel);
    /// returns how many.
    pub fn flush(&mut self, at: Logical) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| e.at != at);
        before - self.entries.len()
    }

    /// Entries held (aged ones included until the next aging pass).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How long an entry lives unseen.
    pub fn aging_ns(&self) -> u64 {
        self.aging_ns
    }

    /// Replaces every entry with `entries` ((VLAN, MAC, where, last seen
    /// at)), and the moves and refusals counted so far with `moves` and
    /// `refused`: the table another engine keeps (the kernel's, under the
    /// BPF engine), copied here for `show mac address-table` and the
    /// metrics. At most [`Fdb::limit`] entries are kept.
    pub fn mirror(
        &mut self,
        entries: impl IntoIterator<Item = (VlanId, [u8; 6], Logical, u64)>,
        moves: u64,
        refused: u64,
    ) {
        self.entries.clear();
        let mut oldest: Option<u64> = None;
        for (vlan, mac, at, seen) in entries.into_iter().take(self.limit) {
            oldest = Some(oldest.map_or(seen, |o| o.min(seen)));
            self.entries.insert((vlan, mac), Entry { at, seen });
        }
        self.oldest = oldest;
        self.moves = moves;
        self.refused = refused;
    }

    /// The most entries it holds.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Addresses not learned because the table was full, so far.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Addresses that moved between ports or channels so far.
    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// The live entries, sorted by VLAN and address.
    pub fn rows(&self, now: u64) -> Vec<Row> {
        let mut v: Vec<Row> = self
            .entries
            .iter()
            .filter(|(_, e)| now.saturating_sub(e.seen) <= self.aging_ns)
            .map(|(&(vlan, mac), e)| Row {
                vlan,
                mac,
                at: e.at,
                age_ns: now.saturating_sub(e.seen),
            })
            .collect();
        v.sort_by_key(|r| (r.vlan, r.mac));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChannelId, PortId};

    #[test]
    fn a_mirrored_table_replaces_the_entries_and_counts() {
        let mut f = Fdb::new(1_000, 2);
        f.learn(1, [2, 0, 0, 0, 0, 1], Logical::Port(PortId(0)), 0);
        let ch = Logical::Channel(ChannelId(4));
        let m = |i: u8| [2, 0, 0, 0, 0, i];
        f.mirror(
            [(10, m(7), ch, 500), (10, m(8), ch, 100), (1, m(9), ch, 0)],
            3,
            5,
        );
        assert_eq!(
            (f.len(), f.moves(), f.refused()),
            (2, 3, 5),
            "cut to the limit"
        );
        assert_eq!(f.lookup(1, m(1), 600), None, "the old entry is gone");
        assert_eq!(f.lookup(10, m(7), 1_400), Some(ch));
        assert_eq!(f.lookup(10, m(8), 1_400), None, "aged by its own time");
        assert_eq!(f.age(1_400), 1);
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn learns_refreshes_moves_and_ages() {
        let mut f = Fdb::new(300 * S, 10);
        let m = [2, 0, 0, 0, 0, 1];
        let p1 = Logical::Port(PortId(0));
        let po = Logical::Channel(ChannelId(3));
        assert_eq!(f.learn(1, m, p1, 0), Learned::New);
        assert_eq!(f.lookup(1, m, S), Some(p1));
        assert_eq!(f.lookup(2, m, S), None, "per VLAN");
        assert_eq!(f.learn(1, m, p1, 10 * S), Learned::Refreshed);
        assert_eq!(f.learn(1, m, po, 11 * S), Learned::Moved { from: p1 });
        assert_eq!(f.moves(), 1);
        assert_eq!(f.lookup(1, m, 311 * S), Some(po));
        assert_eq!(f.lookup(1, m, 312 * S), None, "aged out");
        // Seen again after aging out: new, not a move.
        assert_eq!(f.learn(1, m, p1, 400 * S), Learned::New);
        assert_eq!(f.rows(400 * S).len(), 1);
        assert_eq!(f.age(701 * S), 1);
        assert!(f.rows(701 * S).is_empty());
    }

    #[test]
    fn a_full_table_ages_first_then_refuses_and_flush_forgets_a_port() {
        let mut f = Fdb::new(10 * S, 2);
        let p = |i| Logical::Port(PortId(i));
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 1], p(0), 0), Learned::New);
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 2], p(1), 5 * S), Learned::New);
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 3], p(1), 6 * S), Learned::Full);
        assert_eq!((f.len(), f.limit(), f.refused()), (f.limit(), f.limit(), 1));
        // At 11 s the first has aged out and makes room.
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 3], p(1), 11 * S), Learned::New);
        assert_eq!(f.flush(p(1)), 2);
        assert!(f.rows(11 * S).is_empty());
    }

    #[test]
    fn a_full_table_refuses_without_scanning_until_an_entry_can_expire() {
        let mut f = Fdb::new(10 * S, 2);
        let p = Logical::Port(PortId(0));
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 1], p, S), Learned::New);
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 2], p, 2 * S), Learned::New);
        assert_eq!(f.oldest, Some(S));
        // Nothing can have expired before 11 s: refused, no scan.
        for k in 0..100u8 {
            assert_eq!(f.learn(1, [2, 1, 0, 0, 0, k], p, 5 * S), Learned::Full);
        }
        assert_eq!(f.oldest, Some(S));
        // The first refresh keeps the bound conservative, never wrong.
        assert_eq!(f.learn(1, [2, 0, 0, 0, 0, 1], p, 9 * S), Learned::Refreshed);
        // At 11.5 s the bound says one may have expired; the scan finds
        // none (the first was refreshed) and moves the bound on.
        assert_eq!(
            f.learn(1, [2, 1, 0, 0, 0, 0], p, 11 * S + S / 2),
            Learned::Full
        );
        assert_eq!(f.oldest, Some(2 * S));
        // The second expires after 12 s.
        assert_eq!(f.learn(1, [2, 1, 0, 0, 0, 0], p, 12 * S + 1), Learned::New);
    }
}
