//! The Rust side of `src/bpf/lagkit.h`: map values and policy codes, field
//! for field as the C side lays them out.

use lagkit_hash::{Policy, BUCKETS, MAX_MEMBERS};

/// `struct lagkit_config`: a plan, the one entry of an inner map of `plan`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    pub spread: u32,
    pub policy: u32,
    pub seed: u64,
    pub flags: u32,
    pub logical: u32,
    pub members: u32,
    pub rx_members: u32,
    pub active: u32,
    pub packets_per_member: u32,
    pub slots: [u8; BUCKETS],
    pub ifindex: [u32; MAX_MEMBERS],
    pub rx_ifindex: [u32; MAX_MEMBERS],
    pub mac: [[u8; 6]; MAX_MEMBERS],
    pub bond_mac: [u8; 6],
    pub reserved: [u8; 2],
    pub tx_id: [u16; MAX_MEMBERS],
    pub rx_id: [u16; MAX_MEMBERS],
}

// SAFETY: repr(C) with fields laid out without padding (8 u32/u64 fields in
// 40 bytes, then 256 bytes, 2 x 256 u32s, 256 x 6 bytes, 6 + 2 bytes and
// 2 x 256 u16s: 4912 bytes, a multiple of the 8-byte alignment); every bit
// pattern is a valid value of every field.
unsafe impl aya::Pod for Config {}

/// `LAGKIT_PLAN_SLOTS`.
pub(crate) const PLAN_SLOTS: usize = 16;

/// `struct lagkit_plans` (of [`Config`]s), and the switch's `struct
/// lksw_plans`: the plans and the one in force.
#[repr(C)]
pub(crate) struct Plans<C> {
    pub active: u32,
    pub reserved: u32,
    pub slot: [C; PLAN_SLOTS],
}

/// `enum lagkit_spread`.
pub(crate) const SPREAD_HASH: u32 = 0;
pub(crate) const SPREAD_ROUND_ROBIN: u32 = 1;
pub(crate) const SPREAD_ACTIVE: u32 = 2;
pub(crate) const SPREAD_BROADCAST: u32 = 3;

/// `LAGKIT_F_*`.
pub(crate) const F_SYMMETRIC: u32 = 1;
pub(crate) const F_TLB: u32 = 2;
pub(crate) const F_BUCKET_BYTES: u32 = 4;
pub(crate) const F_DEDUP: u32 = 8;
pub(crate) const F_ALB: u32 = 16;
pub(crate) const F_FAULTS: u32 = 32;

/// `struct lagkit_bucket`: one CPU's share of a bucket's load.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Bucket {
    pub bytes: u64,
    pub last: u64,
}

// SAFETY: repr(C), two u64s, no padding; any bit pattern is valid.
unsafe impl aya::Pod for Bucket {}

/// `struct lagkit_counter`: one CPU's share of a member's counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counter {
    pub packets: u64,
    pub bytes: u64,
}

// SAFETY: repr(C), two u64s, no padding; any bit pattern is valid.
unsafe impl aya::Pod for Counter {}

/// `LAGKIT_STRONG`: the code after every compatibility policy.
const STRONG: u32 = Policy::COMPAT.len() as u32;

/// `enum lagkit_policy`: a compatibility policy's index in
/// [`Policy::COMPAT`], or [`STRONG`].
pub(crate) fn policy_code(policy: Policy) -> u32 {
    match policy {
        Policy::Strong(_) => STRONG,
        other => Policy::COMPAT
            .iter()
            .position(|p| *p == other)
            .map_or(u32::MAX, |i| i as u32),
    }
}

/// Size of the `struct __sk_buff` that BPF_PROG_TEST_RUN reads and writes
/// back (Linux 6.x: 192 bytes; a longer buffer must end in zeros, a shorter
/// one is accepted).
pub(crate) const SKB_CTX_LEN: usize = 192;

/// Byte offset of `__sk_buff.cb[0]`.
const CB: usize = 48;

/// Byte offset of `__sk_buff.ifindex`.
pub(crate) const IFINDEX: usize = 40;

/// What egress left in `cb`: `LAGKIT_CB_*`.
pub(crate) struct Cb {
    /// Member + 1, or 0.
    pub member: u32,
    pub hash: u64,
    /// 0 when dropped.
    pub ifindex: u32,
    /// Bucket + 1, or 0.
    pub bucket: u32,
}

/// `cb` read back from a context.
pub(crate) fn read_cb(ctx: &[u8; SKB_CTX_LEN]) -> Cb {
    let word = |i: usize| {
        let at = CB + 4 * i;
        u32::from_ne_bytes([ctx[at], ctx[at + 1], ctx[at + 2], ctx[at + 3]])
    };
    Cb {
        member: word(0),
        hash: u64::from(word(1)) | u64::from(word(2)) << 32,
        ifindex: word(3),
        bucket: word(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_has_the_c_layout() {
        assert_eq!(core::mem::size_of::<Config>(), 4912);
        assert_eq!(core::mem::size_of::<Plans<Config>>(), 8 + 16 * 4912);
        assert_eq!(core::mem::offset_of!(Plans<Config>, slot), 8);
        assert_eq!(core::mem::size_of::<Counter>(), 16);
    }

    #[test]
    fn policy_codes_follow_compat_order() {
        assert_eq!(policy_code(Policy::Layer2), 0);
        assert_eq!(policy_code(Policy::HpLbPort), 22);
        assert_eq!(policy_code("strong:seed=9".parse().unwrap()), 23);
    }
}
