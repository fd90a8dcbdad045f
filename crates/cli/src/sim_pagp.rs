//! `lagkit sim pagp`: two PAgP systems (or one facing a device that never
//! speaks PAgP) joined by N links, stepped in virtual time, with a timeline
//! of every transition, join, leave and Flush, the final state of every
//! port, and a verdict. Answers "would these channel-group modes form a
//! channel, which port would stand by, and how fast?" before anything is
//! cabled.

use crate::sim_run::{num, RunArgs};
use lagkit_proto::pagp::{Event, LearnMethod, Mode, PortConfig, Silence, System, SystemConfig};
use lagkit_proto::Instant;
use lagkit_sim::pagp::{channel_ports, pair, Peer};
use lagkit_sim::{mac, Sim};
use std::fmt::Write as _;

/// Options of `lagkit sim pagp`.
#[derive(clap::Args, Debug)]
#[command(after_help = SIDE_HELP)]
pub struct Args {
    /// Settings of system A (comma-separated, see below).
    #[arg(long, default_value = "desirable")]
    a: String,
    /// Settings of system B; `off` makes B a device that never speaks PAgP.
    #[arg(long, default_value = "desirable")]
    b: String,
    #[command(flatten)]
    run: RunArgs,
}

const SIDE_HELP: &str = "\
SIDE SETTINGS (--a / --b), comma-separated:
  desirable | auto          channel-group mode: desirable initiates, auto only answers
  silent | non-silent       attach without PAgP after the silent wait (default silent),
                            or require PAgP from the partner
  silent-wait=T             how long a silent port waits (default 15s)
  learn=aggregation-port | learn=physical-port
                            learn method (default aggregation-port)
  port-prio=P1/P2/...       hot-standby port priorities, per port (0-255, higher wins, default 128)
  max-ports=N               at most N ports carry traffic, the rest stand by
  off                       (B only) a device that never speaks PAgP: a server, an analyzer

EXAMPLES:
  lagkit sim pagp --a desirable --b auto --links 4 --cut 2@30s --restore 2@40s
  lagkit sim pagp --a auto --b auto
  lagkit sim pagp --a desirable,non-silent --b off
  lagkit sim pagp --a max-ports=1,port-prio=100/200 --links 2 --cut 2@20s --restore 2@40s";

/// One side's settings.
#[derive(Debug, Clone)]
struct Side {
    cfg: SystemConfig,
    mode: Mode,
    silence: Silence,
    port_prios: Vec<u8>,
    /// False for a device that never speaks PAgP.
    pagp: bool,
}

fn parse_side(name: &str, n: u8, spec: &str) -> Result<Side, String> {
    let mut side = Side {
        cfg: SystemConfig::new(name, mac(n, 0)),
        mode: Mode::Desirable,
        silence: Silence::Silent,
        port_prios: vec![128],
        pagp: true,
    };
    let flag = name.to_lowercase();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        match (k, v) {
            ("desirable", "") => side.mode = Mode::Desirable,
            ("auto", "") => side.mode = Mode::Auto,
            ("silent", "") => side.silence = Silence::Silent,
            ("non-silent", "") => side.silence = Silence::NonSilent,
            ("off", "") if n == 2 => side.pagp = false,
            ("off", "") => {
                return Err(
                    "--a 'off': only B can be a device without PAgP (swap the sides)".to_string(),
                )
            }
            ("silent-wait", v) => {
                side.cfg.timers.silent_wait = lagkit_units::parse_duration(v)
                    .map_err(|e| format!("--{flag} '{item}': {e}"))?
            }
            ("learn", "aggregation-port") => side.cfg.learn = LearnMethod::AggregationPort,
            ("learn", "physical-port") => side.cfg.learn = LearnMethod::PhysicalPort,
            ("learn", _) => {
                return Err(format!(
                    "--{flag} '{item}': the learn method is aggregation-port or physical-port"
                ))
            }
            ("port-prio", v) => {
                side.port_prios = v.split('/').map(|x| num(k, x)).collect::<Result<_, _>>()?
            }
            ("max-ports", v) => {
                let m: usize = num(k, v)?;
                if m == 0 {
                    return Err(format!(
                        "--{flag} '{item}': at least one port must carry traffic"
                    ));
                }
                side.cfg.max_ports = Some(m);
            }
            _ => {
                return Err(format!(
                    "--{flag} '{item}': unknown setting (see `lagkit sim pagp --help`)"
                ))
            }
        }
    }
    Ok(side)
}

