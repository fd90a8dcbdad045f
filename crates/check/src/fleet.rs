//! A fleet: the configurations of many hosts and switches in one tree,
//! each host bond paired with the switch channel it is cabled to, and
//! each pair checked as `lagkit check HOST SWITCH --channel N` would.
//!
//! Pairs are found, in this order, from
//! - a CSV map (`host,switch,channel` or `host,switch,port`, optionally
//!   `bond` and `interface` columns),
//! - LLDP neighbour tables: `lldpctl -f keyvalue` taken on a host (its
//!   interfaces and the switch ports they face), or a Cisco switch's
//!   `show lldp neighbors` (its ports and the hosts behind them),
//! - names: a switch port-channel or member port whose `description`
//!   names the host.
//!
//! A host is named by the directory its files are in (right under the
//! fleet's root), or else by its file name up to the first dot
//! (`web1.netplan.yaml` is `web1`). A switch is named by its `hostname`,
//! or the same way as a host. Names are compared without case and
//! without a domain (`web1.example.com` is `web1`).
//!
//! Sans-IO: the caller reads the files (in parallel, bounded by the
//! input limits) and hands the texts in; this module only pairs and
//! checks.

use crate::facts::{read_input, End, Host, Input, LinkFile, ReadError, Switch};
use crate::rules::finding;
use crate::{Finding, Loc, Severity};
use serde::Serialize;
use std::collections::BTreeMap;

/// One row of a neighbour table or a map: host interface `iface` of
/// `host` faces port `port` of `switch`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Neighbour {
    /// The host's name (short, lower case).
    pub host: String,
    /// The host's interface, when the table tells it.
    pub iface: Option<String>,
    /// The switch's name (short, lower case).
    pub switch: String,
    /// The switch port, canonical (`GigabitEthernet1/0/1`).
    pub port: String,
    /// Where the row is.
    pub loc: Loc,
}

/// One row of a CSV map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MapRow {
    /// The host's name.
    pub host: String,
    /// The bond, when the row names one.
    pub bond: Option<String>,
    /// The switch's name.
    pub switch: String,
    /// The channel group, when the row names one.
    pub channel: Option<u32>,
    /// A switch port (canonical), when the row names one.
    pub port: Option<String>,
    /// Where the row is.
    pub loc: Loc,
}

/// What one file of a fleet holds.
#[derive(Clone, Debug)]
pub enum Piece {
    /// A configuration (host or switch), as `lagkit check` reads it, with
    /// a switch's interface descriptions.
    Config(Box<Input>, BTreeMap<String, String>),
    /// LLDP neighbours.
    Lldp(Vec<Neighbour>),
    /// A CSV map.
    Map(Vec<MapRow>),
}

pub use crate::lldp::short_name;

/// The name of the host or switch a file belongs to: the first directory
/// under the root, or the file's name up to its first dot. `rel` is the
/// path relative to the fleet's root, with `/` separators.
pub fn owner_of(rel: &str) -> String {
    short_name(rel.split('/').find(|p| !p.is_empty()).unwrap_or_default())
}

/// Reads one file of a fleet: a CSV map, an LLDP table, or a
/// configuration. `owner` is [`owner_of`] its path.
pub fn read_piece(file: &str, owner: &str, text: &str) -> Result<Piece, ReadError> {
    if let Some(rows) = read_map(file, text)? {
        return Ok(Piece::Map(rows));
    }
    if let Some(n) = read_lldpctl(file, owner, text) {
        return Ok(Piece::Lldp(n));
    }
    if let Some(n) = read_show_lldp(file, owner, text)? {
        return Ok(Piece::Lldp(n));
    }
    let input = read_input(file, text)?;
    let descr = match input.end {
        End::Switch(_) => descriptions(text),
        _ => BTreeMap::new(),
    };
    Ok(Piece::Config(Box::new(input), descr))
}

fn port_name(file: &str, line: usize, name: &str) -> Result<String, ReadError> {
    lagkit_ios::canonical(name).map_err(|e| ReadError::Bad {
        file: file.into(),
        line,
        why: e.to_string(),
    })
}

