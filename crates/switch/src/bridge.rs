//! The forwarding decision for one frame.
//!
//! The Ethernet and 802.1Q headers are read by hand: 14 or 18 fixed bytes
//! whose only fields of interest are two addresses, the EtherType and the
//! VLAN id; the flow key for a channel's hash comes from `lagkit_hash`.

use crate::channel::{Channel, Distribution};
use crate::fdb::{Fdb, Learned, DEFAULT_AGING_NS};
use crate::police::{LearnLimiter, StormMeter, LEARN_PER_SECOND};
use crate::vlan::{PortMode, VlanId};
use crate::{ChannelId, Logical, PortId};
use lagkit_hash::{FlowKey, Policy};
use lagkit_ios::{StormClass, StormControl};
use std::collections::BTreeMap;

/// The slow-protocols multicast address (LACP, Marker).
pub const SLOW_PROTOCOLS: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x02];
/// Cisco's multicast address (PAgP, CDP, DTP, VTP).
pub const CISCO_MULTICAST: [u8; 6] = [0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc];
const TPID: u16 = 0x8100;
/// How many addresses the table holds.
pub const FDB_LIMIT: usize = 16_384;

/// One port's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// Its name (`GigabitEthernet8/4`, or the veth it drives).
    pub name: String,
    /// VLAN membership.
    pub mode: PortMode,
    /// The largest payload (IP packet) it takes and sends, bytes.
    pub mtu: u32,
    /// `no shutdown`.
    pub enabled: bool,
}

impl PortConfig {
    /// An enabled access port in VLAN 1 with MTU 1500.
    pub fn new(name: &str) -> PortConfig {
        PortConfig {
            name: name.to_string(),
            mode: PortMode::default(),
            mtu: 1500,
            enabled: true,
        }
    }
}

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum DropReason {
    /// The port is shut down.
    Disabled,
    /// A data frame on a channel member that is not bundled.
    NotBundled,
    /// Shorter than an Ethernet (or 802.1Q) header.
    Runt,
    /// Larger than the port's MTU (Cisco's "giants").
    Giant,
    /// A tagged frame on an access port.
    TaggedOnAccess,
    /// A VLAN the trunk does not allow.
    VlanNotAllowed,
    /// An IEEE link-local address (STP, LLDP, pause, 802.1X), never
    /// forwarded.
    LinkLocal,
    /// The destination lives on the port or channel the frame came from.
    SamePort,
    /// Nowhere to send it (no other port in the VLAN, or the destination's
    /// port cannot take it).
    NoPath,
    /// Over the port's `storm-control` level for its class this interval.
    StormControl,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 10] = [
        DropReason::Disabled,
        DropReason::NotBundled,
        DropReason::Runt,
        DropReason::Giant,
        DropReason::TaggedOnAccess,
        DropReason::VlanNotAllowed,
        DropReason::LinkLocal,
        DropReason::SamePort,
        DropReason::NoPath,
        DropReason::StormControl,
    ];

    fn index(self) -> usize {
        DropReason::ALL.iter().position(|&r| r == self).unwrap_or(0)
    }
}

/// One copy of a frame to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Egress {
    /// The port.
    pub port: PortId,
    /// Its 802.1Q tag on the way out (`None`: untagged).
    pub tag: Option<VlanId>,
}

/// What to do with a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A control frame (LACP, Marker, PAgP, CDP) for the port's control
    /// plane; never forwarded.
    Control,
    /// Send these copies ([`Bridge::frame_for`] makes each one's bytes).
    Forward {
        /// The frame's VLAN.
        vlan: VlanId,
        /// Where.
        egress: Vec<Egress>,
        /// Flooded (unknown unicast, broadcast, multicast) rather than
        /// sent to a learned address.
        flooded: bool,
    },
    /// Dropped and counted.
    Drop(DropReason),
}

/// One port's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PortCounters {
    /// Frames received (all, before any drop).
    pub rx_frames: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Control frames passed to the control plane.
    pub control: u64,
    /// Frames sent as flood copies.
    pub flooded: u64,
    /// Frames not sent because they exceed this port's MTU.
    pub tx_too_big: u64,
    /// Received frames dropped, by [`DropReason::ALL`] order.
    pub drops: [u64; 10],
    /// Received frames storm control dropped, by class (`ucast`:
    /// `storm-control unicast`, ...); their sum is the
    /// [`DropReason::StormControl`] count.
    pub storm_drops: Cast,
    /// Frames from a new source address that was not learnt because the
    /// port had spent its learning rate for the moment (the frames were
    /// forwarded all the same).
    pub learn_limited: u64,
    /// Frames from a new source address that was not learnt because the
    /// MAC address table was full (forwarded all the same).
    pub learn_full: u64,
    /// Received frames by destination: unicast, multicast, broadcast
    /// (IOS's InUcastPkts, InMcastPkts, InBcastPkts; control frames count
    /// as multicast, as on a Catalyst).
    pub rx_cast: Cast,
    /// Sent frames by destination (OutUcastPkts, OutMcastPkts,
    /// OutBcastPkts), the control plane's own among them.
    pub tx_cast: Cast,
    /// Frames the port's control plane sent (LACPDUs, PAgP hellos): not
    /// in `tx_frames`, which counts what the bridge forwarded.
    pub control_tx: u64,
    /// Their bytes.
    pub control_tx_bytes: u64,
}

/// Frames counted by their destination address's kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Cast {
    /// To one station.
    pub ucast: u64,
    /// To a group (not broadcast).
    pub mcast: u64,
    /// To ff:ff:ff:ff:ff:ff.
    pub bcast: u64,
}

impl Cast {
    /// Counts a frame to `dst`.
    pub fn count(&mut self, dst: &[u8]) {
        if dst.len() < 6 || dst[0] & 1 == 0 {
            self.ucast += 1;
        } else if dst[..6] == [0xff; 6] {
            self.bcast += 1;
        } else {
            self.mcast += 1;
        }
    }

