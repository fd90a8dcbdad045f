//! Prometheus metrics on 127.0.0.1 (of the bond's network namespace) when
//! `metrics_port` is configured: per-member packets, bytes, drops, LACPDU
//! counters, carrier and whether the member carries traffic.
//!
//! The control thread renders the exposition text (with the
//! `prometheus-client` encoder) at most once a second into a shared
//! string; a small server thread hands the latest text to every scrape, so
//! a slow scraper never stalls the bond.

use crate::status::{BondStats, BondStatus};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Labels = Vec<(String, String)>;

/// Renders the exposition text of one bond.
pub fn render(status: &BondStatus, stats: &BondStats) -> String {
    let mut reg = Registry::with_prefix("lagkit");
    let counter = |reg: &mut Registry, name: &str, help: &str| {
        let f = Family::<Labels, Counter>::default();
        reg.register(name, help, f.clone());
        f
    };
    let gauge = |reg: &mut Registry, name: &str, help: &str| {
        let f = Family::<Labels, Gauge>::default();
        reg.register(name, help, f.clone());
        f
    };
    let tx_p = counter(
        &mut reg,
        "member_tx_packets",
        "Data frames sent on the member",
    );
    let tx_b = counter(
        &mut reg,
        "member_tx_bytes",
        "Bytes of data frames sent on the member",
    );
    let rx_p = counter(
        &mut reg,
        "member_rx_packets",
        "Data frames received and passed up",
    );
    let rx_b = counter(
        &mut reg,
        "member_rx_bytes",
        "Bytes of data frames received and passed up",
    );
    let drops = counter(&mut reg, "member_drops", "Frames dropped on the member");
    let lrx = counter(&mut reg, "member_lacpdu_rx", "LACPDUs received");
    let ltx = counter(&mut reg, "member_lacpdu_tx", "LACPDUs sent");
    let lbad = counter(
        &mut reg,
        "member_lacpdu_bad",
        "Malformed or unknown slow-protocol frames",
    );
    let up = gauge(&mut reg, "member_link_up", "1 if the member has carrier");
    let txing = gauge(
        &mut reg,
        "member_transmitting",
        "1 if the member carries transmitted traffic",
    );
    let fails = counter(
        &mut reg,
        "member_link_failures",
        "Times the member went down",
    );
    let ports = gauge(
        &mut reg,
        "aggregate_ports",
        "Ports distributing in the active aggregate (802.3ad)",
    );
    let bond = vec![("bond".to_string(), status.name.clone())];
    for (m, s) in status.members.iter().zip(&stats.members) {
        let l: Labels = vec![
            ("bond".to_string(), status.name.clone()),
            ("member".to_string(), m.name.clone()),
        ];
        tx_p.get_or_create(&l).inc_by(s.tx_packets);
        tx_b.get_or_create(&l).inc_by(s.tx_bytes);
        rx_p.get_or_create(&l).inc_by(s.rx_packets);
        rx_b.get_or_create(&l).inc_by(s.rx_bytes);
        drops.get_or_create(&l).inc_by(s.drops);
        lrx.get_or_create(&l).inc_by(s.lacpdu_rx);
        ltx.get_or_create(&l).inc_by(s.lacpdu_tx);
        lbad.get_or_create(&l).inc_by(s.lacpdu_bad);
        fails.get_or_create(&l).inc_by(m.link_failure_count);
        up.get_or_create(&l).set(i64::from(m.mii_status == "up"));
        txing.get_or_create(&l).set(i64::from(m.transmitting));
    }
    if let Some(l) = &status.lacp {
        ports.get_or_create(&bond).set(l.number_of_ports as i64);
    }
    let mut out = String::new();
    let _ = encode(&mut out, &reg);
    out
}

/// Serves the latest text on 127.0.0.1:`port` until `stop` is set.
pub fn serve(port: u16, text: Arc<Mutex<String>>, stop: Arc<AtomicBool>) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new()
        .name("lagkit-metrics".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
                        let mut req = [0u8; 1024];
                        let _ = s.read(&mut req);
                        let body = text.lock().map(|t| t.clone()).unwrap_or_default();
                        let _ = write!(
                            s,
                            "HTTP/1.0 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\n\r\n{}",
                            body.len(),
                            body
                        );
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })?;
    Ok(())
}

/// The metrics endpoint of one bond: the server thread and the text it
/// serves. The server stops when this is dropped.
pub struct Exporter {
    text: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    /// When the text was last rendered (ns of the caller's clock; 0 = never).
    last: u64,
}

impl Exporter {
    /// Serves on 127.0.0.1:`port`.
    pub fn start(port: u16) -> std::io::Result<Exporter> {
        let text = Arc::new(Mutex::new(String::new()));
        let stop = Arc::new(AtomicBool::new(false));
        serve(port, text.clone(), stop.clone())?;
        Ok(Exporter {
            text,
            stop,
            last: 0,
        })
    }

    /// Whether the text should be rendered again at `now` (at most once a
    /// second).
    pub fn due(&self, now: u64) -> bool {
        self.last == 0 || now.saturating_sub(self.last) >= 1_000_000_000
    }

    /// Serves `text` from now on.
    pub fn publish(&mut self, text: String, now: u64) {
        if let Ok(mut t) = self.text.lock() {
            *t = text;
        }
        self.last = now.max(1);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!("../../../docs/reference/metrics.md");

    /// A one-member 802.3ad bond, enough for every series to appear.
    fn scrape() -> String {
        let status: BondStatus = serde_json::from_value(serde_json::json!({
            "name": "bond0", "mode": "IEEE 802.3ad Dynamic link aggregation",
            "xmit_hash_policy": "layer3+4", "mii_status": "up", "mac": "02:00:00:00:00:01",
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
                "transmitting": true, "collecting": true, "watchers": [], "lacp": null
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
            engine_drops: Vec::new(),
            carrier_events: Vec::new(),
        };
        render(&status, &stats)
    }

    /// Each series the encoder writes must have a row in
    /// docs/reference/metrics.md with its type and every label it carries.
    #[test]
    fn every_series_is_documented() {
        let text = scrape();
        let mut types = std::collections::HashMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, ty) = rest.split_once(' ').unwrap();
                types.insert(name.to_string(), ty.to_string());
            }
        }
        assert!(types.len() >= 12, "{text}");
        let mut seen = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, labels)) = line.split_once('{') else {
                continue;
            };
            let family = series.strip_suffix("_total").unwrap_or(series);
            let ty = &types[family];
            let row = PAGE
                .lines()
                .find(|l| l.starts_with(&format!("| `{series}` |")))
                .unwrap_or_else(|| panic!("{series} is missing from docs/reference/metrics.md"));
            assert!(
                row.contains(&format!("| {ty} |")),
                "{series}: the page does not say it is a {ty}: {row}"
            );
            for label in labels.split(',').filter_map(|kv| kv.split_once('=')) {
                assert!(
                    row.contains(&format!("`{}`", label.0)),
                    "{series}: label {} is not documented: {row}",
                    label.0
                );
            }
            seen += 1;
        }
        assert_eq!(seen, types.len(), "a family without a series: {text}");
        // And nothing documented that the bond no longer exports.
        for row in PAGE.lines().filter(|l| l.starts_with("| `lagkit_")) {
            let name = row.split('`').nth(1).unwrap();
            assert!(
                text.contains(&format!("\n{name}{{")),
                "{name} is documented but not exported"
            );
        }
    }
}
