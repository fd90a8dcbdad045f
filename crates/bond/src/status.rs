//! The bond's status and counters are [`lagkit_api::status`]'s types, so
//! that readers of the control socket need not build the bond; this adds
//! the one piece that reads the forwarding engine's own counters.

pub use lagkit_api::status::*;
use lagkit_dataplane::forward::MemberSnapshot;

/// Folding an engine's counts into a member's counters.
pub trait AddEngine {
    /// Adds what an engine counted on this member.
    fn add_engine(&mut self, e: &MemberSnapshot);
}

impl AddEngine for MemberStats {
    fn add_engine(&mut self, e: &MemberSnapshot) {
        self.tx_packets += e.down_packets;
        self.tx_bytes += e.down_bytes;
        self.rx_packets += e.up_packets;
        self.rx_bytes += e.up_bytes;
        self.control_malformed += e.control_malformed;
        self.control_queue_full += e.control_queue_full;
    }
}

/// Carrier changes, each timed from when it was seen to when the plan that
/// follows it was published: `lagkit stats`' failover latencies. Keeps
/// the latest [`CarrierLog::KEEP`].
#[derive(Debug, Default)]
pub struct CarrierLog {
    /// Seen, but their plan is not published yet: (member, up, seen).
    unpublished: Vec<(String, bool, u64)>,
    events: std::collections::VecDeque<CarrierEvent>,
}

impl CarrierLog {
    /// How many events are kept.
    pub const KEEP: usize = 256;

    /// Member `member`'s carrier went `up` (or down), seen at `seen_ns`
    /// (CLOCK_MONOTONIC: when the link event was read), or now when `None`
    /// (a change a timer found: debounce, miimon).
    pub fn seen(&mut self, member: &str, up: bool, seen_ns: Option<u64>) {
        let seen_ns = seen_ns.unwrap_or_else(lagkit_dataplane::monotonic_now_ns);
        self.unpublished.push((member.to_string(), up, seen_ns));
    }

    /// A plan was published now: [`CarrierLog::published`], the clock read
    /// only when changes wait for it.
    pub fn published_now(&mut self) {
        if self.pending() {
            self.published(lagkit_dataplane::monotonic_now_ns());
        }
    }

    /// A plan was published at `published_ns`: every change seen before
    /// it is now in force.
    pub fn published(&mut self, published_ns: u64) {
        for (member, up, seen_ns) in self.unpublished.drain(..) {
            if self.events.len() == Self::KEEP {
                self.events.pop_front();
            }
            self.events.push_back(CarrierEvent {
                member,
                up,
                seen_ns,
                published_ns,
            });
        }
    }

    /// Whether changes wait for their plan.
    pub fn pending(&self) -> bool {
        !self.unpublished.is_empty()
    }

    /// The events, oldest first.
    pub fn events(&self) -> Vec<CarrierEvent> {
        self.events.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carrier_changes_are_timed_to_their_plan_and_the_latest_kept() {
        let mut log = CarrierLog::default();
        log.published(5);
        assert!(log.events().is_empty(), "no change, no event");
        log.seen("eth1", false, Some(10));
        log.seen("eth2", true, Some(12));
        assert!(log.pending());
        assert!(log.events().is_empty(), "not in force before the plan");
        log.published(20);
        assert!(!log.pending());
        let e = log.events();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (
                e[0].member.as_str(),
                e[0].up,
                e[0].seen_ns,
                e[0].published_ns
            ),
            ("eth1", false, 10, 20)
        );
        assert_eq!(
            (e[1].member.as_str(), e[1].up, e[1].seen_ns),
            ("eth2", true, 12)
        );
        for t in 0..CarrierLog::KEEP as u64 {
            log.seen("eth3", t % 2 == 0, Some(100 + t));
            log.published(200 + t);
        }
        let e = log.events();
        assert_eq!(e.len(), CarrierLog::KEEP);
        assert!(
            e.iter().all(|x| x.member == "eth3"),
            "the oldest went first"
        );
        assert_eq!(
            e.last().map(|x| x.published_ns),
            Some(200 + CarrierLog::KEEP as u64 - 1)
        );
        // A change a timer found is seen now, and the plan after it
        // published later still.
        let mut log = CarrierLog::default();
        log.published_now();
        assert!(log.events().is_empty(), "no change, no event");
        let before = lagkit_dataplane::monotonic_now_ns();
        log.seen("eth1", true, None);
        log.published_now();
        let e = log.events();
        assert!(before <= e[0].seen_ns && e[0].seen_ns <= e[0].published_ns);
    }

    #[test]
    fn engine_counters_accumulate_across_engines() {
        let mut s = MemberStats::default();
        let e = MemberSnapshot {
            down_packets: 2,
            down_bytes: 200,
            up_packets: 3,
            up_bytes: 300,
            control_malformed: 1,
            ..MemberSnapshot::default()
        };
        s.add_engine(&e);
        s.add_engine(&e);
        assert_eq!(
            (s.tx_packets, s.tx_bytes, s.rx_packets, s.rx_bytes),
            (4, 400, 6, 600)
        );
        assert_eq!((s.control_malformed, s.control_queue_full), (2, 0));
    }
}
