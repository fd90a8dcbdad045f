//! Plans: what the programs do, published to them atomically.
//!
//! A [`Distribution`] says how egress spreads frames ([`Spread`], one
//! variant per way of distributing, as the userspace engine's map has) and
//! which members' frames ingress delivers. [`Publisher::publish`] encodes
//! it as `struct lagkit_config` into a slot of the programs' `plans` map
//! that no program reads, through this process's mapping of it, then makes
//! that slot the one in force with one atomic store: a frame is handled
//! wholly under one plan, and a plan takes effect within microseconds, with
//! no system call (see `plans` in lagkit.bpf.c).

use std::os::fd::AsFd;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lagkit_hash::{BucketMap, Policy, MAX_MEMBERS};

use crate::abi::{
    policy_code, Config, Plans, F_ALB, F_BUCKET_BYTES, F_DEDUP, F_FAULTS, F_SYMMETRIC, F_TLB,
    PLAN_SLOTS, SPREAD_ACTIVE, SPREAD_BROADCAST, SPREAD_HASH, SPREAD_ROUND_ROBIN,
};
use crate::Error;

/// How egress spreads frames over the transmitting members.
#[derive(Clone, Copy, Debug)]
pub enum Spread<'a> {
    /// A transmit hash policy (802.3ad, balance-xor, balance-tlb, adaptive).
    Hash {
        /// The policy.
        policy: Policy,
        /// The member count, and for `strong` the bucket table; it must have
        /// as many members as [`Distribution::tx`].
        buckets: &'a BucketMap,
        /// balance-tlb: frames leaving by a member other than the active
        /// one carry that member's own MAC.
        tlb: Option<Tlb<'a>>,
        /// Count bytes per bucket (see [`crate::Datapath::bucket_bytes`]).
        bucket_bytes: bool,
    },
    /// `packets_per_member` frames on each member in turn (0: each frame
    /// on a member at random).
    RoundRobin {
        /// Linux's `packets_per_slave`.
        packets_per_member: u32,
    },
    /// Every frame on one member (active-backup).
    Active(usize),
    /// Every frame on every member.
    Broadcast {
        /// Of a frame that arrives on several members within 50 ms (a
        /// broadcast peer), only the first copy goes up.
        dedup: bool,
    },
}

/// balance-tlb's source-MAC rewrite.
#[derive(Clone, Copy, Debug)]
pub struct Tlb<'a> {
    /// The member that keeps the bond's MAC (it receives).
    pub active: usize,
    /// Each transmitting member's own MAC, in [`Distribution::tx`] order.
    pub macs: &'a [[u8; 6]],
    /// The bond's MAC: only frames with it as source are rewritten.
    pub bond_mac: [u8; 6],
    /// balance-alb as well: ARP replies to a client leave by its member
    /// ([`crate::Datapath::set_alb_client`], else its address mod the
    /// member count) advertising that member's MAC, and frames sent to any
    /// member's MAC go up as sent to the bond's.
    pub alb: bool,
}

/// How egress distributes frames, and where ingress delivers them.
#[derive(Clone, Copy, Debug)]
pub struct Distribution<'a> {
    /// How frames are spread.
    pub spread: Spread<'a>,
    /// The transmitting members' interface indices; a member is its
    /// position here.
    pub tx: &'a [u32],
    /// The members whose received data frames go up to the logical
    /// interface; frames from others are dropped.
    pub rx: &'a [u32],
    /// The logical interface's index (0: ingress drops data frames).
    pub logical: u32,
    /// The counter each member of `tx` counts into (see
    /// [`crate::Counters`]); empty: its position. A bond passes its own
    /// member numbers, so a member's counts stay its own while positions
    /// shift from plan to plan.
    pub tx_ids: &'a [u16],
    /// The same for `rx`.
    pub rx_ids: &'a [u16],
    /// Drop frames at random on the interfaces given to
    /// [`crate::Datapath::set_fault_loss`].
    pub faults: bool,
}

