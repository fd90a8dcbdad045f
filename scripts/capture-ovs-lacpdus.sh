#!/usr/bin/env bash
# capture-ovs-lacpdus.sh — capture real LACPDUs sent by Open vSwitch (userspace
# datapath) and store them as lagkit test vectors in crates/wire/tests/vectors/.
#
# Topology (everything inside two network namespaces, no addresses anywhere):
#
#   netns lkcap-a                          netns lkcap-b
#   OVS "A": br0 (netdev)                  OVS "B": br0 (netdev)
#     bond0 = a0 + a1   <-- veth a0-b0 -->   bond0 = b0 + b1
#                       <-- veth a1-b1 -->
#
# Each side runs its own ovsdb-server and ovs-vswitchd inside its namespace,
# with run/db/log files in /tmp/lkcap-a and /tmp/lkcap-b.  tcpdump
# ('ether proto 0x8809') captures on a0 (in lkcap-a) and on b0 (in lkcap-b),
# i.e. both ends of the same link, for the whole run.
#
# Both bridges get a fixed MAC (other-config:hwaddr; the LACP system id is the
# bridge MAC, which is otherwise random here) and the members fixed OpenFlow
# port numbers (ofport_request: a0/b0 = 1, a1/b1 = 2 = LACP port numbers), so
# every run produces the same bytes, except the LACP key: OVS uses the port
# number of whichever member it registered first (1 or 2, varies by run).
#
# Phases (A = lkcap-a, B = lkcap-b):
#   1 initial     : A bond0 lacp=active lacp-time=fast; B has no bond  (WAIT_INITIAL s)
#   2 fast        : B bond0 lacp=active lacp-time=fast                 (WAIT_FAST s)
#   3 slow        : both lacp-time=slow                                (WAIT_SLOW s)
#   4 passive     : both bonds deleted; B re-created lacp=passive fast,
#                   then A re-created lacp=active fast                 (WAIT_PASSIVE s)
#   5 member-gone : B takes b0 out of its bond (b1 stays): A's a0 partner
#                   expires, then defaults, while a1 stays in sync      (WAIT_MEMBER_GONE s)
#   6 bond-gone   : B deletes its bond: a1 defaults too                (WAIT_BOND_GONE s)
#
# Then one frame per vector is picked from the sender-side capture and written
# as <name>.hex (whole Ethernet frame, no FCS, lowercase, 16 bytes a line, with
# '#' comment header) and <name>.tshark.txt (tshark -O lacp, LACP part).
#
# Idempotent: leftovers of an earlier run (namespaces lkcap-*, daemons whose
# pidfiles are in /tmp/lkcap-*) are removed first; a trap tears everything
# down on exit, error, Ctrl-C (SIGINT) or SIGTERM.  Only processes started by this script are
# stopped, by PID.  Pcaps, logs and a summary stay in /tmp/lkcap-out.
#
# Usage: sudo scripts/capture-ovs-lacpdus.sh            (about 4 minutes)
# Env:   VEC_DIR (default crates/wire/tests/vectors), WAIT_INITIAL=65
#        WAIT_FAST=15 WAIT_SLOW=70 WAIT_PASSIVE=15 WAIT_MEMBER_GONE=15
#        WAIT_BOND_GONE=35, NO_VECTORS=1
#        (capture and summarize only, do not write the vectors).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VEC=${VEC_DIR:-$ROOT/crates/wire/tests/vectors}
NSA=lkcap-a
NSB=lkcap-b
DA=/tmp/lkcap-a
DB=/tmp/lkcap-b
OUT=/tmp/lkcap-out
WAIT_INITIAL=${WAIT_INITIAL:-65}
WAIT_FAST=${WAIT_FAST:-15}
WAIT_SLOW=${WAIT_SLOW:-70}
WAIT_PASSIVE=${WAIT_PASSIVE:-15}
WAIT_MEMBER_GONE=${WAIT_MEMBER_GONE:-15}
WAIT_BOND_GONE=${WAIT_BOND_GONE:-35}
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema

# Fixed MACs so that system ids and sources are the same on every run.
MAC_a0=02:00:00:0a:00:00
MAC_a1=02:00:00:0a:00:01
MAC_b0=02:00:00:0b:00:00
MAC_b1=02:00:00:0b:00:01
HWADDR_A=02:00:00:0a:ff:ff   # bridge br0 in A = A's LACP system id
HWADDR_B=02:00:00:0b:ff:ff

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

