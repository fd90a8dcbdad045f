#!/usr/bin/env bash
# The fault campaign: lagkit bonds in network namespaces under TCP load,
# through link flaps, partner churn, SIGKILL and restart, links that fail
# silently one way, junk floods, idle control clients and a soak, back to
# back and through lagkit's own switch (its members flapped, the switch
# killed, reloaded and flooded); every scenario prints one
# "campaign | scenario | figures" line.
#
# Usage (root): scripts/campaign.sh [short|full]   (default: full)
#   short: what CI runs with the test suite (about 2 minutes)
#   full:  1,000 flaps, a 10-minute soak, ... (about 35 minutes)
# The figures of the last full run are in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
case $mode in short | full) ;; *) echo "usage: $0 [short|full]" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "$0: needs root (network namespaces)" >&2; exit 2; }
bash scripts/setup.sh build run test
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
echo "campaign ($mode), $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), kernel $(uname -r), $(nproc) CPUs"
# A run fails on cargo's status too (a build error prints no FAILED line).
failed=0
LAGKIT_CAMPAIGN=$mode cargo test --release -q -p lagkit --test campaign -- --test-threads 1 --nocapture 2>&1 |
  tee -a "$out" | { grep -o 'campaign | .*' || true; } || failed=1
cargo test --release -q -p lagkit-bond --test netns -- --test-threads 1 --nocapture \
  control_clients_cannot_stall_the_control_plane a_junk_flood_on_one_member_never_knocks_out_the_other 2>&1 |
  tee -a "$out" | { grep -o 'campaign | .*' || true; } || failed=1
echo "took $(($(date +%s) - start)) s"
if [ $failed = 1 ] || grep -qE 'FAILED|panicked' "$out" || ! grep -q 'campaign | ' "$out"; then
  grep -E -A4 'panicked|^error' "$out" >&2 || tail -20 "$out" >&2
  echo "campaign: FAILED" >&2
  exit 1
fi
echo "campaign: every scenario passed"
