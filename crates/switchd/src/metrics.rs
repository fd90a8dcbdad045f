//! Prometheus metrics of a running switch (`lagkit switch --metrics-listen
//! ADDR`): per-port and per-channel frames and bytes by destination kind,
//! drops by reason, member states and their LACP/PAgP state, and the MAC
//! address table. `docs/reference/metrics.md` lists every series.
//!
//! The forwarding loop owns every counter, so the page is built from a
//! [`Snapshot`] the loop's owner takes between two wake-ups at most once a
//! second ([`Switch::metrics_snapshot`]: a copy of a few counters per
//! port, nothing on the per-frame path); a thread of [`SwitchMetrics`]
//! renders it with the pure [`render`], and the bond's [`Exporter`]
//! serves it from a thread of its own.

use crate::daemon::Switch;
use lagkit_api::metrics::{labels, set_lacp_bits, set_pagp_state, snake, Labels, Page};
pub use lagkit_api::metrics::{loopback, Exporter};
use lagkit_dataplane::CounterSnapshot;
use lagkit_switch::bridge::{Cast, DropReason, PortCounters};
use lagkit_switch::show::MemberFlag;

/// One member's place in its channel.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberSnapshot {
    /// `Port-channel1`.
    pub channel: String,
    /// `lacp`, `pagp` or `none` (mode on).
    pub protocol: String,
    /// `active`, `desirable`, `on`, ...
    pub mode: String,
    /// Its flag in `show etherchannel summary`.
    pub flag: MemberFlag,
    /// LACP: the actor's and the partner's state octets, the partner's
    /// system MAC, key and port.
    pub lacp: Option<(u8, u8, String, u16, u16)>,
    /// PAgP: its state.
    pub pagp: Option<lagkit_api::status::PagpState>,
}

/// One port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortSnapshot {
    /// The interface as the configuration names it.
    pub name: String,
    /// The Linux device.
    pub device: String,
    /// Not `shutdown`.
    pub enabled: bool,
    /// Has carrier.
    pub carrier: bool,
    /// The bridge's counters.
    pub counters: PortCounters,
    /// The packet socket's counters (its drops).
    pub socket: CounterSnapshot,
    /// Its channel, if it is a member.
    pub member: Option<MemberSnapshot>,
}

/// One port-channel.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelSnapshot {
    /// `Port-channel1`.
    pub name: String,
    /// `lacp`, `pagp` or `none`.
    pub protocol: String,
    /// The channel's mode.
    pub mode: String,
    /// Configured members.
    pub members: usize,
    /// Bundled members.
    pub bundled: usize,
    /// Its members' counters added up.
    pub counters: PortCounters,
}

/// What the page shows, copied out of a running switch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The hostname.
    pub name: String,
    /// `port-channel load-balance`.
    pub load_balance: String,
    /// Every port, in port order.
    pub ports: Vec<PortSnapshot>,
    /// Every port-channel.
    pub channels: Vec<ChannelSnapshot>,
    /// MAC address table: entries, limit, moves, refused for lack of room.
    pub fdb: (usize, usize, u64, u64),
    /// Slow-protocol frames on ports without LACP, Cisco multicast on
    /// ports without PAgP.
    pub ignored: (u64, u64),
}

/// `MemberFlag` as the `state` label spells it, every flag in order.
pub const MEMBER_STATES: [(MemberFlag, &str); 6] = [
    (MemberFlag::Bundled, "bundled"),
    (MemberFlag::Individual, "stand_alone"),
    (MemberFlag::Suspended, "suspended"),
    (MemberFlag::HotStandby, "hot_standby"),
    (MemberFlag::Waiting, "waiting"),
    (MemberFlag::Down, "down"),
];

/// The name IOS gives channel `n`.
fn channel_name(n: impl std::fmt::Display) -> String {
    format!("Port-channel{n}")
}

