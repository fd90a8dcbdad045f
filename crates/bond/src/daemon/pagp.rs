//! PAgP on a static bond (balance-xor, active-backup): one
//! [`pagp::System`] for the bond, the bond's MAC as its device id, one port
//! per member, fed the member's PAgP frames and carrier and the time.
//!
//! A member carries data only while PAgP has it in the channel. That gate
//! is the member's `pagp` link watcher, up exactly between `Joined` and
//! `Left`: every mode's plan already leaves out a member whose watchers are
//! not all up, so balance-xor hashes over the joined members and
//! active-backup picks its active member among them, as LACP's distributing
//! state gates an 802.3ad bond. In active-backup PAgP lets one member into
//! the channel (the `primary` first, by port priority) and keeps the others
//! hot standby, so the switch sends only where the bond receives.
//!
//! Flush PDUs are answered by the core; the bond does not hold flows while
//! its own Flush is outstanding (the switch's side of a move is the one that
//! reorders, and lagkit's switch does not wait either).

use super::*;
use crate::settings::PagpSettings;
use lagkit_proto::pagp;

/// The group ifindex sent when the logical interface's cannot be read: any
/// non-zero value says "in a channel".
const FALLBACK_GROUP_IFINDEX: u32 = 1000;

impl Bond {
    /// Builds the PAgP system when the settings ask for one, a port per
    /// member, each enabled if its carrier is up now.
    pub(super) fn setup_pagp(&mut self) {
        self.pagp = None;
        self.pagp_gate = pagp::FlushGate::new();
        let Some(ps) = self.s.pagp else {
            return;
        };
        let ifindex = self
            .upper
            .link()
            .ifindex()
            .ok()
            .filter(|&i| i != 0)
            .unwrap_or(FALLBACK_GROUP_IFINDEX);
        self.pagp = Some(pagp::System::new(ps.system_config(
            &self.s.name,
            self.mac,
            ifindex,
        )));
        for i in 0..self.members.len() {
            self.members[i].pagp = None;
            self.add_pagp_port(i);
        }
    }

    /// Gives member `i` a PAgP port (out of the channel, so not yet
    /// usable), enabled if its carrier is up; a port it had is removed.
    pub(super) fn add_pagp_port(&mut self, i: usize) {
        let (Some(ps), Some(sys)) = (self.s.pagp, self.pagp.as_mut()) else {
            return;
        };
        let t = lagkit_proto::Instant::from_nanos(now_ns(self.epoch));
        let m = &mut self.members[i];
        if let Some(old) = m.pagp.take() {
            sys.remove_port(old, t);
        }
        m.watchers.set("pagp", false);
        let primary = self.s.primary.as_ref() == Some(&m.name);
        let pc = ps.port_config(&m.name, port_ifindex(&m.name, i), m.mac, primary);
        let port = sys.add_port(pc, t);
        sys.set_port_enabled(port, m.carrier.is_up() && m.present(), t);
        m.pagp = Some(port);
        self.dirty = true;
    }

    /// Takes member `i`'s port out of PAgP (the member leaves the bond).
    pub(super) fn remove_pagp_port(&mut self, i: usize) {
        let t = self.t();
        if let (Some(sys), Some(p)) = (self.pagp.as_mut(), self.members[i].pagp.take()) {
            sys.remove_port(p, t);
        }
    }

    /// Applies new PAgP mode, silence or rate in place: the system is built
    /// anew over the same members (which rejoin within seconds); the
    /// members, the engine and the logical interface stay.
    pub(super) fn apply_pagp(&mut self, new: Option<PagpSettings>) {
        self.s.pagp = new;
        self.setup_pagp();
        tracing::info!(bond = %self.s.name, settings = ?new, "PAgP settings changed in place; members rejoin the channel");
    }

    /// A PAgP frame received on member `m`.
    pub(super) fn pagp_frame(&mut self, m: usize, frame: &[u8], t: lagkit_proto::Instant) {
        let port = self.members.get(m).and_then(|x| x.pagp);
        if let (Some(sys), Some(p)) = (self.pagp.as_mut(), port) {
            sys.handle_frame(p, frame, t);
        }
    }

    /// Member `i`'s carrier, as PAgP's port enable.
    pub(super) fn pagp_carrier(&mut self, i: usize, up: bool) {
        let t = self.t();
        let m = &self.members[i];
        if let (Some(sys), Some(p)) = (self.pagp.as_mut(), m.pagp) {
            sys.set_port_enabled(p, up && m.present(), t);
        }
    }

    /// PAgP's deadlines that have passed.
    pub(super) fn pagp_timers(&mut self, t: lagkit_proto::Instant) {
        if let Some(sys) = self.pagp.as_mut() {
            if sys.poll_timeout().is_some_and(|d| d <= t) {
                sys.handle_timeout(t);
            }
        }
    }

    /// Sends the PDUs PAgP queued, and opens or closes each member's gate
    /// as it joins or leaves the channel.
    pub(super) fn drain_pagp(&mut self) {
        let Some(sys) = self.pagp.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(tx) = sys.poll_transmit() {
            out.push(tx);
        }
        let mut events = Vec::new();
        while let Some((_, ev)) = sys.poll_event() {
            events.push(ev);
        }
        // Transitions are logged by the core and Flushes answered there; a
        // member that joins carries traffic once the Flushes on the members
        // whose flows move to it are answered (`FlushGate`).
        let partner_of = |port| {
            events.iter().find_map(|e| match e {
                pagp::Event::Joined {
                    port: p, partner, ..
                } if *p == port => Some(*partner),
                _ => None,
            })
        };
        let gates: Vec<_> = self
            .pagp_gate
            .apply(&events)
            .into_iter()
            .map(|(port, joined)| {
                let partner = if joined {
                    partner_of(port)
                        .flatten()
                        .or_else(|| sys.port_status(port).and_then(|s| s.partner_device))
                } else {
                    None
                };
                (port, joined, partner)
            })
            .collect();
        let member = |members: &[Member], port| members.iter().position(|m| m.pagp == Some(port));
        for tx in out {
            if let Some(i) = member(&self.members, tx.port) {
                self.send_on(i, &tx.frame);
            }
        }
        for (port, joined, partner) in gates {
            let Some(i) = member(&self.members, port) else {
                continue;
            };
            let m = &mut self.members[i];
            match (joined, partner) {
                (true, Some(p)) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, partner = %p, "PAgP: member joined the channel")
                }
                (true, None) => {
                    tracing::warn!(bond = %self.s.name, member = %m.name, "PAgP: member attached without a PAgP partner (silent mode, nothing heard for the silent wait)")
                }
                (false, _) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, "PAgP: member left the channel")
                }
            }
            m.watchers.set("pagp", joined);
            self.dirty = true;
        }
    }

    /// The earliest PAgP deadline.
    pub(super) fn pagp_timeout(&self) -> Option<u64> {
        self.pagp
            .as_ref()
            .and_then(|s| s.poll_timeout())
            .map(|t| t.as_nanos())
    }
}

/// The ifindex member `name` (position `i`) sends as its PAgP port: the
/// kernel's, unique in the namespace, or one above any kernel's while the
/// member is missing.
fn port_ifindex(name: &str, i: usize) -> u32 {
    lagkit_dataplane::Link::open(name)
        .ok()
        .and_then(|l| l.ifindex().ok())
        .filter(|&x| x != 0)
        .unwrap_or(0x8000_0000 | i as u32)
}
