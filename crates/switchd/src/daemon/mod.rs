//! The switch at run time: the I/O shell around [`lagkit_switch::Core`].
//! One thread owns every port's packet socket, the link-event socket and
//! the loop; a control server thread of its own queues requests. Every
//! decision (forwarding, LACP, PAgP, bundling, stand-alone members, the
//! flags `show` prints) is the core's.
//!
//! The loop waits in epoll over the ports' sockets, at most until the
//! core's next deadline and never longer than [`MAX_WAIT`] (which bounds
//! how late a link event or a control request can be). It reads the
//! monotonic clock once per wake-up and passes that time to the core,
//! which never reads a clock. Ready ports are read round-robin, one batch
//! of [`RX_BATCH`] frames from each per round and at most
//! [`ROUNDS_PER_WAKE`] rounds per wake-up, so one port's flood takes no
//! more of the switch's time than any other busy port's traffic; its
//! excess stays in its own socket's buffer, which drops (and the kernel
//! counts) what does not fit. A batch is judged by the core frame by
//! frame and written to each egress port with one `sendmmsg` before the
//! next batch is read: nothing is held back between batches (`forward`,
//! the userspace forwarding loop).
//!
//! Under the BPF engine ([`crate::kernel`]) the kernel forwards: the
//! ports' sockets carry only control frames, and each wake-up ends by
//! publishing what the core decided to the kernel's program.

mod forward;

use forward::Queued;

use crate::kernel::Kernel;
use lagkit_api::status::EngineKind;
use lagkit_bondcfg::Engine;

use crate::protocol::{Request, Response};
use lagkit_api::capture::{CaptureStart, Direction, Taps};
use lagkit_api::control::{BindError, ControlServer, Pending};
use lagkit_dataplane::{Device, RxBatch};
use lagkit_monitor::carrier::{CarrierWatcher, LinkState};
use lagkit_switch::config::SwitchConfig;
use lagkit_switch::core::Transmit;
use lagkit_switch::{Core, PortId};
use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollTimeout};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The longest the loop sleeps.
pub const MAX_WAIT: Duration = Duration::from_millis(10);
/// Frames read from one port at a time (one `recvmmsg`).
pub const RX_BATCH: usize = 64;
/// Rounds over the ready ports per wake-up, each reading at most one
/// batch from each: a port gets at most this many batches before the
/// control plane (and `epoll`) has its turn.
pub const ROUNDS_PER_WAKE: usize = 4;

use crate::error::sys;
pub use crate::error::SwitchError;
use crate::port::Port;

pub use lagkit_switch::core::ControlCounters;

/// A running switch.
pub struct Switch {
    /// Every decision.
    core: Core,
    /// In port order.
    ports: Vec<Port>,
    epoll: Epoll,
    batch: RxBatch,
    /// Per egress port, what the batch being forwarded sends there.
    tx: Vec<Vec<Queued>>,
    carrier: CarrierWatcher,
    /// Removes the socket when dropped.
    control: Option<ControlServer>,
    /// The default socket's directories, to remove when empty at exit.
    run_dirs: Vec<PathBuf>,
    requests: Receiver<Pending<Request, Response>>,
    epoch: std::time::Instant,
    /// `lagkit capture` clients: copies of the frames sent and handled.
    taps: Taps,
    /// The BPF engine, when the kernel forwards (`None`: this loop does).
    kernel: Option<Kernel>,
    /// Which engine forwards, and why.
    engine: (EngineKind, String),
    /// When the kernel's counters and table were last copied into the core.
    refreshed: u64,
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
    /// Who forwards the data frames: the kernel (`bpf`), this daemon's
    /// loop (`userspace`), or the kernel where it can (`auto`).
    pub engine: Engine,
}

/// How often, at most, the kernel's counters and address table are copied
/// into the core when no request asks for them (the metrics read them).
const REFRESH_EVERY_NS: u64 = 1_000_000_000;

impl Switch {
    /// The name of the switch a configuration describes (`hostname`, or
    /// IOS's default `Switch`).
    pub fn name_of(cfg: &SwitchConfig) -> String {
        Core::name_of(cfg)
    }

