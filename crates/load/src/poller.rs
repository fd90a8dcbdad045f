//! The three ways a socketprocs process waits (seed 000's "App meth"):
//! `select` over blocking sockets, level-triggered epoll (AIX's pollset)
//! over blocking sockets, and edge-triggered epoll over non-blocking
//! sockets. They are kept as the raw system calls, not an event library,
//! because the point is to measure their cost.
//!
//! Looked at: `mio` always registers edge-triggered on Linux and has no
//! `select`, so two of the three methods would be gone. `nix`'s
//! `sys::epoll::Epoll` and `sys::select` make the same calls, but take
//! borrowed descriptors where the workers keep connections by raw
//! descriptor across waits; `lagkit_sys::sock` has the same calls over
//! descriptor numbers ([`sock::Epoll`], [`sock::select_readable`]).

use crate::Method;
use lagkit_sys::sock::{self, EpollEvent, EpollFlags};
use std::collections::BTreeSet;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// One ready descriptor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub fd: RawFd,
    pub read: bool,
    pub write: bool,
}

pub(crate) enum Poller {
    Select {
        fds: BTreeSet<RawFd>,
    },
    Epoll {
        ep: sock::Epoll,
        edge: bool,
        buf: Vec<EpollEvent>,
    },
}

impl Poller {
    pub(crate) fn new(method: Method) -> io::Result<Poller> {
        match method {
            Method::Select => Ok(Poller::Select {
                fds: BTreeSet::new(),
            }),
            Method::Poll | Method::EpollEt => Ok(Poller::Epoll {
                ep: sock::Epoll::new()?,
                edge: method == Method::EpollEt,
                buf: vec![EpollEvent::empty(); 256],
            }),
        }
    }

    /// Watches `fd` for reading (edge-triggered: reading and writing).
    pub(crate) fn add(&mut self, fd: RawFd) -> io::Result<()> {
        match self {
            Poller::Select { fds } => {
                if fd < 0 || fd as usize >= libc::FD_SETSIZE {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "descriptor {fd} is beyond select's FD_SETSIZE ({}); use fewer processes or --method epoll-et",
                            libc::FD_SETSIZE
                        ),
                    ));
                }
                fds.insert(fd);
                Ok(())
            }
            Poller::Epoll { ep, edge, .. } => {
                let events = if *edge {
                    EpollFlags::EPOLLIN
                        | EpollFlags::EPOLLOUT
                        | EpollFlags::EPOLLRDHUP
                        | EpollFlags::EPOLLET
                } else {
                    EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP
                };
                ep.add(fd, events, fd as u64)
            }
        }
    }

    /// Stops watching `fd` (before it is closed).
    pub(crate) fn remove(&mut self, fd: RawFd) {
        match self {
            Poller::Select { fds } => {
                fds.remove(&fd);
            }
            Poller::Epoll { ep, .. } => {
                // Failure (already gone) is harmless.
                let _ = ep.delete(fd);
            }
        }
    }

    /// Waits up to `timeout`; ready descriptors go to `out` (cleared first).
    pub(crate) fn wait(&mut self, timeout: Duration, out: &mut Vec<Event>) -> io::Result<()> {
        out.clear();
        match self {
            Poller::Select { fds } => {
                let r = sock::select_readable(fds.iter().copied(), timeout, |fd| {
                    out.push(Event {
                        fd,
                        read: true,
                        write: false,
                    })
                });
                match r {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
                    r => r,
                }
            }
            Poller::Epoll { ep, buf, .. } => {
                let n = match ep.wait(buf, timeout) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
                    r => r?,
                };
                for ev in &buf[..n] {
                    let bits = ev.events();
                    out.push(Event {
                        fd: ev.data() as RawFd,
                        read: bits.intersects(
                            EpollFlags::EPOLLIN
                                | EpollFlags::EPOLLRDHUP
                                | EpollFlags::EPOLLHUP
                                | EpollFlags::EPOLLERR,
                        ),
                        write: bits.intersects(EpollFlags::EPOLLOUT | EpollFlags::EPOLLERR),
                    });
                }
                Ok(())
            }
        }
    }
}
