//! Interface ioctls on a control socket: index, MAC, MTU and flags
//! (`SIOC[GS]IF*`) and the `SIOCETHTOOL` commands lagkit uses (link state,
//! speed and duplex, device features).
//!
//! `nix` has ioctl macros but no safe wrapper for these requests and no
//! ethtool structures, so each request is written here once, as a safe
//! function over a socket the caller owns. The calls reach the interface
//! in the network namespace of that socket. Each function is one ioctl and
//! returns its errno; the caller names the operation in its own error.

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;

/// Checks a name the way the kernel's `dev_valid_name` does: 1 to 15
/// bytes, not `.` or `..`, without `/`, `:`, NUL or whitespace.
pub fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < libc::IFNAMSIZ
        && name != "."
        && name != ".."
        && !name
            .bytes()
            .any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace())
}

/// The `ifr_name` field for `name`: its bytes, NUL-padded; all zero (a
/// name the kernel answers with `ENODEV`) if `name` is not valid.
pub fn ifr_name(name: &str) -> [u8; libc::IFNAMSIZ] {
    let mut out = [0u8; libc::IFNAMSIZ];
    if valid_ifname(name) {
        out[..name.len()].copy_from_slice(name.as_bytes());
    }
    out
}

/// An all-zero `struct ifreq` naming `name` (see [`ifr_name`]).
pub(crate) fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain old data (a name and a union of integers,
    // socket addresses and a pointer); all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(ifr_name(name)) {
        *d = s as libc::c_char;
    }
    ifr
}

/// The (possibly kernel-chosen) name in an `ifreq`.
pub(crate) fn ifreq_name(ifr: &libc::ifreq) -> String {
    let bytes: Vec<u8> = ifr
        .ifr_name
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Issues an ioctl whose argument is a pointer to `ifr`, for requests
/// that read and write nothing but the `ifreq` itself.
///
/// # Safety
/// `req` must be a request that accesses at most the `struct ifreq` its
/// argument points to (not memory that a pointer in the union refers to,
/// unless the caller set that pointer to memory valid for the request).
pub(crate) unsafe fn ioctl_ifreq(
    fd: BorrowedFd<'_>,
    req: libc::Ioctl,
    ifr: &mut libc::ifreq,
) -> Result<(), Errno> {
    // SAFETY: ifr is a valid, exclusively borrowed ifreq for the duration
    // of the call; the caller vouches for what `req` does with it.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req, ifr as *mut libc::ifreq) };
    Errno::result(r).map(drop)
}

/// The interface index of `name` (`SIOCGIFINDEX`).
pub fn ifindex(fd: BorrowedFd<'_>, name: &str) -> Result<i32, Errno> {
    let mut ifr = ifreq(name);
    // SAFETY: SIOCGIFINDEX reads the name and writes the index, both in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCGIFINDEX, &mut ifr)? };
    // SAFETY: the kernel filled the ifindex member of the union (and all
    // of the union is initialised: ifreq started all-zero).
    Ok(unsafe { ifr.ifr_ifru.ifru_ifindex })
}

/// The hardware (MAC) address of `name` (`SIOCGIFHWADDR`).
pub fn hwaddr(fd: BorrowedFd<'_>, name: &str) -> Result<[u8; 6], Errno> {
    let mut ifr = ifreq(name);
    // SAFETY: SIOCGIFHWADDR reads the name and writes a sockaddr, both in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCGIFHWADDR, &mut ifr)? };
    // SAFETY: the kernel filled the hwaddr member of the union (which
    // started all-zero).
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }
    Ok(mac)
}

/// The `ifreq` [`set_hwaddr`] sends: `name`, `ARPHRD_ETHER` and `mac`.
fn hwaddr_req(name: &str, mac: [u8; 6]) -> libc::ifreq {
    let mut ifr = ifreq(name);
    let mut sa = libc::sockaddr {
        sa_family: libc::ARPHRD_ETHER,
        sa_data: [0; 14],
    };
    for (d, s) in sa.sa_data.iter_mut().zip(mac) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_hwaddr = sa;
    ifr
}

/// Sets the MAC address of `name` (`SIOCSIFHWADDR`, `ARPHRD_ETHER`).
pub fn set_hwaddr(fd: BorrowedFd<'_>, name: &str, mac: [u8; 6]) -> Result<(), Errno> {
    let mut ifr = hwaddr_req(name, mac);
    // SAFETY: SIOCSIFHWADDR reads the name and the sockaddr in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCSIFHWADDR, &mut ifr) }
}

