//! Turning the raw tables into a [`Topology`]: names checked, links
//! expanded into veth pairs and interface names, each host's bond table
//! completed (members, address, MTU) and validated by `lagkit_bondcfg`,
//! channels and the workload checked against the nodes. Every error points
//! at the value it is about; what works but is probably not meant becomes
//! a warning.

use super::model::{
    valid_lab_name, valid_node, Channel, End, Host, HostBond, Iperf3Spec, Link, LoadBalance,
    LoadSpec, Protocol, Rate, Scale, Switch, SwitchKind, Topology, WorkloadSpec,
};
use super::parse::{
    line_col, Cx, RawChannel, RawHost, RawLink, RawScale, RawTopology, RawWorkload, TopologyError,
};
use lagkit_bondcfg::{BondConfig, Cidr, Engine};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use toml::Spanned;

fn node_name(cx: &Cx<'_>, s: &Spanned<String>, what: &str) -> Result<String, TopologyError> {
    let n = s.get_ref();
    if !valid_node(n) {
        return Err(cx.at(
            s,
            format!("{what} name '{n}': use 1 to 12 of a-z, 0-9 and _ (it goes into namespace and file names)"),
        ));
    }
    Ok(n.clone())
}

/// A node's interfaces: (name, MTU, the node at the other end).
type Ifaces = Vec<(String, u32, String)>;
/// The interfaces of a node, by name.
type IfacesOf<'a> = dyn Fn(&str) -> Ifaces + 'a;

pub(super) fn build(
    cx: &Cx<'_>,
    raw: RawTopology,
    default_name: &str,
) -> Result<Topology, TopologyError> {
    let mut warnings = Vec::new();
    let name = lab_name(cx, &raw, default_name)?;
    let kinds = node_kinds(cx, &raw)?;
    let links = links(cx, &raw, &kinds, &mut warnings)?;
    let ifaces_of = |node: &str| -> Ifaces {
        links
            .iter()
            .flat_map(|l| [(&l.a, &l.b, l.mtu[0]), (&l.b, &l.a, l.mtu[1])])
            .filter(|(e, _, _)| e.node == node)
            .map(|(e, peer, mtu)| (e.iface.clone(), mtu, peer.node.clone()))
            .collect()
    };
    let hosts = hosts(cx, &raw, &ifaces_of, &mut warnings)?;
    let switches = switches(cx, &raw, &ifaces_of, &hosts, &mut warnings)?;
    let workload = match &raw.workload {
        Some(w) => Some(workload(cx, w, &hosts)?),
        None => None,
    };
    let scale = raw.scale.map(|s| match s.into_inner() {
        RawScale::Note(note) => Scale { note, factor: None },
        RawScale::Table { note, factor } => Scale { note, factor },
    });
    Ok(Topology {
        name,
        file: cx.file.to_string(),
        scale,
        hosts,
        switches,
        links,
        workload,
        warnings,
    })
}

/// The lab's name: `name = ...`, else the file's.
fn lab_name(cx: &Cx<'_>, raw: &RawTopology, default_name: &str) -> Result<String, TopologyError> {
    Ok(match &raw.name {
        Some(n) => {
            if !valid_lab_name(n.get_ref()) {
                return Err(cx.at(
                    n,
                    format!(
                        "lab name '{}': use 1 to 24 of a-z, 0-9 and - (not first)",
                        n.get_ref()
                    ),
                ));
            }
            n.get_ref().clone()
        }
        None => {
            if !valid_lab_name(default_name) {
                return Err(cx.err(
                0,
                format!("the file name '{default_name}' is not a valid lab name; add name = \"my-lab\" (1 to 24 of a-z, 0-9 and -)"),
            ));
            }
            default_name.to_string()
        }
    })
}

/// Every node's kind (`host` or `switch`), each name once.
fn node_kinds(
    cx: &Cx<'_>,
    raw: &RawTopology,
) -> Result<BTreeMap<String, &'static str>, TopologyError> {
    let mut kinds: BTreeMap<String, &'static str> = BTreeMap::new();
    for h in &raw.host {
        let n = node_name(cx, &h.name, "host")?;
        if kinds.insert(n.clone(), "host").is_some() {
            return Err(cx.at(&h.name, format!("host '{n}' is defined twice")));
        }
    }
    for s in &raw.switch {
        let n = node_name(cx, &s.name, "switch")?;
        if let Some(k) = kinds.insert(n.clone(), "switch") {
            return Err(cx.at(
                &s.name,
                format!("switch '{n}': a {k} already has this name"),
            ));
        }
    }

    Ok(kinds)
}

