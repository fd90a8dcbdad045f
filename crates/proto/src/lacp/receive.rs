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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::config::Rate;
    use crate::lacp::port::Selected;
    use crate::lacp::testkit::{cfg, ctx, ms, pdu_to, peer_info, port, UP};
    use lagkit_wire::PortInfo;
    use std::time::Duration;

    /// Takes the transition `step` offers, if any, and returns it.
    fn step_enter(p: &mut Port, c: &Ctx) -> Option<(RxEvent, RxState)> {
        let t = step(p, c)?;
        enter(p, t.1, c, None);
        Some(t)
    }

    /// BEGIN, then steps until the machine rests: an enabled port ends in
    /// EXPIRED.
    fn begun(p: &mut Port, c: &Ctx) {
        enter(p, RxState::Initialize, c, None);
        while step_enter(p, c).is_some() {}
    }

    /// 802.1AX-2020 6.4.12, Figure 6-18: INITIALIZE runs
    /// `Selected = UNSELECTED; recordDefault(); Actor_Oper_Port_State.Expired
    /// = FALSE; port_moved = FALSE`, then UCT to PORT_DISABLED.
    #[test]
    fn rx_6_4_12_initialize_records_default_then_uct_to_port_disabled() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.selected = Selected::Selected;
        p.port_moved = true;
        p.partner_oper = peer_info(7, UP);
        p.actor_state.set(PortState::EXPIRED, true);
        enter(&mut p, RxState::Initialize, &c, None);
        assert_eq!(p.selected, Selected::Unselected);
        assert_eq!(p.partner_oper, p.partner_admin);
        assert!(p.actor_state.defaulted());
        assert!(!p.actor_state.expired());
        assert!(!p.port_moved);
        assert_eq!(
            step(&p, &c),
            Some((RxEvent::Initialized, RxState::PortDisabled))
        );
    }

    /// 6.4.12: PORT_DISABLED sets Partner_Oper_Port_State.Synchronization
    /// FALSE and waits while `!port_enabled`.
    #[test]
    fn rx_6_4_12_port_disabled_clears_partner_sync_and_waits_for_the_link() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.port_enabled = false;
        p.partner_oper = peer_info(7, UP);
        enter(&mut p, RxState::PortDisabled, &c, None);
        assert!(!p.partner_oper.state.in_sync());
        assert_eq!(step(&p, &c), None);
    }

    /// 6.4.12: PORT_DISABLED -> EXPIRED on `port_enabled && LACP_Enabled`.
    /// EXPIRED: `Partner_Oper_Port_State.Synchronization = FALSE;
    /// Partner_Oper_Port_State.LACP_Timeout = Short Timeout; start
    /// current_while_timer(Short Timeout); Actor_Oper_Port_State.Expired =
    /// TRUE`.
    #[test]
    fn rx_6_4_12_port_disabled_to_expired_sets_expired_bit_and_short_timeout() {
        let mut cfg = cfg();
        cfg.timers.short_timeout = Duration::from_secs(3);
        let c = ctx(&cfg, ms(500));
        let mut p = port(&cfg, 1);
        p.cfg.rate = Rate::Slow;
        p.actor_state.set(PortState::TIMEOUT, false);
        enter(&mut p, RxState::PortDisabled, &c, None);
        // A slow partner that was current: its LACP_Timeout bit is clear.
        p.partner_oper = peer_info(7, UP & !PortState::TIMEOUT);
        assert_eq!(step(&p, &c), Some((RxEvent::PortEnabled, RxState::Expired)));
        enter(&mut p, RxState::Expired, &c, None);
        assert!(p.actor_state.expired());
        assert!(!p.partner_oper.state.in_sync());
        assert!(p.partner_oper.state.short_timeout());
        // Short Timeout even though the actor itself is slow.
        assert_eq!(p.timers[Timer::CurrentWhile as usize], Some(ms(3500)));
        assert_eq!(p.counters.expired, 1);
    }

    /// 6.4.12: PORT_DISABLED -> LACP_DISABLED on `port_enabled &&
    /// !LACP_Enabled`; LACP_DISABLED runs `Selected = UNSELECTED;
    /// recordDefault(); Partner_Oper_Port_State.Aggregation = FALSE;
    /// Actor_Oper_Port_State.Expired = FALSE`, and goes back to
    /// PORT_DISABLED once LACP_Enabled.
    #[test]
    fn rx_6_4_12_lacp_disabled_makes_the_partner_individual_until_lacp_enabled() {
        let mut cfg = cfg();
        // Fallback's admin partner state is Aggregatable, so the clear of
        // the bit by the entry action is visible.
        cfg.no_partner = crate::lacp::NoPartner::Fallback;
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        assert!(p.partner_admin.state.aggregatable());
        p.cfg.lacp_enabled = false;
        p.selected = Selected::Selected;
        p.actor_state.set(PortState::EXPIRED, true);
        enter(&mut p, RxState::PortDisabled, &c, None);
        assert_eq!(
            step(&p, &c),
            Some((RxEvent::PortEnabledLacpOff, RxState::LacpDisabled))
        );
        enter(&mut p, RxState::LacpDisabled, &c, None);
        assert_eq!(p.selected, Selected::Unselected);
        assert!(p.actor_state.defaulted());
        assert!(!p.actor_state.expired());
        assert!(!p.partner_oper.state.aggregatable());
        // No LACPDU is taken in LACP_DISABLED.
        assert_eq!(on_pdu(&p), None);
        assert_eq!(step(&p, &c), None);
        p.cfg.lacp_enabled = true;
        assert_eq!(
            step(&p, &c),
            Some((RxEvent::LacpEnabled, RxState::PortDisabled))
        );
    }

    /// 6.4.12: PORT_DISABLED -> INITIALIZE on `port_moved`.
    #[test]
    fn rx_6_4_12_port_moved_reinitializes() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.port_enabled = false;
        enter(&mut p, RxState::PortDisabled, &c, None);
        p.port_moved = true;
        assert_eq!(
            step(&p, &c),
            Some((RxEvent::PortMoved, RxState::Initialize))
        );
        // port_moved also suppresses the global transition elsewhere.
        p.rx = RxState::Current;
        assert_eq!(step(&p, &c), None);
    }

    /// 6.4.12 global transition: `(!port_enabled) && (!port_moved)` ->
    /// PORT_DISABLED from every state.
    #[test]
    fn rx_6_4_12_link_down_goes_to_port_disabled_from_every_state() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        for s in [
            RxState::Expired,
            RxState::LacpDisabled,
            RxState::Defaulted,
            RxState::Current,
        ] {
            let mut p = port(&cfg, 1);
            p.rx = s;
            p.port_enabled = false;
            assert_eq!(
                step(&p, &c),
                Some((RxEvent::PortDisabled, RxState::PortDisabled)),
                "{s:?}"
            );
        }
    }

    /// 6.4.12: EXPIRED -> DEFAULTED when current_while_timer expires (Short
    /// Timeout after entering EXPIRED); DEFAULTED runs
    /// `update_Default_Selected(); recordDefault(); Actor_Oper_Port_State.Expired
    /// = FALSE`.
    #[test]
    fn rx_6_4_12_expired_to_defaulted_after_short_timeout() {
        let cfg = cfg();
        let mut p = port(&cfg, 1);
        begun(&mut p, &ctx(&cfg, ms(0)));
        assert_eq!(p.rx, RxState::Expired);
        assert_eq!(step(&p, &ctx(&cfg, ms(2999))), None);
        let c = ctx(&cfg, ms(3000));
        assert_eq!(
            step(&p, &c),
            Some((RxEvent::CurrentWhileExpired, RxState::Defaulted))
        );
        p.selected = Selected::Selected;
        p.partner_oper = peer_info(7, UP);
        enter(&mut p, RxState::Defaulted, &c, None);
        // update_Default_Selected: the admin values differ from the
        // operational ones, so Selected becomes UNSELECTED.
        assert_eq!(p.selected, Selected::Unselected);
        assert_eq!(p.partner_oper, p.partner_admin);
        assert!(p.actor_state.defaulted() && !p.actor_state.expired());
        assert_eq!(step(&p, &ctx(&cfg, ms(1_000_000))), None);
        assert_eq!(p.counters.defaulted, 1);
    }

    /// 6.4.9 update_Default_Selected leaves Selected alone when the Partner
    /// administrative values equal the operational ones.
    #[test]
    fn rx_6_4_9_update_default_selected_keeps_selection_of_a_defaulted_partner() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.rx = RxState::Defaulted;
        p.record_default();
        p.selected = Selected::Selected;
        enter(&mut p, RxState::Defaulted, &c, None);
        assert_eq!(p.selected, Selected::Selected);
    }

    /// 6.4.12: a received LACPDU moves EXPIRED, DEFAULTED and CURRENT to
    /// CURRENT and nothing else.
    #[test]
    fn rx_6_4_12_pdu_received_enters_current_only_from_expired_defaulted_current() {
        let cfg = cfg();
        let mut p = port(&cfg, 1);
        for (s, to) in [
            (RxState::Initialize, None),
            (RxState::PortDisabled, None),
            (RxState::LacpDisabled, None),
            (RxState::Expired, Some(RxState::Current)),
            (RxState::Defaulted, Some(RxState::Current)),
            (RxState::Current, Some(RxState::Current)),
        ] {
            p.rx = s;
            assert_eq!(on_pdu(&p).map(|t| t.1), to, "{s:?}");
        }
    }

    /// 6.4.12 CURRENT: `update_Selected(); update_NTT(); recordPDU(); start
    /// current_while_timer(Actor_Oper_Port_State.LACP_Timeout);
    /// Actor_Oper_Port_State.Expired = FALSE`: Short_Timeout_Time (3 s) for
    /// a fast actor, Long_Timeout_Time (90 s) for a slow one; CURRENT ->
    /// EXPIRED when it runs out.
    #[test]
    fn rx_6_4_12_current_starts_current_while_by_actor_timeout_then_expires() {
        let cfg = cfg();
        for (rate, secs) in [(Rate::Fast, 3), (Rate::Slow, 90)] {
            let mut p = port(&cfg, 1);
            p.cfg.rate = rate;
            p.actor_state.set(PortState::TIMEOUT, rate == Rate::Fast);
            begun(&mut p, &ctx(&cfg, ms(0)));
            let pdu = pdu_to(&p, &cfg, 7, UP);
            let c = ctx(&cfg, ms(1000));
            let (ev, to) = on_pdu(&p).unwrap();
            assert_eq!((ev, to), (RxEvent::PduReceived, RxState::Current));
            enter(&mut p, to, &c, Some(&pdu));
            assert!(!p.actor_state.expired() && !p.actor_state.defaulted());
            let deadline = ms(1000 + secs * 1000);
            assert_eq!(p.timers[Timer::CurrentWhile as usize], Some(deadline));
            assert_eq!(step(&p, &ctx(&cfg, ms(1000 + secs * 1000 - 1))), None);
            assert_eq!(
                step(&p, &ctx(&cfg, deadline)),
                Some((RxEvent::CurrentWhileExpired, RxState::Expired)),
                "{rate:?}"
            );
        }
    }

    /// 6.4.9 recordPDU: the PDU's Actor values become Partner_Oper, with
    /// Synchronization TRUE only if the PDU's Partner values match the
    /// actor and the PDU's Actor says it is in sync, and LACP is active at
    /// one end.
    #[test]
    fn rx_6_4_9_record_pdu_copies_actor_and_derives_partner_sync() {
        let cfg = cfg();
        let fresh = || {
            let mut p = port(&cfg, 1);
            begun(&mut p, &ctx(&cfg, ms(0)));
            p
        };
        // Matching partner info, in sync: Synchronization TRUE.
        let mut p = fresh();
        let pdu = pdu_to(&p, &cfg, 7, UP);
        p.record_pdu(&pdu, cfg.system);
        assert_eq!(p.partner_oper, pdu.actor);
        assert!(p.partner_in_sync() && !p.actor_state.defaulted());

        // The partner believes in another key for us: FALSE.
        let mut p = fresh();
        let mut pdu = pdu_to(&p, &cfg, 7, UP);
        pdu.partner.key += 1;
        p.record_pdu(&pdu, cfg.system);
        assert!(!p.partner_in_sync());
        assert_eq!(p.partner_oper.key, pdu.actor.key);

        // Matching but the partner is not in sync itself: FALSE.
        let mut p = fresh();
        let pdu = pdu_to(&p, &cfg, 7, UP & !PortState::SYNCHRONIZATION);
        p.record_pdu(&pdu, cfg.system);
        assert!(!p.partner_in_sync());

        // An Individual partner in sync: TRUE even if it knows nothing of us.
        let mut p = fresh();
        let mut pdu = pdu_to(&p, &cfg, 7, UP & !PortState::AGGREGATION);
        pdu.partner = PortInfo::default();
        p.record_pdu(&pdu, cfg.system);
        assert!(p.partner_in_sync());

        // A passive partner that sees us passive too: LACP does not run.
        let mut p = fresh();
        let mut pdu = pdu_to(&p, &cfg, 7, UP & !PortState::ACTIVITY);
        pdu.partner.state.set(PortState::ACTIVITY, false);
        p.record_pdu(&pdu, cfg.system);
        assert!(!p.partner_in_sync());

        // A passive partner facing an active actor that it knows is active.
        let mut p = fresh();
        let pdu = pdu_to(&p, &cfg, 7, UP & !PortState::ACTIVITY);
        p.record_pdu(&pdu, cfg.system);
        assert!(p.partner_in_sync());
    }

    /// 6.4.9 update_Selected: a PDU whose Actor values (port, priority,
    /// system, key, Aggregation) differ from Partner_Oper sets Selected to
    /// UNSELECTED; the same values leave it alone.
    #[test]
    fn rx_6_4_9_update_selected_unselects_on_a_new_partner_only() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.rx = RxState::Current;
        p.partner_oper = peer_info(7, UP);
        p.selected = Selected::Selected;
        let same = pdu_to(&p, &cfg, 7, UP & !PortState::COLLECTING);
        enter(&mut p, RxState::Current, &c, Some(&same));
        assert_eq!(p.selected, Selected::Selected);
        for change in [
            |i: &mut PortInfo| i.port = 8,
            |i: &mut PortInfo| i.port_priority = 1,
            |i: &mut PortInfo| i.key = 10,
            |i: &mut PortInfo| i.system.priority = 1,
            |i: &mut PortInfo| i.state.set(PortState::AGGREGATION, false),
        ] {
            p.partner_oper = peer_info(7, UP);
            p.selected = Selected::Selected;
            let mut pdu = pdu_to(&p, &cfg, 7, UP);
            change(&mut pdu.actor);
            enter(&mut p, RxState::Current, &c, Some(&pdu));
            assert_eq!(p.selected, Selected::Unselected, "{:?}", pdu.actor);
        }
    }

    /// 6.4.9 update_NTT: NTT becomes TRUE when the PDU's Partner values
    /// (port, priority, system, key, Activity, Timeout, Synchronization,
    /// Aggregation) differ from the actor's; Collecting, Distributing,
    /// Defaulted and Expired are not compared.
    #[test]
    fn rx_6_4_9_update_ntt_only_when_the_partner_has_us_wrong() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        begun(&mut p, &c);
        // recordPDU clears Defaulted on our side only after update_NTT ran:
        // the first PDU, repeating a Defaulted actor, must not set NTT.
        let mut pdu = pdu_to(&p, &cfg, 7, UP);
        p.ntt = false;
        enter(&mut p, RxState::Current, &c, Some(&pdu));
        assert!(!p.ntt, "Defaulted/Expired bits are not compared");
        pdu.partner.state.set(PortState::COLLECTING, true);
        enter(&mut p, RxState::Current, &c, Some(&pdu));
        assert!(!p.ntt, "Collecting is not compared");
        for bit in [
            PortState::ACTIVITY,
            PortState::TIMEOUT,
            PortState::SYNCHRONIZATION,
            PortState::AGGREGATION,
        ] {
            let mut pdu = pdu_to(&p, &cfg, 7, UP);
            pdu.partner.state.set(bit, !p.actor_state.has(bit));
            p.ntt = false;
            enter(&mut p, RxState::Current, &c, Some(&pdu));
            assert!(p.ntt, "bit {bit:#x}");
        }
        let mut pdu = pdu_to(&p, &cfg, 7, UP);
        pdu.partner.port += 1;
        p.ntt = false;
        enter(&mut p, RxState::Current, &c, Some(&pdu));
        assert!(p.ntt);
    }
}
