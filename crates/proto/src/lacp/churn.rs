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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::testkit::{cfg, ctx, ms, peer_info, port, UP};
    use lagkit_wire::PortState;

    fn step_enter(p: &mut Port, c: &Ctx, partner: bool) -> Option<(ChurnEvent, ChurnState)> {
        let t = step(p, c, partner)?;
        enter(p, t.1, c, partner);
        Some(t)
    }

    /// Sets the Synchronization bit the actor (or partner) machine reads.
    fn set_sync(p: &mut Port, partner: bool, on: bool) {
        if partner {
            p.partner_oper.state.set(PortState::SYNCHRONIZATION, on);
        } else {
            p.actor_state.set(PortState::SYNCHRONIZATION, on);
        }
    }

    fn churn_flag(p: &Port, partner: bool) -> bool {
        if partner {
            p.partner_churn
        } else {
            p.actor_churn
        }
    }

    /// 802.1AX-2020 6.4.17, Figures 6-24/6-25: MONITOR starts the churn
    /// timer (Churn_Detection_Time, 60 s); on expiry without
    /// Synchronization, ACTOR_CHURN / PARTNER_CHURN sets actor_churn /
    /// partner_churn TRUE.
    #[test]
    fn churn_6_4_17_out_of_sync_for_60_s_is_churn() {
        let cfg = cfg();
        for partner in [false, true] {
            let mut p = port(&cfg, 1);
            p.partner_oper = peer_info(7, UP & !PortState::SYNCHRONIZATION);
            enter(&mut p, ChurnState::Monitor, &ctx(&cfg, ms(0)), partner);
            assert!(!churn_flag(&p, partner));
            assert_eq!(step(&p, &ctx(&cfg, ms(59_999)), partner), None);
            assert_eq!(
                step_enter(&mut p, &ctx(&cfg, ms(60_000)), partner),
                Some((ChurnEvent::TimerExpired, ChurnState::Churn)),
                "partner={partner}"
            );
            assert!(churn_flag(&p, partner));
            let n = if partner {
                p.counters.partner_churn
            } else {
                p.counters.actor_churn
            };
            assert_eq!(n, 1);
            // 6.4.17: CHURN -> NO_CHURN once in sync, and the flag clears.
            set_sync(&mut p, partner, true);
            assert_eq!(
                step_enter(&mut p, &ctx(&cfg, ms(61_000)), partner),
                Some((ChurnEvent::InSync, ChurnState::NoChurn))
            );
            assert!(!churn_flag(&p, partner));
        }
    }

    /// 6.4.17: MONITOR -> NO_CHURN on Synchronization; NO_CHURN -> MONITOR
    /// when it is lost, restarting the 60 s from that moment.
    #[test]
    fn churn_6_4_17_sync_in_time_is_no_churn_and_loss_restarts_monitoring() {
        let cfg = cfg();
        for partner in [false, true] {
            let mut p = port(&cfg, 1);
            p.partner_oper = peer_info(7, UP & !PortState::SYNCHRONIZATION);
            enter(&mut p, ChurnState::Monitor, &ctx(&cfg, ms(0)), partner);
            set_sync(&mut p, partner, true);
            assert_eq!(
                step_enter(&mut p, &ctx(&cfg, ms(10_000)), partner),
                Some((ChurnEvent::InSync, ChurnState::NoChurn))
            );
            assert_eq!(step(&p, &ctx(&cfg, ms(100_000)), partner), None);
            set_sync(&mut p, partner, false);
            assert_eq!(
                step_enter(&mut p, &ctx(&cfg, ms(100_000)), partner),
                Some((ChurnEvent::OutOfSync, ChurnState::Monitor))
            );
            let t = if partner {
                Timer::PartnerChurn
            } else {
                Timer::ActorChurn
            };
            assert_eq!(p.timers[t as usize], Some(ms(160_000)));
            assert_eq!(step(&p, &ctx(&cfg, ms(159_999)), partner), None);
            assert_eq!(
                step(&p, &ctx(&cfg, ms(160_000)), partner).map(|t| t.1),
                Some(ChurnState::Churn)
            );
        }
    }

    /// 6.4.17 global transition `BEGIN || !port_enabled` -> MONITOR: a
    /// churned port whose link goes down is back in MONITOR, not churned,
    /// and no churn is declared while the link stays down.
    #[test]
    fn churn_6_4_17_link_down_returns_to_monitor_without_churn() {
        let cfg = cfg();
        for partner in [false, true] {
            let mut p = port(&cfg, 1);
            enter(&mut p, ChurnState::Churn, &ctx(&cfg, ms(0)), partner);
            p.port_enabled = false;
            assert_eq!(
                step_enter(&mut p, &ctx(&cfg, ms(1)), partner),
                Some((ChurnEvent::PortDisabled, ChurnState::Monitor))
            );
            assert!(!churn_flag(&p, partner));
            assert_eq!(step(&p, &ctx(&cfg, ms(1_000_000)), partner), None);
        }
    }
}
