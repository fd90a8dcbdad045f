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

#[cfg(test)]
mod tests {
    use super::*;

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