    fn add(&mut self, o: &Cast) {
        self.ucast += o.ucast;
        self.mcast += o.mcast;
        self.bcast += o.bcast;
    }
}

impl PortCounters {
    /// Received frames dropped for `r`.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.drops[r.index()]
    }

    fn add(&mut self, o: &PortCounters) {
        self.rx_frames += o.rx_frames;
        self.rx_bytes += o.rx_bytes;
        self.tx_frames += o.tx_frames;
        self.tx_bytes += o.tx_bytes;
        self.control += o.control;
        self.flooded += o.flooded;
        self.tx_too_big += o.tx_too_big;
        self.control_tx += o.control_tx;
        self.control_tx_bytes += o.control_tx_bytes;
        self.rx_cast.add(&o.rx_cast);
        self.tx_cast.add(&o.tx_cast);
        self.storm_drops.add(&o.storm_drops);
        self.learn_limited += o.learn_limited;
        self.learn_full += o.learn_full;
        for (a, b) in self.drops.iter_mut().zip(o.drops) {
            *a += b;
        }
    }
}

#[derive(Clone, Debug)]
struct Port {
    cfg: PortConfig,
    channel: Option<ChannelId>,
    /// A channel member that forwards on its own (Cisco's `I`): its
    /// protocol heard no partner, so it is an ordinary port until it
    /// bundles.
    standalone: bool,
    counters: PortCounters,
    /// Storm-control meters, by [`StormClass::ALL`] order.
    storm: [Option<StormMeter>; 3],
    /// New addresses it may still teach the table.
    learn: LearnLimiter,
}

/// The switch's forwarding state.
#[derive(Clone, Debug)]
pub struct Bridge {
    ports: Vec<Port>,
    channels: BTreeMap<ChannelId, Channel>,
    policy: Policy,
    fdb: Fdb,
}

/// The headers of a frame.
struct Headers {
    dst: [u8; 6],
    src: [u8; 6],
    tag: Option<VlanId>,
    /// Bytes after the Ethernet (and 802.1Q) header.
    payload: usize,
}

fn headers(frame: &[u8]) -> Option<Headers> {
    let mac = |at: usize| -> Option<[u8; 6]> { frame.get(at..at + 6)?.try_into().ok() };
    let (dst, src) = (mac(0)?, mac(6)?);
    let word = |at: usize| Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?));
    if word(12)? == TPID {
        let tci = word(14)?;
        word(16)?;
        Some(Headers {
            dst,
            src,
            tag: Some(tci & 0x0fff),
            payload: frame.len() - 18,
        })
    } else {
        Some(Headers {
            dst,
            src,
            tag: None,
            payload: frame.len() - 14,
        })
    }
}

/// Why a port-channel cannot be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelError {
    /// The channel exists.
    Exists(ChannelId),
    /// A member is no port of this bridge.
    NoPort(PortId),
    /// A member is already in another channel.
    InAnother {
        /// The port's name.
        port: String,
        /// The channel it is in.
        channel: ChannelId,
    },
}

impl std::fmt::Display for ChannelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelError::Exists(id) => write!(f, "port-channel {} exists", id.0),
            ChannelError::NoPort(p) => write!(f, "no port {}", p.0),
            ChannelError::InAnother { port, channel } => {
                write!(f, "{port} is already in port-channel {}", channel.0)
            }
        }
    }
}

impl std::error::Error for ChannelError {}

impl Bridge {
    /// A switch without ports, distributing over channels with `policy`
    /// (`port-channel load-balance`).
    pub fn new(policy: Policy) -> Bridge {
        Bridge {
            ports: Vec::new(),
            channels: BTreeMap::new(),
            policy,
            fdb: Fdb::new(DEFAULT_AGING_NS, FDB_LIMIT),
        }
    }

    /// A bridge whose address table holds at most `limit` addresses
    /// (default [`FDB_LIMIT`]).
    pub fn with_fdb_limit(policy: Policy, limit: usize) -> Bridge {
        Bridge {
            fdb: Fdb::new(DEFAULT_AGING_NS, limit),
            ..Bridge::new(policy)
        }
    }

    /// Adds a port.
    pub fn add_port(&mut self, cfg: PortConfig) -> PortId {
        self.ports.push(Port {
            cfg,
            channel: None,
            standalone: false,
            counters: PortCounters::default(),
            storm: [None, None, None],
            learn: LearnLimiter::new(LEARN_PER_SECOND),
        });
        PortId(self.ports.len() - 1)
    }

    /// Adds port-channel `id` of `members`, none bundled yet. Refused when
    /// the channel exists, a member is unknown, or already in a channel.
    pub fn add_channel(
        &mut self,
        id: ChannelId,
        members: Vec<PortId>,
        distribution: Distribution,
    ) -> Result<(), ChannelError> {
        if self.channels.contains_key(&id) {
            return Err(ChannelError::Exists(id));
        }
        for &m in &members {
            let p = self.ports.get(m.0).ok_or(ChannelError::NoPort(m))?;
            if let Some(c) = p.channel {
                return Err(ChannelError::InAnother {
                    port: p.cfg.name.clone(),
                    channel: c,
                });
            }
        }
        for &m in &members {
            self.ports[m.0].channel = Some(id);
            self.fdb.flush(Logical::Port(m));
        }
        self.channels
            .insert(id, Channel::new(members, distribution));
        Ok(())
    }

