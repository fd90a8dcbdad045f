//! `lagkit top`: a live view of the bonds and switches of one or more
//! network namespaces, as `watch cat /proc/net/bonding/bond0` or bmon
//! would be, drawn with ratatui.
//!
//! Each refresh asks every daemon over its control socket (the same
//! requests `lagkit status`/`stats` and `lagkit switch show --json` send),
//! turns the answers into [`View`]s (one row per member or port, rates from
//! the counters' change since the previous refresh) and draws the selected
//! one. Sampling and drawing are apart: [`sample`] is plain data, and
//! [`draw`] renders any [`View`] into any ratatui backend.

use crate::bond_cmd::{sockets_in, Failure};
use clap::Args as ClapArgs;
use lagkit_api::protocol::{request, Request, Response};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Options of `lagkit top`.
#[derive(ClapArgs, Debug)]
#[command(
    after_long_help = "Keys: Tab or → next bond/switch, ← previous, s sort (name, \
     transmit, receive), f freeze (keep the screen, stop refreshing), ? help, q quit.\n\n\
     EXAMPLES:\n  lagkit top\n  lagkit top --netns h1 --netns sw --interval 500ms\n  \
     lagkit top --lab two-hosts"
)]
pub struct Args {
    /// Watch the bonds and switches of this network namespace (as `ip netns` names
    /// it; repeat for more). Default: the current namespace.
    #[arg(long = "netns", value_name = "NAME")]
    netns: Vec<String>,
    /// Watch every namespace of the lab NAME (`lagkit lab up`).
    #[arg(long, value_name = "NAME")]
    lab: Option<String>,
    /// Time between refreshes (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "1s",
          value_parser = lagkit_units::duration_arg)]
    interval: Duration,
}

/// The smallest terminal the view is laid out for.
const MIN: (u16, u16) = (80, 24);
/// Events kept per target.
const EVENTS: usize = 50;

/// A daemon to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Bond,
    Switch,
}

#[derive(Debug, Clone)]
struct Target {
    kind: Kind,
    /// Bond or switch name.
    name: String,
    /// The namespace, as the user named it ("" for the current one).
    ns: String,
    socket: PathBuf,
}

/// One member or port as drawn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowView {
    /// Member or port name.
    pub name: String,
    /// Carrier (or the port's status) as a word.
    pub link: String,
    /// Protocol state (LACP mux / PAgP / Cisco flag), or "-".
    pub state: String,
    /// The partner, if any.
    pub partner: String,
    /// Transmitted bit/s since the last refresh.
    pub tx_bps: f64,
    /// Received bit/s.
    pub rx_bps: f64,
    /// Drops (total).
    pub drops: u64,
    /// Hash buckets this member carries (switch channels), if known.
    pub buckets: String,
}

/// Everything drawn for one target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// "bond bond0 (ns h1)".
    pub title: String,
    /// Lines above the table (mode, policy, aggregate).
    pub header: Vec<String>,
    /// Members or ports.
    pub rows: Vec<RowView>,
    /// Latest state transitions, newest last.
    pub events: Vec<String>,
    /// Why the daemon could not be asked, if it could not.
    pub error: Option<String>,
}

/// The counters a rate is computed from, by row name.
type Counters = BTreeMap<String, (u64, u64)>;

/// What top remembers of one target between refreshes.
#[derive(Debug, Default)]
struct Memory {
    /// Counters at the last refresh, and when.
    counters: Counters,
    at: Option<Instant>,
    /// Each row's state at the last refresh.
    states: BTreeMap<String, String>,
    /// Transitions: when (CLOCK_MONOTONIC ns) and what, oldest first.
    events: VecDeque<(u64, String)>,
}

impl Memory {
    fn note(&mut self, at_ns: u64, what: String) {
        if self.events.iter().any(|(t, w)| *t == at_ns && *w == what) {
            return;
        }
        // Kept in time order: the daemon's events and top's own interleave.
        let pos = self.events.partition_point(|(t, _)| *t <= at_ns);
        self.events.insert(pos, (at_ns, what));
        while self.events.len() > EVENTS {
            self.events.pop_front();
        }
    }
}

/// Sort orders ('s' cycles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Name,
    Tx,
    Rx,
}

