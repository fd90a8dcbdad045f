//! The TUN/TAP ioctls on a descriptor of `/dev/net/tun`: attaching it to
//! an interface (`TUNSETIFF`), the virtio-net header (`TUNSETVNETHDRSZ`,
//! `TUNSETVNETLE`), the offloads (`TUNSETOFFLOAD`) and the carrier
//! (`TUNSETCARRIER`).
//!
//! `nix` declares no TUN requests, and its ioctl macros generate `unsafe`
//! functions, so each one is written here once as a safe function. Open
//! the device itself with `nix::fcntl::open`.

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;

use crate::ioctl::{ifreq, ifreq_name, ioctl_ifreq};

/// The `ifreq` [`set_iff`] sends: the name and the `IFF_*` flags.
fn iff_req(name: &str, flags: libc::c_short) -> libc::ifreq {
    let mut ifr = ifreq(name);
    ifr.ifr_ifru.ifru_flags = flags;
    ifr
}

/// Attaches `fd` (an open `/dev/net/tun`) to the TUN/TAP interface `name`,
/// creating it if needed, with `flags` (`IFF_TAP | IFF_NO_PI | ...`;
/// `TUNSETIFF`). `name` may hold a `%d` for the kernel to fill in; an
/// invalid name is sent empty (check it with
/// [`valid_ifname`](crate::ioctl::valid_ifname) first). Returns the
/// interface's name.
pub fn set_iff(fd: BorrowedFd<'_>, name: &str, flags: libc::c_short) -> Result<String, Errno> {
    let mut ifr = iff_req(name, flags);
    // SAFETY: TUNSETIFF reads the name and flags in ifr and writes the
    // chosen name back into it; nothing outside ifr.
    unsafe { ioctl_ifreq(fd, libc::TUNSETIFF, &mut ifr)? };
    Ok(ifreq_name(&ifr))
}

/// The interface `fd` (an open `/dev/net/tun`) is attached to and its
/// `IFF_*` flags (`TUNGETIFF`): how a descriptor handed over by another
/// process is checked before it is used.
pub fn get_iff(fd: BorrowedFd<'_>) -> Result<(String, libc::c_short), Errno> {
    let mut ifr = iff_req("", 0);
    // SAFETY: TUNGETIFF writes the attached interface's name and flags
    // into ifr; nothing outside it.
    unsafe { ioctl_ifreq(fd, libc::TUNGETIFF, &mut ifr)? };
    // SAFETY: TUNGETIFF set the flags member of the union.
    let flags = unsafe { ifr.ifr_ifru.ifru_flags };
    Ok((ifreq_name(&ifr), flags))
}

/// Issues a TUN ioctl whose argument points to one `c_int` the kernel reads.
fn ioctl_int_ptr(fd: BorrowedFd<'_>, req: libc::Ioctl, val: libc::c_int) -> Result<(), Errno> {
    // SAFETY: `val` lives across the call; the requests passed here
    // (TUNSETVNETHDRSZ, TUNSETVNETLE, TUNSETCARRIER) read one int through
    // the pointer.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req, &val as *const libc::c_int) };
    Errno::result(r).map(drop)
}

/// Sets the size of the virtio-net header that precedes every frame
/// (`TUNSETVNETHDRSZ`).
pub fn set_vnet_hdr_size(fd: BorrowedFd<'_>, size: libc::c_int) -> Result<(), Errno> {
    ioctl_int_ptr(fd, libc::TUNSETVNETHDRSZ, size)
}

/// Makes the virtio-net header's fields little-endian (or native) whatever
/// the host (`TUNSETVNETLE`).
pub fn set_vnet_le(fd: BorrowedFd<'_>, le: bool) -> Result<(), Errno> {
    ioctl_int_ptr(fd, libc::TUNSETVNETLE, libc::c_int::from(le))
}

/// Sets the offloads the device accepts from the host stack
/// (`TUNSETOFFLOAD`, `TUN_F_*` bits; the argument is passed by value).
pub fn set_offload(fd: BorrowedFd<'_>, offloads: u32) -> Result<(), Errno> {
    // SAFETY: TUNSETOFFLOAD takes an integer argument, no pointer.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            libc::TUNSETOFFLOAD,
            libc::c_ulong::from(offloads),
        )
    };
    Errno::result(r).map(drop)
}

/// `TUNSETCARRIER`, `_IOW('T', 226, int)` (`<linux/if_tun.h>`; `libc`
/// does not declare it).
const TUNSETCARRIER: libc::Ioctl = 0x4004_54e2;

/// Sets the interface's carrier (`TUNSETCARRIER`, Linux 4.20 and newer):
/// with it off the interface shows `NO-CARRIER` and its operstate is
/// `DOWN`, as a NIC without link. The kernel turns it off by itself when
/// the last descriptor attached to the device closes.
pub fn set_carrier(fd: BorrowedFd<'_>, on: bool) -> Result<(), Errno> {
    ioctl_int_ptr(fd, TUNSETCARRIER, libc::c_int::from(on))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iff_request_holds_name_and_flags() {
        let flags = (libc::IFF_TAP | libc::IFF_NO_PI | libc::IFF_VNET_HDR) as libc::c_short;
        let ifr = iff_req("lk%d", flags);
        let name: Vec<u8> = ifr.ifr_name.iter().map(|&c| c as u8).collect();
        assert_eq!(&name[..5], b"lk%d\0");
        assert!(name[5..].iter().all(|&b| b == 0));
        // SAFETY: the union started all-zero and only the flags were set.
        let f = unsafe { ifr.ifr_ifru.ifru_flags };
        assert_eq!(f, 0x4000 | 0x1000 | 0x0002);
    }
}
