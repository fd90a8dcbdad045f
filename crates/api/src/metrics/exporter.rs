//! The HTTP side of a metrics endpoint, shared by the bond and the switch:
//! a listener thread (hyper's HTTP/1 server on a one-thread tokio runtime)
//! that hands the latest rendered page to every scrape, in the format the
//! scraper asks for, whatever other clients hold connections open.
//!
//! The owner (the bond's control thread, the switch's loop) renders the
//! page at most once a second with `prometheus-client`, which writes
//! OpenMetrics; [`Exporter::publish`] also keeps the same page in the
//! Prometheus text format (0.0.4), which `promtool check metrics`, `curl`
//! users and older scrapers read. A scrape whose `Accept` header names
//! `application/openmetrics-text` (Prometheus sends it) gets OpenMetrics,
//! any other the text format. The thread never waits on the owner, and the
//! owner never waits on a scraper.

use bytes::Bytes;
use http_body_util::Full;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A series' labels, in order.
pub type Labels = Vec<(String, String)>;

/// The content type of an OpenMetrics page.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The content type of a page in the Prometheus text format.
pub const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The address a bare port means: loopback, so nothing outside the host
/// (or the network namespace) can scrape unless configured to.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Labels from `(name, value)` pairs.
pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `KernelNoMember` → `kernel_no_member`: a Rust variant name as a label
/// value.
pub fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// One page being built: a registry under the `lagkit` prefix, and one
/// for series that keep another exporter's names (node_exporter's bonding
/// series), so that its dashboards and alerts read them unchanged.
pub struct Page {
    reg: Registry,
    foreign: Registry,
}

impl Default for Page {
    fn default() -> Self {
        Page::new()
    }
}

impl Page {
    /// An empty page.
    pub fn new() -> Page {
        Page {
            reg: Registry::with_prefix("lagkit"),
            foreign: Registry::default(),
        }
    }

    /// A counter family `lagkit_NAME_total` (give `NAME` without `_total`).
    pub fn counter(&mut self, name: &str, help: &str) -> Family<Labels, Counter> {
        let f = Family::<Labels, Counter>::default();
        self.reg.register(name, help, f.clone());
        f
    }

    /// A gauge family `lagkit_NAME`.
    pub fn gauge(&mut self, name: &str, help: &str) -> Family<Labels, Gauge> {
        let f = Family::<Labels, Gauge>::default();
        self.reg.register(name, help, f.clone());
        f
    }

    /// A gauge family named `name` exactly, without the `lagkit` prefix:
    /// another exporter's series, under its own name and help text (give
    /// the help without its final period; the encoder adds one).
    pub fn foreign_gauge(&mut self, name: &str, help: &str) -> Family<Labels, Gauge> {
        let f = Family::<Labels, Gauge>::default();
        self.foreign.register(name, help, f.clone());
        f
    }

    /// The page in OpenMetrics, each family's series sorted (the
    /// registry keeps them in hash order), so two scrapes read alike.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.foreign);
        // One `# EOF`, at the end of the whole page.
        if let Some(body) = out.strip_suffix("# EOF\n") {
            out.truncate(body.len());
        }
        let _ = encode(&mut out, &self.reg);
        sort_series(&out)
    }
}