impl Switch {
    /// The page's facts, copied between two wake-ups of the loop.
    pub fn metrics_snapshot(&self) -> Snapshot {
        let bridge = self.core().bridge();
        let mut member = std::collections::BTreeMap::new();
        let mut channels = Vec::new();
        for spec in self.core().channels() {
            let name = channel_name(spec.id.0);
            let flags = self.core().flags(spec);
            for ((p, mode), (flag, _)) in spec.members.iter().zip(flags) {
                let lacp = self.core().lacp_status(*p).map(|st| {
                    (
                        st.actor.state.0,
                        st.partner.state.0,
                        st.partner.system.mac.to_string(),
                        st.partner.key,
                        st.partner.port,
                    )
                });
                let pagp = self
                    .core()
                    .pagp_status(*p)
                    // The MIB's names are both enums' spellings.
                    .and_then(|st| st.state.name().parse().ok());
                member.insert(
                    p.0,
                    MemberSnapshot {
                        channel: name.clone(),
                        protocol: mode.protocol().into(),
                        mode: mode.to_string(),
                        flag,
                        lacp,
                        pagp,
                    },
                );
            }
            let ch = bridge.channel(spec.id);
            channels.push(ChannelSnapshot {
                name,
                protocol: spec.mode.protocol().into(),
                mode: spec.mode.to_string(),
                members: spec.members.len(),
                bundled: ch.map_or(0, |c| c.bundled().count()),
                counters: bridge.channel_counters(spec.id),
            });
        }
        let ports = bridge
            .ports()
            .map(|(p, cfg)| PortSnapshot {
                name: cfg.name.clone(),
                device: self.device(p).to_string(),
                enabled: cfg.enabled,
                carrier: self.core().carrier(p),
                counters: bridge.counters(p).cloned().unwrap_or_default(),
                socket: self.socket_counters(p).unwrap_or_default(),
                member: member.remove(&p.0),
            })
            .collect();
        let fdb = bridge.fdb();
        let c = self.core().control_counters();
        Snapshot {
            name: self.core().name().to_string(),
            load_balance: self.core().method().to_string(),
            ports,
            channels,
            fdb: (fdb.len(), fdb.limit(), fdb.moves(), fdb.refused()),
            ignored: (c.slow_ignored, c.pagp_ignored),
        }
    }
}

/// Frames by destination kind, one series each.
fn casts(
    family: &prometheus_client::metrics::family::Family<
        Labels,
        prometheus_client::metrics::counter::Counter,
    >,
    base: &Labels,
    c: &Cast,
) {
    for (kind, n) in [
        ("unicast", c.ucast),
        ("multicast", c.mcast),
        ("broadcast", c.bcast),
    ] {
        let mut l = base.clone();
        l.push(("cast".into(), kind.into()));
        family.get_or_create(&l).inc_by(n);
    }
}

