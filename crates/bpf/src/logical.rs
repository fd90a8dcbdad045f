//! The logical interface: what the host's stack sees as the bond.
//!
//! The kernel device made for this is netkit (a veth-like pair whose
//! primary end runs a BPF program as its transmit path); kernels without it
//! (and aya, which cannot attach to netkit yet) get one end of a veth pair
//! instead, the other end up and idle: the egress program redirects every
//! frame the stack sends, so the peer never receives one. The pair is made
//! over rtnetlink (`lagkit_sys::link`), and removed when the [`Logical`] is
//! dropped, from whichever thread, in the namespace it was made in.

use std::fs::File;
use std::os::fd::OwnedFd;

use lagkit_sys::link::{self, LinkChange};
use nix::net::if_::if_nametoindex;
use nix::sched::{setns, CloneFlags};

use crate::Error;

/// A logical interface (a veth end) and its idle peer; both are deleted on
/// drop.
#[derive(Debug)]
pub struct Logical {
    name: String,
    ifindex: u32,
    netns: OwnedFd,
    /// Left in place on drop ([`Logical::leave`]).
    kept: bool,
}

/// The calling thread's network namespace.
fn this_netns() -> Result<OwnedFd, Error> {
    File::open("/proc/thread-self/ns/net")
        .map(OwnedFd::from)
        .map_err(|source| Error::Io {
            what: "opening this thread's network namespace",
            source,
        })
}

impl Logical {
    /// Creates `name` with its peer `peer` (a veth pair) in the calling
    /// thread's network namespace, the peer up, with ARP and IPv6 off so it
    /// never speaks into the logical interface. `name` is left down and
    /// without addresses: those are the host's to give.
    pub fn create(name: &str, peer: &str) -> Result<Logical, Error> {
        let netns = this_netns()?;
        link::add_veth(name, peer, None)?;
        let ifindex = if_nametoindex(name).map_err(|_| Error::NoInterface {
            ifname: name.to_string(),
        })?;
        // From here on the pair exists, and dropping `logical` removes it
        // again if the rest fails.
        let logical = Logical {
            name: name.to_string(),
            ifindex,
            netns,
            kept: false,
        };
        let ipv6 = format!("/proc/sys/net/ipv6/conf/{peer}/disable_ipv6");
        // Without IPv6 in the kernel there is nothing to turn off.
        if std::path::Path::new(&ipv6).exists() {
            std::fs::write(&ipv6, "1").map_err(|source| Error::Io {
                what: "turning IPv6 off on the logical interface's peer",
                source,
            })?;
        }
        link::set(
            peer,
            &LinkChange {
                up: Some(true),
                arp: Some(false),
                ..LinkChange::default()
            },
        )?;
        Ok(logical)
    }

    /// Takes over the pair `name`/`peer` a killed daemon left, if `name`
    /// still has index `ifindex` (the interface its pinned programs send
    /// to) and its peer exists: as it is, with its addresses and state.
    pub fn adopt(name: &str, peer: &str, ifindex: u32) -> Result<Logical, Error> {
        let netns = this_netns()?;
        let now = if_nametoindex(name).map_err(|_| Error::NoInterface {
            ifname: name.to_string(),
        })?;
        if now != ifindex || if_nametoindex(peer).is_err() {
            return Err(Error::NoInterface {
                ifname: format!("{name} (index {ifindex}) with its peer {peer}"),
            });
        }
        Ok(Logical {
            name: name.to_string(),
            ifindex,
            netns,
            kept: false,
        })
    }

    /// Leaves the pair in place (for a pinned data path that goes on
    /// sending to it, and the daemon that will adopt both).
    pub fn leave(mut self) {
        self.kept = true;
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interface's index (what [`crate::Distribution::logical`] wants).
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }
}

/// Whether `ns` is the calling thread's network namespace (same device and
/// inode, as `ip netns identify` compares).
fn same_netns(ns: &OwnedFd) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(theirs) = ns.try_clone().map(File::from).and_then(|f| f.metadata()) else {
        return false;
    };
    std::fs::metadata("/proc/thread-self/ns/net")
        .is_ok_and(|mine| mine.dev() == theirs.dev() && mine.ino() == theirs.ino())
}

impl Drop for Logical {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        // A netlink socket belongs to its creator's namespace: a helper
        // thread enters the one the pair was made in, and deletes the pair
        // only if the name still means our interface (not one made since
        // under the same name). A thread already there does not enter it again: setns(2) needs
        // CAP_SYS_ADMIN even then, which a hardened service does not have.
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                if !same_netns(&self.netns) {
                    setns(&self.netns, CloneFlags::CLONE_NEWNET).map_err(|e| Error::Io {
                        what: "entering the logical interface's namespace",
                        source: e.into(),
                    })?;
                }
                if if_nametoindex(self.name.as_str()).ok() != Some(self.ifindex) {
                    return Ok(());
                }
                link::delete(&self.name).map_err(Error::from)
            })
            .join()
        });
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("lagkit-bpf: cannot remove {}: {e}", self.name),
            Err(_) => eprintln!(
                "lagkit-bpf: cannot remove {}: helper thread died",
                self.name
            ),
        }
    }
}
