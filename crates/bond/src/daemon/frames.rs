//! Control frames and timers: LACP (start, in-place changes, PDUs in and
//! out; PAgP has a file of its own), ARP (probe replies, balance-alb
//! clients and their notifications, gratuitous announcements) and the
//! monitors' timers.

use super::*;
use lagkit_api::capture::Direction;

impl Bond {
    pub(super) fn setup_lacp(&mut self) {
        if self.s.mode != BondMode::Lacp {
            return;
        }
        let l = &self.s.lacp;
        let mut sys = System::new(l.system_config(&self.s.name, self.mac));
        let now = self.t();
        let resume = std::mem::take(&mut self.resume);
        for (i, m) in self.members.iter_mut().enumerate() {
            let cfg = l.port_config(&m.name, (i + 1) as u16, m.mac);
            // A port of an adopted data path that was aggregated and is
            // still up carries on from where the killed daemon left it.
            let partner = resume.get(i).copied().flatten();
            m.port = Some(match partner {
                Some(p) if m.usable() => {
                    tracing::info!(bond = %self.s.name, member = %m.name, partner = %p.info().system, "resuming LACP where the previous lagkit left it");
                    sys.resume_port(cfg, p.info(), now)
                }
                _ => sys.add_port(cfg, now),
            });
        }
        self.lacp = Some(sys);
    }

    /// Applies the LACP settings now in `self.s` (they were `old`) to the
    /// running system. A new rate or activity changes the ports in place
    /// (one LACPDU tells the partner; the aggregate stays up), as do new
    /// bundle limits. A new System ID or key changes the LAG ID, so the
    /// ports select again (ports whose key changed are re-created with the
    /// same port numbers) and the aggregate re-forms.
    pub(super) fn apply_lacp(&mut self, old: &crate::settings::LacpSettings) {
        let new = self.s.lacp.clone();
        let t = self.t();
        let Some(sys) = self.lacp.as_mut() else {
            return;
        };
        let id = SystemId::new(new.system_priority, new.system_mac.unwrap_or(self.mac));
        sys.set_system_id(id, t);
        sys.set_bundle_limits(new.max_bundle, new.min_links, t);
        for m in &mut self.members {
            let Some(p) = m.port else { continue };
            if old.key != new.key {
                let number = sys.port_status(p).map_or(0, |st| st.actor.port);
                sys.remove_port(p, t);
                let np = sys.add_port(new.port_config(&m.name, number, m.mac), t);
                sys.set_port_enabled(np, m.carrier.is_up() && m.dev.is_some(), t);
                m.port = Some(np);
            } else {
                let pc = new.port_config(&m.name, 0, m.mac);
                sys.set_port_activity_rate(p, pc.activity, pc.rate, t);
            }
        }
        tracing::info!(bond = %self.s.name, system = %id, fast = new.fast, active = new.active, key = new.key, min_links = new.min_links, max_bundle = ?new.max_bundle, "LACP settings changed in place");
        self.dirty = true;
    }

    pub(super) fn handle_slow(&mut self) {
        let Some(rx) = &self.slow_rx else { return };
        // A bounded share per member and step: a member flooded with
        // plausible-looking PDUs cannot delay another member's.
        let frames = rx.drain(64);
        if frames.is_empty() {
            return;
        }
        let t = self.t();
        for f in frames {
            if let Some(m) = self.members.get(f.member) {
                self.taps.frame(&m.name, Direction::In, &f.frame, false);
            }
            if f.frame.get(12..14) == Some(&[0x08, 0x06][..]) {
                self.handle_arp(f.member, &f.frame);
                continue;
            }
            if lagkit_wire::pagp::is_pagp_frame(&f.frame) {
                self.pagp_frame(f.member, &f.frame, t);
                continue;
            }
            let port = self.members.get(f.member).and_then(|m| m.port);
            if let (Some(sys), Some(p)) = (self.lacp.as_mut(), port) {
                sys.handle_frame(p, &f.frame, t);
            }
        }
    }

