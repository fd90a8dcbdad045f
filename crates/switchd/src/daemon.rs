//! The switch at run time: one thread that owns every port's packet
//! socket, the forwarding core ([`lagkit_switch::Bridge`]), the LACP core
//! and the link events, and a control server thread of its own.
//!
//! The loop waits in epoll over the ports' sockets, at most until the next
//! LACP deadline and never longer than [`MAX_WAIT`] (which bounds how late
//! a link event, a control request or an aging pass can be). It reads the
//! monotonic clock once per wake-up and passes that time to the cores,
//! which never read a clock. Ready ports are read round-robin, one batch
//! of [`RX_BATCH`] frames from each per round and at most
//! [`ROUNDS_PER_WAKE`] rounds per wake-up, so one port's flood takes no
//! more of the switch's time than any other busy port's traffic; its
//! excess stays in its own socket's buffer, which drops (and the kernel
//! counts) what does not fit. A batch is judged by the bridge frame by
//! frame and written to each egress port with one `sendmmsg` before the
//! next batch is read: nothing is held back between batches.
//!
//! Port-channels: `mode on` bundles a member while its carrier is up (it
//! has no way to notice a link that fails silently; that is the point of
//! the protocols). `mode active|passive` runs LACP on the member with one
//! [`System`] for the switch and the channel number as the key; a member
//! is bundled while LACP says it is distributing. `mode desirable|auto`
//! runs PAgP with one [`pagp::System`] per channel (the switch's device id
//! in each); a member is bundled while PAgP has it in the channel (joined,
//! or attached after the silent wait), and PAgP frames are never forwarded.

use crate::foreign::{Foreign, Protocol};
use crate::frames::{retag, segment_payload, tag_of};
use crate::protocol::{Request, Response};
use lagkit_bond::capture::{CaptureStart, Direction, Taps};
use lagkit_bond::control::{ControlServer, Pending};
use lagkit_dataplane::vnet::VnetRepr;
use lagkit_dataplane::{Device, PacketConfig, PacketSocket, RxBatch};
use lagkit_ios::ChannelMode;
use lagkit_monitor::admin;
use lagkit_monitor::carrier::{CarrierWatcher, LinkState};
use lagkit_proto::lacp::{self, Activity, Event, Rate, System};
use lagkit_proto::pagp;
use lagkit_switch::config::{ChannelSpec, ConfigError, SwitchConfig};
use lagkit_switch::show::MemberFlag;
use lagkit_switch::{Bridge, ChannelId, PortId, Verdict};
use lagkit_wire::MacAddr;
use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The longest the loop sleeps.
pub const MAX_WAIT: Duration = Duration::from_millis(10);
/// How often the MAC address table is aged.
const AGE_EVERY_NS: u64 = 1_000_000_000;
/// How often members are checked for standing alone: their protocols wait
/// seconds before giving a partner up, and the check reads each member's
/// protocol status, which the forwarding loop should not do per wake-up.
const STANDALONE_EVERY_NS: u64 = 100_000_000;
/// Frames read from one port at a time (one `recvmmsg`).
pub const RX_BATCH: usize = 64;
/// Rounds over the ready ports per wake-up, each reading at most one
/// batch from each: a port gets at most this many batches before the
/// control plane (and `epoll`) has its turn.
pub const ROUNDS_PER_WAKE: usize = 4;

/// A frame queued for one egress port: the received packet as it is (its
/// index in the batch), or a copy with its tag rewritten.
enum Queued {
    Same(usize),
    Retagged(Vec<u8>),
}

/// Why a switch could not start.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The configuration cannot be used (exit status 2; nothing touched).
    #[error("{0}")]
    Config(ConfigError),
    /// A port's device could not be opened.
    #[error("port {port} (device {device}): {why}")]
    Port {
        /// The interface name.
        port: String,
        /// The Linux device.
        device: String,
        /// Reason.
        why: String,
    },
    /// Netlink, epoll or the control socket failed.
    #[error("{what}: {why}")]
    System {
        /// What was being done.
        what: String,
        /// Reason.
        why: String,
    },
}

fn sys(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SwitchError {
    let what = what.into();
    move |e| SwitchError::System {
        what,
        why: e.to_string(),
    }
}

/// An LACP port that cannot join a port-channel: its partner never spoke
/// LACP (DEFAULTED, and the switch's no-partner policy lets such a port
/// work alone), or says its port is Individual.
fn lacp_individual(st: &lacp::PortStatus) -> bool {
    st.rx == lacp::RxState::Defaulted
        || !st
            .partner
            .state
            .has(lagkit_wire::lacp::PortState::AGGREGATION)
}

/// One port: the interface the configuration names and the device that
/// carries it.
struct Port {
    name: String,
    device: String,
    sock: PacketSocket,
    mac: MacAddr,
    carrier: bool,
    /// Its channel and mode, if it is a member.
    member: Option<(ChannelId, ChannelMode)>,
    /// Its LACP system (an index into `Switch::lacp`) and port, for
    /// members of an LACP channel.
    lacp: Option<(usize, lacp::PortId)>,
    /// Its PAgP system (an index into `Switch::pagp`) and port, for
    /// members of a PAgP channel.
    pagp: Option<(usize, pagp::PortId)>,
    /// Why it may not bundle (Cisco's `s`).
    suspended: Option<String>,
    /// A protocol the partner speaks that this port does not (`LACP` or
    /// `PAgP` heard on a `mode on` port, say): a misconfiguration, noted
    /// until that protocol falls silent.
    foreign: Foreign,
    /// Since when (the switch's clock, ns) its PAgP has heard nothing, for
    /// stand-alone forwarding.
    quiet_since: Option<u64>,
    /// When (the switch's clock, ns) it last received an LACPDU or Marker
    /// PDU: IOS's `Age` of the partner's information.
    lacp_heard: Option<u64>,
    /// When it last received a PAgP PDU.
    pagp_heard: Option<u64>,
    /// Its flag as last seen and since when (IOS's "Age of the port in
    /// the current state").
    flag: Option<(MemberFlag, u64)>,
}

/// Frames the control plane took and did not use.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct ControlCounters {
    /// LACPDUs and Marker PDUs handed to LACP.
    pub lacp_in: u64,
    /// LACPDUs sent.
    pub lacp_out: u64,
    /// PAgP frames handed to PAgP.
    pub pagp_in: u64,
    /// PAgP frames sent.
    pub pagp_out: u64,
    /// Frames to Cisco's multicast (PAgP, CDP, DTP) on a port that does not
    /// run PAgP.
    pub pagp_ignored: u64,
    /// Slow-protocol frames on a port that does not run LACP.
    pub slow_ignored: u64,
}