/// The namespaces to watch: (label, inode) pairs.
fn namespaces(a: &Args) -> Result<Vec<(String, Option<u64>)>, Failure> {
    let mut names = a.netns.clone();
    if let Some(lab) = &a.lab {
        let st = lagkit_lab::lab::LabState::load(Path::new(lagkit_lab::lab::STATE_ROOT), lab)
            .map_err(|e| Failure::Runtime(e.to_string()))?
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "no lab {lab} is up (nothing in {}); start it with `lagkit lab up`",
                    lagkit_lab::lab::STATE_ROOT
                ))
            })?;
        names.extend(st.namespaces);
    }
    if names.is_empty() {
        return Ok(vec![(String::new(), lagkit_bondcfg::paths::netns_id())]);
    }
    names
        .into_iter()
        .map(|n| {
            use std::os::unix::fs::MetadataExt;
            let path = Path::new("/run/netns").join(&n);
            let ino = std::fs::metadata(&path).map_err(|e| {
                Failure::Usage(format!(
                    "no network namespace {n} ({}: {e}; `ip netns` lists them)",
                    path.display()
                ))
            })?;
            Ok((n, Some(ino.ino())))
        })
        .collect()
}

/// Every bond and switch the namespaces have now.
fn discover(nss: &[(String, Option<u64>)]) -> Vec<Target> {
    let mut out = Vec::new();
    for (label, ino) in nss {
        for (kind, dir) in [
            (Kind::Bond, lagkit_bondcfg::paths::netns_dir(*ino)),
            (Kind::Switch, lagkit_switchd::protocol::socket_dir(*ino)),
        ] {
            for socket in sockets_in(&dir) {
                let name = socket
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push(Target {
                    kind: kind.clone(),
                    name,
                    ns: label.clone(),
                    socket,
                });
            }
        }
    }
    out
}

fn title(t: &Target) -> String {
    let kind = if t.kind == Kind::Bond {
        "bond"
    } else {
        "switch"
    };
    if t.ns.is_empty() {
        format!("{kind} {}", t.name)
    } else {
        format!("{kind} {} (ns {})", t.name, t.ns)
    }
}

/// Asks `t` for its state; `mem` holds what the last refresh saw (and is
/// updated).
fn sample(t: &Target, mem: &mut Memory) -> View {
    let mut v = View {
        title: title(t),
        ..View::default()
    };
    let mut carrier = Vec::new();
    let result = match t.kind {
        Kind::Bond => sample_bond(&t.socket, &mut v, &mut carrier),
        Kind::Switch => sample_switch(&t.socket, &mut v),
    };
    let now_ns = lagkit_dataplane::monotonic_now_ns();
    match result {
        Err(e) => v.error = Some(e),
        Ok(()) => {
            let dt = mem.at.map_or(0.0, |a| a.elapsed().as_secs_f64());
            mem.at = Some(Instant::now());
            to_rates(&mut v.rows, &mut mem.counters, dt);
            for (at, what) in carrier {
                mem.note(at, what);
            }
            for r in &v.rows {
                if let Some(old) = mem.states.insert(r.name.clone(), r.state.clone()) {
                    if old != r.state {
                        mem.note(now_ns, format!("{} {} -> {}", r.name, old, r.state));
                    }
                }
            }
        }
    }
    v.events = mem
        .events
        .iter()
        .map(|(at, what)| {
            let ago = now_ns.saturating_sub(*at) as f64 / 1e9;
            format!("{ago:>7.1} s ago  {what}")
        })
        .collect();
    v
}

/// Turns the byte counters the rows carry in their rate fields into bit/s
/// since `prev` (then replaced by them), `dt` seconds ago. A row seen for
/// the first time, or whose counters went back (a restarted daemon),
/// shows 0.
fn to_rates(rows: &mut [RowView], prev: &mut Counters, dt: f64) {
    let mut now = Counters::new();
    for r in rows {
        let (tx, rx) = (r.tx_bps as u64, r.rx_bps as u64);
        now.insert(r.name.clone(), (tx, rx));
        let rate = |new: u64, old: Option<u64>| match old {
            Some(o) if new >= o && dt > 0.0 => (new - o) as f64 * 8.0 / dt,
            _ => 0.0,
        };
        let old = prev.get(&r.name);
        r.tx_bps = rate(tx, old.map(|o| o.0));
        r.rx_bps = rate(rx, old.map(|o| o.1));
    }
    *prev = now;
}

