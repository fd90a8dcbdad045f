//! The switch's forwarding in the kernel: `src/bpf/switch.bpf.c`'s
//! `lksw_ingress`, which does on each switch port's tc ingress what
//! `lagkit_switch::Bridge::receive` does (see that file's opening comment),
//! and the Rust side of `src/bpf/switch.h`: the plan the switch's core
//! publishes, field for field as the C side lays it out, and the program's
//! counters and decisions read back.

use crate::abi::{policy_code, IFINDEX, SKB_CTX_LEN};
use crate::plan::Mapped;
use crate::Error;
use aya::maps::{Array, PerCpuArray};
use aya::programs::links::FdLink;
use aya::programs::tc::TcAttachOptions;
use aya::programs::{
    LinkOrder, ProgramError, SchedClassifier, TcAttachType, TestRun, TestRunOptions,
};
use aya::Ebpf;
use lagkit_hash::Policy;

/// `LKSW_MAX_PORTS`: the most ports a switch in the kernel has.
pub const MAX_PORTS: usize = 64;
/// `LKSW_MAX_CHANNELS`.
pub const MAX_CHANNELS: usize = 64;
/// `LKSW_BUCKETS`: a Catalyst's EtherChannel buckets.
pub const BUCKETS: usize = 8;
const VLAN_WORDS: usize = 64;
const DROPS: usize = 10;
/// The address table's default size (`lagkit_switch::bridge::FDB_LIMIT`).
pub const FDB_LIMIT: u32 = 16_384;
/// New addresses a port may teach the table per second until
/// [`SwitchPath::set_learn_rate`] says otherwise
/// (`lagkit_switch::police::LEARN_PER_SECOND`).
pub const LEARN_PER_SECOND: u32 = 1_000;
const F_TRACE: u32 = 1;
/// `LKSW_PORT_SLOTS` and `LKSW_PORT_SEARCH` (`PlanAbi::port_at`).
const PORT_SLOTS: usize = 256;
const PORT_SEARCH: u8 = 0xff;

static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/switch.bpf.o"));
const PROGRAM: &str = "lksw_ingress";

/// `struct lksw_port`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
struct PortAbi {
    ifindex: u32,
    mtu: u32,
    vlan: u16,
    enabled: u8,
    trunk: u8,
    channel: u8,
    standalone: u8,
    bundled: u8,
    reserved: u8,
    allowed: [u64; VLAN_WORDS],
}

/// `struct lksw_plan`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
struct PlanAbi {
    ports: u32,
    channels: u32,
    policy: u32,
    flags: u32,
    aging_ns: u64,
    seed: u64,
    port: [PortAbi; MAX_PORTS],
    channel: [[u8; BUCKETS]; MAX_CHANNELS],
    port_at: [u8; PORT_SLOTS],
}

/// `LKSW_CHANNEL`: where an address lives is a channel's index with this
/// bit.
pub const CHANNEL: u32 = 0x10000;

/// One address the table holds: ((VLAN, MAC), where).
pub type Address = ((u16, [u8; 6]), u32);

/// One entry of the address table with when it was last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableEntry {
    /// Its VLAN.
    pub vlan: u16,
    /// The station's address.
    pub mac: [u8; 6],
    /// Where it lives: a port index, or a channel's with [`CHANNEL`] set.
    pub at: u32,
    /// When the program last saw it as a source, on the kernel's
    /// monotonic clock ([`kernel_now`]).
    pub seen: u64,
}

/// The kernel's monotonic clock in nanoseconds: the time base of
/// [`TableEntry::seen`] (the program reads its coarse form, up to a tick
/// behind).
pub fn kernel_now() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// `struct lksw_fdb_key`.
#[repr(C)]
#[derive(Clone, Copy)]
struct FdbKey {
    vlan: u16,
    mac: [u8; 6],
}

// SAFETY: repr(C), 8 bytes without padding; every bit pattern is valid.
unsafe impl aya::Pod for FdbKey {}

/// `struct lksw_fdb_entry`.
#[repr(C)]
#[derive(Clone, Copy)]
struct FdbEntry {
    at: u32,
    reserved: u32,
    seen: u64,
}

