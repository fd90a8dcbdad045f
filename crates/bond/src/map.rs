//! The distribution map: the only thing the forwarding threads read.
//!
//! The control thread builds a new [`BondMap`] whenever the set of members
//! that may transmit or collect changes (LACP distribution events, carrier,
//! probes, failover, rebalancing) and publishes it atomically; the data path
//! loads it once per batch and never runs a state machine. Selecting a
//! member for a frame is a pure function of the frame and the map, so
//! `lagkit flow` can answer "which member carries this flow?" with the very
//! same code.

use lagkit_dataplane::forward::{Accept, Distribution, Members, Target};
use lagkit_hash::{BucketMap, Explain, FlowKey, Policy};
use lagkit_wire::{ArpOp, ArpRepr};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How frames from the host are spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// By a hash policy over the usable members (802.3ad, balance-xor,
    /// adaptive).
    Hash,
    /// Round-robin, `packets_per_member` frames per member in turn.
    RoundRobin {
        /// Frames sent on one member before moving on (Linux `packets_per_slave`; 0 = random).
        packets_per_member: u32,
    },
    /// Everything on one member (active-backup).
    Single,
    /// Every frame on every usable member.
    Broadcast,
}

/// An immutable snapshot of who carries what.
#[derive(Debug, Clone)]
pub struct BondMap {
    /// Bumped on every publish.
    pub generation: u64,
    /// The spreading rule.
    pub spread: Spread,
    /// Hash policy (for `Spread::Hash`).
    pub policy: Policy,
    /// Members that may transmit, ascending member index (Linux's slave
    /// order: what `hash mod n` indexes).
    pub tx: Vec<usize>,
    /// For `strong`: bucket -> slot, and slot -> member index. Slots keep
    /// their member when others come and go, so a failure moves only the
    /// failed member's buckets.
    pub buckets: Option<(BucketMap, Vec<usize>)>,
    /// The active member for `Spread::Single`.
    pub active: Option<usize>,
    /// Members whose received frames go up to the host.
    pub rx: Vec<bool>,
    /// Shared round-robin counter (survives republishing).
    pub rr: Arc<AtomicU64>,
    /// Per-bucket load, counted by the data path for adaptive rebalancing.
    pub load: Option<Arc<BucketLoad>>,
    /// The bond's MAC.
    pub bond_mac: [u8; 6],
    /// Each member's own MAC.
    pub member_macs: Vec<[u8; 6]>,
    /// balance-tlb/alb: frames leaving through a member other than the
    /// receiving (active) one carry that member's own source MAC, so the
    /// switch keeps the bond MAC on the active port.
    pub tlb: bool,
    /// balance-alb: the member each client (peer IPv4) sends to; ARP
    /// replies to a client leave through its member, with its MAC.
    pub alb: Option<Arc<HashMap<Ipv4Addr, usize>>>,
    /// Copy received ARP to the control thread (probe monitor, alb).
    pub snoop_arp: bool,
    /// broadcast: recognises the second copy of a frame (shared by every
    /// map the bond publishes).
    pub dedup: Option<Arc<Dedup>>,
}

/// broadcast mode: every frame is sent on every member, so a peer that is
/// also a broadcast bond (or two switches) delivers each frame once per
/// member. Only the first copy goes up: a frame identical to one that came
/// up through a *different* member within [`Dedup::WINDOW_NS`] is a copy.
/// Identity is a hash of the frame's length and first 256 bytes (headers
/// with IP ID and TCP sequence numbers make it unique in practice); a
/// sender's genuine retransmission comes after an RTT or a timeout, and
/// through the same member as well as the others, so it is never mistaken.
#[derive(Debug)]
pub struct Dedup {
    slots: std::sync::Mutex<Vec<(u64, usize, u64)>>,
    copies: AtomicU64,
}

impl Default for Dedup {
    fn default() -> Self {
        Dedup {
            slots: std::sync::Mutex::new(vec![(0, usize::MAX, 0); Dedup::SLOTS]),
            copies: AtomicU64::new(0),
        }
    }
}

impl Dedup {
    const SLOTS: usize = 4096;
    /// How long a frame's first copy is remembered.
    pub const WINDOW_NS: u64 = 50_000_000;

