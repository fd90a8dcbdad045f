//! The bond at run time: one control thread that owns the LACP core, the
//! link watchers and the control socket, and the data path that only reads
//! the published plan: the kernel's BPF programs ([`crate::kernel`]), or the
//! forwarding engine whose threads read the published [`BondMap`] (under
//! the BPF engine those threads carry the control frames only).
//!
//! The control loop sleeps in poll(2) on the netlink link-event socket and
//! the control socket, with a timeout no later than the next protocol or
//! watcher deadline (and at most 10 ms, which bounds the latency of LACPDUs
//! arriving through the engine's queue). A carrier event is handled the
//! moment the kernel reports it.

use crate::alb::{AlbClients, Own};
use crate::control::{ControlServer, Pending};
use crate::journal::{self, JournalError, RunDir};
use crate::kernel::KernelPath;
use crate::map::{coarse_now_ns, BondMap, Shared};
use crate::member::{self, Saved};
use crate::metrics::Exporter;
use crate::plan::{Context, MemberView, Plan, PlanState};
use crate::protocol::{flow_key, FlowAnswer, Request, Response};
use crate::rebalance::Rebalancer;
use crate::settings::{BondMode, Settings};
use crate::status::{
    self, BondStats, BondStatus, CarrierEvent, LacpInfo, MemberLacp, MemberOffloads, MemberStats,
    MemberStatus,
};
use crate::upper::{EngineInfo, Upper};
use lagkit_dataplane::forward::{Engine, EngineConfig, EngineDrop, MemberSnapshot, SlowQueues};
use lagkit_dataplane::{Device, FaultInjector, Isolation, MapPublisher, PairDevice};
use lagkit_hash::AdaptiveConfig;
use lagkit_monitor::arp::ArpMonitor;
use lagkit_monitor::carrier::{poll_carrier, CarrierWatcher, LinkState};
use lagkit_monitor::{Combine, Debounce, Watchers};
use lagkit_proto::lacp::{Event, PortId, System};
use lagkit_wire::{ArpOp, ArpRepr, MacAddr, SystemId};
use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// Why a bond could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum BondError {
    /// The TAP could not be created.
    #[error("bond {bond}: cannot create TAP interface: {why}")]
    Tap {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// A member could not be set up.
    #[error("bond {bond}: {0}", bond = .1)]
    Member(member::MemberError, String),
    /// Netlink failed.
    #[error("bond {bond}: netlink: {why}")]
    Netlink {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// The control socket could not be created.
    #[error("bond {bond}: control socket {path}: {why}")]
    Control {
        /// Bond name.
        bond: String,
        /// Socket path.
        path: PathBuf,
        /// Reason.
        why: String,
    },
    /// The engine failed.
    #[error("bond {bond}: forwarding engine: {why}")]
    Engine {
        /// Bond name.
        bond: String,
        /// Reason.
        why: String,
    },
    /// Another daemon runs this bond, or its run directory is unusable.
    #[error("{0}")]
    RunDir(#[from] JournalError),
    /// A member is in use by another bond.
    #[error("bond {bond}: member {member} is in use by bond {owner} (pid {pid}); a member belongs to one bond at a time")]
    InUse {
        /// This bond.
        bond: String,
        /// The member.
        member: String,
        /// The bond that has it.
        owner: String,
        /// The daemon running that bond.
        pid: u32,
    },
    /// An address could not be set.
    #[error("bond {bond}: address {addr}: {why}")]
    Address {
        /// Bond name.
        bond: String,
        /// Address.
        addr: String,
        /// Reason.
        why: String,
    },
}

struct Member {
    name: String,
    /// Its AF_PACKET socket, wrapped in a [`FaultInjector`] when the
    /// settings inject loss on it.
    dev: Option<Arc<dyn Device>>,
    /// Stand-in for a missing member, so engine indices stay fixed; the
    /// peer is kept so the stand-in never reads end-of-file.
    placeholder: Option<(Arc<PairDevice>, PairDevice)>,
    saved: Option<Saved>,
    /// Keeps the member's frames from the host stack while held.
    isolation: Option<Isolation>,
    mac: MacAddr,
    port: Option<PortId>,
    carrier: Debounce,
    watchers: Watchers,
    is_backup: bool,
    /// Counters of engines that have been replaced.
    past: MemberStats,
}

impl Member {
    /// A member not yet taken: no device, down until its carrier is
    /// confirmed (after `updelay`).
    fn new(name: String, is_backup: bool, updelay: Duration, downdelay: Duration) -> Member {
        let mut watchers = Watchers::new(Combine::All);
        watchers.set("carrier", false);
        Member {
            name,
            dev: None,
            placeholder: None,
            saved: None,
            isolation: None,
            mac: MacAddr::ZERO,
            port: None,
            carrier: Debounce::new(false, updelay, downdelay),
            watchers,
            is_backup,
            past: MemberStats::default(),
        }
    }

    fn present(&self) -> bool {
        self.dev.is_some()
    }
    fn usable(&self) -> bool {
        self.present() && self.watchers.up()
    }
}

/// One running bond.
pub struct Bond {
    /// The Prometheus endpoint, if configured.
    metrics: Option<Exporter>,
    /// adaptive, tlb, alb: moves buckets by measured load.
    rebalancer: Option<Rebalancer>,
    /// balance-alb: client -> member.
    clients: AlbClients,
    s: Settings,
    epoch: std::time::Instant,
    /// The logical interface (a TAP, or the BPF engine's veth end).
    upper: Upper,
    /// Which engine runs, and why.
    engine_info: EngineInfo,
    /// The BPF engine's programs, when it runs.
    kernel: Option<KernelPath>,
    mac: MacAddr,
    members: Vec<Member>,
    /// The forwarding threads (under the BPF engine: control frames only).
    engine: Option<Engine<BondMap>>,
    slow_rx: Option<SlowQueues>,
    publisher: Option<MapPublisher<BondMap>>,
    lacp: Option<System>,
    carrier: CarrierWatcher,
    arp: Option<ArpMonitor>,
    /// What the mode remembers between plans (active member, buckets).
    plan: PlanState,
    generation: u64,
    /// The data path's state shared by every published map.
    shared: Arc<Shared>,
    control: Option<ControlServer>,
    requests: Receiver<Pending>,
    /// The run directory and state file; `None` once shut down.
    run: Option<RunDir>,
    dirty: bool,
    next_miimon: u64,
    ipv4: Vec<Ipv4Addr>,
    grat_pending: u8,
    /// When the link events being handled were read (CLOCK_MONOTONIC ns).
    seen_ns: u64,
    /// Carrier changes whose plan is not published yet: (member, up, seen).
    unpublished: Vec<(usize, bool, u64)>,
    /// The latest carrier changes and when their plans were published.
    carrier_events: std::collections::VecDeque<CarrierEvent>,
}

/// How many carrier changes [`Bond::stats`] keeps.
const CARRIER_EVENTS: usize = 256;

fn now_ns(epoch: std::time::Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

impl Bond {
    /// Creates the TAP, takes the members that exist, starts LACP and the
    /// engine, and opens the control socket. Must be called on a thread in
    /// the network namespace the bond lives in.
    ///
    /// Nothing is touched before the bond's run directory is locked (a
    /// second daemon for the same bond stops here) and every member is
    /// known to be free. A start that fails later gives back everything it
    /// changed before the error returns (see [`Bond`]'s `Drop`).
    pub fn start(s: Settings) -> Result<Bond, BondError> {
        Bond::start_with(s, &mut |_| {})
    }

    /// [`Bond::start`], running `between(member)` after each member's
    /// originals are recorded and before it is changed (a seam for tests
    /// that remove a member in the middle of a start).
    pub fn start_with(s: Settings, between: &mut dyn FnMut(&str)) -> Result<Bond, BondError> {
        let s = s.normalised();
        let name = s.name.clone();
        let ns_dir = lagkit_bondcfg::paths::netns_dir(lagkit_bondcfg::paths::netns_id());
        let run_dir = ns_dir.join(&name);
        let (run, left) = RunDir::acquire(run_dir.clone(), &name)?;
        if let Some(old) = left {
            tracing::warn!(bond = %name, pid = old.pid, members = old.members.len(), "a previous lagkit (pid {}) exited without cleaning up; its members were restored first", old.pid);
        }
        if crate::kernel::remove_leftover(&name) {
            tracing::warn!(bond = %name, "removed the logical interface a killed lagkit left behind");
        }
        let mut all: Vec<(String, bool)> = s.members.iter().map(|m| (m.clone(), false)).collect();
        if let Some(b) = &s.backup {
            if !s.members.contains(b) {
                all.push((b.clone(), true));
            }
        }
        for (m, _) in &all {
            if let Some((owner, pid)) = journal::member_owner(&ns_dir, m, &run_dir) {
                return Err(BondError::InUse {
                    bond: name,
                    member: m.clone(),
                    owner,
                    pid,
                });
            }
        }
        let carrier = CarrierWatcher::open().map_err(|e| BondError::Netlink {
            bond: name.clone(),
            why: e.to_string(),
        })?;
        let downdelay = s.member_downdelay();
        let members = all
            .into_iter()
            .map(|(m, is_backup)| Member::new(m, is_backup, s.updelay, downdelay))
            .collect();
        let (upper, engine_info) =
            Upper::open(&name, s.engine).map_err(|why| BondError::Engine {
                bond: name.clone(),
                why,
            })?;
        tracing::info!(bond = %name, engine = engine_info.kind, why = %engine_info.why, "data path chosen");
        let path = s.control_socket.clone();
        let control_err = |why: String| BondError::Control {
            bond: name.clone(),
            path: path.clone(),
            why,
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if path.exists() {
            if UnixStream::connect(&path).is_ok() {
                return Err(control_err(
                    "another lagkit already serves this socket (it is live)".into(),
                ));
            }
            let _ = std::fs::remove_file(&path);
        }
        let listener = UnixListener::bind(&path).map_err(|e| control_err(e.to_string()))?;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        let (control, requests) = ControlServer::start(listener, path.clone(), &name)
            .map_err(|e| control_err(e.to_string()))?;
        let rebalancer = matches!(
            s.mode,
            BondMode::Adaptive | BondMode::BalanceTlb | BondMode::BalanceAlb
        )
        .then(|| {
            let config = AdaptiveConfig {
                interval_ns: s.adaptive_interval.as_nanos() as u64,
                idle_gap_ns: s.adaptive_idle_gap.as_nanos() as u64,
                ..AdaptiveConfig::default()
            };
            Rebalancer::new(config, coarse_now_ns())
        });
        let metrics = match s.metrics_port {
            Some(port) => Some(Exporter::start(port).map_err(|e| BondError::Control {
                bond: s.name.clone(),
                path: PathBuf::from(format!("127.0.0.1:{port}")),
                why: format!("metrics port: {e}"),
            })?),
            None => None,
        };
        let mut bond = Bond {
            metrics,
            clients: AlbClients::default(),
            rebalancer,
            epoch: std::time::Instant::now(),
            upper,
            engine_info,
            kernel: None,
            mac: MacAddr::ZERO,
            members,
            engine: None,
            slow_rx: None,
            publisher: None,
            lacp: None,
            carrier,
            arp: None,
            plan: PlanState::default(),
            generation: 0,
            shared: Arc::default(),
            control: Some(control),
            requests,
            run: Some(run),
            dirty: true,
            next_miimon: 0,
            ipv4: Vec::new(),
            grat_pending: 0,
            seen_ns: 0,
            unpublished: Vec::new(),
            carrier_events: std::collections::VecDeque::new(),
            s,
        };
        // From here on, an error drops `bond`, which gives back whatever
        // was taken.
        for i in 0..bond.members.len() {
            if let Err(e) = bond.try_take_with(i, &mut *between) {
                return Err(BondError::Member(e, bond.s.name.clone()));
            }
        }
        bond.setup_tap()?;
        bond.setup_lacp();
        if let Some(cfg) = bond.s.arp.clone() {
            let now = now_ns(bond.epoch);
            bond.arp = Some(ArpMonitor::new(cfg, bond.members.len(), now));
        }
        // Link events queued while the members were being set up describe
        // states that are already gone (a member before it was brought up
        // would count as a link failure): discard them, then read the
        // current carrier of every present member.
        while bond
            .carrier
            .recv(Duration::ZERO)
            .is_ok_and(|v| !v.is_empty())
        {}
        if let Ok(links) = CarrierWatcher::dump() {
            for l in links {
                bond.link_event(&l);
            }
        }
        bond.restart_engine()?;
        tracing::info!(bond = %bond.s.name, mode = bond.s.mode.linux_name(), members = ?bond.s.members, "bond up");
        Ok(bond)
    }

    fn t(&self) -> lagkit_proto::Instant {
        lagkit_proto::Instant::from_nanos(now_ns(self.epoch))
    }

    /// Takes member `i` if its interface exists now: `Ok(true)` if it is
    /// taken, `Ok(false)` if it does not exist (yet), an error if it exists
    /// but cannot be used (it is then left as it was).
    fn try_take(&mut self, i: usize) -> Result<bool, member::MemberError> {
        self.try_take_with(i, &mut |_| {})
    }

    fn try_take_with(
        &mut self,
        i: usize,
        between: &mut dyn FnMut(&str),
    ) -> Result<bool, member::MemberError> {
        if self.members[i].present() {
            return Ok(true);
        }
        let name = self.members[i].name.clone();
        let Some(run) = self.run.as_mut() else {
            return Ok(false);
        };
        let ns_dir = run.dir().parent().map(PathBuf::from).unwrap_or_default();
        if let Some((owner, pid)) = journal::member_owner(&ns_dir, &name, run.dir()) {
            return Err(member::MemberError::Setup {
                name,
                what: format!(
                    "in use by bond {owner} (pid {pid}); a member belongs to one bond at a time"
                ),
            });
        }
        let want = member::Want {
            mtu: self.s.mtu,
            keep_offloads: self.s.keeps_offloads(&name),
            kernel: self.upper.is_kernel(),
        };
        match member::take_with(&name, want, run, between) {
            Ok(t) => {
                let fault = self.s.faults.iter().find(|(n, _)| *n == name).map(|f| f.1);
                let dev: Arc<dyn Device> = match fault {
                    Some(p) => {
                        // Seeded by the member's position: the same frames
                        // meet the same fate run after run.
                        let f = FaultInjector::new(t.sock, 0x6c61_676b_0000 + i as u64);
                        f.control().set_drop_probability(p);
                        tracing::warn!(bond = %self.s.name, member = %name, loss = p, "injecting loss on this member (--fault-loss)");
                        Arc::new(f)
                    }
                    None => Arc::new(t.sock),
                };
                let m = &mut self.members[i];
                tracing::info!(bond = %self.s.name, member = %name, isolation = t.isolation.as_ref().map_or("bpf-ingress", |i| i.kind()), offloads_turned_off = ?t.saved.offloads_turned_off(), "member taken");
                m.dev = Some(dev);
                m.placeholder = None;
                m.saved = Some(t.saved);
                m.isolation = t.isolation;
                m.mac = MacAddr(t.mac);
                Ok(true)
            }
            Err(member::MemberError::Missing(_)) => {
                tracing::warn!(bond = %self.s.name, member = %name, "member missing; waiting for it to appear");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives member `i` back as it was and forgets it in the state file.
    fn give_back(&mut self, i: usize) {
        let m = &mut self.members[i];
        m.isolation = None;
        if let Some(saved) = m.saved.take() {
            member::restore(&m.name, &saved);
        }
        if let Some(run) = self.run.as_mut() {
            run.forget(&m.name);
        }
    }

    /// Turns each held member's offloads off, or gives them back, as the
    /// settings now say (a reload that changed `offloads`).
    fn apply_offloads(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        for m in &mut self.members {
            let keep = !self.s.offloads_off.contains(&m.name);
            let Some(saved) = m.saved.as_mut().filter(|s| s.offloads_off() == keep) else {
                continue;
            };
            match member::set_offloads(&m.name, keep, saved, run) {
                Ok(()) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, offloads = if keep { "given back" } else { "off" }, "member offloads changed by reload")
                }
                Err(e) => tracing::error!(bond = %self.s.name, error = %e, "offloads unchanged"),
            }
        }
    }

    fn setup_tap(&mut self) -> Result<(), BondError> {
        let link = self.upper.link();
        let mac = self
            .s
            .mac
            .or_else(|| self.members.iter().find(|m| m.present()).map(|m| m.mac))
            .unwrap_or(MacAddr([0x02, 0x6c, 0x6b, 0, 0, 1]));
        self.mac = mac;
        let tap_err = |why: String| BondError::Tap {
            bond: self.s.name.clone(),
            why,
        };
        link.set_mac(mac.0)
            .map_err(|e| tap_err(format!("set MAC {mac}: {e}")))?;
        if let Some(mtu) = self.s.mtu {
            link.set_mtu(mtu)
                .map_err(|e| tap_err(format!("set MTU {mtu}: {e}")))?;
        }
        link.set_up(true)
            .map_err(|e| tap_err(format!("bring up: {e}")))?;
        for a in self.s.addresses.clone() {
            let out = std::process::Command::new("ip")
                .args(["addr", "replace", &a, "dev", &self.s.name])
                .output();
            match out {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    return Err(BondError::Address {
                        bond: self.s.name.clone(),
                        addr: a,
                        why: String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    })
                }
                Err(e) => {
                    return Err(BondError::Address {
                        bond: self.s.name.clone(),
                        addr: a,
                        why: format!("cannot run ip(8): {e}"),
                    })
                }
            }
            if let Some(ip) = a.split('/').next().and_then(|x| x.parse::<Ipv4Addr>().ok()) {
                self.ipv4.push(ip);
            }
        }
        Ok(())
    }

    fn setup_lacp(&mut self) {
        if self.s.mode != BondMode::Lacp {
            return;
        }
        let l = &self.s.lacp;
        let mut sys = System::new(l.system_config(&self.s.name, self.mac));
        let now = self.t();
        for (i, m) in self.members.iter_mut().enumerate() {
            m.port = Some(sys.add_port(l.port_config(&m.name, (i + 1) as u16, m.mac), now));
        }
        self.lacp = Some(sys);
    }

    /// Applies new LACP identity, key, rate or activity in place: the
    /// System ID changes at once (partners re-select), and ports whose
    /// key, rate or activity changed are re-created with the same port
    /// numbers; data keeps flowing on whatever stays aggregated.
    fn apply_lacp(&mut self, new: &crate::settings::LacpSettings) {
        let old = std::mem::replace(&mut self.s.lacp, new.clone());
        let t = self.t();
        let Some(sys) = self.lacp.as_mut() else {
            return;
        };
        let id = SystemId::new(new.system_priority, new.system_mac.unwrap_or(self.mac));
        sys.set_system_id(id, t);
        if (old.fast, old.active, old.key) != (new.fast, new.active, new.key) {
            for m in &mut self.members {
                let Some(p) = m.port else { continue };
                let number = sys.port_status(p).map_or(0, |st| st.actor.port);
                sys.remove_port(p, t);
                let np = sys.add_port(new.port_config(&m.name, number, m.mac), t);
                sys.set_port_enabled(np, m.carrier.is_up() && m.dev.is_some(), t);
                m.port = Some(np);
            }
        }
        tracing::info!(bond = %self.s.name, system = %id, fast = new.fast, active = new.active, key = new.key, "LACP settings changed in place");
        self.dirty = true;
    }

    /// Stops the current engine (keeping its counters) and starts one over
    /// the current member devices; under the BPF engine, attaches a new set
    /// of programs to the members present, which takes over from the old
    /// set the moment that is dropped (no frame goes unhandled between).
    fn restart_engine(&mut self) -> Result<(), BondError> {
        if let Some(e) = self.engine.take() {
            let snap = e.stats();
            for (m, s) in self.members.iter_mut().zip(snap.members.iter()) {
                m.past.add_engine(s);
            }
            let _ = e.stop();
        }
        let bond = self.s.name.clone();
        let engine_err = |why: String| BondError::Engine {
            bond: bond.clone(),
            why,
        };
        let kernel = if self.upper.is_kernel() {
            let names: Vec<Option<&str>> = self
                .members
                .iter()
                .map(|m| m.present().then_some(m.name.as_str()))
                .collect();
            let faults: Vec<(usize, f64)> = self
                .s
                .faults
                .iter()
                .filter_map(|(n, p)| Some((self.members.iter().position(|m| &m.name == n)?, *p)))
                .collect();
            Some(
                KernelPath::start(&self.s.name, &names, &faults)
                    .map_err(|e| engine_err(e.to_string()))?,
            )
        } else {
            None
        };
        let mut devs: Vec<Arc<dyn Device>> = Vec::new();
        for m in &mut self.members {
            match &m.dev {
                Some(d) => devs.push(d.clone()),
                None => {
                    if m.placeholder.is_none() {
                        let (a, b) =
                            PairDevice::pair(&m.name, "absent").map_err(|e| BondError::Engine {
                                bond: self.s.name.clone(),
                                why: e.to_string(),
                            })?;
                        m.placeholder = Some((Arc::new(a), b));
                    }
                    if let Some((a, _)) = &m.placeholder {
                        devs.push(a.clone());
                    }
                }
            }
        }
        let map = self.build_map();
        if let Some(mut k) = kernel {
            k.publish(&map.plan)
                .map_err(|e| engine_err(e.to_string()))?;
            // The old programs detach here; the new ones take over.
            if let Some(old) = self.kernel.replace(k) {
                self.fold_kernel_counters(&old);
            }
        }
        let (engine, slow) =
            Engine::start_map(self.upper.device(), devs, map, EngineConfig::default())
                .map_err(|e| engine_err(e.to_string()))?;
        self.publisher = Some(engine.publisher());
        self.engine = Some(engine);
        self.slow_rx = Some(slow);
        self.dirty = false;
        Ok(())
    }

    /// Keeps the counts of programs being replaced in each member's past.
    fn fold_kernel_counters(&mut self, old: &KernelPath) {
        let Some(c) = old.counters() else { return };
        for (i, m) in self.members.iter_mut().enumerate() {
            m.past.add_engine(&kernel_snapshot(&c, i));
        }
    }

    /// What the plan needs to know about each member.
    fn views(&self) -> Vec<MemberView> {
        let sys = self.lacp.as_ref();
        self.members
            .iter()
            .map(|m| {
                let port = m.port.and_then(|p| sys?.port_status(p));
                MemberView {
                    usable: m.usable(),
                    backup: m.is_backup,
                    primary: self.s.primary.as_ref() == Some(&m.name),
                    distributing: port.as_ref().is_some_and(|p| p.distributing) && m.present(),
                    collecting: port.as_ref().is_some_and(|p| p.collecting) && m.present(),
                    mac: m.mac.0,
                }
            })
            .collect()
    }

    /// The distribution map for the current state.
    fn build_map(&mut self) -> BondMap {
        let view = self.views();
        if self.s.mode == BondMode::BalanceAlb {
            let now = now_ns(self.epoch);
            self.clients
                .reassign(&crate::plan::tlb::members(&view), now);
        }
        let ctx = Context {
            bond_mac: self.mac.0,
            clients: self.clients.assignments(),
        };
        let plan = crate::plan::plan(&view, &self.s, &mut self.plan, &ctx);
        if let Some(r) = self.rebalancer.as_mut() {
            r.follow(&self.plan.slots, coarse_now_ns());
        }
        self.generation += 1;
        BondMap {
            generation: self.generation,
            plan,
            snoop_arp: self.s.arp.is_some() || self.s.mode == BondMode::BalanceAlb,
            control_only: self.upper.is_kernel(),
            shared: self.shared.clone(),
        }
    }

    /// adaptive, tlb, alb: feed the data path's counts to the balancer and,
    /// when it moves buckets, publish the new table.
    fn rebalance(&mut self) {
        let Some(r) = self.rebalancer.as_mut() else {
            return;
        };
        let now = coarse_now_ns();
        if let Some(k) = self.kernel.as_ref().filter(|_| r.due(now)) {
            // The programs count bytes and last-seen times per bucket.
            if let Some(load) = k.bucket_load() {
                for (b, l) in load.iter().enumerate() {
                    self.shared.load.set(b as u8, l.bytes, l.last_ns);
                }
            }
        }
        if let Some(map) = r.poll(&self.shared.load, now) {
            let b = r.balancer();
            tracing::info!(bond = %self.s.name, moves = b.stats().moves, loads = ?b.member_loads(), "adaptive: buckets moved");
            self.plan.slots.set_map(map);
            self.dirty = true;
        }
    }

    fn publish(&mut self) {
        let before = self.plan.active;
        let map = self.build_map();
        let after = self.plan.active;
        // Only active-backup, tlb and alb have an active member.
        if after != before {
            let name =
                |a: Option<usize>| a.map_or("none".to_string(), |a| self.members[a].name.clone());
            tracing::info!(bond = %self.s.name, from = %name(before), to = %name(after), "active member changed");
            if matches!(map.plan, Plan::ActiveBackup { .. }) {
                self.move_mac(before, after);
            }
            if after.is_some() && before.is_some() {
                self.grat_pending = self.s.num_grat_arp;
            }
        }
        tracing::debug!(bond = %self.s.name, tx = ?map.plan.transmitting(), generation = map.generation, "map published");
        if let Some(k) = self.kernel.as_mut() {
            if let Err(e) = k.publish(&map.plan) {
                tracing::error!(bond = %self.s.name, error = %e, "the kernel did not take the new plan");
            }
        }
        if let Some(p) = &self.publisher {
            p.publish(map);
        }
        self.dirty = false;
        if !self.unpublished.is_empty() {
            let published_ns = lagkit_dataplane::monotonic_now_ns();
            for (i, up, seen_ns) in std::mem::take(&mut self.unpublished) {
                if self.carrier_events.len() == CARRIER_EVENTS {
                    self.carrier_events.pop_front();
                }
                self.carrier_events.push_back(CarrierEvent {
                    member: self
                        .members
                        .get(i)
                        .map_or_else(String::new, |m| m.name.clone()),
                    up,
                    seen_ns,
                    published_ns,
                });
            }
        }
    }

    /// `fail_over_mac`: `active` gives the bond the new active member's MAC;
    /// `follow` gives the new active member the bond's MAC and the old one
    /// its own back.
    fn move_mac(&mut self, old: Option<usize>, new: Option<usize>) {
        use crate::settings::FailOverMac;
        let Some(n) = new else { return };
        match self.s.fail_over_mac {
            FailOverMac::None => {}
            FailOverMac::Active => {
                let mac = self.members[n].mac;
                if self.upper.link().set_mac(mac.0).is_ok() {
                    self.mac = mac;
                }
            }
            FailOverMac::Follow => {
                let set = |name: &str, mac: MacAddr| {
                    if let Ok(l) = lagkit_dataplane::Link::open(name) {
                        let _ = l.set_mac(mac.0);
                    }
                };
                if let Some(o) = old.filter(|&o| o != n) {
                    set(&self.members[o].name, self.members[o].mac);
                }
                set(&self.members[n].name, self.mac);
            }
        }
    }

    /// A netlink link event (or a dump entry).
    fn link_event(&mut self, l: &LinkState) {
        let Some(i) = self.members.iter().position(|m| m.name == l.name) else {
            return;
        };
        if !l.present {
            if self.members[i].present() {
                tracing::warn!(bond = %self.s.name, member = %l.name, "member removed from the system");
                self.give_back(i);
                self.members[i].dev = None;
                self.set_carrier(i, false);
                let _ = self.restart_engine();
            }
            return;
        }
        if !self.members[i].present() {
            match self.try_take(i) {
                Ok(true) => {
                    let _ = self.restart_engine();
                }
                Ok(false) => {}
                Err(e) => tracing::error!(bond = %self.s.name, error = %e, "member cannot be used"),
            }
        }
        self.set_carrier(i, l.usable());
    }

    /// The raw carrier of member `i` changed (or was re-read).
    fn set_carrier(&mut self, i: usize, raw: bool) {
        let now = now_ns(self.epoch);
        if let Some(up) = self.members[i].carrier.observe(raw, now) {
            self.apply_carrier(i, up);
        }
    }

    fn apply_carrier(&mut self, i: usize, up: bool) {
        // A change found by a timer (debounce, miimon) was seen now.
        let seen = match self.seen_ns {
            0 => lagkit_dataplane::monotonic_now_ns(),
            t => t,
        };
        self.unpublished.push((i, up, seen));
        let name = self.members[i].name.clone();
        tracing::info!(bond = %self.s.name, member = %name, carrier = up, "member link {}", if up { "up" } else { "down" });
        self.members[i].watchers.set("carrier", up);
        if let (Some(sys), Some(p)) = (self.lacp.as_mut(), self.members[i].port) {
            let t = lagkit_proto::Instant::from_nanos(now_ns(self.epoch));
            sys.set_port_enabled(p, up && self.members[i].dev.is_some(), t);
        }
        self.dirty = true;
    }

    /// Runs until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            self.step(Duration::from_millis(10));
        }
    }

    /// Runs until `stop` is set, applying new settings that arrive on
    /// `updates` (see [`Bond::reconfigure`]). Returns settings that need a
    /// restart of the bond.
    pub fn run_with(
        &mut self,
        stop: &AtomicBool,
        updates: &Receiver<Settings>,
    ) -> Option<Settings> {
        while !stop.load(Ordering::Relaxed) {
            self.step(Duration::from_millis(10));
            if let Ok(new) = updates.try_recv() {
                if let Err(new) = self.reconfigure(new) {
                    return Some(*new);
                }
            }
        }
        None
    }

    /// Applies new settings in place when only the member list (or the
    /// members' offloads, or LACP's identity) changed: new members are
    /// taken and join (LACP negotiates them), removed ones are given back,
    /// and members that stay keep their sockets, LACP state and traffic,
    /// their offloads turned off or given back as `offloads` now says.
    /// Anything else needs a restart: the settings come back as the error.
    pub fn reconfigure(&mut self, new: Settings) -> Result<(), Box<Settings>> {
        let new = new.normalised();
        if self.s.needs_restart(&new) {
            return Err(Box::new(new));
        }
        if new.lacp != self.s.lacp {
            self.apply_lacp(&new.lacp);
        }
        self.s.offloads_off = new.offloads_off.clone();
        self.apply_offloads();
        let t = self.t();
        let removed: Vec<usize> = (0..self.members.len())
            .filter(|&i| !self.members[i].is_backup && !new.members.contains(&self.members[i].name))
            .collect();
        for &i in removed.iter().rev() {
            self.give_back(i);
            let m = self.members.remove(i);
            tracing::info!(bond = %self.s.name, member = %m.name, "member removed by reload");
            if let (Some(sys), Some(p)) = (self.lacp.as_mut(), m.port) {
                sys.remove_port(p, t);
            }
        }
        let mut next_port = self
            .members
            .iter()
            .filter_map(|m| m.port.and_then(|p| self.lacp.as_ref()?.port_status(p)))
            .map(|p| p.actor.port)
            .max()
            .unwrap_or(0);
        for name in &new.members {
            if self.members.iter().any(|m| &m.name == name) {
                continue;
            }
            tracing::info!(bond = %self.s.name, member = %name, "member added by reload");
            let downdelay = self.s.member_downdelay();
            self.members
                .push(Member::new(name.clone(), false, self.s.updelay, downdelay));
            let i = self.members.len() - 1;
            if let Err(e) = self.try_take(i) {
                tracing::error!(bond = %self.s.name, error = %e, "member cannot be used");
            }
            if let Some(sys) = self.lacp.as_mut() {
                next_port += 1;
                let pc = self
                    .s
                    .lacp
                    .port_config(name, next_port, self.members[i].mac);
                self.members[i].port = Some(sys.add_port(pc, t));
            }
        }
        self.s.members = new.members;
        if let Some(cfg) = self.s.arp.clone() {
            self.arp = Some(ArpMonitor::new(cfg, self.members.len(), now_ns(self.epoch)));
        }
        if let Ok(links) = CarrierWatcher::dump() {
            for l in links {
                self.link_event(&l);
            }
        }
        if let Err(e) = self.restart_engine() {
            tracing::error!("{e}");
        }
        self.dirty = true;
        Ok(())
    }

    /// One iteration of the control loop, waiting at most `max_wait`.
    pub fn step(&mut self, max_wait: Duration) {
        let now = now_ns(self.epoch);
        let mut wait = max_wait;
        let mut deadline = |d: Option<u64>| {
            if let Some(d) = d {
                wait = wait.min(Duration::from_nanos(d.saturating_sub(now)));
            }
        };
        if let Some(sys) = &self.lacp {
            deadline(sys.poll_timeout().map(|t| t.as_nanos()));
        }
        for m in &self.members {
            deadline(m.carrier.deadline());
        }
        if let Some(a) = &self.arp {
            deadline(Some(a.poll_timeout()));
        }
        if !self.s.miimon.is_zero() {
            deadline(Some(self.next_miimon));
        }
        let ms = u16::try_from(wait.as_millis()).unwrap_or(10);
        if self.carrier.wait(ms) {
            self.seen_ns = lagkit_dataplane::monotonic_now_ns();
            if let Ok(events) = self.carrier.recv(Duration::ZERO) {
                for e in events {
                    self.link_event(&e);
                }
            }
            self.seen_ns = 0;
        }
        self.handle_slow();
        self.handle_timers();
        self.rebalance();
        self.drain_lacp();
        if self.dirty {
            self.publish();
        }
        self.serve_requests();
        self.notify_clients();
        self.send_gratuitous();
        self.update_metrics();
    }

    /// Re-renders the metrics text at most once a second.
    fn update_metrics(&mut self) {
        let now = now_ns(self.epoch);
        if !self.metrics.as_ref().is_some_and(|m| m.due(now)) {
            return;
        }
        let text = crate::metrics::render(&self.status(), &self.stats());
        if let Some(m) = self.metrics.as_mut() {
            m.publish(text, now);
        }
    }

    fn handle_slow(&mut self) {
        let Some(rx) = &self.slow_rx else { return };
        // A bounded share per member and step: a member flooded with
        // plausible-looking PDUs cannot delay another member's.
        let frames = rx.drain(64);
        if frames.is_empty() {
            return;
        }
        let t = self.t();
        for f in frames {
            if f.frame.get(12..14) == Some(&[0x08, 0x06][..]) {
                self.handle_arp(f.member, &f.frame);
                continue;
            }
            let port = self.members.get(f.member).and_then(|m| m.port);
            if let (Some(sys), Some(p)) = (self.lacp.as_mut(), port) {
                sys.handle_frame(p, &f.frame, t);
            }
        }
    }

    /// An ARP frame seen on member `m`: a probe reply for the monitor, and
    /// in balance-alb a client to learn.
    fn handle_arp(&mut self, m: usize, frame: &[u8]) {
        let Some(arp) = ArpRepr::parse_frame(frame) else {
            return;
        };
        let now = now_ns(self.epoch);
        if let Some(mon) = self.arp.as_mut() {
            mon.on_reply(m, arp.sender_ip, now);
            mon.on_rx(m, now);
        }
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let usable: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].usable() && !self.members[i].is_backup)
            .collect();
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        if let Some(member) = self.clients.learn(&arp, own, &usable, now) {
            tracing::info!(bond = %self.s.name, client = %arp.sender_ip, member = %self.members[member].name, "alb: client assigned");
            self.dirty = true;
        }
    }

    /// balance-alb: tell clients which MAC to send to, with an ARP reply
    /// from their member.
    fn notify_clients(&mut self) {
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        let out = self.clients.due(now_ns(self.epoch), self.plan.active, own);
        for (m, f) in out {
            self.send_on(m, &f);
        }
    }

    fn handle_timers(&mut self) {
        let now = now_ns(self.epoch);
        let t = self.t();
        if let Some(sys) = self.lacp.as_mut() {
            if sys.poll_timeout().is_some_and(|d| d <= t) {
                sys.handle_timeout(t);
            }
        }
        for i in 0..self.members.len() {
            if let Some(up) = self.members[i].carrier.poll(now) {
                self.apply_carrier(i, up);
            }
        }
        if !self.s.miimon.is_zero() && now >= self.next_miimon {
            self.next_miimon = now + self.s.miimon.as_nanos() as u64;
            for i in 0..self.members.len() {
                if let Some(c) = poll_carrier(&self.members[i].name) {
                    if c != self.members[i].carrier.is_up() {
                        self.set_carrier(i, c);
                    }
                }
            }
        }
        if let Some(arp) = self.arp.as_mut() {
            if arp.poll_timeout() <= now {
                let (probes, changes) = arp.handle_timeout(now);
                for (m, up) in changes {
                    self.members[m].watchers.set("arp", up);
                    self.dirty = true;
                }
                // Each member probes with its own MAC and sender address
                // 0.0.0.0 (an RFC 5227 ARP probe): the target answers to
                // that member alone and learns nothing about the bond's
                // address, so probing never moves the bond's MAC or
                // poisons a neighbour cache.
                for p in probes {
                    let mac = self.members[p.member].mac;
                    let req = ArpRepr {
                        op: ArpOp::Request,
                        sender_mac: mac,
                        sender_ip: Ipv4Addr::UNSPECIFIED,
                        target_mac: MacAddr::ZERO,
                        target_ip: p.target,
                    };
                    self.send_on(p.member, &req.emit_frame(mac, MacAddr::BROADCAST));
                }
            }
        }
    }

    fn send_on(&self, member: usize, frame: &[u8]) {
        if let Some(s) = self.engine.as_ref().and_then(|e| e.member_sender(member)) {
            let _ = s.send_frame(frame);
        }
    }

    fn drain_lacp(&mut self) {
        let Some(sys) = self.lacp.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(tx) = sys.poll_transmit() {
            out.push(tx);
        }
        let mut changed = false;
        while let Some((_, ev)) = sys.poll_event() {
            if matches!(ev, Event::Distribution { .. } | Event::Aggregator { .. }) {
                changed = true;
            }
        }
        for tx in out {
            if let Some(i) = self.members.iter().position(|m| m.port == Some(tx.port)) {
                self.send_on(i, &tx.frame);
            }
        }
        if changed {
            self.dirty = true;
        }
    }

    fn send_gratuitous(&mut self) {
        if self.grat_pending == 0 {
            return;
        }
        self.grat_pending -= 1;
        let Some(a) = self.plan.active else { return };
        for ip in self.ipv4.clone() {
            self.send_on(a, &crate::announce::gratuitous_arp(self.mac, ip));
        }
        for ip in crate::announce::ipv6_addresses(&self.s.name) {
            self.send_on(a, &crate::announce::unsolicited_na(self.mac, ip));
        }
    }

    /// Answers the requests the control server queued (it owns the
    /// sockets; this thread never waits on a client).
    fn serve_requests(&mut self) {
        for _ in 0..32 {
            let p = match self.requests.try_recv() {
                Ok(p) => p,
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            };
            let r = match &p.req {
                Request::Status => Response::Status(Box::new(self.status())),
                Request::Stats => Response::Stats(self.stats()),
                Request::Flow { proto, src, dst } => self.flow(proto, src, dst),
            };
            p.answer(r);
        }
    }

    fn flow(&self, proto: &str, src: &str, dst: &str) -> Response {
        let key = match flow_key(proto, src, dst) {
            Ok(k) => k,
            Err(e) => return Response::Error(e),
        };
        let key = key.with_macs(self.mac.0, MacAddr::BROADCAST.0);
        let Some(p) = &self.publisher else {
            return Response::Error("no map yet".into());
        };
        let (member, e) = p.current().plan.explain(&key, &self.s.policy);
        Response::Flow(FlowAnswer {
            member: member
                .and_then(|m| self.members.get(m))
                .map(|m| m.name.clone()),
            policy: self.s.policy.to_string(),
            hash: e.hash,
            bucket: e.bucket,
            reason: e.reason,
        })
    }

    /// The bond's status.
    pub fn status(&self) -> BondStatus {
        let map = self.publisher.as_ref().map(|p| p.current());
        let tx = |i: usize| {
            map.as_ref()
                .is_some_and(|m| m.plan.transmitting().contains(&i))
        };
        let rx = |i: usize| map.as_ref().is_some_and(|m| m.plan.collects(i));
        let sys = self.lacp.as_ref();
        let members: Vec<MemberStatus> = self
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let lacp = m
                    .port
                    .and_then(|p| sys?.port_status(p))
                    .map(|p| MemberLacp::from_port(&p));
                let (speed, duplex) = if m.present() {
                    lagkit_monitor::ethtool::speed_duplex(&m.name)
                } else {
                    (None, None)
                };
                MemberStatus {
                    name: m.name.clone(),
                    mii_status: if !m.present() {
                        "missing".into()
                    } else if m.carrier.is_up() {
                        "up".into()
                    } else {
                        "down".into()
                    },
                    speed: speed.map(|s| format!("{s} Mbps")),
                    duplex: duplex.map(|f| if f { "full" } else { "half" }.to_string()),
                    link_failure_count: m.carrier.failures,
                    permanent_hw_addr: m.mac.to_string(),
                    transmitting: tx(i),
                    collecting: rx(i),
                    watchers: m
                        .watchers
                        .verdicts()
                        .iter()
                        .map(|(n, u)| (n.to_string(), *u))
                        .collect(),
                    // Under the BPF engine its ingress program keeps the
                    // member's data frames from the host stack.
                    isolation: match &m.isolation {
                        Some(i) => Some(i.kind().to_string()),
                        None if m.present() && self.upper.is_kernel() => Some("bpf-ingress".into()),
                        None => None,
                    },
                    offloads: m.saved.as_ref().and_then(|saved| {
                        let now = crate::offloads::groups(&m.name)?;
                        Some(MemberOffloads {
                            tx: now.tx,
                            tso: now.tso,
                            gso: now.gso,
                            kept_off: saved.offloads_off(),
                            turned_off: saved.offloads_turned_off().to_vec(),
                        })
                    }),
                    lacp,
                }
            })
            .collect();
        let lacp = sys.map(|sys| LacpInfo::of(sys, self.s.lacp.fast, self.s.lacp.active));
        let problems = status::problems(
            &self.s.warnings,
            &members,
            lacp.as_ref(),
            self.s.lacp.no_partner,
        );
        let any_up = members.iter().any(|m| m.transmitting);
        BondStatus {
            name: self.s.name.clone(),
            mode: self.s.mode.linux_name().into(),
            xmit_hash_policy: self.s.policy.to_string(),
            engine: self.engine_info.kind.into(),
            engine_reason: self.engine_info.why.clone(),
            mii_status: if any_up { "up" } else { "down" }.into(),
            mac: self.mac.to_string(),
            mtu: self.upper.link().mtu().unwrap_or(0),
            miimon_ms: self.s.miimon.as_millis() as u64,
            updelay_ms: self.s.updelay.as_millis() as u64,
            downdelay_ms: self.s.downdelay.as_millis() as u64,
            active_member: self.plan.active.map(|a| self.members[a].name.clone()),
            lacp,
            members,
            problems,
        }
    }

    /// The bond's counters.
    pub fn stats(&self) -> BondStats {
        let snap = self.engine.as_ref().map(|e| e.stats());
        let kernel = self.kernel.as_ref().and_then(|k| k.counters());
        let sys = self.lacp.as_ref();
        let members = self
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut s = m.past.clone();
                s.name = m.name.clone();
                if let Some(e) = snap.as_ref().and_then(|s| s.members.get(i)) {
                    s.add_engine(e);
                }
                if let Some(c) = &kernel {
                    s.add_engine(&kernel_snapshot(c, i));
                }
                if let Some(d) = &m.dev {
                    s.drops = d.counters().snapshot().dropped_total();
                }
                if let Some(p) = m.port.and_then(|p| sys?.port_status(p)) {
                    s.set_lacp(&p);
                }
                s
            })
            .collect();
        let mut engine_drops: Vec<(String, u64)> = snap
            .map(|s| {
                EngineDrop::ALL
                    .iter()
                    .map(|d| (format!("{d:?}"), s.dropped(*d)))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(c) = &kernel {
            engine_drops.extend([
                ("KernelNoMember".into(), c.tx_dropped.packets),
                ("KernelNotCollecting".into(), c.rx_dropped.packets),
                (
                    "KernelFaultLoss".into(),
                    c.tx_faults.packets + c.rx_faults.packets,
                ),
            ]);
        }
        if self.s.mode == BondMode::Broadcast {
            let copies = match &kernel {
                Some(c) => c.rx_copies.packets,
                None => self.shared.dedup.copies(),
            };
            engine_drops.push(("BroadcastCopy".into(), copies));
        }
        BondStats {
            name: self.s.name.clone(),
            members,
            tx_balance: None,
            rx_balance: None,
            engine_drops,
            carrier_events: self.carrier_events.iter().cloned().collect(),
        }
        .with_ratios()
    }

    /// Stops forwarding, gives every member back as it was, removes the TAP
    /// (when the last descriptor closes), the control socket and the run
    /// directory. Dropping a bond does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    fn close(&mut self) {
        let Some(run) = self.run.take() else {
            return;
        };
        self.metrics = None;
        self.control = None;
        if let Some(e) = self.engine.take() {
            let _ = e.stop();
        }
        // Detach the programs, then delete the veth logical interface.
        self.kernel = None;
        self.upper.remove();
        for m in &mut self.members {
            m.isolation = None;
            if let Some(s) = m.saved.take() {
                member::restore(&m.name, &s);
            }
        }
        run.release();
        tracing::info!(bond = %self.s.name, "bond down; members restored");
    }
}

/// Member `i`'s frames and bytes as the BPF programs counted them (sent
/// by egress, delivered up by ingress), as the engine's snapshot has them.
fn kernel_snapshot(c: &lagkit_bpf::Counters, i: usize) -> MemberSnapshot {
    let tx = c.tx.get(i).copied().unwrap_or_default();
    let rx = c.rx.get(i).copied().unwrap_or_default();
    MemberSnapshot {
        down_packets: tx.packets,
        down_bytes: tx.bytes,
        up_packets: rx.packets,
        up_bytes: rx.bytes,
        ..MemberSnapshot::default()
    }
}

impl Drop for Bond {
    fn drop(&mut self) {
        self.close();
    }
}
