//! Host bonds as other tools write them: ifupdown, systemd-networkd (with
//! `.link` files), netplan ([`crate::netplan`]), NetworkManager keyfiles,
//! teamd JSON and AIX's `lsattr -El entX`.
//!
//! Each dialect is read into the same [`Options`] (the Linux bonding option
//! names every one of them wraps), and [`Options::host`] turns those into
//! the facts of a host's end. The formats are line-based INI-like files or
//! JSON; no crate reads all of them the same way, and each reader here is a
//! few lines.

use crate::facts::{link_files, Host, HostMode, LinkFile, MacSource, ReadError};
use crate::Loc;
use lagkit_bondcfg::{LacpRate, Mode};
use std::collections::HashMap;

/// Linux bonding options, as a dialect gave them, with their lines.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The bond's name.
    pub name: String,
    /// Option name (Linux's: mode, xmit_hash_policy, lacp_rate, ad_lacp_active,
    /// min_links, fail_over_mac, ad_actor_system; and mtu, mac_address) ->
    /// (value, line).
    pub opts: HashMap<&'static str, (String, usize)>,
    /// Member interfaces.
    pub members: Vec<String>,
    /// The line that starts the bond.
    pub line: usize,
    /// Members' own MTUs: name -> (value, line).
    pub member_mtus: HashMap<String, (String, usize)>,
    /// systemd `.link` sections given with the bond, in udev's order.
    pub links: Vec<LinkFile>,
    /// systemd-networkd creates the bond, so without a `.link` of its own
    /// systemd's `99-default.link` (`MACAddressPolicy=persistent`) applies.
    pub systemd: bool,
}

impl Options {
    pub(crate) fn set(&mut self, key: &'static str, value: &str, line: usize) {
        self.opts
            .insert(key, (value.trim().trim_matches('"').to_string(), line));
    }

    /// The host facts these options describe.
    pub fn host(&self, file: &str) -> Result<Host, ReadError> {
        let bad = |line: usize, why: String| ReadError::Bad {
            file: file.into(),
            line,
            why,
        };
        let get = |k: &str| self.opts.get(k);
        let mode: Mode = match get("mode") {
            Some((v, l)) => v.parse().map_err(|e| bad(*l, format!("{e}")))?,
            None => Mode::BalanceRr, // Linux's default mode
        };
        let fast = match get("lacp_rate") {
            Some((v, l)) => {
                v.parse::<LacpRate>().map_err(|e| bad(*l, format!("{e}")))? == LacpRate::Fast
            }
            None => false,
        };
        let active = get("ad_lacp_active")
            .is_none_or(|(v, _)| !matches!(v.as_str(), "off" | "0" | "false" | "no"));
        let number = |k: &str| -> Result<Option<(u32, usize)>, ReadError> {
            get(k)
                .map(|(v, l)| {
                    v.parse::<u32>()
                        .map(|n| (n, *l))
                        .map_err(|_| bad(*l, format!("{k} {v:?} is not a number")))
                })
                .transpose()
        };
        let loc = |line: usize| Loc {
            file: file.into(),
            line: Some(line),
        };
        let mode_of = HostMode::of(mode, active, fast);
        let hashes = matches!(mode, Mode::Lacp | Mode::BalanceXor);
        let mut members = crate::facts::ports(&self.members);
        for m in &mut members {
            if let Some((v, l)) = self.member_mtus.get(&m.name) {
                let n = v
                    .parse::<u32>()
                    .map_err(|_| bad(*l, format!("mtu {v:?} of {} is not a number", m.name)))?;
                m.mtu = Some((n, loc(*l)));
            }
        }
        let mac = if let Some((_, l)) = get("mac_address").or_else(|| get("ad_actor_system")) {
            Some((MacSource::Pinned, loc(*l)))
        } else if let Some(link) = LinkFile::first_for(&self.links, &self.name) {
            link.source()
        } else {
            self.systemd
                .then(|| (MacSource::MachineId { default: true }, loc(self.line)))
        };
        Ok(Host {
            bond: self.name.clone(),
            loc: loc(get("mode").map_or(self.line, |m| m.1)),
            mode: mode_of,
            hash: hashes.then(|| get("xmit_hash_policy").map_or("layer2".into(), |h| h.0.clone())),
            unused_hash: None,
            mtu: number("mtu")?.map(|(m, l)| (m, loc(l))),
            members,
            min_links: number("min_links")?.map_or(0, |m| m.0),
            max_bundle: None,
            mac,
            fail_over_mac: get("fail_over_mac")
                .filter(|(v, _)| !matches!(v.as_str(), "none" | "0"))
                .map(|(v, l)| (v.clone(), loc(*l))),
            running: None,
        })
    }
}

