//! What a port may cost the switch: storm control (IOS's `storm-control
//! broadcast|multicast|unicast level ...`) and a bound on how many new
//! addresses a port may teach the MAC address table per second.
//!
//! Both are pure: each call takes the time (nanoseconds on the caller's
//! monotonic clock) and reads no clock, so tests step them through virtual
//! seconds.
//!
//! Storm control as a Catalyst measures it: traffic of the class is
//! counted over 1-second intervals (aligned to the first frame the meter
//! saw); once the interval's traffic reaches the upper level, the rest of
//! that interval's traffic of the class is dropped. With a lower (falling)
//! level below the upper one, an interval that went over the upper level
//! leaves the class blocked through the following intervals until one
//! whose offered traffic stays below the lower level; the interval that
//! ends below it forwards again from the next one on. A percentage level
//! counts bits against the port's bandwidth, `pps` frames, `bps` bits.

use lagkit_ios::{StormLevel, StormUnit};

/// One second, in nanoseconds: IOS's storm-control interval.
pub const INTERVAL_NS: u64 = 1_000_000_000;

/// Whether a storm-controlled class forwards or is being dropped (IOS's
/// `Filter State`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FilterState {
    /// Traffic passes.
    Forwarding,
    /// Traffic above the level is being dropped.
    Blocking,
}

impl FilterState {
    /// As `show storm-control` prints it.
    pub fn name(self) -> &'static str {
        match self {
            FilterState::Forwarding => "Forwarding",
            FilterState::Blocking => "Blocking",
        }
    }
}

/// One class's storm-control meter on one port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormMeter {
    level: StormLevel,
    port_bps: u64,
    /// Units (frames or bits) per interval: the upper and lower levels.
    rising: u64,
    falling: u64,
    /// The current interval's start; `None` before the first frame.
    start: Option<u64>,
    /// Units offered and passed in the current interval.
    offered: u64,
    passed: u64,
    /// Units offered in the last whole interval (IOS's `Current`).
    last: u64,
    /// Blocked past the interval (the falling level holds it).
    held: bool,
    /// Frames dropped, ever.
    dropped: u64,
}

impl StormMeter {
    /// A meter for `level` on a port of `port_bps` bits per second (what a
    /// percentage is of).
    pub fn new(level: StormLevel, port_bps: u64) -> StormMeter {
        let units = |v: u64| match level.unit {
            // v is in hundredths of a percent.
            StormUnit::Percent => {
                u64::try_from(u128::from(port_bps) * u128::from(v) / 10_000).unwrap_or(u64::MAX)
            }
            StormUnit::Pps | StormUnit::Bps => v,
        };
        StormMeter {
            level,
            port_bps,
            rising: units(level.rising),
            falling: units(level.falling),
            start: None,
            offered: 0,
            passed: 0,
            last: 0,
            held: false,
            dropped: 0,
        }
    }

    /// The level it enforces.
    pub fn level(&self) -> StormLevel {
        self.level
    }

    fn roll(&mut self, now: u64) {
        let Some(start) = self.start else {
            self.start = Some(now);
            return;
        };
        if now < start.saturating_add(INTERVAL_NS) {
            return;
        }
        let whole = (now - start) / INTERVAL_NS;
        // An interval that went over the upper level starts a hold (when a
        // lower level is set); a hold ends after an interval below the
        // lower level. Empty intervals in between count as quiet ones.
        let over = self.offered > self.rising;
        self.held = if self.falling < self.rising {
            if whole > 1 {
                false
            } else if self.held {
                self.offered >= self.falling
            } else {
                over
            }
        } else {
            false
        };
        self.last = if whole == 1 { self.offered } else { 0 };
        self.start = Some(start + whole * INTERVAL_NS);
        self.offered = 0;
        self.passed = 0;
    }

