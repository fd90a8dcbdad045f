//! `lagkit plan`: how would a configuration spread this traffic?

use crate::bond_cmd::Failure;
use lagkit_planner::input::Host;
use lagkit_planner::predict::{EndConfig, Spread};
use lagkit_planner::Platform;
use std::path::PathBuf;

/// Options of `lagkit plan`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = crate::examples::PLAN)]
pub struct Args {
    /// The traffic: a flow list (.csv or .json: proto, src, sport, dst,
    /// dport, src_mac, dst_mac, vlan, bytes, rate, dir) or a pcap/pcapng
    /// capture (read as a stream); `-` reads standard input. A flow list
    /// is read up to 64 MiB; a capture cut short is planned from the
    /// packets before the cut, with a warning. Several files, a directory
    /// (every file under it) or a quoted glob are read on every core and
    /// planned as one traffic, the same flow in several files adding up,
    /// in a table of at most 2^19 flows.
    #[arg(required_unless_present = "lab")]
    traffic: Vec<PathBuf>,
    /// Plan a lab instead: a built-in scenario (`lagkit lab list`) or a
    /// topology file; each configuration's workload becomes flows and its
    /// bonds and switch channels the ends.
    #[arg(long, conflicts_with_all = ["traffic", "config", "host_hash", "switch_hash", "links", "rate", "host"])]
    lab: Option<String>,
    /// With --lab: its short sweep's configurations.
    #[arg(long, requires = "lab")]
    short: bool,
    /// With --lab: a `lagkit lab run` report (report.json) of the same
    /// scenario or file; its runs' recorded connections give the flows
    /// their ports, and predicted shares and goodput are printed beside
    /// the measured ones.
    #[arg(long, requires = "lab")]
    measured: Option<PathBuf>,
    /// The host bond's spreading, for flows it sends (`dir = out`): a
    /// transmit hash policy (layer3+4, src_dst_port, strong, ...) or a mode
    /// (balance-rr, active-backup, adaptive).
    #[arg(long, default_value = "layer2")]
    host_hash: String,
    /// Take the host's mode, hash policy and link count from a lagkit bond
    /// configuration instead (its first bond, or --bond).
    #[arg(long, conflicts_with = "host_hash")]
    config: Option<PathBuf>,
    /// The bond in --config.
    #[arg(long, requires = "config")]
    bond: Option<String>,
    /// The switch's spreading, for flows towards the host (`dir = in`):
    /// a Cisco load-balance method (src-dst-ip, src-dst-port, ...) or any
    /// policy lagkit knows.
    #[arg(long, default_value = "src-dst-ip")]
    switch_hash: String,
    /// The switch is a Cisco Catalyst: rank and suggest only the methods
    /// of its `port-channel load-balance` (src-mac, dst-mac, src-dst-mac,
    /// src-ip, dst-ip, src-dst-ip, src-port, dst-port, src-dst-port), each
    /// with the IOS line that sets it.
    #[arg(long)]
    cisco_switch: bool,
    /// The switch's IOS configuration (`show running-config`): a Catalyst
    /// whose `port-channel load-balance` method spreads what the host
    /// receives (the default lagkit's switch takes, src-dst-ip, without
    /// the line), whose channel's port count is the link count when it has
    /// one channel, and whose methods are the only ones ranked and
    /// suggested, as with --cisco-switch.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["switch_hash", "cisco_switch"])]
    switch_config: Option<PathBuf>,
    /// Links in the aggregate (default: the bond's members with --config, else 2).
    #[arg(long)]
    links: Option<usize>,
    /// Each link's rate in bit/s: 1g, 1gbit, 100M, 2.5g (a plain number
    /// is bit/s).
    #[arg(long, value_name = "RATE", default_value = "1g", value_parser = lagkit_units::rate_arg)]
    rate: u64,
    /// For captures: the bonded host's IP or MAC; frames from it are `out`,
    /// to it `in`, others are skipped. Without it every frame is `out`.
    #[arg(long)]
    host: Option<String>,
    /// How to read a capture: `auto` (flow exports when every one of its
    /// first UDP datagrams goes to a collector port, 2055, 9995, 9996,
    /// 4739 or 6343, with a NetFlow v1, v5, v7 or v9, IPFIX or sFlow v5
    /// version field; else the traffic itself), `packets` (the traffic
    /// itself), or `netflow` (v1, v5, v7, v9), `ipfix`, `sflow` (exports of
    /// that format on any port). Exported records are scaled by their
    /// sampling rate. Exports lagkit cannot read are named, and make the
    /// exit status 2.
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = ["auto", "packets", "netflow", "ipfix", "sflow"])]
    flow_format: String,
    /// Name the causes of an imbalance and what to change.
    #[arg(long)]
    explain: bool,
    /// How many alternatives to list.
    #[arg(long, default_value_t = 8)]
    top: usize,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write per-link share charts (plan-out.svg, plan-in.svg) into this directory.
    #[arg(long)]
    svg: Option<PathBuf>,
}

