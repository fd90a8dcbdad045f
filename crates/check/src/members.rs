//! Members compared one by one: within a running bond, and from both ends
//! of its links.
//!
//! An 802.3ad bond works when every member sits in one aggregator and
//! hears one partner (the same system and key), and when each of its
//! members faces exactly one port of the switch's channel, bundled or not
//! on both ends alike. `/proc/net/bonding/bondX` shows each member's own
//! view; a member in another aggregator than the rest (a split aggregate)
//! carries nothing, and one that hears another partner is cabled to
//! another switch or channel. Against a switch's show output, each switch
//! port is matched to the host member at its other end (by the LACP port
//! number each end hears, the PAgP partner's port name, or LLDP's port
//! ID), and each host member to its switch port, so a link present, up or
//! bundled at one end only is said from whichever end it is seen. Where
//! the evidence does not single out one member, the match is said to be
//! ambiguous rather than guessed.

use crate::facts::Host;
use crate::rules::finding;
use crate::running::{Running, RunningPort};
use crate::show::{Member, MemberState, Show, ShowChannel};
use crate::{Finding, Loc, Severity};

const ZERO: &str = "00:00:00:00:00:00";

/// A member's partner as its system ID and key: (priority, MAC, key).
type PartnerId<'a> = (Option<u16>, &'a str, Option<u16>);

fn partner_id(x: &RunningPort) -> Option<PartnerId<'_>> {
    Some((x.partner_system_priority, x.heard_partner()?, x.partner_key))
}

fn show_partner((prio, mac, key): PartnerId) -> String {
    let prio = prio.map(|p| format!("{p},")).unwrap_or_default();
    let key = key.map(|k| format!(" key {k}")).unwrap_or_default();
    format!("system {prio}{mac}{key}")
}

/// Whether `x`'s link is down at the host (`MII Status: down`).
fn down(x: &RunningPort) -> bool {
    x.mii_up == Some(false)
}

/// The aggregator the bond uses: the one `/proc` names active, else the
/// one most members with a link are in (`None` on a tie).
fn active_aggregator(r: &Running) -> Option<u16> {
    if r.aggregator.is_some() {
        return r.aggregator;
    }
    let mut count: Vec<(u16, usize)> = Vec::new();
    for a in r
        .members
        .iter()
        .filter(|x| !down(x))
        .filter_map(|x| x.aggregator)
        .filter(|a| *a != 0)
    {
        match count.iter_mut().find(|c| c.0 == a) {
            Some(c) => c.1 += 1,
            None => count.push((a, 1)),
        }
    }
    count.sort_by_key(|c| std::cmp::Reverse(c.1));
    match count.as_slice() {
        [(a, n), (_, m), ..] if n > m => Some(*a),
        [(a, _)] => Some(*a),
        _ => None,
    }
}

/// Members with a link in several aggregators, none of which the file
/// names active (`/proc` read without CAP_NET_ADMIN) or most members use.
fn split_without_active(h: &Host, r: &Running) -> Option<Finding> {
    let up: Vec<(&RunningPort, u16)> = r
        .members
        .iter()
        .filter(|x| !down(x))
        .filter_map(|x| Some((x, x.aggregator.filter(|a| *a != 0)?)))
        .collect();
    let first = up.first()?;
    if up.iter().all(|(_, a)| *a == first.1) {
        return None;
    }
    let each = up
        .iter()
        .map(|(x, a)| format!("{} in aggregator {a}", x.name))
        .collect::<Vec<_>>()
        .join(", ");
    Some(finding(
        Severity::Warning,
        "host-split-aggregate",
        first.0.loc.clone(),
        format!(
            "bond {}: its members with a link are in different aggregators ({each}), and the bond sends and receives on one aggregator only: a split aggregate (the file does not say which one is active: read it as root to see)",
            h.bond
        ),
        "give every member the same speed and duplex and cable all of them to one switch channel; then the kernel puts them in one aggregator",
    ))
}

