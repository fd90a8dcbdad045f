// SPDX-License-Identifier: MIT OR Apache-2.0
/* lagkit's in-kernel data path: lagkit_egress on the logical interface's
 * tcx egress spreads frames over the members as the published plan says
 * (a hash policy, round-robin, active-backup, broadcast; balance-tlb/alb's
 * MAC rewrites), and lagkit_ingress on each member's tcx ingress sends data
 * frames up to the logical interface. Sections: maps; the flow key and its
 * parser; the policies; selection and egress; ingress.
 *
 * The member a frame takes must be exactly the one lagkit_hash picks (the
 * planner, `lagkit flow` and the userspace engine all ask lagkit_hash), so
 * this file is a transliteration of crates/hash, not a reimplementation:
 *
 *   parse_key()   = FlowKey::from_frame  (crates/hash/src/key.rs, which
 *                   leans on etherparse 0.21's lax parser; its rules are
 *                   spelled out here where the Rust side inherits them)
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

/* LAGKIT_F_DEDUP's memory of recent frames: a direct-mapped table, as the
 * userspace engine's (crates/bond map.rs `Dedup`), shared by all CPUs.
 * Two CPUs writing one slot at once can at worst let one copy through. */
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

/* ---- the flow key (FlowKey) ---------------------------------------------- */

enum l4_kind {
	L4_NONE = 0, /* L4::None */
	L4_PORTS,    /* L4::Ports */
	L4_ICMP,     /* L4::Icmp { id: None } */
	L4_ICMP_ID,  /* L4::Icmp { id: Some(_) }, the id in sport */
	L4_ICMP_ERR, /* L4::IcmpError */
};

/* IpFlow. Addresses are kept as 16 bytes, IPv4 mapped (::ffff:a.b.c.d),
 * which is what `strong` hashes; the Linux word and AIX/Cisco/HP's last
 * byte are taken from them. */
struct ipflow {
	__u8 present;
	__u8 v6;
	__u8 proto;
	__u8 fragment;
	__u8 ext_headers;
	__u8 l4; /* enum l4_kind */
	__u8 icmp_ty;
	__u8 icmp_code;
	__u8 q_present; /* IcmpError's quoted packet: its IP header was there */
	__u8 q_ports;   /* ... and its port word */
	__u16 reserved;
	__u16 sport;
	__u16 dport;
	__u16 q_sport;
	__u16 q_dport;
	__u32 q_saddr; /* Linux words of the quoted addresses */
	__u32 q_daddr;
	__u32 pay_off; /* the IP payload after extension headers */
	__u32 pay_end;
	__u8 src[16];
	__u8 dst[16];
};

/* One parsed layer (key.rs `Layer`, without the unused inner MACs). */
struct layer {
	__u16 ethertype;
	__u16 tci;
	__u8 tagged;
	__u8 reserved[3];
	struct ipflow ip;
};

enum tunnel_kind {
	TUNNEL_NONE = 0,
	TUNNEL_IPIP,
	TUNNEL_GRE,
	TUNNEL_VXLAN,
};

struct flowkey {
	__u8 src_mac[6];
	__u8 dst_mac[6];
	__u16 ethertype;
	__u16 tci;
	__u8 tagged;
	__u8 inner_present;      /* key.inner is Some */
	__u8 inner_tunnel;       /* its outermost tunnel (enum tunnel_kind) */
	__u8 inner_has_ethertype;
	__u16 inner_ethertype;
	__u16 reserved;
	struct ipflow ip;        /* key.ip */
	struct ipflow inner_ip;  /* key.inner.ip */
};

/* What a tunnel header says follows it (key.rs `Carried`). */
#define CARRIED_ETHERNET 0x10000
#define CARRIED_TRUNCATED 0x20000
struct carried {
	__u32 what; /* an EtherType, CARRIED_ETHERNET or CARRIED_TRUNCATED */
	__u32 off;
	__u32 end;
};

/* Per-CPU scratch space: the key and its helpers would not fit the 512-byte
 * stack that all frames of a call chain share. */
