//! A report's charts as data for `lagkit_chart`: goodput per
//! configuration, and bytes per link of each measured run.
//!
//! The goodput chart is laid out by what the sweep varies. When the runs
//! differ in their link count and in something else (the direction, the
//! connections), the x axis is the link count and each other setting is a
//! series, so "more links" reads left to right; otherwise there is one
//! bar per run, labelled by its number, and the legend says what each
//! number ran. A failed run, or one whose channels did not form as its
//! configuration expected, is marked as such instead of drawn as zero.

use crate::report::{Report, RunRecord};
use lagkit_chart::{Bar, BarChart, Group, MARK_FAILED};

/// The mark of a run whose channels did not form, as expected.
pub const MARK_NOT_FORMED: &str = "not formed";
/// The mark of a run whose channels formed though expected not to.
pub const MARK_FORMED_UNEXPECTED: &str = "formed, unexpected";

/// A run's goodput bar: its Mbit/s against its links' capacity.
fn bar(r: &RunRecord) -> Bar {
    let mbps = r.workload.as_ref().map(|w| w.mbps);
    let b = if r.error.is_some() {
        Bar::marked(MARK_FAILED, None)
    } else {
        match &r.formation {
            Some(f) if f.not_formed_as_expected() => Bar::marked(MARK_NOT_FORMED, mbps),
            Some(f) if !f.expected && f.formed => Bar::marked(MARK_FORMED_UNEXPECTED, mbps),
            _ => Bar {
                value: mbps,
                ..Bar::default()
            },
        }
    };
    b.with_reference(r.limit_mbps)
}

/// The series a run belongs to when the x axis is the link count: its
/// key without the leading `k<links>-` (built-in sweeps name runs so),
/// else its code without the links.
fn series_of(r: &RunRecord) -> String {
    let k = r.key.as_str();
    if let Some(rest) = k.strip_prefix('k') {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            if let Some(s) = rest[digits..].strip_prefix('-') {
                return s.to_string();
            }
        }
    }
    let c = &r.code;
    format!("{} {} {} {} {}", c.app, c.procs, c.switch, c.server, c.mtu)
}