/// Why member `x` is not with `with` (members of the active aggregator),
/// from every per-member field that tells.
fn why_apart(x: &RunningPort, with: &[&RunningPort]) -> Vec<String> {
    let mut why = Vec::new();
    let Some(o) = with.first() else {
        return why;
    };
    if let (Some(k), Some(ok)) = (x.actor_key, o.actor_key) {
        if k != ok {
            let speed = match (x.speed_mbps, o.speed_mbps, x.full_duplex, o.full_duplex) {
                (Some(a), Some(b), _, _) if a != b => {
                    format!(" (it runs at {a} Mbit/s, {} at {b}: Linux keys members by speed and duplex)", o.name)
                }
                (_, _, Some(a), Some(b)) if a != b => format!(
                    " (it runs {} duplex, {} {}: Linux keys members by speed and duplex)",
                    if a { "full" } else { "half" },
                    o.name,
                    if b { "full" } else { "half" }
                ),
                _ => String::new(),
            };
            why.push(format!("its key {k} is not {}'s {ok}{speed}", o.name));
        }
    }
    match (partner_id(x), partner_id(o)) {
        (Some(p), Some(q)) if p != q => why.push(format!(
            "it hears partner {} while {} hears {}",
            show_partner(p),
            o.name,
            show_partner(q)
        )),
        (None, Some(_)) if x.partner.is_some() => {
            why.push("it hears no LACPDU (its partner is all zero)".into())
        }
        _ => {}
    }
    if let Some(w) = &x.not_bundled {
        why.push(format!("the bond says: {w}"));
    }
    if x.actor_churned == Some(true) {
        why.push("its LACP churned: it never reached sync with its partner".into());
    } else if x.partner_churned == Some(true) {
        why.push("its partner churned: the partner never reached sync on this link".into());
    }
    why
}

/// A running bond's members against each other: a member with a link in
/// another aggregator than the bond's (a split aggregate), a member that
/// hears another partner than the others.
pub fn bond_alone(h: &Host) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(r) = &h.running else {
        return out;
    };
    let active = active_aggregator(r);
    let in_active: Vec<&RunningPort> = r
        .members
        .iter()
        .filter(|x| !down(x) && active.is_some() && x.aggregator == active)
        .collect();
    if active.is_none() {
        out.extend(split_without_active(h, r));
    }
    // The partner the bond's aggregator hears.
    let reference = in_active.iter().find_map(|x| partner_id(x));
    for x in r.members.iter().filter(|x| !down(x)) {
        let apart = matches!((x.aggregator, active), (Some(a), Some(b)) if a != b);
        // A system ID is the priority and the MAC: either differing is
        // another system; compared where both ends of it are known.
        let known_differ = |a: Option<u16>, b: Option<u16>| a.is_some() && b.is_some() && a != b;
        let other_partner = match (partner_id(x), reference) {
            (Some(p), Some(q)) => p.1 != q.1 || known_differ(p.0, q.0) || known_differ(p.2, q.2),
            _ => false,
        };
        if !apart && !other_partner {
            continue;
        }
        let with: Vec<&RunningPort> = in_active
            .iter()
            .copied()
            .filter(|o| o.name != x.name)
            .collect();
        let why = why_apart(x, &with);
        let because = if why.is_empty() {
            String::new()
        } else {
            format!(": {}", why.join("; "))
        };
        let names = with
            .iter()
            .map(|o| o.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let agg = |a: Option<u16>| match a {
            Some(0) => "no aggregator".to_string(),
            Some(a) => format!("aggregator {a}"),
            None => "an aggregator lagkit cannot tell".to_string(),
        };
        if other_partner {
            out.push(finding(
                Severity::Error,
                "host-member-partner-differs",
                x.partner.as_ref().map_or(x.loc.clone(), |p| p.1.clone()),
                format!(
                    "bond {}: member {} ({}, {}) hears another partner than the bond's aggregator ({}){because}: its cable reaches another switch, or a port of another channel",
                    h.bond, x.name, x.loc, agg(x.aggregator), if names.is_empty() { agg(active) } else { format!("{}: {names}", agg(active)) }
                ),
                "cable the member to a port of the channel its other members use (or make the two switches one LACP system: a stack or an MLAG pair)",
            ));
        } else {
            out.push(finding(
                Severity::Warning,
                "host-split-aggregate",
                x.loc.clone(),
                format!(
                    "bond {}: member {} is up but in {} while the bond uses {}{}{because}: the bond sends and receives nothing on it (a split aggregate)",
                    h.bond,
                    x.name,
                    agg(x.aggregator),
                    agg(active),
                    if names.is_empty() { String::new() } else { format!(" ({names})") }
                ),
                "give every member the same speed and duplex and cable all of them to one switch channel; then the kernel puts them in one aggregator",
            ));
        }
    }
    out
}