/// Renders the page of a switch (OpenMetrics).
pub fn render(s: &Snapshot) -> String {
    let mut page = Page::new();
    let p = &mut page;
    let info = p.gauge(
        "switch_info",
        "The switch's port-channel load-balance method (value 1)",
    );
    let port_info = p.gauge("switch_port_info", "The port's Linux device (value 1)");
    let link_up = p.gauge("switch_port_link_up", "1 if the port has carrier");
    let enabled = p.gauge("switch_port_enabled", "1 unless the port is shutdown");
    let rx_f = p.counter(
        "switch_port_rx_frames",
        "Frames received on the port, by destination kind",
    );
    let rx_b = p.counter("switch_port_rx_bytes", "Bytes received on the port");
    let tx_f = p.counter(
        "switch_port_tx_frames",
        "Frames sent on the port (control frames included), by destination kind",
    );
    let tx_b = p.counter(
        "switch_port_tx_bytes",
        "Bytes sent on the port (control frames included)",
    );
    let ctl_rx = p.counter(
        "switch_port_control_rx_frames",
        "Control frames (LACP, Marker, PAgP, CDP) handed to the port's control plane",
    );
    let ctl_tx = p.counter(
        "switch_port_control_tx_frames",
        "Frames the port's control plane sent (LACPDUs, PAgP hellos)",
    );
    let flooded = p.counter(
        "switch_port_flooded_frames",
        "Frames sent on the port as flood copies",
    );
    let rx_drops = p.counter(
        "switch_port_rx_drops",
        "Received frames dropped on the port, by reason",
    );
    let tx_drops = p.counter(
        "switch_port_tx_drops",
        "Frames not sent on the port, by reason",
    );
    let m_state = p.gauge(
        "switch_member_state",
        "The member's state in its port-channel (1 for the current one)",
    );
    let m_info = p.gauge(
        "switch_member_info",
        "The member's port-channel, protocol and mode (value 1)",
    );
    let m_actor = p.gauge(
        "switch_member_lacp_actor_state",
        "The switch's LACP state bits on the member (1 set, 0 clear)",
    );
    let m_partner = p.gauge(
        "switch_member_lacp_partner_state",
        "The partner's LACP state bits as last received on the member",
    );
    let m_partner_info = p.gauge(
        "switch_member_lacp_partner_info",
        "The LACP partner the member hears: system id, key and port (value 1)",
    );
    let m_pagp = p.gauge(
        "switch_member_pagp_state",
        "The member's PAgP state (1 for the current one)",
    );
    let ch_info = p.gauge(
        "switch_channel_info",
        "The port-channel's protocol and mode (value 1)",
    );
    let ch_up = p.gauge(
        "switch_channel_up",
        "1 while at least one member is bundled",
    );
    let ch_members = p.gauge("switch_channel_members", "Configured members");
    let ch_bundled = p.gauge("switch_channel_bundled_members", "Bundled members");
    let ch_rx_f = p.counter(
        "switch_channel_rx_frames",
        "Frames received on the members, by destination kind",
    );
    let ch_rx_b = p.counter("switch_channel_rx_bytes", "Bytes received on the members");
    let ch_tx_f = p.counter(
        "switch_channel_tx_frames",
        "Frames sent on the members (control frames included), by destination kind",
    );
    let ch_tx_b = p.counter(
        "switch_channel_tx_bytes",
        "Bytes sent on the members (control frames included)",
    );
    let ch_drops = p.counter(
        "switch_channel_rx_drops",
        "Received frames the bridge dropped on the members, by reason",
    );
    let fdb_entries = p.gauge("switch_fdb_entries", "MAC address table entries");
    let fdb_limit = p.gauge(
        "switch_fdb_limit_entries",
        "The most entries the table holds",
    );
    let fdb_moves = p.counter(
        "switch_fdb_moves",
        "Addresses that moved between ports or channels",
    );
    let fdb_refused = p.counter(
        "switch_fdb_learn_refused",
        "Addresses not learned because the table was full",
    );
    let ignored = p.counter(
        "switch_control_ignored_frames",
        "Protocol frames on ports that do not run the protocol, by kind",
    );
    let sw = labels(&[("switch", &s.name)]);
    info.get_or_create(&labels(&[
        ("switch", &s.name),
        ("load_balance", &s.load_balance),
    ]))
    .set(1);
    for port in &s.ports {
        let l = labels(&[("switch", &s.name), ("port", &port.name)]);
        let mut li = l.clone();
        li.push(("device".into(), port.device.clone()));
        port_info.get_or_create(&li).set(1);
        link_up.get_or_create(&l).set(i64::from(port.carrier));
        enabled.get_or_create(&l).set(i64::from(port.enabled));
        let c = &port.counters;
        casts(&rx_f, &l, &c.rx_cast);
        rx_b.get_or_create(&l).inc_by(c.rx_bytes);
        casts(&tx_f, &l, &c.tx_cast);
        tx_b.get_or_create(&l)
            .inc_by(c.tx_bytes + c.control_tx_bytes);
        ctl_rx.get_or_create(&l).inc_by(c.control);
        ctl_tx.get_or_create(&l).inc_by(c.control_tx);
        flooded.get_or_create(&l).inc_by(c.flooded);
        let reason = |r: &str| {
            let mut x = l.clone();
            x.push(("reason".into(), r.to_string()));
            x
        };
        for r in DropReason::ALL {
            let name = snake(&format!("{r:?}"));
            rx_drops.get_or_create(&reason(&name)).inc_by(c.dropped(r));
        }
        tx_drops
            .get_or_create(&reason("too_big"))
            .inc_by(c.tx_too_big);
        for r in lagkit_dataplane::DropReason::ALL {
            let name = snake(&format!("{r:?}"));
            let n = port.socket.dropped(r);
            if let Some(rx) = name.strip_prefix("rx_") {
                rx_drops.get_or_create(&reason(rx)).inc_by(n);
            } else if let Some(tx) = name.strip_prefix("tx_") {
                tx_drops.get_or_create(&reason(tx)).inc_by(n);
            }
        }
        let Some(m) = &port.member else { continue };
        let mut ml = l.clone();
        ml.push(("channel".into(), m.channel.clone()));
        let mut mi = ml.clone();
        mi.extend(labels(&[("protocol", &m.protocol), ("mode", &m.mode)]));
        m_info.get_or_create(&mi).set(1);
        for (flag, name) in MEMBER_STATES {
            let mut x = ml.clone();
            x.push(("state".into(), name.into()));
            m_state.get_or_create(&x).set(i64::from(flag == m.flag));
        }
        if let Some((actor, partner, system, key, pport)) = &m.lacp {
            set_lacp_bits(&m_actor, &ml, *actor);
            set_lacp_bits(&m_partner, &ml, *partner);
            let mut x = ml.clone();
            x.extend(labels(&[
                ("partner_system", system),
                ("partner_key", &key.to_string()),
                ("partner_port", &pport.to_string()),
            ]));
            m_partner_info.get_or_create(&x).set(1);
        }
        if let Some(st) = &m.pagp {
            set_pagp_state(&m_pagp, &ml, *st);
        }
    }
    for ch in &s.channels {
        let l = labels(&[("switch", &s.name), ("channel", &ch.name)]);
        let mut li = l.clone();
        li.extend(labels(&[("protocol", &ch.protocol), ("mode", &ch.mode)]));
        ch_info.get_or_create(&li).set(1);
        ch_up.get_or_create(&l).set(i64::from(ch.bundled > 0));
        ch_members.get_or_create(&l).set(ch.members as i64);
        ch_bundled.get_or_create(&l).set(ch.bundled as i64);
        let c = &ch.counters;
        casts(&ch_rx_f, &l, &c.rx_cast);
        ch_rx_b.get_or_create(&l).inc_by(c.rx_bytes);
        casts(&ch_tx_f, &l, &c.tx_cast);
        ch_tx_b
            .get_or_create(&l)
            .inc_by(c.tx_bytes + c.control_tx_bytes);
        for r in DropReason::ALL {
            let mut x = l.clone();
            x.push(("reason".into(), snake(&format!("{r:?}"))));
            ch_drops.get_or_create(&x).inc_by(c.dropped(r));
        }
    }
    let (entries, limit, moves, refused) = s.fdb;
    fdb_entries.get_or_create(&sw).set(entries as i64);
    fdb_limit.get_or_create(&sw).set(limit as i64);
    fdb_moves.get_or_create(&sw).inc_by(moves);
    fdb_refused.get_or_create(&sw).inc_by(refused);
    for (kind, n) in [
        ("slow_protocols", s.ignored.0),
        ("cisco_multicast", s.ignored.1),
    ] {
        let mut x = sw.clone();
        x.push(("kind".into(), kind.into()));
        ignored.get_or_create(&x).inc_by(n);
    }
    page.encode()
}

