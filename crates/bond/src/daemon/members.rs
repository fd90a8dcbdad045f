//! Members: taking them, giving them back, and their link state (netlink
//! events, carrier debounce, failover MAC moves).

use super::*;

impl Bond {
    /// [`Bond::restart_engine`] on a member change, its error logged (the
    /// bond runs on with what it has).
    pub(super) fn restart_or_log(&mut self) {
        if let Err(e) = self.restart_engine() {
            tracing::error!(bond = %self.s.name, error = %e, "engine restart");
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
        if self.members[i].present() {
            return Ok(true);
        }
        let name = self.members[i].name.clone();
        let Some(run) = self.run.as_mut() else {
            return Ok(false);
        };
        let ns_dir = run.dir().parent().map(PathBuf::from).unwrap_or_default();
        if let Some((owner, pid)) = journal::member_owner(&ns_dir, &name, run.dir()) {
            return Err(member::MemberError::Setup {
                name,
                what: format!(
                    "in use by bond {owner} (pid {pid}); a member belongs to one bond at a time"
                ),
            });
        }
        let want = member::Want {
            mtu: self.s.mtu,
            keep_offloads: self.s.keeps_offloads(&name),
            kernel: self.upper.is_kernel(),
            // ARP, and PAgP (an 802.3 frame, not a slow protocol).
            snoop: self.s.snoops_arp() || self.s.pagp.is_some(),
        };
        match member::take_with(&name, want, run, between) {
            Ok(t) => {
                let fault = self.s.faults.iter().find(|(n, _)| *n == name).map(|f| f.1);
                let dev: Arc<dyn Device> = match fault {
                    Some(p) => {
                        // Seeded by the member's position: the same frames
                        // meet the same fate run after run.
                        let f = FaultInjector::new(t.sock, 0x6c61_676b_0000 + i as u64);
                        f.control().set_drop_probability(p);
                        tracing::warn!(bond = %self.s.name, member = %name, loss = p, "injecting loss on this member (--fault-loss)");
                        Arc::new(f)
                    }
                    None => Arc::new(t.sock),
                };
                let m = &mut self.members[i];
                tracing::info!(bond = %self.s.name, member = %name, isolation = t.isolation.as_ref().map_or("bpf-ingress", |i| i.kind()), offloads_turned_off = ?t.saved.offloads_turned_off(), "member taken");
                m.dev = Some(dev);
                m.placeholder = None;
                m.saved = Some(t.saved);
                m.isolation = t.isolation;
                m.mac = MacAddr(t.mac);
                Ok(true)
            }
            Err(member::MemberError::Missing(_)) => {
                tracing::warn!(bond = %self.s.name, member = %name, "member missing; waiting for it to appear");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives member `i` back as it was and forgets it in the state file.
    pub(super) fn give_back(&mut self, i: usize) {
        let m = &mut self.members[i];
        m.isolation = None;
        if let Some(saved) = m.saved.take() {
            member::restore(&m.name, &saved);
        }
        if let Some(run) = self.run.as_mut() {
            run.forget(&m.name);
        }
    }

    /// Turns each held member's offloads off, or gives them back, as the
    /// settings now say (a reload that changed `offloads`).
    pub(super) fn apply_offloads(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        for m in &mut self.members {
            let keep = !self.s.offloads_off.contains(&m.name);
            let Some(saved) = m.saved.as_mut().filter(|s| s.offloads_off() == keep) else {
                continue;
            };
            match member::set_offloads(&m.name, keep, saved, run) {
                Ok(()) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, offloads = if keep { "given back" } else { "off" }, "member offloads changed by reload")
                }
                Err(e) => tracing::error!(bond = %self.s.name, error = %e, "offloads unchanged"),
            }
        }
    }

    /// `fail_over_mac`: `active` gives the bond the new active member's MAC;
    /// `follow` gives the new active member the bond's MAC and the old one
    /// its own back.
    pub(super) fn move_mac(&mut self, old: Option<usize>, new: Option<usize>) {
        use crate::settings::FailOverMac;
        let Some(n) = new else { return };
        match self.s.fail_over_mac {
            FailOverMac::None => {}
            FailOverMac::Active => {
                let mac = self.members[n].mac;
                if self.upper.link().set_mac(mac.0).is_ok() {
                    self.mac = mac;
                }
            }
            FailOverMac::Follow => {
                let set = |name: &str, mac: MacAddr| {
                    if let Ok(l) = lagkit_dataplane::Link::open(name) {
                        let _ = l.set_mac(mac.0);
                    }
                };
                if let Some(o) = old.filter(|&o| o != n) {
                    set(&self.members[o].name, self.members[o].mac);
                }
                set(&self.members[n].name, self.mac);
            }
        }
    }

    /// A netlink link event (or a dump entry).
    pub(super) fn link_event(&mut self, l: &LinkState) {
        let Some(i) = self.members.iter().position(|m| m.name == l.name) else {
            return;
        };
        if !l.present {
            if self.members[i].present() {
                tracing::warn!(bond = %self.s.name, member = %l.name, "member removed from the system");
                self.give_back(i);
                self.members[i].dev = None;
                self.set_carrier(i, false);
                self.restart_or_log();
            }
            return;
        }
        if !self.members[i].present() {
            match self.try_take(i) {
                Ok(true) => {
                    // Its PAgP port speaks with the MAC it has now.
                    self.add_pagp_port(i);
                    self.restart_or_log();
                }
                Ok(false) => {}
                Err(e) => tracing::error!(bond = %self.s.name, error = %e, "member cannot be used"),
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
        let down = self.s.member_downdelay();
        for l in links {
            let Some(m) = self.members.iter_mut().find(|m| m.name == l.name) else {
                continue;
            };
            if m.present() && l.present && l.usable() {
                m.carrier = Debounce::new(true, self.s.updelay, down);
                m.watchers.set("carrier", true);
            }
        }
    }

    /// The raw carrier of member `i` changed (or was re-read).
    pub(super) fn set_carrier(&mut self, i: usize, raw: bool) {
        let now = now_ns(self.epoch);
        if let Some(up) = self.members[i].carrier.observe(raw, now) {
            self.apply_carrier(i, up);
        }
    }

    pub(super) fn apply_carrier(&mut self, i: usize, up: bool) {
        // A change found by a timer (debounce, miimon) was seen now.
        let seen = match self.seen_ns {
            0 => lagkit_dataplane::monotonic_now_ns(),
            t => t,
        };
        self.unpublished.push((i, up, seen));
        let name = self.members[i].name.clone();
        tracing::info!(bond = %self.s.name, member = %name, carrier = up, "member link {}", if up { "up" } else { "down" });
        self.members[i].watchers.set("carrier", up);
        if let (Some(sys), Some(p)) = (self.lacp.as_mut(), self.members[i].port) {
            let t = lagkit_proto::Instant::from_nanos(now_ns(self.epoch));
            sys.set_port_enabled(p, up && self.members[i].dev.is_some(), t);
        }
        self.pagp_carrier(i, up);
        self.dirty = true;
    }
}