/// A CSV map: its header names `host` and `switch` columns.
fn read_map(file: &str, text: &str) -> Result<Option<Vec<MapRow>>, ReadError> {
    let Some(head) = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
    else {
        return Ok(None);
    };
    let cols: Vec<String> = head
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let col = |n: &str| cols.iter().position(|c| c == n);
    let (Some(host), Some(switch)) = (col("host"), col("switch")) else {
        return Ok(None);
    };
    let (bond, channel, port) = (col("bond"), col("channel"), col("port"));
    if channel.is_none() && port.is_none() {
        return Err(ReadError::Bad {
            file: file.into(),
            line: 1,
            why: "a fleet map needs a `channel` or a `port` column beside `host` and `switch`"
                .into(),
        });
    }
    let mut rd = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(false)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| ReadError::Bad {
            file: file.into(),
            line: e.position().map_or(0, |p| p.line() as usize),
            why: format!("not a CSV row: {e}"),
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let get = |i: Option<usize>| {
            i.and_then(|i| rec.get(i))
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let bad = |why: String| ReadError::Bad {
            file: file.into(),
            line,
            why,
        };
        let h = get(Some(host)).ok_or_else(|| bad("the host is empty".into()))?;
        let s = get(Some(switch)).ok_or_else(|| bad("the switch is empty".into()))?;
        let channel = get(channel)
            .map(|c| {
                let n = c.trim_start_matches(|ch: char| !ch.is_ascii_digit());
                n.parse::<u32>()
                    .map_err(|_| bad(format!("channel {c:?} is not a channel group number")))
            })
            .transpose()?;
        let port = get(port).map(|p| port_name(file, line, &p)).transpose()?;
        if channel.is_none() && port.is_none() {
            return Err(bad("the row names neither a channel nor a port".into()));
        }
        rows.push(MapRow {
            host: short_name(&h),
            bond: get(bond),
            switch: short_name(&s),
            channel,
            port,
            loc: Loc::at(file, line),
        });
    }
    Ok(Some(rows))
}

/// `lldpctl -f keyvalue`, taken on host `owner`.
fn read_lldpctl(file: &str, owner: &str, text: &str) -> Option<Vec<Neighbour>> {
    let rows = crate::lldp::read_lldpctl(file, text)?;
    Some(rows.into_iter().map(|n| neighbour(owner, n)).collect())
}

fn neighbour(owner: &str, n: crate::lldp::HostNeighbour) -> Neighbour {
    Neighbour {
        host: owner.to_string(),
        iface: Some(n.iface),
        switch: n.switch,
        port: n.port,
        loc: n.loc,
    }
}

/// A Cisco switch's `show lldp neighbors`: `Device ID  Local Intf
/// Hold-time  Capability  Port ID` rows under the prompt of switch
/// `owner` (or the prompt's own name).
fn read_show_lldp(
    file: &str,
    owner: &str,
    text: &str,
) -> Result<Option<Vec<Neighbour>>, ReadError> {
    let Some(cmd) = text
        .lines()
        .position(|l| l.contains('#') && l.contains("show lldp neighbors"))
    else {
        return Ok(None);
    };
    let prompt = text.lines().nth(cmd).unwrap_or_default();
    let switch = prompt
        .split('#')
        .next()
        .map(short_name)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| owner.to_string());
    let lines: Vec<&str> = text.lines().collect();
    let Some(head) = lines
        .iter()
        .skip(cmd)
        .position(|l| l.starts_with("Device ID") && l.contains("Local Intf"))
        .map(|p| p + cmd)
    else {
        return Err(ReadError::Bad {
            file: file.into(),
            line: cmd + 1,
            why: "show lldp neighbors without its `Device ID  Local Intf ...` header".into(),
        });
    };
    let mut rows = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(head + 1) {
        let t = l.trim();
        if t.is_empty() || t.starts_with("Total entries") || t.contains('#') {
            break;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        // Device ID, Local Intf (Gi1/0/1), Hold-time, [Capability],
        // Port ID: the local port is the first field that is an
        // interface name.
        let Some(local) = f
            .iter()
            .skip(1)
            .position(|w| lagkit_ios::canonical(w).is_ok())
            .map(|p| p + 1)
        else {
            return Err(ReadError::Bad {
                file: file.into(),
                line: i + 1,
                why: format!("no local interface in {t:?}"),
            });
        };
        rows.push(Neighbour {
            host: short_name(f[0]),
            iface: f
                .last()
                .filter(|_| f.len() > local + 2)
                .map(|s| s.to_string()),
            switch: switch.clone(),
            port: port_name(file, i + 1, f[local])?,
            loc: Loc::at(file, i + 1),
        });
    }
    Ok(Some(rows))
}

/// The `description` of every interface of an IOS configuration, by
/// canonical name (descriptions are not part of the checked facts).
pub fn descriptions(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for l in text.lines() {
        if let Some(name) = l.strip_prefix("interface ") {
            current = lagkit_ios::canonical(name.trim()).ok();
        } else if !l.starts_with(' ') && !l.trim().is_empty() {
            current = None;
        } else if let (Some(c), Some(d)) = (&current, l.trim().strip_prefix("description ")) {
            out.insert(c.clone(), d.trim().to_string());
        }
    }
    out
}

/// One host's bonds and .link files, gathered from its files.
#[derive(Clone, Debug, Default)]
pub struct HostFacts {
    /// Its bonds.
    pub bonds: Vec<Host>,
    /// Its .link files.
    pub links: Vec<LinkFile>,
}

/// One switch, with its descriptions.
#[derive(Clone, Debug)]
pub struct SwitchFacts {
    /// Its short name.
    pub name: String,
    /// Its channels.
    pub switch: Switch,
    /// Interface descriptions (for pairing by name).
    pub descriptions: BTreeMap<String, String>,
}

/// Everything read from a fleet's files.
#[derive(Clone, Debug, Default)]
pub struct Fleet {
    /// Hosts by short name.
    pub hosts: BTreeMap<String, HostFacts>,
    /// Switches.
    pub switches: Vec<SwitchFacts>,
    /// LLDP rows.
    pub neighbours: Vec<Neighbour>,
    /// Map rows.
    pub map: Vec<MapRow>,
    /// Files whose facts are not used in a fleet, with why.
    pub ignored: Vec<(String, String)>,
    /// Switches' show output, by the switch's short name (its prompt's,
    /// else the file's owner): held against the bonds paired with that
    /// switch.
    pub shows: Vec<(String, crate::show::Show)>,
}

impl Fleet {
    /// Adds one file's piece; `owner` is [`owner_of`] its path.
    pub fn add(&mut self, owner: &str, piece: Piece) {
        match piece {
            Piece::Map(rows) => self.map.extend(rows),
            Piece::Lldp(rows) => self.neighbours.extend(rows),
            Piece::Config(input, descr) => match input.end {
                End::Hosts(h) => self.hosts.entry(owner.into()).or_default().bonds.extend(h),
                End::Links(l) => self.hosts.entry(owner.into()).or_default().links.extend(l),
                End::Lldp(rows) => self
                    .neighbours
                    .extend(rows.into_iter().map(|n| neighbour(owner, n))),
                End::Switch(s) => {
                    let name = s
                        .channels
                        .first()
                        .map(|c| c.switch.as_str())
                        .filter(|n| *n != s.file)
                        .map(short_name)
                        .unwrap_or_else(|| owner.to_string());
                    self.switches.push(SwitchFacts {
                        name,
                        switch: s,
                        descriptions: descr,
                    })
                }
                End::Show(sh) => {
                    let name = sh
                        .hostname
                        .as_deref()
                        .map(short_name)
                        .unwrap_or_else(|| owner.to_string());
                    self.shows.push((name, sh))
                }
            },
        }
    }
}

/// How a pair was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// A CSV map row.
    Map,
    /// LLDP neighbour rows.
    Lldp,
    /// A description naming the host.
    Name,
}