/// A running bond's members' histories against each other: a member
/// whose link failed far more often than the others' (its cable,
/// transceiver or switch port flaps), and a member whose LACP churned
/// before though it is in sync now.
pub fn histories(h: &Host) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(r) = &h.running else {
        return out;
    };
    for x in &r.members {
        let others = (r.members.iter()).filter(|o| o.name != x.name);
        if let Some(n) = x.link_failures {
            let most = others.clone().filter_map(|o| o.link_failures).max();
            if let Some(most) = most.filter(|&m| n >= 3 && n >= 3 * m.max(1)) {
                out.push(finding(
                    Severity::Warning,
                    "host-member-flaps",
                    x.loc.clone(),
                    format!(
                        "bond {}: member {} ({}) lost its link {n} times since it was enslaved, the other members at most {most}: its cable, transceiver or switch port flaps, and each loss moves its flows",
                        h.bond, x.name, x.loc
                    ),
                    "replace the cable or transceiver, or look at the switch port's error counters (`show interfaces counters errors`)",
                ));
            }
        }
        let now_in_sync = x.actor_churned == Some(false) && x.partner_churned == Some(false);
        if let (true, (Some(a), Some(p))) = (now_in_sync, x.churned_counts) {
            if a + p > 0 {
                out.push(finding(
                    Severity::Info,
                    "host-member-churned-before",
                    x.loc.clone(),
                    format!(
                        "bond {}: member {} ({}) is in sync now, but its LACP churned {a} time(s) and its partner's {p} time(s) since it was enslaved: a port that once took more than the churn timer to reach sync (a partner restarted, slow to answer, or cabled elsewhere for a while)",
                        h.bond, x.name, x.loc
                    ),
                    "if it happens again, capture the member's LACPDUs (`lagkit check` reads a capture) while it churns",
                ));
            }
        }
    }
    out
}

/// How a switch port was matched to a host member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The switch's port hears the member's LACP port number from the
    /// bond's system.
    LacpPartner,
    /// The member hears the switch port's LACP port number.
    LacpLocal,
    /// The PAgP partner's port is the member's name.
    Pagp,
    /// LLDP: the port ID the switch port hears is the member's name or MAC.
    Lldp,
}

impl Via {
    fn describe(self) -> &'static str {
        match self {
            Via::LacpPartner => "by the LACP port number the switch hears",
            Via::LacpLocal => "by the switch's LACP port number the member hears",
            Via::Pagp => "by the PAgP partner's port name",
            Via::Lldp => "by LLDP",
        }
    }
}

/// The switch ports of a channel matched to the bond's members.
#[derive(Debug, Default)]
pub struct Matching<'a> {
    /// Each switch port with the host member at its other end.
    pub pairs: Vec<(&'a Member, &'a RunningPort, Via)>,
    /// Switch ports whose host member the output cannot single out: the
    /// members each could face.
    pub ambiguous: Vec<(&'a Member, Vec<&'a RunningPort>)>,
    /// Switch ports matched to no host member.
    pub switch_only: Vec<&'a Member>,
    /// Host members no switch port of the channel faces.
    pub host_only: Vec<&'a RunningPort>,
}

/// What each kind of evidence says of the host member switch port `m`
/// faces: the members it names, kind by kind.
fn evidence<'a>(m: &Member, s: &Show, r: &'a Running) -> Vec<(Vec<&'a RunningPort>, Via)> {
    let host_sys = r.system.as_ref().map(|x| x.0.as_str());
    let sw_sys = s.system.as_ref().map(|x| x.value.1.as_str());
    let members = |f: &dyn Fn(&RunningPort) -> bool| -> Vec<&'a RunningPort> {
        r.members.iter().filter(|x| f(x)).collect()
    };
    let mut out = Vec::new();
    // A port hearing another system may still be the one the member
    // hears (by its own port number): the two ends then disagree.
    if let Some(p) = m
        .partner
        .as_ref()
        .filter(|p| p.system != ZERO && host_sys.is_none_or(|h| h == p.system))
    {
        out.push((members(&|x| x.actor_port == Some(p.port)), Via::LacpPartner));
    }
    if let Some(l) = &m.local {
        out.push((
            members(&|x| {
                x.partner_port == Some(l.port)
                    && x.heard_partner()
                        .is_some_and(|h| sw_sys.is_none_or(|s| s == h))
            }),
            Via::LacpLocal,
        ));
    }
    if let Some(pg) = &m.pagp {
        out.push((members(&|x| x.name == pg.port), Via::Pagp));
    }
    for n in s.lldp.iter().filter(|n| n.port == m.name) {
        let as_mac = crate::show::colon_mac(&n.port_id);
        out.push((
            members(&|x| {
                x.name == n.port_id
                    || (as_mac.is_some() && x.permanent_mac.as_deref() == as_mac.as_deref())
            }),
            Via::Lldp,
        ));
    }
    out.retain(|e| !e.0.is_empty());
    out
}

