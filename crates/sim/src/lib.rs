//! A deterministic network of LACP or PAgP systems, stepped in virtual time.
//!
//! Systems are [`lagkit_proto::lacp::System`]s (the default) or, through
//! the [`Node`] trait, PAgP systems (see [`pagp`]); links join one port of one
//! system to one port of another, with a delay, a seeded loss probability,
//! and faults scheduled at chosen virtual times (cut and restore the cable,
//! black-hole the link while carrier stays up, drop the next N PDUs). Runs
//! are reproducible: the same inputs and seed give the same timeline.
//!
//! The loop is the classic discrete-event one: take the earliest of (a frame
//! arriving, a scheduled fault, a system's deadline), advance to it, feed it
//! in, and move every frame the systems want to send onto its link.

#![forbid(unsafe_code)]

pub mod fuzz;
pub mod pagp;

use lagkit_proto::lacp::{Event, PortConfig, System, SystemConfig};
use lagkit_proto::{Instant, PortId};
use lagkit_wire::MacAddr;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// A protocol system the simulator can step: LACP's and PAgP's sans-IO
/// cores both are one. The simulator only moves frames, carrier and time.
pub trait Node {
    /// What the system reports.
    type Event: Clone + core::fmt::Debug;
    /// Carrier of a port went up or down.
    fn set_port_enabled(&mut self, port: PortId, up: bool, now: Instant);
    /// A frame arrived on a port.
    fn handle_frame(&mut self, port: PortId, frame: &[u8], now: Instant);
    /// Deadlines up to `now` have passed.
    fn handle_timeout(&mut self, now: Instant);
    /// The earliest deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// The next frame to send, and its port.
    fn poll_transmit(&mut self) -> Option<(PortId, Vec<u8>)>;
    /// The next event.
    fn poll_event(&mut self) -> Option<(Instant, Self::Event)>;
}

/// Forwards [`Node`] to a system's inherent methods of the same names.
macro_rules! node {
    ($system:ty, $event:ty) => {
        impl Node for $system {
            type Event = $event;
            fn set_port_enabled(&mut self, port: PortId, up: bool, now: Instant) {
                <$system>::set_port_enabled(self, port, up, now)
            }
            fn handle_frame(&mut self, port: PortId, frame: &[u8], now: Instant) {
                <$system>::handle_frame(self, port, frame, now)
            }
            fn handle_timeout(&mut self, now: Instant) {
                <$system>::handle_timeout(self, now)
            }
            fn poll_timeout(&self) -> Option<Instant> {
                <$system>::poll_timeout(self)
            }
            fn poll_transmit(&mut self) -> Option<(PortId, Vec<u8>)> {
                <$system>::poll_transmit(self).map(|t| (t.port, t.frame))
            }
            fn poll_event(&mut self) -> Option<(Instant, $event)> {
                <$system>::poll_event(self)
            }
        }
    };
}

node!(System, Event);
node!(lagkit_proto::pagp::System, lagkit_proto::pagp::Event);

/// Two kinds of system in one simulation (a host bond's core and a
/// switch's, say): each end is one or the other, and its events keep their
/// own type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Either<A, B> {
    /// A system (or event) of the first kind.
    A(A),
    /// A system (or event) of the second kind.
    B(B),
}

impl<A, B> Either<A, B> {
    /// The system, if it is of the first kind.
    pub fn a(&self) -> Option<&A> {
        match self {
            Either::A(a) => Some(a),
            Either::B(_) => None,
        }
    }

    /// The system, if it is of the second kind.
    pub fn b(&self) -> Option<&B> {
        match self {
            Either::A(_) => None,
            Either::B(b) => Some(b),
        }
    }
}

