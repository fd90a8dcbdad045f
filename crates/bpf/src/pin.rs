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
pub fn base() -> Result<PathBuf, NoBpffs> {
    for root in ["/sys/fs/bpf", "/run/lagkit/bpffs"] {
        if is_bpffs(Path::new(root)) {
            return Ok(Path::new(root).join("lagkit"));
        }
    }
    Err(NoBpffs)
}

/// No bpffs is mounted where lagkit pins; the message says how to mount one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoBpffs;

impl std::fmt::Display for NoBpffs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "no bpffs at /sys/fs/bpf or /run/lagkit/bpffs (mount one in the host's mount \
             namespace: `mount -t bpf bpf /sys/fs/bpf`, or for bonds started with `ip netns \
             exec`: `mkdir -p /run/lagkit/bpffs && mount -t bpf bpf /run/lagkit/bpffs`)",
        )
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
