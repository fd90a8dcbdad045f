#!/usr/bin/env bash
# The planner's speed (issue: 10^7 flows planned in under a second on one
# core; a 1 GB capture streamed with bounded memory).
#
# Usage: scripts/bench-plan.sh [FLOWS] [CAPTURE_BYTES]
#   FLOWS          synthetic flows planned in memory (default 10000000)
#   CAPTURE_BYTES  size of the capture written and streamed (default 1e9)
# Pins itself to one core (taskset -c 0). Writes the capture to a temporary
# directory and removes it. Needs GNU time (Debian `time`) for the RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
flows=${1:-10000000}
bytes=${2:-1000000000}
bash "$(dirname "$0")/setup.sh" build run test
cargo build --release -q -p lagkit
cargo build --release -q -p lagkit-planner --example plan_bench
pin="taskset -c 0"
echo "== $flows synthetic flows, 8 links, one configuration each (one core)"
$pin ./target/release/examples/plan_bench flows "$flows"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== a capture of $bytes bytes (100,000 distinct TCP flows), streamed by lagkit plan"
./target/release/examples/plan_bench pcap "$tmp/big.pcap" "$bytes"
/usr/bin/time -f "lagkit plan: %e s wall, %M KiB max resident (capture: $(du -h "$tmp/big.pcap" | cut -f1))" \
  $pin ./target/release/lagkit plan "$tmp/big.pcap" --host-hash layer3+4 --links 4 --top 3 >"$tmp/out.txt"
head -4 "$tmp/out.txt"
