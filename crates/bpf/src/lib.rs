//! lagkit's in-kernel data path: tc BPF programs instead of forwarding
//! frames in user space.
//!
//! The measured case for it is in the lab notes: a tc egress program on the
//! logical interface that redirects each frame to a member runs at about
//! twice the userspace engine's throughput for half its CPU. The shape:
//! the logical interface is one end of a veth pair whose peer stays idle
//! (a netkit device where the kernel has one); `lagkit_egress` on its tcx
//! egress picks a member and redirects; `lagkit_ingress` on each member's
//! tcx ingress redirects data frames to the logical interface's ingress and
//! leaves slow-protocol frames to the daemon. Both are tcx links owned by
//! [`Datapath`]: dropping it (or the process ending) detaches everything,
//! and nothing is left on the interfaces. What must not
//! change is *which* member a frame takes: the planner, `lagkit flow` and
//! the userspace engine all ask `lagkit_hash`, so the BPF program in
//! `src/bpf/lagkit.bpf.c` is a line-by-line transliteration of its frame
//! parser and policies, and [`Datapath::test_run`] (BPF_PROG_TEST_RUN) lets a
//! test hold the two to the same answer on any frame.
//!
//! The programs are C compiled by Debian's clang in `build.rs` and loaded
//! with [aya](https://aya-rs.dev): pure Rust (no libbpf or libelf to link),
//! maintained, and since 0.14 with tcx attachment and `test_run`, the two
//! things this crate needs beyond loading.

use core::fmt;

use std::os::fd::AsFd;

use aya::maps::{Array, ArrayOfMaps, Map, MapData, MapError, PerCpuArray};
use aya::programs::tc::TcAttachOptions;
use aya::programs::{
    LinkOrder, ProgramError, SchedClassifier, TcAttachType, TestRun, TestRunOptions,
};
use aya::sys::SyscallError;
use aya::{Ebpf, EbpfError};
use lagkit_hash::{BucketMap, Policy, MAX_MEMBERS};

mod abi;

use abi::{policy_code, read_cb, Config, Counter, SKB_CTX_LEN};

/// The object `build.rs` compiled, aligned as aya's ELF parser wants it.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/lagkit.bpf.o"));

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
    /// The member table does not match the bucket map.
    Members {
        /// Members the bucket map has.
        members: usize,
        /// Interface indices given.
        ifindexes: usize,
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
                "{ifindexes} member interfaces given for a bucket map of {members} members"
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
            _ => None,
        }
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

/// What the egress program decided for one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The member index, `None` when there was none to choose (dropped).
    pub member: Option<usize>,
    /// The policy's raw value, as [`Policy::hash`] defines it.
    pub hash: u64,
    /// The interface the frame was redirected to (0 when dropped).
    pub ifindex: u32,
    /// The program's tc verdict (`TC_ACT_REDIRECT` or `TC_ACT_SHOT`).
    pub verdict: u32,
}

/// A member's frames and bytes as the egress program counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// Frames.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// How egress distributes frames, and where ingress delivers them.
#[derive(Clone, Copy, Debug)]
pub struct Distribution<'a> {
    /// The transmit hash policy.
    pub policy: Policy,
    /// The usable members: their count, and for `strong` the bucket table.
    pub buckets: &'a BucketMap,
    /// The interface index of each usable member, in bucket-map order.
    pub members: &'a [u32],
    /// The logical interface's index (0: ingress drops data frames).
    pub logical: u32,
}

/// Publishes plans to a loaded [`Datapath`].
pub struct Publisher {
    plan: ArrayOfMaps<MapData, Array<MapData, Config>>,
}

impl Publisher {
    /// Publishes `d`. A new inner map is filled and swapped into the plan
    /// slot (see `plan` in lagkit.bpf.c): the kernel holds it from then on,
    /// and the previous plan is freed once no frame uses it any more.
    pub fn publish(&mut self, d: &Distribution<'_>) -> Result<(), Error> {
        let members = d.buckets.members();
        if d.members.len() != members || members > MAX_MEMBERS {
            return Err(Error::Members {
                members,
                ifindexes: d.members.len(),
            });
        }
        let (seed, symmetric) = match d.policy {
            Policy::Strong(s) => (s.seed, s.symmetric),
            _ => (0, false),
        };
        let mut config = Config {
            policy: policy_code(d.policy),
            members: members as u32,
            seed,
            symmetric: u32::from(symmetric),
            logical: d.logical,
            slots: *d.buckets.slots(),
            ifindex: [0; MAX_MEMBERS],
        };
        config.ifindex[..members].copy_from_slice(d.members);
        let mut inner = Array::<MapData, Config>::create(1, 0)?;
        inner.set(0, config, 0)?;
        self.plan.set(0, &inner, 0)?;
        Ok(())
    }
}

