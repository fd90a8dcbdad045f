//! lagkit's in-kernel data path: tc BPF programs instead of forwarding
//! frames in user space.
//!
//! The measured case for it is in the lab notes: a tc egress program on the
//! logical interface that redirects each frame to a member runs at about
//! twice the userspace engine's throughput for half its CPU.
//!
//! The shape: the logical interface ([`Logical`]) is one end of a veth pair
//! whose peer stays idle (netkit, the device made for this, is still to
//! come). `lagkit_egress` on its tcx egress picks a member as the published
//! plan ([`Distribution`]) says and redirects the frame there;
//! `lagkit_ingress` on each member's tcx ingress redirects data frames to
//! the logical interface and leaves slow-protocol and PAgP frames to the
//! daemon. Both are tcx links owned by [`Datapath`]: dropping it unpinned
//! detaches everything, and nothing is left on the interfaces. Pinned in
//! bpffs (`Datapath::pin`), they outlive the daemon and keep forwarding
//! with the last plan until the next one takes them over ([`Adopted`]).
//! Plans are written into an idle one of 16 mapped slots and made active
//! with one store. [`switch`] is the same for lagkit's switch: its
//! `lksw_ingress` on each port does what `lagkit_switch::Bridge` decides.
//!
//! What must not change is *which* member a frame takes: the planner,
//! `lagkit flow` and the userspace engine all ask `lagkit_hash`, so
//! `src/bpf/flow.h`, shared by the bond's and the switch's programs, is a
//! line-by-line transliteration of its frame parser and policies, and
//! [`Datapath::test_run`] (BPF_PROG_TEST_RUN) lets a test hold the two to
//! the same answer on any frame.
//!
//! The programs are C compiled by Debian's clang in `build.rs` and loaded
//! with [aya](https://aya-rs.dev): pure Rust (no libbpf or libelf to link),
//! maintained, and since 0.14 with tcx attachment and `test_run`, the two
//! things this crate needs beyond loading.

use core::fmt;

use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::sync::Arc;

use aya::maps::{HashMap, Map, MapData, MapError, PerCpuArray};
use aya::programs::links::FdLink;
use aya::programs::tc::TcAttachOptions;
use aya::programs::{
    LinkOrder, ProgramError, SchedClassifier, TcAttachType, TestRun, TestRunOptions,
};
use aya::{Ebpf, EbpfError};
use lagkit_hash::{BUCKETS, MAX_MEMBERS};

mod abi;
mod logical;
mod pin;
mod plan;
mod stray;
pub mod switch;

pub use logical::Logical;
pub use pin::{base as pin_base, release_all, Adopted, NoBpffs};
pub use plan::{Distribution, Publisher, Spread, Tlb};
pub use stray::Stray;

use abi::{read_cb, IFINDEX, SKB_CTX_LEN};

/// The object `build.rs` compiled, aligned as aya's ELF parser wants it.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/lagkit.bpf.o"));

/// The same programs with one harmless instruction more (other tags), which
/// a daemon loads when `LAGKIT_TEST_BPF_VARIANT=1` is in its environment:
/// how the tests stand for an upgrade to a build whose programs differ.
static VARIANT: &[u8] =
    aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/lagkit-variant.bpf.o"));

/// Loads `object` with `loader` (its map sizes set by the caller), then
/// its `programs` through the verifier, and maps its `plans` map (one
/// element of `Plans<C>`, BPF_F_MMAPABLE) into this process: what the
/// bond's and the switch's data paths both start with.
pub(crate) fn load_object<C: Copy + PartialEq>(
    loader: &mut aya::EbpfLoader<'_>,
    object: &[u8],
    programs: &[&str],
) -> Result<(Ebpf, plan::Mapped<C>), Error> {
    // Without the kernel's BTF: the programs use no CO-RE relocations,
    // and the default loader parses all of vmlinux's type information,
    // which left a bond daemon 16 MB larger.
    let mut ebpf = loader.btf(None).load(object)?;
    // The loader's default already parsed it once; give those pages
    // back (glibc keeps freed memory otherwise).
    // SAFETY: malloc_trim only returns free heap pages to the system.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
    for &name in programs {
        let prog: &mut SchedClassifier = ebpf
            .program_mut(name)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        prog.load()?;
    }
    let Map::Array(plans) = ebpf.map("plans").ok_or(Error::Missing("plans map"))? else {
        return Err(Error::Missing("plans array"));
    };
    let mapped = plan::Mapped::new(plans.fd().as_fd())?;
    Ok((ebpf, mapped))
}

