//! Fixtures shared by the machines' unit tests: one port of a system whose
//! partner is another system, built without a `System`, so each machine can
//! be stepped alone with the time passed in.

use super::config::{PortConfig, SystemConfig};
use super::port::{Ctx, Port};
use crate::Instant;
use lagkit_wire::{LacpduRepr, MacAddr, PortInfo, PortState, SystemId};

/// This system's MAC.
pub const ME: MacAddr = MacAddr([2, 0, 0, 0, 1, 0]);
/// The partner system's MAC (numerically greater than [`ME`]).
pub const PEER: MacAddr = MacAddr([2, 0, 0, 0, 2, 0]);
/// The partner's port key.
pub const PEER_KEY: u16 = 9;
/// A healthy fast active port: Activity, Timeout, Aggregation, Sync,
/// Collecting, Distributing (0x3f).
pub const UP: u8 = 0x3f;

/// A system configuration with the standard's defaults.
pub fn cfg() -> SystemConfig {
    SystemConfig::new("S1", ME)
}

/// Time `ms` milliseconds after the epoch.
pub fn ms(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

/// Port `n` of the system, as `Port::new` builds it (every machine in its
/// initial state, no entry action run), with `port_enabled` TRUE.
pub fn port(cfg: &SystemConfig, n: u16) -> Port {
    let mut p = Port::new(
        PortConfig::new(&format!("p{n}"), n, MacAddr([2, 0, 0, 0, 1, n as u8])),
        cfg,
    );
    p.port_enabled = true;
    p
}

/// The machines' context at `now`, Ready FALSE, min_links met.
pub fn ctx(cfg: &SystemConfig, now: Instant) -> Ctx<'_> {
    Ctx {
        now,
        system: cfg.system,
        cfg,
        ready: false,
        min_links_met: true,
    }
}

/// The partner's port `n`, with state octet `state`.
pub fn peer_info(n: u16, state: u8) -> PortInfo {
    PortInfo {
        system: SystemId::new(32768, PEER),
        key: PEER_KEY,
        port_priority: 32768,
        port: n,
        state: PortState(state),
    }
}

/// A LACPDU from the partner's port `n` (state `state`) that repeats
/// exactly what `p` currently says about itself.
pub fn pdu_to(p: &Port, cfg: &SystemConfig, n: u16, state: u8) -> LacpduRepr {
    LacpduRepr {
        version: 1,
        actor: peer_info(n, state),
        partner: p.actor_info(cfg.system),
        collector_max_delay: 0,
    }
}
