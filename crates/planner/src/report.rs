//! The planner's answer as a table, as JSON, and as a chart.

use crate::explain::{explain_with, Cause};
use crate::flow::{Dir, Flow};
use crate::platform::{Platform, Suggestion};
use crate::predict::{alternatives, predict_with, Chooser, EndConfig, Prediction};
use serde::Serialize;
use std::fmt::Write as _;

/// A cause with its fix, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The cause, structured.
    #[serde(flatten)]
    pub cause: Cause,
    /// One sentence.
    pub text: String,
    /// What to change, in the terms of the end's platform.
    pub fix: String,
}

/// One direction's answer.
#[derive(Clone, Debug, Serialize)]
pub struct DirReport {
    /// Who spreads it: `host bond` or `switch`.
    pub end: &'static str,
    /// What that end can be set to: `any`, or `cisco catalyst` (only its
    /// load-balance methods are ranked and suggested).
    pub platform: &'static str,
    /// The configured spreading's prediction.
    pub prediction: Prediction,
    /// Why it is uneven (with `--explain`).
    pub causes: Vec<Finding>,
    /// Every alternative the platform offers, best first.
    pub alternatives: Vec<Prediction>,
    /// The best alternative, when it beats the configured spreading.
    pub recommendation: Option<Suggestion>,
}

/// The whole answer.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Flows read.
    pub flows: usize,
    /// One entry per direction that has flows.
    pub directions: Vec<DirReport>,
}

/// Plans both directions: `out` spread by `host` (a bond: any spreading
/// lagkit knows), `in` by `switch`, which can be set to what
/// `switch_platform` offers.
pub fn plan(
    flows: &[Flow],
    host: &EndConfig,
    switch: &EndConfig,
    want_explain: bool,
    switch_platform: &Platform,
) -> Report {
    let mut directions = Vec::new();
    for dir in Dir::BOTH {
        let (end, name, platform) = match dir {
            Dir::Out => (host, "host bond", &Platform::Any),
            Dir::In => (switch, "switch", switch_platform),
        };
        if !flows.iter().any(|f| f.dir == dir) {
            continue;
        }
        let choose = Chooser::new(flows, dir, end);
        let prediction = predict_with(flows, dir, end, &choose);
        let alternatives = alternatives(flows, dir, end.links, end.rate_bps, platform);
        let causes = if want_explain {
            explain_with(flows, dir, end, &prediction, &choose)
                .into_iter()
                .map(|c| Finding {
                    text: c.to_string(),
                    fix: c.fix_on(platform, &prediction, alternatives.first()),
                    cause: c,
                })
                .collect()
        } else {
            Vec::new()
        };
        let recommendation = platform.suggest(&prediction, alternatives.first());
        directions.push(DirReport {
            end: name,
            platform: platform.name(),
            prediction,
            causes,
            alternatives,
            recommendation,
        });
    }
    Report {
        flows: flows.len(),
        directions,
    }
}

fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else {
        format!("{:.1} Mbit/s", bps / 1e6)
    }
}

fn shares(p: &Prediction) -> String {
    p.links
        .iter()
        .map(|l| format!("{:.2}", l.share))
        .collect::<Vec<_>>()
        .join("/")
}