// SAFETY: repr(C), 16 bytes without padding; every bit pattern is valid.
unsafe impl aya::Pod for FdbEntry {}

/// `struct lksw_counters`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounts {
    /// Frames received (all, before any drop).
    pub rx_frames: u64,
    /// Their bytes, as on the wire.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Control frames left to the daemon.
    pub control: u64,
    /// Flood copies sent.
    pub flooded: u64,
    /// Copies not sent for this port's MTU.
    pub tx_too_big: u64,
    /// Sources not learned: the table was full.
    pub learn_full: u64,
    /// Received to one station.
    pub rx_ucast: u64,
    /// Received to a group.
    pub rx_mcast: u64,
    /// Received to ff:ff:ff:ff:ff:ff.
    pub rx_bcast: u64,
    /// Sent to one station.
    pub tx_ucast: u64,
    /// Sent to a group.
    pub tx_mcast: u64,
    /// Sent to ff:ff:ff:ff:ff:ff.
    pub tx_bcast: u64,
    /// Received frames dropped, in `lagkit_switch::DropReason::ALL`'s order.
    pub drops: [u64; DROPS],
    /// New sources not learned: the port had spent its learning rate.
    pub learn_limited: u64,
}

// SAFETY: repr(C), 25 u64s.
unsafe impl aya::Pod for PortCounts {}

/// `struct lksw_learn`.
#[repr(C)]
#[derive(Clone, Copy)]
struct LearnAbi {
    credit: u64,
    at: u64,
    rate: u32,
    reserved: u32,
}

// SAFETY: repr(C), 24 bytes without padding; every bit pattern is valid.
unsafe impl aya::Pod for LearnAbi {}

/// `struct lksw_egress`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct EgressAbi {
    port: u8,
    tagged: u8,
    vlan: u16,
}

/// `struct lksw_trace`.
#[repr(C)]
#[derive(Clone, Copy)]
struct TraceAbi {
    verdict: u32,
    reason: u32,
    vlan: u16,
    flooded: u8,
    egresses: u8,
    reserved: u32,
    egress: [EgressAbi; MAX_PORTS],
}

// SAFETY: repr(C) without padding (16 bytes, then 64 x 4 bytes); every bit
// pattern is valid.
unsafe impl aya::Pod for TraceAbi {}

/// A port's VLANs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortVlans {
    /// An access port in this VLAN.
    Access(u16),
    /// A trunk: its native VLAN (untagged) and the VLANs it carries.
    Trunk {
        /// The native VLAN.
        native: u16,
        /// The allowed VLANs (1-4094).
        allowed: Vec<u16>,
    },
}

/// One port of a [`SwitchPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchPort {
    /// Its device.
    pub ifindex: u32,
    /// The largest payload it takes and sends.
    pub mtu: u32,
    /// Its VLANs.
    pub vlans: PortVlans,
    /// `no shutdown`.
    pub enabled: bool,
    /// The index of its channel in [`SwitchPlan::channels`], if a member.
    pub channel: Option<usize>,
    /// A member forwarding on its own (Cisco's `I`).
    pub standalone: bool,
    /// A member its channel sends and takes on.
    pub bundled: bool,
}

/// What the switch's core publishes to the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchPlan {
    /// The ports, by the core's port index.
    pub ports: Vec<SwitchPort>,
    /// Each channel, in ascending channel number: bucket -> the port index
    /// that sends it (`None`: no member).
    pub channels: Vec<[Option<usize>; BUCKETS]>,
    /// The load-balance method.
    pub policy: Policy,
    /// An address not seen for longer is unknown.
    pub aging_ns: u64,
    /// Leave each decision for [`SwitchPath::test_run`] to read.
    pub trace: bool,
}

/// What the program did with one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Left to the daemon's control plane.
    Control,
    /// Sent: (port, tag) per copy, in the order sent; a tag is the whole
    /// TCI (priority, DEI and VLAN) the copy leaves with.
    Forward {
        /// The frame's VLAN.
        vlan: u16,
        /// Flooded rather than sent to a learned address.
        flooded: bool,
        /// The copies.
        egress: Vec<(usize, Option<u16>)>,
    },
    /// Dropped, for `lagkit_switch::DropReason::ALL[reason]`.
    Drop(usize),
}

