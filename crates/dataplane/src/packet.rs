//! A member link as an AF_PACKET socket.
//!
//! Why each option:
//! - `PACKET_VNET_HDR`: frames come and go with the virtio-net header, so GSO
//!   super-frames and partial checksums cross the member untouched (the TAP
//!   side speaks the same header).
//! - `PACKET_IGNORE_OUTGOING`: with `ETH_P_ALL` the socket would otherwise
//!   read back every frame it (or the host) sends on the member.
//! - `PACKET_AUXDATA`: the kernel strips a received frame's 802.1Q tag into
//!   metadata before packet sockets see it; the tag is put back from the
//!   auxiliary data so VLAN trunks survive the bond.
//! - `PACKET_MR_PROMISC`: the member must accept frames for the bond's MAC,
//!   which is not its own. The membership ends when the socket closes.
//! - `SO_RCVBUFFORCE`/`SO_SNDBUFFORCE` (32 MiB by default): the default
//!   208 KiB holds three 64 KB GSO frames and loses packets under load.
//! - no `PACKET_QDISC_BYPASS`: frames go through the member's qdisc, so a
//!   `tbf` shaping a lab link (or any traffic control) is honoured.
//! - non-blocking sends: a full member drops (and counts) instead of
//!   stalling the thread that also feeds the other members.
//! - [`Receive`]: when the kernel moves the data frames (lagkit's BPF
//!   engine), the socket takes only what the control plane reads, so data
//!   frames are never copied to user space: bound to EtherType 0x8809 when
//!   slow protocols are all it needs (other frames never visit it), to the
//!   kernel's 802.2 protocol for Cisco's multicast, or to every frame with
//!   a filter (`SO_ATTACH_FILTER`) when it also reads ARP.
//!
//! Batching uses `recvmmsg`/`sendmmsg`; [`PacketConfig::batched`] = false
//! makes one system call per frame, to measure what batching is worth.
//!
//! The socket calls `nix` has no safe API for (`sockaddr_ll`, the
//! `SOL_PACKET` options, the filter, the batched reads with their control
//! messages) are `lagkit_sys::packet`'s; the rest are `nix`'s.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use lagkit_sys::packet as sys_packet;
use nix::errno::Errno;
use nix::sys::socket::{getsockopt, setsockopt, sockopt, AddressFamily, SockFlag, SockType};

use crate::device::{Counters, Device, DropReason, RxBatch, SendError, HEADROOM};
use crate::sys::{socket_cloexec, Link, OpenError, SysError};
use crate::vnet::{VnetHeader, HEADER_LEN};

/// The socket buffer size lagkit asks for by default (each direction).
pub const DEFAULT_SOCKET_BUFFER: usize = 32 << 20;

/// Messages per `recvmmsg`/`sendmmsg` call.
const CHUNK: usize = 64;

/// How to open a member socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketConfig {
    /// The member interface, in the calling thread's namespace.
    pub ifname: String,
    /// Receive buffer size asked for (the kernel doubles it for overhead).
    pub rcvbuf: usize,
    /// Send buffer size asked for.
    pub sndbuf: usize,
    /// Join the interface in promiscuous mode (needed unless the member's MAC is the bond's).
    pub promisc: bool,
    /// Use `recvmmsg`/`sendmmsg` batches (true) or one system call per frame.
    pub batched: bool,
    /// Which frames the socket reads. Sending is unaffected.
    pub receive: Receive,
}

/// Which received frames a member socket reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Receive {
    /// Every frame (the userspace engine forwards them).
    #[default]
    All,
    /// Control frames only: slow protocols (LACP, Marker: EtherType
    /// 0x8809), ARP, and frames to Cisco's multicast 01-00-0C-CC-CC-CC
    /// (PAgP, CDP). The socket taps every frame and a filter drops the
    /// rest, so each received frame still visits it: on a veth that costs
    /// about 1% of a request/response round trip.
    Control,
    /// Slow-protocol frames only (EtherType 0x8809). The socket is bound to
    /// that EtherType, so the kernel never hands it anything else.
    Slow,
    /// 802.2 frames (a length field where the EtherType would be: the
    /// kernel's `ETH_P_802_2`) to Cisco's multicast 01-00-0C-CC-CC-CC:
    /// PAgP, CDP. The socket is bound to that protocol and a filter drops
    /// 802.2 frames to other addresses (STP's, say), so no data frame ever
    /// visits it. With [`Receive::Slow`] beside it on the same interface:
    /// what a switch port whose data frames the kernel forwards hands its
    /// control plane.
    Cisco,
}

