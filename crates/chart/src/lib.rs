//! Grouped bar charts as SVG, drawn with `plotters`, shared by the lab's
//! reports and the planner.
//!
//! A chart is data first ([`BarChart`]): groups along the x axis, one bar
//! per series in each, an optional reference value per bar (the links'
//! capacity, an even share) drawn as a dashed line across it, and a legend that says what the x labels
//! stand for. A bar with no value is never drawn as zero: it carries a
//! mark ("failed", "not formed") written where the bar would be.
//!
//! Only plotters' SVG backend is used: text goes out as SVG `<text>` and
//! is laid out with plotters' own size estimate, so no font library or
//! system font is needed to draw, and any browser renders the glyphs.

#![forbid(unsafe_code)]

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The series' colours (colour-blind safe, Tableau 10's first ones).
const COLORS: [RGBColor; 6] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
];
/// The reference line's colour.
const REFERENCE: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// A failed bar's mark.
const FAILED: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
/// Any other mark.
const MARKED: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The mark text of a bar whose run failed.
pub const MARK_FAILED: &str = "failed";

/// What could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// plotters refused an element (its message).
    #[error("drawing the chart: {0}")]
    Draw(String),
}

/// One bar: a value, a mark instead of (or beside) it, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bar {
    /// The value, if there is one.
    pub value: Option<f64>,
    /// A word or two written at the bar ("failed", "not formed").
    pub mark: Option<String>,
    /// The reference value at this bar (a capacity), if any.
    pub reference: Option<f64>,
}

impl Bar {
    /// A plain value.
    pub fn value(v: f64) -> Bar {
        Bar {
            value: Some(v),
            ..Bar::default()
        }
    }

    /// A mark, with the value if one was measured all the same.
    pub fn marked(mark: &str, value: Option<f64>) -> Bar {
        Bar {
            value,
            mark: Some(mark.to_string()),
            reference: None,
        }
    }

    /// The same bar with a reference value.
    pub fn with_reference(mut self, r: Option<f64>) -> Bar {
        self.reference = r;
        self
    }
}

/// One x position: a bar per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The x label (short: a run number, a link count).
    pub label: String,
    /// One bar per series, in the chart's series order.
    pub bars: Vec<Bar>,
}

/// A grouped bar chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BarChart {
    /// Title.
    pub title: String,
    /// A line under the title (what the rates stand for).
    pub note: Option<String>,
    /// What the x labels are.
    pub x_label: String,
    /// The y axis' unit.
    pub y_label: String,
    /// The series' names; an empty name is left out of the legend.
    pub series: Vec<String>,
    /// The groups, left to right.
    pub groups: Vec<Group>,
    /// What the reference line is, for the legend.
    pub reference: Option<String>,
    /// What the x labels stand for: `(label, meaning)`.
    pub legend: Vec<(String, String)>,
}

/// The y axis of data that reaches `max`: `(top, step)`, with a step of
/// 1, 2, 2.5 or 5 × 10^n giving about five ticks and the top the first
/// step at or above `max`.
pub fn axis(max: f64) -> (f64, f64) {
    if !max.is_finite() || max <= 0.0 {
        return (1.0, 0.2);
    }
    let raw = max / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * p);
    let mut top = (max / step - 1e-9).ceil() * step;
    if top < max {
        top += step;
    }
    (top, step)
}

