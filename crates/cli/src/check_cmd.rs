//! `lagkit check`: both ends' configurations, and what does not match.

use crate::bond_cmd::Failure;
use lagkit_check::facts::{read_input, ReadError};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `lagkit check`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = crate::examples::CHECK)]
pub struct Args {
    /// Configurations of one or both ends: a lagkit bond configuration
    /// (TOML), Linux's /proc/net/bonding/bondX, ifupdown, systemd-networkd
    /// (.netdev/.network, and .link files), netplan YAML, NetworkManager
    /// keyfiles, teamd JSON, AIX lsattr; a Cisco IOS configuration
    /// (running-config or the commands as typed) or Open vSwitch's
    /// bond/show and lacp/show (with ovs-vsctl show); a Catalyst's show
    /// output as a terminal recorded it (show etherchannel summary/detail,
    /// show lacp neighbor, show pagp neighbor, show interfaces
    /// status/counters), checked against /proc/net/bonding/bondX or
    /// `lagkit status --json`. Two switch configurations are checked
    /// against each other. `-` reads standard input; each is read up to
    /// 64 MiB. A directory (or a quoted glob) checks a fleet: every file
    /// under it is read, each host bond is paired with the switch channel
    /// it is cabled to (from a CSV map `host,switch,channel|port`, LLDP
    /// tables from `lldpctl -f keyvalue` or a switch's `show lldp
    /// neighbors`, or a description naming the host), and each pair is
    /// checked; a host is named by its directory or its file name up to
    /// the first dot.
    #[arg(required_unless_present_any = ["lacpdus", "live"])]
    files: Vec<PathBuf>,
    /// Also ask the lagkit bonds running in this network namespace what
    /// their LACP partners say (partners, keys, rates, members left out).
    #[arg(long)]
    live: bool,
    /// A capture (pcap or pcapng, from either end or the wire) whose
    /// LACPDUs tell what the ends actually say; may be repeated.
    #[arg(long, value_name = "CAPTURE")]
    lacpdus: Vec<PathBuf>,
    /// The switch's channel group the host is cabled to (needed when the
    /// switch configuration has several).
    #[arg(long)]
    channel: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Refuse a Cisco IOS configuration with lines lagkit does not read
    /// (a misspelt command, say) instead of warning about them (exit
    /// status 2); well-known commands outside lagkit's subset (version,
    /// spanning-tree, description, ...) are still only counted.
    #[arg(long)]
    strict: bool,
}

/// An IOS line that was not read, with its file, for output.
#[derive(serde::Serialize)]
struct UnreadLine<'a> {
    file: &'a str,
    #[serde(flatten)]
    unread: &'a lagkit_ios::Unread,
}

