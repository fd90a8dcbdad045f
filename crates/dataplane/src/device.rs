//! The `Device` abstraction: something that receives and sends Ethernet
//! frames, each preceded by a virtio-net header.
//!
//! Why this shape: the TAP, AF_PACKET members, in-process test links and the
//! wrappers (pcap, fault injection) all look the same to the forwarding
//! engine, as smoltcp's `Device` lets a stack run over anything. Unlike
//! smoltcp's, this trait takes `&self`: the engine reads a device on one
//! thread while another thread (or the control plane) sends on it, and the
//! underlying file descriptors allow exactly that. Buffers belong to the
//! caller ([`RxBatch`]) so the hot path allocates nothing, and every place a
//! frame can be dropped bumps a [`Counters`] field.
//!
//! Every buffer passed in or out is *a packet*: the 10-byte virtio-net
//! header followed by the Ethernet frame, exactly what a TAP with
//! `IFF_VNET_HDR` and an AF_PACKET socket with `PACKET_VNET_HDR` read and
//! write. A frame can therefore move from one device to another untouched.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use nix::errno::Errno;

use crate::sys::SysError;
use crate::vnet::{self, VnetHeader, HEADER_LEN};

/// Spare bytes in front of each receive slot, so a VLAN tag the kernel took
/// out of the frame can be put back without moving the payload.
pub const HEADROOM: usize = 4;

/// The largest packet (header + frame) a slot holds: a 64 KiB GSO frame plus
/// Ethernet and VLAN headers, with room to spare.
pub const MAX_PACKET: usize = HEADER_LEN + 65536 + 14 + 8 + 256;

/// The default number of slots in a batch.
pub const DEFAULT_BATCH: usize = 32;

/// The largest batch a device fills in one call.
pub const MAX_BATCH: usize = 256;

/// Caller-owned receive buffers: up to `capacity` packets, each a virtio-net
/// header followed by an Ethernet frame.
pub struct RxBatch {
    slots: Vec<Box<[u8]>>,
    start: Vec<usize>,
    len: Vec<usize>,
    count: usize,
}

impl std::fmt::Debug for RxBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxBatch")
            .field("capacity", &self.slots.len())
            .field("len", &self.count)
            .finish()
    }
}

impl RxBatch {
    /// A batch of `capacity` slots (clamped to 1..=[`MAX_BATCH`]) of [`MAX_PACKET`] bytes each.
    pub fn new(capacity: usize) -> RxBatch {
        let n = capacity.clamp(1, MAX_BATCH);
        RxBatch {
            slots: (0..n)
                .map(|_| vec![0u8; HEADROOM + MAX_PACKET].into_boxed_slice())
                .collect(),
            start: vec![HEADROOM; n],
            len: vec![0; n],
            count: 0,
        }
    }

    /// How many packets the batch can hold.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many packets it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True if it holds no packet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// True if no slot is free.
    pub fn is_full(&self) -> bool {
        self.count == self.slots.len()
    }

    /// Forgets all packets (keeps the buffers).
    pub fn clear(&mut self) {
        self.count = 0;
    }

    /// Packet `i` (header + frame), or an empty slice if `i` is out of range.
    pub fn packet(&self, i: usize) -> &[u8] {
        if i >= self.count {
            return &[];
        }
        &self.slots[i][self.start[i]..self.start[i] + self.len[i]]
    }

    /// Packet `i` (header + frame), mutable; empty if `i` is out of range.
    pub fn packet_mut(&mut self, i: usize) -> &mut [u8] {
        if i >= self.count {
            return &mut [];
        }
        let (s, l) = (self.start[i], self.len[i]);
        &mut self.slots[i][s..s + l]
    }

    /// The Ethernet frame of packet `i`, mutable (for rewrites on the way through).
    pub fn frame_mut(&mut self, i: usize) -> &mut [u8] {
        self.packet_mut(i).get_mut(HEADER_LEN..).unwrap_or(&mut [])
    }

    /// The Ethernet frame of packet `i`, without the virtio-net header.
    pub fn frame(&self, i: usize) -> &[u8] {
        self.packet(i).get(HEADER_LEN..).unwrap_or(&[])
    }

