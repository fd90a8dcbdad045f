//! `lagkit up`, `lagkit status`, `lagkit stats`, `lagkit flow`: the host
//! bond daemon and its operator commands.

use lagkit_api::protocol::{request, Request, Response};
use lagkit_bond::config::settings_from;
use lagkit_bond::settings::Settings;
use lagkit_bond::supervise::Supervisor;
use lagkit_bondcfg::paths::{control_socket_in, netns_dir, netns_id};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The exit status of `lagkit up` after a SIGUSR2 handoff (EX_TEMPFAIL).
pub const HANDOFF_EXIT: i32 = 75;

/// How a command failed, with the exit status it maps to.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (configuration, arguments): exit status 2.
    Usage(String),
    /// Bad input at a known place in a file: exit status 2. With `--json`
    /// the file and the line are fields of their own.
    Input {
        /// The file.
        file: String,
        /// The line, when known.
        line: Option<u64>,
        /// The column on that line, when known.
        column: Option<u64>,
        /// What is wrong (without the file and line) and how to fix it.
        why: String,
    },
    /// The command needs privileges it does not have: exit status 4.
    Privilege(String),
    /// The system refused (interfaces, sockets): exit status 1.
    Runtime(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Privilege(m) | Failure::Runtime(m) => f.write_str(m),
            Failure::Input {
                file,
                line: Some(l),
                column: Some(c),
                why,
            } => write!(f, "{file}:{l}:{c}: {why}"),
            Failure::Input {
                file,
                line: Some(l),
                why,
                ..
            } => write!(f, "{file}:{l}: {why}"),
            Failure::Input { file, why, .. } => write!(f, "{file}: {why}"),
        }
    }
}

/// The name of a running bond: `--name NAME` (`-n`), or the name as the
/// first word, as lagkit before 0.2 spelled it (still read, not shown).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BondName {
    /// The bond, as named in its configuration (e.g. bond0).
    #[arg(long, short = 'n', value_name = "NAME")]
    name: Option<String>,
    /// The old spelling, `lagkit status bond0`.
    #[arg(hide = true, value_name = "NAME", conflicts_with = "name")]
    old_name: Option<String>,
}

