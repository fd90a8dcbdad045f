#!/usr/bin/env bash
# bench-logical.sh — what the device type of the BPF engine's logical
# interface (bond0) costs on the data path, and how each type behaves when
# its carrier is set and when the daemon dies: the measurements behind
# docs/bond.md's "Why the BPF engine's logical interface is a veth".
#
# Each candidate is used exactly as the BPF engine uses bond0, with tc's own
# redirect in place of lagkit's programs (nothing to build):
#
#   A: bond0 (the candidate, 10.99.0.1/24, fd00:99::1/64, MAC 02:99:00:00:00:01)
#        clsact egress:   <match all> action mirred egress redirect dev m1
#      m1, m2 (veth; the same MAC, ARP and IPv6 off: only bond0 is A's interface)
#        clsact ingress:  <match all> action mirred ingress redirect dev bond0
#   B: b1, b2 (the veth peers) in bridge br0 (10.99.0.2/24, fd00:99::2/64),
#      ports isolated from each other as a partner's LAG would be (B's
#      floods do not come back to A)
#
# <match all> is `matchall`, or `u32 match u32 0 0` on kernels without
# matchall. With --redirect bpf the rounds use, instead of tc's filters,
# what lagkit's programs do: a 4-instruction tcx program per hook calling
# bpf_redirect(m1, 0) / bpf_redirect(bond0, BPF_F_INGRESS), hand-assembled
# and attached by python3 (Linux 6.6+; nothing to build). A sends on m1
# only (a hash split would make B's bridge relearn A's MAC on every frame);
# B->A arrives on m1 (m2 sees B's broadcasts), so both hooks run as under
# lagkit. The members get bond0's MAC, as a bond's
# members do: tc's ingress redirect, unlike bpf_redirect(BPF_F_INGRESS),
# does not recompute the frame's packet type for bond0.
#
# Candidates (--candidates; a type this kernel cannot make is reported and
# skipped):
#   veth       a veth end whose peer bond0p stays up and idle (today's)
#   tap        a TAP kept open by a python3 holder: IFF_VNET_HDR, vnet
#              header 12 bytes, TUNSETOFFLOAD CSUM|TSO4|TSO6|TSO_ECN (and
#              USO4|USO6 where the kernel takes them); nobody reads it
#   tap-plain  the same TAP without IFF_VNET_HDR and offloads
#   dummy      `ip link add bond0 type dummy`
#   netkit     netkit in L2 mode, made over rtnetlink from python3 (iproute2
#              6.1 has no `type netkit`), the peer up and idle
# (ifb is no candidate: it is NOARP, refuses a MAC address and a carrier.)
#
# Measured, in rounds: every candidate is set up once, in its own pair of
# namespaces, and each round measures each candidate once per test (all
# candidates' A->B, then all B->A, then all rr, so that what is compared
# runs seconds apart), the order rotated by one each round; the machine's
# busy share over 1 s before each round is printed with it:
#   A->B   iperf3 -c B -P FLOWS -t SECS (the stack -> bond0's egress -> m1)
#   B->A   the same with -R (m1's ingress -> bond0 -> the stack)
#   rr     ping -f -w SECS to B: one ICMP echo in flight, transactions/s
# Gbit/s is what iperf3's receiver counted; CPU-s/GB is the whole machine's
# busy time (/proc/stat) during the run per GB received (includes iperf3,
# both stacks and anything else running: compare within a round). Each round
# prints every value and its ratio to the first candidate (veth) of the
# same round; the summary gives the median of the rounds and the median of
# the per-round ratios.
#
# Every run also checks that frames crossed the members exactly once: A's
# IP packets (IpOutRequests + Ip6OutRequests, IpInReceives + Ip6InReceives:
# GSO and GRO frames count once, as on a link) against the members' `ip -s
# link` packets in that direction, and bond0's own transmit path (its
# tx_packets + tx_dropped, and the idle peer's rx_packets) must stay at 0.
# A mismatch prints a WARNING.
#
# Then, per candidate, in fresh namespaces with IPv6 DAD on (--no-behaviour
# skips it): `ip -d link`, `ethtool` (speed, duplex, link detected),
# `ethtool -k` (checksumming, TSO, GSO), /sys/class/net/bond0/{carrier,
# operstate,speed}; whether `ethtool -s bond0 speed 20000 duplex full
# autoneg off` works; how the carrier is set and whether that needs a
# process; a carrier flap (off for 0.2 s under 5 ms IPv4 and IPv6 pings:
# replies lost, the longest time without a reply, the IPv4 neighbour's
# state, whether the IPv6 address goes tentative again and for how long).
# For the TAP: its holder SIGKILLed under the same pings (6 s of them) and
# started again 0.2 s later, both as a plain TAP (the kernel deletes it with
# its addresses and filters; the new holder's TAP is configured again, as a
# restarted daemon would) and as a persistent one (TUNSETPERSIST: the
# device stays, its carrier drops). The flap and the kill run -k times
# each, with tc's redirect and, where the kernel takes tcx programs, with
# the BPF one: tc's mirred refuses to deliver into a device without carrier
# ("tc mirred to Houston: device bond0 is down"), bpf_redirect does not, so
# only the [bpf] lines show what lagkit's data path does.
#
# Usage: sudo scripts/bench-logical.sh [-t SECS] [-r ROUNDS] [-P FLOWS]
#          [-k N] [--candidates LIST] [--redirect tc|bpf] [--quiet PCT]
#          [--no-behaviour] [--keep DIR]
#   -t SECS     duration of each iperf3 and rr run (default 4)
#   -r ROUNDS   rounds (default 5; 0: only the behaviour)
#   -P FLOWS    iperf3 parallel TCP streams (default 4)
#   -k N        repetitions of each carrier flap and TAP kill (default 3)
#   --candidates LIST  comma-separated, the first is the baseline (default
#               veth,tap,tap-plain,dummy,netkit)
#   --redirect KIND    the rounds' redirects: tc (default) or bpf
#   --quiet PCT a round starts once the machine's busy share (over 1 s,
#               all CPUs) is at most PCT (waiting up to 15 minutes), and is
#               measured again (up to 3 tries, then kept with a WARNING)
#               when it was busier before or after it (default 10; 100:
#               never wait): CPU-s/GB counts the whole machine
#   --no-behaviour     only the rounds
#   --keep DIR  copy every raw output (iperf3 JSON, ping output, ip/ethtool
#               dumps) to DIR at the end
# Takes about 10 minutes with the defaults where 3 candidates can be made
# (veth, tap, tap-plain) on a quiet machine: 3.5 for the rounds, 6.5 for
# the behaviour.
#
# Only processes this script starts are stopped (by PID); namespaces are
# named lkbl<PID>-*; a trap tears everything down on exit, error, Ctrl-C or
# SIGTERM. Logs of a failed run stay in /tmp/lkbl<PID>.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=4
ROUNDS=5
FLOWS=4
CANDIDATES=veth,tap,tap-plain,dummy,netkit
BEHAVIOUR=1
REPEATS=3
REDIRECT=tc
QUIET=10
QUIET_WAIT=900
KEEP=
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECS=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    -P) FLOWS=$2; shift 2 ;;
    --candidates) CANDIDATES=$2; shift 2 ;;
    --no-behaviour) BEHAVIOUR=0; shift ;;
    -k) REPEATS=$2; shift 2 ;;
    --redirect) REDIRECT=$2; shift 2 ;;
    --quiet) QUIET=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-logical.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ $QUIET =~ ^[0-9]+$ ]] || [ "$QUIET" -gt 100 ]; then
  echo "bench-logical.sh: --quiet takes a share 0-100, not '$QUIET'" >&2; exit 2