/// An LACP mux state in 10 columns.
fn mux_word(s: &str) -> String {
    match s {
        "COLLECTING_DISTRIBUTING" => "coll+dist".into(),
        other => other.to_ascii_lowercase().chars().take(10).collect(),
    }
}

/// A port name as IOS abbreviates it (GigabitEthernet1/1: Gi1/1).
fn short_port(name: &str) -> String {
    for (long, short) in [
        ("TenGigabitEthernet", "Te"),
        ("GigabitEthernet", "Gi"),
        ("FastEthernet", "Fa"),
        ("Port-channel", "Po"),
    ] {
        if let Some(rest) = name.strip_prefix(long) {
            return format!("{short}{rest}");
        }
    }
    name.to_string()
}

/// A bond: status and counters. Rows carry byte counters in their rate
/// fields until [`sample`] turns them into rates.
fn sample_bond(sock: &Path, v: &mut View, events: &mut Vec<(u64, String)>) -> Result<(), String> {
    let Response::Status(st) = request(sock, &Request::Status)? else {
        return Err("unexpected answer to status".into());
    };
    let Response::Stats(stats) = request(sock, &Request::Stats)? else {
        return Err("unexpected answer to stats".into());
    };
    v.header.push(st.mode.description().to_string());
    let mut h = format!(
        "policy {}  engine {}  link {}",
        st.xmit_hash_policy, st.engine, st.mii_status
    );
    if let Some(l) = &st.lacp {
        h.push_str(&format!(
            "  LACP {}: {} ports, partner {}",
            l.lacp_rate,
            l.number_of_ports,
            l.partner_mac.as_deref().unwrap_or("-")
        ));
    }
    v.header.push(h);
    let share = |x: Option<f64>| x.map_or("-".to_string(), |s| format!("{:.0}%", s * 100.0));
    v.header.push(format!(
        "first member's share of packets: tx {}  rx {}",
        share(stats.tx_balance),
        share(stats.rx_balance)
    ));
    for m in &st.members {
        let c = stats.members.iter().find(|s| s.name == m.name);
        let (state, partner) = match (&m.lacp, &m.pagp) {
            (Some(l), _) => (
                mux_word(&l.mux_state),
                format!(
                    "{} port {} key {}",
                    l.partner_mac, l.partner_port, l.partner_key
                ),
            ),
            (_, Some(p)) => (
                p.state.to_string(),
                p.partner_device_id.clone().unwrap_or_else(|| "-".into()),
            ),
            _ => (
                if m.transmitting { "in use" } else { "idle" }.to_string(),
                "-".into(),
            ),
        };
        v.rows.push(RowView {
            name: m.name.clone(),
            link: m.mii_status.to_string(),
            state,
            partner,
            tx_bps: c.map_or(0, |c| c.tx_bytes) as f64,
            rx_bps: c.map_or(0, |c| c.rx_bytes) as f64,
            drops: c.map_or(0, |c| c.drops + c.control_queue_full),
            buckets: String::new(),
        });
    }
    // Carrier changes the daemon kept (the caller keeps each once).
    for e in &stats.carrier_events {
        events.push((
            e.seen_ns,
            format!("{} carrier {}", e.member, if e.up { "up" } else { "down" }),
        ));
    }
    Ok(())
}

/// A `show` answer's facts, read as the type the switch writes them as.
fn show<T: serde::de::DeserializeOwned>(
    sock: &Path,
    req: &lagkit_switchd::protocol::Request,
) -> Result<T, String> {
    match lagkit_switchd::protocol::request(sock, req)? {
        lagkit_switchd::protocol::Response::Show { json, .. } => {
            serde_json::from_value(json).map_err(|e| format!("{}: {e}", sock.display()))
        }
        lagkit_switchd::protocol::Response::Error(e) => Err(e),
        _ => Err("unexpected answer".into()),
    }
}