impl BondName {
    /// The name given, either way.
    pub fn get(&self) -> Option<&str> {
        self.name.as_deref().or(self.old_name.as_deref())
    }
}
/// The smallest useful configuration, shown by `lagkit up --help` and in
/// lagkit-up(1) (a test checks that it parses).
macro_rules! up_example {
    () => {
        "    name = \"bond0\"
    mode = \"802.3ad\"                   # the switch side: channel-group N mode active
    members = [\"eth1\", \"eth2\"]
    xmit_hash_policy = \"layer3+4\"
    lacp_rate = \"fast\"
    address = [\"192.0.2.10/24\"]
    metrics_listen = \"127.0.0.1:9464\"  # Prometheus metrics (curl it there)
"
    };
}

/// The example configuration of `lagkit up --help`, for the man pages.
pub const UP_EXAMPLE: &str = up_example!();

/// Options of `lagkit up`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = concat!(
    "Example: a two-member 802.3ad (LACP) bond, saved as bond0.toml and run with \
     `lagkit up bond0.toml`:\n\n",
    up_example!(),
    "\nEvery key, with its type, default and its Linux, AIX, Cisco and HP names, is in \
     lagkit.toml(5). metrics_listen = \"ADDRESS:PORT\" serves Prometheus metrics there, in \
     the bond's network namespace (unset: no listener); the older metrics_port = PORT means \
     127.0.0.1:PORT. SIGHUP re-reads the file and applies \
     what changed; SIGINT or SIGTERM stops the bonds and gives the members back. \
     Under the BPF engine the programs are pinned in bpffs (/sys/fs/bpf or \
     /run/lagkit/bpffs) and outlive the daemon: after a crash or SIGKILL the kernel keeps \
     forwarding with the last plan, and the next `lagkit up` of the same bond adopts it \
     without a lost frame if it starts within the partner's LACP timeout (3 s fast, 90 s \
     slow). SIGUSR2 exits that way on purpose (status 75), for an upgrade or a restart \
     without an outage; `lagkit down` removes what such an exit left. Under the userspace \
     engine SIGUSR2 hands the TAP and the members' packet sockets on instead: to systemd's \
     file-descriptor store when systemd runs lagkit (the unit's next start adopts them), \
     otherwise to lagkit executed again in the same process (an upgraded binary at the same \
     path included); only a crash of the userspace engine loses them. \
     LAGKIT_LOG sets the log filter (default: info), e.g. LAGKIT_LOG=debug."
))]
pub struct UpArgs {
    /// The bond configuration: lagkit's TOML (Linux bonding option names,
    /// AIX and Cisco aliases), or the bond as the host already defines it:
    /// a netplan YAML file, a systemd-networkd directory (or .netdev file),
    /// a NetworkManager keyfile directory (or keyfile), an ifupdown
    /// interfaces file, a teamd JSON file (see `lagkit convert`).
    config: PathBuf,
    /// Run a bond converted from another dialect even though some of its
    /// settings cannot be carried (`lagkit convert` lists them); without
    /// it, such a file is refused.
    #[arg(long)]
    drop_unsupported: bool,
    /// Only check the configuration, print what would run, and exit.
    #[arg(long)]
    check: bool,
    /// Lab and test use: drop this share of a member's frames, both
    /// directions (MEMBER=P, P from 0 to 1, e.g. e1=0.01; repeatable). This
    /// kernel has no netem: this is lagkit's own fault injection. A dropped
    /// GSO frame loses all its segments.
    #[arg(long, value_name = "MEMBER=P", value_parser = parse_fault)]
    fault_loss: Vec<(String, f64)>,
    /// The data path for every bond in the file, overriding its `engine`:
    /// `bpf` (the kernel moves frames through tc BPF programs), `userspace`
    /// (lagkit's forwarding threads and a TAP device) or `auto` (bpf where
    /// the kernel allows it).
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    engine: Option<lagkit_bondcfg::Engine>,
}

pub(crate) fn parse_engine(s: &str) -> Result<lagkit_bondcfg::Engine, String> {
    s.parse()
        .map_err(|e: lagkit_bondcfg::ParseEnumError| e.to_string())
}

fn parse_fault(s: &str) -> Result<(String, f64), String> {
    let (m, p) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': write MEMBER=P, e.g. e1=0.01"))?;
    let p: f64 = p
        .parse()
        .map_err(|_| format!("'{s}': '{p}' is not a number (a share from 0 to 1)"))?;
    if !(0.0..=1.0).contains(&p) || m.is_empty() {
        return Err(format!("'{s}': a member name and a share from 0 to 1"));
    }
    Ok((m.to_string(), p))
}

/// Attaches `--fault-loss` to the bonds that have those members, and
/// `--engine` to every bond.
fn with_overrides(mut settings: Vec<Settings>, args: &UpArgs) -> Vec<Settings> {
    let faults = &args.fault_loss;
    for s in &mut settings {
        if let Some(e) = args.engine {
            s.engine = e;
        }
        s.faults = faults
            .iter()
            .filter(|(m, _)| s.members.contains(m))
            .cloned()
            .collect();
    }
    settings
}

/// Options of `lagkit down`.
#[derive(clap::Args, Debug)]
pub struct DownArgs {
    #[command(flatten)]
    bond: BondName,
}