/// The loaded programs, their maps and their attachments; dropping it
/// detaches every program and frees every map.
pub struct Datapath {
    ebpf: Ebpf,
}

impl Datapath {
    /// Loads the programs (through the verifier) with no plan: egress drops
    /// every frame and ingress every data frame until [`Datapath::configure`].
    pub fn load() -> Result<Datapath, Error> {
        let mut ebpf = Ebpf::load(OBJECT)?;
        for name in [EGRESS, INGRESS] {
            let prog: &mut SchedClassifier = ebpf
                .program_mut(name)
                .ok_or(Error::Missing("program"))?
                .try_into()?;
            prog.load()?;
        }
        Ok(Datapath { ebpf })
    }

    /// Publishes a distribution, atomically as the data path sees it: each
    /// frame is handled wholly under the old or wholly under the new one.
    pub fn configure(&mut self, d: &Distribution<'_>) -> Result<(), Error> {
        self.publisher()?.publish(d)
    }

    /// A handle of its own on the plan, for a thread that publishes while
    /// another one reads counters or runs tests.
    pub fn publisher(&self) -> Result<Publisher, Error> {
        let map = self.ebpf.map("plan").ok_or(Error::Missing("plan map"))?;
        let Map::ArrayOfMaps(data) = map else {
            return Err(Error::Missing("plan map of maps"));
        };
        let fd = data.fd().as_fd().try_clone_to_owned().map_err(|e| {
            Error::Map(MapError::from(SyscallError {
                call: "dup",
                io_error: e,
            }))
        })?;
        let plan = ArrayOfMaps::try_from(Map::ArrayOfMaps(MapData::from_fd(fd)?))?;
        Ok(Publisher { plan })
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

    fn attach(&mut self, prog: &str, ifname: &str, at: TcAttachType) -> Result<u32, Error> {
        let ifindex = nix::net::if_::if_nametoindex(ifname).map_err(|_| Error::NoInterface {
            ifname: ifname.to_string(),
        })?;
        let prog: &mut SchedClassifier = self
            .ebpf
            .program_mut(prog)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        // tcx explicitly: a link owned by a descriptor leaves nothing behind,
        // where a netlink filter would outlive the process.
        prog.attach_with_options(ifname, at, TcAttachOptions::TcxOrder(LinkOrder::default()))?;
        Ok(ifindex)
    }

    /// Runs the egress program on `frame` (an Ethernet frame of at least 14
    /// bytes) with BPF_PROG_TEST_RUN: nothing is sent, the counters count.
    pub fn test_run(&self, frame: &[u8]) -> Result<Choice, Error> {
        let prog: &SchedClassifier = self
            .ebpf
            .program(EGRESS)
            .ok_or(Error::Missing("egress program"))?
            .try_into()?;
        let ctx_in = [0u8; SKB_CTX_LEN];
        let mut ctx_out = [0u8; SKB_CTX_LEN];
        let result = prog.test_run(TestRunOptions {
            data_in: Some(frame),
            ctx_in: Some(&ctx_in),
            ctx_out: Some(&mut ctx_out),
            ..TestRunOptions::default()
        })?;
        let (member, hash, ifindex) = read_cb(&ctx_out);
        Ok(Choice {
            member: member.checked_sub(1).map(|m| m as usize),
            hash,
            ifindex,
            verdict: result.return_value,
        })
    }

    /// Frames and bytes sent per member (summed over CPUs), then the frames
    /// dropped for want of a member.
    pub fn counters(&self) -> Result<(Vec<Sent>, Sent), Error> {
        let map = self
            .ebpf
            .map("counters")
            .ok_or(Error::Missing("counters map"))?;
        let counters = PerCpuArray::<_, Counter>::try_from(map)?;
        let mut all = Vec::with_capacity(MAX_MEMBERS + 1);
        for i in 0..=MAX_MEMBERS as u32 {
            let per_cpu = counters.get(&i, 0)?;
            all.push(per_cpu.iter().fold(Sent::default(), |s, c| Sent {
                packets: s.packets + c.packets,
                bytes: s.bytes + c.bytes,
            }));
        }
        let dropped = all.pop().unwrap_or_default();
        Ok((all, dropped))
    }
}
