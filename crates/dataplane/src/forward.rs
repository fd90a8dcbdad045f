//! The forwarding engine: threads that move frames between the bond's upper
//! device (the TAP) and its members.
//!
//! Why it looks like this (after OpenBSD's aggr(4)): the hot path never runs
//! a protocol state machine. The control plane decides which members may
//! carry traffic and publishes an immutable distribution map; the forwarding
//! threads load the current map once per batch (`arc-swap`: a lock-free
//! pointer read) and hand each frame with the map to a caller-supplied
//! selector. Slow-protocol frames (EtherType 0x8809: LACP, Marker) are the
//! control plane's business: received ones are checked (a known subtype,
//! version and length) and go to their member's own bounded queue, with drops
//! counted per member and per reason, so junk flooding one member can never
//! crowd out another member's LACPDUs; they never reach the TAP; ones the host sends into the TAP are
//! dropped and counted, so they never leave through the hash path. The
//! control plane transmits its own PDUs on a chosen member through a
//! [`MemberSender`].
//!
//! Two threads per engine: *down* (TAP -> members) and *up* (members -> TAP).
//! Each waits in epoll with a timeout and an eventfd, so [`Engine::stop`]
//! returns promptly. Frames keep their virtio-net header the whole way.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::eventfd::{EfdFlags, EventFd};

use crate::device::{plain_packet, Device, RxBatch, SendError, DEFAULT_BATCH, MAX_BATCH};
use crate::sys::SysError;

/// The Slow Protocols EtherType (IEEE 802.3 Annex 57A): LACP and Marker.
pub const ETHERTYPE_SLOW: u16 = 0x8809;

/// The EtherType of an Ethernet frame, if it has one.
pub fn ethertype(frame: &[u8]) -> Option<u16> {
    frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]))
}

/// The default distribution map: which member indices may carry traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DistMap {
    /// Usable member indices, ascending, without duplicates.
    pub usable: Vec<usize>,
    /// A number the publisher bumps on each change, for logs.
    pub generation: u64,
}

impl DistMap {
    /// A map with the given usable members (sorted and deduplicated).
    pub fn new(usable: impl IntoIterator<Item = usize>, generation: u64) -> DistMap {
        let mut usable: Vec<usize> = usable.into_iter().collect();
        usable.sort_unstable();
        usable.dedup();
        DistMap { usable, generation }
    }

    /// True if member `m` may carry traffic.
    pub fn is_usable(&self, m: usize) -> bool {
        self.usable.binary_search(&m).is_ok()
    }

    /// The usable member a hash value maps to (`usable[hash % len]`), if any.
    pub fn pick(&self, hash: u64) -> Option<usize> {
        if self.usable.is_empty() {
            return None;
        }
        self.usable
            .get((hash % self.usable.len() as u64) as usize)
            .copied()
    }
}

/// Publishes distribution maps; the forwarding threads see each new map from
/// their next batch on.
#[derive(Debug)]
pub struct MapPublisher<M> {
    cell: Arc<ArcSwap<M>>,
}

impl<M> Clone for MapPublisher<M> {
    fn clone(&self) -> Self {
        MapPublisher {
            cell: self.cell.clone(),
        }
    }
}

impl<M> MapPublisher<M> {
    /// A publisher holding `initial`.
    pub fn new(initial: M) -> Self {
        MapPublisher {
            cell: Arc::new(ArcSwap::from_pointee(initial)),
        }
    }
    /// Replaces the map atomically.
    pub fn publish(&self, map: M) {
        self.cell.store(Arc::new(map));
    }
    /// The map in force.
    pub fn current(&self) -> Arc<M> {
        self.cell.load_full()
    }
}

/// A slow-protocol frame received on a member, for the control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowFrame {
    /// Index of the member it arrived on.
    pub member: usize,
    /// The Ethernet frame, without the virtio-net header.
    pub frame: Vec<u8>,
}

/// The control plane's side of the per-member control-frame queues.
#[derive(Debug)]
pub struct SlowQueues {
    queues: Vec<Receiver<SlowFrame>>,
    next: std::cell::Cell<usize>,
}

impl SlowQueues {
    /// Takes at most `per_member` frames from each member's queue, members
    /// in turn, so that no member's backlog delays another's frames.
    pub fn drain(&self, per_member: usize) -> Vec<SlowFrame> {
        let mut out = Vec::new();
        for q in &self.queues {
            out.extend(q.try_iter().take(per_member));
        }
        out
    }

    /// One queued frame, taking members in turn; `None` when all are empty.
    pub fn try_recv(&self) -> Option<SlowFrame> {
        let n = self.queues.len();
        for k in 0..n {
            let i = (self.next.get() + k) % n;
            if let Ok(f) = self.queues[i].try_recv() {
                self.next.set((i + 1) % n);
                return Some(f);
            }
        }
        None
    }