/// The MTU of `name` (`SIOCGIFMTU`).
pub fn mtu(fd: BorrowedFd<'_>, name: &str) -> Result<i32, Errno> {
    let mut ifr = ifreq(name);
    // SAFETY: SIOCGIFMTU reads the name and writes the MTU, both in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCGIFMTU, &mut ifr)? };
    // SAFETY: the kernel filled the mtu member of the union (which started
    // all-zero).
    Ok(unsafe { ifr.ifr_ifru.ifru_mtu })
}

/// Sets the MTU of `name` (`SIOCSIFMTU`).
pub fn set_mtu(fd: BorrowedFd<'_>, name: &str, mtu: i32) -> Result<(), Errno> {
    let mut ifr = ifreq(name);
    ifr.ifr_ifru.ifru_mtu = mtu;
    // SAFETY: SIOCSIFMTU reads the name and the MTU in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCSIFMTU, &mut ifr) }
}

/// The interface flags of `name` (`SIOCGIFFLAGS`: `IFF_UP`, `IFF_RUNNING`, ...).
pub fn flags(fd: BorrowedFd<'_>, name: &str) -> Result<libc::c_short, Errno> {
    let mut ifr = ifreq(name);
    // SAFETY: SIOCGIFFLAGS reads the name and writes the flags, both in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCGIFFLAGS, &mut ifr)? };
    // SAFETY: the kernel filled the flags member of the union (which
    // started all-zero).
    Ok(unsafe { ifr.ifr_ifru.ifru_flags })
}

/// Sets the interface flags of `name` (`SIOCSIFFLAGS`); read them with
/// [`flags`] first and change only the bits meant.
pub fn set_flags(fd: BorrowedFd<'_>, name: &str, flags: libc::c_short) -> Result<(), Errno> {
    let mut ifr = ifreq(name);
    ifr.ifr_ifru.ifru_flags = flags;
    // SAFETY: SIOCSIFFLAGS reads the name and the flags in ifr.
    unsafe { ioctl_ifreq(fd, libc::SIOCSIFFLAGS, &mut ifr) }
}

/// `SIOCETHTOOL` (`<linux/sockios.h>`).
const SIOCETHTOOL: libc::Ioctl = 0x8946 as libc::Ioctl;
const ETHTOOL_GSET: u32 = 0x01;
const ETHTOOL_SSET: u32 = 0x02;
const ETHTOOL_GLINK: u32 = 0x0a;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_SFEATURES: u32 = 0x3b;
/// The string set of device feature names.
const ETH_SS_FEATURES: u32 = 4;
/// `ETH_GSTRING_LEN`.
const GSTRING_LEN: usize = 32;

/// Issues one `SIOCETHTOOL` command on `name` whose buffer is `buf` (its
/// first `u32` is the command); returns the ioctl's non-negative result.
///
/// # Safety
/// `T` must be plain data, and the command must read and write no more
/// than `size_of_val(buf)` bytes of `buf`.
unsafe fn ethtool<T>(fd: BorrowedFd<'_>, name: &str, buf: &mut [T]) -> Result<libc::c_int, Errno> {
    let mut ifr = ifreq(name);
    ifr.ifr_ifru.ifru_data = buf.as_mut_ptr().cast();
    // SAFETY: ifr is valid for the call and its ifr_data points at `buf`,
    // which lives across it; the caller guarantees the command stays
    // within `buf`.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL, &mut ifr as *mut libc::ifreq) };
    Errno::result(r)
}

/// The driver's link state of `name` (`ETHTOOL_GLINK`, what Linux
/// bonding's miimon reads): true with carrier.
pub fn ethtool_link(fd: BorrowedFd<'_>, name: &str) -> Result<bool, Errno> {
    // struct ethtool_value { u32 cmd; u32 data; }
    let mut v = [ETHTOOL_GLINK, 0u32];
    // SAFETY: ETHTOOL_GLINK reads and writes one struct ethtool_value, the
    // 8 bytes of `v`.
    unsafe { ethtool(fd, name, &mut v)? };
    Ok(v[1] != 0)
}

/// `struct ethtool_cmd` of `<linux/ethtool.h>` (the legacy GSET layout,
/// which every driver still answers).
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct EthtoolCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

/// Speed and duplex as `ETHTOOL_GSET` reports them, uninterpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthtoolSettings {
    /// Mb/s (`speed | speed_hi << 16`); 0, 0xffff or `u32::MAX` if unknown.
    pub speed: u32,
    /// `DUPLEX_HALF` (0), `DUPLEX_FULL` (1) or unknown (0xff).
    pub duplex: u8,
}

