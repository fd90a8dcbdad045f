#!/usr/bin/env bash
# Regenerates docs/results/: every built-in scenario's full sweep on the
# lab's default switch (lagkit's own), its log, its report kept for the
# planner (planned/NAME.json), the planner's comparison of each, and
# each scenario whose default rate is below the seeds' 1 Gbit/s once more
# at 1 Gbit/s (NAME-1g: `--rate 1gbit`, where the reports flag the runs
# this 2-core machine could not keep up; lpm and linux-alb run at 1 Gbit/s
# by default). Needs root and an idle machine; about 35 minutes on 2 cores.
#   sudo bash scripts/results.sh [--no-build] [SCENARIO...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
if [ "${1:-}" = --no-build ]; then build=0; shift; fi
scenarios=("$@")
if [ ${#scenarios[@]} = 0 ]; then
  all=(ibm-6513 hp-apa lpm zvm linux-alb)
  scaled=(ibm-6513 hp-apa zvm)
  scenarios=("${all[@]}")
  for s in "${scaled[@]}"; do scenarios+=("$s-1g"); done
fi
if [ $build = 1 ]; then cargo build --release -q -p lagkit; fi
bin=./target/release/lagkit
out=docs/results
mkdir -p "$out/planned"
for s in "${scenarios[@]}"; do
  name=$s
  extra=()
  case $s in *-1g) name=${s%-1g}; extra=(--rate 1gbit) ;; esac
  echo "== $s: lagkit lab run $name ${extra[*]} ($(date -u +%H:%M:%S))" >&2
  rm -rf "${out:?}/$s"
  "$bin" lab run "$name" "${extra[@]}" --report "$out/$s" >"$out/$s.log" 2>&1 || true
  tail -n 3 "$out/$s.log" >&2
  if [ "$s" = "$name" ]; then
    cp "$out/$s/report.json" "$out/planned/$s.json"
    "$bin" plan --lab "$s" --measured "$out/planned/$s.json" >"$out/planned/$s.plan.txt" 2>&1 || true
  fi
done
echo "== done ($(date -u +%H:%M:%S))" >&2
