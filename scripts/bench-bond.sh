#!/usr/bin/env bash
# bench-bond.sh — host bond throughput, latency and CPU cost, side by side in
# one run: a bare veth, lagkit bonds (`lagkit up`, 802.3ad on both ends) with
# each data path engine (`engine = "bpf"`: tc BPF programs in the kernel;
# `engine = "userspace"`: lagkit's forwarding threads and a TAP), and Open
# vSwitch userspace bonds (LACP, balance-tcp, on both ends), over identical
# veth links, unshaped and shaped with `tbf rate 1gbit`.  It checks the bond's
# targets and prints each as met / NOT met.
#
# Topologies (each case in fresh network namespaces, removed after the case):
#
#   bare:    C --- c0 <-veth-> d0 --- D          10.78.0.1 -> 10.78.0.2
#   lagkit:  A [lagkit up: bond0, 802.3ad]       a0..a{k-1} <-veth-> b0..b{k-1}
#            B [lagkit up: bond0, 802.3ad]       10.77.0.1 -> 10.77.0.2
#            (bond0 is a veth end driven by tc BPF, or a TAP, by engine; the
#            engine that runs is read back from `lagkit status --json`)
#   ovs:     A [ovsdb-server + ovs-vswitchd, br0 (netdev) with bond0 = a0..,
#               lacp=active balance-tcp, internal port br0 = 10.79.0.1]
#            B [the same, b0.., br0 = 10.79.0.2]
#
# Rows (per engine for lagkit):
#   bare veth unshaped (-P flows) and shaped (-X flows), and shaped both ways;
#   lagkit 2 links unshaped, -P flows             (ratio to the bare veth)
#   lagkit 2, 4, 8 links shaped, -X flows         (ratio to k x one link)
#   lagkit 4, 8 links shaped, both ways (iperf3 --bidir, -X flows each way;
#     ratio = received in both directions / (2 x k x one link))
#   OVS 2 links unshaped, 2 and 4 links shaped
#   latency: request/response, one connection, 1-byte request and reply
#     (`lagkit load server/client --kind rr`): bare veth; lagkit 1 and 2
#     members unshaped (transactions/s, ratio to the bare veth, 2 / 1 member)
#
# Shaped cases put `tbf rate 1gbit burst 256kb latency 50ms` on BOTH ends of
# every link (member veths, and c0/d0 for the "one link" reference).  For OVS
# the tbf is added after the bond exists and the bond port carries
# `qos=linux-noop`, or OVS deletes it; every shaped case checks afterwards
# that each tbf is still there and has seen traffic, and prints a WARNING
# row otherwise.
#
# Measured per case: iperf3 -c A->B with FLOWS flows for SECS seconds, REPS
# times (the median by throughput is reported).  CPU = utime+stime of the
# bond processes on both sides (/proc/PID/stat: both `lagkit up`, or both
# ovs-vswitchd + ovsdb-server) over the iperf3 run, per GB received;
# "all CPU" = the whole machine's busy time from /proc/stat per GB (includes
# iperf3, the kernel and anything else running).  The BPF engine moves frames
# in the kernel, so its process CPU is near zero: compare engines by the
# whole-machine figure ("all x bare": all-s/GB / the bare veth's all-s/GB).
# Per-member Gbit/s (A->B, and B->A for both-ways rows) come from `lagkit
# stats bond0 --json` for lagkit and from the member veths' kernel counters
# for OVS, so an uneven hash is visible.
#
# Ratios: shaped rows are divided by k x (bare veth shaped, same run) — the
# physical limit of k links; both-ways rows by 2 x k x that; unshaped rows by
# the bare unshaped veth; latency rows by the bare veth's transactions/s.
# "xOVS" columns: lagkit / OVS with the same k and shaping (throughput;
# CPU-s/GB — below 1 means lagkit spends less CPU per GB).
#
# Usage: sudo scripts/bench-bond.sh [-t SECS] [-r REPS] [-P FLOWS] [-X FLOWS]
#          [-H POLICY] [--engines LIST] [--only GROUPS] [--links LIST]
#          [--quick] [--no-ovs] [--no-build]
#   -t SECS    iperf3 (and rr) duration per run (default 8)
#   -r REPS    runs per case, median reported (default 3)
#   -P FLOWS   TCP flows of the unshaped rows (default 8)
#   -X FLOWS   TCP flows of the shaped and both-ways rows, per direction
#              (default 32): 8 flows on 4 members leave one member idle ~40%
#              of the time with any random hash (4 x (3/4)^8)
#   -H POLICY  lagkit xmit_hash_policy (default: lagkit's default, `strong`)
#   --engines LIST  lagkit engines, comma-separated (default bpf,userspace)
#   --only GROUPS   comma-separated subset of unshaped,shaped,bidir,rr,ovs
#              (default all; the bare veth reference rows run as needed)
#   --links LIST    link counts of the shaped rows (default 2,4,8; both-ways
#              rows take 4 and 8 of them, OVS shaped rows 2 and 4)
#   --quick    -t 3 -r 1 (a later -t or -r still applies)
#   --no-ovs   skip the Open vSwitch cases
#   --no-build use the lagkit binary already built
# Env: CARGO_TARGET_DIR (default <repo>/target), CARGO_BUILD_JOBS.
# Takes about 11 minutes with the defaults (-t 8 -r 3, both engines, OVS),
# build excluded; about 2.5 with --quick.
#
# Only processes this script starts are stopped (by PID); namespaces are
# named lkbb<PID>-*; a trap tears everything down on exit, error, Ctrl-C or
# SIGTERM.  Logs of a failed run stay in /tmp/lkbb<PID>.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=8
REPS=3
FLOWS=8
XFLOWS=32
HASH=
OVS=1
BUILD=1
ENGINES=bpf,userspace
ONLY=unshaped,shaped,bidir,rr,ovs
LINKS=2,4,8
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECS=$2; shift 2 ;;
    -r) REPS=$2; shift 2 ;;
    -P) FLOWS=$2; shift 2 ;;
    -X) XFLOWS=$2; shift 2 ;;
    -H) HASH=$2; shift 2 ;;
    --engines) ENGINES=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --links) LINKS=$2; shift 2 ;;
    --quick) SECS=3; REPS=1; shift ;;
    --no-ovs) OVS=0; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-bond.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$SECS" "$REPS" "$FLOWS" "$XFLOWS"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "bench-bond.sh: not a number: $v" >&2; exit 2; }
