//! One PAgP driver for both ends of the wire: a [`System`] and the
//! [`FlushGate`] in front of its joins, drained together. The host bond's
//! core and the switch's core both run their PAgP through it, so a port
//! joins the data path at the same moment on either side: when PAgP has it
//! in the channel and no Flush is outstanding.

use super::gate::FlushGate;
use super::system::{Event, PortId, System, Transmit};
use super::{PortState, SystemConfig};
use lagkit_wire::MacAddr;

/// A [`System`] with its [`FlushGate`].
#[derive(Debug, Clone)]
pub struct Driver {
    sys: System,
    gate: FlushGate,
}

/// A port's change of data-path membership, from one [`Driver::poll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The port.
    pub port: PortId,
    /// Whether it carries the channel's traffic from now on.
    pub carries: bool,
    /// The partner it joined with; `None` when it leaves, or when it
    /// attached silently (nothing heard for the silent wait).
    pub partner: Option<MacAddr>,
}

/// A port's state change, for the caller's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The port.
    pub port: PortId,
    /// Its name.
    pub name: String,
    /// State before.
    pub from: PortState,
    /// State after.
    pub to: PortState,
    /// Why, in a few words.
    pub why: &'static str,
}

/// What one [`Driver::poll`] has for the caller.
#[derive(Debug, Clone, Default)]
pub struct Poll {
    /// The PDUs to send, in order.
    pub transmit: Vec<Transmit>,
    /// The data-path membership changes to apply now.
    pub gates: Vec<Gate>,
    /// The ports' state changes, for the log.
    pub transitions: Vec<Transition>,
}

impl Driver {
    /// A driver over a new system.
    pub fn new(cfg: SystemConfig) -> Driver {
        Driver {
            sys: System::new(cfg),
            gate: FlushGate::new(),
        }
    }

    /// The system, for its ports' status.
    pub fn system(&self) -> &System {
        &self.sys
    }

    /// The system, to add ports, feed frames, carrier and time.
    pub fn system_mut(&mut self) -> &mut System {
        &mut self.sys
    }

    /// Drains the system: its PDUs, and each port that joins or leaves the
    /// data path now. A port that leaves stops at once; one that joins
    /// waits for every outstanding Flush to be answered ([`FlushGate`]).
    pub fn poll(&mut self) -> Poll {
        let mut out = Poll::default();
        while let Some(tx) = self.sys.poll_transmit() {
            out.transmit.push(tx);
        }
        let mut events = Vec::new();
        while let Some((_, ev)) = self.sys.poll_event() {
            if let Event::Transition {
                port,
                from,
                to,
                why,
            } = ev
            {
                let name = self
                    .sys
                    .port_status(port)
                    .map(|p| p.name)
                    .unwrap_or_default();
                out.transitions.push(Transition {
                    port,
                    name,
                    from,
                    to,
                    why,
                });
            }
            events.push(ev);
        }
        let joined_with = |port| {
            events.iter().find_map(|e| match e {
                Event::Joined {
                    port: p, partner, ..
                } if *p == port => Some(*partner),
                _ => None,
            })
        };
        for (port, carries) in self.gate.apply(&events) {
            // A join held over an earlier poll finds its partner in the
            // port's status.
            let partner = carries
                .then(|| {
                    joined_with(port)
                        .flatten()
                        .or_else(|| self.sys.port_status(port).and_then(|s| s.partner_device))
                })
                .flatten();
            out.gates.push(Gate {
                port,
                carries,
                partner,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagp::{Mode, PortConfig, Silence};
    use crate::Instant;

    fn driver(dev: u8, mode: Mode) -> (Driver, PortId) {
        let mac = MacAddr([2, 0, 0, 0, 0, dev]);
        let mut d = Driver::new(SystemConfig::new("d", mac));
        let mut pc = PortConfig::new("p1", 1, MacAddr([2, 0, 0, 0, 1, dev]));
        pc.mode = mode;
        pc.silence = Silence::NonSilent;
        let p = d.system_mut().add_port(pc, Instant::ZERO);
        d.system_mut().set_port_enabled(p, true, Instant::ZERO);
        (d, p)
    }

    #[test]
    fn two_desirable_drivers_gate_the_port_in_with_the_partner_named() {
        let (mut a, pa) = driver(1, Mode::Desirable);
        let (mut b, pb) = driver(2, Mode::Desirable);
        let mut now = Instant::ZERO;
        let mut joined = [None, None];
        fn step(
            x: &mut Driver,
            y: &mut Driver,
            py: PortId,
            now: Instant,
            slot: &mut Option<MacAddr>,
        ) {
            x.system_mut().handle_timeout(now);
            let poll = x.poll();
            for tx in poll.transmit {
                y.system_mut().handle_frame(py, &tx.frame, now);
            }
            for g in poll.gates.into_iter().filter(|g| g.carries) {
                *slot = g.partner;
            }
        }
        for _ in 0..400 {
            step(&mut a, &mut b, pb, now, &mut joined[0]);
            step(&mut b, &mut a, pa, now, &mut joined[1]);
            now += std::time::Duration::from_millis(100);
        }
        assert_eq!(joined[0], Some(MacAddr([2, 0, 0, 0, 0, 2])));
        assert_eq!(joined[1], Some(MacAddr([2, 0, 0, 0, 0, 1])));
        assert_eq!(a.system().port_status(pa).unwrap().state, PortState::UpPagp);
    }
}
