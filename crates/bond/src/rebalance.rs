//! adaptive, balance-tlb and balance-alb: the glue between the bucket loads
//! the data path counts ([`BucketLoad`]) and the sans-IO
//! [`AdaptiveBalancer`]. The control thread polls it with the coarse
//! monotonic clock; a moved table comes back as the result, and the caller
//! hands it to the plan's [`Slots`] and republishes.

use crate::map::BucketLoad;
use crate::plan::Slots;
use lagkit_hash::{AdaptiveBalancer, AdaptiveConfig, BucketMap};

/// The balancer over the current bucket table, and what of the data path's
/// counts it has already seen.
pub struct Rebalancer {
    balancer: AdaptiveBalancer,
    seen: [u64; 256],
    owners: Vec<usize>,
    config: AdaptiveConfig,
    /// Passes that moved buckets, since the bond started (kept when the
    /// balancer starts over).
    moved: u64,
}

impl Rebalancer {
    /// A balancer with the given rebalancing interval and idle gap.
    pub fn new(config: AdaptiveConfig, now_ns: u64) -> Rebalancer {
        Rebalancer {
            balancer: AdaptiveBalancer::new(BucketMap::new(1).expect("one member"), config, now_ns),
            seen: [0; 256],
            owners: Vec::new(),
            config,
            moved: 0,
        }
    }

    /// New interval and idle gap (a reload): balancing goes on over the
    /// current table; the loads measured so far start over.
    pub fn set_config(&mut self, config: AdaptiveConfig, now_ns: u64) {
        if config != self.config {
            self.config = config;
            self.balancer = AdaptiveBalancer::new(self.balancer.map().clone(), config, now_ns);
        }
    }

    /// Follows the plan's bucket table: when its members changed, balancing
    /// starts over on the new table.
    pub fn follow(&mut self, slots: &Slots, now_ns: u64) {
        if self.owners != slots.owners() {
            self.owners = slots.owners().to_vec();
            if let Some(m) = slots.map() {
                self.balancer = AdaptiveBalancer::new(m.clone(), self.config, now_ns);
            }
        }
    }

    /// Whether a pass is due at `now_ns` (the BPF engine's counts are read
    /// only then).
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.balancer.poll_timeout() && self.owners.len() >= 2
    }

    /// Feeds the data path's counts to the balancer when a pass is due;
    /// returns the new table when buckets moved.
    pub fn poll(&mut self, load: &BucketLoad, now_ns: u64) -> Option<BucketMap> {
        if !self.due(now_ns) {
            return None;
        }
        for b in 0..=255u8 {
            let (bytes, last) = load.get(b);
            let delta = bytes.saturating_sub(self.seen[usize::from(b)]);
            self.seen[usize::from(b)] = bytes;
            if delta > 0 {
                self.balancer.record(b, delta, last);
            }
        }
        let moved = self.balancer.rebalance(now_ns);
        self.moved += u64::from(moved);
        moved.then(|| self.balancer.map().clone())
    }

    /// Passes that moved buckets since the bond started.
    pub fn rebalances(&self) -> u64 {
        self.moved
    }

    /// The balancer (for its counters and loads).
    pub fn balancer(&self) -> &AdaptiveBalancer {
        &self.balancer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn setup() -> (Rebalancer, Slots, BucketLoad) {
        let config = AdaptiveConfig {
            interval_ns: 1000 * MS,
            idle_gap_ns: 10 * MS,
            ..AdaptiveConfig::default()
        };
        let mut r = Rebalancer::new(config, 0);
        let mut slots = Slots::default();
        slots.update(&[0, 1]);
        r.follow(&slots, 0);
        (r, slots, BucketLoad::default())
    }

    /// Two busy buckets on the member of slot 0, last active at `last`.
    fn load_slot0(slots: &Slots, load: &BucketLoad, last: u64) -> Vec<u8> {
        let buckets: Vec<u8> = slots.map().unwrap().buckets_of(0).take(2).collect();
        for &b in &buckets {
            load.record_at(b, 10_000_000, last);
        }
        buckets
    }

    #[test]
    fn nothing_before_the_interval_or_with_one_member() {
        let (mut r, slots, load) = setup();
        load_slot0(&slots, &load, 0);
        assert_eq!(r.poll(&load, 500 * MS), None, "not due");
        let mut one = Slots::default();
        one.update(&[3]);
        r.follow(&one, 0);
        assert_eq!(r.poll(&load, 5000 * MS), None, "one member");
    }

    #[test]
    fn busy_buckets_move_only_after_the_idle_gap() {
        let (mut r, mut slots, load) = setup();
        let t = 1000 * MS;
        let buckets = load_slot0(&slots, &load, t - MS);
        assert_eq!(r.poll(&load, t), None, "both buckets sent 1 ms ago");
        assert!(r.balancer().stats().busy_refusals > 0);
        let t = 2000 * MS;
        load_slot0(&slots, &load, t - 20 * MS);
        let moved = r.poll(&load, t).expect("idle for 20 ms: one moves");
        assert!(buckets.iter().any(|&b| moved.member(b) == Some(1)));
        slots.set_map(moved.clone());
        assert_eq!(slots.map(), Some(&moved));
    }

    #[test]
    fn a_membership_change_starts_over() {
        let (mut r, mut slots, load) = setup();
        load_slot0(&slots, &load, 0);
        slots.update(&[0, 1, 2]);
        r.follow(&slots, 900 * MS);
        assert_eq!(r.balancer().map().members(), 3);
        assert_eq!(
            r.poll(&load, 1000 * MS),
            None,
            "a new interval began at 900 ms"
        );
    }
}