done
if [ "$FLOWS" -lt 1 ] || [ "$XFLOWS" -lt 1 ] || [ "$REPS" -lt 1 ] || [ "$SECS" -lt 1 ]; then
  echo "bench-bond.sh: -t, -r, -P, -X must be >= 1" >&2; exit 2
fi
IFS=, read -r -a ENGINE_LIST <<<"$ENGINES"
for e in "${ENGINE_LIST[@]}"; do
  [[ $e == bpf || $e == userspace ]] || { echo "bench-bond.sh: --engines takes bpf and/or userspace, not '$e'" >&2; exit 2; }
done
IFS=, read -r -a GROUP_LIST <<<"$ONLY"
for g in "${GROUP_LIST[@]}"; do
  [[ $g =~ ^(unshaped|shaped|bidir|rr|ovs)$ ]] || { echo "bench-bond.sh: --only takes unshaped,shaped,bidir,rr,ovs, not '$g'" >&2; exit 2; }
done
IFS=, read -r -a LINK_LIST <<<"$LINKS"
for k in "${LINK_LIST[@]}"; do
  [[ $k =~ ^[1-9][0-9]?$ ]] || { echo "bench-bond.sh: --links takes link counts (1-99), not '$k'" >&2; exit 2; }
done
want() { [[ ,$ONLY, == *,$1,* ]]; }            # want GROUP: that group of rows was asked for
has_links() { [[ ,$LINKS, == *,$1,* ]]; }      # has_links K: K is in --links
[ "$OVS" = 1 ] && ! want ovs && OVS=0

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
LAGKIT=$TARGET/release/lagkit
PFX=lkbb$$
W=/tmp/$PFX
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
TBF=(tbf rate 1gbit burst 256kb latency 50ms)
HZ=$(getconf CLK_TCK)

. "$ROOT/scripts/lib/bench.sh"

tools=(ip tc iperf3 jq awk ss timeout)
[ "$OVS" = 1 ] && tools+=(ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl ethtool)
bench_start bench-bond.sh lkbb "iproute2 iperf3 jq openvswitch-switch ethtool" "${tools[@]}"

# --------------------------------------------------------------- measuring --
# member_rates BEFORE AFTER SECS: "0.96/0.96, 31.2 KB/frame, drops 0" from two
# MEMBERFN snapshots ("tx=BYTES" per member, then "pk=PACKETS", "dr=DROPS";
# both-ways rows add "rx=BYTES" per member, printed as "; B->A 0.96/0.96").
member_rates() {
  awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); o = ""; rx = ""; m = 0; mr = 0; by = 0; pk = -1; dr = -1
    for (i = 1; i <= n; i++) {
      split(x[i], u, "="); split(y[i], v, "="); d = v[2] - u[2]
      if (u[1] == "tx") { o = o sprintf("%s%.2f", (m++ ? "/" : ""), d * 8 / 1e9 / s); by += d }
      else if (u[1] == "rx") rx = rx sprintf("%s%.2f", (mr++ ? "/" : ""), d * 8 / 1e9 / s)
      else if (u[1] == "pk") pk = d
      else if (u[1] == "dr") dr = d
    }
    if (pk > 0) o = o sprintf(", %.1f KB/frame", by / pk / 1000)
    if (dr >= 0) o = o sprintf(", drops %d", dr)
    if (mr) o = o "; B->A " rx
    print o }'
}

# dsacks NS: duplicate-SACKs the TCP senders of namespace NS have received
# (TcpExt TCPDSACKRecv + TCPDSACKOfoRecv): segments that arrived twice or
# were retransmitted needlessly. A bond that delivers frames twice shows here.
dsacks() {
  ip netns exec "$1" cat /proc/net/netstat | awk '
    /^TcpExt:/ { if (!h) { for (i = 2; i <= NF; i++) name[i] = $i; h = 1; next }
                 for (i = 2; i <= NF; i++) if (name[i] == "TCPDSACKRecv" || name[i] == "TCPDSACKOfoRecv") n += $i }
    END { print n + 0 }'
}

MEM_RX=0   # MEMBERFNs also print "rx=" (B->A) per member: set by run_case for both-ways rows

