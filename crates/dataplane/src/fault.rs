//! A wrapper that drops frames on purpose: with a probability, the next N,
//! or all of them while "cut".
//!
//! Why: this kernel has no `netem`, so loss and link cuts in the lab come
//! from here. Decisions are deterministic: each direction draws from its own
//! SplitMix64 stream seeded from one seed, so the same seed and the same
//! sequence of frames give the same drops. The knobs live in a shared
//! [`FaultControl`] so a test can cut a member while the engine forwards.
//! Drops are counted in the wrapped device's counters
//! ([`DropReason::RxFault`], [`DropReason::TxFault`]).

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use crate::device::{Counters, Device, DropReason, RxBatch, SendError};
use crate::sys::SysError;

/// Which directions a fault injector acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Only frames received from the device.
    Rx,
    /// Only frames sent to the device.
    Tx,
    /// Both.
    Both,
}

impl Direction {
    fn to_raw(self) -> u8 {
        match self {
            Direction::Rx => 1,
            Direction::Tx => 2,
            Direction::Both => 3,
        }
    }
}

/// The live knobs of a [`FaultInjector`], shareable across threads.
#[derive(Debug)]
pub struct FaultControl {
    cut: AtomicBool,
    drop_next: AtomicU64,
    /// Drop if a 64-bit draw is below this; 0 never, u64::MAX about always.
    threshold: AtomicU64,
    directions: AtomicU8,
    dropped: AtomicU64,
}

impl FaultControl {
    /// Drops every frame while `cut` is true (a pulled cable).
    pub fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Relaxed);
    }
    /// True while cut.
    pub fn is_cut(&self) -> bool {
        self.cut.load(Relaxed)
    }
    /// Drops the next `n` frames (in the active directions), then resumes.
    pub fn drop_next(&self, n: u64) {
        self.drop_next.store(n, Relaxed);
    }
    /// Frames still to be dropped by [`FaultControl::drop_next`].
    pub fn pending_drops(&self) -> u64 {
        self.drop_next.load(Relaxed)
    }
    /// Drops each frame independently with probability `p` (clamped to 0..=1; NaN means 0).
    pub fn set_drop_probability(&self, p: f64) {
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        let t = if p >= 1.0 {
            u64::MAX
        } else {
            (p * 18_446_744_073_709_551_616.0) as u64
        };
        self.threshold.store(t, Relaxed);
    }
    /// Chooses the directions the faults apply to.
    pub fn set_direction(&self, d: Direction) {
        self.directions.store(d.to_raw(), Relaxed);
    }
    /// Frames dropped so far by this injector.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Relaxed)
    }
}