    /// An ARP frame seen on member `m`: a probe reply for the monitor, and
    /// in balance-alb a client to learn.
    pub(super) fn handle_arp(&mut self, m: usize, frame: &[u8]) {
        let Some(arp) = ArpRepr::parse_frame(frame) else {
            return;
        };
        let now = now_ns(self.epoch);
        if let Some(mon) = self.arp.as_mut() {
            mon.on_reply(m, arp.sender_ip, now);
            mon.on_rx(m, now);
        }
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let usable: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].usable() && !self.members[i].is_backup)
            .collect();
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        if let Some(member) = self.clients.learn(&arp, own, &usable, now) {
            tracing::info!(bond = %self.s.name, client = %arp.sender_ip, member = %self.members[member].name, "alb: client assigned");
            self.dirty = true;
        }
    }

    /// balance-alb: tell clients which MAC to send to, with an ARP reply
    /// from their member.
    pub(super) fn notify_clients(&mut self) {
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        let out = self.clients.due(now_ns(self.epoch), self.plan.active, own);
        for (m, f) in out {
            self.send_on(m, &f);
        }
    }

    pub(super) fn handle_timers(&mut self) {
        let now = now_ns(self.epoch);
        let t = self.t();
        if let Some(sys) = self.lacp.as_mut() {
            if sys.poll_timeout().is_some_and(|d| d <= t) {
                sys.handle_timeout(t);
            }
        }
        self.pagp_timers(t);
        for i in 0..self.members.len() {
            if let Some(up) = self.members[i].carrier.poll(now) {
                self.apply_carrier(i, up);
            }
        }
        if !self.s.miimon.is_zero() && now >= self.next_miimon {
            self.next_miimon = now + self.s.miimon.as_nanos() as u64;
            for i in 0..self.members.len() {
                if let Some(c) = poll_carrier(&self.members[i].name) {
                    if c != self.members[i].carrier.is_up() {
                        self.set_carrier(i, c);
                    }
                }
            }
        }
        if let Some(arp) = self.arp.as_mut() {
            if arp.poll_timeout() <= now {
                let (probes, changes) = arp.handle_timeout(now);
                for (m, up) in changes {
                    self.members[m].watchers.set("arp", up);
                    self.dirty = true;
                }
                // Each member probes with its own MAC and sender address
                // 0.0.0.0 (an RFC 5227 ARP probe): the target answers to
                // that member alone and learns nothing about the bond's
                // address, so probing never moves the bond's MAC or
                // poisons a neighbour cache.
                for p in probes {
                    let mac = self.members[p.member].mac;
                    let req = ArpRepr {
                        op: ArpOp::Request,
                        sender_mac: mac,
                        sender_ip: Ipv4Addr::UNSPECIFIED,
                        target_mac: MacAddr::ZERO,
                        target_ip: p.target,
                    };
                    self.send_on(p.member, &req.emit_frame(mac, MacAddr::BROADCAST));
                }
            }
        }
    }

    pub(super) fn send_on(&self, member: usize, frame: &[u8]) {
        if let Some(s) = self.engine.as_ref().and_then(|e| e.member_sender(member)) {
            if s.send_frame(frame).is_ok() {
                if let Some(m) = self.members.get(member) {
                    self.taps.frame(&m.name, Direction::Out, frame, false);
                }
            }
        }
    }

    pub(super) fn drain_lacp(&mut self) {
        let Some(sys) = self.lacp.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(tx) = sys.poll_transmit() {
            out.push(tx);
        }
        let mut changed = false;
        while let Some((_, ev)) = sys.poll_event() {
            if matches!(ev, Event::Distribution { .. } | Event::Aggregator { .. }) {
                changed = true;
            }
        }
        for tx in out {
            if let Some(i) = self.members.iter().position(|m| m.port == Some(tx.port)) {
                self.send_on(i, &tx.frame);
            }
        }
        if changed {
            self.dirty = true;
        }
    }

    /// balance-tlb/alb: a learning frame (source and destination the
    /// bond's MAC, EtherType 0x9000, as Linux's learning packets) on the
    /// active member every `lp_interval`, and at once when the active
    /// member changes. The other members transmit with their own MACs, so
    /// without it a switch may never learn, or may forget, where the bond's
    /// MAC is: it then floods frames for it to every member, and each
    /// member passes its copy up.
    pub(super) fn send_learning(&mut self) {
        if !self.s.mode.is_tlb() {
            return;
        }
        let now = now_ns(self.epoch);
        let Some(a) = self.plan.active.filter(|_| now >= self.next_learning) else {
            return;
        };
        self.next_learning = now + self.s.lp_interval.as_nanos() as u64;
        let mut frame = [0u8; 60];
        frame[0..6].copy_from_slice(&self.mac.0);
        frame[6..12].copy_from_slice(&self.mac.0);
        frame[12..14].copy_from_slice(&[0x90, 0x00]);
        self.send_on(a, &frame);
    }

    pub(super) fn send_gratuitous(&mut self) {
        if self.grat_pending == 0 {
            return;
        }
        self.grat_pending -= 1;
        let Some(a) = self.plan.active else { return };
        for ip in self.ipv4.clone() {
            self.send_on(a, &crate::announce::gratuitous_arp(self.mac, ip));
        }
        for ip in crate::announce::ipv6_addresses(&self.s.name) {
            self.send_on(a, &crate::announce::unsolicited_na(self.mac, ip));
        }
    }
}
