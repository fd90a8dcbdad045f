//! `lagkit sim pair`: a host bond's own configuration against a switch's
//! own IOS configuration, in virtual time, through the same cores the
//! daemons run: the bond's LACP or PAgP system built from its settings as
//! `lagkit up` builds it, and the switch's [`lagkit_switch::Core`] read
//! from the IOS text as `lagkit switch` reads it. It answers "would my
//! server and my switch form a channel?" with the two files, and says
//! which links carry and why the others do not.

use crate::sim_run::RunArgs;
use lagkit_bond::settings::Settings;
use lagkit_bondcfg::Mode;
use lagkit_proto::{lacp, pagp, Instant, PortId as ProtoPort};
use lagkit_sim::{Either, End, Sim};
use lagkit_switch::core::PortInfo;
use lagkit_switch::show::MemberFlag;
use lagkit_switch::sim::Peer;
use lagkit_switch::{Core, PortId};
use lagkit_wire::MacAddr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `lagkit sim pair`.
#[derive(clap::Args, Debug)]
#[command(after_help = PAIR_HELP)]
pub struct Args {
    /// The host bond's configuration (the TOML `lagkit up` reads).
    #[arg(long, value_name = "BOND.toml")]
    host: PathBuf,
    /// The bond in --host, if the file has several.
    #[arg(long)]
    bond: Option<String>,
    /// The switch's IOS configuration (as `lagkit switch` reads it).
    #[arg(long, value_name = "SWITCH.cfg")]
    switch: PathBuf,
    /// The port-channel the host is cabled to, if the switch has several.
    #[arg(long, value_name = "N")]
    channel: Option<u32>,
    #[command(flatten)]
    run: RunArgs,
}

const PAIR_HELP: &str = "\
The host's members are cabled, in their configured order, to the
channel's member interfaces, in the order the switch's configuration
lists them; --links N cables only the first N (default: as many as both
have). Faults (--cut, --blackhole, ...) name those links 1..N.

EXAMPLES:
  lagkit sim pair --host server-bond.toml --switch switch-b-lacp.cfg
  lagkit sim pair --host bond.toml --switch sw.cfg --cut 1@20s --restore 1@30s";

/// The host: its settings and the system they make.
struct HostSide {
    settings: Settings,
    what: String,
}

