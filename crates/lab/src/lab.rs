//! `lab up` and `lab down`: namespaces, veths, shaping, switches and bond
//! daemons, all recorded in a state file so that `down` (a later command,
//! perhaps after a crash) removes exactly what `up` made.
//!
//! The state file `<root>/<lab>.json` (root: `/run/lagkit/lab`, or
//! `$LAGKIT_LAB_DIR`) is written before each namespace is created and after
//! each process starts. `down` stops the recorded processes (checked by
//! name and start time, so a recycled PID is never hit), stops the OVS
//! instances, deletes the recorded namespaces *and* any `lklab-<lab>-<node>`
//! namespace not recorded (killing what still runs inside: only the lab
//! starts processes there), then removes the lab's directory and state
//! file. Deleting a namespace deletes the veths in it, and their peers.

use crate::error::{LabError, RunError, UsageError};
use crate::lagkit_switch::{self, LagkitSwitch};
use crate::ovs::{Ovs, OvsError, Spawn};
use crate::sys::{self, poll, run, tool_path, CommandError, IoError, ProcId, QueryError};
use crate::topology::{ns_of_lab, Channel, Protocol, Switch, SwitchKind, Topology};
use lagkit_api::status::{BondStats, BondStatus};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where state files live unless `$LAGKIT_LAB_DIR` says otherwise.
pub const STATE_ROOT: &str = "/run/lagkit/lab";

/// The state root in force.
pub fn state_root() -> PathBuf {
    std::env::var_os("LAGKIT_LAB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(STATE_ROOT))
}

/// How to run a lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `lagkit` binary for the host bonds (the CLI passes its own path).
    pub lagkit: PathBuf,
    /// Directory of state files and lab directories.
    pub state_root: PathBuf,
    /// Print progress on stderr.
    pub verbose: bool,
}

impl Options {
    /// Options with the default state root.
    pub fn new(lagkit: PathBuf) -> Options {
        Options {
            lagkit,
            state_root: state_root(),
            verbose: false,
        }
    }
}

/// A process the lab started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcRecord {
    /// What it is, e.g. "lagkit up h1".
    pub what: String,
    /// Its identity.
    pub proc: ProcId,
}

/// An OVS instance the lab started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OvsRecord {
    /// Switch name.
    pub switch: String,
    /// Its namespace.
    pub ns: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// What the state file holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// Lab name.
    pub lab: String,
    /// The topology file.
    pub topology_file: String,
    /// The lab's directory (configs, logs, OVS databases).
    pub dir: PathBuf,
    /// "starting" while `up` runs, then "up".
    pub phase: String,
    /// Namespaces (recorded before they are created).
    pub namespaces: Vec<String>,
    /// Processes, in start order.
    pub processes: Vec<ProcRecord>,
    /// OVS instances.
    pub ovs: Vec<OvsRecord>,
}

impl LabState {
    /// The state file of lab `lab` under `root`.
    pub fn path(root: &Path, lab: &str) -> PathBuf {
        root.join(format!("{lab}.json"))
    }

    /// Reads lab `lab`'s state, if it has a state file.
    pub fn load(root: &Path, lab: &str) -> Result<Option<LabState>, RunError> {
        let p = LabState::path(root, lab);
        match std::fs::read_to_string(&p) {
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|source| RunError::StateFile { path: p, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(IoError { path: p, source }.into()),
        }
    }

    fn save(&self, root: &Path) -> Result<(), RunError> {
        std::fs::create_dir_all(root).map_err(IoError::at(root))?;
        let p = LabState::path(root, &self.lab);
        let tmp = p.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|source| RunError::Serialize {
            what: p.display().to_string(),
            source,
        })?;
        std::fs::write(&tmp, text).map_err(IoError::at(&tmp))?;
        std::fs::rename(&tmp, &p).map_err(IoError::at(&p))?;
        Ok(())
    }
}

/// What `down` removed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DownReport {
    /// Whether a state file was found.
    pub had_state: bool,
    /// Processes stopped (still running when asked).
    pub processes: usize,
    /// OVS instances stopped.
    pub ovs: usize,
    /// Namespaces deleted.
    pub namespaces: Vec<String>,
    /// What could not be removed.
    pub errors: Vec<String>,
}