    /// Opens every port, the link-event socket and the control socket, and
    /// starts the core (LACP and PAgP on the members of their channels).
    /// Each port's device is set administratively up (down for a port
    /// configured `shutdown`) where it is not already; a device that is
    /// missing, or that this process may not change (no CAP_NET_ADMIN),
    /// stops the start with the reason.
    pub fn start(o: Options) -> Result<Switch, SwitchError> {
        let cfg = o.config;
        let name = Switch::name_of(&cfg);
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| sys("epoll_create1")(e.into()))?;
        // Subscribed before any port is brought up, so the carrier a port
        // gains after its first reading below arrives as an event.
        let carrier = CarrierWatcher::open().map_err(|e| SwitchError::System {
            what: "netlink link events".into(),
            why: e.to_string(),
        })?;
        let mut ports = Vec::new();
        let mut infos = Vec::new();
        for (i, (_, device)) in o.ports.iter().enumerate() {
            let (port, info) = Port::open(PortId(i), device, &cfg, &epoll)?;
            ports.push(port);
            infos.push(info);
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
        let (control, requests) = ControlServer::open(&path, &name).map_err(|e| match e {
            BindError::Live(_) => SwitchError::System {
                what: format!("control socket {}", path.display()),
                why: format!("a switch named {name} already runs in this network namespace; give this one another `hostname`"),
            },
            e => SwitchError::System {
                what: "control socket".into(),
                why: e.to_string(),
            },
        })?;
        let n = ports.len();
        let core = Core::new(cfg, &infos, 0);
        let epoch = std::time::Instant::now();
        let devices: Vec<String> = ports.iter().map(|p| p.device.clone()).collect();
        let (kernel, engine) = choose_engine(o.engine, &core, &devices)?;
        if kernel.is_some() {
            for (i, p) in ports.iter_mut().enumerate() {
                p.receive_control_only(PortId(i), &epoll)
                    .map_err(|why| SwitchError::Port {
                        port: core.port_name(PortId(i)).to_string(),
                        device: p.device.clone(),
                        why,
                    })?;
            }
        }
        let mut sw = Switch {
            core,
            ports,
            epoll,
            batch: RxBatch::new(RX_BATCH),
            tx: (0..n).map(|_| Vec::new()).collect(),
            carrier,
            control: Some(control),
            run_dirs,
            requests,
            epoch,
            taps: Taps::default(),
            kernel,
            engine,
            refreshed: 0,
        };
        sw.send_control();
        tracing::info!(switch = %sw.core.name(), ports = n, channels = sw.core.channels().len(), socket = %path.display(), engine = %sw.engine.0, why = %sw.engine.1, "switch up");
        Ok(sw)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Runs until `stop` is set.
    pub fn run(&mut self, stop: &std::sync::atomic::AtomicBool) {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.step();
        }
        tracing::info!(switch = %self.core.name(), "switch stopping");
    }

    /// One wake-up: wait, forward what arrived, carrier changes, the
    /// core's timers, the control frames it sends, then requests.
    pub fn step(&mut self) {
        let now = self.now();
        let wait = MAX_WAIT.min(Duration::from_nanos(
            self.core.poll_timeout().saturating_sub(now),
        ));
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
        if self.kernel.is_some() {
            let ready: Vec<u64> = events[..n].iter().map(|ev| ev.data()).collect();
            self.control_ready(&ready, now);
        } else {
            let ready: Vec<usize> = events[..n].iter().map(|ev| ev.data() as usize).collect();
            self.forward_ready(ready, now);
        }
        self.link_events(now);
        self.core.handle_timeout(now);
        if let Some(k) = self.kernel.as_mut() {
            // The core's decisions of this wake-up reach the kernel before
            // it sleeps again.
            k.publish(&self.core, now);
            if now.saturating_sub(self.refreshed) >= REFRESH_EVERY_NS {
                self.refresh(now);
            }
        }
        self.send_control();
        self.serve(now);
    }

    /// Copies the kernel's counters and address table into the core.
    fn refresh(&mut self, now: u64) {
        if let Some(k) = self.kernel.as_mut() {
            k.refresh(&mut self.core);
            self.refreshed = now;
        }
    }

    /// Sends the control frames the core queued, each copied to the
    /// captures and counted once sent.
    fn send_control(&mut self) {
        while let Some(tx) = self.core.poll_transmit() {
            self.send_one(&tx);
        }
    }

    fn send_one(&mut self, tx: &Transmit) {
        let Some(port) = self.ports.get(tx.port.0) else {
            return;
        };
        if port
            .sock
            .send(&lagkit_dataplane::device::plain_packet(&tx.frame))
            .is_ok()
        {
            self.taps.frame(
                self.core.port_name(tx.port),
                Direction::Out,
                &tx.frame,
                false,
            );
            self.core.transmitted(tx);
        }
    }