/// The object to load: [`OBJECT`], or [`VARIANT`] when the test seam asks.
fn object() -> &'static [u8] {
    if std::env::var_os("LAGKIT_TEST_BPF_VARIANT").is_some_and(|v| v == "1") {
        VARIANT
    } else {
        OBJECT
    }
}

const EGRESS: &str = "lagkit_egress";
const INGRESS: &str = "lagkit_ingress";

/// Why loading or driving the BPF programs failed.
#[derive(Debug)]
pub enum Error {
    /// The object did not load (verifier rejection, no BPF permission).
    Load(EbpfError),
    /// A program could not be loaded, attached or run.
    Program(ProgramError),
    /// A map could not be opened, read or written.
    Map(MapError),
    /// The object lacks a program or map this crate expects (a build mismatch).
    Missing(&'static str),
    /// No interface has this name (in the calling thread's namespace).
    NoInterface {
        /// The name.
        ifname: String,
    },
    /// A table (bucket map, MACs) does not have one entry per member.
    Members {
        /// Members the table has.
        members: usize,
        /// Transmitting members given.
        ifindexes: usize,
    },
    /// The kernel refused a link change (making or removing the logical
    /// interface's veth pair), or the netlink socket failed.
    Netlink(lagkit_sys::Error),
    /// A system call or file operation failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// More members than the programs hold.
    TooManyMembers {
        /// How many were given.
        count: usize,
    },
    /// More ports or channels than the switch's program holds.
    TooManyPorts {
        /// "ports" or "channels".
        what: &'static str,
        /// How many were given.
        count: usize,
        /// How many it holds.
        max: usize,
    },
    /// A member index (active, tlb) beyond the transmitting members.
    NoSuchMember {
        /// The index.
        member: usize,
        /// How many members transmit.
        members: usize,
    },
}

/// An error and every cause below it, `a: b: c` (aya's messages name the
/// layer, e.g. "BTF error", and leave the detail to their sources).
struct Chain<'a>(&'a dyn std::error::Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load(e) => write!(
                f,
                "cannot load lagkit's BPF programs: {} (needs root, or CAP_BPF and \
                 CAP_NET_ADMIN)",
                Chain(e)
            ),
            Error::Program(e) => write!(f, "BPF program: {}", Chain(e)),
            Error::Map(e) => write!(f, "BPF map: {}", Chain(e)),
            Error::Missing(what) => write!(f, "lagkit's BPF object has no {what}"),
            Error::NoInterface { ifname } => write!(
                f,
                "no interface {ifname:?} in this network namespace (check `ip link`)"
            ),
            Error::Members { members, ifindexes } => write!(
                f,
                "{ifindexes} transmitting members given for a table of {members} members"
            ),
            Error::Netlink(e) => write!(f, "{e}"),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::TooManyPorts { what, count, max } => write!(
                f,
                "{count} {what} given; the switch's BPF program holds at most {max}"
            ),
            Error::TooManyMembers { count } => write!(
                f,
                "{count} members given; lagkit's BPF programs hold at most {MAX_MEMBERS}"
            ),
            Error::NoSuchMember { member, members } => write!(
                f,
                "member {member} named, but only {members} members transmit"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Load(e) => Some(e),
            Error::Program(e) => Some(e),
            Error::Map(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<lagkit_sys::Error> for Error {
    fn from(e: lagkit_sys::Error) -> Self {
        Error::Netlink(e)
    }
}

impl From<EbpfError> for Error {
    fn from(e: EbpfError) -> Error {
        Error::Load(e)
    }
}

impl From<ProgramError> for Error {
    fn from(e: ProgramError) -> Error {
        Error::Program(e)
    }
}

impl From<MapError> for Error {
    fn from(e: MapError) -> Error {
        Error::Map(e)
    }
}

/// Why the kernel would not run lagkit's programs compiled, if it would not
/// (`net.core.bpf_jit_enable` = 0): `engine = auto` then picks the
/// userspace engine, for the bond and the switch alike.
pub fn jit_off() -> Option<String> {
    let v = std::fs::read_to_string("/proc/sys/net/core/bpf_jit_enable").ok()?;
    (v.trim() == "0").then(|| {
        "the BPF JIT is off (net.core.bpf_jit_enable = 0); interpreted programs would be slower than the userspace engine".to_string()
    })
}

/// One loaded program ([`Datapath::programs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// Its name in the object.
    pub name: &'static str,
    /// The kernel's id.
    pub id: u32,
    /// The kernel's tag.
    pub tag: u64,
}

/// The ids of the tcx programs attached to interface `ifname` (in the
/// calling thread's namespace) on egress (`egress`) or ingress, in the
/// order they run: whatever loaded them, this process or another.
pub fn attached(ifname: &str, egress: bool) -> Result<Vec<u32>, Error> {
    let at = if egress {
        TcAttachType::Egress
    } else {
        TcAttachType::Ingress
    };
    let (_, progs) = SchedClassifier::query_tcx(ifname, at)?;
    Ok(progs.iter().map(|p| p.id()).collect())
}

/// What the egress program decided for one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The member index, `None` when there was none to choose (dropped).
    pub member: Option<usize>,
    /// The policy's raw value, as [`lagkit_hash::Policy::hash`] defines it
    /// (0 for spreads without a policy).
    pub hash: u64,
    /// The bucket, for policies that have one ([`lagkit_hash::Policy::bucket`]).
    pub bucket: Option<u8>,
    /// The interface the frame was redirected to (0 when dropped).
    pub ifindex: u32,
    /// The program's tc verdict (`TC_ACT_REDIRECT` or `TC_ACT_SHOT`).
    pub verdict: u32,
}

/// Frames and bytes, as a program counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Frames.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// The loaded programs, their maps and their attachments; dropping it
/// detaches every program and frees every map.
pub struct Datapath {
    /// The plans map as this process writes it (dropped before `ebpf`).
    mapped: Arc<plan::Mapped<abi::Config>>,
    /// The tcx links, held here (not by `ebpf`) so they can be pinned.
    links: pin::Links,
    ebpf: Ebpf,
}

impl Drop for Datapath {
    /// A clean end: the pins go, so the links detach with this process's
    /// descriptors. (A killed process never gets here: its pins keep the
    /// data path forwarding.)
    fn drop(&mut self) {
        self.links.unpin();
    }
}

impl Datapath {
    /// Loads the programs (through the verifier) with no plan: egress drops
    /// every frame and ingress every data frame until [`Datapath::configure`].
    pub fn load() -> Result<Datapath, Error> {
        let (ebpf, mapped) =
            load_object(&mut aya::EbpfLoader::new(), object(), &[EGRESS, INGRESS])?;
        let mapped = Arc::new(mapped);
        Ok(Datapath {
            mapped,
            links: pin::Links::default(),
            ebpf,
        })
    }