impl Receive {
    /// The classic BPF filter the socket gets, if any.
    fn filter(self) -> Option<&'static [libc::sock_filter]> {
        match self {
            Receive::Control => Some(&CONTROL_FILTER),
            Receive::Cisco => Some(&CISCO_FILTER),
            Receive::All | Receive::Slow => None,
        }
    }

    /// The protocol the socket is bound to (host order).
    fn protocol(self) -> u16 {
        match self {
            Receive::All | Receive::Control => libc::ETH_P_ALL as u16,
            Receive::Slow => libc::ETH_P_SLOW as u16,
            Receive::Cisco => libc::ETH_P_802_2 as u16,
        }
    }
}

impl PacketConfig {
    /// Defaults: 32 MiB buffers, promiscuous, batched.
    pub fn new(ifname: &str) -> PacketConfig {
        PacketConfig {
            ifname: ifname.to_owned(),
            rcvbuf: DEFAULT_SOCKET_BUFFER,
            sndbuf: DEFAULT_SOCKET_BUFFER,
            promisc: true,
            batched: true,
            receive: Receive::All,
        }
    }
}

/// One classic BPF instruction.
const fn op(code: u32, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}
const LDH: u32 = libc::BPF_LD | libc::BPF_H | libc::BPF_ABS;
const LDW: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JEQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const RET: u32 = libc::BPF_RET | libc::BPF_K;

/// Classic BPF: accept a frame (whole) if its EtherType is 0x8809 or 0x0806
/// or its destination is 01-00-0C-CC-CC-CC, else drop it. Offsets count
/// from the Ethernet header (a raw packet socket filters from there); an
/// 802.1Q tag has already been moved into metadata.
/// Jumps count from the next instruction: index 7 drops, 8 accepts.
const CONTROL_FILTER: [libc::sock_filter; 9] = [
    op(LDH, 0, 0, 12),
    op(JEQ, 6, 0, 0x8809),
    op(JEQ, 5, 0, 0x0806),
    op(LDW, 0, 0, 0),
    op(JEQ, 0, 2, 0x0100_0ccc),
    op(LDH, 0, 0, 4),
    op(JEQ, 1, 0, 0xcccc),
    op(RET, 0, 0, 0),
    // Up to 256 KiB: all of any frame.
    op(RET, 0, 0, 0x40000),
];

/// Classic BPF: accept a frame (whole) if its destination is
/// 01-00-0C-CC-CC-CC, else drop it.
/// Jumps count from the next instruction: index 4 drops, 5 accepts.
const CISCO_FILTER: [libc::sock_filter; 6] = [
    op(LDW, 0, 0, 0),
    op(JEQ, 0, 2, 0x0100_0ccc),
    op(LDH, 0, 0, 4),
    op(JEQ, 1, 0, 0xcccc),
    op(RET, 0, 0, 0),
    op(RET, 0, 0, 0x40000),
];

/// An AF_PACKET socket bound to one member interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    link: Link,
    ifindex: u32,
    chunk: usize,
    counters: Arc<Counters>,
}

fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
    op: &'static str,
) -> Result<(), SysError> {
    sys_packet::setsockopt_int(fd.as_fd(), level, name, v).map_err(|e| SysError::new(op, e))
}