    /// Bundles or unbundles a channel member (its protocol agreed or gave
    /// up, or `mode on` and carrier); returns the buckets that moved.
    /// Bundling ends a member's stand-alone forwarding.
    pub fn set_bundled(&mut self, p: PortId, up: bool) -> Vec<usize> {
        let Some(id) = self.ports.get(p.0).and_then(|x| x.channel) else {
            return Vec::new();
        };
        if up {
            self.set_standalone(p, false);
        }
        let moved = self
            .channels
            .get_mut(&id)
            .map(|c| c.set_bundled(p, up))
            .unwrap_or_default();
        if self
            .channel(id)
            .is_some_and(|c| c.bundled().next().is_none())
        {
            self.fdb.flush(Logical::Channel(id));
        }
        moved
    }

    /// Makes a channel member that is not bundled forward on its own, as
    /// an ordinary port (Cisco's stand-alone `I`: its LACP or PAgP heard no
    /// partner), or stop doing so. Addresses it learned are forgotten either
    /// way. A bundled member, or a port in no channel, is left as it is.
    pub fn set_standalone(&mut self, p: PortId, on: bool) {
        let Some(port) = self.ports.get(p.0) else {
            return;
        };
        let Some(id) = port.channel else {
            return;
        };
        if port.standalone == on || (on && self.channels.get(&id).is_some_and(|c| c.is_bundled(p)))
        {
            return;
        }
        self.ports[p.0].standalone = on;
        self.fdb.flush(Logical::Port(p));
    }

    /// Whether a channel member forwards on its own ([`Bridge::set_standalone`]).
    pub fn is_standalone(&self, p: PortId) -> bool {
        self.ports.get(p.0).is_some_and(|x| x.standalone)
    }

    /// `shutdown` / `no shutdown`.
    pub fn set_enabled(&mut self, p: PortId, enabled: bool) {
        let Some(port) = self.ports.get_mut(p.0) else {
            return;
        };
        port.cfg.enabled = enabled;
        if !enabled {
            if port.channel.is_some() {
                self.set_bundled(p, false);
                self.set_standalone(p, false);
            } else {
                self.fdb.flush(Logical::Port(p));
            }
        }
    }

    /// Adds `c` to port `p`'s counters: what another engine (the kernel's)
    /// counted on the port since it was last asked.
    pub fn add_counts(&mut self, p: PortId, c: &PortCounters) {
        if let Some(port) = self.ports.get_mut(p.0) {
            port.counters.add(c);
        }
    }

    /// The address table, to mirror another engine's into ([`Fdb::mirror`]).
    pub fn fdb_mut(&mut self) -> &mut Fdb {
        &mut self.fdb
    }

