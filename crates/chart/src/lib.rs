//! Grouped bar charts as plain SVG text, shared by the lab's reports and
//! the planner: no plotting or font libraries, viewable in any browser.
//!
//! Not `plotters` (0.3, with only its `svg_backend` feature): it would draw
//! the same bars, axes and legend, but not the `<title>` on each bar that
//! shows its series and value on hover, and without its `ttf` feature
//! (font-kit and system fonts) it places text by estimated widths. For
//! one 100-line function the swap would change every report's SVG and add
//! a drawing library for no better chart; the HTML reports planned next
//! are the place to choose chart tooling.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

const COLORS: [&str; 4] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" axis maximum ≥ `v` (1, 2 or 5 × 10^n).
fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= v {
            return m * p;
        }
    }
    10.0 * p
}

/// A bar chart: one group per category, one bar per series in each.
pub fn bar_chart(
    title: &str,
    y_label: &str,
    series: &[&str],
    bars: &[(String, Vec<f64>)],
) -> String {
    let ns = series.len().max(1);
    let group_w = (18 * ns + 14).max(48) as f64;
    let (left, right, top, bottom) = (70.0, 20.0, 50.0, 110.0);
    let plot_w = (group_w * bars.len().max(1) as f64).max(300.0);
    let plot_h = 300.0;
    let (w, h) = (left + plot_w + right, top + plot_h + bottom);
    let max = nice_max(
        bars.iter()
            .flat_map(|(_, v)| v.iter().copied())
            .fold(0.0, f64::max),
    );
    let y = |v: f64| top + plot_h - plot_h * (v / max).clamp(0.0, 1.0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{:.0}" y="22" font-size="14" text-anchor="middle">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    for i in 0..=5 {
        let v = max * i as f64 / 5.0;
        let yy = y(v);
        let _ = writeln!(
            o,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.0}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            if max >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="16" y="{:.0}" transform="rotate(-90 16 {:.0})" text-anchor="middle">{}</text>"#,
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(y_label)
    );
    for (gi, (label, vals)) in bars.iter().enumerate() {
        let gx = left + gi as f64 * group_w + 7.0;
        for (si, v) in vals.iter().enumerate() {
            let x = gx + si as f64 * 18.0;
            let yy = y(*v);
            let _ = writeln!(
                o,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="16" height="{:.1}" fill="{}"><title>{}: {v:.2}</title></rect>"#,
                top + plot_h - yy,
                COLORS[si % COLORS.len()],
                esc(series.get(si).copied().unwrap_or(""))
            );
        }
        let cx = gx + (18 * vals.len().max(1)) as f64 / 2.0;
        let ly = top + plot_h + 12.0;
        let _ = writeln!(
            o,
            r#"<text x="{cx:.1}" y="{ly:.1}" transform="rotate(45 {cx:.1} {ly:.1})">{}</text>"#,
            esc(label)
        );
    }
    let _ = writeln!(
        o,
        r#"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        top + plot_h,
        left + plot_w,
        top + plot_h
    );
    if series.len() > 1 {
        for (si, s) in series.iter().enumerate() {
            let x = left + 10.0 + si as f64 * 110.0;
            let _ = writeln!(
                o,
                r#"<rect x="{x:.0}" y="32" width="10" height="10" fill="{}"/><text x="{:.0}" y="41">{}</text>"#,
                COLORS[si % COLORS.len()],
                x + 14.0,
                esc(s)
            );
        }
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_is_svg_with_one_rect_per_bar() {
        let s = bar_chart(
            "t <1>",
            "MB",
            &["tx", "rx"],
            &[
                ("h1/e1".into(), vec![1.0, 2.0]),
                ("h1/e2".into(), vec![3.0, 0.5]),
            ],
        );
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<title>").count(), 4);
        assert!(s.contains("t &lt;1&gt;"));
        assert_eq!(nice_max(3.2), 5.0);
        assert_eq!(nice_max(380.0), 500.0);
    }
}
