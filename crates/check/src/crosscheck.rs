//! A switch's show output held against the host's running bond.
//!
//! Each end of a LACP link says who it hears: the switch in `show lacp
//! neighbor` (its partner's system and key), the host in
//! `/proc/net/bonding/bondX` or `lagkit status --json` (the partner's MAC
//! and key). When those do not name each other, a cable reaches the wrong
//! switch, the wrong server or the wrong channel; when one end bundles a
//! link the other does not, frames sent on it are lost. The show output
//! alone also tells which members are suspended, stand-alone or hot
//! standby, and its counters which member carries nothing.

use crate::facts::{Host, HostMode};
use crate::running::{Running, RunningPort};
use crate::show::{Member, MemberState, Protocol, Show, ShowChannel};
use crate::{Finding, Loc, Severity};

const ZERO: &str = "00:00:00:00:00:00";
/// 802.1AX port state bits.
const AGGREGATION: u8 = 0x04;
const DEFAULTED: u8 = 0x40;

use crate::rules::finding;

fn at(s: &Show, line: usize) -> Loc {
    Loc {
        file: s.file.clone(),
        line: Some(line),
    }
}

/// `dist-b` (from the prompt) or the file.
fn switch_name(s: &Show) -> String {
    s.hostname.clone().unwrap_or_else(|| s.file.clone())
}

/// A dotted Cisco MAC, as the switch shows it.
fn dotted(mac: &str) -> String {
    let h: String = mac.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    if h.len() != 12 {
        return mac.to_string();
    }
    format!("{}.{}.{}", &h[0..4], &h[4..8], &h[8..12])
}

fn bundled(m: &Member) -> Option<bool> {
    m.state.as_ref().map(|s| s.value == MemberState::Bundled)
}

/// The channel's protocol: shown, or told by its partners.
fn protocol(c: &ShowChannel) -> Option<(Protocol, usize)> {
    if let Some(p) = &c.protocol {
        return Some((p.value, p.line));
    }
    c.members.iter().find_map(|m| {
        m.partner
            .as_ref()
            .map(|p| (Protocol::Lacp, p.line))
            .or(m.pagp.as_ref().map(|p| (Protocol::Pagp, p.line)))
    })
}

/// Checks of the show output on its own: members not bundled, and why
/// (with what the host at the other end says, when one of `hosts` is it);
/// members that carry nothing.
pub fn alone(s: &Show, hosts: &[&Host]) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &s.channels {
        for m in &c.members {
            let host = hosts.iter().find_map(|h| {
                let r = h.running.as_ref()?;
                crate::members::peer(m, s, r)
            });
            out.extend(not_bundled(s, c, m, host));
        }
        out.extend(idle(s, c));
    }
    out
}

/// Why member `m` is not bundled, from what the output (and the host's
/// member facing it, when known) shows.
fn reasons(s: &Show, c: &ShowChannel, m: &Member, host: Option<&RunningPort>) -> Vec<String> {
    let mut why = Vec::new();
    if let Some(st) = s.status_of(&m.name) {
        if st.status != "connected" {
            why.push(format!(
                "its link is {} (show interfaces status, line {})",
                st.status, st.line
            ));
        }
    }
    let others: Vec<&Member> = c
        .members
        .iter()
        .filter(|o| o.name != m.name && bundled(o) == Some(true))
        .collect();
    if let Some(p) = &m.partner {
        if p.system == ZERO || p.port_state.is_some_and(|st| st & DEFAULTED != 0) {
            why.push(format!("it hears no LACPDU from the far end (partner {}, line {}): that end does not run LACP on this link", dotted(&p.system), p.line));
        } else if let Some(o) = others
            .iter()
            .filter_map(|o| o.partner.as_ref())
            .find(|o| o.system != p.system)
        {
            why.push(format!(
                "its LACP partner is system {} (line {}) but the bundled members' is {}: its cable reaches another device",
                dotted(&p.system), p.line, dotted(&o.system)
            ));
        } else if let Some(o) = others
            .iter()
            .filter_map(|o| o.partner.as_ref())
            .find(|o| o.oper_key != p.oper_key)
        {
            why.push(format!(
                "its partner gives it key {:#x} (line {}) but the bundled members key {:#x}: the far end has it in another aggregator",
                p.oper_key, p.line, o.oper_key
            ));
        } else if p.port_state.is_some_and(|st| st & AGGREGATION == 0) {
            why.push(format!(
                "its partner says the link is Individual (port state {:#04x}, line {})",
                p.port_state.unwrap_or(0),
                p.line
            ));
        }
    }
    if let (Some(mode), Some(o)) = (&m.mode, others.iter().find_map(|o| o.mode.as_ref())) {
        if mode.value != o.value {
            why.push(format!(
                "it is mode {} (line {}) while the bundled members are {}",
                mode.value, mode.line, o.value
            ));
        }
    }
    if let Some(r) = host.and_then(|h| h.not_bundled.as_ref()) {
        why.push(format!("the host says of its end: {r}"));
    }
    if m.state
        .as_ref()
        .is_some_and(|st| st.value == MemberState::HotStandby)
        && why.is_empty()
    {
        why.push("the channel has more ports than it bundles (lacp max-bundle, or 8 for LACP): this one waits as standby".into());
    }
    why
}

fn not_bundled(
    s: &Show,
    c: &ShowChannel,
    m: &Member,
    host: Option<&RunningPort>,
) -> Option<Finding> {
    let st = m.state.as_ref()?;
    let (severity, fix) = match &st.value {
        MemberState::Bundled => return None,
        MemberState::Suspended => (Severity::Warning, "make the port's partner the channel's (trace its cable), run the same protocol, speed, duplex and VLANs as the other members, then `shutdown` / `no shutdown` it"),
        MemberState::StandAlone => (Severity::Warning, "run LACP on the far end of this link (mode 802.3ad on the host, in the same bond as the other links): meanwhile IOS forwards on it as a port of its own"),
        MemberState::Down => (Severity::Warning, "bring the link up: cable, transceiver, the far end's interface"),
        MemberState::Unsuitable => (Severity::Warning, "configure the port like the channel's other members (speed, duplex, VLANs, mode)"),
        MemberState::HotStandby | MemberState::Waiting => (Severity::Info, "nothing, if intended: raise lacp max-bundle (or remove ports) to use every link"),
        MemberState::Unknown(_) => return None,
    };
    let why = reasons(s, c, m, host);
    let because = if why.is_empty() {
        "; the output shows no reason (`show etherchannel N detail` and `show lacp neighbor detail` tell more)".to_string()
    } else {
        format!(": {}", why.join("; "))
    };
    Some(finding(
        severity,
        "show-member-not-bundled",
        at(s, st.line),
        format!(
            "{} channel {}: {} is {}{because}",
            switch_name(s),
            c.number,
            m.name,
            st.value.describe()
        ),
        fix,
    ))
}

