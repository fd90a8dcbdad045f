//! AF_PACKET sockets: binding to one interface (`sockaddr_ll`), the
//! `SOL_PACKET` options and a classic BPF filter, the kernel's drop
//! statistics, and batched reads and writes (`recvmmsg`/`sendmmsg`,
//! `recvmsg`) that decode the control messages the kernel adds: the 802.1Q
//! tag it moved into `PACKET_AUXDATA` and the `SO_TIMESTAMPNS` receive time;
//! and a plain socket for every protocol whose reads report the checksum
//! flag of `PACKET_AUXDATA` ([`raw_packet_socket`], [`recv_frame`]: the
//! test network's user-space wire).
//!
//! Create the socket with `nix::sys::socket::socket` and set the options
//! `nix` knows (`SO_RCVBUFFORCE`, `SO_RCVTIMEO`, ...) with
//! `nix::sys::socket::setsockopt`; what is here has no safe `nix` API
//! (`nix` has no `sockaddr_ll` constructor, no packet options, and its
//! `recvmmsg` would allocate per call and hand `PACKET_AUXDATA` back as
//! raw bytes).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;

/// The most messages [`recvmmsg`] and [`sendmmsg`] move in one call.
pub const MMSG_MAX: usize = 64;

/// Room for one `PACKET_AUXDATA` control message (CMSG_SPACE(20) = 40 on 64-bit).
const CMSG_BUF: usize = 64;

/// The `sockaddr_ll` that binds a packet socket to interface `ifindex`
/// and EtherType `protocol` (host order; `ETH_P_ALL` for every frame).
pub fn sockaddr_ll(ifindex: u32, protocol: u16) -> libc::sockaddr_ll {
    libc::sockaddr_ll {
        sll_family: libc::AF_PACKET as u16,
        sll_protocol: protocol.to_be(),
        sll_ifindex: ifindex as i32,
        sll_hatype: 0,
        sll_pkttype: 0,
        sll_halen: 0,
        sll_addr: [0; 8],
    }
}

/// Binds packet socket `fd` to interface `ifindex` and EtherType
/// `protocol` (host order; `ETH_P_ALL` for every frame).
pub fn bind(fd: BorrowedFd<'_>, ifindex: u32, protocol: u16) -> Result<(), Errno> {
    let sll = sockaddr_ll(ifindex, protocol);
    // SAFETY: sll is a valid sockaddr_ll of the length given, alive for the call.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    Errno::result(r).map(drop)
}

/// The interface packet socket `fd` is bound to (`getsockname`), or
/// `EAFNOSUPPORT` if `fd` is not a packet socket: how a socket handed over
/// by another process is checked before it is used.
pub fn bound_ifindex(fd: BorrowedFd<'_>) -> Result<u32, Errno> {
    let mut sll = sockaddr_ll(0, 0);
    let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: sll is a writable sockaddr_ll and len says its size; the
    // kernel writes at most that many bytes and the length it used.
    let r = unsafe {
        libc::getsockname(
            fd.as_raw_fd(),
            (&mut sll as *mut libc::sockaddr_ll).cast(),
            &mut len,
        )
    };
    Errno::result(r)?;
    if sll.sll_family != libc::AF_PACKET as u16 {
        return Err(Errno::EAFNOSUPPORT);
    }
    u32::try_from(sll.sll_ifindex).map_err(|_| Errno::EINVAL)
}

/// Sets an integer socket option (`PACKET_VNET_HDR`, `PACKET_AUXDATA`,
/// `PACKET_IGNORE_OUTGOING`, ...): `setsockopt(fd, level, name, &value, 4)`.
pub fn setsockopt_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> Result<(), Errno> {
    // SAFETY: the kernel reads a c_int through the pointer, which points
    // at `value` for the duration of the call.
    unsafe { setsockopt_raw(fd, level, name, &value) }
}

