//! Mux machine (802.1AX-2020 6.4.15, Figures 6-21 independent and 6-22
//! coupled control).
//!
//! Attaches a port to the aggregator the Selection Logic chose and turns
//! collecting and distributing on once the partner is in sync. With coupled
//! control collecting and distributing switch together; with independent
//! control the port collects first and distributes once the partner collects.

use super::config::MuxControl;
use super::port::{Ctx, Port, Selected, Timer};
use lagkit_wire::PortState;

/// States of the Mux machine (both variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MuxState {
    /// DETACHED.
    Detached,
    /// WAITING.
    Waiting,
    /// ATTACHED.
    Attached,
    /// COLLECTING (independent control).
    Collecting,
    /// DISTRIBUTING (independent control).
    Distributing,
    /// COLLECTING_DISTRIBUTING (coupled control).
    CollectingDistributing,
}

impl MuxState {
    /// The standard's name.
    pub fn name(self) -> &'static str {
        match self {
            MuxState::Detached => "DETACHED",
            MuxState::Waiting => "WAITING",
            MuxState::Attached => "ATTACHED",
            MuxState::Collecting => "COLLECTING",
            MuxState::Distributing => "DISTRIBUTING",
            MuxState::CollectingDistributing => "COLLECTING_DISTRIBUTING",
        }
    }
}

/// Why the Mux machine moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MuxEvent {
    /// `Selected == SELECTED || Selected == STANDBY`.
    Selected,
    /// `Selected == UNSELECTED`.
    Unselected,
    /// `Selected == STANDBY`.
    Standby,
    /// `Selected == SELECTED && Ready`.
    Ready,
    /// `Partner_Oper_Port_State.Synchronization` became TRUE.
    PartnerInSync,
    /// `Partner_Oper_Port_State.Synchronization` became FALSE.
    PartnerOutOfSync,
    /// `Partner_Oper_Port_State.Collecting` became TRUE.
    PartnerCollecting,
    /// `Partner_Oper_Port_State.Collecting` became FALSE.
    PartnerNotCollecting,
    /// Fewer than `min_links` ports of the aggregate are attached and in sync.
    BelowMinLinks,
}

impl MuxEvent {
    pub fn name(self) -> &'static str {
        match self {
            MuxEvent::Selected => "selected",
            MuxEvent::Unselected => "unselected",
            MuxEvent::Standby => "standby",
            MuxEvent::Ready => "ready",
            MuxEvent::PartnerInSync => "partner in sync",
            MuxEvent::PartnerOutOfSync => "partner out of sync",
            MuxEvent::PartnerCollecting => "partner collecting",
            MuxEvent::PartnerNotCollecting => "partner not collecting",
            MuxEvent::BelowMinLinks => "below min_links",
        }
    }
}

/// Ready_N (6.4.8): the wait_while_timer has expired and the port is WAITING.
pub(crate) fn ready_n(p: &Port, ctx_now: crate::Instant) -> bool {
    p.mux == MuxState::Waiting && p.expired(Timer::WaitWhile, ctx_now)
}

