#!/usr/bin/env bash
# bench-switch.sh — lagkit's switch with each forwarding engine (`--engine
# bpf`: a tc BPF program on every port's ingress forwards in the kernel;
# `--engine userspace`: the daemon's loop over packet sockets), side by side
# in one run with a bare veth and Open vSwitch's userspace switch, between
# the same lagkit bonds: is the switch ever the bottleneck, and what does the
# kernel engine buy? It checks the switch's targets and prints each as met /
# NOT met.
#
# Topology (fresh network namespaces per case, removed after it); K = 2
# links per bond, K = 4 for the both-ways rows. The unshaped cases (the bare
# veth and each engine's 2 x 2 testbed, bulk and socketprocs) are up at once
# and measured in rounds, each case once a round (see Measured):
#
#   A [lagkit up: bond0 = eth1..ethK, 802.3ad fast, layer3+4]  10.66.0.1
#       eth1..ethK <-veth-> a1..aK     (S's ports Gi1/1 .. Gi1/K)
#   S [the switch: channel 1 = a1..aK, channel 2 = b1..bK, LACP active fast]
#       b1..bK <-veth-> eth1..ethK     (S's ports Gi1/K+1 .. Gi1/2K)
#   B [lagkit up: bond0, the same]                             10.66.0.2
#
# Switches:
#   lagkit: `lagkit switch --engine E`, `port-channel load-balance
#           src-dst-port`. Once the bonds aggregate, `lagkit switch show
#           platform forwarding --json` must name engine E, or the run stops.
#   OVS:    ovsdb-server + ovs-vswitchd, br0 (netdev datapath) with two LACP
#           bonds (lacp=active, balance-tcp, lacp-time=fast), K = 2. A
#           userspace switch that reads frames without virtio-net headers
#           cannot take the hosts' 64 KB GSO frames or partial checksums, so
#           for OVS both bonds run with `offloads = false` (lagkit turns off
#           tx checksumming, TSO and GSO on the members; see
#           docs/interop.md). lagkit's switch (either engine) takes the bonds
#           as they are.
#   bare:   one veth C <-> D: the reference link, unshaped and shaped.
#
# "Shaped" puts `tbf rate 1gbit burst 256kb latency 50ms` on both ends of
# every link (the hosts' members and the switch's ports; for OVS after the
# bonds exist, with qos=linux-noop so OVS leaves it), and checks afterwards
# that every tbf is still there and counted traffic (a WARNING otherwise).
#
# Client ports: Cisco's src-dst-port puts a flow in bucket (source port XOR
# destination port) & 7, and a channel deals the 8 buckets out over its
# members (2 links: Load 0x55 / 0xAA). Linux's connect() takes ephemeral
# ports of one parity, so every flow to iperf3's port 5201 lands in an odd
# bucket: hash polarization, shown in its own row ("kernel ports"). The
# capacity rows give iperf3 consecutive client ports (--cport 40000), which
# fill the 8 buckets evenly, for OVS too.
#
# Rows (lagkit: one row per engine; --only picks the groups):
#   unshaped  bare veth unshaped, -P flows (the reference); lagkit 2 x 2
#             links unshaped, -P flows: ratio to the bare veth, and the
#             whole machine's CPU per GB against the bare veth's
#   shaped    bare veth shaped, -X flows (one link); lagkit 2 x 2 links
#             shaped, -X flows: ratio to 2 x the bare shaped veth; and again
#             with the kernel's client ports (no target)
#   bidir     lagkit 4 x 4 links shaped, iperf3 --bidir with -X flows each
#             way: ratio to 2 directions x 4 x the bare shaped veth
#   rr        socketprocs: `lagkit load client --kind socketprocs --procs 4
#             --size 4K` (4 processes x 4 server processes = 16 connections,
#             one 4 KB request and its 4 KB reply in flight on each) through
#             2 x 2 unshaped links, transactions/s; the bare veth the same,
#             for reference
#   ovs       OVS 2 x 2 links unshaped (-P flows) and shaped (-X flows)
# The bare veth rows run whenever a group needs them.
#
# Targets (every ratio measured in this run):
#   bpf unshaped >= 0.7 x the bare veth's Gbit/s; its whole-machine CPU-s/GB
#     <= 1.5 x the bare veth's; >= 1.5 x the userspace engine's Gbit/s
#   userspace unshaped >= 5 x Open vSwitch (bpf vs OVS printed, no target)
#   2 x 2 shaped, each engine: >= 0.99 x the links (2 x bare shaped)
#   4 x 4 shaped both ways, each engine: >= 0.97 x 2 x 4 x bare shaped
#   socketprocs: bpf >= 3 x userspace transactions/s
#
# Measured: iperf3 A -> B (both ways: --bidir, received in both directions
# added), REPS runs, the median by throughput. An unshaped row's flows come
# from SENDERS iperf3 processes at once (-S; one per CPU by default), each
# to a server of its own: iperf3 before 3.16 sends all of a process's
# flows from one thread, and a veth delivers to the receiving host's stack
# in the sending CPU's softirq, so with one process a path is bound by
# that thread and the second core idles (where the userspace engine's
# thread then runs for free). Shaped rows, which carry 1 Gbit/s per link,
# keep one process. The unshaped cases' runs are
# interleaved: round r runs the bare veth and each engine once, in an order
# rotated by one each round, so that a shared machine whose speed drifts
# over minutes moves every case alike; each round's ratios are printed as
# information, to show the noise. The switch process's CPU
# (utime+stime from /proc) per GB: under the bpf engine the kernel forwards
# (softirq, charged to no process), so compare engines by the whole
# machine's busy CPU per GB (/proc/stat; includes iperf3, the bonds and
# whatever else runs); iperf3's retransmits; what each of S's ports sent
# (kernel counters: toward B, and toward A both ways), so an uneven spread
# shows. socketprocs: transactions/s (the median run), the switch's CPU % of
# one core, and the whole machine's busy CPU per transaction. Printed as
# information: the busy cores of each unshaped case (GB/s x CPU-s/GB), which
# shows when a case is bound by one pipeline stage rather than by the CPUs;
# and the ceilings of the two targets against the userspace engine: what
# the bpf engine (and for socketprocs a bare veth) would carry with every
# core busy at the cost per GB or per transaction it had in this run. A
# target above its ceiling needs the path to cost less per unit than it
# did; a case that did not fill the cores may cost less when fuller, so
# its ceiling is an estimate.
#
# Usage: sudo scripts/bench-switch.sh [-t SECS] [-r REPS] [-P FLOWS]
#          [-X FLOWS] [-S SENDERS] [--engines LIST] [--only GROUPS] [--quick]
#          [--no-ovs] [--no-build]
#   -t SECS    iperf3 and socketprocs duration per run (default 8)
#   -r REPS    runs per case, the median reported (default 3)
#   -P FLOWS   TCP flows of the unshaped rows (default 8)
#   -X FLOWS   TCP flows of the shaped rows, each way both ways (default 32)
#   -S SENDERS iperf3 processes of an unshaped row, its flows split among
#              them, each to a server of its own (default: one per CPU)
#   --engines LIST  switch engines, comma-separated (default bpf,userspace)
#   --only GROUPS   comma-separated subset of unshaped,shaped,bidir,rr,ovs
#              (default all)
#   --quick    -t 3 -r 1 (a later -t or -r still applies)
#   --no-ovs   skip Open vSwitch (its target then reads "not measured")
#   --no-build use the lagkit binary already built
# Env: CARGO_TARGET_DIR (default <repo>/target). About 7 minutes with the
# defaults (15 rows x 3 runs x 8 s, both engines, OVS), build excluded;
# about 1.5 with --quick.
# Namespaces are named lkbs<PID>-*; a trap tears everything down on exit,
# error, Ctrl-C or SIGTERM; logs of a failed run stay in /tmp/lkbs<PID>.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=8
REPS=3
FLOWS=8
XFLOWS=32
SENDERS=$(nproc)
OVS=1
BUILD=1
ENGINES=bpf,userspace
ONLY=unshaped,shaped,bidir,rr,ovs
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECS=${2:-}; shift; shift || true ;;
    -r) REPS=${2:-}; shift; shift || true ;;
    -P) FLOWS=${2:-}; shift; shift || true ;;
    -X) XFLOWS=${2:-}; shift; shift || true ;;
    -S) SENDERS=${2:-}; shift; shift || true ;;
    --engines) ENGINES=${2:-}; shift; shift || true ;;
    --only) ONLY=${2:-}; shift; shift || true ;;
    --quick) SECS=3; REPS=1; shift ;;
    --no-ovs) OVS=0; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-switch.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$SECS" "$REPS" "$FLOWS" "$XFLOWS" "$SENDERS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-switch.sh: -t, -r, -P, -X, -S take numbers >= 1, not '$v'" >&2; exit 2; }
