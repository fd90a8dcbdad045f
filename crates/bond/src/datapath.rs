//! The bond's data path as one object: the logical interface, the
//! forwarding engine (under the BPF engine, only its control-frame
//! threads), the BPF programs with a killed daemon's pinned ones until they
//! are taken over, the published map, and what replaced engines and
//! programs counted. The daemon's shell owns one and tells it which
//! members to run on and which plan to publish; it decides nothing about
//! the protocols.

use crate::adopt::Adoption;
use crate::core::Snoop;
use crate::error::BondError;
use crate::journal::{KernelRecord, PagpRecord, PartnerRecord, PortRecord};
use crate::kernel::KernelPath;
use crate::map::{coarse_now_ns, BondMap, Shared};
use crate::plan::{LogicalLink, Plan, Slots};
use crate::rebalance::Rebalancer;
use crate::settings::Settings;
use crate::status::{AddEngine, MemberStats};
use crate::upper::{EngineInfo, Upper};
use lagkit_bondcore::report::{BondFacts, MemberFacts};
use lagkit_dataplane::forward::{
    Engine, EngineConfig, EngineDrop, EngineSnapshot, MemberSender, MemberSnapshot, SlowFrame,
    SlowQueues,
};
use lagkit_dataplane::{Device, MapPublisher, PairDevice};
use lagkit_hash::{AdaptiveConfig, BucketMap};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

/// Why the data path could not take a new set of members.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RestartError {
    /// The forwarding engine (or its control threads) did not start.
    #[error("{0}")]
    Engine(String),
    /// The BPF programs could not take the members: the previous ones stay
    /// in force, and the engine's control threads run all the same.
    #[error("the BPF programs could not take the members ({0}); the previous ones stay in force")]
    Programs(String),
}

/// A member as [`DataPath::restart`] takes it: its name, and its device
/// when the bond holds it (else a stand-in keeps the engine's numbering).
pub(crate) struct MemberDevice {
    /// The interface.
    pub name: String,
    /// Its socket, when it is present and taken.
    pub dev: Option<Arc<dyn Device>>,
}

/// See the module's documentation.
pub(crate) struct DataPath {
    upper: Upper,
    info: EngineInfo,
    /// The BPF engine's programs, when it runs.
    kernel: Option<KernelPath>,
    /// A killed daemon's pinned data path, forwarding until this one's
    /// programs have their plan (then released).
    adopted: Option<lagkit_bpf::Adopted>,
    /// The members, in the order of their numbers in `kernel`'s counters.
    kernel_members: Vec<String>,
    /// The members, in the order the running engine numbers them.
    engine_members: Vec<String>,
    engine: Option<Engine<BondMap>>,
    slow_rx: Option<SlowQueues>,
    publisher: Option<MapPublisher<BondMap>>,
    /// The data path's state shared by every published map.
    shared: Arc<Shared>,
    /// Stand-ins for missing members, so engine indices stay fixed; the
    /// peer is kept so the stand-in never reads end-of-file.
    placeholders: HashMap<String, (Arc<PairDevice>, PairDevice)>,
    /// Per member, what replaced engines and programs counted.
    past: HashMap<String, MemberStats>,
    /// adaptive, tlb, alb: moves buckets by the load counted here.
    rebalancer: Option<Rebalancer>,
    /// What the logical interface shows the host now (`None`: not set by
    /// this daemon yet, as after adopting a killed one's).
    shown: Option<LogicalLink>,
    /// Whether it carries on from a previous daemon's (adopted or handed
    /// over): its members already forward.
    resumed: bool,
}

