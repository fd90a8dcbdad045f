//! Prometheus metrics of a bond, on the address `metrics_listen` names
//! (or 127.0.0.1:`metrics_port`) of the bond's network namespace:
//! per-member frames, bytes, drops, carrier, LACP and PAgP state, and the
//! bond's mode, plans and rebalances. `docs/reference/metrics.md` lists
//! every series; a test holds the page and [`render`] together.
//!
//! The control thread renders the page (with the `prometheus-client`
//! encoder) at most once a second; [`exporter`]'s thread hands the latest
//! page to every scrape, so a slow scraper never stalls the bond. The
//! switch serves its own page through the same [`Exporter`].

pub mod exporter;

use crate::status::PagpState;
use crate::status::{BondStats, BondStatus};
pub use exporter::{labels, loopback, snake, Exporter, Labels, Page};

/// The LACP state bits (IEEE 802.1AX-2020 6.4.2.3, Actor_State), in bit
/// order, as the `bit` label spells them.
pub const LACP_BITS: [&str; 8] = [
    "activity",
    "timeout",
    "aggregation",
    "synchronization",
    "collecting",
    "distributing",
    "defaulted",
    "expired",
];

/// Every PAgP port state, as the `state` label spells it (the MIB's
/// names).
pub const PAGP_STATES: &[PagpState] = PagpState::ALL;

/// Sets one series per LACP state bit of `state` (1 set, 0 clear).
pub fn set_lacp_bits(
    family: &prometheus_client::metrics::family::Family<
        Labels,
        prometheus_client::metrics::gauge::Gauge,
    >,
    base: &Labels,
    state: u8,
) {
    for (i, bit) in LACP_BITS.iter().enumerate() {
        let mut l = base.clone();
        l.push(("bit".into(), (*bit).into()));
        family.get_or_create(&l).set(i64::from(state >> i & 1));
    }
}

/// Sets one series per PAgP state, 1 for `current` and 0 for the others.
pub fn set_pagp_state(
    family: &prometheus_client::metrics::family::Family<
        Labels,
        prometheus_client::metrics::gauge::Gauge,
    >,
    base: &Labels,
    current: PagpState,
) {
    for &st in PAGP_STATES {
        let mut l = base.clone();
        l.push(("state".into(), st.as_str().into()));
        family.get_or_create(&l).set(i64::from(st == current));
    }
}

/// What the page shows beyond the status and the counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BondFacts {
    /// The mode as the configuration names it (`802.3ad`, `balance-xor`).
    pub mode: String,
    /// The transmit hash policy's name (`layer3+4`, `strong`).
    pub policy: String,
    /// Plans (distribution maps) published to the data path since start.
    pub plans_published: u64,
    /// Rebalancing passes that moved buckets (adaptive, tlb, alb).
    pub rebalances: u64,
}