/// A running switch.
pub struct Switch {
    name: String,
    bridge: Bridge,
    channels: Vec<ChannelSpec>,
    method: String,
    adaptive: bool,
    ports: Vec<Port>,
    epoll: Epoll,
    batch: RxBatch,
    /// Per egress port, what the batch being forwarded sends there.
    tx: Vec<Vec<Queued>>,
    /// One LACP system per LACP channel (each with the switch's system
    /// id, so a partner sees one switch; each channel's own max-bundle and
    /// min-links).
    lacp: Vec<(ChannelId, System)>,
    /// One PAgP system per PAgP channel.
    pagp: Vec<(ChannelId, pagp::System)>,
    /// Per PAgP system: joins held until the Flushes they cause end.
    pagp_gates: Vec<pagp::FlushGate>,
    carrier: CarrierWatcher,
    /// Removes the socket when dropped.
    control: Option<ControlServer>,
    /// The default socket's directories, to remove when empty at exit.
    run_dirs: Vec<PathBuf>,
    requests: Receiver<Pending<Request, Response>>,
    epoch: std::time::Instant,
    next_age: u64,
    next_standalone: u64,
    counters: ControlCounters,
    /// `show running-config`, written when the switch started.
    running: String,
    /// The configuration as read (speed, duplex: `show interfaces status`).
    ios: lagkit_ios::Config,
    /// `lagkit capture` clients: copies of the frames sent and handled.
    taps: Taps,
}

/// What `lagkit switch` was given: the configuration and the ports.
#[derive(Clone, Debug)]
pub struct Options {
    /// The configuration read (with `from_ios` already).
    pub config: SwitchConfig,
    /// (interface name, device), in port order, as given to `from_ios`.
    pub ports: Vec<(String, String)>,
    /// The control socket; default [`crate::protocol::socket_path`].
    pub socket: Option<PathBuf>,
}

impl Switch {
    /// The name of the switch a configuration describes (`hostname`, or
    /// IOS's default `Switch`).
    pub fn name_of(cfg: &SwitchConfig) -> String {
        cfg.hostname.clone().unwrap_or_else(|| "Switch".to_string())
    }