/// The host members switch port `m` may face: those of the first kind of
/// evidence that names exactly one, else of the first that names any.
fn candidates<'a>(m: &Member, s: &Show, r: &'a Running) -> (Vec<&'a RunningPort>, Via) {
    let e = evidence(m, s, r);
    let pick = e.iter().find(|x| x.0.len() == 1).or(e.first()).cloned();
    pick.unwrap_or((Vec::new(), Via::LacpPartner))
}

/// Every host member any evidence names for port `m`.
fn named_by<'a>(m: &Member, s: &Show, r: &'a Running) -> Vec<&'a RunningPort> {
    let mut v: Vec<&RunningPort> = evidence(m, s, r).into_iter().flat_map(|e| e.0).collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v.dedup_by(|a, b| a.name == b.name);
    v
}

/// The host member at the other end of switch port `m`, when the output
/// names exactly one.
pub fn peer<'a>(m: &Member, s: &Show, r: &'a Running) -> Option<&'a RunningPort> {
    match candidates(m, s, r).0.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Whether one end of a matched link is down and the other is not.
pub fn up_differs(s: &Show, m: &Member, x: &RunningPort) -> bool {
    x.mii_up.is_some() && switch_down(s, m).is_some() != down(x)
}

/// Matches channel `c`'s ports with bond `r`'s members. A host member two
/// ports claim is matched to neither: both are ambiguous.
pub fn match_members<'a>(c: &'a ShowChannel, s: &Show, r: &'a Running) -> Matching<'a> {
    let mut out = Matching::default();
    let mut claims: Vec<(&'a Member, &'a RunningPort, Via)> = Vec::new();
    for m in &c.members {
        match candidates(m, s, r) {
            (v, _) if v.is_empty() => out.switch_only.push(m),
            (v, via) if v.len() == 1 => claims.push((m, v[0], via)),
            _ => out.ambiguous.push((m, named_by(m, s, r))),
        }
    }
    for (m, x, via) in &claims {
        let rivals = claims.iter().filter(|c| c.1.name == x.name).count();
        if rivals > 1 {
            out.ambiguous.push((m, named_by(m, s, r)));
        } else {
            out.pairs.push((m, x, *via));
        }
    }
    let claimed = |x: &RunningPort| {
        claims.iter().any(|c| c.1.name == x.name)
            || out
                .ambiguous
                .iter()
                .any(|a| a.1.iter().any(|y| y.name == x.name))
    };
    out.host_only = r.members.iter().filter(|x| !claimed(x)).collect();
    out
}

/// Whether port `m` says which host member it faces: it hears an LACP or
/// PAgP partner, shows its own LACP port number, or has an LLDP row.
fn identifiable(m: &Member, s: &Show) -> bool {
    m.partner.as_ref().is_some_and(|p| p.system != ZERO)
        || m.local.is_some()
        || m.pagp.is_some()
        || s.lldp.iter().any(|n| n.port == m.name)
}

fn at(s: &Show, line: usize) -> Loc {
    Loc::at(&s.file, line)
}

fn state_line(m: &Member) -> usize {
    m.state.as_ref().map_or(m.line, |st| st.line)
}

fn is_bundled(m: &Member) -> bool {
    m.state
        .as_ref()
        .is_some_and(|st| st.value == MemberState::Bundled)
}

/// Whether the switch's port is down: its flag, or `show interfaces status`.
fn switch_down(s: &Show, m: &Member) -> Option<(String, usize)> {
    if let Some(st) = s.status_of(&m.name) {
        if st.status != "connected" {
            return Some((format!("{} (show interfaces status)", st.status), st.line));
        }
    }
    let st = m.state.as_ref()?;
    (st.value == MemberState::Down).then(|| (st.value.describe(), st.line))
}

