//! Adaptive rebalancing of `strong`'s buckets by measured load, without
//! reordering.
//!
//! A good hash spreads flows evenly, not bytes: a few elephants can still
//! share a link while another idles ("balls into bins"). Open vSwitch's answer
//! is to count bytes per bucket and periodically move buckets from the most to
//! the least loaded member. Moving a bucket while its flows are sending can
//! reorder TCP segments (the new link may be less queued than the old), so
//! lagkit adds the flowlet rule: a bucket moves only when its last packet is
//! older than a configured idle gap, longer than the difference in delay
//! between members. Packets after the gap cannot overtake packets before it.
//!
//! The balancer is sans-IO: it never reads a clock. The data plane passes a
//! monotonic nanosecond timestamp to [`AdaptiveBalancer::record`] and calls
//! [`AdaptiveBalancer::rebalance`] when [`AdaptiveBalancer::poll_timeout`]
//! says; a `true` result means the map changed and must be republished.

use crate::buckets::{BucketMap, BucketMapError, BUCKETS};

/// Tuning of an [`AdaptiveBalancer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveConfig {
    /// How often to rebalance, in nanoseconds (Open vSwitch's default: 10 s).
    pub interval_ns: u64,
    /// How long a bucket must have been silent before it may move, in
    /// nanoseconds. Must exceed the worst delay difference between members
    /// (mostly queueing); the default, 10 ms, covers a full 1 MB queue on a
    /// 1 Gb/s link.
    pub idle_gap_ns: u64,
    /// Do nothing unless the most and least loaded members differ by at least
    /// this many bytes (Open vSwitch: about 100 kB).
    pub min_gap_bytes: u64,
    /// Also do nothing unless that gap is at least this many thousandths of
    /// the most loaded member's bytes (Open vSwitch: about 3%).
    pub min_gap_permille: u64,
    /// Each move must shrink the gap by at least this percentage (Open vSwitch: 10%).
    pub min_shrink_percent: u64,
    /// After this many consecutive passes in which every useful move was
    /// refused because its bucket was busy, the best busy bucket moves
    /// anyway: a saturating TCP flow is never idle for the gap, and one brief
    /// reordering (which TCP absorbs) beats a lasting imbalance. 0 = never.
    pub busy_patience: u32,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            interval_ns: 10_000_000_000,
            idle_gap_ns: 10_000_000,
            min_gap_bytes: 100_000,
            min_gap_permille: 30,
            min_shrink_percent: 10,
            busy_patience: 3,
        }
    }
}

/// Counters of an [`AdaptiveBalancer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdaptiveStats {
    /// Rebalance passes run.
    pub passes: u64,
    /// Buckets moved, in total.
    pub moves: u64,
    /// Moves that were wanted but refused because the bucket was busy.
    pub busy_refusals: u64,
}

/// Byte counters per bucket over a [`BucketMap`], and the rebalancer.
#[derive(Clone, Debug)]
pub struct AdaptiveBalancer {
    map: BucketMap,
    config: AdaptiveConfig,
    bytes: [u64; BUCKETS],
    last_seen: [Option<u64>; BUCKETS],
    next_rebalance: u64,
    stats: AdaptiveStats,
    /// Consecutive passes blocked only by busy buckets.
    blocked_passes: u32,
}

impl AdaptiveBalancer {
    /// Starts balancing `map`; the first rebalance is due one interval after `now_ns`.
    pub fn new(map: BucketMap, config: AdaptiveConfig, now_ns: u64) -> AdaptiveBalancer {
        AdaptiveBalancer {
            map,
            config,
            bytes: [0; BUCKETS],
            last_seen: [None; BUCKETS],
            next_rebalance: now_ns.saturating_add(config.interval_ns),
            stats: AdaptiveStats::default(),
            blocked_passes: 0,
        }
    }

    /// The current map.
    pub fn map(&self) -> &BucketMap {
        &self.map
    }

    /// The configuration.
    pub fn config(&self) -> &AdaptiveConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> AdaptiveStats {
        self.stats
    }

    /// Decayed byte count of `bucket`.
    pub fn bucket_bytes(&self, bucket: u8) -> u64 {
        self.bytes[usize::from(bucket)]
    }

    /// Decayed bytes per member.
    pub fn member_loads(&self) -> Vec<u64> {
        let mut loads = vec![0u64; self.map.members()];
        self.add_loads(&mut loads);
        loads
    }

    fn add_loads(&self, loads: &mut [u64]) {
        for b in 0..=u8::MAX {
            if let Some(m) = self.map.member(b) {
                if let Some(l) = loads.get_mut(m) {
                    *l = l.saturating_add(self.bytes[usize::from(b)]);
                }
            }
        }
    }