# run_case ID LABEL K FLOWS SHAPED BIDIR KIND ENGINE NSA DST "PIDS" MEMBERFN
#   Runs iperf3 (with --bidir if BIDIR=1: FLOWS flows each way) REPS times;
#   appends the median run (by throughput, both directions together) to
#   $W/results:
#   id|label|k|flows|shaped|kind|gbps|bytes|retrans|cpu|wall|allcpu|members|runs|bidir|dsacks|engine
#   MEMBERFN prints A's member counters in the A->B direction (see member_rates).
run_case() {
  local id=$1 label=$2 k=$3 flows=$4 shaped=$5 bidir=$6 kind=$7 engine=$8 nsa=$9 dst=${10} pids=${11} memfn=${12}
  local r out c0 c1 s0 s1 t0 t1 tries pid m0 m1 per runs d0 d1 extra=()
  local -a pidv; read -r -a pidv <<<"$pids"
  [ "$bidir" = 1 ] && extra=(--bidir)
  MEM_RX=$bidir
  : >"$W/$id.reps"
  for ((r = 1; r <= REPS; r++)); do
    out=$W/$id.$r.json
    tries=0
    while :; do
      m0=; [ -z "$memfn" ] || m0=$($memfn)
      c0=$(cpu_of "${pidv[@]}"); s0=$(sys_busy); t0=$(date +%s.%N); d0=$(dsacks "$nsa")
      ip netns exec "$nsa" iperf3 -c "$dst" -P "$flows" -t "$SECS" "${extra[@]}" -J >"$out" 2>"$W/$id.$r.err" &
      pid=$!
      wait "$pid" || true
      c1=$(cpu_of "${pidv[@]}"); s1=$(sys_busy); t1=$(date +%s.%N); d1=$(dsacks "$nsa")
      m1=; [ -z "$memfn" ] || m1=$($memfn)
      if jq -e '.error' "$out" >/dev/null 2>&1 || ! jq -e '.end.sum_received' "$out" >/dev/null 2>&1; then
        if grep -q busy "$out" && [ $tries -lt 20 ]; then tries=$((tries + 1)); sleep 0.3; continue; fi
        die "iperf3 ($id run $r) failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(cat "$W/$id.$r.err")"
      fi
      break
    done
    # with --bidir, .end.sum_received is A->B and .end.sum_received_bidir_reverse is B->A
    if [ "$bidir" = 1 ] && ! jq -e '.end.sum_received_bidir_reverse.bytes > 0' "$out" >/dev/null 2>&1; then
      die "iperf3 --bidir ($id run $r) reported nothing received B->A (.end.sum_received_bidir_reverse): see $out"
    fi
    per=; [ -z "$memfn" ] || per=$(member_rates "$m0" "$m1" "$SECS")
    jq -r --arg c "$(calc "$c1 - $c0")" --arg w "$(calc "$t1 - $t0")" --arg s "$(calc "$s1 - $s0")" --arg p "$per" --arg d "$((d1 - d0))" '
      .end.sum_received as $f | (.end.sum_received_bidir_reverse // {bits_per_second: 0, bytes: 0}) as $r |
      "\(($f.bits_per_second + $r.bits_per_second) / 1e9) \($f.bytes + $r.bytes) \((.end.sum_sent.retransmits // 0) + (.end.sum_sent_bidir_reverse.retransmits // 0)) \($c) \($w) \($s) \($d) \($f.bits_per_second / 1e9) \($r.bits_per_second / 1e9)|\($p)"' \
      "$out" >>"$W/$id.reps"
    log "  $label${engine:+ ($engine)}, $flows flows$([ "$bidir" = 1 ] && echo ' each way'), run $r/$REPS: $(awk -F'|' -v b="$bidir" '{split($1, f, " ");
      printf "%.3f Gbit/s%s, %d retransmits, %d DSACKs, process CPU %.2f s; members %s", f[1], (b == 1 ? sprintf(" (A->B %.3f + B->A %.3f)", f[8], f[9]) : ""), f[3], f[7], f[4], $2}' <(tail -1 "$W/$id.reps"))"
  done
  runs=$(awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $1}' "$W/$id.reps")
  sort -g -k1,1 "$W/$id.reps" | awk -v m=$((REPS / 2 + 1)) 'NR == m' |
    while IFS='|' read -r nums per; do
      read -r g b rt c w s ds fw rv <<<"$nums"
      [ "$bidir" = 1 ] && per=$(printf 'A->B %.2f + B->A %.2f%s' "$fw" "$rv" "${per:+; $per}")
      echo "$id|$label|$k|$flows|$shaped|$kind|$g|$b|$rt|$c|$w|$s|$per|$runs|$bidir|$ds|${engine:--}"
    done >>"$W/results"
}

start_rr_server() { # start_rr_server NS: `lagkit load server --kind rr` (port 12865)
  start_server "$1" 12865 lagkit "$LAGKIT" load server --kind rr
}

# run_rr ID LABEL K ENGINE NSA DST "PIDS"
#   `lagkit load client --kind rr` (one connection, 1-byte request, 1-byte
#   reply, one transaction in flight) for SECS seconds, REPS times; appends
#   the median run by transactions/s to $W/rr:
#   id|label|k|engine|tps|cpu|wall|allcpu|transactions|runs
run_rr() {
  local id=$1 label=$2 k=$3 engine=$4 nsa=$5 dst=$6 pids=$7
  local r runs
  : >"$W/$id.reps"
  for ((r = 1; r <= REPS; r++)); do
    load_run "$id" "$r" "$nsa" "$pids" rr --to "$dst" --size 1 --reply 1
    log "  $label${engine:+ ($engine)}, rr, run $r/$REPS: $(awk '{printf "%.0f transactions/s (%.1f us each), process CPU %.2f s", $1, 1e6 / $1, $2}' <(tail -1 "$W/$id.reps"))"
  done
  runs=$(awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $1}' "$W/$id.reps")
  sort -g -k1,1 "$W/$id.reps" | awk -v m=$((REPS / 2 + 1)) 'NR == m' |
    while read -r tps c w s tr; do
      echo "$id|$label|$k|${engine:--}|$tps|$c|$w|$s|$tr|$runs"
    done >>"$W/rr"
}

