//! The devices' errors, and [`Link`]: one interface's MAC, MTU, flags,
//! carrier and device features, through the safe wrappers of
//! `lagkit_sys::ioctl` (the `unsafe` lives in lagkit-sys) and safe `nix`
//! calls.
//!
//! Interface attributes (MAC, MTU, up/down, carrier) are set with the classic
//! `SIOC*IF*` ioctls rather than rtnetlink: they are one call each, need no
//! message parsing, and operate on the network namespace of
//! the socket they are issued on. That last point is why [`Link`] keeps its
//! own control socket, created next to the device: after the opening thread
//! returns to another namespace the ioctls still reach the right interface.
//!
//! The ethtool calls (link state, speed/duplex, device features) are
//! `SIOCETHTOOL` ioctls, in `lagkit_sys::ioctl` too. Looked at: the `ethtool` crate
//! (rust-netlink, 0.3) speaks ethtool's generic netlink family, but only
//! asynchronously on tokio, reads features without setting them
//! (`ETHTOOL_SFEATURES` is what `offloads = false` needs) and has no link
//! state (`ETHTOOL_GLINK`, what miimon reads); `nix` has ioctl macros but
//! no ethtool structures, and the functions they make are `unsafe`.

use std::os::fd::{AsFd, OwnedFd};

use lagkit_sys::ioctl;
use nix::errno::Errno;
use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType};
use nix::time::{clock_gettime, ClockId};

/// A failed system call: which operation, and the errno it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{op} failed: {errno}")]
pub struct SysError {
    /// The operation, e.g. `"ioctl(TUNSETIFF)"`.
    pub op: &'static str,
    /// The errno.
    pub errno: Errno,
}

/// Why a device could not be opened or configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The interface name is empty, too long, or has forbidden characters.
    #[error("interface name {0:?} is not valid: use 1-15 bytes without '/', ':' or whitespace")]
    BadName(String),
    /// No interface of that name exists in the caller's network namespace.
    #[error("no interface named {0:?} in this network namespace (check `ip link`, or enter the right namespace first)")]
    NoSuchInterface(String),
    /// The caller lacks CAP_NET_ADMIN.
    #[error("{0}: permission denied; lagkit's data path needs CAP_NET_ADMIN (run as root)")]
    Permission(SysError),
    /// A descriptor handed over by another process is not the device it
    /// was named for (see [`crate::handoff`]).
    #[error("the descriptor handed over as {0}'s is not its device")]
    NotItsDevice(String),
    /// Any other system call failure.
    #[error(transparent)]
    Sys(SysError),
}

impl OpenError {
    pub(crate) fn from_sys(e: SysError, name: &str) -> OpenError {
        match e.errno {
            Errno::EPERM | Errno::EACCES => OpenError::Permission(e),
            Errno::ENODEV | Errno::ENXIO => OpenError::NoSuchInterface(name.to_owned()),
            _ => OpenError::Sys(e),
        }
    }
}

impl From<SysError> for OpenError {
    fn from(e: SysError) -> Self {
        match e.errno {
            Errno::EPERM | Errno::EACCES => OpenError::Permission(e),
            _ => OpenError::Sys(e),
        }
    }
}

impl SysError {
    /// `errno`, attributed to `op`.
    pub(crate) fn new(op: &'static str, errno: Errno) -> SysError {
        SysError { op, errno }
    }
}

/// Checks a name the way the kernel's `dev_valid_name` does.
pub(crate) use lagkit_sys::ioctl::valid_ifname;

/// A socket of the calling thread's namespace, close-on-exec; `op` names
/// the call in the error (`socket`).
pub(crate) fn socket_cloexec(
    family: AddressFamily,
    ty: SockType,
    flags: SockFlag,
) -> Result<OwnedFd, SysError> {
    socket(family, ty, flags | SockFlag::SOCK_CLOEXEC, None).map_err(|e| SysError::new("socket", e))
}

/// Interface flags as `SIOCGIFFLAGS` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkFlags(pub u32);

