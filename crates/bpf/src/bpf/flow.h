// SPDX-License-Identifier: MIT OR Apache-2.0
/* The flow key and the transmit hash policies, for every lagkit BPF program
 * that spreads frames over links: the bond's (lagkit.bpf.c) and the
 * switch's port-channels alike include this one file, so a frame takes the
 * link lagkit_hash picks whichever program sends it.
 *
 *   parse_key()   = FlowKey::from_frame  (crates/hash/src/key.rs)
 *   policy_*()    = Policy::compute      (linux.rs, aix.rs, cisco.rs, hp.rs,
 *                   strong.rs, with xxh3 for strong)
 *   policy_hash() = the dispatch by enum lagkit_policy (lagkit.h)
 *
 * See lagkit.bpf.c's opening comment for how bytes are read and why each
 * parsing step is a global function. */
#ifndef LAGKIT_FLOW_H
#define LAGKIT_FLOW_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lagkit.h"

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

/* Per-CPU scratch space for the parser and the policies: the key and its
 * helpers would not fit the 512-byte stack that all frames of a call chain
 * share. A program that includes this file keeps it in a per-CPU map of
 * its own (alone, or as the first field of a larger scratch). */
struct flow_scratch {
	struct flowkey key;
	struct layer layer;
	struct carried carried;
	__u8 buf[48]; /* strong's hash input */
};

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
__noinline int parse_key(struct __sk_buff *skb, struct flow_scratch *s, int inner)
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
__noinline __u64 policy_strong(struct flow_scratch *s, __u64 seed, __u32 symmetric)
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

/* ---- the policies' dispatch ---------------------------------------------- */

/* What policy_hash() says of a frame: Policy::hash, and Policy::bucket
 * (-1: none). */
struct flow_hash {
	__u64 hash;
	int bucket;
	__u32 reserved;
};

/* The hash and bucket of the key in `f` under `policy` (enum lagkit_policy)
 * into *out. Returns what the link is chosen by: for Linux, AIX, Cisco and
 * HP, a value whose remainder by the number of links is the link; for
 * strong, the bucket, an index into the plan's 256 slots; -1 for a policy
 * this file does not know. */
__noinline long policy_hash(struct flow_scratch *f, __u32 policy, __u64 seed, __u32 symmetric,
			    struct flow_hash *out)
{
	__u32 v;
	__u64 h;

	if (!f || !out)
		return -1;
	out->bucket = -1;
	if (policy <= LAGKIT_VLAN_SRCMAC) {
		v = policy_linux(&f->key, policy);
		out->hash = v;
	} else if (policy <= LAGKIT_AIX_SRC_DST_PORT) {
		v = policy_aix(&f->key, policy);
		out->hash = v;
	} else if (policy <= LAGKIT_CISCO_MIXED) {
		v = policy_cisco(&f->key, policy);
		out->hash = v;
		v &= 7; /* the bucket; bucket b goes to link b mod n */
		out->bucket = v;
	} else if (policy <= LAGKIT_HP_PORT) {
		v = policy_hp(&f->key, policy);
		out->hash = v;
		out->bucket = v; /* the table index */
	} else if (policy == LAGKIT_STRONG) {
		h = policy_strong(f, seed, symmetric);
		out->hash = h;
		out->bucket = h & 0xff;
		return h & 0xff;
	} else {
		return -1;
	}
	return v;
}

#endif /* LAGKIT_FLOW_H */