struct scratch {
	struct flowkey key;
	struct layer layer;
	struct carried carried;
	__u8 buf[48]; /* strong's hash input */
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

/* ---- byte helpers -------------------------------------------------------- */

#define ETH_IPV4 0x0800
#define ETH_ARP 0x0806
#define ETH_RARP 0x8035
#define ETH_VLAN 0x8100
#define ETH_IPV6 0x86dd
#define ETH_MPLS_UC 0x8847
#define ETH_MPLS_MC 0x8848
#define ETH_QINQ 0x88a8
#define ETH_MACSEC 0x88e5
#define ETH_PTP 0x88f7
#define ETH_CFM 0x8902
#define ETH_FCOE 0x8906
#define ETH_VLAN_9100 0x9100
#define ETH_TEB 0x6558

#define IPPROTO_ICMP_ 1
#define IPPROTO_IPIP_ 4
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IPPROTO_DCCP_ 33
#define IPPROTO_IPV6_ 41
#define IPPROTO_GRE_ 47
#define IPPROTO_ESP_ 50
#define IPPROTO_AH_ 51
#define IPPROTO_ICMPV6_ 58
#define IPPROTO_SCTP_ 132
#define IPPROTO_UDPLITE_ 136

#define VXLAN_PORT 4789
#define MAX_TUNNEL_DEPTH 4
/* etherparse follows any number of IPv6 extension headers; a BPF loop needs
 * a bound. Past it the packet counts as having no transport header (a gap
 * only for packets with more than 32 chained extension headers). */
#define MAX_IPV6_EXTS 32

static __always_inline __u16 be16(const __u8 *b)
{
	return (__u16)((__u16)b[0] << 8 | b[1]);
}

static __always_inline __u32 le32(const __u8 *b)
{
	return (__u32)b[0] | (__u32)b[1] << 8 | (__u32)b[2] << 16 | (__u32)b[3] << 24;
}

static __always_inline __u64 le64(const __u8 *b)
{
	return (__u64)le32(b) | (__u64)le32(b + 4) << 32;
}

/* ---- parsing (key.rs) ---------------------------------------------------- */

/* key.rs `port_offset`: where the kernel's proto_ports_offset finds the port
 * word; -1 for protocols without one. */
static __always_inline int port_offset(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP_:
	case IPPROTO_UDP_:
	case IPPROTO_DCCP_:
	case IPPROTO_ESP_:
	case IPPROTO_SCTP_:
	case IPPROTO_UDPLITE_:
		return 0;
	case IPPROTO_AH_:
		return 4;
	default:
		return -1;
	}
}

/* key.rs `port_word`: the two ports of `proto` in [off, end), or 0. */
static __always_inline int port_word(struct __sk_buff *skb, __u8 proto, __u32 off, __u32 end,
				     __u16 *src, __u16 *dst)
{
	__u8 b[4];
	int at = port_offset(proto);

	if (at < 0 || off > end || end - off < (__u32)at + 4)
		return 0;
	if (bpf_skb_load_bytes(skb, off + at, b, 4))
		return 0;
	*src = be16(b);
	*dst = be16(b + 2);
	return 1;
}

static __always_inline void map_v4(__u8 *to, const __u8 *v4)
{
	__builtin_memset(to, 0, 10);
	to[10] = 0xff;
	to[11] = 0xff;
	__builtin_memcpy(to + 12, v4, 4);
}

/* linux.rs `addr_word`: an address as a little-endian kernel loads it, IPv6
 * folded to the XOR of its four words. */
static __always_inline __u32 addr_word(const __u8 *a, __u8 v6)
{
	if (!v6)
		return le32(a + 12);
	return le32(a) ^ le32(a + 4) ^ le32(a + 8) ^ le32(a + 12);
}

/* key.rs `icmp_has_id`. */
static __always_inline int icmp_has_id(__u8 ty)
{
	return ty == 0 || ty == 8 || ty == 13 || ty == 14 || ty == 128 || ty == 129;
}

/* key.rs `icmp_is_error`. */
static __always_inline int icmp_is_error(__u8 proto, __u8 ty)
{
	if (proto == IPPROTO_ICMP_)
		return ty == 3 || ty == 4 || ty == 5 || ty == 11 || ty == 12;
	return ty >= 1 && ty <= 4;
}

/* key.rs `quoted`: the packet an ICMP error quotes, read as the outer
 * packet's family, unvalidated, needing only the fixed IP header. */
__noinline int parse_quoted(struct __sk_buff *skb, __u32 off, __u32 end, struct ipflow *ip)
{
	__u8 h[40];
	__u8 proto;
	__u32 l4;

	if (!ip || off > end)
		return 0;
	if (ip->v6) {
		if (end - off < 40 || bpf_skb_load_bytes(skb, off, h, 40))
			return 0;
		ip->q_saddr = le32(h + 8) ^ le32(h + 12) ^ le32(h + 16) ^ le32(h + 20);
		ip->q_daddr = le32(h + 24) ^ le32(h + 28) ^ le32(h + 32) ^ le32(h + 36);
		ip->q_present = 1;
		proto = h[6];
		l4 = off + 40;
	} else {
		if (end - off < 20 || bpf_skb_load_bytes(skb, off, h, 20))
			return 0;
		ip->q_saddr = le32(h + 12);
		ip->q_daddr = le32(h + 16);
		ip->q_present = 1;
		if (be16(h + 6) & 0x3fff)
			return 0; /* a fragment: no ports */
		proto = h[9];
		/* `b.get(ihl..)`: any IHL, 0 included, as the kernel reads it. */
		l4 = off + (__u32)(h[0] & 0x0f) * 4;
	}
	if (l4 > end)
		return 0;
	ip->q_ports = port_word(skb, proto, l4, end, &ip->q_sport, &ip->q_dport);
	return 0;
}

/* key.rs `l4_from`: the transport fields of a packet that is not a
 * fragment. The kernel reads a full 8-byte ICMP header or nothing; ICMP is
 * recognised by protocol number whatever the IP version. */