impl LinkFlags {
    /// Administratively up (`IFF_UP`).
    pub fn up(self) -> bool {
        self.0 & libc::IFF_UP as u32 != 0
    }
    /// Operationally up, i.e. carrier present (`IFF_RUNNING`).
    pub fn running(self) -> bool {
        self.0 & libc::IFF_RUNNING as u32 != 0
    }
    /// Promiscuous (`IFF_PROMISC`, as set by `ip link`, not by packet sockets).
    pub fn promisc(self) -> bool {
        self.0 & libc::IFF_PROMISC as u32 != 0
    }
}

/// A network interface named in the namespace where this handle was made.
///
/// Holds a datagram socket used only for ioctls, so every call reaches the
/// interface in the namespace of creation whatever thread makes it later.
#[derive(Debug)]
pub struct Link {
    ctl: OwnedFd,
    name: String,
}

impl Link {
    /// Opens a handle on an existing interface in the calling thread's namespace.
    pub fn open(name: &str) -> Result<Link, OpenError> {
        if !valid_ifname(name) {
            return Err(OpenError::BadName(name.to_owned()));
        }
        let ctl = socket_cloexec(AddressFamily::Inet, SockType::Datagram, SockFlag::empty())?;
        let link = Link {
            ctl,
            name: name.to_owned(),
        };
        link.ifindex().map_err(|e| OpenError::from_sys(e, name))?;
        Ok(link)
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interface index (`SIOCGIFINDEX`).
    pub fn ifindex(&self) -> Result<u32, SysError> {
        ioctl::ifindex(self.ctl.as_fd(), &self.name)
            .map(|i| i as u32)
            .map_err(|e| SysError::new("ioctl(SIOCGIFINDEX)", e))
    }

    /// The MAC address (`SIOCGIFHWADDR`).
    pub fn mac(&self) -> Result<[u8; 6], SysError> {
        ioctl::hwaddr(self.ctl.as_fd(), &self.name)
            .map_err(|e| SysError::new("ioctl(SIOCGIFHWADDR)", e))
    }

    /// Sets the MAC address (`SIOCSIFHWADDR`).
    pub fn set_mac(&self, mac: [u8; 6]) -> Result<(), SysError> {
        ioctl::set_hwaddr(self.ctl.as_fd(), &self.name, mac)
            .map_err(|e| SysError::new("ioctl(SIOCSIFHWADDR)", e))
    }

    /// The MTU (`SIOCGIFMTU`).
    pub fn mtu(&self) -> Result<u32, SysError> {
        ioctl::mtu(self.ctl.as_fd(), &self.name)
            .map(|m| m as u32)
            .map_err(|e| SysError::new("ioctl(SIOCGIFMTU)", e))
    }

    /// Sets the MTU (`SIOCSIFMTU`); TAPs accept up to 65535.
    pub fn set_mtu(&self, mtu: u32) -> Result<(), SysError> {
        let mtu = i32::try_from(mtu).unwrap_or(i32::MAX);
        ioctl::set_mtu(self.ctl.as_fd(), &self.name, mtu)
            .map_err(|e| SysError::new("ioctl(SIOCSIFMTU)", e))
    }

    /// The interface flags (`SIOCGIFFLAGS`).
    pub fn flags(&self) -> Result<LinkFlags, SysError> {
        self.raw_flags().map(|f| LinkFlags(u32::from(f as u16)))
    }

    fn raw_flags(&self) -> Result<libc::c_short, SysError> {
        ioctl::flags(self.ctl.as_fd(), &self.name)
            .map_err(|e| SysError::new("ioctl(SIOCGIFFLAGS)", e))
    }

    /// Brings the interface administratively up or down (`SIOCSIFFLAGS`).
    pub fn set_up(&self, up: bool) -> Result<(), SysError> {
        self.set_flag(libc::IFF_UP, up)
    }

    /// Sets or clears one interface flag such as `IFF_NOARP` or
    /// `IFF_PROMISC` (`SIOCSIFFLAGS`).
    pub fn set_flag(&self, flag: libc::c_int, on: bool) -> Result<(), SysError> {
        let mut flags = self.raw_flags()?;
        if on {
            flags |= flag as libc::c_short;
        } else {
            flags &= !(flag as libc::c_short);
        }
        ioctl::set_flags(self.ctl.as_fd(), &self.name, flags)
            .map_err(|e| SysError::new("ioctl(SIOCSIFFLAGS)", e))
    }

    /// True if the interface is up and has carrier: `IFF_UP`, and the
    /// driver's link state (`ETHTOOL_GLINK`, what Linux bonding's miimon
    /// reads), else `IFF_RUNNING`. The link state is the carrier as it is
    /// now; `IFF_RUNNING` and the netlink events follow it through the
    /// kernel's link watch, which holds back a carrier loss on a device
    /// that is not a kernel bond or team port for up to a second.
    pub fn carrier(&self) -> Result<bool, SysError> {
        let f = self.flags()?;
        if !f.up() {
            return Ok(false);
        }
        match ioctl::ethtool_link(self.ctl.as_fd(), &self.name) {
            Ok(link) => Ok(link),
            Err(_) => Ok(f.running()),
        }
    }

    /// Speed in Mb/s and whether the link is full duplex, if the driver
    /// knows (`SIOCETHTOOL` `ETHTOOL_GSET`; a link without carrier reports
    /// neither).
    pub fn speed_duplex(&self) -> (Option<u32>, Option<bool>) {
        let Ok(s) = ioctl::ethtool_settings(self.ctl.as_fd(), &self.name) else {
            return (None, None);
        };
        let speed = s.speed;
        let speed = (speed != 0 && speed != u32::MAX && speed != 0xffff).then_some(speed);
        let duplex = match s.duplex {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        };
        (speed, duplex)
    }

    /// Makes the interface report `speed_mbps` and duplex (`None`:
    /// unknown) to `ethtool` and `/sys/class/net/*/speed`, where its driver
    /// keeps what it is told (a TAP does; a veth refuses with
    /// `EOPNOTSUPP`).
    pub fn set_speed(
        &self,
        speed_mbps: Option<u32>,
        full_duplex: Option<bool>,
    ) -> Result<(), SysError> {
        ioctl::ethtool_set_speed(self.ctl.as_fd(), &self.name, speed_mbps, full_duplex)
            .map_err(|e| SysError::new("ioctl(SIOCETHTOOL, ETHTOOL_SSET)", e))
    }
}

// Device features (`ethtool -k`/`-K`), by `SIOCETHTOOL` (see the module
// doc for the crates looked at): the commands reach the interface in the
// namespace of `Link`'s control socket like every other call here.
// Features are found by name (the kernel's bit positions differ between
// versions; the names, ETH_SS_FEATURES, are what ethtool shows).

/// A device's features as `ETHTOOL_GFEATURES` reports them, by the names
/// `ethtool -k` shows (`tx-checksum-ip-generic`, `tx-tcp-segmentation`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    /// Feature names; index = bit number.
    names: Vec<String>,
    /// Per 32 bits: available (changeable), requested, active, never changed.
    blocks: Vec<[u32; 4]>,
}

