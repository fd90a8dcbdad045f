//! The LACP and PAgP family of `show` commands in IOS's own layouts:
//! `show lacp sys-id | counters | internal | neighbor [detail]`, `show
//! pagp counters | internal | neighbor`, `show etherchannel [N] detail`
//! and `show etherchannel load-balancing`.
//!
//! The layouts are the ones the automation tools read (Cisco's Genie
//! parsers, ntc-templates): the column order, `0x` keys and port states,
//! `Ns` ages, `Channel group N` headings. Values are the protocol cores'
//! own: the actor and partner information LACP holds, the PDU counters
//! each port keeps, the time the daemon last received a PDU on a port.
//! The test `crates/cli/tests/ios_parsers.rs` parses them with both tools.

use crate::daemon::Switch;
use crate::protocol::Response;
use lagkit_api::switch::{ChannelDetail, EtherchannelDetail, MemberDetail, Partner};
use lagkit_proto::{lacp, pagp};
use lagkit_switch::config::ChannelSpec;
use lagkit_switch::running::{LACP_PORT_PRIORITY, PAGP_PORT_PRIORITY};
use lagkit_switch::show::{short_name, MemberFlag};
use lagkit_switch::PortId;
use lagkit_wire::lacp::{PortInfo, PortState as S};
use serde_json::json;
use std::fmt::Write;

const LACP_FLAGS: &str = "Flags:  S - Device is requesting Slow LACPDUs\n        F - Device is requesting Fast LACPDUs\n        A - Device is in Active mode       P - Device is in Passive mode\n";
const PAGP_FLAGS: &str = "Flags:  S - Device is sending Slow hello.  C - Device is in Consistent state.\n        A - Device is in Auto mode.        P - Device learns on physical port.\n        d - PAgP is down.\n";
const PAGP_TIMERS: &str = "Timers: H - Hello timer is running.        Q - Quit timer is running.\n        S - Switching timer is running.    I - Interface timer is running.\n";
const LACP_LOCAL_HEAD: &str = "                            LACP port     Admin     Oper    Port        Port\nPort      Flags   State     Priority      Key       Key     Number      State\n";
const LACP_PARTNER_HEAD: &str = "                  LACP port                        Admin  Oper   Port    Port\nPort      Flags   Priority  Dev ID          Age    key    Key    Number  State\n";
const PAGP_LOCAL_HEAD: &str = "                                Hello    Partner  PAgP     Learning  Group\nPort      Flags State   Timers  Interval Count   Priority   Method  Ifindex\n";
const PAGP_PARTNER_HEAD: &str = "          Partner              Partner          Partner         Partner Group\nPort      Name                 Device ID        Port       Age  Flags   Cap.\n";

/// `0x3D`: IOS's hex, the prefix in lower case and the digits in upper.
pub(crate) fn hx(v: impl Into<u64>) -> String {
    format!("0x{:X}", v.into())
}

/// `0d:00h:03m:14s`.
pub(crate) fn dhms(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    format!(
        "{}d:{:02}h:{:02}m:{:02}s",
        s / 86_400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// `SA`, `FP`: the rate a port asks for and its activity.
fn lacp_flags(state: S) -> String {
    format!(
        "{}{}",
        if state.has(S::TIMEOUT) { 'F' } else { 'S' },
        if state.has(S::ACTIVITY) { 'A' } else { 'P' }
    )
}

/// IOS's member state word in `show lacp internal`.
fn lacp_state_word(f: MemberFlag) -> &'static str {
    match f {
        MemberFlag::Bundled => "bndl",
        MemberFlag::Suspended => "susp",
        MemberFlag::HotStandby => "hot-sby",
        MemberFlag::Individual => "indep",
        MemberFlag::Down => "down",
        MemberFlag::Waiting => "waiting",
    }
}

fn protocol_word(spec: &ChannelSpec) -> &'static str {
    match spec.mode.protocol() {
        "lacp" => "LACP",
        "pagp" => "PAgP",
        _ => "-",
    }
}

fn port_name(sw: &Switch, p: PortId) -> String {
    sw.core()
        .bridge()
        .port(p)
        .map_or(format!("port{}", p.0), |c| c.name.clone())
}