/// A dialect's reader: (file name, text) to the bonds it defines.
pub type Reader = fn(&str, &str) -> Result<Vec<Options>, ReadError>;

/// Which dialect a text is in, if it is one of these.
pub fn sniff(text: &str) -> Option<Reader> {
    let has = |s: &str| text.lines().any(|l| l.trim_start().starts_with(s));
    if crate::netplan::sniff(text) {
        Some(crate::netplan::netplan)
    } else if text.trim_start().starts_with('{') && text.contains("\"runner\"") {
        Some(teamd)
    } else if has("iface ") {
        Some(ifupdown)
    } else if has("[NetDev]") || (has("[Network]") && has("Bond=")) {
        Some(networkd)
    } else if has("[connection]") {
        Some(keyfile)
    } else if text.lines().any(|l| {
        let t = l.trim_start();
        (t.starts_with("adapter_names") || t.starts_with("hash_mode")) && !t.contains('=')
    }) {
        Some(aix)
    } else {
        None
    }
}

/// INI sections: (section, key, value, line).
pub(crate) fn ini(text: &str) -> Vec<(String, String, String, usize)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if let Some(s) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
        } else if let Some((k, v)) = t.split_once('=') {
            out.push((
                section.clone(),
                k.trim().to_string(),
                v.trim().to_string(),
                i + 1,
            ));
        }
    }
    out
}

/// Debian's `/etc/network/interfaces` (`bond-mode`, `bond-slaves`, ...).
pub fn ifupdown(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    let mut bonds: Vec<Options> = Vec::new();
    let mut members_of: Vec<(String, String)> = Vec::new();
    let mut cur: Option<Options> = None;
    let mut cur_iface = String::new();
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["iface", name, ..] => {
                bonds.extend(
                    cur.take()
                        .filter(|o| !o.opts.is_empty() || !o.members.is_empty()),
                );
                cur_iface = (*name).to_string();
                cur = Some(Options {
                    name: (*name).to_string(),
                    line,
                    ..Options::default()
                });
            }
            [k, rest @ ..] if cur.is_some() => {
                let v = rest.join(" ");
                let o = cur.as_mut().expect("checked");
                match *k {
                    "bond-mode" | "bond_mode" => o.set("mode", &v, line),
                    "bond-xmit-hash-policy" | "bond_xmit_hash_policy" => {
                        o.set("xmit_hash_policy", &v, line)
                    }
                    "bond-lacp-rate" | "bond_lacp_rate" => o.set("lacp_rate", &v, line),
                    "bond-min-links" | "bond_min_links" => o.set("min_links", &v, line),
                    "bond-ad-lacp-active" => o.set("ad_lacp_active", &v, line),
                    "mtu" => o.set("mtu", &v, line),
                    "hwaddress" => o.set("mac_address", &v, line),
                    "bond-fail-over-mac" | "bond_fail_over_mac" => o.set("fail_over_mac", &v, line),
                    "bond-ad-actor-system" | "bond_ad_actor_system" => {
                        o.set("ad_actor_system", &v, line)
                    }
                    "bond-slaves" | "bond_slaves" if v != "none" => {
                        o.members = rest.iter().map(|s| s.to_string()).collect()
                    }
                    "bond-master" | "bond_master" => members_of.push((v, cur_iface.clone())),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    bonds.extend(
        cur.take()
            .filter(|o| !o.opts.is_empty() || !o.members.is_empty()),
    );
    for (bond, member) in members_of {
        if let Some(b) = bonds.iter_mut().find(|b| b.name == bond) {
            if !b.members.contains(&member) {
                b.members.push(member);
            }
        }
    }
    let mtus: HashMap<String, (String, usize)> = bonds
        .iter()
        .filter_map(|o| Some((o.name.clone(), o.opts.get("mtu")?.clone())))
        .collect();
    bonds.retain(|b| b.opts.contains_key("mode") || !b.members.is_empty());
    for b in &mut bonds {
        b.member_mtus = b
            .members
            .iter()
            .filter_map(|m| Some((m.clone(), mtus.get(m)?.clone())))
            .collect();
    }
    if bonds.is_empty() {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "an ifupdown file without a bond (no bond-mode or bond-slaves)".into(),
        });
    }
    Ok(bonds)
}