__noinline int parse_l4(struct __sk_buff *skb, struct ipflow *ip)
{
	__u8 h[8];
	__u32 off, end;
	__u8 proto;

	if (!ip)
		return 0;
	off = ip->pay_off;
	end = ip->pay_end;
	proto = ip->proto;
	if (off > end)
		return 0;
	if (proto == IPPROTO_ICMP_ || proto == IPPROTO_ICMPV6_) {
		if (end - off < 8 || bpf_skb_load_bytes(skb, off, h, 8))
			return 0;
		ip->icmp_ty = h[0];
		ip->icmp_code = h[1];
		if (icmp_has_id(h[0])) {
			ip->l4 = L4_ICMP_ID;
			ip->sport = be16(h + 4);
		} else if (icmp_is_error(proto, h[0])) {
			ip->l4 = L4_ICMP_ERR;
			parse_quoted(skb, off + 8, end, ip);
		} else {
			ip->l4 = L4_ICMP;
		}
		return 0;
	}
	if (port_word(skb, proto, off, end, &ip->sport, &ip->dport))
		ip->l4 = L4_PORTS;
	return 0;
}

/* An IPsec AH header at off (etherparse IpAuthHeaderSlice::from_slice): at
 * least 12 bytes, a non-zero length field, (len + 2) * 4 bytes present.
 * Returns its length, 0 when it does not parse; *next gets its next header. */
static __always_inline __u32 auth_header(struct __sk_buff *skb, __u32 off, __u32 end, __u8 *next)
{
	__u8 h[2];
	__u32 len;

	if (end - off < 12 || bpf_skb_load_bytes(skb, off, h, 2) || h[1] == 0)
		return 0;
	len = ((__u32)h[1] + 2) * 4;
	if (end - off < len)
		return 0;
	*next = h[0];
	return len;
}

/* An IPv6 extension header with the 8-octet length unit (etherparse
 * Ipv6RawExtHeaderSlice::from_slice); same contract as auth_header. */
static __always_inline __u32 raw_ext_header(struct __sk_buff *skb, __u32 off, __u32 end,
					    __u8 *next)
{
	__u8 h[2];
	__u32 len;

	if (end - off < 8 || bpf_skb_load_bytes(skb, off, h, 2))
		return 0;
	len = ((__u32)h[1] + 1) * 8;
	if (end - off < len)
		return 0;
	*next = h[0];
	return len;
}

/* IPv6 extension headers as etherparse's Ipv6ExtensionsSlice::from_slice_lax
 * walks them: hop-by-hop only first, then destination options, routing,
 * fragment and AH in any number and order; it stops at the first other
 * header or at one that does not parse. Sets proto, pay_off, ext_headers
 * and fragment (key.rs: a fragmenting fragment header, or any fragment
 * header at all, atomic and cut-off ones included). */
__noinline int ipv6_exts(struct __sk_buff *skb, struct ipflow *ip)
{
	__u32 start, off, end, len;
	__u8 next, fh[1];
	int i;

	if (!ip)
		return 0;
	off = start = ip->pay_off;
	end = ip->pay_end;
	next = ip->proto;
	if (off > end)
		return 0;
	if (next == 0) {
		len = raw_ext_header(skb, off, end, &next);
		if (!len)
			goto done;
		off += len;
	}
	for (i = 0; i < MAX_IPV6_EXTS; i++) {
		if (off > end)
			break;
		if (next == 43 || next == 60) {
			len = raw_ext_header(skb, off, end, &next);
		} else if (next == 44) {
			/* key.rs counts any fragment header (has_fragment_header),
			 * cut-off and atomic ones too, so whether this one
			 * fragments (etherparse's flag) changes nothing. */
			ip->fragment = 1;
			if (end - off < 8 || bpf_skb_load_bytes(skb, off, fh, 1))
				break;
			next = fh[0];
			len = 8;
		} else if (next == IPPROTO_AH_) {
			len = auth_header(skb, off, end, &next);
		} else {
			break; /* 0 here is "hop-by-hop not at start": an error */
		}
		if (!len)
			break;
		off += len;
	}
done:
	ip->proto = next;
	ip->pay_off = off;
	ip->ext_headers = off != start;
	return 0;
}

/* An IP header at off, bounded by end (etherparse LaxIpSlice::from_slice,
 * which dispatches on the version nibble, not on the EtherType), then
 * key.rs `flow_from`. */
