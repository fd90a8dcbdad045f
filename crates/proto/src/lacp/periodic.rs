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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lacp::config::SystemConfig;
    use crate::lacp::testkit::{cfg, ctx, ms, peer_info, port, UP};
    use lagkit_wire::PortState;
    use std::time::Duration;

    /// Standard periods with no lead, so the deadlines are the standard's.
    fn exact() -> SystemConfig {
        let mut c = cfg();
        c.timers.periodic_lead_percent = 0;
        c
    }

    fn step_enter(p: &mut Port, c: &Ctx) -> Option<(PeriodicEvent, PeriodicState)> {
        let t = step(p, c)?;
        enter(p, t.1, c);
        Some(t)
    }

    /// 802.1AX-2020 6.4.13, Figure 6-19 global transition: NO_PERIODIC
    /// (periodic_timer stopped) while `!LACP_Enabled || !port_enabled ||
    /// (Actor and Partner LACP_Activity both PASSIVE)`, from every state.
    #[test]
    fn periodic_6_4_13_no_periodic_when_disabled_or_both_passive() {
        let cfg = exact();
        let c = ctx(&cfg, ms(0));
        type Make = fn(&mut Port);
        let cases: [(&str, Make); 3] = [
            ("LACP disabled", |p| p.cfg.lacp_enabled = false),
            ("port disabled", |p| p.port_enabled = false),
            ("both passive", |p| {
                p.cfg.activity = Activity::Passive;
                p.actor_state.set(PortState::ACTIVITY, false);
                p.partner_oper = peer_info(7, UP & !PortState::ACTIVITY);
            }),
        ];
        for (what, make) in cases {
            for s in [
                PeriodicState::FastPeriodic,
                PeriodicState::SlowPeriodic,
                PeriodicState::PeriodicTx,
            ] {
                let mut p = port(&cfg, 1);
                p.partner_oper = peer_info(7, UP);
                make(&mut p);
                p.periodic = s;
                p.timers[Timer::Periodic as usize] = Some(ms(5));
                assert_eq!(
                    step_enter(&mut p, &c),
                    Some((PeriodicEvent::Disabled, PeriodicState::NoPeriodic)),
                    "{what} in {s:?}"
                );
                assert_eq!(p.timers[Timer::Periodic as usize], None);
                assert_eq!(step(&p, &c), None, "{what}: NO_PERIODIC holds");
            }
        }
    }

    /// 6.4.13: one active end is enough: a passive actor whose partner is
    /// active runs the machine (and so answers).
    #[test]
    fn periodic_6_4_13_passive_actor_runs_when_the_partner_is_active() {
        let cfg = exact();
        let c = ctx(&cfg, ms(0));
        let mut p = port(&cfg, 1);
        p.cfg.activity = Activity::Passive;
        p.actor_state.set(PortState::ACTIVITY, false);
        p.partner_oper = peer_info(7, UP);
        assert_eq!(
            step(&p, &c),
            Some((PeriodicEvent::Enabled, PeriodicState::FastPeriodic))
        );
        // The same port before it hears anyone: the default partner
        // (Partner_Admin_Port_State) is passive, so it stays silent.
        p.partner_oper = p.partner_admin;
        assert!(!p.partner_oper.state.active());
        assert_eq!(step(&p, &c), None);
    }

    /// 6.4.13: NO_PERIODIC -> FAST_PERIODIC (UCT), which starts
    /// periodic_timer(fast_periodic_time, 1 s); FAST_PERIODIC ->
    /// PERIODIC_TX when it expires; PERIODIC_TX sets NTT and returns to
    /// FAST_PERIODIC while the partner's LACP_Timeout is Short.
    #[test]
    fn periodic_6_4_13_fast_cycle_every_fast_periodic_time_sets_ntt() {
        let cfg = exact();
        let mut p = port(&cfg, 1);
        p.partner_oper = peer_info(7, UP);
        let c0 = ctx(&cfg, ms(0));
        assert_eq!(
            step_enter(&mut p, &c0),
            Some((PeriodicEvent::Enabled, PeriodicState::FastPeriodic))
        );
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(1000)));
        assert_eq!(step(&p, &ctx(&cfg, ms(999))), None);
        let c1 = ctx(&cfg, ms(1000));
        assert!(!p.ntt);
        assert_eq!(
            step_enter(&mut p, &c1),
            Some((PeriodicEvent::TimerExpired, PeriodicState::PeriodicTx))
        );
        assert!(p.ntt, "PERIODIC_TX: NTT = TRUE");
        assert_eq!(
            step_enter(&mut p, &c1),
            Some((
                PeriodicEvent::PartnerShortTimeout,
                PeriodicState::FastPeriodic
            ))
        );
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(2000)));
    }

    /// 6.4.13: FAST_PERIODIC -> SLOW_PERIODIC when the partner's
    /// LACP_Timeout is Long; SLOW_PERIODIC starts
    /// periodic_timer(slow_periodic_time, 30 s); on expiry PERIODIC_TX, and
    /// back to SLOW_PERIODIC while the partner stays Long.
    #[test]
    fn periodic_6_4_13_slow_cycle_when_the_partner_asks_long_timeout() {
        let cfg = exact();
        let mut p = port(&cfg, 1);
        p.partner_oper = peer_info(7, UP & !PortState::TIMEOUT);
        let c0 = ctx(&cfg, ms(0));
        step_enter(&mut p, &c0);
        assert_eq!(
            step_enter(&mut p, &c0),
            Some((
                PeriodicEvent::PartnerLongTimeout,
                PeriodicState::SlowPeriodic
            ))
        );
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(30_000)));
        assert_eq!(step(&p, &ctx(&cfg, ms(29_999))), None);
        let c30 = ctx(&cfg, ms(30_000));
        assert_eq!(
            step_enter(&mut p, &c30),
            Some((PeriodicEvent::TimerExpired, PeriodicState::PeriodicTx))
        );
        assert!(p.ntt);
        assert_eq!(
            step_enter(&mut p, &c30),
            Some((
                PeriodicEvent::PartnerLongTimeout,
                PeriodicState::SlowPeriodic
            ))
        );
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(60_000)));
    }

    /// 6.4.13: SLOW_PERIODIC -> PERIODIC_TX at once when the partner's
    /// LACP_Timeout becomes Short, then FAST_PERIODIC: no waiting out the
    /// 30 s timer.
    #[test]
    fn periodic_6_4_13_slow_to_fast_at_once_when_the_partner_asks_short_timeout() {
        let cfg = exact();
        let mut p = port(&cfg, 1);
        p.periodic = PeriodicState::SlowPeriodic;
        p.timers[Timer::Periodic as usize] = Some(ms(30_000));
        p.partner_oper = peer_info(7, UP);
        let c = ctx(&cfg, ms(5));
        assert_eq!(
            step_enter(&mut p, &c),
            Some((
                PeriodicEvent::PartnerShortTimeout,
                PeriodicState::PeriodicTx
            ))
        );
        assert!(p.ntt);
        assert_eq!(
            step_enter(&mut p, &c).map(|t| t.1),
            Some(PeriodicState::FastPeriodic)
        );
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(1005)));
    }

    /// Not in the standard (config::Timers::periodic_lead_percent): with the
    /// default 10 % lead the periodic timer runs 0.9 s fast and 27 s slow.
    #[test]
    fn periodic_lead_shortens_the_periods_by_ten_percent_by_default() {
        let cfg = cfg();
        assert_eq!(cfg.timers.periodic_lead_percent, 10);
        let mut p = port(&cfg, 1);
        enter(&mut p, PeriodicState::FastPeriodic, &ctx(&cfg, ms(0)));
        assert_eq!(p.timers[Timer::Periodic as usize], Some(ms(900)));
        enter(&mut p, PeriodicState::SlowPeriodic, &ctx(&cfg, ms(0)));
        assert_eq!(
            p.timers[Timer::Periodic as usize],
            Some(ms(0) + Duration::from_secs(27))
        );
    }
}