    /// Publishes a distribution, atomically as the data path sees it: each
    /// frame is handled wholly under the old or wholly under the new one.
    pub fn configure(&mut self, d: &Distribution<'_>) -> Result<(), Error> {
        self.publisher()?.publish(d)
    }

    /// A handle of its own on the plan, for a thread that publishes while
    /// another one reads counters or runs tests.
    pub fn publisher(&self) -> Result<Publisher, Error> {
        Ok(Publisher {
            mapped: self.mapped.clone(),
        })
    }

    /// Attaches egress to the logical interface `ifname` (tcx); returns its
    /// index. Names resolve in the calling thread's network namespace.
    pub fn attach_egress(&mut self, ifname: &str) -> Result<u32, Error> {
        self.attach(EGRESS, ifname, TcAttachType::Egress)
    }

    /// Attaches ingress to the member `ifname` (tcx, after any program
    /// already there); returns its index.
    pub fn attach_ingress(&mut self, ifname: &str) -> Result<u32, Error> {
        self.attach(INGRESS, ifname, TcAttachType::Ingress)
    }

    /// The kernel's ids of the egress and ingress programs (as `bpftool prog`
    /// and `bpftool link` show them).
    pub fn program_ids(&self) -> Result<[u32; 2], Error> {
        let id = |name| -> Result<u32, Error> {
            let prog: &SchedClassifier = self
                .ebpf
                .program(name)
                .ok_or(Error::Missing("program"))?
                .try_into()?;
            Ok(prog.info()?.id())
        };
        Ok([id(EGRESS)?, id(INGRESS)?])
    }