impl Side {
    fn describe(&self) -> String {
        if !self.pagp {
            return "no PAgP".to_string();
        }
        let mut s = format!(
            "{}, {}",
            match self.mode {
                Mode::Desirable => "desirable",
                Mode::Auto => "auto",
            },
            match self.silence {
                Silence::Silent => "silent",
                Silence::NonSilent => "non-silent",
            }
        );
        let _ = write!(s, ", learn {}", self.cfg.learn);
        if let Some(m) = self.cfg.max_ports {
            let _ = write!(s, ", max-ports {m}");
        }
        s
    }

    fn port(&self, sys: u8, n: u16) -> PortConfig {
        let i = usize::from(n - 1);
        let prio = self.port_prios.get(i).or(self.port_prios.last());
        let prefix = if sys == 1 { "a" } else { "b" };
        PortConfig {
            mode: self.mode,
            silence: self.silence,
            port_priority: prio.copied().unwrap_or(128),
            ..PortConfig::new(&format!("{prefix}{n}"), n.into(), mac(sys, n))
        }
    }
}

/// Runs the simulation and prints the report.
pub fn run(args: Args) -> Result<(), String> {
    let plan = args.run.plan(2)?;
    let a = parse_side("A", 1, &args.a)?;
    let b = parse_side("B", 2, &args.b)?;
    let (pa, pb) = (a.clone(), b.clone());
    let mut sim = pair(
        a.cfg.clone(),
        b.pagp.then(|| b.cfg.clone()),
        plan.links,
        plan.spec,
        move |n| pa.port(1, n),
        move |n| pb.port(2, n),
        args.run.seed,
    );
    args.run.prepare(&plan, &mut sim);
    let end = plan.end;
    println!(
        "lagkit sim pagp: A ({}) <-> B ({}), {}",
        a.describe(),
        b.describe(),
        plan.headline()
    );
    let wall = std::time::Instant::now();
    let formed = sim.run_until_cond(end, |s| channel(s) > 0);
    sim.run_until(end);
    let elapsed = wall.elapsed();

    let mut out = String::new();
    if !args.run.quiet {
        out.push_str("\ntimeline:\n");
        for e in sim.timeline() {
            let name = &name_of(&sim, e.system);
            if let Some(line) = describe(&sim, e.system, &e.event) {
                let _ = writeln!(out, "  {:>11}  {name} {line}", e.at.to_string());
            }
        }
    }
    let _ = writeln!(out, "\nfinal state at {}:", sim.now());
    for s in 0..2 {
        match sim.system(s).pagp() {
            Some(sys) => final_state(&mut out, sys),
            None => {
                let _ = writeln!(out, "  system B: does not speak PAgP");
            }
        }
    }
    out.push('\n');
    out.push_str(&verdict(&sim, &a, &b, formed));
    args.run.finish(out, &sim, elapsed)
}

fn name_of(sim: &Sim<Peer>, s: usize) -> String {
    sim.system(s)
        .pagp()
        .map_or("B".to_string(), |x| x.config().name.clone())
}

/// Ports carrying traffic at both ends (A alone when B does not speak PAgP).
fn channel(sim: &Sim<Peer>) -> usize {
    let a = channel_ports(sim, 0).len();
    match sim.system(1).pagp() {
        Some(_) => a.min(channel_ports(sim, 1).len()),
        None => a,
    }
}

fn port_name(sim: &Sim<Peer>, s: usize, p: lagkit_proto::PortId) -> String {
    sim.system(s)
        .pagp()
        .and_then(|x| x.port_status(p))
        .map_or(format!("port {}", p.0), |st| st.name)
}

