//! Socket calls that `nix` has no safe form for, as small safe wrappers:
//! epoll registration and `select` over descriptors kept by number (the
//! load workers' event loops) and `TCP_INFO`.
//!
//! The descriptors here are plain numbers ([`RawFd`]) where the callers
//! keep them that way. Every call on such a number only registers,
//! observes or reads it: a number that is closed is the kernel's `EBADF`,
//! and none of these calls closes, duplicates or changes a descriptor, so
//! a wrong number cannot corrupt memory or another owner's descriptor.

use nix::errno::Errno;
use nix::sys::epoll::EpollCreateFlags;
pub use nix::sys::epoll::{EpollEvent, EpollFlags};
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

/// `timeout` in whole milliseconds for `poll`/`epoll_wait`, capped at
/// `i32::MAX` (about 24.8 days) instead of wrapping.
pub fn timeout_ms(timeout: Duration) -> i32 {
    timeout.as_millis().min(i32::MAX as u128) as i32
}

/// An epoll instance (close-on-exec) that watches descriptors named by
/// number, as the event loops keep them.
#[derive(Debug)]
pub struct Epoll(nix::sys::epoll::Epoll);

impl Epoll {
    /// A new epoll descriptor, `EPOLL_CLOEXEC`.
    pub fn new() -> io::Result<Epoll> {
        nix::sys::epoll::Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map(Epoll)
            .map_err(io::Error::from)
    }

    /// `EPOLL_CTL_ADD`: watch `fd` for `events`; its events carry `data`.
    pub fn add(&self, fd: RawFd, events: EpollFlags, data: u64) -> io::Result<()> {
        let mut ev = EpollEvent::new(events, data);
        self.ctl(libc::EPOLL_CTL_ADD, fd, &mut ev)
    }

    /// `EPOLL_CTL_DEL`: stop watching `fd` (call it before `fd` is closed).
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        // A non-null event, as kernels before 2.6.9 required.
        let mut ev = EpollEvent::empty();
        self.ctl(libc::EPOLL_CTL_DEL, fd, &mut ev)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, ev: &mut EpollEvent) -> io::Result<()> {
        // SAFETY: `EpollEvent` is `repr(transparent)` over `epoll_event`, so
        // the pointer is to a live, properly laid out event for the call.
        // epoll_ctl only reads it; `fd` is a number the kernel checks
        // (EBADF if closed), and registering it changes no descriptor.
        let r = unsafe {
            libc::epoll_ctl(
                self.0 .0.as_raw_fd(),
                op,
                fd,
                (ev as *mut EpollEvent).cast::<libc::epoll_event>(),
            )
        };
        Errno::result(r).map(drop).map_err(io::Error::from)
    }

    /// `epoll_wait` for up to `timeout` (see [`timeout_ms`]): the number of
    /// events written to the start of `events`. An interrupted wait is an
    /// error of kind `Interrupted`.
    pub fn wait(&self, events: &mut [EpollEvent], timeout: Duration) -> io::Result<usize> {
        let ms = nix::sys::epoll::EpollTimeout::try_from(timeout_ms(timeout))
            .unwrap_or(nix::sys::epoll::EpollTimeout::MAX);
        self.0.wait(events, ms).map_err(io::Error::from)
    }
}

/// Checks that every descriptor can be put in an `fd_set`: `0 <= fd <
/// FD_SETSIZE`, or `EINVAL` naming the first that cannot.
pub fn check_fd_set(fds: impl IntoIterator<Item = RawFd>) -> io::Result<()> {
    for fd in fds {
        if fd < 0 || fd as usize >= libc::FD_SETSIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "descriptor {fd} does not fit select's fd_set (FD_SETSIZE {})",
                    libc::FD_SETSIZE
                ),
            ));
        }
    }
    Ok(())
}