fi
[[ $ROUNDS =~ ^[0-9]+$ ]] || { echo "bench-logical.sh: -r takes a number, not '$ROUNDS'" >&2; exit 2; }
for v in "$SECS" "$FLOWS" "$REPEATS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-logical.sh: -t, -P and -k take a number >= 1, not '$v'" >&2; exit 2; }
done
[[ $REDIRECT =~ ^(tc|bpf)$ ]] || { echo "bench-logical.sh: --redirect takes tc or bpf, not '$REDIRECT'" >&2; exit 2; }
RK=$REDIRECT   # the redirect kind of what is set up next
IFS=, read -r -a CAND_LIST <<<"$CANDIDATES"
for c in "${CAND_LIST[@]}"; do
  [[ $c =~ ^(veth|tap|tap-plain|dummy|netkit)$ ]] ||
    { echo "bench-logical.sh: --candidates takes veth,tap,tap-plain,dummy,netkit, not '$c'" >&2; exit 2; }
done

PFX=lkbl$$
W=/tmp/$PFX
HZ=$(getconf CLK_TCK)
MAC=02:99:00:00:00:01
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)

# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

[ "$(id -u)" = 0 ] || die "must run as root"
bash "$ROOT/scripts/setup.sh" run || die "scripts/setup.sh run failed"
for t in ip tc bridge iperf3 ethtool ping jq awk ss timeout "$PY"; do
  command -v "$t" >/dev/null || die "missing $t (apt-get install -y --no-install-recommends iproute2 iperf3 ethtool iputils-ping jq python3)"
done
[ -c /dev/net/tun ] || die "no /dev/net/tun (the TAP candidates need the tun driver)"
remove_leftover_netns lkbl bench-logical.sh
mkdir -p "$W"
trap cleanup EXIT
trap 'exit 130' INT TERM
ROOT_LINKS0=$(ip -o link show | awk -F': ' '{print $2}' | sort)

# The TAP holder, a TAP prober and netkit's creation: stdlib only.
cat >"$W/tun.py" <<'EOF'
"""hold NAME vnet|plain 0|1: open a TAP (persistent if 1), print "ready
OFFLOADS", SIGUSR1/SIGUSR2 = TUNSETCARRIER off/on, run until killed.
probe NAME vnet|plain: attach to an existing TAP and set its carrier off.
netkit NAME PEER: create a netkit pair in L2 mode over rtnetlink.
redirect DEV ingress|egress TARGET: attach at DEV's tcx hook, first, a BPF
program that does bpf_redirect(TARGET, ingress hook ? BPF_F_INGRESS : 0),
as lagkit's do; it stays attached after this process exits."""
import ctypes, fcntl, os, platform, signal, socket, struct, sys

TUNSETIFF, TUNSETPERSIST, TUNSETOFFLOAD = 0x400454CA, 0x400454CB, 0x400454D0
TUNSETVNETHDRSZ, TUNSETCARRIER = 0x400454D8, 0x400454E2
IFF_TAP, IFF_NO_PI, IFF_VNET_HDR = 0x0002, 0x1000, 0x4000
F_CSUM, F_TSO4, F_TSO6, F_TSO_ECN, F_USO4, F_USO6 = 0x01, 0x02, 0x04, 0x08, 0x20, 0x40


def tap(name, mode):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    flags = IFF_TAP | IFF_NO_PI | (IFF_VNET_HDR if mode == "vnet" else 0)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), flags))
    return fd


def carrier(fd, on):
    fcntl.ioctl(fd, TUNSETCARRIER, struct.pack("i", on))


def hold(name, mode, persist):
    fd = tap(name, mode)
    offloads = "none"
    if mode == "vnet":
        fcntl.ioctl(fd, TUNSETVNETHDRSZ, struct.pack("i", 12))
        base = F_CSUM | F_TSO4 | F_TSO6 | F_TSO_ECN
        try:
            fcntl.ioctl(fd, TUNSETOFFLOAD, base | F_USO4 | F_USO6)
            offloads = "csum,tso4,tso6,tso_ecn,uso4,uso6"
        except OSError:
            fcntl.ioctl(fd, TUNSETOFFLOAD, base)
            offloads = "csum,tso4,tso6,tso_ecn"
    fcntl.ioctl(fd, TUNSETPERSIST, 1 if persist == "1" else 0)
    signal.signal(signal.SIGUSR1, lambda *_: carrier(fd, 0))
    signal.signal(signal.SIGUSR2, lambda *_: carrier(fd, 1))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", offloads, flush=True)
    while True:
        signal.pause()


def probe(name, mode):
    try:
        fd = tap(name, mode)
        carrier(fd, 0)
    except OSError as e:
        sys.exit(f"cannot attach to {name}: {e.strerror} (errno {e.errno})")
    print(f"attached to {name} and set its carrier off")


def nla(kind, payload):
    pad = b"\0" * ((4 - len(payload) % 4) % 4)
    return struct.pack("HH", 4 + len(payload), kind) + payload + pad


