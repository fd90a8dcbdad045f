//! The switch's core as a [`lagkit_sim::Node`], beside a host bond's LACP
//! or PAgP system (or a host that speaks neither), so a switch and a host
//! run against each other in virtual time: `lagkit sim pair` and this
//! crate's tests.

use crate::{Core, PortId, Verdict};
use lagkit_proto::{lacp, pagp, Instant, PortId as ProtoPort};
use lagkit_sim::Node;

/// One system of a simulation: the switch, or a host bond.
#[derive(Debug)]
pub enum Peer {
    /// The switch under test.
    Switch(Box<Core>),
    /// A host bond running LACP.
    Lacp(Box<lacp::System>),
    /// A host bond running PAgP.
    Pagp(Box<pagp::System>),
    /// A host that speaks no protocol (a `mode on` or balance-xor bond).
    Quiet,
}

fn ns(now: Instant) -> u64 {
    now.as_nanos()
}

impl Node for Peer {
    type Event = String;
    fn set_port_enabled(&mut self, port: ProtoPort, up: bool, now: Instant) {
        match self {
            Peer::Switch(c) => c.handle_carrier(PortId(port.0), up, ns(now)),
            Peer::Lacp(s) => s.set_port_enabled(port, up, now),
            Peer::Pagp(s) => s.set_port_enabled(port, up, now),
            Peer::Quiet => {}
        }
    }
    fn handle_frame(&mut self, port: ProtoPort, frame: &[u8], now: Instant) {
        match self {
            Peer::Switch(c) => {
                if c.receive(PortId(port.0), frame, None, ns(now)) == Verdict::Control {
                    c.handle_control(PortId(port.0), frame, ns(now));
                }
            }
            Peer::Lacp(s) => s.handle_frame(port, frame, now),
            Peer::Pagp(s) => s.handle_frame(port, frame, now),
            Peer::Quiet => {}
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        match self {
            Peer::Switch(c) => c.handle_timeout(ns(now)),
            Peer::Lacp(s) => s.handle_timeout(now),
            Peer::Pagp(s) => s.handle_timeout(now),
            Peer::Quiet => {}
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Peer::Switch(c) => Some(Instant::from_nanos(c.poll_timeout())),
            Peer::Lacp(s) => s.poll_timeout(),
            Peer::Pagp(s) => s.poll_timeout(),
            Peer::Quiet => None,
        }
    }
    fn poll_transmit(&mut self) -> Option<(ProtoPort, Vec<u8>)> {
        match self {
            Peer::Switch(c) => {
                let tx = c.poll_transmit()?;
                c.transmitted(&tx);
                Some((ProtoPort(tx.port.0), tx.frame))
            }
            Peer::Lacp(s) => s.poll_transmit().map(|t| (t.port, t.frame)),
            Peer::Pagp(s) => s.poll_transmit().map(|t| (t.port, t.frame)),
            Peer::Quiet => None,
        }
    }
    fn poll_event(&mut self) -> Option<(Instant, String)> {
        match self {
            Peer::Lacp(s) => s.poll_event().map(|(t, e)| (t, format!("{e:?}"))),
            Peer::Pagp(s) => s.poll_event().map(|(t, e)| (t, format!("{e:?}"))),
            Peer::Switch(_) | Peer::Quiet => None,
        }
    }
}

impl Peer {
    /// The switch's core, if this is the switch.
    pub fn core(&self) -> Option<&Core> {
        match self {
            Peer::Switch(c) => Some(c),
            _ => None,
        }
    }

    /// The host's LACP system, if it runs LACP.
    pub fn lacp(&self) -> Option<&lacp::System> {
        match self {
            Peer::Lacp(s) => Some(s),
            _ => None,
        }
    }

    /// The host's PAgP system, if it runs PAgP.
    pub fn pagp(&self) -> Option<&pagp::System> {
        match self {
            Peer::Pagp(s) => Some(s),
            _ => None,
        }
    }
}