/// The metrics endpoint of a switch. The loop's owner calls
/// [`SwitchMetrics::update`] between two wake-ups: at most once a second it
/// copies the counters ([`Switch::metrics_snapshot`]) and hands the copy to
/// a thread of its own, which renders the page and gives it to the
/// [`Exporter`]; the loop never renders, never waits for the renderer (a
/// copy still waiting is skipped) and never waits on a scraper.
pub struct SwitchMetrics {
    snapshots: Option<std::sync::mpsc::SyncSender<Snapshot>>,
    renderer: Option<std::thread::JoinHandle<()>>,
    addr: std::net::SocketAddr,
    epoch: std::time::Instant,
    /// When the last copy was taken (ns since `epoch`; 0 = never).
    last: u64,
}

impl SwitchMetrics {
    /// Listens on `addr`.
    pub fn start(addr: std::net::SocketAddr) -> std::io::Result<SwitchMetrics> {
        let mut exporter = Exporter::start(addr)?;
        let addr = exporter.local_addr();
        let epoch = std::time::Instant::now();
        let (tx, rx) = std::sync::mpsc::sync_channel::<Snapshot>(1);
        let renderer = std::thread::Builder::new()
            .name("lagkit-metrics-render".into())
            .spawn(move || {
                for snap in rx {
                    let now = u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    exporter.publish(render(&snap), now);
                }
            })?;
        Ok(SwitchMetrics {
            snapshots: Some(tx),
            renderer: Some(renderer),
            addr,
            epoch,
            last: 0,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Between two wake-ups of `sw`'s loop: copies its counters for the
    /// renderer when a second has passed since the last copy.
    pub fn update(&mut self, sw: &Switch) {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        if self.last != 0 && now.saturating_sub(self.last) < 1_000_000_000 {
            return;
        }
        self.last = now.max(1);
        if let Some(tx) = &self.snapshots {
            // Full: the renderer is still at the last copy; this one waits
            // for the next second.
            let _ = tx.try_send(sw.metrics_snapshot());
        }
    }
}

impl Drop for SwitchMetrics {
    /// Stops the renderer (and with it the listener).
    fn drop(&mut self) {
        self.snapshots = None;
        if let Some(t) = self.renderer.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = include_str!("../../../docs/reference/metrics.md");

    fn counters(n: u64) -> PortCounters {
        let mut c = PortCounters {
            rx_frames: n,
            rx_bytes: 100 * n,
            tx_frames: n,
            tx_bytes: 100 * n,
            control: 2,
            control_tx: 3,
            control_tx_bytes: 372,
            ..PortCounters::default()
        };
        c.rx_cast.ucast = n;
        c.tx_cast.bcast = n + 3;
        c.drops[3] = 1;
        c
    }

    fn snapshot() -> Snapshot {
        let member = |flag, lacp: bool| MemberSnapshot {
            channel: "Port-channel1".into(),
            protocol: if lacp { "lacp" } else { "pagp" }.into(),
            mode: if lacp { "active" } else { "desirable" }.into(),
            flag,
            lacp: lacp.then(|| (0x3d, 0x3f, "02:00:00:00:00:01".into(), 9, 1)),
            pagp: (!lacp).then_some(lagkit_api::status::PagpState::UpPagp),
        };
        let mut socket = CounterSnapshot::default();
        socket.drops[0] = 4;
        Snapshot {
            name: "sw1".into(),
            load_balance: "src-dst-ip".into(),
            ports: vec![
                PortSnapshot {
                    name: "Gi0/1".into(),
                    device: "veth1".into(),
                    enabled: true,
                    carrier: true,
                    counters: counters(10),
                    socket,
                    member: Some(member(MemberFlag::Bundled, true)),
                },
                PortSnapshot {
                    name: "Gi0/2".into(),
                    device: "veth2".into(),
                    enabled: true,
                    carrier: false,
                    counters: counters(0),
                    socket: CounterSnapshot::default(),
                    member: Some(member(MemberFlag::Down, false)),
                },
            ],
            channels: vec![ChannelSnapshot {
                name: "Port-channel1".into(),
                protocol: "lacp".into(),
                mode: "active".into(),
                members: 2,
                bundled: 1,
                counters: counters(10),
            }],
            fdb: (3, 8192, 1, 0),
            ignored: (0, 5),
        }
    }

    #[test]
    fn every_series_is_documented() {
        let text = render(&snapshot());
        let gaps = lagkit_api::metrics::exporter::documentation_gaps(&text, DOC, |name| {
            name.starts_with("lagkit_switch_")
        });
        assert!(gaps.is_empty(), "{}\n{text}", gaps.join("\n"));
    }

    #[test]
    fn counters_states_and_drops() {
        let text = render(&snapshot());
        for line in [
            "lagkit_switch_port_rx_frames_total{switch=\"sw1\",port=\"Gi0/1\",cast=\"unicast\"} 10\n",
            "lagkit_switch_port_tx_frames_total{switch=\"sw1\",port=\"Gi0/1\",cast=\"broadcast\"} 13\n",
            "lagkit_switch_port_tx_bytes_total{switch=\"sw1\",port=\"Gi0/1\"} 1372\n",
            "lagkit_switch_port_rx_drops_total{switch=\"sw1\",port=\"Gi0/1\",reason=\"giant\"} 1\n",
            "lagkit_switch_port_tx_drops_total{switch=\"sw1\",port=\"Gi0/1\",reason=\"full\"} 4\n",
            "lagkit_switch_port_rx_drops_total{switch=\"sw1\",port=\"Gi0/1\",reason=\"kernel\"} 0\n",
            "lagkit_switch_member_state{switch=\"sw1\",port=\"Gi0/1\",channel=\"Port-channel1\",state=\"bundled\"} 1\n",
            "lagkit_switch_member_state{switch=\"sw1\",port=\"Gi0/2\",channel=\"Port-channel1\",state=\"down\"} 1\n",
            "lagkit_switch_member_state{switch=\"sw1\",port=\"Gi0/2\",channel=\"Port-channel1\",state=\"bundled\"} 0\n",
            "lagkit_switch_member_lacp_partner_state{switch=\"sw1\",port=\"Gi0/1\",channel=\"Port-channel1\",bit=\"collecting\"} 1\n",
            "lagkit_switch_member_pagp_state{switch=\"sw1\",port=\"Gi0/2\",channel=\"Port-channel1\",state=\"upPagp\"} 1\n",
            "lagkit_switch_channel_up{switch=\"sw1\",channel=\"Port-channel1\"} 1\n",
            "lagkit_switch_fdb_entries{switch=\"sw1\"} 3\n",
            "lagkit_switch_control_ignored_frames_total{switch=\"sw1\",kind=\"cisco_multicast\"} 5\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
