//! The data path's inputs: the members it runs on, each plan the core
//! builds (published to the engine and, under the BPF engine, the kernel),
//! what a daemon adopting the pinned programs needs, and rebalancing.

use super::*;
use crate::datapath::RestartError;

impl Bond {
    /// Runs the data path on the members as they are now
    /// ([`crate::datapath::DataPath::restart`]), then takes over from an
    /// adopted data path and pins this one. If the BPF programs could not
    /// take the members, the previous ones stay in force (they get the
    /// plan at the next publish) and the error comes back.
    pub(super) fn restart_engine(&mut self) -> Result<(), BondError> {
        let bond = self.s().name.clone();
        let members = self
            .members
            .devices(self.core.members().iter().map(|m| m.name()));
        let faults: Vec<(usize, f64)> = self
            .s()
            .faults
            .iter()
            .filter_map(|(n, p)| Some((self.core.member_index(n)?, *p)))
            .collect();
        let map = self.build_map();
        let engine_err = |e: RestartError| BondError::Engine {
            bond: bond.clone(),
            why: e.to_string(),
        };
        match self.datapath.restart(&bond, &members, &faults, map) {
            Ok(()) => {
                let numbered = self.resume_names();
                self.datapath.take_over_and_pin(&bond, numbered);
                if self.datapath.has_programs() {
                    self.record_kernel();
                }
                Ok(())
            }
            Err(e @ RestartError::Programs(_)) => {
                self.core.mark_dirty();
                Err(engine_err(e))
            }
            Err(e) => Err(engine_err(e)),
        }
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
        let core = &self.core;
        let rec = self
            .datapath
            .kernel_record(core.settings().mode.linux_name(), |name| {
                let st = core.lacp_status(core.member_index(name)?)?;
                (st.distributing && st.partner.state.in_sync())
                    .then(|| journal::PartnerRecord::of(&st.partner))
            });
        if let Some(run) = self.run.as_mut() {
            if let Err(e) = run.set_kernel(rec) {
                tracing::warn!(bond = %self.core.settings().name, error = %e, "state file not updated");
            }
        }
    }

    /// The distribution map for the current state: the core's plan.
    pub(super) fn build_map(&mut self) -> BondMap {
        let plan = self.core.build_plan(self.now());
        let (s, slots) = (self.core.settings(), &self.core.plan_state().slots);
        let snoop = (s.snoops_arp(), self.core.pagp().is_some());
        let generation = self.core.generation();
        self.datapath.map(plan, generation, slots, snoop.0, snoop.1)
    }

    /// adaptive, tlb, alb: a bucket table the balancer moved becomes the
    /// core's next plan.
    pub(super) fn rebalance(&mut self) {
        if let Some(map) = self.datapath.rebalance(&self.core.settings().name) {
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
        let bond = self.s().name.clone();
        self.datapath.publish(&bond, map);
        if self.datapath.has_programs() {
            self.record_kernel();
        }
        if self.carriers.pending() {
            self.carriers
                .published(lagkit_dataplane::monotonic_now_ns());
        }
    }
}
