//! The data path: starting the engine over the present members, building
//! each plan from the members' state, rebalancing, and publishing the plan
//! to the userspace engine's map and, under the BPF engine, to the kernel.

use super::*;

impl Bond {
    /// Stops the current engine (keeping its counters) and starts one over
    /// the current member devices; under the BPF engine, attaches a new set
    /// of programs to the members present, which takes over from the old
    /// set the moment that is dropped (no frame goes unhandled between).
    /// If the new programs cannot be attached, the old ones stay in force,
    /// the engine's control threads start all the same (LACP goes on), and
    /// the error comes back.
    pub(super) fn restart_engine(&mut self) -> Result<(), BondError> {
        if let Some(e) = self.engine.take() {
            let snap = e.stats();
            // By name: a reload may have removed members since it started.
            for (name, s) in self.engine_members.iter().zip(snap.members.iter()) {
                if let Some(i) = self.core.member_index(name) {
                    self.held[i].past.add_engine(s);
                }
            }
            let _ = e.stop();
        }
        let bond = self.s().name.clone();
        let engine_err = |why: String| BondError::Engine {
            bond: bond.clone(),
            why,
        };
        let mut kernel_err = None;
        let kernel = if self.upper.is_kernel() {
            let names: Vec<Option<&str>> = self
                .core
                .members()
                .iter()
                .map(|m| m.present().then_some(m.name()))
                .collect();
            let faults: Vec<(usize, f64)> = self
                .s()
                .faults
                .iter()
                .filter_map(|(n, p)| Some((self.core.member_index(n)?, *p)))
                .collect();
            let path = match self.upper.take_probe() {
                Some(mut k) => k.attach_members(&names, &faults).map(|()| k),
                None => KernelPath::start(&bond, &names, &faults),
            };
            match path {
                Ok(k) => Some(k),
                Err(e) => {
                    kernel_err = Some(e.to_string());
                    None
                }
            }
        } else {
            None
        };
        let mut devs: Vec<Arc<dyn Device>> = Vec::new();
        for (h, m) in self.held.iter_mut().zip(self.core.members()) {
            match &h.dev {
                Some(d) => devs.push(d.clone()),
                None => {
                    if h.placeholder.is_none() {
                        let (a, b) = PairDevice::pair(m.name(), "absent")
                            .map_err(|e| engine_err(e.to_string()))?;
                        h.placeholder = Some((Arc::new(a), b));
                    }
                    if let Some((a, _)) = &h.placeholder {
                        devs.push(a.clone());
                    }
                }
            }
        }
        let map = self.build_map();
        if let Some(mut k) = kernel {
            match k.publish(&map.plan) {
                Ok(()) => {
                    let names = self.member_names();
                    let old_names = std::mem::replace(&mut self.kernel_members, names);
                    // The old programs detach here; the new ones take over.
                    if let Some(old) = self.kernel.replace(k) {
                        self.fold_kernel_counters(&old, &old_names);
                    }
                }
                Err(e) => kernel_err = Some(e.to_string()),
            }
        }
        let (engine, slow) =
            Engine::start_map(self.upper.device(), devs, map, EngineConfig::default())
                .map_err(|e| engine_err(e.to_string()))?;
        self.publisher = Some(engine.publisher());
        self.engine = Some(engine);
        self.engine_members = self.member_names();
        self.slow_rx = Some(slow);
        // The programs still in force get this plan at the next publish.
        if kernel_err.is_some() {
            self.core.mark_dirty();
        }
        if kernel_err.is_none() {
            self.take_over_and_pin();
        }
        match kernel_err {
            Some(why) => Err(engine_err(format!(
                "the BPF programs could not take the members ({why}); the previous ones stay in force"
            ))),
            None => Ok(()),
        }
    }

    /// Once this daemon's programs forward with its plan: releases a
    /// killed daemon's pinned programs (which forwarded until now; their
    /// counts are kept in each member's past), then pins this daemon's own,
    /// so they in turn outlive it, and records them in the state file.
    fn take_over_and_pin(&mut self) {
        if let Some(a) = self.adopted.take() {
            let names = self.resume_names().unwrap_or_else(|| self.member_names());
            for c in a.counters() {
                for (i, name) in names.iter().enumerate() {
                    if let Some(m) = self.core.member_index(name) {
                        self.held[m].past.add_engine(&kernel_snapshot(c, i));
                    }
                }
            }
            let n = a.release();
            tracing::info!(bond = %self.s().name, links = n, "took over from the adopted data path");
        }
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        if !k.is_pinned() {
            let pinned = crate::kernel::pin_dir(&self.core.settings().name)
                .map_err(|e| e.to_string())
                .and_then(|dir| k.pin(&dir).map_err(|e| e.to_string()));
            if let Err(why) = pinned {
                tracing::warn!(bond = %self.core.settings().name, %why, "data path not pinned: a restart of this daemon will interrupt traffic");
            }
        }
        self.record_kernel();
    }