    /// The virtio-net header view of packet `i` (devices only commit packets of at least [`HEADER_LEN`] bytes).
    pub fn vnet(&self, i: usize) -> VnetHeader<&[u8]> {
        let p = self.packet(i);
        if p.len() >= HEADER_LEN {
            VnetHeader::new_unchecked(p)
        } else {
            VnetHeader::new_unchecked(&[0u8; HEADER_LEN][..])
        }
    }

    /// The packets, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.count).map(move |i| self.packet(i))
    }

    /// Keeps only the packets for which `keep` returns true, preserving order
    /// (buffers are swapped, not copied).
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8]) -> bool) {
        let mut w = 0;
        for r in 0..self.count {
            let (s, l) = (self.start[r], self.len[r]);
            if keep(&self.slots[r][s..s + l]) {
                if w != r {
                    self.slots.swap(w, r);
                    self.start.swap(w, r);
                    self.len.swap(w, r);
                }
                w += 1;
            }
        }
        self.count = w;
    }

    /// Copies a packet into the next free slot; false if the batch is full or it does not fit.
    pub fn push(&mut self, packet: &[u8]) -> bool {
        match self.spare() {
            Some(slot) if packet.len() <= slot.len() => {
                slot[..packet.len()].copy_from_slice(packet);
                self.commit(packet.len());
                true
            }
            _ => false,
        }
    }

    /// The next free slot (after the headroom), for a device to read into;
    /// follow with [`RxBatch::commit`].
    pub fn spare(&mut self) -> Option<&mut [u8]> {
        let i = self.count;
        self.slots.get_mut(i).map(|s| &mut s[HEADROOM..])
    }

    /// Records that `len` bytes were written into the slot [`RxBatch::spare`] returned.
    pub fn commit(&mut self, len: usize) {
        self.commit_at(HEADROOM, len);
    }

    pub(crate) fn commit_at(&mut self, start: usize, len: usize) {
        let i = self.count;
        if let Some(slot) = self.slots.get(i) {
            let start = start.min(slot.len());
            self.start[i] = start;
            self.len[i] = len.min(slot.len() - start);
            self.count += 1;
        }
    }

    /// Commits the `k`-th currently free slot as the next packet, swapping it
    /// into place (the `k` slots before it hold nothing worth keeping).
    pub(crate) fn commit_free(&mut self, k: usize, start: usize, len: usize) {
        let from = self.count + k;
        if k > 0 && from < self.slots.len() {
            // Earlier skipped slots hold nothing; swap this one into place.
            self.slots.swap(self.count, from);
        }
        self.commit_at(start, len);
    }

    /// The free slots, whole (headroom included), for batched reads.
    pub(crate) fn free_slots(&mut self) -> &mut [Box<[u8]>] {
        &mut self.slots[self.count..]
    }
}

/// Why a frame was dropped; each reason has its own counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Transmit queue or socket buffer full (`EAGAIN`/`ENOBUFS`): a busy member never stalls the others.
    TxFull,
    /// The kernel refused the frame (bad virtio-net header, larger than the MTU, ...).
    TxRejected,
    /// The device is down or gone.
    TxDown,
    /// Dropped on transmit by a fault injector.
    TxFault,
    /// A received frame was larger than the slot and was cut.
    RxTruncated,
    /// A received buffer was too short for a virtio-net header plus an Ethernet header.
    RxMalformed,
    /// Dropped on receive by a fault injector.
    RxFault,
    /// Dropped by the kernel before it reached us (receive buffer full; `PACKET_STATISTICS`).
    RxKernel,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 8] = [
        DropReason::TxFull,
        DropReason::TxRejected,
        DropReason::TxDown,
        DropReason::TxFault,
        DropReason::RxTruncated,
        DropReason::RxMalformed,
        DropReason::RxFault,
        DropReason::RxKernel,
    ];

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::TxFull => "tx_full",
            DropReason::TxRejected => "tx_rejected",
            DropReason::TxDown => "tx_down",
            DropReason::TxFault => "tx_fault",
            DropReason::RxTruncated => "rx_truncated",
            DropReason::RxMalformed => "rx_malformed",
            DropReason::RxFault => "rx_fault",
            DropReason::RxKernel => "rx_kernel",
        }
    }
}