/// `lagkit down BOND`: restores what a dead daemon left changed, from the
/// bond's state file in this network namespace.
pub fn down(a: DownArgs) -> Result<(), Failure> {
    let Some(bond) = a.bond.get() else {
        return Err(Failure::Usage(
            "which bond? name it with --name NAME (as in its configuration, e.g. --name bond0)"
                .into(),
        ));
    };
    crate::privilege::require("lagkit down", crate::privilege::Need::NetAdmin)?;
    let ns = netns_id();
    let dir = lagkit_bondcfg::paths::state_dir_in(ns, bond);
    // A socket nobody answers on was left by a daemon that died.
    let sock = control_socket_in(ns, bond);
    if sock.exists() && std::os::unix::net::UnixStream::connect(&sock).is_err() {
        let _ = std::fs::remove_file(&sock);
    }
    let restored =
        lagkit_bond::journal::down(dir, bond).map_err(|e| Failure::Runtime(e.to_string()))?;
    // The BPF engine's veth logical interface outlives a killed daemon (a
    // TAP does not); no daemon holds the bond now.
    let logical = lagkit_bond::kernel::remove_leftover(bond);
    if restored.is_empty() && !logical {
        println!("{bond}: nothing to restore (no state left behind)");
    }
    if !restored.is_empty() {
        println!("{bond}: restored {}", restored.join(", "));
    }
    if logical {
        println!("{bond}: removed the logical interface a killed lagkit left");
    }
    Ok(())
}

/// Options shared by status and stats.
#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// The bond (default: every bond running in this network namespace).
    #[command(flatten)]
    bond: BondName,
    /// Print JSON instead of text (the same as --format json).
    #[arg(long)]
    json: bool,
    /// How to print: lagkit's own layout (`text`), the kernel's
    /// /proc/net/bonding/<bond> layout field for field (`proc`, status
    /// only), or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The control socket (default: derived from the bond name and this network namespace).
    #[arg(long)]
    socket: Option<PathBuf>,
}

/// `lagkit status --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// lagkit's own layout.
    Text,
    /// The kernel's /proc/net/bonding/<bond> layout.
    Proc,
    /// JSON.
    Json,
}

/// Options of `lagkit flow`.
#[derive(clap::Args, Debug)]
pub struct FlowArgs {
    /// The bond (default: the only one running in this network namespace).
    #[command(flatten)]
    bond: BondName,
    /// tcp or udp.
    #[arg(long, default_value = "tcp")]
    proto: String,
    /// Source IP:PORT.
    #[arg(long)]
    src: String,
    /// Destination IP:PORT.
    #[arg(long)]
    dst: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// The control socket.
    #[arg(long)]
    socket: Option<PathBuf>,
}

/// Options of `lagkit convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// The bond definitions: a netplan YAML file, systemd-networkd
    /// .netdev/.network files or their directory, NetworkManager keyfiles
    /// or their directory, an ifupdown interfaces file, a teamd JSON file.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// `lagkit convert FILE...`: the bonds in lagkit's TOML, on stdout.
pub fn convert(a: ConvertArgs) -> Result<(), Failure> {
    let c = lagkit_check::convert::convert(&a.files).map_err(|e| Failure::Usage(e.to_string()))?;
    let text = c.to_toml();
    print!("{text}");
    // What it wrote must read back as a configuration lagkit runs; what
    // does not is said after it.
    match lagkit_bondcfg::parse_str(&text, "converted") {
        Ok(_) => Ok(()),
        Err(e) => Err(Failure::Usage(format!(
            "lagkit cannot run this as it is: {}",
            converted_error(&text, &e.to_string())
        ))),
    }
}

/// A configuration error about converted TOML, with the source the
/// offending line came from (its comment).
fn converted_error(text: &str, e: &str) -> String {
    let line = e
        .strip_prefix("converted:")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse::<usize>().ok());
    let from = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| l.split_once("  # ").map(|(_, c)| c.to_string()));
    match from {
        Some(f) => format!("{e} (converted from {f})"),
        None => e.to_string(),
    }
}

