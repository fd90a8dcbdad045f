//! The switch's decisions, sans-IO: the bridge, the port-channels and
//! their protocols (LACP, PAgP, `mode on`), the stand-alone and mismatch
//! rules, and what `show` reports of each member.
//!
//! [`Core`] holds no socket and reads no clock, like `lagkit-proto`'s
//! systems: the daemon (`lagkit-switchd`) passes each received frame to
//! [`Core::receive`] (and a control frame then to
//! [`Core::handle_control`]), each carrier change to
//! [`Core::handle_carrier`], and its monotonic time in nanoseconds to
//! [`Core::handle_timeout`] on every wake-up; it sends what
//! [`Core::poll_transmit`] gives and sleeps no longer than
//! [`Core::poll_timeout`]. So the same core runs against a bond in virtual
//! time in tests, with no root and no namespace.
//!
//! Port-channels: `mode on` bundles a member while its carrier is up (it
//! has no way to notice a link that fails silently; that is the point of
//! the protocols). `mode active|passive` runs LACP on the member with one
//! [`lacp::System`] for the switch and the channel number as the key; a
//! member is bundled while LACP says it is distributing. `mode
//! desirable|auto` runs PAgP with one [`pagp::System`] per channel (the
//! switch's device id in each); a member is bundled while PAgP has it in
//! the channel (joined, or attached after the silent wait), and PAgP
//! frames are never forwarded.

use crate::config::{ChannelSpec, SwitchConfig};
use crate::foreign::{Foreign, Protocol};
use crate::show::MemberFlag;
use crate::{Bridge, ChannelId, PortId, Verdict};
use lagkit_api::resume::{PagpRecord, PartnerRecord, PortRecord};
use lagkit_ios::ChannelMode;
use lagkit_proto::lacp::{self, Activity, Event, Rate, System};
use lagkit_proto::pagp;
use lagkit_wire::MacAddr;
use std::collections::{BTreeMap, VecDeque};

/// How often the MAC address table is aged.
pub const AGE_EVERY_NS: u64 = 1_000_000_000;
/// How often members are checked for standing alone: their protocols wait
/// seconds before giving a partner up, and the check reads each member's
/// protocol status, which the forwarding loop should not do per wake-up.
pub const STANDALONE_EVERY_NS: u64 = 100_000_000;
/// The system (and device) id of a switch without ports.
const NO_PORT_MAC: MacAddr = MacAddr([2, 0x6c, 0x6b, 0, 0, 1]);

/// Frames the control plane took, sent and did not use: the control
/// socket's type, counted here.
pub use lagkit_api::switch::ControlCounters;

/// A port as the daemon opened it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// The device's MAC (the first port's is the switch's system id).
    pub mac: MacAddr,
    /// Whether it has carrier now.
    pub carrier: bool,
}

/// Which protocol sent a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlProtocol {
    /// An LACPDU (or Marker Response).
    Lacp,
    /// A PAgP PDU.
    Pagp,
}

/// A control frame to send on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The port.
    pub port: PortId,
    /// The whole Ethernet frame.
    pub frame: Vec<u8>,
    /// Its protocol (for the counters).
    pub protocol: ControlProtocol,
}

/// An LACP port that cannot join a port-channel: its partner never spoke
/// LACP (DEFAULTED, and the switch's no-partner policy lets such a port
/// work alone), or says its port is Individual.
fn lacp_individual(st: &lacp::PortStatus) -> bool {
    st.rx == lacp::RxState::Defaulted
        || !st
            .partner
            .state
            .has(lagkit_wire::lacp::PortState::AGGREGATION)
}

fn t(now: u64) -> lagkit_proto::Instant {
    lagkit_proto::Instant::from_nanos(now)
}

/// One port's protocol state.
#[derive(Debug)]
struct Port {
    name: String,
    mac: MacAddr,
    carrier: bool,
    /// Its channel and mode, if it is a member.
    member: Option<(ChannelId, ChannelMode)>,
    /// Its LACP system (an index into `Core::lacp`) and port, for members
    /// of an LACP channel.
    lacp: Option<(usize, lacp::PortId)>,
    /// Its PAgP system (an index into `Core::pagp`) and port, for members
    /// of a PAgP channel.
    pagp: Option<(usize, pagp::PortId)>,
    /// Why it may not bundle (Cisco's `s`).
    suspended: Option<String>,
    /// A protocol the partner speaks that this port does not (`LACP` or
    /// `PAgP` heard on a `mode on` port, say): a misconfiguration, noted
    /// until that protocol falls silent.
    foreign: Foreign,
    /// Since when its PAgP has heard nothing, for stand-alone forwarding.
    quiet_since: Option<u64>,
    /// When it last received an LACPDU or Marker PDU: IOS's `Age` of the
    /// partner's information.
    lacp_heard: Option<u64>,
    /// When it last received a PAgP PDU.
    pagp_heard: Option<u64>,
    /// Its flag as last seen and since when (IOS's "Age of the port in
    /// the current state").
    flag: Option<(MemberFlag, u64)>,
}