/// Why one frame could not be sent. The device has already counted the drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The device's queue is full; the frame was dropped rather than waiting.
    #[error("device queue full, frame dropped")]
    Full,
    /// The buffer is shorter than a virtio-net header.
    #[error("packet shorter than the virtio-net header")]
    Malformed,
    /// The kernel refused the frame.
    #[error("kernel refused the frame: {0}")]
    Rejected(Errno),
    /// The device is down.
    #[error("device is down")]
    Down,
    /// A fault injector dropped the frame on purpose.
    #[error("dropped by fault injection")]
    Fault,
}

impl SendError {
    /// Classifies the errno of a failed write or send.
    pub fn from_errno(e: Errno) -> SendError {
        match e {
            Errno::EAGAIN | Errno::ENOBUFS => SendError::Full,
            Errno::ENETDOWN | Errno::ENXIO | Errno::ENODEV | Errno::EIO => SendError::Down,
            e => SendError::Rejected(e),
        }
    }

    /// The counter this drop goes to.
    pub fn reason(self) -> DropReason {
        match self {
            SendError::Full => DropReason::TxFull,
            SendError::Malformed | SendError::Rejected(_) => DropReason::TxRejected,
            SendError::Down => DropReason::TxDown,
            SendError::Fault => DropReason::TxFault,
        }
    }
}

/// Per-device counters, updated lock-free from any thread.
#[derive(Debug, Default)]
pub struct Counters {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    rx_gso: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    tx_gso: AtomicU64,
    drops: [AtomicU64; DropReason::ALL.len()],
}

/// A copy of a device's counters at one moment. Bytes count Ethernet frames
/// without the virtio-net header; a GSO frame counts as one packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Received frames that were GSO super-frames.
    pub rx_gso: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Sent frames that were GSO super-frames.
    pub tx_gso: u64,
    /// Drops, indexed like [`DropReason::ALL`].
    pub drops: [u64; DropReason::ALL.len()],
}

impl CounterSnapshot {
    /// Drops for one reason.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.drops[r as usize]
    }
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }
}

fn is_gso(packet: &[u8]) -> bool {
    packet.len() >= HEADER_LEN && VnetHeader::new_unchecked(packet).is_gso()
}

impl Counters {
    /// Fresh zeroed counters, shareable.
    pub fn new() -> Arc<Counters> {
        Arc::new(Counters::default())
    }

    /// Counts one received packet (header + frame).
    pub fn count_rx(&self, packet: &[u8]) {
        self.rx_packets.fetch_add(1, Relaxed);
        self.rx_bytes
            .fetch_add(packet.len().saturating_sub(HEADER_LEN) as u64, Relaxed);
        if is_gso(packet) {
            self.rx_gso.fetch_add(1, Relaxed);
        }
    }

    /// Counts one sent packet (header + frame).
    pub fn count_tx(&self, packet: &[u8]) {
        self.tx_packets.fetch_add(1, Relaxed);
        self.tx_bytes
            .fetch_add(packet.len().saturating_sub(HEADER_LEN) as u64, Relaxed);
        if is_gso(packet) {
            self.tx_gso.fetch_add(1, Relaxed);
        }
    }

    /// Counts `n` drops for `reason`.
    pub fn count_drop(&self, reason: DropReason, n: u64) {
        self.drops[reason as usize].fetch_add(n, Relaxed);
    }

    /// Reads all counters.
    pub fn snapshot(&self) -> CounterSnapshot {
        let mut drops = [0; DropReason::ALL.len()];
        for (d, a) in drops.iter_mut().zip(self.drops.iter()) {
            *d = a.load(Relaxed);
        }
        CounterSnapshot {
            rx_packets: self.rx_packets.load(Relaxed),
            rx_bytes: self.rx_bytes.load(Relaxed),
            rx_gso: self.rx_gso.load(Relaxed),
            tx_packets: self.tx_packets.load(Relaxed),
            tx_bytes: self.tx_bytes.load(Relaxed),
            tx_gso: self.tx_gso.load(Relaxed),
            drops,
        }
    }
}

/// Something that moves packets (virtio-net header + Ethernet frame).
///
/// All methods are non-blocking; wait for [`Device::poll_fd`] to become
/// readable (epoll/poll) before calling [`Device::recv`].
pub trait Device: Send + Sync {
    /// A name for logs and reports (usually the interface name).
    fn name(&self) -> &str;

    /// Appends ready packets to `batch` until it is full or nothing more is
    /// ready; returns how many were appended (0 if none was ready).
    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError>;

