//! Keeping a member's received frames away from the host's own IP stack.
//!
//! Linux follows the weak host model: an IPv4 packet addressed to any of
//! the host's addresses is accepted on any interface. A frame for the
//! bond's MAC and IP that arrives on the member whose MAC the bond borrowed
//! is therefore taken by the kernel's stack on the member, and lagkit's
//! packet socket delivers the same frame a second time through the
//! logical interface: every ping is answered twice and TCP sees duplicate
//! segments (DSACKs). The kernel's bonding driver avoids this with an
//! `rx_handler` that steals member frames before the stack sees them.
//!
//! lagkit drops every frame at the member's ingress hook instead. In
//! `__netif_receive_skb_core` the packet taps (`ETH_P_ALL` sockets, i.e.
//! lagkit's member socket) are served before the ingress hook runs, so the
//! bond still gets each frame once and the stack never does. Two ways:
//!
//! - **tcx** (Linux ≥ 6.6): a two-instruction BPF program (`return
//!   TC_ACT_SHOT`) attached with `BPF_LINK_CREATE`. The attachment is a BPF
//!   link owned by a file descriptor, so it goes away with the process —
//!   also after SIGKILL — and nothing is left on the member.
//! - **tc clsact** (older kernels): the same verdict as a classic BPF
//!   `cls_bpf` filter in direct-action mode, installed over rtnetlink
//!   (`lagkit_sys::tc`, the filter `tc(8)` made before) at a fixed
//!   preference ([`TC_PREF`]); it outlives the process, so the bond
//!   records it in its state file and removes it on exit or at the next
//!   start after a crash ([`remove_tc_filter`]).
//!
//! The future in-kernel data path replaces the drop with a redirect; the
//! guarantee (no member frame reaches the stack but through the bond) is
//! the same.

use std::os::fd::OwnedFd;

use lagkit_sys::tc::{self as sys_tc, Direction};

use crate::sys::{bpf_attach_tcx_drop, Link, SysError};

/// The tc filter preference lagkit's fallback filter uses (so that it, and
/// only it, can be removed later).
pub const TC_PREF: u16 = 49_411;

/// How a member is isolated from the host stack; dropping it undoes a tcx
/// attachment (the tc fallback is removed by [`remove_tc_filter`]).
#[derive(Debug)]
pub enum Isolation {
    /// A tcx ingress BPF link; detached when this descriptor closes.
    Tcx(OwnedFd),
    /// A `cls_bpf` filter under a clsact qdisc, installed over rtnetlink.
    TcClassic {
        /// The member interface.
        ifname: String,
        /// Whether lagkit created the clsact qdisc (and so may delete it).
        created_qdisc: bool,
    },
}

impl Isolation {
    /// A short name for status output: `tcx` or `tc-clsact`.
    pub fn kind(&self) -> &'static str {
        match self {
            Isolation::Tcx(_) => "tcx",
            Isolation::TcClassic { .. } => "tc-clsact",
        }
    }
}

impl Isolation {
    /// Hands the isolation to the next daemon instead of undoing it: a
    /// tcx link's descriptor to pass on (the link stays while one is
    /// open); the tc fallback's filter stays installed (the bond's state
    /// file records it), so nothing is passed.
    pub fn hand_over(self) -> Option<OwnedFd> {
        match &self {
            Isolation::Tcx(fd) => fd.try_clone().ok(),
            Isolation::TcClassic { .. } => {
                // Not dropped: dropping removes the filter.
                std::mem::forget(self);
                None
            }
        }
    }
}

/// Why a member could not be isolated.
#[derive(Debug, thiserror::Error)]
pub enum IsolateError {
    /// Neither tcx nor a tc filter could be installed.
    #[error("cannot keep {ifname}'s frames from the host stack: tcx: {tcx}; tc: {} (needs Linux >= 6.6 with BPF, or a kernel with clsact and cls_bpf)", tc.as_ref().map_or_else(|| "not tried".to_string(), ToString::to_string))]
    Unsupported {
        /// The member.
        ifname: String,
        /// Why tcx failed.
        tcx: SysError,
        /// Why the tc fallback failed (`None`: not tried).
        tc: Option<lagkit_sys::Error>,
    },
}

/// Drops every frame at `link`'s ingress, after packet sockets have seen it.
/// Call it in the namespace `link` was opened in (the kernel resolves the
/// interface index in the caller's).
pub fn isolate_ingress(link: &Link) -> Result<Isolation, IsolateError> {
    let ifindex = link.ifindex().map_err(|e| IsolateError::Unsupported {
        ifname: link.name().to_string(),
        tcx: e,
        tc: None,
    })?;
    let tcx = match bpf_attach_tcx_drop(ifindex, false) {
        Ok(fd) => return Ok(Isolation::Tcx(fd)),
        Err(e) => e,
    };
    isolate_ingress_tc(link).map_err(|tc| IsolateError::Unsupported {
        ifname: link.name().to_string(),
        tcx,
        tc: Some(tc),
    })
}

/// The fallback of [`isolate_ingress`] alone: the `cls_bpf` drop filter
/// under a clsact qdisc, whether or not tcx would work (so that it can be
/// tested on kernels that have tcx).
pub fn isolate_ingress_tc(link: &Link) -> Result<Isolation, lagkit_sys::Error> {
    tc_classic(link.name()).map(|created_qdisc| Isolation::TcClassic {
        ifname: link.name().to_string(),
        created_qdisc,
    })
}

/// Fault injection (labs, tests): drops every frame interface `ifname` of
/// the calling thread's network namespace sends, its carrier staying up —
/// a link that fails silently in one direction. The fault lasts while the
/// returned descriptor is open.
pub fn blackhole_egress(ifname: &str) -> Result<OwnedFd, crate::OpenError> {
    // Opened here so the name and the index are resolved in the same
    // namespace the kernel attaches in (the caller's).
    let link = Link::open(ifname)?;
    let ifindex = link
        .ifindex()
        .map_err(|e| crate::OpenError::from_sys(e, ifname))?;
    bpf_attach_tcx_drop(ifindex, true).map_err(crate::OpenError::Sys)
}

/// Installs the fallback filter; returns whether the clsact qdisc was new
/// (an existing one, e.g. another program's, is used and left in place).
fn tc_classic(ifname: &str) -> Result<bool, lagkit_sys::Error> {
    let created = sys_tc::add_clsact(ifname).is_ok();
    sys_tc::add_drop_filter(ifname, Direction::Ingress, TC_PREF).inspect_err(|_| {
        if created {
            let _ = sys_tc::delete_clsact(ifname);
        }
    })?;
    Ok(created)
}

/// Removes the fallback filter (and the clsact qdisc if lagkit made it).
/// Best effort: the member may be gone.
pub fn remove_tc_filter(ifname: &str, created_qdisc: bool) {
    let _ = sys_tc::delete_filter(ifname, Direction::Ingress, TC_PREF);
    if created_qdisc {
        let _ = sys_tc::delete_clsact(ifname);
    }
}

impl Drop for Isolation {
    fn drop(&mut self) {
        if let Isolation::TcClassic {
            ifname,
            created_qdisc,
        } = self
        {
            remove_tc_filter(ifname, *created_qdisc);
        }
    }
}