/// A switch's decisions (see the module's documentation).
#[derive(Debug)]
pub struct Core {
    name: String,
    bridge: Bridge,
    channels: Vec<ChannelSpec>,
    method: String,
    adaptive: bool,
    ports: Vec<Port>,
    /// One LACP system per LACP channel (each with the switch's system
    /// id, so a partner sees one switch; each channel's own max-bundle and
    /// min-links).
    lacp: Vec<(ChannelId, System)>,
    /// One PAgP driver per PAgP channel (its system, and its gate holding
    /// joins until the Flushes they cause end).
    pagp: Vec<(ChannelId, pagp::Driver)>,
    next_age: u64,
    next_standalone: u64,
    counters: ControlCounters,
    /// `show running-config`, written when the switch started.
    running: String,
    /// The configuration as read (speed, duplex: `show interfaces status`).
    ios: lagkit_ios::Config,
    transmit: VecDeque<Transmit>,
}

impl Core {
    /// The name of the switch a configuration describes (`hostname`, or
    /// IOS's default `Switch`).
    pub fn name_of(cfg: &SwitchConfig) -> String {
        cfg.hostname.clone().unwrap_or_else(|| "Switch".to_string())
    }

    /// A switch of configuration `cfg` whose ports (in `cfg`'s port order)
    /// are `ports`, started at `now`: LACP and PAgP run on the members of
    /// their channels, and each port's carrier is applied.
    pub fn new(cfg: SwitchConfig, ports: &[PortInfo], now: u64) -> Core {
        Core::resume(cfg, ports, now, &[])
    }