/// systemd-networkd: a `.netdev` with `[Bond]`, and `.network` files with
/// `Bond=` (several may be concatenated: `cat *.netdev *.network`).
pub fn networkd(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    let mut b = Options {
        systemd: true,
        links: link_files(file, text),
        ..Options::default()
    };
    let mut matched = String::new();
    let mut members = Vec::new();
    // A .network's [Link] (MTUBytes=, MACAddress=), by the name it matches.
    let mut link_of: Vec<(String, &'static str, String, usize)> = Vec::new();
    let mut prev = String::new();
    for (sec, k, v, line) in ini(text) {
        // Each [Match] starts the next file's (a .link's matches no name).
        if sec == "Match" && prev != "Match" {
            matched.clear();
        }
        prev.clone_from(&sec);
        match (sec.as_str(), k.as_str()) {
            ("NetDev", "Name") => {
                b.name = v;
                b.line = line;
            }
            ("NetDev", "MTUBytes") => b.set("mtu", &v, line),
            ("NetDev", "MACAddress") => b.set("mac_address", &v, line),
            ("Bond", "Mode") => b.set("mode", &v, line),
            ("Bond", "TransmitHashPolicy") => b.set("xmit_hash_policy", &v, line),
            ("Bond", "LACPTransmitRate") => b.set("lacp_rate", &v, line),
            ("Bond", "MinLinks") => b.set("min_links", &v, line),
            ("Bond", "FailOverMACPolicy") => b.set("fail_over_mac", &v, line),
            ("Bond", "AdActorSystem") => b.set("ad_actor_system", &v, line),
            ("Match", "Name") => matched = v,
            ("Link", "MTUBytes") => link_of.push((matched.clone(), "mtu", v, line)),
            ("Link", "MACAddress") => link_of.push((matched.clone(), "mac_address", v, line)),
            ("Network", "Bond") => members.push((v, matched.clone())),
            _ => {}
        }
    }
    b.members = members
        .iter()
        .filter(|(bond, _)| *bond == b.name || b.name.is_empty())
        .map(|(_, m)| m.clone())
        .collect();
    for (name, key, v, line) in link_of {
        if name == b.name && !name.is_empty() {
            b.set(key, &v, line);
        } else if key == "mtu" && b.members.contains(&name) {
            b.member_mtus.insert(name, (v, line));
        }
    }
    if b.name.is_empty() && !b.opts.contains_key("mode") {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "systemd-networkd files without a [NetDev] bond: give the .netdev too".into(),
        });
    }
    Ok(vec![b])
}