__noinline int parse_ip(struct __sk_buff *skb, __u32 off, __u32 end, struct ipflow *ip)
{
	__u8 h[40];
	__u32 hl, total, avail;
	__u8 next;

	if (!ip || off >= end)
		return 0;
	if (bpf_skb_load_bytes(skb, off, h, 1))
		return 0;
	if (h[0] >> 4 == 4) {
		hl = (__u32)(h[0] & 0x0f) * 4;
		if (hl < 20 || end - off < hl || bpf_skb_load_bytes(skb, off, h, 20))
			return 0;
		total = be16(h + 2);
		/* A total length shorter than the header or longer than the
		 * data falls back to the data; otherwise it trims padding. */
		if (total >= hl && end - off >= total)
			end = off + total;
		ip->present = 1;
		ip->v6 = 0;
		map_v4(ip->src, h + 12);
		map_v4(ip->dst, h + 16);
		ip->fragment = (be16(h + 6) & 0x3fff) != 0;
		ip->proto = h[9];
		ip->pay_off = off + hl;
		ip->pay_end = end;
		if (ip->proto == IPPROTO_AH_) {
			hl = auth_header(skb, ip->pay_off, end, &next);
			if (hl) {
				ip->proto = next;
				ip->pay_off += hl;
				ip->ext_headers = 1;
			}
		}
	} else if (h[0] >> 4 == 6) {
		if (end - off < 40 || bpf_skb_load_bytes(skb, off, h, 40))
			return 0;
		total = be16(h + 4);
		avail = end - off - 40;
		/* 0 (a jumbogram or unset) or more than the data: the data. */
		if (total != 0 && avail >= total)
			end = off + 40 + total;
		ip->present = 1;
		ip->v6 = 1;
		__builtin_memcpy(ip->src, h + 8, 16);
		__builtin_memcpy(ip->dst, h + 24, 16);
		ip->proto = h[6];
		ip->pay_off = off + 40;
		ip->pay_end = end;
		ipv6_exts(skb, ip);
	} else {
		return 0;
	}
	if (ip->fragment)
		ip->pay_end = ip->pay_off; /* fragments: no payload, no ports */
	else
		parse_l4(skb, ip);
	return 0;
}

/* key.rs `layer_from` over etherparse's slice_ether_type: at off, either an
 * Ethernet header (what == CARRIED_ETHERNET; the caller checked 14 bytes)
 * or a payload of EtherType `what`. Up to three VLAN tags (0x8100, 0x88a8,
 * 0x9100); the first tag's TCI is kept; MACsec ends the parse with no IP. */
__noinline int parse_layer(struct __sk_buff *skb, __u32 off, __u32 end, __u32 what,
			   struct layer *out)
{
	__u8 t[4];
	__u16 et;
	int i, tags = 0;

	if (!out)
		return 0;
	__builtin_memset(out, 0, sizeof(*out));
	if (off > end)
		return 0;
	if (what == CARRIED_ETHERNET) {
		if (end - off < 14 || bpf_skb_load_bytes(skb, off + 12, t, 2))
			return 0;
		et = be16(t);
		off += 14;
	} else {
		et = what;
	}
	for (i = 0; i < 4; i++) {
		if (et != ETH_VLAN && et != ETH_QINQ && et != ETH_VLAN_9100)
			break;
		if (tags == 3 || end - off < 4 || bpf_skb_load_bytes(skb, off, t, 4))
			break;
		if (!tags) {
			out->tci = be16(t);
			out->tagged = 1;
		}
		tags++;
		et = be16(t + 2);
		off += 4;
	}
	out->ethertype = et;
	if (et == ETH_IPV4 || et == ETH_IPV6)
		parse_ip(skb, off, end, &out->ip);
	return 0;
}

/* key.rs `gre`: GRE version 0 without routing, as the kernel's flow
 * dissector reads it. Returns the tunnel kind (NONE: not entered). */
static __always_inline int gre(struct __sk_buff *skb, __u32 off, __u32 end, struct carried *c)
{
	__u8 h[4];
	__u16 flags, proto;
	__u32 at = 4;

	c->what = CARRIED_TRUNCATED;
	if (end - off < 4 || bpf_skb_load_bytes(skb, off, h, 4))
		return TUNNEL_GRE;
	flags = be16(h);
	proto = be16(h + 2);
	if (flags & (0x4000 | 0x0007))
		return TUNNEL_NONE; /* routing, or PPTP's version 1 */
	if (flags & 0x8000)
		at += 4;
	if (flags & 0x2000) {
		if (end - off < at + 4)
			return TUNNEL_GRE;
		at += 4;
	}
	if (flags & 0x1000)
		at += 4;
	c->off = end - off < at ? end : off + at;
	c->end = end;
	if (proto == ETH_TEB) {
		if (c->end - c->off >= 14)
			c->what = CARRIED_ETHERNET;
		return TUNNEL_GRE;
	}
	c->what = proto;
	return TUNNEL_GRE;
}

/* key.rs `tunnel_in`: which tunnel, if any, a packet's payload is. */
__noinline int tunnel_in(struct __sk_buff *skb, struct ipflow *ip, struct carried *c)
{
	__u8 flags;
	__u32 off, end;

	if (!ip || !c || !ip->present || ip->fragment)
		return TUNNEL_NONE;
	off = ip->pay_off;
	end = ip->pay_end;
	if (off > end)
		return TUNNEL_NONE;
	c->off = off;
	c->end = end;
	switch (ip->proto) {
	case IPPROTO_IPIP_:
		c->what = ETH_IPV4;
		return TUNNEL_IPIP;
	case IPPROTO_IPV6_:
		c->what = ETH_IPV6;
		return TUNNEL_IPIP;
	case IPPROTO_GRE_:
		return gre(skb, off, end, c);
	case IPPROTO_UDP_:
		/* key.rs `vxlan`: 8 bytes of UDP, then flags with "VNI valid". */
		if (ip->l4 != L4_PORTS || ip->dport != VXLAN_PORT)
			return TUNNEL_NONE;
		if (end - off < 9 || bpf_skb_load_bytes(skb, off + 8, &flags, 1))
			return TUNNEL_NONE;
		if (!(flags & 0x08) || end - off < 16)
			return TUNNEL_NONE;
		c->off = off + 16;
		c->what = end - c->off < 14 ? CARRIED_TRUNCATED : CARRIED_ETHERNET;
		return TUNNEL_VXLAN;
	default:
		return TUNNEL_NONE;
	}
}

