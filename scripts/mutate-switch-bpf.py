#!/usr/bin/env python3
"""Breaks the switch's BPF program on purpose, one mutation at a time, and
says which ones tests/switch_parity.rs catches (a mutant the verifier or
clang refuses is "not viable"). Run from the repository's root, as root:
    python3 scripts/mutate-switch-bpf.py [WORD]
(WORD: only the mutations whose name contains it, e.g. `learning`).
The program is restored afterwards, also when interrupted."""
import subprocess, sys, signal
p='crates/bpf/src/bpf/switch.bpf.c'
orig=open(p).read()
muts=[
 ("priority tag as untagged", "	if (!tagged || vlan == 0) {", "	if (!tagged || vlan == 1) {"),
 ("trunk native untagged", "	if (vlan == p->vlan) {\n		*tagged = 0;", "	if (vlan == p->vlan + 1) {\n		*tagged = 0;"),
 ("no learning", "	if (!(h[6] & 1))\n		learn(", "	if (0)\n		learn("),
 ("same port", "(__u32)known == from)", "(__u32)known == from + 1)"),
 ("giant bound", "	if (payload > p->mtu)\n		return drop(c, pl, LKSW_DROP_GIANT);", "	if (payload > p->mtu + 4)\n		return drop(c, pl, LKSW_DROP_GIANT);"),
 ("flood back into the ingress channel", "		if (target == f->from)", "		if (target == f->from + 1)"),
 ("tx bytes of an added tag", "+ (tagged ? 4 : 0);", "+ 0;"),
 ("channel bucket", "(__u32)h.bucket % LKSW_BUCKETS :", "(__u32)(h.bucket + 1) % LKSW_BUCKETS :"),
 ("link-local range", "		if (h[5] <= 0x0f)", "		if (h[5] < 0x0f)"),
 ("not-bundled member", "!p->standalone && !p->bundled)", "!p->standalone && 0)"),
 ("Cisco multicast control", "h[4] == 0xcc &&\n	    h[5] == 0xcc)", "h[4] == 0xcc &&\n	    h[5] == 0xcd)"),
 ("egress MTU", "	if (payload > op->mtu) {", "	if (payload > op->mtu + 100) {"),
 ("flood over disabled ports", "if (!op->enabled || i == f->from", "if (i == f->from"),
 ("allowed VLAN on ingress", "	} else if (!((p->allowed[", "	} else if (0 && !((p->allowed["),
 ("rx multicast counted as broadcast", "		u[2]++;\n	else\n		u[1]++;", "		u[2]++;\n	else\n		u[2]++;"),
 ("priority bits kept", "tagged ? (s->pcp & 0xf000) | vlan : vlan;", "tagged ? vlan : vlan;"),
 ("runt tagged frame", "		if (skb->len < 18)\n			return drop(c, pl, LKSW_DROP_RUNT);", "		if (skb->len < 17)\n			return drop(c, pl, LKSW_DROP_RUNT);"),
 ("rx bytes of an offloaded tag", "len = skb->len + (skb->vlan_present ? 4 : 0);\n	__builtin_memset", "len = skb->len;\n	__builtin_memset"),
 ("a full table counted", "BPF_NOEXIST) == -7", "BPF_NOEXIST) == -8"),
 ("refreshed entries move", "		if (e->at != at) {", "		if (e->at == at) {"),
 ("a move not followed", "			e->at = at;\n			e->seen = now;", "			e->seen = now;"),
 ("port slot off by one", "		port = (int)at - 1;", "		port = (int)at;"),
 ("one copy not counted", "		add_copy(skb, 0, vlan, payload, bits);", "		add_copy(skb, 1, vlan, payload, bits);"),
 ("no learning budget", "	if (!learn_allowed(port, now)) {", "	if (0 && !learn_allowed(port, now)) {"),
 ("learning budget off by one", "	if (credit >= LEARN_NS) {", "	if (credit + LEARN_NS >= LEARN_NS) {"),
 ("refused sources not counted", "		c->learn_limited++;\n		return;", "		return;"),
]
if len(sys.argv) > 1:
    muts=[m for m in muts if sys.argv[1] in m[0]]
caught=0
def restore(*_):
    open(p,'w').write(orig)
    sys.exit(1)
signal.signal(signal.SIGINT, restore)
signal.signal(signal.SIGTERM, restore)
for name,a,b in muts:
    assert a in orig, name
    open(p,'w').write(orig.replace(a,b,1))
    r=subprocess.run(["cargo","test","-q","-p","lagkit-bpf","--test","switch_parity"],capture_output=True,text=True)
    out=r.stdout+r.stderr
    if r.returncode==0:
        print("MISSED      "+name, flush=True)
    elif "BPF_PROG_LOAD" in out or "failed to compile" in out:
        print("NOT VIABLE  "+name, flush=True)
    else:
        caught+=1
        print("caught      "+name, flush=True)
open(p,'w').write(orig)
print(f"{caught} of {len(muts)} mutations caught")
