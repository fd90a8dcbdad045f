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
use crate::state;
use lagkit_api::status::EngineKind;
use lagkit_bondcfg::Engine;

use crate::protocol::{Request, Response};
use lagkit_api::capture::{CaptureStart, Direction, Taps};
use lagkit_api::control::{BindError, ControlServer, Pending};
use lagkit_dataplane::{handoff, Device, RxBatch};
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
    /// A killed (or handed-over) switch's pinned programs, forwarding
    /// until this one's have their first plan (then released).
    adopted: Option<lagkit_bpf::Adopted>,
    /// Where this switch's state is kept while its ports are pinned (the
    /// file, and the ports' partners last written there).
    record: Option<(PathBuf, Vec<lagkit_api::resume::PortRecord>)>,
    /// When the record was last brought up to date.
    recorded: u64,
    /// The switch's network namespace (for its state and pin paths).
    ns: Option<u64>,
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
        let owner = handoff_owner(&name);
        let mut handed = 0;
        for (i, (_, device)) in o.ports.iter().enumerate() {
            let fd = handoff::take(&handoff::name(&owner, "sock", Some(device)));
            handed += usize::from(fd.is_some());
            let (port, info) = Port::open(PortId(i), device, &cfg, &epoll, fd)?;
            ports.push(port);
            infos.push(info);
        }
        let closed = handoff::drop_owner(&owner);
        if !closed.is_empty() {
            tracing::warn!(switch = %name, descriptors = ?closed, "closed the sockets a previous switch handed over for devices this one does not have");
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
        let devices: Vec<String> = ports.iter().map(|p| p.device.clone()).collect();
        // The control socket is ours: no other switch of this name runs
        // here, so what a previous one left is for this start to take.
        let (adopted, resume) = adopt(ns, &name, &devices, o.engine, handed);
        let core = Core::resume(cfg, &infos, 0, &resume);
        let epoch = std::time::Instant::now();
        let (mut kernel, engine) = choose_engine(o.engine, &core, &devices)?;
        let adopted = match (adopted, &kernel) {
            (Some(a), Some(_)) => Some(a),
            (Some(a), None) => {
                // This loop forwards now: the old programs must go.
                a.release();
                let _ = std::fs::remove_file(state::path(ns, &name));
                None
            }
            (None, _) => None,
        };
        let record = kernel.as_mut().and_then(|k| pin(k, ns, &name));
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
            adopted,
            record,
            recorded: 0,
            ns,
        };
        sw.write_record(true);
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
        self.take_over();
        if now.saturating_sub(self.recorded) >= RECORD_EVERY_NS {
            self.recorded = now;
            self.write_record(false);
        }
        self.send_control();
        self.serve(now);
    }

    /// Once this switch's programs have their plan: releases the adopted
    /// ones (until now they ran first and forwarded every frame).
    fn take_over(&mut self) {
        let (Some(a), Some(k)) = (self.adopted.take(), self.kernel.as_ref()) else {
            return;
        };
        let n = a.release();
        tracing::info!(switch = %self.core.name(), links = n, ports = k.ifindex().len(), "took over the ports from the previous switch's programs");
    }

    /// Brings the state file up to date (`force`: write it even if the
    /// ports' partners did not change), while the ports are pinned.
    fn write_record(&mut self, force: bool) {
        let Some((path, last)) = self.record.as_mut() else {
            return;
        };
        let ports = self.core.records();
        if !force && ports == *last {
            return;
        }
        let ifindex = (self.kernel.as_ref()).map_or_else(Vec::new, |k| k.ifindex().to_vec());
        let st = state_of(&self.core, &self.ports, ifindex, false);
        match state::write(path, &st) {
            Ok(()) => *last = ports,
            Err(e) => {
                tracing::warn!(switch = %self.core.name(), file = %path.display(), "cannot keep the switch's state ({e}): a switch started after this one dies renegotiates its channels")
            }
        }
    }

    /// Exits leaving the ports forwarding in the kernel with the last
    /// plan, for the next switch (of this build or another) to adopt: the
    /// state file says which partners to resume from. A switch whose
    /// ports are not pinned (the userspace engine, or no bpffs) stops as
    /// a drop does. Whether the ports were left forwarding.
    pub fn handoff(mut self) -> bool {
        if self.kernel.is_none() {
            return self.hand_over();
        }
        if self.record.is_none() {
            tracing::warn!(switch = %self.core.name(), "handoff asked, but the ports are not pinned: stopping");
            return false;
        }
        self.write_record(true);
        self.record = None;
        if let Some(k) = self.kernel.take() {
            k.leave_pinned();
        }
        tracing::info!(switch = %self.core.name(), "handed off: the kernel forwards with the last plan until a new lagkit switch adopts it");
        true
    }

    /// The userspace engine's handoff: each port's socket goes to the next
    /// switch as a descriptor ([`lagkit_dataplane::handoff`]; the process
    /// passes them on), frames queueing in them meanwhile, and the state
    /// file says which partner each port resumes from. Whether it could.
    fn hand_over(&mut self) -> bool {
        let name = self.core.name().to_string();
        let owner = handoff_owner(&name);
        let ifindex = self.ports.iter().map(|p| p.sock.ifindex()).collect();
        let st = state_of(&self.core, &self.ports, ifindex, true);
        let mut fds = Vec::new();
        for p in &self.ports {
            match p.sock.try_clone_fd() {
                Ok(fd) => fds.push((handoff::name(&owner, "sock", Some(&p.device)), fd)),
                Err(e) => {
                    tracing::warn!(switch = %name, device = %p.device, "cannot hand the port's socket over ({e}): stopping");
                    return false;
                }
            }
        }
        let path = state::path(self.ns, &name);
        if let Err(e) = state::write(&path, &st) {
            tracing::warn!(switch = %name, file = %path.display(), "cannot write the switch's state ({e}): stopping");
            return false;
        }
        for (n, fd) in fds {
            handoff::give(n, fd);
        }
        tracing::info!(switch = %name, ports = self.ports.len(), "handed off: the ports' sockets go to the next lagkit switch");
        true
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
        // A clean stop: the kernel's programs go (unpinned with the
        // kernel path), and so does what would have told a next switch to
        // adopt them.
        if let Some((path, _)) = self.record.take() {
            let _ = std::fs::remove_file(path);
            self.kernel = None;
            if let Ok(dir) = state::pin_dir(self.ns, self.core.name()) {
                let _ = std::fs::remove_dir(&dir);
                if let Some(parent) = dir.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
        }
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

/// How often, at most, the state file is brought up to date.
const RECORD_EVERY_NS: u64 = 200_000_000;

/// What a start of switch `name` on `devices` takes over from a previous
/// switch of that name that left its ports forwarding: its pinned
/// programs and each port's recorded partner, when the same devices are
/// still there and the engine may be BPF. Otherwise what it left is
/// detached and forgotten, and the start begins afresh.
fn adopt(
    ns: Option<u64>,
    name: &str,
    devices: &[String],
    want: Engine,
    handed: usize,
) -> (
    Option<lagkit_bpf::Adopted>,
    Vec<lagkit_api::resume::PortRecord>,
) {
    let afresh = |why: Option<String>| {
        let n = state::release(ns, name);
        if let Some(why) = why {
            tracing::warn!(switch = %name, "not adopting the ports a previous switch left forwarding ({why}); starting afresh");
        } else if n > 0 {
            tracing::warn!(switch = %name, links = n, "detached the programs a previous switch left pinned");
        }
        (None, Vec::new())
    };
    let Some(left) = state::read(&state::path(ns, name)) else {
        return afresh(None);
    };
    if left.userspace {
        // A userspace engine's handoff: its sockets are this start's
        // ports already; the partners resume from the record, which is
        // for this start only.
        let fits = state::fits(&left, devices).and_then(|()| match handed == devices.len() {
            true => Ok(()),
            false => Err(format!(
                "{handed} of its {} ports' sockets were handed over (a killed userspace switch takes them with it)",
                devices.len()
            )),
        });
        let _ = std::fs::remove_file(state::path(ns, name));
        return match fits {
            Ok(()) => {
                tracing::info!(switch = %name, pid = left.pid, ports = handed, "adopting the port sockets a previous lagkit switch handed over");
                (None, left.ports)
            }
            Err(why) => afresh(Some(why)),
        };
    }
    if want == Engine::Userspace {
        return afresh(Some("engine = userspace".into()));
    }
    if let Err(why) = state::fits(&left, devices) {
        return afresh(Some(why));
    }
    let dir = match state::pin_dir(ns, name) {
        Ok(d) => d,
        Err(e) => return afresh(Some(e.to_string())),
    };
    match lagkit_bpf::Adopted::open(&dir) {
        Ok(Some(a)) if a.links() > 0 => {
            tracing::info!(switch = %name, pid = left.pid, links = a.links(), "adopting the ports a previous lagkit switch left forwarding");
            (Some(a), left.ports)
        }
        Ok(_) => afresh(Some(format!("no pinned links in {}", dir.display()))),
        Err(e) => afresh(Some(format!("its pins: {e}"))),
    }
}

/// What the next switch needs of this one: its ports' devices (of
/// interface indexes `ifindex`), each port's partner, and whether the
/// userspace engine handed its sockets over.
fn state_of(core: &Core, ports: &[Port], ifindex: Vec<u32>, userspace: bool) -> state::SwitchState {
    state::SwitchState {
        switch: core.name().to_string(),
        pid: std::process::id(),
        devices: ports.iter().map(|p| p.device.clone()).collect(),
        ifindex,
        ports: core.records(),
        userspace,
    }
}

/// The owner of switch `name`'s handed-over descriptors (beside bonds').
fn handoff_owner(name: &str) -> String {
    format!("switch-{name}")
}

/// Pins `k`'s links for switch `name` (a directory of this daemon's
/// own): from then on the ports keep forwarding if it dies. The state
/// file to keep current, or `None` (logged) when they cannot be pinned.
fn pin(
    k: &mut Kernel,
    ns: Option<u64>,
    name: &str,
) -> Option<(PathBuf, Vec<lagkit_api::resume::PortRecord>)> {
    let pinned = state::pin_dir(ns, name)
        .map_err(|e| e.to_string())
        .and_then(|d| {
            k.pin(&d.join(std::process::id().to_string()))
                .map_err(|e| e.to_string())
        });
    if let Err(e) = pinned {
        tracing::warn!(switch = %name, "ports not pinned: {e}; they stop forwarding whenever this switch stops");
        return None;
    }
    let path = state::path(ns, name);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    Some((path, Vec::new()))
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