def netkit(name, peer):
    # <linux/if_link.h>: IFLA_IFNAME 3, IFLA_LINKINFO 18 > IFLA_INFO_KIND 1,
    # IFLA_INFO_DATA 2 > IFLA_NETKIT_PEER_INFO 1, IFLA_NETKIT_MODE 5 (NETKIT_L2 = 1)
    nested = 0x8000
    ifi = struct.pack("BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)
    data = nla(1 | nested, ifi + nla(3, peer.encode() + b"\0")) + nla(5, struct.pack("I", 1))
    body = ifi + nla(3, name.encode() + b"\0") + nla(18 | nested, nla(1, b"netkit") + nla(2 | nested, data))
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    # RTM_NEWLINK 16; NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE
    s.send(struct.pack("IHHII", 16 + len(body), 16, 0x1 | 0x4 | 0x200 | 0x400, 1, 0) + body)
    err = struct.unpack_from("i", s.recv(65536), 16)[0]
    if err:
        sys.exit(f"RTM_NEWLINK kind netkit: {os.strerror(-err)}")


def redirect(dev, hook, target):
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": 321, "aarch64": 280}[platform.machine()]  # SYS_bpf

    def insn(code, regs, imm):  # struct bpf_insn { u8 code; u8 dst:4, src:4; s16 off; s32 imm; }
        return struct.pack("<BBhi", code, regs, 0, imm)

    ingress = hook == "ingress"
    # r1 = TARGET's ifindex; r2 = flags; call bpf_redirect (helper 23); exit (r0 = TC_ACT_REDIRECT)
    prog = (insn(0xB7, 1, socket.if_nametoindex(target)) + insn(0xB7, 2, 1 if ingress else 0)
            + insn(0x85, 0, 23) + insn(0x95, 0, 0))
    insns = ctypes.create_string_buffer(prog, len(prog))
    lic = ctypes.create_string_buffer(b"GPL")
    # BPF_PROG_LOAD (5): prog_type SCHED_CLS (3), insn_cnt, insns, license, ..., prog_name at 48
    attr = struct.pack("<IIQQIIQII16sII", 3, len(prog) // 8, ctypes.addressof(insns), ctypes.addressof(lic),
                       0, 0, 0, 0, 0, b"lkbl_redirect", 0, 0)
    fd = libc.syscall(ctypes.c_long(nr), ctypes.c_long(5), ctypes.create_string_buffer(attr, len(attr)), ctypes.c_uint(len(attr)))
    if fd < 0:
        sys.exit(f"BPF_PROG_LOAD: {os.strerror(ctypes.get_errno())}")
    # BPF_PROG_ATTACH (8): target_ifindex, attach_bpf_fd, attach_type BPF_TCX_INGRESS 46 /
    # BPF_TCX_EGRESS 47, attach_flags BPF_F_BEFORE (first: a stale program behind it never runs)
    attr = struct.pack("<IIIIIIQ", socket.if_nametoindex(dev), fd, 46 if ingress else 47, 1 << 3, 0, 0, 0)
    if libc.syscall(ctypes.c_long(nr), ctypes.c_long(8), ctypes.create_string_buffer(attr, len(attr)), ctypes.c_uint(len(attr))) < 0:
        sys.exit(f"BPF_PROG_ATTACH tcx {hook} {dev}: {os.strerror(ctypes.get_errno())}")


cmd = sys.argv[1]
if cmd == "hold":
    hold(*sys.argv[2:5])
elif cmd == "probe":
    probe(*sys.argv[2:4])
elif cmd == "netkit":
    netkit(*sys.argv[2:4])
elif cmd == "redirect":
    redirect(*sys.argv[2:5])
EOF

# ------------------------------------------------------------ the topology --
BPF_OK=0     # the kernel takes a tcx program (Linux 6.6+): set by probe_bpf
BPF_WHY=
probe_bpf() {
  local ns
  new_ns probe; ns=$NS
  ip -n "$ns" link add p0 type veth peer name p1
  if BPF_WHY=$(ip netns exec "$ns" "$PY" "$W/tun.py" redirect p0 ingress p1 2>&1); then BPF_OK=1; fi
  teardown_case
}

declare -A NSA=() NSB=() HOLDER=() WHY=()
FILTER=      # matchall, or u32 once matchall was refused
HOLDERS=0

# redirect NS DEV HOOK ACTION...: sends every frame at DEV's HOOK to ACTION
# (mirred ...): a filter on DEV's clsact, or with RK=bpf a tcx program that
# calls bpf_redirect as lagkit's do
redirect() {
  local ns=$1 dev=$2 hook=$3; shift 3
  if [ "$RK" = bpf ]; then
    ip netns exec "$ns" "$PY" "$W/tun.py" redirect "$dev" "$hook" "${*: -1}"
    return 0
  fi
  [[ $(tc -n "$ns" qdisc show dev "$dev") == *clsact* ]] || tc -n "$ns" qdisc add dev "$dev" clsact
  if [ "$FILTER" != u32 ] && tc -n "$ns" filter add dev "$dev" "$hook" protocol all prio 1 matchall action mirred "$@" 2>/dev/null; then
    FILTER=matchall; return 0
  fi
  tc -n "$ns" filter add dev "$dev" "$hook" protocol all prio 1 u32 match u32 0 0 action mirred "$@"
  FILTER=u32
}

redirects() { # redirects KIND: what redirect KIND is
  if [ "$1" = bpf ]; then echo "tcx programs calling bpf_redirect (4 instructions, as lagkit's), attached first"
  else echo "clsact + ${FILTER:-matchall/u32} + mirred (tc's own redirect)"; fi
}

# start_holder NS MODE PERSIST: a python3 process holding TAP bond0 open; sets HOLDER_PID
start_holder() {
  local ns=$1 mode=$2 persist=$3 log i
  HOLDERS=$((HOLDERS + 1)); log=$W/holder-$ns-$HOLDERS.log
  : >"$log"
  ip netns exec "$ns" "$PY" "$W/tun.py" hold bond0 "$mode" "$persist" >"$log" 2>&1 &
  HOLDER_PID=$!
  CASE_PIDS+=("$HOLDER_PID:python3")
  for i in $(seq 1 100); do
    grep -q '^ready' "$log" && return 0
    [ -d "/proc/$HOLDER_PID" ] || break
    sleep 0.02
  done
  REASON="TAP holder: $(tail -1 "$log")"
  return 1
}

idle_peer() { # idle_peer NS: bond0p up, ARP and IPv6 off (as crates/bpf/src/logical.rs)
  ip netns exec "$1" sysctl -qw net.ipv6.conf.bond0p.disable_ipv6=1
  ip -n "$1" link set bond0p arp off up
}

# make_logical C NS PERSIST: bond0 of type C in NS, down and without
# addresses; returns 1 with REASON set where this kernel cannot make it.
make_logical() {
  local c=$1 ns=$2 persist=${3:-0} err
  case $c in
    veth)
      err=$(ip -n "$ns" link add bond0 type veth peer name bond0p 2>&1) || { REASON="ip link add type veth: $err"; return 1; }
      idle_peer "$ns" ;;
    netkit)
      err=$(ip netns exec "$ns" "$PY" "$W/tun.py" netkit bond0 bond0p 2>&1) ||
        { REASON="$err; ip link add type netkit: $(ip -n "$ns" link add bond0 type netkit 2>&1)"; return 1; }
      idle_peer "$ns" ;;
    dummy)
      err=$(ip -n "$ns" link add bond0 type dummy 2>&1) || { REASON="ip link add type dummy: $err"; return 1; } ;;
    tap) start_holder "$ns" vnet "$persist" || return 1; HOLDER[$c]=$HOLDER_PID ;;
    tap-plain) start_holder "$ns" plain "$persist" || return 1; HOLDER[$c]=$HOLDER_PID ;;
  esac
}