    /// Counts a packet of `bytes` in `bucket` at `now_ns`. Per-packet path:
    /// two array writes, no allocation.
    #[inline]
    pub fn record(&mut self, bucket: u8, bytes: u64, now_ns: u64) {
        let b = usize::from(bucket);
        self.bytes[b] = self.bytes[b].saturating_add(bytes);
        self.last_seen[b] = Some(now_ns);
    }

    /// When the next rebalance is due.
    pub fn poll_timeout(&self) -> u64 {
        self.next_rebalance
    }

    /// Whether `bucket` has been silent for at least the idle gap.
    pub fn is_idle(&self, bucket: u8, now_ns: u64) -> bool {
        match self.last_seen[usize::from(bucket)] {
            None => true,
            Some(t) => now_ns.saturating_sub(t) >= self.config.idle_gap_ns,
        }
    }

    /// Removes a member (see [`BucketMap::remove_member`]); counters stay with their buckets.
    pub fn remove_member(&mut self, member: usize) -> Result<(), BucketMapError> {
        self.map.remove_member(member)
    }

    /// Adds a member (see [`BucketMap::add_member`]).
    pub fn add_member(&mut self) -> Result<usize, BucketMapError> {
        self.map.add_member()
    }

    /// Moves buckets from the most to the least loaded member, then halves
    /// every counter; returns whether the map changed.
    ///
    /// Greedy, as Open vSwitch's `bond_rebalance`: while the gap between the
    /// most and least loaded members is meaningful (at least `min_gap_bytes`
    /// and `min_gap_permille` of the larger), move the one idle bucket of the
    /// most loaded member that leaves the smallest gap, provided it shrinks
    /// the gap by `min_shrink_percent`; never drain a member carrying a single
    /// loaded bucket. Stops when no move qualifies.
    pub fn rebalance(&mut self, now_ns: u64) -> bool {
        self.next_rebalance = now_ns.saturating_add(self.config.interval_ns);
        self.stats.passes += 1;
        let n = self.map.members();
        let mut changed = false;
        // Buckets silent for a whole interval carry no flow any more: their
        // decayed history must not make a member look loaded (or make its
        // one live bucket look like one of several).
        let stale_before = now_ns.saturating_sub(self.config.interval_ns);
        for (b, seen) in self.last_seen.iter().enumerate() {
            if seen.is_none_or(|t| t < stale_before) {
                self.bytes[b] = 0;
            }
        }
        let refusals_before = self.stats.busy_refusals;
        let patience = self.config.busy_patience;
        let mut allow_busy = patience > 0 && self.blocked_passes >= patience;
        if n >= 2 {
            let mut loads = [0u64; BUCKETS];
            self.add_loads(&mut loads[..n]);
            for _ in 0..BUCKETS {
                match self.best_move(&loads[..n], now_ns, allow_busy) {
                    Some((bucket, from, to)) => {
                        // A forced move of a busy bucket happens once per pass.
                        allow_busy = false;
                        let x = self.bytes[usize::from(bucket)];
                        // Saturating: counters near u64::MAX must not panic.
                        loads[from] = loads[from].saturating_sub(x);
                        loads[to] = loads[to].saturating_add(x);
                        // `to` < n by construction, so assign cannot fail.
                        changed |= self.map.assign(bucket, to).unwrap_or(false);
                        self.stats.moves += 1;
                    }
                    None => break,
                }
            }
        }
        if changed {
            self.blocked_passes = 0;
        } else if self.stats.busy_refusals > refusals_before {
            self.blocked_passes = self.blocked_passes.saturating_add(1);
        }
        for b in self.bytes.iter_mut() {
            *b /= 2;
        }
        changed
    }

