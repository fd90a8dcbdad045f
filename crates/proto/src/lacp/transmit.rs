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