bash "$(dirname "$0")/setup.sh" run test || die "scripts/setup.sh failed"
for tool in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl tcpdump tshark xxd ip; do
  command -v "$tool" >/dev/null || die "missing $tool (apt-get install -y --no-install-recommends openvswitch-switch tshark tcpdump xxd iproute2)"
done
[ "$(id -u)" = 0 ] || die "must run as root"

# ---------------------------------------------------------------- teardown --
# kill_pid PID COMM: stop PID only if it is still the process we started.
kill_pid() {
  local pid=$1 comm=$2 sig=${3:-TERM} i
  [ -n "$pid" ] || return 0
  [ -r "/proc/$pid/comm" ] || return 0
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 0
  kill "-$sig" "$pid" 2>/dev/null || true
  for i in $(seq 1 30); do
    [ -d "/proc/$pid" ] || return 0
    # a reaped-but-not-waited child shows up as a zombie: that is gone too
    grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop_ovs() {
  local D=$1 pid
  [ -d "$D" ] || return 0
  if [ -S "$D/ovs-vswitchd.ctl" ]; then
    timeout 10 ovs-appctl -t "$D/ovs-vswitchd.ctl" exit --cleanup >/dev/null 2>&1 || true
  fi
  if [ -f "$D/ovs-vswitchd.pid" ]; then
    pid=$(cat "$D/ovs-vswitchd.pid" 2>/dev/null || true); kill_pid "$pid" ovs-vswitchd
  fi
  if [ -S "$D/ovsdb-server.ctl" ]; then
    timeout 10 ovs-appctl -t "$D/ovsdb-server.ctl" exit >/dev/null 2>&1 || true
  fi
  if [ -f "$D/ovsdb-server.pid" ]; then
    pid=$(cat "$D/ovsdb-server.pid" 2>/dev/null || true); kill_pid "$pid" ovsdb-server
  fi
}

stop_captures() {
  local pid
  [ -f "$OUT/capture.pids" ] || return 0
  while read -r pid; do kill_pid "$pid" tcpdump INT; done <"$OUT/capture.pids"
  rm -f "$OUT/capture.pids"
}

cleanup() {
  local rc=$?
  set +e
  [ -n "${SLEEP_PID:-}" ] && kill_pid "$SLEEP_PID" sleep
  stop_captures
  for D in "$DA" "$DB"; do
    for f in "$D"/*.log; do [ -f "$f" ] && cp -f "$f" "$OUT/$(basename "$D")-$(basename "$f")"; done
    stop_ovs "$D"
    rm -rf "$D"
  done
  for ns in "$NSA" "$NSB"; do
    ip netns list | grep -qw "^$ns" && ip netns del "$ns"
  done
  [ $rc = 0 ] || log "failed (rc=$rc); teardown done, see $OUT"
  exit $rc
}

log "removing leftovers of an earlier run (if any)"
stop_captures
stop_ovs "$DA"; stop_ovs "$DB"
for ns in "$NSA" "$NSB"; do ip netns list | grep -qw "^$ns" && ip netns del "$ns"; done
rm -rf "$DA" "$DB" "$OUT"
mkdir -p "$OUT" "$DA" "$DB"

trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------- setup --
log "namespaces and veths"
ip netns add "$NSA"
ip netns add "$NSB"
ip link add a0 netns "$NSA" type veth peer name b0 netns "$NSB"
ip link add a1 netns "$NSA" type veth peer name b1 netns "$NSB"
for spec in "$NSA a0 $MAC_a0" "$NSA a1 $MAC_a1" "$NSB b0 $MAC_b0" "$NSB b1 $MAC_b1"; do
  set -- $spec
  ip -n "$1" link set "$2" address "$3"
  ip -n "$1" link set "$2" arp off
  ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
  ip -n "$1" link set "$2" up
done
ip -n "$NSA" link set lo up
ip -n "$NSB" link set lo up

log "captures on a0 (lkcap-a) and b0 (lkcap-b)"
start_capture() {
  local ns=$1 ifc=$2 pid i
  ip netns exec "$ns" tcpdump -Z root -U --immediate-mode -s 0 -i "$ifc" \
    -w "$OUT/$ifc.pcap" 'ether proto 0x8809' 2>"$OUT/tcpdump-$ifc.log" &
  pid=$!
  echo "$pid" >>"$OUT/capture.pids"
  for i in $(seq 1 50); do grep -qs 'listening on' "$OUT/tcpdump-$ifc.log" && return 0; sleep 0.1; done
  die "tcpdump on $ifc did not start: $(cat "$OUT/tcpdump-$ifc.log")"
}
start_capture "$NSA" a0
start_capture "$NSB" b0

start_ovs() {
  local ns=$1 D=$2 hw=$3
  ovsdb-tool create "$D/conf.db" "$SCHEMA"
  env OVS_RUNDIR="$D" OVS_LOGDIR="$D" OVS_DBDIR="$D" ip netns exec "$ns" \
    ovsdb-server "$D/conf.db" --remote="punix:$D/db.sock" --unixctl="$D/ovsdb-server.ctl" \
    --pidfile="$D/ovsdb-server.pid" --log-file="$D/ovsdb-server.log" --detach
  ovs-vsctl --db="unix:$D/db.sock" --no-wait init
  env OVS_RUNDIR="$D" OVS_LOGDIR="$D" OVS_DBDIR="$D" ip netns exec "$ns" \
    ovs-vswitchd "unix:$D/db.sock" --unixctl="$D/ovs-vswitchd.ctl" \
    --pidfile="$D/ovs-vswitchd.pid" --log-file="$D/ovs-vswitchd.log" --detach
  ovs-vsctl --timeout=20 --db="unix:$D/db.sock" add-br br0 -- set bridge br0 datapath_type=netdev \
    other-config:hwaddr=\"$hw\"
}
VA() { ovs-vsctl --timeout=20 --db="unix:$DA/db.sock" "$@"; }
VB() { ovs-vsctl --timeout=20 --db="unix:$DB/db.sock" "$@"; }
AA() { ovs-appctl -t "$DA/ovs-vswitchd.ctl" "$@"; }
AB() { ovs-appctl -t "$DB/ovs-vswitchd.ctl" "$@"; }

log "OVS A in $NSA, OVS B in $NSB"
start_ovs "$NSA" "$DA" "$HWADDR_A"
start_ovs "$NSB" "$DB" "$HWADDR_B"
OVS_VERSION=$(ovs-vswitchd --version | head -1)

# sleep in the background so that a signal runs the trap at once
SLEEP_PID=
pause() { sleep "$1" & SLEEP_PID=$!; wait "$SLEEP_PID"; SLEEP_PID=; }

PHASES=()
mark() { # mark NAME: a phase starts now
  local t; t=$(date +%s.%N)
  PHASES+=("$1")
  echo "$1 $t" >>"$OUT/phases.txt"
  log "phase $1 (t=$t)"
}
snapshot() { # lacp/show and bond/show of both sides at the end of a phase
  local p=$1
  { AA lacp/show; AA bond/show; AA lacp/show-stats; } >"$OUT/$p-A.show" 2>&1 || true
  { AB lacp/show; AB bond/show; AB lacp/show-stats; } >"$OUT/$p-B.show" 2>&1 || true
}

# ------------------------------------------------------------------ phases --
# add-bond BRIDGE-SIDE M0 M1 LACP-MODE LACP-TIME
bond_a() { VA add-bond br0 bond0 a0 a1 lacp="$1" bond_mode=balance-tcp other_config:lacp-time="$2" \
  -- set interface a0 ofport_request=1 -- set interface a1 ofport_request=2; }
bond_b() { VB add-bond br0 bond0 b0 b1 lacp="$1" bond_mode=balance-tcp other_config:lacp-time="$2" \
  -- set interface b0 ofport_request=1 -- set interface b1 ofport_request=2; }

mark initial
bond_a active fast
pause "$WAIT_INITIAL"; snapshot initial

mark fast
bond_b active fast
pause "$WAIT_FAST"; snapshot fast

mark slow
VA set port bond0 other_config:lacp-time=slow
VB set port bond0 other_config:lacp-time=slow
pause "$WAIT_SLOW"; snapshot slow

# Fresh bonds: changing lacp/lacp-time on a running OVS bond keeps the old
# periodic and receive timers (up to 30 s / 90 s after a slow phase).
mark passive
VA del-port br0 bond0
VB del-port br0 bond0
bond_b passive fast
bond_a active fast
pause "$WAIT_PASSIVE"; snapshot passive

mark member-gone
VB remove port bond0 interfaces "$(VB get interface b0 _uuid)"
pause "$WAIT_MEMBER_GONE"; snapshot member-gone

mark bond-gone
VB del-port br0 bond0
pause "$WAIT_BOND_GONE"; snapshot bond-gone

mark end
stop_captures
sleep 0.5

# ------------------------------------------------------------- analysis ----
phase_start() { awk -v p="$1" '$1==p{print $2}' "$OUT/phases.txt"; }
phase_end() { awk -v p="$1" 'f{print $2; exit} $1==p{f=1}' "$OUT/phases.txt"; }
win() { echo "frame.time_epoch >= $(phase_start "$1") && frame.time_epoch < $(phase_end "$1")"; }

bits() { # state octet (decimal or 0x..) -> bit names
  local v=$(($1)) n=() names=(Activity Timeout Aggregation Synchronization Collecting Distributing Defaulted Expired) i
  for i in 0 1 2 3 4 5 6 7; do (( v >> i & 1 )) && n+=("${names[$i]}"); done
  [ ${#n[@]} -gt 0 ] && echo "${n[*]}" || echo "(none)"
}

{
  echo "# $OVS_VERSION; $(tshark --version | head -1)"
  echo "# per phase and sender: time since phase start, frame length, actor state, partner state"
  for p in initial fast slow passive member-gone bond-gone; do
    for side in a0 b0; do
      src=$([ $side = a0 ] && echo "$MAC_a0" || echo "$MAC_b0")
      echo "== phase $p, sender $side ($src), seen in a0.pcap"
      tshark -r "$OUT/a0.pcap" -Y "eth.src == $src && $(win $p)" -T fields \
        -e frame.time_epoch -e frame.len -e lacp.actor.state -e lacp.partner.state -e lacp.partner.sysid 2>/dev/null |
        awk -v t0="$(phase_start $p)" '{ d = ($1 - t0); printf "  +%7.3fs  gap %7s  len %s  actor %s  partner %s  partner-sys %s\n", d, (NR>1 ? sprintf("%.3f", $1 - prev) : "-"), $2, $3, $4, $5; prev = $1 }'
    done
  done
  echo "== expert / malformed (all frames, both captures; empty = none)"
  for f in a0 b0; do
    echo "-- $f.pcap: $(tshark -r "$OUT/$f.pcap" 2>/dev/null | wc -l) frames"
    tshark -r "$OUT/$f.pcap" -T fields -e frame.number -e _ws.expert -e _ws.malformed 2>/dev/null | awk -F'\t' '$2!="" || $3!=""'
  done
  echo "== frame lengths (a0.pcap, b0.pcap)"
  tshark -r "$OUT/a0.pcap" -T fields -e frame.len -e frame.cap_len 2>/dev/null | sort | uniq -c
  tshark -r "$OUT/b0.pcap" -T fields -e frame.len -e frame.cap_len 2>/dev/null | sort | uniq -c
  echo "== LACP versions"
  tshark -r "$OUT/a0.pcap" -T fields -e lacp.version 2>/dev/null | sort | uniq -c
} >"$OUT/summary.txt"
cat "$OUT/summary.txt" >&2

[ -n "${NO_VECTORS:-}" ] && { log "NO_VECTORS set: not writing vectors"; exit 0; }

# extract NAME PCAP SRC PHASE FILTER WHICH SENDER-CONFIG PEER-CONFIG DESCRIPTION
#   WHICH = first|last matching frame of the phase.
extract() {
  local name=$1 pcap=$2 src=$3 phase=$4 filt=$5 which=$6 conf=$7 peer=$8 desc=$9
  local other ns ifc num tmp f t0 len caplen bytes_self bytes_other
  ifc=$(basename "$pcap" .pcap)
  [ "$ifc" = a0 ] && { ns=$NSA; other=$OUT/b0.pcap; } || { ns=$NSB; other=$OUT/a0.pcap; }
  num=$(tshark -r "$pcap" -Y "eth.src == $src && $(win "$phase") && ($filt)" -T fields -e frame.number 2>/dev/null |
    { [ "$which" = last ] && tail -1 || head -1; })
  if [ -z "$num" ]; then log "WARNING: no frame for $name (phase $phase, $filt)"; return 0; fi
  tmp=$OUT/$name.pcap
  tshark -r "$pcap" -Y "frame.number == $num" -F pcap -w "$tmp" 2>/dev/null
  IFS=$'\t' read -r t0 len caplen < <(tshark -r "$tmp" -T fields -e frame.time_epoch -e frame.len -e frame.cap_len 2>/dev/null)
  [ "$len" = "$caplen" ] || die "$name: truncated capture ($caplen of $len)"
  # same bytes at the other end of the veth?
  bytes_self=$(tail -c +41 "$tmp" | xxd -p | tr -d '\n')
  local lo hi; lo=$(awk -v t="$t0" 'BEGIN{printf "%.6f", t-0.05}'); hi=$(awk -v t="$t0" 'BEGIN{printf "%.6f", t+0.05}')
  tshark -r "$other" -Y "eth.src == $src && frame.time_epoch >= $lo && frame.time_epoch <= $hi" \
    -F pcap -w "$OUT/$name.other.pcap" 2>/dev/null || true
  bytes_other=$(tail -c +41 "$OUT/$name.other.pcap" 2>/dev/null | head -c "$len" | xxd -p | tr -d '\n')
  local same="identical frame also seen at the receiving end ($(basename "$other"))"
  [ "$bytes_self" = "$bytes_other" ] || same="WARNING: receiving end ($(basename "$other")) did not show the same bytes"

  local F=(-e lacp.version
    -e lacp.actor.sys_priority -e lacp.actor.sysid -e lacp.actor.key -e lacp.actor.port_priority -e lacp.actor.port
    -e lacp.actor.state -e lacp.actor.state_str
    -e lacp.partner.sys_priority -e lacp.partner.sysid -e lacp.partner.key -e lacp.partner.port_priority -e lacp.partner.port
    -e lacp.partner.state -e lacp.partner.state_str
    -e lacp.collector.max_delay -e eth.src -e eth.dst -e _ws.expert -e _ws.malformed)
  local v asp asid ak app ap as ass psp psid pk ppp pp ps pss cmd esrc edst exp mal
  IFS='|' read -r v asp asid ak app ap as ass psp psid pk ppp pp ps pss cmd esrc edst exp mal \
    < <(tshark -r "$tmp" -T fields -E separator='|' -E occurrence=f "${F[@]}" 2>/dev/null; echo)
  local rel; rel=$(awk -v a="$t0" -v b="$(phase_start "$phase")" 'BEGIN{printf "%.3f", a-b}')
  f=$VEC/$name.hex
  {
    echo "# lagkit LACPDU test vector: $name"
    echo "# $desc"
    echo "# Whole Ethernet frame as captured (dst MAC onwards, no FCS), $len bytes, lowercase hex, 16 bytes a line."
    echo "# Sender: $OVS_VERSION, userspace datapath (bridge br0 datapath_type=netdev), $conf"
    echo "# Peer:   $peer"
    echo "# Captured $(date -u -d "@${t0%.*}" +%Y-%m-%dT%H:%M:%SZ) by scripts/capture-ovs-lacpdus.sh: tcpdump 'ether proto 0x8809' on $ifc"
    echo "#   in netns $ns (sender side), frame #$num, +${rel}s after phase '$phase' began; $same."
    echo "# Decoded by $(tshark --version | head -1 | sed 's/ (Git.*//'):"
    echo "#   eth dst $edst, src $esrc, type 0x8809, slow-protocols subtype 1 (LACP), LACP version $v"
    echo "#   actor:   system priority $asp, system $asid, key $ak, port priority $app, port $ap,"
    echo "#            state 0x$(printf %02x "$as") = $(bits "$as") [tshark: $ass]"
    echo "#   partner: system priority $psp, system $psid, key $pk, port priority $ppp, port $pp,"
    echo "#            state 0x$(printf %02x "$ps") = $(bits "$ps") [tshark: $pss]"
    echo "#   collector max delay: $cmd"
    echo "#   tshark expert info: ${exp:-none}; malformed: ${mal:-no}"
    tail -c +41 "$tmp" | head -c "$len" | xxd -p -c 16
  } >"$f"
  tshark -r "$tmp" -O lacp 2>/dev/null | awk '/^Slow Protocols|^Link Aggregation Control Protocol/{p=1} p && NF' >"$VEC/$name.tshark.txt"
  log "wrote $f (frame $num, $len bytes, actor 0x$(printf %02x "$as"), partner 0x$(printf %02x "$ps"))"
}

