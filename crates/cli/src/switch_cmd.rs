//! `lagkit switch CONFIG --port NAME=DEVICE ...`: lagkit's own switch in
//! the foreground; `lagkit switch show ...` and `lagkit switch test ...`:
//! Cisco's show and test commands against a running one.

use crate::bond_cmd::Failure;
use lagkit_switchd::protocol::{request, socket_dir, socket_path, Request, Response};
use lagkit_switchd::{Options, Switch, SwitchError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Options of `lagkit switch`.
#[derive(clap::Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_long_help = crate::examples::SWITCH
)]
pub struct Args {
    #[command(subcommand)]
    what: Option<Sub>,
    /// The switch's configuration: the Cisco IOS subset lagkit reads
    /// (hostname, interface [range], channel-group N mode
    /// on|active|passive|desirable|auto [non-silent], lacp rate fast, interface port-channel, mtu, switchport access
    /// vlan, switchport mode trunk, port-channel load-balance, shutdown).
    #[arg(required = true)]
    config: Option<PathBuf>,
    /// A port: the interface as the configuration names it and the Linux
    /// device that carries it, e.g. Gi8/4=veth4 (repeatable; port order is
    /// the order given). The switch sets each device administratively up,
    /// or down for an interface configured shutdown.
    #[arg(long = "port", value_name = "NAME=DEVICE", value_parser = parse_port)]
    ports: Vec<(String, String)>,
    /// Only read the configuration, print what would run, and exit.
    #[arg(long)]
    check: bool,
    /// Refuse a configuration with lines lagkit does not read (a misspelt
    /// command, say) instead of warning about them; well-known commands
    /// outside lagkit's subset (version, spanning-tree, description, ...)
    /// are still only counted. The same rule as `lagkit check --strict`.
    #[arg(long)]
    strict: bool,
    /// The control socket (default: /run/lagkit/<netns>/switch/<hostname>.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Serve Prometheus metrics at ADDRESS:PORT of the switch's network
    /// namespace (127.0.0.1:9465, [::1]:9465, 0.0.0.0:9465), or at
    /// 127.0.0.1:PORT given a port alone (see docs/reference/metrics.md).
    #[arg(long, value_name = "ADDR:PORT|PORT", value_parser = parse_listen)]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Who forwards data frames: `bpf` (a tc BPF program on every port's
    /// ingress: frames never leave the kernel), `userspace` (the daemon's
    /// loop over packet sockets), or `auto`: bpf where the kernel runs it
    /// and no port has storm control, else userspace. `show platform
    /// forwarding` names the engine and why.
    #[arg(long, value_name = "ENGINE", default_value = "auto", value_parser = crate::bond_cmd::parse_engine)]
    engine: lagkit_bondcfg::Engine,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Ask a running switch (--name NAME): `show etherchannel summary |
    /// etherchannel [N] detail | etherchannel load-balance[ing] | lacp
    /// neighbor [detail] | lacp sys-id | lacp counters | lacp internal | pagp
    /// neighbor | pagp counters | pagp internal | etherchannel protocol |
    /// etherchannel N port-channel | interfaces counters |
    /// interfaces status | mac address-table | running-config`, in IOS's
    /// layouts; words may be abbreviated as on a Catalyst (`sh eth sum`),
    /// and IOS's filters follow a `|` word: `"|" include RE`, `"|"
    /// exclude RE`, `"|" begin RE` (or `"|include" RE`).
    #[command(visible_alias = "sh")]
    Show(Query),
    /// `test etherchannel load-balance interface port-channel N ip|mac|port
    /// SRC DST`: which member a flow takes, and why.
    Test(Query),
    /// Clears what a killed switch left: the BPF engine's programs, which
    /// keep its ports forwarding with its last plan until a switch of the
    /// same name adopts them, their pins, its state file and control
    /// socket (default: every switch of this network namespace that left
    /// any and does not run).
    Down(DownArgs),
}

#[derive(clap::Args, Debug)]
struct DownArgs {
    /// The switch (its hostname).
    #[arg(long, short = 'n', value_name = "NAME")]
    name: Option<String>,
}