# configure_logical NS DAD: bond0's MAC, addresses (IPv6 with DAD if DAD=1),
# its egress redirect to m1, the members' ingress redirects to it (replacing
# any earlier ones: a new bond0 has a new ifindex), then up
configure_logical() {
  local ns=$1 dad=$2 m nodad=(nodad)
  [ "$dad" = 1 ] && nodad=()
  ip -n "$ns" link set bond0 address "$MAC"
  ip -n "$ns" addr add 10.99.0.1/24 dev bond0
  ip -n "$ns" addr add fd00:99::1/64 dev bond0 "${nodad[@]}"
  redirect "$ns" bond0 egress egress redirect dev m1
  for m in m1 m2; do
    [ "$RK" = bpf ] || tc -n "$ns" qdisc del dev "$m" clsact 2>/dev/null || true
    redirect "$ns" "$m" ingress ingress redirect dev bond0
  done
  ip -n "$ns" link set bond0 up
}

# setup C DAD PERSIST: namespaces, bond0 of type C, members, B's bridge;
# sets NSA[C], NSB[C]; returns 1 (REASON set, namespaces removed) if C cannot be made
setup() {
  local c=$1 dad=$2 persist=${3:-0} na nb i
  new_ns "$c-a"; na=$NS; new_ns "$c-b"; nb=$NS
  if ! make_logical "$c" "$na" "$persist"; then
    for i in "$na" "$nb"; do ip netns del "$i"; done
    CASE_NS=("${CASE_NS[@]:0:${#CASE_NS[@]}-2}")
    return 1
  fi
  ip link add m1 netns "$na" type veth peer name b1 netns "$nb"
  ip link add m2 netns "$na" type veth peer name b2 netns "$nb"
  members_off "$na" m1 m2
  ip -n "$nb" link add br0 type bridge
  for i in 1 2; do
    ip -n "$na" link set "m$i" address "$MAC" up
    ip netns exec "$nb" sysctl -qw "net.ipv6.conf.b$i.disable_ipv6=1"
    ip -n "$nb" link set "b$i" master br0
    ip -n "$nb" link set "b$i" type bridge_slave isolated on
    ip -n "$nb" link set "b$i" up
  done
  ip -n "$nb" addr add 10.99.0.2/24 dev br0
  ip -n "$nb" addr add fd00:99::2/64 dev br0 nodad
  ip -n "$nb" link set br0 up
  configure_logical "$na" "$dad"
  NSA[$c]=$na; NSB[$c]=$nb
}

# ---------------------------------------------------------------- counters --
# ip_pkts NS: "OUT IN": A's IPv4 + IPv6 packets sent and received (GSO/GRO frames once)
ip_pkts() {
  ip netns exec "$1" cat /proc/net/snmp /proc/net/snmp6 | awk '
    $1 == "Ip6OutRequests" { o += $2 }
    $1 == "Ip6InReceives" { i += $2 }
    /^Ip:/ { if (!h) { for (k = 2; k <= NF; k++) n[k] = $k; h = 1; next }
             for (k = 2; k <= NF; k++) { if (n[k] == "OutRequests") o += $k; if (n[k] == "InReceives") i += $k } }
    END { printf "%d %d\n", o, i }'
}

# link_pkts NS: "MEMBERS_TX MEMBERS_RX OWN": packets on m1+m2, and what went
# through bond0's own transmit path (its tx_packets + tx_dropped + the idle peer's rx_packets)
link_pkts() {
  ip -n "$1" -s -j link show | jq -r '
    def s(n): [.[] | select(.ifname == n) | .stats64] | first // {rx: {packets: 0}, tx: {packets: 0, dropped: 0}};
    "\(s("m1").tx.packets + s("m2").tx.packets) \(s("m1").rx.packets + s("m2").rx.packets) \(s("bond0").tx.packets + s("bond0").tx.dropped + s("bond0p").rx.packets)"'
}

# -------------------------------------------------------------- the rounds --
# bulk C ROUND DIR (fwd: A->B; rev: B->A, iperf3 -R): one iperf3 run; appends
# ROUND|C|DIR|Gbit/s|bytes|cpu-s|wall-s|retransmits|members|ip|own to $W/runs
bulk() {
  local c=$1 r=$2 dir=$3 na=${NSA[$1]} out s0 s1 t0 t1 l0 l1 p0 p1 tries=0 rev=() mem ipp own
  [ "$dir" = rev ] && rev=(-R)
  out=$W/iperf-$c-$r-$dir.json
  while :; do
    read -r -a l0 <<<"$(link_pkts "$na")"; read -r -a p0 <<<"$(ip_pkts "$na")"
    s0=$(sys_busy); t0=$(date +%s.%N)
    ip netns exec "$na" iperf3 -c 10.99.0.2 -P "$FLOWS" -t "$SECS" "${rev[@]}" -J >"$out" 2>"$out.err" || true
    s1=$(sys_busy); t1=$(date +%s.%N)
    read -r -a l1 <<<"$(link_pkts "$na")"; read -r -a p1 <<<"$(ip_pkts "$na")"
    if jq -e '.error' "$out" >/dev/null 2>&1 || ! jq -e '.end.sum_received.bytes > 0' "$out" >/dev/null 2>&1; then
      if grep -q busy "$out" && [ $tries -lt 20 ]; then tries=$((tries + 1)); sleep 0.3; continue; fi
      die "iperf3 ($c, round $r, $dir) failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(cat "$out.err")"
    fi
    break
  done
  if [ "$dir" = fwd ]; then mem=$((l1[0] - l0[0])); ipp=$((p1[0] - p0[0])); else mem=$((l1[1] - l0[1])); ipp=$((p1[1] - p0[1])); fi
  own=$((l1[2] - l0[2]))
  jq -r --arg r "$r" --arg c "$c" --arg d "$dir" --arg cpu "$(calc "$s1 - $s0")" --arg w "$(calc "$t1 - $t0")" \
    --arg m "$mem" --arg i "$ipp" --arg o "$own" \
    '"\($r)|\($c)|\($d)|\(.end.sum_received.bits_per_second / 1e9)|\(.end.sum_received.bytes)|\($cpu)|\($w)|\(.end.sum_sent.retransmits // 0)|\($m)|\($i)|\($o)"' \
    "$out" >>"$W/runs"
}