/// `setsockopt` with a `T` as the value.
///
/// # Safety
/// `T` must be the plain-data value the option expects; any pointer in it
/// must be valid for what the kernel does with it during the call.
unsafe fn setsockopt_raw<T>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    val: &T,
) -> Result<(), Errno> {
    // SAFETY: val points to a live T of the size given for the duration
    // of the call; the caller vouches for its contents.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    Errno::result(r).map(drop)
}

/// Attaches classic BPF program `prog` as the socket's filter
/// (`SO_ATTACH_FILTER`); the kernel checks and copies it.
pub fn attach_filter(fd: BorrowedFd<'_>, prog: &[libc::sock_filter]) -> Result<(), Errno> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(prog.len()).map_err(|_| Errno::EINVAL)?,
        // The kernel only reads the instructions.
        filter: prog.as_ptr().cast_mut(),
    };
    // SAFETY: fprog is a sock_fprog whose filter points at `prog.len()`
    // instructions alive across the call; the kernel copies them and
    // never writes through the pointer.
    unsafe { setsockopt_raw(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog) }
}

/// The `packet_mreq` of [`add_membership`].
fn packet_mreq(ifindex: u32, mr_type: u16) -> libc::packet_mreq {
    libc::packet_mreq {
        mr_ifindex: ifindex as i32,
        mr_type,
        mr_alen: 0,
        mr_address: [0; 8],
    }
}

/// Joins interface `ifindex` with membership `mr_type`
/// (`PACKET_MR_PROMISC`, ...; `PACKET_ADD_MEMBERSHIP`). The membership
/// ends when the socket closes.
pub fn add_membership(fd: BorrowedFd<'_>, ifindex: u32, mr_type: u16) -> Result<(), Errno> {
    let mr = packet_mreq(ifindex, mr_type);
    // SAFETY: packet_mreq is plain data, the value PACKET_ADD_MEMBERSHIP reads.
    unsafe { setsockopt_raw(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mr) }
}

/// Reads (and resets) the socket's packet counts (`PACKET_STATISTICS`).
pub fn statistics(fd: BorrowedFd<'_>) -> Result<libc::tpacket_stats, Errno> {
    let mut st = libc::tpacket_stats {
        tp_packets: 0,
        tp_drops: 0,
    };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: st has room for a tpacket_stats and len says so; the kernel
    // writes at most len bytes.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    };
    Errno::result(r).map(|_| st)
}

/// One message [`recvmmsg`] read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Received {
    /// Its length (at most the buffer's).
    pub len: usize,
    /// Cut to the buffer (`MSG_TRUNC`).
    pub truncated: bool,
    /// The 802.1Q tag the kernel moved into `PACKET_AUXDATA`: (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
}