    /// Opens every port, the link-event socket and the control socket, and
    /// starts LACP on the members of LACP channels. Each port's device is
    /// set administratively up (down for a port configured `shutdown`)
    /// where it is not already; a device that is missing, or that this
    /// process may not change (no CAP_NET_ADMIN), stops the start with
    /// the reason.
    pub fn start(o: Options) -> Result<Switch, SwitchError> {
        let cfg = o.config;
        let name = Switch::name_of(&cfg);
        let running = lagkit_switch::running::running_config(&cfg);
        let suspended: BTreeMap<PortId, String> = cfg
            .suspended
            .iter()
            .map(|s| (s.port, s.why.clone()))
            .collect();
        let mut member: BTreeMap<PortId, (ChannelId, ChannelMode)> = BTreeMap::new();
        for spec in &cfg.channels {
            for &(p, mode) in &spec.members {
                member.insert(p, (spec.id, mode));
            }
        }
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| sys("epoll_create1")(e.into()))?;
        // Subscribed before any port is brought up, so the carrier a port
        // gains after its first reading below arrives as an event.
        let carrier = CarrierWatcher::open().map_err(|e| SwitchError::System {
            what: "netlink link events".into(),
            why: e.to_string(),
        })?;
        let mut ports = Vec::new();
        for (i, (_, device)) in o.ports.iter().enumerate() {
            let p = PortId(i);
            let pname = cfg
                .bridge
                .port(p)
                .map_or_else(|| device.clone(), |c| c.name.clone());
            let perr = |why: String| SwitchError::Port {
                port: pname.clone(),
                device: device.clone(),
                why,
            };
            let sock =
                PacketSocket::open(&PacketConfig::new(device)).map_err(|e| perr(e.to_string()))?;
            let link = sock.link();
            let mac = MacAddr(link.mac().map_err(|e| perr(e.to_string()))?);
            // A port is administratively up unless configured `shutdown`,
            // and so is its device: a Catalyst's port sends light unless
            // shut down, and a partner sees a shut port lose carrier.
            let enabled = cfg.bridge.port(p).is_none_or(|c| c.enabled);
            let is_up = link.flags().map_err(|e| perr(e.to_string()))?.up();
            if is_up != enabled {
                admin::set_admin_up(device, enabled).map_err(|e| perr(e.to_string()))?;
                tracing::info!(port = %pname, device = %device, "device set administratively {}", if enabled { "up" } else { "down: the port is configured shutdown" });
            }
            let carrier = link.carrier().unwrap_or(false);
            let want = cfg.bridge.port(p).map_or(1500, |c| c.mtu);
            if let Ok(mtu) = link.mtu() {
                if mtu < want {
                    tracing::warn!(port = %pname, device = %device, "the device's MTU {mtu} is below the port's {want}: frames between the two never reach the switch (raise it with `ip link set {device} mtu {want}`)");
                }
            }
            epoll
                .add(
                    sock.poll_fd(),
                    EpollEvent::new(EpollFlags::EPOLLIN, i as u64),
                )
                .map_err(|e| sys("epoll_ctl")(e.into()))?;
            ports.push(Port {
                name: pname,
                device: device.clone(),
                sock,
                mac,
                carrier,
                member: member.get(&p).copied(),
                lacp: None,
                pagp: None,
                suspended: suspended.get(&p).cloned(),
                foreign: Foreign::default(),
                quiet_since: None,
                lacp_heard: None,
                pagp_heard: None,
                flag: None,
            });
        }
        let ns = lagkit_bondcfg::paths::netns_id();
        let run_dirs = match o.socket {
            Some(_) => Vec::new(),
            None => vec![
                crate::protocol::socket_dir(ns),
                lagkit_bondcfg::paths::netns_dir(ns),
            ],
        };
        let path = o
            .socket
            .unwrap_or_else(|| crate::protocol::socket_path(ns, &name));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(sys(format!("create {}", dir.display())))?;
        }
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(&path).is_ok() {
                return Err(SwitchError::System {
                    what: format!("control socket {}", path.display()),
                    why: format!("a switch named {name} already runs in this network namespace; give this one another `hostname`"),
                });
            }
            let _ = std::fs::remove_file(&path);
        }
        let listener =
            UnixListener::bind(&path).map_err(sys(format!("bind {}", path.display())))?;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        let (control, requests) =
            ControlServer::start(listener, path.clone(), &name).map_err(sys("control server"))?;
        let mut sw = Switch {
            adaptive: cfg.distribution == lagkit_switch::Distribution::Adaptive,
            name,
            bridge: cfg.bridge,
            channels: cfg.channels,
            method: cfg.method,
            ports,
            epoll,
            batch: RxBatch::new(RX_BATCH),
            tx: Vec::new(),
            lacp: Vec::new(),
            pagp: Vec::new(),
            pagp_gates: Vec::new(),
            carrier,
            control: Some(control),
            run_dirs,
            requests,
            epoch: std::time::Instant::now(),
            next_age: AGE_EVERY_NS,
            next_standalone: 0,
            counters: ControlCounters::default(),
            taps: Taps::default(),
            running,
            ios: cfg.ios,
        };
        sw.tx = (0..sw.ports.len()).map(|_| Vec::new()).collect();
        sw.setup_lacp();
        sw.setup_pagp();
        for i in 0..sw.ports.len() {
            let up = sw.ports[i].carrier;
            sw.apply_carrier(i, up);
        }
        tracing::info!(switch = %sw.name, ports = sw.ports.len(), channels = sw.channels.len(), socket = %path.display(), "switch up");
        Ok(sw)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn t(now: u64) -> lagkit_proto::Instant {
        lagkit_proto::Instant::from_nanos(now)
    }

    /// One LACP system per LACP channel (the switch's system id, the
    /// first port's MAC, in each; the channel's max-bundle and min-links),
    /// one port per member, the channel number as its key.
    fn setup_lacp(&mut self) {
        let mac = self
            .ports
            .first()
            .map_or(MacAddr([2, 0x6c, 0x6b, 0, 0, 1]), |p| p.mac);
        let now = Switch::t(self.now());
        for spec in self.channels.iter().filter(|c| c.mode.protocol() == "lacp") {
            let mut cfg = lacp::SystemConfig::new(&self.name, mac);
            cfg.max_bundle = spec.max_bundle;
            cfg.min_links = spec.min_links;
            let mut sys = System::new(cfg);
            let s = self.lacp.len();
            for &(p, mode) in &spec.members {
                let i = p.0;
                let Some(port) = self.ports.get(i).filter(|p| p.suspended.is_none()) else {
                    continue;
                };
                let mut pc = lacp::PortConfig::new(&port.name, (i + 1) as u16, port.mac);
                pc.activity = if mode == ChannelMode::Active {
                    Activity::Active
                } else {
                    Activity::Passive
                };
                pc.rate = if spec.lacp_fast {
                    Rate::Fast
                } else {
                    Rate::Slow
                };
                pc.key = u16::try_from(spec.id.0).unwrap_or(u16::MAX);
                if let Some(v) = self
                    .interface(i)
                    .and_then(|x| x.lacp_port_priority.as_ref())
                {
                    pc.port_priority = v.value;
                }
                self.ports[i].lacp = Some((s, sys.add_port(pc, now)));
            }
            self.lacp.push((spec.id, sys));
        }
    }

    /// One PAgP system per channel with PAgP members (the switch's device
    /// id, the first port's MAC, in each; the channel number as its group
    /// ifindex), one port per member, in the member's mode.
    fn setup_pagp(&mut self) {
        let device = self
            .ports
            .first()
            .map_or(MacAddr([2, 0x6c, 0x6b, 0, 0, 1]), |p| p.mac);
        let now = Switch::t(self.now());
        let mut ids: Vec<ChannelId> = Vec::new();
        for p in &self.ports {
            if let Some((ch, m)) = p.member {
                if m.protocol() == "pagp" && p.suspended.is_none() && !ids.contains(&ch) {
                    ids.push(ch);
                }
            }
        }
        for ch in ids {
            let mut cfg = pagp::SystemConfig::new(&self.name, device);
            cfg.group_ifindex = ch.0;
            let mut sys = pagp::System::new(cfg);
            let s = self.pagp.len();
            for i in 0..self.ports.len() {
                let p = &self.ports[i];
                let (mode, silent) = match p.member {
                    Some((c, ChannelMode::Desirable { silent })) if c == ch => {
                        (pagp::Mode::Desirable, silent)
                    }
                    Some((c, ChannelMode::Auto { silent })) if c == ch => {
                        (pagp::Mode::Auto, silent)
                    }
                    _ => continue,
                };
                if p.suspended.is_some() {
                    continue;
                }
                let mut pc = pagp::PortConfig::new(&p.name, (i + 1) as u32, p.mac);
                pc.mode = mode;
                pc.silence = if silent {
                    pagp::Silence::Silent
                } else {
                    pagp::Silence::NonSilent
                };
                if let Some(v) = self
                    .interface(i)
                    .and_then(|x| x.pagp_port_priority.as_ref())
                {
                    pc.port_priority = u8::try_from(v.value).unwrap_or(u8::MAX);
                }
                let id = sys.add_port(pc, now);
                self.ports[i].pagp = Some((s, id));
            }
            self.pagp.push((ch, sys));
            self.pagp_gates.push(pagp::FlushGate::new());
        }
    }

    /// Port `i`'s interface as the configuration wrote it.
    fn interface(&self, i: usize) -> Option<&lagkit_ios::Interface> {
        let name = self.bridge.port(PortId(i))?.name.as_str();
        self.ios.interfaces.iter().find(|x| x.name == name)
    }

    /// PAgP's timers, the PDUs it sends and the members it (un)bundles.
    fn pagp_step(&mut self, now: u64) {
        let t = Switch::t(now);
        let mut out = Vec::new();
        let mut changes = Vec::new();
        for (s, (_, sys)) in self.pagp.iter_mut().enumerate() {
            if sys.poll_timeout().is_some_and(|d| d <= t) {
                sys.handle_timeout(t);
            }
            while let Some(tx) = sys.poll_transmit() {
                out.push((s, tx));
            }
            let mut events = Vec::new();
            while let Some((_, ev)) = sys.poll_event() {
                if let pagp::Event::Transition {
                    port,
                    from,
                    to,
                    why,
                } = &ev
                {
                    let name = sys.port_status(*port).map(|p| p.name).unwrap_or_default();
                    tracing::info!(switch = %self.name, port = %name, "PAgP {} -> {} ({why})", from.name(), to.name());
                }
                events.push(ev);
            }
            // A member that joins carries traffic once the Flushes on the
            // members whose flows move to it are answered.
            if let Some(gate) = self.pagp_gates.get_mut(s) {
                changes.extend(gate.apply(&events).into_iter().map(|(p, up)| (s, p, up)));
            }
        }
        for (s, tx) in out {
            if let Some(i) = self.ports.iter().position(|p| p.pagp == Some((s, tx.port))) {
                if self.ports[i]
                    .sock
                    .send(&lagkit_dataplane::device::plain_packet(&tx.frame))
                    .is_ok()
                {
                    self.taps
                        .frame(&self.ports[i].name, Direction::Out, &tx.frame, false);
                    self.counters.pagp_out += 1;
                    self.bridge.count_sent(PortId(i), &tx.frame);
                }
            }
        }
        for (s, port, up) in changes {
            if let Some(i) = self.ports.iter().position(|p| p.pagp == Some((s, port))) {
                self.set_bundled(i, up);
            }
        }
    }

    /// The earliest PAgP deadline of any channel.
    fn pagp_timeout(&self) -> Option<lagkit_proto::Instant> {
        self.pagp.iter().filter_map(|(_, s)| s.poll_timeout()).min()
    }

    /// Runs until `stop` is set.
    pub fn run(&mut self, stop: &std::sync::atomic::AtomicBool) {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.step();
        }
        tracing::info!(switch = %self.name, "switch stopping");
    }

    /// One wake-up: wait, forward what arrived, then the control plane.
    pub fn step(&mut self) {
        let now = self.now();
        let mut wait = MAX_WAIT;
        let lacp = self.lacp.iter().filter_map(|(_, s)| s.poll_timeout()).min();
        for d in [lacp, self.pagp_timeout()].into_iter().flatten() {
            wait = wait.min(Duration::from_nanos(d.as_nanos().saturating_sub(now)));
        }
        let ms = u16::try_from(wait.as_millis()).unwrap_or(10);
        let mut events = [EpollEvent::empty(); 64];
        let n = match self.epoll.wait(&mut events, EpollTimeout::from(ms)) {
            Ok(n) => n,
            Err(Errno::EINTR) => 0,
            Err(e) => {
                tracing::error!("epoll_wait: {e}");
                std::thread::sleep(MAX_WAIT);
                0
            }
        };
        let now = self.now();
        let ready: Vec<usize> = events[..n].iter().map(|ev| ev.data() as usize).collect();
        self.forward_ready(ready, now);
        self.link_events();
        self.lacp_step(now);
        self.pagp_step(now);
        if now >= self.next_standalone {
            self.next_standalone = now + STANDALONE_EVERY_NS;
            self.standalone_step(now);
        }
        if now >= self.next_age {
            self.next_age = now + AGE_EVERY_NS;
            self.bridge.age(now);
        }
        self.serve(now);
    }

    /// Forwards what the ready ports received, round-robin: each round
    /// reads at most one batch ([`RX_BATCH`] frames) from every port that
    /// still has frames, for at most [`ROUNDS_PER_WAKE`] rounds, so a port
    /// that floods gets the same share of the switch's time as any other
    /// port with traffic, and what it sends beyond its share waits in (or
    /// overflows, counted, from) its own socket's buffer.
    fn forward_ready(&mut self, mut ready: Vec<usize>, now: u64) {
        for _ in 0..ROUNDS_PER_WAKE {
            if ready.is_empty() {
                break;
            }
            ready.retain(|&i| self.forward_batch(i, now));
        }
    }

    /// Reads one batch from port `i` and forwards it; whether the port may
    /// have more (the batch came back full).
    fn forward_batch(&mut self, i: usize, now: u64) -> bool {
        let Some(port) = self.ports.get(i) else {
            return false;
        };
        self.batch.clear();
        match port.sock.recv(&mut self.batch) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
        let mut control: Vec<Vec<u8>> = Vec::new();
        for q in &mut self.tx {
            q.clear();
        }
        for k in 0..self.batch.len() {
            let frame = self.batch.frame(k);
            let seg = VnetRepr::parse(&self.batch.vnet(k))
                .ok()
                .and_then(|v| segment_payload(&v, frame));
            let verdict = self.bridge.receive_segmented(PortId(i), frame, seg, now);
            // Control frames are copied where they are handled.
            if self.taps.wants_data() && !matches!(verdict, Verdict::Control) {
                self.taps.frame(&port.name, Direction::In, frame, true);
            }
            match verdict {
                Verdict::Control => control.push(frame.to_vec()),
                Verdict::Forward { egress, .. } => {
                    let tag = tag_of(frame);
                    for e in egress {
                        let Some(q) = self.tx.get_mut(e.port.0) else {
                            continue;
                        };
                        q.push(if e.tag == tag {
                            Queued::Same(k)
                        } else {
                            Queued::Retagged(retag(self.batch.packet(k), e.tag))
                        });
                    }
                }
                Verdict::Drop(_) => {}
            }
        }
        // One sendmmsg per egress port for the whole batch; a port whose
        // queue is full drops (and its socket counts) the rest.
        for (e, q) in self.tx.iter().enumerate() {
            if q.is_empty() {
                continue;
            }
            let packets: Vec<&[u8]> = q
                .iter()
                .map(|x| match x {
                    Queued::Same(k) => self.batch.packet(*k),
                    Queued::Retagged(p) => p.as_slice(),
                })
                .collect();
            if let Some(out) = self.ports.get(e) {
                out.sock.send_batch(&packets);
                if self.taps.wants_data() {
                    for p in &packets {
                        let frame = p.get(lagkit_dataplane::vnet::HEADER_LEN..).unwrap_or(&[]);
                        self.taps.frame(&out.name, Direction::Out, frame, true);
                    }
                }
            }
        }
        let more = self.batch.is_full();
        self.handle_control(i, control, now);
        more
    }

    /// Hands port `i`'s control frames to its protocols.
    fn handle_control(&mut self, i: usize, control: Vec<Vec<u8>>, now: u64) {
        let t = Switch::t(now);
        for f in control {
            self.taps
                .frame(&self.ports[i].name, Direction::In, &f, false);
            let slow = f.get(12..14) == Some(&[0x88, 0x09][..]);
            match (slow, self.ports[i].lacp) {
                (true, Some((s, p))) => {
                    self.counters.lacp_in += 1;
                    self.ports[i].lacp_heard = Some(now);
                    if let Some((_, sys)) = self.lacp.get_mut(s) {
                        sys.handle_frame(p, &f, t);
                    }
                }
                (true, None) => {
                    self.counters.slow_ignored += 1;
                    // A suspended LACP member runs no LACP, but LACP is
                    // what it is configured for: no mismatch.
                    if self.ports[i].member.map(|(_, m)| m.protocol()) != Some("lacp") {
                        self.heard_foreign(i, Protocol::Lacp, now);
                    }
                }
                (false, _) => match self.ports[i].pagp {
                    Some((s, p)) => {
                        self.counters.pagp_in += 1;
                        self.ports[i].pagp_heard = Some(now);
                        if let Some((_, sys)) = self.pagp.get_mut(s) {
                            sys.handle_frame(p, &f, t);
                        }
                    }
                    None => {
                        self.counters.pagp_ignored += 1;
                        let pagp = f.get(14..22).is_some_and(|h| {
                            h[..3] == lagkit_wire::pagp::LLC && h[3..] == lagkit_wire::pagp::SNAP
                        });
                        let runs_pagp =
                            self.ports[i].member.map(|(_, m)| m.protocol()) == Some("pagp");
                        if pagp && !runs_pagp {
                            self.heard_foreign(i, Protocol::Pagp, now);
                        }
                    }
                },
            }
        }
    }

    /// Port `i` heard `protocol`, which it does not run, at `now`.
    fn heard_foreign(&mut self, i: usize, protocol: Protocol, now: u64) {
        let p = &mut self.ports[i];
        if p.foreign.heard(protocol, now) {
            let protocol = protocol.name();
            let mode = p.member.map_or("no channel-group".to_string(), |(c, m)| {
                format!("channel-group {} mode {m}", c.0)
            });
            tracing::warn!(switch = %self.name, port = %p.name, "the partner speaks {protocol} but this port runs {mode}: a mismatch");
        }
    }

    /// Port `i`'s mismatch note ended at `now` (`why`): logged once.
    fn foreign_ended(&self, i: usize, protocol: Protocol, why: &str) {
        let p = &self.ports[i];
        tracing::info!(switch = %self.name, port = %p.name, "the partner no longer speaks {} ({why}): mismatch cleared", protocol.name());
    }

    /// Why port `p` and its partner disagree, if they do (as of the last
    /// wake-up: a note is dropped by `standalone_step` once its protocol
    /// has been silent for its hold time).
    pub(crate) fn mismatch(&self, p: PortId) -> Option<String> {
        let port = self.ports.get(p.0)?;
        let protocol = port.foreign.noted()?;
        let (fix, mode) = match (protocol, port.member) {
            (Protocol::Lacp, Some((c, m))) => (
                format!("channel-group {} mode active|passive", c.0),
                m.to_string(),
            ),
            (Protocol::Pagp, Some((c, m))) => (
                format!("channel-group {} mode desirable|auto", c.0),
                m.to_string(),
            ),
            (_, _) => (
                "a channel-group on this port".to_string(),
                "no channel-group".to_string(),
            ),
        };
        let protocol = protocol.name();
        Some(format!(
            "mismatch: the partner speaks {protocol}, this port runs mode {mode} (configure {fix}, or turn the partner's protocol off)"
        ))
    }

    /// Carrier changes since the last look.
    fn link_events(&mut self) {
        if !self.carrier.wait(0) {
            return;
        }
        let Ok(events) = self.carrier.recv(Duration::ZERO) else {
            return;
        };
        for l in events {
            self.link_event(&l);
        }
    }

    fn link_event(&mut self, l: &LinkState) {
        let Some(i) = self.ports.iter().position(|p| p.device == l.name) else {
            return;
        };
        let up = l.usable();
        if up != self.ports[i].carrier {
            tracing::info!(switch = %self.name, port = %self.ports[i].name, device = %l.name, "link {}", if up { "up" } else { "down" });
            self.apply_carrier(i, up);
        }
    }

    /// Port `i`'s carrier is `up`: `on` members bundle or leave at once,
    /// LACP members tell LACP (port_enabled).
    fn apply_carrier(&mut self, i: usize, up: bool) {
        self.ports[i].carrier = up;
        if !up {
            if let Some(gone) = self.ports[i].foreign.forget() {
                self.foreign_ended(i, gone, "carrier lost");
            }
        }
        let enabled = self.bridge.port(PortId(i)).is_some_and(|c| c.enabled);
        let t = Switch::t(self.now());
        let p = &self.ports[i];
        match p.member {
            Some((_, ChannelMode::On)) => {
                let bundle = up && enabled && p.suspended.is_none();
                self.set_bundled(i, bundle);
            }
            Some(_) => {
                if let Some((s, lp)) = p.lacp {
                    if let Some((_, sys)) = self.lacp.get_mut(s) {
                        sys.set_port_enabled(lp, up && enabled, t);
                    }
                }
                if let Some((s, pp)) = p.pagp {
                    if let Some((_, sys)) = self.pagp.get_mut(s) {
                        sys.set_port_enabled(pp, up && enabled, t);
                    }
                }
            }
            None => {}
        }
    }

    fn set_bundled(&mut self, i: usize, up: bool) {
        let was = self
            .bridge
            .channel(self.ch(i))
            .is_some_and(|c| c.is_bundled(PortId(i)));
        if was != up {
            let moved = self.bridge.set_bundled(PortId(i), up);
            tracing::info!(switch = %self.name, port = %self.ports[i].name, channel = self.ch(i).0, buckets_moved = moved.len(), "member {}", if up { "bundled" } else { "unbundled" });
        }
    }

    /// Members whose protocol heard no partner forward on their own, as a
    /// Catalyst's stand-alone (`I`) ports do: an LACP member once it
    /// defaults (no LACPDU within the timeout), a PAgP member that heard no
    /// PAgP for the silent wait and will not attach without it (non-silent,
    /// or auto). A silent desirable member attaches to the channel instead;
    /// `mode on` members follow carrier. Hearing the protocol, losing
    /// carrier or bundling ends it.
    fn standalone_step(&mut self, now: u64) {
        let wait = pagp::Timers::default().silent_wait.as_nanos() as u64;
        for i in 0..self.ports.len() {
            if let Some(gone) = self.ports[i].foreign.expire(now) {
                self.foreign_ended(i, gone, "none heard for its hold time");
            }
            let p = &self.ports[i];
            let usable = p.carrier
                && p.suspended.is_none()
                && self.bridge.port(PortId(i)).is_some_and(|c| c.enabled)
                && !self
                    .bridge
                    .channel(self.ch(i))
                    .is_some_and(|c| c.is_bundled(PortId(i)));
            let mut quiet_since = None;
            let alone = usable
                && match p.member {
                    Some((
                        _,
                        ChannelMode::Desirable { silent: false } | ChannelMode::Auto { .. },
                    )) => {
                        let st = p
                            .pagp
                            .and_then(|(s, id)| self.pagp.get(s)?.1.port_status(id));
                        if st.is_some_and(|st| st.state == pagp::PortState::Up) {
                            let since = p.quiet_since.unwrap_or(now);
                            quiet_since = Some(since);
                            now.saturating_sub(since) >= wait
                        } else {
                            false
                        }
                    }
                    Some((_, ChannelMode::Active | ChannelMode::Passive)) => p
                        .lacp
                        .and_then(|(s, lp)| self.lacp.get(s)?.1.port_status(lp))
                        .is_some_and(|st| lacp_individual(&st) && st.distributing),
                    _ => false,
                };
            self.ports[i].quiet_since = quiet_since;
            if self.ports[i].member.is_some() {
                let f = self.member_flag(i).0;
                if self.ports[i].flag.map(|(g, _)| g) != Some(f) {
                    self.ports[i].flag = Some((f, now));
                }
            }
            if alone != self.bridge.is_standalone(PortId(i)) {
                self.bridge.set_standalone(PortId(i), alone);
                tracing::info!(switch = %self.name, port = %self.ports[i].name, channel = self.ch(i).0, "member {}", if alone { "stand-alone: no partner heard, forwarding on its own" } else { "no longer stand-alone" });
            }
        }
    }

    fn ch(&self, i: usize) -> ChannelId {
        self.ports[i].member.map_or(ChannelId(0), |(c, _)| c)
    }

    /// LACP's timers, the PDUs it sends and the members it (un)bundles.
    fn lacp_step(&mut self, now: u64) {
        let t = Switch::t(now);
        let mut out = Vec::new();
        let mut changes = Vec::new();
        for (s, (_, sys)) in self.lacp.iter_mut().enumerate() {
            if sys.poll_timeout().is_some_and(|d| d <= t) {
                sys.handle_timeout(t);
            }
            while let Some(tx) = sys.poll_transmit() {
                out.push((s, tx));
            }
            while let Some((_, ev)) = sys.poll_event() {
                match ev {
                    Event::Transition { line, .. } => tracing::info!("{line}"),
                    Event::Distribution {
                        port, distributing, ..
                    } => changes.push((s, port, distributing)),
                    Event::Aggregator { .. } => {}
                }
            }
        }
        for (s, tx) in out {
            if let Some(i) = self.ports.iter().position(|p| p.lacp == Some((s, tx.port))) {
                if self.ports[i]
                    .sock
                    .send(&lagkit_dataplane::device::plain_packet(&tx.frame))
                    .is_ok()
                {
                    self.taps
                        .frame(&self.ports[i].name, Direction::Out, &tx.frame, false);
                    self.counters.lacp_out += 1;
                    self.bridge.count_sent(PortId(i), &tx.frame);
                }
            }
        }
        for (s, lp, distributing) in changes {
            if let Some(i) = self.ports.iter().position(|p| p.lacp == Some((s, lp))) {
                // An individual port distributes on an aggregator of its
                // own; it is no member of the port-channel, it stands
                // alone (`standalone_step`).
                let individual = self.lacp[s]
                    .1
                    .port_status(lp)
                    .is_some_and(|st| lacp_individual(&st));
                self.set_bundled(i, distributing && !individual);
            }
        }
    }

    /// Answers the requests the control server queued.
    fn serve(&mut self, now: u64) {
        self.taps.prune();
        while let Ok(p) = self.requests.try_recv() {
            if matches!(p.req, Request::Capture(_)) {
                self.start_capture(p);
                continue;
            }
            let r = self.answer(&p.req, now);
            p.answer(r);
        }
    }

    /// Starts a capture for `p`: the control frames the switch sends and
    /// handles, and with `data` every frame it reads and forwards.
    fn start_capture(&mut self, p: Pending<Request, Response>) {
        let Request::Capture(req) = &p.req else {
            return;
        };
        match self.taps.open(req) {
            Err(e) => p.answer(Response::Error(e)),
            Ok(stream) => {
                let start = CaptureStart {
                    interfaces: self.ports.iter().map(|p| p.name.clone()).collect(),
                    snaplen: req.snaplen().unwrap_or(lagkit_bond::capture::MAX_SNAPLEN),
                    data: req.data,
                    note: None,
                };
                tracing::info!(switch = %self.name, data = req.data, "capture started");
                p.answer_stream(Response::Capture(start), stream);
            }
        }
    }

    /// A member's flag in `show etherchannel summary`, and why.
    fn member_flag(&self, i: usize) -> (MemberFlag, String) {
        let p = &self.ports[i];
        if let Some(why) = &p.suspended {
            return (MemberFlag::Suspended, why.clone());
        }
        let enabled = self.bridge.port(PortId(i)).is_some_and(|c| c.enabled);
        if !enabled {
            return (MemberFlag::Down, "shutdown".into());
        }
        if !p.carrier {
            return (MemberFlag::Down, "no carrier".into());
        }
        if self
            .bridge
            .channel(self.ch(i))
            .is_some_and(|c| c.is_bundled(PortId(i)))
        {
            return (MemberFlag::Bundled, "bundled".into());
        }
        if self.bridge.is_standalone(PortId(i)) {
            let heard = match p.member.map(|(_, m)| m.protocol()) {
                Some("lacp") => "no LACPDU heard (defaulted) or the partner's port is individual",
                _ => "no PAgP heard",
            };
            return (
                MemberFlag::Individual,
                format!("stand-alone: {heard}; forwards on its own"),
            );
        }
        match p.member.map(|(_, m)| m.protocol()) {
            Some("pagp") => {
                let st = p
                    .pagp
                    .and_then(|(s, id)| self.pagp.get(s)?.1.port_status(id));
                match st {
                    Some(st) if st.state == pagp::PortState::HotStandby => {
                        (MemberFlag::HotStandby, "PAgP hot standby".into())
                    }
                    Some(st) => (
                        MemberFlag::Waiting,
                        match st.partner_device {
                            Some(d) => format!("PAgP {} with partner {d}", st.state.name()),
                            None => format!("PAgP {}: no PAgP heard", st.state.name()),
                        },
                    ),
                    None => (MemberFlag::Suspended, "no PAgP port".into()),
                }
            }
            Some("lacp") => {
                let st = p
                    .lacp
                    .and_then(|(s, lp)| self.lacp.get(s)?.1.port_status(lp));
                let min_links = self
                    .channels
                    .iter()
                    .find(|c| Some(c.id) == p.member.map(|m| m.0))
                    .map_or(0, |c| c.min_links);
                let bundled = self
                    .bridge
                    .channel(self.ch(i))
                    .map_or(0, |c| c.bundled().count());
                match st {
                    Some(st) if st.selected == lacp::Selected::Standby && bundled < min_links => (
                        MemberFlag::Waiting,
                        format!("fewer than min-links {min_links} members can bundle"),
                    ),
                    Some(st) if st.selected == lacp::Selected::Standby => (
                        MemberFlag::HotStandby,
                        "hot standby (beyond lacp max-bundle)".into(),
                    ),
                    Some(st) if st.rx == lacp::RxState::Defaulted => (
                        MemberFlag::Suspended,
                        "partner never spoke LACP (defaulted)".into(),
                    ),
                    Some(st) => (
                        MemberFlag::Waiting,
                        st.not_bundled_reason().unwrap_or_default(),
                    ),
                    None => (MemberFlag::Waiting, String::new()),
                }
            }
            _ => (MemberFlag::Waiting, "waiting".into()),
        }
    }

    fn answer(&self, req: &Request, now: u64) -> Response {
        crate::report::answer(self, req, now)
    }
}

