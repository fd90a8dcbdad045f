#!/usr/bin/env bash
# Hitless `systemctl restart` of lagkit@bond0 under a real systemd.
#
# Boots the host's own systemd (/lib/systemd/systemd, Debian 252) as PID 1 of
# fresh pid, mount, cgroup, uts, ipc and network namespaces (an overlay of /
# with a tmpfs upper layer, so nothing it writes reaches the host), installs
# packaging/systemd/lagkit@.service there and runs the bond through it:
#
#   S  the instance's network namespace: lagkit@bond0 under systemd, BPF
#      engine, 10.77.0.1/24, pins in the instance's own bpffs at /sys/fs/bpf
#   P  a named netns (lkp-sysd-<pid>): the partner, `lagkit up` by hand,
#      10.77.0.2/24, pins in /run/lagkit/bpffs
#
# both 802.3ad, fast LACP, layer3+4, joined by two veth cables (eth1, eth2).
# With a numbered UDP datagram every 5 ms from S to P it runs `systemctl
# restart lagkit@bond0` N times, each time checking that the old daemon
# exited 75 (SIGUSR2: RestartKillSignal) and that the new one adopted the
# pinned data path, then reports sent/received/lost, the longest gap and any
# duplicates. Then `systemctl stop` must leave no program on S's members, no
# pin under the instance's /sys/fs/bpf/lagkit and no daemon.
#
# Nothing is addressed or routed in the root network namespace. Everything
# (the instance, the partner, P, the veths, the bpffs it mounted, its cgroup)
# is removed on exit, also when a step fails, and the removal is checked.
#
# Usage (root): scripts/systemd-restart.sh [-n N] [--engine E] [--package DEB] [--keep-logs] [--no-settle]
#   -n N           restarts (default 5)
#   --engine E     S's engine: bpf (default; adopted through its pins) or
#                  userspace (its TAP and member sockets go through systemd's
#                  file-descriptor store to the next start)
#   --package DEB  optional: dpkg -i DEB inside the instance (unit and
#                  /usr/bin/lagkit from the package) instead of installing the
#                  repository's unit with the binary path replaced; one more
#                  handoff is then done by installing DEB again (its postinst
#                  try-restarts the running instances, as an upgrade does)
#   --keep-logs    keep the work directory (logs) also after a success
#   --no-settle    restart as soon as the new daemon has adopted and the
#                  aggregate shows formed, without waiting until its state
#                  file records both LACP partners (what the next daemon
#                  resumes from; crates/cli/tests/restart.rs waits for it)
#   HOLD_ON_FAIL=1 on a failure, keep everything up until WORKDIR/hold is removed
#   LAGKIT=PATH    the binary (default target/debug/lagkit of this checkout); it is
#                  copied to /tmp/sysd-lagkit/ once at the start of the run
# Exit status: 0 only if no probe was lost and stop left nothing behind.

set -uo pipefail

SELF=$(readlink -f "$0")
REPO=$(cd "$(dirname "$SELF")/.." && pwd)

# --------------------------------------------------------------------------
# Inner part: runs as PID 1 of the new namespaces, builds the root and execs
# systemd (called by the outer part below as `$0 __inner WORKDIR`).
# --------------------------------------------------------------------------
if [ "${1:-}" = __inner ]; then
    set -eu
    M=$2/mnt
    mount -t tmpfs -o mode=755 lagkit-sysd-tmp "$M"
    mkdir -p "$M/upper" "$M/work" "$M/root"
    mount -t overlay lagkit-sysd-ovl -o "lowerdir=/,upperdir=$M/upper,workdir=$M/work" "$M/root"
    N=$M/root
    mount -t proc proc "$N/proc"
    # sysctls that are not namespaced would reach the host: /proc/sys
    # read-only (as nspawn does); systemd-sysctl is skipped then.
    mount --bind "$N/proc/sys" "$N/proc/sys"
    mount -o remount,bind,ro "$N/proc/sys"
    mount -t sysfs sysfs "$N/sys"
    # The root of this cgroup2 is our delegated directory (cgroup namespace).
    mount -t cgroup2 cgroup2 "$N/sys/fs/cgroup"
    # The unit's daemon pins its programs here (as a host's systemd would
    # have mounted it); mode 0700 as docs/bond.md asks.
    mount -t bpf -o mode=0700 bpf "$N/sys/fs/bpf"
    mount -t tmpfs -o mode=755,nosuid dev "$N/dev"
    for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0 net/tun:10:200; do
        IFS=: read -r n ma mi <<<"$d"
        mkdir -p "$(dirname "$N/dev/$n")"
        mknod -m 666 "$N/dev/$n" c "$ma" "$mi"
    done
    mkdir -p "$N/dev/pts" "$N/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$N/dev/pts"
    ln -s pts/ptmx "$N/dev/ptmx"
    ln -s /proc/self/fd "$N/dev/fd"
    mount -t tmpfs -o mode=755,nosuid,nodev run "$N/run"
    mkdir -p "$N/run/systemd/system"
    cd "$N"
    mkdir -p oldroot
    pivot_root . oldroot
    umount -l /oldroot
    rmdir /oldroot
    exec env -i container=lagkit-sysd TERM=dumb /lib/systemd/systemd \
        --unit=basic.target --log-target=journal --show-status=0
