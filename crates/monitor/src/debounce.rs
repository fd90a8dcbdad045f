//! `updelay` / `downdelay` (Linux bonding): a raw link state must hold for a
//! while before the bond believes it. Pure; time is passed in as
//! nanoseconds since any epoch.

use std::time::Duration;

/// Debounced state of one member under one watcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Debounce {
    up: bool,
    pending: Option<(bool, u64)>,
    updelay: Duration,
    downdelay: Duration,
    /// Times the debounced state went from up to down.
    pub failures: u64,
}

impl Debounce {
    /// Starts in state `up` with the given delays.
    pub fn new(up: bool, updelay: Duration, downdelay: Duration) -> Debounce {
        Debounce {
            up,
            pending: None,
            updelay,
            downdelay,
            failures: 0,
        }
    }

    /// New delays (a reload): the state stays, and a pending change now
    /// waits the new delay from when it was first seen.
    pub fn set_delays(&mut self, updelay: Duration, downdelay: Duration) {
        self.updelay = updelay;
        self.downdelay = downdelay;
    }

    /// The debounced state.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The raw state the watcher saw at `now`; returns the new debounced
    /// state if it changed. A raw state that flips back before its delay
    /// ran out is forgotten.
    pub fn observe(&mut self, raw: bool, now: u64) -> Option<bool> {
        if raw == self.up {
            self.pending = None;
            return None;
        }
        let delay = if raw { self.updelay } else { self.downdelay };
        let since = match self.pending {
            Some((p, t)) if p == raw => t,
            _ => {
                self.pending = Some((raw, now));
                now
            }
        };
        if now.saturating_sub(since) >= delay.as_nanos() as u64 {
            self.set(raw);
            return Some(raw);
        }
        None
    }

    /// The change waiting out its delay, if any: `Some(false)` for a link
    /// going down (inside `downdelay`), `Some(true)` for one coming back.
    pub fn pending(&self) -> Option<bool> {
        self.pending.map(|(raw, _)| raw)
    }

    /// When [`Debounce::observe`] must be called again to let a pending
    /// change take effect, if one is pending.
    pub fn deadline(&self) -> Option<u64> {
        self.pending.map(|(raw, t)| {
            let d = if raw { self.updelay } else { self.downdelay };
            t.saturating_add(d.as_nanos() as u64)
        })
    }

    /// Re-evaluates a pending change at `now` without a new observation.
    pub fn poll(&mut self, now: u64) -> Option<bool> {
        let (raw, _) = self.pending?;
        self.observe(raw, now)
    }

    fn set(&mut self, up: bool) {
        if self.up && !up {
            self.failures += 1;
        }
        self.up = up;
        self.pending = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn new_delays_keep_the_state_and_time_a_pending_change_from_when_it_was_seen() {
        let mut d = Debounce::new(true, Duration::ZERO, Duration::from_millis(500));
        assert_eq!(d.observe(false, 100 * MS), None);
        d.set_delays(Duration::ZERO, Duration::from_millis(200));
        assert!(d.is_up());
        assert_eq!(d.deadline(), Some(300 * MS));
        assert_eq!(d.poll(300 * MS), Some(false));
    }

    #[test]
    fn no_delay_is_immediate() {
        let mut d = Debounce::new(false, Duration::ZERO, Duration::ZERO);
        assert_eq!(d.observe(true, 0), Some(true));
        assert_eq!(d.observe(false, 1), Some(false));
        assert_eq!(d.failures, 1);
    }

    #[test]
    fn updelay_waits_and_flaps_are_forgotten() {
        let mut d = Debounce::new(false, Duration::from_millis(200), Duration::ZERO);
        assert_eq!(d.observe(true, 0), None);
        assert_eq!(d.deadline(), Some(200 * MS));
        assert_eq!(d.observe(false, 100 * MS), None, "flap back: forgotten");
        assert_eq!(d.deadline(), None);
        assert_eq!(d.observe(true, 150 * MS), None);
        assert_eq!(d.poll(349 * MS), None);
        assert_eq!(d.poll(350 * MS), Some(true));
        assert!(d.is_up());
    }

    #[test]
    fn downdelay_counts_failures_once() {
        let mut d = Debounce::new(true, Duration::ZERO, Duration::from_millis(50));
        assert_eq!(d.observe(false, 0), None);
        assert_eq!(d.observe(false, 20 * MS), None);
        assert_eq!(d.observe(false, 50 * MS), Some(false));
        assert_eq!(d.observe(false, 60 * MS), None);
        assert_eq!(d.failures, 1);
    }
}