    /// This datapath's programs: name, kernel id and tag (the hash of
    /// their instructions, which differs between builds whose programs
    /// differ).
    pub fn programs(&self) -> Result<Vec<Program>, Error> {
        let mut all = Vec::new();
        for name in [EGRESS, INGRESS] {
            let prog: &SchedClassifier = self
                .ebpf
                .program(name)
                .ok_or(Error::Missing("program"))?
                .try_into()?;
            let info = prog.info()?;
            all.push(Program {
                name,
                id: info.id(),
                tag: info.tag(),
            });
        }
        Ok(all)
    }

    fn attach(&mut self, prog: &str, ifname: &str, at: TcAttachType) -> Result<u32, Error> {
        let ifindex = nix::net::if_::if_nametoindex(ifname).map_err(|_| Error::NoInterface {
            ifname: ifname.to_string(),
        })?;
        let prog: &mut SchedClassifier = self
            .ebpf
            .program_mut(prog)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        // tcx explicitly: a link owned by a descriptor leaves nothing behind
        // (unless pinned), where a netlink filter would outlive the process.
        let id =
            prog.attach_with_options(ifname, at, TcAttachOptions::TcxOrder(LinkOrder::default()))?;
        let link = FdLink::try_from(prog.take_link(id)?).map_err(|e| {
            Error::Program(ProgramError::IOError(std::io::Error::other(e.to_string())))
        })?;
        let name = match at {
            TcAttachType::Egress => format!("egress-{ifindex}"),
            _ => format!("ingress-{ifindex}"),
        };
        self.links.links.push((name, pin::Held::Fd(link)));
        Ok(ifindex)
    }

    /// Pins every link attached so far, and the counter maps, into `dir`
    /// (on bpffs, see [`pin_base`]; created here, and it must not hold
    /// pins already): from now on the programs keep forwarding if this
    /// process dies, until a daemon adopts them ([`Adopted`]). Dropping
    /// the `Datapath` removes the pins.
    pub fn pin(&mut self, dir: &std::path::Path) -> Result<(), Error> {
        let mut maps = Vec::new();
        for name in pin::COUNTER_MAPS {
            maps.push((name, self.ebpf.map(name).ok_or(Error::Missing(name))?));
        }
        let r = self.links.pin(dir, &maps);
        if r.is_err() {
            self.links.unpin();
        }
        r
    }

    /// Ends this process's hold on a pinned datapath and leaves the pins:
    /// the programs go on forwarding with the last plan until a daemon
    /// adopts them ([`Adopted`]). (A datapath that is not pinned just
    /// detaches, as on drop.)
    pub fn leave_pinned(mut self) {
        if self.links.dir.take().is_some() {
            // Closing a pinned link's descriptor leaves the link.
            self.links.links.clear();
        }
    }

    /// The directory the links are pinned in, if they are.
    pub fn pinned(&self) -> Option<&std::path::Path> {
        self.links.dir.as_deref()
    }

    /// Runs the egress program on `frame` (an Ethernet frame of at least 14
    /// bytes; an IP one needs its fixed IP header) with BPF_PROG_TEST_RUN:
    /// nothing is sent (but broadcast's copies: they are clones, sent at
    /// once), the counters count.
    pub fn test_run(&self, frame: &[u8]) -> Result<Choice, Error> {
        Ok(self.run(EGRESS, frame, 0, None)?.0)
    }