impl SwitchPlan {
    fn abi(&self) -> Result<PlanAbi, Error> {
        for (what, count, max) in [
            ("ports", self.ports.len(), MAX_PORTS),
            ("channels", self.channels.len(), MAX_CHANNELS),
        ] {
            if count > max {
                return Err(Error::TooManyPorts { what, count, max });
            }
        }
        let zero = PortAbi {
            ifindex: 0,
            mtu: 0,
            vlan: 0,
            enabled: 0,
            trunk: 0,
            channel: 0,
            standalone: 0,
            bundled: 0,
            reserved: 0,
            allowed: [0; VLAN_WORDS],
        };
        let mut abi = PlanAbi {
            ports: self.ports.len() as u32,
            channels: self.channels.len() as u32,
            policy: policy_code(self.policy),
            flags: if self.trace { F_TRACE } else { 0 },
            aging_ns: self.aging_ns,
            seed: 0,
            port: [zero; MAX_PORTS],
            channel: [[0; BUCKETS]; MAX_CHANNELS],
            port_at: port_slots(self.ports.iter().map(|p| p.ifindex)),
        };
        for (a, p) in abi.port.iter_mut().zip(&self.ports) {
            a.ifindex = p.ifindex;
            a.mtu = p.mtu;
            a.enabled = p.enabled.into();
            a.channel = p.channel.map_or(0, |c| c as u8 + 1);
            a.standalone = p.standalone.into();
            a.bundled = p.bundled.into();
            match &p.vlans {
                PortVlans::Access(v) => a.vlan = *v,
                PortVlans::Trunk { native, allowed } => {
                    a.trunk = 1;
                    a.vlan = *native;
                    for &v in allowed.iter().filter(|&&v| v < 4096) {
                        a.allowed[usize::from(v) / 64] |= 1 << (v % 64);
                    }
                }
            }
        }
        for (a, c) in abi.channel.iter_mut().zip(&self.channels) {
            for (b, p) in a.iter_mut().zip(c) {
                *b = p.map_or(0, |p| p as u8 + 1);
            }
        }
        Ok(abi)
    }
}

/// `PlanAbi::port_at` of the ports on interfaces `ifindex` (in port
/// order): each slot 1 + the one port whose interface falls in it, 0 for
/// none, [`PORT_SEARCH`] for two or more (or a port index beyond what a
/// slot holds).
fn port_slots(ifindex: impl Iterator<Item = u32>) -> [u8; PORT_SLOTS] {
    let mut at = [0u8; PORT_SLOTS];
    for (i, x) in ifindex.enumerate() {
        let slot = &mut at[x as usize % PORT_SLOTS];
        *slot = match (*slot, u8::try_from(i + 1)) {
            (0, Ok(p)) if p != PORT_SEARCH => p,
            _ => PORT_SEARCH,
        };
    }
    at
}

/// The switch's program, loaded, and its tcx links once attached.
pub struct SwitchPath {
    /// The `plans` map, mapped: plans are published as the bond's are.
    plans: Mapped<PlanAbi>,
    /// The tcx links, held here (not by `ebpf`) so they can be pinned.
    links: crate::pin::Links,
    ebpf: Ebpf,
}

impl Drop for SwitchPath {
    /// A clean end: the pins go, so the links detach with this process's
    /// descriptors (a killed switch never gets here: its pins keep the
    /// ports forwarding until the next switch adopts them).
    fn drop(&mut self) {
        self.links.unpin();
    }
}

impl SwitchPath {
    /// Loads the program and its maps, with an address table of
    /// `lagkit_switch`'s `FDB_LIMIT` entries.
    pub fn load() -> Result<SwitchPath, Error> {
        SwitchPath::load_with_table(FDB_LIMIT)
    }