impl<A: Node, B: Node> Node for Either<A, B> {
    type Event = Either<A::Event, B::Event>;
    fn set_port_enabled(&mut self, port: PortId, up: bool, now: Instant) {
        match self {
            Either::A(a) => a.set_port_enabled(port, up, now),
            Either::B(b) => b.set_port_enabled(port, up, now),
        }
    }
    fn handle_frame(&mut self, port: PortId, frame: &[u8], now: Instant) {
        match self {
            Either::A(a) => a.handle_frame(port, frame, now),
            Either::B(b) => b.handle_frame(port, frame, now),
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        match self {
            Either::A(a) => a.handle_timeout(now),
            Either::B(b) => b.handle_timeout(now),
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Either::A(a) => a.poll_timeout(),
            Either::B(b) => b.poll_timeout(),
        }
    }
    fn poll_transmit(&mut self) -> Option<(PortId, Vec<u8>)> {
        match self {
            Either::A(a) => a.poll_transmit(),
            Either::B(b) => b.poll_transmit(),
        }
    }
    fn poll_event(&mut self) -> Option<(Instant, Self::Event)> {
        match self {
            Either::A(a) => a.poll_event().map(|(t, e)| (t, Either::A(e))),
            Either::B(b) => b.poll_event().map(|(t, e)| (t, Either::B(e))),
        }
    }
}

/// Properties of one simulated link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    /// One-way delay.
    pub delay: Duration,
    /// Probability that a frame is lost, 0.0–1.0.
    pub loss: f64,
}

impl Default for LinkSpec {
    fn default() -> Self {
        LinkSpec {
            delay: Duration::from_micros(100),
            loss: 0.0,
        }
    }
}

/// A fault or repair applied to a link at a virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Cable pulled: carrier down at both ends, frames in flight lost.
    Cut,
    /// Cable back: carrier up at both ends.
    Restore,
    /// Carrier stays up but every frame is lost (a failed transceiver or a
    /// media converter): only LACP timeouts can notice.
    Blackhole,
    /// End of a black hole.
    Clear,
    /// Lose the next N frames sent from the first end (a) of the link.
    DropNextFromA(u32),
    /// Lose the next N frames sent from the second end (b) of the link.
    DropNextFromB(u32),
}

/// One end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct End {
    /// System index.
    pub system: usize,
    /// Port in that system.
    pub port: PortId,
}

#[derive(Debug, Clone)]
struct Link {
    ends: [End; 2],
    spec: LinkSpec,
    up: bool,
    blackhole: bool,
    drop_next: [u32; 2],
    /// Frames carried / lost, per direction (0 = a→b).
    carried: [u64; 2],
    lost: [u64; 2],
}

/// A timestamped event of one system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEntry<E = Event> {
    /// When it happened.
    pub at: Instant,
    /// Which system (index).
    pub system: usize,
    /// What happened.
    pub event: E,
}

/// A frame some system sent, as put on a link (or lost there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// When it was sent.
    pub at: Instant,
    /// The sender.
    pub from: End,
    /// The link index.
    pub link: usize,
    /// True if the link lost it.
    pub lost: bool,
    /// The Ethernet frame.
    pub frame: Vec<u8>,
}

/// A tiny seeded PRNG (SplitMix64). Hand-written because the simulator
/// needs only a reproducible stream of u64s, and a fixed algorithm keeps
/// timelines identical across dependency upgrades.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

type InFlight = Reverse<(Instant, u64, usize, usize, Vec<u8>)>;

/// The simulated network of LACP systems (the default) or PAgP systems.
#[derive(Debug)]
pub struct Sim<N: Node = System> {
    systems: Vec<N>,
    links: Vec<Link>,
    in_flight: BinaryHeap<InFlight>,
    faults: BinaryHeap<Reverse<(Instant, u64, usize, FaultKey)>>,
    now: Instant,
    seq: u64,
    rng: SplitMix64,
    timeline: Vec<TimelineEntry<N::Event>>,
    capture: Option<Vec<Captured>>,
    /// Frames delivered to systems in total.
    pub frames_delivered: u64,
}

/// `Fault` made orderable for the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct FaultKey(u8, u32);