/* The frame nearly every flow sends, read in place (direct packet access,
 * no helper calls): untagged Ethernet, then IPv4 with a 20-byte header or
 * IPv6 with no extension header, not a fragment, carrying TCP or UDP whose
 * port word lies within the IP packet, and not VXLAN's port when the
 * tunnel descent (`inner`) would enter it. It leaves in *k (zeroed by the
 * caller) exactly what the general path would; the parity tests run both
 * against the Rust hash on the same frames. Anything else, or headers
 * outside the linear area, returns 0 and takes the general path. On a
 * request/response connection the general path's helper calls cost about
 * a tenth of the bond's extra latency over a bare veth. */
static __always_inline int fast_key(struct __sk_buff *skb, struct flowkey *k, int inner)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ipflow *ip = &k->ip;
	__u8 *p = data;
	__u32 len = skb->len, ip_end = skb->len, total;
	__u16 sport, dport;

	if (skb->vlan_present || data + 14 > data_end)
		return 0;
	k->ethertype = be16(p + 12);
	if (k->ethertype == ETH_IPV4) {
		if (data + 14 + 20 + 4 > data_end || p[14] != 0x45 || (be16(p + 20) & 0x3fff))
			return 0;
		total = be16(p + 16);
		/* parse_ip: a total length that fits trims the padding. */
		if (total >= 20 && len - 14 >= total)
			ip_end = 14 + total;
		ip->proto = p[23];
		ip->pay_off = 34;
		map_v4(ip->src, p + 26);
		map_v4(ip->dst, p + 30);
		sport = be16(p + 34);
		dport = be16(p + 36);
	} else if (k->ethertype == ETH_IPV6) {
		if (data + 14 + 40 + 4 > data_end || p[14] >> 4 != 6)
			return 0;
		total = be16(p + 18);
		if (total != 0 && len - 54 >= total)
			ip_end = 54 + total;
		ip->proto = p[20];
		ip->v6 = 1;
		ip->pay_off = 54;
		__builtin_memcpy(ip->src, p + 22, 16);
		__builtin_memcpy(ip->dst, p + 38, 16);
		sport = be16(p + 54);
		dport = be16(p + 56);
	} else {
		return 0;
	}
	if (ip->proto != IPPROTO_TCP_ && ip->proto != IPPROTO_UDP_)
		return 0;
	if (ip_end < ip->pay_off + 4)
		return 0;
	if (inner && ip->proto == IPPROTO_UDP_ && dport == VXLAN_PORT)
		return 0;
	__builtin_memcpy(k->dst_mac, p, 6);
	__builtin_memcpy(k->src_mac, p + 6, 6);
	ip->present = 1;
	ip->pay_end = ip_end;
	ip->l4 = L4_PORTS;
	ip->sport = sport;
	ip->dport = dport;
	return 1;
}

/* FlowKey::from_frame, `descend` included when `inner` is set: the outer
 * layer, then up to MAX_TUNNEL_DEPTH tunnels, VXLAN only as the outermost.
 * Only encap2+3, encap3+4 and strong read the inner flow, so the others
 * skip the descent. */
__noinline int parse_key(struct __sk_buff *skb, struct scratch *s, int inner)
{
	struct flowkey *k;
	struct ipflow *cur;
	__u8 eth[12];
	__u32 end;
	int depth, kind, first = TUNNEL_NONE;

	if (!s)
		return 0;
	k = &s->key;
	__builtin_memset(k, 0, sizeof(*k));
	if (fast_key(skb, k, inner))
		return 0;
	/* fast_key may have written some fields before it gave up. */
	__builtin_memset(k, 0, sizeof(*k));
	end = skb->len;
	if (end < 14 || bpf_skb_load_bytes(skb, 0, eth, 12))
		return 0;
	__builtin_memcpy(k->dst_mac, eth, 6);
	__builtin_memcpy(k->src_mac, eth + 6, 6);
	parse_layer(skb, 0, end, CARRIED_ETHERNET, &s->layer);
	k->ethertype = s->layer.ethertype;
	k->tci = s->layer.tci;
	k->tagged = s->layer.tagged;
	/* A VLAN device above the logical interface hands its tag over as
	 * metadata (hardware insertion): that is the outermost tag, which is
	 * the one FlowKey keeps. (A gap: in-band tags after it still count
	 * to etherparse's three, so a fourth tag overall is parsed here.) */
	if (skb->vlan_present) {
		k->tci = skb->vlan_tci;
		k->tagged = 1;
	}
	__builtin_memcpy(&k->ip, &s->layer.ip, sizeof(k->ip));

	cur = &k->ip;
	for (depth = 1; inner && depth <= MAX_TUNNEL_DEPTH; depth++) {
		kind = tunnel_in(skb, cur, &s->carried);
		if (kind == TUNNEL_NONE)
			break;
		if (kind == TUNNEL_VXLAN && first != TUNNEL_NONE)
			break;
		if (first == TUNNEL_NONE)
			first = kind;
		k->inner_present = 1;
		k->inner_tunnel = first;
		if (s->carried.what == CARRIED_TRUNCATED) {
			k->inner_has_ethertype = 0;
			k->inner_ip.present = 0;
			break;
		}
		parse_layer(skb, s->carried.off, s->carried.end, s->carried.what, &s->layer);
		k->inner_has_ethertype = 1;
		k->inner_ethertype = s->layer.ethertype;
		__builtin_memcpy(&k->inner_ip, &s->layer.ip, sizeof(k->inner_ip));
		cur = &k->inner_ip;
	}
	return 0;
}