/// NetworkManager keyfiles: the bond's `[bond]` section and its ports'
/// `controller=`/`master=` (several files may be concatenated).
pub fn keyfile(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    let mut b = Options::default();
    let mut iface = String::new();
    let mut is_bond = false;
    let mut members = Vec::new();
    for (sec, k, v, line) in ini(text) {
        match (sec.as_str(), k.as_str()) {
            ("connection", "interface-name") => iface = v,
            ("connection", "type") => {
                is_bond = v == "bond";
                if is_bond {
                    b.line = line;
                }
            }
            ("connection", "controller" | "master") => members.push((v, iface.clone())),
            ("bond", "mode") => b.set("mode", &v, line),
            ("bond", "xmit_hash_policy") => b.set("xmit_hash_policy", &v, line),
            ("bond", "lacp_rate") => b.set("lacp_rate", &v, line),
            ("bond", "min_links") => b.set("min_links", &v, line),
            ("bond", "fail_over_mac") => b.set("fail_over_mac", &v, line),
            ("bond", "ad_actor_system") => b.set("ad_actor_system", &v, line),
            ("ethernet", "mtu") if is_bond => b.set("mtu", &v, line),
            // NM's named policies (random, stable, preserve, permanent) are no
            // address; only a MAC pins it.
            ("ethernet", "cloned-mac-address") if is_bond && v.contains(':') => {
                b.set("mac_address", &v, line)
            }
            _ => {}
        }
        if is_bond && !iface.is_empty() {
            b.name = iface.clone();
        }
    }
    b.members = members
        .into_iter()
        .filter(|(bond, _)| *bond == b.name)
        .map(|(_, m)| m)
        .collect();
    if b.name.is_empty() {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "NetworkManager keyfiles without a connection of type=bond".into(),
        });
    }
    Ok(vec![b])
}

