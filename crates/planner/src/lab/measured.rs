//! What a lab report (`report.json` of `lagkit lab run`) recorded, read
//! through the lab's own report types: a run by its configuration's key,
//! the connections it kept, the switch kind it went through, how much TCP
//! retransmitted.

use lagkit_lab::report::{Report, RunRecord};
use lagkit_lab::topology::SwitchKind;
use lagkit_lab::workload::Connection;

/// The run of `key` in a lab report.
pub(super) fn run_of<'a>(report: &'a Report, key: &str) -> Option<&'a RunRecord> {
    report.runs.iter().find(|r| r.key == key)
}

/// The connections a run recorded (`workload.connections`).
pub(super) fn connections_of(run: &RunRecord) -> Option<&[Connection]> {
    run.workload.as_ref().map(|w| w.connections.as_slice())
}

/// The switch a lab report's runs went through: the kind its runs record,
/// Open vSwitch for a report from before they did, the default kind
/// without a report.
pub(super) fn switch_kind(report: Option<&Report>) -> SwitchKind {
    let Some(r) = report else {
        return SwitchKind::DEFAULT;
    };
    r.runs
        .iter()
        .flat_map(|run| &run.switches)
        .map(|sw| sw.kind)
        .next()
        .unwrap_or(SwitchKind::Ovs)
}

/// The share of segments TCP retransmitted in a run, from the lab's
/// counters: retransmits over (payload carried / 1448-byte segments).
pub(super) fn retransmitted(run: &RunRecord, payload: u64) -> Option<f64> {
    let r = run.measurement.as_ref()?.retransmits as f64;
    (payload > 0).then(|| r / (payload as f64 / 1448.0))
}
