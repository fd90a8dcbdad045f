//! The few Linux system calls the devices need, each wrapped once so the
//! `unsafe` lives here and nowhere else in spirit.
//!
//! Interface attributes (MAC, MTU, up/down, carrier) are set with the classic
//! `SIOC*IF*` ioctls rather than rtnetlink: they are one call each, need no
//! extra crate or message parsing, and operate on the network namespace of
//! the socket they are issued on. That last point is why [`Link`] keeps its
//! own control socket, created next to the device: after the opening thread
//! returns to another namespace the ioctls still reach the right interface.
//!
//! The ethtool calls (link state, speed/duplex, device features) are
//! `SIOCETHTOOL` ioctls written here too. Looked at: the `ethtool` crate
//! (rust-netlink, 0.3) speaks ethtool's generic netlink family, but only
//! asynchronously on tokio, reads features without setting them
//! (`ETHTOOL_SFEATURES` is what `offloads = false` needs) and has no link
//! state (`ETHTOOL_GLINK`, what miimon reads); `nix` has ioctl macros but
//! no ethtool structures, so the call would stay as `unsafe` as it is.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;

/// A failed system call: which operation, and the errno it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{op} failed: {errno}")]
pub struct SysError {
    /// The operation, e.g. `"ioctl(TUNSETIFF)"`.
    pub op: &'static str,
    /// The errno.
    pub errno: Errno,
}

impl SysError {
    /// The last errno, attributed to `op`.
    pub(crate) fn last(op: &'static str) -> SysError {
        SysError {
            op,
            errno: Errno::last(),
        }
    }
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

pub(crate) fn cvt(op: &'static str, ret: libc::c_int) -> Result<libc::c_int, SysError> {
    if ret < 0 {
        Err(SysError::last(op))
    } else {
        Ok(ret)
    }
}

/// Checks a name the way the kernel's `dev_valid_name` does.
pub(crate) fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < libc::IFNAMSIZ
        && name != "."
        && name != ".."
        && !name
            .bytes()
            .any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace())
}