impl<'a> Distribution<'a> {
    /// `policy` over `members`, every one of them transmitting and
    /// receiving (802.3ad with all members distributing, balance-xor).
    pub fn hashed(
        policy: Policy,
        buckets: &'a BucketMap,
        members: &'a [u32],
        logical: u32,
    ) -> Distribution<'a> {
        Distribution {
            spread: Spread::Hash {
                policy,
                buckets,
                tlb: None,
                bucket_bytes: false,
            },
            tx: members,
            rx: members,
            logical,
            tx_ids: &[],
            rx_ids: &[],
            faults: false,
        }
    }

    /// The plan as the programs read it.
    fn encode(&self) -> Result<Config, Error> {
        let n = self.tx.len();
        let too_many = |count: usize| Error::TooManyMembers { count };
        if n > MAX_MEMBERS {
            return Err(too_many(n));
        }
        if self.rx.len() > MAX_MEMBERS {
            return Err(too_many(self.rx.len()));
        }
        let no_such = |member: usize| Error::NoSuchMember { member, members: n };
        let mut config = Config {
            spread: SPREAD_HASH,
            policy: 0,
            seed: 0,
            flags: 0,
            logical: self.logical,
            members: n as u32,
            rx_members: self.rx.len() as u32,
            active: 0,
            packets_per_member: 0,
            slots: [0; 256],
            ifindex: [0; MAX_MEMBERS],
            rx_ifindex: [0; MAX_MEMBERS],
            mac: [[0; 6]; MAX_MEMBERS],
            bond_mac: [0; 6],
            reserved: [0; 2],
            tx_id: std::array::from_fn(|i| i as u16),
            rx_id: std::array::from_fn(|i| i as u16),
        };
        config.ifindex[..n].copy_from_slice(self.tx);
        config.rx_ifindex[..self.rx.len()].copy_from_slice(self.rx);
        for (ids, list, out) in [
            (self.tx_ids, self.tx, &mut config.tx_id),
            (self.rx_ids, self.rx, &mut config.rx_id),
        ] {
            if ids.is_empty() {
                continue;
            }
            if ids.len() != list.len() {
                return Err(Error::Members {
                    members: ids.len(),
                    ifindexes: list.len(),
                });
            }
            if let Some(&id) = ids.iter().find(|&&id| usize::from(id) >= MAX_MEMBERS) {
                return Err(Error::TooManyMembers {
                    count: usize::from(id) + 1,
                });
            }
            out[..ids.len()].copy_from_slice(ids);
        }
        if self.faults {
            config.flags |= F_FAULTS;
        }
        match self.spread {
            Spread::Hash {
                policy,
                buckets,
                tlb,
                bucket_bytes,
            } => {
                if buckets.members() != n {
                    return Err(Error::Members {
                        members: buckets.members(),
                        ifindexes: n,
                    });
                }
                config.policy = policy_code(policy);
                config.slots = *buckets.slots();
                if let Policy::Strong(s) = policy {
                    config.seed = s.seed;
                    if s.symmetric {
                        config.flags |= F_SYMMETRIC;
                    }
                }
                if bucket_bytes {
                    config.flags |= F_BUCKET_BYTES;
                }
                if let Some(tlb) = tlb {
                    if tlb.active >= n {
                        return Err(no_such(tlb.active));
                    }
                    if tlb.macs.len() != n {
                        return Err(Error::Members {
                            members: tlb.macs.len(),
                            ifindexes: n,
                        });
                    }
                    config.flags |= F_TLB;
                    if tlb.alb {
                        config.flags |= F_ALB;
                    }
                    config.active = tlb.active as u32;
                    config.mac[..n].copy_from_slice(tlb.macs);
                    config.bond_mac = tlb.bond_mac;
                }
            }
            Spread::RoundRobin { packets_per_member } => {
                config.spread = SPREAD_ROUND_ROBIN;
                config.packets_per_member = packets_per_member;
            }
            Spread::Active(m) => {
                if m >= n {
                    return Err(no_such(m));
                }
                config.spread = SPREAD_ACTIVE;
                config.active = m as u32;
            }
            Spread::Broadcast { dedup } => {
                config.spread = SPREAD_BROADCAST;
                if dedup {
                    config.flags |= F_DEDUP;
                }
            }
        }
        Ok(config)
    }
}

