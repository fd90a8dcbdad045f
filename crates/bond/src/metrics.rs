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
