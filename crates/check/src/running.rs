//! What a running bond says about itself and its partner: the LACP part of
//! `/proc/net/bonding/bondX` (and of `lagkit status`, which prints the
//! same lines), or `lagkit status --json`.
//!
//! A configuration cannot tell which switch a cable reaches; the running
//! bond can: its own system MAC and key, the partner's system, key and
//! port that each member hears, which members are in the active
//! aggregator. [`crate::crosscheck`] holds these against the switch's show
//! output.

use crate::facts::{Host, HostMode, HostPort, ReadError};
use crate::Loc;
use lagkit_api::status::{BondStatus, ChurnState, LacpActivity, LacpRate, MiiStatus};
use serde::Serialize;

/// A running bond's LACP (or PAgP) state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Running {
    /// Its system MAC (`aa:bb:cc:dd:ee:ff`): its LACP system ID.
    pub system: Option<(String, Loc)>,
    /// The active aggregator's id.
    pub aggregator: Option<u16>,
    /// The active aggregator's key.
    pub actor_key: Option<(u16, Loc)>,
    /// The partner's system MAC, as the active aggregator holds it.
    pub partner: Option<(String, Loc)>,
    /// The partner's key.
    pub partner_key: Option<(u16, Loc)>,
    /// The PAgP device ID it sends (lagkit status of a PAgP bond).
    pub pagp_device: Option<(String, Loc)>,
    /// Each member's view.
    pub members: Vec<RunningPort>,
}

/// One member of a running bond.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunningPort {
    /// Its name.
    pub name: String,
    /// Where it starts.
    pub loc: Loc,
    /// The aggregator it is attached to (0: none).
    pub aggregator: Option<u16>,
    /// Its LACP port number.
    pub actor_port: Option<u16>,
    /// Its key.
    pub actor_key: Option<u16>,
    /// Its state octet.
    pub actor_state: Option<u8>,
    /// The partner system it hears (all zero: none).
    pub partner: Option<(String, Loc)>,
    /// The partner's key.
    pub partner_key: Option<u16>,
    /// The partner's port number.
    pub partner_port: Option<u16>,
    /// The partner's state octet.
    pub partner_state: Option<u8>,
    /// Why the bond left it out (lagkit status).
    pub not_bundled: Option<String>,
    /// lagkit status: it transmits and collects.
    pub carrying: Option<bool>,
    /// Its link (`MII Status: up`).
    pub mii_up: Option<bool>,
    /// Its speed in Mbit/s, when the link tells.
    pub speed_mbps: Option<u32>,
    /// Full duplex, when the link tells.
    pub full_duplex: Option<bool>,
    /// How often its link failed since it was enslaved.
    pub link_failures: Option<u64>,
    /// Its own MAC (`Permanent HW addr`), what LLDP names it by.
    pub permanent_mac: Option<String>,
    /// Its LACP never reached sync (`Actor Churn State: churned`).
    pub actor_churned: Option<bool>,
    /// Its partner never reached sync (`Partner Churn State: churned`).
    pub partner_churned: Option<bool>,
    /// The partner's system priority (with its MAC, the partner's system ID).
    pub partner_system_priority: Option<u16>,
    /// How often its LACP churned since it was enslaved (`Actor Churned
    /// Count`), and its partner's (`Partner Churned Count`).
    pub churned_counts: (Option<u64>, Option<u64>),
}

impl RunningPort {
    /// Member `name`, starting at `loc`, nothing known yet.
    pub fn new(name: &str, loc: Loc) -> RunningPort {
        RunningPort {
            name: name.to_string(),
            loc,
            aggregator: None,
            actor_port: None,
            actor_key: None,
            actor_state: None,
            partner: None,
            partner_key: None,
            partner_port: None,
            partner_state: None,
            not_bundled: None,
            carrying: None,
            mii_up: None,
            speed_mbps: None,
            full_duplex: None,
            link_failures: None,
            permanent_mac: None,
            actor_churned: None,
            partner_churned: None,
            partner_system_priority: None,
            churned_counts: (None, None),
        }
    }

    /// The partner system it hears, when it hears one (not all zero).
    pub fn heard_partner(&self) -> Option<&str> {
        self.partner
            .as_ref()
            .map(|p| p.0.as_str())
            .filter(|p| *p != "00:00:00:00:00:00")
    }
}

/// Synchronization, collecting and distributing (802.1AX 6.4.2.3).
const IN_USE: u8 = 0x08 | 0x10 | 0x20;

impl RunningPort {
    /// Whether the bond uses it: its link up, attached to the active
    /// aggregator and (when shown) collecting and distributing. `None` when
    /// not known.
    pub fn bundled(&self, active: Option<u16>) -> Option<bool> {
        if self.mii_up == Some(false) {
            return Some(false);
        }
        if let Some(c) = self.carrying {
            return Some(c);
        }
        let agg = match (self.aggregator, active) {
            (Some(a), Some(b)) => a == b,
            _ => return None,
        };
        Some(agg && self.actor_state.is_none_or(|s| s & IN_USE == IN_USE))
    }
}

