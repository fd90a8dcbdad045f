//! A bond a host already has, in the dialect it is written in (netplan
//! YAML, systemd-networkd `.netdev` and `.network` files, NetworkManager
//! keyfiles, ifupdown's `interfaces`, teamd JSON), turned into lagkit's
//! TOML: `lagkit convert FILE` prints it, and `lagkit up FILE` runs it.
//!
//! Each setting becomes the lagkit key of the same meaning (Linux bonding's
//! name, which lagkit takes), with the place it came from in a comment;
//! each setting lagkit cannot carry (DHCP, gateways, a member MTU unlike
//! the bond's, an interface chosen by MAC or glob, ...) is listed with why,
//! and `lagkit up` refuses the file while any is left unless told to drop
//! them. A default that differs between the dialect and lagkit (no mode:
//! Linux's `balance-rr`; no hash policy: Linux's `layer2`, where lagkit's
//! is `strong`) is written out, so the bond behaves as the one it
//! replaces. The TOML is then read by `lagkit-bondcfg` like any other, so
//! a value no bond can take is refused there with its source named.

use crate::netplan::Node;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A setting of the source that lagkit cannot carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Where: `file:line`.
    pub at: String,
    /// The setting as written.
    pub setting: String,
    /// Why lagkit does not carry it, and what to do instead.
    pub why: String,
}

/// One key of a converted bond.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// lagkit's key.
    pub key: String,
    /// Its value, as a TOML literal.
    pub value: String,
    /// Where it came from (`file:line`), or why it is written though the
    /// source says nothing.
    pub from: String,
}

/// One bond of the source, in lagkit's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bond {
    /// The bond's interface name.
    pub name: String,
    /// Its keys, in the order written.
    pub entries: Vec<Entry>,
    /// What could not be carried.
    pub dropped: Vec<Dropped>,
}

/// A source's bonds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The dialect (`netplan`, `systemd-networkd`, ...).
    pub dialect: &'static str,
    /// What was read.
    pub source: String,
    /// Its bonds.
    pub bonds: Vec<Bond>,
}

/// Why a source could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A file could not be read.
    #[error("{path}: {why}")]
    Read {
        /// The file or directory.
        path: String,
        /// The system's answer.
        why: String,
    },
    /// Not a dialect lagkit converts.
    #[error("{0}: not a bond definition lagkit reads (netplan YAML, systemd-networkd .netdev/.network, NetworkManager keyfiles, ifupdown interfaces, teamd JSON, or lagkit's TOML)")]
    Unknown(String),
    /// The source defines no bond.
    #[error("{0}: defines no bond")]
    NoBond(String),
    /// The source is malformed.
    #[error("{at}: {why}")]
    Bad {
        /// `file:line`.
        at: String,
        /// What is wrong.
        why: String,
    },
}

/// A TOML string literal.
fn q(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A TOML list of strings.
fn qlist<S: AsRef<str>>(v: &[S]) -> String {
    let items: Vec<String> = v.iter().map(|s| q(s.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

impl Bond {
    fn set(&mut self, key: &str, value: String, from: String) {
        self.entries.retain(|e| e.key != key);
        self.entries.push(Entry {
            key: key.to_string(),
            value,
            from,
        });
    }

    fn drop_(&mut self, at: String, setting: impl Into<String>, why: impl Into<String>) {
        self.dropped.push(Dropped {
            at,
            setting: setting.into(),
            why: why.into(),
        });
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|e| e.key == key)
    }

    /// The value written for `key`, if any.
    fn value(&self, key: &str) -> Option<&str> {
        (self.entries.iter())
            .find(|e| e.key == key)
            .map(|e| e.value.as_str())
    }

    /// What the dialect means by leaving a key out, where lagkit's default
    /// differs: Linux's mode (`balance-rr`) and hash (`layer2`).
    fn linux_defaults(&mut self) {
        if !self.has("mode") {
            self.set(
                "mode",
                q("balance-rr"),
                "no mode given: Linux's default, balance-rr".into(),
            );
        }
        let hashes = self
            .value("mode")
            .is_some_and(|m| ["\"802.3ad\"", "\"4\"", "\"balance-xor\"", "\"2\""].contains(&m));
        if hashes && !self.has("xmit_hash_policy") {
            self.set(
                "xmit_hash_policy",
                q("layer2"),
                "no hash policy given: Linux's default, layer2 (lagkit's own default is strong)"
                    .into(),
            );
        }
    }
}

impl Converted {
    /// Every setting that could not be carried.
    pub fn dropped(&self) -> Vec<&Dropped> {
        self.bonds.iter().flat_map(|b| &b.dropped).collect()
    }

    /// lagkit's TOML for the bonds: one `[name]` table each, every key
    /// with where it came from, every setting not carried as a comment.
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "# lagkit's configuration of the bonds in {} ({}), written by `lagkit convert`.",
            self.source, self.dialect
        );
        for b in &self.bonds {
            let bare = !b.name.is_empty()
                && (b.name.chars()).all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let table = if bare { b.name.clone() } else { q(&b.name) };
            let _ = writeln!(o, "\n[{table}]");
            for e in &b.entries {
                let _ = writeln!(o, "{} = {}  # {}", e.key, e.value, e.from);
            }
            for d in &b.dropped {
                let _ = writeln!(o, "# not carried: {} ({}): {}", d.setting, d.at, d.why);
            }
        }
        o
    }
}

/// Whether `text` is lagkit's own TOML rather than another dialect.
pub fn is_foreign(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    match std::fs::read_to_string(path) {
        Ok(text) => dialect_of(path, &text).is_some(),
        Err(_) => false,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Netplan,
    Networkd,
    Keyfile,
    Ifupdown,
    Teamd,
}

fn dialect_of(path: &Path, text: &str) -> Option<Dialect> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let has = |s: &str| text.lines().any(|l| l.trim_start().starts_with(s));
    if crate::netplan::sniff(text) {
        Some(Dialect::Netplan)
    } else if text.trim_start().starts_with('{') && text.contains("\"runner\"") {
        Some(Dialect::Teamd)
    } else if ["netdev", "network"].contains(&ext) || has("[NetDev]") || has("[Network]") {
        Some(Dialect::Networkd)
    } else if ext == "nmconnection" || has("[connection]") {
        Some(Dialect::Keyfile)
    } else if has("iface ") {
        Some(Dialect::Ifupdown)
    } else {
        None
    }
}

/// Converts the bond definitions at `path`: a file, or a directory of
/// systemd-networkd or NetworkManager files (or several such files).
pub fn convert(paths: &[PathBuf]) -> Result<Converted, ConvertError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| ConvertError::Read {
                    path: p.display().to_string(),
                    why: e.to_string(),
                })?
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.is_file())
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let mut texts = Vec::new();
    for f in &files {
        let text =
            lagkit_input::read_text(f, &lagkit_input::CONFIG).map_err(|e| ConvertError::Read {
                path: f.display().to_string(),
                why: e.to_string(),
            })?;
        let name = f.display().to_string();
        if let Some(d) = dialect_of(f, &text) {
            texts.push((d, name, text));
        }
    }
    let source = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let Some(&(dialect, _, _)) = texts.first() else {
        return Err(ConvertError::Unknown(source));
    };
    let (name, bonds) = match dialect {
        Dialect::Netplan => ("netplan", netplan(&texts)?),
        Dialect::Networkd => ("systemd-networkd", networkd(&texts)),
        Dialect::Keyfile => ("NetworkManager keyfiles", keyfile(&texts)),
        Dialect::Ifupdown => ("ifupdown", ifupdown(&texts)),
        Dialect::Teamd => ("teamd", teamd(&texts)?),
    };
    if bonds.is_empty() {
        return Err(ConvertError::NoBond(source));
    }
    Ok(Converted {
        dialect: name,
        source,
        bonds,
    })
}