    /// True if `frame`, received on member `m` at `now`, is a copy of one
    /// that came up through another member.
    pub fn is_copy(&self, m: usize, frame: &[u8], now: u64) -> bool {
        let head = &frame[..frame.len().min(256)];
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(head, frame.len() as u64);
        let Ok(mut slots) = self.slots.lock() else {
            return false;
        };
        let slot = &mut slots[(h as usize) & (Dedup::SLOTS - 1)];
        if slot.0 == h && slot.1 != m && now.saturating_sub(slot.2) <= Dedup::WINDOW_NS {
            self.copies.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        *slot = (h, m, now);
        false
    }

    /// Copies dropped so far.
    pub fn copies(&self) -> u64 {
        self.copies.load(Ordering::Relaxed)
    }
}

const ETH_ARP: [u8; 2] = [0x08, 0x06];

/// balance-alb: the member a new client is given, a pure function of its
/// address and the usable members, so the data path (answering the
/// client's first ARP request before the control thread has seen it) and
/// the control thread agree without sharing state. Consecutive client
/// addresses go to consecutive members.
pub fn alb_member_for(client: Ipv4Addr, usable: &[usize]) -> Option<usize> {
    if usable.is_empty() {
        return None;
    }
    usable
        .get(u32::from(client) as usize % usable.len())
        .copied()
}

fn is_arp(frame: &[u8]) -> bool {
    frame.get(12..14) == Some(&ETH_ARP[..])
}

impl Distribution for BondMap {
    fn select(&self, frame: &mut [u8]) -> Target {
        if let Some(clients) = &self.alb {
            if is_arp(frame) {
                return self.select_alb_arp(clients, frame);
            }
        }
        if self.tlb && frame.first().is_some_and(|b| b & 1 == 1) {
            // balance-tlb/alb (as Linux): broadcasts and multicasts leave
            // through the active member, the one that owns the bond MAC and
            // is the only one that receives them.
            return self.active.map_or(Target::Drop, Target::One);
        }
        let t = BondMap::select(self, frame);
        if self.tlb {
            if let Target::One(m) = t {
                if Some(m) != self.active && frame.get(6..12) == Some(&self.bond_mac[..]) {
                    if let Some(mac) = self.member_macs.get(m) {
                        frame[6..12].copy_from_slice(mac);
                    }
                }
            }
        }
        t
    }

