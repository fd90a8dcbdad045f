//! Moving flows only after a Flush: the callers' side of PAgP's Flush PDU.
//!
//! When the channel's membership changes, [`System`](super::System) sends a
//! Flush on every port that carried traffic and still can, and reports
//! `FlushStarted`; the answer (or the timeout, or the port going down)
//! reports `FlushDone`. The reference calls the Flush "PAgP's counterpart
//! of the Marker protocol (moving a flow between ports without
//! misordering)": flows may leave a working port only once the frames
//! already sent on it have arrived. [`FlushGate`] turns one poll's events
//! into the membership changes to apply now: a port that leaves stops at
//! once (it may be gone; holding traffic on it would lose it), a port that
//! joins starts carrying only when no Flush is outstanding, so the flows
//! that move to it keep their old port until then.

use super::system::{Event, PortId};
use std::collections::BTreeSet;

/// Holds joins while a Flush is outstanding. One per [`super::System`].
#[derive(Debug, Clone, Default)]
pub struct FlushGate {
    flushing: BTreeSet<PortId>,
    held: BTreeSet<PortId>,
}

impl FlushGate {
    /// A gate with nothing outstanding.
    pub fn new() -> FlushGate {
        FlushGate::default()
    }

    /// Takes the events of one poll, in order (a join is reported before
    /// the Flushes it causes, so a whole poll is judged at once), and
    /// returns the changes to apply now: `(port, carries)`.
    pub fn apply(&mut self, events: &[Event]) -> Vec<(PortId, bool)> {
        let mut out = Vec::new();
        for ev in events {
            match *ev {
                Event::FlushStarted { port, .. } => {
                    self.flushing.insert(port);
                }
                Event::FlushDone { port, .. } => {
                    self.flushing.remove(&port);
                }
                Event::Joined { port, .. } => {
                    self.held.insert(port);
                }
                Event::Left { port, .. } => {
                    self.held.remove(&port);
                    out.push((port, false));
                }
                Event::Transition { .. } => {}
            }
        }
        if self.flushing.is_empty() {
            out.extend(
                std::mem::take(&mut self.held)
                    .into_iter()
                    .map(|p| (p, true)),
            );
        }
        out
    }

    /// Ports that joined and wait for a Flush to be answered.
    pub fn held(&self) -> impl Iterator<Item = PortId> + '_ {
        self.held.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagp::PortState;

    fn joined(p: usize) -> Event {
        Event::Joined {
            port: PortId(p),
            partner: None,
            partner_learn: None,
        }
    }
    fn left(p: usize) -> Event {
        Event::Left {
            port: PortId(p),
            now: PortState::Down,
        }
    }
    fn started(p: usize) -> Event {
        Event::FlushStarted {
            port: PortId(p),
            transaction_id: 1,
        }
    }
    fn done(p: usize) -> Event {
        Event::FlushDone {
            port: PortId(p),
            transaction_id: 1,
            answered: true,
        }
    }

    #[test]
    fn the_first_port_joins_at_once() {
        let mut g = FlushGate::new();
        assert_eq!(g.apply(&[joined(0)]), [(PortId(0), true)]);
    }

    #[test]
    fn a_join_waits_for_the_flush_it_caused_to_be_answered() {
        let mut g = FlushGate::new();
        // Port 1 joins; port 0 carried traffic and is flushed (the join is
        // reported first, in the same poll).
        assert_eq!(g.apply(&[joined(1), started(0)]), []);
        assert_eq!(g.held().collect::<Vec<_>>(), [PortId(1)]);
        assert_eq!(g.apply(&[]), []);
        assert_eq!(g.apply(&[done(0)]), [(PortId(1), true)]);
        assert_eq!(g.held().count(), 0);
    }

