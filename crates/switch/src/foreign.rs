//! A protocol a port's partner speaks that the port does not run (LACPDUs
//! on a `mode on` port, PAgP on an LACP port): the "Probable mismatch"
//! note of `show etherchannel`.
//!
//! The note lasts as long as its cause. It is held while the foreign
//! frames keep coming and dropped once none has arrived for as long as
//! that protocol itself keeps a partner's word: LACP's Long_Timeout_Time
//! (802.1AX-2020 6.4.4, 90 s) and PAgP's 3.5 slow hellos (105 s), the
//! slowest rate a real speaker of either sends at, so a partner that keeps
//! talking keeps the note and one stray frame does not leave it for good.
//! A port that loses carrier forgets it too: the next partner is judged
//! by what it sends. Times are the switch's clock in nanoseconds, passed
//! in, so the decision is tested here without a clock or a socket.

use lagkit_proto::{lacp, pagp};

/// The foreign protocols a port can hear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// LACPDUs or Marker PDUs (slow protocols).
    Lacp,
    /// PAgP PDUs.
    Pagp,
}

impl Protocol {
    /// The name `show` and the log use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protocol::Lacp => "LACP",
            Protocol::Pagp => "PAgP",
        }
    }

    /// How long (ns) after its last frame the protocol still counts as
    /// spoken: the longest a speaker of it waits between frames, times
    /// the misses its own partner tolerates.
    pub(crate) fn hold_ns(self) -> u64 {
        let d = match self {
            Protocol::Lacp => lacp::Timers::default().long_timeout,
            Protocol::Pagp => {
                let t = pagp::Timers::default();
                t.slow_hello * t.aging_tenths / 10
            }
        };
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }
}

/// What one port heard of a protocol it does not run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Foreign {
    /// The protocol and when its last frame arrived.
    heard: Option<(Protocol, u64)>,
}

impl Foreign {
    /// A frame of `protocol` arrived at `now`; true if this starts a note
    /// (none stood, or another protocol's), the moment to log it.
    pub(crate) fn heard(&mut self, protocol: Protocol, now: u64) -> bool {
        let new = self.heard.map(|(p, _)| p) != Some(protocol);
        self.heard = Some((protocol, now));
        new
    }

    /// The protocol the partner speaks, if the note stands at `now`.
    pub(crate) fn current(&self, now: u64) -> Option<Protocol> {
        let (p, at) = self.heard?;
        (now.saturating_sub(at) < p.hold_ns()).then_some(p)
    }

    /// The note as it stands since the last [`Foreign::expire`]: what
    /// `show` reports between wake-ups.
    pub(crate) fn noted(&self) -> Option<Protocol> {
        self.heard.map(|(p, _)| p)
    }

    /// Drops a note whose protocol has been silent for its hold time at
    /// `now`; returns that protocol (to log that the mismatch ended).
    pub(crate) fn expire(&mut self, now: u64) -> Option<Protocol> {
        let (p, _) = self.heard?;
        if self.current(now).is_some() {
            return None;
        }
        self.heard = None;
        Some(p)
    }

    /// The partner is gone (carrier lost): whatever it spoke no longer
    /// says anything about the next one. Returns the note dropped.
    pub(crate) fn forget(&mut self) -> Option<Protocol> {
        self.heard.take().map(|(p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn hold_times_are_the_protocols_own() {
        assert_eq!(Protocol::Lacp.hold_ns(), 90 * S);
        assert_eq!(Protocol::Pagp.hold_ns(), 105 * S);
    }

    #[test]
    fn one_stray_frame_leaves_a_note_that_ends_after_the_hold_time() {
        let mut f = Foreign::default();
        assert_eq!(f.current(0), None);
        assert!(
            f.heard(Protocol::Pagp, 10 * S),
            "the first frame starts a note"
        );
        assert_eq!(f.current(10 * S), Some(Protocol::Pagp));
        assert_eq!(f.expire(114 * S), None, "104 s later it still stands");
        assert_eq!(f.current(114 * S), Some(Protocol::Pagp));
        assert_eq!(f.current(115 * S), None, "105 s without PAgP: gone");
        assert_eq!(f.noted(), Some(Protocol::Pagp), "until expired");
        assert_eq!(f.expire(115 * S), Some(Protocol::Pagp));
        assert_eq!(f.noted(), None);
        assert_eq!(f, Foreign::default());
        assert_eq!(f.expire(200 * S), None, "expiring twice reports once");
    }

    #[test]
    fn frames_that_keep_coming_keep_the_note() {
        let mut f = Foreign::default();
        assert!(f.heard(Protocol::Pagp, 0));
        // A PAgP speaker at its slow rate, 30 s apart, for ten minutes:
        // the note never lapses and is announced once.
        for k in 1..=20 {
            let t = k * 30 * S;
            for probe in [t - S, t] {
                assert_eq!(f.current(probe), Some(Protocol::Pagp), "at {probe}");
                assert_eq!(f.expire(probe), None);
            }
            assert!(!f.heard(Protocol::Pagp, t), "not a new note");
        }
        assert_eq!(f.current(600 * S + 104 * S), Some(Protocol::Pagp));
        assert_eq!(f.expire(600 * S + 105 * S), Some(Protocol::Pagp));
    }

    #[test]
    fn lacp_ages_faster_and_another_protocol_is_a_new_note() {
        let mut f = Foreign::default();
        assert!(f.heard(Protocol::Lacp, 0));
        assert_eq!(f.current(89 * S), Some(Protocol::Lacp));
        assert_eq!(f.current(90 * S), None);
        assert!(f.heard(Protocol::Pagp, 50 * S), "PAgP after LACP is news");
        assert_eq!(f.current(140 * S), Some(Protocol::Pagp));
    }

    #[test]
    fn losing_carrier_forgets_the_partner() {
        let mut f = Foreign::default();
        assert_eq!(f.forget(), None);
        f.heard(Protocol::Pagp, 0);
        assert_eq!(f.forget(), Some(Protocol::Pagp));
        assert_eq!(f.current(S), None);
        assert!(f.heard(Protocol::Pagp, 2 * S), "heard again: a new note");
    }

    #[test]
    fn a_clock_before_the_frame_does_not_panic_or_expire() {
        let mut f = Foreign::default();
        f.heard(Protocol::Lacp, 10 * S);
        assert_eq!(f.current(0), Some(Protocol::Lacp));
        assert_eq!(f.expire(0), None);
        f.heard(Protocol::Pagp, u64::MAX);
        assert_eq!(f.current(u64::MAX), Some(Protocol::Pagp));
    }
}