impl DownReport {
    /// Nothing was there.
    pub fn was_noop(&self) -> bool {
        !self.had_state && self.processes == 0 && self.ovs == 0 && self.namespaces.is_empty()
    }
}

/// Removes everything of lab `lab`: idempotent, works after a crash and when
/// there is nothing (then it does nothing).
pub fn down(root: &Path, lab: &str) -> DownReport {
    let mut rep = DownReport::default();
    let state = match LabState::load(root, lab) {
        Ok(s) => s,
        Err(e) => {
            rep.errors.push(e.to_string());
            None
        }
    };
    let mut namespaces = Vec::new();
    if let Some(st) = &state {
        rep.had_state = true;
        // Bond daemons and workloads first (lagkit gives its members back),
        // then the switches, gracefully, then anything left.
        let is_ovs = |p: &ProcRecord| {
            st.ovs.iter().any(|o| {
                p.what.ends_with(&format!(" {}", o.switch)) && p.proc.comm.starts_with("ovs")
            })
        };
        for p in st.processes.iter().rev().filter(|p| !is_ovs(p)) {
            if p.proc.alive() {
                rep.processes += 1;
            }
            p.proc.stop(Duration::from_secs(5));
        }
        for o in &st.ovs {
            let mut ovs = Ovs::attach(&o.ns, o.dir.clone());
            if !ovs.pids().is_empty() {
                rep.ovs += 1;
            }
            ovs.stop();
        }
        for p in st.processes.iter().rev().filter(|p| is_ovs(p)) {
            p.proc.stop(Duration::from_secs(5));
        }
        namespaces.extend(st.namespaces.iter().cloned());
    }
    for ns in lagkit_netns::list() {
        if ns_of_lab(lab, &ns) && !namespaces.contains(&ns) {
            namespaces.push(ns);
        }
    }
    for ns in namespaces {
        if !lagkit_netns::exists(&ns) {
            continue;
        }
        if let Err(e) = lagkit_netns::forget_lagkit_files(&ns) {
            rep.errors.push(e.to_string());
        }
        match lagkit_netns::delete(&ns) {
            Ok(()) => rep.namespaces.push(ns),
            Err(e) => rep.errors.push(e.to_string()),
        }
    }
    let dir = state
        .as_ref()
        .map(|s| s.dir.clone())
        .unwrap_or_else(|| root.join(lab));
    // Only a directory under the state root is ours to remove.
    if dir.starts_with(root) && dir.exists() {
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            rep.errors.push(format!("{}: {e}", dir.display()));
        }
    }
    // The state file goes once nothing it records is left; otherwise the
    // next `down` tries again.
    let sf = LabState::path(root, lab);
    let left = state.as_ref().is_some_and(|s| {
        s.namespaces.iter().any(|n| lagkit_netns::exists(n))
            || s.processes.iter().any(|p| p.proc.alive())
    });
    if !left {
        if let Err(e) = std::fs::remove_file(&sf) {
            if e.kind() != std::io::ErrorKind::NotFound {
                rep.errors.push(format!("{}: {e}", sf.display()));
            }
        }
    }
    rep
}

/// A lab that is up (or being brought up), with its topology and state.
#[derive(Debug)]
pub struct Lab {
    /// The topology.
    pub topo: Topology,
    /// What was made.
    pub state: LabState,
    /// Options in force.
    pub opts: Options,
}

/// The OVS bridge MAC of the `i`-th switch (OVS's LACP system id).
pub fn switch_mac(i: usize) -> String {
    format!("02:00:00:0a:ff:{:02x}", (i + 1) & 0xff)
}

impl Lab {
    fn say(&self, msg: &str) {
        if self.opts.verbose {
            eprintln!("[lab {}] {msg}", self.topo.name);
        }
    }