    /// The members' names, in the core's order.
    pub(super) fn member_names(&self) -> Vec<String> {
        self.core
            .members()
            .iter()
            .map(|m| m.name().to_string())
            .collect()
    }

    /// The members as the adopted programs numbered them.
    fn resume_names(&self) -> Option<Vec<String>> {
        self.run
            .as_ref()
            .and_then(|r| r.kernel())
            .map(|k| k.members.clone())
    }

    /// Writes what a daemon adopting the pinned data path needs (the
    /// logical interface, the members' numbering, each aggregated port's
    /// partner) to the state file when it changed; `None` when nothing is
    /// pinned.
    pub(super) fn record_kernel(&mut self) {
        let rec = match (&self.kernel, self.upper.link().ifindex()) {
            (Some(k), Ok(ifindex)) if k.is_pinned() => Some(journal::KernelRecord {
                logical_ifindex: ifindex,
                members: self.kernel_members.clone(),
                mode: self.s().mode.linux_name().to_string(),
                lacp: (0..self.held.len())
                    .map(|i| {
                        let st = self.core.lacp_status(i)?;
                        (st.distributing && st.partner.state.in_sync())
                            .then(|| journal::PartnerRecord::of(&st.partner))
                    })
                    .collect(),
            }),
            _ => None,
        };
        if let Some(run) = self.run.as_mut() {
            if let Err(e) = run.set_kernel(rec) {
                tracing::warn!(bond = %self.s().name, error = %e, "state file not updated");
            }
        }
    }

    /// Keeps the counts of programs being replaced in each member's past.
    /// `numbered`: the members as `old` numbered them (a reload may have
    /// removed some since, and moved the others up).
    pub(super) fn fold_kernel_counters(&mut self, old: &KernelPath, numbered: &[String]) {
        let Some(c) = old.counters() else { return };
        for (i, name) in numbered.iter().enumerate() {
            if let Some(m) = self.core.member_index(name) {
                self.held[m].past.add_engine(&kernel_snapshot(&c, i));
            }
        }
    }

    /// The distribution map for the current state: the core's plan.
    pub(super) fn build_map(&mut self) -> BondMap {
        let plan = self.core.build_plan(self.now());
        if let Some(r) = self.rebalancer.as_mut() {
            r.follow(&self.core.plan_state().slots, coarse_now_ns());
        }
        let s = self.core.settings();
        BondMap {
            generation: self.core.generation(),
            plan,
            snoop_arp: s.snoops_arp(),
            control_only: self.upper.is_kernel(),
            snoop_pagp: self.core.pagp().is_some(),
            shared: self.shared.clone(),
        }
    }

    /// adaptive, tlb, alb: feed the data path's counts to the balancer and,
    /// when it moves buckets, publish the new table.
    pub(super) fn rebalance(&mut self) {
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
            tracing::info!(bond = %self.core.settings().name, moves = b.stats().moves, loads = ?b.member_loads(), "adaptive: buckets moved");
            self.core.set_bucket_map(map);
        }
    }

    pub(super) fn publish(&mut self) {
        let before = self.core.plan_state().active;
        let map = self.build_map();
        let after = self.core.plan_state().active;
        // Only active-backup, tlb and alb have an active member (the core
        // logs the change and asks for the announcements that follow).
        if after != before && matches!(map.plan, Plan::ActiveBackup { .. }) {
            self.move_mac(before, after);
        }
        tracing::debug!(bond = %self.s().name, tx = ?map.plan.transmitting(), generation = map.generation, "map published");
        if let Some(k) = self.kernel.as_mut() {
            if let Err(e) = k.publish(&map.plan) {
                tracing::error!(bond = %self.core.settings().name, error = %e, "the kernel did not take the new plan");
            }
        }
        if let Some(p) = &self.publisher {
            p.publish(map);
        }
        if self.kernel.is_some() {
            self.record_kernel();
        }
        if !self.unpublished.is_empty() {
            let published_ns = lagkit_dataplane::monotonic_now_ns();
            for (i, up, seen_ns) in std::mem::take(&mut self.unpublished) {
                if self.carrier_events.len() == CARRIER_EVENTS {
                    self.carrier_events.pop_front();
                }
                self.carrier_events.push_back(CarrierEvent {
                    member: self.name(i).to_string(),
                    up,
                    seen_ns,
                    published_ns,
                });
            }
        }
    }
}

/// Member `i`'s frames and bytes as the BPF programs counted them (sent
/// by egress, delivered up by ingress), as the engine's snapshot has them.
pub(super) fn kernel_snapshot(c: &lagkit_bpf::Counters, i: usize) -> MemberSnapshot {
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
