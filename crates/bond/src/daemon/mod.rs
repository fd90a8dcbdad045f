//! The bond at run time: one control thread that owns the LACP core (or a
//! static bond's PAgP core), the link watchers and the control socket, and the data path that only reads
//! the published plan: the kernel's BPF programs ([`crate::kernel`]), or the
//! forwarding engine whose threads read the published [`BondMap`] (under
//! the BPF engine those threads carry the control frames only).
//!
//! The control loop sleeps in poll(2) on the netlink link-event socket and
//! the control socket, with a timeout no later than the next protocol or
//! watcher deadline (and at most 10 ms, which bounds the latency of LACPDUs
//! arriving through the engine's queue). A carrier event is handled the
//! moment the kernel reports it.
//!
//! This module is the I/O shell around the bond's sans-IO [`Core`], which
//! holds every decision (LACP, PAgP, carrier debounce, the ARP monitor,
//! balance-alb's clients, the plan): the shell takes the members' sockets,
//! feeds the core link events, control frames and the time, sends the
//! frames it queues and publishes its plans. Each concern has a file of its
//! own: `members` (taking and giving back members, link events),
//! `datapath` (the engine and the plans' publication), `frames` (control
//! frames in and out, timers) and `report` (status, stats, flow, metrics).

mod capture;
mod datapath;
mod frames;
mod members;
mod report;

use crate::core::Core;
use crate::journal::{self, JournalError, RunDir};
use crate::kernel::KernelPath;
use crate::map::{coarse_now_ns, BondMap, Shared};
use crate::member::{self, Saved};
use crate::plan::Plan;
use crate::rebalance::Rebalancer;
use crate::settings::{BondMode, Settings};
use crate::status::{
    self, AddEngine, BondStats, BondStatus, CarrierEvent, LacpInfo, MemberLacp, MemberOffloads,
    MemberPagp, MemberStats, MemberStatus, MiiStatus, PagpInfo,
};
use crate::upper::{EngineInfo, Upper};
use lagkit_api::control::{ControlServer, Pending};
use lagkit_api::metrics::Exporter;
use lagkit_api::protocol::{flow_key, FlowAnswer, Request, Response};
use lagkit_dataplane::forward::{Engine, EngineConfig, EngineDrop, MemberSnapshot, SlowQueues};
use lagkit_dataplane::{Device, FaultInjector, Isolation, MapPublisher, PairDevice};
use lagkit_hash::AdaptiveConfig;
use lagkit_monitor::carrier::{poll_carrier, CarrierWatcher, LinkState};
use lagkit_wire::MacAddr;
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

/// What the shell holds for one member (the core has the rest, at the
/// same index).
#[derive(Default)]
struct Held {
    /// Its AF_PACKET socket, wrapped in a [`FaultInjector`] when the
    /// settings inject loss on it.
    dev: Option<Arc<dyn Device>>,
    /// Stand-in for a missing member, so engine indices stay fixed; the
    /// peer is kept so the stand-in never reads end-of-file.
    placeholder: Option<(Arc<PairDevice>, PairDevice)>,
    saved: Option<Saved>,
    /// Keeps the member's frames from the host stack while held.
    isolation: Option<Isolation>,
    /// Counters of engines that have been replaced.
    past: MemberStats,
}

