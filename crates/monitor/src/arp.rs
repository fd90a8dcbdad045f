//! ARP/ping probe monitoring (Linux `arp_interval` / `arp_ip_target` /
//! `arp_validate` / `arp_all_targets`; AIX `netaddr` / `num_retries` /
//! `retry_time`): a member is up only while probes through it get answers.
//! Carrier alone cannot see a dead switch port behind a live cable.
//!
//! Pure: the bond calls [`ArpMonitor::handle_timeout`] at
//! [`ArpMonitor::poll_timeout`], sends the [`Probe`]s it returns out of the
//! named member, and reports replies with [`ArpMonitor::on_reply`] (and, if
//! validation is off, any received traffic with [`ArpMonitor::on_rx`]).

use crate::combine::Combine;
use std::net::Ipv4Addr;
use std::time::Duration;

/// Settings of the probe monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArpConfig {
    /// Time between probe rounds (`arp_interval`, AIX `retry_time`).
    pub interval: Duration,
    /// Addresses probed (`arp_ip_target`, AIX `netaddr`).
    pub targets: Vec<Ipv4Addr>,
    /// Rounds without an answer before a member is down (Linux
    /// `arp_missed_max`, default 2; AIX `num_retries`, default 3).
    pub missed_max: u32,
    /// Only replies from the targets count (`arp_validate` other than
    /// `none`); otherwise any received frame proves the link.
    pub validate: bool,
    /// With several targets: `Any` answering keeps a member up, or `All`
    /// must (`arp_all_targets`).
    pub all_targets: Combine,
}

/// A probe to send: an ARP request for `target` out of `member`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Member index.
    pub member: usize,
    /// Address asked for.
    pub target: Ipv4Addr,
}

#[derive(Debug, Clone)]
struct Member {
    /// Last answer per target (nanoseconds), or any traffic when not validating.
    last: Vec<Option<u64>>,
    up: bool,
}

/// The probe monitor of one bond.
#[derive(Debug, Clone)]
pub struct ArpMonitor {
    cfg: ArpConfig,
    members: Vec<Member>,
    next: u64,
    started: u64,
}

impl ArpMonitor {
    /// A monitor for `members` members. Members start up (so a bond does
    /// not wait a probe round before carrying traffic) and are judged once
    /// a full window (`interval` × `missed_max`) has passed without answers.
    pub fn new(cfg: ArpConfig, members: usize, now: u64) -> ArpMonitor {
        let t = cfg.targets.len();
        ArpMonitor {
            members: vec![
                Member {
                    last: vec![None; t],
                    up: true
                };
                members
            ],
            cfg,
            next: now,
            started: now,
        }
    }

    /// New settings (a reload): every member keeps its verdict and the
    /// answers of the targets that stay probed; the next round is due one
    /// new interval after the last.
    pub fn set_config(&mut self, cfg: ArpConfig) {
        for m in &mut self.members {
            m.last = cfg
                .targets
                .iter()
                .map(|t| {
                    let old = self.cfg.targets.iter().position(|o| o == t)?;
                    m.last.get(old).copied().flatten()
                })
                .collect();
        }
        let old = self.cfg.interval.as_nanos() as u64;
        let new = cfg.interval.as_nanos() as u64;
        self.next = self.next.saturating_sub(old).saturating_add(new.max(1));
        self.cfg = cfg;
    }

    /// Adds a member (returns its index).
    pub fn add_member(&mut self) -> usize {
        self.members.push(Member {
            last: vec![None; self.cfg.targets.len()],
            up: true,
        });
        self.members.len() - 1
    }

    /// When to call [`ArpMonitor::handle_timeout`] next.
    pub fn poll_timeout(&self) -> u64 {
        self.next
    }

    /// Runs a probe round if due: re-judges every member and returns the
    /// probes to send and the members whose state changed.
    pub fn handle_timeout(&mut self, now: u64) -> (Vec<Probe>, Vec<(usize, bool)>) {
        if now < self.next {
            return (Vec::new(), Vec::new());
        }
        let interval = self.cfg.interval.as_nanos() as u64;
        self.next = now.saturating_add(interval.max(1));
        let window = interval.saturating_mul(u64::from(self.cfg.missed_max.max(1)));
        let mut changes = Vec::new();
        for (i, m) in self.members.iter_mut().enumerate() {
            let fresh = |t: &Option<u64>| t.is_some_and(|t| now.saturating_sub(t) <= window);
            let up = match self.cfg.all_targets {
                Combine::Any => m.last.iter().any(fresh),
                Combine::All => !m.last.is_empty() && m.last.iter().all(fresh),
            };
            // A member gets one full window after start before it is judged.
            let judged = now.saturating_sub(self.started) >= window || up;
            if judged && up != m.up {
                m.up = up;
                changes.push((i, up));
            }
        }
        let probes = (0..self.members.len())
            .flat_map(|member| {
                self.cfg
                    .targets
                    .iter()
                    .map(move |&target| Probe { member, target })
            })
            .collect();
        (probes, changes)
    }