fn channels<'a>(sw: &'a Switch, protocol: &'a str) -> impl Iterator<Item = &'a ChannelSpec> {
    sw.core()
        .channels()
        .iter()
        .filter(move |c| c.mode.protocol() == protocol)
}

/// The actor's information of a member: LACP's own, or for a member LACP
/// does not run on (a suspended one) what it would send.
fn actor(sw: &Switch, spec: &ChannelSpec, p: PortId, active: bool) -> PortInfo {
    match sw.core().lacp_status(p) {
        Some(st) => st.actor,
        None => {
            let mut state = S(S::AGGREGATION);
            state.set(S::ACTIVITY, active);
            state.set(S::TIMEOUT, spec.lacp_fast);
            PortInfo {
                system: sw.core().lacp_system(),
                key: u16::try_from(spec.id.0).unwrap_or(u16::MAX),
                port_priority: LACP_PORT_PRIORITY,
                port: (p.0 + 1) as u16,
                state,
            }
        }
    }
}

fn partner_row(sw: &Switch, p: PortId, st: &lacp::PortStatus, now: u64) -> String {
    let pt = &st.partner;
    format!(
        "{:<9} {:<7} {:<9} {:<15} {:>4}s  0x0    {:<6} {:<7} 0x{:02X}\n",
        short_name(&port_name(sw, p)),
        lacp_flags(pt.state),
        pt.port_priority,
        pt.system.mac.dotted(),
        sw.core().heard_age(p, now, true).unwrap_or(0),
        hx(pt.key),
        hx(pt.port),
        pt.state.0
    )
}

fn local_row(sw: &Switch, spec: &ChannelSpec, p: PortId, flag: MemberFlag, active: bool) -> String {
    let a = actor(sw, spec, p, active);
    format!(
        "{:<9} {:<7} {:<9} {:<13} {:<9} {:<7} {:<11} {}\n",
        short_name(&port_name(sw, p)),
        lacp_flags(a.state),
        lacp_state_word(flag),
        a.port_priority,
        hx(a.key),
        hx(a.key),
        hx(a.port),
        hx(a.state.0)
    )
}

fn flags_of(sw: &Switch, spec: &ChannelSpec) -> Vec<MemberFlag> {
    sw.core().flags(spec).into_iter().map(|(f, _)| f).collect()
}

/// `show lacp sys-id`.
pub(crate) fn lacp_sys_id(sw: &Switch) -> Response {
    let id = sw.core().lacp_system();
    Response::Show {
        text: format!("{}, {}\n", id.priority, id.mac.dotted()),
        json: json!({ "system_priority": id.priority, "system_mac": id.mac.to_string() }),
    }
}