impl FaultKey {
    fn from(f: Fault) -> FaultKey {
        match f {
            Fault::Cut => FaultKey(0, 0),
            Fault::Restore => FaultKey(1, 0),
            Fault::Blackhole => FaultKey(2, 0),
            Fault::Clear => FaultKey(3, 0),
            Fault::DropNextFromA(n) => FaultKey(4, n),
            Fault::DropNextFromB(n) => FaultKey(5, n),
        }
    }
    fn fault(self) -> Fault {
        match self.0 {
            0 => Fault::Cut,
            1 => Fault::Restore,
            2 => Fault::Blackhole,
            3 => Fault::Clear,
            4 => Fault::DropNextFromA(self.1),
            _ => Fault::DropNextFromB(self.1),
        }
    }
}

impl Sim {
    /// An empty network of LACP systems with a loss seed.
    pub fn new(seed: u64) -> Sim {
        Sim::with_seed(seed)
    }

    /// Two systems joined by `links` links, each with ports `p1..pN`
    /// configured by `port(n)`; links start up at time zero.
    pub fn pair(
        a: SystemConfig,
        b: SystemConfig,
        links: usize,
        spec: LinkSpec,
        mut port_a: impl FnMut(u16) -> PortConfig,
        mut port_b: impl FnMut(u16) -> PortConfig,
        seed: u64,
    ) -> Sim {
        let mut sim = Sim::new(seed);
        let sa = sim.add_system(a);
        let sb = sim.add_system(b);
        for n in 1..=links {
            let n = u16::try_from(n).unwrap_or(u16::MAX);
            let pa = sim.add_port(sa, port_a(n));
            let pb = sim.add_port(sb, port_b(n));
            sim.connect(
                End {
                    system: sa,
                    port: pa,
                },
                End {
                    system: sb,
                    port: pb,
                },
                spec,
            );
        }
        sim
    }

    /// Adds a system; returns its index.
    pub fn add_system(&mut self, cfg: SystemConfig) -> usize {
        self.systems.push(System::new(cfg));
        self.systems.len() - 1
    }

    /// Adds a port to a system.
    pub fn add_port(&mut self, system: usize, cfg: PortConfig) -> PortId {
        let now = self.now;
        let id = self.systems[system].add_port(cfg, now);
        self.drain(system);
        id
    }
}

impl<N: Node> Sim<N> {
    /// An empty network with a loss seed.
    pub fn with_seed(seed: u64) -> Sim<N> {
        Sim {
            systems: Vec::new(),
            links: Vec::new(),
            in_flight: BinaryHeap::new(),
            faults: BinaryHeap::new(),
            now: Instant::ZERO,
            seq: 0,
            rng: SplitMix64(seed),
            timeline: Vec::new(),
            capture: None,
            frames_delivered: 0,
        }
    }

    /// Adds a system built by the caller (its ports already added);
    /// returns its index.
    pub fn add_node(&mut self, node: N) -> usize {
        self.systems.push(node);
        self.systems.len() - 1
    }

    /// Joins two ports with a link that is up now; returns the link index.
    pub fn connect(&mut self, a: End, b: End, spec: LinkSpec) -> usize {
        self.links.push(Link {
            ends: [a, b],
            spec,
            up: false,
            blackhole: false,
            drop_next: [0, 0],
            carried: [0, 0],
            lost: [0, 0],
        });
        let l = self.links.len() - 1;
        self.apply(l, Fault::Restore);
        l
    }

    /// Schedules a fault on link `link` (0-based) at `at`.
    pub fn schedule(&mut self, at: Instant, link: usize, fault: Fault) {
        self.seq += 1;
        self.faults
            .push(Reverse((at, self.seq, link, FaultKey::from(fault))));
    }

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// A system.
    pub fn system(&self, i: usize) -> &N {
        &self.systems[i]
    }