/// One running bond.
pub struct Bond {
    /// Its decisions: members' state, LACP or PAgP, the plan.
    core: Core,
    /// Per member, in the core's order.
    held: Vec<Held>,
    /// The Prometheus endpoint, if configured.
    metrics: Option<Exporter>,
    /// adaptive, tlb, alb: moves buckets by measured load.
    rebalancer: Option<Rebalancer>,
    epoch: std::time::Instant,
    /// The logical interface (a TAP, or the BPF engine's veth end).
    upper: Upper,
    /// Which engine runs, and why.
    engine_info: EngineInfo,
    /// The BPF engine's programs, when it runs.
    kernel: Option<KernelPath>,
    /// The pinned data path of a killed daemon, forwarding until this
    /// one's programs have their plan (then released).
    adopted: Option<lagkit_bpf::Adopted>,
    /// The members, in the order of their numbers in `kernel`'s counters.
    kernel_members: Vec<String>,
    /// The members, in the order the running engine numbers them.
    engine_members: Vec<String>,
    /// The forwarding threads (under the BPF engine: control frames only).
    engine: Option<Engine<BondMap>>,
    slow_rx: Option<SlowQueues>,
    publisher: Option<MapPublisher<BondMap>>,
    carrier: CarrierWatcher,
    /// The data path's state shared by every published map.
    shared: Arc<Shared>,
    control: Option<ControlServer>,
    requests: Receiver<Pending>,
    /// The run directory and state file; `None` once shut down.
    run: Option<RunDir>,
    next_miimon: u64,
    grat_pending: u8,
    /// When the link events being handled were read (CLOCK_MONOTONIC ns).
    seen_ns: u64,
    /// Carrier changes whose plan is not published yet: (member, up, seen).
    unpublished: Vec<(usize, bool, u64)>,
    /// The latest carrier changes and when their plans were published.
    carrier_events: std::collections::VecDeque<CarrierEvent>,
    /// `lagkit capture` clients: copies of the frames sent and handled.
    taps: lagkit_api::capture::Taps,
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
        let (mut run, left) = RunDir::acquire_keeping(run_dir.clone(), &name)?;
        let all = crate::core::member_list(&s);
        let names: Vec<String> = all.iter().map(|(m, _)| m.clone()).collect();
        let adoption = match &left {
            Some(old) => match Adoption::consider(&s, &names, old) {
                Ok(a) => Some(a),
                Err(why) => {
                    if old.kernel.is_some() {
                        tracing::warn!(bond = %name, pid = old.pid, %why, "not adopting the data path a previous lagkit left forwarding; starting afresh");
                    }
                    None
                }
            },
            None => None,
        };
        if adoption.is_none() {
            let released = crate::kernel::release_pins(&name);
            if released > 0 {
                tracing::warn!(bond = %name, links = released, "detached the data path a killed lagkit left pinned");
            }
            run.restore_left(left.as_ref())?;
            if let Some(old) = &left {
                tracing::warn!(bond = %name, pid = old.pid, members = old.members.len(), "a previous lagkit (pid {}) exited without cleaning up; its members were restored first", old.pid);
            }
            if crate::kernel::remove_leftover(&name) {
                tracing::warn!(bond = %name, "removed the logical interface a killed lagkit left behind");
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
        let (upper, engine_info, adopted, resume) = match adoption {
            Some(a) => {
                tracing::info!(bond = %name, links = a.pinned.links(), "adopting the data path a previous lagkit left forwarding");
                (a.upper, a.info, Some(a.pinned), a.lacp)
            }
            None => {
                let (u, i) = Upper::open(&name, s.engine).map_err(|e| BondError::Engine {
                    bond: name.clone(),
                    why: e.to_string(),
                })?;
                (u, i, None, Vec::new())
            }
        };
        tracing::info!(bond = %name, engine = %engine_info.kind, why = %engine_info.why, "data path chosen");
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
        let rebalancer = s.rebalances().then(|| {
            let config = AdaptiveConfig {
                interval_ns: s.adaptive_interval.as_nanos() as u64,
                idle_gap_ns: s.adaptive_idle_gap.as_nanos() as u64,
                ..AdaptiveConfig::default()
            };
            Rebalancer::new(config, coarse_now_ns())
        });
        let metrics = match s.metrics_listen {
            Some(addr) => Some(Exporter::start(addr).map_err(|e| BondError::Control {
                bond: s.name.clone(),
                path: PathBuf::from(addr.to_string()),
                why: format!("metrics_listen: {e}"),
            })?),
            None => None,
        };
        let mut bond = Bond {
            held: all.iter().map(|_| Held::default()).collect(),
            core: Core::new(s),
            metrics,
            rebalancer,
            epoch: std::time::Instant::now(),
            upper,
            engine_info,
            kernel: None,
            adopted,
            kernel_members: Vec::new(),
            engine_members: Vec::new(),
            engine: None,
            slow_rx: None,
            publisher: None,
            carrier,
            shared: Arc::default(),
            control: Some(control),
            requests,
            run: Some(run),
            next_miimon: 0,
            grat_pending: 0,
            seen_ns: 0,
            unpublished: Vec::new(),
            carrier_events: std::collections::VecDeque::new(),
            taps: lagkit_api::capture::Taps::default(),
        };
        // From here on, an error drops `bond`, which gives back whatever
        // was taken.
        for i in 0..bond.held.len() {
            if let Err(e) = bond.try_take_with(i, &mut *between) {
                return Err(BondError::Member(e, name.clone()));
            }
        }
        if bond.adopted.is_some() {
            bond.adopt_carriers();
        }
        bond.setup_tap()?;
        let group_ifindex = bond
            .upper
            .link()
            .ifindex()
            .ok()
            .filter(|&i| i != 0)
            .unwrap_or(crate::core::FALLBACK_GROUP_IFINDEX);
        let now = bond.now();
        let mac = bond.core.mac();
        bond.core.start(mac, group_ifindex, &resume, now);
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
        tracing::info!(bond = %name, mode = bond.s().mode.linux_name(), members = ?bond.s().members, "bond up");
        Ok(bond)
    }

    /// Now, on the core's clock (nanoseconds since the bond started).
    fn now(&self) -> u64 {
        now_ns(self.epoch)
    }

    /// The settings in force.
    fn s(&self) -> &Settings {
        self.core.settings()
    }

    /// Member `i`'s name.
    fn name(&self, i: usize) -> &str {
        self.core.members().get(i).map_or("", |m| m.name())
    }

    /// Whether member `i`'s interface exists and the bond holds it.
    fn present(&self, i: usize) -> bool {
        self.held.get(i).is_some_and(|h| h.dev.is_some())
    }

    fn setup_tap(&mut self) -> Result<(), BondError> {
        let link = self.upper.link();
        let mac = self.core.choose_mac();
        self.core.set_mac(mac);
        let tap_err = |why: String| BondError::Tap {
            bond: self.core.settings().name.clone(),
            why,
        };
        // Only if it differs: an adopted logical interface already has it.
        if link.mac().ok() != Some(mac.0) {
            link.set_mac(mac.0)
                .map_err(|e| tap_err(format!("set MAC {mac}: {e}")))?;
        }
        if let Some(mtu) = self.s().mtu {
            link.set_mtu(mtu)
                .map_err(|e| tap_err(format!("set MTU {mtu}: {e}")))?;
        }
        link.set_up(true)
            .map_err(|e| tap_err(format!("bring up: {e}")))?;
        for a in self.s().addresses.clone() {
            self.add_address(&a)?;
        }
        Ok(())
    }

    /// `ip addr replace A dev BOND`, the IPv4 address remembered for ARP.
    fn add_address(&mut self, a: &str) -> Result<(), BondError> {
        self.ip_addr(lagkit_sys::addr::Op::Replace, a)?;
        if let Some(ip) = a.split('/').next().and_then(|x| x.parse::<Ipv4Addr>().ok()) {
            if !self.core.ipv4().contains(&ip) {
                let mut ips = self.core.ipv4().to_vec();
                ips.push(ip);
                self.core.set_ipv4(ips);
            }
        }
        Ok(())
    }

    /// `ip addr replace|del A dev BOND`, over rtnetlink.
    fn ip_addr(&self, op: lagkit_sys::addr::Op, a: &str) -> Result<(), BondError> {
        let why = match parse_cidr(a) {
            Some((addr, prefix)) => {
                match lagkit_sys::addr::change(op, &self.s().name, addr, prefix) {
                    Ok(()) => return Ok(()),
                    // BondError::Address names the bond and the address.
                    Err(e) => e.reason(),
                }
            }
            None => "not an address with a prefix length (write e.g. 10.0.0.1/24)".to_string(),
        };
        Err(BondError::Address {
            bond: self.s().name.clone(),
            addr: a.to_string(),
            why,
        })
    }

    /// A reload changed `address`: the addresses no longer listed are
    /// removed, the new ones added; the others stay untouched.
    fn apply_addresses(&mut self, old: &[String]) {
        let now: Vec<String> = self.s().addresses.clone();
        for a in old.iter().filter(|a| !now.contains(a)) {
            if let Err(e) = self.ip_addr(lagkit_sys::addr::Op::Delete, a) {
                tracing::error!(bond = %self.s().name, error = %e, "address not removed");
            }
            if let Some(ip) = a.split('/').next().and_then(|x| x.parse::<Ipv4Addr>().ok()) {
                let ips = self
                    .core
                    .ipv4()
                    .iter()
                    .copied()
                    .filter(|&x| x != ip)
                    .collect();
                self.core.set_ipv4(ips);
            }
        }
        for a in now {
            if !old.contains(&a) {
                if let Err(e) = self.add_address(&a) {
                    tracing::error!(bond = %self.s().name, error = %e, "address not added");
                }
            }
        }
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

    /// Applies new settings to the running bond when every changed key can
    /// apply in place ([`Settings::changes`]): the aggregate stays up and
    /// members that stay keep their sockets, LACP or PAgP state and traffic.
    /// A new LACP rate or activity goes to the partner in one LACPDU, a new
    /// hash policy, timer or priority is a new plan for the running data
    /// path, new members are taken and join (LACP or PAgP negotiates them)
    /// and removed ones are given back. If a key needs a restart, nothing is
    /// applied and the settings come back as the error.
    pub fn reconfigure(&mut self, new: Settings) -> Result<(), Box<Settings>> {
        let new = new.normalised();
        let changes = self.s().changes(&new);
        let keys = crate::settings::describe_changes(&changes);
        let name = self.s().name.clone();
        if self.s().needs_restart(&new) {
            tracing::info!(bond = %name, keys = %keys, "reload: restarting the bond");
            return Err(Box::new(new));
        }
        if changes.is_empty() {
            return Ok(());
        }
        tracing::info!(bond = %name, keys = %keys, "reload: every change applied in place");
        let old = self.s().clone();
        let wanted = new.members.clone();
        let now = self.now();
        // The core applies the protocols' and monitors' changes; the member
        // list changes as members are taken or given back.
        self.core.reconfigure(new, now);
        self.apply_in_place(&old);
        if wanted != old.members {
            self.apply_members(wanted);
        }
        self.core.mark_dirty();
        self.after_core();
        Ok(())
    }

    /// Applies what the shell owns of the changes from `old`: offloads,
    /// addresses, miimon, the metrics endpoint, the rebalancer's timers.
    fn apply_in_place(&mut self, old: &Settings) {
        if self.s().offloads_off != old.offloads_off {
            self.apply_offloads();
        }
        if self.s().addresses != old.addresses {
            self.apply_addresses(&old.addresses);
        }
        if self.s().miimon != old.miimon {
            self.next_miimon = 0;
        }
        let (name, listen) = (self.s().name.clone(), self.s().metrics_listen);
        if listen != old.metrics_listen {
            self.metrics = None;
            if let Some(addr) = listen {
                match Exporter::start(addr) {
                    Ok(e) => self.metrics = Some(e),
                    Err(e) => {
                        tracing::error!(bond = %name, %addr, error = %e, "metrics: cannot listen on the new address; no metrics until it is fixed")
                    }
                }
            }
        }
        let config = AdaptiveConfig {
            interval_ns: self.s().adaptive_interval.as_nanos() as u64,
            idle_gap_ns: self.s().adaptive_idle_gap.as_nanos() as u64,
            ..AdaptiveConfig::default()
        };
        if let Some(r) = self.rebalancer.as_mut() {
            r.set_config(config, coarse_now_ns());
        }
    }

    /// Takes out the members no longer listed and takes the new ones; the
    /// members that stay keep their LACP or PAgP port. A removed member is
    /// given back once its partner stopped sending on it
    /// ([`Bond::finish_leaving`]).
    fn apply_members(&mut self, wanted: Vec<String>) {
        let now = self.now();
        // A member still leaving from an earlier reload leaves now (it may
        // be listed again, and then comes back as a new member).
        self.finish_leaving(true);
        let removed: Vec<usize> = (0..self.held.len())
            .filter(|&i| {
                let m = &self.core.members()[i];
                !m.is_backup() && !wanted.iter().any(|w| w == m.name())
            })
            .collect();
        for &i in &removed {
            // The running data path stops sending on it (a new plan) and its
            // LACP port's last LACPDU (out of sync) goes out, so the partner
            // stops sending on it at once; what it sent meanwhile is still
            // received.
            self.core.remove_member(i, now);
            tracing::info!(bond = %self.s().name, member = %self.name(i), "member removed by reload");
        }
        if !removed.is_empty() {
            self.publish();
            self.after_core();
        }
        for name in &wanted {
            if self.core.member_index(name).is_some() {
                continue;
            }
            tracing::info!(bond = %self.s().name, member = %name, "member added by reload");
            let i = self.core.add_member(name.clone());
            self.held.push(Held::default());
            if let Err(e) = self.try_take(i) {
                tracing::error!(bond = %self.s().name, error = %e, "member cannot be used");
            }
            self.core.open_ports(i, now);
        }
        self.core.set_member_list(wanted, now);
        if let Ok(links) = CarrierWatcher::dump() {
            for l in links {
                self.link_event(&l);
            }
        }
        // Members added: the engine takes them (removed ones stay in it,
        // collecting, until they are given back).
        if self.member_names() != self.engine_members {
            if let Err(e) = self.restart_engine() {
                tracing::error!("{e}");
            }
        }
    }

    /// Gives back the removed members whose partner has stopped sending on
    /// them (with `all`, every removed member), and runs the engine on the
    /// members that stay.
    fn finish_leaving(&mut self, all: bool) {
        let left = if all {
            self.core.members_leaving()
        } else {
            self.core.members_left()
        };
        if left.is_empty() {
            return;
        }
        for &i in left.iter().rev() {
            self.give_back(i);
            let name = self.name(i).to_string();
            self.core.forget_member(i);
            self.held.remove(i);
            tracing::info!(bond = %self.s().name, member = %name, "member given back");
        }
        let members = self.core.settings().members.clone();
        self.core.set_member_list(members, self.now());
        if let Err(e) = self.restart_engine() {
            tracing::error!("{e}");
        }
    }

    /// One iteration of the control loop, waiting at most `max_wait`.
    pub fn step(&mut self, max_wait: Duration) {
        let now = self.now();
        let mut wait = max_wait;
        let mut deadline = |d: Option<u64>| {
            if let Some(d) = d {
                wait = wait.min(Duration::from_nanos(d.saturating_sub(now)));
            }
        };
        deadline(self.core.poll_timeout());
        if !self.s().miimon.is_zero() {
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
        self.finish_leaving(false);
        self.rebalance();
        if self.core.needs_plan() {
            self.publish();
        }
        self.after_core();
        self.serve_requests();
        self.send_gratuitous();
        self.update_metrics();
    }

    /// Stops forwarding, gives every member back as it was, removes the TAP
    /// (when the last descriptor closes), the control socket and the run
    /// directory. Dropping a bond does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    /// Exits leaving the data path forwarding, for a new daemon (of this
    /// build or another) to adopt: the pinned programs keep the last plan,
    /// the members stay as lagkit set them, the state file says what a
    /// start needs to carry on. A bond whose data path is not pinned (the
    /// userspace engine, or no bpffs) stops as [`Bond::shutdown`] does.
    pub fn handoff(mut self) {
        if !self.kernel.as_ref().is_some_and(|k| k.is_pinned()) {
            tracing::warn!(bond = %self.s().name, "handoff asked, but the data path is not pinned: stopping and giving the members back");
            return self.shutdown();
        }
        self.record_kernel();
        self.metrics = None;
        self.control = None;
        if let Some(e) = self.engine.take() {
            let _ = e.stop();
        }
        if let Some(k) = self.kernel.take() {
            k.leave_pinned();
        }
        self.upper.leave();
        for h in &mut self.held {
            h.saved = None;
        }
        if let Some(run) = self.run.take() {
            run.leave();
        }
        tracing::info!(bond = %self.s().name, "handed off: the kernel forwards with the last plan until a new lagkit adopts it");
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
        // Detach the programs (unpinned as they go), then delete the veth
        // logical interface.
        self.kernel = None;
        self.adopted = None;
        crate::kernel::release_pins(&self.s().name);
        self.upper.remove();
        for (h, m) in self.held.iter_mut().zip(self.core.members()) {
            h.isolation = None;
            if let Some(s) = h.saved.take() {
                member::restore(m.name(), &s);
            }
        }
        run.release();
        tracing::info!(bond = %self.s().name, "bond down; members restored");
    }
}

/// What a start takes over from a killed daemon of the same bond whose
/// BPF data path is still forwarding ([`lagkit_bpf::Adopted`]).
struct Adoption {
    pinned: lagkit_bpf::Adopted,
    upper: Upper,
    info: EngineInfo,
    lacp: Vec<Option<journal::PartnerRecord>>,
}

impl Adoption {
    /// Whether the data path `old` recorded can be adopted by a bond
    /// configured as `s` (members `names`, backup included): the same
    /// members and mode, an engine that may be BPF, the pins and the
    /// logical interface still there. Otherwise, why not.
    fn consider(
        s: &Settings,
        names: &[String],
        old: &journal::State,
    ) -> Result<Adoption, NotAdopted> {
        let k = old.kernel.as_ref().ok_or(NotAdopted::NothingPinned)?;
        if s.engine == crate::kernel::EngineChoice::Userspace {
            return Err(NotAdopted::Userspace);
        }
        if k.members != names {
            return Err(NotAdopted::Members {
                was: k.members.clone(),
                now: names.to_vec(),
            });
        }
        if k.mode != s.mode.linux_name() {
            return Err(NotAdopted::Mode {
                was: k.mode.clone(),
                now: s.mode.linux_name().to_string(),
            });
        }
        let dir = crate::kernel::pin_dir(&s.name)?;
        let pinned = match lagkit_bpf::Adopted::open(&dir) {
            Ok(Some(p)) if p.links() > 0 => p,
            Ok(_) => return Err(NotAdopted::NoLinks(dir)),
            Err(e) => return Err(NotAdopted::Pins(e.to_string())),
        };
        let (upper, info) = Upper::adopt(&s.name, k.logical_ifindex)?;
        let mut lacp = k.lacp.clone();
        lacp.resize(names.len(), None);
        Ok(Adoption {
            pinned,
            upper,
            info,
            lacp,
        })
    }
}

/// Why a start does not adopt the data path a previous daemon left.
#[derive(Debug, thiserror::Error)]
enum NotAdopted {
    #[error("it left no pinned data path")]
    NothingPinned,
    #[error("engine = userspace is configured now")]
    Userspace,
    #[error("its members were {was:?}, the configuration now has {now:?}")]
    Members { was: Vec<String>, now: Vec<String> },
    #[error("its mode was {was}, the configuration now has {now}")]
    Mode { was: String, now: String },
    #[error("{0}")]
    NoBpffs(#[from] lagkit_bpf::NoBpffs),
    #[error("no pinned links in {}", .0.display())]
    NoLinks(PathBuf),
    #[error("its pins: {0}")]
    Pins(String),
    #[error("{0}")]
    Upper(#[from] crate::upper::UpperError),
}

impl Drop for Bond {
    fn drop(&mut self) {
        self.close();
    }
}

/// `ADDRESS[/PREFIX]` as `ip addr` reads it: without a prefix, the host's
/// own (32 or 128).
fn parse_cidr(a: &str) -> Option<(std::net::IpAddr, u8)> {
    let (addr, prefix) = match a.trim().split_once('/') {
        Some((addr, p)) => (addr, Some(p)),
        None => (a.trim(), None),
    };
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
        None => max,
    };
    Some((addr, prefix))
}

#[cfg(test)]
mod cidr_tests {
    #[test]
    fn addresses_are_read_as_ip_addr_reads_them() {
        let v4 = "10.0.0.1".parse().unwrap();
        assert_eq!(super::parse_cidr("10.0.0.1/24"), Some((v4, 24)));
        assert_eq!(super::parse_cidr("10.0.0.1"), Some((v4, 32)));
        assert_eq!(
            super::parse_cidr("fd00::1/64"),
            Some(("fd00::1".parse().unwrap(), 64))
        );
        assert_eq!(super::parse_cidr("10.0.0.1/33"), None);
        assert_eq!(super::parse_cidr("bond0"), None);
    }
}