mkdir -p "$VEC"
rm -f "$VEC"/ovs-*.hex "$VEC"/ovs-*.tshark.txt
CONF_A_FAST="bridge other-config:hwaddr=$HWADDR_A, bond0 = a0+a1 (ofport_request 1,2), lacp=active, bond_mode=balance-tcp, other_config:lacp-time=fast"
NOPEER="none: veth peer b0 is up in lkcap-b but has no OVS bond yet (nothing answers)"
extract ovs-active-fast-initial "$OUT/a0.pcap" "$MAC_a0" initial "frame" first \
  "$CONF_A_FAST" "$NOPEER" \
  "First LACPDU an active, fast OVS bond sends on a member right after the bond is created, before it has heard any partner (member starts EXPIRED: 3 PDUs at 1 s)."
extract ovs-active-fast-nopartner-defaulted "$OUT/a0.pcap" "$MAC_a0" initial "lacp.actor.state.defaulted == 1" first \
  "$CONF_A_FAST" "$NOPEER" \
  "What the same bond sends once the initial 3 s expire without a partner (member DEFAULTED): repeated every 30 s."
extract ovs-active-fast-synced "$OUT/a0.pcap" "$MAC_a0" fast \
  "lacp.actor.state == 0x3f && lacp.partner.state == 0x3f" first \
  "$CONF_A_FAST" "OVS B in lkcap-b, bond0 = b0+b1, lacp=active, lacp-time=fast" \
  "Active fast OVS bond, both sides collecting+distributing with short timeout (steady state)."