/// Sets a socket buffer size with `force` (`SO_RCVBUFFORCE`), or without
/// CAP_NET_ADMIN with `plain` (`SO_RCVBUF`), clamped to `c_int`.
fn set_buffer<F, P>(
    fd: &OwnedFd,
    force: F,
    plain: P,
    size: usize,
    op: &'static str,
) -> Result<(), SysError>
where
    F: nix::sys::socket::SetSockOpt<Val = usize>,
    P: nix::sys::socket::SetSockOpt<Val = usize>,
{
    let v = size.min(libc::c_int::MAX as usize);
    match setsockopt(fd, force, &v) {
        // Without CAP_NET_ADMIN, fall back to what net.core.[rw]mem_max allows.
        Err(Errno::EPERM) => setsockopt(fd, plain, &v),
        r => r,
    }
    .map_err(|e| SysError::new(op, e))
}

impl PacketSocket {
    /// Opens and binds a member socket in the calling thread's network namespace.
    pub fn open(cfg: &PacketConfig) -> Result<PacketSocket, OpenError> {
        let link = Link::open(&cfg.ifname)?;
        let ifindex = link
            .ifindex()
            .map_err(|e| OpenError::from_sys(e, &cfg.ifname))?;
        // Protocol 0: receive nothing until bound to the member, so no frame
        // from another interface slips in between socket() and bind().
        let fd = socket_cloexec(
            AddressFamily::Packet,
            SockType::Raw,
            SockFlag::SOCK_NONBLOCK,
        )?;
        set_int(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_VNET_HDR,
            1,
            "setsockopt(PACKET_VNET_HDR)",
        )?;
        set_int(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_AUXDATA,
            1,
            "setsockopt(PACKET_AUXDATA)",
        )?;
        set_int(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            1,
            "setsockopt(PACKET_IGNORE_OUTGOING)",
        )?;
        if let Some(filter) = cfg.receive.filter() {
            // Before bind: no data frame is ever queued.
            sys_packet::attach_filter(fd.as_fd(), filter)
                .map_err(|e| SysError::new("setsockopt(SO_ATTACH_FILTER)", e))?;
        }
        set_buffer(
            &fd,
            sockopt::RcvBufForce,
            sockopt::RcvBuf,
            cfg.rcvbuf,
            "setsockopt(SO_RCVBUFFORCE)",
        )?;
        set_buffer(
            &fd,
            sockopt::SndBufForce,
            sockopt::SndBuf,
            cfg.sndbuf,
            "setsockopt(SO_SNDBUFFORCE)",
        )?;

        bind_packet(&fd, ifindex, cfg.receive.protocol())
            .map_err(|e| OpenError::from_sys(e, &cfg.ifname))?;

        if cfg.promisc {
            sys_packet::add_membership(fd.as_fd(), ifindex, libc::PACKET_MR_PROMISC as u16)
                .map_err(|e| SysError::new("setsockopt(PACKET_ADD_MEMBERSHIP)", e))?;
        }
        Ok(PacketSocket::bound(fd, link, ifindex, cfg))
    }

    /// The member socket behind `fd`, which another process opened and
    /// bound to `cfg.ifname` as [`PacketSocket::open`] does (handed over,
    /// see [`crate::handoff`]): checked to be a packet socket bound to that
    /// interface. Its options, filter and membership are the socket's and
    /// stay as they were set; frames it queued meanwhile are read next.
    pub fn adopt(fd: OwnedFd, cfg: &PacketConfig) -> Result<PacketSocket, OpenError> {
        let link = Link::open(&cfg.ifname)?;
        let ifindex = link
            .ifindex()
            .map_err(|e| OpenError::from_sys(e, &cfg.ifname))?;
        if sys_packet::bound_ifindex(fd.as_fd()).ok() != Some(ifindex) {
            return Err(OpenError::NotItsDevice(cfg.ifname.clone()));
        }
        Ok(PacketSocket::bound(fd, link, ifindex, cfg))
    }

    /// The socket `fd`, bound to `link` (index `ifindex`) as `cfg` says.
    fn bound(fd: OwnedFd, link: Link, ifindex: u32, cfg: &PacketConfig) -> PacketSocket {
        PacketSocket {
            fd,
            link,
            ifindex,
            chunk: if cfg.batched { CHUNK } else { 1 },
            counters: Counters::new(),
        }
    }

