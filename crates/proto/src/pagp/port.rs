//! One PAgP port: its state, what it last heard, its deadlines, its counters.

use super::config::PortConfig;
use crate::Instant;
use core::fmt;
use lagkit_wire::pagp::InfoRepr;

/// A port's PAgP state, named after CISCO-PAGP-MIB's port states (reference:
/// "portDown, portUp, dataReceived, upData, pagpReceived, biDirectional,
/// upPagp, upMult"). `dataReceived` is not used: the core does not see data
/// frames, only PAgP and carrier. `HotStandby` is lagkit's: an `upPagp` port
/// that port priority keeps out of traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortState {
    /// portDown: no carrier.
    Down,
    /// portUp: carrier, no PAgP heard. Desirable ports send fast hellos;
    /// auto ports listen.
    Up,
    /// upData: a silent desirable port that heard no PAgP for the silent
    /// wait and attached to the channel anyway.
    UpData,
    /// pagpReceived: the partner's hellos arrive but do not name this port.
    PagpReceived,
    /// biDirectional: each end names the other, but the port is not (yet)
    /// in the channel (both auto, another partner device, or waiting for
    /// the deciding end).
    BiDirectional,
    /// upPagp: in the channel and carrying traffic.
    UpPagp,
    /// Ready to join but held back by port priority (hot standby).
    HotStandby,
    /// upMult: more than one partner heard on the port (a hub or a
    /// mis-cabling); never in the channel until the extra partner ages out.
    UpMult,
}

impl PortState {
    /// The MIB's spelling (and `hotStandby`).
    pub fn name(self) -> &'static str {
        match self {
            PortState::Down => "portDown",
            PortState::Up => "portUp",
            PortState::UpData => "upData",
            PortState::PagpReceived => "pagpReceived",
            PortState::BiDirectional => "biDirectional",
            PortState::UpPagp => "upPagp",
            PortState::HotStandby => "hotStandby",
            PortState::UpMult => "upMult",
        }
    }

    /// The port carries the channel's traffic.
    pub fn in_channel(self) -> bool {
        matches!(self, PortState::UpPagp | PortState::UpData)
    }

    /// Settled: hellos go out at the slow rate (reference: "30 s once it is up").
    pub fn is_up(self) -> bool {
        matches!(self, PortState::UpPagp | PortState::HotStandby)
    }
}

impl fmt::Display for PortState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The deadlines of one port; each only injects an event when it expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// Next hello.
    Hello = 0,
    /// The partner's information ages out.
    Aging = 1,
    /// A silent desirable port attaches without PAgP.
    SilentWait = 2,
    /// An unanswered Flush is given up.
    Flush = 3,
    /// A port that just became ready may be ranked (port limit only).
    JoinWait = 4,
}

/// Frames counted on one port; every drop has a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortCounters {
    /// Information PDUs received.
    pub info_rx: u64,
    /// Information PDUs sent.
    pub info_tx: u64,
    /// Flush PDUs received (requests and responses).
    pub flush_rx: u64,
    /// Flush PDUs sent (requests and responses).
    pub flush_tx: u64,
    /// Frames dropped as malformed or not PAgP.
    pub bad_rx: u64,
    /// PAgP frames dropped because the port had no carrier.
    pub down_rx: u64,
    /// Flush PDUs dropped: not addressed to this device, or an answer to no
    /// outstanding request.
    pub flush_ignored: u64,
}

/// An outstanding Flush request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PendingFlush {
    pub transaction_id: u32,
}

/// One port of a [`super::System`].
#[derive(Debug, Clone)]
pub(super) struct Port {
    pub cfg: PortConfig,
    pub state: PortState,
    /// Carrier.
    pub enabled: bool,
    /// The partner's last Information PDU, while it is not aged out.
    pub partner: Option<InfoRepr>,
    /// Deadlines, indexed by [`Timer`].
    pub timers: [Option<Instant>; 5],
    /// A hello must go out at the next opportunity (state or advert changed).
    pub need_tx: bool,
    /// The consistent flag it sends: its place in or out of the channel is
    /// settled (set by the channel selection).
    pub consistent: bool,
    pub flush: Option<PendingFlush>,
    pub counters: PortCounters,
    /// Taken out by `remove_port`: down for good, its id never reused.
    pub removed: bool,
}

impl Port {
    pub fn new(cfg: PortConfig) -> Port {
        Port {
            cfg,
            state: PortState::Down,
            enabled: false,
            partner: None,
            timers: [None; 5],
            need_tx: false,
            consistent: false,
            flush: None,
            counters: PortCounters::default(),
            removed: false,
        }
    }

    pub fn timer(&self, t: Timer) -> Option<Instant> {
        self.timers[t as usize]
    }

    pub fn set_timer(&mut self, t: Timer, at: Option<Instant>) {
        self.timers[t as usize] = at;
    }

    pub fn expired(&self, t: Timer, now: Instant) -> bool {
        self.timer(t).is_some_and(|at| at <= now)
    }
}