    /// The channels' ids, ascending (the order a kernel plan lists them in).
    pub fn channel_ids(&self) -> impl Iterator<Item = ChannelId> + '_ {
        self.channels.keys().copied()
    }

    /// How many new addresses port `p` may teach the table per second.
    pub fn learn_rate(&self, p: PortId) -> u32 {
        self.ports.get(p.0).map_or(0, |x| x.learn.rate())
    }

    /// Whether any port polices its traffic with storm control (which
    /// only the userspace engine does).
    pub fn polices_storms(&self) -> bool {
        self.ports
            .iter()
            .any(|p| p.storm.iter().any(Option::is_some))
    }

    /// `port-channel load-balance`.
    pub fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// The load-balance policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// A port's settings.
    pub fn port(&self, p: PortId) -> Option<&PortConfig> {
        self.ports.get(p.0).map(|x| &x.cfg)
    }

    /// A port's settings, to change before traffic flows (the
    /// configuration reader gives members their port-channel's VLAN).
    pub fn port_config_mut(&mut self, p: PortId) -> Option<&mut PortConfig> {
        self.ports.get_mut(p.0).map(|x| &mut x.cfg)
    }

    /// Every port, by id.
    pub fn ports(&self) -> impl Iterator<Item = (PortId, &PortConfig)> {
        self.ports
            .iter()
            .enumerate()
            .map(|(i, p)| (PortId(i), &p.cfg))
    }

    /// A channel.
    pub fn channel(&self, id: ChannelId) -> Option<&Channel> {
        self.channels.get(&id)
    }

    /// Where addresses seen on `p` are learned: its channel, or itself
    /// (a port in no channel, or a stand-alone member).
    pub fn logical(&self, p: PortId) -> Logical {
        match self
            .ports
            .get(p.0)
            .filter(|x| !x.standalone)
            .and_then(|x| x.channel)
        {
            Some(c) => Logical::Channel(c),
            None => Logical::Port(p),
        }
    }

    /// The MAC address table.
    pub fn fdb(&self) -> &Fdb {
        &self.fdb
    }

    /// Ages the MAC address table.
    pub fn age(&mut self, now: u64) -> usize {
        self.fdb.age(now)
    }

    /// A port's counters.
    pub fn counters(&self, p: PortId) -> Option<&PortCounters> {
        self.ports.get(p.0).map(|x| &x.counters)
    }

    /// Counts a frame the port's control plane sent (an LACPDU, a PAgP
    /// hello), apart from the frames the bridge forwarded.
    pub fn count_sent(&mut self, p: PortId, frame: &[u8]) {
        if let Some(port) = self.ports.get_mut(p.0) {
            port.counters.control_tx += 1;
            port.counters.control_tx_bytes += frame.len() as u64;
            port.counters.tx_cast.count(frame.get(..6).unwrap_or(&[]));
        }
    }

    /// A channel's counters: its members' added up.
    pub fn channel_counters(&self, id: ChannelId) -> PortCounters {
        let mut c = PortCounters::default();
        for p in self.ports.iter().filter(|p| p.channel == Some(id)) {
            c.add(&p.counters);
        }
        c
    }

    /// `test etherchannel load-balance`: the bucket and member a frame with
    /// `key` takes out of channel `id`.
    pub fn test_load_balance(
        &self,
        id: ChannelId,
        key: &FlowKey,
    ) -> Option<(usize, Option<PortId>)> {
        let c = self.channels.get(&id)?;
        Some((
            Channel::bucket_of(&self.policy, key),
            c.member_for(&self.policy, key),
        ))
    }

    /// Applies `storm` (IOS's `storm-control` lines) to port `p`, whose
    /// bandwidth is `port_bps` bits per second (what a percentage level
    /// is of). Meters start afresh.
    pub fn set_storm_control(&mut self, p: PortId, storm: &StormControl, port_bps: u64) {
        if let Some(port) = self.ports.get_mut(p.0) {
            for (k, class) in StormClass::ALL.into_iter().enumerate() {
                port.storm[k] = storm.level(class).map(|l| StormMeter::new(l, port_bps));
            }
        }
    }

    /// Port `p`'s storm-control meter for `class`, if it has a level.
    pub fn storm_meter(&self, p: PortId, class: StormClass) -> Option<&StormMeter> {
        let k = StormClass::ALL.iter().position(|&c| c == class)?;
        self.ports.get(p.0)?.storm[k].as_ref()
    }

    /// Lets port `p` teach the table at most `per_second` new addresses a
    /// second (default [`LEARN_PER_SECOND`]).
    pub fn set_learn_rate(&mut self, p: PortId, per_second: u32) {
        if let Some(port) = self.ports.get_mut(p.0) {
            port.learn = LearnLimiter::new(per_second);
        }
    }

    /// Whether port `p` is up and `frame` is for its control plane, as
    /// [`Bridge::receive`] would judge it (an engine that forwards outside
    /// the bridge hands the control plane only these).
    pub fn takes_control(&self, p: PortId, frame: &[u8]) -> bool {
        self.ports.get(p.0).is_some_and(|x| x.cfg.enabled)
            && headers(frame).is_some_and(|h| h.dst == SLOW_PROTOCOLS || h.dst == CISCO_MULTICAST)
    }

    fn drop(&mut self, p: PortId, r: DropReason) -> Verdict {
        self.ports[p.0].counters.drops[r.index()] += 1;
        Verdict::Drop(r)
    }

    /// Decides what happens to `frame`, received on `ingress` at `now`
    /// (nanoseconds, the caller's monotonic clock), and counts it.
    pub fn receive(&mut self, ingress: PortId, frame: &[u8], now: u64) -> Verdict {
        self.receive_segmented(ingress, frame, None, now)
    }

    /// As [`Bridge::receive`], for a frame that leaves as segments (a GSO
    /// frame from a packet socket): `segment` is the payload (IP packet)
    /// length of its largest segment on the wire, which is what the MTU
    /// judges, not the whole frame's length. `None`: the frame is what the
    /// wire carries.
    pub fn receive_segmented(
        &mut self,
        ingress: PortId,
        frame: &[u8],
        segment: Option<usize>,
        now: u64,
    ) -> Verdict {
        let Some(port) = self.ports.get_mut(ingress.0) else {
            return Verdict::Drop(DropReason::NoPath);
        };
        port.counters.rx_frames += 1;
        port.counters.rx_bytes += frame.len() as u64;
        port.counters.rx_cast.count(frame.get(..6).unwrap_or(&[]));
        if !port.cfg.enabled {
            return self.drop(ingress, DropReason::Disabled);
        }
        let Some(mut h) = headers(frame) else {
            return self.drop(ingress, DropReason::Runt);
        };
        if let Some(seg) = segment {
            h.payload = seg;
        }
        if h.dst == SLOW_PROTOCOLS || h.dst == CISCO_MULTICAST {
            self.ports[ingress.0].counters.control += 1;
            return Verdict::Control;
        }
        if h.dst[..5] == SLOW_PROTOCOLS[..5] && h.dst[5] <= 0x0f {
            return self.drop(ingress, DropReason::LinkLocal);
        }
        // Storm control, before any work is spent on the frame; the
        // control plane's frames (above) are never its to drop.
        let class = StormClass::of(&h.dst);
        let port = &mut self.ports[ingress.0];
        let k = class as usize;
        if let Some(m) = port.storm.get_mut(k).and_then(Option::as_mut) {
            if !m.admit(frame.len(), now) {
                match class {
                    StormClass::Broadcast => port.counters.storm_drops.bcast += 1,
                    StormClass::Multicast => port.counters.storm_drops.mcast += 1,
                    StormClass::Unicast => port.counters.storm_drops.ucast += 1,
                }
                return self.drop(ingress, DropReason::StormControl);
            }
        }
        let port = &self.ports[ingress.0];
        if let Some(c) = port.channel.filter(|_| !port.standalone) {
            if !self.channels.get(&c).is_some_and(|c| c.is_bundled(ingress)) {
                return self.drop(ingress, DropReason::NotBundled);
            }
        }
        let vlan = match port.cfg.mode.classify(h.tag) {
            Ok(v) => v,
            Err(r) => return self.drop(ingress, r),
        };
        if h.payload > port.cfg.mtu as usize {
            return self.drop(ingress, DropReason::Giant);
        }
        let from = self.logical(ingress);
        if h.src[0] & 1 == 0 {
            // A multicast source is never learned (it is no station). A
            // new address costs the port some of its learning rate, so one
            // port sending from ever new addresses cannot crowd the
            // others' out of the table or the switch's time.
            let port = &mut self.ports[ingress.0];
            if self.fdb.knows(vlan, h.src) || port.learn.allow(now) {
                if self.fdb.learn(vlan, h.src, from, now) == Learned::Full {
                    self.ports[ingress.0].counters.learn_full += 1;
                }
            } else {
                port.counters.learn_limited += 1;
            }
        }
        let known = (h.dst[0] & 1 == 0)
            .then(|| self.fdb.lookup(vlan, h.dst, now))
            .flatten();
        let (targets, flooded) = match known {
            Some(to) if to == from => return self.drop(ingress, DropReason::SamePort),
            Some(to) => (vec![to], false),
            None => (self.flood_targets(vlan, from), true),
        };
        let key = FlowKey::from_frame(frame);
        let len = frame.len() - if h.tag.is_some() { 4 } else { 0 };
        let mut egress = Vec::new();
        for t in targets {
            let p = match t {
                Logical::Port(p) => p,
                Logical::Channel(c) => {
                    match self
                        .channels
                        .get(&c)
                        .and_then(|c| c.member_for(&self.policy, &key))
                    {
                        Some(p) => p,
                        None => continue,
                    }
                }
            };
            let out = &mut self.ports[p.0];
            let Some(tag) = out.cfg.mode.egress(vlan) else {
                continue;
            };
            if !out.cfg.enabled {
                continue;
            }
            if h.payload > out.cfg.mtu as usize {
                out.counters.tx_too_big += 1;
                continue;
            }
            out.counters.tx_frames += 1;
            out.counters.tx_bytes += (len + if tag.is_some() { 4 } else { 0 }) as u64;
            out.counters.tx_cast.count(&h.dst);
            if flooded {
                out.counters.flooded += 1;
            }
            egress.push(Egress { port: p, tag });
        }
        if egress.is_empty() {
            return self.drop(ingress, DropReason::NoPath);
        }
        Verdict::Forward {
            vlan,
            egress,
            flooded,
        }
    }

    /// Every port and channel that carries `vlan`, except `from`.
    fn flood_targets(&self, vlan: VlanId, from: Logical) -> Vec<Logical> {
        let mut out = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            if (p.channel.is_none() || p.standalone) && p.cfg.enabled && p.cfg.mode.carries(vlan) {
                out.push(Logical::Port(PortId(i)));
            }
        }
        out.extend(self.channels.keys().map(|&c| Logical::Channel(c)));
        out.retain(|&l| l != from);
        out
    }

    /// The bytes of `frame` as they leave with `tag`: any 802.1Q tag it came
    /// with replaced, added or removed (the priority bits are kept when a
    /// tag stays).
    pub fn frame_for(frame: &[u8], tag: Option<VlanId>) -> Vec<u8> {
        let tagged = frame.len() >= 18 && frame[12..14] == TPID.to_be_bytes();
        let (head, rest, pcp) = if tagged {
            (&frame[..12], &frame[16..], frame[14] & 0xf0)
        } else {
            (
                &frame[..frame.len().min(12)],
                frame.get(12..).unwrap_or(&[]),
                0,
            )
        };
        let mut out = Vec::with_capacity(frame.len() + 4);
        out.extend_from_slice(head);
        if let Some(v) = tag {
            out.extend_from_slice(&TPID.to_be_bytes());
            out.push(pcp | ((v >> 8) as u8 & 0x0f));
            out.push(v as u8);
        }
        out.extend_from_slice(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vlan::VlanSet;

    const BCAST: [u8; 6] = [0xff; 6];

    fn mac(i: u8) -> [u8; 6] {
        [2, 0, 0, 0, 0, i]
    }

    #[test]
    fn a_bridge_with_a_small_table_refuses_the_address_past_its_limit() {
        let mut b = Bridge::with_fdb_limit("cisco:src-dst-ip".parse().unwrap(), 1);
        b.add_port(PortConfig::new("a"));
        b.add_port(PortConfig::new("b"));
        for i in 1..=2 {
            b.receive(PortId(0), &frame(BCAST, mac(i), None, 100, 1), 0);
        }
        assert_eq!(b.fdb().len(), 1);
        assert_eq!(b.counters(PortId(0)).unwrap().learn_full, 1);
    }

    /// An IPv4/TCP frame of `payload` bytes after the Ethernet header.
    fn frame(dst: [u8; 6], src: [u8; 6], tag: Option<u16>, payload: usize, sport: u16) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&dst);
        f.extend_from_slice(&src);
        if let Some(v) = tag {
            f.extend_from_slice(&[0x81, 0x00, (v >> 8) as u8, v as u8]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let mut ip = vec![0u8; payload.max(40)];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(payload as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[10, 0, 0, src[5]]);
        ip[16..20].copy_from_slice(&[10, 0, 0, dst[5]]);
        ip[20..22].copy_from_slice(&sport.to_be_bytes());
        ip[22..24].copy_from_slice(&80u16.to_be_bytes());
        ip.truncate(payload.max(40));
        f.extend_from_slice(&ip);
        f
    }

    fn ports(v: &Verdict) -> Vec<usize> {
        match v {
            Verdict::Forward { egress, .. } => egress.iter().map(|e| e.port.0).collect(),
            _ => Vec::new(),
        }
    }

    /// Four access ports in VLAN 1.
    fn four() -> Bridge {
        let mut b = Bridge::new("cisco:src-dst-ip".parse().unwrap());
        for i in 0..4 {
            b.add_port(PortConfig::new(&format!("gi1/{i}")));
        }
        b
    }

    /// [`four`] with ports 2 and 3 in port-channel 3, not bundled.
    fn four_with_channel() -> Bridge {
        let mut b = four();
        b.add_channel(
            ChannelId(3),
            vec![PortId(2), PortId(3)],
            Distribution::Fixed,
        )
        .unwrap();
        b
    }

    #[test]
    fn learns_floods_unknowns_and_forwards_known_unicast() {
        let mut b = four();
        // Unknown destination: flooded everywhere but where it came from.
        let v = b.receive(PortId(0), &frame(mac(2), mac(1), None, 100, 1), 0);
        assert_eq!(ports(&v), [1, 2, 3]);
        assert!(matches!(
            v,
            Verdict::Forward {
                flooded: true,
                vlan: 1,
                ..
            }
        ));
        // The answer goes straight back to port 0, which learned mac 1.
        let v = b.receive(PortId(2), &frame(mac(1), mac(2), None, 100, 1), 1);
        assert_eq!(ports(&v), [0]);
        assert!(matches!(v, Verdict::Forward { flooded: false, .. }));
        // Broadcast floods even when known addresses exist.
        assert_eq!(
            ports(&b.receive(PortId(1), &frame(BCAST, mac(3), None, 100, 1), 2)),
            [0, 2, 3]
        );
        // A destination on the ingress port: filtered.
        let v = b.receive(PortId(0), &frame(mac(1), mac(9), None, 100, 1), 3);
        assert_eq!(v, Verdict::Drop(DropReason::SamePort));
        assert_eq!(
            b.counters(PortId(0)).unwrap().dropped(DropReason::SamePort),
            1
        );
        assert_eq!(b.counters(PortId(3)).unwrap().flooded, 2);
        // mac 1 moves to port 3.
        b.receive(PortId(3), &frame(BCAST, mac(1), None, 100, 1), 4);
        assert_eq!(b.fdb().moves(), 1);
        assert_eq!(
            ports(&b.receive(PortId(2), &frame(mac(1), mac(2), None, 100, 1), 5)),
            [3]
        );
    }

    #[test]
    fn control_frames_go_up_and_link_local_ones_nowhere() {
        let mut b = four();
        let mut lacpdu = frame(SLOW_PROTOCOLS, mac(1), None, 110, 0);
        lacpdu[12..14].copy_from_slice(&[0x88, 0x09]);
        assert_eq!(b.receive(PortId(0), &lacpdu, 0), Verdict::Control);
        let pagp = frame(CISCO_MULTICAST, mac(1), None, 60, 0);
        assert_eq!(b.receive(PortId(0), &pagp, 0), Verdict::Control);
        assert_eq!(b.counters(PortId(0)).unwrap().control, 2);
        let stp = frame([0x01, 0x80, 0xc2, 0, 0, 0], mac(1), None, 60, 0);
        assert_eq!(
            b.receive(PortId(0), &stp, 0),
            Verdict::Drop(DropReason::LinkLocal)
        );
        let lldp = frame([0x01, 0x80, 0xc2, 0, 0, 0x0e], mac(1), None, 60, 0);
        assert_eq!(
            b.receive(PortId(0), &lldp, 0),
            Verdict::Drop(DropReason::LinkLocal)
        );
        assert_eq!(
            b.receive(PortId(0), &[0u8; 13], 0),
            Verdict::Drop(DropReason::Runt)
        );
        assert_eq!(
            b.counters(PortId(1)).unwrap().tx_frames,
            0,
            "nothing flooded"
        );
        assert!(b.fdb().rows(0).is_empty(), "control frames teach nothing");
    }

    #[test]
    fn vlans_separate_and_trunks_tag() {
        let mut b = Bridge::new("cisco:src-dst-ip".parse().unwrap());
        let a10 = b.add_port(PortConfig {
            mode: PortMode::Access { vlan: 10 },
            ..PortConfig::new("a10")
        });
        let a20 = b.add_port(PortConfig {
            mode: PortMode::Access { vlan: 20 },
            ..PortConfig::new("a20")
        });
        let trunk = b.add_port(PortConfig {
            mode: PortMode::Trunk {
                native: 20,
                allowed: VlanSet::parse("10,20").unwrap(),
            },
            ..PortConfig::new("trunk")
        });
        let v = b.receive(a10, &frame(BCAST, mac(1), None, 100, 1), 0);
        assert_eq!(
            v,
            Verdict::Forward {
                vlan: 10,
                egress: vec![Egress {
                    port: trunk,
                    tag: Some(10)
                }],
                flooded: true,
            }
        );
        let v = b.receive(a20, &frame(BCAST, mac(2), None, 100, 1), 0);
        assert_eq!(ports(&v), [trunk.0]);
        assert!(
            matches!(&v, Verdict::Forward { egress, .. } if egress[0].tag.is_none()),
            "native"
        );
        // Tagged 10 in from the trunk reaches only a10, untagged.
        let v = b.receive(trunk, &frame(mac(1), mac(5), Some(10), 100, 1), 1);
        assert_eq!(ports(&v), [a10.0]);
        assert_eq!(
            b.receive(trunk, &frame(BCAST, mac(5), Some(30), 100, 1), 1),
            Verdict::Drop(DropReason::VlanNotAllowed)
        );
        assert_eq!(
            b.receive(a10, &frame(BCAST, mac(1), Some(10), 100, 1), 1),
            Verdict::Drop(DropReason::TaggedOnAccess)
        );
        // The bytes: a tag added, removed, replaced.
        let plain = frame(BCAST, mac(1), None, 46, 1);
        let tagged = Bridge::frame_for(&plain, Some(10));
        assert_eq!(tagged.len(), plain.len() + 4);
        assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x00, 0x0a]);
        assert_eq!(&tagged[16..], &plain[12..]);
        assert_eq!(Bridge::frame_for(&tagged, None), plain);
        let mut prio = tagged.clone();
        prio[14] |= 0xa0;
        assert_eq!(
            &Bridge::frame_for(&prio, Some(0x123))[14..16],
            &[0xa1, 0x23],
            "priority kept"
        );
    }

    #[test]
    fn giants_are_dropped_and_counted_both_ways() {
        let mut b = four();
        b.add_port(PortConfig {
            mtu: 9216,
            ..PortConfig::new("jumbo")
        });
        let j = PortId(4);
        // 9000 bytes into a 1500 port: a giant.
        assert_eq!(
            b.receive(PortId(0), &frame(BCAST, mac(1), None, 9000, 1), 0),
            Verdict::Drop(DropReason::Giant)
        );
        assert_eq!(b.counters(PortId(0)).unwrap().dropped(DropReason::Giant), 1);
        // 9000 bytes in on the jumbo port: no 1500 port can send it.
        assert_eq!(
            b.receive(j, &frame(BCAST, mac(7), None, 9000, 1), 0),
            Verdict::Drop(DropReason::NoPath)
        );
        assert_eq!(b.counters(PortId(1)).unwrap().tx_too_big, 1);
        // 1500 exactly passes; tagged frames count the payload after the tag.
        assert_eq!(
            ports(&b.receive(PortId(0), &frame(BCAST, mac(1), None, 1500, 1), 0)).len(),
            4
        );
    }

    #[test]
    fn a_gso_frame_is_judged_by_its_segments_not_its_length() {
        let mut b = four();
        let big = frame(BCAST, mac(1), None, 30_000, 1);
        // 30 000 bytes whole, 1500-byte segments on the wire: forwarded.
        let v = b.receive_segmented(PortId(0), &big, Some(1500), 0);
        assert_eq!(ports(&v), [1, 2, 3]);
        // Its segments would be 1501 bytes: a giant.
        assert_eq!(
            b.receive_segmented(PortId(0), &big, Some(1501), 1),
            Verdict::Drop(DropReason::Giant)
        );
        assert_eq!(b.counters(PortId(0)).unwrap().dropped(DropReason::Giant), 1);
    }

    #[test]
    fn a_channel_is_one_port_and_spreads_by_bucket() {
        let mut b = four_with_channel();
        assert!(b
            .add_channel(ChannelId(4), vec![PortId(3)], Distribution::Fixed)
            .is_err());
        // Not bundled yet: its members drop data and it is no flood target
        // that can send.
        assert_eq!(
            b.receive(PortId(2), &frame(BCAST, mac(5), None, 100, 1), 0),
            Verdict::Drop(DropReason::NotBundled)
        );
        assert_eq!(
            ports(&b.receive(PortId(0), &frame(BCAST, mac(1), None, 100, 1), 0)),
            [1]
        );
        b.set_bundled(PortId(2), true);
        b.set_bundled(PortId(3), true);
        // A flood reaches the channel once, on one member.
        let v = b.receive(PortId(0), &frame(BCAST, mac(1), None, 100, 1), 1);
        let out = ports(&v);
        assert_eq!(out.len(), 2, "port 1 and one member: {out:?}");
        // From a member, a flood never goes back into the channel.
        let v = b.receive(PortId(2), &frame(BCAST, mac(5), None, 100, 1), 2);
        assert_eq!(ports(&v), [0, 1]);
        // mac 5 lives on the channel: frames to it take the hash's member,
        // by src-dst-ip: (last bytes 1 ^ 5) & 7 = 4 -> bucket 4 -> member 2.
        let v = b.receive(PortId(0), &frame(mac(5), mac(1), None, 100, 1), 3);
        assert_eq!(ports(&v), [2]);
        let key = FlowKey::from_frame(&frame(mac(5), mac(1), None, 100, 1));
        assert_eq!(
            b.test_load_balance(ChannelId(3), &key),
            Some((4, Some(PortId(2))))
        );
        // (1 ^ 6) & 7 = 7 -> member 3.
        let v = b.receive(PortId(0), &frame(mac(6), mac(1), None, 100, 1), 3);
        assert!(
            ports(&v).contains(&3) || ports(&v).len() == 2,
            "mac 6 unknown: flooded"
        );
        // The same address arriving on the other member is no move.
        b.receive(PortId(3), &frame(BCAST, mac(5), None, 100, 1), 4);
        assert_eq!(b.fdb().moves(), 0);
        // A member fails: everything goes to the other one.
        b.set_bundled(PortId(2), false);
        assert_eq!(
            ports(&b.receive(PortId(0), &frame(mac(5), mac(1), None, 100, 1), 5)),
            [3]
        );
        // Two floods, two unicasts into the channel.
        assert_eq!(b.channel_counters(ChannelId(3)).tx_frames, 4);
        // Shut the last one: the channel's addresses are forgotten.
        b.set_enabled(PortId(3), false);
        assert!(b
            .fdb()
            .rows(6)
            .iter()
            .all(|r| r.at != Logical::Channel(ChannelId(3))));
    }

    #[test]
    fn a_stand_alone_member_forwards_as_a_port_of_its_own_until_it_bundles() {
        let mut b = four_with_channel();
        b.set_standalone(PortId(2), true);
        b.set_standalone(PortId(3), true);
        assert!(b.is_standalone(PortId(2)));
        assert_eq!(b.logical(PortId(2)), Logical::Port(PortId(2)));
        // A broadcast from a stand-alone member reaches every other port,
        // its channel partner too: they are two ports now.
        let v = b.receive(PortId(2), &frame(BCAST, mac(5), None, 100, 1), 0);
        assert_eq!(ports(&v), [0, 1, 3]);
        // Its source is learned on the port, and moves with the station.
        let v = b.receive(PortId(0), &frame(mac(5), mac(1), None, 100, 1), 1);
        assert_eq!(ports(&v), [2]);
        b.receive(PortId(3), &frame(BCAST, mac(5), None, 100, 1), 2);
        assert_eq!(b.fdb().moves(), 1);
        assert_eq!(
            ports(&b.receive(PortId(0), &frame(mac(5), mac(1), None, 100, 1), 3)),
            [3]
        );
        // Bundling ends it: the members are one channel again, what the
        // port learned is forgotten, and a bundled member cannot stand
        // alone.
        b.set_bundled(PortId(2), true);
        b.set_bundled(PortId(3), true);
        assert!(!b.is_standalone(PortId(2)) && !b.is_standalone(PortId(3)));
        b.set_standalone(PortId(2), true);
        assert!(!b.is_standalone(PortId(2)));
        let v = b.receive(PortId(0), &frame(BCAST, mac(1), None, 100, 1), 4);
        assert_eq!(ports(&v).len(), 2, "port 1 and one member");
        // A port in no channel is never stand-alone.
        b.set_standalone(PortId(0), true);
        assert!(!b.is_standalone(PortId(0)));
    }

    #[test]
    fn the_fuzz_targets_invariants_hold_on_ordinary_traffic() {
        // Broadcasts, unknown and known unicast, a tagged frame and a
        // LACPDU on every port, the channel's members going up and down.
        let mut data = vec![0u8];
        for port in 0..4u8 {
            for (dst, tag) in [
                (BCAST, None),
                (mac(9), None),
                (mac(1), Some(10)),
                (SLOW_PROTOCOLS, None),
            ] {
                let f = frame(dst, mac(port + 1), tag, 46, 1000 + u16::from(port));
                // The length byte picks the port (len % 4): pad to it.
                let mut f = f;
                while f.len() % 4 != usize::from(port) {
                    f.push(0);
                }
                data.push(f.len() as u8);
                data.extend_from_slice(&f);
            }
        }
        crate::fuzz_one(&data);
        data[0] = 1;
        crate::fuzz_one(&data);
        crate::fuzz_one(b"\x80interface gi1/9\n");
        crate::fuzz_one(&[]);
    }

    #[test]
    fn a_shut_port_takes_nothing_and_garbage_never_panics() {
        let mut b = four();
        b.set_enabled(PortId(1), false);
        assert_eq!(
            b.receive(PortId(1), &frame(BCAST, mac(1), None, 100, 1), 0),
            Verdict::Drop(DropReason::Disabled)
        );
        assert_eq!(
            ports(&b.receive(PortId(0), &frame(BCAST, mac(1), None, 100, 1), 0)),
            [2, 3]
        );
        for len in 0..64 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37) as u8).collect();
            let _ = b.receive(PortId(0), &junk, 1);
            let _ = Bridge::frame_for(&junk, Some(5));
        }
        assert_eq!(
            b.receive(PortId(9), &[0; 60], 0),
            Verdict::Drop(DropReason::NoPath)
        );
    }

    #[test]
    fn storm_control_drops_the_excess_of_its_class_and_counts_it() {
        let mut b = four();
        let mut sc = StormControl::default();
        let w: Vec<&str> = "pps 10".split_whitespace().collect();
        sc.set(
            StormClass::Broadcast,
            Some(lagkit_ios::parse_level(&w).unwrap()),
        );
        b.set_storm_control(PortId(0), &sc, 1_000_000_000);
        let ms = 1_000_000u64;
        let mut passed = 0;
        for k in 0..30u64 {
            let v = b.receive(PortId(0), &frame(BCAST, mac(1), None, 60, 1), k * ms);
            if matches!(v, Verdict::Forward { .. }) {
                passed += 1;
            } else {
                assert_eq!(v, Verdict::Drop(DropReason::StormControl));
            }
        }
        assert_eq!(passed, 10);
        // Unicast is another class: not limited.
        for k in 0..30u64 {
            let v = b.receive(
                PortId(0),
                &frame(mac(9), mac(1), None, 60, 1),
                (30 + k) * ms,
            );
            assert!(matches!(v, Verdict::Forward { .. }));
        }
        let c = b.counters(PortId(0)).unwrap();
        assert_eq!(c.storm_drops.bcast, 20);
        assert_eq!(c.storm_drops.ucast, 0);
        assert_eq!(c.dropped(DropReason::StormControl), 20);
        let m = b.storm_meter(PortId(0), StormClass::Broadcast).unwrap();
        assert_eq!(m.dropped(), 20);
        assert!(b.storm_meter(PortId(0), StormClass::Unicast).is_none());
        // The next second forwards again; LACPDUs never count.
        let v = b.receive(PortId(0), &frame(BCAST, mac(1), None, 60, 1), 1_000 * ms);
        assert!(matches!(v, Verdict::Forward { .. }));
    }

    #[test]
    fn a_port_learns_a_bounded_number_of_new_addresses_a_second() {
        let mut b = four();
        b.set_learn_rate(PortId(0), 100);
        let ms = 1_000_000u64;
        // 1000 new sources within 10 ms: 100 learnt, every frame flooded.
        for k in 0..1000u64 {
            let src = [2, 1, 0, 0, (k >> 8) as u8, k as u8];
            let v = b.receive(PortId(0), &frame(BCAST, src, None, 60, 1), k * 10_000);
            assert_eq!(ports(&v), vec![1, 2, 3]);
        }
        let c = b.counters(PortId(0)).unwrap();
        assert_eq!(c.learn_limited, 900);
        assert_eq!(b.fdb().rows(10 * ms).len(), 100);
        // A known address is refreshed whatever the rate.
        let v = b.receive(
            PortId(0),
            &frame(BCAST, [2, 1, 0, 0, 0, 5], None, 60, 1),
            11 * ms,
        );
        assert!(matches!(v, Verdict::Forward { .. }));
        assert_eq!(b.counters(PortId(0)).unwrap().learn_limited, 900);
        // Another port learns on its own budget.
        b.receive(PortId(1), &frame(BCAST, mac(7), None, 60, 1), 12 * ms);
        assert_eq!(
            b.fdb().lookup(1, mac(7), 12 * ms),
            Some(Logical::Port(PortId(1)))
        );
        // A second later the port learns again.
        b.receive(
            PortId(0),
            &frame(BCAST, [2, 3, 0, 0, 0, 1], None, 60, 1),
            1_100 * ms,
        );
        assert_eq!(
            b.fdb().lookup(1, [2, 3, 0, 0, 0, 1], 1_100 * ms),
            Some(Logical::Port(PortId(0)))
        );
    }
}
