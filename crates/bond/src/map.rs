//! The distribution map: the only thing the forwarding threads read.
//!
//! The control thread builds a new [`BondMap`] whenever the set of members
//! that may transmit or collect changes (LACP distribution events, carrier,
//! probes, failover, rebalancing) and publishes it atomically; the data path
//! loads it once per batch and never runs a state machine. Selecting a
//! member for a frame is a pure function of the frame and the map, so
//! `lagkit flow` can answer "which member carries this flow?" with the very
//! same code.

use crate::plan::tlb::alb_member_for;
use crate::plan::{Clients, HashTable, Macs, Plan};
pub use lagkit_dataplane::coarse_now_ns;
use lagkit_dataplane::forward::{Accept, Distribution, Members, Target};
use lagkit_hash::FlowKey;
use lagkit_wire::{ArpOp, ArpRepr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An immutable snapshot of who carries what: the mode's [`Plan`] and what
/// the engine needs to apply it.
#[derive(Debug, Clone)]
pub struct BondMap {
    /// Bumped on every publish.
    pub generation: u64,
    /// Who transmits what and whose frames go up.
    pub plan: Plan,
    /// Copy received ARP to the control thread (probe monitor, alb).
    pub snoop_arp: bool,
    /// The kernel moves the data frames (the BPF engine): this engine only
    /// carries control frames, and forwards nothing.
    pub control_only: bool,
    /// Copy received PAgP frames to the control thread (a bond that runs
    /// PAgP). PAgP frames never go up, whether copied or not.
    pub snoop_pagp: bool,
    /// What the data path keeps across maps (shared by every map a bond
    /// publishes).
    pub shared: Arc<Shared>,
}

/// The data path's own state, outlasting any one map: the round-robin
/// turn, bucket loads for the rebalancer, and broadcast's copy filter.
#[derive(Debug, Default)]
pub struct Shared {
    /// Round-robin counter.
    pub rr: AtomicU64,
    /// Bytes per hash bucket (adaptive, tlb, alb).
    pub load: BucketLoad,
    /// broadcast: recognises the second copy of a frame.
    pub dedup: Dedup,
}

/// broadcast mode: every frame is sent on every member, so a peer that is
/// also a broadcast bond (or two switches) delivers each frame once per
/// member. Only the first copy goes up: a frame identical to one that came
/// up through a *different* member within [`Dedup::WINDOW_NS`] is a copy.
/// Identity is a hash of the frame's length and first 256 bytes (headers
/// with IP ID and TCP sequence numbers make it unique in practice); a
/// sender's genuine retransmission comes after an RTT or a timeout, and
/// through the same member as well as the others, so it is never mistaken.
///
/// The table is set-associative, [`Dedup::WAYS`] entries a set, the oldest
/// replaced: the up thread reads each member a batch at a time, so up to a
/// batch of other frames comes up between a frame's two copies, and with one
/// entry a set about one frame in 64 (a batch of 64 over 4096 entries) had
/// its first copy's entry taken by one of them and went up twice.
#[derive(Debug)]
pub struct Dedup {
    slots: std::sync::Mutex<Vec<(u64, usize, u64)>>,
    copies: AtomicU64,
}

impl Default for Dedup {
    fn default() -> Self {
        Dedup {
            slots: std::sync::Mutex::new(vec![(0, usize::MAX, 0); Dedup::SETS * Dedup::WAYS]),
            copies: AtomicU64::new(0),
        }
    }
}

impl Dedup {
    const SETS: usize = 4096;
    /// Entries a set.
    pub const WAYS: usize = 4;
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
        let set = (h as usize) & (Dedup::SETS - 1);
        let ways = &mut slots[set * Dedup::WAYS..(set + 1) * Dedup::WAYS];
        if let Some(e) = ways.iter_mut().find(|e| e.0 == h && e.1 != usize::MAX) {
            if e.1 != m && now.saturating_sub(e.2) <= Dedup::WINDOW_NS {
                self.copies.fetch_add(1, Ordering::Relaxed);
                return true;
            }
            // The same frame again on its own member, or after the
            // window: a new first copy.
            *e = (h, m, now);
            return false;
        }
        // A new frame takes an empty entry of its set, else the oldest.
        if let Some(e) = ways.iter_mut().min_by_key(|e| (e.1 != usize::MAX, e.2)) {
            *e = (h, m, now);
        }
        false
    }

    /// Copies dropped so far.
    pub fn copies(&self) -> u64 {
        self.copies.load(Ordering::Relaxed)
    }
}

const ETH_ARP: [u8; 2] = [0x08, 0x06];