impl DataPath {
    /// Bond `s.name`'s data path: a killed daemon's, when the start adopts
    /// it (with each member's LACP partner there, to resume), else a new
    /// logical interface for the engine `s` chooses.
    pub(crate) fn open(
        s: &Settings,
        adoption: Option<Adoption>,
    ) -> Result<(DataPath, Vec<PortRecord>), BondError> {
        let bond = &s.name;
        let resumed = adoption.is_some();
        let (upper, info, adopted, resume) = match adoption {
            Some(a) => {
                match &a.pinned {
                    Some(p) => {
                        tracing::info!(bond = %bond, links = p.links(), "adopting the data path a previous lagkit left forwarding")
                    }
                    None => {
                        tracing::info!(bond = %bond, "adopting the TAP and member sockets a previous lagkit handed over")
                    }
                }
                (a.upper, a.info, a.pinned, a.resume)
            }
            None => {
                let (u, i) = Upper::open(bond, s.engine).map_err(|e| BondError::Engine {
                    bond: bond.clone(),
                    why: e.to_string(),
                })?;
                (u, i, None, Vec::new())
            }
        };
        tracing::info!(bond = %bond, engine = %info.kind, why = %info.why, "data path chosen");
        let rebalancing = s.rebalances().then(|| s.adaptive_config());
        let mut dp = DataPath::new(upper, info, adopted, rebalancing);
        dp.resumed = resumed;
        Ok((dp, resume))
    }

    /// A data path on logical interface `upper` (the engine chosen, and
    /// why), taking over `adopted` once it runs.
    fn new(
        upper: Upper,
        info: EngineInfo,
        adopted: Option<lagkit_bpf::Adopted>,
        rebalancing: Option<AdaptiveConfig>,
    ) -> DataPath {
        DataPath {
            upper,
            info,
            kernel: None,
            adopted,
            kernel_members: Vec::new(),
            engine_members: Vec::new(),
            engine: None,
            slow_rx: None,
            publisher: None,
            shared: Arc::default(),
            placeholders: HashMap::new(),
            past: HashMap::new(),
            rebalancer: rebalancing.map(|c| Rebalancer::new(c, coarse_now_ns())),
            shown: None,
            resumed: false,
        }
    }

    /// The map for the core's new `plan` (number `generation`, over the
    /// bucket table `slots`, handing up what `snoop` says), which the
    /// rebalancer follows.
    pub(crate) fn map(
        &mut self,
        plan: Plan,
        generation: u64,
        slots: &Slots,
        snoop: Snoop,
    ) -> BondMap {
        if let Some(r) = self.rebalancer.as_mut() {
            r.follow(slots, coarse_now_ns());
        }
        BondMap {
            generation,
            plan,
            snoop_arp: snoop.arp,
            control_only: self.is_kernel(),
            snoop_pagp: snoop.pagp,
            shared: self.shared.clone(),
        }
    }

    /// adaptive, tlb, alb: reads the programs' bucket loads when a pass is
    /// due and returns the bucket table the balancer moved, if it moved
    /// one (for the core's next plan).
    pub(crate) fn rebalance(&mut self, bond: &str) -> Option<BucketMap> {
        let now = coarse_now_ns();
        if self.rebalancer.as_ref()?.due(now) {
            self.read_bucket_load();
        }
        let r = self.rebalancer.as_mut()?;
        let map = r.poll(&self.shared.load, now)?;
        let b = r.balancer();
        tracing::info!(bond = %bond, moves = b.stats().moves, loads = ?b.member_loads(), "adaptive: buckets moved");
        Some(map)
    }

    /// A reload's new rebalancing interval and idle gap.
    pub(crate) fn set_rebalancing(&mut self, config: AdaptiveConfig) {
        if let Some(r) = self.rebalancer.as_mut() {
            r.set_config(config, coarse_now_ns());
        }
    }

    /// Rebalancing passes that moved buckets.
    pub(crate) fn rebalances(&self) -> u64 {
        self.rebalancer.as_ref().map_or(0, |r| r.rebalances())
    }

    /// The logical interface.
    pub(crate) fn upper(&self) -> &Upper {
        &self.upper
    }

    /// Whether the BPF programs forward (the engine's threads carry only
    /// control frames).
    pub(crate) fn is_kernel(&self) -> bool {
        self.upper.is_kernel()
    }