    /// As [`Core::new`], for a switch that takes over the ports a previous
    /// run left forwarding: a port whose entry in `resume` records the LACP
    /// or PAgP partner it was bundled with, and whose carrier is up, carries
    /// on from there (in its channel at once, its first PDU the same as
    /// the last one before) instead of negotiating afresh, which the
    /// partner would see as the port leaving its channel.
    pub fn resume(cfg: SwitchConfig, ports: &[PortInfo], now: u64, resume: &[PortRecord]) -> Core {
        let name = Core::name_of(&cfg);
        let running = crate::running::running_config(&cfg);
        let suspended: BTreeMap<PortId, String> = cfg
            .suspended
            .iter()
            .map(|s| (s.port, s.why.clone()))
            .collect();
        let mut member: BTreeMap<PortId, (ChannelId, ChannelMode)> = BTreeMap::new();
        for spec in &cfg.channels {
            for &(p, mode) in &spec.members {
                member.insert(p, (spec.id, mode));
            }
        }
        let ports = ports
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let p = PortId(i);
                Port {
                    name: cfg
                        .bridge
                        .port(p)
                        .map_or_else(|| format!("port{i}"), |c| c.name.clone()),
                    mac: info.mac,
                    carrier: info.carrier,
                    member: member.get(&p).copied(),
                    lacp: None,
                    pagp: None,
                    suspended: suspended.get(&p).cloned(),
                    foreign: Foreign::default(),
                    quiet_since: None,
                    lacp_heard: None,
                    pagp_heard: None,
                    flag: None,
                }
            })
            .collect();
        let mut core = Core {
            adaptive: cfg.distribution == crate::Distribution::Adaptive,
            name,
            bridge: cfg.bridge,
            channels: cfg.channels,
            method: cfg.method,
            ports,
            lacp: Vec::new(),
            pagp: Vec::new(),
            next_age: now.saturating_add(AGE_EVERY_NS),
            next_standalone: now,
            counters: ControlCounters::default(),
            running,
            ios: cfg.ios,
            transmit: VecDeque::new(),
        };
        core.setup_lacp(resume, now);
        core.setup_pagp(resume, now);
        for i in 0..core.ports.len() {
            let up = core.ports[i].carrier;
            core.apply_carrier(i, up, now);
        }
        if resume.iter().any(|r| r.lacp.is_some() || r.pagp.is_some()) {
            // The resumed ports are bundled before the first plan.
            core.drain();
        }
        core
    }

    /// What a switch taking over this one's ports resumes from
    /// ([`Core::resume`]): per port, the LACP partner it is bundled with
    /// (collecting and distributing, the partner in sync and heard from),
    /// or the PAgP partner of a port in its channel.
    pub fn records(&self) -> Vec<PortRecord> {
        (0..self.ports.len())
            .map(|i| {
                let p = &self.ports[i];
                let lacp = p.lacp.and_then(|(s, id)| {
                    let st = self.lacp.get(s)?.1.port_status(id)?;
                    st.aggregated_partner().map(|p| PartnerRecord::of(&p))
                });
                let pagp = p.pagp.and_then(|(s, id)| {
                    PagpRecord::of(self.pagp.get(s)?.1.system().channel_partner(id)?)
                });
                PortRecord { lacp, pagp }
            })
            .collect()
    }

    /// The first port's MAC: the switch's LACP system and PAgP device id.
    fn system_mac(&self) -> MacAddr {
        self.ports.first().map_or(NO_PORT_MAC, |p| p.mac)
    }

    /// One LACP system per LACP channel (the switch's system id in each;
    /// the channel's max-bundle and min-links), one port per member, the
    /// channel number as its key.
    fn setup_lacp(&mut self, resume: &[PortRecord], now: u64) {
        let mac = self.system_mac();
        for spec in self.channels.iter().filter(|c| c.mode.protocol() == "lacp") {
            let mut cfg = lacp::SystemConfig::new(&self.name, mac);
            cfg.max_bundle = spec.max_bundle;
            cfg.min_links = spec.min_links;
            let mut sys = System::new(cfg);
            let s = self.lacp.len();
            for &(p, mode) in &spec.members {
                let i = p.0;
                let Some(port) = self.ports.get(i).filter(|p| p.suspended.is_none()) else {
                    continue;
                };
                let mut pc = lacp::PortConfig::new(&port.name, (i + 1) as u16, port.mac);
                pc.activity = if mode == ChannelMode::Active {
                    Activity::Active
                } else {
                    Activity::Passive
                };
                pc.rate = if spec.lacp_fast {
                    Rate::Fast
                } else {
                    Rate::Slow
                };
                pc.key = u16::try_from(spec.id.0).unwrap_or(u16::MAX);
                if let Some(v) = interface(&self.ios, &self.bridge, i)
                    .and_then(|x| x.lacp_port_priority.as_ref())
                {
                    pc.port_priority = v.value;
                }
                let id = match resume.get(i).and_then(|r| r.lacp) {
                    Some(r) if port.carrier => {
                        tracing::info!(switch = %self.name, port = %port.name, partner = %r.info().system, "resuming LACP where the previous switch left it");
                        sys.resume_port(pc, r.info(), t(now))
                    }
                    _ => sys.add_port(pc, t(now)),
                };
                self.ports[i].lacp = Some((s, id));
            }
            self.lacp.push((spec.id, sys));
        }
    }

    /// One PAgP system per channel with PAgP members (the switch's device
    /// id in each; the channel number as its group ifindex), one port per
    /// member, in the member's mode.
    fn setup_pagp(&mut self, resume: &[PortRecord], now: u64) {
        let device = self.system_mac();
        let mut ids: Vec<ChannelId> = Vec::new();
        for p in &self.ports {
            if let Some((ch, m)) = p.member {
                if m.protocol() == "pagp" && p.suspended.is_none() && !ids.contains(&ch) {
                    ids.push(ch);
                }
            }
        }
        for ch in ids {
            let mut cfg = pagp::SystemConfig::new(&self.name, device);
            cfg.group_ifindex = ch.0;
            let mut driver = pagp::Driver::new(cfg);
            let s = self.pagp.len();
            for i in 0..self.ports.len() {
                let p = &self.ports[i];
                let (mode, silent) = match p.member {
                    Some((c, ChannelMode::Desirable { silent })) if c == ch => {
                        (pagp::Mode::Desirable, silent)
                    }
                    Some((c, ChannelMode::Auto { silent })) if c == ch => {
                        (pagp::Mode::Auto, silent)
                    }
                    _ => continue,
                };
                if p.suspended.is_some() {
                    continue;
                }
                let mut pc = pagp::PortConfig::new(&p.name, (i + 1) as u32, p.mac);
                pc.mode = mode;
                pc.silence = if silent {
                    pagp::Silence::Silent
                } else {
                    pagp::Silence::NonSilent
                };
                if let Some(v) = interface(&self.ios, &self.bridge, i)
                    .and_then(|x| x.pagp_port_priority.as_ref())
                {
                    pc.port_priority = u8::try_from(v.value).unwrap_or(u8::MAX);
                }
                let recorded = resume.get(i).and_then(|r| r.pagp.as_ref()?.info());
                let id = match recorded {
                    Some(info) if p.carrier => {
                        tracing::info!(switch = %self.name, port = %p.name, partner = %info.local.device_id, "resuming PAgP where the previous switch left it");
                        driver.system_mut().resume_port(pc, info, t(now))
                    }
                    _ => driver.system_mut().add_port(pc, t(now)),
                };
                self.ports[i].pagp = Some((s, id));
            }
            self.pagp.push((ch, driver));
        }
    }

    /// A frame received on `port` at `now`, as the bridge judges it. A
    /// [`Verdict::Control`] frame goes next to [`Core::handle_control`]
    /// (after the batch it came in is forwarded, if the caller batches).
    /// `segment`: the payload size of each segment of a GSO frame.
    pub fn receive(
        &mut self,
        port: PortId,
        frame: &[u8],
        segment: Option<usize>,
        now: u64,
    ) -> Verdict {
        self.bridge.receive_segmented(port, frame, segment, now)
    }

    /// Hands a control frame port `i` received at `now` to its protocol,
    /// or notes a protocol the port does not run.
    pub fn handle_control(&mut self, port: PortId, f: &[u8], now: u64) {
        let i = port.0;
        let Some(p) = self.ports.get(i) else {
            return;
        };
        let configured = p.member.map(|(_, m)| m.protocol());
        let slow = f.get(12..14) == Some(&[0x88, 0x09][..]);
        match (slow, p.lacp, p.pagp) {
            (true, Some((s, lp)), _) => {
                self.counters.lacp_in += 1;
                self.ports[i].lacp_heard = Some(now);
                if let Some((_, sys)) = self.lacp.get_mut(s) {
                    sys.handle_frame(lp, f, t(now));
                }
            }
            (true, None, _) => {
                self.counters.slow_ignored += 1;
                // A suspended LACP member runs no LACP, but LACP is what it
                // is configured for: no mismatch.
                if configured != Some("lacp") {
                    self.heard_foreign(i, Protocol::Lacp, now);
                }
            }
            (false, _, Some((s, pp))) => {
                self.counters.pagp_in += 1;
                self.ports[i].pagp_heard = Some(now);
                if let Some(sys) = self.pagp.get_mut(s).map(|(_, d)| d.system_mut()) {
                    sys.handle_frame(pp, f, t(now));
                }
            }
            (false, _, None) => {
                self.counters.pagp_ignored += 1;
                let pagp = f.get(14..22).is_some_and(|h| {
                    h[..3] == lagkit_wire::pagp::LLC && h[3..] == lagkit_wire::pagp::SNAP
                });
                if pagp && configured != Some("pagp") {
                    self.heard_foreign(i, Protocol::Pagp, now);
                }
            }
        }
        self.drain();
    }

    /// Port `i` heard `protocol`, which it does not run, at `now`.
    fn heard_foreign(&mut self, i: usize, protocol: Protocol, now: u64) {
        let p = &mut self.ports[i];
        if p.foreign.heard(protocol, now) {
            let protocol = protocol.name();
            let mode = p.member.map_or("no channel-group".to_string(), |(c, m)| {
                format!("channel-group {} mode {m}", c.0)
            });
            tracing::warn!(switch = %self.name, port = %p.name, "the partner speaks {protocol} but this port runs {mode}: a mismatch");
        }
    }

    /// Port `i`'s mismatch note ended (`why`): logged once.
    fn foreign_ended(&self, i: usize, protocol: Protocol, why: &str) {
        let p = &self.ports[i];
        tracing::info!(switch = %self.name, port = %p.name, "the partner no longer speaks {} ({why}): mismatch cleared", protocol.name());
    }

    /// Why port `p` and its partner disagree, if they do (a note is
    /// dropped once its protocol has been silent for its hold time).
    pub fn mismatch(&self, p: PortId) -> Option<String> {
        let port = self.ports.get(p.0)?;
        let protocol = port.foreign.noted()?;
        let (fix, mode) = match (protocol, port.member) {
            (Protocol::Lacp, Some((c, m))) => (
                format!("channel-group {} mode active|passive", c.0),
                m.to_string(),
            ),
            (Protocol::Pagp, Some((c, m))) => (
                format!("channel-group {} mode desirable|auto", c.0),
                m.to_string(),
            ),
            (_, _) => (
                "a channel-group on this port".to_string(),
                "no channel-group".to_string(),
            ),
        };
        let protocol = protocol.name();
        Some(format!(
            "mismatch: the partner speaks {protocol}, this port runs mode {mode} (configure {fix}, or turn the partner's protocol off)"
        ))
    }

    /// Port `port`'s carrier is `up` at `now` (a change or not).
    pub fn handle_carrier(&mut self, port: PortId, up: bool, now: u64) {
        let Some(p) = self.ports.get(port.0) else {
            return;
        };
        if up != p.carrier {
            tracing::info!(switch = %self.name, port = %p.name, "link {}", if up { "up" } else { "down" });
            self.apply_carrier(port.0, up, now);
            self.drain();
        }
    }

    /// Port `i`'s carrier is `up`: `on` members bundle or leave at once,
    /// LACP and PAgP members tell their protocol (port_enabled).
    fn apply_carrier(&mut self, i: usize, up: bool, now: u64) {
        self.ports[i].carrier = up;
        if !up {
            if let Some(gone) = self.ports[i].foreign.forget() {
                self.foreign_ended(i, gone, "carrier lost");
            }
        }
        let enabled = self.bridge.port(PortId(i)).is_some_and(|c| c.enabled);
        let p = &self.ports[i];
        match p.member {
            Some((_, ChannelMode::On)) => {
                let bundle = up && enabled && p.suspended.is_none();
                self.set_bundled(i, bundle);
            }
            Some(_) => {
                if let Some((s, lp)) = p.lacp {
                    if let Some((_, sys)) = self.lacp.get_mut(s) {
                        sys.set_port_enabled(lp, up && enabled, t(now));
                    }
                }
                if let Some((s, pp)) = p.pagp {
                    if let Some(sys) = self.pagp.get_mut(s).map(|(_, d)| d.system_mut()) {
                        sys.set_port_enabled(pp, up && enabled, t(now));
                    }
                }
            }
            None => {}
        }
    }

    fn set_bundled(&mut self, i: usize, up: bool) {
        let was = self
            .bridge
            .channel(self.ch(i))
            .is_some_and(|c| c.is_bundled(PortId(i)));
        if was != up {
            let moved = self.bridge.set_bundled(PortId(i), up);
            tracing::info!(switch = %self.name, port = %self.ports[i].name, channel = self.ch(i).0, buckets_moved = moved.len(), "member {}", if up { "bundled" } else { "unbundled" });
        }
    }

    fn ch(&self, i: usize) -> ChannelId {
        self.ports[i].member.map_or(ChannelId(0), |(c, _)| c)
    }

    /// Runs what is due at `now`: the protocols' timers, then the
    /// stand-alone check and the MAC table's aging at their intervals.
    /// Call it on every wake-up (it also collects what frames and carrier
    /// changes made the protocols do).
    pub fn handle_timeout(&mut self, now: u64) {
        for (_, sys) in &mut self.lacp {
            if sys.poll_timeout().is_some_and(|d| d <= t(now)) {
                sys.handle_timeout(t(now));
            }
        }
        for sys in self.pagp.iter_mut().map(|(_, d)| d.system_mut()) {
            if sys.poll_timeout().is_some_and(|d| d <= t(now)) {
                sys.handle_timeout(t(now));
            }
        }
        self.drain();
        if now >= self.next_standalone {
            self.next_standalone = now + STANDALONE_EVERY_NS;
            self.standalone_step(now);
        }
        if now >= self.next_age {
            self.next_age = now + AGE_EVERY_NS;
            self.bridge.age(now);
        }
    }

    /// The next time [`Core::handle_timeout`] has something to do.
    pub fn poll_timeout(&self) -> u64 {
        let lacp = self.lacp.iter().filter_map(|(_, s)| s.poll_timeout());
        let pagp = self
            .pagp
            .iter()
            .filter_map(|(_, d)| d.system().poll_timeout());
        lacp.chain(pagp)
            .map(|d| d.as_nanos())
            .chain([self.next_standalone, self.next_age])
            .min()
            .unwrap_or(self.next_age)
    }

    /// The next control frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmit.pop_front()
    }

    /// The daemon sent `tx` (counted as sent on its port).
    pub fn transmitted(&mut self, tx: &Transmit) {
        match tx.protocol {
            ControlProtocol::Lacp => self.counters.lacp_out += 1,
            ControlProtocol::Pagp => self.counters.pagp_out += 1,
        }
        self.bridge.count_sent(tx.port, &tx.frame);
    }

    /// Takes what the protocols sent and decided: their frames to the
    /// transmit queue, their (un)bundling to the bridge.
    fn drain(&mut self) {
        self.drain_lacp();
        self.drain_pagp();
    }

    fn drain_lacp(&mut self) {
        let mut changes = Vec::new();
        for (s, (_, sys)) in self.lacp.iter_mut().enumerate() {
            while let Some(tx) = sys.poll_transmit() {
                if let Some(i) = self.ports.iter().position(|p| p.lacp == Some((s, tx.port))) {
                    self.transmit.push_back(Transmit {
                        port: PortId(i),
                        frame: tx.frame,
                        protocol: ControlProtocol::Lacp,
                    });
                }
            }
            while let Some((_, ev)) = sys.poll_event() {
                match ev {
                    Event::Transition { line, .. } => tracing::info!("{line}"),
                    Event::Distribution {
                        port, distributing, ..
                    } => changes.push((s, port, distributing)),
                    Event::Aggregator { .. } => {}
                }
            }
        }
        for (s, lp, distributing) in changes {
            if let Some(i) = self.ports.iter().position(|p| p.lacp == Some((s, lp))) {
                // An individual port distributes on an aggregator of its
                // own; it is no member of the port-channel, it stands
                // alone (`standalone_step`).
                let individual = self.lacp[s]
                    .1
                    .port_status(lp)
                    .is_some_and(|st| lacp_individual(&st));
                self.set_bundled(i, distributing && !individual);
            }
        }
    }

    fn drain_pagp(&mut self) {
        let mut changes = Vec::new();
        for (s, (_, driver)) in self.pagp.iter_mut().enumerate() {
            // A member that joins carries traffic once the Flushes on the
            // members whose flows move to it are answered.
            let poll = driver.poll();
            for tx in poll.transmit {
                if let Some(i) = self.ports.iter().position(|p| p.pagp == Some((s, tx.port))) {
                    self.transmit.push_back(Transmit {
                        port: PortId(i),
                        frame: tx.frame,
                        protocol: ControlProtocol::Pagp,
                    });
                }
            }
            for t in poll.transitions {
                tracing::info!(switch = %self.name, port = %t.name, "PAgP {} -> {} ({})", t.from.name(), t.to.name(), t.why);
            }
            changes.extend(poll.gates.into_iter().map(|g| (s, g.port, g.carries)));
        }
        for (s, port, up) in changes {
            if let Some(i) = self.ports.iter().position(|p| p.pagp == Some((s, port))) {
                self.set_bundled(i, up);
            }
        }
    }

    /// Members whose protocol heard no partner forward on their own, as a
    /// Catalyst's stand-alone (`I`) ports do: an LACP member once it
    /// defaults (no LACPDU within the timeout), a PAgP member that heard no
    /// PAgP for the silent wait and will not attach without it (non-silent,
    /// or auto). A silent desirable member attaches to the channel instead;
    /// `mode on` members follow carrier. Hearing the protocol, losing
    /// carrier or bundling ends it.
    fn standalone_step(&mut self, now: u64) {
        let wait = pagp::Timers::default().silent_wait.as_nanos() as u64;
        for i in 0..self.ports.len() {
            if let Some(gone) = self.ports[i].foreign.expire(now) {
                self.foreign_ended(i, gone, "none heard for its hold time");
            }
            let p = &self.ports[i];
            let usable = p.carrier
                && p.suspended.is_none()
                && self.bridge.port(PortId(i)).is_some_and(|c| c.enabled)
                && !self
                    .bridge
                    .channel(self.ch(i))
                    .is_some_and(|c| c.is_bundled(PortId(i)));
            let mut quiet_since = None;
            let alone = usable
                && match p.member {
                    Some((
                        _,
                        ChannelMode::Desirable { silent: false } | ChannelMode::Auto { .. },
                    )) => {
                        let st = p
                            .pagp
                            .and_then(|(s, id)| self.pagp.get(s)?.1.system().port_status(id));
                        if st.is_some_and(|st| st.state == pagp::PortState::Up) {
                            let since = p.quiet_since.unwrap_or(now);
                            quiet_since = Some(since);
                            now.saturating_sub(since) >= wait
                        } else {
                            false
                        }
                    }
                    Some((_, ChannelMode::Active | ChannelMode::Passive)) => p
                        .lacp
                        .and_then(|(s, lp)| self.lacp.get(s)?.1.port_status(lp))
                        .is_some_and(|st| lacp_individual(&st) && st.distributing),
                    _ => false,
                };
            self.ports[i].quiet_since = quiet_since;
            if self.ports[i].member.is_some() {
                let f = self.member_flag(PortId(i)).0;
                if self.ports[i].flag.map(|(g, _)| g) != Some(f) {
                    self.ports[i].flag = Some((f, now));
                }
            }
            if alone != self.bridge.is_standalone(PortId(i)) {
                self.bridge.set_standalone(PortId(i), alone);
                tracing::info!(switch = %self.name, port = %self.ports[i].name, channel = self.ch(i).0, "member {}", if alone { "stand-alone: no partner heard, forwarding on its own" } else { "no longer stand-alone" });
            }
        }
    }

    /// A member's flag in `show etherchannel summary`, and why.
    pub fn member_flag(&self, port: PortId) -> (MemberFlag, String) {
        let i = port.0;
        let Some(p) = self.ports.get(i) else {
            return (MemberFlag::Down, "no such port".into());
        };
        if let Some(why) = &p.suspended {
            return (MemberFlag::Suspended, why.clone());
        }
        let enabled = self.bridge.port(port).is_some_and(|c| c.enabled);
        if !enabled {
            return (MemberFlag::Down, "shutdown".into());
        }
        if !p.carrier {
            return (MemberFlag::Down, "no carrier".into());
        }
        if self
            .bridge
            .channel(self.ch(i))
            .is_some_and(|c| c.is_bundled(port))
        {
            return (MemberFlag::Bundled, "bundled".into());
        }
        if self.bridge.is_standalone(port) {
            let heard = match p.member.map(|(_, m)| m.protocol()) {
                Some("lacp") => "no LACPDU heard (defaulted) or the partner's port is individual",
                _ => "no PAgP heard",
            };
            return (
                MemberFlag::Individual,
                format!("stand-alone: {heard}; forwards on its own"),
            );
        }
        match p.member.map(|(_, m)| m.protocol()) {
            Some("pagp") => match self.pagp_status(port) {
                Some(st) if st.state == pagp::PortState::HotStandby => {
                    (MemberFlag::HotStandby, "PAgP hot standby".into())
                }
                Some(st) => (
                    MemberFlag::Waiting,
                    match st.partner_device {
                        Some(d) => format!("PAgP {} with partner {d}", st.state.name()),
                        None => format!("PAgP {}: no PAgP heard", st.state.name()),
                    },
                ),
                None => (MemberFlag::Suspended, "no PAgP port".into()),
            },
            Some("lacp") => {
                let min_links = self
                    .channels
                    .iter()
                    .find(|c| Some(c.id) == p.member.map(|m| m.0))
                    .map_or(0, |c| c.min_links);
                let bundled = self
                    .bridge
                    .channel(self.ch(i))
                    .map_or(0, |c| c.bundled().count());
                match self.lacp_status(port) {
                    Some(st) if st.selected == lacp::Selected::Standby && bundled < min_links => (
                        MemberFlag::Waiting,
                        format!("fewer than min-links {min_links} members can bundle"),
                    ),
                    Some(st) if st.selected == lacp::Selected::Standby => (
                        MemberFlag::HotStandby,
                        "hot standby (beyond lacp max-bundle)".into(),
                    ),
                    Some(st) if st.rx == lacp::RxState::Defaulted => (
                        MemberFlag::Suspended,
                        "partner never spoke LACP (defaulted)".into(),
                    ),
                    Some(st) => (
                        MemberFlag::Waiting,
                        st.not_bundled_reason().unwrap_or_default(),
                    ),
                    None => (MemberFlag::Waiting, String::new()),
                }
            }
            _ => (MemberFlag::Waiting, "waiting".into()),
        }
    }
}

