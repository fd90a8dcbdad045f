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

/// Carrier changes, each timed from when it was seen to when the data path
/// had the plan it caused: for a link going down, the first plan without
/// the member (the failover time); for one coming up, the first with it
/// carrying traffic (which in 802.3ad waits for LACP to agree).
/// `lagkit stats`' latencies; keeps the latest [`CarrierLog::KEEP`].
#[derive(Debug, Default)]
pub struct CarrierLog {
    /// Seen, and not yet in a plan: (member, up, seen).
    unpublished: Vec<(String, bool, u64)>,
    events: std::collections::VecDeque<CarrierEvent>,
}

impl CarrierLog {
    /// How many events are kept (and waiting, at most).
    pub const KEEP: usize = 256;

    /// Member `member`'s carrier went `up` (or down), seen at `seen_ns`
    /// (CLOCK_MONOTONIC: when the link event was read), or now when `None`
    /// (a change a timer found: debounce, miimon). An earlier change of
    /// the same member still waiting for its plan is dropped: the link
    /// changed again before any plan followed it.
    pub fn seen(&mut self, member: &str, up: bool, seen_ns: Option<u64>) {
        let seen_ns = seen_ns.unwrap_or_else(lagkit_dataplane::monotonic_now_ns);
        self.unpublished.retain(|(m, _, _)| m != member);
        if self.unpublished.len() == Self::KEEP {
            self.unpublished.remove(0);
        }
        self.unpublished.push((member.to_string(), up, seen_ns));
    }

    /// A plan in which `transmits(member)` says who carries traffic was
    /// published now: [`CarrierLog::published`], the clock read only when
    /// changes wait for it.
    pub fn published_now(&mut self, transmits: impl Fn(&str) -> bool) {
        if self.pending() {
            self.published(lagkit_dataplane::monotonic_now_ns(), transmits);
        }
    }

    /// A plan was published at `published_ns`: each change it carries out
    /// (a member that went down is out of it, one that came up carries
    /// traffic in it) is timed; the others wait for a later plan.
    pub fn published(&mut self, published_ns: u64, transmits: impl Fn(&str) -> bool) {
        let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unpublished)
            .into_iter()
            .partition(|(m, up, _)| transmits(m) == *up);
        self.unpublished = waiting;
        for (member, up, seen_ns) in done {
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
    fn each_carrier_change_is_timed_to_the_plan_it_caused() {
        let mut log = CarrierLog::default();
        let none = |_: &str| false;
        log.published(5, none);
        assert!(log.events().is_empty(), "no change, no event");
        log.seen("eth1", false, Some(10));
        log.seen("eth2", true, Some(12));
        assert!(log.pending());
        // eth1 is out of this plan; eth2 does not carry traffic yet (LACP
        // has not agreed): only eth1's change is done.
        log.published(20, none);
        let e = log.events();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (
                e[0].member.as_str(),
                e[0].up,
                e[0].seen_ns,
                e[0].published_ns
            ),
            ("eth1", false, 10, 20)
        );
        assert!(log.pending());
        log.published(2_000, |m| m == "eth2");
        let e = log.events();
        assert_eq!(
            (e[1].member.as_str(), e[1].up, e[1].published_ns),
            ("eth2", true, 2_000)
        );
        assert!(!log.pending());
        // A link that comes back before any plan followed its loss is
        // timed from its return only.
        log.seen("eth1", false, Some(3_000));
        log.seen("eth1", true, Some(3_010));
        log.published(3_050, |_| true);
        let e = log.events();
        assert_eq!((e.len(), e[2].up, e[2].seen_ns), (3, true, 3_010));
        for t in 0..CarrierLog::KEEP as u64 {
            log.seen("eth3", t % 2 == 0, Some(100 + t));
            log.published(200 + t, |_| t % 2 == 0);
        }
        let e = log.events();
        assert_eq!(e.len(), CarrierLog::KEEP);
        assert!(
            e.iter().all(|x| x.member == "eth3"),
            "the oldest went first"
        );
        // A change a timer found is seen now, and the plan after it
        // published later still.
        let mut log = CarrierLog::default();
        log.published_now(none);
        assert!(log.events().is_empty(), "no change, no event");
        let before = lagkit_dataplane::monotonic_now_ns();
        log.seen("eth1", true, None);
        log.published_now(|_| true);
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
