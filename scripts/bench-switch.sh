#!/usr/bin/env bash
# bench-switch.sh — lagkit's switch against Open vSwitch's userspace switch,
# side by side in one run, between the same two lagkit bonds: is the switch
# ever the bottleneck? It checks the switch's targets (>= 0.99 x the links'
# capacity at 1 Gbit/s per link; unshaped at least 5 x Open vSwitch) and
# prints each as met / NOT met.
#
# Topology (fresh network namespaces per case, removed after it):
#
#   A [lagkit up: bond0 = eth1 eth2, 802.3ad fast, layer3+4]  10.66.0.1
#       eth1 <-veth-> a1, eth2 <-veth-> a2     (S's ports Gi1/1, Gi1/2)
#   S [the switch: channel 1 = a1 a2, channel 2 = b1 b2, LACP active fast]
#       b1 <-veth-> eth1, b2 <-veth-> eth2     (S's ports Gi1/3, Gi1/4)
#   B [lagkit up: bond0, the same]                           10.66.0.2
#
# Switches:
#   lagkit: `lagkit switch`, `port-channel load-balance src-dst-port`
#   OVS:    ovsdb-server + ovs-vswitchd, br0 (netdev datapath) with two LACP
#           bonds (lacp=active, balance-tcp, lacp-time=fast). A userspace
#           switch that reads frames without virtio-net headers cannot take
#           the hosts' 64 KB GSO frames or partial checksums, so for OVS both
#           bonds run with `offloads = false` (lagkit turns off tx
#           checksumming, TSO and GSO on the members; see docs/interop.md).
#           lagkit's switch reads and writes virtio-net headers and takes the
#           bonds as they are.
#   bare:   one veth C <-> D, the reference link (shaped rows).
#
# "Shaped" puts `tbf rate 1gbit burst 256kb latency 50ms` on both ends of
# every link (the hosts' members and the switch's ports; for OVS after the
# bonds exist, with qos=linux-noop so OVS leaves it), and checks afterwards
# that every tbf is still there and counted traffic (a WARNING otherwise).
#
# Client ports: Cisco's src-dst-port puts a flow in bucket (source port XOR
# destination port) & 7, and a 2-link channel deals the buckets out
# alternately (Load 0x55 / 0xAA). Linux's connect() takes ephemeral ports of
# one parity, so every flow to iperf3's port 5201 lands in an odd bucket, on
# one link: hash polarization, shown in its own row ("kernel ports"). The
# capacity rows give iperf3 consecutive client ports (--cport 40000), which
# fill the 8 buckets evenly, for OVS too.
#
# Rows: bare veth shaped (-X flows); per switch, unshaped (-P flows) and
# shaped (-X flows); lagkit shaped again with the kernel's client ports. Measured: iperf3 A -> B, REPS runs, the median by
# throughput; the switch's processes' CPU (utime+stime from /proc) per GB;
# the whole machine's busy CPU per GB; what each of S's ports towards B
# sent (kernel counters of b1, b2), so an uneven spread shows.
#
# Usage: sudo scripts/bench-switch.sh [-t SECS] [-r REPS] [-P FLOWS]
#          [-X FLOWS] [--quick] [--no-ovs] [--no-build]
#   -t SECS    iperf3 duration per run (default 8)
#   -r REPS    runs per case, the median reported (default 3)
#   -P FLOWS   TCP flows of the unshaped rows (default 8)
#   -X FLOWS   TCP flows of the shaped rows (default 32)
#   --quick    -t 3 -r 1
#   --no-ovs   skip Open vSwitch (its target then reads "not measured")
#   --no-build use the lagkit binary already built
# Env: CARGO_TARGET_DIR (default <repo>/target). About 3 minutes with the
# defaults, build excluded. Namespaces are named lkbs<PID>-*; a trap tears
# everything down on exit, error or Ctrl-C; logs of a failed run stay in
# /tmp/lkbs<PID>.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=8
REPS=3
FLOWS=8
XFLOWS=32
OVS=1
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECS=$2; shift 2 ;;
    -r) REPS=$2; shift 2 ;;
    -P) FLOWS=$2; shift 2 ;;
    -X) XFLOWS=$2; shift 2 ;;
    --quick) SECS=3; REPS=1; shift ;;
    --no-ovs) OVS=0; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-switch.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$SECS" "$REPS" "$FLOWS" "$XFLOWS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-switch.sh: -t, -r, -P, -X take numbers >= 1, not '$v'" >&2; exit 2; }