/// `page` with the sample lines under each `# ...` header block sorted.
fn sort_series(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut samples: Vec<&str> = Vec::new();
    let flush = |samples: &mut Vec<&str>, out: &mut String| {
        samples.sort_unstable();
        for l in samples.drain(..) {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in page.lines() {
        if line.starts_with('#') {
            flush(&mut samples, &mut out);
            out.push_str(line);
            out.push('\n');
        } else {
            samples.push(line);
        }
    }
    flush(&mut samples, &mut out);
    out
}

/// The same page in the Prometheus text format (0.0.4): a counter family
/// is named with its `_total` (OpenMetrics names the family without it),
/// and the `# UNIT` and `# EOF` lines, which that format lacks, go. The
/// pages here hold counters and gauges only.
pub fn to_text_format(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 64);
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (*p, rest)));
        match meta {
            Some((p, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                out.push_str(p);
                out.push_str(name);
                if counters.contains(name) {
                    out.push_str("_total");
                }
                if !tail.is_empty() || rest.contains(' ') {
                    out.push(' ');
                    out.push_str(tail);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The page in both formats (each a cheap, shared copy per scrape).
#[derive(Default)]
struct Texts {
    openmetrics: Bytes,
    text: Bytes,
}

/// Connections served at once; one more is closed as it arrives (counted
/// in [`Exporter::refused`]). A scraper needs one; the bound is far above
/// what any number of Prometheus servers keep open, and far below what
/// the process may hold (its descriptor limit is raised to fit).
pub const MAX_CONNECTIONS: usize = 4096;
/// How long a connection may take to send a request's head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a connection may stay open at all (a scraper that keeps it
/// alive between scrapes connects again after this).
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// A metrics endpoint: the listener thread and the page it serves. The
/// thread stops, and the address is free again, when this is dropped.
///
/// The thread runs hyper's HTTP/1 server on a single-threaded tokio
/// runtime: each connection is a task, so idle or slow clients (however
/// many, up to [`MAX_CONNECTIONS`]) cost memory, not the scrapes of
/// others; each has [`HEAD_TIMEOUT`] to ask and lives at most
/// [`CONNECTION_LIFETIME`].
pub struct Exporter {
    texts: Arc<Mutex<Texts>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
    refused: Arc<AtomicU64>,
    /// When the page was last rendered (ns of the owner's clock; 0 = never).
    last: u64,
}

impl Exporter {
    /// Listens on `addr` (a port of 0 takes a free one: see
    /// [`Exporter::local_addr`]).
    pub fn start(addr: SocketAddr) -> std::io::Result<Exporter> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        raise_descriptor_limit(MAX_CONNECTIONS as u64 + 1024);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let texts = Arc::new(Mutex::new(Texts::default()));
        let refused = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (t, r) = (texts.clone(), refused.clone());
        let thread = std::thread::Builder::new()
            .name("lagkit-metrics".into())
            .spawn(move || runtime.block_on(serve(listener, t, r, stopped)))?;
        Ok(Exporter {
            texts,
            stop: Some(stop),
            thread: Some(thread),
            addr,
            refused,
            last: 0,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections closed on arrival because [`MAX_CONNECTIONS`] were open.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Whether the page should be rendered again at `now` (at most once a
    /// second).
    pub fn due(&self, now: u64) -> bool {
        self.last == 0 || now.saturating_sub(self.last) >= 1_000_000_000
    }

    /// Serves `openmetrics` (and its text-format twin) from now on.
    pub fn publish(&mut self, openmetrics: String, now: u64) {
        let text = to_text_format(&openmetrics);
        if let Ok(mut t) = self.texts.lock() {
            *t = Texts {
                openmetrics: Bytes::from(openmetrics),
                text: Bytes::from(text),
            };
        }
        self.last = now.max(1);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Raises this process's soft limit of open descriptors towards `want`
/// (never above the hard limit): each held connection is one.
fn raise_descriptor_limit(want: u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let target = want.min(hard);
        if soft < target {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, target, hard);
        }
    }
}

/// Accepts connections until `stopped`, each served on a task of its own.
async fn serve(
    listener: TcpListener,
    texts: Arc<Mutex<Texts>>,
    refused: Arc<AtomicU64>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors, say: wait a little rather than spin.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    refused.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let texts = texts.clone();
                tasks.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let texts = texts.clone();
                        async move { Ok::<_, std::convert::Infallible>(answer(&req, &texts)) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(HEAD_TIMEOUT)
                        .title_case_headers(true)
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                    let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
                    drop(slot);
                });
            }
        }
    }
    tasks.shutdown().await;
}

/// The page, in the format the request's `Accept` header asks for (no
/// body for `HEAD`, which hyper leaves out).
fn answer<B>(req: &hyper::Request<B>, texts: &Mutex<Texts>) -> hyper::Response<Full<Bytes>> {
    let accept = (req.headers().get_all(hyper::header::ACCEPT).iter())
        .filter_map(|v| v.to_str().ok())
        .map(|v| format!("Accept: {v}\r\n"))
        .collect::<String>();
    let om = wants_openmetrics(&accept);
    let body = texts
        .lock()
        .map(|t| {
            if om {
                t.openmetrics.clone()
            } else {
                t.text.clone()
            }
        })
        .unwrap_or_default();
    let mut r = hyper::Response::new(Full::new(body));
    let ty = if om { OPENMETRICS } else { TEXT };
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(ty),
    );
    r
}

/// Whether a request's `Accept` header asks for OpenMetrics.
fn wants_openmetrics(head: &str) -> bool {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .any(|(_, v)| {
            v.split(',').any(|m| {
                let mut parts = m.split(';');
                let ty = parts.next().unwrap_or("").trim();
                let q_zero = parts.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.parse::<f32>().ok())
                        == Some(0.0)
                });
                ty.eq_ignore_ascii_case("application/openmetrics-text") && !q_zero
            })
        })
}