    /// Whether BPF programs of this daemon are attached.
    pub(crate) fn has_programs(&self) -> bool {
        self.kernel.is_some()
    }

    /// Whether this daemon's programs are pinned (they outlive it).
    pub(crate) fn is_pinned(&self) -> bool {
        self.kernel.as_ref().is_some_and(|k| k.is_pinned())
    }

    /// Whether it carries on from a previous daemon's data path.
    pub(crate) fn resumed(&self) -> bool {
        self.resumed
    }

    /// The members as the running engine numbers them.
    pub(crate) fn engine_members(&self) -> &[String] {
        &self.engine_members
    }

    /// Whether an engine runs (frames can be sent).
    pub(crate) fn running(&self) -> bool {
        self.engine.is_some()
    }

    /// Member `i`'s sender, while an engine runs.
    pub(crate) fn sender(&self, i: usize) -> Option<MemberSender> {
        self.engine.as_ref()?.member_sender(i)
    }

    /// The control frames received, at most `per_member` from each member.
    pub(crate) fn slow_frames(&self, per_member: usize) -> Vec<SlowFrame> {
        self.slow_rx
            .as_ref()
            .map_or_else(Vec::new, |rx| rx.drain(per_member))
    }

    /// The map in force.
    pub(crate) fn current(&self) -> Option<Arc<BondMap>> {
        self.publisher.as_ref().map(|p| p.current())
    }

    /// Stops the current engine (keeping its counters) and starts one over
    /// `members`, publishing `map`; under the BPF engine, attaches a new
    /// set of programs to the members present (`faults`: injected loss by
    /// member index), which takes over from the old set the moment that is
    /// dropped (no frame goes unhandled between). If the new programs
    /// cannot be attached, the old ones stay in force, the engine's control
    /// threads start all the same, and [`RestartError::Programs`] says so.
    pub(crate) fn restart(
        &mut self,
        bond: &str,
        members: &[MemberDevice],
        faults: &[(usize, f64)],
        map: BondMap,
    ) -> Result<(), RestartError> {
        let names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
        if let Some(e) = self.engine.take() {
            let snap = e.stats();
            // By name: a reload may have removed members since it started
            // (their counts go with them).
            for (name, s) in self.engine_members.iter().zip(snap.members.iter()) {
                if names.contains(name) {
                    self.past.entry(name.clone()).or_default().add_engine(s);
                }
            }
            let _ = e.stop();
        }
        let mut programs_err = None;
        let kernel = if self.upper.is_kernel() {
            let present: Vec<Option<&str>> = members
                .iter()
                .map(|m| m.dev.as_ref().map(|_| m.name.as_str()))
                .collect();
            let path = match self.upper.take_probe() {
                Some(mut k) => k.attach_members(&present, faults).map(|()| k),
                None => KernelPath::start(bond, &present, faults),
            };
            path.map_err(|e| programs_err = Some(e.to_string())).ok()
        } else {
            None
        };
        let mut devs: Vec<Arc<dyn Device>> = Vec::with_capacity(members.len());
        for m in members {
            match &m.dev {
                Some(d) => {
                    self.placeholders.remove(&m.name);
                    devs.push(d.clone());
                }
                None => {
                    let stand_in = match self.placeholders.entry(m.name.clone()) {
                        Entry::Occupied(e) => e.into_mut(),
                        Entry::Vacant(e) => {
                            let (a, b) = PairDevice::pair(&m.name, "absent")
                                .map_err(|e| RestartError::Engine(e.to_string()))?;
                            e.insert((Arc::new(a), b))
                        }
                    };
                    devs.push(stand_in.0.clone());
                }
            }
        }
        if let Some(mut k) = kernel {
            match k.publish(&map.plan) {
                Ok(()) => {
                    let old_names = std::mem::replace(&mut self.kernel_members, names.clone());
                    // The old programs detach here; the new ones take over.
                    if let Some(old) = self.kernel.replace(k) {
                        self.fold_kernel_counters(&old, &old_names, &names);
                    }
                }
                Err(e) => programs_err = Some(e.to_string()),
            }
        }
        let (engine, slow) =
            Engine::start_map(self.upper.device(), devs, map, EngineConfig::default())
                .map_err(|e| RestartError::Engine(e.to_string()))?;
        self.publisher = Some(engine.publisher());
        self.engine = Some(engine);
        self.engine_members = names;
        self.slow_rx = Some(slow);
        match programs_err {
            Some(why) => Err(RestartError::Programs(why)),
            None => Ok(()),
        }
    }