# --------------------------------------------------------------- the cases --
case_bare() { # case_bare SHAPED: the reference rows (unshaped: and the bare rr row)
  local shaped=$1 nc nd tag flows
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  flows=$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")
  log "case: bare veth, $tag"
  new_ns c; nc=$NS; new_ns d; nd=$NS
  ip link add c0 netns "$nc" type veth peer name d0 netns "$nd"
  ip -n "$nc" addr add 10.78.0.1/24 dev c0; ip -n "$nc" link set c0 up
  ip -n "$nd" addr add 10.78.0.2/24 dev d0; ip -n "$nd" link set d0 up
  if [ "$shaped" = 1 ]; then shape "$nc" c0; shape "$nd" d0; fi
  start_iperf_server "$nd"
  wait_ping "$nc" 10.78.0.2
  if [ "$shaped" = 1 ] || want unshaped || [ "$OVS" = 1 ]; then
    run_case "bare-$tag" "bare veth, $tag" 1 "$flows" "$shaped" 0 bare "" "$nc" 10.78.0.2 "" ""
  fi
  if [ "$shaped" = 1 ] && want bidir; then
    run_case "bare-$tag-bidir" "bare veth, $tag, both ways" 1 "$flows" "$shaped" 1 bare "" "$nc" 10.78.0.2 "" ""
  fi
  if [ "$shaped" = 0 ] && want rr; then
    start_rr_server "$nd"
    run_rr bare-rr "bare veth" 1 "" "$nc" 10.78.0.2 ""
  fi
  if [ "$shaped" = 1 ]; then
    local bad; bad="$(tbf_check "$nc" c0)$(tbf_check "$nd" d0)"
    [ -z "$bad" ] || echo "bare-$tag|WARNING: bare veth shaping: $bad" >>"$W/warnings"
  fi
  teardown_case
}

LK_NSA=
lagkit_members() { # A's per-member tx bytes (and rx: MEM_RX), packets, drops (member + engine) from `lagkit stats`
  ip netns exec "$LK_NSA" "$LAGKIT" stats --name bond0 --json |
    jq -r --argjson rx "$MEM_RX" '.[0] | ([.members[] | "tx=\(.tx_bytes)"] + ["pk=\([.members[].tx_packets] | add)",
      "dr=\(([.members[].drops] | add) + ([.engine_drops[][1]] | add // 0))"]
      + (if $rx == 1 then [.members[] | "rx=\(.rx_bytes)"] else [] end)) | join(" ")'
}

lagkit_up() { # lagkit_up NS ENGINE ADDR MEMBERS...: starts `lagkit up` in NS; sets LK_PID
  local ns=$1 engine=$2 addr=$3 cfg; shift 3
  cfg=$W/$ns.toml
  {
    echo 'name = "bond0"'
    echo 'mode = "802.3ad"'
    echo "engine = \"$engine\""
    printf 'members = [%s]\n' "$(printf '"%s", ' "$@" | sed 's/, $//')"
    [ -n "$HASH" ] && echo "xmit_hash_policy = \"$HASH\""
    echo 'lacp_rate = "fast"'
    echo "address = [\"$addr\"]"
  } >"$cfg"
  ip netns exec "$ns" "$LAGKIT" up "$cfg" >"$W/$ns-lagkit.log" 2>&1 &
  LK_PID=$!
  CASE_PIDS+=("$LK_PID:lagkit")
}

