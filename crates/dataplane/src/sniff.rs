//! Watching an interface's frames as tcpdump does: an AF_PACKET socket
//! that reads every frame sent and received on one interface, for
//! `lagkit capture --data` on a bond (whose data frames never pass the
//! daemon).
//!
//! Why by hand: libpcap bindings would bring a C library and its own
//! capture loop for what is one socket, one bind and `recvmsg`; the
//! member sockets of [`crate::packet`] already hold the same calls.
//!
//! Unlike the member sockets it sees outgoing frames (no
//! `PACKET_IGNORE_OUTGOING`), adds no virtio-net header, is never
//! promiscuous, and puts back the 802.1Q tag the kernel moved into
//! `PACKET_AUXDATA`, so the frame is as it was on the wire.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;

use crate::packet::{auxdata_vlan, bind_packet};
use crate::sys::{setsockopt, socket, Link, OpenError, SysError};

/// One frame seen on the interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sniffed {
    /// Sent by this host (rather than received).
    pub outgoing: bool,
    /// Its length on the wire (with its VLAN tag).
    pub len: u32,
    /// When the kernel saw it (CLOCK_REALTIME, ns; `SO_TIMESTAMPNS`), so
    /// frames read by different threads keep their true order.
    pub ts_ns: Option<u64>,
    /// Its first bytes, up to the snapshot length.
    pub data: Vec<u8>,
}

/// A socket reading every frame of one interface.
#[derive(Debug)]
pub struct Sniffer {
    fd: OwnedFd,
    buf: Vec<u8>,
}

impl Sniffer {
    /// Opens a sniffer on `ifname` in the caller's namespace; `recv`
    /// returns `None` after `poll` without a frame.
    pub fn open(ifname: &str, poll: Duration) -> Result<Sniffer, OpenError> {
        let link = Link::open(ifname)?;
        let ifindex = link.ifindex().map_err(|e| OpenError::from_sys(e, ifname))?;
        // Protocol 0 until bound: nothing from another interface slips in.
        let fd = socket(libc::AF_PACKET, libc::SOCK_RAW, 0)?;
        let on: libc::c_int = 1;
        setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_AUXDATA,
            &on,
            "setsockopt(PACKET_AUXDATA)",
        )?;
        setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &on,
            "setsockopt(SO_TIMESTAMPNS)",
        )?;
        let tv = libc::timeval {
            tv_sec: poll.as_secs() as libc::time_t,
            tv_usec: poll.subsec_micros() as libc::suseconds_t,
        };
        setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv,
            "setsockopt(SO_RCVTIMEO)",
        )?;
        bind_packet(&fd, ifindex, libc::ETH_P_ALL as u16)
            .map_err(|e| OpenError::from_sys(e, ifname))?;
        Ok(Sniffer {
            fd,
            buf: vec![0; 65536 + 4],
        })
    }

    /// The next frame, cut to `snaplen` bytes; `None` when the poll time
    /// passed without one.
    pub fn recv(&mut self, snaplen: usize) -> Result<Option<Sniffed>, SysError> {
        // SAFETY: plain C structs; zero is a valid start.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut control = [0u64; 16];
        // Room for a tag put back in front of the frame.
        let mut iov = libc::iovec {
            iov_base: self.buf[4..].as_mut_ptr().cast(),
            iov_len: self.buf.len() - 4,
        };
        // SAFETY: zeroed msghdr, then pointed at live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        let n = loop {
            // SAFETY: msg points to live buffers of the sizes it states.
            let r = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
            if r >= 0 {
                break r as usize;
            }
            match Errno::last() {
                Errno::EINTR => continue,
                Errno::EAGAIN => return Ok(None),
                errno => {
                    return Err(SysError {
                        op: "recvmsg(AF_PACKET)",
                        errno,
                    })
                }
            }
        };
        let got = n.min(self.buf.len() - 4);
        // SAFETY: msg was filled by recvmsg and control is still alive.
        let (tag, ts_ns) = unsafe { (auxdata_vlan(&msg), timestamp_ns(&msg)) };
        let (start, len, wire) = match tag {
            Some((tpid, tci)) if got >= 12 => {
                self.buf.copy_within(4..16, 0);
                self.buf[12..14].copy_from_slice(&tpid.to_be_bytes());
                self.buf[14..16].copy_from_slice(&tci.to_be_bytes());
                (0, got + 4, n + 4)
            }
            _ => (4, got, n),
        };
        let keep = len.min(snaplen);
        Ok(Some(Sniffed {
            outgoing: sll.sll_pkttype == libc::PACKET_OUTGOING,
            len: u32::try_from(wire).unwrap_or(u32::MAX),
            ts_ns,
            data: self.buf[start..start + keep].to_vec(),
        }))
    }
}

/// The kernel's receive time of the frame (`SCM_TIMESTAMPNS`), in ns.
///
/// # Safety
/// `msg` must be a msghdr filled by `recvmsg` whose control buffer is still alive.
unsafe fn timestamp_ns(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: the CMSG_* helpers walk the control buffer within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                let s = u64::try_from(ts.tv_sec).ok()?;
                let ns = u64::try_from(ts.tv_nsec).ok()?;
                return s.checked_mul(1_000_000_000)?.checked_add(ns);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