# rr C ROUND: ping -f for SECS s (one echo in flight); appends
# ROUND|C|rr|transactions/s|transactions|cpu-s|wall-s|lost|-|-|- to $W/runs
rr() {
  local c=$1 r=$2 out s0 s1 t0 t1 tx rx ms
  out=$W/rr-$c-$r.txt
  s0=$(sys_busy); t0=$(date +%s.%N)
  ip netns exec "${NSA[$c]}" ping -f -q -w "$SECS" 10.99.0.2 >"$out" 2>&1 || true
  s1=$(sys_busy); t1=$(date +%s.%N)
  read -r tx rx ms < <(awk '/packets transmitted/ { t = $1; r = $4; for (i = 1; i <= NF; i++) if ($i == "time") m = $(i + 1) + 0 }
    END { print t + 0, r + 0, m + 0 }' "$out")
  if [ "$rx" = 0 ] || [ "$ms" = 0 ]; then die "ping -f ($c, round $r) got no replies: $(cat "$out")"; fi
  echo "$r|$c|rr|$(calc "$rx * 1000 / $ms")|$rx|$(calc "$s1 - $s0")|$(calc "$t1 - $t0")|$((tx - rx))|-|-|-" >>"$W/runs"
}

# background: the share (%) of all CPUs busy over 1 s with nothing of ours running
background() {
  local s0 s1
  s0=$(sys_busy); sleep 1; s1=$(sys_busy)
  awk -v a="$s0" -v b="$s1" -v n="$(nproc)" 'BEGIN { printf "%.0f", 100 * (b - a) / n }'
}
declare -A BG=()

# wait_quiet: waits (up to QUIET_WAIT s) until the machine is no more than
# QUIET % busy, then prints the busy share it measured last
wait_quiet() {
  local t0 b
  t0=$(date +%s)
  while :; do
    b=$(background)
    if [ "$b" -le "$QUIET" ] || [ $(($(date +%s) - t0)) -ge "$QUIET_WAIT" ]; then echo "$b"; return 0; fi
    log "  waiting for a quiet machine: $b% of $(nproc) CPUs busy (--quiet $QUIET)"
    sleep 9
  done
}

# frames_ok MEMBERS IP OWN: the members carried each IP packet once (within
# ARP and B's broadcasts: 0.5% + 50) and nothing took bond0's own xmit path
frames_ok() {
  awk -v m="$1" -v i="$2" -v o="$3" 'BEGIN { d = m - i; if (d < 0) d = -d; exit !(o == 0 && i > 0 && d <= 0.005 * i + 50) }'
}

round_report() { # round_report ROUND ORDER BACKGROUND: every value of the round and its ratio to the baseline's
  awk -F'|' -v r="$1" -v base="${AVAIL[0]}" -v order="$2" -v bg="$3" -v cpus="$(nproc)" '
    $1 == r { v[$2, $3] = $4; b[$2, $3] = $5; cpu[$2, $3] = $6; chk[$2, $3] = ($3 == "rr" ? "" : $9 "/" $10 "/" $11) }
    function gb(c, d) { return (b[c, d] > 0 ? cpu[c, d] / (b[c, d] / 1e9) : 0) }
    function x(a, z) { return (z > 0 ? sprintf("%5.2f", a / z) : "    -") }
    END {
      n = split(order, o, " ")
      printf "round %d (order: %s; background busy share of %d CPUs before it: %s)\n", r, order, cpus, bg
      printf "  %-10s %8s %5s %8s %5s   %8s %5s %8s %5s   %9s %5s   %s\n", "candidate", "A->B", "x", "CPU-s/GB", "x", "B->A", "x", "CPU-s/GB", "x", "rr/s", "x", "frames A->B, B->A (members/IP/own)"
      for (k = 1; k <= n; k++) {
        c = o[k]
        printf "  %-10s %8.2f %s %8.3f %s   %8.2f %s %8.3f %s   %9.0f %s   %s, %s\n", c,
          v[c, "fwd"], x(v[c, "fwd"], v[base, "fwd"]), gb(c, "fwd"), x(gb(c, "fwd"), gb(base, "fwd")),
          v[c, "rev"], x(v[c, "rev"], v[base, "rev"]), gb(c, "rev"), x(gb(c, "rev"), gb(base, "rev")),
          v[c, "rr"], x(v[c, "rr"], v[base, "rr"]), chk[c, "fwd"], chk[c, "rev"]
      }
    }' "$W/runs"
}

# ----------------------------------------------------------- behaviour -----
# carrier_set C NS on|off: sets bond0's carrier the way type C allows; prints how
carrier_set() {
  local c=$1 ns=$2 on=$3
  case $c in
    veth|netkit)
      local st=up; [ "$on" = off ] && st=down
      ip -n "$ns" link set bond0p "$st"; echo "ip link set bond0p $st" ;;
    dummy) ip -n "$ns" link set bond0 carrier "$on"; echo "ip link set bond0 carrier $on" ;;
    tap|tap-plain)
      local sig=USR2 v=1; [ "$on" = off ] && { sig=USR1; v=0; }
      kill "-$sig" "${HOLDER[$c]}"; echo "TUNSETCARRIER $v on the holder's descriptor" ;;
    *) return 1 ;;
  esac
}

state() { # state NS: bond0's carrier, operstate, IPv4 neighbour 10.99.0.2, IPv6 address flags
  local ns=$1 car op nb a6
  if ! ip -n "$ns" link show bond0 >/dev/null 2>&1; then echo "bond0 gone (no device)"; return 0; fi
  car=$(ip netns exec "$ns" cat /sys/class/net/bond0/carrier 2>/dev/null || echo '?')
  op=$(ip netns exec "$ns" cat /sys/class/net/bond0/operstate 2>/dev/null || echo '?')
  nb=$(ip -n "$ns" neigh show 10.99.0.2 dev bond0 | awk '{print $NF}')
  a6=$(ip -n "$ns" -6 addr show dev bond0 scope global | awk '/inet6 fd00:99::1/ { $1 = $2 = ""; sub(/^ +/, ""); print }')
  echo "carrier ${car}, operstate ${op}, neighbour 10.99.0.2: ${nb:-none}, fd00:99::1: ${a6:-no address}"
}

# wait_dad NS: seconds until fd00:99::1 on bond0 is no longer tentative
wait_dad() {
  local ns=$1 t0 i f
  t0=$(date +%s.%N)
  for i in $(seq 1 500); do
    f=$(ip -n "$ns" -6 addr show dev bond0 2>/dev/null | grep 'inet6 fd00:99::1/' || true)
    [[ $f == *dadfailed* ]] && { echo dadfailed; return 0; }
    [ -n "$f" ] && [[ $f != *tentative* ]] && { calc "$(date +%s.%N) - $t0" | awk '{printf "%.2f s", $1}'; return 0; }
    sleep 0.01
  done
  echo "still tentative or absent after 5 s"
}

