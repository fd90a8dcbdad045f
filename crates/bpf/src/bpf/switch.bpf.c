// SPDX-License-Identifier: MIT OR Apache-2.0
/* lagkit's switch in the kernel: lksw_ingress on each switch port's tcx
 * ingress does what lagkit_switch::Bridge::receive does, so frames cross
 * the switch without waking its daemon. The daemon's core decides
 * everything else (LACP, PAgP, which members are bundled, the
 * configuration) and publishes it as a plan (struct lksw_plan).
 *
 * For each frame: the port is found by the interface it came in on;
 * counted; dropped if the port is shut, the frame a runt, an IEEE
 * link-local frame, from a channel member that is not bundled, of a VLAN
 * the port does not carry, or larger than its MTU; slow-protocol and
 * Cisco-multicast frames are counted as control and passed on to the
 * daemon's packet sockets (bound to those protocols alone); the source is
 * learned into the address table (per VLAN, aged, moves counted, refused
 * when full); the destination is sent to the port or channel it was
 * learned on, or flooded within the VLAN to every other port and channel;
 * a channel sends on the member its load-balance method picks (flow.h, the
 * bond's own hash code); each copy leaves with the tag its port wants
 * (added, rewritten or removed; the priority bits kept when a tag stays).
 *
 * A port learns new addresses at most at its rate (learn_budget, as the
 * bridge's LearnLimiter), so one port sending from ever new sources
 * cannot fill the table. Not here: storm control (a switch configured
 * with it runs the userspace engine). lagkit switch's BPF engine
 * (lagkit-switchd's kernel module) attaches this program to every port
 * and publishes the plans. Under LKSW_F_TRACE each decision is left in `trace`, where
 * tests/switch_parity.rs reads it back after a BPF_PROG_TEST_RUN and
 * compares it with Bridge::receive's; the loops run under bpf_loop, whose
 * bodies the verifier checks once.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lagkit.h"
#include "flow.h"
#include "switch.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The plans (switch.h, struct lksw_plans), mapped into the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lksw_plans);
} plans SEC(".maps");

/* lagkit_switch::fdb::FDB_LIMIT entries: a full table refuses new
 * addresses (their frames flood), as the userspace bridge's does. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lksw_fdb_key);
	__type(value, struct lksw_fdb_entry);
} fdb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LKSW_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct lksw_counters);
} counters SEC(".maps");

/* Each port's learning budget, its rate written by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LKSW_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct lksw_learn);
} learn_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LKSW_GLOBALS);
	__type(key, __u32);
	__type(value, __u64);
} globals SEC(".maps");

/* Under LKSW_F_TRACE: the last decision (tests run one frame at a time). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lksw_trace);
} trace SEC(".maps");

struct sw_scratch {
	struct flow_scratch flow;
	struct lksw_trace out; /* the copies to send, in order */
	__u32 target[LKSW_MAX_PORTS + LKSW_MAX_CHANNELS];
	__u32 parsed; /* `flow` holds this frame's key */
	__u32 targets; /* in `target` */
	int ret; /* the sending loop's verdict */
	__u32 pcp; /* the frame's tag's priority and DEI bits, kept by a tag */
	__u32 slot; /* the plan in force for this run: read once, at its start */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_scratch);
} sw_scratch SEC(".maps");

/* The plan this run reads throughout: the slot the run started with
 * (every step of a run looks it up through here, never `active` again). */
static __always_inline struct lksw_plan *plan_of(struct sw_scratch *s)
{
	__u32 zero = 0;
	struct lksw_plans *p = bpf_map_lookup_elem(&plans, &zero);

	if (!p || !s)
		return NULL;
	return &p->slot[s->slot & (LKSW_PLAN_SLOTS - 1)];
}

#define TPID 0x8100

static __always_inline void count_cast(__u64 *u, const __u8 *dst, __u32 len)
{
	/* u points at ucast; mcast and bcast follow. */
	if (len < 6 || !(dst[0] & 1))
		u[0]++;
	else if ((dst[0] & dst[1] & dst[2] & dst[3] & dst[4] & dst[5]) == 0xff)
		u[2]++;
	else
		u[1]++;
}