/// An `ifreq` with its name filled in.
pub(crate) fn ifreq(name: &str) -> Result<libc::ifreq, OpenError> {
    if !valid_ifname(name) {
        return Err(OpenError::BadName(name.to_owned()));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

/// Reads the (kernel-chosen) name back out of an `ifreq`.
pub(crate) fn ifreq_name(ifr: &libc::ifreq) -> String {
    let bytes: Vec<u8> = ifr
        .ifr_name
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn socket(
    domain: libc::c_int,
    ty: libc::c_int,
    proto: libc::c_int,
) -> Result<OwnedFd, SysError> {
    // SAFETY: plain syscall; on success we own the returned descriptor.
    let fd = cvt("socket", unsafe {
        libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto)
    })?;
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(crate) fn setsockopt<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    val: &T,
    op: &'static str,
) -> Result<(), SysError> {
    // SAFETY: val points to a live T of the given size for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    cvt(op, r).map(drop)
}

pub(crate) fn getsockopt<T: Copy>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    op: &'static str,
) -> Result<T, SysError> {
    let mut val = std::mem::MaybeUninit::<T>::zeroed();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: val has room for a T and len says so; the kernel writes at most len bytes.
    let r = unsafe { libc::getsockopt(fd, level, name, val.as_mut_ptr().cast(), &mut len) };
    cvt(op, r)?;
    // SAFETY: zero-initialised and possibly overwritten by the kernel; T is plain data.
    Ok(unsafe { val.assume_init() })
}

/// Issues an interface ioctl that takes a pointer to `ifreq`.
pub(crate) fn ioctl_ifreq(
    fd: RawFd,
    req: libc::Ioctl,
    ifr: &mut libc::ifreq,
    op: &'static str,
) -> Result<(), SysError> {
    // SAFETY: ifr is a valid, exclusively borrowed ifreq for the duration of the call.
    let r = unsafe { libc::ioctl(fd, req, ifr as *mut libc::ifreq) };
    cvt(op, r).map(drop)
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
        let _ = ifreq(name)?;
        let ctl = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
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

    fn req(&self) -> libc::ifreq {
        // The name was validated in `open`.
        ifreq(&self.name).unwrap_or_else(|_| {
            // SAFETY: all-zero ifreq is valid; an empty name makes the kernel answer ENODEV.
            unsafe { std::mem::zeroed() }
        })
    }

    /// The interface index (`SIOCGIFINDEX`).
    pub fn ifindex(&self) -> Result<u32, SysError> {
        let mut ifr = self.req();
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCGIFINDEX,
            &mut ifr,
            "ioctl(SIOCGIFINDEX)",
        )?;
        // SAFETY: the kernel filled the ifindex member of the union.
        Ok(unsafe { ifr.ifr_ifru.ifru_ifindex } as u32)
    }

    /// The MAC address (`SIOCGIFHWADDR`).
    pub fn mac(&self) -> Result<[u8; 6], SysError> {
        let mut ifr = self.req();
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCGIFHWADDR,
            &mut ifr,
            "ioctl(SIOCGIFHWADDR)",
        )?;
        // SAFETY: the kernel filled the hwaddr member of the union.
        let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
        let mut mac = [0u8; 6];
        for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
            *d = *s as u8;
        }
        Ok(mac)
    }

    /// Sets the MAC address (`SIOCSIFHWADDR`).
    pub fn set_mac(&self, mac: [u8; 6]) -> Result<(), SysError> {
        let mut ifr = self.req();
        // SAFETY: writing a plain-data union member.
        unsafe {
            ifr.ifr_ifru.ifru_hwaddr.sa_family = libc::ARPHRD_ETHER;
            for (d, s) in ifr.ifr_ifru.ifru_hwaddr.sa_data.iter_mut().zip(mac) {
                *d = s as libc::c_char;
            }
        }
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCSIFHWADDR,
            &mut ifr,
            "ioctl(SIOCSIFHWADDR)",
        )
    }

    /// The MTU (`SIOCGIFMTU`).
    pub fn mtu(&self) -> Result<u32, SysError> {
        let mut ifr = self.req();
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCGIFMTU,
            &mut ifr,
            "ioctl(SIOCGIFMTU)",
        )?;
        // SAFETY: the kernel filled the mtu member of the union.
        Ok(unsafe { ifr.ifr_ifru.ifru_mtu } as u32)
    }

    /// Sets the MTU (`SIOCSIFMTU`); TAPs accept up to 65535.
    pub fn set_mtu(&self, mtu: u32) -> Result<(), SysError> {
        let mut ifr = self.req();
        ifr.ifr_ifru.ifru_mtu = i32::try_from(mtu).unwrap_or(i32::MAX);
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCSIFMTU,
            &mut ifr,
            "ioctl(SIOCSIFMTU)",
        )
    }

    /// The interface flags (`SIOCGIFFLAGS`).
    pub fn flags(&self) -> Result<LinkFlags, SysError> {
        let mut ifr = self.req();
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCGIFFLAGS,
            &mut ifr,
            "ioctl(SIOCGIFFLAGS)",
        )?;
        // SAFETY: the kernel filled the flags member of the union.
        Ok(LinkFlags(u32::from(
            unsafe { ifr.ifr_ifru.ifru_flags } as u16
        )))
    }

    /// Brings the interface administratively up or down (`SIOCSIFFLAGS`).
    pub fn set_up(&self, up: bool) -> Result<(), SysError> {
        self.set_flag(libc::IFF_UP, up)
    }

    /// Sets or clears one interface flag such as `IFF_NOARP` or
    /// `IFF_PROMISC` (`SIOCSIFFLAGS`).
    pub fn set_flag(&self, flag: libc::c_int, on: bool) -> Result<(), SysError> {
        let up = on;
        let mut ifr = self.req();
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCGIFFLAGS,
            &mut ifr,
            "ioctl(SIOCGIFFLAGS)",
        )?;
        // SAFETY: reading and writing the flags member the kernel just filled.
        unsafe {
            if up {
                ifr.ifr_ifru.ifru_flags |= flag as libc::c_short;
            } else {
                ifr.ifr_ifru.ifru_flags &= !(flag as libc::c_short);
            }
        }
        ioctl_ifreq(
            self.ctl.as_raw_fd(),
            libc::SIOCSIFFLAGS,
            &mut ifr,
            "ioctl(SIOCSIFFLAGS)",
        )
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
        let mut v = [ETHTOOL_GLINK, 0u32];
        match self.ethtool(&mut v, "ioctl(SIOCETHTOOL, ETHTOOL_GLINK)") {
            Ok(_) => Ok(v[1] != 0),
            Err(_) => Ok(f.running()),
        }
    }
}

/// `bpf(BPF_PROG_LOAD)` attributes, as far as lagkit uses them (the
/// kernel accepts a shorter `union bpf_attr` as long as it is what it
/// knows; every field not set here is zero).
#[repr(C)]
#[derive(Default)]
struct BpfProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// `bpf(BPF_LINK_CREATE)` attributes for a tcx attachment.
#[repr(C)]
#[derive(Default)]
struct BpfLinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    relative_fd: u32,
    _pad: u32,
    expected_revision: u64,
}

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_INGRESS: u32 = 46;
const BPF_TCX_EGRESS: u32 = 47;
/// Attach before every program already there.
const BPF_F_BEFORE: u32 = 1 << 3;

