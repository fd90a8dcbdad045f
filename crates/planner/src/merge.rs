//! Many traffic files as one: a fleet's captures, flow lists or exports,
//! each read on its own (in parallel by the caller) and folded into one
//! flow table of bounded size, so that the files together cost memory
//! for their distinct flows, at most [`MAX_FLOWS`], never for their
//! records.

use crate::flow::{Dir, Flow};
use crate::input::CaptureStats;
use lagkit_hash::FlowKey;
use serde::Serialize;
use std::collections::HashMap;

/// At most this many distinct flows (key and direction) over all files:
/// the flow-export reader's cap ([`crate::export::MAX_FLOWS`], 2^19,
/// about 110 MiB of table). The flows of later files past it are counted,
/// with their bytes, and left out.
pub const MAX_FLOWS: usize = crate::export::MAX_FLOWS;

/// What the files held, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Files read.
    pub files: usize,
    /// Files that were captures (of the traffic or of exports).
    pub captures: usize,
    /// Captured packets.
    pub packets: u64,
    /// Flow-export records.
    pub records: u64,
    /// Flow-export datagrams.
    pub datagrams: u64,
    /// Exported records scaled by a sampling rate.
    pub sampled_records: u64,
    /// Packets or records left out (not Ethernet, neither from nor to the
    /// host, not UDP in an export capture, unusable records, data before
    /// its template, damaged datagrams).
    pub skipped: u64,
    /// Files cut short or damaged (planned from what came before).
    pub cut: usize,
    /// Flows each file's own reader left out at its cap.
    pub flows_dropped: u64,
    /// Export datagrams in versions lagkit cannot read.
    pub unreadable_datagrams: u64,
}

impl Totals {
    /// Adds one file's counts.
    pub fn add(&mut self, st: &CaptureStats) {
        self.files += 1;
        self.captures += usize::from(st.packets > 0);
        self.packets += st.packets;
        self.skipped += st.not_ethernet + st.damaged + st.unrelated + st.not_udp;
        self.cut += usize::from(st.skipped.is_some());
        self.flows_dropped += st.flows_dropped;
        if let Some(x) = &st.export {
            self.records += x.records;
            self.datagrams += x.datagrams;
            self.sampled_records += x.sampled_records;
            self.skipped += x.unusable_records
                + x.impossible_records
                + x.before_template_sets
                + x.damaged_datagrams
                + x.unreadable_datagrams
                + x.snapped_datagrams;
            self.unreadable_datagrams += x.unreadable_datagrams;
            self.flows_dropped += x.over_cap;
        }
    }

    fn merge(&mut self, o: &Totals) {
        self.files += o.files;
        self.captures += o.captures;
        self.packets += o.packets;
        self.records += o.records;
        self.datagrams += o.datagrams;
        self.sampled_records += o.sampled_records;
        self.skipped += o.skipped;
        self.cut += o.cut;
        self.flows_dropped += o.flows_dropped;
        self.unreadable_datagrams += o.unreadable_datagrams;
    }

    /// Why the files gave no flow to plan.
    pub fn why_no_flows(&self) -> String {
        let mut why = format!("no flows to plan in {} files", self.files);
        if self.packets > 0 {
            why += &format!(": {} captured packets", self.packets);
        }
        if self.datagrams > 0 {
            why += &format!(", {} export datagrams", self.datagrams);
        }
        if self.skipped > 0 {
            why += &format!(
                ", {} packets or records left out (read each file alone to see why)",
                self.skipped
            );
        }
        if self.unreadable_datagrams > 0 {
            why += &format!(
                ", {} export datagrams lagkit cannot read",
                self.unreadable_datagrams
            );
        }
        why
    }
}

/// Flows from many files, merged by key and direction.
#[derive(Debug, Default)]
pub struct Merged {
    table: HashMap<(FlowKey, Dir), (u64, Option<f64>)>,
    /// Order of first sight, so that the result does not depend on the
    /// hash map's order.
    order: Vec<(FlowKey, Dir)>,
    /// Files folded in.
    pub files: usize,
    /// What they held.
    pub totals: Totals,
    /// Flows left out because the table was full, and their bytes.
    pub over_cap: (u64, u64),
    /// Flows (of a file) left out because they would take the total past
    /// [`crate::export::MAX_TOTAL_BYTES`]: figures no traffic has.
    pub over_total: u64,
    /// The bytes of every flow taken.
    total: u64,
    cap: usize,
}

impl Merged {
    /// An empty table holding at most `cap` flows.
    pub fn with_cap(cap: usize) -> Merged {
        Merged {
            cap,
            ..Merged::default()
        }
    }

    /// An empty table holding at most [`MAX_FLOWS`].
    pub fn new() -> Merged {
        Merged::with_cap(MAX_FLOWS)
    }

    /// Folds one file's flows in: bytes add up, and so do the demands of
    /// a flow seen in several files (none stays none).
    pub fn add_file(&mut self, flows: Vec<Flow>) {
        self.files += 1;
        for f in flows {
            self.add(f.key, f.dir, f.bytes, f.demand_bps);
        }
    }