    fn accept(&self, m: usize, frame: &mut [u8]) -> Accept {
        if !self.accepts(m) {
            // Probe replies must be seen on standby members too.
            return if self.snoop_arp && is_arp(frame) {
                Accept::CopyOnly
            } else {
                Accept::Drop
            };
        }
        if self.tlb {
            let group = frame.first().is_some_and(|b| b & 1 == 1);
            if group && Some(m) != self.active {
                // The switch floods broadcasts to every member port; only
                // the receiving member passes them up (no duplicates).
                return Accept::Drop;
            }
            // A client sends to the member MAC it was given; back to back
            // (no switch steering by MAC) that frame may arrive on another
            // member, so any member's MAC counts.
            if self.alb.is_some() {
                let is_member = |d: &[u8]| self.member_macs.iter().any(|mac| d == mac);
                if frame.get(0..6).is_some_and(is_member) {
                    frame[0..6].copy_from_slice(&self.bond_mac);
                }
            }
        }
        if let Some(d) = &self.dedup {
            if d.is_copy(m, frame, coarse_now_ns()) {
                return Accept::Drop;
            }
        }
        if self.snoop_arp && is_arp(frame) {
            Accept::UpAndCopy
        } else {
            Accept::Up
        }
    }
}

/// Bytes and last activity per hash bucket, written by the forwarding
/// threads (relaxed atomics, no locks) and read by the control thread.
#[derive(Debug)]
pub struct BucketLoad {
    bytes: [AtomicU64; 256],
    last: [AtomicU64; 256],
}

impl Default for BucketLoad {
    fn default() -> Self {
        BucketLoad {
            bytes: std::array::from_fn(|_| AtomicU64::new(0)),
            last: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl BucketLoad {
    /// Counts a frame of `len` bytes in `bucket`.
    #[inline]
    pub fn record(&self, bucket: u8, len: usize) {
        let b = usize::from(bucket);
        self.bytes[b].fetch_add(len as u64, Ordering::Relaxed);
        self.last[b].store(coarse_now_ns(), Ordering::Relaxed);
    }

    /// Total bytes and last activity (coarse monotonic ns) of `bucket`.
    pub fn get(&self, bucket: u8) -> (u64, u64) {
        let b = usize::from(bucket);
        (
            self.bytes[b].load(Ordering::Relaxed),
            self.last[b].load(Ordering::Relaxed),
        )
    }
}

/// CLOCK_MONOTONIC_COARSE in nanoseconds: a few nanoseconds to read, a few
/// milliseconds of resolution, enough for flowlet gaps of 10 ms. The data
/// path stamps bucket activity with it and the control thread judges
/// idleness with it.
pub fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

impl Members for BondMap {
    fn all_members(&self) -> &[usize] {
        &self.tx
    }
}

impl BondMap {
    /// A map with nothing usable.
    pub fn empty(spread: Spread, policy: Policy, members: usize) -> BondMap {
        BondMap {
            generation: 0,
            spread,
            policy,
            tx: Vec::new(),
            buckets: None,
            active: None,
            rx: vec![false; members],
            rr: Arc::new(AtomicU64::new(0)),
            load: None,
            bond_mac: [0; 6],
            member_macs: Vec::new(),
            tlb: false,
            alb: None,
            snoop_arp: false,
            dedup: None,
        }
    }

    /// balance-alb: an ARP reply from the host to a known client leaves
    /// through the client's member, advertising that member's MAC; any other
    /// ARP leaves through the active member with the bond's MAC.
    fn select_alb_arp(&self, clients: &HashMap<Ipv4Addr, usize>, frame: &mut [u8]) -> Target {
        let active = self.active.map_or(Target::Drop, Target::One);
        let Some(arp) = ArpRepr::parse_frame(frame) else {
            return active;
        };
        if arp.op != ArpOp::Reply || arp.sender_mac.0 != self.bond_mac {
            return active;
        }
        let member = clients
            .get(&arp.target_ip)
            .copied()
            .filter(|m| self.tx.contains(m))
            .or_else(|| alb_member_for(arp.target_ip, &self.tx));
        match member {
            Some(m) if Some(m) != self.active => {
                let Some(mac) = self.member_macs.get(m) else {
                    return active;
                };
                frame[6..12].copy_from_slice(mac);
                // ARP sender hardware address: 14 (Ethernet) + 8.
                if frame.len() >= 28 {
                    frame[22..28].copy_from_slice(mac);
                }
                Target::One(m)
            }
            _ => active,
        }
    }

    /// Frames from member `m` go up.
    pub fn accepts(&self, m: usize) -> bool {
        self.rx.get(m).copied().unwrap_or(false)
    }

    /// The member for a frame from the host (without the vnet header).
    pub fn select(&self, frame: &[u8]) -> Target {
        match self.spread {
            Spread::Single => self.active.map_or(Target::Drop, Target::One),
            Spread::Broadcast if self.tx.is_empty() => Target::Drop,
            Spread::Broadcast => Target::All,
            Spread::RoundRobin { packets_per_member } => {
                let n = self.tx.len() as u64;
                if n == 0 {
                    return Target::Drop;
                }
                let c = self.rr.fetch_add(1, Ordering::Relaxed);
                let i = if packets_per_member == 0 {
                    // Linux: packets_per_slave 0 picks a member at random.
                    c.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32
                } else {
                    c / u64::from(packets_per_member)
                };
                Target::One(self.tx[(i % n) as usize])
            }
            Spread::Hash => {
                let key = FlowKey::from_frame(frame);
                if let Some(load) = &self.load {
                    if let Some(b) = self.policy.bucket(&key) {
                        load.record(b, frame.len());
                    }
                }
                self.member_for(&key).map_or(Target::Drop, Target::One)
            }
        }
    }

    /// The member a flow hashes to.
    pub fn member_for(&self, key: &FlowKey) -> Option<usize> {
        match (&self.policy, &self.buckets) {
            (Policy::Strong(_), Some((map, slots))) => {
                let slot = self.policy.select_in(key, map)?;
                slots.get(slot).copied()
            }
            _ => {
                let i = self.policy.select(key, self.tx.len())?;
                self.tx.get(i).copied()
            }
        }
    }

    /// Why a flow goes where it goes, for `lagkit flow`.
    pub fn explain(&self, key: &FlowKey) -> (Option<usize>, Explain) {
        let e = match (&self.policy, &self.buckets) {
            (Policy::Strong(_), Some((map, _))) => self.policy.explain_in(key, map),
            _ => self.policy.explain(key, self.tx.len()),
        };
        (self.member_for(key), e)
    }
}

/// Keeps the bucket table of `strong` hashing in step with the usable set:
/// a member leaving gives its buckets to the others, a member joining takes
/// its share, everything else stays where it is.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    map: Option<BucketMap>,
    owners: Vec<usize>,
}

impl Slots {
    /// Makes the table serve exactly `usable` (member indices).
    pub fn update(&mut self, usable: &[usize]) {
        // Remove members that left (highest slot first keeps indices valid).
        let mut gone: Vec<usize> = (0..self.owners.len())
            .filter(|&s| !usable.contains(&self.owners[s]))
            .collect();
        gone.sort_unstable_by(|a, b| b.cmp(a));
        for s in gone {
            if let Some(m) = self.map.as_mut() {
                let _ = m.remove_member(s);
            }
            self.owners.remove(s);
        }
        for &m in usable {
            if self.owners.contains(&m) {
                continue;
            }
            match self.map.as_mut() {
                Some(map) if map.members() > 0 => {
                    if map.add_member().is_ok() {
                        self.owners.push(m);
                    }
                }
                _ => {
                    self.map = BucketMap::new(1).ok();
                    self.owners = vec![m];
                }
            }
        }
        if self.owners.is_empty() {
            self.map = None;
        }
    }

    /// The table and its slot owners, if any member is usable.
    pub fn snapshot(&self) -> Option<(BucketMap, Vec<usize>)> {
        self.map.clone().map(|m| (m, self.owners.clone()))
    }

    /// Replaces the table (adaptive rebalancing edits it).
    pub fn set_map(&mut self, map: BucketMap) {
        if map.members() == self.owners.len() {
            self.map = Some(map);
        }
    }

    /// The current table.
    pub fn map(&self) -> Option<&BucketMap> {
        self.map.as_ref()
    }

    /// Slot -> member.
    pub fn owners(&self) -> &[usize] {
        &self.owners
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_hash::Strong;
    use std::net::Ipv4Addr;

    fn flows(n: u16) -> Vec<FlowKey> {
        (0..n)
            .map(|i| {
                FlowKey::tcp4(
                    Ipv4Addr::new(10, 0, 0, 1),
                    40000 + i,
                    Ipv4Addr::new(10, 0, 0, 2),
                    5201,
                )
            })
            .collect()
    }

    fn strong_map(slots: &Slots) -> BondMap {
        let mut m = BondMap::empty(Spread::Hash, Policy::Strong(Strong::new(7)), 4);
        m.tx = slots.owners().to_vec();
        m.tx.sort_unstable();
        m.buckets = slots.snapshot();
        m
    }

    #[test]
    fn strong_failure_moves_only_the_failed_members_flows() {
        let mut slots = Slots::default();
        slots.update(&[0, 1, 2, 3]);
        let before: Vec<_> = flows(400)
            .iter()
            .map(|k| strong_map(&slots).member_for(k))
            .collect();
        slots.update(&[0, 1, 3]);
        let map = strong_map(&slots);
        for (k, b) in flows(400).iter().zip(&before) {
            let now = map.member_for(k);
            if *b != Some(2) {
                assert_eq!(now, *b, "a flow not on member 2 moved");
            } else {
                assert_ne!(now, Some(2));
            }
        }
        // Member 2 returns: it takes a share back, and nothing else moves
        // between the survivors.
        slots.update(&[0, 1, 2, 3]);
        let back = strong_map(&slots);
        let on2 = flows(400)
            .iter()
            .filter(|k| back.member_for(k) == Some(2))
            .count();
        assert!(on2 > 50, "member 2 carries {on2} of 400 flows again");
    }

    #[test]
    fn round_robin_and_single_and_broadcast() {
        let mut m = BondMap::empty(
            Spread::RoundRobin {
                packets_per_member: 2,
            },
            Policy::Layer2,
            3,
        );
        m.tx = vec![0, 2];
        let picks: Vec<_> = (0..6).map(|_| m.select(&[0u8; 60])).collect();
        use Target::One;
        assert_eq!(picks, [One(0), One(0), One(2), One(2), One(0), One(0)]);
        m.spread = Spread::Single;
        m.active = Some(1);
        assert_eq!(m.select(&[0u8; 60]), One(1));
        m.spread = Spread::Broadcast;
        assert_eq!(m.select(&[0u8; 60]), Target::All);
        m.tx.clear();
        assert_eq!(m.select(&[0u8; 60]), Target::Drop);
    }

    #[test]
    fn broadcast_copies_from_other_members_are_recognised() {
        let d = Dedup::default();
        let f = |seq: u8| {
            let mut v = vec![0u8; 100];
            v[40] = seq;
            v
        };
        assert!(!d.is_copy(0, &f(1), 0));
        assert!(d.is_copy(1, &f(1), 1_000), "second copy, other member");
        assert!(d.is_copy(2, &f(1), 2_000), "third copy, third member");
        assert!(!d.is_copy(1, &f(2), 3_000), "another frame");
        assert!(
            !d.is_copy(0, &f(2), 3_000 + Dedup::WINDOW_NS + 1),
            "too late"
        );
        assert!(!d.is_copy(0, &f(3), 0));
        assert!(!d.is_copy(0, &f(3), 10), "same member: a new frame");
        assert_eq!(d.copies(), 2);
    }

    #[test]
    fn compat_policy_indexes_the_sorted_usable_list() {
        let mut m = BondMap::empty(Spread::Hash, "layer3+4".parse().unwrap(), 4);
        m.tx = vec![1, 3];
        for k in flows(50) {
            let i = m.policy.select(&k, 2).unwrap();
            assert_eq!(m.member_for(&k), Some([1, 3][i]));
        }
        assert!(!m.accepts(5));
    }
}