/// What docs/reference/metrics.md (`doc`) lacks for an OpenMetrics
/// `page`: each series needs a row `| \`NAME\` | TYPE | ...` naming each of
/// its labels in backquotes; and each documented row whose name `owns`
/// claims must appear in the page. Empty when they agree.
pub fn documentation_gaps(page: &str, doc: &str, owns: impl Fn(&str) -> bool) -> Vec<String> {
    let mut gaps = Vec::new();
    let mut types = std::collections::HashMap::new();
    for rest in page.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        if let Some((name, ty)) = rest.split_once(' ') {
            types.insert(name, ty);
        }
    }
    let mut exported = std::collections::BTreeSet::new();
    for line in page.lines().filter(|l| !l.starts_with('#')) {
        let end = line.find(['{', ' ']).unwrap_or(line.len());
        let series = &line[..end];
        let family = series.strip_suffix("_total").unwrap_or(series);
        let Some(ty) = types.get(family).or_else(|| types.get(series)) else {
            gaps.push(format!("{series}: no # TYPE line"));
            continue;
        };
        exported.insert(series);
        let Some(row) = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{series}` |")))
        else {
            gaps.push(format!(
                "{series} is missing from docs/reference/metrics.md"
            ));
            continue;
        };
        if !row.contains(&format!("| {ty} |")) {
            gaps.push(format!(
                "{series}: the page does not say it is a {ty}: {row}"
            ));
        }
        let label_text = line[end..]
            .strip_prefix('{')
            .and_then(|l| l.rsplit_once('}'))
            .map_or("", |(l, _)| l);
        for (key, _) in label_text.split("\",").filter_map(|kv| kv.split_once('=')) {
            if !row.contains(&format!("`{}`", key.trim_start_matches(','))) {
                gaps.push(format!("{series}: label {key} is not documented: {row}"));
            }
        }
    }
    for row in doc.lines().filter(|l| l.starts_with("| `lagkit_")) {
        let name = row.split('`').nth(1).unwrap_or("");
        if owns(name) && !exported.contains(name) {
            gaps.push(format!("{name} is documented but not exported"));
        }
    }
    gaps.sort();
    gaps.dedup();
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_get_their_total_in_the_text_format() {
        let mut p = Page::new();
        let c = p.counter("member_tx_bytes", "Bytes sent");
        c.get_or_create(&labels(&[("bond", "b0")])).inc_by(7);
        let g = p.gauge("member_link_up", "1 with carrier");
        g.get_or_create(&labels(&[("bond", "b0")])).set(1);
        let om = p.encode();
        assert!(
            om.contains("# TYPE lagkit_member_tx_bytes counter\n"),
            "{om}"
        );
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert_eq!(
            to_text_format(&om),
            "# HELP lagkit_member_tx_bytes_total Bytes sent.\n\
             # TYPE lagkit_member_tx_bytes_total counter\n\
             lagkit_member_tx_bytes_total{bond=\"b0\"} 7\n\
             # HELP lagkit_member_link_up 1 with carrier.\n\
             # TYPE lagkit_member_link_up gauge\n\
             lagkit_member_link_up{bond=\"b0\"} 1\n"
        );
    }

    #[test]
    fn series_are_sorted_within_their_family() {
        let mut p = Page::new();
        let g = p.gauge("x", "X");
        for m in ["c", "a", "b"] {
            g.get_or_create(&labels(&[("m", m)])).set(1);
        }
        let c = p.counter("y", "Y");
        c.get_or_create(&labels(&[("m", "b")])).inc();
        c.get_or_create(&labels(&[("m", "a")])).inc();
        assert_eq!(
            p.encode(),
            "# HELP lagkit_x X.\n# TYPE lagkit_x gauge\n\
             lagkit_x{m=\"a\"} 1\nlagkit_x{m=\"b\"} 1\nlagkit_x{m=\"c\"} 1\n\
             # HELP lagkit_y Y.\n# TYPE lagkit_y counter\n\
             lagkit_y_total{m=\"a\"} 1\nlagkit_y_total{m=\"b\"} 1\n# EOF\n"
        );
    }

    #[test]
    fn unit_lines_go_and_label_values_stay_escaped() {
        let om = "# HELP lagkit_x_seconds X.\n# TYPE lagkit_x_seconds gauge\n# UNIT lagkit_x_seconds seconds\nlagkit_x_seconds{a=\"q\\\"t\"} 2\n# EOF\n";
        assert_eq!(
            to_text_format(om),
            "# HELP lagkit_x_seconds X.\n# TYPE lagkit_x_seconds gauge\nlagkit_x_seconds{a=\"q\\\"t\"} 2\n"
        );
    }

    #[test]
    fn accept_header_chooses_the_format() {
        let prom = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n\r\n";
        assert!(wants_openmetrics(prom));
        assert!(!wants_openmetrics("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"));
        assert!(!wants_openmetrics("GET / HTTP/1.0\r\n\r\n"));
        assert!(!wants_openmetrics(
            "GET / HTTP/1.1\r\naccept: application/openmetrics-text;q=0\r\n\r\n"
        ));
    }

    #[test]
    fn variant_names_become_snake_case() {
        assert_eq!(snake("KernelNoMember"), "kernel_no_member");
        assert_eq!(snake("Giant"), "giant");
        assert_eq!(snake("TxFull"), "tx_full");
    }

    fn get(addr: SocketAddr, accept: Option<&str>) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{accept}\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    /// A thousand clients that connect and send nothing (or half a
    /// request) hold no scrape up: each is a task, not the server's turn.
    #[test]
    fn a_scrape_is_answered_while_a_thousand_connections_are_held() {
        raise_descriptor_limit(4096);
        let mut e = Exporter::start(loopback(0)).unwrap();
        let addr = e.local_addr();
        let mut p = Page::new();
        p.gauge("up", "Up")
            .get_or_create(&labels(&[("bond", "b")]))
            .set(1);
        e.publish(p.encode(), 1);
        let held: Vec<std::net::TcpStream> = (0..1000)
            .map(|i| {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                if i % 2 == 0 {
                    use std::io::Write;
                    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHo");
                }
                s
            })
            .collect();
        let t = std::time::Instant::now();
        let page = get(addr, None);
        assert!(page.ends_with("lagkit_up{bond=\"b\"} 1\n"), "{page}");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!(e.refused(), 0);
        drop(held);
    }

    #[test]
    fn serves_both_formats_and_frees_the_port_when_dropped() {
        let mut e = Exporter::start(loopback(0)).unwrap();
        let addr = e.local_addr();
        let mut p = Page::new();
        p.counter("plans_published", "Plans")
            .get_or_create(&labels(&[("bond", "b")]))
            .inc();
        e.publish(p.encode(), 5);
        assert!(!e.due(5) && e.due(1_000_000_005));
        let text = get(addr, None);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(
            text.contains(&format!("Content-Type: {TEXT}\r\n")),
            "{text}"
        );
        assert!(
            text.ends_with("lagkit_plans_published_total{bond=\"b\"} 1\n"),
            "{text}"
        );
        let om = get(addr, Some("application/openmetrics-text; version=1.0.0"));
        assert!(
            om.contains(&format!("Content-Type: {OPENMETRICS}\r\n")),
            "{om}"
        );
        assert!(om.ends_with("# EOF\n"), "{om}");
        drop(e);
        // The thread is gone with the listener: the address binds again.
        let again = Exporter::start(addr).expect("the address is free after drop");
        assert_eq!(again.local_addr(), addr);
    }
}