    /// A frame of `bytes` bytes of the class arrives at `now`: whether it
    /// passes. Counts what it drops.
    pub fn admit(&mut self, bytes: usize, now: u64) -> bool {
        self.roll(now);
        let units = match self.level.unit {
            StormUnit::Pps => 1,
            StormUnit::Percent | StormUnit::Bps => (bytes as u64).saturating_mul(8),
        };
        self.offered = self.offered.saturating_add(units);
        let pass = !self.held && self.passed.saturating_add(units) <= self.rising;
        if pass {
            self.passed = self.passed.saturating_add(units);
        } else {
            self.dropped += 1;
        }
        pass
    }

    /// Whether the class is being dropped at `now`.
    pub fn state(&self, now: u64) -> FilterState {
        let mut m = self.clone();
        m.roll(now);
        if m.held || m.offered > m.rising {
            FilterState::Blocking
        } else {
            FilterState::Forwarding
        }
    }

    /// The traffic offered in the last whole interval before `now`, in the
    /// level's own unit (hundredths of a percent of the port's bandwidth,
    /// frames or bits per second), as IOS's `Current` column shows it.
    pub fn current(&self, now: u64) -> u64 {
        let mut m = self.clone();
        m.roll(now);
        match self.level.unit {
            StormUnit::Percent if self.port_bps == 0 => 0,
            StormUnit::Percent => {
                u64::try_from((u128::from(m.last) * 10_000 / u128::from(self.port_bps)).min(10_000))
                    .unwrap_or(10_000)
            }
            StormUnit::Pps | StormUnit::Bps => m.last,
        }
    }

    /// Frames dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// How many new addresses one port may add to the MAC address table per
/// second, by default. A port that sends from more source addresses than
/// this still has its frames forwarded (flooded back to it while
/// unlearnt); the addresses beyond it are not learnt, and counted.
pub const LEARN_PER_SECOND: u32 = 1_000;

/// A token bucket of new-address learning for one port: up to `rate` new
/// addresses per second, `rate` at once after a quiet second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnLimiter {
    rate: u32,
    /// Credit in address-nanoseconds: one address costs 10^9, and each
    /// nanosecond adds `rate`.
    credit: u64,
    at: Option<u64>,
}

impl LearnLimiter {
    /// A limiter of `rate` new addresses per second (0: none learnt).
    pub fn new(rate: u32) -> LearnLimiter {
        LearnLimiter {
            rate,
            credit: Self::cap(rate),
            at: None,
        }
    }

    fn cap(rate: u32) -> u64 {
        u64::from(rate) * INTERVAL_NS
    }