fn describe(sim: &Sim<Peer>, s: usize, e: &Event) -> Option<String> {
    let pn = |p| port_name(sim, s, p);
    Some(match e {
        Event::Transition {
            port,
            from,
            to,
            why,
        } => {
            format!("{} pagp: {from} ({why}) -> {to}", pn(*port))
        }
        Event::Joined {
            port,
            partner,
            partner_learn,
        } => format!(
            "{} joins the channel (partner {}, learns {})",
            pn(*port),
            partner.map_or("silent".to_string(), |m| m.to_string()),
            partner_learn.map_or("?".to_string(), |l| l.to_string())
        ),
        Event::Left { port, now } => format!("{} leaves the channel ({now})", pn(*port)),
        Event::FlushStarted {
            port,
            transaction_id,
        } => format!(
            "{} Flush {transaction_id} sent before flows move",
            pn(*port)
        ),
        Event::FlushDone {
            port,
            transaction_id,
            answered,
        } => format!(
            "{} Flush {transaction_id} {}",
            pn(*port),
            if *answered { "answered" } else { "timed out" }
        ),
    })
}

fn final_state(out: &mut String, sys: &System) {
    let cfg = sys.config();
    let _ = writeln!(
        out,
        "  system {} (device {}, learns {})",
        cfg.name, cfg.device_id, cfg.learn
    );
    let _ = writeln!(
        out,
        "    {:<5} {:<14} {:<5} {:<10} {:<18} {:<10} {:<17} traffic",
        "port", "state", "prio", "consistent", "partner", "its mode", "its learn method"
    );
    for id in sys.port_ids() {
        let Some(p) = sys.port_status(id) else {
            continue;
        };
        let traffic = if p.state.in_channel() {
            "in channel"
        } else if p.state == lagkit_proto::pagp::PortState::HotStandby {
            "hot standby"
        } else {
            "none"
        };
        let _ = writeln!(
            out,
            "    {:<5} {:<14} {:<5} {:<10} {:<18} {:<10} {:<17} {traffic}",
            p.name,
            p.state.name(),
            p.port_priority,
            if p.consistent { "yes" } else { "no" },
            p.partner_device.map_or("-".to_string(), |m| m.to_string()),
            p.partner_mode.map_or("-", |m| match m {
                Mode::Desirable => "desirable",
                Mode::Auto => "auto",
            }),
            p.partner_learn.map_or("-".to_string(), |l| l.to_string()),
        );
    }
}

fn verdict(sim: &Sim<Peer>, a: &Side, b: &Side, formed: Option<Instant>) -> String {
    let now = channel(sim);
    let standby = sim
        .system(0)
        .pagp()
        .map(|s| {
            s.port_ids()
                .into_iter()
                .filter(|p| {
                    s.port_status(*p)
                        .is_some_and(|st| st.state == lagkit_proto::pagp::PortState::HotStandby)
                })
                .count()
        })
        .unwrap_or(0);
    let mut v = String::new();
    match formed {
        Some(t) if !b.pagp => {
            let _ = writeln!(
                v,
                "verdict: A attached {now} port{} to the channel at {t} without hearing PAgP (silent mode); B never spoke PAgP.",
                if now == 1 { "" } else { "s" }
            );
        }
        Some(t) => {
            let _ = writeln!(
                v,
                "verdict: A and B formed a channel: first port in at {t}; {now} port{} carrying traffic at the end{}.",
                if now == 1 { "" } else { "s" },
                if standby > 0 {
                    format!(", {standby} in hot standby")
                } else {
                    String::new()
                }
            );
        }
        None => {
            let why = if !b.pagp && a.silence == Silence::NonSilent {
                "A is non-silent and B never speaks PAgP: a non-silent port needs PAgP from its partner (use silent mode for servers and analyzers)"
            } else if !b.pagp && a.mode == Mode::Auto {
                "A is auto and B never speaks PAgP: an auto port never initiates (make A desirable)"
            } else if a.mode == Mode::Auto && b.mode == Mode::Auto {
                "both ends are auto: an auto port only answers, so nobody speaks first (make one end desirable)"
            } else {
                "see the port states above"
            };
            let _ = writeln!(v, "verdict: no channel formed: {why}.");
        }
    }
    v
}
