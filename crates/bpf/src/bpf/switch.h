/* The ABI between the switch's BPF program (switch.bpf.c) and lagkit-bpf's
 * Rust side (src/switch.rs mirrors every definition here field for field):
 * the plan the switch's core publishes, the address table's entries, the
 * counters and what a test run leaves behind. */
#ifndef LAGKIT_SWITCH_H
#define LAGKIT_SWITCH_H

#include <linux/types.h>

#define LKSW_MAX_PORTS 64
#define LKSW_MAX_CHANNELS 64
#define LKSW_BUCKETS 8 /* a Catalyst's EtherChannel buckets */
#define LKSW_VLAN_WORDS 64 /* 4096 VLAN bits */

/* Where an address lives: a port's index, or a channel's with this bit. */
#define LKSW_CHANNEL 0x10000

/* struct lksw_plan.flags */
#define LKSW_F_TRACE 1 /* leave each decision in `trace` (tests) */

/* lagkit_switch::DropReason, in DropReason::ALL's order. */
enum lksw_drop {
	LKSW_DROP_DISABLED = 0,
	LKSW_DROP_NOT_BUNDLED,
	LKSW_DROP_RUNT,
	LKSW_DROP_GIANT,
	LKSW_DROP_TAGGED_ON_ACCESS,
	LKSW_DROP_VLAN_NOT_ALLOWED,
	LKSW_DROP_LINK_LOCAL,
	LKSW_DROP_SAME_PORT,
	LKSW_DROP_NO_PATH,
	LKSW_DROP_STORM_CONTROL,
	LKSW_DROPS,
};

/* One port as the plan has it. */
struct lksw_port {
	__u32 ifindex; /* its device */
	__u32 mtu;     /* the largest payload it takes and sends */
	__u16 vlan;    /* access: its VLAN; trunk: the native VLAN */
	__u8 enabled;
	__u8 trunk;
	__u8 channel;    /* 0: none; else the channel's index + 1 */
	__u8 standalone; /* a channel member forwarding on its own */
	__u8 bundled;    /* a channel member its channel sends and takes on */
	__u8 reserved;
	__u64 allowed[LKSW_VLAN_WORDS]; /* trunk: the VLANs it carries */
};

/* One port-channel: bucket -> the port index + 1 that sends it (0: none). */
struct lksw_channel {
	__u8 bucket[LKSW_BUCKETS];
};

/* struct lksw_plan.port_at: a frame's port found by its interface in one
 * step, not a search of port[] on every frame. port_at[ifindex %
 * LKSW_PORT_SLOTS] is 1 + the port on that interface, 0 for none, or
 * LKSW_PORT_SEARCH where two ports' interfaces share the slot (port[] is
 * searched then). */
#define LKSW_PORT_SLOTS 256
#define LKSW_PORT_SEARCH 0xff

/* Everything the program decides by. */
struct lksw_plan {
	__u32 ports;    /* ports in use */
	__u32 channels; /* channels in use, in ascending channel number */
	__u32 policy;   /* enum lagkit_policy (lagkit.h): the load-balance method */
	__u32 flags;    /* LKSW_F_* */
	__u64 aging_ns; /* an address not seen for longer is unknown */
	__u64 seed;     /* strong's seed */
	struct lksw_port port[LKSW_MAX_PORTS];
	struct lksw_channel channel[LKSW_MAX_CHANNELS];
	__u8 port_at[LKSW_PORT_SLOTS];
};

/* The plans the core publishes, as the bond's (lagkit.bpf.c `plans`): the
 * daemon writes a plan into a slot no program reads, then stores that
 * slot's number in `active`; a program run reads `active` once and keeps
 * that slot throughout, so every frame meets one whole plan. `active` is
 * 1 + the slot in force, 0 before the first plan. */
#define LKSW_PLAN_SLOTS 16
struct lksw_plans {
	__u32 active;
	__u32 reserved;
	struct lksw_plan slot[LKSW_PLAN_SLOTS];
};

/* The address table: (VLAN, MAC) -> where it was last seen, and when. */
struct lksw_fdb_key {
	__u16 vlan;
	__u8 mac[6];
};

struct lksw_fdb_entry {
	__u32 at; /* a port index, or LKSW_CHANNEL | channel index */
	__u32 reserved;
	__u64 seen; /* bpf_ktime_get_coarse_ns(), refreshed in steps (below) */
};

/* `seen` of an address that stays on its port is refreshed once it is
 * older than aging_ns >> LKSW_SEEN_SHIFT (0.29 s of the default 300 s),
 * so an entry may age out up to that much before the bridge's would. */
#define LKSW_SEEN_SHIFT 10

/* Per-CPU counters of one port (lagkit_switch::PortCounters' fields that
 * forwarding counts). */
struct lksw_counters {
	__u64 rx_frames;
	__u64 rx_bytes;
	__u64 tx_frames;
	__u64 tx_bytes;
	__u64 control;
	__u64 flooded;
	__u64 tx_too_big;
	__u64 learn_full;
	__u64 rx_ucast;
	__u64 rx_mcast;
	__u64 rx_bcast;
	__u64 tx_ucast;
	__u64 tx_mcast;
	__u64 tx_bcast;
	__u64 drops[LKSW_DROPS];
	__u64 learn_limited; /* new sources not learned: the port's rate spent */
};

/* One port's learning budget (lagkit_switch::police::LearnLimiter): up to
 * `rate` new addresses a second, `rate` at once after a quiet second.
 * Credit is in address-nanoseconds: an address costs 10^9, and each
 * nanosecond adds `rate`. Shared by the CPUs (not per-CPU): two CPUs
 * learning on one port at once may both spend the same credit, which
 * lets slightly more than the rate through, never fewer. */
struct lksw_learn {
	__u64 credit;
	__u64 at;   /* bpf_ktime_get_coarse_ns() of the last try; 0: never */
	__u32 rate; /* set by the daemon for each port */
	__u32 reserved;
};

/* The global counters' indexes. */
#define LKSW_MOVES 0 /* addresses that moved between ports or channels */
#define LKSW_GLOBALS 1

/* A decision, left in `trace` under LKSW_F_TRACE. */
enum lksw_verdict {
	LKSW_NONE = 0,
	LKSW_CONTROL,
	LKSW_FORWARD,
	LKSW_DROP,
};

struct lksw_egress {
	__u8 port;
	__u8 tagged;
	__u16 vlan; /* tagged: the whole TCI it leaves with; else its VLAN */
};

struct lksw_trace {
	__u32 verdict; /* enum lksw_verdict */
	__u32 reason;  /* enum lksw_drop, for LKSW_DROP */
	__u16 vlan;
	__u8 flooded;
	__u8 egresses;
	__u32 reserved;
	struct lksw_egress egress[LKSW_MAX_PORTS];
};

#endif