fn is_arp(frame: &[u8]) -> bool {
    frame.get(12..14) == Some(&ETH_ARP[..])
}

/// balance-alb: an ARP reply from the host to a known client leaves
/// through the client's member, advertising that member's MAC; any other
/// ARP leaves through the active member with the bond's MAC.
fn select_alb_arp(
    hash: &HashTable,
    active: Option<usize>,
    macs: &Macs,
    clients: &Clients,
    frame: &mut [u8],
) -> Target {
    let to_active = Target::from(active);
    let Some(arp) = ArpRepr::parse_frame(frame) else {
        return to_active;
    };
    if arp.op != ArpOp::Reply || arp.sender_mac.0 != macs.bond {
        return to_active;
    }
    let usable = hash.members();
    let member = clients
        .get(&arp.target_ip)
        .copied()
        .filter(|m| usable.contains(m))
        .or_else(|| alb_member_for(arp.target_ip, usable));
    match member {
        Some(m) if Some(m) != active => {
            let Some(mac) = macs.members.get(m) else {
                return to_active;
            };
            frame[6..12].copy_from_slice(mac);
            // ARP sender hardware address: 14 (Ethernet) + 8.
            if frame.len() >= 28 {
                frame[22..28].copy_from_slice(mac);
            }
            Target::One(m)
        }
        _ => to_active,
    }
}

impl Distribution for BondMap {
    fn select(&self, frame: &mut [u8], segments: u32) -> Target {
        if self.control_only {
            return Target::Drop;
        }
        let (hash, active, macs) = match &self.plan {
            Plan::Alb {
                hash,
                active,
                macs,
                clients,
            } if is_arp(frame) => return select_alb_arp(hash, *active, macs, clients, frame),
            Plan::Tlb { hash, active, macs }
            | Plan::Alb {
                hash, active, macs, ..
            } => (hash, *active, macs),
            _ => return BondMap::select(self, frame, segments),
        };
        if frame.first().is_some_and(|b| b & 1 == 1) {
            // balance-tlb/alb (as Linux): broadcasts and multicasts leave
            // through the active member, the one that owns the bond MAC and
            // is the only one that receives them.
            return active.into();
        }
        let t = self.select_hashed(hash, frame);
        if let Target::One(m) = t {
            if Some(m) != active && frame.get(6..12) == Some(&macs.bond[..]) {
                if let Some(mac) = macs.members.get(m) {
                    frame[6..12].copy_from_slice(mac);
                }
            }
        }
        t
    }