    /// Changes a system mid-run (e.g. its System ID); whatever it sends as
    /// a result goes onto the links at once.
    pub fn update(&mut self, i: usize, f: impl FnOnce(&mut N, Instant)) {
        let now = self.now;
        f(&mut self.systems[i], now);
        self.drain(i);
    }

    /// Everything that happened so far.
    pub fn timeline(&self) -> &[TimelineEntry<N::Event>] {
        &self.timeline
    }

    /// Frames carried and lost on a link: ([a→b, b→a], [a→b, b→a]).
    pub fn link_counts(&self, link: usize) -> ([u64; 2], [u64; 2]) {
        let l = &self.links[link];
        (l.carried, l.lost)
    }

    /// Starts recording every frame sent (see [`Sim::captured`]).
    pub fn enable_capture(&mut self) {
        self.capture.get_or_insert_with(Vec::new);
    }

    /// Frames recorded since [`Sim::enable_capture`].
    pub fn captured(&self) -> &[Captured] {
        self.capture.as_deref().unwrap_or(&[])
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The ends of a link.
    pub fn link_ends(&self, link: usize) -> [End; 2] {
        self.links[link].ends
    }

    /// Applies a fault now.
    pub fn apply(&mut self, link: usize, fault: Fault) {
        let Some(l) = self.links.get_mut(link) else {
            return;
        };
        let ends = l.ends;
        match fault {
            Fault::Cut | Fault::Restore => {
                let up = fault == Fault::Restore;
                l.up = up;
                if !up {
                    // Frames on the wire are lost with the cable.
                    let before = self.in_flight.len();
                    self.in_flight
                        .retain(|Reverse((_, _, ln, _, _))| *ln != link);
                    let lost = (before - self.in_flight.len()) as u64;
                    self.links[link].lost[0] += lost;
                }
                let now = self.now;
                for e in ends {
                    self.systems[e.system].set_port_enabled(e.port, up, now);
                    self.drain(e.system);
                }
            }
            Fault::Blackhole => l.blackhole = true,
            Fault::Clear => l.blackhole = false,
            Fault::DropNextFromA(n) => l.drop_next[0] += n,
            Fault::DropNextFromB(n) => l.drop_next[1] += n,
        }
    }

    /// Sends a raw frame into a system's port as if it arrived from the wire.
    pub fn inject(&mut self, system: usize, port: PortId, frame: &[u8]) {
        let now = self.now;
        self.systems[system].handle_frame(port, frame, now);
        self.drain(system);
    }

    /// Moves a system's outputs onto links and into the timeline.
    fn drain(&mut self, s: usize) {
        while let Some((at, event)) = self.systems[s].poll_event() {
            self.timeline.push(TimelineEntry {
                at,
                system: s,
                event,
            });
        }
        while let Some((port, frame)) = self.systems[s].poll_transmit() {
            let here = End { system: s, port };
            let Some((li, dir)) = self
                .links
                .iter()
                .enumerate()
                .find_map(|(i, l)| l.ends.iter().position(|e| *e == here).map(|d| (i, d)))
            else {
                continue; // a port with no cable: the frame goes nowhere
            };
            let l = &mut self.links[li];
            if !l.up {
                continue;
            }
            let lose = if l.drop_next[dir] > 0 {
                l.drop_next[dir] -= 1;
                true
            } else {
                l.blackhole || (l.spec.loss > 0.0 && self.rng.next_f64() < l.spec.loss)
            };
            if let Some(cap) = self.capture.as_mut() {
                cap.push(Captured {
                    at: self.now,
                    from: here,
                    link: li,
                    lost: lose,
                    frame: frame.clone(),
                });
            }
            if lose {
                l.lost[dir] += 1;
                continue;
            }
            l.carried[dir] += 1;
            self.seq += 1;
            let at = self.now + l.spec.delay;
            self.in_flight.push(Reverse((at, self.seq, li, dir, frame)));
        }
    }

    /// The earliest thing that will happen, if any.
    fn next_time(&self) -> Option<Instant> {
        let frames = self.in_flight.peek().map(|Reverse((t, ..))| *t);
        let faults = self.faults.peek().map(|Reverse((t, ..))| *t);
        let timers = self.systems.iter().filter_map(N::poll_timeout).min();
        [frames, faults, timers].into_iter().flatten().min()
    }

    /// Runs until virtual time `until` (inclusive).
    pub fn run_until(&mut self, until: Instant) {
        while let Some(t) = self.next_time() {
            if t > until {
                break;
            }
            self.now = self.now.max(t);
            self.step_at(t);
        }
        self.now = self.now.max(until);
        for s in 0..self.systems.len() {
            let now = self.now;
            self.systems[s].handle_timeout(now);
            self.drain(s);
        }
    }

    /// Runs for a duration from now.
    pub fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        self.run_until(until);
    }