/// Port `i`'s interface as the configuration wrote it.
fn interface<'a>(
    ios: &'a lagkit_ios::Config,
    bridge: &Bridge,
    i: usize,
) -> Option<&'a lagkit_ios::Interface> {
    let name = bridge.port(PortId(i))?.name.as_str();
    ios.interfaces.iter().find(|x| x.name == name)
}

/// What `show` and the metrics read of the switch.
impl Core {
    /// The forwarding core.
    pub fn bridge(&self) -> &Bridge {
        &self.bridge
    }

    /// Under an engine that forwards outside the core (the kernel's), what
    /// it counted on port `p` since the last call: added to the port's
    /// counters, which every `show` and the metrics read.
    pub fn add_forwarded_counts(&mut self, p: PortId, c: &crate::bridge::PortCounters) {
        self.bridge.add_counts(p, c);
    }

    /// Under such an engine, its address table and counts, copied into the
    /// core's for `show mac address-table` ([`crate::fdb::Fdb::mirror`]).
    pub fn mirror_addresses(
        &mut self,
        entries: impl IntoIterator<Item = (crate::VlanId, [u8; 6], crate::Logical, u64)>,
        moves: u64,
        refused: u64,
    ) {
        self.bridge.fdb_mut().mirror(entries, moves, refused);
    }
    /// The port-channels as configured.
    pub fn channels(&self) -> &[ChannelSpec] {
        &self.channels
    }
    /// The load-balance method (`src-dst-ip`).
    pub fn method(&self) -> &str {
        &self.method
    }
    /// Whether channels rebalance by load (`port-channel load-balance
    /// ... adaptive`).
    pub fn adaptive(&self) -> bool {
        self.adaptive
    }
    /// The switch's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Port `p`'s interface name.
    pub fn port_name(&self, p: PortId) -> &str {
        self.ports.get(p.0).map_or("", |x| x.name.as_str())
    }
    /// The number of ports.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }
    /// The configuration as read.
    pub fn ios(&self) -> &lagkit_ios::Config {
        &self.ios
    }
    /// Whether port `p` has carrier.
    pub fn carrier(&self, p: PortId) -> bool {
        self.ports.get(p.0).is_some_and(|x| x.carrier)
    }
    /// `show running-config`.
    pub fn running_config(&self) -> &str {
        &self.running
    }
    /// Seconds since port `p` last received LACP (or PAgP) at `now`.
    pub fn heard_age(&self, p: PortId, now: u64, lacp: bool) -> Option<u64> {
        let port = self.ports.get(p.0)?;
        let at = if lacp {
            port.lacp_heard
        } else {
            port.pagp_heard
        }?;
        Some(now.saturating_sub(at) / 1_000_000_000)
    }
    /// Since when (ns) port `p` has had its current flag.
    pub fn flag_since(&self, p: PortId) -> Option<u64> {
        self.ports.get(p.0)?.flag.map(|(_, t)| t)
    }
    /// The LACP system id the switch sends (one for every channel).
    pub fn lacp_system(&self) -> lagkit_wire::SystemId {
        match self.lacp.first() {
            Some((_, s)) => s.system_id(),
            None => lacp::SystemConfig::new(&self.name, self.system_mac()).system,
        }
    }
    /// The PAgP system of channel `id`'s members, if it runs PAgP.
    pub fn pagp_system(&self, id: ChannelId) -> Option<&pagp::System> {
        self.pagp
            .iter()
            .find(|(c, _)| *c == id)
            .map(|(_, d)| d.system())
    }
    /// The control plane's frame counters.
    pub fn control_counters(&self) -> ControlCounters {
        self.counters
    }
    /// The flags of channel `spec`'s members, in its order.
    pub fn flags(&self, spec: &ChannelSpec) -> Vec<(MemberFlag, String)> {
        spec.members
            .iter()
            .map(|(p, _)| self.member_flag(*p))
            .collect()
    }
    /// LACP's view of port `p`, if it runs LACP.
    pub fn lacp_status(&self, p: PortId) -> Option<lacp::PortStatus> {
        let (s, lp) = self.ports.get(p.0)?.lacp?;
        self.lacp.get(s)?.1.port_status(lp)
    }
    /// PAgP's view of port `p`, if it runs PAgP.
    pub fn pagp_status(&self, p: PortId) -> Option<pagp::PortStatus> {
        let (s, pp) = self.ports.get(p.0)?.pagp?;
        self.pagp.get(s)?.1.system().port_status(pp)
    }
}