    /// Like [`Datapath::test_run`], and returns the frame as the program
    /// left it (balance-tlb rewrites the source MAC).
    pub fn test_run_rewrite(&self, frame: &[u8]) -> Result<(Choice, Vec<u8>), Error> {
        let mut out = vec![0u8; frame.len()];
        let (choice, len) = self.run(EGRESS, frame, 0, Some(&mut out))?;
        out.truncate(len);
        Ok((choice, out))
    }

    /// Runs the ingress program on `frame` as if received on interface
    /// `ifindex` (which must exist in the calling thread's namespace);
    /// returns its tc verdict (`TC_ACT_REDIRECT`, `TC_ACT_SHOT`, `TC_ACT_OK`).
    pub fn test_run_ingress(&self, frame: &[u8], ifindex: u32) -> Result<u32, Error> {
        Ok(self.run(INGRESS, frame, ifindex, None)?.0.verdict)
    }

    /// Like [`Datapath::test_run_ingress`], and returns the frame as the
    /// program left it (balance-alb restores the bond's MAC).
    pub fn test_run_ingress_rewrite(
        &self,
        frame: &[u8],
        ifindex: u32,
    ) -> Result<(u32, Vec<u8>), Error> {
        let mut out = vec![0u8; frame.len()];
        let (choice, len) = self.run(INGRESS, frame, ifindex, Some(&mut out))?;
        out.truncate(len);
        Ok((choice.verdict, out))
    }

    fn run(
        &self,
        prog: &str,
        frame: &[u8],
        ifindex: u32,
        data_out: Option<&mut [u8]>,
    ) -> Result<(Choice, usize), Error> {
        let prog: &SchedClassifier = self
            .ebpf
            .program(prog)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        let mut ctx_in = [0u8; SKB_CTX_LEN];
        ctx_in[IFINDEX..IFINDEX + 4].copy_from_slice(&ifindex.to_ne_bytes());
        let mut ctx_out = [0u8; SKB_CTX_LEN];
        let result = prog.test_run(TestRunOptions {
            data_in: Some(frame),
            data_out,
            ctx_in: Some(&ctx_in),
            ctx_out: Some(&mut ctx_out),
            ..TestRunOptions::default()
        })?;
        let cb = read_cb(&ctx_out);
        let choice = Choice {
            member: cb.member.checked_sub(1).map(|m| m as usize),
            hash: cb.hash,
            bucket: cb.bucket.checked_sub(1).map(|b| b as u8),
            ifindex: cb.ifindex,
            verdict: result.return_value,
        };
        Ok((choice, result.data_size_out as usize))
    }

    /// Frames and bytes per member as egress (`tx`) and ingress (`rx`)
    /// counted them, summed over CPUs.
    pub fn counters(&self) -> Result<Counters, Error> {
        Ok(Counters::split(
            self.count("tx_counters")?,
            self.count("rx_counters")?,
        ))
    }

    /// Every entry of a counter map, summed over CPUs.
    fn count(&self, name: &'static str) -> Result<Vec<Count>, Error> {
        pin::read_counters(self.ebpf.map(name).ok_or(Error::Missing(name))?)
    }

