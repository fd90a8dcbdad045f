//! Reloads: new settings applied to the running bond in place, members
//! added and removed without disturbing the others.

use super::*;

impl Bond {
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
    /// addresses, the metrics endpoint, the rebalancer's timers.
    fn apply_in_place(&mut self, old: &Settings) {
        if self.s().offloads_off != old.offloads_off {
            self.apply_offloads();
        }
        if self.s().addresses != old.addresses {
            let upper = self.datapath.upper();
            let held = upper.change_addresses(&old.name, &old.addresses, &self.s().addresses);
            self.core.set_ipv4(crate::upper::ipv4_of(&held));
        }
        let (name, listen) = (self.s().name.clone(), self.s().metrics_listen);
        if listen != old.metrics_listen {
            self.control.set_metrics(&name, listen);
        }
        let config = self.s().adaptive_config();
        self.datapath.set_rebalancing(config);
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
        let (removed, added) = self.core.member_changes(&wanted);
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
        for name in added {
            tracing::info!(bond = %self.s().name, member = %name, "member added by reload");
            let i = self.core.add_member(name);
            self.members.push();
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
        if self.member_names() != self.datapath.engine_members() {
            if let Err(e) = self.restart_engine() {
                tracing::error!("{e}");
            }
        }
    }

    /// Gives back the removed members whose partner has stopped sending on
    /// them (with `all`, every removed member), and runs the engine on the
    /// members that stay.
    pub(super) fn finish_leaving(&mut self, all: bool) {
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
            self.members.remove(i);
            self.datapath.forget(&name);
            tracing::info!(bond = %self.s().name, member = %name, "member given back");
        }
        let members = self.core.settings().members.clone();
        self.core.set_member_list(members, self.now());
        if let Err(e) = self.restart_engine() {
            tracing::error!("{e}");
        }
    }
}
