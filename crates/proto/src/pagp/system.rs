//! The sans-IO PAgP system: ports, the channel they form, and the one
//! function every port transition goes through.
//!
//! Each API call (`handle_frame`, `set_port_enabled`, `handle_timeout`)
//! advances time, applies its input to one port, then settles: the channel
//! selection runs once over all ports, membership changes become `Joined` /
//! `Left` events and Flush requests, and every port that must speak sends
//! one hello.
//!
//! Who decides hot standby: the reference says port priority picks the
//! hot-standby port but not which end's priority counts. lagkit does as LACP
//! does with system priority: the end with the numerically lower device id
//! decides from its own port priorities and port limit; the other end puts
//! a port in the channel only once the deciding end advertises it there
//! (non-zero group ifindex), and can refuse a port by advertising it
//! consistent but outside any group.

use super::config::{Mode, PortConfig, Silence, SystemConfig};
use super::port::{PendingFlush, Port, PortCounters, PortState, Timer};
use crate::Instant;
use lagkit_wire::pagp::{Flags, FlushRepr, InfoRepr, LearnMethod, PortInfo, Tlv};
use lagkit_wire::{MacAddr, PagpRepr};
use std::collections::VecDeque;
use std::time::Duration;

pub use crate::PortId;

/// A frame the caller must send on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The port to send on.
    pub port: PortId,
    /// The whole Ethernet frame (no FCS).
    pub frame: Vec<u8>,
}

/// What happened, for the caller's data path and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A port changed state.
    Transition {
        /// The port.
        port: PortId,
        /// State before.
        from: PortState,
        /// State after.
        to: PortState,
        /// Why, in a few words.
        why: &'static str,
    },
    /// The port now carries the channel's traffic.
    Joined {
        /// The port.
        port: PortId,
        /// The partner device, `None` for a silent attachment.
        partner: Option<MacAddr>,
        /// How the partner learns addresses: a physical-port learner needs
        /// this end to send each source MAC on one port only.
        partner_learn: Option<LearnMethod>,
    },
    /// The port no longer carries the channel's traffic.
    Left {
        /// The port.
        port: PortId,
        /// The state it left to.
        now: PortState,
    },
    /// Flows are about to move off or onto this port: a Flush went out on
    /// it, and the caller should hold the flows that move until `FlushDone`
    /// (reference: the Flush PDU is "PAgP's counterpart of the Marker
    /// protocol (moving a flow between ports without misordering)").
    FlushStarted {
        /// The port the Flush went out on.
        port: PortId,
        /// Its transaction id.
        transaction_id: u32,
    },
    /// The Flush was answered (or timed out, or the port went down): flows
    /// may move now.
    FlushDone {
        /// The port.
        port: PortId,
        /// Its transaction id.
        transaction_id: u32,
        /// True if the partner answered; false after the timeout.
        answered: bool,
    },
}

/// A snapshot of one port, for status output and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortStatus {
    /// Interface name.
    pub name: String,
    /// State.
    pub state: PortState,
    /// The consistent flag this port sends.
    pub consistent: bool,
    /// Hot-standby priority.
    pub port_priority: u8,
    /// The partner's device id, while its information is held.
    pub partner_device: Option<MacAddr>,
    /// The partner's port ifindex.
    pub partner_ifindex: Option<u32>,
    /// The partner port's group capability (ports that may bundle share it).
    pub partner_group_capability: Option<u32>,
    /// The partner's channel (group ifindex); 0 while it has not put the
    /// port in a channel.
    pub partner_group_ifindex: Option<u32>,
    /// The partner's mode (from its auto flag).
    pub partner_mode: Option<Mode>,
    /// The partner's learn method.
    pub partner_learn: Option<LearnMethod>,
    /// The partner's device name TLV.
    pub partner_device_name: Option<String>,
    /// The partner's port name TLV.
    pub partner_port_name: Option<String>,
    /// Counters.
    pub counters: PortCounters,
}

/// A PAgP system: one device's ports and the channel they form.
#[derive(Debug, Clone)]
pub struct System {
    cfg: SystemConfig,
    ports: Vec<Port>,
    now: Instant,
    transmits: VecDeque<Transmit>,
    events: VecDeque<(Instant, Event)>,
    next_transaction: u32,
}