/// A switch: each port's counters, status and, for channel members, the
/// Cisco flag, partner and buckets.
fn sample_switch(sock: &Path, v: &mut View) -> Result<(), String> {
    use lagkit_api::switch::{EtherchannelDetail, InterfacesCounters, InterfacesStatus, Partner};
    use lagkit_switchd::protocol::Request as Q;
    let counters: InterfacesCounters = show(sock, &Q::InterfacesCounters)?;
    let status: InterfacesStatus = show(sock, &Q::InterfacesStatus)?;
    let detail: EtherchannelDetail = show(sock, &Q::EtherchannelDetail { channel: None })?;
    let mut members: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    let mut channels = Vec::new();
    for c in &detail.channels {
        let bundled = (c.members.iter())
            .filter(|m| m.flag == lagkit_api::switch::MemberFlag::Bundled)
            .count();
        channels.push(format!(
            "Po{} {} {}/{} bundled",
            c.channel,
            c.protocol,
            bundled,
            c.members.len()
        ));
        for m in &c.members {
            let partner = match &m.partner {
                // The system id is "priority,MAC": the MAC says who it is.
                Some(Partner::Lacp { system, port, key }) => format!(
                    "{} port {port} key {key}",
                    system.rsplit(',').next().unwrap_or_default()
                ),
                Some(Partner::Pagp { name, port, .. }) => format!(
                    "{} {}",
                    name.as_deref().unwrap_or(""),
                    port.as_deref().unwrap_or("")
                ),
                None => "-".into(),
            };
            let buckets = m
                .buckets
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",");
            members.insert(
                m.port.clone(),
                (format!("Po{} ({})", c.channel, m.flag), partner, buckets),
            );
        }
    }
    v.header.push(if channels.is_empty() {
        "no port-channels".to_string()
    } else {
        channels.join("   ")
    });
    let link: BTreeMap<&str, &str> = status
        .interfaces
        .iter()
        .map(|p| (p.port.as_str(), p.status.as_str()))
        .collect();
    for p in &counters.ports {
        let drops: u64 = p.drops.values().sum::<u64>() + p.rx_kernel_drops;
        let (state, partner, buckets) = members
            .get(&p.port)
            .cloned()
            .unwrap_or_else(|| ("access/trunk".into(), "-".into(), String::new()));
        let link = match link.get(p.port.as_str()).copied() {
            Some("connected") => "up".to_string(),
            Some("notconnect") => "down".to_string(),
            other => other.unwrap_or("").to_string(),
        };
        v.rows.push(RowView {
            link,
            state,
            partner,
            tx_bps: p.tx_bytes as f64,
            rx_bps: p.rx_bytes as f64,
            drops,
            buckets,
            name: short_port(&p.port),
        });
    }
    Ok(())
}

/// A rate for people, in 10 columns at most: "941.2 Mb/s".
fn human(bps: f64) -> String {
    let (v, unit) = if bps >= 1e9 {
        (bps / 1e9, "Gb/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mb/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kb/s")
    } else {
        (bps, "b/s")
    };
    format!("{v:.1} {unit}")
}

/// A bar of `width` cells for `x` of `max`.
fn bar(x: f64, max: f64, width: usize) -> String {
    let n = if max > 0.0 {
        ((x / max) * width as f64).round() as usize
    } else {
        0
    };
    let n = n.min(width);
    format!("{}{}", "█".repeat(n), "·".repeat(width - n))
}

