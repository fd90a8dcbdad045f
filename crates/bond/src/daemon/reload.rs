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
        let keys = crate::settings::describe_changes(&self.s().changes(&new));
        let name = self.s().name.clone();
        if self.s().needs_restart(&new) {
            tracing::info!(bond = %name, keys = %keys, "reload: restarting the bond");
            return Err(Box::new(new));
        }
        if keys.is_empty() {
            return Ok(());
        }
        tracing::info!(bond = %name, keys = %keys, "reload: every change applied in place");
        let old = self.s().clone();
        let now = self.now();
        // The core applies the protocols' and monitors' changes, and the
        // member list's (removed members leave, new ones join absent).
        self.core.reconfigure(new.clone(), now);
        if new.members != old.members {
            // A member still leaving from an earlier reload leaves now (it
            // may be listed again, and then comes back as a new member).
            self.finish_leaving(true);
            self.core.change_members(new.members, now);
        }
        for m in &self.core.members()[self.members.len()..] {
            self.members.push(m.name().to_string());
        }
        self.apply_in_place(&old);
        // The running data path stops sending on a removed member (a new
        // plan) before its LACP port's last LACPDU (out of sync) goes out.
        self.publish();
        self.after_core();
        // The new members are taken, and the engine runs on them.
        self.relink();
        if self.members.names() != self.datapath.engine_members() {
            self.restart_or_log();
        }
        Ok(())
    }

    /// Applies what the shell owns of the changes from `old`: offloads,
    /// addresses, the metrics endpoint, the rebalancer's timers.
    fn apply_in_place(&mut self, old: &Settings) {
        let s = self.core.settings();
        if s.offloads_off != old.offloads_off {
            let off = s.offloads_off.clone();
            self.members
                .apply_offloads(&s.name, |n| !off.iter().any(|o| o == n));
        }
        let s = self.core.settings();
        if s.addresses != old.addresses {
            let upper = self.datapath.upper();
            let held = upper.change_addresses(&old.name, &old.addresses, &s.addresses);
            self.core.set_ipv4(crate::upper::ipv4_of(&held));
        }
        let (name, listen) = (self.s().name.clone(), self.s().metrics_listen);
        if listen != old.metrics_listen {
            self.control.set_metrics(&name, listen);
        }
        let config = self.s().adaptive_config();
        self.datapath.set_rebalancing(config);
    }

    /// Gives back the removed members whose partner has stopped sending on
    /// them (with `all`, every removed member), and runs the engine on the
    /// members that stay.
    pub(super) fn finish_leaving(&mut self, all: bool) {
        let gone = self.core.forget_leaving(all, self.now());
        for (i, name) in &gone {
            self.members.remove(*i);
            self.datapath.forget(name);
            tracing::info!(bond = %self.s().name, member = %name, "member given back");
        }
        if !gone.is_empty() {
            self.restart_or_log();
        }
    }
}