/// A duration in ms from a systemd time span (`100ms`, `1s 500ms`, `0.5s`,
/// `2min`); a bare number is in `bare_ms` units of ms (1 for netplan, NM,
/// ifupdown and teamd; 1000 for systemd-networkd, whose bare numbers are
/// seconds).
fn millis(v: &str, bare_ms: f64) -> Option<u64> {
    let v = v.trim();
    if let Ok(n) = v.parse::<f64>() {
        return (n >= 0.0).then(|| (n * bare_ms).round() as u64);
    }
    let mut total = 0.0;
    let mut rest = v;
    while !rest.trim().is_empty() {
        let t = rest.trim_start();
        let num_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let n: f64 = t[..num_end].parse().ok()?;
        let u = t[num_end..].trim_start();
        let unit_end = u
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(u.len());
        let unit = &u[..unit_end];
        let ms = match unit {
            "us" | "usec" => 0.001,
            "ms" | "msec" => 1.0,
            "s" | "sec" | "second" | "seconds" | "" => 1000.0,
            "m" | "min" | "minute" | "minutes" => 60_000.0,
            "h" | "hr" | "hour" | "hours" => 3_600_000.0,
            _ => return None,
        };
        total += n * ms;
        rest = &u[unit_end..];
    }
    Some(total.round() as u64)
}

/// Sets a millisecond key from a time value, or drops what cannot be read.
fn set_millis(b: &mut Bond, key: &str, v: &str, bare_ms: f64, at: String, setting: &str) {
    match millis(v, bare_ms) {
        Some(ms) => b.set(key, ms.to_string(), at),
        None => b.drop_(
            at,
            setting,
            format!("'{v}' is no duration lagkit reads (write ms, or a span such as 100ms or 1s)"),
        ),
    }
}

/// A setting whose value lagkit's key takes as written (a name, or a
/// Linux number): quoted, for `lagkit-bondcfg` to read and check.
fn word(v: &str) -> String {
    q(v.trim())
}

/// A number, as written; a value that is not is passed quoted, so that
/// `lagkit-bondcfg` names it.
fn number(v: &str) -> String {
    let v = v.trim();
    if v.parse::<u64>().is_ok() {
        v.to_string()
    } else {
        q(v)
    }
}

/// A boolean from the spellings the dialects use.
fn boolean(v: &str) -> String {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => "true".into(),
        "0" | "no" | "false" | "off" => "false".into(),
        other => q(other),
    }
}

