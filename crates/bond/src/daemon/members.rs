//! Members: taking them, giving them back, and their link state (netlink
//! events, carrier debounce, failover MAC moves).

use super::*;
use crate::member;
use crate::members::TakeSpec;

impl Bond {
    /// [`Bond::restart_engine`] on a member change, its error logged (the
    /// bond runs on with what it has).
    pub(super) fn restart_or_log(&mut self) {
        if let Err(e) = self.restart_engine() {
            tracing::error!(bond = %self.s().name, error = %e, "engine restart");
        }
    }

    /// Takes member `i` if its interface exists now: `Ok(true)` if it is
    /// taken, `Ok(false)` if it does not exist (yet), an error if it exists
    /// but cannot be used (it is then left as it was).
    pub(super) fn try_take(&mut self, i: usize) -> Result<bool, member::MemberError> {
        self.try_take_with(i, &mut |_| {})
    }

    pub(super) fn try_take_with(
        &mut self,
        i: usize,
        between: &mut dyn FnMut(&str),
    ) -> Result<bool, member::MemberError> {
        if self.present(i) {
            return Ok(true);
        }
        let name = self.name(i).to_string();
        let Some(run) = self.run.as_mut() else {
            return Ok(false);
        };
        let s = self.core.settings();
        let spec = TakeSpec {
            want: member::Want {
                mtu: s.mtu,
                keep_offloads: s.keeps_offloads(&name),
                kernel: self.datapath.is_kernel(),
                // ARP, and PAgP (an 802.3 frame, not a slow protocol).
                snoop: s.snoops_arp() || s.pagp.is_some(),
            },
            loss: s.faults.iter().find(|(n, _)| *n == name).map(|f| f.1),
        };
        let Some(took) = self.members.take(i, &name, &s.name, spec, run, between)? else {
            return Ok(false);
        };
        let now = self.now();
        self.core.member_present(i, took.mac, took.ifindex, now);
        Ok(true)
    }

    /// Gives member `i` back as it was and forgets it in the state file.
    pub(super) fn give_back(&mut self, i: usize) {
        let name = self.name(i).to_string();
        self.members.give_back(i, &name, self.run.as_mut());
    }

    /// Turns each held member's offloads off, or gives them back, as the
    /// settings now say (a reload that changed `offloads`).
    pub(super) fn apply_offloads(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        let s = self.core.settings();
        let names = self.core.members().iter().map(|m| m.name());
        let keep = |n: &str| !s.offloads_off.iter().any(|o| o == n);
        self.members.apply_offloads(&s.name, names, keep, run);
    }

    /// `fail_over_mac`: `active` gives the bond the new active member's MAC;
    /// `follow` gives the new active member the bond's MAC and the old one
    /// its own back.
    pub(super) fn move_mac(&mut self, old: Option<usize>, new: Option<usize>) {
        let moves = self.core.mac_moves(old, new);
        if let Some(mac) = moves.bond {
            if self.datapath.upper().link().set_mac(mac.0).is_ok() {
                self.core.set_mac(mac);
            }
        }
        for (i, mac) in moves.members {
            if let Ok(l) = lagkit_dataplane::Link::open(self.name(i)) {
                let _ = l.set_mac(mac.0);
            }
        }
    }

    /// A netlink link event (or a dump entry).
    pub(super) fn link_event(&mut self, l: &LinkState) {
        let Some(i) = self.core.member_index(&l.name) else {
            return;
        };
        if !l.present {
            if self.present(i) {
                tracing::warn!(bond = %self.s().name, member = %l.name, "member removed from the system");
                self.give_back(i);
                self.members.close(i);
                let now = self.now();
                self.core.member_gone(i, now);
                self.after_core();
                self.restart_or_log();
            }
            return;
        }
        if !self.present(i) {
            match self.try_take(i) {
                Ok(true) => self.restart_or_log(),
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(bond = %self.s().name, error = %e, "member cannot be used")
                }
            }
        }
        self.set_carrier(i, l.usable());
    }

    /// A start that adopts a forwarding data path: members whose link is
    /// up now count as up at once (not after `updelay`), as the killed
    /// daemon had them, so the first plan is the one in force.
    pub(super) fn adopt_carriers(&mut self) {
        let Ok(links) = CarrierWatcher::dump() else {
            return;
        };
        for l in links {
            let Some(i) = self.core.member_index(&l.name) else {
                continue;
            };
            if self.present(i) && l.present && l.usable() {
                self.core.adopt_carrier(i);
            }
        }
    }

    /// The raw carrier of member `i` changed (or was re-read).
    pub(super) fn set_carrier(&mut self, i: usize, raw: bool) {
        let now = self.now();
        self.core.handle_carrier(i, raw, now);
        self.after_core();
    }
}
