//! The answers to `lagkit switch show ...` and `test ...`: Cisco's text
//! from [`lagkit_switch::show`] and the same facts as JSON.
//!
//! The tables are written with `format!` widths, not `comfy-table` or
//! `tabled`: they copy IOS's layouts (`show lacp neighbor`, `show pagp
//! neighbor`, `show etherchannel detail`), fixed widths without borders,
//! which those crates would need bent back into anyway.

use crate::daemon::Switch;
use crate::protocol::{test_key, Request, Response};
use crate::report_lag;
use lagkit_api::switch as api;
use lagkit_dataplane::DropReason as SockDrop;
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
            .core()
            .bridge()
            .port(p)
            .map_or(format!("port{}", p.0), |c| c.name.clone()),
        Logical::Channel(c) => format!("Port-channel{}", c.0),
    }
}

fn summary(sw: &Switch) -> Response {
    let b = sw.core().bridge();
    let mut rows = Vec::new();
    let mut channels = Vec::new();
    for spec in sw.core().channels() {
        let flags = sw.core().flags(spec);
        let members = spec
            .members
            .iter()
            .zip(&flags)
            .map(|((p, mode), (flag, why))| api::MemberState {
                port: b.port(*p).map(|c| c.name.clone()),
                device: Some(sw.device(*p).to_string()),
                mode: mode.to_string(),
                flag: *flag,
                why: why.clone(),
                mismatch: sw.core().mismatch(*p),
            })
            .collect();
        channels.push(api::ChannelState {
            channel: spec.id.0,
            protocol: spec.mode.protocol().to_string(),
            in_use: flags.iter().any(|(f, _)| *f == show::MemberFlag::Bundled),
            members,
        });
        rows.push((spec.clone(), flags.into_iter().map(|(f, _)| f).collect()));
    }
    // IOS prints no reasons here (they are in `show etherchannel
    // detail` and in the JSON): the tools that read this table take no
    // other lines.
    let text = show::etherchannel_summary(b, &rows);
    show_typed(
        text,
        &api::EtherchannelSummary {
            switch: sw.core().name().to_string(),
            channels,
        },
    )
}

/// An answer whose facts have a type in `lagkit_api::switch`.
fn show_typed(text: String, facts: &impl serde::Serialize) -> Response {
    match serde_json::to_value(facts) {
        Ok(json) => Response::Show { text, json },
        Err(e) => Response::Error(format!("cannot encode the answer: {e}")),
    }
}

fn load_balance(sw: &Switch) -> Response {
    let b = sw.core().bridge();
    let buckets: Vec<Value> = sw
        .core()
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
        text: show::etherchannel_load_balance(b, sw.core().method(), sw.core().adaptive()),
        json: json!({
            "method": sw.core().method(),
            "hash_distribution": if sw.core().adaptive() { "adaptive" } else { "fixed" },
            "policy": b.policy().to_string(),
            "channels": buckets,
        }),
    }
}

fn mac_table(sw: &Switch, now: u64) -> Response {
    let b = sw.core().bridge();
    let entries = b
        .fdb()
        .rows(now)
        .iter()
        .map(|r| api::MacEntry {
            vlan: r.vlan,
            mac: mac_text(&r.mac),
            port: logical(sw, r.at),
            age_ms: r.age_ns / 1_000_000,
        })
        .collect();
    show_typed(
        show::mac_address_table(b, now),
        &api::MacTable {
            entries,
            moves: b.fdb().moves(),
        },
    )
}

fn cast(c: lagkit_switch::Cast) -> api::Cast {
    api::Cast {
        ucast: c.ucast,
        mcast: c.mcast,
        bcast: c.bcast,
    }
}

