//! lagkit's in-kernel data path: tc BPF programs instead of forwarding
//! frames in user space.
//!
//! The measured case for it is in the lab notes: a tc egress program on the
//! logical interface that redirects each frame to a member runs at about
//! twice the userspace engine's throughput for half its CPU. What must not
//! change is *which* member a frame takes: the planner, `lagkit flow` and
//! the userspace engine all ask `lagkit_hash`, so the BPF program in
//! `src/bpf/lagkit.bpf.c` is a line-by-line transliteration of its frame
//! parser and policies, and [`Egress::test_run`] (BPF_PROG_TEST_RUN) lets a
//! test hold the two to the same answer on any frame.
//!
//! The programs are C compiled by Debian's clang in `build.rs` and loaded
//! with [aya](https://aya-rs.dev): pure Rust (no libbpf or libelf to link),
//! maintained, and since 0.14 with tcx attachment and `test_run`, the two
//! things this crate needs beyond loading.

use core::fmt;

use aya::maps::{Array, MapError, PerCpuArray};
use aya::programs::{ProgramError, SchedClassifier, TestRun, TestRunOptions};
use aya::{Ebpf, EbpfError};
use lagkit_hash::{BucketMap, Policy, MAX_MEMBERS};

mod abi;

use abi::{policy_code, read_cb, Config, Counter, SKB_CTX_LEN};

/// The object `build.rs` compiled, aligned as aya's ELF parser wants it.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/lagkit.bpf.o"));

const EGRESS: &str = "lagkit_egress";

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
    /// The member table does not match the bucket map.
    Members {
        /// Members the bucket map has.
        members: usize,
        /// Interface indices given.
        ifindexes: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load(e) => write!(
                f,
                "cannot load lagkit's BPF programs: {e} (needs root or CAP_BPF and CAP_NET_ADMIN)"
            ),
            Error::Program(e) => write!(f, "BPF program: {e}"),
            Error::Map(e) => write!(f, "BPF map: {e}"),
            Error::Missing(what) => write!(f, "lagkit's BPF object has no {what}"),
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

/// The loaded egress program and its maps.
pub struct Egress {
    ebpf: Ebpf,
}

impl Egress {
    /// Loads the programs (through the verifier) and an empty configuration
    /// (no members: every frame is dropped until [`Egress::configure`]).
    pub fn load() -> Result<Egress, Error> {
        let mut ebpf = Ebpf::load(OBJECT)?;
        let prog: &mut SchedClassifier = ebpf
            .program_mut(EGRESS)
            .ok_or(Error::Missing("egress program"))?
            .try_into()?;
        prog.load()?;
        Ok(Egress { ebpf })
    }

    /// Sets the policy, the members (the bucket map's member count, and for
    /// `strong` its bucket table) and each member's interface index.
    pub fn configure(
        &mut self,
        policy: Policy,
        buckets: &BucketMap,
        ifindexes: &[u32],
    ) -> Result<(), Error> {
        let members = buckets.members();
        if ifindexes.len() != members || members > MAX_MEMBERS {
            return Err(Error::Members {
                members,
                ifindexes: ifindexes.len(),
            });
        }
        let (seed, symmetric) = match policy {
            Policy::Strong(s) => (s.seed, s.symmetric),
            _ => (0, false),
        };
        let mut config = Config {
            policy: policy_code(policy),
            members: members as u32,
            seed,
            symmetric: u32::from(symmetric),
            reserved: 0,
            slots: *buckets.slots(),
            ifindex: [0; MAX_MEMBERS],
        };
        config.ifindex[..members].copy_from_slice(ifindexes);
        let map = self
            .ebpf
            .map_mut("config")
            .ok_or(Error::Missing("config map"))?;
        Array::<_, Config>::try_from(map)?.set(0, config, 0)?;
        Ok(())
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
        let (member, hash) = read_cb(&ctx_out);
        Ok(Choice {
            member: member.checked_sub(1).map(|m| m as usize),
            hash,
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