    /// Runs until `cond` holds or `deadline` passes; returns the time it
    /// first held (checked after every step).
    pub fn run_until_cond(
        &mut self,
        deadline: Instant,
        mut cond: impl FnMut(&Sim<N>) -> bool,
    ) -> Option<Instant> {
        if cond(self) {
            return Some(self.now);
        }
        while let Some(t) = self.next_time() {
            if t > deadline {
                break;
            }
            self.now = self.now.max(t);
            self.step_at(t);
            if cond(self) {
                return Some(self.now);
            }
        }
        self.now = self.now.max(deadline);
        None
    }

    fn step_at(&mut self, t: Instant) {
        // 1. Scheduled faults due now, in scheduling order.
        while let Some(Reverse((at, _, link, key))) = self.faults.peek().cloned() {
            if at > t {
                break;
            }
            self.faults.pop();
            self.apply(link, key.fault());
        }
        // 2. Frames arriving now, in send order.
        while let Some(Reverse((at, ..))) = self.in_flight.peek() {
            if *at > t {
                break;
            }
            let Some(Reverse((_, _, li, dir, frame))) = self.in_flight.pop() else {
                break;
            };
            let to = self.links[li].ends[1 - dir];
            self.frames_delivered += 1;
            self.systems[to.system].handle_frame(to.port, &frame, t);
            self.drain(to.system);
        }
        // 3. Deadlines due now.
        for s in 0..self.systems.len() {
            if self.systems[s].poll_timeout().is_some_and(|d| d <= t) {
                self.systems[s].handle_timeout(t);
                self.drain(s);
            }
        }
    }
}

/// A locally administered MAC for system `s`, port `p` (0 = the system itself).
pub fn mac(s: u8, p: u16) -> MacAddr {
    let [hi, lo] = p.to_be_bytes();
    MacAddr([0x02, 0x00, 0x5e, s, hi, lo])
}

/// Writes captured frames to a pcap file (Ethernet link type), with their
/// virtual send times as timestamps, so tshark or Wireshark can decode them.
pub fn write_pcap(path: &std::path::Path, frames: &[Captured]) -> std::io::Result<()> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::DataLink;
    let file = std::fs::File::create(path)?;
    let header = PcapHeader {
        datalink: DataLink::ETHERNET,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(file, header).map_err(std::io::Error::other)?;
    for c in frames {
        let len = u32::try_from(c.frame.len()).unwrap_or(u32::MAX);
        let pkt = PcapPacket::new(c.at.since_epoch(), len, &c.frame);
        w.write_packet(&pkt).map_err(std::io::Error::other)?;
    }
    Ok(())
}

/// An invariant a simulated system broke: where (the system, and the port
/// or aggregator) and what, with the state that shows it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {what}")]
pub struct InvariantViolation {
    /// The system's name, then the port's or `aggregator N`.
    pub at: String,
    /// The rule broken, and the state.
    pub what: String,
}

impl InvariantViolation {
    /// `what` broken at `at`.
    pub fn new(at: impl Into<String>, what: impl Into<String>) -> InvariantViolation {
        InvariantViolation {
            at: at.into(),
            what: what.into(),
        }
    }
}

