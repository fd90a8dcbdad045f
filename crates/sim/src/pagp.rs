//! PAgP systems on the simulator's links: two [`pagp::System`]s, or one and
//! a partner that never speaks PAgP (a file server, a packet analyzer: the
//! case PAgP's silent mode exists for).

use crate::{End, InvariantViolation, LinkSpec, Node, Sim};
use lagkit_proto::pagp::{self, PortConfig, SystemConfig};
use lagkit_proto::{Instant, PortId};

/// One end of a PAgP simulation.
#[derive(Debug, Clone)]
pub enum Peer {
    /// A PAgP system (boxed: it is large next to `Silent`).
    Pagp(Box<pagp::System>),
    /// A device with this many ports that never sends PAgP and ignores it.
    Silent(usize),
}

impl Peer {
    /// The PAgP system, unless this end is silent.
    pub fn pagp(&self) -> Option<&pagp::System> {
        match self {
            Peer::Pagp(s) => Some(s),
            Peer::Silent(_) => None,
        }
    }
}

impl Node for Peer {
    type Event = pagp::Event;
    fn set_port_enabled(&mut self, port: PortId, up: bool, now: Instant) {
        if let Peer::Pagp(s) = self {
            s.set_port_enabled(port, up, now);
        }
    }
    fn handle_frame(&mut self, port: PortId, frame: &[u8], now: Instant) {
        if let Peer::Pagp(s) = self {
            s.handle_frame(port, frame, now);
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        if let Peer::Pagp(s) = self {
            s.handle_timeout(now);
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.pagp().and_then(pagp::System::poll_timeout)
    }
    fn poll_transmit(&mut self) -> Option<(PortId, Vec<u8>)> {
        match self {
            Peer::Pagp(s) => s.poll_transmit().map(|t| (t.port, t.frame)),
            Peer::Silent(_) => None,
        }
    }
    fn poll_event(&mut self) -> Option<(Instant, pagp::Event)> {
        match self {
            Peer::Pagp(s) => s.poll_event(),
            Peer::Silent(_) => None,
        }
    }
}

/// Two ends joined by `links` links: A is a PAgP system; B is one too, or
/// silent when `b` is `None`. Port n (1-based) of each end is configured by
/// `port_a(n)` / `port_b(n)`; links come up at time zero.
pub fn pair(
    a: SystemConfig,
    b: Option<SystemConfig>,
    links: usize,
    spec: LinkSpec,
    mut port_a: impl FnMut(u16) -> PortConfig,
    mut port_b: impl FnMut(u16) -> PortConfig,
    seed: u64,
) -> Sim<Peer> {
    let mut sa = pagp::System::new(a);
    let mut sb = b.map(pagp::System::new);
    let mut ids = Vec::new();
    for n in 1..=links {
        let n = u16::try_from(n).unwrap_or(u16::MAX);
        let pa = sa.add_port(port_a(n), Instant::ZERO);
        let pb = match sb.as_mut() {
            Some(s) => s.add_port(port_b(n), Instant::ZERO),
            None => PortId(usize::from(n) - 1),
        };
        ids.push((pa, pb));
    }
    let mut sim = Sim::with_seed(seed);
    let ia = sim.add_node(Peer::Pagp(Box::new(sa)));
    let ib = sim.add_node(sb.map_or(Peer::Silent(links), |s| Peer::Pagp(Box::new(s))));
    for (pa, pb) in ids {
        let a = End {
            system: ia,
            port: pa,
        };
        let b = End {
            system: ib,
            port: pb,
        };
        sim.connect(a, b, spec);
    }
    sim
}

/// Ports of PAgP system `s` carrying the channel's traffic (none for a
/// silent end).
pub fn channel_ports(sim: &Sim<Peer>, s: usize) -> Vec<PortId> {
    sim.system(s)
        .pagp()
        .map(pagp::System::channel_ports)
        .unwrap_or_default()
}

/// The state of every port of PAgP system `s`.
pub fn states(sim: &Sim<Peer>, s: usize) -> Vec<pagp::PortState> {
    let Some(sys) = sim.system(s).pagp() else {
        return Vec::new();
    };
    sys.port_ids()
        .into_iter()
        .filter_map(|p| sys.port_status(p).map(|st| st.state))
        .collect()
}

/// Checks what must hold for a PAgP system after every event: no deadline
/// in the past (one due now is the driver's next step; one that stays due
/// would make it spin, which the fuzz target sees as a hang), no more ports carrying PAgP
/// traffic than the port limit, and partner information exactly where the
/// state says a partner was heard.
pub fn check_invariants(sys: &pagp::System, now: Instant) -> Result<(), InvariantViolation> {
    use pagp::PortState::*;
    let name = &sys.config().name;
    if let Some(t) = sys.poll_timeout() {
        if t < now {
            return Err(InvariantViolation::new(
                name,
                format!("deadline {t} not handled at {now}"),
            ));
        }
    }
    let mut up = 0;
    for id in sys.port_ids() {
        let Some(st) = sys.port_status(id) else {
            return Err(InvariantViolation::new(
                name,
                format!("port {} has no status", id.0),
            ));
        };
        up += usize::from(st.state == UpPagp);
        let heard = st.partner_device.is_some();
        let should = !matches!(st.state, Down | Up | UpData);
        if heard != should {
            return Err(InvariantViolation::new(
                format!("{name} {}", st.name),
                format!(
                    "state {} but partner information {}",
                    st.state,
                    if heard { "held" } else { "missing" }
                ),
            ));
        }
    }
    if let Some(m) = sys.config().max_ports {
        if up > m {
            return Err(InvariantViolation::new(
                name,
                format!("{up} ports upPagp, limit {m}"),
            ));
        }
    }
    Ok(())
}