fn mac(s: &str) -> Option<String> {
    s.trim()
        .parse::<lagkit_wire::MacAddr>()
        .ok()
        .map(|m| m.to_string())
}

/// A number as the kernel prints it, or a lagkit state string (`0x3d
/// (activity,...)`, `63`).
fn number(s: &str) -> Option<u64> {
    let s = s.split_whitespace().next()?;
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The running state of `/proc/net/bonding/bondX`: its LACP lines, and
/// for a bond without LACP (a static channel's host end) its members'
/// links alone, which LLDP or a fleet map can match to switch ports;
/// `None` when it names no member and no LACP state.
pub fn from_proc(file: &str, text: &str) -> Option<Running> {
    let loc = |line: usize| Loc {
        file: file.into(),
        line: Some(line),
    };
    let mut r = Running::default();
    // Which block a `system mac address:` line is in.
    #[derive(PartialEq)]
    enum Block {
        Bond,
        Aggregator,
        Actor,
        Partner,
    }
    let mut block = Block::Bond;
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "System MAC address" => r.system = mac(v).map(|m| (m, loc(line))),
            "Active Aggregator Info" => block = Block::Aggregator,
            "Aggregator ID" if block == Block::Aggregator => {
                r.aggregator = number(v).and_then(|n| u16::try_from(n).ok())
            }
            "Actor Key" => {
                r.actor_key = number(v).and_then(|n| Some((u16::try_from(n).ok()?, loc(line))))
            }
            "Partner Key" => {
                r.partner_key = number(v).and_then(|n| Some((u16::try_from(n).ok()?, loc(line))))
            }
            "Partner Mac Address" => r.partner = mac(v).map(|m| (m, loc(line))),
            "Slave Interface" => {
                block = Block::Bond;
                r.members.push(RunningPort::new(v, loc(line)));
            }
            "details actor lacp pdu" => block = Block::Actor,
            "details partner lacp pdu" => block = Block::Partner,
            _ => {
                let Some(m) = r.members.last_mut() else {
                    continue;
                };
                let n = number(v);
                let n16 = n.and_then(|n| u16::try_from(n).ok());
                let n8 = n.and_then(|n| u8::try_from(n).ok());
                match (k, &block) {
                    // `none` (lagkit): in no aggregator; ids start at 1.
                    ("Aggregator ID", _) => m.aggregator = if v == "none" { Some(0) } else { n16 },
                    ("MII Status", Block::Bond) => m.mii_up = Some(v == "up"),
                    ("Speed", Block::Bond) => {
                        m.speed_mbps = v.strip_suffix(" Mbps").and_then(|s| s.parse().ok())
                    }
                    ("Duplex", Block::Bond) => {
                        m.full_duplex = match v {
                            "full" => Some(true),
                            "half" => Some(false),
                            _ => None,
                        }
                    }
                    ("Link Failure Count", Block::Bond) => m.link_failures = n,
                    ("Permanent HW addr", Block::Bond) => m.permanent_mac = mac(v),
                    ("Actor Churn State", _) => m.actor_churned = Some(v == "churned"),
                    ("Partner Churn State", _) => m.partner_churned = Some(v == "churned"),
                    ("Actor Churned Count", _) => m.churned_counts.0 = n,
                    ("Partner Churned Count", _) => m.churned_counts.1 = n,
                    ("system priority", Block::Partner) => m.partner_system_priority = n16,
                    ("port key", Block::Actor) => m.actor_key = n16,
                    ("port number", Block::Actor) => m.actor_port = n16,
                    ("port state", Block::Actor) => m.actor_state = n8,
                    ("system mac address", Block::Partner) => {
                        m.partner = mac(v).map(|x| (x, loc(line)))
                    }
                    ("oper key", Block::Partner) => m.partner_key = n16,
                    ("port number", Block::Partner) => m.partner_port = n16,
                    ("port state", Block::Partner) => m.partner_state = n8,
                    _ => {}
                }
            }
        }
    }
    // Without CAP_NET_ADMIN the kernel leaves out the system and the
    // PDUs, but still writes each member's aggregator. A bond of another
    // mode has no LACP lines at all: its members' links are its state.
    let lacp = r.system.is_some()
        || (r.members.iter()).any(|m| m.partner.is_some() || m.aggregator.is_some());
    let static_mode = (text.lines())
        .find_map(|l| l.strip_prefix("Bonding Mode:"))
        .is_some_and(|m| !m.contains("802.3ad"));
    (lacp || (static_mode && !r.members.is_empty())).then_some(r)
}