extract ovs-active-slow-synced "$OUT/a0.pcap" "$MAC_a0" slow \
  "lacp.actor.state == 0x3d && lacp.partner.state == 0x3d" last \
  "bridge other-config:hwaddr=$HWADDR_A, bond0 = a0+a1 (ofport_request 1,2), lacp=active, bond_mode=balance-tcp, other_config:lacp-time=slow" \
  "OVS B, bond0 = b0+b1, lacp=active, lacp-time=slow" \
  "Active slow OVS bond, both sides collecting+distributing with long timeout (steady state)."
extract ovs-passive-synced "$OUT/b0.pcap" "$MAC_b0" passive \
  "lacp.actor.state.activity == 0 && lacp.actor.state.distributing == 1 && lacp.partner.state.distributing == 1" last \
  "bridge other-config:hwaddr=$HWADDR_B, bond0 = b0+b1 (ofport_request 1,2), lacp=passive, bond_mode=balance-tcp, other_config:lacp-time=fast" \
  "OVS A in lkcap-a, bond0 = a0+a1, lacp=active, lacp-time=fast" \
  "Passive OVS bond facing an active fast one, synced (collecting+distributing)."
MGONE="OVS B (bond0 passive fast) took b0 out of its bond: nothing answers on a0 any more, a1 stays in sync"
extract ovs-active-fast-partner-expired "$OUT/a0.pcap" "$MAC_a0" member-gone \
  "lacp.actor.state.expired == 1" first \
  "$CONF_A_FAST" "$MGONE" \
  "Active fast OVS bond, member a0 after its partner stopped sending on that link: partner info timed out (3 s), member EXPIRED."
extract ovs-active-fast-partner-defaulted "$OUT/a0.pcap" "$MAC_a0" member-gone \
  "lacp.actor.state.defaulted == 1" first \
  "$CONF_A_FAST" "$MGONE" \
  "Same member 3 s later: partner info expired again, member DEFAULTED (detached) while the other member keeps the bond negotiated."
log "done; pcaps, logs, lacp/show snapshots and summary.txt in $OUT"
