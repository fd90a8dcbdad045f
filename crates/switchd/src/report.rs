//! The answers to `lagkit switch show ...` and `test ...`: Cisco's text
//! from [`lagkit_switch::show`] and the same facts as JSON.
//!
//! The tables are written with `format!` widths, not `comfy-table` or
//! `tabled`: they copy IOS's layouts (`show lacp neighbor`, `show pagp
//! neighbor`, `show etherchannel detail`), fixed widths without borders,
//! which those crates would need bent back into anyway.

use crate::daemon::Switch;
use crate::protocol::{test_key, Request, Response};
use lagkit_switch::show;
use lagkit_switch::{ChannelId, DropReason, Logical, PortId};
use serde_json::{json, Value};

fn mac_text(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn logical(sw: &Switch, l: Logical) -> String {
    match l {
        Logical::Port(p) => sw
            .bridge()
            .port(p)
            .map_or(format!("port{}", p.0), |c| c.name.clone()),
        Logical::Channel(c) => format!("Port-channel{}", c.0),
    }
}

fn summary(sw: &Switch) -> Response {
    let b = sw.bridge();
    let mut rows = Vec::new();
    let mut channels = Vec::new();
    for spec in sw.channels() {
        let flags = sw.flags(spec);
        let members: Vec<Value> = spec
            .members
            .iter()
            .zip(&flags)
            .map(|((p, mode), (flag, why))| {
                json!({
                    "port": b.port(*p).map(|c| c.name.clone()),
                    "device": sw.device(*p),
                    "mode": mode.to_string(),
                    "flag": flag.letter().to_string(),
                    "why": why,
                    "mismatch": sw.mismatch(*p),
                })
            })
            .collect();
        channels.push(json!({
            "channel": spec.id.0,
            "protocol": spec.mode.protocol(),
            "in_use": flags.iter().any(|(f, _)| *f == show::MemberFlag::Bundled),
            "members": members,
        }));
        rows.push((spec.clone(), flags.into_iter().map(|(f, _)| f).collect()));
    }
    let mut text = show::etherchannel_summary(b, &rows);
    // IOS gives the reasons in `show etherchannel detail`; say them here.
    for spec in sw.channels() {
        for ((p, _), (flag, why)) in spec.members.iter().zip(sw.flags(spec)) {
            let name = b
                .port(*p)
                .map_or(String::new(), |c| show::short_name(&c.name));
            if flag != show::MemberFlag::Bundled && !why.is_empty() {
                text.push_str(&format!("  {name}({}): {why}\n", flag.letter()));
            }
            if let Some(m) = sw.mismatch(*p) {
                text.push_str(&format!("  {name}({}): {m}\n", flag.letter()));
            }
        }
    }
    Response::Show {
        text,
        json: json!({ "switch": sw.name(), "channels": channels }),
    }
}

fn load_balance(sw: &Switch) -> Response {
    let b = sw.bridge();
    let buckets: Vec<Value> = sw
        .channels()
        .iter()
        .filter_map(|spec| {
            let c = b.channel(spec.id)?;
            let owners: Vec<Option<String>> = c
                .buckets()
                .iter()
                .map(|o| o.and_then(|p| b.port(p).map(|c| c.name.clone())))
                .collect();
            Some(json!({ "channel": spec.id.0, "buckets": owners }))
        })
        .collect();
    Response::Show {
        text: show::etherchannel_load_balance(b, sw.method(), sw.adaptive()),
        json: json!({
            "method": sw.method(),
            "hash_distribution": if sw.adaptive() { "adaptive" } else { "fixed" },
            "policy": b.policy().to_string(),
            "channels": buckets,
        }),
    }
}

fn mac_table(sw: &Switch, now: u64) -> Response {
    let b = sw.bridge();
    let rows: Vec<Value> = b
        .fdb()
        .rows(now)
        .iter()
        .map(|r| {
            json!({
                "vlan": r.vlan,
                "mac": mac_text(&r.mac),
                "port": logical(sw, r.at),
                "age_ms": r.age_ns / 1_000_000,
            })
        })
        .collect();
    Response::Show {
        text: show::mac_address_table(b, now),
        json: json!({ "entries": rows, "moves": b.fdb().moves() }),
    }
}

fn counters(sw: &Switch) -> Response {
    let b = sw.bridge();
    let ports: Vec<Value> = b
        .ports()
        .filter_map(|(p, cfg)| {
            let c = b.counters(p)?;
            let drops: serde_json::Map<String, Value> = DropReason::ALL
                .iter()
                .map(|r| (format!("{r:?}").to_lowercase(), json!(c.dropped(*r))))
                .collect();
            let sock = sw.socket_counters(p);
            Some(json!({
                "port": cfg.name,
                "device": sw.device(p),
                "mtu": cfg.mtu,
                "rx_frames": c.rx_frames,
                "rx_bytes": c.rx_bytes,
                "tx_frames": c.tx_frames,
                "tx_bytes": c.tx_bytes,
                "control": c.control,
                "flooded": c.flooded,
                "tx_too_big": c.tx_too_big,
                "giants": c.dropped(DropReason::Giant),
                "drops": drops,
                "tx_send_failures": sock.map_or(0, |s| s.dropped_total()),
            }))
        })
        .collect();
    let channels: Vec<Value> = sw
        .channels()
        .iter()
        .map(|spec| {
            let c = b.channel_counters(spec.id);
            json!({
                "channel": spec.id.0,
                "rx_frames": c.rx_frames,
                "rx_bytes": c.rx_bytes,
                "tx_frames": c.tx_frames,
                "tx_bytes": c.tx_bytes,
                "giants": c.dropped(DropReason::Giant),
            })
        })
        .collect();
    let mut text = show::interfaces_counters(b);
    for spec in sw.channels() {
        let c = b.channel_counters(spec.id);
        text.push_str(&format!(
            "{:<10} {:>14} {:>12} {:>14} {:>12} {:>8}\n",
            format!("Po{}", spec.id.0),
            c.rx_bytes,
            c.rx_frames,
            c.tx_bytes,
            c.tx_frames,
            c.dropped(DropReason::Giant)
        ));
    }
    let cc = sw.control_counters();
    if cc.pagp_ignored > 0 {
        text.push_str(&format!(
            "{} PAgP/CDP frames received on ports that do not run PAgP\n",
            cc.pagp_ignored
        ));
    }
    Response::Show {
        text,
        json: json!({ "ports": ports, "channels": channels, "control": cc }),
    }
}

fn test(sw: &Switch, channel: u32, kind: &str, src: &str, dst: &str) -> Response {
    let key = match test_key(kind, src, dst) {
        Ok(k) => k,
        Err(e) => return Response::Error(e),
    };
    let b = sw.bridge();
    let id = ChannelId(channel);
    let picked = b.test_load_balance(id, &key);
    let member = |p: Option<PortId>| p.and_then(|p| b.port(p)).map(|c| c.name.clone());
    Response::Show {
        text: show::test_load_balance(b, id, &key, sw.method()),
        json: json!({
            "channel": channel,
            "exists": picked.is_some(),
            "bucket": picked.map(|(bucket, _)| bucket),
            "member": picked.and_then(|(_, p)| member(p)),
            "method": sw.method(),
        }),
    }
}

/// Cisco's dotted MAC: `0011.2233.4455`.
fn dotted(m: &[u8; 6]) -> String {
    format!(
        "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// The members of each channel speaking `protocol`, with their names.
fn members_of<'a>(
    sw: &'a Switch,
    protocol: &'a str,
) -> impl Iterator<Item = (u32, PortId, String)> + 'a {
    let b = sw.bridge();
    sw.channels()
        .iter()
        .filter(move |c| c.mode.protocol() == protocol)
        .flat_map(move |c| {
            c.members.iter().map(move |(p, _)| {
                let name = b.port(*p).map_or(String::new(), |c| c.name.clone());
                (c.id.0, *p, name)
            })
        })
}

/// `show lacp neighbor`: each LACP member's partner as LACP last heard it.
fn lacp_neighbor(sw: &Switch) -> Response {
    use lagkit_wire::lacp::PortState as S;
    let mut text = String::from("Flags:  S - Device is requesting Slow LACPDUs\n        F - Device is requesting Fast LACPDUs\n        A - Device is in Active mode       P - Device is in Passive mode\n");
    let mut rows = Vec::new();
    let mut last = None;
    for (ch, p, name) in members_of(sw, "lacp") {
        if last != Some(ch) {
            text.push_str(&format!("\nChannel group {ch} neighbors\n\nPartner's information:\n\n                  LACP port                         Oper    Port    Port\nPort      Flags   Priority  Dev ID          Key     Number  State\n"));
            last = Some(ch);
        }
        let Some(st) = sw.lacp_status(p) else {
            continue;
        };
        let partner = st.partner;
        let heard = !partner.state.has(S::DEFAULTED) && partner.system.mac.0 != [0; 6];
        let flags = format!(
            "{}{}",
            if partner.state.has(S::TIMEOUT) {
                'F'
            } else {
                'S'
            },
            if partner.state.has(S::ACTIVITY) {
                'A'
            } else {
                'P'
            }
        );
        if heard {
            text.push_str(&format!(
                "{:<9} {:<7} {:<9} {:<15} {:<7} {:<7} {:#04x}\n",
                show::short_name(&name),
                flags,
                partner.port_priority,
                dotted(&partner.system.mac.0),
                format!("{:#x}", partner.key),
                format!("{:#x}", partner.port),
                partner.state.0
            ));
        } else {
            text.push_str(&format!(
                "{:<9} (no LACP partner heard)\n",
                show::short_name(&name)
            ));
        }
        rows.push(json!({
            "channel": ch,
            "port": name,
            "heard": heard,
            "partner_system": partner.system.to_string(),
            "partner_key": partner.key,
            "partner_port": partner.port,
            "partner_port_priority": partner.port_priority,
            "partner_state": partner.state.0,
            "partner_fast": partner.state.has(S::TIMEOUT),
            "partner_active": partner.state.has(S::ACTIVITY),
        }));
    }
    Response::Show {
        text,
        json: json!({ "neighbors": rows }),
    }
}

/// `show pagp neighbor`: each PAgP member's partner as PAgP last heard it.
fn pagp_neighbor(sw: &Switch) -> Response {
    let mut text = String::from("Flags:  S - Device is sending Slow hello.  C - Device is in Consistent state.\n        A - Device is in Auto mode.        P - Device learns on physical port.\n");
    let mut rows = Vec::new();
    let mut last = None;
    for (ch, p, name) in members_of(sw, "pagp") {
        if last != Some(ch) {
            text.push_str(&format!("\nChannel group {ch} neighbors\n          Partner              Partner          Partner         Partner\nPort      Name                 Device ID        Port            Flags   State\n"));
            last = Some(ch);
        }
        let Some(st) = sw.pagp_status(p) else {
            continue;
        };
        let Some(device) = st.partner_device else {
            text.push_str(&format!(
                "{:<9} (no PAgP partner heard; {})\n",
                show::short_name(&name),
                st.state.name()
            ));
            rows.push(
                json!({ "channel": ch, "port": name, "heard": false, "state": st.state.name() }),
            );
            continue;
        };
        let auto = st.partner_mode == Some(lagkit_proto::pagp::Mode::Auto);
        let physical = st.partner_learn == Some(lagkit_wire::pagp::LearnMethod::PhysicalPort);
        let flags: String = [(st.consistent, 'C'), (auto, 'A'), (physical, 'P')]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, c)| *c)
            .collect();
        let pname = st.partner_port_name.clone().unwrap_or_default();
        text.push_str(&format!(
            "{:<9} {:<20} {:<16} {:<15} {:<7} {}\n",
            show::short_name(&name),
            st.partner_device_name.clone().unwrap_or_default(),
            dotted(&device.0),
            show::short_name(&pname),
            flags,
            st.state.name()
        ));
        rows.push(json!({
            "channel": ch,
            "port": name,
            "heard": true,
            "state": st.state.name(),
            "consistent": st.consistent,
            "partner_device": device.to_string(),
            "partner_name": st.partner_device_name,
            "partner_port": st.partner_port_name,
            "partner_ifindex": st.partner_ifindex,
            "partner_mode": st.partner_mode.map(|m| format!("{m:?}").to_lowercase()),
            "partner_learn": st.partner_learn.map(|m| format!("{m:?}").to_lowercase()),
        }));
    }
    Response::Show {
        text,
        json: json!({ "neighbors": rows }),
    }
}