    /// Brings the lab up. On failure everything made so far is removed and
    /// the error says what failed.
    pub fn up(topo: Topology, opts: Options) -> Result<Lab, LabError> {
        if !sys::is_root() {
            return Err(UsageError::NotRoot.into());
        }
        for t in ["ip", "tc"] {
            tool_path(t).map_err(RunError::from)?;
        }
        if topo.switches.iter().any(|s| s.kind == SwitchKind::Ovs) {
            crate::ovs::available().map_err(RunError::NoOvs)?;
        }
        let root = opts.state_root.clone();
        if let Some(st) = LabState::load(&root, &topo.name)? {
            return Err(UsageError::AlreadyUp {
                lab: topo.name.clone(),
                state_file: LabState::path(&root, &topo.name),
                phase: st.phase,
                file: topo.file.clone(),
            }
            .into());
        }
        // Leftovers of a run whose state file is gone.
        let stale = down(&root, &topo.name);
        if !stale.namespaces.is_empty() && opts.verbose {
            eprintln!(
                "[lab {}] removed leftover namespaces {}",
                topo.name,
                stale.namespaces.join(", ")
            );
        }
        let dir = root.join(&topo.name);
        std::fs::create_dir_all(&dir)
            .map_err(IoError::at(&dir))
            .map_err(RunError::from)?;
        let state = LabState {
            lab: topo.name.clone(),
            topology_file: topo.file.clone(),
            dir,
            phase: "starting".into(),
            ..Default::default()
        };
        let mut lab = Lab { topo, state, opts };
        lab.save()?;
        match lab.build() {
            Ok(()) => {
                lab.state.phase = "up".into();
                lab.save()?;
                Ok(lab)
            }
            Err(e) => {
                let logs = lab.logs_tail();
                let rep = lab.down();
                Err(RunError::Up {
                    cause: Box::new(e),
                    logs,
                    cleanup: rep.errors,
                }
                .into())
            }
        }
    }

    /// A lab brought up earlier (its state file must exist).
    pub fn attach(topo: Topology, opts: Options) -> Result<Lab, LabError> {
        let state =
            LabState::load(&opts.state_root, &topo.name)?.ok_or_else(|| UsageError::NotUp {
                lab: topo.name.clone(),
            })?;
        Ok(Lab { topo, state, opts })
    }

    fn save(&self) -> Result<(), RunError> {
        self.state.save(&self.opts.state_root)
    }

    /// Removes everything (see [`down`]).
    pub fn down(&mut self) -> DownReport {
        down(&self.opts.state_root, &self.topo.name)
    }

    /// Records a process the lab (or a workload) started, in the state file.
    pub fn track(&mut self, what: &str, proc: ProcId) -> Result<(), RunError> {
        self.state.processes.push(ProcRecord {
            what: what.to_string(),
            proc,
        });
        self.save()
    }

    /// Forgets a process that was stopped.
    pub fn untrack(&mut self, pid: i32) -> Result<(), RunError> {
        self.state.processes.retain(|p| p.proc.pid != pid);
        self.save()
    }

    /// The namespace of `node`.
    pub fn ns(&self, node: &str) -> String {
        self.topo.ns(node)
    }

    /// The lab's directory.
    pub fn dir(&self) -> &Path {
        &self.state.dir
    }

    /// The OVS instance of switch `name`.
    pub fn ovs(&self, name: &str) -> Option<Ovs> {
        self.state
            .ovs
            .iter()
            .find(|o| o.switch == name)
            .map(|o| Ovs::attach(&o.ns, o.dir.clone()))
    }

    /// The running `lagkit switch` of switch `name` (kind `lagkit`).
    pub fn lagkit_switch(&self, name: &str) -> Option<LagkitSwitch> {
        self.topo
            .switches
            .iter()
            .find(|s| s.name == name && s.kind == SwitchKind::Lagkit)
            .map(|s| LagkitSwitch::new(self.opts.lagkit.clone(), &self.ns(&s.name), &s.name))
    }

    /// The process of lagkit switch `name`, if the lab started one.
    pub fn switch_process(&self, name: &str) -> Option<&ProcId> {
        let what = switch_what(name);
        self.state
            .processes
            .iter()
            .find(|p| p.what == what)
            .map(|p| &p.proc)
    }

