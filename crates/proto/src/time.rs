//! Virtual time for the sans-IO core.
//!
//! The core never reads a clock: callers pass `now` in. An [`Instant`] is a
//! count of nanoseconds since an epoch the caller chooses (the daemon uses its
//! start, the simulator uses zero).

use core::fmt;
use core::ops::{Add, AddAssign};
use std::time::Duration;

/// A point in time, in nanoseconds since a caller-chosen epoch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);

    /// Nanoseconds since the epoch.
    pub const fn from_nanos(n: u64) -> Instant {
        Instant(n)
    }

    /// Milliseconds since the epoch.
    pub const fn from_millis(ms: u64) -> Instant {
        Instant(ms * 1_000_000)
    }

    /// Seconds since the epoch.
    pub const fn from_secs(s: u64) -> Instant {
        Instant(s * 1_000_000_000)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time since the epoch.
    pub fn since_epoch(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl fmt::Display for Instant {
    /// Seconds with millisecond precision, e.g. `12.345s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0 / 1_000_000;
        write!(f, "{}.{:03}s", ms / 1000, ms % 1000)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_display() {
        let t = Instant::from_secs(2) + Duration::from_millis(345);
        assert_eq!(t.to_string(), "2.345s");
        assert_eq!(
            t.saturating_duration_since(Instant::from_secs(3)),
            Duration::ZERO
        );
        assert_eq!(Instant::from_millis(1500).as_nanos(), 1_500_000_000);
        assert_eq!(
            Instant(u64::MAX - 1) + Duration::from_secs(10),
            Instant(u64::MAX)
        );
    }
}