/// Runs `lagkit check`; exits 0 (nothing or information only), 1
/// (warnings), 3 (errors), 2 (an input could not be read).
pub fn run(a: Args) -> ExitCode {
    if a.files.iter().any(|f| crate::inputs::is_many(f)) {
        return fleet(&a);
    }
    let mut inputs = Vec::new();
    for f in &a.files {
        let name = lagkit_input::name(f);
        // At most lagkit_input::CONFIG: /dev/zero, a sparse file or an
        // endless pipe is refused at once (docs/reference/limits.md).
        let text = match lagkit_input::read_text(f, &lagkit_input::CONFIG) {
            Ok(t) => t,
            Err(e) => {
                let why = e.reason();
                return unreadable(a.json, ReadError::Io { file: name, why });
            }
        };
        match read_input(&name, &text) {
            Ok(i) => inputs.push(i),
            Err(e) => return unreadable(a.json, e),
        }
    }
    // Every IOS line not read: warned one by one when suspect, counted
    // when well known; under --strict the suspect ones refuse the input.
    let unread: Vec<UnreadLine> = inputs
        .iter()
        .flat_map(|i| {
            i.unread.iter().map(|u| UnreadLine {
                file: &i.file,
                unread: u,
            })
        })
        .collect();
    let warned = unread.iter().filter(|u| u.unread.is_warning()).count();
    let level = if a.strict {
        "error"
    } else {
        "warning: line ignored"
    };
    for u in unread.iter().filter(|u| u.unread.is_warning()) {
        eprintln!(
            "lagkit: {}:{}: {level}: {}",
            u.file, u.unread.line, u.unread
        );
    }
    // Show output: rows that could not be read are warned (they may hide
    // a member), commands and text that are not read are noted.
    let show_unread: Vec<serde_json::Value> = inputs
        .iter()
        .flat_map(|i| {
            i.show_unread().iter().map(move |u| {
                let note = if u.is_warning() { "warning" } else { "note" };
                eprintln!("lagkit: {}:{}: {note}: {u}", i.file, u.line);
                serde_json::json!({ "file": i.file, "line": u.line, "text": u.text, "why": u.why })
            })
        })
        .collect();
    let show_warned = inputs
        .iter()
        .flat_map(|i| i.show_unread())
        .filter(|u| u.is_warning())
        .count();
    for i in &inputs {
        if let Some(s) = lagkit_ios::not_modelled_summary(&i.unread) {
            eprintln!("lagkit: {}: note: {s}", i.file);
        }
    }
    if a.strict && warned > 0 {
        eprintln!(
            "lagkit: --strict: {warned} line(s) lagkit does not read; correct them, or run without --strict to check the rest"
        );
        if a.json {
            let v = serde_json::json!({ "findings": [], "unread": unread, "exit": 2 });
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
        return ExitCode::from(2);
    }
    let ends: Vec<lagkit_check::facts::End> = inputs.iter().map(|i| i.end.clone()).collect();
    let report = lagkit_check::rules::run(&ends, a.channel);
    let mut findings = report.findings;
    for c in &a.lacpdus {
        let name = lagkit_input::name(c);
        let said = lagkit_input::Opened::open(c)
            .map_err(|e| ReadError::Io {
                file: name.clone(),
                why: e.reason(),
            })
            .and_then(|f| lagkit_check::lacpdus::read_capture(&name, f.into_reader()));
        match said {
            Ok(s) => findings.extend(lagkit_check::lacpdus::check(&name, &s)),
            Err(e) => return unreadable(a.json, e),
        }
    }
    if a.live {
        match live_bonds() {
            Ok(bonds) if bonds.is_empty() => {
                let f =
                    Failure::Usage("--live: no lagkit bond runs in this network namespace".into());
                return crate::output::fail(&f, a.json);
            }
            Ok(bonds) => findings.extend(bonds.iter().flat_map(lagkit_check::live::check)),
            Err(e) => return crate::output::fail(&Failure::Usage(format!("--live: {e}")), a.json),
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    // A line not read may hide a setting: never a clean pass.
    let warned = warned + show_warned;
    let exit = lagkit_check::exit_status(&findings).max(u8::from(warned > 0));
    let read: Vec<String> = inputs
        .iter()
        .map(|i| format!("{} read from {}", i.counts, i.file))
        .collect();
    if a.json {
        let counts: Vec<serde_json::Value> = inputs
            .iter()
            .map(|i| serde_json::json!({ "file": i.file, "counts": i.counts }))
            .collect();
        let v = serde_json::json!({
            "findings": findings,
            "unread": unread,
            "show_unread": show_unread,
            "read": counts,
            "compared": report.compared,
            "exit": exit,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return ExitCode::from(exit);
    }
    if findings.is_empty() && warned == 0 {
        println!("no findings: the ends agree on everything lagkit checks");
    } else if findings.is_empty() {
        println!(
            "no findings in what lagkit read, but {warned} line(s) were not read (warned above): correct them and check again"
        );
    } else {
        for f in &findings {
            println!("{f}");
        }
        println!("{}", tally(findings.iter(), warned));
    }
    if !read.is_empty() {
        println!("read: {}", read.join("; "));
    }
    if !report.compared.is_empty() {
        println!("compared ({}):", report.compared.len());
        for c in &report.compared {
            println!("  {c}");
        }
    }
    ExitCode::from(exit)
}

/// An input that could not be read: exit status 2, as text or JSON.
fn unreadable(json: bool, e: ReadError) -> ExitCode {
    let f = match e {
        ReadError::Bad { file, line, why } => Failure::Input {
            file,
            line: Some(line as u64),
            column: None,
            why,
        },
        ReadError::Io { file, why } | ReadError::Dialect { file, why } => Failure::Input {
            file,
            line: None,
            column: None,
            why,
        },
    };
    crate::output::fail(&f, json)
}

/// The running bonds of this network namespace, as `check` sees them.
fn live_bonds() -> Result<Vec<lagkit_check::live::Live>, String> {
    use lagkit_api::protocol::{request, Request, Response};
    use lagkit_check::live::{Live, LivePort};
    let dir = lagkit_bondcfg::paths::netns_dir(lagkit_bondcfg::paths::netns_id());
    let mut sockets: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "sock"))
            .collect(),
        Err(_) => Vec::new(),
    };
    sockets.sort();
    let mut out = Vec::new();
    for path in sockets {
        let st = match request(&path, &Request::Status)? {
            Response::Status(s) => *s,
            other => return Err(format!("{}: unexpected answer {other:?}", path.display())),
        };
        out.push(Live {
            bond: st.name.clone(),
            socket: path.display().to_string(),
            fast: st
                .lacp
                .as_ref()
                .is_some_and(|l| l.lacp_rate == lagkit_api::status::LacpRate::Fast),
            ports: st
                .members
                .iter()
                .filter_map(|m| {
                    let l = m.lacp.as_ref()?;
                    Some(LivePort {
                        name: m.name.clone(),
                        actor_state: l.actor_state,
                        partner_mac: l.partner_mac.clone(),
                        partner_key: l.partner_key,
                        partner_state: l.partner_state,
                        not_bundled: l.not_bundled.clone(),
                    })
                })
                .collect(),
            problems: st.problems.clone(),
        });
    }
    Ok(out)
}

/// `lagkit check DIR`: every host bond of a fleet paired with its switch
/// channel and checked. Files are read on every core, each at most
/// lagkit_input::CONFIG and dropped once read: memory holds the facts,
/// not the texts.
fn fleet(a: &Args) -> ExitCode {
    use lagkit_check::fleet::{read_piece, Fleet, Piece, Via};
    use rayon::prelude::*;
    if a.channel.is_some() || a.live || !a.lacpdus.is_empty() {
        let f = Failure::Usage(
            "--channel, --live and --lacpdus check one pair; a fleet's pairs come from its map, LLDP tables or descriptions".into(),
        );
        return crate::output::fail(&f, a.json);
    }
    let files: Vec<(PathBuf, String)> = match crate::inputs::expand(&a.files) {
        Ok(f) => f
            .into_iter()
            .map(|(p, rel)| {
                let owner = lagkit_check::fleet::owner_of(&rel);
                (p, owner)
            })
            .collect(),
        Err(f) => return crate::output::fail(&f, a.json),
    };
    let read: Vec<(String, String, Result<Piece, ReadError>)> = files
        .par_iter()
        .map(|(path, owner)| {
            let name = lagkit_input::name(path);
            let piece = lagkit_input::read_text(path, &lagkit_input::CONFIG)
                .map_err(|e| ReadError::Io {
                    file: name.clone(),
                    why: e.reason(),
                })
                .and_then(|text| read_piece(&name, owner, &text));
            (name, owner.clone(), piece)
        })
        .collect();
    let mut fleet = Fleet::default();
    let mut unreadable = Vec::new();
    let mut warned = 0;
    for (name, owner, piece) in read {
        match piece {
            Ok(p) => {
                if let Piece::Config(i, _) = &p {
                    let w: Vec<_> = i.unread.iter().filter(|u| u.is_warning()).collect();
                    warned += w.len();
                    for u in w {
                        eprintln!("lagkit: {name}:{}: warning: line ignored: {u}", u.line);
                    }
                }
                fleet.add(&owner, p);
            }
            Err(e) => {
                eprintln!("lagkit: {e}");
                unreadable.push(serde_json::json!({ "file": name, "why": e.to_string() }));
            }
        }
    }
    for (file, why) in &fleet.ignored {
        eprintln!("lagkit: {file}: note: {why}");
    }
    let report = fleet.check();
    let worst = lagkit_check::exit_status(&report.all().cloned().collect::<Vec<_>>());
    let exit = if unreadable.is_empty() {
        worst.max(u8::from(warned > 0))
    } else {
        2
    };
    if a.json {
        let v = serde_json::json!({
            "hosts": fleet.hosts.len(),
            "switches": fleet.switches.len(),
            "pairs": report.pairs,
            "findings": report.findings,
            "unreadable": unreadable,
            "lines_not_read": warned,
            "exit": exit,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return ExitCode::from(exit);
    }
    let via = |v: &Via| match v {
        Via::Map => "map",
        Via::Lldp => "LLDP",
        Via::Name => "description",
    };
    for p in &report.pairs {
        let head = format!(
            "{} {} - {} Port-channel{} (by {}: {})",
            p.host,
            p.bond,
            p.switch,
            p.channel,
            via(&p.via),
            p.evidence
        );
        if p.findings.is_empty() {
            println!("{head}: no findings");
        } else {
            println!("{head}:");
            for f in &p.findings {
                for l in f.to_string().lines() {
                    println!("  {l}");
                }
            }
        }
    }
    for f in &report.findings {
        println!("{f}");
    }
    let by = |v: Via| report.pairs.iter().filter(|p| p.via == v).count();
    let unpaired = report
        .findings
        .iter()
        .filter(|f| f.code == "fleet-unpaired")
        .count();
    println!(
        "{} host(s), {} switch(es): {} pair(s) checked ({} by map, {} by LLDP, {} by description), {} bond(s) unpaired; {}{}",
        fleet.hosts.len(),
        fleet.switches.len(),
        report.pairs.len(),
        by(Via::Map),
        by(Via::Lldp),
        by(Via::Name),
        unpaired,
        tally(report.all(), warned),
        if unreadable.is_empty() {
            String::new()
        } else {
            format!(", {} file(s) unreadable (named above)", unreadable.len())
        }
    );
    ExitCode::from(exit)
}

/// "N error(s), N warning(s), N note(s)", and the lines not read.
fn tally<'a>(findings: impl Iterator<Item = &'a lagkit_check::Finding>, warned: usize) -> String {
    use lagkit_check::Severity::*;
    let mut n = [0usize; 3];
    for f in findings {
        n[match f.severity {
            Error => 0,
            Warning => 1,
            Info => 2,
        }] += 1;
    }
    let mut s = format!("{} error(s), {} warning(s), {} note(s)", n[0], n[1], n[2]);
    if warned > 0 {
        s += &format!(", {warned} line(s) not read (warned above)");
    }
    s
}