    /// `lagkit WHAT --name BOND --json` of a host: the one bond's answer.
    fn lagkit_query<T: serde::de::DeserializeOwned>(
        &self,
        host: &str,
        what: &str,
        bond: &str,
    ) -> Result<T, QueryError> {
        let lagkit = self.opts.lagkit.to_string_lossy().into_owned();
        let t = sys::ns_run(&self.ns(host), &[&lagkit, what, "--name", bond, "--json"])?;
        let query = format!("lagkit {what}");
        let of = format!("host {host} bond {bond}");
        let mut v: Vec<T> = QueryError::read_json(&t, &query, &of)?;
        v.pop().ok_or_else(|| QueryError::empty(&query, &of))
    }

    /// `lagkit status --name BOND --json` of a host.
    pub fn bond_status(&self, host: &str, bond: &str) -> Result<BondStatus, QueryError> {
        self.lagkit_query(host, "status", bond)
    }

    /// `lagkit stats --name BOND --json` of a host.
    pub fn bond_stats(&self, host: &str, bond: &str) -> Result<BondStats, QueryError> {
        self.lagkit_query(host, "stats", bond)
    }

    /// The last lines of every log in the lab directory.
    pub fn logs_tail(&self) -> String {
        let mut o = String::new();
        let Ok(rd) = std::fs::read_dir(&self.state.dir) else {
            return o;
        };
        let mut files: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        files.sort();
        for f in files {
            let t = sys::tail(&f, 8);
            if !t.is_empty() {
                o.push_str(&format!("--- {} ---\n{t}\n", f.display()));
            }
        }
        for r in &self.state.ovs {
            let t = Ovs::attach(&r.ns, r.dir.clone()).log_tail(8);
            if !t.is_empty() {
                o.push_str(&format!("--- OVS {} ---\n{t}", r.switch));
            }
        }
        o
    }

