#!/usr/bin/env bash
# lagkit plan's predictions set beside the lab's measurements: runs each
# built-in scenario (`lagkit lab run NAME`), then plans it from the
# 5-tuples the run recorded (`lagkit plan --lab NAME --measured
# report.json`) and prints the planned-vs-measured table of every bonded
# host, each direction with data.
#
# Usage: scripts/plan-vs-lab.sh [--short] [OUT_DIR] [SCENARIO...]
#   --short    the short sweeps (about 6 minutes for all five; the full
#              ones take about 20)
#   OUT_DIR    where each scenario's report and table go
#              (default /tmp/lagkit-plan-vs-lab)
#   SCENARIO   default: all five
# Environment: SWITCH=ovs runs the scenarios through Open vSwitch instead
# of lagkit's own switch.
# Needs root (as `lagkit lab run` does; Open vSwitch too with SWITCH=ovs).
# Run it on a quiet machine: a busy one makes runs CPU-bound, whose goodput
# the table then does not compare.
set -euo pipefail
cd "$(dirname "$0")/.."
short=()
if [ "${1:-}" = --short ]; then short=(--short); shift; fi
out=${1:-/tmp/lagkit-plan-vs-lab}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(ibm-6513 hp-apa lpm zvm linux-alb)
cargo build --release -q -p lagkit
mkdir -p "$out"
for s in "${scenarios[@]}"; do
  echo "== $s: lab run ${short[*]}" >&2
  ./target/release/lagkit lab run "$s" "${short[@]}" ${SWITCH:+--switch "$SWITCH"} -q --report "$out/$s" >"$out/$s.run.txt"
  ./target/release/lagkit plan --lab "$s" "${short[@]}" --measured "$out/$s/report.json" >"$out/$s.plan.txt"
  echo "## $s"
  echo
  sed -n '/^predicted vs measured/,$p' "$out/$s.plan.txt" | sed 's/^/    /'
  echo
done