    /// Everything queued now, members in turn.
    pub fn try_iter(&self) -> impl Iterator<Item = SlowFrame> + '_ {
        std::iter::from_fn(|| self.try_recv())
    }

    /// Waits up to `timeout` for a frame from any member.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<SlowFrame> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(f) = self.try_recv() {
                return Some(f);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The slow-protocol subtypes the control plane handles (LACP, Marker).
const SLOW_SUBTYPES: [u8; 2] = [1, 2];
/// An LACPDU or Marker PDU is 110 octets after the Ethernet header.
const SLOW_MIN_LEN: usize = 14 + 110;

/// The cheap structural check made before a slow-protocol frame is queued
/// (the control plane parses it in full).
pub fn plausible_slow_frame(frame: &[u8]) -> bool {
    frame.len() >= SLOW_MIN_LEN
        && SLOW_SUBTYPES.contains(&frame[14])
        && (1..=2).contains(&frame[15])
}

/// Why the engine itself dropped a frame (device-level drops are in each
/// device's counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineDrop {
    /// The selector chose no member, or an index out of range.
    NoMember,
    /// A slow-protocol frame came from the upper device; it may not use the hash path.
    SlowFromUpper,
    /// A member's control-frame queue was full (or its receiver gone).
    SlowQueueFull,
    /// A frame shorter than an Ethernet header, or a slow-protocol frame
    /// that is no LACPDU or Marker PDU.
    Malformed,
    /// A device read failed with an error other than "nothing ready".
    RecvError,
    /// A frame arrived on a member the map does not collect from.
    NotCollecting,
}

impl EngineDrop {
    /// Every reason, in counter order.
    pub const ALL: [EngineDrop; 6] = [
        EngineDrop::NoMember,
        EngineDrop::SlowFromUpper,
        EngineDrop::SlowQueueFull,
        EngineDrop::Malformed,
        EngineDrop::RecvError,
        EngineDrop::NotCollecting,
    ];
}

#[derive(Debug, Default)]
struct MemberStats {
    down_packets: AtomicU64,
    down_bytes: AtomicU64,
    up_packets: AtomicU64,
    up_bytes: AtomicU64,
    slow_rx: AtomicU64,
    slow_tx: AtomicU64,
    control_malformed: AtomicU64,
    control_queue_full: AtomicU64,
}

/// What the engine did for one member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberSnapshot {
    /// Frames the engine handed to this member (accepted by it).
    pub down_packets: u64,
    /// Bytes of those frames.
    pub down_bytes: u64,
    /// Frames from this member written to the upper device.
    pub up_packets: u64,
    /// Bytes of those frames.
    pub up_bytes: u64,
    /// Slow-protocol frames received and queued for the control plane.
    pub slow_rx: u64,
    /// Slow-protocol frames the control plane sent on this member.
    pub slow_tx: u64,
    /// Control frames from this member dropped as malformed.
    pub control_malformed: u64,
    /// Control frames from this member dropped because its queue was full.
    pub control_queue_full: u64,
}

/// The engine's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineSnapshot {
    /// Per member, in member order.
    pub members: Vec<MemberSnapshot>,
    /// Engine drops, indexed like [`EngineDrop::ALL`].
    pub drops: [u64; EngineDrop::ALL.len()],
}

impl EngineSnapshot {
    /// Drops for one reason.
    pub fn dropped(&self, r: EngineDrop) -> u64 {
        self.drops[r as usize]
    }
}

#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    members: Vec<MemberStats>,
    drops: [AtomicU64; EngineDrop::ALL.len()],
}

impl Shared {
    fn count_drop(&self, r: EngineDrop, n: u64) {
        self.drops[r as usize].fetch_add(n, Relaxed);
    }
}

/// Engine tuning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// Packets read per device per wake-up (1..=256).
    pub batch: usize,
    /// Longest wait in epoll before re-checking the stop flag.
    pub poll_timeout: Duration,
    /// Capacity of each member's control-frame queue.
    pub slow_queue: usize,
    /// How often kernel-side counters (socket drops) are collected.
    pub refresh_interval: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            batch: DEFAULT_BATCH,
            poll_timeout: Duration::from_millis(100),
            slow_queue: 256,
            refresh_interval: Duration::from_millis(500),
        }
    }
}