    /// Loads the program with an address table of `limit` entries, every
    /// port learning at most [`LEARN_PER_SECOND`] new addresses a second.
    pub fn load_with_table(limit: u32) -> Result<SwitchPath, Error> {
        let mut loader = aya::EbpfLoader::new();
        loader.map_max_entries("fdb", limit);
        let (ebpf, plans) = crate::load_object(&mut loader, OBJECT, &[PROGRAM])?;
        let mut path = SwitchPath {
            plans,
            links: crate::pin::Links::default(),
            ebpf,
        };
        for port in 0..MAX_PORTS {
            path.set_learn_rate(port, LEARN_PER_SECOND)?;
        }
        Ok(path)
    }

    /// Publishes `plan`, atomically as the program sees it: a frame meets
    /// the plan in force when it arrived, whole, however long it takes
    /// (a plan equal to the one in force is not published again).
    pub fn publish(&self, plan: &SwitchPlan) -> Result<(), Error> {
        self.plans.publish(&plan.abi()?);
        Ok(())
    }

    /// Runs the program with BPF_PROG_TEST_RUN on `frame` as received on
    /// interface `ifindex` (which must exist in the calling thread's
    /// namespace; copies it floods are sent), under a plan published with
    /// `trace`: what it decided.
    pub fn test_run(&self, frame: &[u8], ifindex: u32) -> Result<Decision, Error> {
        let prog: &SchedClassifier = self
            .ebpf
            .program(PROGRAM)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        let mut ctx_in = [0u8; SKB_CTX_LEN];
        ctx_in[IFINDEX..IFINDEX + 4].copy_from_slice(&ifindex.to_ne_bytes());
        prog.test_run(TestRunOptions {
            data_in: Some(frame),
            ctx_in: Some(&ctx_in),
            ..TestRunOptions::default()
        })?;
        let map = self.ebpf.map("trace").ok_or(Error::Missing("trace"))?;
        let t = Array::<_, TraceAbi>::try_from(map)?.get(&0, 0)?;
        Ok(match t.verdict {
            1 => Decision::Control,
            2 => Decision::Forward {
                vlan: t.vlan,
                flooded: t.flooded != 0,
                egress: t.egress[..usize::from(t.egresses).min(MAX_PORTS)]
                    .iter()
                    .map(|e| (usize::from(e.port), (e.tagged != 0).then_some(e.vlan)))
                    .collect(),
            },
            _ => Decision::Drop(t.reason as usize),
        })
    }

    /// Attaches the program to the tcx ingress of `ifname` (a switch
    /// port), behind any program already there (a killed switch's, still
    /// pinned, runs first until released); it stays attached until this
    /// value is dropped, or, once pinned, until a switch adopts it.
    /// Returns the interface's index.
    pub fn attach(&mut self, ifname: &str) -> Result<u32, Error> {
        let ifindex = nix::net::if_::if_nametoindex(ifname).map_err(|_| Error::NoInterface {
            ifname: ifname.to_string(),
        })?;
        let prog: &mut SchedClassifier = self
            .ebpf
            .program_mut(PROGRAM)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        let id = prog.attach_with_options(
            ifname,
            TcAttachType::Ingress,
            TcAttachOptions::TcxOrder(LinkOrder::default()),
        )?;
        let link = FdLink::try_from(prog.take_link(id)?).map_err(|e| {
            Error::Program(ProgramError::IOError(std::io::Error::other(e.to_string())))
        })?;
        self.links
            .links
            .push((format!("ingress-{ifindex}"), crate::pin::Held::Fd(link)));
        Ok(ifindex)
    }

    /// Pins every link attached so far into `dir` (on bpffs; created
    /// here, and it must not hold pins already): from now on the ports
    /// keep forwarding with the last plan if this process dies, until a
    /// switch adopts them ([`crate::Adopted`]). Dropping the path removes
    /// the pins.
    pub fn pin(&mut self, dir: &std::path::Path) -> Result<(), Error> {
        let r = self.links.pin(dir, &[]);
        if r.is_err() {
            self.links.unpin();
        }
        r
    }