/// `select` for reading on `fds` for up to `timeout`; `ready` is called
/// with each ready one, in the order of `fds`. A descriptor outside
/// `0..FD_SETSIZE` is an `InvalidInput` error (before any call); an
/// interrupted wait is an error of kind `Interrupted`.
pub fn select_readable<I>(fds: I, timeout: Duration, mut ready: impl FnMut(RawFd)) -> io::Result<()>
where
    I: IntoIterator<Item = RawFd> + Clone,
{
    check_fd_set(fds.clone())?;
    // SAFETY: fd_set is plain data, for which all-zero bytes are valid.
    let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
    // SAFETY: FD_ZERO writes only within the live set.
    unsafe { libc::FD_ZERO(&mut set) };
    let mut max = -1;
    for fd in fds.clone() {
        // SAFETY: check_fd_set proved 0 <= fd < FD_SETSIZE, so FD_SET
        // writes within the set.
        unsafe { libc::FD_SET(fd, &mut set) };
        max = max.max(fd);
    }
    let mut tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: a live fd_set covering descriptors below max + 1 <=
    // FD_SETSIZE, null for the sets not used, and a live timeval.
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
        return Err(io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: as for FD_SET: fd is within the set; FD_ISSET only reads.
        if unsafe { libc::FD_ISSET(fd, &set) } {
            ready(fd);
        }
    }
    Ok(())
}

/// The kernel's `TCP_INFO` for the TCP socket `fd` (its `tcpi_state` is a
/// `TCP_*` state of linux/tcp_states.h).
pub fn tcp_info(fd: impl AsFd) -> io::Result<libc::tcp_info> {
    // SAFETY: tcp_info is plain integers, for which all-zero bytes are valid.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a pointer to a live tcp_info and its size; the kernel writes
    // at most `len` bytes (a shorter answer leaves the rest zero).
    let r = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    Errno::result(r).map_err(io::Error::from)?;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::net::UnixStream;

    #[test]
    fn timeout_ms_rounds_down_and_caps() {
        assert_eq!(timeout_ms(Duration::ZERO), 0);
        assert_eq!(timeout_ms(Duration::from_micros(1500)), 1);
        assert_eq!(timeout_ms(Duration::from_secs(2)), 2000);
        assert_eq!(timeout_ms(Duration::from_secs(u64::MAX)), i32::MAX);
    }

    #[test]
    fn fd_set_takes_only_descriptors_below_fd_setsize() {
        assert!(check_fd_set([0, 1, libc::FD_SETSIZE as RawFd - 1]).is_ok());
        for bad in [-1, libc::FD_SETSIZE as RawFd, i32::MAX] {
            let e = check_fd_set([0, bad]).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
        let e = select_readable([libc::FD_SETSIZE as RawFd], Duration::ZERO, |_| {});
        assert_eq!(e.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn select_reports_the_readable_end() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let (c, _d) = UnixStream::pair().unwrap();
        let fds = [b.as_raw_fd(), c.as_raw_fd()];
        let mut ready = Vec::new();
        select_readable(fds, Duration::ZERO, |fd| ready.push(fd)).unwrap();
        assert!(ready.is_empty());
        a.write_all(b"x").unwrap();
        select_readable(fds, Duration::from_secs(1), |fd| ready.push(fd)).unwrap();
        assert_eq!(ready, vec![b.as_raw_fd()]);
    }

    #[test]
    fn epoll_reports_added_descriptors_until_deleted() {
        let ep = Epoll::new().unwrap();
        let (mut a, b) = UnixStream::pair().unwrap();
        ep.add(b.as_raw_fd(), EpollFlags::EPOLLIN, 42).unwrap();
        let mut evs = [EpollEvent::empty(); 4];
        assert_eq!(ep.wait(&mut evs, Duration::ZERO).unwrap(), 0);
        a.write_all(b"x").unwrap();
        assert_eq!(ep.wait(&mut evs, Duration::from_secs(1)).unwrap(), 1);
        assert_eq!(evs[0].data(), 42);
        assert!(evs[0].events().contains(EpollFlags::EPOLLIN));
        ep.delete(b.as_raw_fd()).unwrap();
        assert_eq!(ep.wait(&mut evs, Duration::ZERO).unwrap(), 0);
        // Deleting again is the kernel's error (ENOENT), not a panic.
        assert!(ep.delete(b.as_raw_fd()).is_err());
    }

    #[test]
    fn tcp_info_reads_the_state() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_s, _) = l.accept().unwrap();
        const TCP_ESTABLISHED: u8 = 1;
        assert_eq!(tcp_info(&c).unwrap().tcpi_state, TCP_ESTABLISHED);
        // Not a TCP socket: the kernel's error, not garbage.
        let (u, _v) = UnixStream::pair().unwrap();
        assert!(tcp_info(&u).is_err());
    }
}