static __always_inline int carries(const struct lksw_port *p, __u16 vlan, int *tagged)
{
	if (!p->trunk) {
		*tagged = 0;
		return p->vlan == vlan;
	}
	if (vlan == p->vlan) {
		*tagged = 0;
		return 1;
	}
	*tagged = 1;
	return (p->allowed[(vlan >> 6) & (LKSW_VLAN_WORDS - 1)] >> (vlan & 63)) & 1;
}

static __always_inline int drop(struct lksw_counters *c, struct lksw_plan *pl, __u32 reason)
{
	__u32 zero = 0;
	struct lksw_trace *t;

	if (reason < LKSW_DROPS)
		c->drops[reason]++;
	if (pl->flags & LKSW_F_TRACE) {
		t = bpf_map_lookup_elem(&trace, &zero);
		if (t) {
			t->verdict = LKSW_DROP;
			t->reason = reason;
			t->egresses = 0;
		}
	}
	return TC_ACT_SHOT;
}

#define LEARN_NS 1000000000ULL

/* How long ago `then` was at `now`: 0 if another CPU wrote a later time
 * than this run read. */
static __always_inline __u64 since(__u64 now, __u64 then)
{
	return now > then ? now - then : 0;
}

/* LearnLimiter::allow: whether port `port` may learn one more new address
 * at `now`; spends it if so. */
static __always_inline int learn_allowed(__u32 port, __u64 now)
{
	struct lksw_learn *l = bpf_map_lookup_elem(&learn_budget, &port);
	__u64 cap, credit;

	if (!l)
		return 0;
	cap = (__u64)l->rate * LEARN_NS;
	credit = l->credit;
	if (l->at) {
		credit += since(now, l->at) * l->rate;
		if (credit > cap || credit < l->credit)
			credit = cap;
	}
	l->at = now;
	if (credit >= LEARN_NS) {
		l->credit = credit - LEARN_NS;
		return 1;
	}
	l->credit = credit;
	return 0;
}

/* Learns `src` in `vlan` at `at` (Fdb::learn), a new address only while
 * ingress port `port` has learning budget left (Bridge::receive). */
static __always_inline void learn(struct lksw_plan *pl, struct lksw_counters *c, __u16 vlan,
				  const __u8 *src, __u32 at, __u32 port, __u64 now)
{
	struct lksw_fdb_key key = { .vlan = vlan };
	struct lksw_fdb_entry *e, fresh = { .at = at, .seen = now };
	__u32 zero = 0;
	__u64 *moves;

	__builtin_memcpy(key.mac, src, 6);
	e = bpf_map_lookup_elem(&fdb, &key);
	if (e) {
		if (e->at != at) {
			/* Gone and back elsewhere is a new entry, not a move. */
			if (since(now, e->seen) <= pl->aging_ns) {
				moves = bpf_map_lookup_elem(&globals, &zero);
				if (moves)
					(*moves)++;
			}
			e->at = at;
			e->seen = now;
		} else if (since(now, e->seen) > (pl->aging_ns >> LKSW_SEEN_SHIFT)) {
			/* An address that stays put is refreshed at most once per
			 * 1/1024 of the aging time: a write on every frame would
			 * move the entry's cache line to this CPU each time, and
			 * the other direction's frames read it on the other one. */
			e->seen = now;
		}
		return;
	}
	if (!learn_allowed(port, now)) {
		c->learn_limited++;
		return;
	}
	if (bpf_map_update_elem(&fdb, &key, &fresh, BPF_NOEXIST) == -7 /* -E2BIG */)
		c->learn_full++;
}

/* Where `dst` in `vlan` lives (Fdb::lookup): its logical, or -1. */
static __always_inline long lookup(struct lksw_plan *pl, __u16 vlan, const __u8 *dst, __u64 now)
{
	struct lksw_fdb_key key = { .vlan = vlan };
	struct lksw_fdb_entry *e;

	__builtin_memcpy(key.mac, dst, 6);
	e = bpf_map_lookup_elem(&fdb, &key);
	if (!e || since(now, e->seen) > pl->aging_ns)
		return -1;
	return e->at;
}