/// The link settings of `name` (`ETHTOOL_GSET`).
pub fn ethtool_settings(fd: BorrowedFd<'_>, name: &str) -> Result<EthtoolSettings, Errno> {
    let mut cmd = [EthtoolCmd {
        cmd: ETHTOOL_GSET,
        ..EthtoolCmd::default()
    }];
    // SAFETY: ETHTOOL_GSET reads the command word and writes one struct
    // ethtool_cmd, which is what `cmd` holds; EthtoolCmd is plain data.
    unsafe { ethtool(fd, name, &mut cmd)? };
    let c = cmd[0];
    Ok(EthtoolSettings {
        speed: u32::from(c.speed) | (u32::from(c.speed_hi) << 16),
        duplex: c.duplex,
    })
}

/// Sets the speed and duplex `name` reports (`ETHTOOL_GSET`, then
/// `ETHTOOL_SSET` with the rest as read): for a device that keeps what it
/// is told, such as a TAP, whose `ethtool` and `/sys/class/net/*/speed`
/// then show it. `None` sets the speed (or duplex) unknown.
pub fn ethtool_set_speed(
    fd: BorrowedFd<'_>,
    name: &str,
    speed_mbps: Option<u32>,
    full_duplex: Option<bool>,
) -> Result<(), Errno> {
    let mut cmd = [EthtoolCmd {
        cmd: ETHTOOL_GSET,
        ..EthtoolCmd::default()
    }];
    // SAFETY: as in `ethtool_settings`: one struct ethtool_cmd.
    unsafe { ethtool(fd, name, &mut cmd)? };
    // SPEED_UNKNOWN is -1: 0xffff in both halves.
    let speed = speed_mbps.unwrap_or(u32::MAX);
    cmd[0].cmd = ETHTOOL_SSET;
    cmd[0].speed = (speed & 0xffff) as u16;
    cmd[0].speed_hi = (speed >> 16) as u16;
    cmd[0].duplex = match full_duplex {
        Some(true) => 1,
        Some(false) => 0,
        None => 0xff,
    };
    // SAFETY: ETHTOOL_SSET reads one struct ethtool_cmd, `cmd`.
    unsafe { ethtool(fd, name, &mut cmd)? };
    Ok(())
}

/// `struct ethtool_sset_info` asking for one string set.
#[repr(C)]
#[derive(Clone, Copy)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

/// How many device features this kernel defines (`ETHTOOL_GSSET_INFO` of
/// `ETH_SS_FEATURES`); `None` if the device has no such string set.
pub fn ethtool_feature_count(fd: BorrowedFd<'_>, name: &str) -> Result<Option<u32>, Errno> {
    let mask = 1u64 << ETH_SS_FEATURES;
    let mut info = [SsetInfo {
        cmd: ETHTOOL_GSSET_INFO,
        reserved: 0,
        sset_mask: mask,
        data: [0],
    }];
    // SAFETY: with one bit in sset_mask the kernel writes back the mask and
    // at most one count in `data`: the struct `info` holds.
    unsafe { ethtool(fd, name, &mut info)? };
    // The kernel clears the bit of a set the device does not have.
    Ok((info[0].sset_mask & mask != 0).then_some(info[0].data[0]))
}

