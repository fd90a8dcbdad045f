//! The three ways a socketprocs process waits (seed 000's "App meth"):
//! `select` over blocking sockets, level-triggered epoll (AIX's pollset)
//! over blocking sockets, and edge-triggered epoll over non-blocking
//! sockets. They are kept as the raw system calls, not an event library,
//! because the point is to measure their cost.
//!
//! Looked at: `mio` always registers edge-triggered on Linux and has no
//! `select`, so two of the three methods would be gone. `nix`'s
//! `sys::epoll::Epoll` and `sys::select` make the same calls, but take
//! borrowed descriptors (`AsFd`, an `FdSet` that borrows each one for its
//! lifetime) where the workers keep connections by raw descriptor across
//! waits: each call would turn a `RawFd` back into a `BorrowedFd`, itself
//! `unsafe`, or the workers would be rewritten around the poller, for a
//! handful of plain calls. `net::wait_fd`'s one `poll` stays on `libc`
//! with the other socket calls of `net`.

use crate::Method;
use std::collections::BTreeSet;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
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
        ep: OwnedFd,
        edge: bool,
        buf: Vec<libc::epoll_event>,
    },
}

impl Poller {
    pub(crate) fn new(method: Method) -> io::Result<Poller> {
        match method {
            Method::Select => Ok(Poller::Select {
                fds: BTreeSet::new(),
            }),
            Method::Poll | Method::EpollEt => {
                // SAFETY: epoll_create1 returns a new descriptor we then own.
                let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(Poller::Epoll {
                    ep: unsafe { OwnedFd::from_raw_fd(fd) },
                    edge: method == Method::EpollEt,
                    buf: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
                })
            }
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
                    libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET
                } else {
                    libc::EPOLLIN | libc::EPOLLRDHUP
                };
                let mut ev = libc::epoll_event {
                    events: events as u32,
                    u64: fd as u64,
                };
                // SAFETY: a valid epoll descriptor and a live event struct.
                let r =
                    unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
                if r < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
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
                let mut ev = libc::epoll_event { events: 0, u64: 0 };
                // SAFETY: as in add; failure (already gone) is harmless.
                unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) };
            }
        }
    }

    /// Waits up to `timeout`; ready descriptors go to `out` (cleared first).
    pub(crate) fn wait(&mut self, timeout: Duration, out: &mut Vec<Event>) -> io::Result<()> {
        out.clear();
        match self {
            Poller::Select { fds } => {
                // SAFETY: fd_set is plain data; FD_* touch only descriptors
                // below FD_SETSIZE, which `add` guarantees.
                let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
                unsafe { libc::FD_ZERO(&mut set) };
                let mut max = -1;
                for &fd in fds.iter() {
                    unsafe { libc::FD_SET(fd, &mut set) };
                    max = max.max(fd);
                }
                let mut tv = libc::timeval {
                    tv_sec: timeout.as_secs() as libc::time_t,
                    tv_usec: timeout.subsec_micros() as libc::suseconds_t,
                };
                let r = unsafe {
                    libc::select(
                        max + 1,
                        &mut set,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        &mut tv,
                    )
                };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    return if e.kind() == io::ErrorKind::Interrupted {
                        Ok(())
                    } else {
                        Err(e)
                    };
                }
                for &fd in fds.iter() {
                    if unsafe { libc::FD_ISSET(fd, &set) } {
                        out.push(Event {
                            fd,
                            read: true,
                            write: false,
                        });
                    }
                }
                Ok(())
            }
            Poller::Epoll { ep, buf, .. } => {
                let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
                // SAFETY: buf is a live array of epoll_event of the given length.
                let n = unsafe {
                    libc::epoll_wait(
                        ep.as_raw_fd(),
                        buf.as_mut_ptr(),
                        buf.len() as libc::c_int,
                        ms,
                    )
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    return if e.kind() == io::ErrorKind::Interrupted {
                        Ok(())
                    } else {
                        Err(e)
                    };
                }
                for ev in &buf[..n as usize] {
                    let bits = ev.events as i32;
                    out.push(Event {
                        fd: ev.u64 as RawFd,
                        read: bits
                            & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR)
                            != 0,
                        write: bits & (libc::EPOLLOUT | libc::EPOLLERR) != 0,
                    });
                }
                Ok(())
            }
        }
    }
}