/// teamd's JSON configuration (`teamdctl team0 config dump`).
pub fn teamd(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    #[derive(serde::Deserialize)]
    struct Runner {
        name: String,
        #[serde(default)]
        active: Option<bool>,
        #[serde(default)]
        fast_rate: Option<bool>,
        #[serde(default)]
        tx_hash: Option<Vec<String>>,
        #[serde(default)]
        min_ports: Option<u32>,
    }
    #[derive(serde::Deserialize)]
    struct Team {
        device: String,
        runner: Runner,
        #[serde(default)]
        ports: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let t: Team = serde_json::from_str(text).map_err(|e| ReadError::Bad {
        file: file.into(),
        line: e.line(),
        why: format!("teamd JSON: {e}"),
    })?;
    let line = text
        .lines()
        .position(|l| l.contains("\"runner\""))
        .map_or(1, |i| i + 1);
    let mut b = Options {
        name: t.device,
        line,
        members: t.ports.into_keys().collect(),
        ..Options::default()
    };
    let mode = match t.runner.name.as_str() {
        "lacp" => "802.3ad",
        "loadbalance" => "balance-xor",
        "roundrobin" | "random" => "balance-rr",
        "activebackup" => "active-backup",
        "broadcast" => "broadcast",
        other => {
            return Err(ReadError::Bad {
                file: file.into(),
                line,
                why: format!("unknown teamd runner {other:?}"),
            })
        }
    };
    b.set("mode", mode, line);
    if let Some(a) = t.runner.active {
        b.set("ad_lacp_active", if a { "on" } else { "off" }, line);
    }
    if t.runner.fast_rate == Some(true) {
        b.set("lacp_rate", "fast", line);
    }
    if let Some(n) = t.runner.min_ports {
        b.set("min_links", &n.to_string(), line);
    }
    // teamd's default tx_hash is ["eth", "ipv4", "ipv6"]: addresses only.
    let hash = t
        .runner
        .tx_hash
        .unwrap_or_else(|| vec!["eth".into(), "ipv4".into(), "ipv6".into()]);
    let l4 = hash
        .iter()
        .any(|h| matches!(h.as_str(), "l4" | "tcp" | "udp" | "sctp"));
    let l3 = hash
        .iter()
        .any(|h| matches!(h.as_str(), "ipv4" | "ipv6" | "ip" | "l3"));
    b.set(
        "xmit_hash_policy",
        if l4 {
            "layer3+4"
        } else if l3 {
            "layer2+3"
        } else {
            "layer2"
        },
        line,
    );
    Ok(vec![b])
}

/// AIX `lsattr -El entX` of an EtherChannel.
pub fn aix(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    let mut b = Options {
        name: std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("ent")
            .to_string(),
        line: 1,
        ..Options::default()
    };
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["adapter_names", v, ..] => b.members = v.split(',').map(str::to_string).collect(),
            ["mode", v, ..] => b.set(
                "mode",
                match *v {
                    "standard" => "balance-xor",
                    "round_robin" => "balance-rr",
                    "netif_backup" => "active-backup",
                    other => other,
                },
                line,
            ),
            ["hash_mode", v, ..] => b.set("xmit_hash_policy", &format!("aix:{v}"), line),
            ["use_jumbo_frame", "yes", ..] => b.set("mtu", "9000", line),
            _ => {}
        }
    }
    if b.members.is_empty() {
        return Err(ReadError::Bad {
            file: file.into(),
            line: 1,
            why: "no adapter_names line: is this `lsattr -El` of an EtherChannel (entX)?".into(),
        });
    }
    Ok(vec![b])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(file: &str, text: &str) -> Host {
        let read = sniff(text).expect("dialect");
        read(file, text).unwrap()[0].host(file).unwrap()
    }

    #[test]
    fn ifupdown_bond() {
        let h = host(
            "interfaces",
            "auto bond0\niface bond0 inet static\n    address 10.0.0.1/24\n    bond-slaves eth0 eth1\n    bond-mode 802.3ad\n    bond-lacp-rate 1\n    bond-xmit-hash-policy layer2+3\n    mtu 9000\n",
        );
        assert_eq!(h.bond, "bond0");
        assert_eq!(
            h.mode,
            HostMode::Lacp {
                active: true,
                fast: true
            }
        );
        assert_eq!(h.hash.as_deref(), Some("layer2+3"));
        assert_eq!(
            h.mtu.as_ref().map(|m| (m.0, m.1.line)),
            Some((9000, Some(8)))
        );
        assert_eq!(h.members.len(), 2);
        assert_eq!(h.loc.line, Some(5));
    }

    #[test]
    fn networkd_and_keyfiles() {
        let h = host(
            "bond0.netdev",
            "[NetDev]\nName=bond0\nKind=bond\nMTUBytes=9000\n\n[Bond]\nMode=802.3ad\nTransmitHashPolicy=layer3+4\nLACPTransmitRate=fast\n\n[Match]\nName=eth0\n[Network]\nBond=bond0\n",
        );
        assert_eq!(h.members.len(), 1);
        assert_eq!(
            h.mode,
            HostMode::Lacp {
                active: true,
                fast: true
            }
        );
        let h = host(
            "bond0.nmconnection",
            "[connection]\nid=bond0\ntype=bond\ninterface-name=bond0\n\n[bond]\nmode=balance-rr\n\n[ethernet]\nmtu=1500\n",
        );
        assert_eq!(h.mode, HostMode::RoundRobin);
        assert_eq!(h.mtu.as_ref().map(|m| m.0), Some(1500));
    }

    #[test]
    fn teamd_and_aix() {
        let h = host(
            "team0.json",
            r#"{"device": "team0", "runner": {"name": "lacp", "active": false, "fast_rate": true}, "ports": {"eth1": {}, "eth2": {}}}"#,
        );
        assert_eq!(
            h.mode,
            HostMode::Lacp {
                active: false,
                fast: true
            }
        );
        assert_eq!(
            h.hash.as_deref(),
            Some("layer2+3"),
            "teamd's default tx_hash reads addresses only"
        );
        let h = host(
            "ent6",
            "adapter_names   ent2,ent4      EtherChannel Adapters      True\nmode            8023ad         EtherChannel mode          True\nhash_mode       src_dst_port   Determines how outgoing    True\nuse_jumbo_frame yes            Enable Jumbo Frames        True\n",
        );
        assert_eq!(
            h.mode,
            HostMode::Lacp {
                active: true,
                fast: false
            }
        );
        assert_eq!(h.hash.as_deref(), Some("aix:src_dst_port"));
        assert_eq!(h.mtu.as_ref().map(|m| m.0), Some(9000));
        let e = teamd("t.json", "{\"device\": 1}").unwrap_err();
        assert!(e.to_string().contains("t.json:1"), "{e}");
        let e =
            sniff("iface lo inet loopback\n").unwrap()("interfaces", "iface lo inet loopback\n")
                .unwrap_err();
        assert!(e.to_string().contains("without a bond"), "{e}");
    }
}