    /// Carrier changes since the last look.
    fn link_events(&mut self, now: u64) {
        if !self.carrier.wait(0) {
            return;
        }
        let Ok(events) = self.carrier.recv(Duration::ZERO) else {
            return;
        };
        for l in events {
            self.link_event(&l, now);
        }
    }

    fn link_event(&mut self, l: &LinkState, now: u64) {
        let Some(i) = self.ports.iter().position(|p| p.device == l.name) else {
            return;
        };
        self.core.handle_carrier(PortId(i), l.usable(), now);
    }

    /// Answers the requests the control server queued.
    fn serve(&mut self, now: u64) {
        self.taps.prune();
        let mut refreshed = false;
        while let Ok(p) = self.requests.try_recv() {
            if !refreshed {
                // What the kernel counted up to this request.
                self.refresh(now);
                refreshed = true;
            }
            if matches!(p.req, Request::Capture(_)) {
                self.start_capture(p);
                continue;
            }
            let r = crate::report::answer(self, &p.req, now);
            p.answer(r);
        }
    }

    /// Starts a capture for `p`: the control frames the switch sends and
    /// handles, and with `data` every frame it reads and forwards.
    fn start_capture(&mut self, p: Pending<Request, Response>) {
        let Request::Capture(req) = &p.req else {
            return;
        };
        if req.data && self.kernel.is_some() {
            p.answer(Response::Error("this switch forwards data frames in the kernel (the BPF engine), where its loop never sees them: capture the control frames (leave out --data), capture the port's device with tcpdump, or run the switch with --engine userspace".into()));
            return;
        }
        match self.taps.open(req) {
            Err(e) => p.answer(Response::Error(e.to_string())),
            Ok(stream) => {
                let start = CaptureStart {
                    interfaces: (0..self.ports.len())
                        .map(|i| self.core.port_name(PortId(i)).to_string())
                        .collect(),
                    snaplen: req.snaplen().unwrap_or(lagkit_api::capture::MAX_SNAPLEN),
                    data: req.data,
                    note: None,
                };
                tracing::info!(switch = %self.core.name(), data = req.data, "capture started");
                p.answer_stream(Response::Capture(start), stream);
            }
        }
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

/// What [`crate::report`] reads of a running switch: the core's view,
/// and the sockets' counters.
impl Switch {
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }
    /// The engine that forwards, why, and the kernel's facts under bpf.
    pub fn engine(&self) -> (EngineKind, &str, Option<crate::kernel::KernelFacts>) {
        (
            self.engine.0,
            &self.engine.1,
            self.kernel.as_ref().map(Kernel::facts),
        )
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
}

/// The engine `want` asks for, for a switch with `core`'s configuration
/// on `devices`: `bpf` that the kernel cannot run, or with storm control
/// configured, is an error; `auto` then picks the userspace engine and
/// says why.
fn choose_engine(
    want: Engine,
    core: &Core,
    devices: &[String],
) -> Result<(Option<Kernel>, (EngineKind, String)), SwitchError> {
    let userspace = |why: String| Ok((None, (EngineKind::Userspace, why)));
    let storm = core.bridge().polices_storms();
    let refuse = |why: String| SwitchError::System {
        what: "the BPF engine".into(),
        why,
    };
    match want {
        Engine::Userspace => userspace("engine = userspace".into()),
        Engine::Bpf if storm => Err(refuse("storm control is configured, which only the userspace engine polices: remove the storm-control lines or run --engine userspace".into())),
        Engine::Bpf => Kernel::open(devices, core, 0)
            .map(|k| (Some(k), (EngineKind::Bpf, "engine = bpf".to_string())))
            .map_err(|e| refuse(format!("{e} (--engine userspace forwards without it)"))),
        Engine::Auto if storm => userspace("auto: storm control is configured, which only the userspace engine polices".into()),
        Engine::Auto => {
            if let Some(off) = lagkit_bpf::jit_off() {
                return userspace(format!("auto: {off}"));
            }
            match Kernel::open(devices, core, 0) {
                Ok(k) => Ok((
                    Some(k),
                    (
                        EngineKind::Bpf,
                        "auto: the kernel runs lagkit's switch program".to_string(),
                    ),
                )),
                Err(e) => userspace(format!("auto: the BPF engine cannot run here: {e}")),
            }
        }
    }
}
