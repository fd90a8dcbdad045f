//! Receive machine (802.1AX-2020 6.4.12, Figure 6-18).
//!
//! It records what the partner says about itself and about us, and notices
//! when the partner falls silent: after current_while_timer runs out the
//! partner's information is EXPIRED (and its timeout assumed short), and
//! after another short timeout the administrative defaults are used.

use super::port::{Ctx, Port, Timer};
use lagkit_wire::{LacpduRepr, PortState};

/// States of the Receive machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RxState {
    /// INITIALIZE.
    Initialize,
    /// PORT_DISABLED.
    PortDisabled,
    /// EXPIRED.
    Expired,
    /// LACP_DISABLED.
    LacpDisabled,
    /// DEFAULTED.
    Defaulted,
    /// CURRENT.
    Current,
}

impl RxState {
    /// The standard's name.
    pub fn name(self) -> &'static str {
        match self {
            RxState::Initialize => "INITIALIZE",
            RxState::PortDisabled => "PORT_DISABLED",
            RxState::Expired => "EXPIRED",
            RxState::LacpDisabled => "LACP_DISABLED",
            RxState::Defaulted => "DEFAULTED",
            RxState::Current => "CURRENT",
        }
    }
}

/// Why the Receive machine moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RxEvent {
    /// UCT from INITIALIZE.
    Initialized,
    /// `!port_enabled && !port_moved`.
    PortDisabled,
    /// `port_moved`.
    PortMoved,
    /// `port_enabled && LACP_Enabled`.
    PortEnabled,
    /// `port_enabled && !LACP_Enabled`.
    PortEnabledLacpOff,
    /// `LACP_Enabled` became true again.
    LacpEnabled,
    /// CtrlMuxN:M_UNITDATA.indication(LACPDU).
    PduReceived,
    /// `current_while_timer expired`.
    CurrentWhileExpired,
}

impl RxEvent {
    pub fn name(self) -> &'static str {
        match self {
            RxEvent::Initialized => "initialized",
            RxEvent::PortDisabled => "port disabled",
            RxEvent::PortMoved => "port moved",
            RxEvent::PortEnabled => "port enabled",
            RxEvent::PortEnabledLacpOff => "port enabled, LACP disabled",
            RxEvent::LacpEnabled => "LACP enabled",
            RxEvent::PduReceived => "LACPDU received",
            RxEvent::CurrentWhileExpired => "current_while_timer expired",
        }
    }
}

/// The transition the Receive machine takes now, if any (PDU reception is
/// handled by [`on_pdu`]).
pub(crate) fn step(p: &Port, ctx: &Ctx) -> Option<(RxEvent, RxState)> {
    use RxState::*;
    // Global transition: "(!port_enabled) && (!port_moved)" leads to
    // PORT_DISABLED from any state.
    if !p.port_enabled && !p.port_moved && !matches!(p.rx, PortDisabled | Initialize) {
        return Some((RxEvent::PortDisabled, PortDisabled));
    }
    match p.rx {
        Initialize => Some((RxEvent::Initialized, PortDisabled)),
        PortDisabled => {
            if p.port_moved {
                Some((RxEvent::PortMoved, Initialize))
            } else if p.port_enabled && p.lacp_enabled() {
                Some((RxEvent::PortEnabled, Expired))
            } else if p.port_enabled {
                Some((RxEvent::PortEnabledLacpOff, LacpDisabled))
            } else {
                None
            }
        }
        LacpDisabled => p
            .lacp_enabled()
            .then_some((RxEvent::LacpEnabled, PortDisabled)),
        Expired => p
            .expired(Timer::CurrentWhile, ctx.now)
            .then_some((RxEvent::CurrentWhileExpired, Defaulted)),
        Current => p
            .expired(Timer::CurrentWhile, ctx.now)
            .then_some((RxEvent::CurrentWhileExpired, Expired)),
        Defaulted => None,
    }
}

/// A valid LACPDU arrived: EXPIRED, DEFAULTED and CURRENT go to CURRENT.
pub(crate) fn on_pdu(p: &Port) -> Option<(RxEvent, RxState)> {
    matches!(
        p.rx,
        RxState::Expired | RxState::Defaulted | RxState::Current
    )
    .then_some((RxEvent::PduReceived, RxState::Current))
}

/// Entry actions. Returns true if Selected changed (so selection must rerun).
pub(crate) fn enter(p: &mut Port, s: RxState, ctx: &Ctx, pdu: Option<&LacpduRepr>) {
    p.rx = s;
    match s {
        RxState::Initialize => {
            // Selected = UNSELECTED; recordDefault();
            // Actor_Oper_Port_State.Expired = FALSE; port_moved = FALSE
            p.set_selected(super::Selected::Unselected);
            p.record_default();
            p.actor_state.set(PortState::EXPIRED, false);
            p.port_moved = false;
        }
        RxState::PortDisabled => {
            // Partner_Oper_Port_State.Synchronization = FALSE
            p.partner_oper.state.set(PortState::SYNCHRONIZATION, false);
            p.stop(Timer::CurrentWhile);
        }
        RxState::Expired => {
            // Partner_Oper_Port_State.Synchronization = FALSE;
            // Partner_Oper_Port_State.LACP_Timeout = Short Timeout;
            // start current_while_timer(Short Timeout);
            // Actor_Oper_Port_State.Expired = TRUE
            p.partner_oper.state.set(PortState::SYNCHRONIZATION, false);
            p.partner_oper.state.set(PortState::TIMEOUT, true);
            p.start(Timer::CurrentWhile, ctx.now, ctx.cfg.timers.short_timeout);
            p.actor_state.set(PortState::EXPIRED, true);
            p.counters.expired += 1;
        }
        RxState::LacpDisabled => {
            // Selected = UNSELECTED; recordDefault();
            // Partner_Oper_Port_State.Aggregation = FALSE;
            // Actor_Oper_Port_State.Expired = FALSE
            p.set_selected(super::Selected::Unselected);
            p.record_default();
            p.partner_oper.state.set(PortState::AGGREGATION, false);
            p.actor_state.set(PortState::EXPIRED, false);
        }
        RxState::Defaulted => {
            // update_Default_Selected(); recordDefault();
            // Actor_Oper_Port_State.Expired = FALSE
            p.update_default_selected();
            p.record_default();
            p.actor_state.set(PortState::EXPIRED, false);
            // Not in the standard: DEFAULTED never reads current_while_timer,
            // so it is stopped rather than left expired.
            p.stop(Timer::CurrentWhile);
            p.counters.defaulted += 1;
        }
        RxState::Current => {
            // update_Selected(); update_NTT(); recordPDU();
            // start current_while_timer(Actor_Oper_Port_State.LACP_Timeout);
            // Actor_Oper_Port_State.Expired = FALSE
            if let Some(pdu) = pdu {
                p.update_selected(pdu);
                p.update_ntt(pdu, ctx.system);
                p.record_pdu(pdu, ctx.system);
            }
            let t = if p.actor_state.short_timeout() {
                ctx.cfg.timers.short_timeout
            } else {
                ctx.cfg.timers.long_timeout
            };
            p.start(Timer::CurrentWhile, ctx.now, t);
            p.actor_state.set(PortState::EXPIRED, false);
        }
    }
}