done

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

. "$ROOT/scripts/lib/bench.sh"

tools=(ip tc iperf3 jq awk ss timeout)
[ "$OVS" = 1 ] && tools+=(ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl)
bench_start bench-switch.sh lkbs "iproute2 iperf3 jq openvswitch-switch" "${tools[@]}"

# host NS ADDR OFFLOADS: `lagkit up` of bond0 over eth1, eth2 in NS.
host() {
  local ns=$1 cfg=$W/$1.toml
  printf 'name = "bond0"\nmode = "802.3ad"\nmembers = ["eth1", "eth2"]\nlacp_rate = "fast"\nxmit_hash_policy = "layer3+4"\naddress = ["%s"]\noffloads = %s\n' "$2" "$3" >"$cfg"
  ip netns exec "$ns" "$LAGKIT" up "$cfg" >"$W/$ns-lagkit.log" 2>&1 &
  CASE_PIDS+=("$!:lagkit")
}

# ports_tx NS: what S's ports towards B (b1, b2) have sent, "BYTES BYTES".
ports_tx() {
  ip netns exec "$1" cat /sys/class/net/b1/statistics/tx_bytes /sys/class/net/b2/statistics/tx_bytes | tr '\n' ' '
}

# measure ID LABEL FLOWS NSA DST "PIDS" [NSS [CPORT]]: REPS iperf3 runs A -> B
# (client ports CPORT, CPORT+1, ... when given, else the kernel's); the
# median by throughput goes to $W/results as
#   id|label|flows|gbps|cpu-s/GB|all-s/GB|runs|port Gbit/s
measure() {
  local id=$1 label=$2 flows=$3 nsa=$4 dst=$5 pids=$6 nss=${7:-} cport=${8:-} r out g c0 c1 s0 s1 p0 p1 runs="" extra=()
  local -a pidv; read -r -a pidv <<<"$pids"
  for r in $(seq 1 "$REPS"); do
    # A run's client ports are in TIME_WAIT after it: the next run takes
    # the next 64 (the same low bits, so the same buckets).
    [ -n "$cport" ] && extra=(--cport "$((cport + (r - 1) * 64))")
    out=$W/$id.$r.json
    c0=$(cpu_of "${pidv[@]}"); s0=$(sys_busy); p0=$([ -n "$nss" ] && ports_tx "$nss" || echo "0 0")
    ip netns exec "$nsa" iperf3 -c "$dst" -P "$flows" -t "$SECS" "${extra[@]}" -J >"$out" 2>"$W/$id.$r.err" ||
      die "iperf3 ($id run $r) failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(cat "$W/$id.$r.err")"
    c1=$(cpu_of "${pidv[@]}"); s1=$(sys_busy); p1=$([ -n "$nss" ] && ports_tx "$nss" || echo "0 0")
    jq -r --arg c "$(calc "$c1 - $c0")" --arg s "$(calc "$s1 - $s0")" --arg p "$p0 $p1" \
      '[.end.sum_received.bits_per_second / 1e9, .end.sum_received.bytes, $c, $s, $p] | @tsv' "$out" >>"$W/$id.reps"
    g=$(tail -1 "$W/$id.reps" | cut -f1)
    runs="$runs $(printf '%.2f' "$g")"
    log "  $label, run $r/$REPS: $(printf '%.3f' "$g") Gbit/s"
  done
  sort -t$'\t' -k1,1g "$W/$id.reps" | awk -F'\t' -v n="$REPS" -v id="$id" -v label="$label" -v flows="$flows" -v runs="$runs" -v secs="$SECS" '
    NR == int((n + 1) / 2) {
      gb = $2 / 1e9; split($5, p, " ")
      printf "%s|%s|%d|%.3f|%.3f|%.3f|%s|%.2f/%.2f\n", id, label, flows, $1, (gb > 0 ? $3 / gb : 0), (gb > 0 ? $4 / gb : 0), runs,
        (p[3] - p[1]) * 8 / 1e9 / secs, (p[4] - p[2]) * 8 / 1e9 / secs }' >>"$W/results"
}