fn load(path: &Path, drop_unsupported: bool) -> Result<Vec<Settings>, Failure> {
    let parsed = if lagkit_check::convert::is_foreign(path) {
        let c = lagkit_check::convert::convert(&[path.to_path_buf()])
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let dropped = c.dropped();
        if !dropped.is_empty() && !drop_unsupported {
            let list: Vec<String> = dropped
                .iter()
                .map(|d| format!("  {}: {}: {}", d.at, d.setting, d.why))
                .collect();
            return Err(Failure::Usage(format!(
                "{} ({}) has settings lagkit cannot carry:\n{}\nrun it anyway with --drop-unsupported, or see `lagkit convert {}`",
                path.display(),
                c.dialect,
                list.join("\n"),
                path.display()
            )));
        }
        let text = c.to_toml();
        tracing::info!(file = %path.display(), dialect = c.dialect, "converted to lagkit's configuration");
        lagkit_bondcfg::parse_str(&text, "converted")
            .map_err(|e| Failure::Usage(converted_error(&text, &e.to_string())))
    } else {
        lagkit_bondcfg::parse_file_with_warnings(path).map_err(|e| Failure::Usage(e.to_string()))
    };
    let (cfgs, warnings) = parsed?;
    let mut out = Vec::new();
    for c in &cfgs {
        let w: Vec<String> = warnings
            .iter()
            .filter(|w| w.bond == c.name)
            .map(|w| w.to_string())
            .collect();
        for x in &w {
            tracing::warn!("{x}");
        }
        out.push(settings_from(c, w).map_err(|e| Failure::Usage(e.to_string()))?);
    }
    Ok(out)
}

/// `lagkit up CONFIG`: runs in the foreground until SIGINT/SIGTERM; SIGHUP
/// re-reads the file.
pub fn up(args: UpArgs) -> Result<(), Failure> {
    use crate::privilege::{require, Need};
    if !args.check {
        require("lagkit up", Need::Bond { bpf: false })?;
    }
    let settings = with_overrides(load(&args.config, args.drop_unsupported)?, &args);
    if let Some((m, _)) = args
        .fault_loss
        .iter()
        .find(|(m, _)| !settings.iter().any(|s| s.members.contains(m)))
    {
        return Err(Failure::Usage(format!(
            "--fault-loss {m}=..: '{m}' is not a member of any bond in {}",
            args.config.display()
        )));
    }
    if args.check {
        let mut refused = Vec::new();
        for s in &settings {
            println!(
                "bond {}: mode {}, members {}, policy {}, engine {}, control socket {}",
                s.name,
                s.mode.linux_name(),
                s.members.join(","),
                s.policy,
                s.engine,
                s.control_socket.display()
            );
            for m in s.members.iter().chain(s.backup.iter()) {
                if lagkit_dataplane::Link::open(m).is_err() {
                    println!(
                        "  warning: member {m} does not exist in this network namespace; `lagkit up` starts without it and takes it when it appears"
                    );
                } else if let Err(why) = lagkit_bond::guard::check(m, &s.force_members) {
                    println!("  error: {why}");
                    refused.push(m.clone());
                }
            }
        }
        if !refused.is_empty() {
            return Err(Failure::Runtime(format!(
                "`lagkit up` would refuse {}: the host still uses {} (see above)",
                refused.join(", "),
                if refused.len() == 1 { "it" } else { "them" }
            )));
        }
        return Ok(());
    }
    if settings
        .iter()
        .any(|s| s.engine == lagkit_bondcfg::Engine::Bpf)
    {
        require("lagkit up", Need::Bond { bpf: true })?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reload = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    }
    signal_hook::flag::register(signal_hook::consts::SIGHUP, reload.clone())
        .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    let handoff = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR2, handoff.clone())
        .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;

    // The userspace engines' devices and sockets a previous daemon handed
    // over; each bond adopts its own as it starts.
    let exe = inherit();
    // Returns once every bond's members are taken and its data path runs.
    let mut running = summary(&settings);
    let mut bonds = Supervisor::start(settings).map_err(|e| Failure::Runtime(e.to_string()))?;
    let unclaimed = lagkit_dataplane::handoff::drain_unclaimed();
    if !unclaimed.is_empty() {
        tracing::warn!(descriptors = ?unclaimed, "closed descriptors handed over for bonds this configuration does not run");
    }
    crate::notify::ready(&running);
    while !stop.load(Ordering::Relaxed) && !handoff.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if reload.swap(false, Ordering::Relaxed) {
            tracing::info!(config = %args.config.display(), "SIGHUP: reloading");
            crate::notify::reloading();
            match load(&args.config, args.drop_unsupported) {
                Err(e) => {
                    tracing::error!("reload refused, keeping the running configuration: {e}")
                }
                Ok(new) => {
                    let new = with_overrides(new, &args);
                    running = summary(&new);
                    bonds.reload(new);
                }
            }
            crate::notify::ready(&running);
        }
        bonds.reap();
    }
    if handoff.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        tracing::info!("SIGUSR2: handing off to the next lagkit (the kernel keeps forwarding)");
        crate::notify::stopping("handing off: the data path keeps forwarding");
        bonds.handoff();
        pass_on(exe.as_deref());
        // EX_TEMPFAIL: not a failure, but not a stop either; a unit with
        // Restart=on-failure starts the next daemon, which adopts.
        std::process::exit(HANDOFF_EXIT);
    }
    tracing::info!("stopping: restoring members");
    crate::notify::stopping("stopping: restoring members");
    bonds.stop();
    Ok(())
}