/// The links, expanded into veth pairs; interface names per node in file
/// order.
fn links(
    cx: &Cx<'_>,
    raw: &RawTopology,
    kinds: &BTreeMap<String, &'static str>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Link>, TopologyError> {
    let mut links = Vec::new();
    let mut next_if: BTreeMap<String, usize> = BTreeMap::new();
    for l in &raw.link {
        let b = l.between.get_ref();
        if b.len() != 2 {
            return Err(cx.at(
                &l.between,
                "between: name exactly two nodes, e.g. [\"h1\", \"sw\"]".into(),
            ));
        }
        for n in b {
            if !kinds.contains_key(n) {
                let known: Vec<&str> = kinds.keys().map(String::as_str).collect();
                return Err(cx.at(
                    &l.between,
                    format!(
                        "between: no host or switch '{n}' (known: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        if b[0] == b[1] {
            return Err(cx.at(&l.between, format!("between: '{}' linked to itself", b[0])));
        }
        if kinds[&b[0]] == "switch" && kinds[&b[1]] == "switch" {
            return Err(cx.at(
                &l.between,
                "between: switch-to-switch links are not supported yet".into(),
            ));
        }
        let count = match &l.count {
            Some(c) if !(1..=16).contains(c.get_ref()) => {
                return Err(cx.at(c, "count: between 1 and 16 veth pairs".into()))
            }
            Some(c) => *c.get_ref() as usize,
            None => 1,
        };
        let rate = match &l.rate {
            Some(r) => Some(Rate::parse(r.get_ref()).map_err(|e| cx.at(r, e.to_string()))?),
            None => None,
        };
        let mtu = link_mtu(cx, l)?;
        let loss = link_loss(cx, l, &raw.host)?;
        if l.overhead == Some(true) && rate.is_none() {
            warnings.push(format!(
                "{}:{}: overhead = true has no effect on an unshaped link (give a rate)",
                cx.file,
                line_col(cx.text, l.between.span().start).0
            ));
        }
        if mtu[0] != mtu[1] {
            warnings.push(format!(
                "{}:{}: link {} — {}: MTU {} on one end, {} on the other; frames above {} are dropped where they arrive",
                cx.file,
                line_col(cx.text, l.between.span().start).0,
                b[0],
                b[1],
                mtu[0],
                mtu[1],
                mtu[0].min(mtu[1])
            ));
        }
        let mut end = |node: &str| {
            let n = next_if.entry(node.to_string()).or_insert(0);
            *n += 1;
            let prefix = if kinds[node] == "switch" { "p" } else { "e" };
            End {
                node: node.to_string(),
                iface: format!("{prefix}{n}"),
            }
        };
        for _ in 0..count {
            let a = end(&b[0]);
            let bb = end(&b[1]);
            links.push(Link {
                a,
                b: bb,
                rate: rate.clone(),
                overhead: l.overhead.unwrap_or(false),
                mtu,
                loss,
            });
        }
    }
    Ok(links)
}

/// A link's MTU per end (`mtu = N` or `[a, b]`), 1500 by default.
fn link_mtu(cx: &Cx<'_>, l: &RawLink) -> Result<[u32; 2], TopologyError> {
    Ok(match &l.mtu {
        Some(m) => {
            let bad = || {
                cx.at(
                    m,
                    "mtu: a number between 576 and 65535 for both ends, or [a, b] for each end of `between`".into(),
                )
            };
            let one = |v: &toml::Value| match v.as_integer() {
                Some(n) if (576..=65535).contains(&n) => Ok(n as u32),
                _ => Err(bad()),
            };
            match m.get_ref() {
                toml::Value::Array(a) if a.len() == 2 => [one(&a[0])?, one(&a[1])?],
                v @ toml::Value::Integer(_) => {
                    let n = one(v)?;
                    [n, n]
                }
                _ => return Err(bad()),
            }
        }
        None => [1500, 1500],
    })
}

/// A link's injected loss (`fault = { loss = P }`), which needs a bonded
/// host at one end.
fn link_loss(cx: &Cx<'_>, l: &RawLink, hosts: &[RawHost]) -> Result<Option<f64>, TopologyError> {
    let b = l.between.get_ref();
    Ok(match &l.fault {
        None => None,
        Some(f) => {
            let bad = |m: &str| cx.at(f, format!("fault: {m}"));
            let t = f
                .get_ref()
                .as_table()
                .ok_or_else(|| bad("write a table, e.g. fault = { loss = 0.01 }"))?;
            if let Some(k) = t.keys().find(|k| k.as_str() != "loss") {
                return Err(bad(&format!(
                    "'{k}': only loss is injected (lagkit's fault wrapper drops frames; it does not delay them), e.g. fault = {{ loss = 0.01 }}"
                )));
            }
            let p = t
                .get("loss")
                .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                .ok_or_else(|| bad("give loss as a share from 0 to 1, e.g. loss = 0.01"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(bad("loss is a share from 0 to 1 (0.01 = 1%)"));
            }
            // The drops are lagkit's: one end must be a bonded host.
            let bonded = |n: &str| {
                hosts
                    .iter()
                    .any(|h| h.name.get_ref() == n && h.bond.is_some())
            };
            if !b.iter().any(|n| bonded(n)) {
                return Err(bad(&format!(
                    "link {} — {}: neither end runs a lagkit bond, and only lagkit injects faults here (this kernel has no netem); give one of the hosts a bond",
                    b[0], b[1]
                )));
            }
            Some(p)
        }
    })
}

/// The hosts, each with its interfaces and its bond checked.
fn hosts(
    cx: &Cx<'_>,
    raw: &RawTopology,
    ifaces_of: &IfacesOf<'_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Host>, TopologyError> {
    let mut hosts = Vec::new();
    for h in &raw.host {
        let name = h.name.get_ref().clone();
        let ifs = ifaces_of(&name);
        let address = match &h.address {
            Some(a) => {
                a.get_ref().parse::<Cidr>().map_err(|e| {
                    cx.at(
                        a,
                        format!(
                            "address '{}': {e:?}; write e.g. \"10.0.0.1/24\"",
                            a.get_ref()
                        ),
                    )
                })?;
                if !a.get_ref().contains('/') {
                    return Err(cx.at(
                        a,
                        format!(
                            "address '{}': give the prefix length, e.g. \"{}/24\"",
                            a.get_ref(),
                            a.get_ref()
                        ),
                    ));
                }
                Some(a.get_ref().clone())
            }
            None => None,
        };
        if ifs.is_empty() {
            warnings.push(format!("host '{name}' has no link"));
        }
        let bond = match &h.bond {
            Some(t) => Some(host_bond(cx, &name, t, &ifs, address.as_deref(), warnings)?),
            None => {
                if ifs.len() > 1 {
                    return Err(cx.at(
                        &h.name,
                        format!("host '{name}' has {} links but no bond; give it a bond table (bond = {{ mode = \"802.3ad\" }})", ifs.len()),
                    ));
                }
                None
            }
        };
        hosts.push(Host {
            name,
            address,
            bond,
            ifaces: ifs.into_iter().map(|(i, _, _)| i).collect(),
        });
    }

    Ok(hosts)
}

/// The switches, each with its ports and channels checked.
fn switches(
    cx: &Cx<'_>,
    raw: &RawTopology,
    ifaces_of: &IfacesOf<'_>,
    hosts: &[Host],
    warnings: &mut Vec<String>,
) -> Result<Vec<Switch>, TopologyError> {
    let mut switches = Vec::new();
    for s in &raw.switch {
        let name = s.name.get_ref().clone();
        let kind = match &s.kind {
            None => SwitchKind::DEFAULT,
            Some(k) => SwitchKind::parse(k.get_ref()).ok_or_else(|| {
                cx.at(
                    k,
                    format!(
                        "kind '{}': use \"lagkit\" (lagkit's own switch) or \"ovs\" (Open vSwitch)",
                        k.get_ref()
                    ),
                )
            })?,
        };
        let engine = match &s.engine {
            None => lagkit_bondcfg::Engine::default(),
            Some(e) => match (kind, e.get_ref().parse::<lagkit_bondcfg::Engine>()) {
                (SwitchKind::Lagkit, Ok(v)) => v,
                (SwitchKind::Ovs, _) => {
                    return Err(cx.at(e, "engine applies to lagkit's switch (kind = \"lagkit\"); Open vSwitch runs its own datapath".to_string()))
                }
                (_, Err(err)) => return Err(cx.at(e, err.to_string())),
            },
        };
        let ports = ifaces_of(&name);
        if ports.is_empty() {
            warnings.push(format!("switch '{name}' has no link"));
        }
        let mut used: BTreeMap<String, String> = BTreeMap::new();
        let mut chan_names = BTreeSet::new();
        let mut channels: Vec<Channel> = Vec::new();
        for c in &s.channel {
            let ch = channel(cx, c, &name, kind, &ports, hosts, &channels, warnings)?;
            if !chan_names.insert(ch.name.clone()) {
                return Err(cx.at(&c.name, format!("channel '{}' is defined twice", ch.name)));
            }
            for p in &ch.ports {
                if let Some(prev) = used.insert(p.clone(), ch.name.clone()) {
                    return Err(cx.at(
                        &c.name,
                        format!(
                            "channel '{}': port {p} is already in channel '{prev}'",
                            ch.name
                        ),
                    ));
                }
            }
            channels.push(ch);
        }
        switches.push(Switch {
            name,
            kind,
            engine,
            channels,
            ports: ports.into_iter().map(|(p, _, _)| p).collect(),
        });
    }

    Ok(switches)
}

/// Channel `c` of switch `name` (of `kind`, with `ports`), checked
/// against the hosts and the switch's channels so far.
#[allow(clippy::too_many_arguments)]
fn channel(
    cx: &Cx<'_>,
    c: &RawChannel,
    name: &str,
    kind: SwitchKind,
    ports: &[(String, u32, String)],
    hosts: &[Host],
    channels: &[Channel],
    warnings: &mut Vec<String>,
) -> Result<Channel, TopologyError> {
    let cname = c.name.get_ref();
    if cname.is_empty()
        || cname.len() > 15
        || !cname
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
        || ports.iter().any(|(p, _, _)| p == cname)
        || cname == "br0"
    {
        return Err(cx.at(
            &c.name,
            format!(
                "channel name '{cname}': 1 to 15 of a-z, 0-9, _ and -, not a port name nor br0"
            ),
        ));
    }
    let (host, cports) = match (&c.host, &c.ports) {
        (Some(hn), None) => {
            let v: Vec<String> = ports
                .iter()
                .filter(|(_, _, peer)| peer == hn.get_ref())
                .map(|(p, _, _)| p.clone())
                .collect();
            if v.is_empty() {
                return Err(cx.at(
                    hn,
                    format!("host: switch '{name}' has no link to '{}'", hn.get_ref()),
                ));
            }
            (Some(hn.get_ref().clone()), v)
        }
        (None, Some(ps)) => {
            for p in ps.get_ref() {
                if !ports.iter().any(|(q, _, _)| q == p) {
                    let all: Vec<&str> = ports.iter().map(|(q, _, _)| q.as_str()).collect();
                    return Err(cx.at(
                        ps,
                        format!("ports: switch '{name}' has no port '{p}' (its ports: {})", all.join(", ")),
                    ));
                }
            }
            if ps.get_ref().is_empty() {
                return Err(cx.at(ps, "ports: name at least one port".into()));
            }
            (None, ps.get_ref().clone())
        }
        _ => {
            return Err(cx.at(
                &c.name,
                format!("channel '{cname}': give either host = \"HOST\" (every port linked to it) or ports = [\"p1\", ...]"),
            ))
        }
    };
    let protocol = Protocol::parse(c.protocol.get_ref()).ok_or_else(|| {
        cx.at(
            &c.protocol,
            format!(
                "protocol '{}': use {}",
                c.protocol.get_ref(),
                Protocol::NAMES
            ),
        )
    })?;
    let load_balance = match &c.load_balance {
        None => LoadBalance::L4,
        Some(lb) => match lb.get_ref().as_str() {
            "l4" => LoadBalance::L4,
            "l3" => LoadBalance::L3,
            "l2" => LoadBalance::L2,
            other => {
                return Err(cx.at(
                    lb,
                    format!("load_balance '{other}': use l4 (TCP/UDP ports), l3 (IP addresses) or l2 (MAC addresses)"),
                ))
            }
        },
    };
    // Where a load-balance error points: at the key, or else at
    // the channel's name.
    let lb_at = c
        .load_balance
        .as_ref()
        .map_or(c.name.span().start, |s| s.span().start);
    if kind == SwitchKind::Ovs && protocol.is_pagp() {
        return Err(cx.at(
            &c.protocol,
            format!("protocol '{}': Open vSwitch has no PAgP; use kind = \"lagkit\" (lagkit's switch runs it) or an LACP protocol", c.protocol.get_ref()),
        ));
    }
    if kind == SwitchKind::Ovs && protocol != Protocol::None {
        if load_balance == LoadBalance::L3 {
            return Err(cx.err(
                lb_at,
                "load_balance 'l3': Open vSwitch bonds hash on L4 (balance-tcp) or L2 (balance-slb) only; use l4 or l2".into(),
            ));
        }
        if protocol == Protocol::Static && load_balance == LoadBalance::L4 {
            let at = c
                .load_balance
                .as_ref()
                .map_or(c.protocol.span().start, |s| s.span().start);
            return Err(cx.err(
                at,
                "Open vSwitch's balance-tcp needs negotiated LACP (a static channel would carry nothing); use load_balance = \"l2\" (balance-slb) or an LACP protocol".into(),
            ));
        }
    }
    if let Some(hn) = &host {
        if let Some(hb) = hosts
            .iter()
            .find(|x| &x.name == hn)
            .and_then(|x| x.bond.as_ref())
        {
            if let Some(why) = protocol.will_not_form_with(hb) {
                warnings.push(format!(
                    "{}:{}: channel '{cname}' and host '{hn}' bond will not agree: {why}",
                    cx.file,
                    line_col(cx.text, c.protocol.span().start).0,
                ));
            }
        }
    }
    if kind == SwitchKind::Lagkit && protocol != Protocol::None {
        // A Catalyst has one `port-channel load-balance` for all
        // its channels, and lagkit's switch reads IOS.
        let other = channels
            .iter()
            .find(|o| o.protocol != Protocol::None && o.load_balance != load_balance);
        if let Some(o) = other {
            return Err(cx.err(
                lb_at,
                format!(
                    "channel '{cname}': load_balance '{}' but channel '{}' has '{}'; lagkit's switch, like a Catalyst, has one `port-channel load-balance` for all its channels: give them the same load_balance (or use kind = \"ovs\")",
                    load_balance.name(), o.name, o.load_balance.name()
                ),
            ));
        }
    }
    Ok(Channel {
        name: cname.clone(),
        host,
        ports: cports,
        protocol,
        load_balance,
    })
}

/// Where `key` is written inside the bond table (an inline table, or a
/// `[host.bond]` table up to the next header), else the table's start.
fn key_offset(cx: &Cx<'_>, span: std::ops::Range<usize>, key: &str) -> usize {
    let end = if cx.text[span.clone()].trim_start().starts_with('{') {
        span.end
    } else {
        let body = cx.text[span.start..]
            .find('\n')
            .map_or(cx.text.len(), |n| span.start + n);
        cx.text[body..]
            .find("\n[")
            .map_or(cx.text.len(), |n| body + n)
    };
    cx.text[span.start..end.max(span.start)]
        .find(key)
        .map_or(span.start, |off| span.start + off)
}

fn host_bond(
    cx: &Cx<'_>,
    host: &str,
    t: &Spanned<toml::Table>,
    ifs: &[(String, u32, String)],
    address: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<HostBond, TopologyError> {
    let mut table = t.get_ref().clone();
    let span = t.span();
    let at_key = |k: &str| key_offset(cx, span.clone(), k);
    if ifs.is_empty() {
        return Err(cx.at(t, format!("host '{host}' has a bond but no links")));
    }
    if !table.contains_key("name") {
        table.insert("name".into(), toml::Value::String("bond0".into()));
    }
    // Members: the host's links unless listed (then they must be links).
    let member_key = ["members", "slaves", "adapter_names"]
        .into_iter()
        .find(|k| table.contains_key(*k));
    let members: Vec<String> = match member_key {
        None => {
            let v: Vec<String> = ifs.iter().map(|(i, _, _)| i.clone()).collect();
            table.insert(
                "members".into(),
                toml::Value::Array(v.iter().cloned().map(toml::Value::String).collect()),
            );
            v
        }
        Some(k) => {
            let v: Vec<String> = table[k]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            for m in &v {
                if !ifs.iter().any(|(i, _, _)| i == m) {
                    let all: Vec<&str> = ifs.iter().map(|(i, _, _)| i.as_str()).collect();
                    return Err(cx.err(
                        at_key(k),
                        format!("host '{host}' bond: member '{m}' is not one of its links ({}); leave '{k}' out to use them all", all.join(", ")),
                    ));
                }
            }
            v
        }
    };
    if let Some(a) = address {
        if table.contains_key("address") {
            return Err(cx.err(
                at_key("address"),
                format!("host '{host}': the address is given both for the host and in its bond; keep one"),
            ));
        }
        table.insert(
            "address".into(),
            toml::Value::Array(vec![toml::Value::String(a.to_string())]),
        );
    }
    let mtus: BTreeSet<u32> = ifs
        .iter()
        .filter(|(i, _, _)| members.contains(i))
        .map(|(_, m, _)| *m)
        .collect();
    if mtus.len() > 1 {
        return Err(cx.at(
            t,
            format!("host '{host}' bond: its links have different MTUs ({mtus:?}); give them one"),
        ));
    }
    let link_mtu = mtus.into_iter().next().unwrap_or(1500);
    if !table.contains_key("mtu") && !table.contains_key("use_jumbo_frame") {
        table.insert("mtu".into(), toml::Value::Integer(link_mtu as i64));
    }
    let text = toml::to_string(&table).map_err(|e| cx.at(t, format!("host '{host}' bond: {e}")))?;
    let (bonds, warns) =
        lagkit_bondcfg::parse_str(&text, "bond").map_err(|e| match e.invalid() {
            Some(i) => {
                let at = i.key.as_deref().map_or(span.start, at_key);
                let key = i
                    .key
                    .as_deref()
                    .map(|k| format!("key '{k}': "))
                    .unwrap_or_default();
                cx.err(at, format!("host '{host}' bond: {key}{}", i.kind))
            }
            None => cx.at(t, format!("host '{host}' bond: {e}")),
        })?;
    let _ = warns; // bondcfg warnings are shown again by `lagkit up` in the host's log.
    let config = match bonds.as_slice() {
        [b] => b.clone(),
        _ => return Err(cx.at(t, format!("host '{host}': one bond per host"))),
    };
    if config.mtu as u32 != link_mtu {
        // Allowed (IBM's 6513 measurements measured MTUs set in only some places), but
        // frames larger than a member's MTU cannot leave: say so.
        warnings.push(format!(
            "{}:{}: host '{host}' bond: mtu {} differs from its links' mtu {link_mtu}; {}",
            cx.file,
            line_col(cx.text, at_key("mtu")).0,
            config.mtu,
            if config.mtu as u32 > link_mtu {
                "frames above the links' MTU are dropped (counted as tx errors)"
            } else {
                "the links' larger MTU goes unused"
            }
        ));
    }
    Ok(HostBond {
        name: config.name.clone(),
        mode: config.mode.to_string(),
        hash: config.xmit_hash_policy.to_string(),
        engine: config.engine.to_string(),
        members: config.members.clone(),
        toml: bond_toml(&config),
        config,
    })
}

/// The file `lagkit up` reads for a host's bond: `to_toml` leaves out
/// values at their defaults, but the engine line is always written, so the
/// file (and a reader of the lab's directory) says which data path the
/// lab asked for.
fn bond_toml(config: &BondConfig) -> String {
    let mut text = config.to_toml();
    if config.engine == Engine::default() {
        let _ = writeln!(text, "engine = \"{}\"", config.engine);
    }
    text
}

fn workload(
    cx: &Cx<'_>,
    w: &Spanned<RawWorkload>,
    hosts: &[Host],
) -> Result<WorkloadSpec, TopologyError> {
    let r = w.get_ref();
    let lagkit_load = match r.kind.get_ref().as_str() {
        "iperf3" => false,
        "lagkit-load" => true,
        other => {
            return Err(cx.at(
                &r.kind,
                format!("kind '{other}': use \"iperf3\" or \"lagkit-load\""),
            ))
        }
    };
    let only = |set: bool, key: &str, kind: &str| -> Result<(), TopologyError> {
        if set {
            Err(cx.at(w, format!("workload: '{key}' is for kind = \"{kind}\"")))
        } else {
            Ok(())
        }
    };
    if lagkit_load {
        only(
            r.flows.is_some(),
            "flows",
            "iperf3 (lagkit-load: procs or conns)",
        )?;
        only(r.bidir.is_some(), "bidir", "iperf3")?;
    } else {
        only(r.migrations.is_some(), "migrations", "lagkit-load")?;
        only(r.sockbuf.is_some(), "sockbuf", "lagkit-load")?;
        for (set, key) in [
            (r.load.is_some(), "load"),
            (r.procs.is_some(), "procs"),
            (r.method.is_some(), "method"),
            (r.conns.is_some(), "conns"),
            (r.size.is_some(), "size"),
        ] {
            only(set, key, "lagkit-load")?;
        }
    }
    let host = |s: &Option<Spanned<String>>, what: &str| -> Result<String, TopologyError> {
        let Some(s) = s else {
            return Err(cx.at(w, format!("workload: give {what} = \"HOST\"")));
        };
        let Some(h) = hosts.iter().find(|h| &h.name == s.get_ref()) else {
            return Err(cx.at(s, format!("{what}: no host '{}'", s.get_ref())));
        };
        if h.address.is_none() {
            return Err(cx.at(s, format!("{what}: host '{}' has no address", h.name)));
        }
        Ok(h.name.clone())
    };
    let server = host(&r.server, "server")?;
    let clients = match (&r.client, &r.clients) {
        (Some(_), Some(c)) => {
            return Err(cx.at(
                c,
                "workload: give 'client' (one host) or 'clients' (a list), not both".into(),
            ))
        }
        (None, Some(list)) if lagkit_load => {
            if list.get_ref().is_empty() {
                return Err(cx.at(list, "clients: name at least one host".into()));
            }
            let mut v = Vec::new();
            for c in list.get_ref() {
                let one = Spanned::new(list.span(), c.clone());
                let h = host(&Some(one), "clients")?;
                if v.contains(&h) {
                    return Err(cx.at(list, format!("clients: '{h}' is named twice")));
                }
                v.push(h);
            }
            v
        }
        (None, Some(list)) => return Err(cx.at(
            list,
            "clients: several clients are for kind = \"lagkit-load\"; iperf3 takes one 'client'"
                .into(),
        )),
        _ => vec![host(&r.client, "client")?],
    };
    if clients.contains(&server) {
        return Err(cx.at(
            w,
            "workload: client and server must be different hosts".into(),
        ));
    }
    let client = clients[0].clone();
    let int = |v: &Option<Spanned<i64>>, what: &str, lo: i64, hi: i64, def: i64| match v {
        None => Ok(def),
        Some(s) if (lo..=hi).contains(s.get_ref()) => Ok(*s.get_ref()),
        Some(s) => Err(cx.at(s, format!("{what}: between {lo} and {hi}"))),
    };
    if lagkit_load {
        let load = match &r.load {
            None => "socketprocs".to_string(),
            Some(l) if LoadSpec::LOADS.contains(&l.get_ref().as_str()) => l.get_ref().clone(),
            Some(l) => {
                return Err(cx.at(
                    l,
                    format!("load '{}': use {}", l.get_ref(), LoadSpec::LOADS.join(", ")),
                ))
            }
        };
        let method = match &r.method {
            None => "epoll-et".to_string(),
            Some(m) => match m.get_ref().as_str() {
                "select" | "s" => "select".into(),
                "poll" | "p" => "poll".into(),
                "epoll-et" | "e" => "epoll-et".into(),
                other => {
                    return Err(cx.at(
                        m,
                        format!(
                            "method '{other}': use {} (or s, p, e)",
                            LoadSpec::METHODS.join(", ")
                        ),
                    ))
                }
            },
        };
        if clients.len() > 1 && matches!(load.as_str(), "socketprocs" | "lpm") {
            return Err(cx.at(
                w,
                format!("workload: load '{load}' runs between two hosts; several clients are for stream, maerts, bidir and rr"),
            ));
        }
        if r.migrations.is_some() && load != "lpm" {
            return Err(cx.at(w, "workload: 'migrations' is for load = \"lpm\"".into()));
        }
        return Ok(WorkloadSpec::LagkitLoad(LoadSpec {
            clients,
            server,
            migrations: int(&r.migrations, "migrations", 1, 32, 4)? as u32,
            sockbuf: r
                .sockbuf
                .as_ref()
                .map(|_| int(&r.sockbuf, "sockbuf", 4096, 64 << 20, 131072))
                .transpose()?
                .map(|s| s as u64),
            load,
            procs: int(&r.procs, "procs", 1, 64, 4)? as u32,
            method,
            conns: int(&r.conns, "conns", 1, 128, 1)? as u32,
            size: r
                .size
                .as_ref()
                .map(|_| int(&r.size, "size", 1, 16 << 20, 4096))
                .transpose()?
                .map(|s| s as u64),
            seconds: int(&r.seconds, "seconds", 1, 3600, 10)? as u32,
            port: r
                .port
                .as_ref()
                .map(|_| int(&r.port, "port", 1024, 65000, 7000))
                .transpose()?
                .map(|p| p as u16),
        }));
    }
    Ok(WorkloadSpec::Iperf3(Iperf3Spec {
        client,
        server,
        flows: int(&r.flows, "flows", 1, 128, 8)? as u32,
        seconds: int(&r.seconds, "seconds", 1, 3600, 10)? as u32,
        bidir: r.bidir.unwrap_or(true),
        port: int(&r.port, "port", 1024, 65535, 5201)? as u16,
    }))
}

#[cfg(test)]
mod tests {
    use crate::topology::testing::two_bonded_hosts as topo;
    use crate::topology::{Topology, TopologyError};
    use lagkit_bondcfg::Engine;

    fn parse(text: &str) -> Result<Topology, TopologyError> {
        Topology::parse(text, "t.toml", "t")
    }

    #[test]
    fn engine_per_bond_is_read() {
        for (written, engine) in [
            ("bpf", Engine::Bpf),
            ("userspace", Engine::Userspace),
            ("auto", Engine::Auto),
        ] {
            let t = parse(&topo(&format!(r#"mode = "802.3ad", engine = "{written}""#))).unwrap();
            let b = t.hosts[0].bond.as_ref().unwrap();
            assert_eq!(b.config.engine, engine);
            assert_eq!(b.engine, written);
        }
    }

    /// Two hosts, each on its own port of switch `sw`, with `line` in the
    /// switch's table.
    fn switched(line: &str) -> String {
        format!("[[host]]\nname = \"h1\"\naddress = \"10.0.0.1/24\"\n[[host]]\nname = \"h2\"\naddress = \"10.0.0.2/24\"\n[[switch]]\nname = \"sw\"\n{line}\n[[link]]\nbetween = [\"h1\", \"sw\"]\n[[link]]\nbetween = [\"h2\", \"sw\"]\n")
    }

    #[test]
    fn a_switchs_engine_is_read_and_checked() {
        let t = parse(&switched("")).unwrap();
        assert_eq!(t.switches[0].engine, Engine::Auto);
        let t = parse(&switched(r#"engine = "userspace""#)).unwrap();
        assert_eq!(t.switches[0].engine, Engine::Userspace);
        let e = parse(&switched(r#"engine = "kernel""#)).unwrap_err();
        assert_eq!(e.line, 9, "{e}");
        assert!(e.message.contains("auto, bpf, userspace"), "{e}");
        let e = parse(&switched("kind = \"ovs\"\nengine = \"bpf\"")).unwrap_err();
        assert!(e.message.contains("lagkit's switch"), "{e}");
    }

    #[test]
    fn engine_defaults_to_auto() {
        let t = parse(&topo(r#"mode = "802.3ad""#)).unwrap();
        for h in &t.hosts {
            let b = h.bond.as_ref().unwrap();
            assert_eq!(b.config.engine, Engine::Auto);
            assert_eq!(b.engine, "auto");
        }
    }

    #[test]
    fn a_bad_engine_is_an_error_at_its_line() {
        let text = topo(r#"mode = "802.3ad", engine = "kernel""#);
        let e = parse(&text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.toml", 5), "{e}");
        let col = text.lines().nth(4).unwrap().find("engine").unwrap() + 1;
        assert_eq!(e.column, col, "{e}");
        assert!(
            e.message.starts_with("host 'h1' bond: key 'engine': "),
            "{e}"
        );
        assert!(e.message.contains("kernel"), "{e}");
        assert!(e.message.contains("auto, bpf, userspace"), "{e}");
    }

    #[test]
    fn the_bond_file_for_lagkit_up_names_the_engine() {
        for (bond, line) in [
            (r#"mode = "802.3ad""#, r#"engine = "auto""#),
            (r#"mode = "802.3ad", engine = "bpf""#, r#"engine = "bpf""#),
            (
                r#"mode = "balance-rr", engine = "userspace""#,
                r#"engine = "userspace""#,
            ),
        ] {
            let t = parse(&topo(bond)).unwrap();
            let b = t.hosts[0].bond.as_ref().unwrap();
            let lines: Vec<&str> = b.toml.lines().filter(|l| l.starts_with("engine")).collect();
            assert_eq!(lines, [line], "{}", b.toml);
            // What the lab writes, lagkit up reads back the same.
            let (bonds, _) = lagkit_bondcfg::parse_str(&b.toml, "bond").unwrap();
            assert_eq!(bonds[0], b.config);
        }
    }
}
