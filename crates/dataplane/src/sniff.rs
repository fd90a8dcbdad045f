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

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use lagkit_sys::packet as sys_packet;
use nix::errno::Errno;
use nix::sys::socket::{setsockopt, sockopt, AddressFamily, SockFlag, SockType};
use nix::sys::time::TimeVal;

use crate::packet::bind_packet;
use crate::sys::{socket_cloexec, Link, OpenError, SysError};

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
        let fd = socket_cloexec(AddressFamily::Packet, SockType::Raw, SockFlag::empty())?;
        sys_packet::setsockopt_int(fd.as_fd(), libc::SOL_PACKET, libc::PACKET_AUXDATA, 1)
            .map_err(|e| SysError::new("setsockopt(PACKET_AUXDATA)", e))?;
        setsockopt(&fd, sockopt::ReceiveTimestampns, &true)
            .map_err(|e| SysError::new("setsockopt(SO_TIMESTAMPNS)", e))?;
        let tv = TimeVal::from(libc::timeval {
            tv_sec: poll.as_secs() as libc::time_t,
            tv_usec: poll.subsec_micros() as libc::suseconds_t,
        });
        setsockopt(&fd, sockopt::ReceiveTimeout, &tv)
            .map_err(|e| SysError::new("setsockopt(SO_RCVTIMEO)", e))?;
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
        let f = loop {
            // Room for a tag put back in front of the frame.
            match sys_packet::recvmsg(self.fd.as_fd(), &mut self.buf[4..]) {
                Ok(f) => break f,
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => return Ok(None),
                Err(errno) => {
                    return Err(SysError {
                        op: "recvmsg(AF_PACKET)",
                        errno,
                    })
                }
            }
        };
        let n = f.len;
        let got = n.min(self.buf.len() - 4);
        let (tag, ts_ns) = (f.vlan, f.ts_ns);
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
            outgoing: f.pkttype == libc::PACKET_OUTGOING,
            len: u32::try_from(wire).unwrap_or(u32::MAX),
            ts_ns,
            data: self.buf[start..start + keep].to_vec(),
        }))
    }
}