    /// A second descriptor of the same socket (to hand over).
    pub fn try_clone_fd(&self) -> std::io::Result<OwnedFd> {
        self.fd.try_clone()
    }

    /// From now on, reads only what `what` takes: its filter first, then
    /// bound to its protocol, so the kernel stops handing the socket
    /// anything else (frames already queued stay: a reader that must not
    /// see data frames checks each frame too). Bound to one protocol, the
    /// socket is no longer visited by the frames of any other, which a
    /// socket for every protocol is, filter or not.
    pub fn receive_only(&self, what: Receive) -> Result<(), SysError> {
        if let Some(filter) = what.filter() {
            sys_packet::attach_filter(self.fd.as_fd(), filter)
                .map_err(|e| SysError::new("setsockopt(SO_ATTACH_FILTER)", e))?;
        }
        bind_packet(&self.fd, self.ifindex, what.protocol())
    }

    /// The member interface: MAC, MTU, carrier, up/down.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The member's interface index.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The counters, shareable with reporting threads.
    pub fn counters_arc(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// The socket buffer sizes the kernel granted (receive, send), as `getsockopt` reports them.
    pub fn buffer_sizes(&self) -> Result<(usize, usize), SysError> {
        let r = getsockopt(&self.fd, sockopt::RcvBuf)
            .map_err(|e| SysError::new("getsockopt(SO_RCVBUF)", e))?;
        let s = getsockopt(&self.fd, sockopt::SndBuf)
            .map_err(|e| SysError::new("getsockopt(SO_SNDBUF)", e))?;
        Ok((r, s))
    }

    /// Reads (and resets) the kernel's drop count for this socket
    /// (`PACKET_STATISTICS`), adds it to [`DropReason::RxKernel`] and returns it.
    pub fn collect_kernel_drops(&self) -> Result<u64, SysError> {
        let st = sys_packet::statistics(self.fd.as_fd())
            .map_err(|e| SysError::new("getsockopt(PACKET_STATISTICS)", e))?;
        let d = u64::from(st.tp_drops);
        if d > 0 {
            self.counters.count_drop(DropReason::RxKernel, d);
        }
        Ok(d)
    }

    /// Sends packets in chunks; returns how many the kernel took and the last error.
    fn send_many(&self, packets: &[&[u8]]) -> (usize, Option<SendError>) {
        let mut sent = 0;
        let mut last = None;
        let mut rest = packets;
        while !rest.is_empty() {
            if rest[0].len() < HEADER_LEN {
                self.counters.count_drop(DropReason::TxRejected, 1);
                last = Some(SendError::Malformed);
                rest = &rest[1..];
                continue;
            }
            // End a chunk before any malformed packet so indices stay simple.
            let n = rest
                .iter()
                .take(self.chunk)
                .take_while(|p| p.len() >= HEADER_LEN)
                .count();
            match self.send_chunk(&rest[..n]) {
                Ok(k) => {
                    for p in &rest[..k] {
                        self.counters.count_tx(p);
                    }
                    sent += k;
                    rest = &rest[k..];
                }
                Err(e) => {
                    let err = SendError::from_errno(e);
                    last = Some(err);
                    if err == SendError::Full {
                        self.counters
                            .count_drop(DropReason::TxFull, rest.len() as u64);
                        break;
                    }
                    self.counters.count_drop(err.reason(), 1);
                    rest = &rest[1..];
                }
            }
        }
        (sent, last)
    }

    /// One `recvmmsg` into up to `self.chunk` free slots. Returns messages
    /// read (committed or dropped), or the errno.
    fn recv_chunk(&self, batch: &mut RxBatch) -> Result<usize, Errno> {
        let mut results: [Option<(usize, usize)>; CHUNK] = [None; CHUNK];
        let got = {
            let free = batch.free_slots();
            let n = free.len().min(self.chunk);
            if n == 0 {
                return Ok(0);
            }
            let mut got = [sys_packet::Received::default(); CHUNK];
            let r = sys_packet::recvmmsg(self.fd.as_fd(), &mut free[..n], HEADROOM, &mut got)?;
            for (k, m) in got.iter().take(r).enumerate() {
                if m.truncated {
                    self.counters.count_drop(DropReason::RxTruncated, 1);
                    continue;
                }
                if m.len < HEADER_LEN + 14 {
                    self.counters.count_drop(DropReason::RxMalformed, 1);
                    continue;
                }
                results[k] = Some(match m.vlan {
                    Some((tpid, tci)) => reinsert_vlan(&mut free[k], m.len, tpid, tci),
                    None => (HEADROOM, m.len),
                });
            }
            r
        };
        let mut committed = 0;
        for (k, res) in results.iter().take(got).enumerate() {
            if let Some((start, len)) = *res {
                batch.commit_free(k - committed, start, len);
                committed += 1;
                self.counters.count_rx(batch.packet(batch.len() - 1));
            }
        }
        Ok(got)
    }

    /// One `sendmmsg` of up to `CHUNK` packets; returns how many the kernel took.
    fn send_chunk(&self, packets: &[&[u8]]) -> Result<usize, Errno> {
        let n = packets.len().min(CHUNK);
        loop {
            match sys_packet::sendmmsg(self.fd.as_fd(), &packets[..n]) {
                Err(Errno::EINTR) => continue,
                r => return r,
            }
        }
    }
}

/// Binds packet socket `fd` to interface `ifindex` and EtherType
/// `protocol` (host order; `ETH_P_ALL` for every frame).
pub(crate) fn bind_packet(fd: &OwnedFd, ifindex: u32, protocol: u16) -> Result<(), SysError> {
    sys_packet::bind(fd.as_fd(), ifindex, protocol).map_err(|e| SysError::new("bind(AF_PACKET)", e))
}

/// Puts a VLAN tag back after the MAC addresses of the packet in `slot`
/// (received at `HEADROOM`, `len` bytes). Uses the headroom, so only the
/// 22 bytes of header and MACs move. Returns the packet's new (start, len).
fn reinsert_vlan(slot: &mut [u8], len: usize, tpid: u16, tci: u16) -> (usize, usize) {
    const MOVE: usize = HEADER_LEN + 12;
    if len < MOVE || HEADROOM < 4 || slot.len() < HEADROOM + len {
        return (HEADROOM, len);
    }
    slot.copy_within(HEADROOM..HEADROOM + MOVE, HEADROOM - 4);
    let s = HEADROOM - 4;
    slot[s + MOVE..s + MOVE + 2].copy_from_slice(&tpid.to_be_bytes());
    slot[s + MOVE + 2..s + MOVE + 4].copy_from_slice(&tci.to_be_bytes());
    // Offsets in the header count from the frame start: the tag moved them.
    let mut h = VnetHeader::new_unchecked(&mut slot[s..s + HEADER_LEN]);
    if h.flags().needs_csum() {
        let v = h.csum_start().saturating_add(4);
        h.set_csum_start(v);
    }
    if h.hdr_len() != 0 {
        let v = h.hdr_len().saturating_add(4);
        h.set_hdr_len(v);
    }
    (s, len + 4)
}

impl Device for PacketSocket {
    fn name(&self) -> &str {
        self.link.name()
    }

    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        let before = batch.len();
        loop {
            if batch.is_full() {
                break;
            }
            let want = (batch.capacity() - batch.len()).min(self.chunk);
            match self.recv_chunk(batch) {
                Ok(n) if n < want => break,
                Ok(_) => continue,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(errno) => {
                    if batch.len() == before {
                        return Err(SysError {
                            op: "recvmmsg(AF_PACKET)",
                            errno,
                        });
                    }
                    break;
                }
            }
        }
        Ok(batch.len() - before)
    }

    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        match self.send_many(&[packet]) {
            (1, _) => Ok(()),
            (_, err) => Err(err.unwrap_or(SendError::Full)),
        }
    }

    /// Sends in `sendmmsg` chunks. When the member's queue is full the rest of
    /// the batch is dropped at once: retrying immediately would only burn CPU.
    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        self.send_many(packets).0
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn refresh_counters(&self) {
        let _ = self.collect_kernel_drops();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vnet::{VnetFlags, VnetRepr};

    /// Runs a classic BPF program of loads, equality jumps and returns (all
    /// the filters here use) over `frame`: the bytes it accepts.
    fn run_filter(prog: &[libc::sock_filter], frame: &[u8]) -> u32 {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let op = prog[pc];
            let at = op.k as usize;
            pc += 1;
            match u32::from(op.code) {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let Some(b) = frame.get(at..at + 4) else {
                        return 0;
                    };
                    a = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                }
                c if c == libc::BPF_LD | libc::BPF_H | libc::BPF_ABS => {
                    let Some(b) = frame.get(at..at + 2) else {
                        return 0;
                    };
                    a = u32::from(u16::from_be_bytes([b[0], b[1]]));
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += usize::from(if a == op.k { op.jt } else { op.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return op.k,
                c => panic!("opcode {c:#x} not modelled"),
            }
        }
    }

    fn frame_to(dst: [u8; 6], ethertype: u16) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend([2, 0, 0, 0, 0, 1]);
        f.extend(ethertype.to_be_bytes());
        f.extend([0u8; 46]);
        f
    }

    #[test]
    fn the_filters_take_only_their_control_frames() {
        let slow = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x02];
        let cisco = [0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc];
        let cases = [
            (slow, 0x8809, true, false),
            (cisco, 0x0032, true, true),
            ([0xff; 6], 0x0806, true, false),
            ([0xff; 6], 0x0800, false, false),
            ([0x02, 0, 0, 0, 0, 9], 0x0800, false, false),
            // Near misses: STP's address, CDP-like with another last byte.
            ([0x01, 0x80, 0xc2, 0x00, 0x00, 0x00], 0x0026, false, false),
            ([0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e], 0x88cc, false, false),
            ([0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcd], 0x0032, false, false),
            ([0x01, 0x00, 0x0c, 0xcc, 0x00, 0x02], 0x0800, false, false),
        ];
        for (dst, ethertype, control, cisco) in cases {
            let f = frame_to(dst, ethertype);
            let what = format!("{dst:02x?} {ethertype:#06x}");
            assert_eq!(
                run_filter(&CONTROL_FILTER, &f) > 0,
                control,
                "control: {what}"
            );
            assert_eq!(run_filter(&CISCO_FILTER, &f) > 0, cisco, "cisco: {what}");
        }
    }

    #[test]
    fn vlan_reinsert_moves_header_and_macs() {
        let repr = VnetRepr {
            flags: VnetFlags(VnetFlags::NEEDS_CSUM),
            gso_type: crate::vnet::GsoType::TcpV4,
            hdr_len: 66,
            gso_size: 1448,
            csum_start: 34,
            csum_offset: 16,
            ..VnetRepr::PLAIN
        };
        let mut slot = vec![0xeeu8; HEADROOM + 100];
        let frame: Vec<u8> = (0..60u8).collect();
        slot[HEADROOM..HEADROOM + 10].copy_from_slice(&repr.to_bytes());
        slot[HEADROOM + 10..HEADROOM + 70].copy_from_slice(&frame);
        let (s, l) = reinsert_vlan(&mut slot, 70, 0x8100, 0x0064);
        assert_eq!((s, l), (0, 74));
        let p = &slot[s..s + l];
        let h = VnetRepr::parse(&VnetHeader::new_unchecked(p)).unwrap();
        assert_eq!((h.csum_start, h.hdr_len, h.gso_size), (38, 70, 1448));
        assert_eq!(&p[10..22], &frame[..12]);
        assert_eq!(&p[22..26], &[0x81, 0x00, 0x00, 0x64]);
        assert_eq!(&p[26..], &frame[12..]);
    }

    #[test]
    fn vlan_reinsert_refuses_tiny() {
        let mut slot = vec![0u8; 30];
        assert_eq!(reinsert_vlan(&mut slot, 15, 0x8100, 1), (HEADROOM, 15));
    }
}
