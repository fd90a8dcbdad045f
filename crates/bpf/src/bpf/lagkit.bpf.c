// SPDX-License-Identifier: MIT OR Apache-2.0
/* lagkit's in-kernel data path: lagkit_egress on the logical interface's
 * tcx egress spreads frames over the members as the published plan says
 * (a hash policy, round-robin, active-backup, broadcast; balance-tlb/alb's
 * MAC rewrites), and lagkit_ingress on each member's tcx ingress sends data
 * frames up to the logical interface. Sections: maps; selection and egress;
 * ingress. The flow key, its parser and the policies are flow.h's, which
 * the switch's programs share.
 *
 * The member a frame takes must be exactly the one lagkit_hash picks (the
 * planner, `lagkit flow` and the userspace engine all ask lagkit_hash), so
 * flow.h is a transliteration of crates/hash, not a reimplementation:
 *
 *   parse_key()   = FlowKey::from_frame  (crates/hash/src/key.rs, which
 *                   leans on etherparse 0.21's lax parser; its rules are
 *                   spelled out there where the Rust side inherits them)
 *   policy_*()    = Policy::compute       (linux.rs, aix.rs, cisco.rs, hp.rs,
 *                   strong.rs, with xxh3 for strong)
 *
 * and a test (tests/parity.rs) runs this program with BPF_PROG_TEST_RUN on
 * frames and compares hash and member with the Rust result for every policy.
 *
 * Bytes are read with bpf_skb_load_bytes into small stack buffers rather
 * than through direct packet pointers: GSO frames are not linear, offsets
 * here are data-dependent, and the verifier accepts helper reads with a
 * checked scalar offset without range proofs. Every parsing step is a
 * global function, verified once on its own, which keeps the verifier's
 * work linear in the number of steps rather than exponential in the
 * branches of a fully inlined parser.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lagkit.h"
#include "flow.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ---- maps ---------------------------------------------------------------- */

/* The plans: LAGKIT_PLAN_SLOTS whole plans and the number of the one in
 * force, in one array element that user space maps into its memory
 * (BPF_F_MMAPABLE). User space publishes a plan by writing it into a slot
 * no program reads, then storing that slot's number in `active`: a program
 * run reads `active` once and uses that slot throughout, so every frame
 * sees one whole plan, old or new, never a mix. A slot is written again
 * only after fifteen more plans and a quiet time far longer than any program
 * run (crates/bpf plan.rs, SLOT_REUSE). No system call is made, so a plan
 * takes effect within microseconds; swapping an inner map of a map-in-map
 * instead (as lagkit first did) waits for an RCU grace period in the
 * kernel, 10-20 ms on a busy machine, too slow for failover.
 * `active` 0 means "not configured". */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lagkit_plans);
} plans SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAGKIT_FAULTS + 1);
	__type(key, __u32);
	__type(value, struct lagkit_counter);
} tx_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAGKIT_RX_COPIES + 1);
	__type(key, __u32);
	__type(value, struct lagkit_counter);
} rx_counters SEC(".maps");

/* balance-alb's clients: IPv4 address (host order) -> the interface of the
 * member it was told to send to. Kept by the control thread one client at
 * a time; an entry naming no member of the plan in force is ignored, so
 * the table never needs to change together with a plan. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);
} alb_clients SEC(".maps");

/* LAGKIT_F_FAULTS: interface -> the chance, in 2^-32, that a frame it
 * sends or receives is dropped (lagkit's --fault-loss, for tests and labs;
 * the userspace engine's FaultInjector). Outside the plan: set once at
 * start. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LAGKIT_MAX_MEMBERS);
	__type(key, __u32);
	__type(value, __u32);
} faults SEC(".maps");

/* LAGKIT_F_DEDUP's memory of recent frames: a direct-mapped table shared
 * by all CPUs. Two CPUs writing one slot at once can at worst let one copy
 * through. The userspace engine's (crates/bond map.rs `Dedup`) is 4-way,
 * because its thread reads the members a batch at a time, so a frame's
 * copies come up a batch apart. Here the sender's two copies come up one
 * after the other from its CPU's backlog (`once_broadcast`: no duplicate
 * SACK). */
