//! The TAP device: the bond's face towards the host's own network stack.
//!
//! Why these flags: `IFF_VNET_HDR` with `TUNSETOFFLOAD` lets the host stack
//! hand us 64 KB TCP super-frames with partial checksums instead of cutting
//! and checksumming every 1500-byte frame in software; that alone is the
//! difference between ~2 and ~15 Gbit/s here. We advertise
//! `TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN` by default: exactly
//! what the member side (AF_PACKET with `PACKET_VNET_HDR`) can pass on to
//! veth and real NICs, which segment in hardware or in the kernel's software
//! GSO if they must. UDP segmentation (`TUN_F_USO4/6`) is left off by default
//! because few NICs offload it, and UFO (`TUN_F_UFO`) is deprecated; both can
//! be enabled through [`Offloads`].
//!
//! The TAP is not persistent: it disappears when its last queue's
//! descriptor is closed, so a crashed daemon leaves nothing behind.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use lagkit_sys::tap as sys_tap;
use nix::errno::Errno;
use nix::fcntl::{open, OFlag};
use nix::sys::stat::Mode;

use crate::device::{Counters, Device, DropReason, RxBatch, SendError};
use crate::sys::{valid_ifname, Link, OpenError, SysError};
use crate::vnet::HEADER_LEN;

/// The offloads a TAP accepts from the host stack (`TUNSETOFFLOAD` bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Offloads(pub u32);

impl Offloads {
    /// Partial checksums (`TUN_F_CSUM`); every other bit requires it.
    pub const CSUM: u32 = libc::TUN_F_CSUM;
    /// TCP/IPv4 segmentation (`TUN_F_TSO4`).
    pub const TSO4: u32 = libc::TUN_F_TSO4;
    /// TCP/IPv6 segmentation (`TUN_F_TSO6`).
    pub const TSO6: u32 = libc::TUN_F_TSO6;
    /// TSO with the ECN bit (`TUN_F_TSO_ECN`).
    pub const TSO_ECN: u32 = libc::TUN_F_TSO_ECN;
    /// UDP/IPv4 segmentation (`TUN_F_USO4`, kernel 6.2+).
    pub const USO4: u32 = libc::TUN_F_USO4;
    /// UDP/IPv6 segmentation (`TUN_F_USO6`, kernel 6.2+).
    pub const USO6: u32 = libc::TUN_F_USO6;

    /// No offloads: every frame arrives complete and at most MTU-sized.
    pub const NONE: Offloads = Offloads(0);
    /// lagkit's default: checksum and TCP segmentation offloads.
    pub const DEFAULT: Offloads = Offloads(Self::CSUM | Self::TSO4 | Self::TSO6 | Self::TSO_ECN);
}

impl Default for Offloads {
    fn default() -> Self {
        Offloads::DEFAULT
    }
}

/// How to create or attach a TAP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapConfig {
    /// Interface name; `lk%d` lets the kernel pick a number.
    pub name: String,
    /// Open with `IFF_MULTI_QUEUE`: opening the same name again attaches another queue.
    pub multi_queue: bool,
    /// Offloads to advertise.
    pub offloads: Offloads,
}

impl TapConfig {
    /// A single-queue TAP with the default offloads.
    pub fn new(name: &str) -> TapConfig {
        TapConfig {
            name: name.to_owned(),
            multi_queue: false,
            offloads: Offloads::DEFAULT,
        }
    }
}

/// One queue of a TAP device, opened non-blocking with a 10-byte virtio-net header.
#[derive(Debug)]
pub struct Tap {
    fd: OwnedFd,
    link: Link,
    counters: Arc<Counters>,
}

