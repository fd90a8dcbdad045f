//! `lagkit sim lacp`: two LACP systems joined by N links, stepped in virtual
//! time, with a timeline of every transition and the final state of every
//! port and aggregator. Answers "would my server and my switch form a
//! channel, and how fast?" before anything is cabled.

use crate::sim_run::{num, RunArgs};
use lagkit_bond::settings::LacpSettings;
use lagkit_proto::lacp::{Event, NoPartner, PortConfig, PortStatus, System, SystemConfig};
use lagkit_proto::Instant;
use lagkit_sim::{mac, Sim};
use lagkit_wire::MacAddr;
use std::fmt::Write as _;

/// Options of `lagkit sim lacp`.
#[derive(clap::Args, Debug)]
#[command(after_help = SIDE_HELP)]
pub struct Args {
    /// Settings of system A (comma-separated, see below).
    #[arg(long, default_value = "active,fast")]
    a: String,
    /// Settings of system B.
    #[arg(long, default_value = "active,fast")]
    b: String,
    #[command(flatten)]
    run: RunArgs,
}

const SIDE_HELP: &str = "\
SIDE SETTINGS (--a / --b), comma-separated:
  active | passive          LACP_Activity (default active)
  fast | slow               LACP_Timeout: rate the partner must send at (default fast)
  prio=N                    system priority (default 32768)
  key=N | keys=K1/K2/...    admin key of all ports, or per port
  port-prio=P1/P2/...       port priorities, per port (default 32768)
  max-bundle=N              at most N ports carry traffic, the rest stand by
  min-links=N               the aggregate is down below N ports
  aggregators=N             number of aggregators (default one per port)
  independent | coupled     collecting/distributing control (default coupled)
  individual | fallback | suspend
                            what ports do if the partner never speaks LACP
  lacp-off                  LACP disabled on every port (a static 'mode on' peer)
  ports-individual          ports are not aggregatable

EXAMPLES:
  lagkit sim lacp --a active,fast --b passive,slow --links 4 --cut 2@30s --restore 2@40s
  lagkit sim lacp --a passive --b passive
  lagkit sim lacp --a max-bundle=2 --b max-bundle=2 --links 4 --cut 1@20s";

/// One side's settings: a bond's LACP settings (built into LACP
/// configurations as the daemon builds them) and what only a simulated
/// switch varies.
#[derive(Debug, Clone)]
struct Side {
    name: String,
    mac: MacAddr,
    lacp: LacpSettings,
    /// Aggregators (0: one per port).
    aggregators: usize,
    keys: Vec<u16>,
    port_prios: Vec<u16>,
    lacp_on: bool,
    aggregatable: bool,
}

fn list(what: &str, v: &str) -> Result<Vec<u16>, String> {
    v.split('/').map(|x| num(what, x)).collect()
}

fn parse_side(name: &str, n: u8, spec: &str) -> Result<Side, String> {
    let mut side = Side {
        name: name.to_string(),
        mac: mac(n, 0),
        // The standard's defaults where they differ from Linux's.
        lacp: LacpSettings {
            fast: true,
            system_priority: 32768,
            ..LacpSettings::default()
        },
        aggregators: 0,
        keys: vec![1],
        port_prios: vec![32768],
        lacp_on: true,
        aggregatable: true,
    };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        match (k, v) {
            ("active", "") => side.lacp.active = true,
            ("passive", "") => side.lacp.active = false,
            ("fast", "") => side.lacp.fast = true,
            ("slow", "") => side.lacp.fast = false,
            ("independent", "") => side.lacp.coupled = false,
            ("coupled", "") => side.lacp.coupled = true,
            ("individual", "") => side.lacp.no_partner = NoPartner::Individual,
            ("fallback", "") => side.lacp.no_partner = NoPartner::Fallback,
            ("suspend", "") => side.lacp.no_partner = NoPartner::Suspend,
            ("lacp-off", "") => side.lacp_on = false,
            ("ports-individual", "") => side.aggregatable = false,
            ("prio", v) => side.lacp.system_priority = num(k, v)?,
            ("key" | "keys", v) => side.keys = list(k, v)?,
            ("port-prio", v) => side.port_prios = list(k, v)?,
            ("max-bundle", v) => side.lacp.max_bundle = Some(num(k, v)?),
            ("min-links", v) => side.lacp.min_links = num(k, v)?,
            ("aggregators", v) => side.aggregators = num(k, v)?,
            _ => {
                return Err(format!(
                    "--{} '{item}': unknown setting (see `lagkit sim lacp --help`)",
                    name.to_lowercase()
                ))
            }
        }
    }
    Ok(side)
}