# wait_lacp NS K PID: until lagkit's aggregate in NS has K ports distributing,
# every member transmitting and collecting (and `lagkit up` PID still runs)
wait_lacp() {
  local i n
  for i in $(seq 1 150); do
    [ -d "/proc/$3" ] || die "lagkit up in $1 exited: $(tail -5 "$W/$1-lagkit.log")"
    n=$(ip netns exec "$1" "$LAGKIT" status --name bond0 --json 2>/dev/null |
      jq -r '.[0] | if ([.members[] | select(.transmitting and .collecting)] | length) == (.members | length)
                    then .lacp.number_of_ports // 0 else 0 end' 2>/dev/null || echo 0)
    [ "$n" = "$2" ] && return 0
    sleep 0.2
  done
  ip netns exec "$1" "$LAGKIT" status --name bond0 >&2 || true
  die "lagkit in $1: aggregate has $n of $2 ports after 30 s (log: $W/$1-lagkit.log)"
}

declare -A ENGINE_WHY=()
check_engine() { # check_engine NS ENGINE: the engine that runs must be the one asked for
  local st e why
  st=$(ip netns exec "$1" "$LAGKIT" status --name bond0 --json 2>/dev/null) || die "lagkit status in $1 failed (log: $W/$1-lagkit.log)"
  e=$(jq -r '.[0].engine // ""' <<<"$st")
  why=$(jq -r '.[0].engine_reason // ""' <<<"$st")
  [ "$e" = "$2" ] || die "lagkit in $1 runs engine '${e:-none}' (${why:-no reason given}), not the '$2' asked for (log: $W/$1-lagkit.log)"
  ENGINE_WHY[$2]=$why
}

# left_behind NS IF...: what a stopped `lagkit up` left in NS (bond0, clsact on members)
left_behind() {
  local ns=$1 i; shift
  ip -n "$ns" link show bond0 >/dev/null 2>&1 && echo -n "bond0 "
  for i in "$@"; do
    [[ $(tc -n "$ns" qdisc show dev "$i" 2>/dev/null) == *clsact* ]] && echo -n "clsact-on-$i "
  done
  return 0
}

case_lagkit() { # case_lagkit ENGINE K SHAPED ROW...: ROW = tput, bidir or rr, measured on one bond
  local engine=$1 k=$2 shaped=$3; shift 3
  local na nb tag flows pa pb i ma=() mb=() id bad rc row
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  flows=$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")
  log "case: lagkit bond ($engine engine), $k link$([ "$k" -gt 1 ] && echo s), $tag: $*"
  new_ns a; na=$NS; new_ns b; nb=$NS
  links "$na" "$nb" "$k"
  for ((i = 0; i < k; i++)); do ma+=("a$i"); mb+=("b$i"); done
  if [ "$shaped" = 1 ]; then shape "$na" "${ma[@]}"; shape "$nb" "${mb[@]}"; fi
  lagkit_up "$na" "$engine" 10.77.0.1/24 "${ma[@]}"; pa=$LK_PID
  lagkit_up "$nb" "$engine" 10.77.0.2/24 "${mb[@]}"; pb=$LK_PID
  wait_lacp "$na" "$k" "$pa"; wait_lacp "$nb" "$k" "$pb"
  check_engine "$na" "$engine"; check_engine "$nb" "$engine"
  pause 1
  start_iperf_server "$nb"
  wait_ping "$na" 10.77.0.2
  LK_NSA=$na
  id=lagkit-$engine-$k-$tag
  for row in "$@"; do
    case $row in
      tput) run_case "$id" "lagkit $k links, $tag" "$k" "$flows" "$shaped" 0 lagkit "$engine" "$na" 10.77.0.2 "$pa $pb" lagkit_members ;;
      bidir) run_case "$id-bidir" "lagkit $k links, $tag, both ways" "$k" "$flows" "$shaped" 1 lagkit "$engine" "$na" 10.77.0.2 "$pa $pb" lagkit_members ;;
      rr) start_rr_server "$nb"
          run_rr "$id-rr" "lagkit $k member$([ "$k" -gt 1 ] && echo s)" "$k" "$engine" "$na" 10.77.0.2 "$pa $pb" ;;
      *) die "case_lagkit: unknown row $row" ;;
    esac
  done
  ip netns exec "$na" "$LAGKIT" stats --name bond0 >"$W/$id-stats-A.txt" 2>&1 || true
  ip netns exec "$nb" "$LAGKIT" stats --name bond0 >"$W/$id-stats-B.txt" 2>&1 || true
  if [ "$shaped" = 1 ]; then
    bad="$(tbf_check "$na" "${ma[@]}")$(tbf_check "$nb" "${mb[@]}")"
    [ -z "$bad" ] || echo "$id|WARNING: tbf missing or idle under lagkit ($engine): $bad" >>"$W/warnings"
  fi
  # lagkit must exit 0 on SIGTERM and leave nothing behind (its bond0, BPF programs)
  for pid in $pa $pb; do
    kill -TERM "$pid" 2>/dev/null || true
    rc=0; wait "$pid" || rc=$?
    [ "$rc" = 0 ] || echo "$id|WARNING: lagkit ($engine, $pid) exited $rc on SIGTERM" >>"$W/warnings"
  done
  bad="$(left_behind "$na" "${ma[@]}")$(left_behind "$nb" "${mb[@]}")"
  [ -z "$bad" ] || echo "$id|WARNING: lagkit ($engine) left behind after SIGTERM: $bad" >>"$W/warnings"
  teardown_case
}

# ----------------------------------------------------------------- OVS ----
ovs_bond() { # ovs_bond DIR MEMBERS...: LACP balance-tcp bond that leaves kernel qdiscs alone
  local D=$1; shift
  ovs-vsctl --timeout=20 --db="unix:$D/db.sock" add-bond br0 bond0 "$@" \
    lacp=active bond_mode=balance-tcp other_config:lacp-time=fast \
    other_config:bond-rebalance-interval=1000 \
    -- set port bond0 qos=@q -- --id=@q create qos type=linux-noop >/dev/null
}

ovs_ready() { # ovs_ready DIR K: negotiated and K members enabled
  local s
  s=$(ovs-appctl -t "$1/ovs-vswitchd.ctl" bond/show bond0 2>/dev/null) || return 1
  grep -q 'lacp_status: negotiated' <<<"$s" || return 1
  [ "$(grep -c '^member .*: enabled' <<<"$s")" = "$2" ]
}

OVS_NSA=
OVS_K=0
ovs_members() { # A's member veths' kernel tx bytes and packets (A->B)
  local i b p=0 x
  for ((i = 0; i < OVS_K; i++)); do
    read -r b x < <(ip netns exec "$OVS_NSA" cat "/sys/class/net/a$i/statistics/tx_bytes" "/sys/class/net/a$i/statistics/tx_packets" | tr '\n' ' ')
    echo -n "tx=$b "; p=$((p + x))
  done
  echo "pk=$p"
}

