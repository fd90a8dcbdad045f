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
    /// 64 MiB.
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
        let count = |s| findings.iter().filter(|f| f.severity == s).count();
        use lagkit_check::Severity::*;
        println!(
            "{} error(s), {} warning(s), {} note(s){}",
            count(Error),
            count(Warning),
            count(Info),
            if warned > 0 {
                format!(", {warned} line(s) not read (warned above)")
            } else {
                String::new()
            }
        );
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
    use lagkit_bond::protocol::{request, Request, Response};
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
            fast: st.lacp.as_ref().is_some_and(|l| l.lacp_rate == "fast"),
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