/// Decimals that show every multiple of `step` exactly.
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|d| {
            let x = step * 10f64.powi(*d as i32);
            (x - x.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// Text sizes in pixels, and the legend's line height.
const TITLE: f64 = 16.0;
const SMALL: f64 = 13.0;
const MARK: f64 = 12.0;
const LINE: u32 = 18;
/// The size [`wrap`] assumes for `SMALL` text: its estimate is generous
/// for a whole line of words.
const WRAP: f64 = 11.5;
/// The narrowest chart, and the width at which text wraps.
const MIN_WIDTH: u32 = 640;

/// Pixels a string of `chars` takes at `size` px (a generous estimate for
/// sans-serif, so a label is not cut at the right edge).
fn text_px(chars: usize, size: f64) -> u32 {
    (chars as f64 * size * 0.58).ceil() as u32
}

/// A font of `px` pixels. plotters writes an SVG font size of its size
/// over 1.24, so it is asked for 1.24 × the pixels meant.
fn font(px: f64, color: RGBColor) -> TextStyle<'static> {
    ("sans-serif", px * 1.24).into_font().color(&color)
}

/// `text` in lines of at most `px` pixels at `size`, broken at spaces.
fn wrap(text: &str, px: u32, size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let n = line.chars().count() + 1 + word.chars().count();
        if !line.is_empty() && text_px(n, size) > px {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn draw_err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Draw(e.to_string())
}

/// A linear axis whose ticks are given: the group centres along x, the
/// steps of [`axis`] along y (plotters' own f64 axis picks its ticks).
#[derive(Debug, Clone)]
struct Ticked {
    range: (f64, f64),
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = self.range;
        let r = if b > a { (v - a) / (b - a) } else { 0.0 };
        limit.0 + ((limit.1 - limit.0) as f64 * r).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: no light grid between the ticks.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.0..self.range.1
    }
}

impl BarChart {
    /// The largest value and reference drawn.
    fn data_max(&self) -> f64 {
        self.groups
            .iter()
            .flat_map(|g| {
                g.bars
                    .iter()
                    .flat_map(|b| b.value.into_iter().chain(b.reference))
            })
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    }

    /// The legend's lines below the chart: `(swatch, text)`.
    fn legend_rows(&self) -> Vec<(Option<RGBColor>, String)> {
        let mut rows = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            if !s.is_empty() && self.series.len() > 1 {
                rows.push((Some(COLORS[i % COLORS.len()]), s.clone()));
            }
        }
        if let Some(r) = &self.reference {
            rows.push((Some(REFERENCE), format!("— {r}")));
        }
        for (code, meaning) in &self.legend {
            rows.push((None, format!("{code}: {meaning}")));
        }
        rows
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, ChartError> {
        let n = self.groups.len().max(1);
        let ns = self
            .series
            .len()
            .max(self.groups.iter().map(|g| g.bars.len()).max().unwrap_or(1))
            .max(1);
        let label_chars = self
            .groups
            .iter()
            .map(|g| g.label.chars().count())
            .max()
            .unwrap_or(1);
        let slot = (ns as u32 * 20 + 14)
            .max(text_px(label_chars, SMALL) + 10)
            .max(30);
        let (left, right) = (84u32, 24u32);
        let w = (left + slot * n as u32 + right).max(MIN_WIDTH);
        // Long notes and legend lines wrap to the chart's width.
        let room = w.saturating_sub(50);
        let note: Vec<String> = self
            .note
            .as_deref()
            .map_or(Vec::new(), |t| wrap(t, room, WRAP));
        let rows: Vec<(Option<RGBColor>, bool, String)> = self
            .legend_rows()
            .into_iter()
            .flat_map(|(swatch, t)| {
                wrap(&t, room, WRAP)
                    .into_iter()
                    .enumerate()
                    .map(move |(i, line)| (swatch.filter(|_| i == 0), i == 0, line))
            })
            .collect();
        let head_h = 34 + note.len() as u32 * LINE;
        let chart_h = 340u32;
        let legend_h = if rows.is_empty() {
            0
        } else {
            rows.len() as u32 * LINE + 16
        };
        let h = head_h + chart_h + legend_h;
        // A little headroom, so a bar or line at the maximum is not drawn
        // on the frame.
        let (top, step) = axis(self.data_max() * 1.04);
        let ticks: Vec<f64> = (0..)
            .map(|i| i as f64 * step)
            .take_while(|t| *t <= top + step * 1e-6)
            .collect();
        let dec = decimals(step);

        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
            root.fill(&WHITE).map_err(draw_err)?;
            let (head, rest) = root.split_vertically(head_h);
            let (plot, legend) = rest.split_vertically(chart_h);
            head.draw(&Text::new(self.title.as_str(), (10, 8), font(TITLE, BLACK)))
                .map_err(draw_err)?;
            for (i, line) in note.iter().enumerate() {
                let y = 32 + i as i32 * LINE as i32;
                head.draw(&Text::new(line.as_str(), (10, y), font(SMALL, MARKED)))
                    .map_err(draw_err)?;
            }

            let centers: Vec<f64> = (0..self.groups.len()).map(|i| i as f64 + 0.5).collect();
            let x = Ticked {
                range: (0.0, n as f64),
                ticks: centers,
            };
            let y = Ticked {
                range: (0.0, top),
                ticks,
            };
            let mut chart = ChartBuilder::on(&plot)
                .margin_right(right)
                .margin_top(10)
                .x_label_area_size(48)
                .y_label_area_size(left - 8)
                .build_cartesian_2d(x, y)
                .map_err(draw_err)?;
            let labels: Vec<&str> = self.groups.iter().map(|g| g.label.as_str()).collect();
            let x_fmt = |v: &f64| {
                labels
                    .get(v.floor().max(0.0) as usize)
                    .map_or(String::new(), |s| s.to_string())
            };
            let y_fmt = |v: &f64| format!("{v:.dec$}");
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(self.groups.len().max(1))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .x_desc(self.x_label.as_str())
                .y_desc(self.y_label.as_str())
                .light_line_style(WHITE)
                .bold_line_style(RGBColor(0xe0, 0xe0, 0xe0))
                .label_style(font(SMALL, BLACK))
                .axis_desc_style(font(SMALL, BLACK))
                .draw()
                .map_err(draw_err)?;
            self.draw_bars(&mut chart, ns, top)?;

            for (i, (swatch, first, t)) in rows.iter().enumerate() {
                let y = 10 + i as i32 * LINE as i32;
                match swatch {
                    Some(c) if t.starts_with('—') => legend
                        .draw(&PathElement::new(
                            vec![(10, y + 8), (28, y + 8)],
                            c.stroke_width(2),
                        ))
                        .map_err(draw_err)?,
                    Some(c) => legend
                        .draw(&Rectangle::new([(12, y + 2), (24, y + 14)], c.filled()))
                        .map_err(draw_err)?,
                    None => {}
                }
                let t = t.trim_start_matches("— ");
                let x = if *first { 34 } else { 46 };
                legend
                    .draw(&Text::new(t, (x, y), font(SMALL, BLACK)))
                    .map_err(draw_err)?;
            }
            root.present().map_err(draw_err)?;
        }
        Ok(out)
    }

    fn draw_bars<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<Ticked, Ticked>>,
        ns: usize,
        top: f64,
    ) -> Result<(), ChartError> {
        let inner = 0.8;
        let bw = inner / ns as f64;
        for (gi, g) in self.groups.iter().enumerate() {
            let x0 = gi as f64 + (1.0 - inner) / 2.0;
            for (si, b) in g.bars.iter().enumerate() {
                let (a, z) = (x0 + si as f64 * bw, x0 + (si as f64 + 0.9) * bw);
                let color = COLORS[si % COLORS.len()];
                let v = b.value.filter(|v| v.is_finite()).map(|v| v.clamp(0.0, top));
                match v {
                    Some(v) => chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a, 0.0), (z, v)],
                            color.filled(),
                        )))
                        .map(|_| ())
                        .map_err(draw_err)?,
                    None => chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a, 0.0), (z, top * 0.03)],
                            MARKED.stroke_width(1),
                        )))
                        .map(|_| ())
                        .map_err(draw_err)?,
                }
                if let Some(r) = b.reference.filter(|r| r.is_finite() && *r > 0.0) {
                    let (pad, r) = (0.1 * bw, r.min(top));
                    chart
                        .draw_series(std::iter::once(DashedPathElement::new(
                            vec![(a - pad, r), (z + pad, r)],
                            5,
                            3,
                            REFERENCE.stroke_width(2),
                        )))
                        .map(|_| ())
                        .map_err(draw_err)?;
                }
                let mark = match (&b.mark, v) {
                    (Some(m), _) => m.as_str(),
                    (None, None) => "no data",
                    (None, Some(_)) => continue,
                };
                // Written upwards from just above the bar (or the empty
                // slot); inside the bar, in white, when there is no room
                // above it.
                let base = v.unwrap_or(top * 0.03);
                let est = text_px(mark.chars().count(), MARK) as f64;
                let above = (top - base) / top * 280.0 > est + 10.0;
                let (at, c) = match (above, mark == MARK_FAILED) {
                    (true, true) => (base, FAILED),
                    (true, false) => (base, MARKED),
                    (false, _) => (0.0, WHITE),
                };
                let style = font(MARK, c)
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Left, VPos::Center));
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(((a + z) / 2.0, at))
                            + Text::new(mark.to_string(), (0, -4), style),
                    ))
                    .map(|_| ())
                    .map_err(draw_err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BarChart {
        BarChart {
            title: "t <1>".into(),
            note: Some("25 Mbit/s stand for 1 Gbit/s (factor 40)".into()),
            x_label: "run".into(),
            y_label: "Mbit/s".into(),
            series: vec!["Mbit/s".into()],
            groups: vec![
                Group {
                    label: "1".into(),
                    bars: vec![Bar::value(118.0).with_reference(Some(100.0))],
                },
                Group {
                    label: "2".into(),
                    bars: vec![Bar::marked(MARK_FAILED, None).with_reference(Some(100.0))],
                },
                Group {
                    label: "3".into(),
                    bars: vec![Bar::marked("not formed", None)],
                },
            ],
            reference: Some("capacity: links × rate".into()),
            legend: vec![
                ("1".into(), "l2: LACP, switch L3".into()),
                ("2".into(), "l4: LACP, switch L4".into()),
                ("3".into(), "pagp-u-xor: PAgP auto".into()),
            ],
        }
    }

    /// The texts of the SVG's `<text>` elements.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn the_axis_ends_within_a_step_of_the_data() {
        for max in [0.37, 1.0, 3.2, 24.0, 120.0, 191.2, 377.6, 1e6] {
            let (top, step) = axis(max);
            assert!(top >= max, "{max}: top {top}");
            assert!(top - max < step, "{max}: top {top} step {step}");
            let ticks = top / step;
            assert!(
                (4.0..=10.0).contains(&ticks.round()),
                "{max}: {ticks} ticks"
            );
        }
        // Bytes that end at 120 MB no longer get an axis to 200.
        assert_eq!(axis(120.0), (125.0, 25.0));
        assert_eq!(axis(0.0), (1.0, 0.2));
        assert_eq!(axis(f64::NAN), (1.0, 0.2));
    }

    #[test]
    fn the_svg_is_escaped_and_labelled() {
        let s = sample().svg().unwrap();
        assert!(s.starts_with("<svg"), "{s}");
        assert!(s.trim_end().ends_with("</svg>"));
        let t = texts(&s);
        assert!(t.contains(&"t &lt;1&gt;".to_string()), "{t:?}");
        assert!(t.iter().any(|x| x.contains("factor 40")), "{t:?}");
        // The axis reaches 125 for 118: ticks of 25.
        assert!(t.contains(&"125".to_string()), "{t:?}");
        assert!(!t.contains(&"200".to_string()), "{t:?}");
    }

    #[test]
    fn failed_and_not_formed_bars_are_marked_not_zero() {
        let s = sample().svg().unwrap();
        let t = texts(&s);
        assert_eq!(t.iter().filter(|x| *x == MARK_FAILED).count(), 1, "{t:?}");
        assert_eq!(t.iter().filter(|x| *x == "not formed").count(), 1, "{t:?}");
        // A bar without value or mark says so.
        let mut c = sample();
        c.groups[0].bars[0] = Bar::default();
        assert!(texts(&c.svg().unwrap()).contains(&"no data".to_string()));
    }

    #[test]
    fn the_legend_lists_every_code_and_the_capacity_line() {
        let c = sample();
        let s = c.svg().unwrap();
        let t = texts(&s);
        for (code, meaning) in &c.legend {
            let line = format!("{code}: {meaning}");
            assert!(t.contains(&line), "{line} not in {t:?}");
        }
        assert!(t.contains(&"capacity: links × rate".to_string()), "{t:?}");
        // One dashed segment per group with a reference: plotters draws
        // each dash as its own polyline, in the reference colour.
        assert!(s.contains("#202020"), "no capacity line in {s}");
    }

    #[test]
    fn empty_and_odd_data_draw_without_panicking() {
        let empty = BarChart::default().svg().unwrap();
        assert!(empty.starts_with("<svg"));
        let odd = BarChart {
            title: "x".repeat(300),
            note: Some("word ".repeat(200)),
            series: vec!["a".into()],
            groups: vec![Group {
                label: "g".into(),
                bars: vec![
                    Bar::value(f64::NAN).with_reference(Some(f64::INFINITY)),
                    Bar::value(-5.0),
                    Bar::value(1e300),
                ],
            }],
            ..BarChart::default()
        };
        let s = odd.svg().unwrap();
        assert!(s.trim_end().ends_with("</svg>"));
        // The long note wrapped into lines no wider than the chart.
        assert!(texts(&s).iter().filter(|t| t.starts_with("word")).count() > 5);
    }

    #[test]
    fn series_get_a_bar_each_and_a_legend() {
        let c = BarChart {
            title: "links".into(),
            series: vec!["transmitted".into(), "received".into()],
            groups: vec![Group {
                label: "h1/e1".into(),
                bars: vec![Bar::value(1.0), Bar::value(2.0)],
            }],
            ..BarChart::default()
        };
        let s = c.svg().unwrap();
        let t = texts(&s);
        assert!(t.contains(&"transmitted".to_string()) && t.contains(&"received".to_string()));
        assert!(s.contains("#4E79A7") || s.contains("#4e79a7"), "{s}");
        assert!(s.contains("#F28E2B") || s.contains("#f28e2b"), "{s}");
    }
}