/// Why the engine could not start or stopped badly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// epoll, eventfd or thread creation failed.
    #[error(transparent)]
    Sys(#[from] SysError),
    /// A forwarding thread panicked (most likely in the selector).
    #[error("forwarding thread {0} panicked")]
    ThreadPanicked(&'static str),
}

/// Sends control-plane frames (LACPDUs, Markers) on one member, bypassing the hash path.
#[derive(Clone)]
pub struct MemberSender {
    dev: Arc<dyn Device>,
    index: usize,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for MemberSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberSender")
            .field("member", &self.dev.name())
            .field("index", &self.index)
            .finish()
    }
}

impl MemberSender {
    /// The member's index.
    pub fn index(&self) -> usize {
        self.index
    }
    /// Sends one complete Ethernet frame (checksums done, no GSO) on the member.
    pub fn send_frame(&self, frame: &[u8]) -> Result<(), SendError> {
        self.dev.send(&plain_packet(frame))?;
        if let Some(s) = self.shared.members.get(self.index) {
            s.slow_tx.fetch_add(1, Relaxed);
        }
        Ok(())
    }
}

/// Picks a frame's member: the frame (without its virtio-net header), how
/// many wire frames it stands for (a GSO super-frame's segments, else 1),
/// and the map.
type Selector<M> = dyn Fn(&mut [u8], u32, &M) -> Target + Send + Sync;
type AcceptFn<M> = dyn Fn(usize, &mut [u8], &M) -> Accept + Send + Sync;

/// What happens to a frame received on a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Not passed up (counted as `NotCollecting`).
    Drop,
    /// Passed up to the upper device.
    Up,
    /// Passed up, and a copy goes to the control queue (ARP the control
    /// plane must see: probe replies, balance-alb clients).
    UpAndCopy,
    /// Not passed up, but copied to the control queue (a probe reply on a
    /// standby member).
    CopyOnly,
}

/// A distribution map the engine can use directly: it picks members for
/// frames from the host, filters and fixes up frames from members, and
/// may rewrite frames in place (source MAC per member, ARP replies).
pub trait Distribution: Members + Send + Sync + 'static {
    /// Where a frame from the upper device goes; may rewrite it.
    /// `segments` is how many frames it becomes on the wire (a GSO
    /// super-frame's segment count, else 1), for selectors that deal by
    /// frames (round-robin).
    fn select(&self, frame: &mut [u8], segments: u32) -> Target;
    /// What to do with a frame received on `member`; may rewrite it.
    fn accept(&self, member: usize, frame: &mut [u8]) -> Accept;
}

/// Where the selector sends a frame from the upper device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nowhere (counted as `NoMember`).
    Drop,
    /// To one member.
    One(usize),
    /// To every member the map calls usable (the broadcast mode).
    All,
}

impl From<Option<usize>> for Target {
    fn from(m: Option<usize>) -> Target {
        m.map_or(Target::Drop, Target::One)
    }
}

/// Maps that can list the members a broadcast goes to.
pub trait Members {
    /// Member indices a `Target::All` frame is sent to.
    fn all_members(&self) -> &[usize];
}

impl Members for DistMap {
    fn all_members(&self) -> &[usize] {
        &self.usable
    }
}

/// A running pair of forwarding threads for one bond.
pub struct Engine<M: Send + Sync + 'static = DistMap> {
    members: Vec<Arc<dyn Device>>,
    publisher: MapPublisher<M>,
    shared: Arc<Shared>,
    wake: Arc<EventFd>,
    threads: Vec<(&'static str, JoinHandle<()>)>,
}

impl<M: Send + Sync + 'static> std::fmt::Debug for Engine<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.members.iter().map(|m| m.name()).collect();
        f.debug_struct("Engine")
            .field("members", &names)
            .finish_non_exhaustive()
    }
}

const STOP_TOKEN: u64 = u64::MAX;

fn timeout_ms(d: Duration) -> u16 {
    u16::try_from(d.as_millis()).unwrap_or(u16::MAX).max(1)
}

fn sys(op: &'static str) -> impl Fn(Errno) -> SysError {
    move |errno| SysError { op, errno }
}

/// Calls `f` with the packets of `batch` at `idx`, without allocating.
fn with_packets<R>(batch: &RxBatch, idx: &[usize], f: impl FnOnce(&[&[u8]]) -> R) -> R {
    let mut arr: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
    let n = idx.len().min(MAX_BATCH);
    for (slot, &i) in arr.iter_mut().zip(&idx[..n]) {
        *slot = batch.packet(i);
    }
    f(&arr[..n])
}