case_bare() { # the reference: one shaped veth
  local nc nd
  log "case: bare veth, shaped"
  new_ns c; nc=$NS; new_ns d; nd=$NS
  ip link add c0 netns "$nc" type veth peer name d0 netns "$nd"
  ip -n "$nc" addr add 10.67.0.1/24 dev c0; ip -n "$nd" addr add 10.67.0.2/24 dev d0
  ip -n "$nc" link set c0 up; ip -n "$nd" link set d0 up
  shape "$nc" c0; shape "$nd" d0
  start_iperf_server "$nd"
  wait_ping "$nc" 10.67.0.2
  measure bare "bare veth, shaped (1 link)" "$XFLOWS" "$nc" 10.67.0.2 ""
  teardown_case
}

# testbed SHAPED OFFLOADS: namespaces A, S, B and their links; sets NA NS_ NB.
testbed() {
  local i
  new_ns a; NA=$NS; new_ns s; NS_=$NS; new_ns b; NB=$NS
  for i in 1 2; do
    ip link add "eth$i" netns "$NA" type veth peer name "a$i" netns "$NS_"
    ip link add "eth$i" netns "$NB" type veth peer name "b$i" netns "$NS_"
    ip -n "$NS_" link set "a$i" up; ip -n "$NS_" link set "b$i" up
  done
}

shape_all() {
  shape "$NA" eth1 eth2; shape "$NB" eth1 eth2; shape "$NS_" a1 a2 b1 b2
}

check_shaping() { # check_shaping ID
  local bad
  bad="$(tbf_check "$NA" eth1 eth2)$(tbf_check "$NB" eth1 eth2)$(tbf_check "$NS_" a1 a2 b1 b2)"
  [ -z "$bad" ] || echo "$1|WARNING: tbf missing or idle: $bad" >>"$W/warnings"
}

# bonds_ready: both hosts aggregate 2 ports (LACP through the switch).
bonds_ready() {
  local ns n i
  for i in $(seq 1 150); do
    n=0
    for ns in "$NA" "$NB"; do
      [ "$(ip netns exec "$ns" "$LAGKIT" status --name bond0 --json 2>/dev/null | jq -r '.[0].lacp.number_of_ports // 0' 2>/dev/null || echo 0)" = 2 ] && n=$((n + 1))
    done
    [ "$n" = 2 ] && return 0
    sleep 0.2
  done
  die "the bonds did not aggregate 2 ports through the switch in 30 s (logs in $W)"
}

case_lagkit() { # case_lagkit SHAPED
  local shaped=$1 tag id pid
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  id=lagkit-$tag
  log "case: lagkit switch, $tag"
  testbed
  [ "$shaped" = 1 ] && shape_all
  printf 'hostname core\nport-channel load-balance src-dst-port\ninterface range gi1/1 - 2\n channel-group 1 mode active\n lacp rate fast\ninterface range gi1/3 - 4\n channel-group 2 mode active\n lacp rate fast\n' >"$W/switch.cfg"
  ip netns exec "$NS_" "$LAGKIT" switch "$W/switch.cfg" --port Gi1/1=a1 --port Gi1/2=a2 --port Gi1/3=b1 --port Gi1/4=b2 >"$W/$id-switch.log" 2>&1 &
  pid=$!
  CASE_PIDS+=("$pid:lagkit")
  host "$NA" 10.66.0.1/24 true
  host "$NB" 10.66.0.2/24 true
  bonds_ready
  start_iperf_server "$NB"
  wait_ping "$NA" 10.66.0.2
  measure "$id" "lagkit switch, $tag" "$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")" "$NA" 10.66.0.2 "$pid" "$NS_" "$CPORT"
  if [ "$shaped" = 1 ]; then
    measure "$id-kernel-ports" "lagkit switch, shaped, kernel ports" "$XFLOWS" "$NA" 10.66.0.2 "$pid" "$NS_"
  fi
  ip netns exec "$NS_" "$LAGKIT" switch show etherchannel summary >"$W/$id-summary.txt" 2>&1 || true
  [ "$shaped" = 1 ] && check_shaping "$id"
  teardown_case
}