/// The Linux bonding options most dialects pass through under Linux's
/// own names (NM's `[bond]`, ifupdown's `bond-*`, netplan's and
/// networkd's after renaming): to lagkit's key and the kind of value.
fn linux_option(b: &mut Bond, name: &str, v: &str, at: String, bare_ms: f64) -> bool {
    let key = name.to_ascii_lowercase().replace('-', "_");
    let key = key.strip_prefix("bond_").unwrap_or(&key).to_string();
    match key.as_str() {
        "mode" | "lacp_rate" | "xmit_hash_policy" | "ad_select" | "fail_over_mac"
        | "arp_validate" | "arp_all_targets" | "primary_reselect" | "primary"
        | "ad_actor_system" => b.set(&key, word(v), at),
        "miimon" | "updelay" | "downdelay" | "arp_interval" | "peer_notif_delay" => {
            set_millis(b, &key, v, bare_ms, at, name)
        }
        "min_links" | "ad_actor_sys_prio" | "ad_user_port_key" | "num_grat_arp" | "num_unsol_na"
        | "packets_per_slave" | "resend_igmp" | "arp_missed_max" | "lp_interval" => {
            let key = if key == "num_unsol_na" {
                "num_grat_arp".to_string()
            } else {
                key
            };
            b.set(&key, number(v), at)
        }
        "tlb_dynamic_lb" | "all_slaves_active" | "lacp_active" | "ad_lacp_active" => {
            let key = if key == "ad_lacp_active" {
                "lacp_active".to_string()
            } else {
                key
            };
            b.set(&key, boolean(v), at)
        }
        "arp_ip_target" | "ns_ip6_target" => {
            let list: Vec<&str> = v
                .split([',', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            b.set(&key, qlist(&list), at)
        }
        "use_carrier" => b.drop_(at, name, "lagkit always reads the carrier (Linux's use_carrier = 1); a driver without carrier reporting needs miimon or the ARP monitor"),
        "active_slave" => b.drop_(at, name, "lagkit has no active_slave to set at start; write primary to prefer a member"),
        "queue_id" | "iface_queue_id" => b.drop_(at, name, "lagkit does not map members to transmit queues"),
        _ => return false,
    }
    true
}

// ------------------------------------------------------------- netplan --

fn netplan(texts: &[(Dialect, String, String)]) -> Result<Vec<Bond>, ConvertError> {
    let mut out = Vec::new();
    for (_, file, text) in texts {
        let root = crate::netplan::parse(file, text).map_err(|e| ConvertError::Bad {
            at: file.clone(),
            why: e.to_string(),
        })?;
        let Some((_, net)) = root.get("network") else {
            continue;
        };
        let ethernets = net.get("ethernets").map(|(_, n)| n);
        let Some((_, Node::Map(bonds))) = net.get("bonds") else {
            continue;
        };
        for (name, line, def) in bonds {
            out.push(netplan_bond(file, name, *line, def, ethernets));
        }
    }
    Ok(out)
}

/// The interface a netplan ID names: its `set-name`, its `match: {name}`
/// when that is no glob, else the ID itself; `None` when only a MAC or a
/// glob chooses it.
fn netplan_ifname(id: &str, ethernets: Option<&Node>) -> Option<String> {
    let Some(def) = ethernets.and_then(|e| e.get(id)).map(|(_, n)| n) else {
        return Some(id.to_string());
    };
    if let Some((_, Node::Scalar(n))) = def.get("set-name") {
        return Some(n.clone());
    }
    match def.get("match").map(|(_, m)| m) {
        None => Some(id.to_string()),
        Some(m) => match m.get("name") {
            Some((_, Node::Scalar(n))) if !n.contains(['*', '?', '[']) => Some(n.clone()),
            _ => None,
        },
    }
}

fn netplan_bond(file: &str, name: &str, line: usize, def: &Node, ethernets: Option<&Node>) -> Bond {
    let mut b = Bond {
        name: name.to_string(),
        ..Bond::default()
    };
    let at = |l: usize| format!("{file}:{l}");
    let Node::Map(entries) = def else {
        return b;
    };
    let mut bond_mtu = None;
    for (k, l, v) in entries {
        let scalar = match v {
            Node::Scalar(s) => Some(s.as_str()),
            _ => None,
        };
        match (k.as_str(), scalar) {
            ("interfaces", _) => {
                let Node::List(items) = v else { continue };
                let mut members = Vec::new();
                for (il, item) in items {
                    let Node::Scalar(id) = item else { continue };
                    match netplan_ifname(id, ethernets) {
                        Some(n) => members.push(n),
                        None => b.drop_(at(*il), format!("interfaces: {id}"), format!("{id} is chosen by a MAC address or a glob in ethernets:, which names no interface here; give it set-name, or list the interface by name")),
                    }
                }
                b.set("members", qlist(&members), at(*l));
            }
            ("mtu", Some(m)) => {
                bond_mtu = Some(m.to_string());
                b.set("mtu", number(m), at(*l))
            }
            ("macaddress", Some(m)) => b.set("mac", word(m), at(*l)),
            ("addresses", _) => {
                let Node::List(items) = v else { continue };
                let addrs: Vec<String> = items
                    .iter()
                    .filter_map(|(_, i)| match i {
                        Node::Scalar(s) => Some(s.clone()),
                        Node::Map(m) => m.first().map(|(k, _, _)| k.clone()),
                        _ => None,
                    })
                    .collect();
                b.set("address", qlist(&addrs), at(*l));
            }
            ("parameters", _) => {
                let Node::Map(params) = v else { continue };
                for (pk, pl, pv) in params {
                    let pv = match pv {
                        Node::Scalar(s) => s.clone(),
                        // arp-ip-targets: a list.
                        Node::List(items) => (items.iter())
                            .filter_map(|(_, i)| match i {
                                Node::Scalar(s) => Some(s.as_str()),
                                _ => None,
                            })
                            .collect::<Vec<_>>()
                            .join(","),
                        Node::Map(_) => {
                            b.drop_(at(*pl), format!("parameters: {pk}"), "a mapping lagkit does not read here");
                            continue;
                        }
                    };
                    netplan_parameter(&mut b, pk, &pv, at(*pl), ethernets);
                }
            }
            ("renderer", _) | ("optional", _) | ("critical", _) | ("activation-mode", _) => {
                b.drop_(at(*l), k.clone(), "lagkit runs the bond itself; this is netplan's say over its backend")
            }
            ("dhcp4", _) | ("dhcp6", _) | ("accept-ra", _) | ("link-local", _) => b.drop_(at(*l), k.clone(), "lagkit sets static addresses only; run a DHCP client or router advertisements on the bond's interface yourself"),
            ("routes", _) | ("gateway4", _) | ("gateway6", _) | ("routing-policy", _) | ("nameservers", _) => b.drop_(at(*l), k.clone(), "lagkit sets the bond's addresses, not routes or resolvers: add them to the bond's interface once it runs (ip route, resolvectl)"),
            _ => b.drop_(at(*l), k.clone(), "no lagkit equivalent"),
        }
    }
    // Members' own MTUs: lagkit has one MTU for the bond and its members.
    if let Some(Node::Map(eths)) = ethernets {
        for (id, _, e) in eths {
            if let Some((ml, Node::Scalar(m))) = e.get("mtu") {
                let member = netplan_ifname(id, ethernets).unwrap_or_else(|| id.clone());
                let listed = b
                    .entries
                    .iter()
                    .any(|x| x.key == "members" && x.value.contains(&q(&member)));
                if listed && bond_mtu.as_deref() != Some(m.as_str()) {
                    b.drop_(at(ml), format!("ethernets: {id}: mtu: {m}"), "lagkit sets one MTU on the bond and all its members (mtu); a member's own MTU unlike the bond's is not carried");
                }
            }
        }
    }
    let _ = line;
    b.linux_defaults();
    b
}

fn netplan_parameter(b: &mut Bond, k: &str, v: &str, at: String, ethernets: Option<&Node>) {
    let linux = match k {
        "mode" => "mode",
        "lacp-rate" => "lacp_rate",
        "mii-monitor-interval" => "miimon",
        "min-links" => "min_links",
        "transmit-hash-policy" => "xmit_hash_policy",
        "ad-select" => "ad_select",
        "all-slaves-active" | "all-members-active" => "all_slaves_active",
        "arp-interval" => "arp_interval",
        "arp-validate" => "arp_validate",
        "arp-ip-targets" => "arp_ip_target",
        "arp-all-targets" => "arp_all_targets",
        "up-delay" => "updelay",
        "down-delay" => "downdelay",
        "fail-over-mac-policy" => "fail_over_mac",
        "gratuitous-arp" | "gratuitious-arp" => "num_grat_arp",
        "packets-per-slave" | "packets-per-member" => "packets_per_slave",
        "primary-reselect-policy" => "primary_reselect",
        "resend-igmp" => "resend_igmp",
        "learn-packet-interval" => {
            match millis(v, 1000.0) {
                Some(ms) => b.set("lp_interval", (ms / 1000).max(1).to_string(), at),
                None => b.drop_(at, k, format!("'{v}' is no duration")),
            }
            return;
        }
        "primary" => {
            match netplan_ifname(v, ethernets) {
                Some(n) => b.set("primary", q(&n), at),
                None => b.drop_(
                    at,
                    k,
                    "the primary is chosen by a MAC or a glob; name the interface",
                ),
            }
            return;
        }
        _ => {
            b.drop_(at, format!("parameters: {k}"), "no lagkit equivalent");
            return;
        }
    };
    linux_option(b, linux, v, at, 1.0);
}

// ---------------------------------------------------- systemd-networkd --

/// INI sections of one file: (section, key, value, line).
fn ini(text: &str) -> Vec<(String, String, String, usize)> {
    crate::dialects::ini(text)
}

fn networkd(texts: &[(Dialect, String, String)]) -> Vec<Bond> {
    let mut bonds: Vec<Bond> = Vec::new();
    // .network files: (file, entries)
    let mut networks = Vec::new();
    for (_, file, text) in texts {
        let entries = ini(text);
        let kind = entries
            .iter()
            .find(|(s, k, _, _)| s == "NetDev" && k == "Kind")
            .map(|e| e.2.clone());
        if kind.is_some() {
            if kind.as_deref() != Some("bond") {
                continue;
            }
            let mut b = Bond::default();
            for (s, k, v, l) in &entries {
                let at = format!("{file}:{l}");
                match (s.as_str(), k.as_str()) {
                    ("NetDev", "Name") => b.name = v.clone(),
                    ("NetDev", "Kind") | ("NetDev", "Description") => {}
                    ("NetDev", "MTUBytes") => b.set("mtu", number(v), at),
                    ("NetDev", "MACAddress") => b.set("mac", word(v), at),
                    ("Bond", key) => networkd_bond_key(&mut b, key, v, at),
                    _ => b.drop_(at, format!("[{s}] {k}={v}"), "no lagkit equivalent"),
                }
            }
            bonds.push(b);
        } else {
            networks.push((file.clone(), entries));
        }
    }
    for b in &mut bonds {
        let mut members = Vec::new();
        for (file, entries) in &networks {
            let at = |l: &usize| format!("{file}:{l}");
            let matched: Vec<&(String, String, String, usize)> =
                entries.iter().filter(|(s, _, _, _)| s == "Match").collect();
            let joins = entries
                .iter()
                .any(|(s, k, v, _)| s == "Network" && k == "Bond" && *v == b.name);
            let is_bond = matched
                .iter()
                .any(|(_, k, v, _)| k == "Name" && *v == b.name);
            if joins {
                let mut named = false;
                let by_name = matched.iter().any(|(_, k, _, _)| k == "Name");
                for (_, k, v, l) in &matched {
                    match k.as_str() {
                        // Name= names it; the others only narrow the match.
                        _ if by_name && k != "Name" => {}
                        "Name" => {
                            for n in v.split_whitespace() {
                                if n.contains(['*', '?', '[', '!']) {
                                    b.drop_(at(l), format!("[Match] Name={n}"), "a glob chooses the members; lagkit needs their names: list them in members");
                                } else {
                                    members.push(n.to_string());
                                    named = true;
                                }
                            }
                        }
                        _ => b.drop_(at(l), format!("[Match] {k}={v}"), "the member is chosen by something other than its name; lagkit needs the name: list it in members"),
                    }
                }
                for (s, k, v, l) in entries {
                    match (s.as_str(), k.as_str()) {
                        ("Network", "PrimarySlave") if boolean(v) == "true" && named => {
                            if let Some(m) = members.last() {
                                b.set("primary", q(m), at(l))
                            }
                        }
                        ("Link", "MTUBytes") if b.value("mtu") != Some(v.as_str()) => {
                            b.drop_(at(l), format!("[Link] MTUBytes={v}"), "lagkit sets one MTU on the bond and all its members (mtu); a member's own MTU unlike the bond's is not carried");
                        }
                        _ => {}
                    }
                }
            } else if is_bond {
                let mut addrs = Vec::new();
                for (s, k, v, l) in entries {
                    match (s.as_str(), k.as_str()) {
                        ("Match", _) => {}
                        ("Network", "Address") | ("Address", "Address") => addrs.push(v.clone()),
                        ("Link", "MTUBytes") => b.set("mtu", number(v), at(l)),
                        ("Link", "MACAddress") => b.set("mac", word(v), at(l)),
                        // How networkd treats the link itself, not the bond's.
                        ("Network", "LinkLocalAddressing" | "ConfigureWithoutCarrier") => {}
                        ("Network", "IPv6AcceptRA") if v == "no" || v == "false" => {}
                        _ => b.drop_(at(l), format!("[{s}] {k}={v}"), "lagkit sets the bond's static addresses only; add routes, DHCP and resolvers to its interface yourself"),
                    }
                }
                if !addrs.is_empty() {
                    b.set(
                        "address",
                        qlist(&addrs),
                        format!("{file}: [Network] Address="),
                    );
                }
            }
        }
        b.set(
            "members",
            qlist(&members),
            "the .network files whose [Network] Bond= names it".into(),
        );
        b.linux_defaults();
    }
    bonds
}

fn networkd_bond_key(b: &mut Bond, key: &str, v: &str, at: String) {
    let linux = match key {
        "Mode" => "mode",
        "TransmitHashPolicy" => "xmit_hash_policy",
        "LACPTransmitRate" => "lacp_rate",
        "MIIMonitorSec" => "miimon",
        "UpDelaySec" => "updelay",
        "DownDelaySec" => "downdelay",
        "AdSelect" => "ad_select",
        "AdActorSystemPriority" => "ad_actor_sys_prio",
        "AdUserPortKey" => "ad_user_port_key",
        "AdActorSystem" => "ad_actor_system",
        "FailOverMACPolicy" => "fail_over_mac",
        "ARPValidate" => "arp_validate",
        "ARPIntervalSec" => "arp_interval",
        "ARPIPTargets" => "arp_ip_target",
        "ARPAllTargets" => "arp_all_targets",
        "ARPMissedMax" => "arp_missed_max",
        "PrimaryReselectPolicy" => "primary_reselect",
        "ResendIGMP" => "resend_igmp",
        "PacketsPerSlave" => "packets_per_slave",
        "GratuitousARP" => "num_grat_arp",
        "AllSlavesActive" => "all_slaves_active",
        "DynamicTransmitLoadBalancing" => "tlb_dynamic_lb",
        "MinLinks" => "min_links",
        "LearnPacketIntervalSec" => {
            match millis(v, 1000.0) {
                Some(ms) => b.set("lp_interval", (ms / 1000).max(1).to_string(), at),
                None => b.drop_(at, format!("[Bond] {key}={v}"), "no duration lagkit reads"),
            }
            return;
        }
        _ => {
            b.drop_(at, format!("[Bond] {key}={v}"), "no lagkit equivalent");
            return;
        }
    };
    // systemd's bare numbers are seconds.
    if !linux_option(b, linux, v, at.clone(), 1000.0) {
        b.drop_(at, format!("[Bond] {key}={v}"), "no lagkit equivalent");
    }
}

// ------------------------------------------------ NetworkManager keyfiles --

fn keyfile(texts: &[(Dialect, String, String)]) -> Vec<Bond> {
    struct Profile {
        file: String,
        entries: Vec<(String, String, String, usize)>,
    }
    let profiles: Vec<Profile> = texts
        .iter()
        .map(|(_, f, t)| Profile {
            file: f.clone(),
            entries: ini(t),
        })
        .collect();
    let get = |p: &Profile, sec: &str, key: &str| {
        p.entries
            .iter()
            .find(|(s, k, _, _)| s == sec && k == key)
            .map(|e| e.2.clone())
    };
    let mut bonds = Vec::new();
    for p in profiles
        .iter()
        .filter(|p| get(p, "connection", "type").as_deref() == Some("bond"))
    {
        let name = get(p, "connection", "interface-name").unwrap_or_default();
        let uuid = get(p, "connection", "uuid");
        let mut b = Bond {
            name: name.clone(),
            ..Bond::default()
        };
        let mut addrs = Vec::new();
        for (s, k, v, l) in &p.entries {
            let at = format!("{}:{l}", p.file);
            match (s.as_str(), k.as_str()) {
                ("connection", _) | ("proxy", _) => {}
                ("bond", key) => {
                    if !linux_option(&mut b, key, v, at.clone(), 1.0) {
                        b.drop_(at, format!("[bond] {key}={v}"), "no lagkit equivalent");
                    }
                }
                ("ethernet", "mtu") => b.set("mtu", number(v), at),
                ("ethernet", "cloned-mac-address") if v.contains(':') => b.set("mac", word(v), at),
                ("ipv4" | "ipv6", "method") if v == "manual" || v == "disabled" || v == "ignore" || v == "link-local" => {}
                ("ipv4" | "ipv6", key) if key.starts_with("address") => {
                    let (addr, gw) = v.split_once(',').unwrap_or((v, ""));
                    addrs.push(addr.trim().to_string());
                    if !gw.is_empty() {
                        b.drop_(at, format!("[{s}] {key}={v}: gateway {gw}"), "lagkit sets addresses, not routes: add the default route to the bond's interface once it runs");
                    }
                }
                ("ipv4" | "ipv6", "addr-gen-mode") => {}
                _ => b.drop_(at, format!("[{s}] {k}={v}"), "lagkit sets the bond's static addresses only; DHCP, routes and DNS are not carried"),
            }
        }
        if !addrs.is_empty() {
            b.set(
                "address",
                qlist(&addrs),
                format!("{}: [ipv4]/[ipv6] addressN=", p.file),
            );
        }
        let mut members = Vec::new();
        for port in &profiles {
            let controller =
                get(port, "connection", "controller").or_else(|| get(port, "connection", "master"));
            let names_bond = controller
                .as_ref()
                .is_some_and(|c| *c == name || Some(c) == uuid.as_ref());
            let kind = get(port, "connection", "port-type")
                .or_else(|| get(port, "connection", "slave-type"));
            if !names_bond || kind.as_deref().is_some_and(|k| k != "bond") {
                continue;
            }
            match get(port, "connection", "interface-name") {
                Some(n) => members.push(n),
                None => b.drop_(port.file.clone(), "a port without interface-name", "the port is chosen by its MAC address; lagkit needs its interface name: give the profile interface-name="),
            }
            if let Some(m) = get(port, "ethernet", "mtu") {
                if b.value("mtu") != Some(m.as_str()) {
                    b.drop_(
                        port.file.clone(),
                        format!("[ethernet] mtu={m}"),
                        "lagkit sets one MTU on the bond and all its members (mtu)",
                    );
                }
            }
        }
        b.set(
            "members",
            qlist(&members),
            "the profiles whose controller (master) is this bond".into(),
        );
        b.linux_defaults();
        bonds.push(b);
    }
    bonds
}

// ------------------------------------------------------------ ifupdown --

fn ifupdown(texts: &[(Dialect, String, String)]) -> Vec<Bond> {
    // Stanzas: (file, iface, family/method, lines of (key, value, line)).
    struct Stanza {
        file: String,
        iface: String,
        method: String,
        line: usize,
        opts: Vec<(String, String, usize)>,
    }
    let mut stanzas: Vec<Stanza> = Vec::new();
    for (_, file, text) in texts {
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut words = t.split_whitespace();
            let first = words.next().unwrap_or("");
            match first {
                "iface" => {
                    let iface = words.next().unwrap_or("").to_string();
                    let rest: Vec<&str> = words.collect();
                    stanzas.push(Stanza {
                        file: file.clone(),
                        iface,
                        method: rest.join(" "),
                        line: i + 1,
                        opts: Vec::new(),
                    });
                }
                "auto" | "allow-hotplug" | "source" | "source-directory" | "mapping"
                | "allow-auto" => {}
                _ => {
                    if let Some(s) = stanzas.last_mut() {
                        let value = t[first.len()..].trim().to_string();
                        s.opts.push((first.to_string(), value, i + 1));
                    }
                }
            }
        }
    }
    let is_bond = |s: &Stanza| {
        s.opts.iter().any(|(k, v, _)| {
            let k = k.replace('_', "-");
            (k == "bond-slaves" || k == "bond-members" || k == "bond-ports" || k == "slaves")
                || (k == "bond-mode" && !v.is_empty())
        })
    };
    let mut order: Vec<String> = Vec::new();
    for s in stanzas.iter().filter(|s| is_bond(s)) {
        if !order.contains(&s.iface) {
            order.push(s.iface.clone());
        }
    }
    let mut bonds = Vec::new();
    for name in order {
        let mut b = Bond {
            name: name.clone(),
            ..Bond::default()
        };
        let mut members: Vec<String> = Vec::new();
        let mut addrs: Vec<String> = Vec::new();
        for s in stanzas.iter().filter(|s| s.iface == name) {
            let at = |l: usize| format!("{}:{l}", s.file);
            if s.method.contains("dhcp") || s.method.contains("auto") {
                b.drop_(at(s.line), format!("iface {} {}", s.iface, s.method), "lagkit sets static addresses only; run a DHCP client on the bond's interface yourself");
            }
            let mut netmask = None;
            let mut address = None;
            for (k, v, l) in &s.opts {
                let key = k.replace('_', "-");
                match key.as_str() {
                    "bond-slaves" | "bond-members" | "bond-ports" | "slaves" => {
                        for m in v.split_whitespace() {
                            match m {
                                "none" => {}
                                "all" | "glob" | "regex" => b.drop_(at(*l), format!("{k} {v}"), "the members are chosen by a pattern; lagkit needs their names: list them in members"),
                                m => members.push(m.to_string()),
                            }
                        }
                    }
                    "bond-master" | "bond-give-a-chance" => {}
                    "address" => address = Some(v.clone()),
                    "netmask" => netmask = Some(v.clone()),
                    "mtu" => b.set("mtu", number(v), at(*l)),
                    "hwaddress" => {
                        let mac = v.strip_prefix("ether").unwrap_or(v).trim();
                        b.set("mac", word(mac), at(*l));
                    }
                    k if k.starts_with("bond-") => {
                        if !linux_option(&mut b, k, v, at(*l), 1.0) {
                            b.drop_(at(*l), format!("{k} {v}"), "no lagkit equivalent");
                        }
                    }
                    _ => b.drop_(at(*l), format!("{k} {v}"), "lagkit sets the bond's static addresses only; gateways, routes, DNS and hooks are not carried"),
                }
            }
            if let Some(a) = address {
                let a = match (a.contains('/'), netmask) {
                    (true, _) | (false, None) => a,
                    (false, Some(m)) => match prefix_of(&m) {
                        Some(p) => format!("{a}/{p}"),
                        None => a,
                    },
                };
                addrs.push(a);
            }
        }
        // Ports naming the bond with bond-master.
        for s in &stanzas {
            let master = s
                .opts
                .iter()
                .any(|(k, v, _)| k.replace('_', "-") == "bond-master" && *v == name);
            if master && !members.contains(&s.iface) {
                members.push(s.iface.clone());
            }
        }
        b.set(
            "members",
            qlist(&members),
            "bond-slaves (and the ports' bond-master)".into(),
        );
        if !addrs.is_empty() {
            b.set("address", qlist(&addrs), "the bond's address lines".into());
        }
        b.linux_defaults();
        bonds.push(b);
    }
    bonds
}

/// `255.255.255.0` → 24; a number is taken as the prefix.
fn prefix_of(mask: &str) -> Option<u8> {
    if let Ok(n) = mask.parse::<u8>() {
        return Some(n);
    }
    let m: std::net::Ipv4Addr = mask.parse().ok()?;
    let bits = u32::from(m);
    (bits.leading_ones() + bits.trailing_zeros() == 32).then(|| bits.leading_ones() as u8)
}

// --------------------------------------------------------------- teamd --

fn teamd(texts: &[(Dialect, String, String)]) -> Result<Vec<Bond>, ConvertError> {
    let mut out = Vec::new();
    for (_, file, text) in texts {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ConvertError::Bad {
            at: format!("{file}:{}", e.line()),
            why: format!("not valid JSON: {e}"),
        })?;
        let at = |key: &str| {
            let line = text
                .lines()
                .position(|l| l.contains(&format!("\"{key}\"")))
                .map_or(1, |i| i + 1);
            format!("{file}:{line}")
        };
        let mut b = Bond {
            name: v["device"].as_str().unwrap_or("team0").to_string(),
            ..Bond::default()
        };
        let runner = &v["runner"];
        let mode = match runner["name"].as_str().unwrap_or("roundrobin") {
            "roundrobin" => "balance-rr",
            "random" => {
                b.set("packets_per_slave", "0".into(), at("runner"));
                "balance-rr"
            }
            "activebackup" => "active-backup",
            "broadcast" => "broadcast",
            "lacp" => "802.3ad",
            "loadbalance" if runner.get("tx_balancer").is_some() => "adaptive",
            "loadbalance" => "balance-xor",
            other => {
                b.drop_(
                    at("runner"),
                    format!("runner {other}"),
                    "no lagkit mode for it",
                );
                "balance-rr"
            }
        };
        b.set("mode", q(mode), at("runner"));
        if let Some(h) = runner["tx_hash"].as_array() {
            let f: Vec<&str> = h.iter().filter_map(|x| x.as_str()).collect();
            let policy = if mode == "adaptive" {
                None
            } else if f.iter().any(|x| ["l4", "tcp", "udp", "sctp"].contains(x)) {
                Some("layer3+4")
            } else if f.iter().any(|x| ["ip", "ipv4", "ipv6", "l3"].contains(x)) {
                Some("layer2+3")
            } else if f.iter().any(|x| ["eth", "l2"].contains(x)) {
                Some("layer2")
            } else {
                None
            };
            match policy {
                Some(p) => b.set(
                    "xmit_hash_policy",
                    q(p),
                    format!(
                        "{} (tx_hash {f:?}, the closest Linux policy)",
                        at("tx_hash")
                    ),
                ),
                None => b.drop_(
                    at("tx_hash"),
                    format!("tx_hash {f:?}"),
                    "lagkit's adaptive mode hashes with its own strong policy",
                ),
            }
        }
        if let Some(a) = runner["active"].as_bool() {
            b.set("lacp_active", a.to_string(), at("active"));
        }
        if let Some(f) = runner["fast_rate"].as_bool() {
            b.set(
                "lacp_rate",
                q(if f { "fast" } else { "slow" }),
                at("fast_rate"),
            );
        }
        if let Some(n) = runner["min_ports"].as_u64() {
            b.set("min_links", n.to_string(), at("min_ports"));
        }
        if let Some(n) = runner["sys_prio"].as_u64() {
            b.set("ad_actor_sys_prio", n.to_string(), at("sys_prio"));
        }
        if let Some(s) = runner["agg_select_policy"].as_str() {
            b.drop_(
                at("agg_select_policy"),
                format!("agg_select_policy {s}"),
                "lagkit's bond carries one aggregator, kept while it has a port",
            );
        }
        if let Some(interval) = runner["tx_balancer"]["balancing_interval"].as_u64() {
            // Tenths of a second.
            b.set(
                "adaptive_interval",
                (interval * 100).to_string(),
                at("balancing_interval"),
            );
        }
        if let Some(hw) = v["hwaddr"].as_str() {
            b.set("mac", q(hw), at("hwaddr"));
        }
        teamd_watch(&mut b, &v["link_watch"], &at);
        let mut members = Vec::new();
        let mut prios = Vec::new();
        // activebackup: the port of the highest `prio` is active, and a
        // `sticky` one stays so until it fails.
        let mut best: Option<(i64, String, bool)> = None;
        if let Some(ports) = v["ports"].as_object() {
            // List them in the file's order, whatever the map's.
            let mut names: Vec<&String> = ports.keys().collect();
            names.sort_by_key(|n| text.find(&format!("\"{n}\"")).unwrap_or(usize::MAX));
            for n in names {
                members.push(n.clone());
                let p = &ports[n.as_str()];
                if let Some(pr) = p["lacp_prio"].as_u64() {
                    prios.push(format!("{n} = {pr}"));
                }
                if let Some(pr) = p["prio"].as_i64() {
                    if best.as_ref().is_none_or(|(b, _, _)| pr > *b) {
                        best = Some((pr, n.clone(), p["sticky"].as_bool() == Some(true)));
                    }
                }
                if p.get("link_watch").is_some() {
                    b.drop_(
                        at(n),
                        format!("ports {n}: link_watch"),
                        "lagkit's link watchers apply to every member",
                    );
                }
            }
        }
        if let Some((_, port, sticky)) = best.filter(|_| mode == "active-backup") {
            b.set(
                "primary",
                q(&port),
                format!("{} (the port of the highest prio)", at(&port)),
            );
            if sticky {
                b.set(
                    "primary_reselect",
                    q("failure"),
                    format!("{} (sticky)", at(&port)),
                );
            }
        }
        b.set("members", qlist(&members), at("ports"));
        if !prios.is_empty() {
            b.set(
                "ad_actor_port_prio",
                format!("{{ {} }}", prios.join(", ")),
                at("lacp_prio"),
            );
        }
        if let Some(n) = v["notify_peers"]["count"].as_u64() {
            b.set("num_grat_arp", n.to_string(), at("notify_peers"));
        } else if mode != "active-backup" {
            b.set(
                "num_grat_arp",
                "0".into(),
                "teamd's default: no peer notifications outside activebackup".into(),
            );
        }
        b.linux_defaults();
        out.push(b);
    }
    Ok(out)
}