pub(crate) fn step(p: &Port, ctx: &Ctx) -> Option<(MuxEvent, MuxState)> {
    use MuxState::*;
    let sel = p.selected;
    let leave = match sel {
        Selected::Unselected => Some(MuxEvent::Unselected),
        Selected::Standby => Some(MuxEvent::Standby),
        Selected::Selected => None,
    };
    let sync = p.partner_in_sync();
    // min_links (not in 802.1AX; Cisco `port-channel min-links`, Linux
    // `min_links`): collecting and distributing start only once enough ports
    // are attached and in sync, and stop together when too few remain.
    let met = ctx.min_links_met;
    let coupled = ctx.cfg.mux_control == MuxControl::Coupled;
    match p.mux {
        // DETACHED -> WAITING: Selected == SELECTED || Selected == STANDBY
        Detached => (sel != Selected::Unselected).then_some((MuxEvent::Selected, Waiting)),
        // WAITING -> DETACHED: Selected == UNSELECTED
        // WAITING -> ATTACHED: Selected == SELECTED && Ready
        Waiting => {
            if sel == Selected::Unselected {
                Some((MuxEvent::Unselected, Detached))
            } else if sel == Selected::Selected && ctx.ready {
                Some((MuxEvent::Ready, Attached))
            } else {
                None
            }
        }
        // ATTACHED -> DETACHED: Selected == UNSELECTED || Selected == STANDBY
        // ATTACHED -> COLLECTING[_DISTRIBUTING]:
        //     Selected == SELECTED && Partner_Oper_Port_State.Synchronization
        Attached => {
            if let Some(ev) = leave {
                Some((ev, Detached))
            } else if sync && met {
                Some((
                    MuxEvent::PartnerInSync,
                    if coupled {
                        CollectingDistributing
                    } else {
                        Collecting
                    },
                ))
            } else {
                None
            }
        }
        // COLLECTING_DISTRIBUTING -> ATTACHED: Selected == UNSELECTED ||
        //     Selected == STANDBY || !Partner_Oper_Port_State.Synchronization
        CollectingDistributing => match leave {
            Some(ev) => Some((ev, Attached)),
            None if !sync => Some((MuxEvent::PartnerOutOfSync, Attached)),
            None => (!met).then_some((MuxEvent::BelowMinLinks, Attached)),
        },
        // COLLECTING -> ATTACHED: Selected == UNSELECTED ||
        //     Selected == STANDBY || !Partner_Oper_Port_State.Synchronization
        // COLLECTING -> DISTRIBUTING: Selected == SELECTED &&
        //     Partner_Oper_Port_State.Synchronization && Partner_Oper_Port_State.Collecting
        Collecting => match leave {
            Some(ev) => Some((ev, Attached)),
            None if !sync => Some((MuxEvent::PartnerOutOfSync, Attached)),
            None if !met => Some((MuxEvent::BelowMinLinks, Attached)),
            None => p
                .partner_oper
                .state
                .collecting()
                .then_some((MuxEvent::PartnerCollecting, Distributing)),
        },
        // DISTRIBUTING -> COLLECTING: Selected == UNSELECTED || Selected ==
        //     STANDBY || !Partner.Synchronization || !Partner.Collecting
        Distributing => match leave {
            Some(ev) => Some((ev, Collecting)),
            None if !sync => Some((MuxEvent::PartnerOutOfSync, Collecting)),
            None if !met => Some((MuxEvent::BelowMinLinks, Collecting)),
            None => (!p.partner_oper.state.collecting())
                .then_some((MuxEvent::PartnerNotCollecting, Collecting)),
        },
    }
}

pub(crate) fn enter(p: &mut Port, s: MuxState, ctx: &Ctx) {
    p.mux = s;
    let st = &mut p.actor_state;
    match s {
        MuxState::Detached => {
            // Detach_Mux_From_Aggregator(); Actor.Synchronization = FALSE;
            // Disable_Collecting_Distributing(); Actor.Collecting = FALSE;
            // Actor.Distributing = FALSE; NTT = TRUE
            st.set(PortState::SYNCHRONIZATION, false);
            st.set(PortState::COLLECTING | PortState::DISTRIBUTING, false);
            p.attached = None;
            p.collecting = false;
            p.distributing = false;
            p.stop(Timer::WaitWhile);
            p.ntt = true;
        }
        MuxState::Waiting => {
            // Start wait_while_timer
            p.start(Timer::WaitWhile, ctx.now, ctx.cfg.timers.aggregate_wait);
        }
        MuxState::Attached => {
            // Attach_Mux_To_Aggregator(); Actor.Synchronization = TRUE;
            // Actor.Collecting = FALSE; Disable_Collecting[_Distributing]();
            // Actor.Distributing = FALSE; NTT = TRUE
            st.set(PortState::SYNCHRONIZATION, true);
            st.set(PortState::COLLECTING | PortState::DISTRIBUTING, false);
            p.attached = p.aggregator;
            p.collecting = false;
            p.distributing = false;
            p.stop(Timer::WaitWhile);
            p.ntt = true;
        }
        MuxState::CollectingDistributing => {
            // Actor.Distributing = TRUE; Enable_Collecting_Distributing();
            // Actor.Collecting = TRUE; NTT = TRUE
            st.set(PortState::COLLECTING | PortState::DISTRIBUTING, true);
            p.collecting = true;
            p.distributing = true;
            p.ntt = true;
        }
        MuxState::Collecting => {
            // Enable_Collecting(); Actor.Collecting = TRUE;
            // Disable_Distributing(); Actor.Distributing = FALSE; NTT = TRUE
            st.set(PortState::COLLECTING, true);
            st.set(PortState::DISTRIBUTING, false);
            p.collecting = true;
            p.distributing = false;
            p.ntt = true;
        }
        MuxState::Distributing => {
            // Actor.Distributing = TRUE; Enable_Distributing()
            // (NTT is also set so the partner learns at once; the standard
            // leaves it to the next periodic PDU.)
            st.set(PortState::DISTRIBUTING, true);
            p.distributing = true;
            p.ntt = true;
        }
    }
}