    fn build(&mut self) -> Result<(), RunError> {
        // Namespaces.
        let nodes: Vec<String> = self.topo.nodes().map(String::from).collect();
        for n in &nodes {
            let ns = self.ns(n);
            self.state.namespaces.push(ns.clone());
            self.save()?;
            lagkit_netns::create(&ns)?;
        }
        self.say(&format!("{} namespaces", nodes.len()));
        // Links.
        let links = self.topo.links.clone();
        for l in &links {
            let (na, nb) = (self.ns(&l.a.node), self.ns(&l.b.node));
            lagkit_netns::veth(&na, &l.a.iface, &nb, &l.b.iface)?;
            for (k, (end, ns)) in [(&l.a, &na), (&l.b, &nb)].into_iter().enumerate() {
                let mtu = l.mtu[k].to_string();
                run(&["ip", "-n", ns, "link", "set", &end.iface, "mtu", &mtu])?;
                if let Some(mac) = self.topo.host_mac(end) {
                    run(&["ip", "-n", ns, "link", "set", &end.iface, "address", &mac])?;
                }
                let plain_host = self.topo.host(&end.node).is_some_and(|h| h.bond.is_none());
                if plain_host {
                    if let Some(a) = &self.topo.host(&end.node).and_then(|h| h.address.clone()) {
                        run(&["ip", "-n", ns, "addr", "add", a, "dev", &end.iface])?;
                    }
                } else {
                    // Bond members and switch ports must not answer ARP or
                    // speak IPv6 for the namespace.
                    run(&["ip", "-n", ns, "link", "set", &end.iface, "arp", "off"])?;
                    sys::ns_run(
                        ns,
                        &[
                            "sysctl",
                            "-qw",
                            &format!("net.ipv6.conf.{}.disable_ipv6=1", end.iface),
                        ],
                    )?;
                }
                run(&["ip", "-n", ns, "link", "set", &end.iface, "up"])?;
            }
            // Host ends are shaped now; switch ends once the switch owns
            // them (OVS would delete an earlier qdisc).
            for (end, ns) in [(&l.a, &na), (&l.b, &nb)] {
                if self.topo.host(&end.node).is_some() {
                    shape(ns, &end.iface, l)?;
                }
            }
        }
        self.say(&format!("{} links", links.len()));
        // Switches.
        let switches = self.topo.switches.clone();
        for (i, sw) in switches.iter().enumerate() {
            if sw.kind == SwitchKind::Lagkit {
                self.start_lagkit_switch(i, sw)?;
                continue;
            }
            let ns = self.ns(&sw.name);
            let dir = self.state.dir.join(format!("ovs-{}", sw.name));
            self.state.ovs.push(OvsRecord {
                switch: sw.name.clone(),
                ns: ns.clone(),
                dir: dir.clone(),
            });
            self.save()?;
            let ovs = Ovs::start(&ns, dir, Spawn::Detached)?;
            for p in ovs.pids() {
                let what = format!("{} {}", p.comm, sw.name);
                self.track(&what, p)?;
            }
            configure_switch(&ovs, sw, &switch_mac(i))?;
            for l in &links {
                for end in [&l.a, &l.b] {
                    if end.node == sw.name {
                        shape(&ns, &end.iface, l)?;
                    }
                }
            }
            self.say(&format!("switch {} (Open vSwitch) configured", sw.name));
        }
        // Host bonds.
        let hosts = self.topo.hosts.clone();
        for h in &hosts {
            let Some(b) = &h.bond else { continue };
            let cfg = self.state.dir.join(format!("{}.toml", h.name));
            std::fs::write(&cfg, &b.toml).map_err(IoError::at(&cfg))?;
            let log_path = self.state.dir.join(format!("{}-lagkit.log", h.name));
            let mut args = vec!["up".to_string(), cfg.to_string_lossy().into_owned()];
            args.extend(
                self.topo
                    .fault_losses(&h.name)
                    .into_iter()
                    .map(|(i, p)| format!("--fault-loss={i}={p}")),
            );
            let what = format!("lagkit up {}", h.name);
            let p = self.spawn_lagkit(&what, &h.name, &args, &log_path)?;
            answers(
                &p,
                &format!("lagkit up for host {}", h.name),
                "lagkit status",
                &log_path,
                || self.bond_status(&h.name, &b.name).is_ok(),
            )?;
            self.say(&format!("host {}: lagkit bond {} up", h.name, b.name));
        }
        if self.topo.needs_static_arp() {
            self.static_arp()?;
        }
        Ok(())
    }