impl Features {
    fn bit(&self, name: &str, word: usize) -> Option<bool> {
        let i = self.names.iter().position(|n| n == name)?;
        let b = self.blocks.get(i / 32)?;
        Some(b[word] & (1 << (i % 32)) != 0)
    }

    /// The feature names this kernel defines, in bit order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .map(String::as_str)
            .filter(|n| !n.is_empty())
    }

    /// Whether the feature is on now (`ethtool -k`'s on/off); `None` if
    /// this kernel has no feature of that name.
    pub fn active(&self, name: &str) -> Option<bool> {
        self.bit(name, 2)
    }

    /// Whether the feature is wanted on (it may be off for now because a
    /// feature it needs is off).
    pub fn requested(&self, name: &str) -> Option<bool> {
        self.bit(name, 1)
    }

    /// Whether the driver lets the feature be changed (not `[fixed]`).
    pub fn changeable(&self, name: &str) -> bool {
        self.bit(name, 0) == Some(true)
    }
}

impl Link {
    /// The names of the device features (`ETHTOOL_GSSET_INFO`, then
    /// `ETHTOOL_GSTRINGS` of `ETH_SS_FEATURES`); an empty name marks a bit
    /// this kernel does not define.
    fn feature_names(&self) -> Result<Vec<String>, SysError> {
        let count = ioctl::ethtool_feature_count(self.ctl.as_fd(), &self.name)
            .map_err(|e| SysError::new("ioctl(SIOCETHTOOL, ETHTOOL_GSSET_INFO)", e))?;
        if count.is_none() {
            return Ok(Vec::new());
        }
        ioctl::ethtool_feature_names(self.ctl.as_fd(), &self.name)
            .map_err(|e| SysError::new("ioctl(SIOCETHTOOL, ETHTOOL_GSTRINGS)", e))
    }