#[derive(clap::Args, Debug)]
struct Query {
    /// The command's words, as on a Catalyst (a `|` word and a filter may
    /// follow: quote the `|` from the shell).
    #[arg(required = true, num_args = 1..)]
    words: Vec<String>,
    /// Print JSON instead of Cisco's text.
    #[arg(long)]
    json: bool,
    /// The switch (its hostname); default: the only one running in this
    /// network namespace.
    #[arg(long, short = 'n', value_name = "NAME")]
    name: Option<String>,
    /// The control socket.
    #[arg(long)]
    socket: Option<PathBuf>,
}

fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    let addr = match s.parse::<u16>() {
        Ok(port) => lagkit_switchd::metrics::loopback(port),
        Err(_) => s.parse::<std::net::SocketAddr>().map_err(|_| {
            format!("'{s}': write ADDRESS:PORT (127.0.0.1:9465, [::1]:9465, 0.0.0.0:9465) or a port alone for 127.0.0.1")
        })?,
    };
    if addr.port() == 0 {
        return Err(format!("'{s}': the port must be from 1 to 65535"));
    }
    Ok(addr)
}

fn parse_port(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, d)) if !n.is_empty() && !d.is_empty() => Ok((n.to_string(), d.to_string())),
        _ => Err(format!(
            "'{s}': write NAME=DEVICE, e.g. Gi8/4=veth4 (the interface as the configuration names it, then the Linux device)"
        )),
    }
}

impl Args {
    /// Whether this runs the daemon (rather than asking one).
    pub fn is_daemon(&self) -> bool {
        self.what.is_none()
    }
}

/// `lagkit switch ...`.
pub fn run(a: Args) -> Result<(), Failure> {
    match a.what {
        Some(Sub::Show(q)) => show(q),
        Some(Sub::Test(q)) => test(q),
        Some(Sub::Down(d)) => down(d),
        None => daemon(a),
    }
}

/// `lagkit switch down [--name NAME]`.
fn down(d: DownArgs) -> Result<(), Failure> {
    crate::privilege::require("lagkit switch down", crate::privilege::Need::NetAdmin)?;
    let ns = lagkit_bondcfg::paths::netns_id();
    let names: Vec<String> = match d.name {
        Some(n) => vec![n],
        None => std::fs::read_dir(socket_dir(ns))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let f = e.file_name().to_string_lossy().into_owned();
                f.strip_suffix(".state.json").map(str::to_string)
            })
            .collect(),
    };
    let mut cleared = 0;
    for name in &names {
        let sock = socket_path(ns, name);
        if std::os::unix::net::UnixStream::connect(&sock).is_ok() {
            return Err(Failure::Runtime(format!(
                "switch {name} is running: stop it (SIGTERM, or `systemctl stop lagkit-switch@...`), which removes everything it made"
            )));
        }
        let _ = std::fs::remove_file(&sock);
        let links = lagkit_switchd::state::release(ns, name);
        if links > 0 {
            println!("{name}: detached the programs a killed switch left on {links} port(s)");
            cleared += 1;
        }
    }
    if cleared == 0 {
        println!("nothing to clear: no killed switch left programs in this network namespace");
    }
    Ok(())
}

fn config_error(path: &Path, e: &lagkit_switch::config::ConfigError) -> Failure {
    let at = if e.line == 0 {
        format!("{}", path.display())
    } else {
        format!("{}:{}", path.display(), e.line)
    };
    Failure::Usage(format!("{at}: {}\n  fix: {}", e.why, e.fix))
}