    /// Ends this process's hold on a pinned path and leaves the pins: the
    /// ports go on forwarding with the last plan until a switch adopts
    /// them. (A path that is not pinned just detaches, as on drop.)
    pub fn leave_pinned(mut self) {
        if self.links.dir.take().is_some() {
            // Closing a pinned link's descriptor leaves the link.
            self.links.links.clear();
        }
    }

    /// The kernel's id of the program (as `bpftool prog` shows it).
    pub fn program_id(&self) -> Result<u32, Error> {
        let prog: &SchedClassifier = self
            .ebpf
            .program(PROGRAM)
            .ok_or(Error::Missing("program"))?
            .try_into()?;
        Ok(prog.info()?.id())
    }

    /// The address table with each entry's last sighting.
    pub fn table(&self) -> Result<Vec<TableEntry>, Error> {
        let map = self.ebpf.map("fdb").ok_or(Error::Missing("fdb"))?;
        let table = aya::maps::HashMap::<_, FdbKey, FdbEntry>::try_from(map)?;
        let mut out = Vec::new();
        for entry in table.iter() {
            let (k, v) = entry?;
            out.push(TableEntry {
                vlan: k.vlan,
                mac: k.mac,
                at: v.at,
                seen: v.seen,
            });
        }
        Ok(out)
    }