case_ovs() { # case_ovs SHAPED
  local shaped=$1 tag id D i n pids
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  id=ovs-$tag
  log "case: Open vSwitch userspace switch, $tag"
  testbed
  D=$W/ovs-$id
  start_ovs "$NS_" "$D" 02:00:00:0c:ff:ff
  for n in 1 2; do
    local m=$([ "$n" = 1 ] && echo a || echo b)
    ovs-vsctl --timeout=20 --db="unix:$D/db.sock" add-bond br0 "po$n" "${m}1" "${m}2" \
      lacp=active bond_mode=balance-tcp other_config:lacp-time=fast \
      other_config:bond-rebalance-interval=1000 \
      -- set port "po$n" qos=@q -- --id=@q create qos type=linux-noop >/dev/null
  done
  if [ "$shaped" = 1 ]; then
    shape_all
    sleep 1
    for i in a1 a2 b1 b2; do [[ $(tc -n "$NS_" qdisc show dev "$i" root) == *tbf* ]] || die "OVS removed the tbf on $i"; done
  fi
  host "$NA" 10.66.0.1/24 false
  host "$NB" 10.66.0.2/24 false
  bonds_ready
  start_iperf_server "$NB"
  wait_ping "$NA" 10.66.0.2
  pids="$(cat "$D/ovs-vswitchd.pid" "$D/ovsdb-server.pid" | tr '\n' ' ')"
  measure "$id" "OVS userspace switch, $tag" "$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")" "$NA" 10.66.0.2 "$pids" "$NS_" "$CPORT"
  [ "$shaped" = 1 ] && check_shaping "$id"
  teardown_case
}

: >"$W/results"; : >"$W/warnings"
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
case_bare
case_lagkit 0
case_lagkit 1
if [ "$OVS" = 1 ]; then
  case_ovs 0
  case_ovs 1
fi
END=$(date +%s)

echo "bench-switch: $("$LAGKIT" --version 2>/dev/null) ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')); $([ "$OVS" = 1 ] && ovs-vswitchd --version | head -1 || echo "OVS skipped"); iperf3 $(iperf3 --version | head -1 | awk '{print $2}')"
echo "machine: $(nproc) CPUs, kernel $(uname -r); load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "iperf3 -t $SECS A -> B through the switch, -P $FLOWS unshaped, -P $XFLOWS shaped, median of $REPS run(s); hosts: lagkit bonds (802.3ad fast, layer3+4, engine auto), 2 links each"
echo
awk -F'|' '
  $2 ~ /^WARNING/ { next }
  { id[NR] = $1; label[$1] = $2; flows[$1] = $3; g[$1] = $4; cpu[$1] = $5; all[$1] = $6; runs[$1] = $7; ports[$1] = $8; order[++n] = $1 }
  END {
    cap = 2 * g["bare"]
    printf "%-36s %6s %8s %10s %10s %9s %9s  %-14s %s\n", "case", "flows", "Gbit/s", "ratio", "ratio to", "switch", "all", "toward B", "runs (Gbit/s)"
    printf "%-36s %6s %8s %10s %10s %9s %9s  %-14s %s\n", "", "", "", "", "", "CPU-s/GB", "CPU-s/GB", "Gbit/s", ""
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (k == "bare") { r = "1.000"; to = "1 link"; sw = "-"; pt = "-" }
      else if (k ~ /-shaped/) { r = (cap > 0 ? sprintf("%.3f", g[k] / cap) : "-"); to = "2 x 1 link"; sw = sprintf("%.3f", cpu[k]); pt = ports[k] }
      else { r = (g["ovs-unshaped"] > 0 && k != "ovs-unshaped" ? sprintf("%.2f", g[k] / g["ovs-unshaped"]) : "-"); to = (k == "ovs-unshaped" ? "-" : "x OVS"); sw = sprintf("%.3f", cpu[k]); pt = ports[k] }
      printf "%-36s %6s %8.3f %10s %10s %9s %9.3f  %-14s%s\n", label[k], flows[k], g[k], r, to, sw, all[k], pt, runs[k]
    }
    print ""
    print "targets (ratios from this run):"
    if ("lagkit-shaped" in g && cap > 0)
      printf "  lagkit switch, 2 links shaped 1 Gbit/s, %d flows: %.3f x the links (>= 0.99): %s\n", flows["lagkit-shaped"], g["lagkit-shaped"] / cap, (g["lagkit-shaped"] / cap >= 0.99 ? "met" : "NOT met")
    if ("ovs-unshaped" in g && g["ovs-unshaped"] > 0)
      printf "  lagkit switch unshaped: %.2f x Open vSwitch (>= 5): %s\n", g["lagkit-unshaped"] / g["ovs-unshaped"], (g["lagkit-unshaped"] / g["ovs-unshaped"] >= 5 ? "met" : "NOT met")
    else print "  lagkit switch unshaped vs Open vSwitch: not measured (--no-ovs)"
  }' "$W/results"
if [ -s "$W/warnings" ]; then echo; cut -d'|' -f2- "$W/warnings"; fi
echo "total time: $((END - START)) s"
