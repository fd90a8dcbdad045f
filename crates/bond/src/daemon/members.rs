//! Members: taking them, giving them back, and their link state (netlink
//! events, carrier debounce, failover MAC moves).

use super::*;

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
        let bond = self.s().name.clone();
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
        let s = self.core.settings();
        let want = member::Want {
            mtu: s.mtu,
            keep_offloads: s.keeps_offloads(&name),
            kernel: self.datapath.is_kernel(),
            // ARP, and PAgP (an 802.3 frame, not a slow protocol).
            snoop: s.snoops_arp() || s.pagp.is_some(),
        };
        let fault = s.faults.iter().find(|(n, _)| *n == name).map(|f| f.1);
        match member::take_with(&name, want, run, between) {
            Ok(t) => {
                let dev: Arc<dyn Device> = match fault {
                    Some(p) => {
                        // Seeded by the member's position: the same frames
                        // meet the same fate run after run.
                        let f = FaultInjector::new(t.sock, 0x6c61_676b_0000 + i as u64);
                        f.control().set_drop_probability(p);
                        tracing::warn!(bond = %bond, member = %name, loss = p, "injecting loss on this member (--fault-loss)");
                        Arc::new(f)
                    }
                    None => Arc::new(t.sock),
                };
                tracing::info!(bond = %bond, member = %name, isolation = t.isolation.as_ref().map_or("bpf-ingress", |i| i.kind()), offloads_turned_off = ?t.saved.offloads_turned_off(), "member taken");
                let h = &mut self.held[i];
                h.dev = Some(dev);
                h.saved = Some(t.saved);
                h.isolation = t.isolation;
                // Its PAgP port sends the kernel's ifindex, unique in the
                // namespace.
                let ifindex = lagkit_dataplane::Link::open(&name)
                    .ok()
                    .and_then(|l| l.ifindex().ok())
                    .filter(|&x| x != 0);
                let now = self.now();
                self.core.member_present(i, MacAddr(t.mac), ifindex, now);
                Ok(true)
            }
            Err(member::MemberError::Missing(_)) => {
                tracing::warn!(bond = %bond, member = %name, "member missing; waiting for it to appear");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives member `i` back as it was and forgets it in the state file.
    pub(super) fn give_back(&mut self, i: usize) {
        let name = self.name(i).to_string();
        let h = &mut self.held[i];
        h.isolation = None;
        if let Some(saved) = h.saved.take() {
            member::restore(&name, &saved);
        }
        if let Some(run) = self.run.as_mut() {
            run.forget(&name);
        }
    }

    /// Turns each held member's offloads off, or gives them back, as the
    /// settings now say (a reload that changed `offloads`).
    pub(super) fn apply_offloads(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        let s = self.core.settings();
        for (h, m) in self.held.iter_mut().zip(self.core.members()) {
            let keep = !s.offloads_off.iter().any(|n| n == m.name());
            let Some(saved) = h.saved.as_mut().filter(|s| s.offloads_off() == keep) else {
                continue;
            };
            match member::set_offloads(m.name(), keep, saved, run) {
                Ok(()) => {
                    tracing::info!(bond = %s.name, member = %m.name(), offloads = if keep { "given back" } else { "off" }, "member offloads changed by reload")
                }
                Err(e) => tracing::error!(bond = %s.name, error = %e, "offloads unchanged"),
            }
        }
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
                self.held[i].dev = None;
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