    /// Removes the entries `forget` picks (stale ones, or those of a port
    /// or channel to flush); how many went. An entry the program refreshes
    /// between the read and the removal is removed all the same and
    /// learned again from the station's next frame.
    pub fn forget(&mut self, forget: impl Fn(&TableEntry) -> bool) -> Result<usize, Error> {
        let doomed: Vec<TableEntry> = self.table()?.into_iter().filter(|e| forget(e)).collect();
        let map = self.ebpf.map_mut("fdb").ok_or(Error::Missing("fdb"))?;
        let mut table = aya::maps::HashMap::<_, FdbKey, FdbEntry>::try_from(map)?;
        let mut n = 0;
        for e in doomed {
            let key = FdbKey {
                vlan: e.vlan,
                mac: e.mac,
            };
            // Already gone (the program cannot remove, but a second
            // caller could): nothing to do.
            if table.remove(&key).is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Addresses that moved between ports or channels, summed over CPUs.
    pub fn moves(&self) -> Result<u64, Error> {
        let map = self.ebpf.map("globals").ok_or(Error::Missing("globals"))?;
        let per_cpu = PerCpuArray::<_, u64>::try_from(map)?.get(&0, 0)?;
        Ok(per_cpu.iter().sum())
    }

    /// The address table: (VLAN, MAC) -> where (a port index, or a
    /// channel's with [`CHANNEL`] set), in no particular order.
    pub fn addresses(&self) -> Result<Vec<Address>, Error> {
        let map = self.ebpf.map("fdb").ok_or(Error::Missing("fdb"))?;
        let table = aya::maps::HashMap::<_, FdbKey, FdbEntry>::try_from(map)?;
        let mut out = Vec::new();
        for entry in table.iter() {
            let (k, v) = entry?;
            out.push(((k.vlan, k.mac), v.at));
        }
        Ok(out)
    }

    /// Port `port`'s counters, summed over CPUs.
    pub fn counters(&self, port: usize) -> Result<PortCounts, Error> {
        let map = self
            .ebpf
            .map("counters")
            .ok_or(Error::Missing("counters"))?;
        let per_cpu = PerCpuArray::<_, PortCounts>::try_from(map)?.get(&(port as u32), 0)?;
        let mut sum = PortCounts::default();
        for c in per_cpu.iter() {
            sum.rx_frames += c.rx_frames;
            sum.rx_bytes += c.rx_bytes;
            sum.tx_frames += c.tx_frames;
            sum.tx_bytes += c.tx_bytes;
            sum.control += c.control;
            sum.flooded += c.flooded;
            sum.tx_too_big += c.tx_too_big;
            sum.learn_full += c.learn_full;
            sum.rx_ucast += c.rx_ucast;
            sum.rx_mcast += c.rx_mcast;
            sum.rx_bcast += c.rx_bcast;
            sum.tx_ucast += c.tx_ucast;
            sum.tx_mcast += c.tx_mcast;
            sum.tx_bcast += c.tx_bcast;
            for (a, b) in sum.drops.iter_mut().zip(c.drops) {
                *a += b;
            }
            sum.learn_limited += c.learn_limited;
        }
        Ok(sum)
    }

    /// Lets port `port` learn at most `per_second` new addresses a second
    /// (`lagkit_switch`'s `LearnLimiter`), with a whole second's worth at
    /// once to start with.
    pub fn set_learn_rate(&mut self, port: usize, per_second: u32) -> Result<(), Error> {
        let map = self
            .ebpf
            .map_mut("learn_budget")
            .ok_or(Error::Missing("learn_budget"))?;
        let mut budget = Array::<_, LearnAbi>::try_from(map)?;
        let v = LearnAbi {
            credit: u64::from(per_second) * 1_000_000_000,
            at: 0,
            rate: per_second,
            reserved: 0,
        };
        budget.set(port as u32, v, 0)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the C side has (the loader refuses a map whose value size
    /// differs; the verifier printed `vs=34592` for the plan).
    #[test]
    fn a_port_is_found_by_its_interfaces_slot_and_a_shared_slot_is_searched() {
        let at = port_slots([7, 300, 8, 263].into_iter());
        assert_eq!(at[7], PORT_SEARCH, "7 and 263 share a slot");
        assert_eq!(at[300 % PORT_SLOTS], 2);
        assert_eq!(at[8], 3);
        assert_eq!(at.iter().filter(|&&x| x != 0).count(), 3);
        assert!(port_slots(std::iter::empty()).iter().all(|&x| x == 0));
    }

    #[test]
    fn the_abi_has_the_c_sides_sizes() {
        assert_eq!(std::mem::size_of::<PortAbi>(), 528);
        assert_eq!(std::mem::size_of::<PlanAbi>(), 34592);
        assert_eq!(
            std::mem::size_of::<crate::abi::Plans<PlanAbi>>(),
            8 + 16 * 34592
        );
        assert_eq!(std::mem::size_of::<PortCounts>(), 200);
        assert_eq!(std::mem::size_of::<LearnAbi>(), 24);
        assert_eq!(std::mem::size_of::<TraceAbi>(), 272);
        assert_eq!(std::mem::size_of::<FdbKey>(), 8);
        assert_eq!(std::mem::size_of::<FdbEntry>(), 16);
    }

    #[test]
    fn a_plan_lays_out_vlans_channels_and_limits() {
        let port = |vlans, channel| SwitchPort {
            ifindex: 7,
            mtu: 1500,
            vlans,
            enabled: true,
            channel,
            standalone: false,
            bundled: true,
        };
        let plan = SwitchPlan {
            ports: vec![
                port(PortVlans::Access(10), None),
                port(
                    PortVlans::Trunk {
                        native: 99,
                        allowed: vec![1, 64, 4094, 5000],
                    },
                    Some(0),
                ),
            ],
            channels: vec![[Some(1), None, Some(1), None, None, None, None, Some(0)]],
            policy: "src-dst-ip".parse().unwrap(),
            aging_ns: 300,
            trace: true,
        };
        let abi = plan.abi().unwrap();
        assert_eq!((abi.ports, abi.channels, abi.flags), (2, 1, F_TRACE));
        assert_eq!(
            (abi.port[0].trunk, abi.port[0].vlan, abi.port[0].channel),
            (0, 10, 0)
        );
        let t = &abi.port[1];
        assert_eq!((t.trunk, t.vlan, t.channel, t.bundled), (1, 99, 1, 1));
        assert_eq!((t.allowed[0], t.allowed[1], t.allowed[63]), (2, 1, 1 << 62));
        assert_eq!(abi.channel[0], [2, 0, 2, 0, 0, 0, 0, 1]);
        let mut many = plan.clone();
        many.ports = vec![many.ports[0].clone(); MAX_PORTS + 1];
        assert!(matches!(
            many.abi(),
            Err(Error::TooManyPorts {
                what: "ports",
                count: 65,
                max: 64
            })
        ));
    }
}
