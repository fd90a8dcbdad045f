//! The answers to `lagkit switch show ...` and `test ...`: Cisco's text
//! from [`lagkit_switch::show`] and the same facts as JSON.

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
            if flag != show::MemberFlag::Bundled && !why.is_empty() {
                let name = b
                    .port(*p)
                    .map_or(String::new(), |c| show::short_name(&c.name));
                text.push_str(&format!("  {name}({}): {why}\n", flag.letter()));
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

/// The answer to `req` at `now`.
pub(crate) fn answer(sw: &Switch, req: &Request, now: u64) -> Response {
    match req {
        Request::EtherchannelSummary => summary(sw),
        Request::EtherchannelLoadBalance => load_balance(sw),
        Request::MacAddressTable => mac_table(sw, now),
        Request::InterfacesCounters => counters(sw),
        Request::TestLoadBalance {
            channel,
            kind,
            src,
            dst,
        } => test(sw, *channel, kind, src, dst),
    }
}
