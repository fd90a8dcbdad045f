//! Configuration of a PAgP system and its ports, under the names of Cisco's
//! `channel-group N mode {desirable|auto} [non-silent]`, `pagp learn-method`
//! and `pagp port-priority`.

use lagkit_wire::pagp::LearnMethod;
use lagkit_wire::MacAddr;
use std::time::Duration;

/// Who speaks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reference: "`desirable` initiates": sends hellos from carrier up.
    Desirable,
    /// Reference: "`auto` only answers": silent until it hears PAgP, so
    /// auto+auto never forms.
    Auto,
}

/// What a port does when its partner never speaks PAgP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Silence {
    /// Reference: "`silent` (assumed with auto/desirable unless `non-silent`
    /// is given) lets PAgP attach a port to the channel and use it even when
    /// the partner never sends PAgP ... about 15 s of waiting". Only a
    /// desirable port attaches this way: an auto port never initiates, and
    /// attaching it would make auto+auto form, which the reference rules out.
    Silent,
    /// Reference: "`non-silent` requires PAgP from the partner: a silent
    /// partner then keeps the port from ever becoming operational".
    NonSilent,
}

/// PAgP's timers (reference: "hello 1 s while a port is being detected, 30 s
/// once it is up (slow hello); received information ages out after 3.5
/// hellos"), overridable for experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// Hello interval while a port is being detected, 1 s.
    pub fast_hello: Duration,
    /// Hello interval once a port is up in the channel, 30 s. Also how
    /// long a partner whose hellos carry the slow flag waits between them,
    /// whatever this end sends: its information ages by this interval.
    pub slow_hello: Duration,
    /// `pagp rate fast`: this end keeps sending hellos at the fast
    /// interval once up, without the slow flag, so that its partner ages
    /// it out in 3.5 s. What this end receives still ages by the rate the
    /// partner announces.
    pub fast_rate: bool,
    /// Received information ages out after this many tenths of the
    /// partner's hello interval: 35 (3.5 hellos).
    pub aging_tenths: u32,
    /// How long a silent desirable port waits for PAgP before it attaches
    /// anyway, 15 s.
    pub silent_wait: Duration,
    /// How long a Flush waits for its answer before flows move anyway, 1 s.
    pub flush_timeout: Duration,
    /// With a port limit, how long the deciding end waits after a port
    /// becomes ready before ranking it, so that ports coming up together
    /// are ranked together instead of the first displacing nothing and then
    /// being displaced: 2 s, as 802.1AX's Aggregate_Wait_Time (lagkit's
    /// choice; the reference gives no PAgP value).
    pub join_wait: Duration,
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            fast_hello: Duration::from_secs(1),
            slow_hello: Duration::from_secs(30),
            fast_rate: false,
            aging_tenths: 35,
            silent_wait: Duration::from_secs(15),
            flush_timeout: Duration::from_secs(1),
            join_wait: Duration::from_secs(2),
        }
    }
}

impl Timers {
    /// Whether a port in state `up` (in or ready for the channel) sends
    /// slow hellos, and says so with the slow flag.
    pub fn sends_slow(&self, up: bool) -> bool {
        up && !self.fast_rate && self.slow_hello > self.fast_hello
    }

    /// The interval between the hellos of a port in state `up`.
    pub fn hello_interval(&self, up: bool) -> Duration {
        if self.sends_slow(up) {
            self.slow_hello
        } else {
            self.fast_hello
        }
    }

    /// The time information sent at `hello` intervals stays valid.
    pub fn aging(&self, hello: Duration) -> Duration {
        hello * self.aging_tenths / 10
    }
}

/// Configuration of one PAgP system (a switch, or a host's channel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemConfig {
    /// Name used in logs and the device name TLV.
    pub name: String,
    /// Device id: a MAC of the device.
    pub device_id: MacAddr,
    /// Reference: "Learn method: aggregation-port (default) or
    /// physical-port; a physical-port learner needs its partner to
    /// distribute by source MAC."
    pub learn: LearnMethod,
    /// ifindex of the channel interface, sent as the group ifindex of
    /// member ports.
    pub group_ifindex: u32,
    /// Source MAC of the channel (agport MAC TLV); the device id if `None`.
    pub agport_mac: Option<MacAddr>,
    /// At most this many ports carry traffic; the rest stand by, chosen by
    /// port priority (reference: "`pagp port-priority` picks the port for
    /// single-port hot standby"). `None`: no limit.
    pub max_ports: Option<usize>,
    /// Timers.
    pub timers: Timers,
}

impl SystemConfig {
    /// Defaults: aggregation-port learning, no port limit, standard timers.
    pub fn new(name: &str, device_id: MacAddr) -> SystemConfig {
        SystemConfig {
            name: name.to_string(),
            device_id,
            learn: LearnMethod::AggregationPort,
            group_ifindex: 1000,
            agport_mac: None,
            max_ports: None,
            timers: Timers::default(),
        }
    }
}

/// Configuration of one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// Interface name (port name TLV).
    pub name: String,
    /// ifindex, sent as the sent-port ifindex; unique within the system.
    pub ifindex: u32,
    /// The port's own MAC, the source of the frames it sends.
    pub mac: MacAddr,
    /// Desirable or auto.
    pub mode: Mode,
    /// Silent or non-silent.
    pub silence: Silence,
    /// Hot-standby priority: higher is preferred (reference: "default 128").
    pub port_priority: u8,
    /// Group capability: ports that may bundle share it (a real switch sends
    /// 0x00010001).
    pub group_capability: u32,
}

impl PortConfig {
    /// Desirable, silent, priority 128, group capability 0x00010001.
    pub fn new(name: &str, ifindex: u32, mac: MacAddr) -> PortConfig {
        PortConfig {
            name: name.to_string(),
            ifindex,
            mac,
            mode: Mode::Desirable,
            silence: Silence::Silent,
            port_priority: 128,
            group_capability: 0x0001_0001,
        }
    }
}