    /// The device's features (`ethtool -k`).
    pub fn features(&self) -> Result<Features, SysError> {
        let names = self.feature_names()?;
        let size = names.len().div_ceil(32);
        let blocks = ioctl::ethtool_get_features(self.ctl.as_fd(), &self.name, size)
            .map_err(|e| SysError::new("ioctl(SIOCETHTOOL, ETHTOOL_GFEATURES)", e))?;
        Ok(Features { names, blocks })
    }

    /// Asks for each named feature to be on or off (`ethtool -K`,
    /// `ETHTOOL_SFEATURES`); names this kernel does not have are skipped.
    /// The kernel may keep a feature off that another one needs; read
    /// [`Link::features`] for what is active.
    pub fn set_features(&self, wanted: &[(&str, bool)]) -> Result<(), SysError> {
        let names = self.feature_names()?;
        let size = names.len().div_ceil(32);
        // Per 32 features: {valid, requested}.
        let mut blocks = vec![[0u32; 2]; size];
        for (name, on) in wanted {
            let Some(i) = names.iter().position(|n| n == name) else {
                continue;
            };
            let (block, bit) = (&mut blocks[i / 32], 1u32 << (i % 32));
            block[0] |= bit;
            if *on {
                block[1] |= bit;
            }
        }
        // A positive result only says that some wish was not (fully) met.
        ioctl::ethtool_set_features(self.ctl.as_fd(), &self.name, &blocks)
            .map(drop)
            .map_err(|e| SysError::new("ioctl(SIOCETHTOOL, ETHTOOL_SFEATURES)", e))
    }
}

/// Loads a BPF program that drops every frame (`r0 = TC_ACT_SHOT; exit`)
/// and attaches it first at the tcx ingress (or `egress`) of interface
/// `ifindex` (`lagkit_sys::packet_drop`). The attachment lasts as long as
/// the returned link descriptor.
pub(crate) fn bpf_attach_tcx_drop(ifindex: u32, egress: bool) -> Result<OwnedFd, SysError> {
    use lagkit_sys::packet_drop;
    let prog =
        packet_drop::load_drop_program().map_err(|e| SysError::new("bpf(BPF_PROG_LOAD)", e))?;
    // The link holds its own reference to the program; `prog` may close.
    packet_drop::attach_tcx(prog.as_fd(), ifindex, egress)
        .map_err(|e| SysError::new("bpf(BPF_LINK_CREATE, tcx ingress)", e))
}

/// Nanoseconds on `clock` (0 if it cannot be read).
fn clock_ns(clock: ClockId) -> u64 {
    clock_gettime(clock).map_or(0, |ts| {
        (ts.tv_sec() as u64).saturating_mul(1_000_000_000) + ts.tv_nsec() as u64
    })
}

/// CLOCK_MONOTONIC in nanoseconds: the clock BPF programs
/// (`bpf_ktime_get_ns`) and other processes read, so times taken here can be
/// compared across them (failover latency).
pub fn monotonic_now_ns() -> u64 {
    clock_ns(ClockId::CLOCK_MONOTONIC)
}

/// CLOCK_MONOTONIC_COARSE in nanoseconds: a few nanoseconds to read, a few
/// milliseconds of resolution, enough for flowlet gaps of 10 ms. The data
/// path stamps bucket activity with it and the control thread judges
/// idleness with it.
pub fn coarse_now_ns() -> u64 {
    clock_ns(ClockId::CLOCK_MONOTONIC_COARSE)
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
        assert!(!valid_ifname(".."));
        assert!(matches!(Link::open("x:1"), Err(OpenError::BadName(_))));
    }

    #[test]
    fn missing_interface_is_reported_by_name() {
        match Link::open("lkdp-nonexist") {
            Err(OpenError::NoSuchInterface(n)) => assert_eq!(n, "lkdp-nonexist"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