    fn best_move(
        &mut self,
        loads: &[u64],
        now_ns: u64,
        allow_busy: bool,
    ) -> Option<(u8, usize, usize)> {
        let from =
            (0..loads.len()).fold(0, |best, i| if loads[i] > loads[best] { i } else { best });
        let to = (0..loads.len()).fold(0, |best, i| if loads[i] < loads[best] { i } else { best });
        let gap = loads[from] - loads[to];
        let c = &self.config;
        if gap == 0
            || gap < c.min_gap_bytes
            || u128::from(gap) * 1000 < u128::from(loads[from]) * u128::from(c.min_gap_permille)
        {
            return None;
        }
        let loaded = self
            .map
            .buckets_of(from)
            .filter(|&b| self.bytes[usize::from(b)] > 0)
            .count();
        if loaded < 2 {
            return None;
        }
        let mut best: Option<(u8, u64)> = None;
        let mut refused = false;
        for b in self.map.buckets_of(from) {
            let x = self.bytes[usize::from(b)];
            if x == 0 {
                continue;
            }
            let new_gap = gap.abs_diff(x.saturating_mul(2));
            let shrinks = u128::from(new_gap) * 100
                <= u128::from(gap) * u128::from(100 - c.min_shrink_percent.min(100));
            if !shrinks || best.is_some_and(|(_, g)| g <= new_gap) {
                continue;
            }
            if !allow_busy && !self.is_idle(b, now_ns) {
                refused = true;
                continue;
            }
            best = Some((b, new_gap));
        }
        if best.is_none() && refused {
            self.stats.busy_refusals += 1;
        }
        best.map(|(b, _)| (b, from, to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn balancer(members: usize) -> AdaptiveBalancer {
        AdaptiveBalancer::new(
            BucketMap::new(members).unwrap(),
            AdaptiveConfig::default(),
            0,
        )
    }

    #[test]
    fn idle_buckets_move_toward_the_empty_member() {
        // 2 members; buckets 0, 2, 4 (member 0) carry 1 MB each, member 1 nothing.
        let mut a = balancer(2);
        for b in [0, 2, 4] {
            a.record(b, 1_000_000, 0);
        }
        assert!(a.rebalance(100 * MS));
        // Gap 3 MB: moving one bucket leaves 2 MB vs 1 MB (gap 1 MB, -67%);
        // then the gap of 1 MB cannot shrink by moving a 1 MB bucket.
        assert_eq!(a.member_loads(), [1_000_000, 500_000]);
        assert_eq!(a.map().member(0), Some(1));
        assert_eq!(a.stats().moves, 1);
    }

    #[test]
    fn busy_buckets_move_only_after_patience_runs_out() {
        let mut a = balancer(2);
        let mut t = 100 * MS;
        // Two saturating flows on member 0, never idle: three passes refuse,
        // the fourth moves one of them.
        for pass in 1..=4 {
            for b in [0, 2] {
                a.record(b, 5_000_000, t);
            }
            t += MS;
            let moved = a.rebalance(t);
            assert_eq!(moved, pass == 4, "pass {pass}");
        }
        assert_eq!(a.member_loads().iter().filter(|&&l| l > 0).count(), 2);
        // With patience 0 a busy bucket never moves.
        let mut a = AdaptiveBalancer::new(
            BucketMap::new(2).unwrap(),
            AdaptiveConfig {
                busy_patience: 0,
                ..AdaptiveConfig::default()
            },
            0,
        );
        for pass in 0..10 {
            for b in [0, 2] {
                a.record(b, 5_000_000, pass * MS);
            }
            assert!(!a.rebalance(pass * MS + MS / 2));
        }
    }

    #[test]
    fn ended_flows_do_not_count_as_load() {
        let mut a = balancer(2);
        let interval = AdaptiveConfig::default().interval_ns;
        // A flow in bucket 0 ended long ago; one live flow in bucket 2.
        a.record(0, 10_000_000, 0);
        let now = 3 * interval;
        a.record(2, 5_000_000, now - 20 * MS);
        // Member 0 carries one live bucket: it is never drained onto
        // member 1, and the dead bucket's history does not count.
        assert!(!a.rebalance(now));
        assert_eq!(a.bucket_bytes(0), 0);
        assert_eq!(a.map().member(2), Some(0));
    }

    #[test]
    fn busy_buckets_never_move() {
        let mut a = balancer(2);
        for b in [0, 2] {
            a.record(b, 5_000_000, 100 * MS);
        }
        // 1 ms after the last packet: both busy.
        assert!(!a.rebalance(101 * MS));
        assert_eq!(a.map().counts(), [128, 128]);
        assert_eq!(a.stats().busy_refusals, 1);
    }

    #[test]
    fn small_gaps_are_left_alone() {
        let mut a = balancer(2);
        a.record(0, 60_000, 0);
        a.record(2, 30_000, 0);
        assert!(!a.rebalance(100 * MS), "90 kB gap is below 100 kB");
    }

    #[test]
    fn huge_counters_do_not_overflow() {
        let mut a = balancer(3);
        for b in [0, 3, 6, 1] {
            a.record(b, u64::MAX, 0);
            a.record(b, u64::MAX, 0);
        }
        a.rebalance(u64::MAX);
        let members = a.map().members();
        assert!((0..=255u8).all(|b| a.map().member(b).is_some_and(|m| m < members)));
    }

    #[test]
    fn counters_halve_each_pass() {
        let mut a = balancer(1);
        a.record(7, 1000, 0);
        a.rebalance(1);
        assert_eq!(a.bucket_bytes(7), 500);
        a.rebalance(2);
        assert_eq!(a.bucket_bytes(7), 250);
        assert_eq!(a.poll_timeout(), 2 + AdaptiveConfig::default().interval_ns);
    }
}
