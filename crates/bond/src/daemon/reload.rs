//! Reloads: new settings applied to the running bond in place, members
//! added and removed without disturbing the others.

use super::*;
use crate::core::Reload;
use lagkit_bondcfg::Cidr;

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
    /// apply in place ([`Core::reload`] decides, and applies them to the
    /// core): the aggregate stays up and members that stay keep their
    /// sockets, LACP or PAgP state and traffic. A new LACP rate or activity
    /// goes to the partner in one LACPDU, a new hash policy, timer or
    /// priority is a new plan for the running data path, new members are
    /// taken and join (LACP or PAgP negotiates them) and removed ones are
    /// given back; what changes on the host (offloads, addresses, the
    /// metrics endpoint, the rebalancer) comes as the core's events. If a
    /// key needs a restart, nothing is applied and the settings come back
    /// as the error.
    pub fn reconfigure(&mut self, new: Settings) -> Result<(), Box<Settings>> {
        let now = self.now();
        let forgotten = match self.core.reload(new, now) {
            Reload::Unchanged => return Ok(()),
            Reload::Restart(new) => return Err(new),
            Reload::InPlace { forgotten } => forgotten,
        };
        // Members still leaving from an earlier reload are given back, and
        // the new members' devices join the list.
        self.give_back(forgotten);
        for m in &self.core.members()[self.members.len()..] {
            self.members.push(m.name().to_string());
        }
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

    /// A reload's new addresses on the logical interface
    /// ([`crate::core::Event::Addresses`]); the core learns the IPv4 ones
    /// that hold.
    pub(super) fn change_addresses(&mut self, old: &[Cidr], new: &[Cidr]) {
        let upper = self.datapath.upper();
        let held = upper.change_addresses(&self.core.settings().name, old, new);
        self.core.set_ipv4(crate::upper::ipv4_of(&held));
    }

    /// Gives back the removed members whose partner has stopped sending on
    /// them, and runs the engine on the members that stay.
    pub(super) fn finish_leaving(&mut self) {
        let gone = self.core.forget_leaving(false, self.now());
        self.give_back(gone);
    }

    /// Gives back members the core forgot ([`Core::forget_leaving`]), and
    /// runs the engine on the members that stay.
    fn give_back(&mut self, gone: Vec<(usize, String)>) {
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