/// SplitMix64: a tiny, well-mixed, seedable generator; one step per draw.
fn splitmix(state: &AtomicU64) -> u64 {
    let s = state
        .fetch_add(0x9e37_79b9_7f4a_7c15, Relaxed)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A device wrapper that drops frames as its [`FaultControl`] says.
#[derive(Debug)]
pub struct FaultInjector<D> {
    inner: D,
    ctl: Arc<FaultControl>,
    rx_rng: AtomicU64,
    tx_rng: AtomicU64,
}

impl<D: Device> FaultInjector<D> {
    /// Wraps `inner`; no faults until the control says so.
    pub fn new(inner: D, seed: u64) -> Self {
        FaultInjector {
            inner,
            ctl: Arc::new(FaultControl {
                cut: AtomicBool::new(false),
                drop_next: AtomicU64::new(0),
                threshold: AtomicU64::new(0),
                directions: AtomicU8::new(Direction::Both.to_raw()),
                dropped: AtomicU64::new(0),
            }),
            rx_rng: AtomicU64::new(seed),
            tx_rng: AtomicU64::new(seed ^ 0x5851_f42d_4c95_7f2d),
        }
    }

    /// The shared knobs.
    pub fn control(&self) -> Arc<FaultControl> {
        self.ctl.clone()
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Decides the fate of one frame; true means drop.
    fn should_drop(&self, rx: bool) -> bool {
        let dir = self.ctl.directions.load(Relaxed);
        let bit = if rx { 1 } else { 2 };
        if dir & bit == 0 {
            return false;
        }
        if self.ctl.cut.load(Relaxed) {
            return true;
        }
        if self
            .ctl
            .drop_next
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
            .is_ok()
        {
            return true;
        }
        let t = self.ctl.threshold.load(Relaxed);
        if t == 0 {
            return false;
        }
        let draw = splitmix(if rx { &self.rx_rng } else { &self.tx_rng });
        t == u64::MAX || draw < t
    }
}

impl<D: Device> Device for FaultInjector<D> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        let before = batch.len();
        self.inner.recv(batch)?;
        let mut idx = 0usize;
        let mut dropped = 0u64;
        batch.retain(|_| {
            let i = idx;
            idx += 1;
            if i < before || !self.should_drop(true) {
                true
            } else {
                dropped += 1;
                false
            }
        });
        if dropped > 0 {
            self.inner
                .counters()
                .count_drop(DropReason::RxFault, dropped);
            self.ctl.dropped.fetch_add(dropped, Relaxed);
        }
        Ok(batch.len() - before)
    }

    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        if self.should_drop(false) {
            self.inner.counters().count_drop(DropReason::TxFault, 1);
            self.ctl.dropped.fetch_add(1, Relaxed);
            return Err(SendError::Fault);
        }
        self.inner.send(packet)
    }

    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        let mut keep: Vec<&[u8]> = Vec::with_capacity(packets.len());
        let mut dropped = 0u64;
        for p in packets {
            if self.should_drop(false) {
                dropped += 1;
            } else {
                keep.push(p);
            }
        }
        if dropped > 0 {
            self.inner
                .counters()
                .count_drop(DropReason::TxFault, dropped);
            self.ctl.dropped.fetch_add(dropped, Relaxed);
        }
        self.inner.send_batch(&keep)
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.inner.poll_fd()
    }

    fn counters(&self) -> &Counters {
        self.inner.counters()
    }

    fn refresh_counters(&self) {
        self.inner.refresh_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::plain_packet;
    use crate::pair::PairDevice;

    fn pattern(seed: u64, p: f64, n: usize) -> Vec<bool> {
        let (a, _b) = PairDevice::pair("a", "b").unwrap();
        let f = FaultInjector::new(a, seed);
        f.control().set_drop_probability(p);
        f.control().set_direction(Direction::Tx);
        (0..n).map(|_| f.should_drop(false)).collect()
    }

    #[test]
    fn seeded_and_deterministic() {
        let x = pattern(42, 0.3, 2000);
        assert_eq!(x, pattern(42, 0.3, 2000));
        assert_ne!(x, pattern(43, 0.3, 2000));
        let rate = x.iter().filter(|&&d| d).count() as f64 / 2000.0;
        assert!((0.25..0.35).contains(&rate), "rate {rate}");
        assert!(pattern(1, 0.0, 500).iter().all(|&d| !d));
        assert!(pattern(1, 1.0, 500).iter().all(|&d| d));
        assert!(pattern(1, f64::NAN, 10).iter().all(|&d| !d));
    }

    #[test]
    fn cut_drop_next_and_direction() {
        let (a, b) = PairDevice::pair("a", "b").unwrap();
        let fa = FaultInjector::new(a, 7);
        let ctl = fa.control();
        let p = plain_packet(&[9u8; 60]);
        let mut batch = RxBatch::new(16);

        ctl.drop_next(2);
        assert_eq!(fa.send(&p), Err(SendError::Fault));
        assert_eq!(fa.send_batch(&[&p, &p, &p]), 2);
        assert_eq!(ctl.pending_drops(), 0);
        assert_eq!(b.recv(&mut batch).unwrap(), 2);

        ctl.set_cut(true);
        assert!(ctl.is_cut());
        assert_eq!(fa.send(&p), Err(SendError::Fault));
        b.send(&p).unwrap();
        batch.clear();
        assert_eq!(fa.recv(&mut batch).unwrap(), 0);
        assert!(batch.is_empty());

        ctl.set_direction(Direction::Rx);
        fa.send(&p).unwrap();
        ctl.set_cut(false);
        b.send(&p).unwrap();
        assert_eq!(fa.recv(&mut batch).unwrap(), 1);

        let s = fa.counters().snapshot();
        assert_eq!(s.dropped(DropReason::TxFault), 3);
        assert_eq!(s.dropped(DropReason::RxFault), 1);
        assert_eq!(ctl.dropped(), 4);
    }
}