impl Side {
    fn describe(&self) -> String {
        let mut s = format!(
            "{}, {}",
            if self.lacp.active {
                "active"
            } else {
                "passive"
            },
            if self.lacp.fast { "fast" } else { "slow" }
        );
        if !self.lacp_on {
            s = "LACP off (static)".to_string();
        }
        if let Some(m) = self.lacp.max_bundle {
            let _ = write!(s, ", max-bundle {m}");
        }
        if self.lacp.min_links > 1 {
            let _ = write!(s, ", min-links {}", self.lacp.min_links);
        }
        s
    }

    /// The system, as a bond with these settings would configure it.
    fn system(&self) -> SystemConfig {
        let mut cfg = self.lacp.system_config(&self.name, self.mac);
        cfg.aggregators = self.aggregators;
        cfg
    }

    fn port(&self, sys: u8, n: u16) -> PortConfig {
        let i = usize::from(n - 1);
        let pick = |v: &Vec<u16>, d: u16| v.get(i).or(v.last()).copied().unwrap_or(d);
        let prefix = if sys == 1 { "a" } else { "b" };
        PortConfig {
            key: pick(&self.keys, 1),
            port_priority: pick(&self.port_prios, 32768),
            lacp_enabled: self.lacp_on,
            aggregatable: self.aggregatable,
            ..self
                .lacp
                .port_config(&format!("{prefix}{n}"), n, mac(sys, n))
        }
    }
}

/// Runs the simulation and prints the report.
pub fn run(args: Args) -> Result<(), String> {
    let plan = args.run.plan(2)?;
    let a = parse_side("A", 1, &args.a)?;
    let b = parse_side("B", 2, &args.b)?;
    let (pa, pb) = (a.clone(), b.clone());
    let mut sim = Sim::pair(
        a.system(),
        b.system(),
        plan.links,
        plan.spec,
        move |n| pa.port(1, n),
        move |n| pb.port(2, n),
        args.run.seed,
    );
    args.run.prepare(&plan, &mut sim);

    println!(
        "lagkit sim lacp: A ({}) <-> B ({}), {}",
        a.describe(),
        b.describe(),
        plan.headline()
    );
    let end = plan.end;
    let wall = std::time::Instant::now();
    let formed = sim.run_until_cond(end, |s| aggregate_between(s.system(0), s.system(1)) > 0);
    let full = if formed.is_some() {
        sim.run_until_cond(end, |s| {
            aggregate_between(s.system(0), s.system(1)) == plan.links
        })
    } else {
        None
    };
    sim.run_until(end);
    let elapsed = wall.elapsed();

    let mut out = String::new();
    if !args.run.quiet {
        out.push_str("\ntimeline:\n");
        for e in sim.timeline() {
            if let Event::Transition { line, .. } = &e.event {
                let _ = writeln!(out, "  {:>11}  {line}", e.at.to_string());
            } else if let Event::Aggregator {
                aggregator,
                up,
                distributing,
            } = &e.event
            {
                let _ = writeln!(
                    out,
                    "  {:>11}  {} aggregator {aggregator}: {} with {distributing} port{} distributing",
                    e.at.to_string(),
                    sim.system(e.system).config().name,
                    if *up { "UP" } else { "DOWN" },
                    if *distributing == 1 { "" } else { "s" },
                );
            }
        }
    }
    let _ = writeln!(out, "\nfinal state at {}:", sim.now());
    for s in 0..2 {
        final_state(&mut out, sim.system(s));
    }
    out.push('\n');
    out.push_str(&verdict(&sim, &a, &b, plan.links, formed, full));
    args.run.finish(out, &sim, elapsed)
}