/// One host bond and the switch channel it is cabled to.
#[derive(Clone, Debug, Serialize)]
pub struct Pair {
    /// The host.
    pub host: String,
    /// The bond.
    pub bond: String,
    /// The switch.
    pub switch: String,
    /// The channel group.
    pub channel: u32,
    /// How the pair was found.
    pub via: Via,
    /// The row or line that says so.
    pub evidence: Loc,
    /// What checking the pair found.
    pub findings: Vec<Finding>,
    /// What was compared.
    pub compared: Vec<String>,
}

/// What checking a fleet found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The pairs, each checked.
    pub pairs: Vec<Pair>,
    /// Findings about the fleet itself: bonds with no pair, members
    /// cabled to ports of no channel or of several, map rows naming
    /// nothing.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Every finding, the fleet's first.
    pub fn all(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .chain(self.pairs.iter().flat_map(|p| p.findings.iter()))
    }
}

/// A member's switch port in no channel group: `who` is how the fleet
/// says so ("LLDP shows web3 eth0 facing sw1 Gi1/0/7").
fn unchannelled(loc: Loc, who: String) -> Finding {
    finding(
        Severity::Error,
        "fleet-port-unchannelled",
        loc,
        format!("{who}, a port in no channel group: the switch learns the bond's MAC on each link in turn"),
        "put the switch ports facing the bond in one channel-group",
    )
}