case_ovs() { # case_ovs K SHAPED
  local k=$1 shaped=$2 na nb tag i ma=() mb=() id DA DB pids bad
  tag=$([ "$shaped" = 1 ] && echo shaped || echo unshaped)
  id=ovs$k-$tag
  log "case: Open vSwitch userspace bond, $k links, $tag"
  new_ns oa; na=$NS; new_ns ob; nb=$NS
  links "$na" "$nb" "$k"
  for ((i = 0; i < k; i++)); do ma+=("a$i"); mb+=("b$i"); done
  members_off "$na" "${ma[@]}"; members_off "$nb" "${mb[@]}"
  DA=$W/ovs-$id-a; DB=$W/ovs-$id-b
  start_ovs "$na" "$DA" 02:00:00:0a:ff:ff
  start_ovs "$nb" "$DB" 02:00:00:0b:ff:ff
  ovs_bond "$DA" "${ma[@]}"
  ovs_bond "$DB" "${mb[@]}"
  # the shaping goes on after OVS took the ports over, and must still be there
  if [ "$shaped" = 1 ]; then
    shape "$na" "${ma[@]}"; shape "$nb" "${mb[@]}"
    sleep 1
    for i in "${ma[@]}"; do [[ $(tc -n "$na" qdisc show dev "$i" root) == *tbf* ]] || die "OVS removed the tbf on $i right away"; done
    for i in "${mb[@]}"; do [[ $(tc -n "$nb" qdisc show dev "$i" root) == *tbf* ]] || die "OVS removed the tbf on $i right away"; done
  fi
  ip -n "$na" addr add 10.79.0.1/24 dev br0; ip -n "$na" link set br0 up
  ip -n "$nb" addr add 10.79.0.2/24 dev br0; ip -n "$nb" link set br0 up
  # kernel endpoints behind an OVS userspace port: no partial checksums
  ip netns exec "$na" ethtool -K br0 tx off >/dev/null 2>&1 || true
  ip netns exec "$nb" ethtool -K br0 tx off >/dev/null 2>&1 || true
  for i in $(seq 1 150); do
    ovs_ready "$DA" "$k" && ovs_ready "$DB" "$k" && break
    sleep 0.2
  done
  { ovs_ready "$DA" "$k" && ovs_ready "$DB" "$k"; } ||
    die "OVS bonds did not negotiate $k members in 30 s: $(ovs-appctl -t "$DA/ovs-vswitchd.ctl" bond/show bond0 2>&1)"
  start_iperf_server "$nb"
  wait_ping "$na" 10.79.0.2
  pids="$(cat "$DA/ovs-vswitchd.pid" "$DA/ovsdb-server.pid" "$DB/ovs-vswitchd.pid" "$DB/ovsdb-server.pid" | tr '\n' ' ')"
  OVS_NSA=$na; OVS_K=$k
  run_case "$id" "OVS $k links, $tag" "$k" "$([ "$shaped" = 1 ] && echo "$XFLOWS" || echo "$FLOWS")" "$shaped" 0 ovs "" "$na" 10.79.0.2 "$pids" ovs_members
  ovs-appctl -t "$DA/ovs-vswitchd.ctl" bond/show bond0 >"$W/$id-bond-A.txt" 2>&1 || true
  if [ "$shaped" = 1 ]; then
    bad="$(tbf_check "$na" "${ma[@]}")$(tbf_check "$nb" "${mb[@]}")"
    [ -z "$bad" ] || echo "$id|WARNING: OVS removed or bypassed the tbf: $bad" >>"$W/warnings"
  fi
  teardown_case
}

