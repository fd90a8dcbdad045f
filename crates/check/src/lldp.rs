//! What a host's LLDP daemon hears: `lldpctl -f keyvalue`, each
//! interface's switch and port.
//!
//! Show output names the host member at the other end of a switch port
//! only when LACP or PAgP tells; LLDP tells for any link, from either
//! end. This reader serves a fleet (which host is cabled to which
//! channel, [`crate::fleet`]) and a pair (which member faces which port,
//! [`crate::members`]).

use crate::Loc;
use serde::Serialize;
use std::collections::BTreeMap;

/// One interface of the host and the switch port it hears over LLDP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostNeighbour {
    /// The host's interface.
    pub iface: String,
    /// The switch's name (short, lower case).
    pub switch: String,
    /// The switch port, canonical (`GigabitEthernet1/0/1`).
    pub port: String,
    /// Where the row is.
    pub loc: Loc,
}

/// The short, lower-case form of a host or switch name (`SW1.lab` is
/// `sw1`).
pub fn short_name(name: &str) -> String {
    name.trim()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// `lldpctl -f keyvalue`: `lldp.IFACE.KEY=VALUE` lines; `None` when the
/// text is not that. An interface whose switch or port is not told is
/// left out.
pub fn read_lldpctl(file: &str, text: &str) -> Option<Vec<HostNeighbour>> {
    let mut first = text.lines().filter(|l| !l.trim().is_empty());
    if !first.next()?.starts_with("lldp.") {
        return None;
    }
    // Per interface: the chassis name, the port as sent (ifname, local
    // or description) and the line of the port (else the first line that
    // names the interface).
    #[derive(Default)]
    struct Seen {
        line: usize,
        chassis: Option<String>,
        ifname: Option<String>,
        descr: Option<String>,
    }
    let mut by_iface: BTreeMap<String, Seen> = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        let Some(rest) = l.strip_prefix("lldp.") else {
            continue;
        };
        let Some((key, value)) = rest.split_once('=') else {
            continue;
        };
        let Some((iface, field)) = key.split_once('.') else {
            continue;
        };
        let seen = by_iface.entry(iface.to_string()).or_insert_with(|| Seen {
            line: i + 1,
            ..Seen::default()
        });
        let v = Some(value.trim().to_string());
        match field {
            "chassis.name" => seen.chassis = v,
            "port.ifname" | "port.local" => {
                seen.ifname = v;
                seen.line = i + 1;
            }
            "port.descr" => seen.descr = v,
            _ => {}
        }
    }
    let rows = by_iface
        .into_iter()
        .filter_map(|(iface, s)| {
            let port = [s.ifname, s.descr]
                .into_iter()
                .flatten()
                .find_map(|p| lagkit_ios::canonical(&p).ok())?;
            Some(HostNeighbour {
                iface,
                switch: short_name(&s.chassis?),
                port,
                loc: Loc::at(file, s.line),
            })
        })
        .collect();
    Some(rows)
}