fi

# --------------------------------------------------------------------------
# Outer part.
# --------------------------------------------------------------------------
RESTARTS=5
DEB=
KEEP_LOGS=0
SETTLE=1
ENGINE=bpf
usage() { sed -n '/^# Usage/,/^# Exit status/p' "$SELF" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        -n) RESTARTS=${2:?-n needs a number}; shift 2 ;;
        -n*) RESTARTS=${1#-n}; shift ;;
        --package) DEB=$(readlink -f "${2:?--package needs a .deb}"); shift 2 ;;
        --keep-logs) KEEP_LOGS=1; shift ;;
        --no-settle) SETTLE=0; shift ;;
        --engine) ENGINE=${2:?--engine needs bpf or userspace}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "systemd-restart: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case "$RESTARTS" in ''|*[!0-9]*) echo "systemd-restart: -n wants a number" >&2; exit 2 ;; esac

T0=$(date +%s.%N)
say() { printf '[%7.2fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
FAILED=
fail() { FAILED="$*"; say "FAIL: $*"; [ -n "${HOLD_ON_FAIL:-}" ] && { touch "$W/hold"; while [ -e "$W/hold" ]; do sleep 1; done; }; exit 1; }

[ "$(id -u)" = 0 ] || { echo "systemd-restart: run as root" >&2; exit 2; }
for t in nsenter unshare setsid ip bpftool python3 bc timeout /lib/systemd/systemd; do
    command -v "$t" >/dev/null || { echo "systemd-restart: '$t' is missing" >&2; exit 2; }
done
PY=$(python3 -c 'import sys; print(sys.executable)')

ID=$$
W=/tmp/sysd-restart.$ID          # work directory: logs, configs, helpers
CG=/sys/fs/cgroup/unified/lagkit-sysd-$ID
PNS=lkp-sysd-$ID                 # the partner's netns
VP=lks$ID                        # root-namespace names of the veth ends (moved away at once)
HOST_BPFFS=/run/lagkit/bpffs
MOUNTED_BPFFS=0 MADE_BPFFS_DIR=0 MADE_RUN_LAGKIT=0
L= SYSD= PARTNER= SENDER= RECEIVER= PNS_MADE=0
INBIN=/usr/local/bin/lagkit      # the binary's path inside the instance

mkdir -p "$W/mnt"

# The binary, copied once so that a rebuild does not change it under the run.
LAGKIT=${LAGKIT:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/lagkit}
mkdir -p /tmp/sysd-lagkit
if [ -x "$LAGKIT" ]; then
    cp "$LAGKIT" "/tmp/sysd-lagkit/lagkit.$ID" && mv -f "/tmp/sysd-lagkit/lagkit.$ID" /tmp/sysd-lagkit/lagkit
elif [ -n "$DEB" ]; then
    # the partner runs the package's binary
    mkdir -p "$W/deb" && dpkg-deb -x "$DEB" "$W/deb" && cp "$W/deb/usr/bin/lagkit" /tmp/sysd-lagkit/lagkit
else
    echo "systemd-restart: no lagkit binary at $LAGKIT (set LAGKIT=...)" >&2; exit 2
fi
BIN=/tmp/sysd-lagkit/lagkit

# ---------------------------------------------------------------- helpers --
# Everything inside the instance; stdin from /dev/null (a helper left
# waiting on a terminal can hang the instance's shutdown).
sctl() { timeout -k 5 60 nsenter -t "$SYSD" -m -p -C -u -i -n -r -w "$@" </dev/null; }
# S's netns only (a host process there).
in_s() { nsenter -t "$SYSD" -n "$@"; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
any_alive() { local p; for p in "$@"; do alive "$p" && return 0; done; return 1; }
instance_alive() { alive "$SYSD" && [ "$(cat "/proc/$SYSD/comm" 2>/dev/null)" = systemd ]; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

# One line from `lagkit status --json` on stdin: ports, distributing
# members, engine, pin directory, program ids.
cat >"$W/st.py" <<'PY'
import json, sys
try:
    v = json.load(sys.stdin)
except Exception:
    print("none"); sys.exit(0)
if not v:
    print("none"); sys.exit(0)
b = v[-1]
lacp = b.get("lacp") or {}
ms = b.get("members") or []
dist = sum(1 for m in ms if m.get("transmitting") and m.get("collecting"))
dp = b.get("datapath") or {}
ids = set(p["id"] for p in dp.get("programs") or [])
for a in dp.get("attached") or []:
    ids.update(a.get("program_ids") or [])
eng = b.get("engine")
if isinstance(eng, dict):
    eng = next(iter(eng), "?")
print("ports=%s dist=%d/%d engine=%s pinned=%s progs=%s" % (
    lacp.get("number_of_ports", 0), dist, len(ms), eng, dp.get("pinned") or "-",
    ",".join(str(i) for i in sorted(ids)) or "-"))
PY
st_s() { sctl "$INBIN" status --name bond0 --json 2>/dev/null | "$PY" "$W/st.py"; }
st_p() { timeout -k 5 20 ip netns exec "$PNS" "$BIN" status --name bond0 --json </dev/null 2>/dev/null | "$PY" "$W/st.py"; }
formed() { case "$1" in "ports=2 dist=2/2 engine="*) return 0 ;; esac; return 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
# How many members the daemon's state file records an LACP partner for:
# what the next daemon resumes LACP from (crates/cli/tests/restart.rs waits
# for both before its next restart, too).
recorded_partners() {
    local f="/proc/$SYSD/root/run/lagkit/$(stat -L -c %i "/proc/$SYSD/ns/net")/bond0/state.json"
    "$PY" -c '
import json, sys
try:
    l = json.load(open(sys.argv[1]))["kernel"]["lacp"]
    print(sum(1 for p in l if p is not None))
except Exception:
    print(0)' "$f"
}

unit_show() { sctl systemctl show -p "$1" --value lagkit@bond0.service 2>/dev/null; }
UNIT_CG() { echo "$CG/system.slice/system-lagkit.slice/lagkit@bond0.service"; }
unit_host_pids() { cat "$(UNIT_CG)/cgroup.procs" 2>/dev/null | tr '\n' ' '; }
cursor() { sctl journalctl -q -n 0 --show-cursor 2>/dev/null | sed -n 's/^-- cursor: //p'; }
journal_since() { sctl journalctl -q --no-pager -o short-monotonic --after-cursor="$1" 2>/dev/null; }
# The unit's lines: systemd's about it and the daemon's own. Not
# `journalctl -u`: in this instance journald files the daemon's stdout
# stream under init.scope (the stream is connected before systemd has moved
# the child into the unit's cgroup), so -u misses the daemon's lines.
journal_unit() { journal_since "$1" | grep -E 'lagkit@bond0|[ (]lagkit\)?\['; }
# the journal at debug level, without systemd's D-Bus chatter
journal_show() { journal_since "$1" | grep -vE 'Sent message type|Got message type|Bus private-bus|Got disconnect on private|Received SIGCHLD' | tail -"${2:-40}"; }

# ---------------------------------------------------------------- cleanup --
cleanup() {
    local rc=$? ok=1
    trap - EXIT INT TERM
    set +e
    echo "--- cleanup"
    for p in "$SENDER" "$RECEIVER"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
    for p in "$SENDER" "$RECEIVER"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
    # The instance: systemctl poweroff (stops lagkit@bond0 with SIGTERM if it
    # still runs), SIGRTMIN+4 if systemctl does not answer, SIGKILL of the
    # launcher's process group (unshare --kill-child takes the pid namespace
    # down) past the deadline.
    if instance_alive; then   # the instance's journal, for the post-mortem
        sctl journalctl -q --no-pager -o short-monotonic >"$W/journal.txt" 2>&1
        sctl journalctl -q --no-pager -o short-monotonic | grep -E 'lagkit@bond0|[ (]lagkit\)?\[' >"$W/lagkit-journal.txt" 2>&1
    fi
    if alive "$L" || instance_alive; then
        local t=$(now)
        sctl systemctl poweroff >/dev/null 2>&1 || kill -RTMIN+4 "$SYSD" 2>/dev/null
        local dl=$((SECONDS + 20))
        while { alive "$L" || instance_alive; } && [ $SECONDS -lt $dl ]; do sleep 0.1; done
        if alive "$L" || instance_alive; then
            echo "instance: no clean poweroff in 20 s, SIGKILL process group $L"
            kill -KILL -- "-$L" 2>/dev/null; kill -KILL "$SYSD" 2>/dev/null
            dl=$((SECONDS + 10))
            while { alive "$L" || alive "$SYSD"; } && [ $SECONDS -lt $dl ]; do sleep 0.1; done
        else
            printf 'instance: powered off in %.2f s\n' "$(since "$t")"
        fi
        wait "$L" 2>/dev/null
    fi
    # The partner: SIGTERM gives its members back and removes its pins.
    if alive "$PARTNER"; then
        kill -TERM "$PARTNER"
        local dl=$((SECONDS + 15))
        while alive "$PARTNER" && [ $SECONDS -lt $dl ]; do sleep 0.1; done
        if alive "$PARTNER"; then
            echo "partner: still running 15 s after SIGTERM, SIGKILL + lagkit down"
            kill -KILL "$PARTNER"
            sleep 0.2
            ip netns exec "$PNS" "$BIN" down --name bond0 >/dev/null 2>&1
        else
            echo "partner: stopped"
        fi
        wait "$PARTNER" 2>/dev/null
    fi
    [ "$PNS_MADE" = 1 ] && ip netns del "$PNS" 2>/dev/null
    for v in "${VP}a1" "${VP}b1" "${VP}a2" "${VP}b2"; do
        ip link show dev "$v" >/dev/null 2>&1 && ip link del dev "$v"
    done
    if [ "$MOUNTED_BPFFS" = 1 ]; then
        umount "$HOST_BPFFS" 2>/dev/null || umount -l "$HOST_BPFFS"
        [ "$MADE_BPFFS_DIR" = 1 ] && rmdir "$HOST_BPFFS" 2>/dev/null
    fi
    [ "$MADE_RUN_LAGKIT" = 1 ] && rmdir /run/lagkit 2>/dev/null   # only if empty
    # systemd leaves empty child cgroups behind: bottom-up
    [ -d "$CG" ] && find "$CG" -depth -type d -exec rmdir {} \; 2>/dev/null

    # Verify that nothing is left.
    local left=()
    [ -d "$CG" ] && left+=("cgroup $CG")
    ip netns list 2>/dev/null | grep -qw "$PNS" && left+=("netns $PNS")
    ip -o link show 2>/dev/null | grep -q "$VP" && left+=("veths $VP* in the root netns")
    findmnt -rn -o TARGET 2>/dev/null | grep -q "$W" && left+=("mounts under $W")
    if [ "$MOUNTED_BPFFS" = 1 ] && findmnt -rn "$HOST_BPFFS" >/dev/null 2>&1; then left+=("bpffs $HOST_BPFFS"); fi
    for p in "$L" "$SYSD" "$PARTNER" "$SENDER" "$RECEIVER"; do
        alive "$p" && left+=("process $p ($(cat /proc/$p/comm 2>/dev/null))")
    done
    local strays
    strays=$(ps -eo pid=,args= | grep -E "lagkit-sysd|$W|nsenter -t ${SYSD:-x} " | grep -v grep)
    [ -n "$strays" ] && left+=("processes: $strays")
    if [ ${#left[@]} -gt 0 ]; then
        ok=0
        printf 'cleanup: LEFT BEHIND: %s\n' "${left[@]}"
    else
        echo "cleanup: verified: no instance, partner, netns $PNS, veths, mounts or cgroup left"
    fi
    if [ $rc = 0 ] && [ $ok = 1 ] && [ "$KEEP_LOGS" = 0 ]; then
        rm -rf "$W"
    else
        echo "logs kept in $W"
    fi
    [ $ok = 1 ] || [ $rc != 0 ] || rc=1
    exit $rc
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

# ------------------------------------------------------------ 1: boot -----
say "boot: systemd $(/lib/systemd/systemd --version | awk 'NR==1{print $2}') as PID 1 of new pid/mount/cgroup/uts/ipc/net namespaces (cgroup $CG)"
mkdir "$CG" || fail "cannot make $CG"
# setsid: a process group of its own, to kill everything if need be. The
# shell moves itself into $CG before unshare --cgroup, so that cgroup is the
# root of the instance's cgroup namespace.
setsid bash -c "echo \$\$ > $CG/cgroup.procs; exec unshare --pid --fork --kill-child --mount --propagation private --cgroup --uts --ipc --net /bin/bash $SELF __inner $W" \
    </dev/null >"$W/boot.log" 2>&1 &
L=$!
dl=$((SECONDS + 10))
while [ $SECONDS -lt $dl ]; do
    alive "$L" || { cat "$W/boot.log"; fail "the launcher died"; }
    SYSD=$(awk '{print $1}' "/proc/$L/task/$L/children" 2>/dev/null)
    [ -n "$SYSD" ] && [ "$(cat "/proc/$SYSD/comm" 2>/dev/null)" = systemd ] && break
    SYSD=; sleep 0.05
done
[ -n "$SYSD" ] || { cat "$W/boot.log"; fail "systemd did not start"; }
dl=$((SECONDS + 30)); st=
while [ $SECONDS -lt $dl ]; do
    instance_alive || { tail -20 "$W/boot.log"; fail "the instance died while booting"; }
    st=$(sctl systemctl is-system-running 2>&1)
    case "$st" in running|degraded) break ;; esac
    sleep 0.1
done
case "$st" in running|degraded) ;; *) fail "instance not running after 30 s (last: $st)" ;; esac
say "boot: instance $st, systemd host pid $SYSD"
[ "$st" = degraded ] && sctl systemctl --failed --no-legend | sed 's/^/    failed unit: /'
sctl systemctl log-level debug || fail "systemctl log-level debug"
sctl findmnt -n /sys/fs/bpf | grep -q bpf || fail "no bpffs at the instance's /sys/fs/bpf"

# ------------------------------------------------------ 2: topology -------
ip netns add "$PNS" || fail "ip netns add $PNS"
PNS_MADE=1
for i in 1 2; do
    ip link add "${VP}a$i" type veth peer name "${VP}b$i" || fail "ip link add veth"
    ip link set dev "${VP}a$i" netns "$SYSD" || fail "move ${VP}a$i into S"
    ip link set dev "${VP}b$i" netns "$PNS" || fail "move ${VP}b$i into $PNS"
    in_s ip link set dev "${VP}a$i" name "eth$i" || fail "rename in S"
    ip -n "$PNS" link set dev "${VP}b$i" name "eth$i" || fail "rename in P"
done
in_s ip link set lo up; ip -n "$PNS" link set lo up
say "topology: S (instance netns) eth1,eth2 <-veth-> P ($PNS) eth1,eth2"

# ------------------------------------------------------ 3: partner --------
if ! findmnt -rn -t bpf "$HOST_BPFFS" >/dev/null 2>&1; then
    [ -d /run/lagkit ] || MADE_RUN_LAGKIT=1
    [ -d "$HOST_BPFFS" ] || MADE_BPFFS_DIR=1
    mkdir -p "$HOST_BPFFS"
    mount -t bpf -o mode=0700 bpf "$HOST_BPFFS" || fail "mount bpffs at $HOST_BPFFS"
    MOUNTED_BPFFS=1
fi
bond_toml() {
    cat <<EOF
name = "bond0"
mode = "802.3ad"
members = ["eth1", "eth2"]
xmit_hash_policy = "layer3+4"
lacp_rate = "fast"
engine = "$2"
address = ["$1"]
EOF
}
bond_toml 10.77.0.2/24 bpf >"$W/P.toml"
bond_toml 10.77.0.1/24 "$ENGINE" >"$W/S.toml"
ip netns exec "$PNS" "$BIN" up --engine bpf "$W/P.toml" </dev/null >"$W/partner.log" 2>&1 &
PARTNER=$!
say "partner: lagkit up --engine bpf in $PNS (pid $PARTNER)"

# ------------------------------------------------------ 4: the unit -------
R=/proc/$SYSD/root      # the instance's root, from the host
if [ -z "$DEB" ]; then
    # The binary inside the instance (the unit's PrivateTmp= hides /tmp, so
    # /tmp/sysd-lagkit cannot be run from the service): the overlay's tmpfs.
    install -m 0755 "$BIN" "$R$INBIN" || fail "install the binary into the instance"
    grep -q '^ExecStart=/usr/bin/lagkit ' "$REPO/packaging/systemd/lagkit@.service" ||
        fail "packaging/systemd/lagkit@.service: no 'ExecStart=/usr/bin/lagkit ' line to replace"
    sed "s#^ExecStart=/usr/bin/lagkit #ExecStart=$INBIN #" "$REPO/packaging/systemd/lagkit@.service" \
        >"$R/run/systemd/system/lagkit@.service" || fail "install the unit"
    say "unit: packaging/systemd/lagkit@.service -> /run/systemd/system/ (ExecStart=$INBIN ...)"
else
    INBIN=/usr/bin/lagkit
    cp "$DEB" "$R/var/tmp/lagkit.deb" || fail "copy $DEB into the instance"
    sctl dpkg -i /var/tmp/lagkit.deb >"$W/dpkg-1.log" 2>&1 || { cat "$W/dpkg-1.log"; fail "dpkg -i $DEB"; }
    say "unit: dpkg -i $(basename "$DEB") in the instance ($(sctl systemctl show -p FragmentPath --value lagkit@bond0.service))"
fi
mkdir -p "$R/etc/lagkit"
install -m 0644 "$W/S.toml" "$R/etc/lagkit/bond0.toml"
sctl systemctl daemon-reload || fail "daemon-reload"
sctl "$INBIN" up --check /etc/lagkit/bond0.toml >"$W/check.log" 2>&1 || { cat "$W/check.log"; fail "lagkit up --check /etc/lagkit/bond0.toml"; }

CUR=$(cursor)
t=$(now)
sctl systemctl start lagkit@bond0.service ||
    { journal_show "$CUR"; fail "systemctl start lagkit@bond0"; }
say "start: systemctl start lagkit@bond0 returned after $(printf %.2f "$(since "$t")") s (MainPID $(unit_show MainPID), host pid $(unit_host_pids))"

# ------------------------------------------------------ 5: aggregate ------
dl=$((SECONDS + 30))
while [ $SECONDS -lt $dl ]; do
    alive "$PARTNER" || { tail -20 "$W/partner.log"; fail "the partner exited"; }
    SS=$(st_s); SP=$(st_p)
    formed "$SS" && formed "$SP" && break
    sleep 0.2
done
formed "$SS" && formed "$SP" ||
    { journal_show "$CUR" 30; tail -20 "$W/partner.log"; fail "no aggregate in 30 s (S: $SS; P: $SP)"; }
say "aggregate: S $SS"
say "aggregate: P $SP"
[ "$(field "$SS" engine)" = "$ENGINE" ] || fail "S's bond does not run the $ENGINE engine ($SS)"
[ "$ENGINE" != bpf ] || [ "$(field "$SS" pinned)" != - ] || fail "S's data path is not pinned ($SS)"
dl=$((SECONDS + 20))
until in_s ping -c 1 -W 1 -q 10.77.0.2 >/dev/null 2>&1; do
    [ $SECONDS -lt $dl ] || fail "no ping reply 10.77.0.1 -> 10.77.0.2 in 20 s"
    sleep 0.2
done
say "ping: 10.77.0.1 -> 10.77.0.2 answers"

# ------------------------------------------------------ 6: probe ----------
cat >"$W/recv.py" <<'PY'
import json, signal, socket, struct, sys, time
out = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("10.77.0.2", 47001))
s.settimeout(0.1)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
seen = {}
dups = 0
last = None
gap = 0.0
gap_at = None
first = None
open(out + ".ready", "w").close()
while not stop:
    try:
        d = s.recv(64)
    except socket.timeout:
        continue
    t = time.monotonic()
    if len(d) < 12 or d[:4] != b"LKSP":
        continue
    (n,) = struct.unpack("!Q", d[4:12])
    if n in seen:
        dups += 1
        continue
    seen[n] = t
    if first is None:
        first = t
    if last is not None and t - last > gap:
        gap, gap_at = t - last, n
    last = t
mx = max(seen) if seen else -1
json.dump({"received": len(seen), "duplicates": dups, "max_seq": mx,
           "longest_gap_ms": round(gap * 1000, 2), "gap_before_seq": gap_at,
           "missing": [i for i in range(mx + 1) if i not in seen][:50]}, open(out, "w"))
PY
cat >"$W/send.py" <<'PY'
import json, signal, socket, struct, sys, time
out, interval = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
n = errors = 0
late = 0.0
t0 = time.monotonic()
while not stop:
    due = t0 + n * interval
    d = due - time.monotonic()
    if d > 0:
        time.sleep(d)
    else:
        late = max(late, -d)
    try:
        s.sendto(b"LKSP" + struct.pack("!Q", n), ("10.77.0.2", 47001))
    except OSError:
        errors += 1
    n += 1
json.dump({"sent": n, "send_errors": errors, "max_late_ms": round(late * 1000, 2)}, open(out, "w"))
PY
ip netns exec "$PNS" "$PY" "$W/recv.py" "$W/recv.json" </dev/null >"$W/recv.log" 2>&1 &
RECEIVER=$!
dl=$((SECONDS + 10))
until [ -e "$W/recv.json.ready" ]; do
    alive "$RECEIVER" || { cat "$W/recv.log"; fail "the probe receiver died"; }
    [ $SECONDS -lt $dl ] || fail "the probe receiver did not start"
    sleep 0.05
done
# nsenter itself (no function, no subshell), so that $! is the sender
nsenter -t "$SYSD" -n "$PY" "$W/send.py" "$W/send.json" 0.005 </dev/null >"$W/send.log" 2>&1 &
SENDER=$!
say "probe: UDP datagram every 5 ms, sender in S (pid $SENDER), receiver in P (pid $RECEIVER)"
sleep 0.5   # let some probes through before the first restart

# ------------------------------------------------------ 7: restarts -------
ALL_S_PROGS=$(field "$SS" progs | tr , ' ')
P_LOG_AT=$(stat -c %s "$W/partner.log")
handoff() {   # $1: label, $2...: the command that restarts the unit
    local label=$1; shift
    local old_main old_host cur t new_main new_host j ss ok_exit ok_adopt dl rec
    old_main=$(unit_show MainPID); old_host=$(unit_host_pids)
    cur=$(cursor)
    t=$(now)
    "$@" >"$W/handoff.log" 2>&1 || { cat "$W/handoff.log"; journal_unit "$cur" | tail -30; fail "$label: '$*' failed"; }
    dl=$((SECONDS + 20))
    while :; do
        new_main=$(unit_show MainPID)
        j=$(journal_unit "$cur")
        ok_exit=0; ok_adopt=0
        grep -q 'Main process exited, code=exited, status=75/TEMPFAIL' <<<"$j" && ok_exit=1
        grep -qE 'adopting the (data path|TAP)' <<<"$j" && ok_adopt=1
        ss=$(st_s); rec=$(recorded_partners)
        if [ -n "$new_main" ] && [ "$new_main" != 0 ] && [ "$new_main" != "$old_main" ] &&
            [ "$(unit_show ActiveState)" = active ] && [ $ok_exit = 1 ] && [ $ok_adopt = 1 ] &&
            ! any_alive $old_host && formed "$ss" && { [ "$rec" = 2 ] || [ "$SETTLE" = 0 ] || [ "$ENGINE" = userspace ]; }; then
            break
        fi
        if [ $SECONDS -ge $dl ]; then
            journal_unit "$cur" | grep -vE ' (tx|periodic): ' | tail -30
            fail "$label: not handed over in 20 s (MainPID $old_main -> $new_main, exit 75 seen: $ok_exit, adopted: $ok_adopt, resumed LACP: $(grep -c 'resuming LACP' <<<"$j")/2, partners recorded for the next: $rec/2, S: $ss)"
        fi
        sleep 0.1
    done
    if grep -q 'not adopting' <<<"$j"; then echo "$j" | grep 'not adopting'; fail "$label: the new daemon did not adopt"; fi
    new_host=$(unit_host_pids)
    ALL_S_PROGS="$ALL_S_PROGS $(field "$ss" progs | tr , ' ')"
    say "$label: MainPID $old_main -> $new_main (host ${old_host% } -> ${new_host% }); old exited status=75/TEMPFAIL; new adopted; $(printf %.2f "$(since "$t")") s; S $ss"
    echo "$j" | grep -E 'status=75|adopting|resuming LACP|Stopping|Started|descriptors' | sed 's/^/      /'
}
for i in $(seq 1 "$RESTARTS"); do
    alive "$SENDER" || { cat "$W/send.log"; fail "the probe sender died"; }
    handoff "restart $i/$RESTARTS" sctl systemctl restart lagkit@bond0.service
    sleep 0.3
done
if [ -n "$DEB" ]; then
    handoff "package upgrade (dpkg -i again: postinst try-restart)" sctl dpkg -i /var/tmp/lagkit.deb
    sleep 0.3
fi

# The partner must not have seen a change: no port out of distribution, no
# aggregate down in its log (the check of crates/cli/tests/restart.rs).
P_INTERRUPTIONS=$(tail -c +"$((P_LOG_AT + 1))" "$W/partner.log" | grep -E 'aggregator 1: down|mux: COLLECTING_DISTRIBUTING \(')
if [ -n "$P_INTERRUPTIONS" ]; then
    say "partner: its log shows interruptions during the restarts:"; echo "$P_INTERRUPTIONS" | sed 's/^/      /'
else
    say "partner: no port left distribution and no aggregate went down during the restarts (its log)"
fi

# ------------------------------------------------------ 8: probe report ---
kill -TERM "$SENDER"
dl=$((SECONDS + 10))
until [ -s "$W/send.json" ]; do
    [ $SECONDS -lt $dl ] || fail "the probe sender did not report"
    sleep 0.05
done
wait "$SENDER"; SENDER=
sleep 0.3   # the last datagrams in flight
kill -TERM "$RECEIVER"
dl=$((SECONDS + 10))
until [ -s "$W/recv.json" ]; do
    [ $SECONDS -lt $dl ] || fail "the probe receiver did not report"
    sleep 0.05
done
wait "$RECEIVER"; RECEIVER=
read -r SENT SEND_ERR LATE RECV DUPS GAP GAPSEQ MISSING < <("$PY" - "$W/send.json" "$W/recv.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
print(s["sent"], s["send_errors"], s["max_late_ms"], r["received"], r["duplicates"],
      r["longest_gap_ms"], r["gap_before_seq"], ",".join(map(str, r["missing"])) or "-")
PY
)
LOST=$((SENT - RECV))
say "probe: sent $SENT, received $RECV, lost $LOST, duplicates $DUPS, longest gap $GAP ms (before #$GAPSEQ), send errors $SEND_ERR, sender late by up to $LATE ms"
[ "$MISSING" != - ] && say "probe: missing sequence numbers (first 50): $MISSING"

# ------------------------------------------------------ 9: stop -----------
LAST_HOST=$(unit_host_pids); LAST_MAIN=$(unit_show MainPID)
PINDIR=$(field "$(st_s)" pinned)
P_PROGS=$(field "$(st_p)" progs | tr , ' ')
CUR=$(cursor)
t=$(now)
sctl systemctl stop lagkit@bond0.service || fail "systemctl stop lagkit@bond0"
STOP_PROBLEMS=()
dl=$((SECONDS + 20))
while :; do
    STOP_PROBLEMS=()
    as=$(unit_show ActiveState)
    [ "$as" = inactive ] || STOP_PROBLEMS+=("unit $as")
    for p in $LAST_HOST; do alive "$p" && STOP_PROBLEMS+=("daemon host pid $p (MainPID $LAST_MAIN) still runs"); done
    # every program S's daemons ever reported, gone from the kernel
    for id in $(tr ' ' '\n' <<<"$ALL_S_PROGS" | sort -un); do
        bpftool prog show id "$id" >/dev/null 2>&1 && STOP_PROBLEMS+=("program $id still loaded")
    done
    # anything attached to S's members (tc, tcx, xdp) that is not the partner's
    netj=$(in_s bpftool net show -j 2>/dev/null)
    leftover=$("$PY" -c '
import json, sys
v = json.loads(sys.argv[1] or "[]"); partner = set(sys.argv[2].split())
out = []
for sect in v:
    for kind, ents in sect.items():
        for e in ents or []:
            dev = e.get("devname") or e.get("ifname") or ""
            if str(e.get("prog_id", e.get("id", ""))) in partner: continue
            out.append("%s %s prog %s (%s)" % (kind, dev, e.get("prog_id", e.get("id")), e.get("name", "")))
print("; ".join(out))' "$netj" "$P_PROGS")
    [ -n "$leftover" ] && STOP_PROBLEMS+=("attached in S: $leftover")
    for dev in eth1 eth2; do
        in_s tc filter show dev "$dev" ingress 2>/dev/null | grep -q . && STOP_PROBLEMS+=("tc ingress filter on $dev")
        in_s tc filter show dev "$dev" egress 2>/dev/null | grep -q . && STOP_PROBLEMS+=("tc egress filter on $dev")
        in_s ip -d link show dev "$dev" 2>/dev/null | grep -q 'prog/xdp' && STOP_PROBLEMS+=("xdp on $dev")
    done
    in_s ip link show dev bond0 >/dev/null 2>&1 && STOP_PROBLEMS+=("bond0 still exists in S")
    pins=$(sctl find /sys/fs/bpf/lagkit -mindepth 1 2>/dev/null)
    [ -n "$pins" ] && STOP_PROBLEMS+=("pins left: $(tr '\n' ' ' <<<"$pins")")
    [ ${#STOP_PROBLEMS[@]} = 0 ] && break
    [ $SECONDS -lt $dl ] || break
    sleep 0.2
done
STOPJ=$(journal_unit "$CUR")
echo "$STOPJ" | grep -E 'Main process exited|Stopping|Deactivated|Stopped' | sed 's/^/      /'
grep -q 'status=0/SUCCESS' <<<"$STOPJ" || STOP_PROBLEMS+=("no 'status=0/SUCCESS' for the stopped daemon in the journal")
ST_TEXT=$(sctl "$INBIN" status 2>&1 | head -5)
say "stop: returned after $(printf %.2f "$(since "$t")") s; lagkit status in S now: $(tr '\n' ' ' <<<"$ST_TEXT")"
say "stop: pin dir was $PINDIR; instance /sys/fs/bpf: $(sctl find /sys/fs/bpf -mindepth 1 -maxdepth 3 2>/dev/null | tr '\n' ' ')"
if [ ${#STOP_PROBLEMS[@]} = 0 ]; then
    say "stop: no daemon, no lagkit program on S's eth1/eth2, no pin under /sys/fs/bpf/lagkit"
else
    printf '    stop left: %s\n' "${STOP_PROBLEMS[@]}"
fi

# ------------------------------------------------------ 10: verdict -------
VER=$(sctl systemctl --version | awk 'NR==1{print $2}')
N_DONE=$RESTARTS; [ -n "$DEB" ] && N_DONE="$RESTARTS+1 (package)"
if [ "$LOST" = 0 ] && [ ${#STOP_PROBLEMS[@]} = 0 ] && [ -z "$P_INTERRUPTIONS" ]; then
    STOPTXT="stop left no programs and no pins"
    DUPTXT=; [ "$DUPS" != 0 ] && DUPTXT=", $DUPS duplicates"
    echo "systemd-restart: $N_DONE restarts ($ENGINE engine) under systemd $VER: 0 of $SENT probes lost (longest gap $GAP ms$DUPTXT); $STOPTXT"
    exit 0
fi
why=()
[ "$LOST" != 0 ] && why+=("$LOST of $SENT probes lost (longest gap $GAP ms)")
[ -n "$P_INTERRUPTIONS" ] && why+=("the partner saw the aggregate interrupted")
[ ${#STOP_PROBLEMS[@]} != 0 ] && why+=("stop left: $(IFS=';'; echo "${STOP_PROBLEMS[*]}")")
FAILED="${why[*]}"
echo "systemd-restart: FAILED: $N_DONE restarts under systemd $VER: $(IFS=';'; echo "${why[*]}")"
exit 1