/// Takes the descriptors a previous daemon handed over (out of the
/// service manager's store too: this process holds them now), for each
/// bond or switch to adopt its own as it starts; returns this program's
/// path, for [`pass_on`] (read now: an upgrade may replace the file).
pub(crate) fn inherit() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok();
    let inherited = lagkit_dataplane::handoff::inherit();
    if !inherited.is_empty() {
        tracing::info!(descriptors = ?inherited, "descriptors handed over by the previous lagkit");
        crate::notify::unstore_fds(&inherited);
    }
    exe
}

/// Passes on what the bonds handed over as descriptors (the userspace
/// engine's TAP and member sockets): under a service manager to its
/// file-descriptor store, which gives them to the unit's next start (then
/// returns, for the exit that starts it); otherwise by executing `exe`
/// (the binary this daemon was started from, an upgraded one if it was
/// replaced) in this process with the same arguments, the descriptors
/// open and named in the environment. Returns when there is nothing to
/// pass on or the exec failed.
pub(crate) fn pass_on(exe: Option<&std::path::Path>) {
    use lagkit_dataplane::handoff;
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    let fds = handoff::given();
    if fds.is_empty() {
        return;
    }
    if crate::notify::under_service_manager() {
        let n = crate::notify::store_fds(&fds);
        tracing::info!(
            descriptors = n,
            "handed the descriptors to the service manager's store for the next start"
        );
        return;
    }
    let Some(exe) = exe else {
        tracing::error!("cannot find this program's path to start it again: the handed-over descriptors are lost");
        return;
    };
    for (name, fd) in &fds {
        if let Err(e) = lagkit_sys::fd::set_close_on_exec(fd.as_fd(), false) {
            tracing::warn!(descriptor = %name, "cannot keep the descriptor open across exec: {e}");
        }
    }
    tracing::info!(exe = %exe.display(), descriptors = fds.len(), "starting lagkit again in this process with the descriptors");
    let e = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(handoff::ENV, handoff::env_value(std::process::id(), &fds))
        .env_remove("LISTEN_PID")
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_FDNAMES")
        .exec();
    tracing::error!(exe = %exe.display(), "cannot execute lagkit again: {e}; the handed-over descriptors are lost");
}

/// One line for `systemctl status`: each bond, its mode and members.
fn summary(settings: &[Settings]) -> String {
    let bonds: Vec<String> = settings
        .iter()
        .map(|s| {
            format!(
                "{} ({}, members {})",
                s.name,
                s.mode.linux_name(),
                s.members.join(", ")
            )
        })
        .collect();
    format!("running {}", bonds.join("; "))
}

/// The control sockets in `dir` (`*.sock`), sorted.
pub fn sockets_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The sockets to ask: one bond's, or every bond's in this namespace.
fn sockets(bond: Option<&str>, socket: Option<&PathBuf>) -> Result<Vec<PathBuf>, Failure> {
    if let Some(s) = socket {
        return Ok(vec![s.clone()]);
    }
    let ns = netns_id();
    if let Some(b) = bond {
        return Ok(vec![control_socket_in(ns, b)]);
    }
    let dir = netns_dir(ns);
    let v = sockets_in(&dir);
    if v.is_empty() {
        return Err(Failure::Runtime(format!(
            "no lagkit bond runs in this network namespace (nothing in {}); start one with `lagkit up CONFIG`",
            dir.display()
        )));
    }
    Ok(v)
}