/// Checks the invariants that must hold for every port and aggregator of a
/// system whenever it has settled. Used by tests and the fuzz targets.
pub fn check_invariants(sys: &System) -> Result<(), InvariantViolation> {
    use lagkit_proto::lacp::{MuxControl, MuxState, Selected};
    let cfg = sys.config();
    if sys.settle_overflows != 0 {
        return Err(InvariantViolation::new(
            &cfg.name,
            "machines did not settle",
        ));
    }
    for id in sys.port_ids() {
        let Some(p) = sys.port_status(id) else {
            continue;
        };
        let err = |what: &str| {
            Err(InvariantViolation::new(
                format!("{} {}", cfg.name, p.name),
                format!("{what}: {p:?}"),
            ))
        };
        if p.distributing {
            if !p.enabled {
                return err("distributing on a disabled port");
            }
            if p.selected != Selected::Selected {
                return err("distributing while not SELECTED");
            }
            if p.attached.is_none() {
                return err("distributing while not attached");
            }
            if !p.partner.state.in_sync() {
                return err("distributing while the partner is out of sync");
            }
            if cfg.mux_control == MuxControl::Coupled && !p.collecting {
                return err("coupled control distributing without collecting");
            }
        }
        if p.collecting && p.attached.is_none() {
            return err("collecting while not attached");
        }
        let attached_states = matches!(
            p.mux,
            MuxState::Attached
                | MuxState::Collecting
                | MuxState::Distributing
                | MuxState::CollectingDistributing
        );
        if p.actor.state.in_sync() != attached_states {
            return err("actor Synchronization bit disagrees with the mux state");
        }
        // The data plane sends as the Distributing bit says, except that a
        // coupled port waits for its partner's Collecting bit (when the
        // partner's information came from a LACPDU).
        let waits = p.mux == MuxState::CollectingDistributing
            && !p.partner.state.collecting()
            && !p.actor.state.defaulted();
        if p.actor.state.collecting() != p.collecting
            || p.actor.state.distributing() != (p.distributing || waits)
        {
            return err("actor Collecting/Distributing bits disagree with the data plane");
        }
        match p.selected {
            Selected::Unselected if p.mux != MuxState::Detached => {
                return err("UNSELECTED port not DETACHED after settling")
            }
            Selected::Standby if p.mux != MuxState::Waiting => {
                return err("STANDBY port not WAITING after settling")
            }
            _ => {}
        }
    }
    for a in sys.aggregators() {
        let at = || format!("{} aggregator {}", cfg.name, a.id);
        for m in &a.members {
            let p = sys
                .port_status(*m)
                .ok_or_else(|| InvariantViolation::new(at(), "member port missing"))?;
            if p.aggregator != Some(a.id) {
                return Err(InvariantViolation::new(
                    at(),
                    format!("member {} selected {:?}", p.name, p.aggregator),
                ));
            }
        }
        let n = a.distributing.len();
        if let Some(max) = cfg.max_bundle {
            if n > max.max(1) {
                return Err(InvariantViolation::new(
                    at(),
                    format!("{n} ports over max_bundle"),
                ));
            }
        }
        // min_links: if anything distributes, at least min_links ports of the
        // aggregate are SELECTED, attached and in sync with the partner.
        let ready: Vec<_> = a
            .members
            .iter()
            .filter_map(|m| sys.port_status(*m))
            .filter(|p| {
                p.selected == Selected::Selected
                    && p.attached == Some(a.id)
                    && p.partner.state.in_sync()
            })
            .collect();
        let fallback = ready.iter().any(|p| p.actor.state.defaulted())
            && cfg.no_partner == lagkit_proto::lacp::NoPartner::Fallback;
        if !a.individual && !fallback && n > 0 && ready.len() < cfg.min_links {
            return Err(InvariantViolation::new(
                at(),
                format!(
                    "{n} distributing with {} ready, below min_links: {a:?}",
                    ready.len()
                ),
            ));
        }
    }
    Ok(())
}