/* The port index `logical` sends on (a channel: its member for the flow),
 * or -1. */
static __always_inline int resolve(struct lksw_plan *pl, struct sw_scratch *s, __u32 logical,
				   struct __sk_buff *skb)
{
	struct flow_hash h = {};
	__u32 ch, b;
	long v;

	if (!(logical & LKSW_CHANNEL))
		return logical < LKSW_MAX_PORTS ? (int)logical : -1;
	ch = logical & 0xffff;
	if (ch >= LKSW_MAX_CHANNELS)
		return -1;
	if (!s->parsed) {
		parse_key(skb, &s->flow,
			  pl->policy == LAGKIT_ENCAP23 || pl->policy == LAGKIT_ENCAP34 ||
				  pl->policy == LAGKIT_STRONG);
		s->parsed = 1;
	}
	v = policy_hash(&s->flow, pl->policy, pl->seed, 0, &h);
	if (v < 0)
		return -1;
	/* Channel::bucket_of: the policy's bucket, else its pick among 8. */
	b = h.bucket >= 0 ? (__u32)h.bucket % LKSW_BUCKETS : (__u32)v % LKSW_BUCKETS;
	b = pl->channel[ch].bucket[b & (LKSW_BUCKETS - 1)];
	return b ? (int)b - 1 : -1;
}

/* The loops run under bpf_loop, whose body the verifier checks once: a
 * plain loop over 64 ports, whose count of targets differs on every path,
 * would be checked path by path. */

struct find_ctx {
	__u32 ifindex;
	int port;
};

static int find_one(__u32 i, void *data)
{
	struct find_ctx *f = data;
	__u32 zero = 0;
	struct lksw_plan *pl = plan_of(bpf_map_lookup_elem(&sw_scratch, &zero));

	if (!pl || i >= pl->ports || i >= LKSW_MAX_PORTS)
		return 1;
	if (pl->port[i].ifindex == f->ifindex) {
		f->port = i;
		return 1;
	}
	return 0;
}

/* Constant over the loop: the verifier checks a bpf_loop body again for as
 * long as what it may read changes, so the loops count in the scratch. */
struct flood_ctx {
	__u32 vlan;
	__u32 from;
};

/* Bridge::flood_targets, one step each: i below LKSW_MAX_PORTS is port i
 * (outside a channel or on its own, up, carrying the VLAN, not `from`),
 * then channel i - LKSW_MAX_PORTS (not `from`). */
static int flood_one(__u32 i, void *data)
{
	struct flood_ctx *f = data;
	__u32 zero = 0, ch = i - LKSW_MAX_PORTS, target;
	struct sw_scratch *s = bpf_map_lookup_elem(&sw_scratch, &zero);
	struct lksw_plan *pl = plan_of(s);
	struct lksw_port *op;
	int tagged;

	if (!pl || !s)
		return 1;
	if (i < LKSW_MAX_PORTS) {
		if (i >= pl->ports)
			return 0;
		op = &pl->port[i];
		if (op->channel && !op->standalone)
			return 0;
		if (!op->enabled || i == f->from || !carries(op, f->vlan & 0xfff, &tagged))
			return 0;
		target = i;
	} else {
		if (ch >= pl->channels || ch >= LKSW_MAX_CHANNELS)
			return 1;
		target = LKSW_CHANNEL | ch;
		if (target == f->from)
			return 0;
	}
	s->target[s->targets++ & (LKSW_MAX_PORTS + LKSW_MAX_CHANNELS - 1)] = target;
	return 0;
}

#define COPY_FLOODED 1
#define COPY_TAGGED 2 /* the frame came in tagged */

/* Target `i`: the copy its port sends, if it carries `vlan`, is up and
 * takes `payload`; counted there and added to the scratch's copies. A
 * global function, checked once for any arguments. */