    /// Starts `lagkit ARGS` in `node`'s namespace as a daemon of the lab:
    /// its own session (a Ctrl-C meant for `lagkit lab` does not reach it;
    /// `lab down` stops it), stdout and stderr in `log_path`, recorded in
    /// the state file as `what` once `ip netns exec` has become lagkit.
    fn spawn_lagkit(
        &mut self,
        what: &str,
        node: &str,
        args: &[String],
        log_path: &Path,
    ) -> Result<ProcId, RunError> {
        let log = std::fs::File::create(log_path).map_err(IoError::at(log_path))?;
        let log2 = log.try_clone().map_err(IoError::at(log_path))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns(node)])
            .arg(&self.opts.lagkit)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        lagkit_sys::proc::new_session(&mut cmd);
        let child = cmd.spawn().map_err(|source| RunError::Process {
            what: self.opts.lagkit.display().to_string(),
            source,
        })?;
        let pid = child.id() as i32;
        drop(child);
        // `ip netns exec` execs lagkit: wait until the PID is lagkit.
        let want = self
            .opts
            .lagkit
            .file_name()
            .map(|f| f.to_string_lossy().chars().take(15).collect::<String>())
            .unwrap_or_default();
        let p = poll(Duration::from_secs(3), || {
            ProcId::of(pid).filter(|p| p.comm == want)
        })
        .ok_or_else(|| RunError::NotStarted {
            daemon: what.to_string(),
            log: sys::tail(log_path, 5),
        })?;
        self.track(what, p.clone())?;
        Ok(p)
    }

    /// lagkit's own switch for the `i`-th switch `sw`: its ports' MACs
    /// (fixed, so its LACP system id is the same every run), the IOS
    /// configuration written from the topology, `lagkit switch` started
    /// and answering, then its ports shaped. Its channels form later
    /// ([`crate::converge`] waits for them with a deadline).
    fn start_lagkit_switch(&mut self, i: usize, sw: &Switch) -> Result<(), RunError> {
        let ns = self.ns(&sw.name);
        for p in &sw.ports {
            if let Some(mac) = self.topo.switch_port_mac(i, p) {
                run(&["ip", "-n", &ns, "link", "set", p, "address", &mac])?;
            }
        }
        let cfg = self.state.dir.join(format!("{}-switch.cfg", sw.name));
        let text = lagkit_switch::ios_config(&self.topo, sw);
        std::fs::write(&cfg, &text).map_err(IoError::at(&cfg))?;
        let log_path = self.state.dir.join(format!("{}-switch.log", sw.name));
        let mut args = vec!["switch".to_string(), cfg.to_string_lossy().into_owned()];
        args.extend(lagkit_switch::port_args(sw));
        args.extend(["--engine".to_string(), sw.engine.to_string()]);
        let p = self.spawn_lagkit(&switch_what(&sw.name), &sw.name, &args, &log_path)?;
        let handle = LagkitSwitch::new(self.opts.lagkit.clone(), &ns, &sw.name);
        answers(
            &p,
            &format!("lagkit switch {}", sw.name),
            "lagkit switch show",
            &log_path,
            || handle.channels().is_ok(),
        )?;
        let links = self.topo.links.clone();
        for l in &links {
            for end in [&l.a, &l.b] {
                if end.node == sw.name {
                    shape(&ns, &end.iface, l)?;
                }
            }
        }
        let engine = handle.forwarding().map_or_else(
            |e| format!("engine unknown: {e}"),
            |f| format!("{} engine: {}", f.engine, f.why),
        );
        self.say(&format!(
            "switch {} (lagkit switch, port-channel load-balance {}, {engine}) up",
            sw.name,
            lagkit_switch::method_of(sw)
        ));
        Ok(())
    }

    /// Permanent neighbour entries for every other host on every host (see
    /// [`Topology::needs_static_arp`]).
    fn static_arp(&self) -> Result<(), CommandError> {
        for h in &self.topo.hosts {
            let Some((dev, _)) = self.topo.l3_port(&h.name) else {
                continue;
            };
            for o in &self.topo.hosts {
                let (Some(addr), Some((_, mac))) = (&o.address, self.topo.l3_port(&o.name)) else {
                    continue;
                };
                if o.name == h.name {
                    continue;
                }
                let ip = addr.split('/').next().unwrap_or(addr);
                run(&[
                    "ip",
                    "-n",
                    &self.ns(&h.name),
                    "neigh",
                    "replace",
                    ip,
                    "lladdr",
                    &mac,
                    "nud",
                    "permanent",
                    "dev",
                    &dev,
                ])?;
            }
        }
        self.say("static ARP entries set (static channel on Open vSwitch)");
        Ok(())
    }
}

/// Waits up to 10 s until daemon `p` (`what`) answers `query` (`asks`);
/// otherwise says whether it exited or is silent, with its log's tail.
fn answers(
    p: &ProcId,
    what: &str,
    query: &str,
    log: &Path,
    mut asks: impl FnMut() -> bool,
) -> Result<(), RunError> {
    let ok = poll(Duration::from_secs(10), || {
        if !p.alive() {
            return Some(false);
        }
        asks().then_some(true)
    });
    if ok == Some(true) {
        return Ok(());
    }
    let (daemon, log) = (what.to_string(), sys::tail(log, 8));
    Err(if p.alive() {
        RunError::Silent {
            daemon,
            doing: format!("answer `{query}`"),
            after: Duration::from_secs(10),
            log,
        }
    } else {
        RunError::Exited { daemon, log }
    })
}

/// How the state file names the process of lagkit switch `name`.
fn switch_what(name: &str) -> String {
    format!("lagkit switch {name}")
}

