/* The ABI between the BPF programs and lagkit-bpf's Rust side: policy codes,
 * the configuration map's value and the counters. `src/abi.rs` mirrors every
 * definition here field for field (aya refuses a map whose value size
 * differs from the Rust type's). */
#ifndef LAGKIT_H
#define LAGKIT_H

#include <linux/types.h>

/* Member indices run 0..LAGKIT_MAX_MEMBERS (lagkit_hash::MAX_MEMBERS). */
#define LAGKIT_MAX_MEMBERS 256
#define LAGKIT_BUCKETS 256

/* lagkit_hash::Policy, in the order of Policy::COMPAT, then strong. */
enum lagkit_policy {
	LAGKIT_LAYER2 = 0,
	LAGKIT_LAYER23,
	LAGKIT_LAYER34,
	LAGKIT_ENCAP23,
	LAGKIT_ENCAP34,
	LAGKIT_VLAN_SRCMAC,
	LAGKIT_AIX_DEFAULT,
	LAGKIT_AIX_SRC_PORT,
	LAGKIT_AIX_DST_PORT,
	LAGKIT_AIX_SRC_DST_PORT,
	LAGKIT_CISCO_SRC_MAC,
	LAGKIT_CISCO_DST_MAC,
	LAGKIT_CISCO_SRC_DST_MAC,
	LAGKIT_CISCO_SRC_IP,
	LAGKIT_CISCO_DST_IP,
	LAGKIT_CISCO_SRC_DST_IP,
	LAGKIT_CISCO_SRC_PORT,
	LAGKIT_CISCO_DST_PORT,
	LAGKIT_CISCO_SRC_DST_PORT,
	LAGKIT_CISCO_MIXED,
	LAGKIT_HP_MAC,
	LAGKIT_HP_IP,
	LAGKIT_HP_PORT,
	LAGKIT_STRONG,
	LAGKIT_POLICIES,
};

/* How egress spreads frames over the members that may transmit
 * (lagkit's `Spread`). */
enum lagkit_spread {
	LAGKIT_SPREAD_HASH = 0,    /* a transmit hash policy */
	LAGKIT_SPREAD_ROUND_ROBIN, /* packets_per_member frames each, in turn */
	LAGKIT_SPREAD_ACTIVE,      /* everything on `active` */
	LAGKIT_SPREAD_BROADCAST,   /* every frame on every member */
};

#define LAGKIT_F_SYMMETRIC 1    /* strong: both directions hash alike */
#define LAGKIT_F_TLB 2          /* hash: frames on a member other than
				 * `active` carry that member's own MAC */
#define LAGKIT_F_BUCKET_BYTES 4 /* hash: count bytes per bucket, for
				 * adaptive rebalancing */
#define LAGKIT_F_ALB 16         /* with LAGKIT_F_TLB: ARP replies to a
				 * client leave by its member, advertising
				 * that member's MAC (alb_clients); frames
				 * to a member's MAC go up as the bond's */
#define LAGKIT_F_DEDUP 8        /* ingress: only the first copy of a frame
				 * that arrives on several members goes up
				 * (broadcast bonds back to back) */
#define LAGKIT_F_FAULTS 32      /* drop frames at random on the members
				 * named in `faults` (lagkit's --fault-loss) */

/* A plan: how egress spreads frames and which members ingress accepts
 * (the one entry of the inner map in `plan`). Transmitting members are
 * named by position in `ifindex`, which is what "member" means here. */
struct lagkit_config {
	__u32 spread;  /* enum lagkit_spread */
	__u32 policy;  /* enum lagkit_policy, for SPREAD_HASH */
	__u64 seed;    /* strong's seed */
	__u32 flags;   /* LAGKIT_F_* */
	__u32 logical; /* the logical interface, where ingress delivers */
	__u32 members; /* transmitting members; 0 drops everything */
	__u32 rx_members;
	__u32 active;             /* SPREAD_ACTIVE's member; LAGKIT_F_TLB's */
	__u32 packets_per_member; /* SPREAD_ROUND_ROBIN; 0 picks at random */
	__u8 slots[LAGKIT_BUCKETS];              /* strong: bucket -> member */
	__u32 ifindex[LAGKIT_MAX_MEMBERS];       /* member -> interface */
	__u32 rx_ifindex[LAGKIT_MAX_MEMBERS];    /* members whose frames go up */
	__u8 mac[LAGKIT_MAX_MEMBERS][6];         /* LAGKIT_F_TLB: member -> MAC */
	__u8 bond_mac[6];                        /* LAGKIT_F_TLB: the bond's MAC */
	__u8 reserved[2];
	/* The counter each position of `ifindex` (tx_id) and `rx_ifindex`
	 * (rx_id) counts into: the bond's own member numbers, which stay put
	 * while positions shift from one plan to the next. */
	__u16 tx_id[LAGKIT_MAX_MEMBERS];
	__u16 rx_id[LAGKIT_MAX_MEMBERS];
};

/* The plans user space publishes (see `plans` in lagkit.bpf.c): `active`
 * is 1 + the slot in force, 0 before the first plan. */
#define LAGKIT_PLAN_SLOTS 16
struct lagkit_plans {
	__u32 active;
	__u32 reserved;
	struct lagkit_config slot[LAGKIT_PLAN_SLOTS];
};

/* Per-CPU counters, one per member (the plan's tx_id and rx_id name it),
 * then (index LAGKIT_MAX_MEMBERS) frames dropped: no member to send on, or
 * received on a member whose frames do not go up; then (LAGKIT_FAULTS)
 * frames LAGKIT_F_FAULTS dropped; ingress has one more (LAGKIT_RX_COPIES)
 * for copies that LAGKIT_F_DEDUP dropped. */
#define LAGKIT_FAULTS (LAGKIT_MAX_MEMBERS + 1)
#define LAGKIT_RX_COPIES (LAGKIT_MAX_MEMBERS + 2)
struct lagkit_counter {
	__u64 packets;
	__u64 bytes;
};

/* Per-CPU load of one hash bucket (LAGKIT_F_BUCKET_BYTES). */
struct lagkit_bucket {
	__u64 bytes;
	__u64 last; /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) of its last frame */
};

/* What egress leaves in skb->cb for BPF_PROG_TEST_RUN to read back. */
#define LAGKIT_CB_MEMBER 0  /* member index + 1; 0 when there was none */
#define LAGKIT_CB_HASH_LO 1 /* Policy::hash, low 32 bits */
#define LAGKIT_CB_HASH_HI 2 /* Policy::hash, high 32 bits */
#define LAGKIT_CB_IFINDEX 3 /* the interface redirected to; 0 when dropped */
#define LAGKIT_CB_BUCKET 4  /* Policy::bucket + 1; 0 when it has none */

#endif
