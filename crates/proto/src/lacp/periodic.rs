//! Periodic Transmission machine (802.1AX-2020 6.4.13, Figure 6-19).
//!
//! Decides how often this port must send: fast when the partner asked for a
//! short timeout, slow otherwise, and not at all when both ends are passive.

use super::config::Activity;
use super::port::{Ctx, Port, Timer};

/// States of the Periodic Transmission machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeriodicState {
    /// NO_PERIODIC.
    NoPeriodic,
    /// FAST_PERIODIC.
    FastPeriodic,
    /// SLOW_PERIODIC.
    SlowPeriodic,
    /// PERIODIC_TX.
    PeriodicTx,
}

impl PeriodicState {
    /// The standard's name.
    pub fn name(self) -> &'static str {
        match self {
            PeriodicState::NoPeriodic => "NO_PERIODIC",
            PeriodicState::FastPeriodic => "FAST_PERIODIC",
            PeriodicState::SlowPeriodic => "SLOW_PERIODIC",
            PeriodicState::PeriodicTx => "PERIODIC_TX",
        }
    }
}

/// Why the Periodic machine moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PeriodicEvent {
    /// `!LACP_Enabled || !port_enabled || (both passive)`.
    Disabled,
    /// UCT from NO_PERIODIC once the global condition no longer holds.
    Enabled,
    /// `periodic_timer expired`.
    TimerExpired,
    /// `Partner_Oper_Port_State.LACP_Timeout == Long Timeout`.
    PartnerLongTimeout,
    /// `Partner_Oper_Port_State.LACP_Timeout == Short Timeout`.
    PartnerShortTimeout,
}

impl PeriodicEvent {
    pub fn name(self) -> &'static str {
        match self {
            PeriodicEvent::Disabled => "disabled or both passive",
            PeriodicEvent::Enabled => "enabled",
            PeriodicEvent::TimerExpired => "periodic_timer expired",
            PeriodicEvent::PartnerLongTimeout => "partner long timeout",
            PeriodicEvent::PartnerShortTimeout => "partner short timeout",
        }
    }
}

/// The global condition of Figure 6-19:
/// `BEGIN || !LACP_Enabled || !port_enabled ||
///  (Actor_Oper_Port_State.LACP_Activity == PASSIVE &&
///   Partner_Oper_Port_State.LACP_Activity == PASSIVE)`.
fn no_periodic(p: &Port) -> bool {
    !p.lacp_enabled()
        || !p.port_enabled
        || (p.cfg.activity == Activity::Passive && !p.partner_oper.state.active())
}

pub(crate) fn step(p: &Port, ctx: &Ctx) -> Option<(PeriodicEvent, PeriodicState)> {
    use PeriodicState::*;
    if no_periodic(p) {
        return (p.periodic != NoPeriodic).then_some((PeriodicEvent::Disabled, NoPeriodic));
    }
    let short = p.partner_oper.state.short_timeout();
    let fired = p.expired(Timer::Periodic, ctx.now);
    match p.periodic {
        NoPeriodic => Some((PeriodicEvent::Enabled, FastPeriodic)),
        FastPeriodic if fired => Some((PeriodicEvent::TimerExpired, PeriodicTx)),
        FastPeriodic if !short => Some((PeriodicEvent::PartnerLongTimeout, SlowPeriodic)),
        SlowPeriodic if fired => Some((PeriodicEvent::TimerExpired, PeriodicTx)),
        SlowPeriodic if short => Some((PeriodicEvent::PartnerShortTimeout, PeriodicTx)),
        PeriodicTx if short => Some((PeriodicEvent::PartnerShortTimeout, FastPeriodic)),
        PeriodicTx => Some((PeriodicEvent::PartnerLongTimeout, SlowPeriodic)),
        _ => None,
    }
}

pub(crate) fn enter(p: &mut Port, s: PeriodicState, ctx: &Ctx) {
    p.periodic = s;
    match s {
        // NO_PERIODIC: Stop periodic_timer
        PeriodicState::NoPeriodic => p.stop(Timer::Periodic),
        // FAST_PERIODIC: Start periodic_timer(fast_periodic_time)
        PeriodicState::FastPeriodic => {
            let t = &ctx.cfg.timers;
            p.start(
                Timer::Periodic,
                ctx.now,
                t.periodic_interval(t.fast_periodic),
            )
        }
        // SLOW_PERIODIC: Start periodic_timer(slow_periodic_time)
        PeriodicState::SlowPeriodic => {
            let t = &ctx.cfg.timers;
            p.start(
                Timer::Periodic,
                ctx.now,
                t.periodic_interval(t.slow_periodic),
            )
        }
        // PERIODIC_TX: NTT = TRUE
        PeriodicState::PeriodicTx => p.ntt = true,
    }
}