    /// Once this daemon's programs forward with its plan: releases a
    /// killed daemon's pinned programs (which forwarded until now; their
    /// counts, numbered as `numbered` says, are kept), detaches any lagkit
    /// program still on the hooks that no daemon holds, then pins this
    /// daemon's own so they in turn outlive it.
    pub(crate) fn take_over_and_pin(&mut self, bond: &str, numbered: Option<Vec<String>>) {
        if let Some(a) = self.adopted.take() {
            let names = numbered.unwrap_or_else(|| self.engine_members.clone());
            for c in a.counters() {
                for (i, name) in names.iter().enumerate() {
                    if !self.engine_members.contains(name) {
                        continue;
                    }
                    self.past
                        .entry(name.clone())
                        .or_default()
                        .add_engine(&kernel_snapshot(c, i));
                }
            }
            let n = a.release();
            tracing::info!(bond = %bond, links = n, "took over from the adopted data path");
        }
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        match k.clear_strays() {
            Ok(found) => {
                for s in found.iter().filter(|s| s.detached) {
                    tracing::warn!(bond = %bond, hook = %s.hook, program = s.program_id, name = %s.name, "detached a lagkit program that no daemon held (its pins were moved or lost): it ran before this daemon's and would have dropped the bond's frames");
                }
                for s in found.iter().filter(|s| !s.detached) {
                    tracing::warn!(bond = %bond, hook = %s.hook, program = s.program_id, name = %s.name, "another tool's program runs on this hook too; lagkit leaves it attached");
                }
            }
            Err(e) => {
                tracing::warn!(bond = %bond, error = %e, "could not look for programs no daemon holds on the bond's hooks")
            }
        }
        if !k.is_pinned() {
            let pinned = crate::kernel::pin_dir(bond)
                .map_err(|e| e.to_string())
                .and_then(|dir| k.pin(&dir).map_err(|e| e.to_string()));
            if let Err(why) = pinned {
                tracing::warn!(bond = %bond, %why, "data path not pinned: a restart of this daemon will interrupt traffic");
            }
        }
    }

    /// Keeps the counts of programs being replaced for the members that
    /// stay (`members`); `numbered`: the members as `old` numbered them.
    fn fold_kernel_counters(&mut self, old: &KernelPath, numbered: &[String], members: &[String]) {
        let Some(c) = old.counters() else { return };
        for (i, name) in numbered.iter().enumerate() {
            if !members.contains(name) {
                continue;
            }
            self.past
                .entry(name.clone())
                .or_default()
                .add_engine(&kernel_snapshot(&c, i));
        }
    }

    /// Publishes `map` to the engine's threads and, under the BPF engine,
    /// to the kernel.
    pub(crate) fn publish(&mut self, bond: &str, map: BondMap) {
        if let Some(k) = self.kernel.as_mut() {
            if let Err(e) = k.publish(&map.plan) {
                tracing::error!(bond = %bond, error = %e, "the kernel did not take the new plan");
            }
        }
        if let Some(p) = &self.publisher {
            p.publish(map);
        }
    }