/// Reads and checks the IOS configuration against the ports given. Lines
/// not read: each suspect one named, the well-known ones counted;
/// `strict` refuses the suspect ones (as `lagkit check --strict` does).
fn read_config(
    path: &Path,
    ports: &[(String, String)],
    strict: bool,
) -> Result<lagkit_switch::config::SwitchConfig, Failure> {
    // The limit `lagkit check` reads IOS with, so both take the same files.
    let text = lagkit_input::read_text(path, &lagkit_input::CONFIG)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let config =
        lagkit_switch::config::from_ios(&text, ports).map_err(|e| config_error(path, &e))?;
    let level = if strict {
        "error"
    } else {
        "warning: line ignored"
    };
    let mut warned = 0;
    for u in config.unread.iter().filter(|u| u.is_warning()) {
        eprintln!("lagkit: {}:{}: {level}: {u}", path.display(), u.line);
        warned += 1;
    }
    if let Some(s) = lagkit_ios::not_modelled_summary(&config.unread) {
        eprintln!("lagkit: {}: note: {s}", path.display());
    }
    if strict && warned > 0 {
        return Err(Failure::Usage(format!(
            "--strict: {warned} line(s) of {} lagkit does not read; correct them, or run without --strict",
            path.display()
        )));
    }
    for s in &config.suspended {
        tracing::warn!("suspended (Cisco flag s): {}", s.why);
    }
    Ok(config)
}

fn daemon(a: Args) -> Result<(), Failure> {
    let Some(path) = a.config else {
        return Err(Failure::Usage(
            "give the switch's configuration file".into(),
        ));
    };
    if a.ports.is_empty() {
        return Err(Failure::Usage(
            "no ports: map each interface of the configuration to a device with --port NAME=DEVICE"
                .into(),
        ));
    }
    let mut config = read_config(&path, &a.ports, a.strict)?;
    let warned = config.unread.iter().filter(|u| u.is_warning()).count();
    if a.check {
        println!(
            "switch {}: {} ports, {} port-channels, load-balance {}{}",
            Switch::name_of(&config),
            a.ports.len(),
            config.channels.len(),
            config.method,
            if warned > 0 {
                format!("; {warned} line(s) not read (warned above)")
            } else {
                String::new()
            }
        );
        for c in &config.channels {
            println!(
                "  Port-channel{}: mode {}, {} members",
                c.id.0,
                c.mode,
                c.members.len()
            );
        }
        for s in &config.suspended {
            println!("  suspended: {}", s.why);
        }
        return Ok(());
    }
    crate::privilege::require("lagkit switch", crate::privilege::Need::Switch)?;
    let stop = Arc::new(AtomicBool::new(false));
    let reload = Arc::new(AtomicBool::new(false));
    let handoff = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    }
    // SIGUSR2: exit leaving the ports forwarding in the kernel (or, under
    // the userspace engine, their sockets handed on), for the next switch
    // to adopt (a service restart, a package upgrade).
    signal_hook::flag::register(signal_hook::consts::SIGUSR2, handoff.clone())
        .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    signal_hook::flag::register(signal_hook::consts::SIGHUP, reload.clone())
        .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    // The endpoint outlives a SIGHUP's new switch: scrapes go on.
    let mut metrics = match a.metrics_listen {
        Some(addr) => Some(
            lagkit_switchd::metrics::SwitchMetrics::start(addr)
                .map_err(|e| Failure::Runtime(format!("metrics: cannot listen on {addr}: {e}")))?,
        ),
        None => None,
    };
    // The userspace engine's port sockets a previous switch handed over.
    let exe = crate::bond_cmd::inherit();
    // SIGHUP re-reads the file; a valid one replaces the running switch
    // (its ports close and open again, channels renegotiate), an invalid
    // one is logged and the switch runs on as it was.
    loop {
        let name = Switch::name_of(&config);
        let status = format!(
            "switch {name}: {} ports, {} port-channels",
            a.ports.len(),
            config.channels.len()
        );
        let mut sw = Switch::start(Options {
            config,
            ports: a.ports.clone(),
            socket: a.socket.clone(),
            engine: a.engine,
        })
        .map_err(|e| match e {
            SwitchError::Config(c) => config_error(&path, &c),
            other => Failure::Runtime(other.to_string()),
        })?;
        let unclaimed = lagkit_dataplane::handoff::drain_unclaimed();
        if !unclaimed.is_empty() {
            tracing::warn!(descriptors = ?unclaimed, "closed descriptors handed over for what this switch does not run");
        }
        let (engine, why, _) = sw.engine();
        let status = format!("{status}, engine {engine} ({why})");
        // Every port is open and the control socket answers.
        crate::notify::ready(&status);
        let next = loop {
            if stop.load(Ordering::Relaxed) {
                break None;
            }
            if handoff.load(Ordering::Relaxed) {
                tracing::info!(switch = %name, "SIGUSR2: handing off to the next lagkit switch (the kernel keeps forwarding)");
                crate::notify::stopping("handing off: the ports keep forwarding");
                if sw.handoff() {
                    // The userspace engine's sockets: to the service
                    // manager's store, or to this program run again here.
                    crate::bond_cmd::pass_on(exe.as_deref());
                    // EX_TEMPFAIL, as `lagkit up`: the unit starts the next
                    // switch, which adopts.
                    std::process::exit(crate::bond_cmd::HANDOFF_EXIT);
                }
                return Ok(());
            }
            if reload.swap(false, Ordering::Relaxed) {
                tracing::info!(config = %path.display(), "SIGHUP: reloading");
                crate::notify::reloading();
                match read_config(&path, &a.ports, a.strict) {
                    Ok(c) => break Some(c),
                    Err(e) => {
                        tracing::error!("reload refused, keeping the running configuration: {e}");
                        crate::notify::ready(&status);
                    }
                }
            }
            sw.step();
            if let Some(m) = metrics.as_mut() {
                m.update(&sw);
            }
        };
        match next {
            None => {
                tracing::info!(switch = %name, "switch stopping");
                crate::notify::stopping("stopping");
                return Ok(());
            }
            Some(c) => {
                tracing::info!(switch = %name, "restarting the switch with the new configuration");
                // The old switch closes its ports and socket before the new
                // one opens them.
                drop(sw);
                config = c;
            }
        }
    }
}