#define DEDUP_SLOTS 4096
#define DEDUP_WINDOW_NS 50000000ULL
struct dedup_slot {
	__u64 hash;
	__u64 time;
	__u32 ifindex;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DEDUP_SLOTS);
	__type(key, __u32);
	__type(value, struct dedup_slot);
} dedup SEC(".maps");

/* Bytes sent per bucket and when the bucket last sent (LAGKIT_F_BUCKET_BYTES):
 * what the adaptive rebalancer reads, to move only buckets idle for its gap.
 * Outside the plan, so counts survive a plan change. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAGKIT_BUCKETS);
	__type(key, __u32);
	__type(value, struct lagkit_bucket);
} bucket_bytes SEC(".maps");

/* Round-robin's frame counter, shared by every CPU and every plan (as the
 * userspace engine's is), so the rotation goes on across plan changes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rr SEC(".maps");


/* Per-CPU scratch space: the key and its helpers would not fit the 512-byte
 * stack that all frames of a call chain share. */
struct scratch {
	struct flow_scratch flow; /* the parser's and the policies' (flow.h) */
	__u8 head[256]; /* LAGKIT_F_DEDUP: a frame's first bytes */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline struct lagkit_config *current_plan(void)
{
	__u32 zero = 0, active;
	struct lagkit_plans *p = bpf_map_lookup_elem(&plans, &zero);

	if (!p)
		return NULL;
	active = *(volatile __u32 *)&p->active;
	if (active == 0 || active > LAGKIT_PLAN_SLOTS)
		return NULL;
	return &p->slot[(active - 1) & (LAGKIT_PLAN_SLOTS - 1)];
}

/* ---- selection ----------------------------------------------------------- */

/* Policy::hash, Policy::bucket (-1: none) and the member the policy selects
 * among cfg->members (-1: none). */
__noinline int select_member(struct flow_scratch *f, struct lagkit_config *cfg, __u64 *hash,
			     int *bucket)
{
	struct flow_hash out = {};
	__u32 n;
	long v;

	if (!f || !cfg || !hash || !bucket)
		return -1;
	n = cfg->members;
	v = policy_hash(f, cfg->policy, cfg->seed, cfg->flags & LAGKIT_F_SYMMETRIC, &out);
	*hash = out.hash;
	*bucket = out.bucket;
	if (v < 0 || n == 0 || n > LAGKIT_MAX_MEMBERS)
		return -1;
	if (cfg->policy == LAGKIT_STRONG) {
		v = cfg->slots[v & 0xff];
		return v < n ? (int)v : -1;
	}
	return (__u32)v % n;
}

static __always_inline void count(void *map, __u32 index, __u32 len)
{
	struct lagkit_counter *c = bpf_map_lookup_elem(map, &index);

	if (c) {
		c->packets++;
		c->bytes += len;
	}
}

/* LAGKIT_F_FAULTS: whether to drop a frame on interface `ifindex`. */
static __always_inline int faulty(struct lagkit_config *cfg, __u32 ifindex)
{
	__u32 *chance;

	if (!(cfg->flags & LAGKIT_F_FAULTS))
		return 0;
	chance = bpf_map_lookup_elem(&faults, &ifindex);
	return chance && bpf_get_prandom_u32() < *chance;
}

/* SPREAD_ROUND_ROBIN: frame c of the rotation goes to member
 * (c / packets_per_member) mod n; with packets_per_member 0 a member at
 * random (Linux's packets_per_slave=0).
 *
 * The rotation advances RR_QUANTUM per frame, and by its length for a GSO
 * frame. TCP hands a fast device a big GSO frame and a small one in turn
 * often enough that dealing whole frames (as Linux does, and the userspace
 * engine, which sees such pairs less) would put every big one on the same
 * member: one flow measured 33 MB on one member and 0.35 MB on the other.
 * Counted by length, a big frame moves the rotation on by a fraction of a
 * turn that the pattern does not repeat. */
#define RR_QUANTUM 1514
static __always_inline int round_robin(struct __sk_buff *skb, struct lagkit_config *cfg)
{
	__u32 zero = 0, n = cfg->members, per = cfg->packets_per_member;
	__u32 step = skb->gso_segs > 1 ? skb->len : RR_QUANTUM;
	__u64 *counter, c;

	if (n == 0 || n > LAGKIT_MAX_MEMBERS)
		return -1;
	if (per == 0)
		return bpf_get_prandom_u32() % n;
	counter = bpf_map_lookup_elem(&rr, &zero);
	if (!counter)
		return -1;
	c = __sync_fetch_and_add(counter, step);
	return (c / ((__u64)per * RR_QUANTUM)) % n;
}

/* SPREAD_BROADCAST: a copy to every member but the last; the last gets the
 * frame itself (returned). */
static __always_inline int broadcast(struct __sk_buff *skb, struct lagkit_config *cfg)
{
	__u32 n = cfg->members, i;

	if (n == 0 || n > LAGKIT_MAX_MEMBERS)
		return -1;
	for (i = 0; i < LAGKIT_MAX_MEMBERS - 1; i++) {
		if (i + 1 >= n)
			break;
		if (faulty(cfg, cfg->ifindex[i]))
			count(&tx_counters, LAGKIT_FAULTS, skb->len);
		else if (bpf_clone_redirect(skb, cfg->ifindex[i], 0) == 0)
			count(&tx_counters, cfg->tx_id[i], skb->len);
		else
			count(&tx_counters, LAGKIT_MAX_MEMBERS, skb->len);
	}
	return n - 1;
}

static __always_inline int is_arp(struct __sk_buff *skb)
{
	__u8 et[2];

	return bpf_skb_load_bytes(skb, 12, et, 2) == 0 && be16(et) == ETH_ARP;
}

static __always_inline int same_mac(const __u8 *a, const __u8 *b)
{
	int i;

	for (i = 0; i < 6; i++) {
		if (a[i] != b[i])
			return 0;
	}
	return 1;
}

/* The destination is a group (broadcast or multicast) address. */
static __always_inline int group_addressed(struct __sk_buff *skb)
{
	__u8 d;

	return bpf_skb_load_bytes(skb, 0, &d, 1) == 0 && (d & 1);
}

/* The source MAC is the bond's (not, say, a bridged guest's). */
static __always_inline int from_bond(struct __sk_buff *skb, struct lagkit_config *cfg)
{
	__u8 src[6];

	return bpf_skb_load_bytes(skb, 6, src, 6) == 0 && same_mac(src, cfg->bond_mac);
}

/* The position in the plan's tx list of interface `ifindex`, or -1. */
static __always_inline int tx_position(struct lagkit_config *cfg, __u32 ifindex)
{
	__u32 i;

	for (i = 0; i < LAGKIT_MAX_MEMBERS; i++) {
		if (i >= cfg->members)
			break;
		if (cfg->ifindex[i] == ifindex)
			return i;
	}
	return -1;
}

#define ALB_NOT_ARP (-2)

/* balance-alb's ARP (crates/bond map.rs `select_alb_arp`): an ARP reply
 * from the bond goes out by the member its target (a client) was given, or
 * by `alb_member_for` (its address mod the member count) for a client not
 * in the table; any other ARP by the active member. ALB_NOT_ARP for frames
 * that are not ARP. The caller rewrites the MACs. */
__noinline int alb_arp(struct __sk_buff *skb, struct lagkit_config *cfg)
{
	__u8 a[42];
	__u32 ip, *ifindex;
	int pos;

	if (!cfg)
		return ALB_NOT_ARP;
	if (!is_arp(skb))
		return ALB_NOT_ARP;
	if (cfg->active >= cfg->members || cfg->members > LAGKIT_MAX_MEMBERS)
		return -1;
	/* ArpRepr::parse: Ethernet/IPv4 ARP, 28 bytes; op 2 is a reply. */
	if (bpf_skb_load_bytes(skb, 0, a, 42) || be16(a + 14) != 1 || be16(a + 16) != ETH_IPV4 ||
	    a[18] != 6 || a[19] != 4 || be16(a + 20) != 2 || !same_mac(a + 22, cfg->bond_mac))
		return cfg->active;
	ip = (__u32)a[38] << 24 | (__u32)a[39] << 16 | (__u32)a[40] << 8 | a[41];
	ifindex = bpf_map_lookup_elem(&alb_clients, &ip);
	pos = ifindex ? tx_position(cfg, *ifindex) : -1;
	return pos >= 0 ? pos : (int)(ip % cfg->members);
}

/* The logical interface's tc egress: pick the member the plan picks and
 * redirect the frame to it. The choice, the hash and the bucket are left in
 * skb->cb, where BPF_PROG_TEST_RUN hands them back to the tests. */
SEC("classifier")
int lagkit_egress(struct __sk_buff *skb)
{
	__u32 zero = 0, ifindex, b;
#ifdef LAGKIT_VARIANT
	/* The variant build (tests of an upgrade across a restart): one
	 * instruction more, so its programs' tags differ, and nothing else. */
	asm volatile("r0 = 0" ::: "r0");
#endif
	struct lagkit_config *cfg = current_plan();
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct lagkit_bucket *load;
	__u64 hash = 0;
	int member = -1, bucket = -1;

	skb->cb[LAGKIT_CB_MEMBER] = 0;
	skb->cb[LAGKIT_CB_IFINDEX] = 0;
	skb->cb[LAGKIT_CB_BUCKET] = 0;
	if (!cfg || !s)
		return TC_ACT_SHOT;
	switch (cfg->spread) {
	case LAGKIT_SPREAD_HASH:
		if ((cfg->flags & LAGKIT_F_ALB) && (member = alb_arp(skb, cfg)) != ALB_NOT_ARP)
			break;
		/* balance-tlb/alb (as Linux): broadcasts and multicasts leave by
		 * the active member, the one that owns the bond's MAC. */
		if ((cfg->flags & LAGKIT_F_TLB) && group_addressed(skb)) {
			member = cfg->active < cfg->members ? (int)cfg->active : -1;
			break;
		}
		parse_key(skb, &s->flow,
			  cfg->policy == LAGKIT_ENCAP23 || cfg->policy == LAGKIT_ENCAP34 ||
				  cfg->policy == LAGKIT_STRONG);
		member = select_member(&s->flow, cfg, &hash, &bucket);
		if (bucket >= 0 && (cfg->flags & LAGKIT_F_BUCKET_BYTES)) {
			b = bucket & (LAGKIT_BUCKETS - 1);
			load = bpf_map_lookup_elem(&bucket_bytes, &b);
			if (load) {
				load->bytes += skb->len;
				load->last = bpf_ktime_get_ns();
			}
		}
		break;
	case LAGKIT_SPREAD_ROUND_ROBIN:
		member = round_robin(skb, cfg);
		break;
	case LAGKIT_SPREAD_ACTIVE:
		member = cfg->active < cfg->members ? (int)cfg->active : -1;
		break;
	case LAGKIT_SPREAD_BROADCAST:
		member = broadcast(skb, cfg);
		break;
	}
	skb->cb[LAGKIT_CB_MEMBER] = member < 0 ? 0 : member + 1;
	skb->cb[LAGKIT_CB_HASH_LO] = (__u32)hash;
	skb->cb[LAGKIT_CB_HASH_HI] = (__u32)(hash >> 32);
	skb->cb[LAGKIT_CB_BUCKET] = bucket + 1;
	if (member < 0 || member >= LAGKIT_MAX_MEMBERS) {
		count(&tx_counters, LAGKIT_MAX_MEMBERS, skb->len);
		return TC_ACT_SHOT;
	}
	member &= LAGKIT_MAX_MEMBERS - 1;
	/* balance-tlb/alb: the switch must keep learning the bond's MAC on the
	 * active member only, so frames sent elsewhere carry their member's
	 * own MAC as source. */
	if ((cfg->flags & LAGKIT_F_ALB) && member != cfg->active && is_arp(skb)) {
		/* balance-alb: an ARP reply from the bond to a client of
		 * another member advertises that member's MAC. */
		bpf_skb_store_bytes(skb, 6, cfg->mac[member], 6, 0);
		bpf_skb_store_bytes(skb, 22, cfg->mac[member], 6, 0);
	} else if ((cfg->flags & LAGKIT_F_TLB) && member != cfg->active && from_bond(skb, cfg)) {
		bpf_skb_store_bytes(skb, 6, cfg->mac[member], 6, 0);
	}
	ifindex = cfg->ifindex[member];
	if (faulty(cfg, ifindex)) {
		count(&tx_counters, LAGKIT_FAULTS, skb->len);
		return TC_ACT_SHOT;
	}
	count(&tx_counters, cfg->tx_id[member], skb->len);
	skb->cb[LAGKIT_CB_IFINDEX] = ifindex;
	return bpf_redirect(ifindex, 0);
}

/* A hash of a frame's length and first 256 bytes: its identity for
 * LAGKIT_F_DEDUP (IP IDs and TCP sequence numbers in the headers make it
 * unique in practice). Only this program compares these hashes, so any
 * good mixing function serves. */
__noinline __u64 frame_identity(struct __sk_buff *skb, struct scratch *s)
{
	__u32 len = skb->len, n = len < 256 ? len : 256, i;
	__u64 h = len * XXH_PRIME64_1, w;

	if (!s || n == 0)
		return 0;
	__builtin_memset(s->head, 0, sizeof(s->head));
	if (bpf_skb_load_bytes(skb, 0, s->head, n & 0x1ff))
		return 0;
	for (i = 0; i < 256; i += 8) {
		w = le64(s->head + i);
		h = (h ^ w) * 0x165667919E3779F9ULL;
		h ^= h >> 29;
	}
	return h;
}

/* LAGKIT_F_DEDUP (crates/bond map.rs `Dedup::is_copy`): a frame is a copy
 * when one with its identity came up through another member within
 * DEDUP_WINDOW_NS; a sender's genuine retransmission comes later, and
 * through the same member too, so it is never mistaken for one. */
static __always_inline int is_copy(struct __sk_buff *skb)
{
	__u32 zero = 0, slot;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct dedup_slot *d;
	__u64 h, now;

	if (!s)
		return 0;
	h = frame_identity(skb, s);
	slot = h & (DEDUP_SLOTS - 1);
	d = bpf_map_lookup_elem(&dedup, &slot);
	if (!d)
		return 0;
	now = bpf_ktime_get_ns();
	if (d->hash == h && d->ifindex != skb->ifindex && now - d->time <= DEDUP_WINDOW_NS)
		return 1;
	d->hash = h;
	d->ifindex = skb->ifindex;
	d->time = now;
	return 0;
}

/* A global function, verified once on its own: inlined into ingress's
 * loop over the receiving members, its own loop over the members would
 * multiply the verifier's work past its limit. */
__noinline int restore_bond_mac(struct __sk_buff *skb, struct lagkit_config *cfg)
{
	__u8 dst[6];
	__u32 i;

	if (!cfg || bpf_skb_load_bytes(skb, 0, dst, 6))
		return 0;
	for (i = 0; i < LAGKIT_MAX_MEMBERS; i++) {
		if (i >= cfg->members)
			break;
		if (same_mac(dst, cfg->mac[i])) {
			bpf_skb_store_bytes(skb, 0, cfg->bond_mac, 6, 0);
			return 1;
		}
	}
	return 0;
}

/* A data frame from the receiving member at position `rx` of the plan. */
static __always_inline int deliver(struct __sk_buff *skb, struct lagkit_config *cfg, __u32 rx)
{
	/* balance-tlb/alb: the switch floods group frames to every member
	 * port; only the active member's copy goes up. */
	if ((cfg->flags & LAGKIT_F_TLB) && group_addressed(skb) &&
	    skb->ifindex != cfg->ifindex[cfg->active & (LAGKIT_MAX_MEMBERS - 1)]) {
		count(&rx_counters, LAGKIT_MAX_MEMBERS, skb->len);
		return TC_ACT_SHOT;
	}
	/* balance-alb: a client sends to the member MAC it was given; back to
	 * back (no switch steering by MAC) that frame may arrive on another
	 * member, so any member's MAC is the bond's. */
	if (cfg->flags & LAGKIT_F_ALB)
		restore_bond_mac(skb, cfg);
	if ((cfg->flags & LAGKIT_F_DEDUP) && is_copy(skb)) {
		count(&rx_counters, LAGKIT_RX_COPIES, skb->len);
		return TC_ACT_SHOT;
	}
	count(&rx_counters, cfg->rx_id[rx & (LAGKIT_MAX_MEMBERS - 1)], skb->len);
	return bpf_redirect(cfg->logical, BPF_F_INGRESS);
}

/* Cisco's PAgP (wire::pagp::is_pagp_frame): an 802.3 length frame (the
 * kernel's protocol ETH_P_802_2) to 01-00-0C-CC-CC-CC with LLC AA-AA-03
 * and SNAP 00-00-0C / 0x0104. CDP and DTP share the address, not the
 * SNAP protocol id. */
static __always_inline int is_pagp(struct __sk_buff *skb)
{
	__u8 h[22];

	if (skb->protocol != bpf_htons(0x0004) || bpf_skb_load_bytes(skb, 0, h, sizeof(h)))
		return 0;
	/* Source MAC (6-11) and length (12-13): any. */
	return h[0] == 0x01 && h[1] == 0x00 && h[2] == 0x0c && h[3] == 0xcc && h[4] == 0xcc &&
	       h[5] == 0xcc && h[14] == 0xaa && h[15] == 0xaa && h[16] == 0x03 && h[17] == 0x00 &&
	       h[18] == 0x00 && h[19] == 0x0c && h[20] == 0x01 && h[21] == 0x04;
}

/* A member's tcx ingress: data frames from a member whose frames go up
 * (rx_ifindex) go to the logical interface, as if received there; others
 * are dropped and counted. Slow-protocol frames (LACP, Marker: EtherType
 * 0x8809) stay on the member for the daemon: its packet socket has already
 * had its copy (packet taps run before ingress), and a socket bound to
 * ETH_P_SLOW, served after ingress, gets one too. PAgP frames stay on the
 * member the same way: they are the daemon's, never the host's. Until a
 * plan names the logical interface, data frames are dropped, as lagkit's
 * isolation does. */
SEC("classifier")
int lagkit_ingress(struct __sk_buff *skb)
{
	struct lagkit_config *cfg;
	__u32 i, n;
#ifdef LAGKIT_VARIANT
	asm volatile("r0 = 0" ::: "r0");
#endif

	if (skb->protocol == bpf_htons(0x8809) || is_pagp(skb))
		return TC_ACT_OK;
	cfg = current_plan();
	if (!cfg || !cfg->logical)
		goto drop;
	if (faulty(cfg, skb->ifindex)) {
		count(&rx_counters, LAGKIT_FAULTS, skb->len);
		return TC_ACT_SHOT;
	}
	n = cfg->rx_members;
	for (i = 0; i < LAGKIT_MAX_MEMBERS; i++) {
		if (i >= n)
			break;
		if (cfg->rx_ifindex[i] == skb->ifindex)
			return deliver(skb, cfg, i);
	}
drop:
	count(&rx_counters, LAGKIT_MAX_MEMBERS, skb->len);
	return TC_ACT_SHOT;
}