    /// Its rate, new addresses per second.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Whether one more new address may be learnt at `now`; spends it if
    /// so.
    pub fn allow(&mut self, now: u64) -> bool {
        if let Some(at) = self.at {
            let gained = now.saturating_sub(at).saturating_mul(u64::from(self.rate));
            self.credit = self.credit.saturating_add(gained).min(Self::cap(self.rate));
        }
        self.at = Some(now);
        if self.credit >= INTERVAL_NS {
            self.credit -= INTERVAL_NS;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = INTERVAL_NS;
    const MS: u64 = 1_000_000;

    fn level(text: &str) -> StormLevel {
        let w: Vec<&str> = text.split_whitespace().collect();
        lagkit_ios::parse_level(&w).unwrap()
    }

    #[test]
    fn pps_passes_the_level_each_second_and_drops_the_rest() {
        let mut m = StormMeter::new(level("pps 100"), 1_000_000_000);
        // 250 frames in the first second, evenly.
        let passed = (0..250).filter(|k| m.admit(64, k * 4 * MS)).count();
        assert_eq!(passed, 100);
        assert_eq!(m.dropped(), 150);
        assert_eq!(m.state(999 * MS), FilterState::Blocking);
        // The next interval starts afresh.
        assert!(m.admit(64, S + MS));
        assert_eq!(m.current(S + MS), 250, "the last whole second offered 250");
        assert_eq!(m.state(S + MS), FilterState::Forwarding);
        // A quiet stretch: nothing offered, forwarding.
        assert_eq!(m.current(5 * S), 0);
        assert_eq!(m.state(5 * S), FilterState::Forwarding);
    }

    #[test]
    fn a_percentage_counts_bits_of_the_port_bandwidth() {
        // 1% of 1 Mb/s: 10,000 bits a second, 12 frames of 100 bytes (800
        // bits each) pass, the 13th does not.
        let mut m = StormMeter::new(level("1.00"), 1_000_000);
        let passed = (0..20).filter(|k| m.admit(100, k * MS)).count();
        assert_eq!(passed, 12);
        // 20 frames of 800 bits in the second: 16,000 bits, 1.60%.
        assert_eq!(m.current(S + 1), 160);
        let l = m.level();
        assert_eq!(l.show(m.current(S + 1)), "1.60%");
    }

    #[test]
    fn bps_counts_bits() {
        let mut m = StormMeter::new(level("bps 8k"), 1_000_000_000);
        // 1000 bytes a second: ten 100-byte frames pass, the rest drop.
        let passed = (0..15).filter(|k| m.admit(100, k * MS)).count();
        assert_eq!(passed, 10);
    }

    #[test]
    fn a_lower_level_holds_the_block_until_traffic_falls_below_it() {
        let mut m = StormMeter::new(level("pps 100 50"), 1_000_000_000);
        let second = |m: &mut StormMeter, s: u64, n: u64| {
            (0..n)
                .filter(|k| m.admit(64, s * S + k * (S / n.max(1))))
                .count()
        };
        assert_eq!(second(&mut m, 0, 200), 100, "over the upper level");
        // Held: 80 a second (above 50) passes nothing.
        assert_eq!(second(&mut m, 1, 80), 0);
        assert_eq!(m.state(S + S / 2), FilterState::Blocking);
        // 40 (below 50): still dropped this second, forwarding after it.
        assert_eq!(second(&mut m, 2, 40), 0);
        assert_eq!(second(&mut m, 3, 80), 80);
        assert_eq!(m.state(3 * S + S / 2), FilterState::Forwarding);
    }

    #[test]
    fn without_a_lower_level_each_second_stands_alone() {
        let mut m = StormMeter::new(level("pps 100"), 1_000_000_000);
        let passed = (0..300).filter(|k| m.admit(64, k * (S / 300))).count();
        assert_eq!(passed, 100);
        let passed = (0..80).filter(|k| m.admit(64, S + k * (S / 80))).count();
        assert_eq!(passed, 80);
    }

    #[test]
    fn zero_drops_everything_of_the_class() {
        let mut m = StormMeter::new(level("0.00"), 1_000_000_000);
        assert!(!m.admit(60, 0));
        assert!(!m.admit(60, 5 * S));
        assert_eq!(m.dropped(), 2);
    }

    #[test]
    fn learning_is_bounded_per_second_and_refills_with_time() {
        let mut l = LearnLimiter::new(100);
        // A burst of a second's worth at once, then nothing.
        let first = (0..500).filter(|_| l.allow(0)).count();
        assert_eq!(first, 100);
        assert!(!l.allow(MS), "0.1 of an address gained in 1 ms");
        // 10 ms later: one more.
        assert!(l.allow(11 * MS));
        assert!(!l.allow(11 * MS));
        // A steady flood over 10 s learns about 100 a second.
        let learnt = (0..100_000u64)
            .filter(|k| l.allow(S + k * (10 * S / 100_000)))
            .count();
        assert!((1000..=1100).contains(&learnt), "{learnt}");
        // The credit never grows past a second's worth.
        let burst = (0..500).filter(|_| l.allow(1000 * S)).count();
        assert_eq!(burst, 100);
        let mut none = LearnLimiter::new(0);
        assert!(!none.allow(0) && !none.allow(10 * S));
    }

    #[test]
    fn clocks_going_nowhere_or_wrapping_never_panic() {
        let mut l = LearnLimiter::new(u32::MAX);
        assert!(l.allow(u64::MAX));
        assert!(l.allow(0));
        let mut m = StormMeter::new(level("100.00"), u64::MAX);
        assert!(m.admit(usize::MAX, u64::MAX));
        assert!(!m.admit(60, 0) || m.dropped() == 0);
    }
}