    /// Injected loss (tests, labs): each frame interface `ifindex` sends or
    /// receives is dropped with probability `p` (0 stops it), under plans
    /// with [`Distribution::faults`] set.
    pub fn set_fault_loss(&mut self, ifindex: u32, p: f64) -> Result<(), Error> {
        let map = self
            .ebpf
            .map_mut("faults")
            .ok_or(Error::Missing("faults"))?;
        let mut faults = HashMap::<&mut MapData, u32, u32>::try_from(map)?;
        // The program drops when a random u32 is below the threshold.
        let chance = (p.clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32;
        faults.insert(ifindex, chance, 0)?;
        Ok(())
    }

    /// balance-alb: `client` was told to send to the member on interface
    /// `ifindex`; ARP replies to it leave by that member from now on.
    pub fn set_alb_client(&mut self, client: Ipv4Addr, ifindex: u32) -> Result<(), Error> {
        self.alb_clients()?.insert(u32::from(client), ifindex, 0)?;
        Ok(())
    }

    /// balance-alb: forgets `client` (its replies then go by its address
    /// mod the member count).
    pub fn remove_alb_client(&mut self, client: Ipv4Addr) -> Result<(), Error> {
        match self.alb_clients()?.remove(&u32::from(client)) {
            Err(MapError::SyscallError(e)) if e.io_error.kind() == std::io::ErrorKind::NotFound => {
                Ok(())
            }
            other => Ok(other?),
        }
    }

    fn alb_clients(&mut self) -> Result<HashMap<&mut MapData, u32, u32>, Error> {
        let map = self
            .ebpf
            .map_mut("alb_clients")
            .ok_or(Error::Missing("alb_clients"))?;
        Ok(HashMap::try_from(map)?)
    }

    /// Bytes sent per bucket since load (summed over CPUs), for plans that
    /// count them ([`Spread::Hash`]'s `bucket_bytes`).
    pub fn bucket_bytes(&self) -> Result<[u64; BUCKETS], Error> {
        Ok(self.bucket_load()?.map(|b| b.bytes))
    }

    /// Bytes sent per bucket since load and when each last sent (the latest
    /// over CPUs, CLOCK_MONOTONIC ns; 0: never), for plans that count them.
    pub fn bucket_load(&self) -> Result<[BucketLoad; BUCKETS], Error> {
        let map = self
            .ebpf
            .map("bucket_bytes")
            .ok_or(Error::Missing("bucket_bytes"))?;
        let load = PerCpuArray::<_, abi::Bucket>::try_from(map)?;
        let mut all = [BucketLoad::default(); BUCKETS];
        for (i, b) in all.iter_mut().enumerate() {
            for cpu in load.get(&(i as u32), 0)?.iter() {
                b.bytes += cpu.bytes;
                b.last_ns = b.last_ns.max(cpu.last);
            }
        }
        Ok(all)
    }
}

/// One hash bucket's load ([`Datapath::bucket_load`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BucketLoad {
    /// Bytes sent.
    pub bytes: u64,
    /// When it last sent (CLOCK_MONOTONIC ns), 0 if never.
    pub last_ns: u64,
}

impl Counters {
    /// The counter maps' entries as the programs lay them out: the
    /// members, then (past them) drops, faults and, on ingress, copies.
    pub(crate) fn split(mut tx: Vec<Count>, mut rx: Vec<Count>) -> Counters {
        let rx_copies = rx.pop().unwrap_or_default();
        let rx_faults = rx.pop().unwrap_or_default();
        let rx_dropped = rx.pop().unwrap_or_default();
        let tx_faults = tx.pop().unwrap_or_default();
        let tx_dropped = tx.pop().unwrap_or_default();
        Counters {
            tx,
            tx_dropped,
            tx_faults,
            rx,
            rx_dropped,
            rx_faults,
            rx_copies,
        }
    }
}

/// Per-member counters, by the ids the plans gave ([`Distribution::tx_ids`],
/// by default the position in the plan's `tx` and `rx` lists).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Sent per transmitting member ([`MAX_MEMBERS`] entries).
    pub tx: Vec<Count>,
    /// Dropped by egress: no member to send on (or a broadcast copy that
    /// could not be sent).
    pub tx_dropped: Count,
    /// Dropped by egress as injected loss ([`Datapath::set_fault_loss`]).
    pub tx_faults: Count,
    /// Dropped by ingress as injected loss.
    pub rx_faults: Count,
    /// Delivered per receiving member.
    pub rx: Vec<Count>,
    /// Dropped by ingress: no plan, a member whose frames do not go up, or
    /// (balance-tlb) a group-addressed frame on a member other than the
    /// active one.
    pub rx_dropped: Count,
    /// Dropped by ingress as copies of a frame that came up by another
    /// member ([`Spread::Broadcast`]'s `dedup`).
    pub rx_copies: Count,
}
