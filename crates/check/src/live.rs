//! What running bonds say about their partners (`lagkit check --live`).
//!
//! A running lagkit bond knows, per member, what its LACP partner last
//! said: its system, key and state bits, and whether the member is
//! bundled and why not. That is the capture check ([`crate::lacpdus`])
//! without a capture: partners or keys that differ across members,
//! partners that are Individual, defaulted or slow where the bond is fast,
//! members the aggregate left out, and the bond's own problems.

use crate::{Finding, Loc, Severity};
use serde::Serialize;

/// One member as a running bond reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LivePort {
    /// Interface name.
    pub name: String,
    /// Our state bits (LACP).
    pub actor_state: u8,
    /// The partner's system MAC as we know it.
    pub partner_mac: String,
    /// The partner's key.
    pub partner_key: u16,
    /// The partner's state bits.
    pub partner_state: u8,
    /// Why the member is not in the aggregate, if it is not.
    pub not_bundled: Option<String>,
}

/// One running bond.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Live {
    /// The bond.
    pub bond: String,
    /// Where it was asked (its control socket).
    pub socket: String,
    /// It asks for the fast LACP rate.
    pub fast: bool,
    /// Members that run LACP.
    pub ports: Vec<LivePort>,
    /// What the bond itself reports as wrong.
    pub problems: Vec<String>,
}

const TIMEOUT: u8 = 0x02;
const AGGREGATION: u8 = 0x04;
const DEFAULTED: u8 = 0x40;

/// The findings about one running bond.
pub fn check(l: &Live) -> Vec<Finding> {
    let loc = Loc {
        file: l.socket.clone(),
        line: None,
    };
    let f = |severity, code, reason: String, fix: &str| Finding {
        severity,
        code,
        loc: loc.clone(),
        reason,
        fix: fix.to_string(),
    };
    let mut out = Vec::new();
    let heard: Vec<&LivePort> = l
        .ports
        .iter()
        .filter(|p| p.actor_state & DEFAULTED == 0)
        .collect();
    let mut partners: Vec<&str> = heard.iter().map(|p| p.partner_mac.as_str()).collect();
    partners.sort_unstable();
    partners.dedup();
    if partners.len() > 1 {
        out.push(f(Severity::Error, "live-partners-differ",
            format!("bond {}'s members face different partner systems ({}): the links end on devices that are not one LACP system", l.bond, partners.join(", ")),
            "cable every member to one switch (or one stack/MLAG pair)"));
    }
    let mut keys: Vec<u16> = heard.iter().map(|p| p.partner_key).collect();
    keys.sort_unstable();
    keys.dedup();
    if keys.len() > 1 {
        out.push(f(Severity::Warning, "live-partner-keys-differ",
            format!("bond {}'s partner uses keys {keys:?} on its ports: they are in different channel groups there", l.bond),
            "put the switch ports in one channel group"));
    }
    for p in &l.ports {
        if p.actor_state & DEFAULTED != 0 {
            out.push(f(Severity::Warning, "live-partner-silent",
                format!("bond {} member {}: no LACPDU from the partner (defaulted)", l.bond, p.name),
                "configure LACP (mode active) on the switch port, and check the link passes frames both ways"));
            continue;
        }
        if p.partner_state & AGGREGATION == 0 {
            out.push(f(
                Severity::Warning,
                "live-partner-individual",
                format!(
                    "bond {} member {}: the partner says its port is Individual",
                    l.bond, p.name
                ),
                "make the switch port part of the channel",
            ));
        }
        if (p.partner_state & TIMEOUT != 0) != l.fast {
            out.push(f(
                Severity::Warning,
                "live-rate-mismatch",
                format!(
                    "bond {} member {}: the bond asks for the {} rate, the partner for the {} rate",
                    l.bond,
                    p.name,
                    if l.fast { "fast" } else { "slow" },
                    if l.fast { "slow" } else { "fast" }
                ),
                "configure the same LACP rate on both ends",
            ));
        }
        if let Some(why) = &p.not_bundled {
            out.push(f(
                Severity::Warning,
                "live-not-bundled",
                format!(
                    "bond {} member {} is not in the aggregate: {why}",
                    l.bond, p.name
                ),
                "see the reason; `lagkit status` shows both ends' state bits",
            ));
        }
    }
    for pr in &l.problems {
        out.push(f(
            Severity::Info,
            "live-problem",
            format!("bond {}: {pr}", l.bond),
            "see `lagkit status`",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str, mac: &str, key: u16, partner_state: u8) -> LivePort {
        LivePort {
            name: name.into(),
            actor_state: 0x3f,
            partner_mac: mac.into(),
            partner_key: key,
            partner_state,
            not_bundled: None,
        }
    }

    fn codes(l: &Live) -> Vec<&'static str> {
        check(l).iter().map(|f| f.code).collect()
    }

    #[test]
    fn partners_keys_rates_and_silence() {
        let mut l = Live {
            bond: "bond0".into(),
            socket: "/run/lagkit/1/bond0.sock".into(),
            fast: true,
            ports: vec![
                port("a1", "02:00:00:00:00:01", 1, 0x3f),
                port("a2", "02:00:00:00:00:01", 1, 0x3f),
            ],
            problems: vec![],
        };
        assert!(codes(&l).is_empty());
        l.ports[1].partner_mac = "02:00:00:00:00:02".into();
        assert!(codes(&l).contains(&"live-partners-differ"));
        l.ports[1] = port("a2", "02:00:00:00:00:01", 2, 0x3d);
        let c = codes(&l);
        assert!(
            c.contains(&"live-partner-keys-differ") && c.contains(&"live-rate-mismatch"),
            "{c:?}"
        );
        l.ports[1].actor_state |= DEFAULTED;
        l.ports[1].not_bundled = Some("partner never spoke LACP".into());
        assert_eq!(codes(&l), vec!["live-partner-silent"]);
    }
}