    /// An ARP reply from `from` arrived on `member`.
    pub fn on_reply(&mut self, member: usize, from: Ipv4Addr, now: u64) {
        let Some(t) = self.cfg.targets.iter().position(|&a| a == from) else {
            return;
        };
        if let Some(m) = self.members.get_mut(member) {
            m.last[t] = Some(now);
        }
    }

    /// Any frame arrived on `member`; counts only when not validating.
    pub fn on_rx(&mut self, member: usize, now: u64) {
        if self.cfg.validate {
            return;
        }
        if let Some(m) = self.members.get_mut(member) {
            for l in &mut m.last {
                *l = Some(now);
            }
        }
    }

    /// The monitor's verdict on a member.
    pub fn is_up(&self, member: usize) -> bool {
        self.members.get(member).is_some_and(|m| m.up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_settings_keep_each_members_verdict_and_the_answers_still_wanted() {
        let t9 = Ipv4Addr::new(10, 0, 0, 9);
        let mut m = ArpMonitor::new(cfg(Combine::Any, true), 2, 0);
        m.handle_timeout(0);
        m.on_reply(0, t9, 50 * MS);
        m.handle_timeout(100 * MS);
        let (_, down) = m.handle_timeout(200 * MS);
        assert_eq!(down, [(1, false)], "member 1 never answered");
        let mut c = cfg(Combine::Any, true);
        c.interval = Duration::from_millis(300);
        c.targets = vec![t9, Ipv4Addr::new(10, 0, 0, 7)];
        m.set_config(c);
        assert!(m.is_up(0) && !m.is_up(1), "verdicts kept");
        assert_eq!(
            m.poll_timeout(),
            500 * MS,
            "one new interval after the last round"
        );
        m.on_reply(1, t9, 450 * MS);
        let (probes, up) = m.handle_timeout(500 * MS);
        assert_eq!(up, [(1, true)], "{probes:?}");
        assert!(probes
            .iter()
            .any(|p| p.target == Ipv4Addr::new(10, 0, 0, 7)));
        // Member 0's answer at 50 ms was kept for the target still probed.
        assert!(m.is_up(0));
    }

    const MS: u64 = 1_000_000;

    fn cfg(all: Combine, validate: bool) -> ArpConfig {
        ArpConfig {
            interval: Duration::from_millis(100),
            targets: vec![Ipv4Addr::new(10, 0, 0, 9), Ipv4Addr::new(10, 0, 0, 8)],
            missed_max: 2,
            validate,
            all_targets: all,
        }
    }

    #[test]
    fn probes_every_member_and_target_each_interval() {
        let mut m = ArpMonitor::new(cfg(Combine::Any, true), 2, 0);
        let (p, c) = m.handle_timeout(0);
        assert_eq!(p.len(), 4);
        assert!(c.is_empty());
        assert_eq!(m.poll_timeout(), 100 * MS);
        assert_eq!(m.handle_timeout(50 * MS).0.len(), 0, "not due yet");
    }

    #[test]
    fn silent_members_go_down_after_the_window_and_come_back_when_answered() {
        let mut m = ArpMonitor::new(cfg(Combine::Any, true), 2, 0);
        m.handle_timeout(0);
        m.on_reply(0, Ipv4Addr::new(10, 0, 0, 9), 5 * MS);
        // Within the first window nobody is judged.
        assert!(m.handle_timeout(100 * MS).1.is_empty());
        // Member 1 never answered: down once a full window has passed.
        let (_, c) = m.handle_timeout(200 * MS);
        assert_eq!(c, vec![(1, false)]);
        // Member 0 stops answering: down once its answer is older than
        // missed_max intervals.
        let (_, c) = m.handle_timeout(300 * MS);
        assert_eq!(c, vec![(0, false)]);
        assert!(!m.is_up(0));
        // An answer brings it back at the next round.
        m.on_reply(0, Ipv4Addr::new(10, 0, 0, 9), 350 * MS);
        assert_eq!(m.handle_timeout(400 * MS).1, vec![(0, true)]);
    }

    #[test]
    fn all_targets_needs_every_answer_and_validation_ignores_other_traffic() {
        let mut m = ArpMonitor::new(cfg(Combine::All, true), 1, 0);
        m.on_rx(0, 1);
        m.on_reply(0, Ipv4Addr::new(10, 0, 0, 9), 1);
        m.on_reply(0, Ipv4Addr::new(1, 2, 3, 4), 1);
        // One target of two answered: down once judged.
        assert_eq!(m.handle_timeout(200 * MS).1, vec![(0, false)]);
        m.on_reply(0, Ipv4Addr::new(10, 0, 0, 9), 250 * MS);
        m.on_reply(0, Ipv4Addr::new(10, 0, 0, 8), 250 * MS);
        assert_eq!(m.handle_timeout(300 * MS).1, vec![(0, true)]);
        // Without validation any frame counts.
        let mut m = ArpMonitor::new(cfg(Combine::All, false), 1, 0);
        m.on_rx(0, 150 * MS);
        assert!(m.handle_timeout(200 * MS).1.is_empty());
        assert!(m.is_up(0));
    }
}
