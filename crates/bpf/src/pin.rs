//! Pins: what keeps the data path forwarding while no daemon runs.
//!
//! A tcx link lives as long as something refers to it. Held only by the
//! daemon's descriptors, it goes when the daemon dies, SIGKILL included,
//! and the bond stops moving frames although its interface, its address
//! and the partner's aggregate are all still there. Pinned in bpffs, each
//! link (and through it its program and the maps the program uses, the
//! plan among them) outlives the process: the kernel keeps forwarding with
//! the last plan published.
//!
//! A daemon pins its path's links into a directory of its own under the
//! bond's pin directory ([`Datapath::pin`]); a clean stop unpins them
//! (dropping the [`Datapath`]). A starting daemon that finds pins
//! ([`Adopted::open`]) attaches its own programs behind them, publishes
//! its plan, and only then releases them ([`Adopted::release`]): tcx runs
//! the older links first, so until that moment every frame is handled by
//! the old programs, and from it by the new ones, whatever version each
//! set is.
//!
//! The counter maps are pinned beside the links, so the frames counted
//! while no daemon ran are not lost ([`Adopted::counters`]).
//!
//! bpffs must outlive the daemon's mount namespace for any of this to
//! help: [`base`] finds one, or says why there is none.

use std::path::{Path, PathBuf};

use aya::maps::{Map, MapData, PerCpuArray};
use aya::programs::links::{FdLink, PinnedLink};

use crate::abi::Counter;
use crate::{Count, Counters, Error};

/// Counter maps pinned beside the links, by their names in the object.
pub(crate) const COUNTER_MAPS: [&str; 2] = ["tx_counters", "rx_counters"];

const BPFFS_MAGIC: i64 = 0xcafe_4a11;

/// Whether `path` is the root of a mounted bpffs.
// The magic's type is the C library's `__fsword_t`: i64 here, not everywhere.
#[allow(clippy::unnecessary_cast)]
fn is_bpffs(path: &Path) -> bool {
    nix::sys::statfs::statfs(path).is_ok_and(|s| s.filesystem_type().0 as i64 == BPFFS_MAGIC)
}

/// Where lagkit pins: a bpffs at `/sys/fs/bpf` (where systemd mounts one)
/// or at `/run/lagkit/bpffs` (visible inside `ip netns exec`, which mounts
/// a sysfs of its own over `/sys`), with `lagkit/` below it. Without
/// either it is an error that says what to do: lagkit does not mount one
/// itself, as a mount made in a daemon's own mount namespace (a service's,
/// or `ip netns exec`'s) would end with that namespace, pins and all.
///
/// `lagkit/` is made owned by this process's user, mode 0700, and one that
/// exists is trusted only if it is that: a bpffs is often mounted
/// world-writable (mode 1777), and a directory another user made there
/// could be renamed under lagkit, hiding pinned programs that then go on
/// forwarding (or dropping) behind the next daemon's back.
pub fn base() -> Result<PathBuf, NoBpffs> {
    for root in ["/sys/fs/bpf", "/run/lagkit/bpffs"] {
        if is_bpffs(Path::new(root)) {
            let dir = Path::new(root).join("lagkit");
            own_dir(&dir, nix::unistd::geteuid().as_raw()).map_err(|why| NoBpffs(Some(why)))?;
            return Ok(dir);
        }
    }
    Err(NoBpffs(None))
}