/// `show etherchannel [N] detail`: each channel's members with their
/// state, mode, the hash buckets each owns (IOS's `Load`, a bit per bucket
/// of 8), why a member is not bundled, and its partner.
fn detail(sw: &Switch, only: Option<u32>) -> Response {
    let b = sw.bridge();
    let mut text = String::new();
    let mut out = Vec::new();
    let specs: Vec<_> = sw
        .channels()
        .iter()
        .filter(|c| only.is_none_or(|n| c.id.0 == n))
        .collect();
    if let (Some(n), true) = (only, specs.is_empty()) {
        return Response::Error(format!("no channel-group {n} on this switch"));
    }
    for spec in specs {
        let buckets = b.channel(spec.id).map(|c| c.buckets()).unwrap_or_default();
        let flags = sw.flags(spec);
        let protocol = match spec.mode.protocol() {
            "lacp" => "LACP",
            "pagp" => "PAgP",
            _ => "-",
        };
        text.push_str(&format!(
            "Group: {}\n----------\nGroup state = L2\nPorts: {}   Maxports = 8\nProtocol: {}\n",
            spec.id.0,
            spec.members.len(),
            protocol
        ));
        if let Some(m) = spec.max_bundle {
            text.push_str(&format!("Max-bundle: {m}\n"));
        }
        if spec.min_links > 1 {
            text.push_str(&format!("Min-links: {}\n", spec.min_links));
        }
        text.push_str("                Ports in the group:\n                -------------------\n");
        let mut members = Vec::new();
        for ((p, mode), (flag, why)) in spec.members.iter().zip(&flags) {
            let name = b.port(*p).map_or(String::new(), |c| c.name.clone());
            let mask: u8 = buckets
                .iter()
                .enumerate()
                .filter(|(_, o)| **o == Some(*p))
                .fold(0, |m, (i, _)| m | (1 << i));
            let partner = match (sw.lacp_status(*p), sw.pagp_status(*p)) {
                (Some(st), _) => Some(format!(
                    "LACP partner {} port {} key {:#x}",
                    st.partner.system, st.partner.port, st.partner.key
                )),
                (_, Some(st)) => st.partner_device.map(|d| {
                    format!(
                        "PAgP partner {} ({}) port {}",
                        d,
                        st.partner_device_name.clone().unwrap_or_default(),
                        st.partner_port_name.clone().unwrap_or_default()
                    )
                }),
                _ => None,
            };
            let c = b.counters(*p);
            text.push_str(&format!(
                "Port: {}\n------------\nPort state    = {}\nChannel group = {:<11} Mode = {}\nPort-channel  = Po{:<9} Load = {:#04x} ({} of 8 buckets)\n",
                show::short_name(&name),
                if *flag == show::MemberFlag::Bundled { "Up In-Bndl".to_string() } else { format!("{} ({why})", flag.letter()) },
                spec.id.0,
                mode,
                spec.id.0,
                mask,
                mask.count_ones()
            ));
            if let Some(pt) = &partner {
                text.push_str(&format!("Partner       = {pt}\n"));
            }
            if let Some(c) = c {
                text.push_str(&format!(
                    "Traffic       = {} frames / {} bytes out, {} frames / {} bytes in\n",
                    c.tx_frames, c.tx_bytes, c.rx_frames, c.rx_bytes
                ));
            }
            text.push('\n');
            members.push(json!({
                "port": name,
                "mode": mode.to_string(),
                "flag": flag.letter().to_string(),
                "why": why,
                "load": mask,
                "buckets": (0..8).filter(|i| mask & (1 << i) != 0).collect::<Vec<u8>>(),
                "partner": partner,
            }));
        }
        out.push(json!({
            "channel": spec.id.0,
            "protocol": spec.mode.protocol(),
            "max_bundle": spec.max_bundle,
            "min_links": spec.min_links,
            "members": members,
        }));
    }
    Response::Show {
        text,
        json: json!({ "channels": out }),
    }
}

/// The answer to `req` at `now`.
pub(crate) fn answer(sw: &Switch, req: &Request, now: u64) -> Response {
    match req {
        Request::EtherchannelSummary => summary(sw),
        Request::EtherchannelLoadBalance => load_balance(sw),
        Request::MacAddressTable => mac_table(sw, now),
        Request::InterfacesCounters => counters(sw),
        Request::LacpNeighbor => lacp_neighbor(sw),
        Request::EtherchannelDetail { channel } => detail(sw, *channel),
        Request::PagpNeighbor => pagp_neighbor(sw),
        Request::TestLoadBalance {
            channel,
            kind,
            src,
            dst,
        } => test(sw, *channel, kind, src, dst),
    }
}