fn counters(sw: &Switch) -> Response {
    let b = sw.core().bridge();
    let ports = b
        .ports()
        .filter_map(|(p, cfg)| {
            let c = b.counters(p)?;
            let drops = DropReason::ALL
                .iter()
                .map(|r| (format!("{r:?}").to_lowercase(), c.dropped(*r)))
                .collect();
            let sock = sw.socket_counters(p);
            Some(api::PortCounters {
                port: cfg.name.clone(),
                device: sw.device(p).to_string(),
                mtu: cfg.mtu,
                rx_frames: c.rx_frames,
                rx_bytes: c.rx_bytes,
                tx_frames: c.tx_frames,
                tx_bytes: c.tx_bytes,
                rx_cast: cast(c.rx_cast),
                tx_cast: cast(c.tx_cast),
                control: c.control,
                control_tx: c.control_tx,
                flooded: c.flooded,
                tx_too_big: c.tx_too_big,
                giants: c.dropped(DropReason::Giant),
                drops,
                storm_drops: cast(c.storm_drops),
                learn_limited: c.learn_limited,
                learn_full: c.learn_full,
                tx_send_failures: sock
                    .map_or(0, |s| s.dropped_total() - s.dropped(SockDrop::RxKernel)),
                // Frames the port's socket buffer had no room for: a
                // flooding port's excess beyond its share of the switch.
                rx_kernel_drops: sock.map_or(0, |s| s.dropped(SockDrop::RxKernel)),
            })
        })
        .collect();
    let channels = sw
        .core()
        .channels()
        .iter()
        .map(|spec| {
            let c = b.channel_counters(spec.id);
            api::ChannelCounters {
                channel: spec.id.0,
                rx_frames: c.rx_frames,
                rx_bytes: c.rx_bytes,
                tx_frames: c.tx_frames,
                tx_bytes: c.tx_bytes,
                rx_cast: cast(c.rx_cast),
                tx_cast: cast(c.tx_cast),
                giants: c.dropped(DropReason::Giant),
            }
        })
        .collect();
    let ids: Vec<ChannelId> = sw.core().channels().iter().map(|c| c.id).collect();
    let text = show::interfaces_counters(b, &ids);
    let cc = sw.core().control_counters();
    show_typed(
        text,
        &api::InterfacesCounters {
            ports,
            channels,
            control: cc,
        },
    )
}

fn test(sw: &Switch, channel: u32, kind: &str, src: &str, dst: &str) -> Response {
    let key = match test_key(kind, src, dst) {
        Ok(k) => k,
        Err(e) => return Response::Error(e.to_string()),
    };
    let b = sw.core().bridge();
    let id = ChannelId(channel);
    let picked = b.test_load_balance(id, &key);
    let member = |p: Option<PortId>| p.and_then(|p| b.port(p)).map(|c| c.name.clone());
    Response::Show {
        text: show::test_load_balance(b, id, &key, sw.core().method()),
        json: json!({
            "channel": channel,
            "exists": picked.is_some(),
            "bucket": picked.map(|(bucket, _)| bucket),
            "member": picked.and_then(|(_, p)| member(p)),
            "method": sw.core().method(),
        }),
    }
}

/// `show interfaces status`: each port and port-channel, its state, VLAN
/// (or `trunk`), duplex and speed as configured (`auto` when not), and the
/// Linux device that carries it in IOS's Type column.
fn interfaces_status(sw: &Switch) -> Response {
    use lagkit_switch::PortMode;
    let b = sw.core().bridge();
    let mut text = format!(
        "\n{:<9} {:<18} {:<12} {:<10} {:>6} {:>6} {}\n",
        "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type"
    );
    let vlan = |m: &PortMode| match m {
        PortMode::Access { vlan } => vlan.to_string(),
        PortMode::Trunk { .. } => "trunk".to_string(),
    };
    let src = |name: &str| sw.core().ios().interfaces.iter().find(|i| i.name == name);
    let mut rows = Vec::new();
    let mut flag_of = std::collections::BTreeMap::new();
    for spec in sw.core().channels() {
        for ((p, _), (f, _)) in spec.members.iter().zip(sw.core().flags(spec)) {
            flag_of.insert(*p, f);
        }
    }
    for (p, cfg) in b.ports() {
        let status = match flag_of.get(&p) {
            _ if !cfg.enabled => "disabled",
            Some(show::MemberFlag::Suspended) => "suspended",
            Some(show::MemberFlag::Down) => "notconnect",
            _ if !sw.core().carrier(p) => "notconnect",
            _ => "connected",
        };
        let i = src(&cfg.name);
        let duplex = i
            .and_then(|i| i.duplex.as_ref())
            .map_or("auto".into(), |d| d.value.clone());
        let speed = i
            .and_then(|i| i.speed.as_ref())
            .map_or("auto".into(), |d| d.value.clone());
        text.push_str(&format!(
            "{:<9} {:<18} {:<12} {:<10} {:>6} {:>6} {}\n",
            show::short_name(&cfg.name),
            "",
            status,
            vlan(&cfg.mode),
            duplex,
            speed,
            sw.device(p)
        ));
        rows.push(api::InterfaceStatus {
            port: cfg.name.clone(),
            status: status.to_string(),
            vlan: vlan(&cfg.mode),
            duplex: Some(duplex),
            speed: Some(speed),
            device: Some(sw.device(p).to_string()),
        });
    }
    for spec in sw.core().channels() {
        let up = sw
            .core()
            .flags(spec)
            .iter()
            .any(|(f, _)| *f == show::MemberFlag::Bundled);
        let mode = spec
            .members
            .first()
            .and_then(|(p, _)| b.port(*p))
            .map_or("1".into(), |c| vlan(&c.mode));
        let status = if up { "connected" } else { "notconnect" };
        text.push_str(&format!(
            "{:<9} {:<18} {:<12} {:<10} {:>6} {:>6}\n",
            format!("Po{}", spec.id.0),
            "",
            status,
            mode,
            "auto",
            "auto"
        ));
        rows.push(api::InterfaceStatus {
            port: format!("Port-channel{}", spec.id.0),
            status: status.to_string(),
            vlan: mode,
            ..api::InterfaceStatus::default()
        });
    }
    let facts = api::InterfacesStatus { interfaces: rows };
    Response::Show {
        text,
        json: serde_json::to_value(&facts).unwrap_or_default(),
    }
}