fn from_config(path: &PathBuf, bond: Option<&str>) -> Result<(Spread, usize), String> {
    let bonds = lagkit_bondcfg::parse_file(path).map_err(|e| e.to_string())?;
    let b = match bond {
        Some(n) => bonds.iter().find(|b| b.name == n).ok_or_else(|| {
            let names: Vec<&str> = bonds.iter().map(|b| b.name.as_str()).collect();
            format!(
                "{}: no bond {n:?}; it has {}",
                path.display(),
                names.join(", ")
            )
        })?,
        None => bonds
            .first()
            .ok_or_else(|| format!("{}: no bond in this file", path.display()))?,
    };
    let spread = lagkit_planner::lab::spread_of(b);
    Ok((spread, b.members.len()))
}

/// The switch's spreading, its platform and (from a configuration with one
/// channel) its link count: from --switch-config, else --switch-hash and
/// --cisco-switch.
fn switch_end(a: &Args) -> Result<(Spread, Platform, Option<usize>), Failure> {
    let Some(path) = &a.switch_config else {
        let spread = Spread::parse(&a.switch_hash)
            .map_err(|e| Failure::Usage(format!("--switch-hash: {e}")))?;
        let platform = if a.cisco_switch {
            Platform::catalyst()
        } else {
            Platform::Any
        };
        return Ok((spread, platform, None));
    };
    let text = lagkit_input::read_text(path, &lagkit_input::CONFIG)
        .map_err(|e| Failure::Usage(format!("--switch-config: {e}")))?;
    let facts = Platform::from_ios(&text).map_err(|e| Failure::Input {
        file: path.display().to_string(),
        line: (e.line > 0).then_some(e.line as u64),
        column: None,
        why: format!(
            "{}; --switch-config takes a Catalyst's IOS configuration",
            e.why
        ),
    })?;
    let links = match facts.channels[..] {
        [(_, n)] if n > 0 => Some(n),
        _ => None,
    };
    Ok((Spread::Hash(facts.method), facts.platform, links))
}

