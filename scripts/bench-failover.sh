#!/usr/bin/env bash
# bench-failover.sh — failover latency and TCP survival under link flaps,
# per engine (the failover target: carrier event to new plan
# <= 1 ms; no TCP connection lost).
#
# Builds and runs crates/bond/examples/failover.rs (see its header for the
# method): two namespaces, two veth links, a lagkit bond on each side, TCP
# flows for the whole run, and one member's link set down and up again,
# members in turn. Three runs per engine:
#   1. 802.3ad, LACP fast, netlink link events only (each flap waits for
#      LACP to aggregate the member again: 802.1AX's 2 s wait),
#   2. balance-xor with miimon 1 ms (the link state polled as well), many
#      flaps (the "thousand flaps under load" target),
#   3. balance-xor, netlink link events only (the kernel's link watch may
#      hold an event back up to a second, so each flap takes longer).
# Each prints the distribution from the ioctl that downs the peer to the
# new plan, and from the daemon's link event to the new plan.
#
# Usage: sudo scripts/bench-failover.sh [-n LACP_FLAPS] [-x XOR_FLAPS] [--no-build]
#   -n N   802.3ad flaps (default 60, about 2 minutes per engine)
#   -x N   balance-xor flaps with miimon 1 ms (default 1000)
#   -e N   balance-xor flaps without miimon (default 100)
# Everything it creates is removed when each run ends, also on failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LACP=60
XOR=1000
EVENTS=100
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    -n) LACP=$2; shift 2 ;;
    -x) XOR=$2; shift 2 ;;
    -e) EVENTS=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-failover.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-failover.sh: must run as root" >&2; exit 1; }
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "$BUILD" = 1 ]; then
  (cd "$ROOT" && cargo build --release -q -p lagkit-bond --example failover)
fi
EX=$TARGET/release/examples/failover
echo "bench-failover: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) CPUs, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
"$EX" --engine both --mode 802.3ad --flaps "$LACP" || rc=1
"$EX" --engine both --mode balance-xor --flaps "$XOR" --miimon 1 || rc=1
"$EX" --engine both --mode balance-xor --flaps "$EVENTS" || rc=1
exit $rc