impl<M: Send + Sync + 'static> Engine<M> {
    /// Starts forwarding between `upper` and `members` with `initial` as the
    /// distribution map. `selector(frame, map)` picks the member index for a
    /// frame from the upper device (frame without the virtio-net header).
    /// Returns the engine and the receiving end of the slow-protocol queue.
    pub fn start<S, R>(
        upper: Arc<dyn Device>,
        members: Vec<Arc<dyn Device>>,
        initial: M,
        selector: S,
        cfg: EngineConfig,
    ) -> Result<(Engine<M>, SlowQueues), EngineError>
    where
        S: Fn(&[u8], &M) -> R + Send + Sync + 'static,
        R: Into<Target>,
        M: Members,
    {
        Self::start_filtered(upper, members, initial, selector, |_, _| true, cfg)
    }

    /// As [`Engine::start`], with a receive filter: frames from member `m`
    /// go up only if `accept(m, map)` (802.1AX: only collecting ports pass
    /// frames to the client; active-backup: only the active member). Slow
    /// protocol frames always reach the control queue.
    pub fn start_filtered<S, R, A>(
        upper: Arc<dyn Device>,
        members: Vec<Arc<dyn Device>>,
        initial: M,
        selector: S,
        accept: A,
        cfg: EngineConfig,
    ) -> Result<(Engine<M>, SlowQueues), EngineError>
    where
        S: Fn(&[u8], &M) -> R + Send + Sync + 'static,
        R: Into<Target>,
        A: Fn(usize, &M) -> bool + Send + Sync + 'static,
        M: Members,
    {
        Self::start_raw(
            upper,
            members,
            initial,
            Arc::new(move |f: &mut [u8], _: u32, m: &M| selector(f, m).into()),
            Arc::new(move |i, _: &mut [u8], m: &M| {
                if accept(i, m) {
                    Accept::Up
                } else {
                    Accept::Drop
                }
            }),
            cfg,
        )
    }

    /// Starts an engine whose map is a [`Distribution`].
    pub fn start_map(
        upper: Arc<dyn Device>,
        members: Vec<Arc<dyn Device>>,
        initial: M,
        cfg: EngineConfig,
    ) -> Result<(Engine<M>, SlowQueues), EngineError>
    where
        M: Distribution,
    {
        Self::start_raw(
            upper,
            members,
            initial,
            Arc::new(|f: &mut [u8], segs: u32, m: &M| m.select(f, segs)),
            Arc::new(|i, f: &mut [u8], m: &M| m.accept(i, f)),
            cfg,
        )
    }

    fn start_raw(
        upper: Arc<dyn Device>,
        members: Vec<Arc<dyn Device>>,
        initial: M,
        selector: Arc<Selector<M>>,
        accept: Arc<AcceptFn<M>>,
        cfg: EngineConfig,
    ) -> Result<(Engine<M>, SlowQueues), EngineError>
    where
        M: Members,
    {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            members: members.iter().map(|_| MemberStats::default()).collect(),
            drops: Default::default(),
        });
        let wake = Arc::new(
            EventFd::from_flags(EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
                .map_err(sys("eventfd"))?,
        );
        let publisher = MapPublisher::new(initial);
        let (slow_tx, slow_rx): (Vec<_>, Vec<_>) = members
            .iter()
            .map(|_| mpsc::sync_channel(cfg.slow_queue.max(1)))
            .unzip();
        let slow_rx = SlowQueues {
            queues: slow_rx,
            next: std::cell::Cell::new(0),
        };

        let down_epoll =
            Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(sys("epoll_create1"))?;
        down_epoll
            .add(upper.poll_fd(), EpollEvent::new(EpollFlags::EPOLLIN, 0))
            .map_err(sys("epoll_ctl"))?;
        down_epoll
            .add(
                wake.as_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, STOP_TOKEN),
            )
            .map_err(sys("epoll_ctl"))?;
        let up_epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(sys("epoll_create1"))?;
        for (i, m) in members.iter().enumerate() {
            up_epoll
                .add(m.poll_fd(), EpollEvent::new(EpollFlags::EPOLLIN, i as u64))
                .map_err(sys("epoll_ctl"))?;
        }
        up_epoll
            .add(
                wake.as_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, STOP_TOKEN),
            )
            .map_err(sys("epoll_ctl"))?;

        let mut engine = Engine {
            members: members.clone(),
            publisher: publisher.clone(),
            shared: shared.clone(),
            wake,
            threads: Vec::new(),
        };

        let down = Down {
            upper: upper.clone(),
            members: members.clone(),
            publisher,
            selector,
            shared: shared.clone(),
            epoll: down_epoll,
            cfg: cfg.clone(),
        };
        let h = std::thread::Builder::new()
            .name("lk-fwd-down".into())
            .spawn(move || down.run())
            .map_err(|e| SysError {
                op: "spawn",
                errno: Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            })?;
        engine.threads.push(("down", h));

        let up = Up {
            upper,
            members,
            publisher: engine.publisher.clone(),
            accept,
            shared,
            epoll: up_epoll,
            slow: slow_tx,
            cfg,
        };
        let h = std::thread::Builder::new()
            .name("lk-fwd-up".into())
            .spawn(move || up.run())
            .map_err(|e| SysError {
                op: "spawn",
                errno: Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            })?;
        engine.threads.push(("up", h));
        Ok((engine, slow_rx))
    }

    /// A handle to publish new distribution maps.
    pub fn publisher(&self) -> MapPublisher<M> {
        self.publisher.clone()
    }

    /// A handle for control-plane transmission on member `i`.
    pub fn member_sender(&self, i: usize) -> Option<MemberSender> {
        self.members.get(i).map(|d| MemberSender {
            dev: d.clone(),
            index: i,
            shared: self.shared.clone(),
        })
    }

    /// The members, in index order.
    pub fn members(&self) -> &[Arc<dyn Device>] {
        &self.members
    }

    /// The engine's counters.
    pub fn stats(&self) -> EngineSnapshot {
        let mut drops = [0; EngineDrop::ALL.len()];
        for (d, a) in drops.iter_mut().zip(self.shared.drops.iter()) {
            *d = a.load(Relaxed);
        }
        EngineSnapshot {
            members: self
                .shared
                .members
                .iter()
                .map(|m| MemberSnapshot {
                    down_packets: m.down_packets.load(Relaxed),
                    down_bytes: m.down_bytes.load(Relaxed),
                    up_packets: m.up_packets.load(Relaxed),
                    up_bytes: m.up_bytes.load(Relaxed),
                    slow_rx: m.slow_rx.load(Relaxed),
                    slow_tx: m.slow_tx.load(Relaxed),
                    control_malformed: m.control_malformed.load(Relaxed),
                    control_queue_full: m.control_queue_full.load(Relaxed),
                })
                .collect(),
            drops,
        }
    }

    /// Stops both threads and waits for them.
    pub fn stop(mut self) -> Result<(), EngineError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), EngineError> {
        self.shared.stop.store(true, Relaxed);
        let _ = self.wake.write(1);
        let mut result = Ok(());
        for (name, h) in self.threads.drain(..) {
            if h.join().is_err() {
                result = Err(EngineError::ThreadPanicked(name));
            }
        }
        result
    }
}