/// Makes `dir` (mode 0700), or checks that the one there is a directory
/// (not a link) owned by `uid` that no one else may write to; else says
/// what is wrong and what to do.
pub fn own_dir(dir: &Path, uid: u32) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make {}: {e}", dir.display())),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let fix = format!(
        "lagkit will not pin there; remove it as root (rm -r {}) and start again, and mount bpffs with -o mode=0700",
        dir.display()
    );
    if !m.file_type().is_dir() {
        return Err(format!("{} is not a directory: {fix}", dir.display()));
    }
    if m.uid() != uid {
        return Err(format!(
            "{} belongs to uid {}, not to lagkit's uid {uid} (another user made it): {fix}",
            dir.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is writable by other users (mode {:o}): {fix}",
            dir.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// No bpffs is mounted where lagkit pins, or the directory lagkit would
/// pin in is not one it can trust; the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoBpffs(pub Option<String>);

impl std::fmt::Display for NoBpffs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(why) => f.write_str(why),
            None => f.write_str(
                "no bpffs at /sys/fs/bpf or /run/lagkit/bpffs (mount one in the host's mount \
                 namespace: `mount -t bpf -o mode=0700 bpf /sys/fs/bpf`, or for bonds started \
                 with `ip netns exec`: `mkdir -p /run/lagkit/bpffs && mount -t bpf -o mode=0700 \
                 bpf /run/lagkit/bpffs`)",
            ),
        }
    }
}

impl std::error::Error for NoBpffs {}

/// A link held by a [`Datapath`](crate::Datapath): by descriptor only, or
/// also pinned.
#[derive(Debug)]
pub(crate) enum Held {
    Fd(FdLink),
    Pinned(PinnedLink),
    /// Taken out while changing state.
    Gone,
}

/// A datapath's links, by pin name, and the directory they are pinned in.
#[derive(Debug, Default)]
pub(crate) struct Links {
    pub links: Vec<(String, Held)>,
    pub dir: Option<PathBuf>,
}

impl Links {
    /// Pins every link and the counter maps (`maps`: name and map) into
    /// `dir`, which must not exist yet.
    pub fn pin(&mut self, dir: &Path, maps: &[(&str, &Map)]) -> Result<(), Error> {
        let io = |what: &'static str| move |source| Error::Io { what, source };
        std::fs::create_dir_all(dir).map_err(io("creating the bond's pin directory"))?;
        self.dir = Some(dir.to_path_buf());
        for (name, held) in &mut self.links {
            if let Held::Fd(_) = held {
                let Held::Fd(link) = std::mem::replace(held, Held::Gone) else {
                    unreachable!()
                };
                match link.pin(dir.join(&*name)) {
                    Ok(p) => *held = Held::Pinned(p),
                    Err(e) => {
                        return Err(Error::Io {
                            what: "pinning a link",
                            source: std::io::Error::other(e.to_string()),
                        })
                    }
                }
            }
        }
        for (name, map) in maps {
            map.pin(dir.join(name)).map_err(|e| Error::Io {
                what: "pinning a counter map",
                source: std::io::Error::other(e.to_string()),
            })?;
        }
        Ok(())
    }