fn bpf<T>(cmd: libc::c_long, attr: &mut T, op: &'static str) -> Result<OwnedFd, SysError> {
    // SAFETY: attr is a live, exclusively borrowed repr(C) bpf_attr prefix
    // of the size passed; the kernel reads (and may write) at most that.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if r < 0 {
        return Err(SysError::last(op));
    }
    // SAFETY: on success these commands return a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// Loads a BPF program that drops every frame (`r0 = TC_ACT_SHOT; exit`)
/// and attaches it first at the tcx ingress (or `egress`) of interface
/// `ifindex`. The attachment lasts as long as the returned link descriptor.
///
/// Hand-written rather than through a BPF library: two instructions and two
/// system calls, with no ELF object, map or helper to relocate.
pub(crate) fn bpf_attach_tcx_drop(ifindex: u32, egress: bool) -> Result<OwnedFd, SysError> {
    // struct bpf_insn { u8 code; u8 dst:4, src:4; s16 off; s32 imm; }
    // BPF_ALU64 | BPF_MOV | BPF_K (0xb7), r0, imm 2; then BPF_JMP | BPF_EXIT (0x95).
    let insns: [u64; 2] = [
        u64::from_le_bytes([0xb7, 0, 0, 0, 2, 0, 0, 0]),
        u64::from_le_bytes([0x95, 0, 0, 0, 0, 0, 0, 0]),
    ];
    let license = b"GPL\0";
    let mut name = [0u8; 16];
    name[..11].copy_from_slice(b"lagkit_drop");
    let mut load = BpfProgLoad {
        prog_type: BPF_PROG_TYPE_SCHED_CLS,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        prog_name: name,
        ..BpfProgLoad::default()
    };
    let prog = bpf(BPF_PROG_LOAD, &mut load, "bpf(BPF_PROG_LOAD)")?;
    let mut link = BpfLinkCreate {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: if egress {
            BPF_TCX_EGRESS
        } else {
            BPF_TCX_INGRESS
        },
        flags: BPF_F_BEFORE,
        ..BpfLinkCreate::default()
    };
    // The link holds its own reference to the program; `prog` may close.
    bpf(
        BPF_LINK_CREATE,
        &mut link,
        "bpf(BPF_LINK_CREATE, tcx ingress)",
    )
}

/// `struct ethtool_cmd` of `<linux/ethtool.h>` (the legacy GSET layout,
/// which every driver still answers).
#[repr(C)]
#[derive(Default)]
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

const ETHTOOL_GSET: u32 = 1;
const SIOCETHTOOL: libc::Ioctl = 0x8946 as libc::Ioctl;

impl Link {
    /// Speed in Mb/s and whether the link is full duplex, if the driver
    /// knows (`SIOCETHTOOL` `ETHTOOL_GSET`; a link without carrier reports
    /// neither).
    pub fn speed_duplex(&self) -> (Option<u32>, Option<bool>) {
        let mut cmd = EthtoolCmd {
            cmd: ETHTOOL_GSET,
            ..EthtoolCmd::default()
        };
        let mut ifr = self.req();
        ifr.ifr_ifru.ifru_data = (&mut cmd as *mut EthtoolCmd).cast();
        // ETHTOOL_GSET writes an ethtool_cmd through ifr_data, which points
        // at `cmd` for the duration of the call.
        let r = ioctl_ifreq(
            self.ctl.as_raw_fd(),
            SIOCETHTOOL,
            &mut ifr,
            "ioctl(SIOCETHTOOL)",
        );
        if r.is_err() {
            return (None, None);
        }
        let speed = u32::from(cmd.speed) | (u32::from(cmd.speed_hi) << 16);
        let speed = (speed != 0 && speed != u32::MAX && speed != 0xffff).then_some(speed);
        let duplex = match cmd.duplex {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        };
        (speed, duplex)
    }
}

// Device features (`ethtool -k`/`-K`). Hand-written (see the module doc
// for the crates looked at): the ioctl is four commands over flat arrays
// of u32, and it reaches the interface in the namespace of `Link`'s
// control socket like every other call here. Features are found by name (the kernel's bit positions differ
// between versions; the names, ETH_SS_FEATURES, are what ethtool shows).

const ETHTOOL_GLINK: u32 = 0x0a;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_SFEATURES: u32 = 0x3b;
const ETH_SS_FEATURES: u32 = 4;
/// `ETH_GSTRING_LEN`, in u32 words.
const GSTRING_WORDS: usize = 32 / 4;

