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

/* A plan: how egress picks a member and where ingress delivers (the one
 * entry of the inner map in `plan`). */
struct lagkit_config {
	__u32 policy;    /* enum lagkit_policy */
	__u32 members;   /* usable members; 0 drops everything */
	__u64 seed;      /* strong's seed */
	__u32 symmetric; /* strong's symmetric mode (0 or 1) */
	__u32 logical;   /* the logical interface, where ingress delivers */
	__u8 slots[LAGKIT_BUCKETS];          /* strong: bucket -> member index */
	__u32 ifindex[LAGKIT_MAX_MEMBERS];   /* member index -> interface */
};

/* Per-CPU counters, one per member and one more for frames dropped for want
 * of a member (index LAGKIT_MAX_MEMBERS). */
struct lagkit_counter {
	__u64 packets;
	__u64 bytes;
};

/* What egress leaves in skb->cb for BPF_PROG_TEST_RUN to read back. */
#define LAGKIT_CB_MEMBER 0  /* member index + 1; 0 when there was none */
#define LAGKIT_CB_HASH_LO 1 /* Policy::hash, low 32 bits */
#define LAGKIT_CB_HASH_HI 2 /* Policy::hash, high 32 bits */
#define LAGKIT_CB_IFINDEX 3 /* the interface redirected to; 0 when dropped */

#endif
