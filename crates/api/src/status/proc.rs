//! The kernel's `/proc/net/bonding/<bond>` layout, line for line
//! (`lagkit status --format proc`): the same fields, order, spelling,
//! punctuation and values as Linux 6.x's bonding driver writes them, so
//! that scripts, monitoring agents and eyes that read that file read
//! lagkit's bond too. Held against real kernels' files in this module's
//! tests and in `tests/proc_layout.rs`.
//!
//! What lagkit has and the kernel has not appears in its nearest form:
//! lagkit's own hash policies by name without a Linux number (`strong
//! (lagkit)`), the `adaptive` mode as `adaptive rebalancing (lagkit)`;
//! PAgP, the engine and the machines' states are left to lagkit's own
//! layout. An asker without CAP_NET_ADMIN gets what the kernel gives one:
//! no system, aggregator or PDU details.

use super::text::{aggregator_lines, duplex, pdu_lines, speed};
use super::{BondMode, BondStatus, MemberStatus};
use std::fmt::Write as _;

impl BondStatus {
    /// The bond as the kernel's `/proc/net/bonding/<bond>` shows it, with
    /// `kernel_release` (`uname -r`) in the first line as the kernel writes
    /// its own.
    pub fn render_proc(&self, kernel_release: &str) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Ethernet Channel Bonding Driver: v{kernel_release}\n");
        let fom = match (self.mode, self.fail_over_mac) {
            (BondMode::ActiveBackup, f) if f != super::FailOverMac::None => {
                format!(" (fail_over_mac {f})")
            }
            _ => String::new(),
        };
        let _ = writeln!(o, "Bonding Mode: {}{fom}", self.mode.description());
        if self.uses_xmit_hash {
            let n = self
                .xmit_hash_number
                .map_or("lagkit".to_string(), |n| n.to_string());
            let _ = writeln!(o, "Transmit Hash Policy: {} ({n})", self.xmit_hash_policy);
        }
        if self.mode.has_active_member() {
            let _ = writeln!(o, "{}", self.primary_line());
            let _ = writeln!(
                o,
                "Currently Active Slave: {}",
                self.active_member.as_deref().unwrap_or("None")
            );
        }
        // The bond's own MII status is its carrier.
        let carrier = if self.mii_status.is_up() {
            "up"
        } else {
            "down"
        };
        let _ = writeln!(o, "MII Status: {carrier}");
        let _ = writeln!(o, "MII Polling Interval (ms): {}", self.miimon_ms);
        let _ = writeln!(o, "Up Delay (ms): {}", self.as_polled(self.updelay_ms));
        let _ = writeln!(o, "Down Delay (ms): {}", self.as_polled(self.downdelay_ms));
        let _ = writeln!(
            o,
            "Peer Notification Delay (ms): {}",
            self.as_polled(self.peer_notif_delay_ms)
        );
        if let Some(a) = self.arp.as_ref().filter(|a| a.interval_ms > 0) {
            self.render_arp(&mut o, a);
        }
        if let Some(l) = &self.lacp {
            let _ = writeln!(o, "\n802.3ad info");
            let on = if l.lacp_activity == super::LacpActivity::Active {
                "on"
            } else {
                "off"
            };
            let _ = writeln!(o, "LACP active: {on}");
            let _ = writeln!(o, "LACP rate: {}", l.lacp_rate);
            let _ = writeln!(o, "Min links: {}", l.min_links);
            let _ = writeln!(
                o,
                "Aggregator selection policy (ad_select): {}",
                l.ad_select
            );
            if !self.details_withheld {
                let _ = writeln!(o, "System priority: {}", l.system_priority);
                let _ = writeln!(o, "System MAC address: {}", l.system_mac);
                match l.aggregator_id {
                    Some(id) => aggregator_lines(&mut o, id, l),
                    None => {
                        let _ = writeln!(o, "bond {} has no active aggregator", self.name);
                    }
                }
            }
        }
        for m in &self.members {
            self.render_proc_member(&mut o, m);
        }
        o
    }

    /// A delay as the kernel keeps it: in whole polling intervals (0 when
    /// miimon is off).
    fn as_polled(&self, ms: u64) -> u64 {
        match self.miimon_ms {
            0 => 0,
            m => ms - ms % m,
        }
    }

    fn render_proc_member(&self, o: &mut String, m: &MemberStatus) {
        let _ = writeln!(o, "\nSlave Interface: {}", m.name);
        // A member whose interface is missing has no link.
        let mii = match m.mii_status {
            super::MiiStatus::Missing => super::MiiStatus::Down,
            s => s,
        };
        let _ = writeln!(o, "MII Status: {mii}");
        let _ = writeln!(o, "Speed: {}", speed(m.speed_mbps));
        let _ = writeln!(o, "Duplex: {}", duplex(m.full_duplex));
        let _ = writeln!(o, "Link Failure Count: {}", m.link_failure_count);
        let _ = writeln!(o, "Permanent HW addr: {}", m.permanent_hw_addr);
        let _ = writeln!(o, "Slave queue ID: {}", m.queue_id);
        if self.mode != BondMode::Lacp {
            return;
        }
        let Some(l) = m.lacp.as_ref() else {
            let _ = writeln!(o, "Aggregator ID: N/A");
            return;
        };
        let Some(id) = l.aggregator_id else {
            let _ = writeln!(o, "Aggregator ID: N/A");
            return;
        };
        let _ = writeln!(o, "Aggregator ID: {id}");
        let _ = writeln!(o, "Actor Churn State: {}", l.actor_churn_state);
        let _ = writeln!(o, "Partner Churn State: {}", l.partner_churn_state);
        let _ = writeln!(o, "Actor Churned Count: {}", l.actor_churned_count);
        let _ = writeln!(o, "Partner Churned Count: {}", l.partner_churned_count);
        if !self.details_withheld {
            pdu_lines(o, l, |s| s.to_string());
        }
    }
}