    #[test]
    fn a_leave_applies_at_once_and_cancels_a_held_join() {
        let mut g = FlushGate::new();
        assert_eq!(g.apply(&[joined(1), started(0)]), []);
        // Port 2 leaves while the Flush is out: it stops at once.
        assert_eq!(g.apply(&[left(2), started(1)]), [(PortId(2), false)]);
        // The held port leaves before the Flush is answered: never joins.
        assert_eq!(g.apply(&[left(1)]), [(PortId(1), false)]);
        assert_eq!(g.apply(&[done(0), done(1)]), []);
    }

    #[test]
    fn every_outstanding_flush_must_end() {
        let mut g = FlushGate::new();
        assert_eq!(g.apply(&[joined(2), started(0), started(1)]), []);
        assert_eq!(g.apply(&[done(1)]), []);
        assert_eq!(g.apply(&[done(0)]), [(PortId(2), true)]);
    }

    #[test]
    fn with_a_real_partner_the_join_follows_the_answer() {
        use crate::pagp::{PortConfig, System, SystemConfig};
        use crate::Instant;
        use lagkit_wire::MacAddr;
        let mac = |s: u8, p: u8| MacAddr([2, 0, 0, 0, s, p]);
        let mut sys = [
            System::new(SystemConfig::new("a", mac(1, 0))),
            System::new(SystemConfig::new("b", mac(2, 0))),
        ];
        for s in 0..2u8 {
            for p in 0..2u8 {
                let cfg = PortConfig::new(&format!("p{p}"), u32::from(p) + 1, mac(s + 1, p + 1));
                let id = sys[usize::from(s)].add_port(cfg, Instant::ZERO);
                sys[usize::from(s)].set_port_enabled(id, p == 0, Instant::ZERO);
            }
        }
        let mut gate = FlushGate::new();
        let mut carrying = BTreeSet::new();
        let mut log = Vec::new();
        let mut now = Instant::ZERO;
        // Frames cross at once; A's events are fed to the gate one poll at
        // a time, as a daemon does.
        let mut step = |sys: &mut [System; 2], now: Instant, log: &mut Vec<String>| loop {
            let mut moved = false;
            for s in 0..2 {
                let mut evs = Vec::new();
                while let Some((_, e)) = sys[s].poll_event() {
                    evs.push(e);
                }
                if s == 0 {
                    for e in &evs {
                        if matches!(e, Event::FlushDone { .. }) {
                            log.push("flush answered".to_string());
                        }
                    }
                    for (p, c) in gate.apply(&evs) {
                        log.push(format!("port {} carries {c}", p.0));
                        if c {
                            carrying.insert(p);
                        } else {
                            carrying.remove(&p);
                        }
                    }
                }
                while let Some(t) = sys[s].poll_transmit() {
                    moved = true;
                    sys[1 - s].handle_frame(t.port, &t.frame, now);
                }
            }
            if !moved {
                return;
            }
        };
        // Runs both systems from deadline to deadline until `until`.
        let mut run =
            |sys: &mut [System; 2], now: &mut Instant, until: Instant, log: &mut Vec<String>| {
                step(sys, *now, log);
                while let Some(t) = sys.iter().filter_map(System::poll_timeout).min() {
                    if t > until {
                        break;
                    }
                    *now = t.max(*now);
                    for s in sys.iter_mut() {
                        s.handle_timeout(*now);
                    }
                    step(sys, *now, log);
                }
                *now = until;
            };
        run(&mut sys, &mut now, Instant::from_secs(5), &mut log);
        assert_eq!(log, ["port 0 carries true"], "port 0 alone joins at once");
        // Port 1's cable comes up: it joins only after port 0's Flush.
        for s in &mut sys {
            s.set_port_enabled(PortId(1), true, now);
        }
        let until = now + std::time::Duration::from_secs(5);
        run(&mut sys, &mut now, until, &mut log);
        let join = log
            .iter()
            .position(|l| l == "port 1 carries true")
            .expect("port 1 joins");
        let answered = log
            .iter()
            .position(|l| l == "flush answered")
            .expect("a Flush was answered");
        assert!(answered < join, "{log:?}");
        assert_eq!(carrying.len(), 2, "{log:?}");
    }
}
