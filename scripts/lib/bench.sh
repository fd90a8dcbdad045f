# bench.sh — shared by the benchmark scripts (bench-bond.sh, bench-switch.sh):
# logging, namespaces and processes of one case and their teardown, CPU
# accounting, shaping and its check, iperf3 servers, Open vSwitch instances.
# Sourced, never run; the caller sets W (its work directory), PFX (the prefix
# of its namespaces), TBF (the shaping qdisc) and HZ, and installs
# `trap cleanup EXIT`. Only what a case recorded in CASE_PIDS, CASE_NS and
# CASE_OVS is stopped or removed.
# shellcheck shell=bash

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- teardown --
# What the current case started; teardown_case undoes it (also from the trap).
CASE_PIDS=()   # "pid:comm"
CASE_NS=()
CASE_OVS=()    # OVS run directories
SLEEP_PID=

pause() { sleep "$1" & SLEEP_PID=$!; wait "$SLEEP_PID"; SLEEP_PID=; }

# kill_pid PID COMM [SIG]: stop one process this script started, if it is still that program.
kill_pid() {
  local pid=$1 comm=$2 sig=${3:-TERM} c i
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 0
  c=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  [ "$c" = "$comm" ] || [ "$c" = ip ] || return 0
  kill "-$sig" "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    [ -d "/proc/$pid" ] || return 0
    grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  log "WARNING: $comm ($pid) ignored SIG$sig for 5 s: killing it"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stop_ovs() {
  local D=$1 pid
  [ -d "$D" ] || return 0
  [ -S "$D/ovs-vswitchd.ctl" ] && { timeout 10 ovs-appctl -t "$D/ovs-vswitchd.ctl" exit --cleanup >/dev/null 2>&1 || true; }
  [ -f "$D/ovs-vswitchd.pid" ] && { pid=$(cat "$D/ovs-vswitchd.pid" 2>/dev/null || true); kill_pid "$pid" ovs-vswitchd; }
  [ -S "$D/ovsdb-server.ctl" ] && { timeout 10 ovs-appctl -t "$D/ovsdb-server.ctl" exit >/dev/null 2>&1 || true; }
  [ -f "$D/ovsdb-server.pid" ] && { pid=$(cat "$D/ovsdb-server.pid" 2>/dev/null || true); kill_pid "$pid" ovsdb-server; }
  return 0
}

teardown_case() {
  local i p ns
  for ((i = ${#CASE_PIDS[@]} - 1; i >= 0; i--)); do
    p=${CASE_PIDS[$i]}
    kill_pid "${p%%:*}" "${p#*:}"
  done
  CASE_PIDS=()
  for D in "${CASE_OVS[@]}"; do stop_ovs "$D"; done
  CASE_OVS=()
  for ns in "${CASE_NS[@]}"; do
    [ -e "/run/netns/$ns" ] || continue
    # anything still inside one of our namespaces was started by us
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || log "WARNING: could not delete netns $ns"
  done
  CASE_NS=()
}

cleanup() {
  local rc=$?
  set +e
  trap - INT TERM
  [ -n "$SLEEP_PID" ] && kill "$SLEEP_PID" 2>/dev/null
  teardown_case
  if [ "$rc" = 0 ]; then rm -rf "$W"; else log "failed or interrupted (rc=$rc); everything torn down; logs in $W"; fi
  exit "$rc"
}

# Namespaces of an earlier run of this script whose process is gone.

# remove_leftover_netns BASE SCRIPT: namespaces BASE<PID>-* of an earlier run
# of SCRIPT whose process is gone.
remove_leftover_netns() {
  local ns owner
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$1[0-9]+-" || true); do
    owner=${ns#"$1"}; owner=${owner%%-*}
    [ -d "/proc/$owner" ] && continue
    log "removing leftover netns $ns (its $2 $owner is gone)"
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" || true
  done
}

# ----------------------------------------------------------------- helpers --
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }

# cpu_of PID...: user+system CPU seconds of these processes (all threads).
cpu_of() {
  local t=0 p s
  for p in "$@"; do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    s=${s##*) }   # fields after "(comm) "; utime and stime are fields 14 and 15
    t=$(awk -v a="$t" -v s="$s" 'BEGIN { split(s, f, " "); printf "%d", a + f[12] + f[13] }')
  done
  calc "$t / $HZ"
}

# Busy CPU seconds of the whole machine.
sys_busy() {
  awk -v hz="$HZ" '/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9; printf "%.6f", b / hz; exit }' /proc/stat
}

new_ns() { # new_ns NAME: creates netns $PFX-NAME, sets NS to its name
  NS=$PFX-$1
  ip netns add "$NS"
  CASE_NS+=("$NS")
  ip -n "$NS" link set lo up
}

links() { # links NSA NSB K: veth pairs a0-b0 .. a{K-1}-b{K-1}, up
  local i
  for ((i = 0; i < $3; i++)); do
    ip link add "a$i" netns "$1" type veth peer name "b$i" netns "$2"
    ip -n "$1" link set "a$i" up
    ip -n "$2" link set "b$i" up
  done
}

members_off() { # members_off NS IF...: members must not answer ARP or speak IPv6
  local ns=$1 i; shift
  for i in "$@"; do
    ip -n "$ns" link set "$i" arp off
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
  done
}

shape() { # shape NS IF...
  local ns=$1 i; shift
  for i in "$@"; do tc -n "$ns" qdisc replace dev "$i" root "${TBF[@]}"; done
}

# tbf_check NS IF...: prints problems (missing tbf, or a tbf that saw no bytes).
tbf_check() {
  local ns=$1 i j kind bytes; shift
  for i in "$@"; do
    j=$(tc -n "$ns" -s -j qdisc show dev "$i" root 2>/dev/null || echo '[]')
    kind=$(jq -r '.[0].kind // "none"' <<<"$j")
    bytes=$(jq -r '.[0].bytes // 0' <<<"$j")
    if [ "$kind" != tbf ]; then echo -n "$i:no-tbf($kind) "
    elif [ "$bytes" = 0 ]; then echo -n "$i:tbf-idle "
    fi
  done
}

# start_server NS PORT NAME CMD...: starts CMD in NS (recorded for teardown
# as NAME) and waits until it listens on TCP PORT.
start_server() {
  local ns=$1 port=$2 name=$3 pid i; shift 3
  ip netns exec "$ns" "$@" >"$W/$name-server-$ns-$port.log" 2>&1 &
  pid=$!
  CASE_PIDS+=("$pid:$name")
  for i in $(seq 1 50); do
    [ -n "$(ip netns exec "$ns" ss -Hltn "sport = :$port")" ] && return 0
    sleep 0.1
  done
  die "$name server in $ns did not start: $(cat "$W/$name-server-$ns-$port.log")"
}

# load_run ID R NSA "PIDS" KIND ARG...: run R of `lagkit load client --kind
# KIND ARG... --duration SECS --json` in NSA, its JSON in $W/ID.R.json; it
# must report transactions and no errors. Appends "transactions/s cpu-s
# wall-s all-s transactions" to $W/ID.reps (cpu-s: of PIDS; all-s: the
# whole machine's busy CPU).
load_run() {
  local id=$1 r=$2 nsa=$3 pids=$4 kind=$5 out c0 c1 s0 s1 t0 t1; shift 5
  local -a pidv; read -r -a pidv <<<"$pids"
  out=$W/$id.$r.json
  c0=$(cpu_of "${pidv[@]}"); s0=$(sys_busy); t0=$(date +%s.%N)
  ip netns exec "$nsa" timeout $((SECS + 60)) "$LAGKIT" load client --kind "$kind" "$@" --duration "${SECS}s" --json >"$out" 2>"$W/$id.$r.err" ||
    die "lagkit load client --kind $kind ($id run $r) failed: $(tail -3 "$W/$id.$r.err")"
  c1=$(cpu_of "${pidv[@]}"); s1=$(sys_busy); t1=$(date +%s.%N)
  jq -e '.transactions_per_s > 0 and .errors == 0' "$out" >/dev/null 2>&1 ||
    die "$kind ($id run $r): no transactions or errors in $out: $(jq -c '{transactions, errors}' "$out" 2>/dev/null)"
  jq -r --arg c "$(calc "$c1 - $c0")" --arg w "$(calc "$t1 - $t0")" --arg s "$(calc "$s1 - $s0")" \
    '"\(.transactions_per_s) \($c) \($w) \($s) \(.transactions)"' "$out" >>"$W/$id.reps"
}

start_iperf_server() { # start_iperf_server NS
  start_server "$1" 5201 iperf3 iperf3 -s
}

wait_ping() { # wait_ping NS ADDR: until ADDR answers (ARP/MAC learning through the bond)
  # (no ping on this machine: a TCP connect to a closed port must be refused by ADDR)
  local i
  for i in $(seq 1 30); do
    [[ $(ip netns exec "$1" timeout 1 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) == *refused* ]] && return 0
    sleep 0.2
  done
  die "no answer from $2 to $1 through the bond"
}


start_ovs() { # start_ovs NS DIR HWADDR
  local ns=$1 D=$2 hw=$3
  mkdir -p "$D"
  CASE_OVS+=("$D")
  ovsdb-tool create "$D/conf.db" "$SCHEMA"
  env OVS_RUNDIR="$D" OVS_LOGDIR="$D" OVS_DBDIR="$D" ip netns exec "$ns" \
    ovsdb-server "$D/conf.db" --remote="punix:$D/db.sock" --unixctl="$D/ovsdb-server.ctl" \
    --pidfile="$D/ovsdb-server.pid" --log-file="$D/ovsdb-server.log" --detach >>"$D/start.log" 2>&1
  ovs-vsctl --db="unix:$D/db.sock" --no-wait init
  env OVS_RUNDIR="$D" OVS_LOGDIR="$D" OVS_DBDIR="$D" ip netns exec "$ns" \
    ovs-vswitchd "unix:$D/db.sock" --unixctl="$D/ovs-vswitchd.ctl" \
    --pidfile="$D/ovs-vswitchd.pid" --log-file="$D/ovs-vswitchd.log" --detach >>"$D/start.log" 2>&1
  ovs-vsctl --timeout=20 --db="unix:$D/db.sock" add-br br0 -- set bridge br0 datapath_type=netdev \
    other-config:hwaddr="\"$hw\""
}


# bench_start SCRIPT BASE PACKAGES TOOL...: must be root with every TOOL
# (PACKAGES: what to apt-get otherwise; scripts/setup.sh installs them all
# first); removes the namespaces of earlier
# runs of SCRIPT (BASE<PID>-*), makes $W, installs the cleanup trap, builds
# lagkit unless BUILD=0 and checks $LAGKIT is there.
bench_start() {
  local script=$1 base=$2 pkgs=$3 t; shift 3
  [ "$(id -u)" = 0 ] || die "must run as root"
  bash "$ROOT/scripts/setup.sh" build run test || die "scripts/setup.sh failed"
  for t in "$@"; do
    command -v "$t" >/dev/null || die "missing $t (apt-get install -y --no-install-recommends $pkgs)"
  done
  remove_leftover_netns "$base" "$script"
  mkdir -p "$W"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  if [ "$BUILD" = 1 ]; then
    log "building lagkit (release) into $TARGET"
    (cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release -q -p lagkit) || die "cargo build failed"
  fi
  [ -x "$LAGKIT" ] || die "no $LAGKIT (build it, or drop --no-build)"
}
