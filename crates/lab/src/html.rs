//! A report as one self-contained HTML page: the findings, the runs'
//! table, what the configuration codes mean, the command, machine and
//! scale, and every chart as inline SVG. No script, no stylesheet or font
//! from elsewhere: the file reads the same offline and attached to a mail.
//!
//! Built as escaped strings (`html-escape` on every text and attribute
//! value), which for one page of tables is plainer than a template
//! engine.

use crate::charts;
use crate::report::{Report, RunRecord, LIMIT};
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use std::fmt::Write as _;

/// The page's style: readable printed and on a screen, no web fonts.
const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em auto;max-width:75em;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
.wide{overflow-x:auto}
table.runs td{white-space:nowrap}
table.runs td:nth-child(2){white-space:normal;min-width:14em}
table.runs td.flags{white-space:normal;max-width:18em}
table.runs td.flags:not(:empty){min-width:10em}
.flag{display:inline-block;margin:0 .2em .2em 0;padding:0 .4em;border-radius:.6em;background:#fde8c8;color:#6b3d00;font-size:.9em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.failed td{background:#fbe3e0}
tr.notformed td{background:#eee}
.holds{color:#1d6f2a;font-weight:bold}
.notmet{color:#b02a1c;font-weight:bold}
.info{color:#555;font-weight:bold}
.meta{color:#444;margin:.2em 0}
code{background:#f4f4f4;padding:0 .2em}
figure{margin:.5em 0}
figure svg{max-width:100%;height:auto;border:1px solid #ddd}
.links{display:flex;flex-wrap:wrap;gap:1em}
.links figure svg{max-width:36em}
";

/// What the letters of a configuration code stand for.
const CODES: &[(&str, &str)] = &[
    ("App", "i iperf3; e/s/p socketprocs (epoll, select, poll); ns stream (server receives), nm maerts (server transmits), nb both ways, nr request/reply; l partition migrations"),
    ("Procs", "flows or processes of the workload"),
    ("Switch", "load balance - protocol - port mode: p L4 ports, i L3 IP, m L2 MAC; L LACP, P PAgP, M static, N none; v active, s passive, d desirable, ds desirable silent, u/us auto, o on, n none; - no switch"),
    ("Server", "bond mode - hash: 8d 802.3ad, sd balance-xor, rn round-robin, ab active-backup, ad adaptive, tl/al tlb/alb, bc broadcast; st layer3+4 (AIX src_dst_port), sp/dp src_port/dst_port, l2 layer2, l3 layer2+3, sg strong, en encap"),
    ("Engine", "the host bonds' engine (auto, bpf, userspace)"),
    ("MTU", "S ≤ 1500, J jumbo, P set in only some places"),
    ("Links", "links per bond × shaped rate"),
];

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}"))
}

/// A `<td>` with the number class.
fn num(o: &mut String, v: &str) {
    let _ = write!(o, "<td class=\"n\">{}</td>", text(v));
}

fn cell(o: &mut String, v: &str) {
    let _ = write!(o, "<td>{}</td>", text(v));
}

/// The flags cell: each flag a badge, so that a run's warnings stand out
/// beside its configuration, never scrolled out of sight in a wide table.
fn flags(o: &mut String, words: &[String]) {
    o.push_str("<td class=\"flags\">");
    for w in words {
        let _ = write!(o, "<span class=\"flag\">{}</span> ", text(w));
    }
    o.push_str("</td>");
}

/// A chart as an inline figure, or a line saying why it is missing.
fn figure(o: &mut String, id: &str, chart: &lagkit_chart::BarChart) {
    match chart.svg() {
        Ok(svg) => {
            let _ = writeln!(
                o,
                "<figure id=\"{}\" class=\"chart\">{}</figure>",
                attr(id),
                svg.trim()
            );
        }
        Err(e) => {
            let _ = writeln!(o, "<p class=\"notmet\">{}</p>", text(&e.to_string()));
        }
    }
}

fn row_class(r: &RunRecord) -> &'static str {
    if r.error.is_some() {
        " class=\"failed\""
    } else if r
        .formation
        .as_ref()
        .is_some_and(|f| f.not_formed_as_expected())
    {
        " class=\"notformed\""
    } else {
        ""
    }
}

impl Report {
    /// The report as one HTML page.
    pub fn html(&self) -> String {
        let mut o = String::new();
        let title = format!("lagkit lab report: {}", self.title);
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
            t = text(&title)
        );
        for line in [self.scale_line(), self.machine_line()] {
            let _ = writeln!(o, "<p class=\"meta\">{}</p>", text(&line));
        }
        if let Some(c) = &self.command {
            let _ = writeln!(o, "<p class=\"meta\">command: <code>{}</code></p>", text(c));
        }
        self.html_findings(&mut o);
        o.push_str("<h2 id=\"goodput\">Goodput per configuration</h2>\n");
        figure(&mut o, "chart-mbps", &charts::mbps(self));
        self.html_runs(&mut o);
        o.push_str("<h2 id=\"codes\">Configuration codes</h2>\n<table class=\"codes\">\n");
        for (col, meaning) in CODES {
            let _ = writeln!(
                o,
                "<tr><th>{}</th><td>{}</td></tr>",
                text(col),
                text(meaning)
            );
        }
        o.push_str("</table>\n");
        self.html_notes(&mut o);
        let measured: Vec<_> = self
            .runs
            .iter()
            .filter_map(|r| charts::links(self, r).map(|c| (r.run, c)))
            .collect();
        if !measured.is_empty() {
            o.push_str("<h2 id=\"links\">Bytes per link</h2>\n<div class=\"links\">\n");
            for (run, c) in &measured {
                figure(&mut o, &format!("chart-links-run{run}"), c);
            }
            o.push_str("</div>\n");
        }
        o.push_str("</body>\n</html>\n");
        o
    }

    fn html_findings(&self, o: &mut String) {
        if self.findings.is_empty() {
            return;
        }
        o.push_str(
            "<h2 id=\"findings\">Findings</h2>\n\
             <p>The original measurements' findings, checked on these runs.</p>\n\
             <table class=\"findings\">\n<tr><th>result</th><th>finding</th><th>measured</th></tr>\n",
        );
        for f in &self.findings {
            let (class, word) = match f.holds {
                Some(true) => ("holds", "holds"),
                Some(false) => ("notmet", "not met"),
                None => ("info", "info"),
            };
            let _ = writeln!(
                o,
                "<tr><td class=\"{class}\">{word}</td><td>{}</td><td>{}</td></tr>",
                text(&f.claim),
                text(&f.measured)
            );
        }
        o.push_str("</table>\n");
    }

    fn html_runs(&self, o: &mut String) {
        let hosts = self.bond_hosts();
        let trans = self.runs.iter().any(|r| {
            r.workload
                .as_ref()
                .is_some_and(|w| w.transactions_per_s > 0.0)
        });
        o.push_str("<h2 id=\"runs\">Runs</h2>\n<div class=\"wide\"><table class=\"runs\">\n<tr>");
        let mut head: Vec<String> = [
            "Run",
            "Configuration",
            "Flags",
            "App",
            "Procs",
            "Switch",
            "Server",
            "Engine",
            "MTU",
            "Links",
            "usr%",
            "sys%",
            "idle%",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for h in &hosts {
            head.push(format!("{h} tx"));
            head.push(format!("{h} rx"));
        }
        head.extend(["Mbit/s".into(), "limit".into()]);
        if trans {
            head.push("Trans/s".into());
        }
        head.extend(["OOO/s".into(), "Retr/s".into()]);
        for h in &head {
            let _ = write!(o, "<th>{}</th>", text(h));
        }
        o.push_str("</tr>\n");
        for r in &self.runs {
            let c = &r.code;
            let _ = write!(o, "<tr{}>", row_class(r));
            num(o, &r.run.to_string());
            let what = match (r.key.is_empty(), r.label.is_empty()) {
                (false, false) => format!("{}: {}", r.key, r.label),
                (false, true) => r.key.clone(),
                _ => r.label.clone(),
            };
            cell(o, &what);
            flags(o, &r.flag_words());
            cell(o, &c.app);
            num(o, &c.procs.to_string());
            cell(o, &c.switch);
            cell(o, &c.server);
            cell(o, if c.engine.is_empty() { "-" } else { &c.engine });
            cell(o, &c.mtu);
            cell(o, &c.links);
            match &r.measurement {
                Some(m) => {
                    for v in [m.cpu.user_pct, m.cpu.sys_pct, m.cpu.headroom_pct] {
                        num(o, &format!("{v:.1}"));
                    }
                    for h in &hosts {
                        let b = m.bonds.iter().find(|b| &b.host == h);
                        num(o, &ratio(b.and_then(|b| b.tx_ratio)));
                        num(o, &ratio(b.and_then(|b| b.rx_ratio)));
                    }
                }
                None => {
                    for _ in 0..3 + 2 * hosts.len() {
                        num(o, "-");
                    }
                }
            }
            let mbps = r.workload.as_ref().map(|w| w.mbps);
            num(o, &mbps.map_or("-".into(), |x| format!("{x:.1}")));
            num(o, &r.limit_words());
            if trans {
                let t = r.workload.as_ref().map(|w| w.transactions_per_s);
                num(o, &t.map_or("-".into(), |x| format!("{x:.0}")));
            }
            let m = r.measurement.as_ref();
            num(
                o,
                &m.map_or("-".into(), |m| format!("{:.1}", m.out_of_order_per_s)),
            );
            num(
                o,
                &m.map_or("-".into(), |m| format!("{:.1}", m.retransmits_per_s)),
            );
            o.push_str("</tr>\n");
        }
        o.push_str("</table></div>\n");
        let mut foot = String::from(
            "Mbit/s: workload goodput, transmit plus receive; \
             tx/rx: balance ratio (share of packets through the bond's first member, 0.50 = even); \
             OOO/s: TCP segments queued out of order (TcpExt TCPOFOQueue), all hosts; Retr/s: Tcp RetransSegs.",
        );
        foot.push(' ');
        foot.push_str(LIMIT);
        foot.push('.');
        if trans {
            foot.push_str(" Trans/s: request/reply transactions per second, all clients.");
        }
        let _ = writeln!(o, "<p>{}</p>", text(&foot));
    }

    fn html_notes(&self, o: &mut String) {
        let mut items = Vec::new();
        for r in &self.runs {
            for sw in &r.switches {
                let cores = r
                    .measurement
                    .as_ref()
                    .and_then(|m| m.switch_cpu.iter().find(|c| c.switch == sw.name))
                    .map_or(String::new(), |c| format!(", {:.2} cores busy", c.cores));
                let what = match sw.kind {
                    crate::topology::SwitchKind::Lagkit => "lagkit switch",
                    crate::topology::SwitchKind::Ovs => "Open vSwitch",
                };
                items.push(format!(
                    "run {}: switch {}: {what}, {}{cores}",
                    r.run, sw.name, sw.method
                ));
            }
            for line in r.notes() {
                items.push(format!("run {}: {line}", r.run));
            }
            if let Some(e) = &r.error {
                items.push(format!("run {}: failed: {e}", r.run));
            }
            if let Some(f) = r.formation.as_ref().filter(|f| !f.why.is_empty()) {
                items.push(format!("run {}: formation: {}", r.run, f.why.join("; ")));
            }
        }
        if items.is_empty() {
            return;
        }
        o.push_str("<h2 id=\"notes\">Notes per run</h2>\n<ul>\n");
        for i in items {
            let _ = writeln!(o, "<li>{}</li>", text(&i));
        }
        o.push_str("</ul>\n");
    }
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
    fn the_page_holds_tables_findings_and_every_chart() {
        let mut r = recorded("ibm-6513");
        r.runs[0].label = "<b>&".into();
        let h = r.html();
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert_eq!(h.matches("<table").count(), 3, "findings, runs, codes");
        let measured = r.runs.iter().filter(|x| x.measurement.is_some()).count();
        assert_eq!(h.matches("<svg").count(), 1 + measured);
        assert_eq!(h.matches("</svg>").count(), 1 + measured);
        assert!(h.contains("class=\"notmet\"") || h.contains("class=\"holds\""));
        assert!(h.contains("&lt;b&gt;&amp;"), "labels are escaped");
        assert!(!h.contains("<b>&"));
        assert!(h.contains("command: <code>"));
        // Nothing is fetched: no script, no link, no URL but the SVG
        // namespace.
        assert!(!h.contains("<script") && !h.contains("<link"));
        let urls = h.matches("http").count();
        assert_eq!(urls, h.matches("http://www.w3.org/2000/svg").count());
    }
}