# watch_dad NS: watches fd00:99::1 on bond0 for up to 3 s (DAD may start
# again only when the link watcher has seen the carrier): was it tentative, for how long
watch_dad() {
  local ns=$1 t0 now i f seen=
  t0=$(date +%s.%N)
  for i in $(seq 1 300); do
    f=$(ip -n "$ns" -6 addr show dev bond0 2>/dev/null | grep 'inet6 fd00:99::1/' || true)
    now=$(calc "$(date +%s.%N) - $t0")
    [[ $f == *dadfailed* ]] && { echo "dadfailed at +$(printf '%.2f' "$now") s"; return 0; }
    if [ -z "$f" ] || [[ $f == *tentative* ]]; then
      seen=${seen:-$now}
    elif [ -n "$seen" ]; then
      printf 'tentative (or absent) from +%.2f s, usable at +%.2f s' "$seen" "$now"; return 0
    fi
    sleep 0.01
  done
  if [ -n "$seen" ]; then echo "tentative (or absent) from +$(printf '%.2f' "$seen") s and still after 3 s"
  else echo "never tentative in the 3 s after"; fi
}

# pings NS SECS TAG: 5 ms IPv4 and IPv6 pings to B in the background (PING4, PING6)
pings() {
  ip netns exec "$1" ping -D -i 0.005 -w "$2" 10.99.0.2 >"$W/$3-v4.txt" 2>&1 &
  PING4=$!; CASE_PIDS+=("$PING4:ping")
  ip netns exec "$1" ping -6 -D -i 0.005 -w "$2" fd00:99::2 >"$W/$3-v6.txt" 2>&1 &
  PING6=$!; CASE_PIDS+=("$PING6:ping")
}

# loss FILE: "N sent, M lost, longest gap G ms": the longest time without a
# reply, between replies or from the last one to the ping's end (its first
# reply's time + its running time); a sender blocked behind an unresolved
# neighbour sends less and loses less
loss() {
  awk '/bytes from/ { t = substr($1, 2, length($1) - 2) + 0; if (!f) f = t; if (p && t - p > g) g = t - p; p = t }
       /packets transmitted/ { s = $1; r = $4; for (i = 1; i <= NF; i++) if ($i == "time") ms = $(i + 1) + 0 }
       END { if (!p) { printf "%d sent, %d lost, no reply", s, s - r; exit }
             if (f + ms / 1000 - p > g) g = f + ms / 1000 - p
             printf "%d sent, %d lost, longest gap %.0f ms", s, s - r, g * 1000 }' "$1"
}

resolve() { # resolve NS: IPv4 and IPv6 neighbours of B resolved
  ip netns exec "$1" ping -c 1 -W 1 10.99.0.2 >/dev/null 2>&1 || true
  ip netns exec "$1" ping -6 -c 1 -W 1 fd00:99::2 >/dev/null 2>&1 || true
}

B=$W/behaviour
note() { echo "$1|$2" >>"$B"; }   # note C TEXT

props() { # props C NS: what the device reports
  local c=$1 ns=$2 f=$W/props-$1.txt e k sp
  {
    echo "### ip -d link show bond0"; ip -n "$ns" -d link show bond0
    echo "### ethtool bond0"; ip netns exec "$ns" ethtool bond0 2>&1 || true
    echo "### ethtool -k bond0"; ip netns exec "$ns" ethtool -k bond0 2>&1 || true
    for k in carrier operstate speed duplex; do
      echo "### /sys/class/net/bond0/$k: $(ip netns exec "$ns" cat "/sys/class/net/bond0/$k" 2>&1 || true)"
    done
  } >"$f"
  note "$c" "ip -d link: $(ip -n "$ns" -d link show bond0 | sed -n 3p | sed 's/^ *//; s/ addrgenmode.*//')$(ip -n "$ns" link show bond0 | grep -o 'qdisc [a-z_]*' | sed 's/^/, /')"
  e=$(ip netns exec "$ns" ethtool bond0 2>&1 | awk -F': ' '/Speed|Duplex|Link detected/ { gsub(/^[ \t]+/, "", $1); printf "%s%s %s", (n++ ? ", " : ""), $1, $2 }')
  note "$c" "ethtool: ${e:-nothing}"
  note "$c" "/sys: carrier $(ip netns exec "$ns" cat /sys/class/net/bond0/carrier 2>&1), operstate $(ip netns exec "$ns" cat /sys/class/net/bond0/operstate 2>&1), speed $(ip netns exec "$ns" cat /sys/class/net/bond0/speed 2>&1 | sed 's/^cat: .*: //')"
  k=$(ip netns exec "$ns" ethtool -k bond0 | awk -F': ' '/^(tx-checksumming|scatter-gather|tcp-segmentation-offload|generic-segmentation-offload|tx-udp-segmentation|generic-receive-offload):/ { printf "%s%s %s", (n++ ? ", " : ""), $1, $2 }')
  note "$c" "ethtool -k: $k"
  if e=$(ip netns exec "$ns" ethtool -s bond0 speed 20000 duplex full autoneg off 2>&1); then
    sp=$(ip netns exec "$ns" cat /sys/class/net/bond0/speed 2>&1 || true)
    note "$c" "ethtool -s bond0 speed 20000 duplex full autoneg off: works (/sys speed now $sp)"
  else
    note "$c" "ethtool -s bond0 speed 20000 duplex full autoneg off: refused ($(echo "$e" | tail -1))"
  fi
}

# flap C NS I: carrier off for 0.2 s under 5 ms pings (repetition I)
flap() {
  local c=$1 ns=$2 i=$3 how off on dad tag=flap-$1-$RK-$3
  resolve "$ns"
  pings "$ns" 4 "$tag"
  pause 1
  how=$(carrier_set "$c" "$ns" off)
  pause 0.1
  off=$(state "$ns")
  pause 0.1
  carrier_set "$c" "$ns" on >/dev/null
  on=$(state "$ns")
  dad=$(watch_dad "$ns")
  wait "$PING4" "$PING6" || true
  note "$c" "[$RK] carrier off 0.2 s ($how), $i/$REPEATS: at +0.1 s $off; on again: $on; IPv6 address $dad; 5 ms pings: IPv4 $(loss "$W/$tag-v4.txt"), IPv6 $(loss "$W/$tag-v6.txt")"
  pause 0.5
}