impl<M: Send + Sync + 'static> Drop for Engine<M> {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

struct Down<M> {
    upper: Arc<dyn Device>,
    members: Vec<Arc<dyn Device>>,
    publisher: MapPublisher<M>,
    selector: Arc<Selector<M>>,
    shared: Arc<Shared>,
    epoll: Epoll,
    cfg: EngineConfig,
}

impl<M: Members> Down<M> {
    fn run(self) {
        let mut batch = RxBatch::new(self.cfg.batch);
        let mut per_member: Vec<Vec<usize>> = self
            .members
            .iter()
            .map(|_| Vec::with_capacity(batch.capacity()))
            .collect();
        let mut events = [EpollEvent::empty(); 2];
        let timeout = timeout_ms(self.cfg.poll_timeout);
        while !self.shared.stop.load(Relaxed) {
            match self.epoll.wait(&mut events, timeout) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => {
                    // Should not happen; avoid a hot loop if it does.
                    std::thread::sleep(self.cfg.poll_timeout);
                    continue;
                }
            }
            // Drain the upper device, one batch at a time.
            while !self.shared.stop.load(Relaxed) {
                batch.clear();
                match self.upper.recv(&mut batch) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(_) => {
                        self.shared.count_drop(EngineDrop::RecvError, 1);
                        // A TAP whose interface was deleted polls as an error
                        // for ever; do not spin on it.
                        std::thread::sleep(self.cfg.poll_timeout);
                        break;
                    }
                }
                self.distribute(&mut batch, &mut per_member);
                if !batch.is_full() {
                    break;
                }
            }
        }
    }

    fn distribute(&self, batch: &mut RxBatch, per_member: &mut [Vec<usize>]) {
        let map = self.publisher.cell.load();
        for i in 0..batch.len() {
            let segs = batch.vnet(i).segments(batch.frame(i));
            let frame = batch.frame_mut(i);
            match ethertype(frame) {
                None => self.shared.count_drop(EngineDrop::Malformed, 1),
                Some(ETHERTYPE_SLOW) => self.shared.count_drop(EngineDrop::SlowFromUpper, 1),
                Some(_) => match (self.selector)(frame, segs, &map) {
                    Target::One(m) if m < per_member.len() => per_member[m].push(i),
                    Target::All => {
                        let mut any = false;
                        for &m in map.all_members() {
                            if let Some(q) = per_member.get_mut(m) {
                                q.push(i);
                                any = true;
                            }
                        }
                        if !any {
                            self.shared.count_drop(EngineDrop::NoMember, 1);
                        }
                    }
                    _ => self.shared.count_drop(EngineDrop::NoMember, 1),
                },
            }
        }
        for (m, idx) in per_member.iter_mut().enumerate() {
            if idx.is_empty() {
                continue;
            }
            let (sent, bytes) = with_packets(batch, idx, |pkts| {
                let sent = self.members[m].send_batch(pkts);
                // Devices send in order, so the first `sent` were accepted.
                let bytes: usize = pkts[..sent]
                    .iter()
                    .map(|p| p.len().saturating_sub(crate::vnet::HEADER_LEN))
                    .sum();
                (sent, bytes)
            });
            let st = &self.shared.members[m];
            st.down_packets.fetch_add(sent as u64, Relaxed);
            st.down_bytes.fetch_add(bytes as u64, Relaxed);
            idx.clear();
        }
    }
}

