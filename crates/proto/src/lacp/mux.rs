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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::config::SystemConfig;
    use crate::lacp::port::Ctx;
    use crate::lacp::testkit::{cfg, ctx, ms, peer_info, port, UP};
    use crate::Instant;

    const OUT_OF_SYNC: u8 = UP & !(PortState::SYNCHRONIZATION | PortState::COLLECTING);

    fn ctx_ready(cfg: &SystemConfig, now: Instant, ready: bool) -> Ctx<'_> {
        let mut c = ctx(cfg, now);
        c.ready = ready;
        c
    }

    fn step_enter(p: &mut Port, c: &Ctx) -> Option<(MuxEvent, MuxState)> {
        let t = step(p, c)?;
        enter(p, t.1, c);
        Some(t)
    }

    /// A port the Selection Logic put on aggregator 0, in `state`, whose
    /// partner's state octet is `partner`.
    fn selected_port(cfg: &SystemConfig, state: MuxState, partner: u8) -> Port {
        let mut p = port(cfg, 1);
        p.selected = Selected::Selected;
        p.aggregator = Some(0);
        p.partner_oper = peer_info(7, partner);
        enter(&mut p, state, &ctx(cfg, ms(0)));
        p.ntt = false;
        p
    }

    /// 802.1AX-2020 6.4.15, Figure 6-22 (coupled control, the default):
    /// DETACHED -> WAITING on `Selected == SELECTED || Selected == STANDBY`;
    /// WAITING starts wait_while_timer (Aggregate_Wait_Time, 2 s).
    #[test]
    fn mux_6_4_15_detached_to_waiting_on_selected_or_standby() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(100));
        let mut p = selected_port(&cfg, MuxState::Detached, UP);
        p.selected = Selected::Unselected;
        assert_eq!(step(&p, &c), None);
        for sel in [Selected::Selected, Selected::Standby] {
            p.selected = sel;
            p.mux = MuxState::Detached;
            assert_eq!(
                step_enter(&mut p, &c),
                Some((MuxEvent::Selected, MuxState::Waiting))
            );
            assert_eq!(p.timers[Timer::WaitWhile as usize], Some(ms(2100)));
        }
    }

    /// 6.4.8 Ready_N: TRUE once wait_while_timer has expired while WAITING.
    #[test]
    fn mux_6_4_8_ready_n_after_aggregate_wait_time() {
        let cfg = cfg();
        let p = selected_port(&cfg, MuxState::Waiting, UP);
        assert!(!ready_n(&p, ms(1999)));
        assert!(ready_n(&p, ms(2000)));
        let mut q = p.clone();
        q.mux = MuxState::Attached;
        assert!(!ready_n(&q, ms(5000)), "only a WAITING port is Ready_N");
    }

    /// 6.4.15: WAITING -> ATTACHED on `Selected == SELECTED && Ready`;
    /// WAITING -> DETACHED on `Selected == UNSELECTED`; a STANDBY port
    /// waits even when the aggregator is Ready.
    #[test]
    fn mux_6_4_15_waiting_attaches_only_when_selected_and_ready() {
        let cfg = cfg();
        let mut p = selected_port(&cfg, MuxState::Waiting, UP);
        assert_eq!(step(&p, &ctx_ready(&cfg, ms(3000), false)), None);
        let ready = ctx_ready(&cfg, ms(3000), true);
        p.selected = Selected::Standby;
        assert_eq!(step(&p, &ready), None);
        p.selected = Selected::Selected;
        assert_eq!(
            step(&p, &ready),
            Some((MuxEvent::Ready, MuxState::Attached))
        );
        p.selected = Selected::Unselected;
        assert_eq!(
            step(&p, &ready),
            Some((MuxEvent::Unselected, MuxState::Detached))
        );
    }

    /// 6.4.15 ATTACHED: `Attach_Mux_To_Aggregator();
    /// Actor.Synchronization = TRUE; Actor.Collecting = FALSE;
    /// Disable_Collecting_Distributing(); Actor.Distributing = FALSE; NTT =
    /// TRUE`; with the partner out of sync it stays ATTACHED.
    #[test]
    fn mux_6_4_15_attached_is_in_sync_but_not_collecting() {
        let cfg = cfg();
        let c = ctx_ready(&cfg, ms(2000), true);
        let mut p = selected_port(&cfg, MuxState::Waiting, OUT_OF_SYNC);
        p.actor_state.set(PortState::COLLECTING, true);
        step_enter(&mut p, &c);
        assert_eq!(p.mux, MuxState::Attached);
        assert_eq!(p.attached, Some(0));
        assert!(p.actor_state.in_sync());
        assert!(!p.actor_state.collecting() && !p.actor_state.distributing());
        assert!(!p.collecting && !p.distributing);
        assert!(p.ntt);
        assert_eq!(p.timers[Timer::WaitWhile as usize], None);
        assert_eq!(step(&p, &c), None, "Partner.Sync gates collecting");
    }

    /// 6.4.15 (coupled): ATTACHED -> COLLECTING_DISTRIBUTING on `Selected
    /// == SELECTED && Partner_Oper_Port_State.Synchronization`, whose entry
    /// sets Actor.Collecting and Actor.Distributing, enables both and sets
    /// NTT.
    #[test]
    fn mux_6_4_15_coupled_attached_to_collecting_distributing_on_partner_sync() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = selected_port(&cfg, MuxState::Attached, UP);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerInSync, MuxState::CollectingDistributing))
        );
        assert!(p.actor_state.collecting() && p.actor_state.distributing());
        assert!(p.collecting && p.distributing && p.ntt);
        assert_eq!(step(&p, &c), None);
    }

    /// 6.4.15 (coupled): COLLECTING_DISTRIBUTING -> ATTACHED on `Selected
    /// == UNSELECTED || Selected == STANDBY ||
    /// !Partner_Oper_Port_State.Synchronization`; ATTACHED -> DETACHED on
    /// `Selected == UNSELECTED || Selected == STANDBY`.
    #[test]
    fn mux_6_4_15_coupled_leaves_collecting_distributing_and_detaches() {
        let cfg = cfg();
        let c = ctx(&cfg, ms(0));
        let mut p = selected_port(&cfg, MuxState::CollectingDistributing, UP);
        p.partner_oper.state.set(PortState::SYNCHRONIZATION, false);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerOutOfSync, MuxState::Attached))
        );
        assert!(!p.collecting && !p.distributing && p.actor_state.in_sync());
        for (sel, ev) in [
            (Selected::Standby, MuxEvent::Standby),
            (Selected::Unselected, MuxEvent::Unselected),
        ] {
            let mut p = selected_port(&cfg, MuxState::CollectingDistributing, UP);
            p.selected = sel;
            assert_eq!(step_enter(&mut p, &c), Some((ev, MuxState::Attached)));
            p.ntt = false;
            assert_eq!(step_enter(&mut p, &c), Some((ev, MuxState::Detached)));
            // DETACHED: Detach_Mux_From_Aggregator(); Actor.Synchronization
            // = FALSE; Actor.Collecting = Actor.Distributing = FALSE; NTT.
            assert_eq!(p.attached, None);
            assert!(!p.actor_state.in_sync());
            assert!(!p.actor_state.collecting() && !p.actor_state.distributing());
            assert!(p.ntt);
        }
    }

    /// 6.4.15, Figure 6-21 (independent control): ATTACHED -> COLLECTING on
    /// Partner.Sync; COLLECTING -> DISTRIBUTING once Partner.Collecting;
    /// DISTRIBUTING -> COLLECTING when the partner stops collecting or
    /// loses sync; COLLECTING -> ATTACHED on !Partner.Sync.
    #[test]
    fn mux_6_4_15_independent_collects_first_then_distributes() {
        let mut cfg = cfg();
        cfg.mux_control = MuxControl::Independent;
        let c = ctx(&cfg, ms(0));
        let not_collecting = UP & !(PortState::COLLECTING | PortState::DISTRIBUTING);
        let mut p = selected_port(&cfg, MuxState::Attached, not_collecting);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerInSync, MuxState::Collecting))
        );
        assert!(p.collecting && !p.distributing && p.ntt);
        assert!(p.actor_state.collecting() && !p.actor_state.distributing());
        assert_eq!(step(&p, &c), None, "waits for Partner.Collecting");
        p.partner_oper.state.set(PortState::COLLECTING, true);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerCollecting, MuxState::Distributing))
        );
        assert!(p.collecting && p.distributing && p.actor_state.distributing());
        p.partner_oper.state.set(PortState::COLLECTING, false);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerNotCollecting, MuxState::Collecting))
        );
        assert!(p.collecting && !p.distributing);
        p.partner_oper.state.set(PortState::COLLECTING, true);
        step_enter(&mut p, &c);
        p.partner_oper.state.set(PortState::SYNCHRONIZATION, false);
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerOutOfSync, MuxState::Collecting))
        );
        assert_eq!(
            step_enter(&mut p, &c),
            Some((MuxEvent::PartnerOutOfSync, MuxState::Attached))
        );
        assert!(!p.collecting && !p.distributing);
        // STANDBY takes DISTRIBUTING back through COLLECTING as well.
        let mut p = selected_port(&cfg, MuxState::Distributing, UP);
        p.selected = Selected::Standby;
        assert_eq!(
            step(&p, &c),
            Some((MuxEvent::Standby, MuxState::Collecting))
        );
        p.mux = MuxState::Collecting;
        assert_eq!(step(&p, &c), Some((MuxEvent::Standby, MuxState::Attached)));
    }

    /// Not in 802.1AX (Cisco `port-channel min-links`): below min_links an
    /// ATTACHED port waits even with the partner in sync, and a collecting
    /// one falls back to ATTACHED.
    #[test]
    fn mux_min_links_holds_and_drops_collecting() {
        let cfg = cfg();
        let mut c = ctx(&cfg, ms(0));
        c.min_links_met = false;
        let p = selected_port(&cfg, MuxState::Attached, UP);
        assert_eq!(step(&p, &c), None);
        let p = selected_port(&cfg, MuxState::CollectingDistributing, UP);
        assert_eq!(
            step(&p, &c),
            Some((MuxEvent::BelowMinLinks, MuxState::Attached))
        );
    }

    /// 6.4.15 Figure 6-21 DISTRIBUTING: `Actor.Distributing = TRUE;
    /// Enable_Distributing()`, with no NTT in the standard. Documented
    /// extension: lagkit also sets NTT so the partner learns at once
    /// instead of at the next periodic LACPDU (up to 30 s when slow).
    #[test]
    fn mux_6_4_15_distributing_entry_sets_ntt_beyond_the_standard() {
        let mut cfg = cfg();
        cfg.mux_control = MuxControl::Independent;
        let mut p = selected_port(&cfg, MuxState::Collecting, UP);
        assert!(!p.ntt);
        assert_eq!(
            step_enter(&mut p, &ctx(&cfg, ms(0))),
            Some((MuxEvent::PartnerCollecting, MuxState::Distributing))
        );
        assert!(p.ntt, "extension: NTT on entering DISTRIBUTING");
    }
}