/// Renders the page of one bond (OpenMetrics).
pub fn render(status: &BondStatus, stats: &BondStats, facts: &BondFacts) -> String {
    let mut page = Page::new();
    let p = &mut page;
    let tx_p = p.counter("member_tx_packets", "Data frames sent on the member");
    let tx_b = p.counter("member_tx_bytes", "Bytes of data frames sent on the member");
    let rx_p = p.counter("member_rx_packets", "Data frames received and passed up");
    let rx_b = p.counter(
        "member_rx_bytes",
        "Bytes of data frames received and passed up",
    );
    let drops = p.counter("member_drops", "Frames dropped on the member");
    let lrx = p.counter("member_lacpdu_rx", "LACPDUs received");
    let ltx = p.counter("member_lacpdu_tx", "LACPDUs sent");
    let lbad = p.counter(
        "member_lacpdu_bad",
        "Malformed or unknown slow-protocol frames",
    );
    let up = p.gauge("member_link_up", "1 if the member has carrier");
    let txing = p.gauge(
        "member_transmitting",
        "1 if the member carries transmitted traffic",
    );
    let colling = p.gauge(
        "member_collecting",
        "1 if the member passes received traffic up",
    );
    let fails = p.counter("member_link_failures", "Times the member went down");
    let actor = p.gauge(
        "member_lacp_actor_state",
        "The bond's LACP state bits on the member (1 set, 0 clear)",
    );
    let partner = p.gauge(
        "member_lacp_partner_state",
        "The partner's LACP state bits as last received on the member",
    );
    let partner_info = p.gauge(
        "member_lacp_partner_info",
        "The partner the member hears: system id, key and port (value 1)",
    );
    let pagp_state = p.gauge(
        "member_pagp_state",
        "The member's PAgP state (1 for the current one)",
    );
    let pagp_rx = p.counter("member_pagp_rx_hellos", "PAgP information PDUs received");
    let pagp_tx = p.counter("member_pagp_tx_hellos", "PAgP information PDUs sent");
    let pagp_bad = p.counter("member_pagp_rx_bad", "PAgP frames dropped as malformed");
    let pagp_partner = p.gauge(
        "member_pagp_partner_info",
        "The PAgP partner the member hears: device id and port (value 1)",
    );
    let ports = p.gauge(
        "aggregate_ports",
        "Ports distributing in the active aggregate (802.3ad)",
    );
    let info = p.gauge(
        "bond_info",
        "The bond's mode, engine and hash policy (value 1)",
    );
    let plans = p.counter(
        "bond_plans_published",
        "Plans (distribution maps) published to the data path",
    );
    let rebalances = p.counter(
        "bond_rebalances",
        "Rebalancing passes that moved hash buckets between members",
    );
    let engine_drops = p.counter(
        "bond_engine_drops",
        "Frames the data path dropped, by reason",
    );
    // node_exporter's bonding collector's own series: what its dashboards
    // and the usual alert on their difference read. Slaves are the
    // configured members (one that is missing is a degraded bond); active,
    // those whose MII status is up, as node_exporter reads sysfs.
    let active = p.foreign_gauge(
        "node_bonding_active",
        "Number of active slaves per bonding interface",
    );
    let slaves = p.foreign_gauge(
        "node_bonding_slaves",
        "Number of configured slaves per bonding interface",
    );
    let master = labels(&[("master", &status.name)]);
    slaves
        .get_or_create(&master)
        .set(status.members.len() as i64);
    let up_count = status.members.iter().filter(|m| m.mii_status.is_up());
    active.get_or_create(&master).set(up_count.count() as i64);
    let bond = labels(&[("bond", &status.name)]);
    for (m, s) in status.members.iter().zip(&stats.members) {
        let l = labels(&[("bond", &status.name), ("member", &m.name)]);
        tx_p.get_or_create(&l).inc_by(s.tx_packets);
        tx_b.get_or_create(&l).inc_by(s.tx_bytes);
        rx_p.get_or_create(&l).inc_by(s.rx_packets);
        rx_b.get_or_create(&l).inc_by(s.rx_bytes);
        drops.get_or_create(&l).inc_by(s.drops);
        lrx.get_or_create(&l).inc_by(s.lacpdu_rx);
        ltx.get_or_create(&l).inc_by(s.lacpdu_tx);
        lbad.get_or_create(&l).inc_by(s.lacpdu_bad);
        fails.get_or_create(&l).inc_by(m.link_failure_count);
        up.get_or_create(&l).set(i64::from(m.mii_status.is_up()));
        txing.get_or_create(&l).set(i64::from(m.transmitting));
        colling.get_or_create(&l).set(i64::from(m.collecting));
        if let Some(lacp) = &m.lacp {
            set_lacp_bits(&actor, &l, lacp.actor_state);
            set_lacp_bits(&partner, &l, lacp.partner_state);
            let mut pl = l.clone();
            pl.extend(labels(&[
                ("partner_system", &lacp.partner_mac),
                ("partner_key", &lacp.partner_key.to_string()),
                ("partner_port", &lacp.partner_port.to_string()),
            ]));
            partner_info.get_or_create(&pl).set(1);
        }
        if let Some(pg) = &m.pagp {
            set_pagp_state(&pagp_state, &l, pg.state);
            pagp_rx.get_or_create(&l).inc_by(pg.hellos_rx);
            pagp_tx.get_or_create(&l).inc_by(pg.hellos_tx);
            pagp_bad.get_or_create(&l).inc_by(pg.bad_rx);
            if let Some(dev) = &pg.partner_device_id {
                let mut pl = l.clone();
                pl.extend(labels(&[
                    ("partner_device", dev),
                    (
                        "partner_port",
                        pg.partner_port_name.as_deref().unwrap_or(""),
                    ),
                ]));
                pagp_partner.get_or_create(&pl).set(1);
            }
        }
    }
    if let Some(l) = &status.lacp {
        ports.get_or_create(&bond).set(l.number_of_ports as i64);
    }
    info.get_or_create(&labels(&[
        ("bond", &status.name),
        ("mode", &facts.mode),
        ("engine", status.engine.as_str()),
        ("policy", &facts.policy),
    ]))
    .set(1);
    plans.get_or_create(&bond).inc_by(facts.plans_published);
    rebalances.get_or_create(&bond).inc_by(facts.rebalances);
    for (reason, n) in &stats.engine_drops {
        let l = labels(&[("bond", &status.name), ("reason", &snake(reason))]);
        engine_drops.get_or_create(&l).inc_by(*n);
    }
    page.encode()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!("../../../../docs/reference/metrics.md");

    /// A one-member 802.3ad bond, enough for every series to appear.
    fn scrape() -> String {
        let status: BondStatus = serde_json::from_value(serde_json::json!({
            "name": "bond0", "mode": "802.3ad",
            "xmit_hash_policy": "layer3+4", "engine": "userspace", "mii_status": "up",
            "mac": "02:00:00:00:00:01",
            "mtu": 1500, "miimon_ms": 0, "updelay_ms": 0, "downdelay_ms": 0,
            "active_member": null, "problems": [],
            "lacp": {
                "lacp_rate": "fast", "lacp_activity": "on", "system_priority": 65535,
                "system_mac": "02:00:00:00:00:01", "aggregator_id": 1, "number_of_ports": 1,
                "actor_key": null, "partner_key": null, "partner_mac": null,
                "partner_priority": null
            },
            "members": [{
                "name": "eth1", "mii_status": "up", "speed": null, "duplex": null,
                "link_failure_count": 2, "permanent_hw_addr": "02:00:00:00:00:01",
                "transmitting": true, "collecting": true, "watchers": [],
                "lacp": {
                    "aggregator_id": 1, "rx_state": "CURRENT", "mux_state": "COLLECTING_DISTRIBUTING",
                    "selected": "SELECTED", "actor_churn_state": "none", "partner_churn_state": "none",
                    "actor_port": 1, "actor_key": 9, "actor_state": 0x3d,
                    "partner_mac": "02:00:00:00:00:09", "partner_port": 3, "partner_key": 1,
                    "partner_state": 0x3f, "not_bundled": null
                },
                "pagp": {
                    "state": "upPagp", "in_channel": true, "partner_device_id": "02:00:00:00:00:09",
                    "partner_port": 3, "partner_port_name": "Gi0/3", "partner_device_name": "sw",
                    "partner_group_capability": 1, "partner_group_ifindex": 1,
                    "partner_mode": "desirable", "partner_learn": "any",
                    "hellos_rx": 4, "hellos_tx": 5, "bad_rx": 0
                }
            }]
        }))
        .expect("status fixture");
        let stats = BondStats {
            name: "bond0".into(),
            members: vec![crate::status::MemberStats {
                name: "eth1".into(),
                tx_packets: 1,
                ..Default::default()
            }],
            tx_balance: None,
            rx_balance: None,
            engine_drops: vec![("NoMember".into(), 3)],
            carrier_events: Vec::new(),
        };
        let facts = BondFacts {
            mode: "802.3ad".into(),
            policy: "layer3+4".into(),
            plans_published: 4,
            rebalances: 0,
        };
        render(&status, &stats, &facts)
    }

    /// Each series the encoder writes must have a row in
    /// docs/reference/metrics.md with its type and every label it carries,
    /// and each row of the bond's must be exported.
    #[test]
    fn every_series_is_documented() {
        let text = scrape();
        let gaps =
            exporter::documentation_gaps(&text, PAGE, |name| !name.starts_with("lagkit_switch_"));
        assert!(gaps.is_empty(), "{}\n{text}", gaps.join("\n"));
        assert!(text.matches("# TYPE ").count() >= 25, "{text}");
    }

    #[test]
    fn lacp_bits_pagp_states_and_info_series() {
        let text = scrape();
        for line in [
            "lagkit_member_lacp_actor_state{bond=\"bond0\",member=\"eth1\",bit=\"activity\"} 1\n",
            "lagkit_member_lacp_actor_state{bond=\"bond0\",member=\"eth1\",bit=\"timeout\"} 0\n",
            "lagkit_member_lacp_actor_state{bond=\"bond0\",member=\"eth1\",bit=\"distributing\"} 1\n",
            "lagkit_member_lacp_partner_state{bond=\"bond0\",member=\"eth1\",bit=\"timeout\"} 1\n",
            "lagkit_member_lacp_partner_info{bond=\"bond0\",member=\"eth1\",partner_system=\"02:00:00:00:00:09\",partner_key=\"1\",partner_port=\"3\"} 1\n",
            "lagkit_member_pagp_state{bond=\"bond0\",member=\"eth1\",state=\"upPagp\"} 1\n",
            "lagkit_member_pagp_state{bond=\"bond0\",member=\"eth1\",state=\"portDown\"} 0\n",
            "lagkit_bond_info{bond=\"bond0\",mode=\"802.3ad\",engine=\"userspace\",policy=\"layer3+4\"} 1\n",
            "lagkit_bond_plans_published_total{bond=\"bond0\"} 4\n",
            "lagkit_bond_engine_drops_total{bond=\"bond0\",reason=\"no_member\"} 3\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert_eq!(text.matches("lagkit_member_lacp_actor_state{").count(), 8);
    }
}