/// `struct ethtool_sset_info` asking for one string set.
#[repr(C)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

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
    /// Issues one `SIOCETHTOOL` command whose buffer is `buf` (its first
    /// word is the command); returns the ioctl's non-negative result.
    fn ethtool<T>(&self, buf: &mut [T], op: &'static str) -> Result<libc::c_int, SysError> {
        let mut ifr = self.req();
        ifr.ifr_ifru.ifru_data = buf.as_mut_ptr().cast();
        // SAFETY: ifr_data points at `buf`, which lives for the call; every
        // caller sizes `buf` for what its command reads and writes (the
        // counts come from the kernel's own answer to ETHTOOL_GSSET_INFO).
        let r = unsafe {
            libc::ioctl(
                self.ctl.as_raw_fd(),
                SIOCETHTOOL,
                &mut ifr as *mut libc::ifreq,
            )
        };
        cvt(op, r)
    }

    /// The names of the device features (`ETHTOOL_GSSET_INFO`, then
    /// `ETHTOOL_GSTRINGS` of `ETH_SS_FEATURES`); an empty name marks a bit
    /// this kernel does not define.
    fn feature_names(&self) -> Result<Vec<String>, SysError> {
        let mask = 1u64 << ETH_SS_FEATURES;
        let mut info = SsetInfo {
            cmd: ETHTOOL_GSSET_INFO,
            reserved: 0,
            sset_mask: mask,
            data: [0],
        };
        self.ethtool(
            std::slice::from_mut(&mut info),
            "ioctl(SIOCETHTOOL, ETHTOOL_GSSET_INFO)",
        )?;
        // The kernel clears the bit of a set the device does not have.
        if info.sset_mask & mask == 0 {
            return Ok(Vec::new());
        }
        let count = info.data[0] as usize;
        // struct ethtool_gstrings: cmd, string_set, len, then count * 32 bytes.
        let mut strings = vec![0u32; 3 + count * GSTRING_WORDS];
        strings[0] = ETHTOOL_GSTRINGS;
        strings[1] = ETH_SS_FEATURES;
        strings[2] = count as u32;
        self.ethtool(&mut strings, "ioctl(SIOCETHTOOL, ETHTOOL_GSTRINGS)")?;
        let bytes: Vec<u8> = strings[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
        Ok(bytes
            .chunks(32)
            .map(|c| {
                let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
                String::from_utf8_lossy(&c[..end]).into_owned()
            })
            .collect())
    }

    /// The device's features (`ethtool -k`).
    pub fn features(&self) -> Result<Features, SysError> {
        let names = self.feature_names()?;
        let size = names.len().div_ceil(32);
        // struct ethtool_gfeatures: cmd, size, size * {available, requested, active, never_changed}.
        let mut buf = vec![0u32; 2 + 4 * size];
        buf[0] = ETHTOOL_GFEATURES;
        buf[1] = size as u32;
        self.ethtool(&mut buf, "ioctl(SIOCETHTOOL, ETHTOOL_GFEATURES)")?;
        let blocks = buf[2..]
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        Ok(Features { names, blocks })
    }

    /// Asks for each named feature to be on or off (`ethtool -K`,
    /// `ETHTOOL_SFEATURES`); names this kernel does not have are skipped.
    /// The kernel may keep a feature off that another one needs; read
    /// [`Link::features`] for what is active.
    pub fn set_features(&self, wanted: &[(&str, bool)]) -> Result<(), SysError> {
        let names = self.feature_names()?;
        let size = names.len().div_ceil(32);
        // struct ethtool_sfeatures: cmd, size, size * {valid, requested}.
        let mut buf = vec![0u32; 2 + 2 * size];
        buf[0] = ETHTOOL_SFEATURES;
        buf[1] = size as u32;
        for (name, on) in wanted {
            let Some(i) = names.iter().position(|n| n == name) else {
                continue;
            };
            let (word, bit) = (2 + 2 * (i / 32), 1u32 << (i % 32));
            buf[word] |= bit;
            if *on {
                buf[word + 1] |= bit;
            }
        }
        // A positive result only says that some wish was not (fully) met.
        self.ethtool(&mut buf, "ioctl(SIOCETHTOOL, ETHTOOL_SFEATURES)")
            .map(drop)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock BPF programs
/// (`bpf_ktime_get_ns`) and other processes read, so times taken here can be
/// compared across them (failover latency).
pub fn monotonic_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC_COARSE in nanoseconds: a few nanoseconds to read, a few
/// milliseconds of resolution, enough for flowlet gaps of 10 ms. The data
/// path stamps bucket activity with it and the control thread judges
/// idleness with it.
pub fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
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
        assert!(matches!(ifreq("x:1"), Err(OpenError::BadName(_))));
        let r = ifreq("lk0").unwrap();
        assert_eq!(ifreq_name(&r), "lk0");
    }

    #[test]
    fn missing_interface_is_reported_by_name() {
        match Link::open("lkdp-nonexist") {
            Err(OpenError::NoSuchInterface(n)) => assert_eq!(n, "lkdp-nonexist"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