    /// Shows the host `link` on the logical interface when it differs from
    /// what it shows (carrier, speed), and logs a change of carrier.
    pub(crate) fn show_link(&mut self, bond: &str, link: LogicalLink) {
        if self.shown == Some(link) {
            return;
        }
        match self.upper.show_link(bond, link) {
            Ok(()) => {
                if self.shown.map(|s| s.carrier) != Some(link.carrier) {
                    tracing::info!(bond = %bond, carrier = link.carrier, speed_mbps = ?link.speed_mbps, "logical interface carrier {}", if link.carrier { "on" } else { "off" });
                }
                self.shown = Some(link);
            }
            Err(e) => {
                tracing::error!(bond = %bond, error = %e, "the logical interface's carrier and speed were not set")
            }
        }
    }

    /// What a daemon adopting the pinned data path needs (the logical
    /// interface, the members' numbering, the mode, each aggregated port's
    /// partner as `lacp` has it, by member name); `None` when nothing is
    /// pinned.
    pub(crate) fn kernel_record(
        &self,
        mode: &str,
        lacp: impl Fn(&str) -> Option<PartnerRecord>,
        pagp: impl Fn(&str) -> Option<PagpRecord>,
    ) -> Option<KernelRecord> {
        let userspace = !self.upper.is_kernel();
        let members = match userspace {
            // Only at a handoff: the TAP and the sockets go as descriptors.
            true => &self.engine_members,
            false => {
                self.kernel.as_ref().filter(|k| k.is_pinned())?;
                &self.kernel_members
            }
        };
        Some(KernelRecord {
            logical_ifindex: self.upper.link().ifindex().ok()?,
            members: members.clone(),
            mode: mode.to_string(),
            lacp: members.iter().map(|n| lacp(n)).collect(),
            pagp: members.iter().map(|n| pagp(n)).collect(),
            userspace,
        })
    }

    /// The userspace engine's handoff: stops its threads (what arrives
    /// from now on waits in the TAP's and the sockets' queues) and hands
    /// the TAP to the next daemon of bond `bond`
    /// ([`lagkit_dataplane::handoff`]). False, with nothing changed, under
    /// the BPF engine or if the TAP cannot be handed.
    pub(crate) fn hand_over(&mut self, bond: &str) -> bool {
        use lagkit_dataplane::handoff;
        let Upper::Tap(tap) = &self.upper else {
            return false;
        };
        let fd = match tap.try_clone_fd() {
            Ok(fd) => fd,
            Err(e) => {
                tracing::warn!(bond = %bond, error = %e, "cannot hand the TAP over");
                return false;
            }
        };
        if let Some(e) = self.engine.take() {
            let _ = e.stop();
        }
        handoff::give(handoff::name(bond, "tap", None), fd);
        true
    }

    /// adaptive, tlb, alb: the programs' per-bucket bytes and last-seen
    /// times into the shared load the balancer reads.
    fn read_bucket_load(&self) {
        let Some(load) = self.kernel.as_ref().and_then(|k| k.bucket_load()) else {
            return;
        };
        for (b, l) in load.iter().enumerate() {
            self.shared.load.set(b as u8, l.bytes, l.last_ns);
        }
    }

    /// Why `lagkit capture --data` cannot ask bond `bond` for its data
    /// frames: they never pass the thread that runs the protocols.
    pub(crate) fn why_no_data_capture(&self, bond: &str) -> String {
        let place = match self.has_programs() {
            true => "the kernel",
            false => "its forwarding threads",
        };
        let kind = self.info.kind;
        format!("capture --data: bond {bond} forwards data frames in {place} ({kind}), not on the thread that runs the protocols, so it cannot copy them: ask for control frames only (`lagkit capture --data` reads the data frames off the members itself)")
    }