/// A candidate: switch index, channel number, how, where.
type Candidate = (usize, u32, Via, Loc);

impl Fleet {
    /// The LLDP rows taken on `host` (each interface's switch and port).
    fn host_lldp(&self, host: &str) -> Vec<crate::lldp::HostNeighbour> {
        (self.neighbours.iter())
            .filter(|n| n.host == host)
            .filter_map(|n| {
                Some(crate::lldp::HostNeighbour {
                    iface: n.iface.clone()?,
                    switch: n.switch.clone(),
                    port: n.port.clone(),
                    loc: n.loc.clone(),
                })
            })
            .collect()
    }

    fn switch(&self, name: &str) -> Option<usize> {
        self.switches.iter().position(|s| s.name == name)
    }

    /// The channel of `switch` that port `port` is in.
    fn channel_of(&self, sw: usize, port: &str) -> Option<u32> {
        self.switches[sw]
            .switch
            .channels
            .iter()
            .find(|c| c.ports.iter().any(|p| p.name == port))
            .map(|c| c.number)
    }

    /// Where host `host`'s bond `bond` is cabled, and the fleet findings
    /// on the way.
    fn place(&self, host: &str, bond: &Host, out: &mut Vec<Finding>) -> Option<Candidate> {
        // 1. The map.
        for r in self
            .map
            .iter()
            .filter(|r| r.host == host && r.bond.as_deref().is_none_or(|b| b == bond.bond))
        {
            let Some(sw) = self.switch(&r.switch) else {
                out.push(finding(
                    Severity::Warning,
                    "fleet-unknown-switch",
                    r.loc.clone(),
                    format!("the map cables {host} to switch {}, whose configuration is not in the fleet", r.switch),
                    "add the switch's configuration, or correct its name in the map",
                ));
                continue;
            };
            let channel = r
                .channel
                .or_else(|| r.port.as_deref().and_then(|p| self.channel_of(sw, p)));
            match channel {
                Some(c) => return Some((sw, c, Via::Map, r.loc.clone())),
                None => out.push(unchannelled(
                    r.loc.clone(),
                    format!(
                        "the map cables {host} {} to {} {}",
                        bond.bond,
                        r.switch,
                        r.port.as_deref().unwrap_or_default()
                    ),
                )),
            }
        }
        // 2. LLDP: the members' neighbours.
        let members: Vec<&str> = bond.members.iter().map(|m| m.name.as_str()).collect();
        let rows: Vec<&Neighbour> = self
            .neighbours
            .iter()
            .filter(|n| {
                n.host == host
                    && n.iface
                        .as_deref()
                        .is_none_or(|i| members.is_empty() || members.contains(&i))
            })
            .collect();
        let mut found: BTreeMap<(usize, u32), Loc> = BTreeMap::new();
        for n in &rows {
            let Some(sw) = self.switch(&n.switch) else {
                continue;
            };
            match self.channel_of(sw, &n.port) {
                Some(c) => {
                    found.entry((sw, c)).or_insert_with(|| n.loc.clone());
                }
                None => out.push(unchannelled(
                    n.loc.clone(),
                    format!(
                        "LLDP shows {host} {} facing {} {}",
                        n.iface.as_deref().unwrap_or("(an interface)"),
                        n.switch,
                        n.port
                    ),
                )),
            }
        }
        if found.len() > 1 {
            let names: Vec<String> = found
                .keys()
                .map(|(sw, c)| format!("{} Port-channel{c}", self.switches[*sw].name))
                .collect();
            let loc = found
                .values()
                .next()
                .cloned()
                .unwrap_or_else(|| bond.loc.clone());
            out.push(finding(
                Severity::Error,
                "fleet-members-split",
                loc,
                format!(
                    "LLDP shows the members of {host} {} in {} channels ({}): one bond needs one channel on one switch (or an MLAG pair lagkit does not model)",
                    bond.bond,
                    names.len(),
                    names.join(", ")
                ),
                "cable every member to ports of the same channel group",
            ));
        }
        if let Some(((sw, c), loc)) = found.into_iter().next() {
            return Some((sw, c, Via::Lldp, loc));
        }
        // 3. Names: a description that names the host as a word.
        let names_host = |d: &str| {
            d.split(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
                .any(|w| w.eq_ignore_ascii_case(host))
        };
        for (i, s) in self.switches.iter().enumerate() {
            for c in &s.switch.channels {
                let mut ifaces = c.port_channel.iter().chain(c.ports.iter());
                if let Some(hit) =
                    ifaces.find(|p| s.descriptions.get(&p.name).is_some_and(|d| names_host(d)))
                {
                    return Some((i, c.number, Via::Name, Loc::at(&c.file, hit.line)));
                }
            }
        }
        None
    }

    /// Pairs every host bond with its channel and checks each pair.
    pub fn check(&self) -> Report {
        let mut report = Report::default();
        for (host, facts) in &self.hosts {
            for bond in &facts.bonds {
                let before = report.findings.len();
                let placed = self.place(host, bond, &mut report.findings);
                let Some((sw, channel, via, evidence)) = placed else {
                    // Ports found but in no channel: said above.
                    if report.findings[before..]
                        .iter()
                        .any(|f| f.code == "fleet-port-unchannelled")
                    {
                        continue;
                    }
                    report.findings.push(finding(
                        Severity::Warning,
                        "fleet-unpaired",
                        bond.loc.clone(),
                        format!(
                            "no switch channel found for {host} {}: nothing in the fleet says where it is cabled, so it was not checked",
                            bond.bond
                        ),
                        "add an LLDP table (lldpctl -f keyvalue) from the host, a row in a CSV map (host,switch,channel), or a description naming the host on its switch ports",
                    ));
                    continue;
                };
                let s = &self.switches[sw];
                // The pair's channel only: the switch's other channels
                // face other hosts.
                let mut one = s.switch.clone();
                one.channels.retain(|c| c.number == channel);
                let mut ends = vec![
                    End::Hosts(vec![bond.clone()]),
                    End::Switch(one),
                    End::Links(facts.links.clone()),
                ];
                // The switch's show output, with the host's LLDP rows to
                // match members to ports where the output cannot.
                let shows: Vec<End> = (self.shows.iter())
                    .filter(|(n, _)| *n == s.name)
                    .map(|(_, sh)| End::Show(sh.clone()))
                    .collect();
                if !shows.is_empty() {
                    ends.extend(shows);
                    ends.push(End::Lldp(self.host_lldp(host)));
                }
                let r = crate::rules::run(&ends, Some(channel));
                report.pairs.push(Pair {
                    host: host.clone(),
                    bond: bond.bond.clone(),
                    switch: s.name.clone(),
                    channel,
                    via,
                    evidence,
                    findings: r.findings,
                    compared: r.compared,
                });
            }
        }
        for (name, sh) in &self.shows {
            if !report.pairs.iter().any(|p| p.switch == *name) {
                report.findings.push(finding(
                    Severity::Info,
                    "fleet-show-unpaired",
                    Loc::at(&sh.file, sh.commands.first().map_or(1, |c| c.line)),
                    format!("show output of switch {name} was not held against any bond: no bond of the fleet is paired with a channel of that switch's configuration"),
                    "add the switch's configuration (its hostname as in the prompt), and a map row, LLDP table or description that pairs its hosts",
                ));
            }
        }
        for r in &self.map {
            if !self.hosts.contains_key(&r.host) {
                report.findings.push(finding(
                    Severity::Info,
                    "fleet-unknown-host",
                    r.loc.clone(),
                    format!(
                        "the map names host {}, whose configuration is not in the fleet",
                        r.host
                    ),
                    "add the host's configuration, or correct its name in the map",
                ));
            }
        }
        report
    }
}

/// Any bytes as a fleet file, read as each kind and checked beside a
/// known host and switch (the `fleet_piece` fuzz target): errors are
/// values, never panics.
pub fn fuzz_one(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut fleet = Fleet::default();
    let known = [
        ("h1", "h1.toml", "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth0\", \"eth1\"]\n"),
        (
            "s1",
            "s1.cfg",
            "hostname s1\ninterface range gi1/1 - 2\n description h1\n channel-group 1 mode active\n",
        ),
    ];
    for (owner, file, t) in known {
        if let Ok(p) = read_piece(file, owner, t) {
            fleet.add(owner, p);
        }
    }
    for owner in ["h1", "s1", "x"] {
        if let Ok(p) = read_piece("fuzz", owner, &text) {
            fleet.add(owner, p);
        }
    }
    let r = fleet.check();
    for f in r.all() {
        let _ = f.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "hostname sw1.lab\n\
        interface range gi1/0/1 - 2\n channel-group 1 mode active\n\
        interface gi1/0/3\n description db1\n channel-group 2 mode active\n\
        interface gi1/0/4\n channel-group 2 mode active\n\
        interface gi1/0/5\n switchport access vlan 10\n";

    fn bond(members: &[&str]) -> String {
        let m: Vec<String> = members.iter().map(|m| format!("{m:?}")).collect();
        format!(
            "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [{}]\n",
            m.join(", ")
        )
    }

    fn fleet(files: &[(&str, &str)]) -> Fleet {
        let mut f = Fleet::default();
        for (path, text) in files {
            let owner = owner_of(path);
            let p = read_piece(path, &owner, text).unwrap_or_else(|e| panic!("{path}: {e}"));
            f.add(&owner, p);
        }
        f
    }

    fn codes(r: &Report) -> Vec<&'static str> {
        r.findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn owners_are_the_directory_or_the_name_before_the_first_dot() {
        assert_eq!(owner_of("web1/etc/netplan/01.yaml"), "web1");
        assert_eq!(owner_of("DB1.netplan.yaml"), "db1");
        assert_eq!(owner_of("/sw1.cfg"), "sw1");
        assert_eq!(short_name("Web3.Example.NET"), "web3");
    }

    #[test]
    fn lldpctl_rows_pair_a_host_with_the_channel_of_its_ports() {
        let lldp =
            "lldp.eth0.via=LLDP\nlldp.eth0.chassis.name=SW1.lab\nlldp.eth0.port.ifname=Gi1/0/1\n\
                    lldp.eth1.chassis.name=sw1\nlldp.eth1.port.local=Gi1/0/2\n\
                    lldp.eth9.chassis.name=sw1\nlldp.eth9.port.descr=GigabitEthernet1/0/5\n";
        let f = fleet(&[
            ("sw1.cfg", SWITCH),
            ("web1/bond.toml", &bond(&["eth0", "eth1"])),
            ("web1/lldp.txt", lldp),
        ]);
        assert_eq!(f.neighbours.len(), 3);
        assert_eq!(f.neighbours[2].port, "GigabitEthernet1/0/5");
        let r = f.check();
        assert_eq!(r.pairs.len(), 1, "{:?}", r.findings);
        let p = &r.pairs[0];
        assert_eq!(
            (p.host.as_str(), p.switch.as_str(), p.channel, &p.via),
            ("web1", "sw1", 1, &Via::Lldp)
        );
        assert_eq!(p.evidence, Loc::at("web1/lldp.txt", 3));
        // eth9 is not a member of bond0: its unchannelled port is not
        // this bond's problem.
        assert!(r.findings.is_empty(), "{:?}", r.findings);
    }

    #[test]
    fn a_switchs_lldp_table_names_the_host_behind_each_port() {
        let show = "sw1#show lldp neighbors\nCapability codes:\n    (R) Router, (B) Bridge\n\n\
            Device ID           Local Intf     Hold-time  Capability      Port ID\n\
            web1.example.net    Gi1/0/1        120        S               eth0\n\
            web1.example.net    Gi1/0/2        120                        eth1\n\n\
            Total entries displayed: 2\n\nsw1#\n";
        let f = fleet(&[
            ("sw1.cfg", SWITCH),
            ("sw1-lldp.txt", show),
            ("web1.toml", &bond(&["eth0", "eth1"])),
        ]);
        assert_eq!(f.neighbours[1].iface.as_deref(), Some("eth1"));
        assert_eq!(f.neighbours[0].host, "web1");
        let r = f.check();
        assert_eq!((r.pairs.len(), r.pairs[0].channel), (1, 1));
    }

    #[test]
    fn a_csv_map_pairs_by_channel_or_by_port_and_comes_first() {
        let map = "# fleet map\nhost,switch,port,bond\nweb1,sw1,gi1/0/3,bond0\nweb2,sw1,Gi1/0/5,\n";
        let f = fleet(&[
            ("sw1.cfg", SWITCH),
            ("map.csv", map),
            ("web1.toml", &bond(&["eth0", "eth1"])),
            ("web2.toml", &bond(&["eth0", "eth1"])),
            // An LLDP table disagreeing with the map: the map wins.
            (
                "web1/lldp",
                "lldp.eth0.chassis.name=sw1\nlldp.eth0.port.ifname=Gi1/0/1\n",
            ),
        ]);
        let r = f.check();
        assert_eq!(r.pairs.len(), 1);
        assert_eq!((r.pairs[0].channel, &r.pairs[0].via), (2, &Via::Map));
        assert_eq!(r.pairs[0].evidence, Loc::at("map.csv", 3));
        // web2 faces a port in no channel: an error, not "unpaired".
        assert_eq!(codes(&r), ["fleet-port-unchannelled"]);
        assert_eq!(r.findings[0].severity, Severity::Error);
    }

    #[test]
    fn a_description_naming_the_host_pairs_it() {
        let f = fleet(&[("sw1.cfg", SWITCH), ("db1.toml", &bond(&["eno1", "eno2"]))]);
        let r = f.check();
        assert_eq!(r.pairs.len(), 1);
        assert_eq!((r.pairs[0].channel, &r.pairs[0].via), (2, &Via::Name));
        // A word, not a part of one: db10 is not db1.
        let f = fleet(&[("sw1.cfg", SWITCH), ("db10.toml", &bond(&["eno1"]))]);
        assert_eq!(codes(&f.check()), ["fleet-unpaired"]);
    }

    #[test]
    fn members_in_two_channels_are_an_error() {
        let lldp = "lldp.eth0.chassis.name=sw1\nlldp.eth0.port.ifname=Gi1/0/1\n\
                    lldp.eth1.chassis.name=sw1\nlldp.eth1.port.ifname=Gi1/0/4\n";
        let f = fleet(&[
            ("sw1.cfg", SWITCH),
            ("web1/a.toml", &bond(&["eth0", "eth1"])),
            ("web1/lldp", lldp),
        ]);
        let r = f.check();
        assert_eq!(codes(&r), ["fleet-members-split"]);
        assert!(r.findings[0]
            .reason
            .contains("sw1 Port-channel1, sw1 Port-channel2"));
        // Still checked against the first.
        assert_eq!(r.pairs.len(), 1);
    }

    #[test]
    fn each_pair_is_checked_against_its_own_channel_only() {
        let sw = format!(
            "{SWITCH}interface port-channel 1\n mtu 9216\ninterface range gi1/0/1 - 2\n mtu 9216\n"
        );
        let jumbo = bond(&["eth0", "eth1"]) + "mtu = 9000\n";
        let f = fleet(&[
            ("sw1.cfg", &sw),
            ("map.csv", "host,switch,channel\nweb1,sw1,Po1\ndb1,sw1,2\n"),
            ("web1.toml", &jumbo),
            ("db1.toml", &jumbo),
        ]);
        let r = f.check();
        let by = |h: &str| r.pairs.iter().find(|p| p.host == h).unwrap();
        assert!(
            !by("web1")
                .findings
                .iter()
                .any(|f| f.code.starts_with("mtu")),
            "{:?}",
            by("web1").findings
        );
        assert!(by("db1")
            .findings
            .iter()
            .any(|f| f.code == "mtu-host-above-switch"));
    }

    #[test]
    fn map_rows_naming_nothing_are_said() {
        let f = fleet(&[
            ("sw1.cfg", SWITCH),
            ("map.csv", "host,switch,channel\nweb1,sw9,1\nghost,sw1,1\n"),
            ("web1.toml", &bond(&["eth0"])),
        ]);
        let r = f.check();
        assert_eq!(
            codes(&r),
            [
                "fleet-unknown-switch",
                "fleet-unpaired",
                "fleet-unknown-host"
            ]
        );
    }

    #[test]
    fn bad_maps_and_tables_name_their_line() {
        let e = read_piece("m.csv", "m", "host,switch\nweb1,sw1\n").unwrap_err();
        assert!(
            e.to_string().contains("`channel` or a `port` column"),
            "{e}"
        );
        let e = read_piece("m.csv", "m", "host,switch,port\nweb1,sw1,banana7\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.csv:2: unknown interface type \"banana\" in \"banana7\""
        );
        let e = read_piece("m.csv", "m", "host,switch,channel\nweb1,sw1,1,extra\n").unwrap_err();
        assert!(e.to_string().starts_with("m.csv:2: not a CSV row"), "{e}");
        let e = read_piece("m.csv", "m", "host,switch,channel\nweb1,,1\n").unwrap_err();
        assert_eq!(e.to_string(), "m.csv:2: the switch is empty");
        let e = read_piece("l", "s", "s#show lldp neighbors\nnothing here\n").unwrap_err();
        assert!(e.to_string().contains("header"), "{e}");
    }

    /// Show output of a switch the fleet pairs no bond with is said; of
    /// one it does, it is held against the bond, with the host's LLDP rows
    /// matching members to ports.
    #[test]
    fn show_output_is_held_against_the_bonds_of_its_switch() {
        let ex = |f: &str| {
            std::fs::read_to_string(format!(
                "{}/../../examples/check/{f}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let f = fleet(&[("sw1.show", &ex("show-lacp.txt"))]);
        assert!(f.ignored.is_empty());
        let r = f.check();
        assert_eq!(codes(&r), ["fleet-show-unpaired"], "{r:#?}");
        // dist-b's config, show output (eno2's port down) and the host's
        // /proc and lldpctl: the pair is found by LLDP, and the show
        // output compared port by port.
        let cfg = "hostname dist-b\ninterface range gi1/0/47 - 48\n channel-group 10 mode active\n";
        let show = ex("show-session.txt").replace("Gi1/0/48(P)", "Gi1/0/48(D)");
        let lldp = "lldp.eno1.chassis.name=dist-b\nlldp.eno1.port.ifname=Gi1/0/47\nlldp.eno2.chassis.name=dist-b\nlldp.eno2.port.ifname=Gi1/0/48\n";
        let f = fleet(&[
            ("dist-b.cfg", cfg),
            ("dist-b.show", &show),
            ("srv-b/bond0", &ex("proc-bonding.txt")),
            ("srv-b/lldp.txt", lldp),
        ]);
        let r = f.check();
        assert_eq!(r.pairs.len(), 1, "{r:#?}");
        assert!(r.findings.is_empty(), "{r:#?}");
        let p = &r.pairs[0];
        assert_eq!((p.switch.as_str(), p.channel), ("dist-b", 10));
        let up: Vec<&Finding> = p
            .findings
            .iter()
            .filter(|x| x.code == "member-up-one-end")
            .collect();
        assert_eq!(up.len(), 1, "{:#?}", p.findings);
        assert!(
            up[0]
                .reason
                .contains("GigabitEthernet1/0/48 down (D) but bond bond0's eno2"),
            "{}",
            up[0]
        );
    }

    #[test]
    fn descriptions_are_read_per_interface() {
        let d = descriptions("interface gi1/1\n description web1 eth0\n mtu 9000\n!\ninterface po3\n description  db1 \nhostname x\n description stray\n");
        assert_eq!(d.len(), 2);
        assert_eq!(d["GigabitEthernet1/1"], "web1 eth0");
        assert_eq!(d["Port-channel3"], "db1");
    }

    #[test]
    fn the_fuzz_corpus_reads_without_a_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/fleet_piece");
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() > 10, "{dir} holds only {} files", files.len());
        for f in files {
            fuzz_one(&std::fs::read(f).unwrap());
        }
    }
}