/// Traffic this share of the busiest member's, or less, is none.
const IDLE_SHARE: u64 = 100;
/// Below this many octets over the channel, counters say nothing.
const IDLE_FLOOR: u64 = 1_000_000;

/// A member that carries nothing while the others carry traffic.
fn idle(s: &Show, c: &ShowChannel) -> Vec<Finding> {
    let mut out = Vec::new();
    let members: Vec<&Member> = c
        .members
        .iter()
        .filter(|m| bundled(m) != Some(false))
        .collect();
    for inbound in [true, false] {
        let v: Vec<(&Member, u64, usize)> = members
            .iter()
            .filter_map(|m| {
                let k = s.counters_of(&m.name)?;
                let o = if inbound { &k.in_octets } else { &k.out_octets };
                o.as_ref().map(|o| (*m, o.value, o.line))
            })
            .collect();
        let total: u64 = v.iter().map(|x| x.1).fold(0, u64::saturating_add);
        let Some(busiest) = v.iter().max_by_key(|x| x.1) else {
            continue;
        };
        if v.len() < 2 || total < IDLE_FLOOR {
            continue;
        }
        for (m, octets, line) in v
            .iter()
            .filter(|x| x.1.saturating_mul(IDLE_SHARE) < busiest.1)
        {
            let (dir, whose, fix) = if inbound {
                ("received", "the host's transmit hash (or the host not sending on that link)", "check the host bond uses the link (lagkit status, /proc/net/bonding) and hashes by ports (xmit_hash_policy layer3+4)")
            } else {
                ("sent", "the switch's port-channel load-balance", "use port-channel load-balance src-dst-port (or src-dst-mixed-ip-port) on the switch")
            };
            out.push(finding(
                Severity::Warning,
                "show-member-idle",
                at(s, *line),
                format!(
                    "{} channel {}: {} {dir} {octets} octets while {} {dir} {}: {whose} puts (almost) nothing on it",
                    switch_name(s),
                    c.number,
                    m.name,
                    busiest.0.name,
                    busiest.1
                ),
                fix,
            ));
        }
    }
    out
}

/// Which channel of a show output faces a bond.
enum Facing<'a> {
    /// This one.
    One(&'a ShowChannel),
    /// Several could, and nothing tells them apart: the channels, and why.
    Ambiguous(Vec<&'a ShowChannel>, String),
    /// None does (or `--channel N` names none).
    None,
}

/// The keys a bond's members say: their own, and their partner's.
fn host_keys(r: &Running) -> (Vec<u16>, Vec<u16>) {
    let mut actor: Vec<u16> = r.actor_key.iter().map(|k| k.0).collect();
    let mut partner: Vec<u16> = r.partner_key.iter().map(|k| k.0).collect();
    for x in &r.members {
        actor.extend(x.actor_key);
        partner.extend(x.partner_key.filter(|_| x.heard_partner().is_some()));
    }
    actor.sort_unstable();
    actor.dedup();
    partner.sort_unstable();
    partner.dedup();
    (actor, partner)
}

fn keys(v: &[u16]) -> String {
    if v.is_empty() {
        return "not shown".into();
    }
    v.iter()
        .map(|k| format!("{k:#x}"))
        .collect::<Vec<_>>()
        .join("/")
}

fn numbers(v: &[&ShowChannel]) -> String {
    v.iter()
        .map(|c| c.number.to_string())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The channel of `s` that faces host `h`: `channel` if given, else the
/// one whose partner is the host's system; when several are, the one
/// whose keys are the host's (802.1AX 6.3.5: "a Link Aggregation Group
/// ... is identified by the System Identifier and operational Key" of
/// each end), else the only one.
fn facing<'a>(s: &'a Show, h: &Host, r: &Running, channel: Option<u32>) -> Facing<'a> {
    if let Some(n) = channel {
        return s.channel(n).map_or(Facing::None, Facing::One);
    }
    let sys = r.system.as_ref().map(|x| x.0.as_str());
    let dev = r.pagp_device.as_ref().map(|x| x.0.as_str()).or(sys);
    let hears_host = |c: &&ShowChannel| {
        c.members.iter().any(|m| {
            m.partner
                .as_ref()
                .is_some_and(|p| Some(p.system.as_str()) == sys)
                || m.pagp
                    .as_ref()
                    .is_some_and(|p| Some(p.device.as_str()) == dev)
                || m.pagp
                    .as_ref()
                    .is_some_and(|p| h.members.iter().any(|x| x.name == p.port))
        })
    };
    let ours: Vec<&ShowChannel> = s.channels.iter().filter(hears_host).collect();
    if let [one] = ours.as_slice() {
        return Facing::One(one);
    }
    if ours.len() > 1 {
        let (actor, partner) = host_keys(r);
        // The host's key as the channel hears it, or the channel's key as
        // the host hears it.
        let keyed = |c: &&&ShowChannel| {
            c.members.iter().any(|m| {
                m.partner
                    .as_ref()
                    .is_some_and(|p| Some(p.system.as_str()) == sys && actor.contains(&p.oper_key))
                    || m.local
                        .as_ref()
                        .is_some_and(|l| partner.contains(&l.oper_key))
            })
        };
        let by_key: Vec<&ShowChannel> = ours.iter().filter(keyed).copied().collect();
        return match by_key.as_slice() {
            [one] => Facing::One(one),
            [] if actor.is_empty() && partner.is_empty() => Facing::Ambiguous(
                ours.clone(),
                format!("channels {} both hear bond {}'s system, and the bond's file gives no key to tell them apart", numbers(&ours), h.bond),
            ),
            [] => Facing::Ambiguous(
                ours.clone(),
                format!("channels {} both hear bond {}'s system, but neither with the bond's keys (its own {}, its partner's {})", numbers(&ours), h.bond, keys(&actor), keys(&partner)),
            ),
            several => Facing::Ambiguous(
                several.to_vec(),
                format!("channels {} both hear bond {}'s system with its key ({}): one bond's members in several channels, or two bonds of one system and key", numbers(several), h.bond, keys(&actor)),
            ),
        };
    }
    // Else the only channel, or the only one that runs the bond's protocol.
    let speaks = |c: &&ShowChannel| {
        matches!(
            (protocol(c).map(|p| p.0), h.mode),
            (Some(Protocol::Lacp), HostMode::Lacp { .. })
                | (Some(Protocol::Pagp), HostMode::Pagp { .. })
                | (
                    Some(Protocol::None),
                    HostMode::Static | HostMode::RoundRobin | HostMode::Broadcast
                )
        )
    };
    let same: Vec<&ShowChannel> = s.channels.iter().filter(speaks).collect();
    match (s.channels.as_slice(), same.as_slice()) {
        ([only], _) => Facing::One(only),
        (_, [only]) => Facing::One(only),
        _ => Facing::None,
    }
}