done
[ "$SENDERS" -le "$FLOWS" ] || SENDERS=$FLOWS
IFS=, read -r -a ENGINE_LIST <<<"$ENGINES"
[ ${#ENGINE_LIST[@]} -gt 0 ] || { echo "bench-switch.sh: --engines takes bpf and/or userspace" >&2; exit 2; }
for e in "${ENGINE_LIST[@]}"; do
  [[ $e == bpf || $e == userspace ]] || { echo "bench-switch.sh: --engines takes bpf and/or userspace, not '$e'" >&2; exit 2; }
done
IFS=, read -r -a GROUP_LIST <<<"$ONLY"
[ ${#GROUP_LIST[@]} -gt 0 ] || { echo "bench-switch.sh: --only takes unshaped,shaped,bidir,rr,ovs" >&2; exit 2; }
for g in "${GROUP_LIST[@]}"; do
  [[ $g =~ ^(unshaped|shaped|bidir|rr|ovs)$ ]] || { echo "bench-switch.sh: --only takes unshaped,shaped,bidir,rr,ovs, not '$g'" >&2; exit 2; }
done
want() { [[ ,$ONLY, == *,$1,* ]]; }   # want GROUP: that group of rows was asked for
[ "$OVS" = 1 ] && ! want ovs && OVS=0

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
LAGKIT=$TARGET/release/lagkit
PFX=lkbs$$
W=/tmp/$PFX
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
TBF=(tbf rate 1gbit burst 256kb latency 50ms)
HZ=$(getconf CLK_TCK)
# The first client port of every switch row: consecutive ports fill Cisco's
# 8 buckets evenly (see the header).
CPORT=40000
# socketprocs: client processes (each connects to every one of the server's
# 4 processes, ports 7000..7003) and the request and reply size.
SP_PROCS=4
SP_SIZE=4K

# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

tools=(ip tc iperf3 jq awk ss timeout)
[ "$OVS" = 1 ] && tools+=(ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl)
bench_start bench-switch.sh lkbs "iproute2 iperf3 jq openvswitch-switch" "${tools[@]}"

# start_iperf_servers NS: the iperf3 servers of SENDERS clients in NS, on
# ports 5201, 5209, 5217, ...: 8 apart, so that every server port has the
# same low 3 bits and a flow's bucket under Cisco's src-dst-port (source
# XOR destination port, & 7) and the bonds' layer3+4 parity depend on its
# client port alone, as with one server.
start_iperf_servers() {
  local q
  start_iperf_server "$1"
  for ((q = 1; q < SENDERS; q++)); do
    start_server "$1" $((5201 + 8 * q)) iperf3 iperf3 -s -p $((5201 + 8 * q))
  done
}

# iperf_clients NSA DST FLOWS N OUT ERR CPORT [ARG...]: FLOWS flows from N
# iperf3 clients at once in NSA (client q to server port 5201 + 8q, its
# share of the flows on consecutive client ports from CPORT on, unless
# CPORT is empty), their JSON results merged into OUT as one run's: bits/s,
# bytes and retransmits added, every client's error joined. One iperf3
# process before 3.16 sends all of its flows from one thread; an unshaped
# path can carry more than that thread sends.
iperf_clients() {
  local nsa=$1 dst=$2 flows=$3 n=$4 out=$5 err=$6 cport=$7 q per off=0 pid
  local -a pids=() cx
  shift 7
  # One client: its JSON as iperf3 wrote it (--bidir's reverse sums too).
  if [ "$n" -le 1 ]; then
    cx=(); [ -n "$cport" ] && cx=(--cport "$cport")
    ip netns exec "$nsa" iperf3 -c "$dst" -P "$flows" -t "$SECS" "$@" "${cx[@]}" -J >"$out" 2>"$err" || true
    return 0
  fi
  : >"$err"
  for ((q = 0; q < n; q++)); do
    per=$((flows / n + (q < flows % n ? 1 : 0)))
    cx=(); [ -n "$cport" ] && cx=(--cport "$((cport + off))")
    ip netns exec "$nsa" iperf3 -c "$dst" -p $((5201 + 8 * q)) -P "$per" -t "$SECS" "$@" "${cx[@]}" -J >"$out.$q" 2>>"$err" &
    pids+=($!)
    off=$((off + per))
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  local -a parts=()
  for ((q = 0; q < n; q++)); do parts+=("$out.$q"); done
  jq -s '([.[] | .error // empty] | if length > 0 then {error: join("; ")} else {} end) +
    {end: {sum_received: {bits_per_second: (map(.end.sum_received.bits_per_second // 0) | add),
                          bytes: (map(.end.sum_received.bytes // 0) | add)},
           sum_sent: {retransmits: (map(.end.sum_sent.retransmits // 0) | add)}}}' "${parts[@]}" >"$out" 2>>"$err" || : >"$out"
  rm -f "${parts[@]}"
}

# --------------------------------------------------------------- testbed --
# The current case's switch namespace and S's ports toward A (a1..aK) and
# toward B (b1..bK); set by testbed.
NA=; NS_=; NB=
PORTS_A=(); PORTS_B=()

# testbed K [SUFFIX]: namespaces A, S, B (named a, s, b with SUFFIX) and K
# links A-S and K links S-B.
testbed() {
  local k=$1 x=${2:-} i
  new_ns "a$x"; NA=$NS; new_ns "s$x"; NS_=$NS; new_ns "b$x"; NB=$NS
  PORTS_A=(); PORTS_B=()
  for ((i = 1; i <= k; i++)); do
    ip link add "eth$i" netns "$NA" type veth peer name "a$i" netns "$NS_"
    ip link add "eth$i" netns "$NB" type veth peer name "b$i" netns "$NS_"
    ip -n "$NS_" link set "a$i" up; ip -n "$NS_" link set "b$i" up
    PORTS_A+=("a$i"); PORTS_B+=("b$i")
  done
}

# members: the hosts' members of the current testbed, eth1..ethK.
members() {
  local i
  for ((i = 1; i <= ${#PORTS_A[@]}; i++)); do echo "eth$i"; done
}

# host NS ADDR OFFLOADS: `lagkit up` of bond0 over eth1..ethK in NS.
host() {
  local ns=$1 cfg=$W/$1.toml m
  m=$(members | sed 's/.*/"&"/' | paste -sd, - | sed 's/,/, /g')
  printf 'name = "bond0"\nmode = "802.3ad"\nmembers = [%s]\nlacp_rate = "fast"\nxmit_hash_policy = "layer3+4"\naddress = ["%s"]\noffloads = %s\n' "$m" "$2" "$3" >"$cfg"
  ip netns exec "$ns" "$LAGKIT" up "$cfg" >"$W/$ns-lagkit.log" 2>&1 &
  CASE_PIDS+=("$!:lagkit")
}

shape_all() {
  local -a m; mapfile -t m < <(members)
  shape "$NA" "${m[@]}"; shape "$NB" "${m[@]}"; shape "$NS_" "${PORTS_A[@]}" "${PORTS_B[@]}"
}

check_shaping() { # check_shaping ID
  local bad; local -a m; mapfile -t m < <(members)
  bad="$(tbf_check "$NA" "${m[@]}")$(tbf_check "$NB" "${m[@]}")$(tbf_check "$NS_" "${PORTS_A[@]}" "${PORTS_B[@]}")"
  [ -z "$bad" ] || echo "$1|WARNING: tbf missing or idle ($1): $bad" >>"$W/warnings"
}

alive() { # alive PID: PID runs (and is not a zombie)
  [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# bonds_ready SWITCHPID SWITCHLOG: both hosts aggregate K ports (LACP through
# the switch), and the switch still runs.
bonds_ready() {
  local k=${#PORTS_A[@]} ns n i
  for i in $(seq 1 150); do
    alive "$1" || die "the switch exited: $(tail -5 "$2")"
    n=0
    for ns in "$NA" "$NB"; do
      [ "$(ip netns exec "$ns" "$LAGKIT" status --name bond0 --json 2>/dev/null | jq -r '.[0].lacp.number_of_ports // 0' 2>/dev/null || echo 0)" = "$k" ] && n=$((n + 1))
    done
    [ "$n" = 2 ] && return 0
    sleep 0.2
  done
  die "the bonds did not aggregate $k ports through the switch in 30 s (logs in $W)"
}

declare -A ENGINE_WHY=()
# check_engine ENGINE LOG: the switch in NS_ must forward with ENGINE.
check_engine() {
  local j e why
  j=$(ip netns exec "$NS_" "$LAGKIT" switch show platform forwarding --json 2>"$W/forwarding.err") ||
    die "lagkit switch show platform forwarding in $NS_ failed: $(cat "$W/forwarding.err") (log: $2)"
  e=$(jq -r '.engine // ""' <<<"$j" 2>/dev/null || true)
  why=$(jq -r '.why // ""' <<<"$j" 2>/dev/null || true)
  [ "$e" = "$1" ] ||
    die "lagkit switch --engine $1 runs engine '${e:-none}' (${why:-no reason given}), not the '$1' asked for (show platform forwarding: $j; log: $2)"
  ENGINE_WHY[$1]=$why
}

# ------------------------------------------------------------- measuring --
port_bytes() { # port_bytes NS IF...: tx bytes of each, "N N ..."
  local ns=$1 i; shift
  for i in "$@"; do echo -n "$(ip netns exec "$ns" cat "/sys/class/net/$i/statistics/tx_bytes") "; done
}

# port_rates BEFORE AFTER NB: Gbit/s of each port over SECS, "x/x" for the
# first NB (toward B), then "; to A x/x" for the rest.
port_rates() {
  awk -v a="$1" -v b="$2" -v nb="$3" -v s="$SECS" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); o = ""
    for (i = 1; i <= n; i++) o = o (i == 1 ? "" : (i == nb + 1 ? "; to A " : "/")) sprintf("%.2f", (y[i] - x[i]) * 8 / 1e9 / s)
    print (o == "" ? "-" : o) }'
}

# measure ID LABEL ENGINE SHAPED BIDIR FLOWS NSA DST "PIDS" [NSS [CPORT]]:
# REPS iperf3 runs A -> B (--bidir if BIDIR=1: FLOWS flows each way; client
# ports CPORT, CPORT+1, ... when given, else the kernel's); S's ports' tx
# counters read in NSS (PORTS_B, and PORTS_A both ways). The median by
# throughput goes to $W/results as
#   id|label|engine|links|shaped|bidir|flows|gbps|A->B|B->A|cpu-s/GB|all-s/GB|retrans|runs|port Gbit/s
measure() {
  local r
  for ((r = 1; r <= REPS; r++)); do measure_run "$r" "$@"; done
  measure_row "$@"
}

# measure_run R ID LABEL ENGINE SHAPED BIDIR FLOWS NSA DST "PIDS" [NSS
# [CPORT]]: run R of measure's, appended to $W/ID.reps.
measure_run() {
  local r=$1 id=$2 label=$3 engine=$4 shaped=$5 bidir=$6 flows=$7 nsa=$8 dst=$9 pids=${10} nss=${11:-} cport=${12:-}
  local out c0 c1 s0 s1 p0 p1 tries step links senders=1 cp= ports=() bx=()
  local -a pidv; read -r -a pidv <<<"$pids"
  [ "$bidir" = 1 ] && bx=(--bidir)
  if [ -n "$nss" ]; then
    ports=("${PORTS_B[@]}"); [ "$bidir" = 1 ] && ports+=("${PORTS_A[@]}")
    links=${#PORTS_B[@]}
  else links=1; fi
  # A run's client ports are in TIME_WAIT after it: the next run takes the
  # next ones, a multiple of 8 further on (the same low bits, so the same buckets).
  step=$(( (flows * (bidir + 1) + 7) / 8 * 8 )); [ "$step" -lt 64 ] && step=64
  [ -z "$cport" ] || [ $((cport + REPS * step)) -le 65535 ] ||
    die "-r $REPS x $((flows * (bidir + 1))) client ports from $cport do not fit below 65536: fewer runs or flows"
  [ "$r" = 1 ] && : >"$W/$id.reps"
  [ -n "$cport" ] && cp=$((cport + (r - 1) * step))
  # an unshaped row's flows come from SENDERS processes
  [ "$shaped" = 0 ] && [ "$bidir" = 0 ] && senders=$SENDERS
  out=$W/$id.$r.json
  tries=0
  while :; do
    c0=$(cpu_of "${pidv[@]}"); s0=$(sys_busy); p0=; [ -z "$nss" ] || p0=$(port_bytes "$nss" "${ports[@]}")
    iperf_clients "$nsa" "$dst" "$flows" "$senders" "$out" "$W/$id.$r.err" "$cp" "${bx[@]}"
    c1=$(cpu_of "${pidv[@]}"); s1=$(sys_busy); p1=; [ -z "$nss" ] || p1=$(port_bytes "$nss" "${ports[@]}")
    if jq -e '.error' "$out" >/dev/null 2>&1 || ! jq -e '.end.sum_received.bytes > 0' "$out" >/dev/null 2>&1; then
      # the server may still be busy with the run before
      if grep -q busy "$out" && [ $tries -lt 20 ]; then tries=$((tries + 1)); sleep 0.3; continue; fi
      die "iperf3 ($id run $r) failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(cat "$W/$id.$r.err")"
    fi
    break
  done
  # with --bidir, .end.sum_received is A->B and .end.sum_received_bidir_reverse is B->A
  if [ "$bidir" = 1 ] && ! jq -e '.end.sum_received_bidir_reverse.bytes > 0' "$out" >/dev/null 2>&1; then
    die "iperf3 --bidir ($id run $r) reported nothing received B->A (.end.sum_received_bidir_reverse): see $out"
  fi
  jq -r --arg c "$(calc "$c1 - $c0")" --arg s "$(calc "$s1 - $s0")" --arg p "$(port_rates "$p0" "$p1" "$links")" '
    .end.sum_received as $f | (.end.sum_received_bidir_reverse // {bits_per_second: 0, bytes: 0}) as $b |
    [($f.bits_per_second + $b.bits_per_second) / 1e9, $f.bytes + $b.bytes, $c, $s,
     (.end.sum_sent.retransmits // 0) + (.end.sum_sent_bidir_reverse.retransmits // 0),
     $f.bits_per_second / 1e9, $b.bits_per_second / 1e9, $p] | @tsv' "$out" >>"$W/$id.reps"
  log "  $label${engine:+ ($engine)}, $flows flows$([ "$bidir" = 1 ] && echo ' each way'), run $r/$REPS: $(awk -F'\t' '{
    printf "%.3f Gbit/s%s, %d retransmits; ports %s", $1, ($7 > 0 ? sprintf(" (A->B %.3f + B->A %.3f)", $6, $7) : ""), $5, $8 }' <(tail -1 "$W/$id.reps"))"
}

# measure_row ID LABEL ENGINE SHAPED BIDIR FLOWS NSA DST "PIDS" [NSS]: the
# median of $W/ID.reps to $W/results.
measure_row() {
  local id=$1 label=$2 engine=$3 shaped=$4 bidir=$5 flows=$6 nss=${10:-} links=1
  [ -n "$nss" ] && links=${#PORTS_B[@]}
  sort -t$'\t' -k1,1g "$W/$id.reps" | awk -F'\t' -v n="$REPS" -v id="$id" -v label="$label" -v engine="${engine:--}" \
    -v links="$links" -v shaped="$shaped" -v bidir="$bidir" -v flows="$flows" \
    -v runs="$(awk -F'\t' '{printf "%s%.2f", (NR > 1 ? " " : ""), $1}' "$W/$id.reps")" '
    NR == int((n + 1) / 2) {
      gb = $2 / 1e9
      printf "%s|%s|%s|%d|%d|%d|%d|%.3f|%.3f|%.3f|%.3f|%.3f|%d|%s|%s\n", id, label, engine, links, shaped, bidir, flows, $1, $6, $7,
        (gb > 0 ? $3 / gb : 0), (gb > 0 ? $4 / gb : 0), $5, runs, $8 }' >>"$W/results"
}

start_sp_server() { # start_sp_server NS: `lagkit load server --kind socketprocs` (4 processes, ports 7000..7003)
  start_server "$1" 7000 lagkit "$LAGKIT" load server --kind socketprocs --procs 4
}

# measure_sp_run R ID LABEL ENGINE NSA DST "PIDS": run R of `lagkit load
# client --kind socketprocs` for SECS seconds, appended to $W/ID.reps.
measure_sp_run() {
  local r=$1 id=$2 label=$3 engine=$4 nsa=$5 dst=$6 pids=$7
  [ "$r" = 1 ] && : >"$W/$id.reps"
  load_run "$id" "$r" "$nsa" "$pids" socketprocs --to "$dst" --procs "$SP_PROCS" --size "$SP_SIZE"
  log "  $label${engine:+ ($engine)}, socketprocs, run $r/$REPS: $(awk -v e="$engine" '{printf "%.0f transactions/s%s", $1, (e != "" ? sprintf(", switch CPU %.2f s", $2) : "")}' <(tail -1 "$W/$id.reps"))"
}

# measure_sp_row ID LABEL ENGINE: the median run by transactions/s of
# $W/ID.reps to $W/sp as
#   id|label|engine|trans/s|cpu-s|wall-s|all-s|transactions|runs
measure_sp_row() {
  local id=$1 label=$2 engine=$3
  sort -g -k1,1 "$W/$id.reps" | awk -v n="$REPS" -v id="$id" -v label="$label" -v engine="${engine:--}" \
    -v runs="$(awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $1}' "$W/$id.reps")" '
    NR == int((n + 1) / 2) { printf "%s|%s|%s|%s|%s|%s|%s|%s|%s\n", id, label, engine, $1, $2, $3, $4, $5, runs }' >>"$W/sp"
}

# --------------------------------------------------------------- the cases --
# bare_up SHAPED: the reference veth C <-> D (10.67.0.1 -> 10.67.0.2) with
# an iperf3 server in D; sets BARE_NC and BARE_ND.
BARE_NC=; BARE_ND=
bare_up() {
  local shaped=$1 x=
  [ "$shaped" = 1 ] && x=-shaped
  new_ns "c$x"; BARE_NC=$NS; new_ns "d$x"; BARE_ND=$NS
  ip link add c0 netns "$BARE_NC" type veth peer name d0 netns "$BARE_ND"
  ip -n "$BARE_NC" addr add 10.67.0.1/24 dev c0; ip -n "$BARE_ND" addr add 10.67.0.2/24 dev d0
  ip -n "$BARE_NC" link set c0 up; ip -n "$BARE_ND" link set d0 up
  [ "$shaped" = 1 ] && { shape "$BARE_NC" c0; shape "$BARE_ND" d0; }
  start_iperf_servers "$BARE_ND"
  wait_ping "$BARE_NC" 10.67.0.2
}

case_bare_shaped() { # the reference veth, shaped
  log "case: bare veth, shaped"
  bare_up 1
  measure bare-shaped "bare veth, shaped (1 link)" "" 1 0 "$XFLOWS" "$BARE_NC" 10.67.0.2 ""
  local bad; bad="$(tbf_check "$BARE_NC" c0)$(tbf_check "$BARE_ND" d0)"
  [ -z "$bad" ] || echo "bare-shaped|WARNING: bare veth shaping: $bad" >>"$W/warnings"
  teardown_case
}

# switch_up ENGINE K SHAPED [SUFFIX]: a testbed of two K-link bonds through
# lagkit's switch with ENGINE, up until both bonds aggregate K ports and B
# answers A; sets SW_ID (the case's id), SW_PID (the switch) and SW_LOG.
SW_ID=; SW_PID=; SW_LOG=
switch_up() {
  local engine=$1 k=$2 shaped=$3 x=${4:-} tag cfg i
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  SW_ID=sw-$engine-$k-$tag
  testbed "$k" "$x"
  [ "$shaped" = 1 ] && shape_all
  cfg=$W/$SW_ID-switch.cfg
  printf 'hostname core\nport-channel load-balance src-dst-port\ninterface range gi1/1 - %d\n channel-group 1 mode active\n lacp rate fast\ninterface range gi1/%d - %d\n channel-group 2 mode active\n lacp rate fast\n' \
    "$k" "$((k + 1))" "$((2 * k))" >"$cfg"
  local -a pargs=()
  for ((i = 1; i <= k; i++)); do pargs+=(--port "Gi1/$i=a$i"); done
  for ((i = 1; i <= k; i++)); do pargs+=(--port "Gi1/$((k + i))=b$i"); done
  SW_LOG=$W/$SW_ID-switch.log
  ip netns exec "$NS_" "$LAGKIT" switch "$cfg" "${pargs[@]}" --engine "$engine" >"$SW_LOG" 2>&1 &
  SW_PID=$!
  CASE_PIDS+=("$SW_PID:lagkit")
  host "$NA" 10.66.0.1/24 true
  host "$NB" 10.66.0.2/24 true
  bonds_ready "$SW_PID" "$SW_LOG"
  check_engine "$engine" "$SW_LOG"
  start_iperf_servers "$NB"
  wait_ping "$NA" 10.66.0.2
}

switch_done() { # switch_done ENGINE: the switch's show output kept; it must still run
  ip netns exec "$NS_" "$LAGKIT" switch show etherchannel summary >"$W/$SW_ID-summary.txt" 2>&1 || true
  ip netns exec "$NS_" "$LAGKIT" switch show platform forwarding >"$W/$SW_ID-forwarding.txt" 2>&1 || true
  alive "$SW_PID" || die "the switch ($1) exited during the case: $(tail -5 "$SW_LOG")"
}

# case_switch ENGINE K SHAPED ROW...: lagkit's switch with ENGINE between
# two K-link bonds; ROW = tput (-X flows, shaped), kports (the kernel's
# client ports) or bidir (--bidir, -X flows each way).
case_switch() {
  local engine=$1 k=$2 shaped=$3 row flows tag; shift 3
  flows=$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  log "case: lagkit switch ($engine engine), $k x $k links, $tag: $*"
  switch_up "$engine" "$k" "$shaped"
  for row in "$@"; do
    case $row in
      tput)   measure "$SW_ID" "lagkit switch, $k x $k links, $tag" "$engine" "$shaped" 0 "$flows" "$NA" 10.66.0.2 "$SW_PID" "$NS_" "$CPORT" ;;
      kports) measure "$SW_ID-kports" "lagkit switch, $k x $k, $tag, kernel ports" "$engine" "$shaped" 0 "$flows" "$NA" 10.66.0.2 "$SW_PID" "$NS_" ;;
      bidir)  measure "$SW_ID-bidir" "lagkit switch, $k x $k, $tag, both ways" "$engine" "$shaped" 1 "$XFLOWS" "$NA" 10.66.0.2 "$SW_PID" "$NS_" "$CPORT" ;;
      *) die "case_switch: unknown row $row" ;;
    esac
  done
  switch_done "$engine"
  [ "$shaped" = 1 ] && check_shaping "$SW_ID"
  teardown_case
}

# case_side_by_side: the unshaped rows, bulk (-P flows) and socketprocs, of
# the bare veth and of each engine's 2 x 2 testbed. All are up at once and
# measured in rounds: round R runs each case once, in an order that rotates
# by one from round to round, so a machine whose speed drifts over minutes
# (a shared one does) moves every case alike and their ratios stay side by
# side. The median of each case's runs is its row.
declare -A SBS_NA=() SBS_NB=() SBS_NS=() SBS_PID=() SBS_ID=()
case_side_by_side() {
  local e c r i n
  local -a bulk=() sp=() engines=()
  log "case: side by side, unshaped: the bare veth$(want unshaped || want rr && echo " and lagkit's switch (${ENGINE_LIST[*]}), 2 x 2 links")"
  bare_up 0
  { want unshaped || [ "$OVS" = 1 ]; } && bulk+=(bare)
  want rr && sp+=(bare)
  if want unshaped || want rr; then
    for e in "${ENGINE_LIST[@]}"; do
      log "  lagkit switch ($e engine), 2 x 2 links, unshaped"
      switch_up "$e" 2 0 "-$e"
      SBS_NA[$e]=$NA; SBS_NB[$e]=$NB; SBS_NS[$e]=$NS_; SBS_PID[$e]=$SW_PID; SBS_ID[$e]=$SW_ID
      engines+=("$e")
      want unshaped && bulk+=("$e")
      want rr && sp+=("$e")
    done
  fi
  # PORTS_A/PORTS_B: a1 a2 / b1 b2 in every switch namespace
  n=${#bulk[@]}
  for ((r = 1; r <= REPS && n > 0; r++)); do
    for ((i = 0; i < n; i++)); do
      c=${bulk[$(((i + r - 1) % n))]}
      if [ "$c" = bare ]; then measure_run "$r" bare-unshaped "bare veth, unshaped (1 link)" "" 0 0 "$FLOWS" "$BARE_NC" 10.67.0.2 ""
      else measure_run "$r" "${SBS_ID[$c]}" "lagkit switch, 2 x 2 links, unshaped" "$c" 0 0 "$FLOWS" "${SBS_NA[$c]}" 10.66.0.2 "${SBS_PID[$c]}" "${SBS_NS[$c]}" "$CPORT"
      fi
    done
  done
  for c in "${bulk[@]}"; do
    if [ "$c" = bare ]; then measure_row bare-unshaped "bare veth, unshaped (1 link)" "" 0 0 "$FLOWS" "" "" ""
    else measure_row "${SBS_ID[$c]}" "lagkit switch, 2 x 2 links, unshaped" "$c" 0 0 "$FLOWS" "" "" "" "${SBS_NS[$c]}"
    fi
  done
  n=${#sp[@]}
  if [ "$n" -gt 0 ]; then
    start_sp_server "$BARE_ND"
    for e in "${engines[@]}"; do start_sp_server "${SBS_NB[$e]}"; done
  fi
  for ((r = 1; r <= REPS && n > 0; r++)); do
    for ((i = 0; i < n; i++)); do
      c=${sp[$(((i + r - 1) % n))]}
      if [ "$c" = bare ]; then measure_sp_run "$r" bare-sp "bare veth (1 link)" "" "$BARE_NC" 10.67.0.2 ""
      else measure_sp_run "$r" "${SBS_ID[$c]}-sp" "lagkit switch, 2 x 2 links" "$c" "${SBS_NA[$c]}" 10.66.0.2 "${SBS_PID[$c]}"
      fi
    done
  done
  for c in "${sp[@]}"; do
    if [ "$c" = bare ]; then measure_sp_row bare-sp "bare veth (1 link)" ""
    else measure_sp_row "${SBS_ID[$c]}-sp" "lagkit switch, 2 x 2 links" "$c"
    fi
  done
  for e in "${engines[@]}"; do
    NS_=${SBS_NS[$e]}; SW_ID=${SBS_ID[$e]}; SW_PID=${SBS_PID[$e]}; SW_LOG=$W/$SW_ID-switch.log
    switch_done "$e"
  done
  teardown_case
}

case_ovs() { # case_ovs SHAPED
  local shaped=$1 tag id D i n pids
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  id=ovs-$tag
  log "case: Open vSwitch userspace switch, 2 x 2 links, $tag"
  testbed 2
  D=$W/ovs-$id
  start_ovs "$NS_" "$D" 02:00:00:0c:ff:ff
  for n in 1 2; do
    local m; m=$([ "$n" = 1 ] && echo a || echo b)
    ovs-vsctl --timeout=20 --db="unix:$D/db.sock" add-bond br0 "po$n" "${m}1" "${m}2" \
      lacp=active bond_mode=balance-tcp other_config:lacp-time=fast \
      other_config:bond-rebalance-interval=1000 \
      -- set port "po$n" qos=@q -- --id=@q create qos type=linux-noop >/dev/null
  done
  if [ "$shaped" = 1 ]; then
    shape_all
    sleep 1
    for i in "${PORTS_A[@]}" "${PORTS_B[@]}"; do [[ $(tc -n "$NS_" qdisc show dev "$i" root) == *tbf* ]] || die "OVS removed the tbf on $i"; done
  fi
  host "$NA" 10.66.0.1/24 false
  host "$NB" 10.66.0.2/24 false
  bonds_ready "$(cat "$D/ovs-vswitchd.pid")" "$D/ovs-vswitchd.log"
  start_iperf_servers "$NB"
  wait_ping "$NA" 10.66.0.2
  pids="$(cat "$D/ovs-vswitchd.pid" "$D/ovsdb-server.pid" | tr '\n' ' ')"
  measure "$id" "Open vSwitch, 2 x 2 links, $tag" "" "$shaped" 0 "$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")" "$NA" 10.66.0.2 "$pids" "$NS_" "$CPORT"
  [ "$shaped" = 1 ] && check_shaping "$id"
  teardown_case
}

# --------------------------------------------------------------------- run --
: >"$W/results"; : >"$W/sp"; : >"$W/warnings"
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "bench-switch: -t $SECS, median of $REPS, -P $FLOWS unshaped from $SENDERS sender(s), -X $XFLOWS shaped; engines $ENGINES; rows $ONLY; OVS $([ "$OVS" = 1 ] && echo yes || echo no)"
if want unshaped || want rr || [ "$OVS" = 1 ]; then case_side_by_side; fi
if want shaped || want bidir || [ "$OVS" = 1 ]; then case_bare_shaped; fi
for e in "${ENGINE_LIST[@]}"; do
  if want shaped; then case_switch "$e" 2 1 tput kports; fi
  if want bidir; then case_switch "$e" 4 1 bidir; fi
done
if [ "$OVS" = 1 ]; then
  case_ovs 0
  case_ovs 1
fi
END=$(date +%s)

# ------------------------------------------------------------------- table --
echo "bench-switch: $("$LAGKIT" --version 2>/dev/null) ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates 2>/dev/null || echo '+dirty')); $([ "$OVS" = 1 ] && ovs-vswitchd --version | head -1 || echo "OVS skipped"); iperf3 $(iperf3 --version | head -1 | awk '{print $2}')"
echo "machine: $(nproc) CPUs, kernel $(uname -r); load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "iperf3 -t $SECS A -> B through the switch (both ways: --bidir), -P $FLOWS unshaped ($([ "$SENDERS" = 1 ] && echo "one iperf3 process" || echo "from $SENDERS iperf3 processes at once")), -P $XFLOWS shaped (each way, one process), median of $REPS run(s); hosts: lagkit bonds (802.3ad fast, layer3+4, engine auto)"
for e in "${ENGINE_LIST[@]}"; do
  [ -n "${ENGINE_WHY[$e]:-}" ] && echo "switch engine $e: as asked, verified in \`lagkit switch show platform forwarding --json\` (why: ${ENGINE_WHY[$e]})"
done
if [ -s "$W/results" ]; then
echo
awk -F'|' '
  { n++; id[n] = $1; lab[n] = $2; eng[n] = $3; k[n] = $4; sh[n] = $5; bd[n] = $6; fl[n] = $7; g[n] = $8
    cpu[n] = $11; all[n] = $12; rt[n] = $13; runs[n] = $14; pt[n] = $15
    if ($1 == "bare-shaped") one = $8
    if ($1 == "bare-unshaped") { bare = $8; bareall = $12 }
    if ($1 ~ /^ovs-/) og[$5] = $8 }
  END {
    f = "%-42s %-9s %6s %8s %6s %-15s %9s %9s %6s %7s %6s  %-27s %s\n"
    printf f, "case", "engine", "flows", "Gbit/s", "ratio", "ratio to", "switch", "all", "all x", "retrans", "x OVS", "S ports toward B Gbit/s", "runs (Gbit/s)"
    printf f, "", "", "", "", "", "", "CPU-s/GB", "CPU-s/GB", "bare", "", "", "", ""
    for (i = 1; i <= n; i++) {
      if (sh[i]) { ref = (bd[i] ? 2 : 1) * k[i] * one; rl = (bd[i] ? "2 x " : "") (k[i] == 1 ? "1 link" : k[i] " x 1 link") }
      else { ref = bare; rl = "bare veth" }
      if (id[i] ~ /^bare-/) { r = "1.000"; rl = "-"; sw = "-" }
      else { r = (ref > 0 ? sprintf("%.3f", g[i] / ref) : "-"); sw = sprintf("%.3f", cpu[i]) }
      ax = (!sh[i] && bareall > 0 ? sprintf("%.2f", all[i] / bareall) : "-")
      xo = (eng[i] != "-" && !bd[i] && id[i] !~ /kports/ && og[sh[i]] > 0 ? sprintf("%.2f", g[i] / og[sh[i]]) : "-")
      printf "%-42s %-9s %6s %8.3f %6s %-15s %9s %9.3f %6s %7d %6s  %-27s %s\n", lab[i], eng[i], fl[i] (bd[i] ? "x2" : ""), g[i], r, rl, sw, all[i], ax, rt[i], xo, pt[i], runs[i]
    }
  }' "$W/results"
fi
if [ -s "$W/sp" ]; then
  echo
  echo "socketprocs: \`lagkit load client --kind socketprocs --procs $SP_PROCS --size $SP_SIZE\` A -> B ($((SP_PROCS * 4)) connections, one 4 KB request and 4 KB reply in flight on each), unshaped, -t $SECS, median of $REPS"
  awk -F'|' '
    { n++; lab[n] = $2; eng[n] = $3; t[n] = $4; c[n] = $5; w[n] = $6; s[n] = $7; tr[n] = $8; runs[n] = $9
      if ($1 == "bare-sp") bare = $4; else if ($3 == "userspace") us = $4 }
    END {
      f = "%-42s %-9s %10s %8s %9s %7s %11s  %s\n"
      printf f, "case", "engine", "trans/s", "x bare", "x user-", "switch", "all CPU", "runs (trans/s)"
      printf f, "", "", "", "", "space", "CPU %", "us/trans", ""
      for (i = 1; i <= n; i++)
        printf f, lab[i], eng[i], sprintf("%.0f", t[i]), (bare > 0 ? sprintf("%.3f", t[i] / bare) : "-"), (eng[i] != "-" && us > 0 ? sprintf("%.2f", t[i] / us) : "-"),
          (eng[i] == "-" ? "-" : sprintf("%.0f", 100 * c[i] / w[i])), sprintf("%.1f", 1e6 * s[i] / tr[i]), runs[i]
    }' "$W/sp"
fi

# ----------------------------------------------------------------- targets --
echo
echo "targets (ratios from this run):"
awk -F'|' -v ovs="$OVS" -v ncpu="$(nproc)" '
  FILENAME ~ /results$/ { g[$1] = $8; all[$1] = $12; fl[$1] = $7; runs[$1] = $14; next }
  FILENAME ~ /sp$/ { sp[$1] = $4; sruns[$1] = $9; spc[$1] = ($8 > 0 ? $7 / $8 : 0); next }
  # rounds(A, B): run r of A / run r of B for each round r ("-" if either is missing)
  function rounds(a, b,   x, y, n, i, o) {
    n = split(a, x, " "); split(b, y, " "); o = ""
    for (i = 1; i <= n; i++) o = o (i > 1 ? " " : "") (y[i] > 0 ? sprintf("%.2f", x[i] / y[i]) : "-")
    return o
  }
  function verdict(ok) { return ok ? "met" : "NOT met" }
  function nm(what) { printf "  %s: not measured (see --engines, --only%s)\n", what, (what ~ /Open vSwitch/ ? ", --no-ovs" : "") }
  function shaped(e,   key, cap) {
    key = "sw-" e "-2-shaped"; cap = 2 * g["bare-shaped"]
    if (!(key in g) || cap <= 0) { nm(sprintf("%-9s 2 x 2 links shaped", e)); return }
    printf "  %-9s 2 x 2 links shaped 1 Gbit/s, %d flows: %.3f x the links (2 x bare shaped) (>= 0.99): %s\n", e, fl[key], g[key] / cap, verdict(g[key] / cap >= 0.99)
  }
  function bidir(e,   key, cap) {
    key = "sw-" e "-4-shaped-bidir"; cap = 2 * 4 * g["bare-shaped"]
    if (!(key in g) || cap <= 0) { nm(sprintf("%-9s 4 x 4 links shaped, both ways", e)); return }
    printf "  %-9s 4 x 4 links shaped, both ways, %d flows each way: %.3f x 2 x 4 x bare shaped (>= 0.97): %s\n", e, fl[key], g[key] / cap, verdict(g[key] / cap >= 0.97)
  }
  END {
    b = "sw-bpf-2-unshaped"; u = "sw-userspace-2-unshaped"; v = "bare-unshaped"; o = "ovs-unshaped"
    if ((b in g) && g[v] > 0) {
      printf "  bpf       2 x 2 links unshaped, %d flows: %.3f x the bare veth (%.3f of %.3f Gbit/s) (>= 0.7): %s\n", fl[b], g[b] / g[v], g[b], g[v], verdict(g[b] >= 0.7 * g[v])
      printf "  bpf       2 x 2 links unshaped: whole-machine CPU %.3f s/GB = %.2f x the bare veth (%.3f s/GB) (<= 1.5): %s\n", all[b], all[b] / all[v], all[v], verdict(all[b] <= 1.5 * all[v])
    } else nm("bpf       2 x 2 links unshaped vs bare veth")
    if ((b in g) && (u in g) && g[u] > 0)
      printf "  bpf       2 x 2 links unshaped: %.2f x the userspace engine (%.3f vs %.3f Gbit/s) (>= 1.5): %s\n", g[b] / g[u], g[b], g[u], verdict(g[b] >= 1.5 * g[u])
    else nm("bpf vs userspace, 2 x 2 links unshaped")
    if ((u in g) && (o in g) && g[o] > 0)
      printf "  userspace 2 x 2 links unshaped: %.2f x Open vSwitch (%.3f vs %.3f Gbit/s) (>= 5): %s\n", g[u] / g[o], g[u], g[o], verdict(g[u] >= 5 * g[o])
    else nm("userspace unshaped vs Open vSwitch")
    shaped("bpf"); shaped("userspace")
    bidir("bpf"); bidir("userspace")
    b = "sw-bpf-2-unshaped-sp"; u = "sw-userspace-2-unshaped-sp"
    if ((b in sp) && (u in sp) && sp[u] > 0)
      printf "  socketprocs 4 KB: bpf %.0f/s = %.2f x userspace %.0f/s (>= 3): %s\n", sp[b], sp[b] / sp[u], sp[u], verdict(sp[b] >= 3 * sp[u])
    else nm("socketprocs bpf vs userspace")
    print ""
    print "information (no target):"
    shown = 0
    b = "sw-bpf-2-unshaped"
    if ((b in g) && (o in g) && g[o] > 0) { printf "  bpf       2 x 2 links unshaped: %.2f x Open vSwitch (%.3f vs %.3f Gbit/s)\n", g[b] / g[o], g[b], g[o]; shown++ }
    if (("sw-bpf-2-unshaped-sp" in sp) && sp["bare-sp"] > 0) { printf "  socketprocs 4 KB: bpf %.3f x the bare veth (%.0f/s)\n", sp["sw-bpf-2-unshaped-sp"] / sp["bare-sp"], sp["bare-sp"]; shown++ }
    # The unshaped cases ran in rounds, each case once a round: the
    # ratio of each round shows how much of a ratio is noise.
    if ((b in g) && ("bare-unshaped" in g)) { printf "  each round (side by side), 2 x 2 links unshaped: bpf / bare veth %s\n", rounds(runs[b], runs["bare-unshaped"]); shown++ }
    if ((b in g) && ("sw-userspace-2-unshaped" in g)) { printf "  each round (side by side), 2 x 2 links unshaped: bpf / userspace %s\n", rounds(runs[b], runs["sw-userspace-2-unshaped"]); shown++ }
    if (("sw-bpf-2-unshaped-sp" in sp) && ("sw-userspace-2-unshaped-sp" in sp)) { printf "  each round (side by side), socketprocs: bpf / userspace %s\n", rounds(sruns["sw-bpf-2-unshaped-sp"], sruns["sw-userspace-2-unshaped-sp"]); shown++ }
    # Busy cores = GB/s x CPU-s/GB: how much of the machine each unshaped
    # case kept at work. The bare veth and the bpf engine do all the work
    # of a frame in the softirq of the sending CPU; the thread of the
    # userspace engine adds a second stage on another core.
    cs = ""
    split("bare-unshaped:bare veth|sw-bpf-2-unshaped:bpf|sw-userspace-2-unshaped:userspace", kk, "|")
    for (j = 1; j <= 3; j++) {
      split(kk[j], kv, ":")
      if ((kv[1] in g) && all[kv[1]] > 0) cs = cs sprintf("%s%s %.2f", (cs == "" ? "" : ", "), kv[2], g[kv[1]] / 8 * all[kv[1]])
    }
    if (cs != "") { printf "  2 x 2 links unshaped, busy cores (whole machine, of %d): %s\n", ncpu, cs; shown++ }
    # Ceilings: what a case would carry with every core busy at the cost
    # per unit (whole-machine CPU per GB, per transaction) it had in this
    # run, against the target that compares the bpf engine with the
    # userspace one. A case that already kept every core busy was measured
    # at its ceiling; one that did not may cost less per unit when fuller,
    # so its ceiling is an estimate. A ceiling below the target means that
    # the target needs the path to cost less per unit than it did here.
    b = "sw-bpf-2-unshaped"; u = "sw-userspace-2-unshaped"
    if ((b in g) && (u in g) && all[b] > 0) {
      printf "  ceiling, 2 x 2 links unshaped: bpf with %d busy cores at its %.3f CPU-s/GB: %.2f Gbit/s (busy here: %.2f); the target, 1.5 x userspace: %.2f Gbit/s%s\n", ncpu, all[b], ncpu / all[b] * 8, g[b] / 8 * all[b], 1.5 * g[u], (ncpu / all[b] * 8 < 1.5 * g[u] ? ": beyond the ceiling" : "")
      shown++
    }
    b = "sw-bpf-2-unshaped-sp"; u = "sw-userspace-2-unshaped-sp"
    if ((b in sp) && (u in sp) && spc[b] > 0) {
      cb = ncpu / spc[b]; cv = (spc["bare-sp"] > 0 ? ncpu / spc["bare-sp"] : 0)
      printf "  ceiling, socketprocs: bpf with %d busy cores at its %.1f us/transaction: %.0f/s (busy here: %.2f)%s; the target, 3 x userspace: %.0f/s%s\n", ncpu, 1e6 * spc[b], cb, sp[b] * spc[b],
        (cv > 0 ? sprintf("; a bare veth at its %.1f us: %.0f/s (busy here: %.2f)", 1e6 * spc["bare-sp"], cv, sp["bare-sp"] * spc["bare-sp"]) : ""), 3 * sp[u],
        (cb < 3 * sp[u] ? (cv > 0 && cv < 3 * sp[u] ? ": beyond both ceilings" : ": beyond the ceiling") : "")
      shown++
    }
    if (("ovs-shaped" in g) && g["bare-shaped"] > 0) { printf "  OVS       2 x 2 links shaped: %.3f x the links\n", g["ovs-shaped"] / (2 * g["bare-shaped"]); shown++ }
    if (!shown) print "  (none)"
  }' "$W/results" "$W/sp"
if [ -s "$W/warnings" ]; then echo; cut -d'|' -f2- "$W/warnings"; fi
echo
echo "ratio: unshaped rows / the bare veth unshaped; shaped rows / (k x the bare veth shaped); both ways (flows x2) / (2 x k x the bare veth shaped); all measured in this run"
echo "switch CPU-s/GB: the switch's processes (lagkit switch; OVS: ovs-vswitchd + ovsdb-server), utime+stime; the bpf engine forwards in the kernel (softirq, charged to no process): compare engines by all CPU-s/GB, the whole machine's busy CPU (/proc/stat) per GB, iperf3 and the bonds included; all x bare: that / the bare unshaped veth's"
echo "x OVS: / Open vSwitch with the same shaping; S ports: what each of S's ports toward B (b1..) sent in the median run, and toward A (a1..) both ways"
echo "shaped tbf qdiscs checked after each shaped case (present, and counted traffic): $([ -s "$W/warnings" ] && echo 'see the WARNING lines' || echo 'all present')"
echo "total time: $((END - START)) s"