impl System {
    /// A system with no ports.
    pub fn new(cfg: SystemConfig) -> System {
        System {
            cfg,
            ports: Vec::new(),
            now: Instant::ZERO,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            next_transaction: 1,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SystemConfig {
        &self.cfg
    }

    /// Adds a port, without carrier.
    pub fn add_port(&mut self, cfg: PortConfig, now: Instant) -> PortId {
        self.advance(now);
        self.ports.push(Port::new(cfg));
        PortId(self.ports.len() - 1)
    }

    /// Adds a port that a previous run of this system had in the channel,
    /// as a daemon restarting over a data path that kept forwarding does:
    /// the port starts with carrier and with `partner` (the partner's last
    /// Information PDU that run recorded) as if just received, and, when
    /// the channel selection puts it in the channel at once (the partner
    /// names it and the pair may bundle), it is in the channel with a
    /// hello saying so queued, reported as `Joined` with no Flush.
    ///
    /// Not in the reference, where a port starts from portDown and goes
    /// through portUp and biDirectional, sending hellos with the
    /// consistent flag clear and no group ifindex, which takes the port
    /// out of the partner's channel until the pair agrees again. What
    /// stays as ever: the partner's information ages out 3.5 hellos from
    /// now unless it speaks again, and a hello from it that no longer
    /// names this port moves the machine as any other would.
    pub fn resume_port(&mut self, cfg: PortConfig, partner: InfoRepr, now: Instant) -> PortId {
        let id = self.add_port(cfg, now);
        let before = self.membership();
        let device = self.cfg.device_id;
        let timers = self.cfg.timers;
        let p = &mut self.ports[id.0];
        let hello = if partner.flags.has(Flags::SLOW_HELLO) {
            timers.slow_hello
        } else {
            timers.fast_hello
        };
        p.enabled = true;
        p.set_timer(Timer::Aging, Some(now + timers.aging(hello)));
        let names_us =
            partner.partner.device_id == device && partner.partner.ifindex == p.cfg.ifindex;
        p.partner = Some(partner);
        // Entered directly, not through `goto`: no transition happened on
        // the wire. The selection below places it.
        p.state = if names_us {
            PortState::BiDirectional
        } else {
            PortState::PagpReceived
        };
        p.need_tx = true;
        self.select();
        // In the channel before the restart, with the data path forwarding
        // on it throughout: its joining moves no flow, so it asks for no
        // Flush on the others; the caller still learns that it carries.
        let p = &self.ports[id.0];
        tracing::info!(target: "lagkit::pagp", "{} {} pagp: resumed as {} from the previous run's partner", self.cfg.name, p.cfg.name, p.state);
        let mut before = before;
        if p.state.in_channel() {
            before[id.0] = true;
            let ev = Event::Joined {
                port: id,
                partner: p.partner.as_ref().map(|r| r.local.device_id),
                partner_learn: p.partner.as_ref().map(|r| r.local.learn),
            };
            self.events.push_back((now, ev));
        }
        self.settle(before);
        id
    }

    /// The partner's last Information PDU on port `id` while the port is
    /// in the channel: what a daemon records for the next one to resume
    /// from.
    pub fn channel_partner(&self, id: PortId) -> Option<&InfoRepr> {
        let p = self.ports.get(id.0).filter(|p| !p.removed)?;
        p.state.in_channel().then_some(p.partner.as_ref()).flatten()
    }

    /// Every port's id (removed ports excluded).
    pub fn port_ids(&self) -> Vec<PortId> {
        (0..self.ports.len())
            .filter(|&i| !self.ports[i].removed)
            .map(PortId)
            .collect()
    }

    /// Takes a port out for good: it goes down (leaving the channel, if it
    /// was in it) and never speaks again. The ids of the other ports stay
    /// as they are.
    pub fn remove_port(&mut self, id: PortId, now: Instant) {
        self.set_port_enabled(id, false, now);
        if let Some(p) = self.ports.get_mut(id.0) {
            p.removed = true;
        }
    }

    /// Carrier of a port went up or down.
    pub fn set_port_enabled(&mut self, id: PortId, enabled: bool, now: Instant) {
        self.advance(now);
        let before = self.membership();
        let Some(p) = self.ports.get_mut(id.0).filter(|p| !p.removed) else {
            return;
        };
        if p.enabled == enabled {
            return;
        }
        p.enabled = enabled;
        if enabled {
            self.goto(id.0, PortState::Up, "carrier up");
        } else {
            self.goto(id.0, PortState::Down, "carrier down");
        }
        self.settle(before);
    }

    /// A frame arrived on a port (a whole Ethernet frame without FCS).
    /// Anything that is not a usable PAgP PDU is counted and ignored.
    pub fn handle_frame(&mut self, id: PortId, frame: &[u8], now: Instant) {
        self.advance(now);
        let before = self.membership();
        let device = self.cfg.device_id;
        let Some(p) = self.ports.get_mut(id.0).filter(|p| !p.removed) else {
            return;
        };
        let pdu = match PagpRepr::parse_frame(frame) {
            Ok(pdu) => pdu,
            Err(e) => {
                p.counters.bad_rx += 1;
                tracing::debug!(port = %p.cfg.name, error = %e, "PAgP frame dropped");
                return;
            }
        };
        if !p.enabled {
            p.counters.down_rx += 1;
            return;
        }
        match pdu {
            PagpRepr::Info(info) => {
                p.counters.info_rx += 1;
                if info.local.device_id == device {
                    // Our own hello came back: a loop or a hub, not a partner.
                    p.counters.bad_rx += 1;
                    tracing::warn!(port = %p.cfg.name, "own PAgP hello received: looped port");
                    return;
                }
                self.receive_info(id.0, info);
            }
            PagpRepr::Flush(f) => {
                p.counters.flush_rx += 1;
                self.receive_flush(id.0, f);
            }
        }
        self.settle(before);
    }

    /// Deadlines up to `now` have passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
        let before = self.membership();
        for i in 0..self.ports.len() {
            if self.ports[i].expired(Timer::Aging, now) {
                // Reference: "received information ages out after 3.5 hellos".
                self.ports[i].set_timer(Timer::Aging, None);
                self.goto(i, PortState::Up, "partner information aged out");
            }
            if self.ports[i].expired(Timer::SilentWait, now) {
                self.ports[i].set_timer(Timer::SilentWait, None);
                if self.ports[i].state == PortState::Up {
                    self.goto(i, PortState::UpData, "no PAgP heard for the silent wait");
                }
            }
            if self.ports[i].expired(Timer::Flush, now) {
                self.finish_flush(i, false);
            }
            if self.ports[i].expired(Timer::JoinWait, now) {
                // Only ends the wait: the selection in `settle` ranks the port.
                self.ports[i].set_timer(Timer::JoinWait, None);
            }
            if self.ports[i].expired(Timer::Hello, now) {
                self.ports[i].need_tx = true;
            }
        }
        self.settle(before);
    }

    /// The earliest deadline, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.ports.iter().flat_map(|p| p.timers).flatten().min()
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event, with the time it happened.
    pub fn poll_event(&mut self) -> Option<(Instant, Event)> {
        self.events.pop_front()
    }

    /// Ports carrying the channel's traffic.
    pub fn channel_ports(&self) -> Vec<PortId> {
        (0..self.ports.len())
            .filter(|&i| self.ports[i].state.in_channel())
            .map(PortId)
            .collect()
    }

    /// A snapshot of one port.
    pub fn port_status(&self, id: PortId) -> Option<PortStatus> {
        let p = self.ports.get(id.0).filter(|p| !p.removed)?;
        let partner = p.partner.as_ref();
        Some(PortStatus {
            name: p.cfg.name.clone(),
            state: p.state,
            consistent: p.consistent,
            port_priority: p.cfg.port_priority,
            partner_device: partner.map(|i| i.local.device_id),
            partner_ifindex: partner.map(|i| i.local.ifindex),
            partner_group_capability: partner.map(|i| i.local.group_capability),
            partner_group_ifindex: partner.map(|i| i.local.group_ifindex),
            partner_mode: partner.map(|i| {
                if i.flags.has(Flags::AUTO) {
                    Mode::Auto
                } else {
                    Mode::Desirable
                }
            }),
            partner_learn: partner.map(|i| i.local.learn),
            partner_device_name: partner.and_then(|i| i.device_name().map(str::to_string)),
            partner_port_name: partner.and_then(|i| i.port_name().map(str::to_string)),
            counters: p.counters,
        })
    }

    fn advance(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }

    fn membership(&self) -> Vec<bool> {
        self.ports.iter().map(|p| p.state.in_channel()).collect()
    }

    /// Every state change goes through here: log, then act on entering the
    /// new state.
    fn goto(&mut self, i: usize, to: PortState, why: &'static str) {
        let now = self.now;
        let fast = self.cfg.timers.fast_hello;
        let silent_wait = self.cfg.timers.silent_wait;
        let join_wait = self.cfg.timers.join_wait;
        let limited = self.cfg.max_ports.is_some();
        let p = &mut self.ports[i];
        let from = p.state;
        if from == to {
            return;
        }
        tracing::info!(target: "lagkit::pagp", "{} {} pagp: {} ({}) -> {}", self.cfg.name, p.cfg.name, from, why, to);
        p.state = to;
        p.need_tx = true;
        p.consistent = false;
        match to {
            PortState::Down => {
                p.partner = None;
                p.timers = Default::default();
            }
            PortState::Up => {
                p.partner = None;
                p.set_timer(Timer::Aging, None);
                // Reference: "`desirable` initiates, `auto` only answers".
                let desirable = p.cfg.mode == Mode::Desirable;
                p.set_timer(Timer::Hello, desirable.then_some(now));
                // Reference: silent mode "lets PAgP attach a port to the
                // channel ... even when the partner never sends PAgP",
                // after a configurable wait (see `Silence::Silent`).
                let silent = desirable && p.cfg.silence == Silence::Silent;
                p.set_timer(Timer::SilentWait, silent.then(|| now + silent_wait));
            }
            _ => {
                p.set_timer(Timer::SilentWait, None);
                let ready = |s| {
                    matches!(
                        s,
                        PortState::BiDirectional | PortState::UpPagp | PortState::HotStandby
                    )
                };
                if !ready(to) {
                    p.set_timer(Timer::JoinWait, None);
                } else if !ready(from) && limited {
                    p.set_timer(Timer::JoinWait, Some(now + join_wait));
                }
                if p.timer(Timer::Hello).is_none() {
                    p.set_timer(Timer::Hello, Some(now + fast));
                }
            }
        }
        if to == PortState::Down && p.flush.is_some() {
            self.finish_flush(i, false);
        }
        self.events.push_back((
            now,
            Event::Transition {
                port: PortId(i),
                from,
                to,
                why,
            },
        ));
    }

    fn receive_info(&mut self, i: usize, info: InfoRepr) {
        let device = self.cfg.device_id;
        let timers = self.cfg.timers;
        let now = self.now;
        let p = &mut self.ports[i];
        // Reference: "received information ages out after 3.5 hellos (3.5 s
        // fast, 105 s slow)", at the rate the partner says it sends.
        let hello = if info.flags.has(Flags::SLOW_HELLO) {
            timers.slow_hello
        } else {
            timers.fast_hello
        };
        p.set_timer(Timer::Aging, Some(now + timers.aging(hello)));
        let key = |r: &InfoRepr| (r.local.device_id, r.local.ifindex);
        let other = p.partner.as_ref().is_some_and(|old| key(old) != key(&info));
        let names_us = info.partner.device_id == device && info.partner.ifindex == p.cfg.ifindex;
        let state = p.state;
        p.partner = Some(info);
        if other {
            self.goto(i, PortState::UpMult, "a second partner on the port");
        } else if state == PortState::UpMult {
            // Stays until the extra partner ages out.
        } else if !names_us {
            self.goto(i, PortState::PagpReceived, "partner does not name us");
        } else if matches!(
            state,
            PortState::Up | PortState::UpData | PortState::PagpReceived
        ) {
            self.goto(i, PortState::BiDirectional, "partner names us");
        }
    }

    fn receive_flush(&mut self, i: usize, f: FlushRepr) {
        let device = self.cfg.device_id;
        let p = &mut self.ports[i];
        if f.partner != device {
            p.counters.flush_ignored += 1;
            return;
        }
        if f.is_response() {
            if p.flush
                .is_some_and(|x| x.transaction_id == f.transaction_id)
            {
                self.finish_flush(i, true);
            } else {
                p.counters.flush_ignored += 1;
            }
            return;
        }
        // Answer every request addressed to us, once: the response flag keeps
        // the answer from being answered.
        let reply = FlushRepr {
            flags: FlushRepr::RESPONSE,
            local: device,
            partner: f.local,
            transaction_id: f.transaction_id,
        };
        self.send(i, &PagpRepr::Flush(reply));
        self.ports[i].counters.flush_tx += 1;
    }

    fn start_flush(&mut self, i: usize) {
        let transaction_id = self.next_transaction;
        self.next_transaction = self.next_transaction.wrapping_add(1);
        let partner = self.ports[i]
            .partner
            .as_ref()
            .map_or(MacAddr::ZERO, |p| p.local.device_id);
        let f = FlushRepr {
            flags: 0,
            local: self.cfg.device_id,
            partner,
            transaction_id,
        };
        let deadline = self.now + self.cfg.timers.flush_timeout;
        let p = &mut self.ports[i];
        p.flush = Some(PendingFlush { transaction_id });
        p.set_timer(Timer::Flush, Some(deadline));
        p.counters.flush_tx += 1;
        self.send(i, &PagpRepr::Flush(f));
        self.events.push_back((
            self.now,
            Event::FlushStarted {
                port: PortId(i),
                transaction_id,
            },
        ));
    }

    fn finish_flush(&mut self, i: usize, answered: bool) {
        let p = &mut self.ports[i];
        p.set_timer(Timer::Flush, None);
        if let Some(f) = p.flush.take() {
            self.events.push_back((
                self.now,
                Event::FlushDone {
                    port: PortId(i),
                    transaction_id: f.transaction_id,
                    answered,
                },
            ));
        }
    }

    fn send(&mut self, i: usize, pdu: &PagpRepr) {
        let p = &self.ports[i];
        match pdu.emit_frame(p.cfg.mac) {
            Ok(frame) => self.transmits.push_back(Transmit {
                port: PortId(i),
                frame,
            }),
            // Only names longer than a frame can hold get here.
            Err(e) => tracing::warn!(port = %p.cfg.name, error = %e, "PAgP PDU not sent"),
        }
    }

    /// Channel selection, membership events, Flushes, then hellos.
    fn settle(&mut self, before: Vec<bool>) {
        self.select();
        let after = self.membership();
        if before != after {
            for (i, (&was, &is)) in before.iter().zip(&after).enumerate() {
                if was && !is {
                    let now = self.ports[i].state;
                    self.events.push_back((
                        self.now,
                        Event::Left {
                            port: PortId(i),
                            now,
                        },
                    ));
                } else if !was && is {
                    let partner = self.ports[i].partner.as_ref();
                    let ev = Event::Joined {
                        port: PortId(i),
                        partner: partner.map(|p| p.local.device_id),
                        partner_learn: partner.map(|p| p.local.learn),
                    };
                    self.events.push_back((self.now, ev));
                }
            }
            // Flows on every port that carried traffic and still has carrier
            // may move: flush each before they do.
            for (i, &was) in before.iter().enumerate() {
                if was && self.ports[i].enabled && self.ports[i].flush.is_none() {
                    self.start_flush(i);
                }
            }
        }
        for i in 0..self.ports.len() {
            self.hello(i);
        }
    }

    /// Which ready ports carry traffic, which stand by (see the module docs
    /// for who decides).
    fn select(&mut self) {
        let ready = |p: &Port| {
            matches!(
                p.state,
                PortState::BiDirectional | PortState::UpPagp | PortState::HotStandby
            )
        };
        // Reference: "desirable+desirable and desirable+auto form a channel,
        // auto+auto never."
        let compatible = |p: &Port| {
            p.partner
                .as_ref()
                .is_some_and(|r| !(p.cfg.mode == Mode::Auto && r.flags.has(Flags::AUTO)))
        };
        let key = |p: &Port| {
            p.partner.as_ref().map(|r| {
                (
                    r.local.device_id,
                    r.local.group_capability,
                    p.cfg.group_capability,
                )
            })
        };
        // A port the deciding end is still waiting on (join wait) is left
        // as it is, neither ranked nor refused.
        let device = self.cfg.device_id;
        let waiting = |p: &Port| {
            p.timer(Timer::JoinWait).is_some()
                && p.partner
                    .as_ref()
                    .is_some_and(|r| device < r.local.device_id)
        };
        let mut cands: Vec<usize> = (0..self.ports.len())
            .filter(|&i| {
                let p = &self.ports[i];
                ready(p) && compatible(p) && !waiting(p)
            })
            .collect();
        let order = |p: &Port| (core::cmp::Reverse(p.cfg.port_priority), p.cfg.ifindex);
        cands.sort_by_key(|&i| order(&self.ports[i]));
        // The channel's partner: the one a member already has, else the
        // best candidate's.
        let channel = cands
            .iter()
            .find(|&&i| self.ports[i].state == PortState::UpPagp)
            .or(cands.first())
            .and_then(|&i| key(&self.ports[i]));
        let mut rank = 0;
        for i in 0..self.ports.len() {
            let p = &self.ports[i];
            if !ready(p) || waiting(p) {
                continue;
            }
            if !cands.contains(&i) || key(p) != channel {
                // Settled outside the channel: both auto, or another
                // partner device or group than the channel's.
                self.goto_keep(
                    i,
                    PortState::BiDirectional,
                    "not aggregatable with the channel",
                    true,
                );
            }
        }
        for &i in &cands {
            let p = &self.ports[i];
            if key(p) != channel {
                continue;
            }
            let r = p
                .partner
                .as_ref()
                .map(|r| (r.local.device_id, r.flags, r.local.group_ifindex));
            let Some((partner_id, flags, partner_group)) = r else {
                continue;
            };
            let selected = self.cfg.max_ports.is_none_or(|m| rank < m);
            rank += 1;
            let deciding = self.cfg.device_id < partner_id;
            let partner_in = partner_group != 0;
            let partner_refuses = flags.has(Flags::CONSISTENT) && !partner_in;
            let (to, consistent, why) = if deciding {
                if !selected {
                    (PortState::HotStandby, true, "lower port priority")
                } else if partner_refuses {
                    (PortState::HotStandby, true, "partner keeps the port out")
                } else {
                    (PortState::UpPagp, true, "selected")
                }
            } else if !selected {
                (PortState::HotStandby, true, "lower port priority")
            } else if partner_in {
                (
                    PortState::UpPagp,
                    true,
                    "partner put the port in the channel",
                )
            } else {
                (
                    PortState::HotStandby,
                    false,
                    "partner has not put the port in",
                )
            };
            self.goto_keep(i, to, why, consistent);
        }
    }

    /// `goto` that also sets the consistent flag, and sends at once if only
    /// the flag changed.
    fn goto_keep(&mut self, i: usize, to: PortState, why: &'static str, consistent: bool) {
        self.goto(i, to, why);
        let p = &mut self.ports[i];
        if p.consistent != consistent {
            p.consistent = consistent;
            p.need_tx = true;
        }
    }

    /// Sends a hello if one is due and the port may speak.
    fn hello(&mut self, i: usize) {
        let t = self.cfg.timers;
        let now = self.now;
        let p = &mut self.ports[i];
        // Reference: "`auto` only answers": it speaks once it has heard.
        let may =
            p.state != PortState::Down && (p.cfg.mode == Mode::Desirable || p.partner.is_some());
        if !may {
            p.set_timer(Timer::Hello, None);
            p.need_tx = false;
            return;
        }
        if !p.need_tx && !p.expired(Timer::Hello, now) {
            if p.timer(Timer::Hello).is_none() {
                p.set_timer(Timer::Hello, Some(now));
                p.need_tx = true;
            } else {
                return;
            }
        }
        // Reference: "hello 1 s while a port is being detected, 30 s once it
        // is up (slow hello)".
        let interval: Duration = t.hello_interval(p.state.is_up());
        p.need_tx = false;
        p.set_timer(Timer::Hello, Some(now + interval));
        p.counters.info_tx += 1;
        let info = self.info(i);
        self.send(i, &PagpRepr::Info(info));
    }

    /// The Information PDU port `i` sends now.
    fn info(&self, i: usize) -> InfoRepr {
        let p = &self.ports[i];
        // The slow flag tells the partner how long to keep what it heard,
        // so it is set only when hellos really go out at the slow rate.
        let t = self.cfg.timers;
        let flags = Flags(0)
            .with(Flags::SLOW_HELLO, t.sends_slow(p.state.is_up()))
            .with(Flags::AUTO, p.cfg.mode == Mode::Auto)
            .with(Flags::CONSISTENT, p.consistent);
        let group_ifindex = if p.state == PortState::UpPagp {
            self.cfg.group_ifindex
        } else {
            0
        };
        InfoRepr {
            flags,
            local: PortInfo {
                device_id: self.cfg.device_id,
                learn: self.cfg.learn,
                port_priority: p.cfg.port_priority,
                ifindex: p.cfg.ifindex,
                group_capability: p.cfg.group_capability,
                group_ifindex,
            },
            partner: p.partner.as_ref().map(|r| r.local).unwrap_or_default(),
            partner_count: match (p.state, &p.partner) {
                (PortState::UpMult, _) => 2,
                (_, Some(_)) => 1,
                _ => 0,
            },
            tlvs: vec![
                Tlv::DeviceName(self.cfg.name.clone()),
                Tlv::PortName(p.cfg.name.clone()),
                Tlv::AgportMac(self.cfg.agport_mac.unwrap_or(self.cfg.device_id)),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(s: u8, p: u8) -> MacAddr {
        MacAddr([2, 0, 0, 0, s, p])
    }

    /// Two systems, port i of A cabled to port i of B, frames delivered at
    /// once, stepped from deadline to deadline. `b_speaks: false` stands
    /// for a partner that never speaks PAgP (its frames are never made).
    struct Pair {
        sys: [System; 2],
        now: Instant,
        /// Per link: frames cross it.
        up: Vec<bool>,
        b_speaks: bool,
        events: Vec<(usize, Event)>,
    }

    impl Pair {
        fn new(a: SystemConfig, b: SystemConfig, ports: &[(PortConfig, PortConfig)]) -> Pair {
            let mut sys = [System::new(a), System::new(b)];
            for (pa, pb) in ports {
                let i = sys[0].add_port(pa.clone(), Instant::ZERO);
                sys[1].add_port(pb.clone(), Instant::ZERO);
                sys[0].set_port_enabled(i, true, Instant::ZERO);
                sys[1].set_port_enabled(i, true, Instant::ZERO);
            }
            Pair {
                sys,
                now: Instant::ZERO,
                up: vec![true; ports.len()],
                b_speaks: true,
                events: Vec::new(),
            }
        }

        fn deliver(&mut self) {
            loop {
                let mut moved = false;
                for s in 0..2 {
                    while let Some((_, e)) = self.sys[s].poll_event() {
                        self.events.push((s, e));
                    }
                    while let Some(t) = self.sys[s].poll_transmit() {
                        moved = true;
                        if self.up[t.port.0] && (s == 0 || self.b_speaks) {
                            self.sys[1 - s].handle_frame(t.port, &t.frame, self.now);
                        }
                    }
                }
                if !moved {
                    return;
                }
            }
        }

        fn run_until(&mut self, until: Instant) {
            self.deliver();
            loop {
                let next = self.sys.iter().filter_map(System::poll_timeout).min();
                match next {
                    Some(t) if t <= until => {
                        self.now = self.now.max(t);
                        for s in 0..2 {
                            self.sys[s].handle_timeout(self.now);
                        }
                        self.deliver();
                    }
                    _ => break,
                }
            }
            self.now = until;
        }

        fn states(&self, s: usize) -> Vec<PortState> {
            let sys = &self.sys[s];
            sys.port_ids()
                .into_iter()
                .map(|i| sys.port_status(i).unwrap().state)
                .collect()
        }
    }

    fn ports(
        n: u32,
        a: impl Fn(&mut PortConfig),
        b: impl Fn(&mut PortConfig),
    ) -> Vec<(PortConfig, PortConfig)> {
        (1..=n)
            .map(|i| {
                let mut pa = PortConfig::new(&format!("a{i}"), i, mac(1, i as u8));
                let mut pb = PortConfig::new(&format!("b{i}"), 10 + i, mac(2, i as u8));
                a(&mut pa);
                b(&mut pb);
                (pa, pb)
            })
            .collect()
    }

    fn cfgs() -> (SystemConfig, SystemConfig) {
        (
            SystemConfig::new("A", mac(1, 0)),
            SystemConfig::new("B", mac(2, 0)),
        )
    }

    #[test]
    fn desirable_pair_forms_then_hellos_slow() {
        let (a, mut b) = cfgs();
        b.learn = LearnMethod::PhysicalPort;
        let mut p = Pair::new(a, b, &ports(2, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(3));
        assert_eq!(p.states(0), [PortState::UpPagp; 2]);
        assert_eq!(p.states(1), [PortState::UpPagp; 2]);
        let st = p.sys[0].port_status(PortId(0)).unwrap();
        assert_eq!(st.partner_learn, Some(LearnMethod::PhysicalPort));
        assert_eq!(st.partner_device_name.as_deref(), Some("B"));
        assert_eq!(st.partner_port_name.as_deref(), Some("b1"));
        assert!(st.consistent);
        assert!(p.events.iter().any(|(s, e)| *s == 0
            && matches!(
                e,
                Event::Joined {
                    partner_learn: Some(LearnMethod::PhysicalPort),
                    ..
                }
            )));
        // Once up, hellos every 30 s: 3.5 minutes bring about 7 per port.
        let before = p.sys[0].port_status(PortId(0)).unwrap().counters.info_tx;
        p.run_until(Instant::from_secs(213));
        let after = p.sys[0].port_status(PortId(0)).unwrap().counters.info_tx;
        assert!((6..=8).contains(&(after - before)), "{before} -> {after}");
        assert_eq!(p.states(0), [PortState::UpPagp; 2]);
    }

    /// A system rebuilt from what its previous run recorded (each channel
    /// port's partner PDU) carries on: its partner sees no transition, no
    /// Flush and no hello that differs from the last one before, and the
    /// resumed ports are in the channel at once. A partner that no longer
    /// names the port takes it out as ever.
    #[test]
    fn a_resumed_system_is_not_seen_to_restart() {
        for auto_b in [false, true] {
            let (a, b) = cfgs();
            let mut p = Pair::new(
                a.clone(),
                b,
                &ports(
                    2,
                    |_| {},
                    |pb| {
                        if auto_b {
                            pb.mode = Mode::Auto
                        }
                    },
                ),
            );
            p.run_until(Instant::from_secs(40));
            assert_eq!(p.states(0), [PortState::UpPagp; 2]);
            assert_eq!(p.states(1), [PortState::UpPagp; 2]);
            let last_hello = |sys: &mut System, at: Instant| {
                sys.handle_timeout(at);
                let mut v = Vec::new();
                while let Some(t) = sys.poll_transmit() {
                    v.push(PagpRepr::parse_frame(&t.frame).unwrap());
                }
                v
            };
            let recorded: Vec<InfoRepr> = (0..2)
                .map(|i| p.sys[0].channel_partner(PortId(i)).unwrap().clone())
                .collect();
            let before: Vec<InfoRepr> = (0..2).map(|i| p.sys[0].info(i)).collect();
            // The previous run is gone; a new one resumes 1 s later.
            let now = p.now + Duration::from_secs(1);
            let mut fresh = System::new(a.clone());
            for (i, (pa, _)) in ports(2, |_| {}, |_| {}).into_iter().enumerate() {
                assert_eq!(fresh.resume_port(pa, recorded[i].clone(), now), PortId(i));
            }
            let sent = last_hello(&mut fresh, now);
            assert_eq!(sent.len(), 2, "one hello per port at once: {sent:#?}");
            for (i, pdu) in sent.iter().enumerate() {
                assert_eq!(*pdu, PagpRepr::Info(before[i].clone()), "port {i}");
            }
            let mut events = Vec::new();
            while let Some((_, e)) = fresh.poll_event() {
                events.push(e);
            }
            let joined = events
                .iter()
                .filter(|e| matches!(e, Event::Joined { .. }))
                .count();
            assert!(
                joined == 2
                    && events
                        .iter()
                        .all(|e| !matches!(e, Event::FlushStarted { .. } | Event::Left { .. })),
                "{events:?}"
            );
            p.sys[0] = fresh;
            p.events.clear();
            p.now = now;
            p.run_until(now + Duration::from_secs(120));
            assert_eq!(p.states(0), [PortState::UpPagp; 2]);
            assert_eq!(p.states(1), [PortState::UpPagp; 2]);
            assert!(
                p.events.iter().all(|(s, _)| *s == 0),
                "the partner saw: {:?}",
                p.events
            );
            assert!(p
                .events
                .iter()
                .all(|(_, e)| !matches!(e, Event::FlushStarted { .. } | Event::Left { .. })));
        }
        // A recorded partner that does not name the port (it was another
        // partner's, or the cabling changed) is not in the channel.
        let (a, _) = cfgs();
        let mut sys = System::new(a);
        let mut info = InfoRepr {
            flags: Flags(0).with(Flags::CONSISTENT, true),
            local: PortInfo {
                device_id: mac(3, 0),
                ifindex: 7,
                group_ifindex: 5,
                ..PortInfo::default()
            },
            partner: PortInfo::default(),
            partner_count: 1,
            tlvs: Vec::new(),
        };
        info.partner.device_id = mac(9, 9);
        let (pa, _) = ports(1, |_| {}, |_| {}).remove(0);
        let id = sys.resume_port(pa, info, Instant::from_secs(1));
        assert_eq!(sys.port_status(id).unwrap().state, PortState::PagpReceived);
        assert!(sys.channel_ports().is_empty());
    }

    #[test]
    fn desirable_auto_forms_and_auto_auto_never_speaks() {
        let (a, b) = cfgs();
        let mut p = Pair::new(
            a.clone(),
            b.clone(),
            &ports(2, |_| {}, |b| b.mode = Mode::Auto),
        );
        p.run_until(Instant::from_secs(3));
        assert_eq!(p.states(1), [PortState::UpPagp; 2]);
        let auto = |c: &mut PortConfig| c.mode = Mode::Auto;
        let mut p = Pair::new(a, b, &ports(2, auto, auto));
        p.run_until(Instant::from_secs(60));
        assert_eq!(p.states(0), [PortState::Up; 2]);
        assert_eq!(p.states(1), [PortState::Up; 2]);
        assert_eq!(p.sys[0].port_status(PortId(0)).unwrap().counters.info_tx, 0);
    }

    #[test]
    fn silent_partner_attaches_after_the_wait_only_in_silent_mode() {
        let (a, b) = cfgs();
        let mut p = Pair::new(a.clone(), b.clone(), &ports(1, |_| {}, |_| {}));
        p.b_speaks = false;
        p.run_until(Instant::from_millis(14_900));
        assert_eq!(p.states(0), [PortState::Up]);
        p.run_until(Instant::from_secs(16));
        assert_eq!(p.states(0), [PortState::UpData]);
        assert_eq!(p.sys[0].channel_ports(), [PortId(0)]);

        let mut p = Pair::new(a, b, &ports(1, |a| a.silence = Silence::NonSilent, |_| {}));
        p.b_speaks = false;
        p.run_until(Instant::from_secs(120));
        assert_eq!(p.states(0), [PortState::Up]);
        assert!(p.sys[0].channel_ports().is_empty());
    }

    #[test]
    fn information_ages_out_after_three_and_a_half_slow_hellos() {
        let (a, b) = cfgs();
        let mut p = Pair::new(a, b, &ports(1, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(5));
        assert_eq!(p.states(0), [PortState::UpPagp]);
        // A black hole: carrier stays, frames stop.
        p.up[0] = false;
        // The last hello arrived at 0 s (the pair forms at once): 3.5 × 30 s.
        p.run_until(Instant::from_millis(104_999));
        assert_eq!(p.states(0), [PortState::UpPagp]);
        p.run_until(Instant::from_secs(105));
        assert_eq!(p.states(0), [PortState::Up]);
        assert!(p
            .events
            .iter()
            .any(|(s, e)| *s == 0 && matches!(e, Event::Left { .. })));
        p.up[0] = true;
        p.run_until(Instant::from_secs(120));
        assert_eq!(p.states(0), [PortState::UpPagp]);
    }

    #[test]
    fn fast_hellos_age_out_in_three_and_a_half_seconds() {
        // Both ends hello every second even once up: no slow flag, so each
        // keeps the other's information 3.5 s, not 105 s.
        let (mut a, mut b) = cfgs();
        a.timers.fast_rate = true;
        b.timers.fast_rate = true;
        let mut p = Pair::new(a, b, &ports(1, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(5));
        assert_eq!(p.states(0), [PortState::UpPagp]);
        p.up[0] = false;
        p.run_until(Instant::from_secs(9));
        assert_eq!(p.states(0), [PortState::Up]);
        assert_eq!(p.states(1), [PortState::Up]);
    }

    #[test]
    fn a_fast_end_keeps_its_slow_partner_between_slow_hellos() {
        // `a` sends fast (pagp rate fast), `b` at the standard rate: once
        // up, `b` says slow and hellos every 30 s, so `a` must keep what
        // it heard 105 s, not the 3.5 s of its own rate; `b` keeps `a`'s
        // fast hellos 3.5 s and notices a silent `a` that soon.
        let (mut a, b) = cfgs();
        a.timers.fast_rate = true;
        let mut p = Pair::new(a, b, &ports(1, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(100));
        assert_eq!(p.states(0), [PortState::UpPagp]);
        assert_eq!(p.states(1), [PortState::UpPagp]);
        p.up[0] = false;
        p.run_until(Instant::from_secs(105));
        assert_eq!(p.states(1), [PortState::Up], "b aged a out");
        assert_eq!(p.states(0), [PortState::UpPagp], "a keeps b 105 s");
    }

    #[test]
    fn a_removed_port_leaves_and_stays_silent_and_the_others_keep_their_ids() {
        let (a, b) = cfgs();
        let quiet = |b: &mut PortConfig| b.silence = Silence::NonSilent;
        let mut p = Pair::new(a, b, &ports(2, |_| {}, quiet));
        p.run_until(Instant::from_secs(3));
        assert_eq!(p.sys[0].channel_ports(), [PortId(0), PortId(1)]);
        let now = p.now;
        p.sys[0].remove_port(PortId(0), now);
        p.deliver();
        assert!(p.events.iter().any(|(s, e)| *s == 0
            && matches!(
                e,
                Event::Left {
                    port: PortId(0),
                    ..
                }
            )));
        assert_eq!(p.sys[0].port_ids(), [PortId(1)]);
        assert_eq!(p.sys[0].port_status(PortId(0)), None);
        // Carrier and frames for the removed port change nothing.
        p.sys[0].set_port_enabled(PortId(0), true, now);
        p.run_until(Instant::from_secs(200));
        assert_eq!(p.sys[0].channel_ports(), [PortId(1)]);
        let b1 = p.sys[1].port_status(PortId(0)).unwrap();
        assert_eq!(b1.state, PortState::Up, "the partner's port aged out");
        let added = p.sys[0].add_port(PortConfig::new("a3", 3, mac(1, 3)), p.now);
        assert_eq!(added, PortId(2), "a removed port's id is not reused");
    }

    #[test]
    fn port_priority_picks_the_hot_standby_port_and_the_other_end_follows() {
        let (mut a, b) = cfgs();
        a.max_ports = Some(1);
        let mut p = Pair::new(
            a,
            b,
            &ports(
                3,
                |c| c.port_priority = if c.ifindex == 2 { 200 } else { 100 },
                |_| {},
            ),
        );
        p.run_until(Instant::from_secs(5));
        use PortState::*;
        assert_eq!(p.states(0), [HotStandby, UpPagp, HotStandby]);
        assert_eq!(p.states(1), [HotStandby, UpPagp, HotStandby]);
        // The active port loses carrier: the next by priority (then ifindex) takes over.
        p.sys[0].set_port_enabled(PortId(1), false, p.now);
        p.sys[1].set_port_enabled(PortId(1), false, p.now);
        p.deliver();
        p.run_until(Instant::from_secs(7));
        assert_eq!(p.states(0), [UpPagp, Down, HotStandby]);
        assert_eq!(p.states(1), [UpPagp, Down, HotStandby]);
    }

    #[test]
    fn standby_decided_by_the_other_end_is_followed() {
        let (a, mut b) = cfgs();
        b.max_ports = Some(1);
        let mut p = Pair::new(
            a,
            b,
            &ports(
                2,
                |_| {},
                |c| c.port_priority = if c.ifindex == 11 { 1 } else { 2 },
            ),
        );
        p.run_until(Instant::from_secs(5));
        use PortState::*;
        assert_eq!(p.states(1), [HotStandby, UpPagp]);
        assert_eq!(p.states(0), [HotStandby, UpPagp]);
    }

    #[test]
    fn a_port_joining_flushes_the_members_first() {
        let (a, b) = cfgs();
        let mut p = Pair::new(a, b, &ports(2, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(3));
        p.events.clear();
        p.sys[0].set_port_enabled(PortId(1), false, p.now);
        p.sys[1].set_port_enabled(PortId(1), false, p.now);
        p.deliver();
        p.sys[0].set_port_enabled(PortId(1), true, p.now);
        p.sys[1].set_port_enabled(PortId(1), true, p.now);
        p.deliver();
        p.run_until(p.now + Duration::from_secs(3));
        let flushes: Vec<_> = p
            .events
            .iter()
            .filter(|(s, e)| {
                *s == 0 && matches!(e, Event::FlushStarted { .. } | Event::FlushDone { .. })
            })
            .collect();
        // Leaving (port 1 down) and joining (port 1 back) each flush port 0,
        // and B answers each.
        assert!(flushes.len() >= 4, "{flushes:?}");
        assert!(flushes.iter().all(|(_, e)| match e {
            Event::FlushStarted { port, .. } => *port == PortId(0),
            Event::FlushDone { answered, .. } => *answered,
            _ => false,
        }));
        assert_eq!(
            p.sys[1]
                .port_status(PortId(0))
                .unwrap()
                .counters
                .flush_ignored,
            0
        );
    }

    #[test]
    fn a_second_partner_on_one_port_is_up_mult() {
        let (a, b) = cfgs();
        let mut p = Pair::new(a, b, &ports(1, |_| {}, |_| {}));
        p.run_until(Instant::from_secs(3));
        let stranger = PagpRepr::Info(InfoRepr {
            local: PortInfo {
                device_id: mac(9, 0),
                ifindex: 5,
                ..PortInfo::default()
            },
            ..InfoRepr::default()
        });
        let f = stranger.emit_frame(mac(9, 1)).unwrap();
        p.sys[0].handle_frame(PortId(0), &f, p.now);
        p.deliver();
        assert_eq!(p.states(0), [PortState::UpMult]);
        assert!(p.sys[0].channel_ports().is_empty());
    }

    #[test]
    fn bad_frames_are_counted_not_fatal() {
        let (a, _) = cfgs();
        let mut s = System::new(a);
        let id = s.add_port(PortConfig::new("a1", 1, mac(1, 1)), Instant::ZERO);
        s.set_port_enabled(id, true, Instant::ZERO);
        for f in [&[][..], &[0u8; 10][..], &[0xffu8; 64][..]] {
            s.handle_frame(id, f, Instant::ZERO);
        }
        s.handle_frame(PortId(7), &[0; 60], Instant::ZERO);
        assert_eq!(s.port_status(id).unwrap().counters.bad_rx, 3);
        // Our own hello looped back is not a partner.
        let own = s.poll_transmit().unwrap();
        s.handle_frame(id, &own.frame, Instant::ZERO);
        assert_eq!(s.port_status(id).unwrap().state, PortState::Up);
        assert_eq!(s.port_status(id).unwrap().counters.bad_rx, 4);
    }
}