__noinline int add_copy(struct __sk_buff *skb, __u32 i, __u32 vlan, __u32 payload, __u32 bits)
{
	__u32 zero = 0, len, port_idx;
	struct sw_scratch *s = bpf_map_lookup_elem(&sw_scratch, &zero);
	struct lksw_plan *pl = plan_of(s);
	struct lksw_counters *oc;
	struct lksw_egress *e;
	struct lksw_port *op;
	__u8 dst[6] = {};
	int port, tagged;

	if (!pl || !s || !skb)
		return 0;
	vlan &= 0xfff;
	port = resolve(pl, s, s->target[i & (LKSW_MAX_PORTS + LKSW_MAX_CHANNELS - 1)], skb);
	if (port < 0 || port >= LKSW_MAX_PORTS)
		return 0;
	op = &pl->port[port];
	if (!carries(op, vlan, &tagged) || !op->enabled)
		return 0;
	port_idx = port;
	oc = bpf_map_lookup_elem(&counters, &port_idx);
	if (!oc)
		return 0;
	if (payload > op->mtu) {
		oc->tx_too_big++;
		return 0;
	}
	len = skb->len + (skb->vlan_present ? 4 : 0);
	oc->tx_frames++;
	oc->tx_bytes += len - ((bits & COPY_TAGGED) ? 4 : 0) + (tagged ? 4 : 0);
	if (skb->len >= 6)
		bpf_skb_load_bytes(skb, 0, dst, 6);
	count_cast(&oc->tx_ucast, dst, skb->len);
	if (bits & COPY_FLOODED)
		oc->flooded++;
	if (s->out.egresses < LKSW_MAX_PORTS) {
		e = &s->out.egress[s->out.egresses & (LKSW_MAX_PORTS - 1)];
		e->port = port;
		e->tagged = tagged;
		/* Bridge::frame_for: a tag that stays keeps the priority bits. */
		e->vlan = tagged ? (s->pcp & 0xf000) | vlan : vlan;
		s->out.egresses++;
	}
	return 0;
}

/* Sends copy `i` with its tag (the frame is untagged between copies);
 * the last one is redirected rather than cloned. Returns TC_ACT_REDIRECT
 * for the last, 0 otherwise, TC_ACT_SHOT on a failure. A global
 * function, checked once for any arguments. */
__noinline int send_copy(struct __sk_buff *skb, __u32 i)
{
	__u32 zero = 0, ifindex, port;
	struct sw_scratch *s = bpf_map_lookup_elem(&sw_scratch, &zero);
	struct lksw_plan *pl = plan_of(s);
	struct lksw_egress *e;

	if (!pl || !s || !skb)
		return TC_ACT_SHOT;
	e = &s->out.egress[i & (LKSW_MAX_PORTS - 1)];
	port = e->port;
	if (port >= LKSW_MAX_PORTS)
		return 0;
	ifindex = pl->port[port & (LKSW_MAX_PORTS - 1)].ifindex;
	if (e->tagged && bpf_skb_vlan_push(skb, bpf_htons(TPID), e->vlan))
		return 0;
	if (i + 1 >= s->out.egresses)
		return bpf_redirect(ifindex, 0);
	bpf_clone_redirect(skb, ifindex, 0);
	if (e->tagged && bpf_skb_vlan_pop(skb))
		return TC_ACT_SHOT;
	return 0;
}

struct copy_ctx {
	struct __sk_buff *skb;
	__u32 vlan;
	__u32 payload;
	__u32 bits; /* COPY_* */
	__u32 n;
};

static int copy_one(__u32 i, void *data)
{
	struct copy_ctx *c = data;

	if (i >= c->n)
		return 1;
	add_copy(c->skb, i, c->vlan, c->payload, c->bits);
	return 0;
}

static int send_one(__u32 i, void *data)
{
	struct copy_ctx *c = data;
	__u32 zero = 0;
	struct sw_scratch *s = bpf_map_lookup_elem(&sw_scratch, &zero);
	int ret;

	if (!s || i >= c->n)
		return 1;
	ret = send_copy(c->skb, i);
	s->ret = ret;
	return ret ? 1 : 0;
}

