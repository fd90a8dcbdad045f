//! Carrier from the kernel: a NETLINK_ROUTE socket subscribed to link
//! events, so a pulled cable is known the moment the kernel knows it (no
//! polling), plus a dump for the starting state and `miimon`-style polling
//! of the driver's link state for those who ask for it.
//!
//! The socket belongs to the network namespace of the thread that opens it.

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// RTMGRP_LINK: the multicast group of link events.
const RTMGRP_LINK: u32 = 1;

/// What the kernel says about one interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    /// Interface index.
    pub ifindex: u32,
    /// Interface name (may be empty in rare kernel messages).
    pub name: String,
    /// False when the interface was deleted.
    pub present: bool,
    /// Administratively up (IFF_UP).
    pub admin_up: bool,
    /// Carrier (IFF_LOWER_UP).
    pub carrier: bool,
    /// MTU, if reported.
    pub mtu: Option<u32>,
    /// Hardware address, if reported and 6 octets long.
    pub mac: Option<[u8; 6]>,
}

impl LinkState {
    /// Usable by a bond: present, up and with carrier.
    pub fn usable(&self) -> bool {
        self.present && self.admin_up && self.carrier
    }
}

/// Why netlink failed.
#[derive(Debug, thiserror::Error)]
pub enum CarrierError {
    /// Socket creation, bind, membership or I/O failed.
    #[error("netlink: {0}")]
    Io(#[from] std::io::Error),
}

fn state_of(msg: &LinkMessage, present: bool) -> LinkState {
    let mut s = LinkState {
        ifindex: msg.header.index,
        name: String::new(),
        present,
        admin_up: msg.header.flags.contains(LinkFlags::Up),
        carrier: msg.header.flags.contains(LinkFlags::LowerUp),
        mtu: None,
        mac: None,
    };
    for a in &msg.attributes {
        match a {
            LinkAttribute::IfName(n) => s.name = n.clone(),
            LinkAttribute::Mtu(m) => s.mtu = Some(*m),
            LinkAttribute::Address(a) if a.len() == 6 => {
                let mut m = [0; 6];
                m.copy_from_slice(a);
                s.mac = Some(m);
            }
            _ => {}
        }
    }
    s
}

/// Parses every link message in a netlink datagram; anything else or
/// anything malformed is skipped.
fn parse_datagram(buf: &[u8], out: &mut Vec<LinkState>) -> bool {
    let mut off = 0;
    let mut done = false;
    while off < buf.len() {
        let Ok(msg) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[off..]) else {
            break;
        };
        let len = msg.header.length as usize;
        match msg.payload {
            NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(l)) => {
                out.push(state_of(&l, true))
            }
            NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelLink(l)) => {
                out.push(state_of(&l, false))
            }
            NetlinkPayload::Done(_) | NetlinkPayload::Error(_) => done = true,
            _ => {}
        }
        if len == 0 {
            break;
        }
        off += (len + 3) & !3;
    }
    done
}

/// A subscription to link events in the current network namespace.
pub struct CarrierWatcher {
    events: Socket,
    buf: Vec<u8>,
}

impl std::fmt::Debug for CarrierWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CarrierWatcher")
            .field("fd", &self.events.as_raw_fd())
            .finish()
    }
}

impl CarrierWatcher {
    /// Subscribes to link events.
    pub fn open() -> Result<CarrierWatcher, CarrierError> {
        let mut events = Socket::new(NETLINK_ROUTE)?;
        events.bind(&SocketAddr::new(0, RTMGRP_LINK))?;
        events.set_rx_buf_sz(1 << 20)?;
        Ok(CarrierWatcher {
            events,
            buf: vec![0; 1 << 16],
        })
    }

    /// The state of every interface now (a separate request socket, so the
    /// dump never interleaves with events).
    pub fn dump() -> Result<Vec<LinkState>, CarrierError> {
        let mut sock = Socket::new(NETLINK_ROUTE)?;
        sock.bind_auto()?;
        sock.connect(&SocketAddr::new(0, 0))?;
        let mut req = NetlinkMessage::new(
            NetlinkHeader::default(),
            NetlinkPayload::from(RouteNetlinkMessage::GetLink(LinkMessage::default())),
        );
        req.header.flags = NLM_F_DUMP | NLM_F_REQUEST;
        req.header.sequence_number = 1;
        req.finalize();
        let mut out = vec![0; req.buffer_len()];
        req.serialize(&mut out);
        sock.send(&out, 0)?;
        let mut links = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = sock.recv(&mut &mut buf[..], 0)?;
            if n == 0 || parse_datagram(&buf[..n], &mut links) {
                break;
            }
        }
        Ok(links)
    }

    /// The state of one interface by name, now.
    pub fn query(name: &str) -> Result<Option<LinkState>, CarrierError> {
        Ok(Self::dump()?.into_iter().find(|l| l.name == name))
    }

    /// Waits up to `timeout` for link events; returns those that arrived
    /// (empty on timeout).
    pub fn recv(&mut self, timeout: Duration) -> Result<Vec<LinkState>, CarrierError> {
        let ms = u16::try_from(timeout.as_millis()).map_or(PollTimeout::MAX, PollTimeout::from);
        let mut fds = [PollFd::new(self.events.as_fd(), PollFlags::POLLIN)];
        let r = match poll(&mut fds, ms) {
            Ok(r) => r,
            Err(Errno::EINTR) => return Ok(Vec::new()),
            Err(e) => return Err(std::io::Error::from(e).into()),
        };
        let mut out = Vec::new();
        if r == 0 {
            return Ok(out);
        }
        self.events.set_non_blocking(true)?;
        loop {
            match self.events.recv(&mut &mut self.buf[..], 0) {
                Ok(0) => break,
                Ok(n) => {
                    parse_datagram(&self.buf[..n], &mut out);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    // ENOBUFS: events were lost; the caller should re-dump.
                    tracing::warn!(error = %e, "netlink link events lost; state re-read");
                    out.extend(Self::dump()?);
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Waits up to `ms` milliseconds for link events to read; true if
    /// there are some (then [`CarrierWatcher::recv`] with a zero timeout).
    pub fn wait(&self, ms: u16) -> bool {
        let mut fds = [PollFd::new(self.events.as_fd(), PollFlags::POLLIN)];
        matches!(poll(&mut fds, PollTimeout::from(ms)), Ok(n) if n > 0)
    }

    /// Discards the events queued now: they describe states already gone
    /// (a bond's start discards those of its own changes to its members).
    pub fn discard_queued(&mut self) {
        while self.recv(Duration::ZERO).is_ok_and(|v| !v.is_empty()) {}
    }

    /// The descriptor, for an event loop.
    pub fn as_raw_fd(&self) -> i32 {
        self.events.as_raw_fd()
    }
}

/// `miimon`: asks the kernel, on a socket of the calling thread's network
/// namespace (sysfs would show the namespace it was mounted in, not ours),
/// for an interface's flags and its driver's link state, and reports
/// carrier as `IFF_UP` and `ETHTOOL_GLINK` (`IFF_RUNNING` where the driver
/// has no link state: `lagkit_dataplane::Link::carrier`); `None` if the
/// interface does not exist. Used when
/// the operator asks for polling instead of (or besides) netlink events.
pub fn poll_carrier(name: &str) -> Option<bool> {
    lagkit_dataplane::Link::open(name).ok()?.carrier().ok()
}
