//! Byte-driven event sequences for fuzzing the LACP core.
//!
//! [`run_ops`] turns arbitrary bytes into a configuration of two systems and
//! a sequence of events (time passing, cables cut and restored, black holes,
//! lost PDUs, arbitrary frames, crafted LACPDUs with any field values, LACP
//! toggled, system IDs changed), and checks [`crate::check_invariants`] on
//! both systems after every event. The cargo-fuzz target and a seeded test
//! both call it.

use crate::{check_invariants, mac, Fault, InvariantViolation, LinkSpec, Sim};
use lagkit_proto::lacp::{Activity, MuxControl, NoPartner, PortConfig, PortId, Rate, SystemConfig};
use lagkit_wire::{LacpduRepr, MacAddr, PortInfo, PortState, SlowPdu, SystemId};
use std::time::Duration;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes([self.u8()?, self.u8()?]))
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

fn system(name: &str, n: u8, b: u8, c: u8) -> SystemConfig {
    let mut s = SystemConfig::new(name, mac(n, 0));
    s.mux_control = if b & 1 == 0 {
        MuxControl::Coupled
    } else {
        MuxControl::Independent
    };
    s.no_partner = match (b >> 1) % 3 {
        0 => NoPartner::Individual,
        1 => NoPartner::Fallback,
        _ => NoPartner::Suspend,
    };
    s.max_bundle = match (b >> 3) % 4 {
        0 => None,
        m => Some(usize::from(m)),
    };
    s.min_links = usize::from((b >> 5) % 4);
    s.aggregators = usize::from(c % 3);
    s
}

fn port(sys: u8, n: u16, b: u8) -> PortConfig {
    PortConfig {
        activity: if b & 1 == 0 {
            Activity::Active
        } else {
            Activity::Passive
        },
        rate: if b & 2 == 0 { Rate::Fast } else { Rate::Slow },
        key: u16::from((b >> 2) & 1) + 1,
        port_priority: u16::from(b >> 4),
        aggregatable: b & 8 == 0 || n > 1,
        ..PortConfig::new(&format!("p{n}"), n, mac(sys, n))
    }
}

/// Virtual time that the time-passing events of one input may spend, in
/// total (the final settle comes on top). The slowest LACP timer is the
/// 90 s slow-rate `current_while`; 400 s lets every timer run out several
/// times between events, while idle time beyond it only repeats periodic
/// exchanges already seen. Without the cap a single input could ask for
/// 256 × 99 s, and the fuzzer spent most of its time simulating quiet links
/// (585 executions/s instead of thousands).
pub const TIME_BUDGET: Duration = Duration::from_secs(400);

