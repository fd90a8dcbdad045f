//! Transmit machine (802.1AX-2020 6.4.16).
//!
//! > The Transmit machine shall ensure that a properly formatted LACPDU is
//! > transmitted [when NTT is TRUE], subject to the restriction that no more
//! > than three LACPDUs may be transmitted in any Fast_Periodic_Time interval.
//! > If NTT is set to TRUE when this limit is in force, the transmission
//! > shall be delayed until such a time as the restriction is no longer in
//! > force. [...] When the Periodic machine is in the NO_PERIODIC state, the
//! > Transmit machine shall not transmit.
//!
//! The limit is kept as a sliding window: the last three send times.

use super::periodic::PeriodicState;
use super::port::{Ctx, Port, Timer};
use crate::Instant;

/// States of the Transmit machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxState {
    /// Transmission is off: port disabled, LACP disabled or NO_PERIODIC.
    NoTransmit,
    /// Ready to send whenever NTT is set.
    Ready,
    /// NTT is set but three LACPDUs already went out in the last
    /// Fast_Periodic_Time; waiting for the window to open.
    Holdoff,
}

impl TxState {
    /// Name for logs.
    pub fn name(self) -> &'static str {
        match self {
            TxState::NoTransmit => "NO_TRANSMIT",
            TxState::Ready => "READY",
            TxState::Holdoff => "HOLDOFF",
        }
    }
}

/// When the oldest of the last three transmissions leaves the window, or
/// `None` if fewer than three went out in the last Fast_Periodic_Time.
fn window_opens(p: &Port, ctx: &Ctx) -> Option<Instant> {
    if p.tx_history.iter().any(Option::is_none) {
        return None;
    }
    let oldest = p.tx_history.iter().flatten().min().copied()?;
    let opens = oldest + ctx.cfg.timers.fast_periodic;
    (opens > ctx.now).then_some(opens)
}

/// Runs the Transmit machine; returns true if a LACPDU must be sent now.
pub(crate) fn run(p: &mut Port, ctx: &Ctx) -> bool {
    let off = !p.port_enabled || !p.lacp_enabled() || p.periodic == PeriodicState::NoPeriodic;
    if off {
        p.tx = TxState::NoTransmit;
        p.ntt = false;
        p.stop(Timer::TxHoldoff);
        return false;
    }
    if !p.ntt {
        p.tx = TxState::Ready;
        return false;
    }
    match window_opens(p, ctx) {
        Some(at) => {
            if p.tx != TxState::Holdoff {
                p.counters.tx_deferred += 1;
            }
            p.tx = TxState::Holdoff;
            p.timers[Timer::TxHoldoff as usize] = Some(at);
            false
        }
        None => {
            p.tx = TxState::Ready;
            p.stop(Timer::TxHoldoff);
            // Transmit LACPDU; NTT = FALSE
            p.ntt = false;
            p.tx_history.rotate_left(1);
            p.tx_history[2] = Some(ctx.now);
            p.counters.lacpdu_tx += 1;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::testkit::{cfg, ctx, ms, port};

    /// A port whose Periodic machine runs, with NTT clear.
    fn running() -> (crate::lacp::config::SystemConfig, Port) {
        let cfg = cfg();
        let mut p = port(&cfg, 1);
        p.periodic = PeriodicState::FastPeriodic;
        (cfg, p)
    }

    /// 802.1AX-2020 6.4.16: a LACPDU goes out when NTT is TRUE, and NTT is
    /// then FALSE; without NTT nothing goes.
    #[test]
    fn tx_6_4_16_sends_once_per_ntt_and_clears_it() {
        let (cfg, mut p) = running();
        let c = ctx(&cfg, ms(0));
        assert!(!run(&mut p, &c));
        assert_eq!(p.tx, TxState::Ready);
        p.ntt = true;
        assert!(run(&mut p, &c));
        assert!(!p.ntt);
        assert!(!run(&mut p, &c));
        assert_eq!(p.counters.lacpdu_tx, 1);
    }

    /// 6.4.16: "When the Periodic machine is in the NO_PERIODIC state, the
    /// Transmit machine shall not transmit" and NTT is set FALSE; likewise
    /// with the port or LACP disabled.
    #[test]
    fn tx_6_4_16_silent_and_ntt_cleared_in_no_periodic_or_disabled() {
        let cases: [fn(&mut Port); 3] = [
            |p| p.periodic = PeriodicState::NoPeriodic,
            |p| p.port_enabled = false,
            |p| p.cfg.lacp_enabled = false,
        ];
        for make in cases {
            let (cfg, mut p) = running();
            make(&mut p);
            p.ntt = true;
            assert!(!run(&mut p, &ctx(&cfg, ms(0))));
            assert!(!p.ntt);
            assert_eq!(p.tx, TxState::NoTransmit);
            assert_eq!(p.counters.lacpdu_tx, 0);
        }
    }

    /// 6.4.16: "no more than three LACPDUs may be transmitted in any
    /// Fast_Periodic_Time interval"; a fourth NTT waits (HOLDOFF) until the
    /// first of the three is Fast_Periodic_Time old, then goes out.
    #[test]
    fn tx_6_4_16_at_most_three_per_fast_periodic_time_then_deferred() {
        let (cfg, mut p) = running();
        for t in [0, 100, 200] {
            p.ntt = true;
            assert!(run(&mut p, &ctx(&cfg, ms(t))), "at {t} ms");
        }
        p.ntt = true;
        assert!(!run(&mut p, &ctx(&cfg, ms(300))));
        assert_eq!(p.tx, TxState::Holdoff);
        assert!(p.ntt, "NTT stays set while held back");
        assert_eq!(p.timers[Timer::TxHoldoff as usize], Some(ms(1000)));
        assert_eq!(p.next_deadline(ms(300)), Some(ms(1000)));
        assert!(!run(&mut p, &ctx(&cfg, ms(999))));
        assert_eq!(p.counters.tx_deferred, 1, "counted once per hold");
        assert!(run(&mut p, &ctx(&cfg, ms(1000))));
        assert_eq!(p.tx, TxState::Ready);
        assert_eq!(p.timers[Timer::TxHoldoff as usize], None);
        // The window slides: the next may go once 100 ms is a second old.
        p.ntt = true;
        assert!(!run(&mut p, &ctx(&cfg, ms(1050))));
        assert_eq!(p.timers[Timer::TxHoldoff as usize], Some(ms(1100)));
        assert!(run(&mut p, &ctx(&cfg, ms(1100))));
        assert_eq!(p.counters.lacpdu_tx, 5);
    }

    /// 6.4.16: sends spread over more than Fast_Periodic_Time are never held.
    #[test]
    fn tx_6_4_16_one_per_period_is_never_held() {
        let (cfg, mut p) = running();
        for k in 0..10 {
            p.ntt = true;
            assert!(run(&mut p, &ctx(&cfg, ms(k * 400))), "send {k}");
        }
        assert_eq!(p.counters.tx_deferred, 0);
    }
}