/// Checks of show output `s` against host `h`'s running state (and mode).
pub fn pair(h: &Host, s: &Show, channel: Option<u32>) -> Vec<Finding> {
    let mut out = Vec::new();
    let empty = Running::default();
    let r = h.running.as_ref().unwrap_or(&empty);
    let c = match facing(s, h, r, channel) {
        Facing::One(c) => c,
        Facing::Ambiguous(v, why) => {
            out.push(finding(Severity::Warning, "show-channel-ambiguous", at(s, v[0].line),
                format!("{}: {why}; lagkit does not guess, so bond {} was checked against neither", switch_name(s), h.bond),
                &format!("name the bond's channel with --channel N (one of {}), after checking which ports its cables reach", numbers(&v))));
            return out;
        }
        Facing::None => {
            if let Some(n) = channel {
                out.push(finding(Severity::Error, "no-such-channel", at(s, s.channels.first().map_or(1, |c| c.line)),
                    format!("{} shows no channel group {n} (it shows {}): bond {} was not checked against it",
                        switch_name(s), s.channels.iter().map(|c| c.number.to_string()).collect::<Vec<_>>().join(", "), h.bond),
                    "name one of those with --channel, or add that channel's show output"));
            } else if s.channels.len() > 1 {
                out.push(finding(Severity::Info, "show-which-channel", at(s, s.channels[0].line),
                    format!("{} shows {} channels ({}) and none has bond {} as its partner: the bond was not checked against any",
                        switch_name(s), s.channels.len(),
                        s.channels.iter().map(|c| c.number.to_string()).collect::<Vec<_>>().join(", "), h.bond),
                    "name the bond's channel with --channel N"));
            }
            return out;
        }
    };
    let sw = format!("{} channel {}", switch_name(s), c.number);
    let host_sys = r.system.as_ref();
    // The switch's partner must be the host.
    for m in &c.members {
        let Some(p) = m.partner.as_ref().filter(|p| p.system != ZERO) else {
            continue;
        };
        if let Some((sys, hl)) = host_sys {
            if *sys != p.system {
                out.push(finding(Severity::Error, "partner-system-mismatch", at(s, p.line),
                    format!("{sw}: {} hears LACP partner system {} but bond {}'s system MAC is {sys} ({hl}): the link reaches another device, not this bond (a cable to the wrong server or switch port)",
                        m.name, dotted(&p.system), h.bond),
                    &format!("trace the cable of {}: it must end on a member of {} ({}); or give lagkit check that device's bond", m.name, h.bond,
                        h.members.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(", "))));
                continue;
            }
        }
        let key = crate::members::peer(m, s, r)
            .and_then(|x| x.actor_key)
            .map(|k| (k, None))
            .or(r.actor_key.as_ref().map(|(k, l)| (*k, Some(l))));
        if let (Some((k, l)), true) = (key, host_sys.is_some()) {
            if k != p.oper_key {
                out.push(finding(Severity::Error, "partner-key-mismatch", at(s, p.line),
                    format!("{sw}: {} hears bond {}'s system with key {:#x} but the bond's key is {k:#x}{}: the link ends on another aggregator of that host (another bond, or a member its bond put apart)",
                        m.name, h.bond, p.oper_key, l.map(|l| format!(" ({l})")).unwrap_or_default()),
                    "cable the link to a member of this bond, and give every member the same speed and duplex (Linux's key holds them)"));
            }
        }
    }
    // The host's partner must be the switch.
    let sw_sys = s.system.as_ref();
    let local_key = c
        .members
        .iter()
        .find_map(|m| m.local.as_ref().map(|l| (l.oper_key, l.line)));
    let mut host_views: Vec<(&str, &Loc, Option<u16>, &str)> = r
        .members
        .iter()
        .filter_map(|x| {
            let (mac, loc) = x.partner.as_ref()?;
            Some((mac.as_str(), loc, x.partner_key, x.name.as_str()))
        })
        .collect();
    if host_views.is_empty() {
        if let Some((mac, loc)) = &r.partner {
            host_views.push((
                mac,
                loc,
                r.partner_key.as_ref().map(|k| k.0),
                "its aggregator",
            ));
        }
    }
    for (mac, loc, key, who) in host_views.into_iter().filter(|v| v.0 != ZERO) {
        if let Some(ss) = sw_sys {
            if ss.value.1 != mac {
                out.push(finding(Severity::Error, "partner-system-mismatch", loc.clone(),
                    format!("bond {} ({who}) hears LACP partner {mac} but {}'s system is {} ({}): the link reaches another switch, or another system of a stack or pair that is not one LACP system",
                        h.bond, switch_name(s), dotted(&ss.value.1), at(s, ss.line)),
                    "trace the member's cable to the switch whose show output this is; or give lagkit check the other switch's output"));
                continue;
            }
        }
        if let (Some(k), Some((lk, ll))) = (key, local_key) {
            if k != lk {
                out.push(finding(Severity::Error, "partner-key-mismatch", loc.clone(),
                    format!("bond {} ({who}) hears partner key {k:#x} but {sw}'s ports have key {lk:#x} ({}): the link ends on a port of another channel group",
                        h.bond, at(s, ll)),
                    &format!("put the switch port in channel-group {} (or cable the member to one of its ports)", c.number)));
            }
        }
    }
    // PAgP: the switch's partner must be the host.
    if let Some((dev, dl)) = r.pagp_device.as_ref().or(r.system.as_ref()) {
        for m in &c.members {
            if let Some(p) = m
                .pagp
                .as_ref()
                .filter(|p| p.device != *dev && p.device != ZERO)
            {
                out.push(finding(Severity::Error, "partner-system-mismatch", at(s, p.line),
                    format!("{sw}: {} hears PAgP device {} ({}) but bond {}'s device ID is {dev} ({dl}): the link reaches another device",
                        m.name, dotted(&p.device), p.name, h.bond),
                    &format!("trace the cable of {}: it must end on a member of {}", m.name, h.bond)));
            }
        }
    }
    // Each port and member from both ends; bundled on one end only.
    out.extend(crate::members::both_ends(h, s, c, r, &sw));
    for (m, x, _) in crate::members::match_members(c, s, r).pairs {
        let (Some(sb), Some(hb)) = (bundled(m), x.bundled(r.aggregator)) else {
            continue;
        };
        // A link down at one end: member-up-one-end says so.
        if crate::members::up_differs(s, m, x) {
            continue;
        }
        if sb != hb {
            let line = m.state.as_ref().map_or(m.line, |s| s.line);
            out.push(finding(Severity::Error, "member-bundled-one-end", at(s, line),
                if sb {
                    format!("{sw} bundles {} but bond {} does not use {} at the other end ({}){}: frames the switch hashes onto that link are lost",
                        m.name, h.bond, x.name, x.loc, x.not_bundled.as_ref().map(|w| format!(": {w}")).unwrap_or_default())
                } else {
                    format!("bond {} uses {} ({}) but {sw} has {} {}: frames the bond hashes onto that link are lost",
                        h.bond, x.name, x.loc, m.name, m.state.as_ref().map_or(String::new(), |s| s.value.describe()))
                },
                "make both ends agree: same partner, key and protocol on the link (see the member's other findings); `lagkit status` and `show lacp neighbor` show each end's view"));
        }
    }
    // Mode and rate.
    out.extend(mode(h, s, c, &sw));
    out.extend(rate(h, s, c, &sw));
    out
}