    /// What `lagkit status` says of the data path of bond `bond`: the
    /// engine and why, the logical interface's MTU, the programs and hooks
    /// on the `present` members ([`KernelPath::status`]), and the members'
    /// devices as `members` has them.
    pub(crate) fn facts<'a>(
        &self,
        bond: &str,
        present: impl IntoIterator<Item = &'a str>,
        members: Vec<MemberFacts>,
    ) -> BondFacts {
        BondFacts {
            engine: self.info.kind,
            engine_reason: self.info.why.clone(),
            mtu: self.upper.link().mtu().unwrap_or(0),
            datapath: (self.kernel.as_ref()).map(|k| k.status(bond, present)),
            members,
        }
    }

    /// The counters now: of the engine, the programs and the past.
    pub(crate) fn counts(&self) -> Counts<'_> {
        Counts {
            dp: self,
            snap: self.engine.as_ref().map(|e| e.stats()),
            kernel: self.kernel.as_ref().and_then(|k| k.counters()),
        }
    }

    /// Forgets a member given back for good (its stand-in, its counts).
    pub(crate) fn forget(&mut self, name: &str) {
        self.placeholders.remove(name);
        self.past.remove(name);
    }

    /// Stops the engine's threads and leaves the pinned programs and the
    /// logical interface in place, for a new daemon to adopt.
    pub(crate) fn leave_pinned(&mut self) {
        if let Some(e) = self.engine.take() {
            let _ = e.stop();
        }
        if let Some(k) = self.kernel.take() {
            k.leave_pinned();
        }
        self.upper.leave();
    }

    /// Stops forwarding: the engine's threads, then the programs (unpinned
    /// as they go, with a killed daemon's still pinned), then the logical
    /// interface.
    pub(crate) fn close(&mut self, bond: &str) {
        if let Some(e) = self.engine.take() {
            let _ = e.stop();
        }
        self.kernel = None;
        self.adopted = None;
        crate::kernel::release_pins(bond);
        self.upper.remove();
    }
}

/// The data path's counters at one moment ([`DataPath::counts`]).
pub(crate) struct Counts<'a> {
    dp: &'a DataPath,
    snap: Option<EngineSnapshot>,
    kernel: Option<lagkit_bpf::Counters>,
}

impl Counts<'_> {
    /// Member `name`'s frames and bytes: what replaced engines and programs
    /// counted, and what the running ones count (each numbers the members
    /// as they were when it started); `socket_drops`: what its socket
    /// dropped, when the bond holds it.
    pub(crate) fn member(&self, name: &str, socket_drops: Option<u64>) -> MemberStats {
        let number = |list: &[String]| list.iter().position(|n| n == name);
        let mut s = self.dp.past.get(name).cloned().unwrap_or_default();
        s.name = name.to_string();
        if let Some(e) =
            number(&self.dp.engine_members).and_then(|i| self.snap.as_ref()?.members.get(i))
        {
            s.add_engine(e);
        }
        if let (Some(c), Some(i)) = (&self.kernel, number(&self.dp.kernel_members)) {
            s.add_engine(&kernel_snapshot(c, i));
        }
        if let Some(drops) = socket_drops {
            s.drops = drops;
        }
        s
    }

    /// Frames the engine and the programs dropped, by reason; with
    /// `broadcast`, the duplicate copies removed on receive.
    pub(crate) fn drops(&self, broadcast: bool) -> Vec<(String, u64)> {
        let mut drops: Vec<(String, u64)> = self
            .snap
            .as_ref()
            .map(|s| {
                EngineDrop::ALL
                    .iter()
                    .map(|d| (format!("{d:?}"), s.dropped(*d)))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(c) = &self.kernel {
            drops.extend([
                ("KernelNoMember".into(), c.tx_dropped.packets),
                ("KernelNotCollecting".into(), c.rx_dropped.packets),
                (
                    "KernelFaultLoss".into(),
                    c.tx_faults.packets + c.rx_faults.packets,
                ),
            ]);
        }
        if broadcast {
            let copies = match &self.kernel {
                Some(c) => c.rx_copies.packets,
                None => self.dp.shared.dedup.copies(),
            };
            drops.push(("BroadcastCopy".into(), copies));
        }
        drops
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