/// The names of the device features of `name`, in bit order
/// (`ETHTOOL_GSTRINGS` of `ETH_SS_FEATURES`, sized by
/// [`ethtool_feature_count`], which it calls first); an empty name marks a
/// bit this kernel does not define, and a device without feature names
/// has an empty list.
pub fn ethtool_feature_names(fd: BorrowedFd<'_>, name: &str) -> Result<Vec<String>, Errno> {
    let Some(count) = ethtool_feature_count(fd, name)? else {
        return Ok(Vec::new());
    };
    let count = count as usize;
    // struct ethtool_gstrings: cmd, string_set, len, then count * 32 bytes.
    let mut strings = vec![0u32; 3 + count * (GSTRING_LEN / 4)];
    strings[0] = ETHTOOL_GSTRINGS;
    strings[1] = ETH_SS_FEATURES;
    strings[2] = count as u32;
    // SAFETY: the kernel writes the header and as many strings as its own
    // count of the set; for ETH_SS_FEATURES that is a constant of the
    // running kernel (its table of feature names), which is `count`, just
    // read: `strings` has room for exactly that.
    unsafe { ethtool(fd, name, &mut strings)? };
    let bytes: Vec<u8> = strings[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(bytes
        .chunks(GSTRING_LEN)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect())
}

/// The device features of `name` (`ETHTOOL_GFEATURES`), `words` blocks of
/// 32 features, each `[available, requested, active, never_changed]`.
pub fn ethtool_get_features(
    fd: BorrowedFd<'_>,
    name: &str,
    words: usize,
) -> Result<Vec<[u32; 4]>, Errno> {
    // struct ethtool_gfeatures: cmd, size, size * {available, requested, active, never_changed}.
    let mut buf = vec![0u32; 2 + 4 * words];
    buf[0] = ETHTOOL_GFEATURES;
    buf[1] = u32::try_from(words).map_err(|_| Errno::EINVAL)?;
    // SAFETY: the kernel writes the header and at most `size` (= words)
    // blocks of four u32, which `buf` holds.
    unsafe { ethtool(fd, name, &mut buf)? };
    Ok(buf[2..]
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect())
}

/// Asks for device features of `name` to change (`ETHTOOL_SFEATURES`):
/// one `[valid, requested]` block per 32 features, as many blocks as
/// [`ethtool_get_features`] reports. A positive result only says that
/// some wish was not (fully) met.
pub fn ethtool_set_features(
    fd: BorrowedFd<'_>,
    name: &str,
    blocks: &[[u32; 2]],
) -> Result<libc::c_int, Errno> {
    // struct ethtool_sfeatures: cmd, size, size * {valid, requested}.
    let mut buf = Vec::with_capacity(2 + 2 * blocks.len());
    buf.push(ETHTOOL_SFEATURES);
    buf.push(u32::try_from(blocks.len()).map_err(|_| Errno::EINVAL)?);
    buf.extend(blocks.iter().flatten());
    // SAFETY: the kernel reads the header and `size` (= blocks.len())
    // blocks of two u32 (refusing any other size), which `buf` holds, and
    // writes nothing back but into the header.
    unsafe { ethtool(fd, name, &mut buf) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_ifname("lk0"));
        assert!(valid_ifname("a234567890abcde"));
        assert!(!valid_ifname("a234567890abcdef"));
        assert!(!valid_ifname(""));
        assert!(!valid_ifname("a/b"));
        assert!(!valid_ifname("a b"));
        assert!(!valid_ifname("a:1"));
        assert!(!valid_ifname(".."));
        assert!(!valid_ifname("."));
    }

    #[test]
    fn ifr_name_is_nul_padded_or_empty() {
        let mut want = [0u8; 16];
        want[..3].copy_from_slice(b"lk0");
        assert_eq!(ifr_name("lk0"), want);
        assert_eq!(ifr_name("a234567890abcde")[..15], *b"a234567890abcde");
        assert_eq!(ifr_name("a234567890abcde")[15], 0);
        assert_eq!(ifr_name("a234567890abcdef"), [0u8; 16]);
        assert_eq!(ifr_name("x:1"), [0u8; 16]);
        let r = ifreq("lk0");
        assert_eq!(ifreq_name(&r), "lk0");
        assert_eq!(ifreq_name(&ifreq("")), "");
    }

    /// The bytes of `ifr`, as the kernel reads them.
    fn bytes(ifr: &libc::ifreq) -> Vec<u8> {
        let len = std::mem::size_of::<libc::ifreq>();
        let mut out = vec![0u8; len];
        // Through the integer members only: name, then the union's first
        // 16 bytes as a sockaddr.
        for (d, s) in out.iter_mut().zip(ifr.ifr_name) {
            *d = s as u8;
        }
        // SAFETY: every member of the union is plain data and the
        // ifreq started all-zero, so reading it as a sockaddr is defined.
        let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
        out[16..18].copy_from_slice(&sa.sa_family.to_ne_bytes());
        for (d, s) in out[18..32].iter_mut().zip(sa.sa_data) {
            *d = s as u8;
        }
        out
    }

    #[test]
    fn hwaddr_request_byte_for_byte() {
        assert_eq!(std::mem::size_of::<libc::ifreq>(), 40);
        let ifr = hwaddr_req("eth1", [0x02, 0, 0, 0xaa, 0xbb, 0xcc]);
        let mut want = vec![0u8; 40];
        want[..4].copy_from_slice(b"eth1");
        want[16..18].copy_from_slice(&libc::ARPHRD_ETHER.to_ne_bytes());
        want[18..24].copy_from_slice(&[0x02, 0, 0, 0xaa, 0xbb, 0xcc]);
        assert_eq!(bytes(&ifr), want);
    }

    #[test]
    fn ethtool_struct_sizes_match_the_kernel() {
        // sizeof(struct ethtool_cmd) and sizeof(struct ethtool_sset_info)
        // with one data word, as in <linux/ethtool.h>.
        assert_eq!(std::mem::size_of::<EthtoolCmd>(), 44);
        assert_eq!(std::mem::size_of::<SsetInfo>(), 24);
    }
}