struct Up<M> {
    upper: Arc<dyn Device>,
    members: Vec<Arc<dyn Device>>,
    publisher: MapPublisher<M>,
    accept: Arc<AcceptFn<M>>,
    shared: Arc<Shared>,
    epoll: Epoll,
    slow: Vec<SyncSender<SlowFrame>>,
    cfg: EngineConfig,
}

impl<M: Send + Sync + 'static> Up<M> {
    /// Queues a copy of a frame for the control plane on member `m`'s own
    /// queue (bounded; a full queue counts a drop and never blocks
    /// forwarding). Slow-protocol frames are checked first.
    fn to_control(&self, m: usize, frame: &[u8], slow: bool) {
        let st = &self.shared.members[m];
        if slow && !plausible_slow_frame(frame) {
            st.control_malformed.fetch_add(1, Relaxed);
            self.shared.count_drop(EngineDrop::Malformed, 1);
            return;
        }
        let Some(q) = self.slow.get(m) else { return };
        match q.try_send(SlowFrame {
            member: m,
            frame: frame.to_vec(),
        }) {
            Ok(()) => {
                if slow {
                    st.slow_rx.fetch_add(1, Relaxed);
                }
            }
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                st.control_queue_full.fetch_add(1, Relaxed);
                self.shared.count_drop(EngineDrop::SlowQueueFull, 1)
            }
        }
    }

    fn run(self) {
        let mut batch = RxBatch::new(self.cfg.batch);
        let mut up_idx: Vec<usize> = Vec::with_capacity(batch.capacity());
        let mut events = vec![EpollEvent::empty(); self.members.len() + 1];
        let timeout = timeout_ms(self.cfg.poll_timeout);
        let mut last_refresh = Instant::now();
        while !self.shared.stop.load(Relaxed) {
            let n = match self.epoll.wait(&mut events, timeout) {
                Ok(n) => n,
                Err(Errno::EINTR) => 0,
                Err(_) => {
                    std::thread::sleep(self.cfg.poll_timeout);
                    0
                }
            };
            // One batch per ready member per wake-up: a busy member cannot starve the others.
            for ev in &events[..n] {
                let m = ev.data();
                if m == STOP_TOKEN {
                    continue;
                }
                let m = m as usize;
                let Some(dev) = self.members.get(m) else {
                    continue;
                };
                batch.clear();
                if dev.recv(&mut batch).is_err() {
                    self.shared.count_drop(EngineDrop::RecvError, 1);
                    continue;
                }
                self.deliver(m, &mut batch, &mut up_idx);
            }
            if last_refresh.elapsed() >= self.cfg.refresh_interval {
                last_refresh = Instant::now();
                for m in &self.members {
                    m.refresh_counters();
                }
            }
        }
        for m in &self.members {
            m.refresh_counters();
        }
    }

    fn deliver(&self, m: usize, batch: &mut RxBatch, up_idx: &mut Vec<usize>) {
        up_idx.clear();
        let st = &self.shared.members[m];
        let map = self.publisher.cell.load();
        for i in 0..batch.len() {
            let frame = batch.frame_mut(i);
            match ethertype(frame) {
                None => self.shared.count_drop(EngineDrop::Malformed, 1),
                Some(ETHERTYPE_SLOW) => self.to_control(m, frame, true),
                Some(_) => match (self.accept)(m, frame, &map) {
                    Accept::Up => up_idx.push(i),
                    Accept::UpAndCopy => {
                        self.to_control(m, frame, false);
                        up_idx.push(i);
                    }
                    Accept::CopyOnly => self.to_control(m, frame, false),
                    Accept::Drop => self.shared.count_drop(EngineDrop::NotCollecting, 1),
                },
            }
        }
        if up_idx.is_empty() {
            return;
        }
        let (sent, bytes) = with_packets(batch, up_idx, |pkts| {
            let sent = self.upper.send_batch(pkts);
            let bytes: usize = pkts[..sent]
                .iter()
                .map(|p| p.len().saturating_sub(crate::vnet::HEADER_LEN))
                .sum();
            (sent, bytes)
        });
        st.up_packets.fetch_add(sent as u64, Relaxed);
        st.up_bytes.fetch_add(bytes as u64, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Counters;
    use crate::pair::PairDevice;
    use std::time::Instant;

    fn frame(ethertype: u16, tag: u8, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&ethertype.to_be_bytes());
        f[14] = tag;
        if ethertype == ETHERTYPE_SLOW && len > 15 {
            f[15] = 1; // version
        }
        f
    }

    fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !cond() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn recv_all(dev: &PairDevice, into: &mut Vec<Vec<u8>>) {
        let mut b = RxBatch::new(64);
        while dev.recv(&mut b).unwrap() > 0 {
            into.extend(b.iter().map(|p| p[crate::vnet::HEADER_LEN..].to_vec()));
            b.clear();
        }
    }

    /// Upper and two members over in-process links: frames go down to the
    /// member the selector picks from the published map, come up from every
    /// member, slow-protocol frames go to the queue in both cases.
    #[test]
    fn forwards_and_separates_slow_frames() {
        let (upper_eng, upper_host) = PairDevice::pair("tap", "host").unwrap();
        let (m0_eng, m0_wire) = PairDevice::pair("m0", "w0").unwrap();
        let (m1_eng, m1_wire) = PairDevice::pair("m1", "w1").unwrap();
        let upper_counters: Arc<Counters> = upper_eng.counters_arc();
        let members: Vec<Arc<dyn Device>> = vec![Arc::new(m0_eng), Arc::new(m1_eng)];
        // Selector: frame byte 14 is a "flow id"; map picks among usable members.
        let (engine, slow) = Engine::start(
            Arc::new(upper_eng),
            members,
            DistMap::new([0, 1], 1),
            |f: &[u8], map: &DistMap| map.pick(u64::from(f[14])),
            EngineConfig::default(),
        )
        .unwrap();

        for flow in 0..4u8 {
            upper_host
                .send(&plain_packet(&frame(0x0800, flow, 100)))
                .unwrap();
        }
        upper_host
            .send(&plain_packet(&frame(ETHERTYPE_SLOW, 9, 60)))
            .unwrap();
        let (mut w0, mut w1) = (Vec::new(), Vec::new());
        wait_for("4 frames down", || {
            recv_all(&m0_wire, &mut w0);
            recv_all(&m1_wire, &mut w1);
            w0.len() + w1.len() == 4
        });
        assert_eq!(w0.iter().map(|f| f[14]).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(w1.iter().map(|f| f[14]).collect::<Vec<_>>(), vec![1, 3]);
        wait_for("slow-from-upper drop", || {
            engine.stats().dropped(EngineDrop::SlowFromUpper) == 1
        });

        // Member 1 leaves the distribution: everything goes to member 0.
        engine.publisher().publish(DistMap::new([0], 2));
        for flow in 0..4u8 {
            upper_host
                .send(&plain_packet(&frame(0x0800, flow, 100)))
                .unwrap();
        }
        w0.clear();
        w1.clear();
        wait_for("4 frames on m0", || {
            recv_all(&m0_wire, &mut w0);
            w0.len() == 4
        });
        recv_all(&m1_wire, &mut w1);
        assert!(w1.is_empty());
        engine.publisher().publish(DistMap::new([], 3));
        upper_host
            .send(&plain_packet(&frame(0x0800, 0, 100)))
            .unwrap();
        wait_for("no-member drop", || {
            engine.stats().dropped(EngineDrop::NoMember) == 1
        });

        // Up: data from both members reaches the host; slow frames the queue.
        m0_wire.send(&plain_packet(&frame(0x86dd, 7, 80))).unwrap();
        m1_wire
            .send(&plain_packet(&frame(ETHERTYPE_SLOW, 1, 124)))
            .unwrap();
        m1_wire.send(&plain_packet(&frame(0x0806, 8, 60))).unwrap();
        let mut host = Vec::new();
        wait_for("2 frames up", || {
            recv_all(&upper_host, &mut host);
            host.len() == 2
        });
        assert!(host.iter().all(|f| ethertype(f) != Some(ETHERTYPE_SLOW)));
        let s = slow.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(s.member, 1);
        assert_eq!(s.frame, frame(ETHERTYPE_SLOW, 1, 124));

        // Control-plane transmit on a chosen member.
        let tx = engine.member_sender(0).unwrap();
        tx.send_frame(&frame(ETHERTYPE_SLOW, 5, 124)).unwrap();
        let mut got = Vec::new();
        wait_for("LACPDU on m0", || {
            recv_all(&m0_wire, &mut got);
            !got.is_empty()
        });
        assert_eq!(got[0][14], 5);
        assert!(engine.member_sender(2).is_none());

        let st = engine.stats();
        assert_eq!(st.members[0].down_packets, 6);
        assert_eq!(st.members[1].down_packets, 2);
        assert_eq!(st.members[0].up_packets, 1);
        assert_eq!(st.members[1].up_packets, 1);
        assert_eq!(st.members[1].slow_rx, 1);
        assert_eq!(st.members[0].slow_tx, 1);
        assert_eq!(upper_counters.snapshot().tx_packets, 2);
        let t = Instant::now();
        engine.stop().unwrap();
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn slow_queue_overflow_is_counted() {
        let (upper_eng, _upper_host) = PairDevice::pair("tap", "host").unwrap();
        let (m0_eng, m0_wire) = PairDevice::pair("m0", "w0").unwrap();
        let cfg = EngineConfig {
            slow_queue: 2,
            ..EngineConfig::default()
        };
        let (engine, slow) = Engine::start(
            Arc::new(upper_eng),
            vec![Arc::new(m0_eng) as Arc<dyn Device>],
            DistMap::new([0], 0),
            |_: &[u8], m: &DistMap| m.pick(0),
            cfg,
        )
        .unwrap();
        for _ in 0..5 {
            m0_wire
                .send(&plain_packet(&frame(ETHERTYPE_SLOW, 1, 124)))
                .unwrap();
        }
        wait_for("3 queue drops", || {
            engine.stats().dropped(EngineDrop::SlowQueueFull) == 3
        });
        assert_eq!(slow.try_iter().count(), 2);
        assert_eq!(engine.stats().members[0].control_queue_full, 3);
        drop(engine);
    }

    /// Junk and a backlog on one member neither reach nor delay another
    /// member's control frames; each drop is counted on its own member.
    #[test]
    fn a_flood_on_one_member_leaves_the_other_members_queue_alone() {
        let (upper_eng, _upper_host) = PairDevice::pair("tap", "host").unwrap();
        let (m0_eng, m0_wire) = PairDevice::pair("m0", "w0").unwrap();
        let (m1_eng, m1_wire) = PairDevice::pair("m1", "w1").unwrap();
        let cfg = EngineConfig {
            slow_queue: 4,
            ..EngineConfig::default()
        };
        let (engine, slow) = Engine::start(
            Arc::new(upper_eng),
            vec![
                Arc::new(m0_eng) as Arc<dyn Device>,
                Arc::new(m1_eng) as Arc<dyn Device>,
            ],
            DistMap::new([0, 1], 0),
            |_: &[u8], m: &DistMap| m.pick(0),
            cfg,
        )
        .unwrap();
        for i in 0..50u8 {
            // Junk (unknown subtype, short) and plausible PDUs, alternating.
            let f = if i % 2 == 0 {
                frame(ETHERTYPE_SLOW, 0x55, 60)
            } else {
                frame(ETHERTYPE_SLOW, 1, 124)
            };
            m0_wire.send(&plain_packet(&f)).unwrap();
        }
        wait_for("m0's drops", || {
            let s = engine.stats().members[0];
            s.control_malformed == 25 && s.control_queue_full == 21
        });
        m1_wire
            .send(&plain_packet(&frame(ETHERTYPE_SLOW, 2, 124)))
            .unwrap();
        let mut got = Vec::new();
        wait_for("m1's frame", || {
            got.extend(slow.drain(64));
            got.iter().any(|f| f.member == 1)
        });
        let st = engine.stats();
        assert_eq!(st.members[1].control_malformed, 0);
        assert_eq!(st.members[1].control_queue_full, 0);
        assert_eq!(got.iter().filter(|f| f.member == 0).count(), 4);
        assert!(!plausible_slow_frame(&frame(ETHERTYPE_SLOW, 3, 124)));
        assert!(plausible_slow_frame(&frame(ETHERTYPE_SLOW, 2, 124)));
        drop(engine);
    }

    #[test]
    fn distmap() {
        let m = DistMap::new([3, 1, 3, 2], 7);
        assert_eq!(m.usable, vec![1, 2, 3]);
        assert!(m.is_usable(2) && !m.is_usable(0));
        assert_eq!(m.pick(4), Some(2));
        assert_eq!(DistMap::default().pick(1), None);
        assert_eq!(ethertype(&[0; 13]), None);
        let p = MapPublisher::new(m.clone());
        p.publish(DistMap::new([0], 8));
        assert_eq!(p.current().generation, 8);
    }
}