fn mode(h: &Host, s: &Show, c: &ShowChannel, sw: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some((p, line)) = protocol(c) else {
        return out;
    };
    let runs = match p {
        Protocol::Lacp => "LACP",
        Protocol::Pagp => "PAgP",
        Protocol::None => "mode on (no protocol)",
    };
    let bad = match (p, h.mode) {
        (Protocol::Lacp, HostMode::Lacp { active, .. }) => {
            let passive = c
                .members
                .iter()
                .filter_map(|m| m.local.as_ref())
                .all(|l| !l.flags.active)
                && c.members.iter().any(|m| m.local.is_some());
            (passive && !active).then(|| (Severity::Error, "both ends are LACP passive: a passive port only answers, so the channel never forms".to_string(), "make one end active (lacp_active = true on the bond, or channel-group N mode active)"))
        }
        (Protocol::Lacp, HostMode::Static | HostMode::RoundRobin | HostMode::Broadcast) => Some((Severity::Error, "the bond runs no LACP, so the switch finds no partner and suspends or isolates its ports".into(), "use mode 802.3ad on the bond, or channel-group N mode on on the switch")),
        (Protocol::Lacp, HostMode::Pagp { .. }) | (Protocol::Pagp, HostMode::Lacp { .. }) => Some((Severity::Error, "LACP and PAgP never form a channel together".into(), "run one protocol on both ends: channel-group N mode active with mode 802.3ad, or desirable/auto with a PAgP bond")),
        (Protocol::Pagp, HostMode::Static | HostMode::RoundRobin | HostMode::Broadcast) => Some((Severity::Warning, "the bond speaks no PAgP: the channel bundles only in silent desirable mode, after a wait, and never notices a failed link".into(), "use channel-group N mode on, or LACP on both ends")),
        (Protocol::None, HostMode::Lacp { .. }) => Some((Severity::Error, "the bond's LACPDUs go unanswered, so its ports stay defaulted and individual while the switch sends on all of them".into(), "use channel-group N mode active on the switch")),
        (Protocol::None, HostMode::Pagp { auto, silent }) => (auto || !silent).then(|| (Severity::Error, "the bond needs a PAgP partner, so its members never join while the switch sends on all of them".into(), "use channel-group N mode desirable or auto on the switch")),
        (Protocol::None, HostMode::ActiveBackup | HostMode::NoChannel) => Some((Severity::Error, "the switch spreads frames for the bond over every port, while the bond takes frames only on the port it is using".into(), "remove the channel-group from the switch ports, or use 802.3ad on the bond with channel-group N mode active")),
        (Protocol::Lacp | Protocol::Pagp, HostMode::ActiveBackup | HostMode::NoChannel) => Some((Severity::Warning, "the switch finds no protocol partner and leaves its ports stand-alone or suspended, so a failover may move the bond to a port that carries nothing".into(), "remove the channel-group from the switch ports, or use 802.3ad on the bond with channel-group N mode active")),
        _ => None,
    };
    if let Some((sev, why, fix)) = bad {
        out.push(finding(
            sev,
            "show-mode-mismatch",
            at(s, line),
            format!(
                "{sw} runs {runs} but bond {} ({}) is {}: {why}",
                h.bond,
                h.loc,
                mode_name(h.mode)
            ),
            fix,
        ));
    }
    out
}

fn mode_name(m: HostMode) -> &'static str {
    match m {
        HostMode::Lacp { active: true, .. } => "802.3ad (LACP active)",
        HostMode::Lacp { active: false, .. } => "802.3ad (LACP passive)",
        HostMode::Static => "balance-xor",
        HostMode::RoundRobin => "balance-rr",
        HostMode::ActiveBackup => "active-backup",
        HostMode::Broadcast => "broadcast",
        HostMode::NoChannel => "balance-tlb/balance-alb",
        HostMode::Pagp { .. } => "PAgP",
    }
}