/// Ports of `x` distributing in a (non-individual) aggregate whose partner is `y`.
fn aggregate_between(x: &System, y: &System) -> usize {
    x.aggregators()
        .iter()
        .filter(|a| !a.individual && a.partner_system == Some(y.system_id()))
        .map(|a| a.distributing.len())
        .max()
        .unwrap_or(0)
        .min(
            y.aggregators()
                .iter()
                .filter(|a| !a.individual && a.partner_system == Some(x.system_id()))
                .map(|a| a.distributing.len())
                .max()
                .unwrap_or(0),
        )
}

fn final_state(out: &mut String, sys: &System) {
    let cfg = sys.config();
    let _ = writeln!(out, "  system {} ({})", cfg.name, cfg.system);
    let _ = writeln!(
        out,
        "    {:<5} {:<5} {:<14} {:<24} {:<10} {:<4} {:<22} {:<22} traffic",
        "port", "link", "rx", "mux", "selected", "agg", "actor state", "partner state"
    );
    for id in sys.port_ids() {
        let Some(p) = sys.port_status(id) else {
            continue;
        };
        let _ = writeln!(
            out,
            "    {:<5} {:<5} {:<14} {:<24} {:<10} {:<4} {:<22} {:<22} {}",
            p.name,
            if p.enabled { "up" } else { "down" },
            p.rx.name(),
            p.mux.name(),
            p.selected.name(),
            p.aggregator.map_or("-".to_string(), |a| a.to_string()),
            p.actor.state.to_string(),
            p.partner.state.to_string(),
            traffic(&p),
        );
    }
    for a in sys.aggregators() {
        let partner = a.partner_system.map_or("-".to_string(), |s| s.to_string());
        let _ = writeln!(
            out,
            "    aggregator {}: {}key {} partner {} key {}, {} member{}, {} distributing, {}",
            a.id,
            if a.individual { "individual, " } else { "" },
            a.actor_key.unwrap_or(0),
            partner,
            a.partner_key.unwrap_or(0),
            a.members.len(),
            if a.members.len() == 1 { "" } else { "s" },
            a.distributing.len(),
            if a.up { "UP" } else { "DOWN" }
        );
    }
}

fn traffic(p: &PortStatus) -> String {
    match p.not_bundled_reason() {
        None => "bundled".to_string(),
        Some(r) if p.distributing => format!("individual: {r}"),
        Some(r) => format!("none: {r}"),
    }
}

fn verdict(
    sim: &Sim,
    a: &Side,
    b: &Side,
    links: usize,
    formed: Option<Instant>,
    full: Option<Instant>,
) -> String {
    let now = aggregate_between(sim.system(0), sim.system(1));
    let mut v = String::new();
    match formed {
        Some(t) => {
            let _ = writeln!(
                v,
                "verdict: A and B formed a channel: first port bundled at {t}{}; {now} of {links} links bundled at the end.",
                match full {
                    Some(f) => format!(", all {links} at {f}"),
                    None => String::new(),
                }
            );
        }
        None => {
            let why = if !a.lacp_on || !b.lacp_on {
                "one end does not run LACP (a static channel facing LACP never bundles; configure both ends alike)"
            } else if !a.lacp.active && !b.lacp.active {
                "both ends are passive: a passive port only answers, so nobody speaks first (make one end active)"
            } else {
                "see the per-port reasons above"
            };
            let _ = writeln!(v, "verdict: no channel formed: {why}.");
        }
    }
    v
}