# --------------------------------------------------------------------- run --
: >"$W/results"; : >"$W/rr"; : >"$W/warnings"
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "bench-bond: iperf3 -P $FLOWS unshaped, -P $XFLOWS shaped, -t $SECS, median of $REPS; engines $ENGINES; rows $ONLY; shaped links $LINKS; OVS $([ "$OVS" = 1 ] && echo yes || echo no); $(nproc) CPUs; $(uname -r)"
if want unshaped || want rr || [ "$OVS" = 1 ]; then case_bare 0; fi
if want shaped || want bidir || [ "$OVS" = 1 ]; then case_bare 1; fi
for e in "${ENGINE_LIST[@]}"; do
  if want rr; then case_lagkit "$e" 1 0 rr; fi
  rows=()
  if want unshaped; then rows+=(tput); fi
  if want rr; then rows+=(rr); fi
  if [ ${#rows[@]} -gt 0 ]; then case_lagkit "$e" 2 0 "${rows[@]}"; fi
  for k in "${LINK_LIST[@]}"; do
    rows=()
    if want shaped; then rows+=(tput); fi
    if want bidir && [ "$k" -ge 4 ]; then rows+=(bidir); fi
    if [ ${#rows[@]} -gt 0 ]; then case_lagkit "$e" "$k" 1 "${rows[@]}"; fi
  done
done
if [ "$OVS" = 1 ]; then
  case_ovs 2 0
  if has_links 2; then case_ovs 2 1; fi
  if has_links 4; then case_ovs 4 1; fi
fi
END=$(date +%s)

# ------------------------------------------------------------------- table --
LAGKIT_VERSION=$("$LAGKIT" --version 2>/dev/null || echo lagkit)
OVS_VERSION=$([ "$OVS" = 1 ] && ovs-vswitchd --version | head -1 || echo "OVS skipped")
echo "bench-bond: $LAGKIT_VERSION ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates 2>/dev/null || echo '+dirty')); $OVS_VERSION; iperf3 $(iperf3 --version | head -1 | awk '{print $2}')"
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r); load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "iperf3 -t $SECS (A -> B; both ways: --bidir), -P $FLOWS unshaped, -P $XFLOWS shaped (each way), median of $REPS run(s) by throughput; links: veth, shaped = tbf rate 1gbit burst 256kb latency 50ms on both ends"
echo "lagkit: \`lagkit up\` 802.3ad, lacp_rate fast, xmit_hash_policy ${HASH:-default (strong, seeded)}; OVS: netdev datapath, lacp=active, balance-tcp, lacp-time=fast, bond-rebalance-interval=1000"
for e in "${ENGINE_LIST[@]}"; do
  [ -n "${ENGINE_WHY[$e]:-}" ] && echo "engine $e: as asked, verified in \`lagkit status --json\` on both sides (reason: ${ENGINE_WHY[$e]})"
done
echo
if [ -s "$W/results" ]; then
awk -F'|' '
  {
    n++; id[n] = $1; lab[n] = $2; k[n] = $3; fl[n] = $4; sh[n] = $5; kind[n] = $6
    g[n] = $7; by[n] = $8; rt[n] = $9; c[n] = $10; w[n] = $11; s[n] = $12; mem[n] = $13; runs[n] = $14; bd[n] = $15; ds[n] = $16; eng[n] = $17
    if ($1 == "bare-shaped") one = $7
    if ($1 == "bare-unshaped") { bare = $7; bareall = $12 / ($8 / 1e9) }
    if ($6 == "ovs") { og[$3 "-" $5] = $7; oc[$3 "-" $5] = $10 / ($8 / 1e9) }
  }
  END {
    f = "%-35s %-9s %5s %7s %6s %-14s %8s %5s %8s %6s %7s %6s %6s %6s  %-17s %s\n"
    printf f, "case", "engine", "flows", "Gbit/s", "ratio", "ratio to", "CPU-s/GB", "CPU%", "all-s/GB", "all x", "retrans", "DSACK", "xOVS", "xOVS", "runs (Gbit/s)", "median run per member Gbit/s A->B"
    printf f, "", "", "", "", "", "", "", "", "", "bare", "", "", "Gbit/s", "CPU/GB", "", ""
    for (i = 1; i <= n; i++) {
      gb = by[i] / 1e9
      if (sh[i] == 1) {
        ref = (bd[i] ? 2 : 1) * k[i] * one
        rl = (bd[i] ? "2 x " : "") (k[i] == 1 ? "1 link" : k[i] " x 1 link")
      } else { ref = bare; rl = "bare veth" }
      r = (ref > 0 ? g[i] / ref : 0)
      if (kind[i] == "bare") { cpg = "-"; pct = "-" } else { cpg = sprintf("%.3f", c[i] / gb); pct = sprintf("%.0f", 100 * c[i] / w[i]) }
      ax = (sh[i] == 0 && bareall > 0 ? sprintf("%.2f", (s[i] / gb) / bareall) : "-")
      xg = "-"; xc = "-"; key = k[i] "-" sh[i]
      if (kind[i] == "lagkit" && !bd[i] && (key in og)) { xg = sprintf("%.2f", g[i] / og[key]); xc = sprintf("%.3f", (c[i] / gb) / oc[key]) }
      printf "%-35s %-9s %5s %7.3f %6.3f %-14s %8s %5s %8.3f %6s %7d %6d %6s %6s  %-17s %s\n", lab[i], eng[i], fl[i] (bd[i] ? "x2" : ""), g[i], r, rl, cpg, pct, s[i] / gb, ax, rt[i], ds[i], xg, xc, runs[i], mem[i]
    }
  }' "$W/results"
fi
if [ -s "$W/rr" ]; then
  echo
  echo "latency: request/response, one TCP connection, 1-byte request and 1-byte reply, one transaction in flight (\`lagkit load client --kind rr\`), -t $SECS, median of $REPS"
  awk -F'|' '
    { n++; lab[n] = $2; k[n] = $3; eng[n] = $4; t[n] = $5; c[n] = $6; w[n] = $7; s[n] = $8; tr[n] = $9; runs[n] = $10
      if ($1 == "bare-rr") bare = $5
      if ($3 == 1 && $4 != "-") one[$4] = $5 }
    END {
      f = "%-35s %-9s %7s %10s %9s %6s %8s %5s %10s  %s\n"
      printf f, "case", "engine", "members", "trans/s", "us/trans", "ratio", "x1", "CPU%", "all us/tr", "runs (trans/s)"
      for (i = 1; i <= n; i++) {
        x1 = (eng[i] != "-" && k[i] > 1 && one[eng[i]] > 0 ? sprintf("%.3f", t[i] / one[eng[i]]) : "-")
        pct = (eng[i] == "-" ? "-" : sprintf("%.0f", 100 * c[i] / w[i]))
        printf "%-35s %-9s %7s %10.0f %9.1f %6.3f %8s %5s %10.1f  %s\n", lab[i], eng[i], (eng[i] == "-" ? "-" : k[i]), t[i], 1e6 / t[i], (bare > 0 ? t[i] / bare : 0), x1, pct, 1e6 * s[i] / tr[i], runs[i]
      }
    }' "$W/rr"
fi

# ----------------------------------------------------------------- targets --
echo
echo "targets (ratios from this run):"
awk -F'|' '
  FILENAME ~ /results$/ {
    key = $17 "|" $3 "|" $5 "|" $15; g[key] = $7; fl[key] = $4; all[key] = $12 / ($8 / 1e9)
    if ($1 == "bare-shaped") one = $7
    if ($1 == "bare-unshaped") { bare = $7; bareall = $12 / ($8 / 1e9) }
    if ($6 == "ovs" ) { og[$3 "-" $5] = $7; oc[$3 "-" $5] = $10 / ($8 / 1e9) }
    if ($6 == "lagkit") { nl++; le[nl] = $17; lk[nl] = $3; ls[nl] = $5; lb[nl] = $15; lg[nl] = $7; lc[nl] = $10 / ($8 / 1e9); lf[nl] = $4 }
    next
  }
  FILENAME ~ /rr$/ { if ($1 == "bare-rr") rrbare = $5; else rr[$4 "|" $3] = $5; next }
  function verdict(ok) { return ok ? "met" : "NOT met" }
  # shaped ENGINE K BIDIR MIN: a shaped row against (1 or 2) x k x one link
  function shaped(e, k, b, min,   key, r) {
    key = e "|" k "|1|" b
    if (!(key in g) || one <= 0) { printf "  %-9s %d links shaped%s: not measured (see --engines, --only, --links)\n", e, k, (b ? ", both ways" : ""); return }
    r = g[key] / ((b ? 2 : 1) * k * one)
    printf "  %-9s %d links shaped%s, %d flows%s: %.3f x %sk x one link (>= %.2f): %s\n", e, k, (b ? ", both ways" : ""), fl[key], (b ? " each way" : ""), r, (b ? "2 x " : ""), min, verdict(r >= min)
  }
  END {
    key = "bpf|2|0|0"
    if ((key in g) && bare > 0) {
      r = g[key] / bare; x = all[key] / bareall
      printf "  bpf       2 links unshaped, %d flows: %.3f x bare veth (>= 0.85) at %.2f x its whole-machine CPU per GB (<= 1.3): %s\n", fl[key], r, x, verdict(r >= 0.85 && x <= 1.3)
    } else print "  bpf       2 links unshaped: not measured (see --engines, --only)"
    shaped("bpf", 2, 0, 0.99); shaped("bpf", 4, 0, 0.99); shaped("bpf", 8, 0, 0.99)
    shaped("bpf", 4, 1, 0.97); shaped("bpf", 8, 1, 0.97)
    shaped("userspace", 2, 0, 0.99); shaped("userspace", 4, 0, 0.99)
    split("bpf userspace", es, " ")
    for (j = 1; j <= 2; j++) {
      e = es[j]
      if (!((e "|1") in rr) || !((e "|2") in rr) || rrbare <= 0) { printf "  %-9s rr: not measured (see --engines, --only)\n", e; continue }
      t1 = rr[e "|1"]; t2 = rr[e "|2"]
      printf "  %-9s rr: 2 members %.0f/s vs 1 member %.0f/s = %.3f (>= 1): %s; 2 members vs bare veth %.0f/s = %.3f", e, t2, t1, t2 / t1, verdict(t2 >= t1), rrbare, t2 / rrbare
      # Within 10% of a bare veth is a target for the default engine: the
      # userspace engine crosses into user space twice per frame.
      if (e == "bpf") printf " (>= 0.9): %s\n", verdict(t2 >= 0.9 * rrbare)
      else print " (no target: two crossings into user space per frame)"
    }
    print ""
    print "other lagkit rows (no target) and lagkit against OVS:"
    for (i = 1; i <= nl; i++) {
      e = le[i]; k = lk[i]; b = lb[i]; key = e "|" k "|" ls[i] "|" b
      target = (e == "bpf" && ls[i] == 0 && k == 2) || (e == "bpf" && ls[i] == 1 && !b && (k == 2 || k == 4 || k == 8)) ||
               (e == "bpf" && b && (k == 4 || k == 8)) || (e == "userspace" && ls[i] == 1 && !b && (k == 2 || k == 4))
      xo = ""; ok = k "-" ls[i]
      if (!b && (ok in og)) xo = sprintf("vs OVS k=%d: %.2fx throughput, %.3fx CPU per GB", k, lg[i] / og[ok], lc[i] / oc[ok])
      if (target && xo == "") continue
      shown++
      if (ls[i] == 0) printf "  %-9s %d links unshaped, %d flows: %.3f x bare veth, %.2f x its whole-machine CPU per GB", e, k, lf[i], (bare > 0 ? lg[i] / bare : 0), (bareall > 0 ? all[key] / bareall : 0)
      else printf "  %-9s %d links shaped%s, %d flows%s: %.3f x %sk x one link", e, k, (b ? ", both ways" : ""), lf[i], (b ? " each way" : ""), (one > 0 ? lg[i] / ((b ? 2 : 1) * k * one) : 0), (b ? "2 x " : "")
      printf "%s%s\n", (xo != "" ? "; " : ""), xo
    }
    if (!shown) print "  (none)"
  }' "$W/results" "$W/rr"
if [ -s "$W/warnings" ]; then
  echo
  cut -d'|' -f2- "$W/warnings"
fi
echo
echo "ratio: shaped rows / (k x bare veth shaped, this run); both ways (flows x2) / (2 x k x bare veth shaped); unshaped rows / bare veth unshaped (this run)"
echo "CPU-s/GB, CPU %: the bond processes of both sides (lagkit: both \`lagkit up\`; OVS: both ovs-vswitchd + ovsdb-server), utime+stime from /proc/PID/stat; CPU % = of one core over the run. The bpf engine forwards in the kernel (softirq, charged to no daemon): compare engines by all-s/GB"
echo "all-s/GB: whole machine busy CPU (/proc/stat) per GB, includes iperf3 and the kernel; all x bare: that / the bare unshaped veth's all-s/GB (unshaped rows)"
echo "retrans: iperf3's retransmits (both directions for both-ways rows); DSACK: duplicate-SACKs A's senders received (TcpExt TCPDSACKRecv + TCPDSACKOfoRecv) in the median run: segments delivered twice or resent needlessly"
echo "xOVS Gbit/s, xOVS CPU/GB: lagkit / OVS with the same k and shaping (throughput, > 1 = lagkit faster; CPU-s/GB, < 1 = lagkit cheaper)"
echo "runs: every run's Gbit/s; per member: bytes each member of A sent in the median run (lagkit: \`lagkit stats\`; OVS: kernel counters of the member veths) / $SECS s, mean frame size on the members (GSO frames count once), member+engine drops (lagkit); both ways: iperf3's A->B + B->A Gbit/s first, and what A's members received (B->A) last"
echo "latency: trans/s = transactions per second (one in flight: us/trans is the round trip); ratio = / bare veth; x1 = 2 members / 1 member, same engine; CPU % = both \`lagkit up\`; all us/tr = whole machine busy CPU per transaction"
echo "shaped tbf qdiscs checked after each case (present, and counted traffic): $([ -s "$W/warnings" ] && echo 'see WARNING lines' || echo 'all present')"
echo "total time: $((END - START)) s"