fn rate(h: &Host, s: &Show, c: &ShowChannel, sw: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let HostMode::Lacp { fast, .. } = h.mode else {
        return out;
    };
    let word = |f: bool| if f { "fast" } else { "slow" };
    if let Some(l) = c
        .members
        .iter()
        .filter_map(|m| m.local.as_ref())
        .find(|l| l.flags.fast != fast)
    {
        out.push(finding(Severity::Warning, "show-rate-mismatch", at(s, l.line),
            format!("{sw} asks for the {} LACP rate (flag {}) but bond {} ({}) asks for the {} rate: the ends notice a dead partner after {} and {}",
                word(l.flags.fast), if l.flags.fast { "F" } else { "S" }, h.bond, h.loc, word(fast),
                if l.flags.fast { "3 s" } else { "90 s" }, if fast { "3 s" } else { "90 s" }),
            "use the same rate on both ends (lacp rate fast on the switch ports with lacp_rate fast on the bond)"));
    }
    if let Some((m, p, f)) = c.members.iter().find_map(|m| {
        let p = m.partner.as_ref().filter(|p| p.system != ZERO)?;
        let f = p.flags?;
        (f.fast != fast).then_some((m, p, f))
    }) {
        out.push(finding(Severity::Warning, "show-rate-mismatch", at(s, p.line),
            format!("{sw}: {} hears its partner ask for the {} rate (flag {}) but bond {} ({}) has lacp_rate {}: the bond does not run as that file says, or the link reaches another device",
                m.name, word(f.fast), if f.fast { "F" } else { "S" }, h.bond, h.loc, word(fast)),
            "give lagkit check the running bond's state (/proc/net/bonding/bondX of the host at the other end), and set the same rate on both ends"));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::facts::{read, End, HostMode};
    use crate::rules::check;
    use crate::{Finding, Severity};

    const PROC: &str = include_str!("../../../examples/check/proc-bonding.txt");
    const SESSION: &str = include_str!("../../../examples/check/show-session.txt");
    const WRONG: &str = include_str!("../../../examples/check/show-lacp.txt");
    const SUSPENDED: &str = include_str!("../../../examples/check/show-suspended.txt");
    const PAGP: &str = include_str!("../tests/show/pagp.txt");

    fn run(show: &str, host: &str) -> Vec<Finding> {
        let s = read("show.txt", show).unwrap();
        assert!(matches!(s, End::Show(_)), "{s:?}");
        let h = read("bond0", host).unwrap();
        check(&[s, h], None)
    }

    fn with<'a>(f: &'a [Finding], code: &str) -> Vec<&'a Finding> {
        f.iter().filter(|x| x.code == code).collect()
    }

    #[test]
    fn a_matching_pair_says_nothing() {
        let f = run(SESSION, PROC);
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn the_switch_hears_another_system() {
        let f = run(WRONG, PROC);
        let m = with(&f, "partner-system-mismatch");
        assert_eq!(m.len(), 2, "{f:#?}");
        assert_eq!(m[0].severity, Severity::Error);
        assert_eq!(m[0].loc.to_string(), "show.txt:12");
        assert!(m[0].reason.contains("025a.0000.0c01"), "{}", m[0]);
        assert!(
            m[0].reason.contains("02:5a:00:00:0b:01 (bond0:17)"),
            "{}",
            m[0]
        );
        assert!(m[0].fix.contains("eno1, eno2"), "{}", m[0]);
    }

    #[test]
    fn the_host_hears_another_switch() {
        let other = SESSION.replace("32768, 001b.54c2.7a80", "32768, 001b.54c2.9900");
        let f = run(&other, PROC);
        let m = with(&f, "partner-system-mismatch");
        // One per host member, at its partner block's line.
        assert_eq!(m.len(), 2, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "bond0:46");
        assert!(m[0].reason.contains("(show.txt:37)"), "{}", m[0]);
        assert_eq!(f.len(), 2, "{f:#?}");
    }

    #[test]
    fn keys_that_do_not_match() {
        // The switch hears the host's system with another key.
        let f = run(
            &SESSION.replace("0x0    0x9    0x2", "0x0    0xF    0x2"),
            PROC,
        );
        let m = with(&f, "partner-key-mismatch");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:34");
        // The host hears a key the channel's ports do not have.
        let host = PROC.replacen("    oper key: 10\n", "    oper key: 11\n", 1);
        let f = run(SESSION, &host);
        let m = with(&f, "partner-key-mismatch");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "bond0:46");
        assert!(
            m[0].reason.contains("0xb") && m[0].reason.contains("0xa (show.txt:46)"),
            "{}",
            m[0]
        );
    }

    #[test]
    fn bundled_on_one_end_only() {
        // The host put eno2 in an aggregator of its own.
        let host = PROC.replacen(
            "Aggregator ID: 1\nActor Churn",
            "Aggregator ID: 2\nActor Churn",
            2,
        );
        let host = host.replacen(
            "Aggregator ID: 2\nActor Churn",
            "Aggregator ID: 1\nActor Churn",
            1,
        );
        let f = run(SESSION, &host);
        let m = with(&f, "member-bundled-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:20");
        assert!(m[0].reason.contains("bundles GigabitEthernet1/0/48 but bond bond0 does not use eno2 at the other end (bond0:52)"), "{}", m[0]);
        // The switch suspends a link the host uses.
        let f = run(SUSPENDED, PROC);
        let m = with(&f, "member-bundled-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert!(m[0].reason.contains("suspended (s)"), "{}", m[0]);
    }

    /// The switch's output lists one port where the bond uses two: the
    /// member it lacks is a finding from the host's end (once, silence).
    #[test]
    fn a_host_member_the_switch_does_not_list() {
        let one: String = SESSION
            .lines()
            .filter(|l| !l.contains("Gi1/0/48"))
            .map(|l| format!("{l}\n"))
            .collect();
        let f = run(&one, PROC);
        let m = with(&f, "member-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(
            (m[0].severity, m[0].loc.to_string()),
            (Severity::Error, "bond0:52".into())
        );
        assert!(m[0].reason.contains("bond bond0 has member eno2 (up and in use, LACP port 2) but dist-b channel 10 has no port facing it: it hears the switch's port number 305, which no port of the channel has, and no port of the channel hears its LACP port 2; frames the bond hashes onto it reach no port of the channel"), "{}", m[0]);
        // Its port is in another channel: named. With both channels
        // hearing the bond's system and key, which one is the bond's is
        // not guessed.
        let moved = format!("{one}dist-b#show lacp 11 neighbor\nChannel group 11 neighbors\n                  LACP port                        Admin  Oper   Port    Port\nPort      Flags   Priority  Dev ID          Age    key    Key    Number  State\nGi1/0/48  FA      255       025a.0000.0b01   0s    0x0    0x9    0x2     0x3F\n");
        let f = run(&moved, PROC);
        assert_eq!(with(&f, "show-channel-ambiguous").len(), 1, "{f:#?}");
        assert!(with(&f, "member-one-end").is_empty(), "{f:#?}");
        let f = check(
            &[
                read("show.txt", &moved).unwrap(),
                read("bond0", PROC).unwrap(),
            ],
            Some(10),
        );
        let m = with(&f, "member-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert!(
            m[0].reason
                .contains("GigabitEthernet1/0/48 in channel 11 faces it, not a port of channel 10"),
            "{}",
            m[0]
        );
        // A port hearing a port number the bond has not (its own number
        // not shown): a finding from each end.
        let extra = SESSION
            .replace(
                "Gi1/0/48  FA      255       025a.0000.0b01   0s    0x0    0x9    0x2 ",
                "Gi1/0/48  FA      255       025a.0000.0b01   0s    0x0    0x9    0x7 ",
            )
            .replace(
                "Gi1/0/48  FA      bndl      32768         0xA       0xA     0x131       0x3F  \n",
                "",
            );
        let f = run(&extra, PROC);
        let m = with(&f, "member-one-end");
        assert_eq!(m.len(), 2, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:34");
        assert!(m[0].reason.contains("dist-b channel 10: GigabitEthernet1/0/48 (bundled (P)) hears LACP port 7 of bond bond0's system, but bond bond0 (bond0:3) has no member with that port number (its members: eno1 (port 1), eno2 (port 2))"), "{}", m[0]);
    }

    /// The switch's port negotiated half duplex while the host's member
    /// runs full: a duplex mismatch on that link; another speed: another
    /// cable.
    #[test]
    fn a_link_whose_ends_run_another_duplex_or_speed() {
        let half = SESSION.replace(
            "Gi1/0/48  srv-b eno2         connected    120        a-full a-1000",
            "Gi1/0/48  srv-b eno2         connected    120        a-half a-1000",
        );
        let f = run(&half, PROC);
        let m = with(&f, "member-link-differs");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:53");
        assert!(m[0].reason.contains("dist-b channel 10: GigabitEthernet1/0/48 runs half duplex (a-half) but bond bond0's eno2 at its other end runs full duplex: a duplex mismatch"), "{}", m[0]);
        let slow = SESSION.replace(
            "Gi1/0/48  srv-b eno2         connected    120        a-full a-1000",
            "Gi1/0/48  srv-b eno2         connected    120        a-full  a-100",
        );
        let m = run(&slow, PROC);
        let m = with(&m, "member-link-differs");
        assert_eq!(m.len(), 1);
        assert!(m[0].reason.contains("runs at a-100 (100 Mbit/s) but bond bond0's eno2 at its other end runs at 1000 Mbit/s"), "{}", m[0]);
    }

    /// A bond's configuration says nothing of running members: no member
    /// is matched or counted against the show output.
    #[test]
    fn a_configuration_has_no_members_to_match() {
        let toml = "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eno1\", \"eno2\"]\n";
        let down = SESSION.replace("Gi1/0/48(P)", "Gi1/0/48(D)");
        let f = check(
            &[
                read("show.txt", &down).unwrap(),
                read("bond.toml", toml).unwrap(),
            ],
            None,
        );
        assert!(!f.iter().any(|x| x.code.starts_with("member-")), "{f:#?}");
    }

    /// A member down at the host whose switch port is bundled (the
    /// example's eno2 with its link down, as the kernel then shows it).
    #[test]
    fn a_bundled_port_whose_host_member_is_down() {
        let down = PROC.replacen(
            "Slave Interface: eno2\nMII Status: up\nSpeed: 1000 Mbps\nDuplex: full\nLink Failure Count: 0",
            "Slave Interface: eno2\nMII Status: down\nSpeed: Unknown\nDuplex: Unknown\nLink Failure Count: 3",
            1,
        );
        let f = run(SESSION, &down);
        let m = with(&f, "member-up-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(
            (m[0].severity, m[0].loc.to_string()),
            (Severity::Error, "show.txt:20".into())
        );
        assert!(m[0].reason.contains("dist-b channel 10 has GigabitEthernet1/0/48 bundled (P) but bond bond0's eno2 at its other end (bond0:52, matched by the LACP port number the switch hears) is down (MII Status: down, 3 link failures)"), "{}", m[0]);
        // Said once: not again as bundled at one end only.
        assert!(with(&f, "member-bundled-one-end").is_empty(), "{f:#?}");
        // And the other way: the switch's port not connected, the host's
        // member up and in use.
        let notconnect = SESSION.replace(
            "Gi1/0/48  srv-b eno2         connected",
            "Gi1/0/48  srv-b eno2         notconnect",
        );
        let f = run(&notconnect, PROC);
        let m = with(&f, "member-up-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert!(m[0].reason.contains("dist-b channel 10 has GigabitEthernet1/0/48 notconnect (show interfaces status) but bond bond0's eno2 at its other end"), "{}", m[0]);
    }

    #[test]
    fn members_not_bundled_and_why() {
        let s = |t: &str| check(&[read("show.txt", t).unwrap()], None);
        // With the host: its reason too, once.
        let f = check(
            &[
                read("show.txt", &SESSION.replace("Gi1/0/48(P)", "Gi1/0/48(s)")).unwrap(),
                read("status.json", STATUS).unwrap(),
            ],
            None,
        );
        let m = with(&f, "show-member-not-bundled");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert!(
            m[0].reason
                .contains("the host says of its end: partner not in sync"),
            "{}",
            m[0]
        );
        let f = s(SUSPENDED);
        let m = with(&f, "show-member-not-bundled");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(
            (m[0].severity, m[0].loc.to_string()),
            (Severity::Warning, "show.txt:97".into())
        );
        assert!(m[0].reason.contains("its LACP partner is system 025a.0000.0c01 (line 53) but the bundled members' is 025a.0000.0b01"), "{}", m[0]);
        // No LACPDU heard; a link that is down; hot standby.
        let silent = SESSION.replace("Gi1/0/48(P)", "Gi1/0/48(I)").replace(
            "025a.0000.0b01   0s    0x0    0x9    0x2     0x3F",
            "0000.0000.0000   0s    0x0    0x0    0x0     0x0",
        );
        let f = s(&silent);
        assert!(
            with(&f, "show-member-not-bundled")[0]
                .reason
                .contains("stand-alone (I): it hears no LACPDU"),
            "{f:#?}"
        );
        let down = SESSION.replace("Gi1/0/48(P)", "Gi1/0/48(D)").replace(
            "Gi1/0/48  srv-b eno2         connected",
            "Gi1/0/48  srv-b eno2         err-disabled",
        );
        let f = s(&down);
        assert!(
            with(&f, "show-member-not-bundled")[0]
                .reason
                .contains("its link is err-disabled (show interfaces status, line 53)"),
            "{f:#?}"
        );
        let standby = SESSION.replace("Gi1/0/48(P)", "Gi1/0/48(H)");
        let f = s(&standby);
        let m = with(&f, "show-member-not-bundled");
        assert_eq!(m[0].severity, Severity::Info, "{f:#?}");
        assert!(m[0].reason.contains("waits as standby"), "{}", m[0]);
    }

    #[test]
    fn rate_and_mode() {
        let slow = PROC.replace("LACP rate: fast", "LACP rate: slow");
        let f = run(SESSION, &slow);
        let m = with(&f, "show-rate-mismatch");
        assert_eq!(m.len(), 2, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:46");
        assert!(
            m[0].reason.contains("asks for the fast LACP rate (flag F)"),
            "{}",
            m[0]
        );
        assert!(
            m[1].reason
                .contains("hears its partner ask for the fast rate"),
            "{}",
            m[1]
        );
        // PAgP or mode on facing an 802.3ad bond.
        let pagp = SESSION.replace("Po10(SU)        LACP", "Po10(SU)        PAgP");
        let m = run(&pagp, PROC);
        let m = with(&m, "show-mode-mismatch");
        assert_eq!(
            (m[0].severity, m[0].loc.to_string()),
            (Severity::Error, "show.txt:20".into())
        );
        assert!(
            m[0].reason
                .contains("runs PAgP but bond bond0 (bond0:3) is 802.3ad"),
            "{}",
            m[0]
        );
        let on = "sw#sh etherchannel summary\nGroup  Port-channel  Protocol    Ports\n10     Po10(SU)         -        Gi1/0/47(P) Gi1/0/48(P)\n";
        let f = run(on, PROC);
        assert!(
            with(&f, "show-mode-mismatch")[0]
                .reason
                .contains("mode on (no protocol)"),
            "{f:#?}"
        );
        let xor = PROC.replace(
            "IEEE 802.3ad Dynamic link aggregation",
            "load balancing (xor)",
        );
        assert!(!with(&run(on, &xor), "show-mode-mismatch")
            .iter()
            .any(|x| x.severity == Severity::Error));
        assert!(!with(&run(SESSION, &xor), "show-mode-mismatch").is_empty());
    }

    #[test]
    fn an_idle_member() {
        let idle = SESSION.replace(
            "Gi1/0/48      5877310442        4609981",
            "Gi1/0/48           12044             95",
        );
        let f = check(&[read("show.txt", &idle).unwrap()], None);
        let m = with(&f, "show-member-idle");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "show.txt:59");
        assert!(m[0].reason.contains("GigabitEthernet1/0/48 received 12044 octets while GigabitEthernet1/0/47 received 6130248711"), "{}", m[0]);
        assert!(m[0].fix.contains("layer3+4"), "{}", m[0]);
        // Both carry: nothing; too little traffic to tell: nothing.
        assert!(with(
            &check(&[read("s", SESSION).unwrap()], None),
            "show-member-idle"
        )
        .is_empty());
        let quiet = idle.replace("6130248711", "600000");
        assert!(with(
            &check(&[read("s", &quiet).unwrap()], None),
            "show-member-idle"
        )
        .is_empty());
    }

    #[test]
    fn pagp_partners_and_several_channels() {
        let json = STATUS.replacen("\"pagp\": null", "\"pagp\": {\"mode\": \"desirable\", \"silent\": false, \"rate\": \"slow\", \"device_id\": \"02:aa:00:00:00:09\", \"members_in_channel\": 2}", 1);
        let s = read("show.txt", PAGP).unwrap();
        let h = read("status.json", &json).unwrap();
        let f = check(&[s.clone(), h], None);
        let m = with(&f, "partner-system-mismatch");
        assert_eq!(m.len(), 2, "{f:#?}");
        assert!(
            m[0].reason.contains("PAgP device 02aa.0000.0001 (srv-p)"),
            "{}",
            m[0]
        );
        // The right device: no mismatch. Two channels: the PAgP one faces it.
        let ok = json.replace("02:aa:00:00:00:09", "02:aa:00:00:00:01");
        let f = check(&[s.clone(), read("status.json", &ok).unwrap()], None);
        assert!(with(&f, "partner-system-mismatch").is_empty(), "{f:#?}");
        assert!(with(&f, "show-which-channel").is_empty(), "{f:#?}");
        // A host no channel names: which one?
        let lacp = read("status.json", STATUS).unwrap();
        let f = check(&[s, lacp], None);
        assert_eq!(with(&f, "show-which-channel").len(), 1, "{f:#?}");
    }

    /// Several bonds in one file, the first running PAgP (whose
    /// `pagp.mode` is no bond's `mode`): each bond's facts point at its own
    /// lines.
    #[test]
    fn each_bond_of_a_status_array_has_its_own_lines() {
        let mut v: Vec<serde_json::Value> = serde_json::from_str(STATUS).unwrap();
        let lacp = v[0].clone();
        v[0]["pagp"] = serde_json::json!({"mode": "desirable", "silent": false, "rate": "slow",
            "device_id": "02:aa:00:00:00:09", "members_in_channel": 2});
        for (n, sys) in [
            ("bond1", "02:5a:00:00:0b:11"),
            ("bond2", "02:5a:00:00:0b:21"),
        ] {
            let mut b = lacp.clone();
            b["name"] = n.into();
            b["lacp"]["system_mac"] = sys.into();
            for m in b["members"].as_array_mut().unwrap() {
                let name = format!("{n}-{}", m["name"].as_str().unwrap());
                m["name"] = name.into();
            }
            v.push(b);
        }
        // In the daemon's key order, through its type.
        let typed: Vec<lagkit_api::status::BondStatus> =
            serde_json::from_value(serde_json::Value::Array(v)).unwrap();
        let text = serde_json::to_string_pretty(&typed).unwrap();
        let line_of = |needle: &str| {
            let i = text.lines().position(|l| l.contains(needle)).unwrap();
            format!("status.json:{}", i + 1)
        };
        let h = read("status.json", &text).unwrap();
        let End::Hosts(hs) = &h else { panic!("{h:?}") };
        assert_eq!(hs.len(), 3);
        for (i, sys) in [(1, "02:5a:00:00:0b:11"), (2, "02:5a:00:00:0b:21")] {
            let r = hs[i].running.as_ref().unwrap();
            let at = r.system.as_ref().map(|s| s.1.to_string());
            assert_eq!(at, Some(line_of(sys)), "bond {i}");
        }
        // A bad mode in the third bond names its own `mode` line.
        let modes: Vec<usize> = (text.lines().enumerate())
            .filter(|(_, l)| l.contains("\"mode\": \"802.3ad"))
            .map(|(i, _)| i + 1)
            .collect();
        let bad = (text.lines().enumerate())
            .map(|(i, l)| {
                if i + 1 == modes[2] {
                    l.replace("802.3ad", "X802.3ad")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let e = read("status.json", &bad).expect_err("a bad mode");
        assert!(
            e.to_string().contains(&format!("status.json:{}", modes[2])),
            "{e}"
        );
    }

    /// `lagkit status --json` of an 802.3ad bond: a `BondStatus` as the
    /// daemon serializes it (`serde_json::to_string_pretty`).
    const STATUS: &str = r#"[
  {
    "name": "bond0",
    "mode": "802.3ad",
    "xmit_hash_policy": "layer3+4",
    "xmit_hash_number": 1,
    "hash_seed": null,
    "hash_symmetric": false,
    "uses_xmit_hash": true,
    "engine": "userspace",
    "engine_reason": "engine = userspace",
    "mii_status": "up",
    "speed_mbps": 2000,
    "mac": "02:5a:00:00:0b:01",
    "mtu": 1500,
    "miimon_ms": 100,
    "updelay_ms": 0,
    "downdelay_ms": 0,
    "peer_notif_delay_ms": 0,
    "arp": null,
    "fail_over_mac": "none",
    "primary": null,
    "primary_reselect": "always",
    "active_member": null,
    "lacp": {
      "lacp_rate": "fast",
      "lacp_activity": "on",
      "min_links": 0,
      "ad_select": "stable",
      "system_priority": 65535,
      "system_mac": "02:5a:00:00:0b:01",
      "aggregator_id": 1,
      "number_of_ports": 1,
      "actor_key": 9,
      "partner_key": 10,
      "partner_mac": "00:1b:54:c2:7a:80",
      "partner_priority": 32768
    },
    "pagp": null,
    "members": [
      {
        "name": "eno1",
        "mii_status": "up",
        "speed_mbps": 1000,
        "full_duplex": true,
        "link_failure_count": 0,
        "permanent_hw_addr": "3c:ec:ef:10:00:01",
        "queue_id": 0,
        "transmitting": true,
        "collecting": true,
        "leaving": false,
        "watchers": [
          [
            "carrier",
            true
          ]
        ],
        "isolation": "tcx",
        "offloads": null,
        "lacp": {
          "aggregator_id": 1,
          "rx_state": "CURRENT",
          "mux_state": "COLLECTING_DISTRIBUTING",
          "selected": "SELECTED",
          "actor_churn_state": "none",
          "partner_churn_state": "none",
          "actor_churned_count": 0,
          "partner_churned_count": 0,
          "actor_system_priority": 65535,
          "actor_system_mac": "02:5a:00:00:0b:01",
          "actor_port_priority": 255,
          "actor_port": 1,
          "actor_key": 9,
          "actor_state": 63,
          "partner_system_priority": 32768,
          "partner_mac": "00:1b:54:c2:7a:80",
          "partner_port_priority": 32768,
          "partner_port": 304,
          "partner_key": 10,
          "partner_state": 63,
          "not_bundled": null
        },
        "pagp": null
      },
      {
        "name": "eno2",
        "mii_status": "up",
        "speed_mbps": 1000,
        "full_duplex": true,
        "link_failure_count": 0,
        "permanent_hw_addr": "3c:ec:ef:10:00:02",
        "queue_id": 0,
        "transmitting": false,
        "collecting": false,
        "leaving": false,
        "watchers": [
          [
            "carrier",
            true
          ]
        ],
        "isolation": "tcx",
        "offloads": null,
        "lacp": {
          "aggregator_id": 1,
          "rx_state": "CURRENT",
          "mux_state": "WAITING",
          "selected": "SELECTED",
          "actor_churn_state": "none",
          "partner_churn_state": "none",
          "actor_churned_count": 0,
          "partner_churned_count": 0,
          "actor_system_priority": 65535,
          "actor_system_mac": "02:5a:00:00:0b:01",
          "actor_port_priority": 255,
          "actor_port": 2,
          "actor_key": 9,
          "actor_state": 7,
          "partner_system_priority": 32768,
          "partner_mac": "00:1b:54:c2:7a:80",
          "partner_port_priority": 32768,
          "partner_port": 305,
          "partner_key": 10,
          "partner_state": 63,
          "not_bundled": "partner not in sync"
        },
        "pagp": null
      }
    ],
    "problems": [],
    "details_withheld": false
  }
]"#;

    #[test]
    fn lagkit_status_json_as_the_host() {
        // The fixture is exactly what the daemon writes today.
        let typed: Vec<lagkit_api::status::BondStatus> = serde_json::from_str(STATUS).unwrap();
        assert_eq!(serde_json::to_string_pretty(&typed).unwrap(), STATUS);
        let h = read("status.json", STATUS).unwrap();
        let End::Hosts(hs) = &h else { panic!("{h:?}") };
        let r = hs[0].running.as_ref().unwrap();
        let line_of = |needle: &str| {
            let i = STATUS.lines().position(|l| l.contains(needle)).unwrap();
            format!("status.json:{}", i + 1)
        };
        assert_eq!(
            r.system.as_ref().map(|s| s.1.to_string()),
            Some(line_of("\"system_mac\""))
        );
        let eno2 = line_of("\"name\": \"eno2\"");
        assert_eq!(r.members[1].loc.to_string(), eno2);
        let f = check(&[read("show.txt", SESSION).unwrap(), h], None);
        let m = with(&f, "member-bundled-one-end");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert!(
            m[0].reason.contains(&format!(
                "eno2 at the other end ({eno2}): partner not in sync"
            )),
            "{}",
            m[0]
        );
        let e = read(
            "status.json",
            "[{\"name\": 1, \"xmit_hash_policy\": \"\", \"mii_status\": \"\"}]",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("status.json:1:"), "{e}");
    }

    /// `lagkit status --format proc` is read as the kernel's file is, and
    /// against the switch whose session it saw, it agrees.
    #[test]
    fn lagkit_status_in_the_proc_layout_reads_as_the_kernels_file() {
        let typed: Vec<lagkit_api::status::BondStatus> = serde_json::from_str(STATUS).unwrap();
        let mut both_up = typed[0].clone();
        for m in &mut both_up.members {
            let l = m.lacp.as_mut().unwrap();
            l.mux_state = "COLLECTING_DISTRIBUTING".into();
            l.actor_state = 0x3f;
            l.not_bundled = None;
            m.transmitting = true;
            m.collecting = true;
        }
        both_up.lacp.as_mut().unwrap().number_of_ports = 2;
        let text = both_up.render_proc("6.8.0-90-generic");
        let End::Hosts(hs) = read("bond0", &text).unwrap() else {
            panic!("{text}")
        };
        let r = hs[0].running.as_ref().expect("the LACP lines are read");
        assert_eq!(r.members.len(), 2);
        assert_eq!(r.members[1].partner_port, Some(305));
        assert_eq!(r.members[0].actor_state, Some(0x3f));
        let alone = check(&[End::Hosts(hs.clone())], None);
        assert!(alone.is_empty(), "{alone:#?}");
    }

    #[test]
    fn lagkit_status_json_of_one_bond_reads_its_lacp_enums() {
        let one = STATUS
            .trim()
            .strip_prefix('[')
            .unwrap()
            .strip_suffix(']')
            .unwrap();
        let passive = one
            .replace(r#""lacp_rate": "fast""#, r#""lacp_rate": "slow""#)
            .replace(
                r#""lacp_activity": "on""#,
                r#""lacp_activity": "off (passive)""#,
            );
        let End::Hosts(h) = read("status.json", &passive).unwrap() else {
            panic!()
        };
        assert_eq!(
            h[0].mode,
            HostMode::Lacp {
                active: false,
                fast: false
            }
        );
        // A rate the daemon never writes is an error at its line.
        let e = read("status.json", &one.replace(r#""fast""#, r#""medium""#)).unwrap_err();
        let rate = one
            .lines()
            .position(|l| l.contains("\"lacp_rate\""))
            .unwrap()
            + 1;
        assert!(
            e.to_string().starts_with(&format!("status.json:{rate}:")),
            "{e}"
        );
    }
}
