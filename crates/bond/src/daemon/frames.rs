//! Control frames and timers: the frames the engine hands up (LACP,
//! Marker, PAgP, ARP) go to the core; the frames the core queues go out on
//! their member; the core's events become the shell's actions; miimon
//! re-reads each member's carrier; the announcements the core asks for
//! after a failover go out.

use super::*;
use crate::core::Event as CoreEvent;
use lagkit_api::capture::Direction;

impl Bond {
    pub(super) fn handle_slow(&mut self) {
        // A bounded share per member and step: a member flooded with
        // plausible-looking PDUs cannot delay another member's.
        let frames = self.datapath.slow_frames(64);
        if frames.is_empty() {
            return;
        }
        let now = self.now();
        for f in frames {
            if let Some(m) = self.core.members().get(f.member) {
                self.control.tap(m.name(), Direction::In, &f.frame);
            }
            self.core.handle_frame(f.member, &f.frame, now);
        }
        self.after_core();
    }

    /// The core's deadlines, and miimon's carrier re-reads.
    pub(super) fn handle_timers(&mut self) {
        let now = self.now();
        self.core.handle_timeout(now);
        if self.core.take_miimon() {
            for i in 0..self.members.len() {
                if let Some(c) = poll_carrier(self.name(i)) {
                    self.core.handle_miimon(i, c, now);
                }
            }
        }
        self.after_core();
    }

    /// Sends what the core queued (once an engine runs: until then the
    /// frames wait in the core) and acts on what it reports: a carrier
    /// change is timed until its plan is published; announcements, MAC
    /// moves and a reload's changes on the host are carried out.
    pub(super) fn after_core(&mut self) {
        if self.datapath.running() {
            while let Some(tx) = self.core.poll_transmit() {
                self.send_on(tx.member, &tx.frame);
            }
        }
        while let Some((_, ev)) = self.core.poll_event() {
            match ev {
                CoreEvent::Carrier { member, up } => {
                    let name = self.name(member).to_string();
                    self.carriers.seen(&name, up, self.seen_ns);
                }
                CoreEvent::Announce { member } => self.announce(member),
                CoreEvent::MoveMacs(moves) => self.move_macs(moves),
                CoreEvent::Offloads => {
                    let s = self.core.settings();
                    (self.members).apply_offloads(&s.name, |n| s.keeps_offloads(n));
                }
                CoreEvent::Addresses { old, new } => self.change_addresses(&old, &new),
                CoreEvent::MetricsListen(listen) => {
                    self.control.set_metrics(&self.core.settings().name, listen)
                }
                CoreEvent::Rebalancing(config) => self.datapath.set_rebalancing(config),
                _ => {}
            }
        }
    }

    pub(super) fn send_on(&self, member: usize, frame: &[u8]) {
        if let Some(s) = self.datapath.sender(member) {
            if s.send_frame(frame).is_ok() {
                if let Some(m) = self.core.members().get(member) {
                    self.control.tap(m.name(), Direction::Out, frame);
                }
            }
        }
    }

    /// One round of gratuitous ARP and unsolicited Neighbor Advertisements
    /// on `a` for the bond's addresses ([`CoreEvent::Announce`]).
    fn announce(&self, a: usize) {
        let mac = self.core.mac();
        for &ip in self.core.ipv4() {
            self.send_on(a, &crate::announce::gratuitous_arp(mac, ip));
        }
        for ip in crate::announce::ipv6_addresses(&self.s().name) {
            self.send_on(a, &crate::announce::unsolicited_na(mac, ip));
        }
    }
}