fn names(v: &[&RunningPort]) -> String {
    v.iter()
        .map(|x| match x.actor_port {
            Some(p) => format!("{} (port {p})", x.name),
            None => x.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where in the show output, outside channel `c`, host member `x` is
/// faced: the channel and port.
fn elsewhere<'a>(
    s: &'a Show,
    c: &ShowChannel,
    r: &Running,
    x: &RunningPort,
) -> Option<(u32, &'a Member)> {
    s.channels
        .iter()
        .filter(|o| o.number != c.number)
        .find_map(|o| {
            o.members.iter().find_map(|m| {
                let (v, _) = candidates(m, s, r);
                (v.len() == 1 && v[0].name == x.name).then_some((o.number, m))
            })
        })
}

/// Channel `c` (named `sw`) of `s` against bond `h` port by port: ports
/// and members present, up or bundled at one end only, and matches the
/// output cannot make.
pub fn both_ends(h: &Host, s: &Show, c: &ShowChannel, r: &Running, sw: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    // A configuration (no running state) has no member to match.
    if r.members.is_empty() {
        return out;
    }
    let mt = match_members(c, s, r);
    let host_sys = r.system.as_ref().map(|x| x.0.as_str());
    for (m, v) in &mt.ambiguous {
        out.push(finding(
            Severity::Warning,
            "member-match-ambiguous",
            at(s, m.partner.as_ref().map_or(m.line, |p| p.line)),
            format!(
                "{sw}: lagkit cannot tell which member of bond {} {} faces: it could be {} (LACP gives each port of a system its own number; here another port of the channel claims the same one), so that link's two ends were not compared",
                h.bond, m.name, names(v)
            ),
            "give lagkit check the switch's `show lldp neighbors` (lldpd on the host names each member), or compare that link's two ends by hand",
        ));
    }
    // Ports the bond's system speaks on, with a port number it has not.
    for m in &mt.switch_only {
        let Some(p) = m.partner.as_ref().filter(|p| p.system != ZERO) else {
            continue;
        };
        if host_sys.is_none_or(|h| h != p.system) {
            continue;
        }
        let bundled = is_bundled(m);
        out.push(finding(
            if bundled { Severity::Error } else { Severity::Warning },
            "member-one-end",
            at(s, p.line),
            format!(
                "{sw}: {} ({}) hears LACP port {} of bond {}'s system, but bond {} ({}) has no member with that port number (its members: {}): the switch has a link to this host the bond does not know{}",
                m.name,
                m.state.as_ref().map_or("state not shown".into(), |st| st.value.describe()),
                p.port,
                h.bond,
                h.bond,
                h.loc,
                names(&r.members.iter().collect::<Vec<_>>()),
                if bundled { ", and frames the switch hashes onto it are lost" } else { "" }
            ),
            "compare the files of the same moment; look for another bond on the host with the same system MAC (ad_actor_system) and trace the port's cable",
        ));
    }
    let can_tell = c.members.iter().any(|m| identifiable(m, s));
    if can_tell || c.members.is_empty() {
        out.extend(host_only(h, s, c, r, sw, &mt.host_only));
    } else {
        out.extend(counts(h, s, c, r, sw));
    }
    out.extend(
        mt.pairs
            .iter()
            .filter_map(|(m, x, via)| link_differs(h, s, m, x, *via, sw)),
    );
    out.extend(up_one_end(h, s, r, sw, &mt.pairs));
    out
}

/// Host members no port of channel `c` faces: where they are faced
/// instead, or what the output lacks.
fn host_only(
    h: &Host,
    s: &Show,
    c: &ShowChannel,
    r: &Running,
    sw: &str,
    members: &[&RunningPort],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for x in members {
        if let (Some(hp), Some(ss)) = (x.heard_partner(), s.system.as_ref()) {
            if hp != ss.value.1 {
                // Another switch: partner-system-mismatch says so.
                continue;
            }
        }
        let used = x.bundled(r.aggregator) == Some(true);
        let (sev, state) = match (down(x), used) {
            (true, _) => (Severity::Info, "down"),
            (false, true) => (Severity::Error, "up and in use"),
            (false, false) => (Severity::Warning, "up"),
        };
        let faced = match elsewhere(s, c, r, x) {
            Some((n, m)) => format!(
                ": {} in channel {n} faces it, not a port of channel {}",
                m.name, c.number
            ),
            None if c.members.is_empty() => {
                format!(": the channel has no member ports (line {})", c.line)
            }
            None => {
                let hears = x
                    .actor_port
                    .map(|p| format!("its LACP port {p}"))
                    .unwrap_or_else(|| "it".into());
                match x.partner_port.filter(|q| *q != 0) {
                    Some(q) if c.members.iter().any(|m| m.local.is_some()) => format!(
                        ": it hears the switch's port number {q}, which no port of the channel has, and no port of the channel hears {hears}"
                    ),
                    _ => format!(": no port of the channel hears {hears}"),
                }
            }
        };
        out.push(finding(
            sev,
            "member-one-end",
            x.loc.clone(),
            format!(
                "bond {} has member {} ({state}{}) but {sw} has no port facing it{faced}{}",
                h.bond,
                x.name,
                x.actor_port.map(|p| format!(", LACP port {p}")).unwrap_or_default(),
                if used { "; frames the bond hashes onto it reach no port of the channel" } else { "" }
            ),
            &format!("cable {} to a port of channel {} (channel-group {} on the port), or remove it from the bond", x.name, c.number, c.number),
        ));
    }
    out
}

/// Matched links whose ends disagree on being up.
fn up_one_end(
    h: &Host,
    s: &Show,
    r: &Running,
    sw: &str,
    pairs: &[(&Member, &RunningPort, Via)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (m, x, via) in pairs {
        if !up_differs(s, m, x) {
            continue;
        }
        let sw_down = switch_down(s, m);
        let line = sw_down.as_ref().map_or(state_line(m), |d| d.1);
        let (sev, reason) = match sw_down {
            Some((what, _)) => (
                if x.bundled(r.aggregator) == Some(true) { Severity::Error } else { Severity::Warning },
                format!(
                    "{sw} has {} {what} but bond {}'s {} at its other end ({}, matched {}) is up: the member's cable reaches another port, or the files are of different moments",
                    m.name, h.bond, x.name, x.loc, via.describe()
                ),
            ),
            None => (
                if is_bundled(m) { Severity::Error } else { Severity::Warning },
                format!(
                    "{sw} has {} {} but bond {}'s {} at its other end ({}, matched {}) is down (MII Status: down{}): the switch's link reaches another device, or the files are of different moments",
                    m.name,
                    m.state.as_ref().map_or("up".into(), |st| st.value.describe()),
                    h.bond,
                    x.name,
                    x.loc,
                    via.describe(),
                    x.link_failures.filter(|n| *n > 0).map(|n| format!(", {n} link failures")).unwrap_or_default()
                ),
            ),
        };
        out.push(finding(
            sev,
            "member-up-one-end",
            at(s, line),
            reason,
            "trace the link's cable from the switch port to the member; take both ends' output at the same moment",
        ));
    }
    out
}

/// A speed as `show interfaces status` shows it (`a-1000`, `1000`,
/// `10G`, `a-10G`, `100G`) in Mbit/s; `None` for `auto` and the like.
fn ios_speed(v: &str) -> Option<u32> {
    let v = v.strip_prefix("a-").unwrap_or(v);
    match v.strip_suffix('G') {
        Some(g) => g.parse::<u32>().ok()?.checked_mul(1000),
        None => v.parse().ok(),
    }
}

/// A duplex as `show interfaces status` shows it: full or half, or `None`
/// (`auto`, not negotiated yet).
fn ios_duplex(v: &str) -> Option<bool> {
    match v.strip_prefix("a-").unwrap_or(v) {
        "full" => Some(true),
        "half" => Some(false),
        _ => None,
    }
}

/// A matched link whose two ends run at another speed or duplex: one
/// cable's ends negotiate the same, so either a duplex mismatch (one end
/// set by hand, the other negotiating, falls back to half) or the ends
/// are not one cable.
fn link_differs(
    h: &Host,
    s: &Show,
    m: &Member,
    x: &RunningPort,
    via: Via,
    sw: &str,
) -> Option<Finding> {
    let st = s.status_of(&m.name).filter(|st| st.status == "connected")?;
    if down(x) {
        return None;
    }
    let speed = ios_speed(&st.speed)
        .zip(x.speed_mbps)
        .filter(|(a, b)| a != b);
    let duplex = ios_duplex(&st.duplex)
        .zip(x.full_duplex)
        .filter(|(a, b)| a != b);
    let word = |f: bool| if f { "full" } else { "half" };
    let (what, fix) = match (speed, duplex) {
        (Some((a, b)), _) => (
            format!("{} runs at {} ({a} Mbit/s) but bond {}'s {} at its other end runs at {b} Mbit/s", m.name, st.speed, h.bond, x.name),
            "trace the link's cable: the two ends of one cable run at one speed; or take both ends' output at the same moment",
        ),
        (None, Some((a, b))) => (
            format!("{} runs {} duplex ({}) but bond {}'s {} at its other end runs {} duplex: a duplex mismatch (one end set by hand, the other negotiating and falling back to half), with collisions and late frames on that link", m.name, word(a), st.duplex, h.bond, x.name, word(b)),
            "let both ends negotiate (speed auto, duplex auto on the switch port; autoneg on with ethtool on the host), or set both by hand alike",
        ),
        (None, None) => return None,
    };
    Some(finding(
        Severity::Error,
        "member-link-differs",
        at(s, st.line),
        format!("{sw}: {what} ({}, matched {})", x.loc, via.describe()),
        fix,
    ))
}

/// When the output cannot tell which port faces which member: the
/// number of links each end bundles and has up.
fn counts(h: &Host, s: &Show, c: &ShowChannel, r: &Running, sw: &str) -> Vec<Finding> {
    let sw_bundled: Vec<&Member> = c.members.iter().filter(|m| is_bundled(m)).collect();
    let host_used: Vec<&RunningPort> = r
        .members
        .iter()
        .filter(|x| x.bundled(r.aggregator) == Some(true))
        .collect();
    let known = r.members.iter().all(|x| x.bundled(r.aggregator).is_some());
    if !known || sw_bundled.len() == host_used.len() || c.members.iter().all(|m| m.state.is_none())
    {
        return Vec::new();
    }
    let ports = sw_bundled
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    vec![finding(
        Severity::Error,
        "member-count-differs",
        at(s, c.members.first().map_or(c.line, state_line)),
        format!(
            "{sw} bundles {} port(s){} but bond {} ({}) uses {} member(s) ({}): a link is bundled at one end only, and frames hashed onto it are lost; the output does not say which port faces which member",
            sw_bundled.len(),
            if ports.is_empty() { String::new() } else { format!(" ({ports})") },
            h.bond,
            h.loc,
            host_used.len(),
            names(&host_used)
        ),
        "add `show lacp neighbor` (or `show lldp neighbors`) to the show output to find the link; make both ends bundle the same links",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{read, End};

    fn host(file: &str, text: &str) -> Host {
        match read(file, text).unwrap() {
            End::Hosts(mut h) => h.remove(0),
            e => panic!("{e:?}"),
        }
    }

    const CHURNED: &str = include_str!("../tests/proc/802.3ad-churned-charm-magpie.txt");
    const DOWN: &str = include_str!("../tests/proc/802.3ad-member-down-insights-core.txt");
    const ALL_UP: &str = include_str!("../tests/proc/802.3ad-charm-magpie.txt");
    const UNPRIVILEGED: &str = include_str!("../tests/proc/802.3ad-unprivileged-telegraf.txt");
    const PROC: &str = include_str!("../../../examples/check/proc-bonding.txt");

    #[test]
    fn ios_speeds_and_duplexes() {
        for (v, want) in [
            ("a-1000", Some(1000)),
            ("1000", Some(1000)),
            ("10G", Some(10_000)),
            ("a-10G", Some(10_000)),
            ("auto", None),
            ("99999999G", None),
        ] {
            assert_eq!(ios_speed(v), want, "{v}");
        }
        assert_eq!(ios_duplex("a-full"), Some(true));
        assert_eq!(ios_duplex("half"), Some(false));
        assert_eq!(ios_duplex("auto"), None);
    }

    /// A real kernel's split aggregate: one member at 100 Mbit/s in an
    /// aggregator of its own, churned.
    #[test]
    fn a_real_split_aggregate_is_found_and_explained() {
        let f = bond_alone(&host("bond0", CHURNED));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "host-split-aggregate");
        assert_eq!(f[0].loc.to_string(), "bond0:23");
        for part in [
            "member enp197s0f2 is up but in aggregator 1 while the bond uses aggregator 2 (enp197s0f0)",
            "its key 7 is not enp197s0f0's 9 (it runs at 100 Mbit/s, enp197s0f0 at 1000",
            "its LACP churned",
        ] {
            assert!(f[0].reason.contains(part), "{part}: {}", f[0]);
        }
    }

    /// Down members sit in aggregators of their own (Linux moves them):
    /// not a split; nor is a bond whose members all agree.
    #[test]
    fn down_members_and_agreeing_bonds_say_nothing() {
        for (name, text) in [("down", DOWN), ("up", ALL_UP), ("proc", PROC)] {
            let f = bond_alone(&host(name, text));
            assert!(f.is_empty(), "{name}: {f:#?}");
        }
    }

    /// Without CAP_NET_ADMIN the aggregator IDs still show a split.
    #[test]
    fn a_split_seen_without_privileges() {
        let h = host("bond0", UNPRIVILEGED);
        assert!(h.running.is_some(), "per-member aggregators are read");
        assert!(bond_alone(&h).is_empty());
        let mut n = 0;
        let split: String = UNPRIVILEGED
            .lines()
            .map(|l| {
                if l.starts_with("Aggregator ID:") {
                    n += 1;
                    if n == 2 {
                        return "Aggregator ID: 3".to_string();
                    }
                }
                l.to_string()
            })
            .collect::<Vec<_>>()
            .join("\n");
        let f = bond_alone(&host("bond0", &split));
        assert_eq!(f.len(), 1, "{split}\n{f:#?}");
        assert!(
            f[0].reason
                .contains("different aggregators (eth0 in aggregator 2, eth1 in aggregator 3)"),
            "{}",
            f[0]
        );
    }

    /// The members' histories: a real churned file (its enp197s0f2 churned
    /// once, is churned now: said by the split, not here), then edits of
    /// the example: a member in sync that churned before, a member whose
    /// link flaps.
    #[test]
    fn member_histories_are_compared() {
        assert!(histories(&host("bond0", CHURNED)).is_empty());
        assert!(histories(&host("bond0", PROC)).is_empty());
        let churned = PROC.replacen("Actor Churned Count: 0", "Actor Churned Count: 2", 1);
        let f = histories(&host("bond0", &churned));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "host-member-churned-before");
        assert!(f[0].reason.contains("churned 2 time(s)"), "{}", f[0]);
        let flaps = PROC.replacen("Link Failure Count: 0", "Link Failure Count: 12", 1);
        assert_ne!(flaps, PROC);
        let f = histories(&host("bond0", &flaps));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "host-member-flaps");
        assert!(f[0].reason.contains("lost its link 12 times"), "{}", f[0]);
        assert!(
            f[0].reason.contains("the other members at most 0"),
            "{}",
            f[0]
        );
        // Partners that differ only in system priority are two systems.
        let prio = PROC.replacen(
            "details partner lacp pdu:\n    system priority: 32768",
            "details partner lacp pdu:\n    system priority: 100",
            1,
        );
        assert_ne!(prio, PROC);
        let f = bond_alone(&host("bond0", &prio));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "host-member-partner-differs");
    }

    /// A member that hears another switch (a realistic edit of the
    /// example: eno2 cabled to a second switch, in its own aggregator).
    #[test]
    fn a_member_hearing_another_partner() {
        let other = PROC
            .replacen(
                "    system mac address: 00:1b:54:c2:7a:80\n    oper key: 10\n    port priority: 32768\n    port number: 305",
                "    system mac address: 00:1b:54:c2:99:00\n    oper key: 10\n    port priority: 32768\n    port number: 305",
                1,
            )
            .replacen("Slave queue ID: 0\nAggregator ID: 1\nActor Churn State: none\nPartner Churn State: none\nActor Churned Count: 0\nPartner Churned Count: 0\ndetails actor lacp pdu:\n    system priority: 65535\n    system mac address: 02:5a:00:00:0b:01\n    port key: 9\n    port priority: 255\n    port number: 2", "Slave queue ID: 0\nAggregator ID: 2\nActor Churn State: none\nPartner Churn State: none\nActor Churned Count: 0\nPartner Churned Count: 0\ndetails actor lacp pdu:\n    system priority: 65535\n    system mac address: 02:5a:00:00:0b:01\n    port key: 9\n    port priority: 255\n    port number: 2", 1);
        assert_ne!(other, PROC);
        let f = bond_alone(&host("bond0", &other));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, "host-member-partner-differs");
        assert!(f[0].reason.contains("member eno2 (bond0:52, aggregator 2) hears another partner than the bond's aggregator (aggregator 1: eno1): it hears partner system 32768,00:1b:54:c2:99:00 key 10 while eno1 hears system 32768,00:1b:54:c2:7a:80 key 10"), "{}", f[0]);
        // Another key of the same switch: another channel group.
        let key = PROC.replacen(
            "    oper key: 10\n    port priority: 32768\n    port number: 305",
            "    oper key: 11\n    port priority: 32768\n    port number: 305",
            1,
        );
        let f = bond_alone(&host("bond0", &key));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].reason.contains("key 11 while eno1 hears"), "{}", f[0]);
    }
}
