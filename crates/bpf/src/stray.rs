//! Programs on a data path's hooks that no live daemon holds.
//!
//! A killed daemon's links outlive it through their pins until the next
//! daemon adopts and releases them. If those pins are lost to lagkit (the
//! pin directory renamed or removed by hand, a bpffs remounted), the links
//! stay attached with nothing to find them by: tcx runs them before any
//! program attached later, and they redirect every member's frames to a
//! logical interface that is gone. A new daemon would start "afresh" and
//! black-hole the bond. So once its own programs are in force, a daemon
//! looks at every hook it uses and detaches the lagkit programs that are
//! not its own ([`Datapath::clear_strays`]); anything else it finds there
//! (another tool's programs) it reports and leaves alone.
//!
//! aya can list links but not detach one it did not create, so the two
//! commands this takes (BPF_LINK_GET_FD_BY_ID, BPF_LINK_DETACH) are issued
//! here directly.

use std::collections::BTreeSet;
use std::os::fd::{FromRawFd, OwnedFd};

use aya::programs::links::LinkType;
use aya::programs::{loaded_links, SchedClassifier, TcAttachType};

use crate::pin::Links;
use crate::{Datapath, Error};

/// `enum bpf_cmd` values (include/uapi/linux/bpf.h).
const BPF_LINK_GET_FD_BY_ID: libc::c_long = 30;
const BPF_LINK_DETACH: libc::c_long = 34;

/// The prefix of the bond object's program names.
const BOND: &str = "lagkit_";

/// A program found on one of a data path's hooks that is not its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stray {
    /// The hook: `ingress` or `egress` of this interface.
    pub hook: String,
    /// The kernel's program id.
    pub program_id: u32,
    /// Its name as the kernel has it (at most 15 bytes).
    pub name: String,
    /// Whether it was detached: lagkit's own programs are; another
    /// tool's are left.
    pub detached: bool,
}

impl Datapath {
    /// Detaches every lagkit program on this data path's hooks that is not
    /// one of its own (see the module's comment), and reports those and any
    /// other tool's programs found there. Call it once this data path
    /// forwards and any adopted one has been released.
    pub fn clear_strays(&self) -> Result<Vec<Stray>, Error> {
        clear(&self.links, &self.program_ids()?, BOND)
    }
}

/// What both clear: on each hook of `links`, programs not in `ours`;
/// those named `prefix*` are detached.
fn clear(links: &Links, ours: &[u32], prefix: &str) -> Result<Vec<Stray>, Error> {
    let mut found = Vec::new();
    for (name, _) in &links.links {
        let Some((side, ifindex)) = name.split_once('-') else {
            continue;
        };
        let Ok(ifindex) = ifindex.parse::<u32>() else {
            continue;
        };
        let Ok(ifname) = nix::net::if_::if_indextoname(ifindex) else {
            continue;
        };
        let ifname = ifname.to_string_lossy().into_owned();
        let at = if side == "egress" {
            TcAttachType::Egress
        } else {
            TcAttachType::Ingress
        };
        let (_, progs) = SchedClassifier::query_tcx(&ifname, at)?;
        for p in progs {
            if ours.contains(&p.id()) {
                continue;
            }
            let pname = p.name_as_str().unwrap_or("").to_string();
            found.push(Stray {
                hook: format!("{side} of {ifname}"),
                program_id: p.id(),
                detached: pname.starts_with(prefix),
                name: pname,
            });
        }
    }
    let doomed: BTreeSet<u32> = found
        .iter()
        .filter(|s| s.detached)
        .map(|s| s.program_id)
        .collect();
    if doomed.is_empty() {
        return Ok(found);
    }
    for link in loaded_links() {
        let Ok(link) = link else { continue };
        if link.link_type().ok() == Some(LinkType::Tcx) && doomed.contains(&link.program_id()) {
            detach_link(link.id()).map_err(|source| Error::Io {
                what: "detaching a stray lagkit program",
                source,
            })?;
        }
    }
    Ok(found)
}

/// Detaches link `id`, whoever holds it: its program stops running on its
/// hook at once (the link itself lives on, defunct, until its last
/// descriptor or pin goes).
fn detach_link(id: u32) -> std::io::Result<()> {
    let fd = bpf_u32(BPF_LINK_GET_FD_BY_ID, id)?;
    // SAFETY: the kernel just returned this descriptor to us.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    bpf_u32(BPF_LINK_DETACH, std::os::fd::AsRawFd::as_raw_fd(&fd) as u32)?;
    Ok(())
}

/// bpf(2) with `cmd` on a `union bpf_attr` whose first u32 is `arg` (the
/// link id for GET_FD_BY_ID, the link's descriptor for DETACH) and the
/// rest zero, as both commands want it.
fn bpf_u32(cmd: libc::c_long, arg: u32) -> std::io::Result<libc::c_long> {
    let mut attr = [0u32; 4];
    attr[0] = arg;
    // SAFETY: the kernel reads at most the size passed, which is the
    // buffer's, and writes nothing into it for these commands.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(&attr),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(r)
}