impl Tap {
    /// Creates (or attaches to) a TAP in the calling thread's network namespace.
    pub fn open(cfg: &TapConfig) -> Result<Tap, OpenError> {
        if !valid_ifname(&cfg.name) {
            return Err(OpenError::BadName(cfg.name.clone()));
        }
        let fd = open(
            c"/dev/net/tun",
            OFlag::O_RDWR | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| OpenError::from_sys(SysError::new("open(/dev/net/tun)", e), &cfg.name))?;

        let mut flags = libc::IFF_TAP | libc::IFF_NO_PI | libc::IFF_VNET_HDR;
        if cfg.multi_queue {
            flags |= libc::IFF_MULTI_QUEUE;
        }
        let name = sys_tap::set_iff(fd.as_fd(), &cfg.name, flags as libc::c_short)
            .map_err(|e| SysError::new("ioctl(TUNSETIFF)", e))?;

        sys_tap::set_vnet_hdr_size(fd.as_fd(), HEADER_LEN as libc::c_int)
            .map_err(|e| SysError::new("ioctl(TUNSETVNETHDRSZ)", e))?;
        // Little-endian header fields whatever the host; on x86/arm64 this is
        // already the default, and kernels without the knob refuse it harmlessly.
        let _ = sys_tap::set_vnet_le(fd.as_fd(), true);
        // TUNSETOFFLOAD takes its argument by value.
        sys_tap::set_offload(fd.as_fd(), cfg.offloads.0)
            .map_err(|e| SysError::new("ioctl(TUNSETOFFLOAD)", e))?;

        let link = Link::open(&name)?;
        Ok(Tap {
            fd,
            link,
            counters: Counters::new(),
        })
    }

    /// The TAP behind `fd`, a descriptor another process attached to
    /// interface `name` (handed over, see [`crate::handoff`]): checked to
    /// be a TAP of that name with the virtio-net header. Its header size,
    /// offloads and carrier are the device's and stay as they were set.
    pub fn adopt(fd: OwnedFd, name: &str) -> Result<Tap, OpenError> {
        let (attached, flags) = sys_tap::get_iff(fd.as_fd())
            .map_err(|e| OpenError::from_sys(SysError::new("ioctl(TUNGETIFF)", e), name))?;
        let want = (libc::IFF_TAP | libc::IFF_VNET_HDR) as libc::c_short;
        if attached != name || flags & want != want {
            return Err(OpenError::NotItsDevice(name.to_string()));
        }
        let link = Link::open(name)?;
        Ok(Tap {
            fd,
            link,
            counters: Counters::new(),
        })
    }

    /// A second descriptor of the same TAP (to hand over: the device lives
    /// while one is open).
    pub fn try_clone_fd(&self) -> std::io::Result<OwnedFd> {
        self.fd.try_clone()
    }

    /// The interface handle: MAC, MTU, up/down, carrier.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Sets the interface's carrier (`TUNSETCARRIER`): off, the host sees
    /// the interface as a NIC without link (`NO-CARRIER`, operstate
    /// `DOWN`) until it is set on again.
    pub fn set_carrier(&self, on: bool) -> Result<(), SysError> {
        sys_tap::set_carrier(self.fd.as_fd(), on)
            .map_err(|e| SysError::new("ioctl(TUNSETCARRIER)", e))
    }

    /// The counters, shareable with reporting threads.
    pub fn counters_arc(&self) -> Arc<Counters> {
        self.counters.clone()
    }
}

impl Device for Tap {
    fn name(&self) -> &str {
        self.link.name()
    }

    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        let mut got = 0;
        while let Some(slot) = batch.spare() {
            let cap = slot.len();
            let n = match nix::unistd::read(&self.fd, slot) {
                Ok(n) => n,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(errno) if got == 0 => {
                    return Err(SysError {
                        op: "read(tap)",
                        errno,
                    })
                }
                Err(_) => break,
            };
            if n < HEADER_LEN + 14 {
                self.counters.count_drop(DropReason::RxMalformed, 1);
                continue;
            }
            if n == cap {
                self.counters.count_drop(DropReason::RxTruncated, 1);
                continue;
            }
            batch.commit(n);
            self.counters.count_rx(batch.packet(batch.len() - 1));
            got += 1;
        }
        Ok(got)
    }

    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        let r = if packet.len() < HEADER_LEN {
            Err(SendError::Malformed)
        } else {
            loop {
                match nix::unistd::write(&self.fd, packet) {
                    Ok(_) => break Ok(()),
                    Err(Errno::EINTR) => continue,
                    Err(e) => break Err(SendError::from_errno(e)),
                }
            }
        };
        match r {
            Ok(()) => self.counters.count_tx(packet),
            Err(e) => self.counters.count_drop(e.reason(), 1),
        }
        r
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }
}
