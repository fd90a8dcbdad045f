//! The counters `lagkit stats` shows: per member, like AIX `entstat -d`,
//! and the times from each member's link event to the plan it caused.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Counters of one bond, like AIX `entstat -d`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BondStats {
    /// Bond name.
    pub name: String,
    /// Per member.
    pub members: Vec<MemberStats>,
    /// Share of transmitted packets through the first member (seed 000's
    /// "balance ratio"); `None` before any traffic.
    pub tx_balance: Option<f64>,
    /// Share of received packets through the first member.
    pub rx_balance: Option<f64>,
    /// Frames the engine dropped, by reason.
    pub engine_drops: Vec<(String, u64)>,
    /// The latest member carrier changes and when the data path had the
    /// plan each one caused (the member out of it, or in it), oldest first.
    #[serde(default)]
    pub carrier_events: Vec<CarrierEvent>,
}

/// Link event to the plan it caused, over some carrier changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Changes measured.
    pub count: usize,
    /// Median.
    pub median_ns: u64,
    /// Maximum.
    pub max_ns: u64,
}

/// One member carrier change and the plan that followed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CarrierEvent {
    /// The member.
    pub member: String,
    /// Its carrier after the change.
    pub up: bool,
    /// When the daemon read the kernel's link event (CLOCK_MONOTONIC ns;
    /// for a carrier found by polling, when it was polled).
    pub seen_ns: u64,
    /// When the data path had the plan it caused (CLOCK_MONOTONIC ns): the
    /// first with the member out of it (down) or carrying traffic (up), as
    /// the BPF programs' plan swapped or the userspace engine's map
    /// published.
    pub published_ns: u64,
}

/// Counters of one member.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemberStats {
    /// Interface name.
    pub name: String,
    /// Data frames sent on the member.
    pub tx_packets: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Data frames received and passed up.
    pub rx_packets: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames dropped on the member (device and kernel drops).
    pub drops: u64,
    /// LACPDUs received.
    pub lacpdu_rx: u64,
    /// LACPDUs sent.
    pub lacpdu_tx: u64,
    /// Malformed or unknown slow-protocol frames.
    pub lacpdu_bad: u64,
    /// Marker PDUs received.
    pub marker_rx: u64,
    /// Marker responses sent.
    pub marker_tx: u64,
    /// Control frames from this member dropped before the control plane:
    /// malformed slow-protocol frames.
    #[serde(default)]
    pub control_malformed: u64,
    /// Control frames dropped because this member's queue was full.
    #[serde(default)]
    pub control_queue_full: u64,
}

fn ratio(first: u64, total: u64) -> Option<f64> {
    (total > 0).then(|| first as f64 / total as f64)
}

impl BondStats {
    /// Computes the balance ratios from the member counters.
    pub fn with_ratios(mut self) -> BondStats {
        let tx: u64 = self.members.iter().map(|m| m.tx_packets).sum();
        let rx: u64 = self.members.iter().map(|m| m.rx_packets).sum();
        let first = self.members.first().cloned().unwrap_or_default();
        self.tx_balance = ratio(first.tx_packets, tx);
        self.rx_balance = ratio(first.rx_packets, rx);
        self
    }

    /// Text in the spirit of `entstat -d`.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Bond: {}", self.name);
        let _ = writeln!(
            o,
            "  {:<10} {:>12} {:>14} {:>12} {:>14} {:>8} {:>9} {:>9} {:>7} {:>7}",
            "member",
            "tx packets",
            "tx bytes",
            "rx packets",
            "rx bytes",
            "drops",
            "lacpdu rx",
            "lacpdu tx",
            "bad",
            "marker"
        );
        for m in &self.members {
            let _ = writeln!(
                o,
                "  {:<10} {:>12} {:>14} {:>12} {:>14} {:>8} {:>9} {:>9} {:>7} {:>7}",
                m.name,
                m.tx_packets,
                m.tx_bytes,
                m.rx_packets,
                m.rx_bytes,
                m.drops,
                m.lacpdu_rx,
                m.lacpdu_tx,
                m.lacpdu_bad,
                m.marker_rx
            );
        }
        let fmt = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}"));
        let _ = writeln!(
            o,
            "  balance ratio (share through {}): transmit {}, receive {}",
            self.members.first().map_or("-", |m| m.name.as_str()),
            fmt(self.tx_balance),
            fmt(self.rx_balance)
        );
        let drops: Vec<String> = self
            .engine_drops
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        if !drops.is_empty() {
            let _ = writeln!(o, "  engine drops: {}", drops.join(", "));
        }
        for m in &self.members {
            if m.control_malformed + m.control_queue_full > 0 {
                let _ = writeln!(
                    o,
                    "  {}: control frames dropped: {} malformed, {} queue full",
                    m.name, m.control_malformed, m.control_queue_full
                );
            }
        }
        for (up, what) in [
            (false, "link down to new plan (failover)"),
            (true, "link up to new plan"),
        ] {
            if let Some(l) = self.latency(up) {
                let _ = writeln!(
                    o,
                    "  {what}: {} changes, median {} µs, max {} µs",
                    l.count,
                    l.median_ns / 1000,
                    l.max_ns / 1000
                );
            }
        }
        o
    }

    /// Link event to the plan it caused, over the kept changes of links
    /// going `up` (which in 802.3ad wait for LACP to agree) or down (the
    /// failover time).
    pub fn latency(&self, up: bool) -> Option<Latency> {
        let mut d: Vec<u64> = self
            .carrier_events
            .iter()
            .filter(|e| e.up == up)
            .map(|e| e.published_ns.saturating_sub(e.seen_ns))
            .collect();
        d.sort_unstable();
        Some(Latency {
            count: d.len(),
            median_ns: *d.get(d.len() / 2)?,
            max_ns: *d.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_events_are_timed_apart_for_down_and_up() {
        let ev = |up: bool, seen_ns: u64, published_ns: u64| CarrierEvent {
            member: "eth1".into(),
            up,
            seen_ns,
            published_ns,
        };
        let st = BondStats {
            name: "bond0".into(),
            members: Vec::new(),
            tx_balance: None,
            rx_balance: None,
            engine_drops: Vec::new(),
            carrier_events: vec![
                ev(false, 1_000, 41_000),
                ev(true, 100_000, 2_100_000_000),
                ev(false, 5_000, 25_000),
                ev(false, 7_000, 97_000),
            ],
        };
        let down = st.latency(false).unwrap();
        assert_eq!(
            (down.count, down.median_ns, down.max_ns),
            (3, 40_000, 90_000)
        );
        let up = st.latency(true).unwrap();
        assert_eq!((up.count, up.max_ns), (1, 2_099_900_000));
        let text = st.render();
        assert!(
            text.contains("link down to new plan (failover): 3 changes, median 40 µs, max 90 µs\n"),
            "{text}"
        );
        assert!(
            text.contains("link up to new plan: 1 changes, median 2099900 µs"),
            "{text}"
        );
        let none = BondStats {
            carrier_events: Vec::new(),
            ..st
        };
        assert!(none.latency(false).is_none() && !none.render().contains("new plan"));
    }
}