fn ask(path: &Path, req: &Request) -> Result<Response, Failure> {
    match request(path, req).map_err(|e| Failure::Runtime(e.to_string()))? {
        Response::Error(e) => Err(Failure::Runtime(e)),
        r => Ok(r),
    }
}

/// Asks every selected bond and prints the answers as text or JSON.
fn query<T: serde::Serialize>(
    a: &QueryArgs,
    req: &Request,
    pick: impl Fn(Response) -> Option<T>,
    render: impl Fn(&T) -> String,
) -> Result<(), Failure> {
    let mut all = Vec::new();
    for s in sockets(a.bond.get(), a.socket.as_ref())? {
        all.extend(pick(ask(&s, req)?));
    }
    if a.json || a.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&all).unwrap_or_default());
    } else {
        let text: Vec<String> = all.iter().map(render).collect();
        print!("{}", text.join("\n"));
    }
    Ok(())
}

/// The running kernel's release, as `/proc/net/bonding` names it in its
/// first line.
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// `lagkit status`.
pub fn status(a: QueryArgs) -> Result<(), Failure> {
    let release = kernel_release();
    let proc = a.format == Format::Proc;
    query(
        &a,
        &Request::Status,
        |r| match r {
            Response::Status(s) => Some(*s),
            _ => None,
        },
        |s| match proc {
            true => s.render_proc(&release),
            false => s.render(),
        },
    )
}

/// `lagkit stats`.
pub fn stats(a: QueryArgs) -> Result<(), Failure> {
    if a.format == Format::Proc {
        return Err(Failure::Usage(
            "stats has no /proc/net/bonding layout: use --format text or json (lagkit status --format proc shows the bond)".into(),
        ));
    }
    query(
        &a,
        &Request::Stats,
        |r| match r {
            Response::Stats(s) => Some(s),
            _ => None,
        },
        |s| s.render(),
    )
}

/// `lagkit flow`.
pub fn flow(a: FlowArgs) -> Result<(), Failure> {
    let mut all = sockets(a.bond.get(), a.socket.as_ref())?;
    if all.len() > 1 {
        let names: Vec<String> = all
            .iter()
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        return Err(Failure::Usage(format!(
            "{} bonds run here ({}): choose one with --name",
            names.len(),
            names.join(", ")
        )));
    }
    let path = all.remove(0);
    let bond = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let req = Request::Flow {
        proto: a.proto.clone(),
        src: a.src.clone(),
        dst: a.dst.clone(),
    };
    let Response::Flow(f) = ask(&path, &req)? else {
        return Err(Failure::Runtime("unexpected answer".into()));
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&f).unwrap_or_default());
    } else {
        println!(
            "{} {} -> {} on bond {}: member {}",
            a.proto,
            a.src,
            a.dst,
            a.bond.get().unwrap_or(&bond),
            f.member
                .as_deref()
                .unwrap_or("none (no member can carry it)")
        );
        println!(
            "  policy {}, hash {:#018x}{}",
            f.policy,
            f.hash,
            f.bucket.map_or(String::new(), |b| format!(", bucket {b}"))
        );
        println!("  why: {}", f.reason);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_help_example_is_a_clean_configuration() {
        let (bonds, warnings) = lagkit_bondcfg::parse_str(super::UP_EXAMPLE, "bond0.toml")
            .unwrap_or_else(|e| panic!("lagkit up --help shows a bad example: {e}"));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(bonds[0].mode, lagkit_bondcfg::Mode::Lacp);
        assert_eq!(
            bonds[0].metrics_listen,
            Some("127.0.0.1:9464".parse().unwrap())
        );
    }
}