/// Interprets `data` as a configuration and an event sequence; returns the
/// first invariant violation.
pub fn run_ops(data: &[u8]) -> Result<(), InvariantViolation> {
    let mut d = Bytes(data);
    let (Some(cfg), Some(a1), Some(a2), Some(b1), Some(b2)) =
        (d.u8(), d.u8(), d.u8(), d.u8(), d.u8())
    else {
        return Ok(());
    };
    let links = usize::from(cfg % 4) + 1;
    let mut sim = Sim::pair(
        system("A", 1, a1, a2),
        system("B", 2, b1, b2),
        links,
        LinkSpec {
            delay: Duration::from_micros(u64::from(cfg >> 2) * 1000 + 50),
            loss: 0.0,
        },
        move |n| port(1, n, a1 ^ (n as u8)),
        move |n| port(2, n, b1 ^ (n as u8).wrapping_mul(3)),
        u64::from(cfg),
    );
    let mut ops = 0;
    let mut budget = TIME_BUDGET;
    let mut wait = |sim: &mut Sim, want: Duration| {
        let d = want.min(budget);
        budget -= d;
        sim.run_for(d);
    };
    while let Some(op) = d.u8() {
        ops += 1;
        if ops > 256 {
            break;
        }
        let link = usize::from(d.u8().unwrap_or(0)) % links;
        match op % 11 {
            0 => wait(
                &mut sim,
                Duration::from_millis(u64::from(d.u8().unwrap_or(1)) * 10),
            ),
            1 => sim.apply(link, Fault::Cut),
            2 => sim.apply(link, Fault::Restore),
            3 => sim.apply(link, Fault::Blackhole),
            4 => sim.apply(link, Fault::Clear),
            5 => sim.apply(
                link,
                Fault::DropNextFromA(u32::from(d.u8().unwrap_or(1) % 8)),
            ),
            6 => {
                let s = usize::from(d.u8().unwrap_or(0) % 2);
                let len = usize::from(d.u8().unwrap_or(0));
                let frame = d.take(len).to_vec();
                sim.inject(s, PortId(link), &frame);
            }
            7 => {
                let s = usize::from(d.u8().unwrap_or(0) % 2);
                let info = |d: &mut Bytes| PortInfo {
                    system: SystemId::new(d.u16().unwrap_or(0), mac(d.u8().unwrap_or(0) % 4, 0)),
                    key: d.u16().unwrap_or(0) % 4,
                    port_priority: d.u16().unwrap_or(0) % 4,
                    port: d.u16().unwrap_or(0) % 6,
                    state: PortState(d.u8().unwrap_or(0)),
                };
                let pdu = LacpduRepr {
                    version: d.u8().unwrap_or(1).max(1),
                    actor: info(&mut d),
                    partner: info(&mut d),
                    collector_max_delay: 0,
                };
                sim.inject(
                    s,
                    PortId(link),
                    &SlowPdu::Lacp(pdu).emit_frame(MacAddr::ZERO),
                );
            }
            8 => {
                let s = usize::from(d.u8().unwrap_or(0) % 2);
                let on = d.u8().unwrap_or(0) & 1 == 0;
                sim.update(s, |sys, now| sys.set_lacp_enabled(PortId(link), on, now));
            }
            9 => {
                let s = usize::from(d.u8().unwrap_or(0) % 2);
                let id = SystemId::new(d.u16().unwrap_or(0), mac(d.u8().unwrap_or(0) % 4, 1));
                sim.update(s, |sys, now| sys.set_system_id(id, now));
            }
            _ => wait(
                &mut sim,
                Duration::from_secs(u64::from(d.u8().unwrap_or(1) % 100)),
            ),
        }
        check_invariants(sim.system(0))?;
        check_invariants(sim.system(1))?;
    }
    // Whatever happened, the systems keep working: let them settle.
    sim.run_for(Duration::from_secs(100));
    check_invariants(sim.system(0))?;
    check_invariants(sim.system(1))
}

#[cfg(test)]
mod tests {
    /// A few hundred seeded random event sequences: the fuzz target's logic
    /// runs in every `cargo test`, not only under cargo-fuzz.
    #[test]
    fn seeded_random_sequences_keep_invariants() {
        let mut rng = crate::SplitMix64(0x1a9_u64);
        for case in 0..3000 {
            let len = 8 + (rng.next_u64() % 400) as usize;
            let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Err(e) = super::run_ops(&data) {
                panic!("case {case} ({data:?}): {e}");
            }
        }
    }
}