# holder_death C PERSIST I: SIGKILL the TAP's holder under 5 ms pings, start
# it again 0.2 s later (repetition I, fresh namespaces)
holder_death() {
  local c=$1 persist=$2 i=$3 ns tag t0 t1 mode=vnet what dead back dad
  [ "$c" = tap-plain ] && mode=plain
  tag=kill-$c-$RK-$persist-$i; what=$([ "$persist" = 1 ] && echo "persistent TAP" || echo "TAP")
  setup "$c" 1 "$persist" || return 0
  ns=${NSA[$c]}
  wait_dad "$ns" >/dev/null
  resolve "$ns"
  pings "$ns" 6 "$tag"
  pause 1
  t0=$(date +%s.%N)
  kill -KILL "${HOLDER[$c]}"; wait "${HOLDER[$c]}" 2>/dev/null || true
  pause 0.05
  dead=$(state "$ns")
  pause 0.15
  start_holder "$ns" "$mode" "$persist" || die "$c: the TAP holder did not start again: $REASON"
  HOLDER[$c]=$HOLDER_PID
  [ "$persist" = 1 ] || configure_logical "$ns" 1
  t1=$(date +%s.%N)
  back=$(state "$ns")
  dad=$(watch_dad "$ns")
  wait "$PING4" "$PING6" || true
  note "$c" "[$RK] $what holder SIGKILLed, $i/$REPEATS: at +0.05 s $dead; started again$([ "$persist" = 1 ] || echo ' and bond0 configured again') at +$(calc "($t1 - $t0) * 1000" | awk '{printf "%.0f", $1}') ms: $back; IPv6 address $dad; 5 ms pings: IPv4 $(loss "$W/$tag-v4.txt"), IPv6 $(loss "$W/$tag-v6.txt")"
  ip -n "$ns" link del bond0 2>/dev/null || true   # a persistent TAP outlives its holder
  teardown_case
}

behaviour() { # behaviour C
  local c=$1 ns err i rk kinds=(tc) p
  [ "$BPF_OK" = 1 ] && kinds+=(bpf)
  log "behaviour: $c"
  RK=tc
  setup "$c" 1 || return 0
  ns=${NSA[$c]}
  note "$c" "IPv6 DAD at start: address usable after $(wait_dad "$ns")"
  props "$c" "$ns"
  case $c in
    veth|netkit) note "$c" "carrier without a process: yes, the idle peer's admin state (ip link set bond0p down|up); the kernel keeps it" ;;
    dummy) note "$c" "carrier without a process: yes, ip link set bond0 carrier off|on; the kernel keeps it" ;;
    tap|tap-plain)
      err=$(ip netns exec "$ns" "$PY" "$W/tun.py" probe bond0 "$([ "$c" = tap ] && echo vnet || echo plain)" 2>&1) || true
      note "$c" "carrier without a process: only through a descriptor of the TAP (TUNSETCARRIER); a second process: $err" ;;
  esac
  teardown_case
  for rk in "${kinds[@]}"; do
    RK=$rk
    setup "$c" 1
    wait_dad "${NSA[$c]}" >/dev/null
    for ((i = 1; i <= REPEATS; i++)); do flap "$c" "${NSA[$c]}" "$i"; done
    teardown_case
  done
  case $c in
    tap|tap-plain)
      for rk in "${kinds[@]}"; do
        RK=$rk
        for p in 0 1; do
          for ((i = 1; i <= REPEATS; i++)); do holder_death "$c" "$p" "$i"; done
        done
      done ;;
    *) note "$c" "daemon death: no process holds bond0; its carrier and addresses stay as set" ;;
  esac
  RK=$REDIRECT
}

# --------------------------------------------------------------------- run --
: >"$W/runs"; : >"$B"
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "bench-logical: candidates $CANDIDATES; iperf3 -P $FLOWS -t $SECS both ways and ping -f -w $SECS, $ROUNDS rounds; $(nproc) CPUs; $(uname -r)"
probe_bpf
[ "$BPF_OK" = 1 ] || log "no tcx BPF redirect here ($BPF_WHY): the behaviour runs with tc's redirect only"
[ "$REDIRECT" = tc ] || [ "$BPF_OK" = 1 ] || die "--redirect bpf: $BPF_WHY"
AVAIL=()
declare -A UNAVAIL=()
for c in "${CAND_LIST[@]}"; do
  if setup "$c" 0; then
    AVAIL+=("$c")
    start_iperf_server "${NSB[$c]}"
    wait_ping "${NSA[$c]}" 10.99.0.2
    WHY[$c]=$(ip netns exec "${NSA[$c]}" ethtool -k bond0 | awk -F': ' '/^(tx-checksumming|tcp-segmentation-offload|generic-segmentation-offload):/ { printf "%s%s %s", (n++ ? ", " : ""), $1, $2 }')
    [ -n "${HOLDER[$c]:-}" ] && WHY[$c]="${WHY[$c]}; TUNSETOFFLOAD: $(awk '/^ready/ {print $2}' "$W"/holder-"${NSA[$c]}"-*.log)"
    log "  $c: ${WHY[$c]}"
  else
    UNAVAIL[$c]=$REASON
    log "  $c: not available on this kernel: $REASON"
  fi