/// What every run of a series says in its label, e.g. "server receives"
/// of "1 link, server receives" and "2 links, server receives".
fn common_label(runs: &[&RunRecord]) -> String {
    let Some(first) = runs.first() else {
        return String::new();
    };
    first
        .label
        .split(", ")
        .filter(|part| runs.iter().all(|r| r.label.split(", ").any(|p| p == *part)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Values in first-seen order, without repeats.
fn distinct<T: PartialEq>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

const CAPACITY: &str = "capacity: links × rate × directions (what the links could carry)";

/// The goodput chart.
pub fn mbps(report: &Report) -> BarChart {
    let runs = &report.runs;
    let links = distinct(runs.iter().map(|r| r.code.links.as_str()));
    let series = distinct(runs.iter().map(series_of));
    let by_links = links.len() > 1 && series.len() > 1;
    let mut chart = BarChart {
        title: format!("{}: goodput per configuration", report.title),
        note: Some(report.scale_line()),
        y_label: "Mbit/s (transmit plus receive)".into(),
        reference: Some(CAPACITY.into()),
        ..BarChart::default()
    };
    if by_links {
        chart.x_label = "links per bond × rate".into();
        chart.series = series
            .iter()
            .map(|s| {
                let members: Vec<&RunRecord> = runs.iter().filter(|r| &series_of(r) == s).collect();
                match common_label(&members) {
                    l if l.is_empty() => s.clone(),
                    l => format!("{s}: {l}"),
                }
            })
            .collect();
        chart.groups = links
            .iter()
            .map(|l| Group {
                label: (*l).to_string(),
                bars: series
                    .iter()
                    .map(|s| {
                        runs.iter()
                            .find(|r| r.code.links == *l && &series_of(r) == s)
                            .map_or_else(|| Bar::marked("not run", None), bar)
                    })
                    .collect(),
            })
            .collect();
    } else {
        chart.x_label = "run".into();
        chart.series = vec!["Mbit/s".into()];
        chart.groups = runs
            .iter()
            .map(|r| Group {
                label: r.run.to_string(),
                bars: vec![bar(r)],
            })
            .collect();
        chart.legend = runs
            .iter()
            .map(|r| (r.run.to_string(), run_words(report, r)))
            .collect();
    }
    chart.legend.extend(shared_codes(report));
    chart
}

/// The code columns of run `r` in words, each as `(name, value)`.
fn code_words(r: &RunRecord) -> [(&'static str, String); 5] {
    let c = &r.code;
    [
        ("switch", c.switch.clone()),
        ("server", c.server.clone()),
        ("app", format!("{}×{}", c.app, c.procs)),
        ("MTU", c.mtu.clone()),
        ("links", c.links.clone()),
    ]
}

/// A run in words for a legend: key, label and the code columns that
/// differ between runs (those all runs share are said once, in
/// [`shared_codes`]).
fn run_words(report: &Report, r: &RunRecord) -> String {
    let varying: Vec<String> = code_words(r)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !shared(report, *i))
        .map(|(_, (k, v))| format!("{k} {v}"))
        .collect();
    let what = match (r.key.is_empty(), r.label.is_empty()) {
        (true, true) => String::new(),
        (true, false) => r.label.clone(),
        (false, true) => r.key.clone(),
        (false, false) => format!("{} — {}", r.key, r.label),
    };
    match (what.is_empty(), varying.is_empty()) {
        (_, true) => what,
        (true, false) => varying.join(", "),
        (false, false) => format!("{what} ({})", varying.join(", ")),
    }
}

/// Whether every run has the same value in code column `i`.
fn shared(report: &Report, i: usize) -> bool {
    let v = distinct(report.runs.iter().map(|r| code_words(r)[i].1.clone()));
    v.len() <= 1
}

/// The code columns every run shares, as one legend line.
fn shared_codes(report: &Report) -> Option<(String, String)> {
    let first = report.runs.first()?;
    let words: Vec<String> = code_words(first)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shared(report, *i))
        .map(|(_, (k, v))| format!("{k} {v}"))
        .collect();
    (!words.is_empty()).then(|| ("all runs".to_string(), words.join(", ")))
}

/// Bytes through each bond member of run `r`, if it was measured.
pub fn links(report: &Report, r: &RunRecord) -> Option<BarChart> {
    let m = r.measurement.as_ref()?;
    let groups: Vec<Group> = m
        .bonds
        .iter()
        .flat_map(|b| {
            b.members.iter().map(move |mm| Group {
                label: format!("{}/{}", b.host, mm.name),
                bars: vec![
                    Bar::value(mm.tx_bytes as f64 / 1e6),
                    Bar::value(mm.rx_bytes as f64 / 1e6),
                ],
            })
        })
        .collect();
    Some(BarChart {
        title: format!("{} run {}: bytes per link", report.title, r.run),
        note: (!r.label.is_empty()).then(|| r.label.clone()),
        x_label: "host/link".into(),
        y_label: "MB".into(),
        series: vec!["transmitted".into(), "received".into()],
        groups,
        ..BarChart::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> Report {
        let path = format!(
            "{}/../../docs/results/{name}/report.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_sweep_over_link_counts_is_drawn_as_series_by_links() {
        let c = mbps(&recorded("hp-apa"));
        let labels: Vec<&str> = c.groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["1x250M", "2x250M", "4x250M", "8x250M"]);
        assert_eq!(
            c.series,
            [
                "tx: server transmits",
                "rx: server receives",
                "both: server transmits and receives"
            ]
        );
        // Every bar has its capacity: 8 links of 250 Mbit/s both ways.
        assert_eq!(c.groups[3].bars[2].reference, Some(4000.0));
        assert!(c
            .groups
            .iter()
            .all(|g| g.bars.iter().all(|b| b.value.is_some())));
    }

    #[test]
    fn failed_and_not_formed_runs_are_marked() {
        let c = mbps(&recorded("ibm-6513"));
        assert_eq!(c.groups.len(), 24);
        let mark = |run: usize| c.groups[run - 1].bars[0].mark.as_deref();
        assert_eq!(mark(11), Some(MARK_FAILED));
        assert_eq!(mark(22), Some(MARK_NOT_FORMED));
        assert_eq!(c.groups[21].bars[0].value, None);
        assert_eq!(mark(2), None);
        // Every run number on the axis is explained in the legend.
        for g in &c.groups {
            assert!(
                c.legend.iter().any(|(code, _)| code == &g.label),
                "{}",
                g.label
            );
        }
        assert!(c.note.as_deref().unwrap().contains("factor 4"));
    }
}
