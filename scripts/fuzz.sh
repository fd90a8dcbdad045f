#!/usr/bin/env bash
# Runs cargo-fuzz targets one after another, each bounded by time or by a
# number of executions, and prints per target: executions, seconds, exec/s,
# corpus files, result.
#
# Usage: scripts/fuzz.sh [--seconds S | --runs N] [--sanitizer SAN] [TARGET...]
#        scripts/fuzz.sh [SECONDS] [TARGET...]        (old form, = --seconds)
#   --seconds S   each target for S seconds (libFuzzer -max_total_time=S);
#                 the default, S=60
#   --runs N      each target for at least N executions (libFuzzer -runs=N,
#                 which counts the corpus replay too)
#   both given    whichever comes first
#   --sanitizer   cargo fuzz -s: address (cargo-fuzz's default) or none,
#                 2.5-8x more exec/s on bond_config and hash_flow; the
#                 crates under test forbid unsafe code, except dataplane
#                 (vnet_header)
#   --no-trace-compares
#                 build without LLVM's compare tracing (cargo fuzz
#                 --no-trace-compares): about 4x more exec/s on lacp_core,
#                 whose time goes to comparisons inside the LACP machines,
#                 at the cost of libFuzzer's guidance from compared values
#   --jobs J      J fuzzer processes per target at once, sharing its
#                 corpus (libFuzzer re-reads it), each with 1/J of --runs;
#                 the executions reported are their sum. Default 1
#   TARGET...     default: every target of `cargo fuzz list`
#
# Corpora grow in fuzz/corpus/TARGET (committed; shrink them with
# `cargo +nightly fuzz cmin TARGET`), crash inputs land in
# fuzz/artifacts/TARGET (ignored), and each run's libFuzzer output in
# fuzz/target/fuzz-logs/TARGET.log (ignored, overwritten by the next run).
# Exit status: 0 if every target finished without a crash, 1 otherwise.
# Needs a nightly toolchain and cargo-fuzz (installed if missing). On a
# shared machine run it as `nice -n 19 scripts/fuzz.sh ...`.
set -euo pipefail
cd "$(dirname "$0")/.."

secs= runs= san=address jobs=1
build_flags=()
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
    --runs) runs=${2:?--runs needs a value}; shift 2 ;;
    --sanitizer) san=${2:?--sanitizer needs a value}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
    --no-trace-compares) build_flags+=(--no-trace-compares); shift ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *)
      if [ ${#targets[@]} -eq 0 ] && [ -z "$secs" ] && [[ $1 =~ ^[0-9]+$ ]]; then
        secs=$1
      else
        targets+=("$1")
      fi
      shift ;;
  esac
done
for v in "$secs" "$runs" "$jobs"; do
  [[ -z $v || $v =~ ^[0-9]+$ ]] || { echo "fuzz.sh: not a number: $v" >&2; exit 2; }
done
[ -z "$secs" ] && [ -z "$runs" ] && secs=60

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)

[ "$jobs" -ge 1 ] || { echo "fuzz.sh: --jobs must be at least 1" >&2; exit 2; }
limits=()
[ -n "$runs" ] && limits+=("-runs=$(( (runs + jobs - 1) / jobs ))")
[ -n "$secs" ] && limits+=("-max_total_time=$secs")
echo "sanitizer: $san; build flags: ${build_flags[*]:-none}; libFuzzer limits: ${limits[*]}"

logdir=fuzz/target/fuzz-logs
mkdir -p "$logdir"
# Build first so that the seconds below are fuzzing, not compiling.
for t in "${targets[@]}"; do
  (cd fuzz && cargo +nightly fuzz build -s "$san" "${build_flags[@]}" "$t") >"$logdir/$t.build.log" 2>&1 ||
    { echo "fuzz.sh: build of $t failed, see $logdir/$t.build.log" >&2; exit 1; }
done

status=0
printf '%-14s %12s %8s %10s %7s  %s\n' target execs secs exec/s corpus result
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  start=$(date +%s.%N)
  pids=()
  for j in $(seq 1 "$jobs"); do
    log=$logdir/$t.log
    [ "$jobs" -gt 1 ] && log=$logdir/$t.job$j.log
    (cd fuzz && exec cargo +nightly fuzz run -s "$san" "${build_flags[@]}" "$t" -- "${limits[@]}" \
        -rss_limit_mb=4096 -print_final_stats=1) >"$log" 2>&1 &
    pids+=($!)
  done
  result=ok
  for p in "${pids[@]}"; do
    wait "$p" || { result="CRASH/FAILED (see $logdir/$t*.log and fuzz/artifacts/$t)"; status=1; }
  done
  end=$(date +%s.%N)
  execs=0
  for log in "$logdir/$t.log" "$logdir/$t".job*.log; do
    [ -f "$log" ] && [ "$log" -nt "$logdir/$t.build.log" ] || continue
    n=$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
    [ -n "$n" ] || n=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1 || true)
    execs=$((execs + ${n:-0}))
  done
  files=$(find "fuzz/corpus/$t" -type f | wc -l)
  awk -v t="$t" -v n="${execs:-0}" -v a="$start" -v b="$end" -v c="$files" -v r="$result" \
    'BEGIN { s = b - a; printf "%-14s %12s %8.1f %10.0f %7d  %s\n", t, (n ? n : "?"), s, (s > 0 ? n / s : 0), c, r }'
done
exit $status