/* ---- Linux policies (linux.rs) ------------------------------------------- */

static __always_inline __u32 fold(__u32 h)
{
	h ^= h >> 16;
	h ^= h >> 8;
	return h;
}

/* The port word as a little-endian kernel loads it. */
static __always_inline __u32 ports_word(__u16 src, __u16 dst)
{
	return (__u32)(src >> 8) | (__u32)(src & 0xff) << 8 | (__u32)(dst >> 8) << 16 |
	       (__u32)(dst & 0xff) << 24;
}

/* struct flow_dissector_key_icmp: type, code, id (0 stored as 1). */
static __always_inline __u32 icmp_word(const struct ipflow *ip)
{
	__u16 id = ip->sport ? ip->sport : 1;

	return (__u32)ip->icmp_ty | (__u32)ip->icmp_code << 8 | (__u32)id << 16;
}

static __always_inline __u32 eth_word(const struct flowkey *k)
{
	return (__u32)k->src_mac[5] ^ k->dst_mac[5] ^ k->ethertype;
}

/* linux.rs `dissector_accepts`. */
static __always_inline int dissector_accepts(__u16 et)
{
	return et == ETH_ARP || et == ETH_RARP || et == ETH_MPLS_UC || et == ETH_MPLS_MC ||
	       et == ETH_FCOE || et == ETH_PTP || et == ETH_CFM;
}

/* linux.rs `plain_view` (layer2+3, layer3+4): 0 means the layer-2 fallback. */
static __always_inline int plain_view(const struct flowkey *k, int l34, __u32 *word, __u32 *saddr,
				      __u32 *daddr)
{
	const struct ipflow *ip = &k->ip;

	if (!ip->present)
		return 0;
	*saddr = addr_word(ip->src, ip->v6);
	*daddr = addr_word(ip->dst, ip->v6);
	*word = 0;
	if (ip->fragment || ip->ext_headers)
		return 1;
	switch (ip->l4) {
	case L4_PORTS:
		if (l34)
			*word = ports_word(ip->sport, ip->dport);
		break;
	case L4_ICMP_ID:
		if (l34)
			*word = icmp_word(ip);
		break;
	case L4_ICMP_ERR:
		if (!ip->q_present)
			return 0;
		*saddr = ip->q_saddr;
		*daddr = ip->q_daddr;
		if (l34 && ip->q_ports)
			*word = ports_word(ip->q_sport, ip->q_dport);
		break;
	}
	return 1;
}

/* linux.rs `dissected`. */
static __always_inline void dissected(const struct ipflow *ip, __u32 *word, __u32 *saddr,
				      __u32 *daddr)
{
	*saddr = addr_word(ip->src, ip->v6);
	*daddr = addr_word(ip->dst, ip->v6);
	*word = 0;
	if (ip->fragment)
		return;
	if (ip->l4 == L4_PORTS)
		*word = ports_word(ip->sport, ip->dport);
	else if (ip->l4 == L4_ICMP_ID)
		*word = icmp_word(ip);
}

/* linux.rs `encap_view` (encap2+3, encap3+4). */
static __always_inline int encap_view(const struct flowkey *k, __u32 *word, __u32 *saddr,
				      __u32 *daddr)
{
	*word = *saddr = *daddr = 0;
	if (k->inner_present && k->inner_tunnel != TUNNEL_VXLAN) {
		if (k->inner_ip.present) {
			dissected(&k->inner_ip, word, saddr, daddr);
			return 1;
		}
		if (!k->inner_has_ethertype || !dissector_accepts(k->inner_ethertype))
			return 0;
		/* A known non-IP payload keeps the outer addresses, no ports. */
		if (k->ip.present) {
			*saddr = addr_word(k->ip.src, k->ip.v6);
			*daddr = addr_word(k->ip.dst, k->ip.v6);
		}
		return 1;
	}
	if (k->ip.present) {
		dissected(&k->ip, word, saddr, daddr);
		return 1;
	}
	return dissector_accepts(k->ethertype);
}