    fn accept(&self, m: usize, frame: &mut [u8]) -> Accept {
        // PAgP is the bond's business with the switch, never the host's.
        if lagkit_wire::pagp::is_pagp_frame(frame) {
            return if self.snoop_pagp {
                Accept::CopyOnly
            } else {
                Accept::Drop
            };
        }
        if self.control_only {
            // The kernel sent the data frame up; ARP is copied here for
            // the probe monitor and balance-alb.
            return if self.snoop_arp && is_arp(frame) {
                Accept::CopyOnly
            } else {
                Accept::Drop
            };
        }
        if !self.plan.collects(m) {
            // Probe replies must be seen on standby members too.
            return if self.snoop_arp && is_arp(frame) {
                Accept::CopyOnly
            } else {
                Accept::Drop
            };
        }
        match &self.plan {
            Plan::Tlb { active, macs, .. } | Plan::Alb { active, macs, .. } => {
                let group = frame.first().is_some_and(|b| b & 1 == 1);
                if group && Some(m) != *active {
                    // The switch floods broadcasts to every member port; only
                    // the receiving member passes them up (no duplicates).
                    return Accept::Drop;
                }
                // A client sends to the member MAC it was given; back to back
                // (no switch steering by MAC) that frame may arrive on another
                // member, so any member's MAC counts.
                if matches!(self.plan, Plan::Alb { .. }) {
                    let is_member = |d: &[u8]| macs.members.iter().any(|mac| d == mac);
                    if frame.get(0..6).is_some_and(is_member) {
                        frame[0..6].copy_from_slice(&macs.bond);
                    }
                }
            }
            Plan::Broadcast { .. } if self.shared.dedup.is_copy(m, frame, coarse_now_ns()) => {
                return Accept::Drop;
            }
            _ => {}
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
        self.record_at(bucket, len, coarse_now_ns());
    }

    /// Counts a frame of `len` bytes in `bucket` at `now` (coarse ns).
    #[inline]
    pub fn record_at(&self, bucket: u8, len: usize, now: u64) {
        let b = usize::from(bucket);
        self.bytes[b].fetch_add(len as u64, Ordering::Relaxed);
        self.last[b].store(now, Ordering::Relaxed);
    }

    /// Sets `bucket`'s totals as another counter keeps them (the BPF
    /// engine's per-bucket load; `last` in monotonic ns).
    pub fn set(&self, bucket: u8, bytes: u64, last: u64) {
        let b = usize::from(bucket);
        self.bytes[b].store(bytes, Ordering::Relaxed);
        self.last[b].store(last, Ordering::Relaxed);
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

impl Members for BondMap {
    fn all_members(&self) -> &[usize] {
        self.plan.transmitting()
    }
}

impl BondMap {
    /// A map carrying `plan`, with fresh shared state.
    pub fn new(plan: Plan) -> BondMap {
        BondMap {
            generation: 0,
            plan,
            snoop_arp: false,
            control_only: false,
            snoop_pagp: false,
            shared: Arc::default(),
        }
    }

    /// A hashed frame's member, its bucket's load counted when the plan
    /// rebalances by load.
    #[inline]
    fn select_hashed(&self, hash: &HashTable, frame: &[u8]) -> Target {
        let key = FlowKey::from_frame(frame);
        if self.plan.counts_load() {
            if let Some(b) = hash.policy().bucket(&key) {
                self.shared.load.record(b, frame.len());
            }
        }
        hash.member_for(&key).into()
    }

    /// The member for a frame from the host (without the vnet header)
    /// that goes out as `segments` frames (a GSO super-frame's count, else
    /// 1), before any tlb/alb rewrite.
    pub fn select(&self, frame: &[u8], segments: u32) -> Target {
        match &self.plan {
            Plan::ActiveBackup { active } => (*active).into(),
            Plan::Broadcast { members } if members.is_empty() => Target::Drop,
            Plan::Broadcast { .. } => Target::All,
            Plan::RoundRobin {
                members,
                packets_per_member,
            } => {
                let n = members.len() as u64;
                if n == 0 {
                    return Target::Drop;
                }
                // The turn advances by wire frames, not by packets from
                // the host: TCP hands a fast device a big GSO super-frame
                // and a small frame in turn often enough that dealing
                // whole packets puts every big one on the same member (a
                // CI run measured 29.4 MB against 5.9 MB over 478 packets
                // each), as the BPF program's length-counted turn avoids.
                let c = (self.shared.rr).fetch_add(u64::from(segments.max(1)), Ordering::Relaxed);
                let i = if *packets_per_member == 0 {
                    // Linux: packets_per_slave 0 picks a member at random.
                    c.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32
                } else {
                    c / u64::from(*packets_per_member)
                };
                Target::One(members[(i % n) as usize])
            }
            Plan::Hash { hash, .. }
            | Plan::Adaptive { hash }
            | Plan::Tlb { hash, .. }
            | Plan::Alb { hash, .. } => self.select_hashed(hash, frame),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::views as view;
    use crate::plan::{plan, Context, PlanState};
    use crate::settings::{BondMode, Settings};
    use lagkit_wire::MacAddr;
    use std::net::Ipv4Addr;
    use Target::One;

    const BOND: [u8; 6] = [2, 0, 0, 0, 0, 0xbb];
    const MACS: [[u8; 6]; 3] = [[2, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]];

    /// The map of `mode` over 3 members, those in `up` usable.
    fn map(mode: BondMode, up: &[usize], clients: &Clients) -> BondMap {
        let s = Settings::new("b", &["m0", "m1", "m2"], mode);
        let mut v = view(3, up);
        for (m, mac) in v.iter_mut().zip(MACS) {
            m.mac = mac;
        }
        let ctx = Context {
            bond_mac: BOND,
            clients: clients.clone(),
        };
        BondMap::new(plan(&v, &s, &mut PlanState::default(), &ctx))
    }

    /// An Ethernet frame from the bond to `dst` (TCP over IPv4, source
    /// port `sport`).
    fn frame(dst: [u8; 6], sport: u16) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0..6].copy_from_slice(&dst);
        f[6..12].copy_from_slice(&BOND);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[23] = 6;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&sport.to_be_bytes());
        f[36..38].copy_from_slice(&5201u16.to_be_bytes());
        f
    }

    #[test]
    fn round_robin_deals_wire_frames_so_big_and_small_in_turn_still_spread() {
        let m = BondMap::new(Plan::RoundRobin {
            members: vec![0, 1],
            packets_per_member: 1,
        });
        // TCP's pattern on a fast device: a 20-segment super-frame, then a
        // one-segment frame, in turn. Dealt per packet, every big one
        // would land on member 0.
        let mut segs = [0u32; 2];
        for _ in 0..100 {
            for n in [20, 1] {
                let One(t) = m.select(&[0u8; 60], n) else {
                    panic!("round-robin picks a member");
                };
                segs[t] += n;
            }
        }
        let (a, b) = (f64::from(segs[0]), f64::from(segs[1]));
        assert!(a.min(b) > 0.4 * (a + b), "segments per member: {segs:?}");
    }

    #[test]
    fn round_robin_and_single_and_broadcast() {
        let mut m = BondMap::new(Plan::RoundRobin {
            members: vec![0, 2],
            packets_per_member: 2,
        });
        let picks: Vec<_> = (0..6).map(|_| m.select(&[0u8; 60], 1)).collect();
        assert_eq!(picks, [One(0), One(0), One(2), One(2), One(0), One(0)]);
        // The turn outlives a new plan.
        m.plan = Plan::RoundRobin {
            members: vec![0, 2],
            packets_per_member: 1,
        };
        let picks: Vec<_> = (0..2).map(|_| m.select(&[0u8; 60], 1)).collect();
        assert_eq!(picks, [One(0), One(2)], "turn 6 of 2 members is member 0");
        m.plan = Plan::ActiveBackup { active: Some(1) };
        assert_eq!(m.select(&[0u8; 60], 1), One(1));
        m.plan = Plan::Broadcast {
            members: vec![0, 1],
        };
        assert_eq!(m.select(&[0u8; 60], 1), Target::All);
        assert_eq!(m.all_members(), [0, 1]);
        m.plan = Plan::Broadcast { members: vec![] };
        assert_eq!(m.select(&[0u8; 60], 1), Target::Drop);
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
    fn broadcast_copies_a_batch_apart_are_all_recognised() {
        // The up thread reads one member's batch, then the other's: a
        // frame's second copy comes up after many other frames. With one
        // entry a set, some of 1024 frames lost their entry to another
        // frame before the copy came (204 here) and went up twice.
        let d = Dedup::default();
        let f = |seq: u32| {
            let mut v = vec![0u8; 1514];
            v[38..42].copy_from_slice(&seq.to_be_bytes());
            v
        };
        for seq in 0..1024 {
            assert!(!d.is_copy(0, &f(seq), u64::from(seq)));
        }
        let missed = (0..1024)
            .filter(|&seq| !d.is_copy(1, &f(seq), 2_000 + u64::from(seq)))
            .count();
        assert_eq!(missed, 0, "second copies taken for new frames");
        assert_eq!(d.copies(), 1024);
    }

    #[test]
    fn pagp_frames_never_go_up_and_reach_the_control_thread_when_pagp_runs() {
        let pdu = lagkit_wire::PagpRepr::Info(Default::default())
            .emit_frame(MacAddr(MACS[1]))
            .unwrap();
        for control_only in [false, true] {
            let mut m = map(BondMode::BalanceXor, &[0, 1], &Clients::new());
            m.control_only = control_only;
            assert_eq!(m.accept(0, &mut pdu.clone()), Accept::Drop);
            m.snoop_pagp = true;
            assert_eq!(m.accept(0, &mut pdu.clone()), Accept::CopyOnly);
            assert_eq!(
                m.accept(2, &mut pdu.clone()),
                Accept::CopyOnly,
                "member down"
            );
        }
        // CDP shares the address, not the SNAP protocol id: it is data.
        let mut cdp = pdu.clone();
        cdp[21] = 0;
        let mut m = map(BondMode::BalanceXor, &[0, 1], &Clients::new());
        m.snoop_pagp = true;
        assert_eq!(m.accept(0, &mut cdp), Accept::Up);
    }

    #[test]
    fn broadcast_passes_only_the_first_copy_up() {
        let m = map(BondMode::Broadcast, &[0, 1], &Clients::new());
        let mut f = frame(BOND, 1);
        assert_eq!(m.accept(0, &mut f), Accept::Up);
        assert_eq!(m.accept(1, &mut f), Accept::Drop);
        assert_eq!(
            m.accept(2, &mut frame(BOND, 2)),
            Accept::Drop,
            "member down"
        );
    }

    #[test]
    fn tlb_rewrites_the_source_mac_off_the_active_member() {
        let m = map(BondMode::BalanceTlb, &[0, 1, 2], &Clients::new());
        assert_eq!(m.plan.active(), Some(0));
        let mut seen = [false; 3];
        for sport in 0..200 {
            let mut f = frame([2, 0, 0, 0, 0, 0x99], 40000 + sport);
            let Target::One(t) = Distribution::select(&m, &mut f, 1) else {
                panic!("unicast goes to one member")
            };
            seen[t] = true;
            let want = if t == 0 { BOND } else { MACS[t] };
            assert_eq!(f[6..12], want, "source MAC of a frame on member {t}");
        }
        assert_eq!(seen, [true; 3]);
        // Load is counted for the rebalancer.
        assert!((0..=255u8).any(|b| m.shared.load.get(b).0 > 0));
        // Broadcasts leave through the active member with the bond MAC.
        let mut b = frame([0xff; 6], 1);
        assert_eq!(Distribution::select(&m, &mut b, 1), One(0));
        assert_eq!(b[6..12], BOND);
        // ... and only the active member passes them up.
        assert_eq!(m.accept(1, &mut frame([0xff; 6], 1)), Accept::Drop);
        assert_eq!(m.accept(0, &mut frame([0xff; 6], 1)), Accept::Up);
        assert_eq!(m.accept(1, &mut frame(BOND, 1)), Accept::Up);
    }

    #[test]
    fn the_engine_and_lagkit_flow_pick_the_same_member() {
        for mode in [
            BondMode::Lacp,
            BondMode::BalanceXor,
            BondMode::Adaptive,
            BondMode::BalanceTlb,
            BondMode::ActiveBackup,
        ] {
            let mut v = view(3, &[0, 1, 2]);
            for m in &mut v {
                m.distributing = true;
                m.collecting = true;
            }
            let s = Settings::new("b", &["m0", "m1", "m2"], mode);
            let m = BondMap::new(plan(&v, &s, &mut PlanState::default(), &Context::default()));
            for sport in 0..100 {
                let f = frame([2, 0, 0, 0, 0, 0x99], 30000 + sport);
                let key = FlowKey::from_frame(&f);
                assert_eq!(
                    m.select(&f, 1),
                    Target::from(m.plan.member_for(&key)),
                    "{mode:?}"
                );
                assert_eq!(m.plan.explain(&key, &s.policy).0, m.plan.member_for(&key));
            }
        }
    }

    #[test]
    fn hash_modes_count_load_only_when_rebalancing() {
        let xor = map(BondMode::BalanceXor, &[0, 1], &Clients::new());
        let adaptive = map(BondMode::Adaptive, &[0, 1], &Clients::new());
        for sport in 0..50 {
            let f = frame([2, 0, 0, 0, 0, 0x99], sport);
            assert_ne!(xor.select(&f, 1), Target::Drop);
            assert_ne!(adaptive.select(&f, 1), Target::Drop);
        }
        let total = |m: &BondMap| (0..=255u8).map(|b| m.shared.load.get(b).0).sum::<u64>();
        assert_eq!(total(&xor), 0);
        assert_eq!(total(&adaptive), 50 * 60);
    }

    #[test]
    fn alb_answers_a_client_from_its_member_and_takes_member_macs_in() {
        let client = Ipv4Addr::new(10, 0, 0, 7);
        let clients: Clients = [(client, 2)].into_iter().collect();
        let m = map(BondMode::BalanceAlb, &[0, 1, 2], &clients);
        let reply = ArpRepr {
            op: ArpOp::Reply,
            sender_mac: MacAddr(BOND),
            sender_ip: Ipv4Addr::new(10, 0, 0, 1),
            target_mac: MacAddr([2, 0, 0, 0, 0, 0x77]),
            target_ip: client,
        };
        let mut f = reply.emit_frame(MacAddr(BOND), reply.target_mac);
        assert_eq!(Distribution::select(&m, &mut f, 1), One(2));
        let sent = ArpRepr::parse_frame(&f).unwrap();
        assert_eq!(sent.sender_mac.0, MACS[2]);
        assert_eq!(f[6..12], MACS[2]);
        // A client nobody assigned yet gets the same member the control
        // thread will give it.
        let other = Ipv4Addr::new(10, 0, 0, 8);
        let mut f = ArpRepr {
            target_ip: other,
            ..reply
        }
        .emit_frame(MacAddr(BOND), reply.target_mac);
        let want = alb_member_for(other, &[0, 1, 2]).unwrap();
        assert_eq!(
            Distribution::select(&m, &mut f, 1),
            Target::from(Some(want))
        );
        // A frame for member 1's MAC goes up as the bond's.
        let mut f = frame(MACS[1], 1);
        assert_eq!(m.accept(0, &mut f), Accept::Up);
        assert_eq!(f[0..6], BOND);
    }
}