/// How long a slot that went out of force stays untouched before it is
/// written again. A program run that read the old `active` finishes within
/// microseconds: tc programs run with preemption off (softirq, or with
/// bottom halves disabled) on kernels without PREEMPT_RT. With sixteen
/// slots this delays a publish only when sixteen plans come within this
/// time (a plan equal to the one in force is not published at all).
const SLOT_REUSE: Duration = Duration::from_millis(10);

/// A `plans` map's one element, mapped into this process: the bond's (of
/// [`Config`]s, shared by every [`Publisher`] of a [`crate::Datapath`];
/// unmapped when the last goes) or the switch's.
pub(crate) struct Mapped<C> {
    plans: NonNull<Plans<C>>,
    len: usize,
    /// The slot in force (1-based, 0: none) and when each slot went out of
    /// force; the lock orders publishers of one data path.
    state: Mutex<(usize, [Option<Instant>; PLAN_SLOTS])>,
}

// SAFETY: the mapping is shared memory the kernel also reads; this process
// writes it only under `state`'s lock, and the pointer stays valid until
// `Drop` unmaps it.
unsafe impl<C: Send> Send for Mapped<C> {}
// SAFETY: as above; `&Mapped` gives no unsynchronised write.
unsafe impl<C: Sync> Sync for Mapped<C> {}

impl<C: Copy + PartialEq> Mapped<C> {
    /// Maps the `plans` map whose descriptor is `fd` (created with
    /// BPF_F_MMAPABLE and one element of `Plans<C>`'s layout).
    pub(crate) fn new(fd: impl AsFd) -> Result<Mapped<C>, Error> {
        let page = 4096;
        let len = std::mem::size_of::<Plans<C>>().div_ceil(page) * page;
        let io = |source: nix::Error| Error::Io {
            what: "mapping the plans map into memory",
            source: source.into(),
        };
        // SAFETY: a fresh shared mapping of a BPF array map of at least
        // `len` bytes (the kernel rounds the element up to pages); nothing
        // else in this process refers to it.
        let addr = unsafe {
            nix::sys::mman::mmap(
                None,
                std::num::NonZeroUsize::new(len).expect("non-zero"),
                nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE,
                nix::sys::mman::MapFlags::MAP_SHARED,
                fd,
                0,
            )
        }
        .map_err(io)?;
        Ok(Mapped {
            plans: addr.cast(),
            len,
            state: Mutex::new((0, [None; PLAN_SLOTS])),
        })
    }

    /// Writes `config` into a slot no program reads and puts it in force.
    pub(crate) fn publish(&self, config: &C) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (current, retired) = &mut *st;
        let base = self.plans.as_ptr();
        if *current > 0 {
            // SAFETY: the slot in force, which only this (locked) side writes.
            let now = unsafe { std::ptr::addr_of!((*base).slot[*current - 1]).read_volatile() };
            if now == *config {
                return;
            }
        }
        // The slot after the one in force (slot 0 first).
        let next = *current % PLAN_SLOTS;
        if let Some(age) = retired[next].map(|t| t.elapsed()) {
            if age < SLOT_REUSE {
                std::thread::sleep(SLOT_REUSE - age);
            }
        }
        // SAFETY: `base` points to the mapped `struct lagkit_plans`; slot
        // `next` is out of force for at least SLOT_REUSE, so no program
        // reads it, and the lock keeps other publishers out.
        unsafe {
            std::ptr::addr_of_mut!((*base).slot[next]).write_volatile(*config);
        }
        fence(Ordering::Release);
        // SAFETY: `active` is an aligned u32 in the mapping; programs read
        // it with one load, so an atomic store switches them whole.
        let active = unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*base).active)) };
        active.store(next as u32 + 1, Ordering::Release);
        if *current > 0 {
            retired[*current - 1] = Some(Instant::now());
        }
        *current = next + 1;
    }
}

impl<C> Drop for Mapped<C> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        let _ = unsafe { nix::sys::mman::munmap(self.plans.cast(), self.len) };
    }
}

/// Publishes plans to a loaded [`crate::Datapath`].
pub struct Publisher {
    pub(crate) mapped: Arc<Mapped<Config>>,
}

impl Publisher {
    /// Publishes `d`, atomically as the programs see it.
    pub fn publish(&mut self, d: &Distribution<'_>) -> Result<(), Error> {
        let config = d.encode()?;
        self.mapped.publish(&config);
        Ok(())
    }
}