/// Whether `text` is `lagkit status --json`.
pub fn is_status_json(text: &str) -> bool {
    let t = text.trim_start();
    (t.starts_with('[') || t.starts_with('{'))
        && text.contains("\"xmit_hash_policy\"")
        && text.contains("\"mii_status\"")
}

/// `lagkit status --json` (an array of bonds, or one): the bonds as host
/// facts with their running state.
pub fn from_status_json(file: &str, text: &str) -> Result<Vec<Host>, ReadError> {
    let parsed = if text.trim_start().starts_with('[') {
        serde_json::from_str::<Vec<BondStatus>>(text)
    } else {
        serde_json::from_str::<BondStatus>(text).map(|b| vec![b])
    };
    let bonds = parsed.map_err(|e| ReadError::Bad {
        file: file.into(),
        line: e.line(),
        why: format!("read as `lagkit status --json`: {e}"),
    })?;
    // Lines: the n-th occurrence of a key (one per bond, in order).
    let lines_of = |needle: &str| -> Vec<usize> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| l.contains(needle))
            .map(|(i, _)| i + 1)
            .collect()
    };
    let loc = |line: Option<usize>| Loc {
        file: file.into(),
        line,
    };
    // Each bond's line is its own `"mode"`: the last one before its
    // `"xmit_hash_policy"` (a PAgP bond's `pagp.mode` comes later, and
    // is not a bond's).
    let modes = lines_of("\"mode\"");
    let names: Vec<usize> = lines_of("\"xmit_hash_policy\"")
        .iter()
        .map(|&x| modes.iter().copied().rfind(|&m| m < x).unwrap_or(x))
        .collect();
    let (systems, partners, actor_keys, partner_keys, devices) = (
        lines_of("\"system_mac\""),
        lines_of("\"partner_mac\": \""),
        lines_of("\"actor_key\""),
        lines_of("\"partner_key\""),
        lines_of("\"device_id\""),
    );
    let mut out = Vec::new();
    let mut member_from = 0usize;
    for (i, b) in bonds.into_iter().enumerate() {
        let mode =
            lagkit_bondcfg::Mode::from_status(b.mode.as_str()).map_err(|e| ReadError::Bad {
                file: file.into(),
                line: names.get(i).copied().unwrap_or(1),
                why: format!("{e}"),
            })?;
        let at_line =
            |v: &[usize], pick: &dyn Fn(usize) -> bool| v.iter().copied().find(|l| pick(*l));
        let bond_line = names.get(i).copied();
        let after = |l: usize| bond_line.is_none_or(|b| l >= b);
        let mut mode_of = HostMode::of(
            mode,
            (b.lacp.as_ref()).is_none_or(|l| l.lacp_activity == LacpActivity::Active),
            b.lacp
                .as_ref()
                .is_some_and(|l| l.lacp_rate == LacpRate::Fast),
        );
        if let Some(p) = &b.pagp {
            mode_of = HostMode::Pagp {
                auto: p.mode == "auto",
                silent: p.silent,
            };
        }
        let mut running = Running::default();
        if let Some(l) = &b.lacp {
            running.system = mac(&l.system_mac).map(|m| (m, loc(at_line(&systems, &after))));
            running.aggregator = l.aggregator_id;
            running.actor_key = l.actor_key.map(|k| (k, loc(at_line(&actor_keys, &after))));
            running.partner_key = l
                .partner_key
                .map(|k| (k, loc(at_line(&partner_keys, &after))));
            running.partner = l
                .partner_mac
                .as_deref()
                .and_then(mac)
                .map(|m| (m, loc(at_line(&partners, &after))));
        }
        if let Some(p) = &b.pagp {
            running.pagp_device = mac(&p.device_id).map(|m| (m, loc(at_line(&devices, &after))));
        }
        let mut members = Vec::new();
        for m in &b.members {
            let needle = format!("\"name\": \"{}\"", m.name);
            let line = text
                .lines()
                .enumerate()
                .skip(member_from)
                .find(|(_, l)| l.contains(&needle))
                .map(|(i, _)| i + 1);
            if let Some(l) = line {
                member_from = l;
            }
            let mut hp = HostPort::named(&m.name);
            hp.speed = m.speed_mbps;
            hp.duplex = m
                .full_duplex
                .map(|f| if f { "full" } else { "half" }.to_string());
            members.push(hp);
            let lp = m.lacp.as_ref();
            running.members.push(RunningPort {
                aggregator: lp.and_then(|l| l.aggregator_id),
                actor_port: lp.map(|l| l.actor_port),
                actor_key: lp.map(|l| l.actor_key),
                actor_state: lp.map(|l| l.actor_state),
                partner: lp.and_then(|l| mac(&l.partner_mac)).map(|x| (x, loc(line))),
                partner_key: lp.map(|l| l.partner_key),
                partner_port: lp.map(|l| l.partner_port),
                partner_state: lp.map(|l| l.partner_state),
                not_bundled: lp.and_then(|l| l.not_bundled.clone()),
                carrying: Some(m.transmitting && m.collecting),
                mii_up: Some(m.mii_status == MiiStatus::Up),
                speed_mbps: m.speed_mbps,
                full_duplex: m.full_duplex,
                link_failures: Some(m.link_failure_count),
                permanent_mac: mac(&m.permanent_hw_addr),
                actor_churned: lp.map(|l| l.actor_churn_state == ChurnState::Churned),
                partner_churned: lp.map(|l| l.partner_churn_state == ChurnState::Churned),
                partner_system_priority: lp.map(|l| l.partner_system_priority),
                ..RunningPort::new(&m.name, loc(line))
            });
        }
        let hashes = matches!(
            mode,
            lagkit_bondcfg::Mode::Lacp | lagkit_bondcfg::Mode::BalanceXor
        );
        out.push(Host {
            bond: b.name,
            loc: loc(bond_line),
            mode: mode_of,
            hash: hashes.then_some(b.xmit_hash_policy),
            unused_hash: None,
            mtu: Some((b.mtu, loc(None))),
            members,
            min_links: 0,
            max_bundle: None,
            mac: None,
            fail_over_mac: None,
            running: Some(running),
        });
    }
    if out.is_empty() {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "`lagkit status --json` without a bond: run it while the bond runs".into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lagkit status` prints /proc's lines with its own state format.
    const STATUS_TEXT: &str = "Bond: bond7\nBonding Mode: 802.3ad\nTransmit Hash Policy: layer3+4\nMII Status: up\n\n802.3ad info\nLACP active: on\nLACP rate: fast\nSystem priority: 65535\nSystem MAC address: 02:00:00:00:00:07\nActive Aggregator Info:\n\tAggregator ID: 1\n\tNumber of ports: 1\n\tActor Key: 9\n\tPartner Key: 10\n\tPartner Mac Address: 00:1b:54:c2:7a:80\n\nSlave Interface: a1\nMII Status: up\nAggregator ID: 1\ndetails actor lacp pdu:\n    port key: 9\n    port number: 1\n    port state: 0x3f (A S G Y C D . .)\ndetails partner lacp pdu:\n    system mac address: 00:1b:54:c2:7a:80\n    oper key: 10\n    port number: 304\n    port state: 0x3f (A S G Y C D . .)\n\nSlave Interface: a2\nMII Status: up\nAggregator ID: none\ndetails actor lacp pdu:\n    port key: 9\n    port number: 2\n    port state: 0x47 (A S G . . . E .)\ndetails partner lacp pdu:\n    system mac address: 00:00:00:00:00:00\n    oper key: 0\n    port number: 0\n    port state: 0x00 (. . . . . . . .)\n";

    #[test]
    fn lagkit_status_text_reads_like_proc() {
        let r = from_proc("st.txt", STATUS_TEXT).unwrap();
        assert_eq!(
            r.system.as_ref().map(|s| (s.0.as_str(), s.1.line)),
            Some(("02:00:00:00:00:07", Some(10)))
        );
        assert_eq!(
            (r.aggregator, r.actor_key.as_ref().map(|k| k.0)),
            (Some(1), Some(9))
        );
        let (a1, a2) = (&r.members[0], &r.members[1]);
        assert_eq!(
            (a1.actor_port, a1.actor_state, a1.partner_port),
            (Some(1), Some(0x3f), Some(304))
        );
        assert_eq!(
            (a1.bundled(r.aggregator), a2.bundled(r.aggregator)),
            (Some(true), Some(false))
        );
        assert_eq!(
            a2.partner.as_ref().map(|p| p.0.as_str()),
            Some("00:00:00:00:00:00")
        );
        let h = crate::facts::read("st.txt", STATUS_TEXT).unwrap();
        let crate::facts::End::Hosts(h) = h else {
            panic!()
        };
        assert_eq!(h[0].bond, "bond7");
        // A bond without LACP: its members' links, no system or partner.
        let r = from_proc(
            "b",
            "Bonding Mode: load balancing (xor)\nSlave Interface: eth0\nMII Status: down\n",
        )
        .expect("the members are read");
        assert!(r.system.is_none() && r.partner.is_none());
        assert_eq!(r.members.len(), 1);
        assert_eq!(r.members[0].mii_up, Some(false));
        // Nothing at all: no state.
        assert_eq!(from_proc("b", "Bonding Mode: load balancing (xor)\n"), None);
        assert_eq!(
            from_proc(
                "b",
                "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nSlave Interface: eth0\n"
            ),
            None
        );
    }
}