/* linux.rs `hash`. */
static __always_inline __u32 policy_linux(const struct flowkey *k, __u32 policy)
{
	__u32 word = 0, saddr = 0, daddr = 0, h;
	int ok, shifted = policy == LAGKIT_LAYER34 || policy == LAGKIT_ENCAP34;

	switch (policy) {
	case LAGKIT_LAYER2:
		return eth_word(k);
	case LAGKIT_VLAN_SRCMAC:
		return ((__u32)k->src_mac[0] << 16 | (__u32)k->src_mac[1] << 8 | k->src_mac[2]) ^
		       ((__u32)k->src_mac[3] << 16 | (__u32)k->src_mac[4] << 8 | k->src_mac[5]) ^
		       (k->tagged ? k->tci : 0);
	case LAGKIT_LAYER23:
	case LAGKIT_LAYER34:
		ok = plain_view(k, shifted, &word, &saddr, &daddr);
		break;
	default:
		ok = encap_view(k, &word, &saddr, &daddr);
		break;
	}
	if (!ok)
		return eth_word(k);
	if (!shifted)
		word = eth_word(k);
	h = fold(word ^ saddr ^ daddr);
	return shifted ? h >> 1 : h;
}

/* ---- AIX, Cisco, HP (aix.rs, cisco.rs, hp.rs) ---------------------------- */

/* IpFlow::is_tcp_udp: TCP or UDP with its ports present. */
static __always_inline int tcp_udp(const struct ipflow *ip)
{
	return ip->present && (ip->proto == IPPROTO_TCP_ || ip->proto == IPPROTO_UDP_) &&
	       ip->l4 == L4_PORTS;
}

static __always_inline __u32 policy_aix(const struct flowkey *k, __u32 policy)
{
	const struct ipflow *ip = &k->ip;

	if (!ip->present)
		return k->dst_mac[5];
	if (tcp_udp(ip)) {
		if (policy == LAGKIT_AIX_SRC_PORT)
			return ip->sport;
		if (policy == LAGKIT_AIX_DST_PORT)
			return ip->dport;
		if (policy == LAGKIT_AIX_SRC_DST_PORT)
			return ((__u32)ip->sport + ip->dport) / 2;
	}
	return ip->dst[15];
}

/* The field value of a Cisco method; the bucket is its low 3 bits. Levels:
 * 0 MAC, 1 IP, 2 port, 3 mixed; directions: 0 source, 1 destination, 2 both.
 * Each level falls back to the one below it when its fields are missing. */
static __always_inline __u32 policy_cisco(const struct flowkey *k, __u32 policy)
{
	const struct ipflow *ip = &k->ip;
	__u32 m = policy - LAGKIT_CISCO_SRC_MAC;
	__u32 level = m == 9 ? 3 : m / 3;
	__u32 dir = m == 9 ? 2 : m % 3;
	__u32 s, d;

	if (level == 3 && ip->present && tcp_udp(ip))
		return (__u32)ip->src[15] ^ ip->dst[15] ^ ip->sport ^ ip->dport;
	if (level == 2 && tcp_udp(ip)) {
		s = ip->sport;
		d = ip->dport;
	} else if (level >= 1 && ip->present) {
		s = ip->src[15];
		d = ip->dst[15];
	} else {
		s = k->src_mac[5];
		d = k->dst_mac[5];
	}
	return dir == 0 ? s : dir == 1 ? d : s ^ d;
}

static __always_inline __u32 policy_hp(const struct flowkey *k, __u32 policy)
{
	const struct ipflow *ip = &k->ip;

	if (policy == LAGKIT_HP_IP && ip->present)
		return ip->src[15] ^ ip->dst[15];
	if (policy == LAGKIT_HP_PORT && tcp_udp(ip))
		return (ip->sport ^ ip->dport) & 0xff;
	return k->dst_mac[5];
}

/* ---- strong (strong.rs): seeded xxh3-64 -------------------------------- */

#define XXH_PRIME64_1 0x9E3779B185EBCA87ULL

/* The first 64 bytes of xxh3's default secret (all that inputs of 17 to 64
 * bytes read). */
static const __u8 xxh3_secret[64] = {
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
};

/* XXH3_mul128_fold64: the 128-bit product of a and b, halves XORed. BPF has
 * no 64x64->128 multiply, so it is built from 32-bit halves
 * (XXH_mult64to128's portable form). */
static __always_inline __u64 mul128_fold64(__u64 a, __u64 b)
{
	__u64 lo_lo = (a & 0xffffffff) * (b & 0xffffffff);
	__u64 hi_lo = (a >> 32) * (b & 0xffffffff);
	__u64 lo_hi = (a & 0xffffffff) * (b >> 32);
	__u64 hi_hi = (a >> 32) * (b >> 32);
	__u64 cross = (lo_lo >> 32) + (hi_lo & 0xffffffff) + lo_hi;
	__u64 upper = (hi_lo >> 32) + (cross >> 32) + hi_hi;
	__u64 lower = (cross << 32) | (lo_lo & 0xffffffff);

	return lower ^ upper;
}

static __always_inline __u64 mix16b(const __u8 *in, const __u8 *secret, __u64 seed)
{
	return mul128_fold64(le64(in) ^ (le64(secret) + seed), le64(in + 8) ^ (le64(secret + 8) - seed));
}