    /// Sends one packet without blocking. On error the drop is already counted.
    fn send(&self, packet: &[u8]) -> Result<(), SendError>;

    /// Sends several packets; returns how many were accepted (the rest are
    /// counted as drops). Devices with a batched system call override this.
    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        packets.iter().filter(|p| self.send(p).is_ok()).count()
    }

    /// A descriptor that polls readable when [`Device::recv`] has packets.
    fn poll_fd(&self) -> BorrowedFd<'_>;

    /// This device's counters.
    fn counters(&self) -> &Counters;

    /// Pulls counters the kernel keeps (e.g. socket drops) into [`Device::counters`];
    /// the engine calls it now and then. Does nothing by default.
    fn refresh_counters(&self) {}
}

impl<D: Device + ?Sized> Device for Arc<D> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        (**self).recv(batch)
    }
    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        (**self).send(packet)
    }
    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        (**self).send_batch(packets)
    }
    fn poll_fd(&self) -> BorrowedFd<'_> {
        (**self).poll_fd()
    }
    fn counters(&self) -> &Counters {
        (**self).counters()
    }
    fn refresh_counters(&self) {
        (**self).refresh_counters()
    }
}

impl<D: Device + ?Sized> Device for Box<D> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        (**self).recv(batch)
    }
    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        (**self).send(packet)
    }
    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        (**self).send_batch(packets)
    }
    fn poll_fd(&self) -> BorrowedFd<'_> {
        (**self).poll_fd()
    }
    fn counters(&self) -> &Counters {
        (**self).counters()
    }
    fn refresh_counters(&self) {
        (**self).refresh_counters()
    }
}

/// Builds a packet from an Ethernet frame with a plain (all-zero) virtio-net
/// header, e.g. for control-plane frames whose checksums are complete.
pub fn plain_packet(frame: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(HEADER_LEN + frame.len());
    p.extend_from_slice(&vnet::VnetRepr::PLAIN.to_bytes());
    p.extend_from_slice(frame);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_push_retain_order() {
        let mut b = RxBatch::new(4);
        for i in 0..5u8 {
            let mut p = vec![0u8; HEADER_LEN];
            p.push(i);
            assert_eq!(b.push(&p), i < 4);
        }
        assert!(b.is_full());
        b.retain(|p| p[HEADER_LEN] % 2 == 1);
        assert_eq!(b.len(), 2);
        assert_eq!(b.frame(0), &[1]);
        assert_eq!(b.frame(1), &[3]);
        assert_eq!(b.packet(7), &[] as &[u8]);
        assert_eq!(b.frame(7), &[] as &[u8]);
        assert!(!b.vnet(9).is_gso());
        assert!(b.push(&[0u8; 11]));
        assert_eq!(b.len(), 3);
        b.clear();
        assert!(b.is_empty());
        assert!(!b.push(&vec![0u8; MAX_PACKET + 1]));
    }

    #[test]
    fn counters_count() {
        let c = Counters::new();
        let gso = vnet::VnetRepr {
            gso_type: vnet::GsoType::TcpV4,
            ..vnet::VnetRepr::PLAIN
        };
        let mut p = gso.to_bytes().to_vec();
        p.extend_from_slice(&[0u8; 100]);
        c.count_rx(&p);
        c.count_tx(&plain_packet(&[0u8; 60]));
        c.count_drop(DropReason::TxFull, 3);
        let s = c.snapshot();
        assert_eq!((s.rx_packets, s.rx_bytes, s.rx_gso), (1, 100, 1));
        assert_eq!((s.tx_packets, s.tx_bytes, s.tx_gso), (1, 60, 0));
        assert_eq!(s.dropped(DropReason::TxFull), 3);
        assert_eq!(s.dropped_total(), 3);
    }

    #[test]
    fn errno_classes() {
        assert_eq!(SendError::from_errno(Errno::EAGAIN), SendError::Full);
        assert_eq!(
            SendError::from_errno(Errno::ENOBUFS).reason(),
            DropReason::TxFull
        );
        assert_eq!(SendError::from_errno(Errno::ENETDOWN), SendError::Down);
        assert_eq!(
            SendError::from_errno(Errno::EMSGSIZE).reason(),
            DropReason::TxRejected
        );
    }
}
