//! Members: taking them, giving them back, and their link state (netlink
//! events, failover MAC moves).

use super::*;
use crate::core::{LinkAction, MacMoves};
use crate::member::MemberError;

impl Bond {
    /// [`Bond::restart_engine`] on a member change, its error logged (the
    /// bond runs on with what it has).
    pub(super) fn restart_or_log(&mut self) {
        if let Err(e) = self.restart_engine() {
            tracing::error!(bond = %self.s().name, error = %e, "engine restart");
        }
    }

    /// Takes member `i` as the core says ([`Core::take_spec`]) if its
    /// interface exists now: `Ok(true)` if it is held, `Ok(false)` if it
    /// does not exist (yet), an error if it exists but cannot be used (it
    /// is then left as it was). `between` is [`Members::take`]'s test seam.
    pub(super) fn take(
        &mut self,
        i: usize,
        between: &mut dyn FnMut(&str),
    ) -> Result<bool, MemberError> {
        let Some(spec) = self.core.take_spec(i) else {
            return Ok(self.members.present(i));
        };
        let (bond, kernel) = (self.s().name.clone(), self.datapath.is_kernel());
        let Some(took) = self.members.take(i, &bond, spec, kernel, between)? else {
            return Ok(false);
        };
        let now = self.now();
        self.core.member_present(i, took.mac, took.ifindex, now);
        Ok(true)
    }

    /// `fail_over_mac`'s moves after a failover ([`crate::core::Event::MoveMacs`]).
    pub(super) fn move_macs(&mut self, moves: MacMoves) {
        if let Some(mac) = moves.bond {
            if self.datapath.upper().link().set_mac(mac.0).is_ok() {
                self.core.set_mac(mac);
            }
        }
        for (i, mac) in moves.members {
            self.members.set_mac(&self.core.settings().name, i, mac);
        }
    }

    /// Every member's link as it is now (a netlink dump).
    pub(super) fn relink(&mut self) {
        if let Ok(links) = CarrierWatcher::dump() {
            self.link_events(links);
        }
    }

    /// Netlink link events (or a dump), carried out as the core says
    /// ([`Core::handle_link`]): a member is taken, or given back. The
    /// engine restarts once if a member was taken or lost.
    pub(super) fn link_events(&mut self, links: Vec<LinkState>) {
        let mut changed = false;
        for l in links {
            let now = self.now();
            match self.core.handle_link(&l.name, l.present, l.usable(), now) {
                Some(LinkAction::Take(i)) => match self.take(i, &mut |_| {}) {
                    Ok(taken) => changed |= taken,
                    Err(e) => {
                        tracing::error!(bond = %self.s().name, error = %e, "member cannot be used")
                    }
                },
                Some(LinkAction::GiveBack(i)) => {
                    tracing::warn!(bond = %self.s().name, member = %l.name, "member removed from the system");
                    self.members.gone(i);
                    changed = true;
                }
                None => {}
            }
            // The speed a link comes up with weighs its aggregate
            // (`ad_select = bandwidth`).
            if l.usable() {
                if let Some(i) = (self.core.members().iter()).position(|m| m.name() == l.name) {
                    let speed = self.members.link_of(i).0.unwrap_or(0);
                    self.core.set_member_speed(i, speed, now);
                }
            }
        }
        self.after_core();
        if changed {
            self.restart_or_log();
        }
    }
}