    fn add(&mut self, key: FlowKey, dir: Dir, bytes: u64, demand: Option<f64>) {
        if self.total.saturating_add(bytes) > crate::export::MAX_TOTAL_BYTES {
            self.over_total += 1;
            return;
        }
        if let Some(e) = self.table.get_mut(&(key, dir)) {
            self.total += bytes;
            e.0 = e.0.saturating_add(bytes);
            e.1 = match (e.1, demand) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            return;
        }
        if self.table.len() >= self.cap {
            self.over_cap.0 += 1;
            self.over_cap.1 = self.over_cap.1.saturating_add(bytes);
            return;
        }
        self.total += bytes;
        self.table.insert((key, dir), (bytes, demand));
        self.order.push((key, dir));
    }

    /// Two partial tables as one (for a parallel fold): `other`'s flows
    /// after this one's.
    pub fn merge(mut self, other: Merged) -> Merged {
        self.files += other.files;
        self.totals.merge(&other.totals);
        self.over_cap.0 += other.over_cap.0;
        self.over_cap.1 = self.over_cap.1.saturating_add(other.over_cap.1);
        self.over_total += other.over_total;
        let Merged {
            mut table, order, ..
        } = other;
        for k in order {
            if let Some((bytes, demand)) = table.remove(&k) {
                self.add(k.0, k.1, bytes, demand);
            }
        }
        self
    }

    /// How many distinct flows.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether no flow was seen.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The flows, in order of first sight.
    pub fn into_flows(self) -> Vec<Flow> {
        let Merged {
            mut table, order, ..
        } = self;
        order
            .into_iter()
            .filter_map(|(key, dir)| {
                table.remove(&(key, dir)).map(|(bytes, demand_bps)| Flow {
                    key,
                    dir,
                    bytes,
                    demand_bps,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(sport: u16, dir: Dir, bytes: u64, demand: Option<f64>) -> Flow {
        Flow {
            key: FlowKey::tcp4(
                "10.0.0.1".parse().unwrap(),
                sport,
                "10.0.0.2".parse().unwrap(),
                80,
            ),
            dir,
            bytes,
            demand_bps: demand,
        }
    }

    #[test]
    fn the_same_flow_in_two_files_adds_up_and_directions_stay_apart() {
        let mut m = Merged::new();
        m.add_file(vec![
            flow(1, Dir::Out, 100, None),
            flow(2, Dir::Out, 5, Some(1e6)),
        ]);
        m.add_file(vec![flow(1, Dir::Out, 50, None), flow(1, Dir::In, 7, None)]);
        m.add_file(vec![flow(2, Dir::Out, 5, Some(2e6))]);
        assert_eq!((m.files, m.len()), (3, 3));
        let f = m.into_flows();
        assert_eq!(f[0], flow(1, Dir::Out, 150, None));
        assert_eq!(f[1], flow(2, Dir::Out, 10, Some(3e6)));
        assert_eq!(f[2], flow(1, Dir::In, 7, None));
    }

    /// Files whose figures no traffic has (each at the export reader's
    /// 2^62 bytes) never add up past it: no total saturates.
    #[test]
    fn totals_past_2_to_the_62_are_counted_not_summed() {
        let mut m = Merged::new();
        for i in 0..6 {
            m.add_file(vec![flow(
                i,
                Dir::Out,
                crate::export::MAX_TOTAL_BYTES / 2,
                None,
            )]);
        }
        assert_eq!(m.over_total, 4);
        let total: u128 = m.into_flows().iter().map(|f| u128::from(f.bytes)).sum();
        assert!(
            total <= u128::from(crate::export::MAX_TOTAL_BYTES),
            "{total}"
        );
    }

    #[test]
    fn past_the_cap_flows_are_counted_not_kept() {
        let mut m = Merged::with_cap(2);
        m.add_file((1..=5).map(|p| flow(p, Dir::Out, 10, None)).collect());
        // A flow already in the table still adds up.
        m.add_file(vec![flow(1, Dir::Out, 1, None)]);
        assert_eq!((m.len(), m.over_cap), (2, (3, 30)));
        assert_eq!(m.into_flows()[0].bytes, 11);
    }

    #[test]
    fn a_parallel_fold_equals_a_sequential_one() {
        let files: Vec<Vec<Flow>> = (0..8u16)
            .map(|i| {
                (0..50u16)
                    .map(|p| flow(p * (i % 3 + 1), Dir::Out, u64::from(i + p), None))
                    .collect()
            })
            .collect();
        let mut seq = Merged::new();
        for f in files.clone() {
            seq.add_file(f);
        }
        let (mut a, mut b) = (Merged::new(), Merged::new());
        for (i, f) in files.into_iter().enumerate() {
            if i % 2 == 0 {
                a.add_file(f)
            } else {
                b.add_file(f)
            }
        }
        let par = a.merge(b);
        assert_eq!(par.files, seq.files);
        let mut p = par.into_flows();
        let mut s = seq.into_flows();
        let key = |f: &Flow| (f.key.src_port(), f.bytes);
        p.sort_by_key(key);
        s.sort_by_key(key);
        assert_eq!(p, s);
    }
}