/// The socket of the switch a query means.
fn socket(q: &Query) -> Result<PathBuf, Failure> {
    switch_socket(q.name.as_deref(), q.socket.as_ref())
}

/// The control socket of the switch named `name` (default: the only one
/// here), or `socket` when given.
pub fn switch_socket(name: Option<&str>, socket: Option<&PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(s) = socket {
        return Ok(s.clone());
    }
    let ns = lagkit_bondcfg::paths::netns_id();
    if let Some(n) = name {
        return Ok(socket_path(ns, n));
    }
    let dir = socket_dir(ns);
    let mut v = crate::bond_cmd::sockets_in(&dir);
    match v.len() {
        0 => Err(Failure::Runtime(format!(
            "no lagkit switch runs in this network namespace (nothing in {}); start one with `lagkit switch CONFIG --port NAME=DEVICE ...`",
            dir.display()
        ))),
        1 => Ok(v.remove(0)),
        _ => {
            let names: Vec<String> = v
                .iter()
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect();
            Err(Failure::Usage(format!(
                "{} switches run here ({}): choose one with --name",
                names.len(),
                names.join(", ")
            )))
        }
    }
}

fn ask(
    q: &Query,
    req: &Request,
    filter: Option<&lagkit_switch::show::Filter>,
) -> Result<(), Failure> {
    let path = socket(q)?;
    match request(&path, req).map_err(|e| Failure::Runtime(e.to_string()))? {
        Response::Error(e) => Err(Failure::Runtime(e)),
        Response::Show { text, json } => {
            if q.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json).unwrap_or_default()
                );
            } else if let Some(f) = filter {
                print!("{}", f.apply(&text));
            } else {
                print!("{text}");
            }
            Ok(())
        }
        Response::Capture(_) => Err(Failure::Runtime("unexpected answer: a capture".into())),
    }
}

fn words(q: &Query) -> Vec<String> {
    q.words.iter().map(|w| w.to_ascii_lowercase()).collect()
}