/// One non-blocking `recvmmsg` (`MSG_DONTWAIT`) into `bufs`, each from
/// byte `offset` on, of at most `out.len()` and [`MMSG_MAX`] messages.
/// Fills `out` for the messages read and returns how many; `Ok(0)`
/// without a call when there is no room.
pub fn recvmmsg<B: AsMut<[u8]>>(
    fd: BorrowedFd<'_>,
    bufs: &mut [B],
    offset: usize,
    out: &mut [Received],
) -> Result<usize, Errno> {
    let n = bufs.len().min(out.len()).min(MMSG_MAX);
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: iovec and mmsghdr are plain C structs (integers and null
    // pointers); all-zero is a valid start.
    let mut iov: [libc::iovec; MMSG_MAX] = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut msgs: [libc::mmsghdr; MMSG_MAX] = unsafe { std::mem::zeroed() };
    let mut cmsg = [[0u64; CMSG_BUF / 8]; MMSG_MAX];
    for (k, buf) in bufs.iter_mut().take(n).enumerate() {
        let slot = buf.as_mut().get_mut(offset..).unwrap_or_default();
        iov[k] = libc::iovec {
            iov_base: slot.as_mut_ptr().cast(),
            iov_len: slot.len(),
        };
        msgs[k].msg_hdr.msg_iov = &mut iov[k];
        msgs[k].msg_hdr.msg_iovlen = 1;
        msgs[k].msg_hdr.msg_control = cmsg[k].as_mut_ptr().cast();
        msgs[k].msg_hdr.msg_controllen = CMSG_BUF;
    }
    // SAFETY: msgs[..n] point to live iovecs over the exclusively borrowed
    // `bufs` and to control buffers, all of the stated sizes.
    let r = unsafe {
        libc::recvmmsg(
            fd.as_raw_fd(),
            msgs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        )
    };
    let r = Errno::result(r)? as usize;
    for (o, m) in out.iter_mut().zip(&msgs[..r]) {
        *o = Received {
            len: m.msg_len as usize,
            truncated: m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
            // SAFETY: the msghdr was filled by recvmmsg; its control
            // buffer (`cmsg`) is still alive.
            vlan: unsafe { auxdata_vlan(&m.msg_hdr) },
        };
    }
    Ok(r)
}

/// One non-blocking `sendmmsg` (`MSG_DONTWAIT`) of the first (up to
/// [`MMSG_MAX`]) `packets`, one message each; returns how many the kernel
/// took.
pub fn sendmmsg(fd: BorrowedFd<'_>, packets: &[&[u8]]) -> Result<usize, Errno> {
    let n = packets.len().min(MMSG_MAX);
    // SAFETY: plain C structs; all-zero is a valid start.
    let mut iov: [libc::iovec; MMSG_MAX] = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut msgs: [libc::mmsghdr; MMSG_MAX] = unsafe { std::mem::zeroed() };
    for (k, p) in packets.iter().take(n).enumerate() {
        iov[k] = libc::iovec {
            // The kernel only reads the packets.
            iov_base: p.as_ptr().cast_mut().cast(),
            iov_len: p.len(),
        };
        msgs[k].msg_hdr.msg_iov = &mut iov[k];
        msgs[k].msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: msgs[..n] point to live iovecs over the caller's packets,
    // which the kernel only reads.
    let r = unsafe {
        libc::sendmmsg(
            fd.as_raw_fd(),
            msgs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_DONTWAIT,
        )
    };
    Errno::result(r).map(|r| r as usize)
}

/// One frame [`recvmsg`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Its whole length (`MSG_TRUNC`), which may exceed the buffer's.
    pub len: usize,
    /// `sll_pkttype`: `PACKET_HOST`, `PACKET_OUTGOING`, ...
    pub pkttype: u8,
    /// The 802.1Q tag the kernel moved into `PACKET_AUXDATA`: (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
    /// The kernel's receive time (`SCM_TIMESTAMPNS`, CLOCK_REALTIME), in ns.
    pub ts_ns: Option<u64>,
}

/// One `recvmsg` with `MSG_TRUNC` into `buf`, with the sender's address
/// and up to 128 bytes of control messages.
pub fn recvmsg(fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<Frame, Errno> {
    let mut sll = sockaddr_ll(0, 0);
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is a plain C struct; all-zero is a valid start.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: msg points to live buffers (`sll`, the exclusively borrowed
    // `buf`, `control`) of the sizes it states.
    let r = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
    let len = Errno::result(r)? as usize;
    // SAFETY: msg was filled by recvmsg and its control buffer is alive.
    let (vlan, ts_ns) = unsafe { (auxdata_vlan(&msg), timestamp_ns(&msg)) };
    Ok(Frame {
        len,
        pkttype: sll.sll_pkttype,
        vlan,
        ts_ns,
    })
}

/// The `PACKET_AUXDATA` control message the kernel added, if any.
///
/// # Safety
/// `msg` must be a msghdr filled by `recvmsg`/`recvmmsg` whose control
/// buffer is still alive.
unsafe fn auxdata(msg: &libc::msghdr) -> Option<libc::tpacket_auxdata> {
    // SAFETY: the CMSG_* helpers walk the control buffer within
    // msg_controllen, which the caller guarantees is alive, returning null
    // at its end; the data is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == libc::PACKET_AUXDATA {
                return Some(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast()));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// Finds a VLAN tag the kernel moved into `PACKET_AUXDATA`.
///
/// # Safety
/// As [`auxdata`].
unsafe fn auxdata_vlan(msg: &libc::msghdr) -> Option<(u16, u16)> {
    // SAFETY: the caller's guarantee, passed on.
    let aux = unsafe { auxdata(msg) }?;
    if aux.tp_status & libc::TP_STATUS_VLAN_VALID == 0 {
        return None;
    }
    let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
        aux.tp_vlan_tpid
    } else {
        0x8100
    };
    Some((tpid, aux.tp_vlan_tci))
}

/// A raw `AF_PACKET` socket for every protocol (`ETH_P_ALL`), close-on-exec,
/// bound to `ifname` in the calling thread's network namespace, with
/// `PACKET_AUXDATA` (see [`recv_frame`]), without its own outgoing frames
/// (`PACKET_IGNORE_OUTGOING`), and the interface promiscuous while it is
/// open. As a user-space switch without vnet headers reads and writes
/// frames. Failures of the three options are ignored (older kernels lack
/// `PACKET_IGNORE_OUTGOING`); a missing interface or a failed bind is an
/// error.
pub fn raw_packet_socket(ifname: &str) -> io::Result<OwnedFd> {
    use nix::sys::socket::{socket, AddressFamily, SockFlag, SockProtocol, SockType};
    let index = nix::net::if_::if_nametoindex(ifname)?;
    let sock = socket(
        AddressFamily::Packet,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::EthAll,
    )?;
    let fd = sock.as_fd();
    for opt in [libc::PACKET_AUXDATA, libc::PACKET_IGNORE_OUTGOING] {
        let _ = setsockopt_int(fd, libc::SOL_PACKET, opt, 1);
    }
    bind(fd, index, libc::ETH_P_ALL as u16)?;
    let _ = add_membership(fd, index, libc::PACKET_MR_PROMISC as u16);
    Ok(sock)
}

/// Reads one frame from a [`raw_packet_socket`] without waiting
/// (`MSG_DONTWAIT`) into `buf`: its length (the part that fit), and whether
/// the kernel marked its checksum unfinished (`TP_STATUS_CSUMNOTREADY` in
/// `PACKET_AUXDATA`). No frame is an error of kind `WouldBlock`; an empty
/// read is `Ok((0, _))`.
pub fn recv_frame(fd: impl AsFd, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    // Room for a few control messages, 8-byte aligned as cmsghdr wants.
    let mut ctrl = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data (pointers and integers); all-zero is a
    // valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&ctrl);
    // SAFETY: msg points at the live iov (itself at the live `buf` with its
    // true length) and the live `ctrl` with its true size; the kernel
    // writes only within them.
    let n = unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    let n = Errno::result(n)? as usize;
    // SAFETY: msg was filled by recvmsg and `ctrl` is alive.
    let aux = unsafe { auxdata(&msg) };
    let unfinished = aux.is_some_and(|a| a.tp_status & libc::TP_STATUS_CSUMNOTREADY != 0);
    Ok((n, unfinished))
}

/// The kernel's receive time of the frame (`SCM_TIMESTAMPNS`), in ns.
///
/// # Safety
/// `msg` must be a msghdr filled by `recvmsg` whose control buffer is
/// still alive.
unsafe fn timestamp_ns(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: the CMSG_* helpers walk the control buffer within
    // msg_controllen, which the caller guarantees is alive; the data is
    // read unaligned.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_socket_needs_an_existing_interface() {
        let e = raw_packet_socket("lkt-no-such0").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV), "{e}");
        assert!(raw_packet_socket("a\0b").is_err());
    }

    #[test]
    fn sockaddr_ll_byte_for_byte() {
        let sll = sockaddr_ll(7, libc::ETH_P_SLOW as u16);
        assert_eq!(std::mem::size_of::<libc::sockaddr_ll>(), 20);
        let mut b = Vec::new();
        b.extend(sll.sll_family.to_ne_bytes());
        b.extend(sll.sll_protocol.to_ne_bytes());
        b.extend(sll.sll_ifindex.to_ne_bytes());
        b.extend(sll.sll_hatype.to_ne_bytes());
        b.push(sll.sll_pkttype);
        b.push(sll.sll_halen);
        b.extend(sll.sll_addr);
        let mut want = Vec::new();
        want.extend(17u16.to_ne_bytes()); // AF_PACKET
        want.extend([0x88, 0x09]); // ETH_P_SLOW, network order
        want.extend(7i32.to_ne_bytes());
        want.extend([0; 12]);
        assert_eq!(b, want);
        assert_eq!(sockaddr_ll(1, 0x0003).sll_protocol.to_ne_bytes(), [0, 3]);
    }

    #[test]
    fn packet_mreq_byte_for_byte() {
        let mr = packet_mreq(5, libc::PACKET_MR_PROMISC as u16);
        assert_eq!(std::mem::size_of::<libc::packet_mreq>(), 16);
        assert_eq!(
            (mr.mr_ifindex, mr.mr_type, mr.mr_alen, mr.mr_address),
            (5, 1, 0, [0; 8])
        );
    }

    #[test]
    fn control_messages_are_decoded() {
        // A PACKET_AUXDATA then an SCM_TIMESTAMPNS message, laid out as the
        // kernel does (cmsghdr, data, padding to 8 bytes).
        let aux_len = std::mem::size_of::<libc::tpacket_auxdata>();
        let ts_len = std::mem::size_of::<libc::timespec>();
        let hdr = std::mem::size_of::<libc::cmsghdr>();
        // glibc's layout on 64-bit: size_t cmsg_len, int level, int type.
        assert_eq!(hdr, 16);
        #[repr(C, align(8))]
        struct Control([u8; 128]);
        let mut buf = Control([0; 128]);
        let bytes = &mut buf.0;
        let mut put = |at: usize, level: i32, ty: i32, data: &[u8]| {
            let len = hdr + data.len();
            bytes[at..at + 8].copy_from_slice(&len.to_ne_bytes());
            bytes[at + 8..at + 12].copy_from_slice(&level.to_ne_bytes());
            bytes[at + 12..at + 16].copy_from_slice(&ty.to_ne_bytes());
            bytes[at + hdr..at + len].copy_from_slice(data);
            at + len.div_ceil(8) * 8
        };
        let aux = libc::tpacket_auxdata {
            tp_status: libc::TP_STATUS_VLAN_VALID | libc::TP_STATUS_VLAN_TPID_VALID,
            tp_len: 60,
            tp_snaplen: 60,
            tp_mac: 0,
            tp_net: 14,
            tp_vlan_tci: 100,
            tp_vlan_tpid: 0x88a8,
        };
        let mut aux_bytes = Vec::new();
        for v in [aux.tp_status, aux.tp_len, aux.tp_snaplen] {
            aux_bytes.extend(v.to_ne_bytes());
        }
        for v in [aux.tp_mac, aux.tp_net, aux.tp_vlan_tci, aux.tp_vlan_tpid] {
            aux_bytes.extend(v.to_ne_bytes());
        }
        assert_eq!(aux_bytes.len(), aux_len);
        let next = put(0, libc::SOL_PACKET, libc::PACKET_AUXDATA, &aux_bytes);
        let mut ts = Vec::new();
        ts.extend(3i64.to_ne_bytes());
        ts.extend(5i64.to_ne_bytes());
        assert_eq!(ts.len(), ts_len);
        let end = put(next, libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &ts);
        // SAFETY: msghdr is plain data; all-zero is valid.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = buf.0.as_mut_ptr().cast();
        msg.msg_controllen = end;
        // SAFETY: msg's control buffer is `buf`, alive and `end` bytes long.
        let (vlan, t) = unsafe { (auxdata_vlan(&msg), timestamp_ns(&msg)) };
        assert_eq!(vlan, Some((0x88a8, 100)));
        assert_eq!(t, Some(3_000_000_005));
        msg.msg_controllen = 0;
        // SAFETY: as above, with no control data.
        let (vlan, t) = unsafe { (auxdata_vlan(&msg), timestamp_ns(&msg)) };
        assert_eq!((vlan, t), (None, None));
    }
}