    /// Removes every pin (the links then live as long as this process
    /// holds them) and the directory.
    pub fn unpin(&mut self) {
        for (_, held) in &mut self.links {
            if let Held::Pinned(_) = held {
                let Held::Pinned(p) = std::mem::replace(held, Held::Gone) else {
                    unreachable!()
                };
                // If the file is gone already, the descriptor went with the
                // PinnedLink, and the link with both.
                if let Ok(fd) = p.unpin() {
                    *held = Held::Fd(fd);
                }
            }
        }
        if let Some(dir) = self.dir.take() {
            for m in COUNTER_MAPS {
                let _ = std::fs::remove_file(dir.join(m));
            }
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// The pinned links and counters a previous daemon of this bond left: they
/// keep forwarding until [`Adopted::release`].
#[derive(Debug)]
pub struct Adopted {
    links: Vec<PinnedLink>,
    counters: Vec<Counters>,
    dirs: Vec<PathBuf>,
}

/// Every entry of a counter map, summed over CPUs.
pub(crate) fn read_counters(map: &Map) -> Result<Vec<Count>, Error> {
    let counters = PerCpuArray::<_, Counter>::try_from(map)?;
    let mut all = Vec::new();
    for i in 0..counters.len() {
        let per_cpu = counters.get(&i, 0)?;
        all.push(per_cpu.iter().fold(Count::default(), |s, c| Count {
            packets: s.packets + c.packets,
            bytes: s.bytes + c.bytes,
        }));
    }
    Ok(all)
}

impl Adopted {
    /// Opens every pin under `bond_dir` (one directory per data path a
    /// daemon pinned). `Ok(None)`: there are none.
    pub fn open(bond_dir: &Path) -> Result<Option<Adopted>, Error> {
        let io = |what: &'static str| move |source| Error::Io { what, source };
        let entries = match std::fs::read_dir(bond_dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("reading the bond's pin directory")(e)),
        };
        let mut found = Adopted {
            links: Vec::new(),
            counters: Vec::new(),
            dirs: Vec::new(),
        };
        for dir in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(io("reading a pin directory"))?
                .flatten()
                .map(|e| e.path())
                .collect();
            files.sort();
            for f in &files {
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if COUNTER_MAPS.contains(&name) {
                    continue;
                }
                let link = PinnedLink::from_pin(f).map_err(|e| Error::Io {
                    what: "opening a pinned link",
                    source: std::io::Error::other(e.to_string()),
                })?;
                found.links.push(link);
            }
            let mut maps = Vec::new();
            for m in COUNTER_MAPS {
                let map = MapData::from_pin(dir.join(m))
                    .ok()
                    .map(Map::PerCpuArray)
                    .and_then(|map| read_counters(&map).ok());
                maps.push(map.unwrap_or_default());
            }
            if let [tx, rx] = &mut maps[..] {
                found
                    .counters
                    .push(Counters::split(std::mem::take(tx), std::mem::take(rx)));
            }
            found.dirs.push(dir);
        }
        Ok((!found.dirs.is_empty()).then_some(found))
    }

    /// How many links are pinned.
    pub fn links(&self) -> usize {
        self.links.len()
    }

    /// What the pinned programs counted (one entry per pinned path).
    pub fn counters(&self) -> &[Counters] {
        &self.counters
    }

    /// Unpins and closes every link, which detaches it: call once the
    /// programs that take over are attached and have their plan. Returns
    /// how many links were released.
    pub fn release(self) -> usize {
        let n = self.links.len();
        for l in self.links {
            // Unpinned and dropped: the last reference, so detached.
            let _ = l.unpin();
        }
        for dir in self.dirs {
            for m in COUNTER_MAPS {
                let _ = std::fs::remove_file(dir.join(m));
            }
            let _ = std::fs::remove_dir(&dir);
        }
        n
    }
}

/// Detaches every link pinned under `dir` (a bond's or a switch's pin
/// directory: what a killed daemon left forwarding) and removes `dir` and
/// its parent if they are then empty. How many links were released.
pub fn release_all(dir: &Path) -> usize {
    let n = match Adopted::open(dir) {
        Ok(Some(a)) => a.release(),
        _ => 0,
    };
    let _ = std::fs::remove_dir(dir);
    if let Some(parent) = dir.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The pin directory is made the caller's, 0700; one another user made,
    /// one others may write to, or a link, is refused with what to do.
    #[test]
    fn only_a_pin_directory_of_our_own_is_trusted() {
        let me = nix::unistd::geteuid().as_raw();
        let root = std::env::temp_dir().join(format!("lk-pin-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let dir = root.join("lagkit");
        assert_eq!(own_dir(&dir, me), Ok(()));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(own_dir(&dir, me), Ok(()), "ours, again");
        let e = own_dir(&dir, me + 1).unwrap_err();
        assert!(
            e.contains("another user made it") && e.contains("rm -r"),
            "{e}"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = own_dir(&dir, me).unwrap_err();
        assert!(e.contains("writable by other users (mode 777)"), "{e}");
        let link = root.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(own_dir(&link, me)
            .unwrap_err()
            .contains("is not a directory"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