SEC("classifier")
int lksw_ingress(struct __sk_buff *skb)
{
	__u32 zero = 0, n, len, in_port, from, payload, tci = 0, bits = 0;
	struct lksw_counters *c;
	struct sw_scratch *s;
	struct lksw_plan *pl;
	struct lksw_port *p;
	struct lksw_trace *t;
	int tagged = 0, port;
	__u8 h[18];
	__u16 vlan;
	long known;
	__u64 now;
	struct find_ctx fc = { .ifindex = skb->ifindex, .port = -1 };
	struct flood_ctx flood = {};
	struct copy_ctx cc = {};
	struct lksw_plans *all;
	__u32 active, at;

	/* The plan in force, read once: every step below reads this slot. */
	all = bpf_map_lookup_elem(&plans, &zero);
	s = bpf_map_lookup_elem(&sw_scratch, &zero);
	if (!all || !s)
		return TC_ACT_OK;
	active = *(volatile __u32 *)&all->active;
	if (active == 0 || active > LKSW_PLAN_SLOTS)
		return TC_ACT_OK; /* no plan yet */
	s->slot = active - 1;
	pl = plan_of(s);
	if (!pl)
		return TC_ACT_OK;
	at = pl->port_at[skb->ifindex & (LKSW_PORT_SLOTS - 1)];
	if (at == LKSW_PORT_SEARCH) {
		bpf_loop(LKSW_MAX_PORTS, find_one, &fc, 0);
		port = fc.port;
	} else {
		port = (int)at - 1;
	}
	if (port < 0 || port >= LKSW_MAX_PORTS || port >= pl->ports ||
	    pl->port[port].ifindex != skb->ifindex)
		return TC_ACT_OK; /* not a port of this switch */
	in_port = port;
	c = bpf_map_lookup_elem(&counters, &in_port);
	if (!c)
		return TC_ACT_SHOT;
	p = &pl->port[in_port & (LKSW_MAX_PORTS - 1)];
	/* The frame as it was on the wire: an offloaded tag is 4 bytes of it. */
	len = skb->len + (skb->vlan_present ? 4 : 0);
	__builtin_memset(h, 0, sizeof(h));
	if (skb->len >= 18)
		bpf_skb_load_bytes(skb, 0, h, 18);
	else if (skb->len >= 14)
		bpf_skb_load_bytes(skb, 0, h, 14);
	else if (skb->len >= 6)
		bpf_skb_load_bytes(skb, 0, h, 6);
	c->rx_frames++;
	c->rx_bytes += len;
	count_cast(&c->rx_ucast, h, skb->len);
	if (!p->enabled)
		return drop(c, pl, LKSW_DROP_DISABLED);
	if (skb->len < 14)
		return drop(c, pl, LKSW_DROP_RUNT);
	if (skb->vlan_present) {
		tagged = 1;
		tci = skb->vlan_tci;
		payload = skb->len - 14;
	} else if (((h[12] << 8) | h[13]) == TPID) {
		if (skb->len < 18)
			return drop(c, pl, LKSW_DROP_RUNT);
		tagged = 1;
		tci = (h[14] << 8) | h[15];
		payload = skb->len - 18;
	} else {
		payload = skb->len - 14;
	}
	if (h[0] == 0x01 && h[1] == 0x80 && h[2] == 0xc2 && h[3] == 0 && h[4] == 0) {
		if (h[5] == 0x02) {
			c->control++;
			goto control;
		}
		if (h[5] <= 0x0f)
			return drop(c, pl, LKSW_DROP_LINK_LOCAL);
	}
	if (h[0] == 0x01 && h[1] == 0x00 && h[2] == 0x0c && h[3] == 0xcc && h[4] == 0xcc &&
	    h[5] == 0xcc) {
		c->control++;
		goto control;
	}
	if (p->channel && !p->standalone && !p->bundled)
		return drop(c, pl, LKSW_DROP_NOT_BUNDLED);
	/* PortMode::classify: untagged and priority-tagged frames are the
	 * access or native VLAN's. */
	vlan = tci & 0x0fff;
	if (!tagged || vlan == 0) {
		vlan = p->vlan;
	} else if (!p->trunk) {
		return drop(c, pl, LKSW_DROP_TAGGED_ON_ACCESS);
	} else if (!((p->allowed[(vlan >> 6) & (LKSW_VLAN_WORDS - 1)] >> (vlan & 63)) & 1)) {
		return drop(c, pl, LKSW_DROP_VLAN_NOT_ALLOWED);
	}
	/* A GSO frame leaves as segments: its largest is what the MTU judges.
	 * Its headers are taken as IPv4's and TCP's without options (the
	 * userspace bridge reads them from the virtio-net header); a test run
	 * cannot make a GSO frame, so only a test on veths can hold the two to
	 * the same answer. */
	if (skb->gso_size)
		payload = skb->gso_size + 40;
	if (payload > p->mtu)
		return drop(c, pl, LKSW_DROP_GIANT);
	from = p->channel && !p->standalone ? LKSW_CHANNEL | (p->channel - 1) : in_port;
	/* The clock of the last tick (CLOCK_MONOTONIC_COARSE, the
	 * daemon's CLOCK_MONOTONIC a few ms behind): ample for ages in
	 * seconds and a learning rate per second, and no clock read per
	 * frame. */
	now = bpf_ktime_get_coarse_ns();
	if (!(h[6] & 1))
		learn(pl, c, vlan, h + 6, from, in_port, now);
	known = !(h[0] & 1) ? lookup(pl, vlan, h, now) : -1;
	if (known >= 0 && (__u32)known == from)
		return drop(c, pl, LKSW_DROP_SAME_PORT);
	if (known >= 0) {
		s->target[0] = known;
		s->targets = 1;
	} else {
		flood.vlan = vlan;
		flood.from = from;
		s->targets = 0;
		bpf_loop(LKSW_MAX_PORTS + LKSW_MAX_CHANNELS, flood_one, &flood, 0);
		bits |= COPY_FLOODED;
	}
	n = s->targets;
	if (tagged)
		bits |= COPY_TAGGED;
	s->parsed = 0;
	s->pcp = tci;
	s->out.egresses = 0;
	cc.skb = skb;
	cc.vlan = vlan;
	cc.payload = payload;
	cc.bits = bits;
	cc.n = n;
	/* A known destination (one target) needs no loop. */
	if (n == 1)
		add_copy(skb, 0, vlan, payload, bits);
	else
		bpf_loop(LKSW_MAX_PORTS + LKSW_MAX_CHANNELS, copy_one, &cc, 0);
	n = s->out.egresses;
	if (!n)
		return drop(c, pl, LKSW_DROP_NO_PATH);
	if (pl->flags & LKSW_F_TRACE) {
		t = bpf_map_lookup_elem(&trace, &zero);
		if (t) {
			__builtin_memcpy(t, &s->out, sizeof(*t));
			t->verdict = LKSW_FORWARD;
			t->reason = 0;
			t->vlan = vlan;
			t->flooded = !!(bits & COPY_FLOODED);
		}
	}
	/* Send: the frame untagged, then each copy with its own tag. */
	if (tagged && bpf_skb_vlan_pop(skb))
		return TC_ACT_SHOT;
	cc.n = n;
	s->ret = 0;
	if (n == 1)
		s->ret = send_copy(skb, 0);
	else
		bpf_loop(LKSW_MAX_PORTS, send_one, &cc, 0);
	return s->ret ? s->ret : TC_ACT_SHOT;
control:
	if (pl->flags & LKSW_F_TRACE) {
		t = bpf_map_lookup_elem(&trace, &zero);
		if (t) {
			t->verdict = LKSW_CONTROL;
			t->egresses = 0;
		}
	}
	/* On to the daemon's packet sockets, bound to these frames'
	 * protocols (slow protocols, 802.2 LLC): they see no other frame. */
	return TC_ACT_OK;
}