/// `tc qdisc replace ... root tbf` on one end of `l`, if it is shaped.
fn shape(ns: &str, iface: &str, l: &crate::topology::Link) -> Result<(), CommandError> {
    let Some(rate) = &l.rate else {
        return Ok(());
    };
    let mut v = vec![
        "tc", "-n", ns, "qdisc", "replace", "dev", iface, "root", "tbf", "rate", &rate.text,
        "burst", "256kb", "latency", "50ms",
    ];
    if l.overhead {
        v.extend(["overhead", "24", "mpu", "84"]);
    }
    run(&v).map(|_| ())
}

/// What is at the root of `iface`'s qdisc tree, with its byte counter.
pub fn root_qdisc(ns: &str, iface: &str) -> Result<(String, u64), QueryError> {
    let t = run(&[
        "tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", iface, "root",
    ])?;
    let (query, of) = ("tc -j qdisc show", format!("{iface} in {ns}"));
    let v: serde_json::Value = QueryError::read_json(&t, query, &of)?;
    let q = v.get(0).ok_or_else(|| QueryError::empty(query, &of))?;
    Ok((
        q["kind"].as_str().unwrap_or("?").to_string(),
        q["bytes"].as_u64().unwrap_or(0),
    ))
}

/// The OVS port name of a channel (a one-port channel is a plain port).
pub fn ovs_port_name(c: &Channel) -> String {
    if c.ports.len() >= 2 {
        c.name.clone()
    } else {
        c.ports[0].clone()
    }
}

/// Bridge `br0` with the switch's channels and plain ports; every port
/// keeps its kernel qdisc (`qos=linux-noop`).
fn configure_switch(ovs: &Ovs, sw: &crate::topology::Switch, mac: &str) -> Result<(), OvsError> {
    ovs.vsctl(&[
        "add-br",
        "br0",
        "--",
        "set",
        "bridge",
        "br0",
        "datapath_type=netdev",
        &format!("other-config:hwaddr=\"{mac}\""),
    ])?;
    let ofport = |p: &str| format!("ofport_request={}", p.trim_start_matches('p'));
    let mut in_channel: Vec<&str> = Vec::new();
    for c in &sw.channels {
        in_channel.extend(c.ports.iter().map(String::as_str));
        let bonded = c.protocol != Protocol::None;
        if !bonded {
            continue;
        }
        let lacp = match c.protocol {
            Protocol::LacpActive => "active",
            Protocol::LacpPassive => "passive",
            _ => "off",
        };
        let port = ovs_port_name(c);
        let mode = c
            .load_balance
            .ovs_bond_mode()
            .ok_or_else(|| OvsError::NoBondMode { port: port.clone() })?;
        let mut args: Vec<String> = Vec::new();
        if c.ports.len() >= 2 {
            args.extend(["add-bond", "br0", &c.name].map(String::from));
            args.extend(c.ports.iter().cloned());
        } else {
            args.extend(["add-port", "br0", &c.ports[0]].map(String::from));
        }
        args.extend([
            "--".into(),
            "set".into(),
            "port".into(),
            port.clone(),
            format!("lacp={lacp}"),
            format!("bond_mode={mode}"),
            "other_config:lacp-time=fast".into(),
            "other_config:bond-rebalance-interval=1000".into(),
            "qos=@q".into(),
        ]);
        for p in &c.ports {
            args.extend([
                "--".into(),
                "set".into(),
                "interface".into(),
                p.clone(),
                ofport(p),
            ]);
        }
        args.extend(["--", "--id=@q", "create", "qos", "type=linux-noop"].map(String::from));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ovs.vsctl(&a)?;
    }
    for p in &sw.ports {
        if in_channel.contains(&p.as_str())
            && sw
                .channels
                .iter()
                .any(|c| c.protocol != Protocol::None && c.ports.contains(p))
        {
            continue;
        }
        ovs.vsctl(&[
            "add-port",
            "br0",
            p,
            "--",
            "set",
            "interface",
            p,
            &ofport(p),
            "--",
            "set",
            "port",
            p,
            "qos=@q",
            "--",
            "--id=@q",
            "create",
            "qos",
            "type=linux-noop",
        ])?;
    }
    Ok(())
}