fn host_side(path: &Path, bond: Option<&str>) -> Result<HostSide, String> {
    let (bonds, warnings) =
        lagkit_bondcfg::parse_file_with_warnings(path).map_err(|e| e.to_string())?;
    let c = match bond {
        Some(name) => bonds.iter().find(|b| b.name == name).ok_or_else(|| {
            format!(
                "{}: no bond named {name} (it has {})",
                path.display(),
                bonds
                    .iter()
                    .map(|b| b.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?,
        None if bonds.len() > 1 => {
            return Err(format!(
                "{}: {} bonds; name one with --bond",
                path.display(),
                bonds.len()
            ))
        }
        None => bonds
            .first()
            .ok_or_else(|| format!("{}: no bond in this file", path.display()))?,
    };
    let warnings: Vec<String> = warnings
        .iter()
        .filter(|w| w.bond == c.name)
        .map(|w| w.to_string())
        .collect();
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let settings = lagkit_bond::config::settings_from(c, warnings).map_err(|e| e.to_string())?;
    let what = match (settings.mode, &settings.pagp) {
        (Mode::Lacp, _) => format!(
            "802.3ad, LACP {} {}",
            if settings.lacp.active {
                "active"
            } else {
                "passive"
            },
            if settings.lacp.fast { "fast" } else { "slow" }
        ),
        (m, Some(p)) => format!(
            "{}, PAgP {} {}",
            m.name(),
            match p.mode {
                pagp::Mode::Desirable => "desirable",
                pagp::Mode::Auto => "auto",
            },
            if p.silence == pagp::Silence::Silent {
                "silent"
            } else {
                "non-silent"
            }
        ),
        (m, None) => format!("{}, no protocol", m.name()),
    };
    Ok(HostSide { settings, what })
}

/// The host's bond core for its first `links` members, built as the
/// daemon builds it: the members present with their own MACs, then the
/// protocols started with the bond's MAC.
fn host_core(h: &HostSide, links: usize) -> lagkit_bond::Core {
    let mut s = h.settings.clone();
    s.members.truncate(links);
    if s.backup.as_ref().is_some_and(|b| !s.members.contains(b)) {
        s.backup = None;
    }
    let mut core = lagkit_bond::Core::new(s);
    for i in 0..core.members().len() {
        let mac = MacAddr([2, 0x68, 0x6f, 0x73, 0x74, i as u8 + 1]);
        core.member_present(i, mac, Some(i as u32 + 2), 0);
    }
    let mac = core.choose_mac();
    core.start(mac, 1, &[], 0);
    core
}

/// The switch: its core, the channel's member ports and their names.
struct SwitchSide {
    core: Core,
    channel: u32,
    mode: String,
    members: Vec<PortId>,
}

fn switch_side(path: &Path, channel: Option<u32>) -> Result<SwitchSide, String> {
    let text = lagkit_input::read_text(path, &lagkit_input::CONFIG).map_err(|e| e.to_string())?;
    let at = |e: lagkit_ios::ParseError| format!("{}:{}: {}", path.display(), e.line, e.why);
    let ios = lagkit_ios::parse(&text).map_err(at)?;
    // Every physical interface the configuration names is a port.
    let ports: Vec<(String, String)> = ios
        .interfaces
        .iter()
        .filter(|i| i.port_channel().is_none())
        .enumerate()
        .map(|(k, i)| (i.name.clone(), format!("sim{k}")))
        .collect();
    let cfg = lagkit_switch::config::from_ios(&text, &ports)
        .map_err(|e| format!("{}:{}: {} ({})", path.display(), e.line, e.why, e.fix))?;
    let ids: Vec<u32> = cfg.channels.iter().map(|c| c.id.0).collect();
    let spec = match channel {
        Some(n) => cfg.channels.iter().find(|c| c.id.0 == n).ok_or_else(|| {
            format!(
                "{}: no channel-group {n} (it has {ids:?})",
                path.display()
            )
        })?,
        None if cfg.channels.len() > 1 => {
            return Err(format!(
                "{}: channel-groups {ids:?}; name one with --channel",
                path.display()
            ))
        }
        None => cfg.channels.first().ok_or_else(|| {
            format!(
                "{}: no interface has a channel-group: there is no port-channel to cable the host to",
                path.display()
            )
        })?,
    };
    let (channel, mode) = (spec.id.0, spec.mode.to_string());
    let members: Vec<PortId> = spec.members.iter().map(|(p, _)| *p).collect();
    let infos: Vec<PortInfo> = (0..ports.len())
        .map(|k| PortInfo {
            mac: MacAddr([2, 0x73, 0x77, 0, 0, k as u8 + 1]),
            carrier: false,
        })
        .collect();
    Ok(SwitchSide {
        core: Core::new(cfg, &infos, 0),
        channel,
        mode,
        members,
    })
}

const HOST: usize = 0;
const SWITCH: usize = 1;

/// What each end makes of each link at one moment.
#[derive(Clone, Debug, PartialEq)]
struct Link {
    /// The host carries the channel on it (LACP distributing with a
    /// partner heard, PAgP in the channel, or a static bond's member with
    /// carrier).
    host: bool,
    /// The host's own word on it.
    host_why: String,
    /// The switch member's flag.
    flag: MemberFlag,
    /// And why.
    flag_why: String,
}

type Node = Either<lagkit_bond::Core, Peer>;

fn switch_core(sim: &Sim<Node>) -> &Core {
    sim.system(SWITCH)
        .b()
        .and_then(Peer::core)
        .expect("the switch")
}

fn links_now(sim: &Sim<Node>, members: &[PortId]) -> Vec<Link> {
    let core = switch_core(sim);
    let host = sim.system(HOST).a().expect("the host");
    members
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let (flag, flag_why) = core.member_flag(p);
            let (host, host_why) = host_link(host, i);
            Link {
                host,
                host_why,
                flag,
                flag_why,
            }
        })
        .collect()
}

/// Whether the bond's member `i` carries the channel, and the bond's
/// word on it.
fn host_link(bond: &lagkit_bond::Core, i: usize) -> (bool, String) {
    let Some(m) = bond.members().get(i) else {
        return (false, "no member".into());
    };
    if let Some(st) = bond.lacp_status(i) {
        let heard = st.rx != lacp::RxState::Defaulted;
        let why = if st.distributing && heard {
            "LACP distributing".to_string()
        } else if !m.carrier_up() {
            "no carrier".to_string()
        } else if !heard {
            "LACP heard no partner (defaulted): not aggregated".to_string()
        } else {
            format!(
                "LACP {}",
                st.not_bundled_reason()
                    .unwrap_or_else(|| "not distributing".into())
            )
        };
        return (st.distributing && heard, why);
    }
    if let Some(st) = bond.pagp_status(i) {
        let in_channel = m.usable();
        return (
            in_channel,
            if in_channel {
                "PAgP in the channel".into()
            } else {
                format!("PAgP {}, not in the channel", st.state.name())
            },
        );
    }
    let up = m.usable();
    (
        up,
        if up {
            "static member, carrier up".into()
        } else {
            "static member, no carrier".into()
        },
    )
}

/// A switch member's flag with its reason, unless the reason only
/// repeats the flag.
fn flag_text(f: MemberFlag, why: &str) -> String {
    let word = flag_word(f);
    match why.strip_prefix(&word[2..]) {
        // "waiting for Aggregate_Wait_Time" after "w waiting".
        Some(rest) => format!("{word}{rest}"),
        None if why.is_empty() => word.to_string(),
        None => format!("{word}: {why}"),
    }
}

fn flag_word(f: MemberFlag) -> &'static str {
    match f {
        MemberFlag::Bundled => "P bundled",
        MemberFlag::Individual => "I stand-alone",
        MemberFlag::HotStandby => "H hot standby",
        MemberFlag::Suspended => "s suspended",
        MemberFlag::Down => "D down",
        MemberFlag::Waiting => "w waiting",
    }
}

/// Adds `who`'s new state at `at` to the timeline; a state it had for
/// less than the printed millisecond (ports settling at start, a PDU's
/// round trip) is replaced, not listed.
fn note(timeline: &mut Vec<(Instant, String, String)>, at: Instant, who: String, what: String) {
    let ms = |t: Instant| t.as_nanos() / 1_000_000;
    if let Some(k) = timeline
        .iter()
        .rposition(|(t, w, _)| ms(*t) == ms(at) && *w == who)
    {
        timeline.remove(k);
    }
    timeline.push((at, who, what));
}

/// Runs `lagkit sim pair`.
pub fn run(args: Args) -> Result<(), String> {
    let host = host_side(&args.host, args.bond.as_deref())?;
    let sw = switch_side(&args.switch, args.channel)?;
    let cabled = host.settings.members.len().min(sw.members.len());
    if cabled == 0 {
        return Err("the host bond or the switch's channel has no members to cable".into());
    }
    let plan = args.run.plan(cabled)?;
    let links = plan.links;
    if links > cabled {
        return Err(format!(
            "--links {links}: the host has {} members and channel-group {} {}; cable at most {cabled}",
            host.settings.members.len(),
            sw.channel,
            sw.members.len()
        ));
    }
    let members: Vec<PortId> = sw.members[..links].to_vec();
    let names: Vec<(String, String)> = (0..links)
        .map(|i| {
            (
                host.settings.members[i].clone(),
                sw.core.port_name(members[i]).to_string(),
            )
        })
        .collect();
    let switch_name = sw.core.name().to_string();
    let mut sim: Sim<Node> = Sim::with_seed(args.run.seed);
    sim.add_node(Either::A(host_core(&host, links)));
    sim.add_node(Either::B(Peer::Switch(Box::new(sw.core))));
    for (i, p) in members.iter().enumerate() {
        sim.connect(
            End {
                system: HOST,
                port: ProtoPort(i),
            },
            End {
                system: SWITCH,
                port: ProtoPort(p.0),
            },
            plan.spec,
        );
    }
    args.run.prepare(&plan, &mut sim);
    println!(
        "lagkit sim pair: host {} ({}; {}) <-> switch {switch_name} channel-group {} mode {} ({}), {}",
        host.settings.name,
        host.what,
        names.iter().map(|n| n.0.as_str()).collect::<Vec<_>>().join(", "),
        sw.channel,
        sw.mode,
        names.iter().map(|n| n.1.as_str()).collect::<Vec<_>>().join(", "),
        plan.headline()
    );
    let wall = std::time::Instant::now();
    let mut timeline: Vec<(Instant, String, String)> = Vec::new();
    let mut last: Option<Vec<Link>> = None;
    let mut formed_at: Option<Instant> = None;
    let formed = |l: &[Link]| l.iter().all(|x| x.host && x.flag == MemberFlag::Bundled);
    sim.run_until_cond(plan.end, |s| {
        let now = links_now(s, &members);
        if last.as_ref() != Some(&now) {
            for (i, l) in now.iter().enumerate() {
                let was = last.as_ref().map(|v| &v[i]);
                if was.map(|w| (w.flag, &w.flag_why)) != Some((l.flag, &l.flag_why)) {
                    let who = format!("switch {}: ", names[i].1);
                    note(&mut timeline, s.now(), who, flag_text(l.flag, &l.flag_why));
                }
                if was.map(|w| (w.host, &w.host_why)) != Some((l.host, &l.host_why)) {
                    let who = format!("host {}: ", names[i].0);
                    note(&mut timeline, s.now(), who, l.host_why.clone());
                }
            }
            if formed(&now) && formed_at.is_none() {
                formed_at = Some(s.now());
            }
            last = Some(now);
        }
        false
    });
    let elapsed = wall.elapsed();
    let end = links_now(&sim, &members);
    let mut out = String::new();
    if !args.run.quiet {
        out.push_str("\ntimeline:\n");
        for (t, who, what) in &timeline {
            let _ = writeln!(out, "  {:>11}  {who}{what}", t.to_string());
        }
    }
    let _ = writeln!(out, "\nfinal state at {}:", sim.now());
    for (i, l) in end.iter().enumerate() {
        let _ = writeln!(
            out,
            "  link {}: host {} ({}) <-> switch {} ({})",
            i + 1,
            names[i].0,
            l.host_why,
            names[i].1,
            flag_text(l.flag, &l.flag_why)
        );
    }
    let core = switch_core(&sim);
    for (i, p) in members.iter().enumerate() {
        if let Some(m) = core.mismatch(*p) {
            let _ = writeln!(out, "  switch {}: {m}", names[i].1);
        }
    }
    out.push('\n');
    out.push_str(&verdict(&host, &end, formed_at, &sw.mode));
    args.run.finish(out, &sim, elapsed)
}

/// The answer, in words: whether and when the channel formed, and if not
/// what each end does and what to change.
fn verdict(host: &HostSide, end: &[Link], formed_at: Option<Instant>, mode: &str) -> String {
    let n = end.len();
    let both = end
        .iter()
        .filter(|l| l.host && l.flag == MemberFlag::Bundled)
        .count();
    let host_n = end.iter().filter(|l| l.host).count();
    let sw_n = end.iter().filter(|l| l.flag == MemberFlag::Bundled).count();
    let alone = end
        .iter()
        .filter(|l| l.flag == MemberFlag::Individual)
        .count();
    let protocol = host.settings.mode == Mode::Lacp || host.settings.pagp.is_some();
    if both == n {
        let when = formed_at.map_or(String::new(), |t| format!(" at {t}"));
        let all = if n == 1 {
            "its one link carries it".to_string()
        } else {
            format!("all {n} links carry it")
        };
        return format!("verdict: the channel forms{when}: {all} at both ends.\n");
    }
    let mut v = String::new();
    if sw_n > host_n && protocol {
        let _ = writeln!(
            v,
            "verdict: BLACK HOLE: the switch (mode {mode}) bundles {sw_n} of {n} links and spreads frames over them, but the host aggregates {host_n}: what the switch sends on a link the host does not collect on is lost. Run the same protocol at both ends (channel-group mode active/passive for an 802.3ad bond, desirable/auto for PAgP), or a static bond facing mode on."
        );
    } else if host_n > sw_n && !protocol {
        let _ = writeln!(
            v,
            "verdict: the channel does not form at the switch: the host sends on all {host_n} links as one static channel, but the switch bundles {sw_n} ({alone} stand alone): frames from the host arrive on ports the switch treats apart, and its MAC table flaps between them. Use mode on at the switch, or a protocol at the host."
        );
    } else if both == 0 {
        let _ = writeln!(
            v,
            "verdict: the channel does not form: no link carries it at both ends (host {host_n} of {n}, switch {sw_n} of {n}{})",
            if alone > 0 {
                format!(", {alone} stand-alone")
            } else {
                String::new()
            }
        );
    } else {
        let _ = writeln!(
            v,
            "verdict: the channel forms on {both} of {n} links; the others carry nothing of it:"
        );
    }
    for (i, l) in end.iter().enumerate() {
        if !(l.host && l.flag == MemberFlag::Bundled) {
            let _ = writeln!(
                v,
                "  link {}: host: {}; switch: {}",
                i + 1,
                l.host_why,
                flag_text(l.flag, &l.flag_why)
            );
        }
    }
    v
}