/* XXH3_64bits_withSeed for 17 <= len <= 64 (XXH3_len_17to128_64b). */
static __always_inline __u64 xxh3_17to64(const __u8 *in, __u32 len, __u64 seed)
{
	__u64 acc = (__u64)len * XXH_PRIME64_1;

	if (len > 32) {
		acc += mix16b(in + 16, xxh3_secret + 32, seed);
		acc += mix16b(in + len - 32, xxh3_secret + 48, seed);
	}
	acc += mix16b(in, xxh3_secret, seed);
	acc += mix16b(in + len - 16, xxh3_secret + 16, seed);
	/* XXH3_avalanche */
	acc ^= acc >> 37;
	acc *= 0x165667919E3779F9ULL;
	acc ^= acc >> 32;
	return acc;
}

/* Lexicographic a < b over n bytes. */
static __always_inline int bytes_less(const __u8 *a, const __u8 *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (a[i] != b[i])
			return a[i] < b[i];
	}
	return 0;
}

static __always_inline void swap_bytes(__u8 *a, __u8 *b, int n)
{
	int i;
	__u8 t;

	for (i = 0; i < n; i++) {
		t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

/* Strong::hash: the input laid out as strong.rs lays it out, then xxh3. */
__noinline __u64 policy_strong(struct scratch *s, __u64 seed, __u32 symmetric)
{
	const struct flowkey *k;
	const struct ipflow *ip;
	__u16 vlan, sp = 0, dp = 0;
	__u8 *b;

	if (!s)
		return 0;
	k = &s->key;
	b = s->buf;
	vlan = k->tagged ? k->tci & 0x0fff : 0;
	ip = k->inner_present && k->inner_ip.present ? &k->inner_ip : &k->ip;
	if (ip->present) {
		if (ip->l4 == L4_PORTS) {
			sp = ip->sport;
			dp = ip->dport;
		} else if (ip->l4 == L4_ICMP_ID) {
			sp = dp = ip->sport;
		}
		b[0] = 1;
		b[1] = ip->proto;
		__builtin_memcpy(b + 2, ip->src, 16);
		b[18] = sp >> 8;
		b[19] = sp;
		__builtin_memcpy(b + 20, ip->dst, 16);
		b[36] = dp >> 8;
		b[37] = dp;
		b[38] = vlan >> 8;
		b[39] = vlan;
		/* (address, port) pairs ordered, so both directions agree. */
		if (symmetric && bytes_less(b + 20, b + 2, 18))
			swap_bytes(b + 2, b + 20, 18);
		return xxh3_17to64(b, 40, seed);
	}
	b[0] = 2;
	__builtin_memcpy(b + 1, k->src_mac, 6);
	__builtin_memcpy(b + 7, k->dst_mac, 6);
	b[13] = k->ethertype >> 8;
	b[14] = k->ethertype;
	b[15] = vlan >> 8;
	b[16] = vlan;
	if (symmetric && bytes_less(b + 7, b + 1, 6))
		swap_bytes(b + 1, b + 7, 6);
	return xxh3_17to64(b, 17, seed);
}

/* ---- selection ----------------------------------------------------------- */

/* Policy::hash, Policy::bucket (-1: none) and the member the policy selects
 * among cfg->members (-1: none). */
__noinline int select_member(struct scratch *s, struct lagkit_config *cfg, __u64 *hash,
			     int *bucket)
{
	__u32 policy, n, v;
	__u64 h;

	if (!s || !cfg || !hash || !bucket)
		return -1;
	policy = cfg->policy;
	n = cfg->members;
	*bucket = -1;
	if (policy <= LAGKIT_VLAN_SRCMAC) {
		v = policy_linux(&s->key, policy);
		*hash = v;
	} else if (policy <= LAGKIT_AIX_SRC_DST_PORT) {
		v = policy_aix(&s->key, policy);
		*hash = v;
	} else if (policy <= LAGKIT_CISCO_MIXED) {
		v = policy_cisco(&s->key, policy);
		*hash = v;
		v &= 7; /* the bucket; bucket b goes to link b mod n */
		*bucket = v;
	} else if (policy <= LAGKIT_HP_PORT) {
		v = policy_hp(&s->key, policy);
		*hash = v;
		*bucket = v; /* the table index */
	} else if (policy == LAGKIT_STRONG) {
		h = policy_strong(s, cfg->seed, cfg->flags & LAGKIT_F_SYMMETRIC);
		*hash = h;
		*bucket = h & 0xff;
		if (n == 0 || n > LAGKIT_MAX_MEMBERS)
			return -1;
		v = cfg->slots[h & 0xff];
		return v < n ? (int)v : -1;
	} else {
		return -1;
	}
	if (n == 0 || n > LAGKIT_MAX_MEMBERS)
		return -1;
	return v % n;
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
		parse_key(skb, s,
			  cfg->policy == LAGKIT_ENCAP23 || cfg->policy == LAGKIT_ENCAP34 ||
				  cfg->policy == LAGKIT_STRONG);
		member = select_member(s, cfg, &hash, &bucket);
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