/// [`run_ops`] for PAgP: two PAgP systems (or one facing a silent device),
/// any modes, limits and timers, fed cuts, black holes, arbitrary frames and
/// crafted Information and Flush PDUs with any field values; checks
/// [`crate::pagp::check_invariants`] after every event.
pub fn run_pagp_ops(data: &[u8]) -> Result<(), InvariantViolation> {
    use crate::pagp::{check_invariants, pair, Peer};
    use lagkit_proto::pagp::{self, Mode, Silence};
    use lagkit_wire::pagp::{Flags, FlushRepr, InfoRepr, LearnMethod, PortInfo, Tlv};
    use lagkit_wire::PagpRepr;

    let mut d = Bytes(data);
    let (Some(cfg), Some(a), Some(b)) = (d.u8(), d.u8(), d.u8()) else {
        return Ok(());
    };
    let links = usize::from(cfg % 4) + 1;
    let sys = |name: &str, n: u8, bits: u8| {
        let mut s = pagp::SystemConfig::new(name, mac(n, 0));
        s.max_ports = match bits % 4 {
            0 => None,
            m => Some(usize::from(m)),
        };
        s.learn = LearnMethod::from(bits >> 6);
        s.timers.silent_wait = Duration::from_secs(u64::from(bits >> 2 & 7) * 3);
        s
    };
    let port = |s: u8, bits: u8| {
        move |n: u16| {
            let mut c = pagp::PortConfig::new(&format!("p{n}"), n.into(), mac(s, n));
            let bits = bits ^ (n as u8);
            c.mode = if bits & 1 == 0 {
                Mode::Desirable
            } else {
                Mode::Auto
            };
            c.silence = if bits & 2 == 0 {
                Silence::Silent
            } else {
                Silence::NonSilent
            };
            c.port_priority = bits & 0xf0;
            c
        }
    };
    let silent_b = cfg & 0x80 != 0;
    let mut sim = pair(
        sys("A", 1, a),
        (!silent_b).then(|| sys("B", 2, b)),
        links,
        LinkSpec {
            delay: Duration::from_micros(u64::from(cfg >> 2 & 0x1f) * 1000 + 50),
            loss: 0.0,
        },
        port(1, a),
        port(2, b),
        u64::from(cfg),
    );
    let check = |sim: &Sim<Peer>| -> Result<(), InvariantViolation> {
        for s in 0..2 {
            if let Some(sys) = sim.system(s).pagp() {
                check_invariants(sys, sim.now())?;
            }
        }
        Ok(())
    };
    let mut budget = TIME_BUDGET;
    for _ in 0..256 {
        let Some(op) = d.u8() else { break };
        let link = usize::from(d.u8().unwrap_or(0)) % links;
        let s = usize::from(op >> 7);
        match op % 9 {
            0 => {
                let want = Duration::from_millis(u64::from(d.u8().unwrap_or(1)) * 10);
                let t = want.min(budget);
                budget -= t;
                sim.run_for(t);
            }
            1 => sim.apply(link, Fault::Cut),
            2 => sim.apply(link, Fault::Restore),
            3 => sim.apply(link, Fault::Blackhole),
            4 => sim.apply(link, Fault::Clear),
            5 => {
                let len = usize::from(d.u8().unwrap_or(0));
                let frame = d.take(len).to_vec();
                sim.inject(s, PortId(link), &frame);
            }
            6 => {
                let info = |d: &mut Bytes| PortInfo {
                    device_id: mac(d.u8().unwrap_or(0) % 4, 0),
                    learn: LearnMethod::from(d.u8().unwrap_or(0) % 4),
                    port_priority: d.u8().unwrap_or(0),
                    ifindex: u32::from(d.u8().unwrap_or(0) % 6),
                    group_capability: u32::from(d.u8().unwrap_or(1) % 3),
                    group_ifindex: u32::from(d.u8().unwrap_or(0) % 3),
                };
                let pdu = InfoRepr {
                    flags: Flags(d.u8().unwrap_or(0)),
                    local: info(&mut d),
                    partner: info(&mut d),
                    partner_count: 1,
                    tlvs: vec![Tlv::DeviceName("fuzz".into())],
                };
                if let Ok(f) = PagpRepr::Info(pdu).emit_frame(MacAddr::ZERO) {
                    sim.inject(s, PortId(link), &f);
                }
            }
            7 => {
                let pdu = FlushRepr {
                    flags: d.u8().unwrap_or(0) & 1,
                    local: mac(d.u8().unwrap_or(0) % 4, 0),
                    partner: mac(d.u8().unwrap_or(0) % 4, 0),
                    transaction_id: u32::from(d.u8().unwrap_or(0) % 4),
                };
                if let Ok(f) = PagpRepr::Flush(pdu).emit_frame(MacAddr::ZERO) {
                    sim.inject(s, PortId(link), &f);
                }
            }
            _ => {
                let want = Duration::from_secs(u64::from(d.u8().unwrap_or(1) % 120));
                let t = want.min(budget);
                budget -= t;
                sim.run_for(t);
            }
        }
        check(&sim)?;
    }
    sim.run_for(Duration::from_secs(200));
    check(&sim)
}

#[cfg(test)]
mod pagp_tests {
    /// Seeded random sequences for the PAgP core, as for LACP above.
    #[test]
    fn seeded_random_pagp_sequences_keep_invariants() {
        let mut rng = crate::SplitMix64(0x9a9_u64);
        for case in 0..2000 {
            let len = 4 + (rng.next_u64() % 300) as usize;
            let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Err(e) = super::run_pagp_ops(&data) {
                panic!("case {case} ({data:?}): {e}");
            }
        }
    }
}