/// Draws `v` (target `i` of `n`) into `f`; with `help`, the key help over
/// it.
pub fn draw(f: &mut Frame, v: &View, i: usize, n: usize, frozen: bool, help: bool) {
    let area = f.area();
    if area.width < MIN.0 || area.height < MIN.1 {
        let msg = format!(
            "lagkit top needs a terminal of at least {}x{}; this one is {}x{}.",
            MIN.0, MIN.1, area.width, area.height
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    let [top, table, events, keys] = Layout::vertical([
        Constraint::Length(2 + v.header.len().max(1) as u16),
        Constraint::Min(6),
        Constraint::Length(7),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut title = format!(" {} [{}/{}] ", v.title, i + 1, n.max(1));
    if frozen {
        title.push_str("FROZEN ");
    }
    let head: Vec<Line> = match &v.error {
        Some(e) => vec![Line::from(format!("cannot ask it: {e}"))],
        None => v.header.iter().map(|h| Line::from(h.as_str())).collect(),
    };
    f.render_widget(
        Paragraph::new(head).block(Block::default().borders(Borders::ALL).title(title)),
        top,
    );
    let max = v
        .rows
        .iter()
        .flat_map(|r| [r.tx_bps, r.rx_bps])
        .fold(0.0, f64::max);
    let bar_w = 6usize;
    let rows: Vec<Row> = v
        .rows
        .iter()
        .map(|r| {
            Row::new(vec![
                Cell::from(r.name.clone()),
                Cell::from(r.link.clone()),
                Cell::from(r.state.clone()),
                Cell::from(format!(
                    "{} {:>10}",
                    bar(r.tx_bps, max, bar_w),
                    human(r.tx_bps)
                )),
                Cell::from(format!(
                    "{} {:>10}",
                    bar(r.rx_bps, max, bar_w),
                    human(r.rx_bps)
                )),
                Cell::from(r.drops.to_string()),
                Cell::from(if r.buckets.is_empty() {
                    r.partner.clone()
                } else {
                    format!("{} b{}", r.partner, r.buckets)
                }),
            ])
        })
        .collect();
    // 75 columns and the partner's rest: an 80-column terminal fits.
    let widths = [
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Length(10),
        Constraint::Length(17),
        Constraint::Length(17),
        Constraint::Length(6),
        Constraint::Min(5),
    ];
    let header = Row::new([
        "member", "link", "state", "transmit", "receive", "drops", "partner",
    ])
    .style(Style::default().add_modifier(Modifier::BOLD));
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(Block::default().borders(Borders::ALL).title(" members ")),
        table,
    );
    let shown = events.height.saturating_sub(2) as usize;
    let ev: Vec<Line> = v
        .events
        .iter()
        .rev()
        .take(shown)
        .rev()
        .map(|e| Line::from(e.as_str()))
        .collect();
    f.render_widget(
        Paragraph::new(ev).block(Block::default().borders(Borders::ALL).title(" events ")),
        events,
    );
    f.render_widget(
        Paragraph::new(Line::from(vec![Span::raw(
            " Tab/→ next  ← previous  s sort  f freeze  ? help  q quit",
        )])),
        keys,
    );
    if help {
        let r = centered(area, 60, 12);
        f.render_widget(ratatui::widgets::Clear, r);
        f.render_widget(
            Paragraph::new(vec![
                Line::from("Tab, →   next bond or switch"),
                Line::from("←        previous"),
                Line::from("s        sort by name, transmit, receive"),
                Line::from("f        freeze: keep this screen, stop refreshing"),
                Line::from("?        this help"),
                Line::from("q, Esc   quit"),
                Line::from(""),
                Line::from("Rates are the counters' change since the last refresh."),
            ])
            .block(Block::default().borders(Borders::ALL).title(" keys ")),
            r,
        );
    }
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn sort_rows(v: &mut View, sort: Sort) {
    match sort {
        Sort::Name => {}
        Sort::Tx => v.rows.sort_by(|a, b| b.tx_bps.total_cmp(&a.tx_bps)),
        Sort::Rx => v.rows.sort_by(|a, b| b.rx_bps.total_cmp(&a.rx_bps)),
    }
}

/// `lagkit top`.
pub fn run(a: Args) -> Result<(), Failure> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(Failure::Usage(
            "lagkit top draws on a terminal; for one-shot output use `lagkit status` / \
             `lagkit stats` or `lagkit switch show ... --json`"
                .into(),
        ));
    }
    if a.interval.is_zero() {
        return Err(Failure::Usage("--interval: must be more than 0".into()));
    }
    let nss = namespaces(&a)?;
    let mut targets = discover(&nss);
    if targets.is_empty() {
        return Err(Failure::Runtime(
            "no bond or switch runs in the namespaces asked (start one with `lagkit up` or \
             `lagkit switch`)"
                .into(),
        ));
    }
    let mut terminal = ratatui::init();
    let result = (|| -> Result<(), Failure> {
        let mut sel = 0usize;
        let (mut frozen, mut help, mut sort) = (false, false, Sort::Name);
        let mut memory: BTreeMap<String, Memory> = BTreeMap::new();
        let mut view = View::default();
        let mut next = Instant::now();
        loop {
            if !frozen && Instant::now() >= next {
                // Daemons come and go: look again each refresh.
                let found = discover(&nss);
                if !found.is_empty() {
                    targets = found;
                }
                sel = sel.min(targets.len() - 1);
                let t = &targets[sel];
                let mem = memory.entry(t.socket.display().to_string()).or_default();
                view = sample(t, mem);
                sort_rows(&mut view, sort);
                next = Instant::now() + a.interval;
            }
            terminal
                .draw(|f| draw(f, &view, sel, targets.len(), frozen, help))
                .map_err(|e| Failure::Runtime(format!("drawing: {e}")))?;
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200));
            if event::poll(wait).map_err(|e| Failure::Runtime(e.to_string()))? {
                if let Event::Key(k) = event::read().map_err(|e| Failure::Runtime(e.to_string()))? {
                    if k.kind != KeyEventKind::Press {
                        continue;
                    }
                    match k.code {
                        KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                        KeyCode::Tab | KeyCode::Right => {
                            sel = (sel + 1) % targets.len();
                            next = Instant::now();
                        }
                        KeyCode::Left | KeyCode::BackTab => {
                            sel = (sel + targets.len() - 1) % targets.len();
                            next = Instant::now();
                        }
                        KeyCode::Char('s') => {
                            sort = match sort {
                                Sort::Name => Sort::Tx,
                                Sort::Tx => Sort::Rx,
                                Sort::Rx => Sort::Name,
                            };
                            sort_rows(&mut view, sort);
                        }
                        KeyCode::Char('f') => frozen = !frozen,
                        KeyCode::Char('?') => help = !help,
                        _ => {}
                    }
                }
            }
        }
    })();
    ratatui::restore();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(v: &View, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, v, 0, 2, false, false)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }

    fn view() -> View {
        View {
            title: "bond bond0 (ns h1)".into(),
            header: vec!["IEEE 802.3ad  policy layer3+4".into()],
            rows: vec![
                RowView {
                    name: "eth1".into(),
                    link: "up".into(),
                    state: mux_word("COLLECTING_DISTRIBUTING"),
                    partner: "02:00:00:00:00:09 port 1 key 1".into(),
                    tx_bps: 941.2e6,
                    rx_bps: 10e3,
                    drops: 3,
                    buckets: String::new(),
                },
                RowView {
                    name: "eth2".into(),
                    link: "down".into(),
                    ..RowView::default()
                },
            ],
            events: vec!["    1.5 s ago  eth2 carrier down".into()],
            error: None,
        }
    }

    #[test]
    fn an_80x24_screen_shows_members_rates_states_and_events() {
        let s = screen(&view(), 80, 24);
        for want in [
            "bond bond0 (ns h1) [1/2]",
            "eth1",
            "eth2",
            "941.2 Mb/s",
            "coll+dist",
            "eth2 carrier down",
            "q quit",
        ] {
            assert!(s.contains(want), "{want:?} missing:\n{s}");
        }
    }

    #[test]
    fn events_are_kept_once_in_time_order_and_bounded() {
        let mut m = Memory::default();
        m.note(20, "b".into());
        m.note(10, "a".into());
        m.note(20, "b".into());
        assert_eq!(
            m.events.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        for i in 0..100 {
            m.note(100 + i, format!("e{i}"));
        }
        assert_eq!(m.events.len(), EVENTS);
        assert_eq!(m.events.back().unwrap().1, "e99");
    }

    #[test]
    fn a_small_terminal_gets_a_message() {
        let s = screen(&view(), 60, 20);
        assert!(s.contains("needs a terminal of at least 80x24"), "{s}");
    }

    #[test]
    fn rates_come_from_the_counters_change() {
        let mut prev = Counters::new();
        prev.insert("eth1".into(), (1_000, 50));
        let mut rows = view().rows;
        rows[0].tx_bps = 126_000.0; // bytes, as sampled
        rows[0].rx_bps = 10.0; // went back: a restarted daemon
        to_rates(&mut rows, &mut prev, 0.5);
        assert_eq!((rows[0].tx_bps, rows[0].rx_bps), (2_000_000.0, 0.0));
        assert_eq!(rows[1].tx_bps, 0.0, "first seen");
        assert_eq!(prev["eth1"], (126_000, 10));
        assert_eq!(human(rows[0].tx_bps), "2.0 Mb/s");
        assert_eq!(short_port("GigabitEthernet1/10"), "Gi1/10");
        assert_eq!(bar(5.0, 10.0, 10), "█████·····");
    }
}
