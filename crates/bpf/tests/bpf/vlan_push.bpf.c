// SPDX-License-Identifier: MIT OR Apache-2.0
/* Test helper: tags every frame with the VLAN id in `vid` the way a VLAN
 * device above the logical interface would (as metadata, hardware
 * insertion), then lets the next tcx program run. This kernel has no 8021q
 * module, so the tests make such frames this way. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} vid SEC(".maps");

SEC("classifier")
int test_vlan_push(struct __sk_buff *skb)
{
	__u32 zero = 0, *v = bpf_map_lookup_elem(&vid, &zero);

	if (v && *v)
		bpf_skb_vlan_push(skb, bpf_htons(0x8100), *v);
	return TC_ACT_UNSPEC; /* tcx: on to the next program */
}