fn running_config(sw: &Switch) -> Response {
    let text = sw.core().running_config().to_string();
    Response::Show {
        json: json!({ "text": text }),
        text,
    }
}

/// `show storm-control`: each port's levels by class, its filter state,
/// the last second's traffic and what it dropped.
fn storm_control(sw: &Switch, now: u64) -> Response {
    let b = sw.core().bridge();
    let rows = show::storm_rows(b, now, |p| sw.core().carrier(p));
    let json_rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "port": r.port,
                "class": r.class,
                "state": r.state,
                "upper": r.upper,
                "lower": r.lower,
                "current": r.current,
                "dropped": r.dropped,
            })
        })
        .collect();
    Response::Show {
        text: show::storm_control(&rows),
        json: json!({ "ports": json_rows }),
    }
}

/// `show platform forwarding`: the engine that moves data frames, why,
/// and under the BPF engine what runs in the kernel.
fn platform_forwarding(sw: &Switch) -> Response {
    let (engine, why, kernel) = sw.engine();
    let fdb = sw.core().bridge().fdb();
    let facts = api::Forwarding {
        switch: sw.core().name().to_string(),
        engine,
        why: why.to_string(),
        kernel_ports: kernel.as_ref().map(|k| k.ports),
        plans: kernel.as_ref().map(|k| k.plans),
        addresses: kernel.as_ref().map_or(fdb.len(), |k| k.entries),
        address_limit: fdb.limit(),
    };
    let mut text = format!(
        "Forwarding engine: {engine} ({})\n",
        match engine {
            lagkit_api::status::EngineKind::Bpf =>
                "tc BPF on every port's ingress; the daemon runs the control plane",
            lagkit_api::status::EngineKind::Userspace =>
                "the daemon's loop reads every frame from packet sockets",
        }
    );
    text.push_str(&format!("  Chosen because: {why}\n"));
    if let Some(k) = &kernel {
        text.push_str(&format!(
            "  Ports attached: {} (tcx ingress)\n  Plans published: {}\n",
            k.ports, k.plans
        ));
    }
    text.push_str(&format!(
        "  MAC address table: {} of {} entries\n",
        facts.addresses, facts.address_limit
    ));
    Response::Show {
        text,
        json: serde_json::to_value(&facts).unwrap_or(Value::Null),
    }
}

/// The answer to `req` at `now`.
pub(crate) fn answer(sw: &Switch, req: &Request, now: u64) -> Response {
    match req {
        Request::EtherchannelSummary => summary(sw),
        Request::EtherchannelLoadBalance => load_balance(sw),
        Request::MacAddressTable => mac_table(sw, now),
        Request::InterfacesCounters => counters(sw),
        Request::LacpNeighbor => report_lag::lacp_neighbor(sw, now),
        Request::EtherchannelDetail { channel } => {
            report_lag::etherchannel_detail(sw, *channel, now)
        }
        Request::PagpNeighbor => report_lag::pagp_neighbor(sw, now),
        Request::EtherchannelLoadBalancing => report_lag::load_balancing(sw),
        Request::LacpNeighborDetail => report_lag::lacp_neighbor_detail(sw, now),
        Request::LacpSysId => report_lag::lacp_sys_id(sw),
        Request::LacpCounters => report_lag::lacp_counters(sw),
        Request::LacpInternal => report_lag::lacp_internal(sw),
        Request::PagpCounters => report_lag::pagp_counters(sw),
        Request::PagpInternal => report_lag::pagp_internal(sw),
        Request::InterfacesStatus => interfaces_status(sw),
        Request::RunningConfig => running_config(sw),
        Request::StormControl => storm_control(sw, now),
        Request::EtherchannelProtocol => report_lag::etherchannel_protocol(sw),
        Request::PlatformForwarding => platform_forwarding(sw),
        Request::EtherchannelPortChannel { channel } => {
            report_lag::etherchannel_port_channel(sw, *channel, now)
        }
        Request::TestLoadBalance {
            channel,
            kind,
            src,
            dst,
        } => test(sw, *channel, kind, src, dst),
        // Started by the daemon's loop, which keeps the stream.
        Request::Capture(_) => Response::Error("capture: not a show command".into()),
    }
}