impl Drop for Switch {
    /// Stops the control server (which removes the socket), then the
    /// switch directory and the namespace's directory if they are empty
    /// (they are shared with other switches and bonds).
    fn drop(&mut self) {
        self.control = None;
        for d in &self.run_dirs {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
}

/// What [`crate::report`] reads of a running switch.
impl Switch {
    pub(crate) fn bridge(&self) -> &Bridge {
        &self.bridge
    }
    pub(crate) fn channels(&self) -> &[ChannelSpec] {
        &self.channels
    }
    pub(crate) fn method(&self) -> &str {
        &self.method
    }
    pub(crate) fn adaptive(&self) -> bool {
        self.adaptive
    }
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
    /// The configuration as read.
    pub(crate) fn ios(&self) -> &lagkit_ios::Config {
        &self.ios
    }
    /// Whether port `p` has carrier.
    pub(crate) fn carrier(&self, p: PortId) -> bool {
        self.ports.get(p.0).is_some_and(|x| x.carrier)
    }
    /// `show running-config`.
    pub(crate) fn running_config(&self) -> &str {
        &self.running
    }
    /// Seconds since port `p` last received LACP (or PAgP) at `now`.
    pub(crate) fn heard_age(&self, p: PortId, now: u64, lacp: bool) -> Option<u64> {
        let port = self.ports.get(p.0)?;
        let at = if lacp {
            port.lacp_heard
        } else {
            port.pagp_heard
        }?;
        Some(now.saturating_sub(at) / 1_000_000_000)
    }
    /// Since when (ns) port `p` has had its current flag.
    pub(crate) fn flag_since(&self, p: PortId) -> Option<u64> {
        self.ports.get(p.0)?.flag.map(|(_, t)| t)
    }
    /// The LACP system id the switch sends (one for every channel).
    pub(crate) fn lacp_system(&self) -> lagkit_wire::SystemId {
        match self.lacp.first() {
            Some((_, s)) => s.system_id(),
            None => {
                lacp::SystemConfig::new(
                    &self.name,
                    self.ports
                        .first()
                        .map_or(MacAddr([2, 0x6c, 0x6b, 0, 0, 1]), |p| p.mac),
                )
                .system
            }
        }
    }
    /// The PAgP system of channel `id`'s members, if it runs PAgP.
    pub(crate) fn pagp_system(&self, id: ChannelId) -> Option<&pagp::System> {
        self.pagp.iter().find(|(c, _)| *c == id).map(|(_, s)| s)
    }
    pub(crate) fn control_counters(&self) -> ControlCounters {
        self.counters
    }
    pub(crate) fn flags(&self, spec: &ChannelSpec) -> Vec<(MemberFlag, String)> {
        spec.members
            .iter()
            .map(|(p, _)| self.member_flag(p.0))
            .collect()
    }
    pub(crate) fn device(&self, p: PortId) -> &str {
        self.ports.get(p.0).map_or("", |x| x.device.as_str())
    }
    /// Port `p`'s socket counters, with the frames the kernel dropped for
    /// want of room in its receive buffer collected first.
    pub(crate) fn socket_counters(&self, p: PortId) -> Option<lagkit_dataplane::CounterSnapshot> {
        self.ports.get(p.0).map(|x| {
            x.sock.refresh_counters();
            x.sock.counters().snapshot()
        })
    }
    /// LACP's view of port `p`, if it runs LACP.
    pub(crate) fn lacp_status(&self, p: PortId) -> Option<lacp::PortStatus> {
        let (s, lp) = self.ports.get(p.0)?.lacp?;
        self.lacp.get(s)?.1.port_status(lp)
    }
    /// PAgP's view of port `p`, if it runs PAgP.
    pub(crate) fn pagp_status(&self, p: PortId) -> Option<pagp::PortStatus> {
        let (s, pp) = self.ports.get(p.0)?.pagp?;
        self.pagp.get(s)?.1.port_status(pp)
    }
}