/// Every `show` command the switch answers, as docs/reference/ios.md
/// writes it (`N` a channel number); a test holds this list, the parser
/// below and the page together.
pub const SHOW_COMMANDS: &[&str] = &[
    "show etherchannel summary",
    "show etherchannel load-balance",
    "show etherchannel load-balancing",
    "show etherchannel detail",
    "show etherchannel N detail",
    "show etherchannel N port-channel",
    "show etherchannel protocol",
    "show mac address-table",
    "show mac-address-table",
    "show interfaces counters",
    "show interfaces status",
    "show lacp neighbor",
    "show lacp neighbors",
    "show lacp neighbor detail",
    "show lacp sys-id",
    "show lacp counters",
    "show lacp internal",
    "show pagp neighbor",
    "show pagp neighbors",
    "show pagp counters",
    "show pagp internal",
    "show running-config",
    "show storm-control",
    "show platform forwarding",
];

fn show(q: Query) -> Result<(), Failure> {
    let (w, filter) =
        lagkit_switch::show::Filter::split(&q.words).map_err(|e| Failure::Usage(e.to_string()))?;
    if filter.is_some() && q.json {
        return Err(Failure::Usage(
            "a | filter applies to IOS's text: leave out --json, or filter the JSON with jq".into(),
        ));
    }
    let w: Vec<String> = w.iter().map(|w| w.to_ascii_lowercase()).collect();
    let req = show_request(&w).map_err(Failure::Usage)?;
    ask(&q, &req, filter.as_ref())
}