impl Report {
    /// The table a person reads.
    pub fn text(&self, top: usize) -> String {
        let mut o = String::new();
        if self.directions.is_empty() {
            let _ = writeln!(o, "no flows to plan");
        }
        for d in &self.directions {
            let p = &d.prediction;
            let _ = writeln!(
                o,
                "{} ({} spreads it with {}{}): {} flows, {} links",
                p.dir.name(),
                d.end,
                p.spread,
                if d.platform == Platform::Any.name() {
                    String::new()
                } else {
                    format!("; a {}: only its methods are ranked", d.platform)
                },
                p.flows,
                p.links.len()
            );
            let _ = writeln!(
                o,
                "  predicted {} of {} = {:.2} of capacity ({:.2} of what these flows could get from these links)",
                rate(p.throughput_bps),
                rate(p.capacity_bps),
                p.of_capacity,
                p.of_ideal
            );
            let _ = writeln!(
                o,
                "  {:>4} {:>9} {:>16} {:>7} {:>14}",
                "link", "flows", "bytes", "share", "predicted"
            );
            for l in &p.links {
                let _ = writeln!(
                    o,
                    "  {:>4} {:>9} {:>16} {:>7.3} {:>14}",
                    l.link,
                    l.flows,
                    l.bytes,
                    l.share,
                    rate(l.throughput_bps)
                );
            }
            let _ = writeln!(
                o,
                "  balance ratio (link 1's share of bytes) {:.2}; busiest link / mean {:.2}",
                p.first_link_share, p.max_over_mean
            );
            if !d.causes.is_empty() {
                let _ = writeln!(o, "  why:");
                for c in &d.causes {
                    let _ = writeln!(o, "    - {}", c.text);
                    let _ = writeln!(o, "      fix: {}", c.fix);
                }
            }
            let _ = writeln!(
                o,
                "  alternatives, best first (shares per link, predicted of capacity):"
            );
            for a in d.alternatives.iter().take(top) {
                let mark = if a.spread == p.spread {
                    "  <- configured"
                } else {
                    ""
                };
                let _ = writeln!(
                    o,
                    "    {:<24} {:<28} {:.2}{mark}",
                    a.spread,
                    shares(a),
                    a.of_capacity
                );
            }
            if d.alternatives.len() > top {
                let _ = writeln!(o, "    ... {} more (--top N)", d.alternatives.len() - top);
            }
            if let Some(r) = &d.recommendation {
                let _ = writeln!(
                    o,
                    "  recommendation: {} ({:.2} of capacity instead of {:.2})",
                    r.say(),
                    r.of_capacity,
                    p.of_capacity
                );
            }
        }
        o
    }

    /// Per-link shares of each configuration as SVG bar charts, one per
    /// direction: `(file name, SVG text)`. The alternatives are numbered
    /// along the x axis, best first, and the legend names them; a dashed
    /// line marks the even share.
    pub fn svgs(&self, top: usize) -> Result<Vec<(String, String)>, lagkit_chart::ChartError> {
        let mut charts = Vec::new();
        for d in &self.directions {
            let n = d.prediction.links.len();
            let even = (n > 0).then(|| 1.0 / n as f64);
            let shown: Vec<&Prediction> = d.alternatives.iter().take(top).collect();
            let chart = lagkit_chart::BarChart {
                title: format!(
                    "{} ({}): share of bytes per link, per configuration",
                    d.prediction.dir.name(),
                    d.end
                ),
                note: Some(format!(
                    "{} flows over {n} links; configured: {}",
                    d.prediction.flows, d.prediction.spread
                )),
                x_label: "configuration (best first)".into(),
                y_label: "share of bytes".into(),
                series: (1..=n).map(|l| format!("link {l}")).collect(),
                groups: shown
                    .iter()
                    .enumerate()
                    .map(|(i, a)| lagkit_chart::Group {
                        label: (i + 1).to_string(),
                        bars: a
                            .links
                            .iter()
                            .map(|l| lagkit_chart::Bar::value(l.share).with_reference(even))
                            .collect(),
                    })
                    .collect(),
                reference: Some("even share: 1 / links".into()),
                legend: shown
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let mark = if a.spread == d.prediction.spread {
                            " (configured)"
                        } else {
                            ""
                        };
                        (
                            (i + 1).to_string(),
                            format!("{}{mark}: {:.2} of capacity", a.spread, a.of_capacity),
                        )
                    })
                    .collect(),
            };
            charts.push((
                format!("plan-{}.svg", d.prediction.dir.name()),
                chart.svg()?,
            ));
        }
        Ok(charts)
    }
}