fn teamd_watch(b: &mut Bond, w: &serde_json::Value, at: &dyn Fn(&str) -> String) {
    let watches: Vec<&serde_json::Value> = match w {
        serde_json::Value::Array(a) => a.iter().collect(),
        serde_json::Value::Object(_) => vec![w],
        _ => Vec::new(),
    };
    for w in watches {
        match w["name"].as_str().unwrap_or("ethtool") {
            "ethtool" => {
                if let Some(d) = w["delay_up"].as_u64() {
                    b.set("updelay", d.to_string(), at("delay_up"));
                }
                if let Some(d) = w["delay_down"].as_u64() {
                    b.set("downdelay", d.to_string(), at("delay_down"));
                }
            }
            "arp_ping" => {
                if let Some(t) = w["target_host"].as_str() {
                    b.set("arp_ip_target", qlist(&[t]), at("target_host"));
                }
                b.set(
                    "arp_interval",
                    w["interval"].as_u64().unwrap_or(1000).to_string(),
                    at("arp_ping"),
                );
                b.set(
                    "arp_missed_max",
                    w["missed_max"].as_u64().unwrap_or(3).to_string(),
                    at("arp_ping"),
                );
                if w["validate_active"].as_bool() == Some(true)
                    || w["validate_inactive"].as_bool() == Some(true)
                {
                    b.set("arp_validate", q("all"), at("validate_active"));
                }
            }
            other => b.drop_(
                at("link_watch"),
                format!("link_watch {other}"),
                "lagkit watches links by carrier, miimon or ARP",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_bondcfg::{BondConfig, LacpRate, Mode};

    fn dir(d: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/dialects")
            .join(d)
    }

    /// Converts `paths` (under tests/dialects) and reads the TOML back as
    /// lagkit runs it.
    fn bonds(paths: &[&str]) -> (Converted, Vec<BondConfig>) {
        let paths: Vec<PathBuf> = paths.iter().map(|p| dir(p)).collect();
        let c = convert(&paths).unwrap();
        let text = c.to_toml();
        let (cfgs, _) =
            lagkit_bondcfg::parse_str(&text, "converted").unwrap_or_else(|e| panic!("{e}\n{text}"));
        (c, cfgs)
    }

    fn bond<'a>(cfgs: &'a [BondConfig], name: &str) -> &'a BondConfig {
        cfgs.iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("no {name}: {cfgs:?}"))
    }

    fn addrs(b: &BondConfig) -> Vec<String> {
        b.address.iter().map(|a| a.to_string()).collect()
    }

    /// The LACP bond every dialect's files describe: 802.3ad, fast,
    /// layer3+4, MTU 9000, eno1 and eno2, 192.0.2.10/24.
    fn is_the_lacp_bond(b: &BondConfig) {
        assert_eq!(b.mode, Mode::Lacp);
        assert_eq!(b.members, ["eno1", "eno2"]);
        assert_eq!(b.xmit_hash_policy.to_string(), "layer3+4");
        assert_eq!(b.lacp_rate, LacpRate::Fast);
        assert_eq!(b.mtu, 9000);
        assert!(
            addrs(b).contains(&"192.0.2.10/24".to_string()),
            "{:?}",
            b.address
        );
    }

    #[test]
    fn netplan_yaml() {
        let (c, cfgs) = bonds(&["netplan/10-bond0-lacp.yaml"]);
        assert_eq!(c.dialect, "netplan");
        let b = bond(&cfgs, "bond0");
        is_the_lacp_bond(b);
        assert_eq!(
            (b.miimon, b.updelay, b.downdelay, b.min_links),
            (100, 200, 200, 1)
        );
        assert_eq!(addrs(b), ["192.0.2.10/24", "2001:db8:10::10/64"]);
        assert_eq!(
            b.mac.map(|m| m.to_string()).as_deref(),
            Some("02:00:00:00:00:10")
        );
        // Routes and resolvers are said, not carried.
        let dropped: Vec<&str> = c.dropped().iter().map(|d| d.setting.as_str()).collect();
        assert_eq!(dropped, ["routes", "nameservers"]);
        let (_, cfgs) = bonds(&["netplan/20-bond1-active-backup.yaml"]);
        let b = bond(&cfgs, "bond1");
        assert_eq!(b.mode, Mode::ActiveBackup);
        assert_eq!(b.primary.as_deref(), Some("eno3"));
        // 1s, 2s, 400ms: a delay is kept in whole polling intervals, by
        // Linux and lagkit alike, so 400 ms under miimon 1000 is 0.
        assert_eq!((b.miimon, b.updelay, b.downdelay), (1000, 2000, 0));
        assert_eq!(b.num_grat_arp, 3);
        let (c, cfgs) = bonds(&["netplan/30-bond2-balance-xor.yaml"]);
        let b = bond(&cfgs, "bond2");
        assert_eq!(b.mode, Mode::BalanceXor);
        assert_eq!(b.xmit_hash_policy.to_string(), "layer2+3");
        assert_eq!(b.arp_interval, 500);
        assert_eq!(b.arp_ip_target.len(), 2);
        assert!(c.dropped().is_empty(), "{:?}", c.dropped());
    }

    #[test]
    fn systemd_networkd_files_written_by_netplan() {
        let (c, cfgs) = bonds(&["networkd"]);
        assert_eq!(c.dialect, "systemd-networkd");
        let b = bond(&cfgs, "bond0");
        is_the_lacp_bond(b);
        // MIIMonitorSec=100ms, not 100 s.
        assert_eq!((b.miimon, b.updelay, b.downdelay), (100, 200, 200));
        let b = bond(&cfgs, "bond1");
        assert_eq!(
            (b.mode, b.primary.as_deref()),
            (Mode::ActiveBackup, Some("eno3"))
        );
        assert_eq!(b.members, ["eno3", "eno4"]);
        let dropped: Vec<&str> = c.dropped().iter().map(|d| d.setting.as_str()).collect();
        assert!(
            dropped.contains(&"[Route] Gateway=192.0.2.1"),
            "{dropped:?}"
        );
        assert!(
            !dropped.iter().any(|d| d.contains("PermanentMACAddress")),
            "{dropped:?}"
        );
    }

    #[test]
    fn networkmanager_keyfiles_written_by_nmcli() {
        let (c, cfgs) = bonds(&["networkmanager"]);
        assert_eq!(c.dialect, "NetworkManager keyfiles");
        let b = bond(&cfgs, "bond0");
        is_the_lacp_bond(b);
        assert_eq!((b.ad_actor_sys_prio, b.ad_user_port_key), (100, 5));
        assert_eq!(addrs(b), ["192.0.2.10/24", "2001:db8:10::10/64"]);
        assert_eq!(bond(&cfgs, "bond1").mode, Mode::ActiveBackup);
        // The gateway of address1= is said, not carried.
        assert!(c
            .dropped()
            .iter()
            .any(|d| d.setting.contains("gateway 192.0.2.1")));
    }

    #[test]
    fn ifupdown_stanzas() {
        let (c, cfgs) = bonds(&["ifupdown/interfaces"]);
        assert_eq!(c.dialect, "ifupdown");
        let b = bond(&cfgs, "bond0");
        is_the_lacp_bond(b);
        assert_eq!(addrs(b), ["192.0.2.10/24", "2001:db8:10::10/64"]);
        // Ports named by their own bond-master; a netmask is a prefix.
        let b = bond(&cfgs, "bond1");
        assert_eq!(b.members, ["eno3", "eno4"]);
        assert_eq!(addrs(b), ["198.51.100.20/24"]);
        // A numeric mode and underscore spellings.
        let b = bond(&cfgs, "bond2");
        assert_eq!(b.mode, Mode::BalanceXor);
        assert_eq!(b.xmit_hash_policy.to_string(), "layer2+3");
    }

    #[test]
    fn teamd_json() {
        let (c, cfgs) = bonds(&["teamd/team0-lacp.json"]);
        assert_eq!(c.dialect, "teamd");
        let b = bond(&cfgs, "team0");
        assert_eq!((b.mode, b.lacp_rate), (Mode::Lacp, LacpRate::Fast));
        assert_eq!(b.xmit_hash_policy.to_string(), "layer3+4");
        assert_eq!(b.ad_actor_port_prio.of("eth1"), 100);
        assert_eq!((b.updelay, b.downdelay), (200, 100));
        let (_, cfgs) = bonds(&["teamd/team1-activebackup.json"]);
        let b = bond(&cfgs, "team1");
        assert_eq!(
            (b.mode, b.primary.as_deref()),
            (Mode::ActiveBackup, Some("eth3"))
        );
        assert_eq!((b.arp_interval, b.arp_missed_max), (500, 4));
    }

    #[test]
    fn a_file_without_a_bond_and_an_unknown_one_are_refused() {
        let d = std::env::temp_dir().join(format!("lkt-convert-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let eth = d.join("eth.network");
        std::fs::write(&eth, "[Match]\nName=eth0\n[Network]\nDHCP=yes\n").unwrap();
        assert!(matches!(
            convert(std::slice::from_ref(&eth)),
            Err(ConvertError::NoBond(_))
        ));
        let other = d.join("other.txt");
        std::fs::write(&other, "hello\n").unwrap();
        assert!(matches!(convert(&[other]), Err(ConvertError::Unknown(_))));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn durations_as_each_dialect_writes_them() {
        assert_eq!(millis("100", 1.0), Some(100));
        assert_eq!(
            millis("100", 1000.0),
            Some(100_000),
            "networkd: bare seconds"
        );
        assert_eq!(millis("100ms", 1000.0), Some(100));
        assert_eq!(millis("1s 500ms", 1.0), Some(1500));
        assert_eq!(millis("0.5s", 1.0), Some(500));
        assert_eq!(millis("2min", 1.0), Some(120_000));
        assert_eq!(millis("soon", 1.0), None);
        assert_eq!(prefix_of("255.255.255.0"), Some(24));
        assert_eq!(prefix_of("255.0.255.0"), None);
        assert_eq!(prefix_of("16"), Some(16));
        assert_eq!(q("a\"b"), "\"a\\\"b\"");
    }
}