/// The request for `show WORDS`, each word abbreviated as a Catalyst
/// takes them (`sh eth sum`).
fn show_request<S: AsRef<str>>(words: &[S]) -> Result<Request, String> {
    use lagkit_switch::show::expand;
    let given: Vec<&str> = words.iter().map(|s| s.as_ref()).collect();
    let known = || {
        SHOW_COMMANDS
            .iter()
            .map(|c| format!("`{}`", c.trim_start_matches("show ")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let full = expand(&given, lagkit_switch::show::SHOW_COMMANDS).map_err(|e| {
        format!(
            "show {}: {e}\n  lagkit switch shows {} (each word may be abbreviated)",
            given.join(" "),
            known()
        )
    })?;
    let w: Vec<&str> = full.iter().map(String::as_str).collect();
    Ok(match w.as_slice() {
        ["etherchannel", "summary"] => Request::EtherchannelSummary,
        ["etherchannel", "load-balance"] => Request::EtherchannelLoadBalance,
        ["etherchannel", "load-balancing"] => Request::EtherchannelLoadBalancing,
        ["interfaces", "status"] => Request::InterfacesStatus,
        ["lacp", "neighbor" | "neighbors", "detail"] => Request::LacpNeighborDetail,
        ["lacp", "sys-id"] => Request::LacpSysId,
        ["lacp", "counters"] => Request::LacpCounters,
        ["lacp", "internal"] => Request::LacpInternal,
        ["pagp", "counters"] => Request::PagpCounters,
        ["pagp", "internal"] => Request::PagpInternal,
        ["running-config"] => Request::RunningConfig,
        ["storm-control"] => Request::StormControl,
        ["platform", "forwarding"] => Request::PlatformForwarding,
        ["etherchannel", "protocol"] => Request::EtherchannelProtocol,
        ["etherchannel", n, "port-channel"] => Request::EtherchannelPortChannel {
            channel: n.parse().map_err(|_| {
                format!("show etherchannel {n} port-channel: the channel is a number")
            })?,
        },
        ["mac", "address-table"] | ["mac-address-table"] => Request::MacAddressTable,
        ["interfaces", "counters"] => Request::InterfacesCounters,
        ["etherchannel", "detail"] => Request::EtherchannelDetail { channel: None },
        ["etherchannel", n, "detail"] => {
            Request::EtherchannelDetail {
                channel: Some(n.parse().map_err(|_| {
                    format!("show etherchannel {n} detail: the channel is a number")
                })?),
            }
        }
        ["lacp", "neighbor"] | ["lacp", "neighbors"] => Request::LacpNeighbor,
        ["pagp", "neighbor"] | ["pagp", "neighbors"] => Request::PagpNeighbor,
        _ => {
            return Err(format!(
                "show {}: lagkit switch shows {}",
                given.join(" "),
                known()
            ));
        }
    })
}

/// `etherchannel load-balance interface port-channel N KIND SRC DST`
/// (`port-channel N`, `port-channelN` or `poN`).
fn test_request(w: &[&str]) -> Result<Request, String> {
    let usage =
        "write: test etherchannel load-balance interface port-channel N ip|mac|port SRC DST";
    let ["etherchannel", "load-balance", "interface", rest @ ..] = w else {
        return Err(usage.into());
    };
    let (num, rest) = match rest {
        ["port-channel", n, rest @ ..] => (*n, rest),
        [pc, rest @ ..] => (
            pc.strip_prefix("port-channel")
                .or_else(|| pc.strip_prefix("po"))
                .unwrap_or(pc),
            rest,
        ),
        [] => return Err(usage.into()),
    };
    let channel: u32 = num
        .parse()
        .map_err(|_| format!("'{num}' is not a port-channel number; {usage}"))?;
    let [kind, src, dst] = rest else {
        return Err(usage.into());
    };
    lagkit_switchd::protocol::test_key(kind, src, dst).map_err(|e| e.to_string())?;
    Ok(Request::TestLoadBalance {
        channel,
        kind: kind.to_string(),
        src: src.to_string(),
        dst: dst.to_string(),
    })
}

fn test(q: Query) -> Result<(), Failure> {
    let w = words(&q);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    // `test eth load int po3 ...`: the command's words abbreviate.
    let full = lagkit_switch::show::expand(&w, lagkit_switch::show::TEST_COMMANDS)
        .map_err(|e| Failure::Usage(format!("test {}: {e}", w.join(" "))))?;
    let w: Vec<&str> = full.iter().map(String::as_str).collect();
    let req = test_request(&w).map_err(Failure::Usage)?;
    ask(&q, &req, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IOS_PAGE: &str = include_str!("../../../docs/reference/ios.md");

    #[test]
    fn metrics_listen_takes_an_address_or_a_port_for_loopback() {
        let ok = |s: &str| parse_listen(s).unwrap().to_string();
        assert_eq!(ok("9465"), "127.0.0.1:9465");
        assert_eq!(ok("0.0.0.0:9465"), "0.0.0.0:9465");
        assert_eq!(ok("[::1]:9465"), "[::1]:9465");
        for bad in ["0", "127.0.0.1:0", "localhost:9465", "127.0.0.1", ""] {
            let e = parse_listen(bad).unwrap_err();
            assert!(e.starts_with(&format!("'{bad}': ")), "{e}");
        }
    }

    /// Which request a command makes; a match with no wildcard, so a new
    /// request does not compile until it is given a name here (and then
    /// the test below wants it in SHOW_COMMANDS and on the page).
    fn kind(r: &Request) -> &'static str {
        match r {
            Request::EtherchannelSummary => "etherchannel summary",
            Request::EtherchannelLoadBalance => "etherchannel load-balance",
            Request::MacAddressTable => "mac address-table",
            Request::InterfacesCounters => "interfaces counters",
            Request::EtherchannelDetail { .. } => "etherchannel detail",
            Request::LacpNeighbor => "lacp neighbor",
            Request::PagpNeighbor => "pagp neighbor",
            Request::EtherchannelLoadBalancing => "etherchannel load-balancing",
            Request::LacpNeighborDetail => "lacp neighbor detail",
            Request::LacpSysId => "lacp sys-id",
            Request::LacpCounters => "lacp counters",
            Request::LacpInternal => "lacp internal",
            Request::PagpCounters => "pagp counters",
            Request::PagpInternal => "pagp internal",
            Request::InterfacesStatus => "interfaces status",
            Request::RunningConfig => "running-config",
            Request::StormControl => "storm-control",
            Request::PlatformForwarding => "platform forwarding",
            Request::EtherchannelProtocol => "etherchannel protocol",
            Request::EtherchannelPortChannel { .. } => "etherchannel port-channel",
            Request::TestLoadBalance { .. } => "test",
            Request::Capture(_) => "capture",
        }
    }

    #[test]
    fn every_show_command_is_answered_and_documented() {
        let mut kinds = std::collections::BTreeSet::new();
        for cmd in SHOW_COMMANDS {
            assert!(
                IOS_PAGE.contains(&format!("`{cmd}`")),
                "`{cmd}` is missing from docs/reference/ios.md"
            );
            let words: Vec<&str> = cmd
                .split_whitespace()
                .skip(1)
                .map(|w| if w == "N" { "3" } else { w })
                .collect();
            let req = show_request(&words).unwrap_or_else(|e| panic!("{cmd}: {e}"));
            kinds.insert(kind(&req));
        }
        let test = test_request(&[
            "etherchannel",
            "load-balance",
            "interface",
            "port-channel",
            "3",
            "ip",
            "10.0.0.1",
            "10.0.0.2",
        ])
        .unwrap();
        kinds.insert(kind(&test));
        assert!(IOS_PAGE.contains(
            "`test etherchannel load-balance interface port-channel N ip\\|mac\\|port SRC DST`"
        ));
        // Every request the switch answers is reachable from a documented command.
        for r in [
            Request::EtherchannelSummary,
            Request::EtherchannelLoadBalance,
            Request::MacAddressTable,
            Request::InterfacesCounters,
            Request::EtherchannelDetail { channel: None },
            Request::LacpNeighbor,
            Request::PagpNeighbor,
            Request::EtherchannelLoadBalancing,
            Request::LacpNeighborDetail,
            Request::LacpSysId,
            Request::LacpCounters,
            Request::LacpInternal,
            Request::PagpCounters,
            Request::PagpInternal,
            Request::InterfacesStatus,
            Request::RunningConfig,
            Request::StormControl,
            Request::PlatformForwarding,
            Request::EtherchannelProtocol,
            Request::EtherchannelPortChannel { channel: 1 },
        ] {
            assert!(kinds.contains(kind(&r)), "no show command makes {r:?}");
        }
        assert!(show_request(&["etherchannel", "x", "detail"]).is_err());
        assert!(show_request(&["version"]).is_err());
    }

    #[test]
    fn test_requests_read_like_ios() {
        let r = test_request(&[
            "etherchannel",
            "load-balance",
            "interface",
            "port-channel",
            "3",
            "ip",
            "10.0.0.1",
            "10.0.0.2",
        ])
        .unwrap();
        assert!(matches!(r, Request::TestLoadBalance { channel: 3, .. }));
        let r = test_request(&[
            "etherchannel",
            "load-balance",
            "interface",
            "po12",
            "port",
            "10.0.0.1:1",
            "10.0.0.2:2",
        ])
        .unwrap();
        assert!(matches!(r, Request::TestLoadBalance { channel: 12, .. }));
        assert!(test_request(&[
            "etherchannel",
            "load-balance",
            "interface",
            "po1",
            "ip",
            "x",
            "y"
        ])
        .is_err());
        assert!(test_request(&["etherchannel"]).is_err());
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(matches!(
            show_request(&words("sh eth sum")[1..]),
            Ok(Request::EtherchannelSummary)
        ));
        assert!(matches!(
            show_request(&words("int count")),
            Ok(Request::InterfacesCounters)
        ));
        assert!(matches!(
            show_request(&words("lacp nei")),
            Ok(Request::LacpNeighbor)
        ));
        assert!(matches!(
            show_request(&words("mac add")),
            Ok(Request::MacAddressTable)
        ));
        assert!(matches!(
            show_request(&words("eth 3 det")),
            Ok(Request::EtherchannelDetail { channel: Some(3) })
        ));
        match show_request(&words("m add")) {
            Err(e) => assert!(e.contains("% Ambiguous command"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert!(parse_port("gi1/1").is_err());
        assert_eq!(
            parse_port("Gi8/4=veth4").unwrap(),
            ("Gi8/4".to_string(), "veth4".to_string())
        );
    }
}