done
[ ${#AVAIL[@]} -gt 0 ] || die "no candidate could be made"
log "redirects: $(redirects "$REDIRECT")"
for ((r = 1; r <= ROUNDS; r++)); do
  order=()
  n=${#AVAIL[@]}
  for ((i = 0; i < n; i++)); do order+=("${AVAIL[$(((i + r - 1) % n))]}"); done
  for ((try = 1; ; try++)); do
    bg0=$(wait_quiet)
    log "round $r/$ROUNDS: ${order[*]} (background before it: $bg0% of $(nproc) CPUs busy)"
    for c in "${order[@]}"; do bulk "$c" "$r" fwd; done
    for c in "${order[@]}"; do bulk "$c" "$r" rev; done
    for c in "${order[@]}"; do rr "$c" "$r"; done
    bg1=$(background)
    BG[$r]="$bg0%, after it $bg1%"
    if [ "$QUIET" = 100 ] || { [ "$bg0" -le "$QUIET" ] && [ "$bg1" -le "$QUIET" ]; }; then break; fi
    if [ "$try" -ge 3 ]; then
      echo "WARNING: round $r measured on a busy machine (background $bg0% before, $bg1% after; 3 tries)" >>"$W/warnings"
      break
    fi
    log "  round $r again: the machine was busy around it (background $bg0% before, $bg1% after; --quiet $QUIET)"
    awk -F'|' -v r="$r" '$1 != r' "$W/runs" >"$W/runs.tmp" && mv "$W/runs.tmp" "$W/runs"
  done
  while IFS='|' read -r _ c d _ _ _ _ _ m i o; do
    frames_ok "$m" "$i" "$o" ||
      echo "WARNING: round $r, $c, $d: members carried $m frames for $i IP packets; bond0's own xmit path $o" >>"$W/warnings"
  done < <(awk -F'|' -v r="$r" '$1 == r && $3 != "rr"' "$W/runs")
  round_report "$r" "${order[*]}" "${BG[$r]}" | tee -a "$W/rounds" >&2
done
teardown_case
FILTER_ROUNDS=$FILTER
MEASURED=$(date +%s)
if [ "$BEHAVIOUR" = 1 ]; then
  for c in "${AVAIL[@]}"; do behaviour "$c"; done
fi
END=$(date +%s)
ROOT_LINKS1=$(ip -o link show | awk -F': ' '{print $2}' | sort)
[ "$ROOT_LINKS0" = "$ROOT_LINKS1" ] || echo "WARNING: the root namespace's interfaces changed during the run: $(comm -13 <(echo "$ROOT_LINKS0") <(echo "$ROOT_LINKS1") | tr '\n' ' ')" >>"$W/warnings"

# ------------------------------------------------------------------ report --
echo "bench-logical: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'); iperf3 $(iperf3 --version | head -1 | awk '{print $2}'); $(ip -V)"
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r); load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "topology: A's bond0 egress -> m1, m1 and m2 ingress -> bond0 ingress: $(FILTER=$FILTER_ROUNDS redirects "$REDIRECT"); m1, m2 <-veth-> b1, b2 in B's bridge br0 (isolated ports)"
echo "runs: iperf3 -P $FLOWS -t $SECS A->B and -R (B->A); ping -f -w $SECS (rr); $ROUNDS rounds, each candidate once a round, order rotated"
for c in "${AVAIL[@]}"; do echo "  $c: ${WHY[$c]}"; done
for c in "${CAND_LIST[@]}"; do [ -n "${UNAVAIL[$c]:-}" ] && echo "  $c: not measured: not available on this kernel: ${UNAVAIL[$c]}"; done
if [ -s "$W/runs" ]; then
echo
cat "$W/rounds"
echo
echo "summary: median of $ROUNDS rounds; x = median of the per-round ratios to ${AVAIL[0]}"
awk -F'|' -v order="${AVAIL[*]}" -v base="${AVAIL[0]}" '
  function med(s,   a, n, m, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    m = int((n + 1) / 2); return (n % 2 ? a[m] : (a[m] + a[m + 1]) / 2)
  }
  { v[$1, $2, $3] = $4; g[$1, $2, $3] = ($3 == "rr" ? 0 : $6 / ($5 / 1e9)); rounds[$1] = 1
    if ($3 != "rr") { frames[$2] += 1; d = $9 - $10; if (d < 0) d = -d; if (!($11 == 0 && $10 > 0 && d <= 0.005 * $10 + 50)) bad[$2] += 1 } }
  END {
    n = split(order, o, " ")
    f = "%-10s %8s %6s %9s %6s  %8s %6s %9s %6s  %9s %6s  %s\n"
    printf f, "candidate", "A->B", "x", "CPU-s/GB", "x", "B->A", "x", "CPU-s/GB", "x", "rr/s", "x", "frames once"
    printf f, "", "Gbit/s", "", "", "", "Gbit/s", "", "", "", "", "", ""
    for (k = 1; k <= n; k++) {
      c = o[k]
      line = sprintf("%-10s", c)
      split("fwd rev rr", ds, " ")
      for (j = 1; j <= 3; j++) {
        dd = ds[j]; sv = ""; sr = ""; sg = ""; sx = ""
        for (r in rounds) {
          sv = sv " " v[r, c, dd]; sr = sr " " (v[r, base, dd] > 0 ? v[r, c, dd] / v[r, base, dd] : 0)
          sg = sg " " g[r, c, dd]; sx = sx " " (g[r, base, dd] > 0 ? g[r, c, dd] / g[r, base, dd] : 0)
        }
        if (dd == "rr") line = line sprintf(" %9.0f %6.3f ", med(sv), med(sr))
        else line = line sprintf(" %8.2f %6.3f %9.3f %6.3f ", med(sv), med(sr), med(sg), med(sx))
      }
      printf "%s %s\n", line, (bad[c] ? bad[c] " of " frames[c] " runs NOT" : "yes, all " frames[c] " runs")
    }
  }' "$W/runs"
echo
echo "per-round ratios to ${AVAIL[0]}, sorted (A->B Gbit/s | A->B CPU-s/GB | B->A Gbit/s | B->A CPU-s/GB | rr/s):"
awk -F'|' -v order="${AVAIL[*]}" -v base="${AVAIL[0]}" '
  function srt(s,   a, n, i, j, t, o) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    for (i = 1; i <= n; i++) o = o sprintf("%s%.2f", (i > 1 ? " " : ""), a[i]); return o
  }
  { v[$1, $2, $3] = $4; g[$1, $2, $3] = ($3 == "rr" ? 0 : $6 / ($5 / 1e9)); rounds[$1] = 1 }
  END {
    n = split(order, o, " ")
    for (k = 2; k <= n; k++) {
      c = o[k]; line = ""
      split("fwd rev rr", ds, " ")
      for (j = 1; j <= 3; j++) {
        d = ds[j]; sr = ""; sx = ""
        for (r in rounds) { sr = sr " " v[r, c, d] / v[r, base, d]; if (d != "rr") sx = sx " " g[r, c, d] / g[r, base, d] }
        line = line (j > 1 ? " | " : "") srt(sr) (d != "rr" ? " | " srt(sx) : "")
      }
      printf "  %-10s %s\n", c, line
    }
  }' "$W/runs"
echo
echo "every run (Gbit/s A->B | B->A | rr/s, by round):"
awk -F'|' -v order="${AVAIL[*]}" '
  { v[$2, $3] = v[$2, $3] sprintf("%s%.2f", (v[$2, $3] == "" ? "" : " "), $4) }
  END { n = split(order, o, " "); for (k = 1; k <= n; k++) printf "  %-10s %s | %s | %s\n", o[k], v[o[k], "fwd"], v[o[k], "rev"], v[o[k], "rr"] }' "$W/runs"
fi
if [ "$BEHAVIOUR" = 1 ]; then
  echo
  echo "behaviour (fresh namespaces, IPv6 with DAD; ip/ethtool dumps in props-*.txt); [tc]: $(FILTER=$FILTER_ROUNDS redirects tc)$([ "$BPF_OK" = 1 ] && echo "; [bpf]: $(redirects bpf)")"
  for c in "${AVAIL[@]}"; do
    echo "  $c:"
    awk -F'|' -v c="$c" '$1 == c { sub(/^[^|]*\|/, ""); print "    - " $0 }' "$B"
  done
fi
if [ -s "$W/warnings" ]; then echo; cat "$W/warnings"; fi
echo
echo "CPU-s/GB: the whole machine's busy CPU (/proc/stat: user+nice+system+irq+softirq+steal) over the run / GB iperf3 received"
echo "frames once: A's IP packets (IPv4+IPv6 OutRequests for A->B, InReceives for B->A) = the packets on m1+m2 in that direction (within 0.5% + 50 for ARP and B's broadcasts), and 0 through bond0's own xmit path (its tx_packets + tx_dropped + the idle peer's rx_packets)"
echo "time: rounds $((MEASURED - START)) s, behaviour $((END - MEASURED)) s"
if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP" && cp -r "$W"/. "$KEEP"/ && log "raw outputs copied to $KEEP"
fi