/// `show lacp internal`: each LACP member's own information.
pub(crate) fn lacp_internal(sw: &Switch) -> Response {
    let mut text = String::from(LACP_FLAGS);
    let mut rows = Vec::new();
    for spec in channels(sw, "lacp") {
        let _ = write!(text, "\nChannel group {}\n{LACP_LOCAL_HEAD}", spec.id.0);
        for ((p, mode), flag) in spec.members.iter().zip(flags_of(sw, spec)) {
            let active = *mode == lagkit_ios::ChannelMode::Active;
            text.push_str(&local_row(sw, spec, *p, flag, active));
            let a = actor(sw, spec, *p, active);
            rows.push(json!({
                "channel": spec.id.0, "port": port_name(sw, *p),
                "state": lacp_state_word(flag), "flags": lacp_flags(a.state),
                "port_priority": a.port_priority, "admin_key": a.key, "oper_key": a.key,
                "port_number": a.port, "port_state": a.state.0,
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "members": rows }),
    }
}

/// `show lacp neighbor`: each LACP member's partner as LACP last heard it.
pub(crate) fn lacp_neighbor(sw: &Switch, now: u64) -> Response {
    let mut text = String::from(LACP_FLAGS);
    let mut rows = Vec::new();
    for spec in channels(sw, "lacp") {
        let _ = write!(
            text,
            "\nChannel group {} neighbors\n\nPartner's information:\n\n{LACP_PARTNER_HEAD}",
            spec.id.0
        );
        for (p, _) in &spec.members {
            let Some(st) = sw.core().lacp_status(*p) else {
                continue;
            };
            text.push_str(&partner_row(sw, *p, &st, now));
            let partner = st.partner;
            let heard = !partner.state.has(S::DEFAULTED) && partner.system.mac.0 != [0; 6];
            rows.push(json!({
                "channel": spec.id.0,
                "port": port_name(sw, *p),
                "heard": heard,
                "age_s": sw.core().heard_age(*p, now, true),
                "partner_system": partner.system.to_string(),
                "partner_key": partner.key,
                "partner_port": partner.port,
                "partner_port_priority": partner.port_priority,
                "partner_state": partner.state.0,
                "partner_fast": partner.state.has(S::TIMEOUT),
                "partner_active": partner.state.has(S::ACTIVITY),
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "neighbors": rows }),
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "Yes"
    } else {
        "No"
    }
}

/// `show lacp neighbor detail`.
pub(crate) fn lacp_neighbor_detail(sw: &Switch, now: u64) -> Response {
    let mut text = String::new();
    let mut rows = Vec::new();
    for spec in channels(sw, "lacp") {
        let _ = write!(
            text,
            "Channel group {} neighbors\n\nPartner's information:\n\n",
            spec.id.0
        );
        for (p, _) in &spec.members {
            let Some(st) = sw.core().lacp_status(*p) else {
                continue;
            };
            let pt = &st.partner;
            let age = sw.core().heard_age(*p, now, true).unwrap_or(0);
            let _ = write!(
                text,
                "                   Partner                 Partner                     Partner\n\
Port             System ID              Port Number     Age         Flags\n\
{:<16} {:<23} {:<15} {:>3}s        {}\n\n",
                short_name(&port_name(sw, *p)),
                format!("{},{}", pt.system.priority, pt.system.mac.dotted()),
                hx(pt.port),
                age,
                lacp_flags(pt.state)
            );
            let pad = " ".repeat(19);
            let _ = write!(
                text,
                "{pad}LACP Partner         Partner         Partner\n{pad}Port Priority        Oper Key        Port State\n{pad}{:<20} {:<15} {}\n\n",
                pt.port_priority,
                hx(pt.key),
                hx(pt.state.0)
            );
            let word = |b: bool, on: &'static str, off: &'static str| if b { on } else { off };
            let _ = write!(
                text,
                "                  Port State Flags Decode:\n{pad}Activity:   Timeout:   Aggregation:   Synchronization:\n{pad}{:<11} {:<10} {:<14} {}\n\n{pad}Collecting:   Distributing:   Defaulted:   Expired:\n{pad}{:<13} {:<15} {:<12} {}\n\n",
                word(pt.state.has(S::ACTIVITY), "Active", "Passive"),
                word(pt.state.has(S::TIMEOUT), "Short", "Long"),
                yes(pt.state.has(S::AGGREGATION)),
                yes(pt.state.has(S::SYNCHRONIZATION)),
                yes(pt.state.has(S::COLLECTING)),
                yes(pt.state.has(S::DISTRIBUTING)),
                yes(pt.state.has(S::DEFAULTED)),
                yes(pt.state.has(S::EXPIRED)),
            );
            rows.push(json!({
                "channel": spec.id.0, "port": port_name(sw, *p), "age_s": age,
                "partner_system": pt.system.to_string(), "partner_port": pt.port,
                "partner_key": pt.key, "partner_port_priority": pt.port_priority,
                "partner_state": pt.state.0,
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "neighbors": rows }),
    }
}

/// `show lacp counters`: LACPDUs and Marker PDUs each member sent and
/// received.
pub(crate) fn lacp_counters(sw: &Switch) -> Response {
    let mut text = String::from(
        "             LACPDUs         Marker      Marker Response    LACPDUs\n\
Port       Sent   Recv     Sent   Recv     Sent   Recv      Pkts Err\n\
---------------------------------------------------------------------\n",
    );
    let mut rows = Vec::new();
    for spec in channels(sw, "lacp") {
        let _ = writeln!(text, "Channel group: {}", spec.id.0);
        for (p, _) in &spec.members {
            let c = sw
                .core()
                .lacp_status(*p)
                .map(|s| s.counters)
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "{:<9} {:>6} {:>6}   {:>6} {:>6}   {:>6} {:>6}    {:>6}",
                short_name(&port_name(sw, *p)),
                c.lacpdu_tx,
                c.lacpdu_rx,
                0,
                c.marker_rx,
                c.marker_response_tx,
                c.marker_response_rx,
                c.bad_rx
            );
            rows.push(json!({
                "channel": spec.id.0, "port": port_name(sw, *p),
                "lacpdu_sent": c.lacpdu_tx, "lacpdu_received": c.lacpdu_rx,
                "marker_sent": 0, "marker_received": c.marker_rx,
                "marker_response_sent": c.marker_response_tx,
                "marker_response_received": c.marker_response_rx,
                "errors": c.bad_rx,
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "members": rows }),
    }
}

/// IOS's PAgP state code (`U6/S7` for a port in its channel).
fn pagp_state_code(s: pagp::PortState) -> &'static str {
    use pagp::PortState as P;
    match s {
        P::Down => "U1/S1",
        P::Up => "U2/S1",
        P::PagpReceived => "U3/S3",
        P::BiDirectional => "U4/S4",
        P::UpData => "U5/S5",
        P::UpMult => "U5/S6",
        P::HotStandby => "U6/S6",
        P::UpPagp => "U6/S7",
    }
}

fn pagp_learn(l: Option<lagkit_wire::pagp::LearnMethod>) -> &'static str {
    match l {
        Some(lagkit_wire::pagp::LearnMethod::PhysicalPort) => "Phys",
        _ => "Any",
    }
}

/// The partner's PAgP flags: S (slow hello, once settled), C, A, P.
fn pagp_partner_flags(st: &pagp::PortStatus) -> String {
    let auto = st.partner_mode == Some(pagp::Mode::Auto);
    let physical = st.partner_learn == Some(lagkit_wire::pagp::LearnMethod::PhysicalPort);
    [
        (st.state.is_up(), 'S'),
        (st.consistent, 'C'),
        (auto, 'A'),
        (physical, 'P'),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, c)| *c)
    .collect()
}

fn pagp_partner_row(sw: &Switch, p: PortId, st: &pagp::PortStatus, now: u64) -> Option<String> {
    let device = st.partner_device?;
    let name = st
        .partner_device_name
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "-".into());
    let pport = st
        .partner_port_name
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("{}", st.partner_ifindex.unwrap_or(0)));
    let flags = pagp_partner_flags(st);
    Some(format!(
        "{:<9} {:<20} {:<16} {:<10} {:>3}s {:<7} {:X}\n",
        short_name(&port_name(sw, p)),
        name,
        device.dotted(),
        short_name(&pport),
        sw.core().heard_age(p, now, false).unwrap_or(0),
        if flags.is_empty() { "-".into() } else { flags },
        st.partner_group_capability.unwrap_or(0)
    ))
}

/// `show pagp neighbor`.
pub(crate) fn pagp_neighbor(sw: &Switch, now: u64) -> Response {
    let mut text = String::from(PAGP_FLAGS);
    let mut rows = Vec::new();
    for spec in channels(sw, "pagp") {
        let _ = write!(
            text,
            "\nChannel group {} neighbors\n{PAGP_PARTNER_HEAD}",
            spec.id.0
        );
        for (p, _) in &spec.members {
            let Some(st) = sw.core().pagp_status(*p) else {
                continue;
            };
            if let Some(row) = pagp_partner_row(sw, *p, &st, now) {
                text.push_str(&row);
            }
            rows.push(json!({
                "channel": spec.id.0,
                "port": port_name(sw, *p),
                "heard": st.partner_device.is_some(),
                "age_s": sw.core().heard_age(*p, now, false),
                "state": st.state.name(),
                "consistent": st.consistent,
                "partner_device": st.partner_device.map(|d| d.to_string()),
                "partner_name": st.partner_device_name,
                "partner_port": st.partner_port_name,
                "partner_ifindex": st.partner_ifindex,
                "partner_group_capability": st.partner_group_capability,
                "partner_mode": st.partner_mode.map(|m| format!("{m:?}").to_lowercase()),
                "partner_learn": st.partner_learn.map(|m| format!("{m:?}").to_lowercase()),
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "neighbors": rows }),
    }
}

/// `show pagp counters`.
pub(crate) fn pagp_counters(sw: &Switch) -> Response {
    let mut text = String::from(
        "          Information         Flush       PAgP\n\
Port      Sent    Recv     Sent    Recv   Err Pkts\n\
---------------------------------------------------\n",
    );
    let mut rows = Vec::new();
    for spec in channels(sw, "pagp") {
        let _ = writeln!(text, "Channel group: {}", spec.id.0);
        for (p, _) in &spec.members {
            let c = sw
                .core()
                .pagp_status(*p)
                .map(|s| s.counters)
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "{:<9} {:<7} {:<8} {:<7} {:<6} {}",
                short_name(&port_name(sw, *p)),
                c.info_tx,
                c.info_rx,
                c.flush_tx,
                c.flush_rx,
                c.bad_rx
            );
            rows.push(json!({
                "channel": spec.id.0, "port": port_name(sw, *p),
                "information_sent": c.info_tx, "information_received": c.info_rx,
                "flush_sent": c.flush_tx, "flush_received": c.flush_rx, "errors": c.bad_rx,
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "members": rows }),
    }
}

struct PagpLocal {
    flags: String,
    state: &'static str,
    hello_s: u64,
    partners: u32,
    priority: u16,
    learn: &'static str,
    ifindex: u32,
}

fn pagp_local(sw: &Switch, spec: &ChannelSpec, p: PortId) -> PagpLocal {
    let sys = sw.core().pagp_system(spec.id);
    let st = sw.core().pagp_status(p);
    let auto = matches!(
        spec.members.iter().find(|(m, _)| *m == p).map(|m| m.1),
        Some(lagkit_ios::ChannelMode::Auto { .. })
    );
    let (flags, state, hello_s, partners, priority) = match &st {
        Some(st) => {
            let timers = sys.map(|s| s.config().timers).unwrap_or_default();
            let slow = timers.sends_slow(st.state.is_up());
            let hello = timers.hello_interval(st.state.is_up());
            let f: String = [
                (slow, 'S'),
                (st.consistent, 'C'),
                (auto, 'A'),
                (st.state == pagp::PortState::Down, 'd'),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, c)| *c)
            .collect();
            (
                f,
                pagp_state_code(st.state),
                hello.as_secs(),
                u32::from(st.partner_device.is_some()),
                u16::from(st.port_priority),
            )
        }
        None => ("d".to_string(), "U1/S1", 30, 0, PAGP_PORT_PRIORITY),
    };
    PagpLocal {
        flags: if flags.is_empty() { "-".into() } else { flags },
        state,
        hello_s,
        partners,
        priority,
        learn: pagp_learn(sys.map(|s| s.config().learn)),
        ifindex: spec.id.0,
    }
}

fn pagp_local_row(sw: &Switch, spec: &ChannelSpec, p: PortId) -> String {
    let l = pagp_local(sw, spec, p);
    format!(
        "{:<9} {:<5} {:<7} {:<7} {:<8} {:<8} {:<10} {:<7} {}\n",
        short_name(&port_name(sw, p)),
        l.flags,
        l.state,
        "H",
        format!("{}s", l.hello_s),
        l.partners,
        l.priority,
        l.learn,
        l.ifindex
    )
}

/// `show pagp internal`.
pub(crate) fn pagp_internal(sw: &Switch) -> Response {
    let mut text = format!("{PAGP_FLAGS}{PAGP_TIMERS}");
    let mut rows = Vec::new();
    for spec in channels(sw, "pagp") {
        let _ = write!(text, "\nChannel group {}\n{PAGP_LOCAL_HEAD}", spec.id.0);
        for (p, _) in &spec.members {
            text.push_str(&pagp_local_row(sw, spec, *p));
            let l = pagp_local(sw, spec, *p);
            rows.push(json!({
                "channel": spec.id.0, "port": port_name(sw, *p), "flags": l.flags,
                "state": l.state, "hello_interval_s": l.hello_s, "partner_count": l.partners,
                "port_priority": l.priority, "learn_method": l.learn, "group_ifindex": l.ifindex,
            }));
        }
    }
    Response::Show {
        text,
        json: json!({ "members": rows }),
    }
}

/// IOS's `Port state` line of a member in `show etherchannel detail`.
fn port_state_words(f: MemberFlag) -> &'static str {
    match f {
        MemberFlag::Bundled => "Up Mstr Assoc In-Bndl",
        MemberFlag::Suspended => "Up Cnt-bndl Suspend Not-in-Bndl",
        MemberFlag::HotStandby => "Up Mstr Assoc Hot-Stby Not-in-Bndl",
        MemberFlag::Individual => "Up Mstr Indep Not-in-Bndl",
        MemberFlag::Down => "Down Not-in-Bndl",
        MemberFlag::Waiting => "Up Mstr Waiting Not-in-Bndl",
    }
}

fn mode_word(m: lagkit_ios::ChannelMode) -> &'static str {
    use lagkit_ios::ChannelMode as M;
    match m {
        M::On => "On",
        M::Active => "Active",
        M::Passive => "Passive",
        M::Desirable { .. } => "Desirable",
        M::Auto { .. } => "Automatic",
    }
}

fn ec_state(m: lagkit_ios::ChannelMode) -> &'static str {
    use lagkit_ios::ChannelMode as M;
    match m {
        M::On => "On",
        M::Active => "Active",
        M::Passive => "Passive",
        M::Desirable { silent: true } => "Desirable-Sl",
        M::Desirable { silent: false } => "Desirable",
        M::Auto { silent: true } => "Automatic-Sl",
        M::Auto { silent: false } => "Automatic",
    }
}

/// `show etherchannel [N] detail`: IOS's layout, each member's state,
/// mode, load (a bit per hash bucket of 8), local and partner protocol
/// information, and why a member is not bundled.
pub(crate) fn etherchannel_detail(sw: &Switch, only: Option<u32>, now: u64) -> Response {
    let b = sw.core().bridge();
    let specs: Vec<&ChannelSpec> = sw
        .core()
        .channels()
        .iter()
        .filter(|c| only.is_none_or(|n| c.id.0 == n))
        .collect();
    if let (Some(n), true) = (only, specs.is_empty()) {
        return Response::Error(format!("% Channel-group {n} does not exist on this switch"));
    }
    let mut text = String::new();
    if only.is_none() {
        text.push_str(
            "                Channel-group listing:\n                ----------------------\n\n",
        );
    }
    let mut out = Vec::new();
    for spec in specs {
        let buckets = b.channel(spec.id).map(|c| c.buckets()).unwrap_or_default();
        let flags = sw.core().flags(spec);
        let proto = protocol_word(spec);
        let _ = write!(
            text,
            "Group: {}\n----------\nGroup state = L2\nPorts: {}   Maxports = {}\nPort-channels: 1 Max Port-channels = 1\nProtocol:   {proto}\nMinimum Links: {}\n",
            spec.id.0,
            spec.members.len(),
            if spec.mode.protocol() == "lacp" { 16 } else { 8 },
            spec.min_links
        );
        text.push_str("                Ports in the group:\n                -------------------\n");
        let mut members = Vec::new();
        for (index, ((p, mode), (flag, why))) in spec.members.iter().zip(&flags).enumerate() {
            let name = port_name(sw, *p);
            let short = short_name(&name);
            let mask: u8 = buckets
                .iter()
                .enumerate()
                .filter(|(_, o)| **o == Some(*p))
                .fold(0, |m, (i, _)| m | (1 << i));
            let _ = write!(
                text,
                "Port: {short}\n------------\n\nPort state    = {}\nChannel group = {:<11} Mode = {:<13} Gcchange = -\nPort-channel  = Po{:<9} GC   =   -             Pseudo port-channel = Po{}\nPort index    = {:<11} Load = 0x{:02X}            Protocol =   {proto}\n",
                port_state_words(*flag),
                spec.id.0,
                mode_word(*mode),
                spec.id.0,
                spec.id.0,
                index,
                mask
            );
            match spec.mode.protocol() {
                "lacp" => {
                    let active = *mode == lagkit_ios::ChannelMode::Active;
                    let _ = write!(
                        text,
                        "\nFlags:  S - Device is sending Slow LACPDUs   F - Device is sending fast LACPDUs.\n        A - Device is in active mode.        P - Device is in passive mode.\n\nLocal information:\n{LACP_LOCAL_HEAD}{}",
                        local_row(sw, spec, *p, *flag, active)
                    );
                    // A member LACP does not run on (suspended) has heard
                    // no partner: IOS shows it with zeros.
                    let row = match sw.core().lacp_status(*p) {
                        Some(st) => partner_row(sw, *p, &st, now),
                        None => format!(
                            "{:<9} {:<7} {:<9} {:<15} {:>4}s  0x0    {:<6} {:<7} 0x00\n",
                            short_name(&port_name(sw, *p)),
                            "SP",
                            0,
                            "0000.0000.0000",
                            0,
                            "0x0",
                            "0x0"
                        ),
                    };
                    let _ = write!(text, "\nPartner's information:\n\n{LACP_PARTNER_HEAD}{row}");
                }
                "pagp" => {
                    let _ = write!(
                        text,
                        "\n{PAGP_FLAGS}{PAGP_TIMERS}\nLocal information:\n{PAGP_LOCAL_HEAD}{}",
                        pagp_local_row(sw, spec, *p)
                    );
                    if let Some(row) = sw
                        .core()
                        .pagp_status(*p)
                        .and_then(|st| pagp_partner_row(sw, *p, &st, now))
                    {
                        let _ =
                            write!(text, "\nPartner's information:\n\n{PAGP_PARTNER_HEAD}{row}");
                    }
                }
                _ => {}
            }
            let since = sw.core().flag_since(*p).unwrap_or(0);
            let _ = writeln!(
                text,
                "\nAge of the port in the current state: {}",
                dhms(now.saturating_sub(since))
            );
            if *flag != MemberFlag::Bundled && !why.is_empty() {
                let _ = writeln!(text, "Not bundled: {why}");
            }
            if let Some(m) = sw.core().mismatch(*p) {
                let _ = writeln!(text, "Probable {m}");
            }
            text.push('\n');
            members.push(MemberDetail {
                port: name,
                mode: mode.to_string(),
                flag: *flag,
                why: why.clone(),
                mismatch: sw.core().mismatch(*p),
                load: mask,
                buckets: (0..8).filter(|i| mask & (1 << i) != 0).collect(),
                partner: partner_of(sw, *p),
            });
        }
        text.push_str(&port_channel_section(sw, spec, now, false));
        text.push('\n');
        out.push(ChannelDetail {
            channel: spec.id.0,
            protocol: spec.mode.protocol().to_string(),
            max_bundle: spec.max_bundle,
            min_links: spec.min_links,
            members,
        });
    }
    let facts = EtherchannelDetail { channels: out };
    Response::Show {
        text,
        json: serde_json::to_value(&facts).unwrap_or_default(),
    }
}

/// The port-channel part of `show etherchannel [N] detail` and of `show
/// etherchannel N port-channel` (which has IOS's `GC` line).
fn port_channel_section(sw: &Switch, spec: &ChannelSpec, now: u64, gc: bool) -> String {
    let b = sw.core().bridge();
    let flags = flags_of(sw, spec);
    let buckets = b.channel(spec.id).map(|c| c.buckets()).unwrap_or_default();
    let bundled = flags.iter().filter(|f| **f == MemberFlag::Bundled).count();
    let standby = spec
        .members
        .iter()
        .zip(&flags)
        .find(|(_, f)| **f == MemberFlag::HotStandby)
        .map_or("null".to_string(), |((p, _), _)| {
            short_name(&port_name(sw, *p))
        });
    let standby_line = if gc {
        format!(
            "GC                  = 0x{:08X}      HotStandBy port = {standby}",
            0x0001_0000 | spec.id.0
        )
    } else {
        format!("HotStandBy port = {standby}")
    };
    let mut text = format!(
        "                Port-channels in the group:\n                ---------------------------\n\nPort-channel: Po{}    (Primary Aggregator)\n\n------------\n\nAge of the Port-channel   = {}\nLogical slot/port   = 9/{}          Number of ports = {}\n{standby_line}\nPort state          = Port-channel {}\nProtocol            =   {}\nPort security       = Disabled\n\nPorts in the Port-channel:\n\nIndex   Load   Port     EC state        No of bits\n------+------+------+------------------+-----------\n",
        spec.id.0,
        dhms(now),
        spec.id.0,
        bundled,
        if bundled == 0 { "Ag-Not-Inuse" } else { "Ag-Inuse" },
        protocol_word(spec)
    );
    for (index, (p, mode)) in spec.members.iter().enumerate() {
        let mask: u8 = buckets
            .iter()
            .enumerate()
            .filter(|(_, o)| **o == Some(*p))
            .fold(0, |m, (i, _)| m | (1 << i));
        if mask == 0 {
            continue;
        }
        let _ = writeln!(
            text,
            "  {:<5} {:02X}     {:<8} {:<18} {}",
            index,
            mask,
            short_name(&port_name(sw, *p)),
            ec_state(*mode),
            mask.count_ones()
        );
    }
    text
}

/// `show etherchannel N port-channel`.
pub(crate) fn etherchannel_port_channel(sw: &Switch, n: u32, now: u64) -> Response {
    let Some(spec) = sw.core().channels().iter().find(|c| c.id.0 == n) else {
        return Response::Error(format!("% Channel-group {n} does not exist on this switch"));
    };
    let flags = flags_of(sw, spec);
    Response::Show {
        text: port_channel_section(sw, spec, now, true),
        json: json!({
            "channel": n,
            "protocol": spec.mode.protocol(),
            "bundled": spec.members.iter().zip(&flags)
                .filter(|(_, f)| **f == MemberFlag::Bundled)
                .map(|((p, _), _)| port_name(sw, *p)).collect::<Vec<_>>(),
        }),
    }
}

/// `show etherchannel protocol`: each channel group's protocol.
pub(crate) fn etherchannel_protocol(sw: &Switch) -> Response {
    let mut text = String::from(
        "                Channel-group listing:\n                ----------------------\n\n",
    );
    for spec in sw.core().channels() {
        let proto = match spec.mode.protocol() {
            "lacp" => "LACP".to_string(),
            "pagp" => "PAgP".to_string(),
            _ => " -  (Mode ON)".to_string(),
        };
        let _ = write!(
            text,
            "Group: {}\n----------\nProtocol:  {proto}\n\n",
            spec.id.0
        );
    }
    Response::Show {
        text,
        json: json!({
            "channels": sw.core().channels().iter()
                .map(|c| json!({ "channel": c.id.0, "protocol": c.mode.protocol() }))
                .collect::<Vec<_>>(),
        }),
    }
}

fn partner_of(sw: &Switch, p: PortId) -> Option<Partner> {
    match (sw.core().lacp_status(p), sw.core().pagp_status(p)) {
        (Some(st), _) => Some(Partner::Lacp {
            system: st.partner.system.to_string(),
            port: st.partner.port,
            key: st.partner.key,
        }),
        (_, Some(st)) => Some(Partner::Pagp {
            device: st.partner_device.map(|d| d.to_string()),
            name: st.partner_device_name,
            port: st.partner_port_name,
        }),
        _ => None,
    }
}

/// The words IOS uses for a load-balance method in `LB Algo type`.
fn algo_words(method: &str) -> String {
    fn part(w: &str) -> &str {
        match w {
            "src" => "Source",
            "dst" => "Destination",
            "mac" => "MAC",
            "ip" => "IP",
            "port" => "Port",
            "mixed" => "Mixed",
            other => other,
        }
    }
    method.split('-').map(part).collect::<Vec<_>>().join(" ")
}

/// `show etherchannel load-balancing` (the layout of IOS routers and
/// IOS-XE, which names the method per port-channel).
pub(crate) fn load_balancing(sw: &Switch) -> Response {
    let m = sw.core().method();
    let mut text = format!(
        "EtherChannel Load-Balancing Method: \nGlobal LB Method: {m}\nLB Algo type: {}\n  Port-Channel:                       LB Method\n",
        algo_words(m)
    );
    for spec in sw.core().channels() {
        let _ = writeln!(
            text,
            "    {:<30}:  {m} ({})",
            format!("Port-channel{}", spec.id.0),
            algo_words(m)
        );
    }
    Response::Show {
        text,
        json: json!({
            "method": m,
            "channels": sw.core().channels().iter().map(|c| c.id.0).collect::<Vec<_>>(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_algorithms_read_as_on_ios() {
        assert_eq!(dhms(194_000_000_000), "0d:00h:03m:14s");
        assert_eq!(dhms(90_061_000_000_000), "1d:01h:01m:01s");
        assert_eq!(algo_words("src-dst-ip"), "Source Destination IP");
        assert_eq!(lacp_flags(S(S::ACTIVITY)), "SA");
        assert_eq!(lacp_flags(S(S::TIMEOUT)), "FP");
        assert_eq!(
            lagkit_wire::MacAddr([2, 0, 0, 0, 0xab, 1]).dotted(),
            "0200.0000.ab01"
        );
    }
}
