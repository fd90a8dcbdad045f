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
        let faults = self.core.faults();
        let map = self.build_map();
        let link = self.logical_link(&map.plan);
        let transmitting = self.transmitting(&map.plan);
        let members = self.members.devices();
        if let Err(e) = self.datapath.restart(&bond, &members, &faults, map) {
            if matches!(e, RestartError::Programs(_)) {
                self.core.mark_dirty();
            }
            let why = e.to_string();
            return Err(BondError::Engine { bond, why });
        }
        (self.datapath).take_over_and_pin(&bond, self.members.kernel_numbering());
        self.datapath.show_link(&bond, link);
        self.carriers
            .published_now(|m| transmitting.iter().any(|t| t == m));
        if self.datapath.has_programs() {
            self.record_kernel();
        } else {
            // A userspace engine's record is written at its handoff, for
            // the next daemon only: from here on it describes nothing.
            let name = self.s().name.clone();
            self.members.record_kernel(&name, None);
        }
        Ok(())
    }

    /// Writes what a daemon adopting the pinned data path needs (the
    /// logical interface, the members' numbering, each aggregated port's
    /// partner) to the state file when it changed; `None` when nothing is
    /// pinned.
    pub(super) fn record_kernel(&mut self) {
        let core = &self.core;
        let mode = core.settings().mode.linux_name();
        let rec = (self.datapath).kernel_record(
            mode,
            |name| core.aggregated_partner(name),
            |name| core.channel_partner(name),
        );
        self.members.record_kernel(&core.settings().name, rec);
    }

    /// The distribution map for the current state: the core's plan.
    pub(super) fn build_map(&mut self) -> BondMap {
        let plan = self.core.build_plan(self.now());
        let (core, generation) = (&self.core, self.core.generation());
        (self.datapath).map(plan, generation, &core.plan_state().slots, core.snoop())
    }

    /// The members that transmit under `plan`, by name.
    fn transmitting(&self, plan: &crate::plan::Plan) -> Vec<String> {
        let names = self.core.members();
        (plan.transmitting().iter())
            .filter_map(|&i| Some(names.get(i)?.name().to_string()))
            .collect()
    }

    /// What the logical interface shows the host under `plan`.
    fn logical_link(&self, plan: &crate::plan::Plan) -> crate::plan::LogicalLink {
        let members = &self.members;
        plan.logical_link(self.s().lacp.min_links, |i| members.link_of(i))
    }

    /// adaptive, tlb, alb: a bucket table the balancer moved becomes the
    /// core's next plan.
    pub(super) fn rebalance(&mut self) {
        if let Some(map) = self.datapath.rebalance(&self.core.settings().name) {
            self.core.set_bucket_map(map);
        }
    }

    pub(super) fn publish(&mut self) {
        let map = self.build_map();
        tracing::debug!(bond = %self.s().name, tx = ?map.plan.transmitting(), generation = map.generation, "map published");
        let bond = self.s().name.clone();
        let link = self.logical_link(&map.plan);
        let transmitting = self.transmitting(&map.plan);
        self.datapath.publish(&bond, map);
        self.datapath.show_link(&bond, link);
        if self.datapath.has_programs() {
            self.record_kernel();
        }
        self.carriers
            .published_now(|m| transmitting.iter().any(|t| t == m));
    }
}