/// `lagkit plan --lab NAME [--measured REPORT]`.
fn run_lab(a: &Args, name: &str) -> Result<(), Failure> {
    use lagkit_planner::lab;
    let usage = Failure::Usage;
    let report = match &a.measured {
        Some(p) => {
            let text = lagkit_input::read_text(p, &lagkit_input::REPORT)
                .map_err(|e| usage(e.to_string()))?;
            let v: lagkit_lab::report::Report = serde_json::from_str(&text).map_err(|e| {
                usage(format!(
                    "{}: not a lab report (report.json): {e}",
                    p.display()
                ))
            })?;
            Some(v)
        }
        None => None,
    };
    let (plans, skipped) =
        lab::plan_scenario(name, a.short, report.as_ref()).map_err(|e| usage(e.to_string()))?;
    let measured = match &report {
        Some(v) => Some(lab::compare(name, a.short, v).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    let plan_of = |p: &lab::LabPlan| {
        lagkit_planner::report::plan(&p.flows, &p.out, &p.into, a.explain, &p.into_platform)
    };
    if a.json {
        let out = serde_json::json!({
            "scenario": name,
            "configurations": plans.iter().map(|p| {
                serde_json::json!({"key": p.key, "label": p.label, "host": p.host,
                    "received_from": p.into_by, "ports_from_run": p.ports_from_run,
                    "report": plan_of(p)})
            }).collect::<Vec<_>>(),
            "skipped": skipped.iter().map(|s| serde_json::json!({"key": s.key, "why": s.why})).collect::<Vec<_>>(),
            "accuracy": measured,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| Failure::Runtime(e.to_string()))?
        );
        return Ok(());
    }
    for p in &plans {
        println!(
            "== {} ({}): {}'s bond; it receives from {}{}",
            p.key,
            p.label,
            p.host,
            p.into_by,
            if p.ports_from_run {
                " (ports as the run recorded them)"
            } else {
                ""
            }
        );
        for line in plan_of(p).text(a.top).lines() {
            println!("  {line}");
        }
    }
    for s in &skipped {
        println!("== {}: not planned: {}", s.key, s.why);
    }
    if let Some(acc) = measured {
        print_accuracy(&acc);
    }
    Ok(())
}

fn print_accuracy(acc: &[lagkit_planner::lab::Accuracy]) {
    println!(
        "\npredicted vs measured (share of each member's bytes; Mbit/s of frames on the members):"
    );
    println!(
        "  {:<14} {:<6} {:<9} {:<24} {:<24} {:>8} {:>9} {:>9}  verdict",
        "configuration",
        "host",
        "direction",
        "predicted",
        "measured",
        "max diff",
        "pred Mb/s",
        "meas Mb/s"
    );
    let f = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{s:.3}"))
            .collect::<Vec<_>>()
            .join("/")
    };
    for x in acc {
        let why = x.why_not().map_or(String::new(), |w| format!(": {w}"));
        let verdict = match (&x.rate_not_compared, x.agrees()) {
            (_, false) if x.max_diff_pp > 5.0 => format!("shares differ{why}"),
            (None, false) => format!("rate off by {:+.0}%{why}", x.rate_error * 100.0),
            (Some(why), true) => format!("agrees (rate not compared: {why})"),
            _ => "agrees".to_string(),
        };
        println!(
            "  {:<14} {:<6} {:<9} {:<24} {:<24} {:>6.1}pp {:>9.1} {:>9.1}  {verdict}",
            x.key,
            x.host,
            x.dir,
            f(&x.predicted),
            f(&x.measured),
            x.max_diff_pp,
            x.predicted_mbps,
            x.measured_mbps
        );
    }
    if acc.is_empty() {
        println!("  (no run of the report matches these configurations' keys)");
    }
}

/// A traffic file's error, with its file and line apart for `--json`.
fn input_failure(e: lagkit_planner::InputError) -> Failure {
    use lagkit_planner::InputError;
    match e {
        InputError::Bad {
            path,
            at,
            line,
            why,
        } => Failure::Input {
            file: path.display().to_string(),
            line,
            column: None,
            // Where there is no line, `at` says `packet N` or `flow N`.
            why: if line.is_some() {
                why
            } else {
                format!("{at}: {why}")
            },
        },
        InputError::Io { path, why } | InputError::Format { path, why } => Failure::Input {
            file: path.display().to_string(),
            line: None,
            column: None,
            why,
        },
    }
}

/// What a capture of the traffic held, in one line (and a second for
/// what was dropped).
fn packet_summary(
    traffic: &std::path::Path,
    st: &lagkit_planner::input::CaptureStats,
    flows: usize,
) -> String {
    let mut s = format!(
        "{}: {} packets in {} flows",
        lagkit_input::name(traffic),
        st.packets,
        flows
    );
    if st.macs_unknown > 0 {
        s += &format!(
            " ({} without an Ethernet header, e.g. `tcpdump -i any`: their destination MAC is unknown, so layer2 hashes see zeros)",
            st.macs_unknown
        );
    }
    s + &dropped_line(st)
}

/// A second line naming what was left out, when anything was, and one
/// for what the figures' reader should know.
fn dropped_line(st: &lagkit_planner::input::CaptureStats) -> String {
    let mut s = String::new();
    let dropped = st.dropped();
    if !dropped.is_empty() {
        s += &format!("\n  dropped: {}", dropped.join("; "));
    }
    let notes = st.notes();
    if !notes.is_empty() {
        s += &format!("\n  note: {}", notes.join("; "));
    }
    s
}

/// What a capture of flow exports held, in one line (and a second for
/// what was dropped).
fn export_summary(
    traffic: &std::path::Path,
    st: &lagkit_planner::input::CaptureStats,
    x: &lagkit_planner::export::ExportStats,
    flows: usize,
) -> String {
    let kinds: Vec<&str> = x.kinds.iter().map(|k| k.name()).collect();
    let mut s = format!(
        "{}: {} datagrams of {} from {} exporter{}: {} records in {} flows",
        lagkit_input::name(traffic),
        x.datagrams,
        if kinds.is_empty() {
            "flow exports".to_string()
        } else {
            kinds.join(" and ")
        },
        x.exporters,
        if x.exporters == 1 { "" } else { "s" },
        x.records,
        flows,
    );
    if x.sampled_records > 0 {
        s += &format!(
            " ({} sampled, scaled by their sampling rate)",
            x.sampled_records
        );
    }
    s + &dropped_line(st)
}

/// Reads many traffic files (arguments, directories, globs) on every
/// core into one flow table: each file's flows are folded in once read,
/// so memory holds the table and the files being read, not every file. A
/// file that cannot be read stops the plan, named.
fn read_many(
    args: &[PathBuf],
    host: Option<Host>,
    format: lagkit_planner::export::FlowFormat,
) -> Result<
    (
        Vec<lagkit_planner::flow::Flow>,
        lagkit_planner::merge::Totals,
    ),
    Failure,
> {
    use lagkit_planner::merge::Merged;
    use rayon::prelude::*;
    if args.iter().any(|a| lagkit_input::is_stdin(a)) {
        return Err(Failure::Usage(
            "standard input (-) is one traffic file: give it alone".into(),
        ));
    }
    let files = crate::inputs::expand(args)?;
    // A few files at a time, read in parallel, then folded in file order:
    // memory holds the table and one chunk's flows (a parallel fold would
    // hold a partial table per split), and the flows past the cap are the
    // same on every run.
    let chunk = 2 * rayon::current_num_threads().max(1);
    let mut merged = Merged::new();
    for group in files.chunks(chunk) {
        let read: Vec<_> = group
            .par_iter()
            .map(|(path, _)| {
                lagkit_planner::input::read_flows_as(path, host, format).map(|r| (path, r))
            })
            .collect();
        for r in read {
            let (path, (flows, st)) = r.map_err(input_failure)?;
            if let Some(sk) = &st.skipped {
                eprintln!("lagkit: warning: {}: {sk}", lagkit_input::name(path));
            }
            merged.totals.add(&st);
            merged.add_file(flows);
        }
    }
    let mut totals = merged.totals.clone();
    totals.flows_dropped += merged.over_cap.0;
    totals.skipped += merged.over_total;
    Ok((merged.into_flows(), totals))
}

/// What many files held, in one line.
fn many_summary(t: &lagkit_planner::merge::Totals, flows: usize) -> String {
    let mut parts = vec![format!("{} files", t.files)];
    if t.packets > 0 {
        parts.push(format!("{} captured packets", t.packets));
    }
    if t.records > 0 {
        parts.push(format!(
            "{} export records in {} datagrams{}",
            t.records,
            t.datagrams,
            if t.sampled_records > 0 {
                format!(" ({} sampled, scaled by their rate)", t.sampled_records)
            } else {
                String::new()
            }
        ));
    }
    let mut s = format!("{}: {flows} flows", parts.join(", "));
    if t.skipped > 0 {
        s += &format!(", {} packets or records skipped", t.skipped);
    }
    if t.flows_dropped > 0 {
        s += &format!(
            ", {} flows past the table's {} left out",
            t.flows_dropped,
            lagkit_planner::merge::MAX_FLOWS
        );
    }
    if t.cut > 0 {
        s += &format!(", {} files cut short (warned above)", t.cut);
    }
    s
}

/// Runs `lagkit plan`.
pub fn run(a: Args) -> Result<(), Failure> {
    if let Some(name) = a.lab.clone() {
        return run_lab(&a, &name);
    }
    let usage = Failure::Usage;
    let rate = a.rate as f64;
    if a.rate == 0 {
        return Err(usage("--rate must be above 0".into()));
    }
    let (host_spread, cfg_links) = match &a.config {
        Some(p) => {
            let (s, n) = from_config(p, a.bond.as_deref()).map_err(usage)?;
            (s, Some(n))
        }
        None => (
            Spread::parse(&a.host_hash).map_err(|e| usage(format!("--host-hash: {e}")))?,
            None,
        ),
    };
    let (switch_spread, platform, sw_links) = switch_end(&a)?;
    let links = a.links.or(cfg_links).or(sw_links).unwrap_or(2);
    if links == 0 || links > 64 {
        return Err(usage(format!("--links {links}: use 1 to 64")));
    }
    let host = a
        .host
        .as_deref()
        .map(str::parse::<Host>)
        .transpose()
        .map_err(|e| usage(format!("--host: {e}")))?;
    let format: lagkit_planner::export::FlowFormat = a.flow_format.parse().map_err(usage)?;
    let many = a.traffic.len() > 1 || a.traffic.iter().any(|t| crate::inputs::is_many(t));
    let (flows, stats, totals) = if many {
        let (flows, totals) = read_many(&a.traffic, host, format)?;
        (
            flows,
            lagkit_planner::input::CaptureStats::default(),
            Some(totals),
        )
    } else {
        let (flows, stats) = lagkit_planner::input::read_flows_as(&a.traffic[0], host, format)
            .map_err(input_failure)?;
        (flows, stats, None)
    };
    let traffic = a.traffic[0].clone();
    if let Some(sk) = &stats.skipped {
        eprintln!("lagkit: warning: {}: {sk}", lagkit_input::name(&traffic));
    }
    // Never an empty plan: no flows is an error that says why.
    if flows.is_empty() {
        return Err(Failure::Input {
            file: if many {
                a.traffic
                    .iter()
                    .map(|t| t.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                traffic.display().to_string()
            },
            line: None,
            column: None,
            why: match &totals {
                Some(t) => t.why_no_flows(),
                None => stats.why_no_flows(),
            },
        });
    }
    let end = |spread| EndConfig {
        spread,
        links,
        rate_bps: rate,
    };
    let report = lagkit_planner::report::plan(
        &flows,
        &end(host_spread),
        &end(switch_spread),
        a.explain,
        &platform,
    );
    if a.json {
        let mut v = serde_json::to_value(&report).map_err(|e| Failure::Runtime(e.to_string()))?;
        // A capture's counts (and what was skipped of it) beside the plan.
        if let (true, Some(o)) = (stats.packets > 0, v.as_object_mut()) {
            let c = serde_json::to_value(&stats).map_err(|e| Failure::Runtime(e.to_string()))?;
            o.insert("capture".into(), c);
        }
        if let (Some(t), Some(o)) = (&totals, v.as_object_mut()) {
            let c = serde_json::to_value(t).map_err(|e| Failure::Runtime(e.to_string()))?;
            o.insert("inputs".into(), c);
        }
        let v = serde_json::to_string_pretty(&v).map_err(|e| Failure::Runtime(e.to_string()))?;
        println!("{v}");
    } else {
        if let Some(t) = &totals {
            println!("{}", many_summary(t, flows.len()));
        } else if let Some(x) = &stats.export {
            println!("{}", export_summary(&traffic, &stats, x, flows.len()));
        } else if stats.packets > 0 {
            println!("{}", packet_summary(&traffic, &stats, flows.len()));
        }
        print!("{}", report.text(a.top));
    }
    let unreadable = stats.export.as_ref().map_or(0, |x| x.unreadable_datagrams)
        + totals.as_ref().map_or(0, |t| t.unreadable_datagrams);
    if unreadable > 0 {
        svgs(&a, &report)?;
        let kinds = stats
            .export
            .as_ref()
            .map(|x| x.unreadable_kinds.join(", "))
            .unwrap_or_default();
        return Err(Failure::Input {
            file: traffic.display().to_string(),
            line: None,
            column: None,
            why: format!(
                "{unreadable} datagrams are flow exports lagkit cannot read{}: the plan above leaves them out",
                if kinds.is_empty() { String::new() } else { format!(" ({kinds})") }
            ),
        });
    }
    svgs(&a, &report)
}

/// Writes the plan's charts when --svg asks for them.
fn svgs(a: &Args, report: &lagkit_planner::report::Report) -> Result<(), Failure> {
    if let Some(dir) = &a.svg {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", dir.display())))?;
        let charts = report
            .svgs(a.top)
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        for (name, svg) in charts {
            let p = dir.join(name);
            std::fs::write(&p, svg)
                .map_err(|e| Failure::Runtime(format!("{}: {e}", p.display())))?;
            if !a.json {
                println!("wrote {}", p.display());
            }
        }
    }
    Ok(())
}
