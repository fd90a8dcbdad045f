#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time and prints the exec counts.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# Needs a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
targets=$(cd fuzz && cargo +nightly fuzz list)
printf '%-16s %12s %8s %s\n' target execs secs result
for t in $targets; do
  log=$(mktemp)
  if (cd fuzz && cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -rss_limit_mb=4096) >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
  fi
  execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
  printf '%-16s %12s %8s %s\n' "$t" "${execs:-?}" "$secs" "$result"
  [ "$result" = ok ] && rm -f "$log"
done
