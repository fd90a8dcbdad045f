//! Queueing disciplines changing: a NETLINK_ROUTE socket subscribed to
//! traffic-control events, so a switch that hands frames straight to a
//! veth's peer (around the port's qdisc) learns at once that a qdisc now
//! shapes the port, and sends through it again.
//!
//! Only whether something changed is kept: the reader lists the qdiscs
//! anew (`lagkit_sys::tc::queueing`), which also covers events lost to an
//! overrun. The socket belongs to the network namespace of the thread that
//! opens it.

use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use std::os::fd::AsRawFd;

/// RTMGRP_TC: the multicast group of qdisc, class and filter events.
const RTMGRP_TC: u32 = 8;

/// A subscription to traffic-control events in the current namespace.
pub struct QdiscWatcher {
    events: Socket,
    buf: Vec<u8>,
}

impl std::fmt::Debug for QdiscWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QdiscWatcher")
            .field("fd", &self.events.as_raw_fd())
            .finish()
    }
}

impl QdiscWatcher {
    /// Subscribes to traffic-control events.
    pub fn open() -> std::io::Result<QdiscWatcher> {
        let mut events = Socket::new(NETLINK_ROUTE)?;
        events.bind(&SocketAddr::new(0, RTMGRP_TC))?;
        events.set_non_blocking(true)?;
        Ok(QdiscWatcher {
            events,
            buf: vec![0; 1 << 16],
        })
    }

    /// Whether an event arrived since the last call; reads them all. An
    /// overrun (events lost) counts as a change.
    pub fn changed(&mut self) -> bool {
        let mut changed = false;
        loop {
            match self.events.recv(&mut &mut self.buf[..], 0) {
                Ok(0) => return changed,
                Ok(_) => changed = true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return changed,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }
}
