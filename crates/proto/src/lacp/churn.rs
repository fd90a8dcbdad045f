//! Actor and Partner Churn Detection machines (802.1AX-2020 6.4.17,
//! Figures 6-24 and 6-25).
//!
//! They raise a flag for the operator when a port has been out of sync for
//! Churn_Detection_Time: a sign of a misconfiguration (different keys, too
//! few aggregators, a partner that never agrees). They change nothing else.

use super::port::{Ctx, Port, Timer};

/// States shared by both churn machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChurnState {
    /// ACTOR_CHURN_MONITOR / PARTNER_CHURN_MONITOR.
    Monitor,
    /// NO_ACTOR_CHURN / NO_PARTNER_CHURN.
    NoChurn,
    /// ACTOR_CHURN / PARTNER_CHURN.
    Churn,
}

impl ChurnState {
    /// The standard's name for the actor machine, or the partner one.
    pub fn name(self, partner: bool) -> &'static str {
        match (self, partner) {
            (ChurnState::Monitor, false) => "ACTOR_CHURN_MONITOR",
            (ChurnState::NoChurn, false) => "NO_ACTOR_CHURN",
            (ChurnState::Churn, false) => "ACTOR_CHURN",
            (ChurnState::Monitor, true) => "PARTNER_CHURN_MONITOR",
            (ChurnState::NoChurn, true) => "NO_PARTNER_CHURN",
            (ChurnState::Churn, true) => "PARTNER_CHURN",
        }
    }
}

/// Why a churn machine moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ChurnEvent {
    /// `!port_enabled`.
    PortDisabled,
    /// Synchronization became TRUE.
    InSync,
    /// Synchronization became FALSE.
    OutOfSync,
    /// `actor_churn_timer` / `partner_churn_timer` expired.
    TimerExpired,
}

impl ChurnEvent {
    pub fn name(self) -> &'static str {
        match self {
            ChurnEvent::PortDisabled => "port disabled",
            ChurnEvent::InSync => "in sync",
            ChurnEvent::OutOfSync => "out of sync",
            ChurnEvent::TimerExpired => "churn timer expired",
        }
    }
}

fn timer(partner: bool) -> Timer {
    if partner {
        Timer::PartnerChurn
    } else {
        Timer::ActorChurn
    }
}

/// One step of the actor (`partner == false`) or partner churn machine.
///
/// Figure 6-24: `BEGIN || !port_enabled` -> ACTOR_CHURN_MONITOR;
/// MONITOR -> NO_ACTOR_CHURN on `Actor_Oper_Port_State.Synchronization`;
/// MONITOR -> ACTOR_CHURN on `actor_churn_timer expired`;
/// ACTOR_CHURN -> NO_ACTOR_CHURN on Synchronization;
/// NO_ACTOR_CHURN -> MONITOR on `!Synchronization`. The partner machine is
/// the same with Partner_Oper_Port_State.
pub(crate) fn step(p: &Port, ctx: &Ctx, partner: bool) -> Option<(ChurnEvent, ChurnState)> {
    use ChurnState::*;
    let (state, sync) = if partner {
        (p.partner_churn_state, p.partner_in_sync())
    } else {
        (p.actor_churn_state, p.actor_state.in_sync())
    };
    if !p.port_enabled {
        // The global transition holds the machine in MONITOR while the port
        // is down; the timer is restarted when the port comes up.
        return (state != Monitor).then_some((ChurnEvent::PortDisabled, Monitor));
    }
    match state {
        Monitor if sync => Some((ChurnEvent::InSync, NoChurn)),
        Monitor if p.expired(timer(partner), ctx.now) => Some((ChurnEvent::TimerExpired, Churn)),
        Churn if sync => Some((ChurnEvent::InSync, NoChurn)),
        NoChurn if !sync => Some((ChurnEvent::OutOfSync, Monitor)),
        _ => None,
    }
}

pub(crate) fn enter(p: &mut Port, s: ChurnState, ctx: &Ctx, partner: bool) {
    let flag = match s {
        // MONITOR: churn = FALSE; Start churn_timer(Churn_Detection_Time)
        ChurnState::Monitor => {
            if p.port_enabled {
                p.start(timer(partner), ctx.now, ctx.cfg.timers.churn_detection);
            } else {
                p.stop(timer(partner));
            }
            false
        }
        // NO_CHURN: churn = FALSE
        ChurnState::NoChurn => {
            p.stop(timer(partner));
            false
        }
        // CHURN: churn = TRUE
        ChurnState::Churn => {
            p.stop(timer(partner));
            if partner {
                p.counters.partner_churn += 1;
            } else {
                p.counters.actor_churn += 1;
            }
            true
        }
    };
    if partner {
        p.partner_churn_state = s;
        p.partner_churn = flag;
    } else {
        p.actor_churn_state = s;
        p.actor_churn = flag;
    }
}
