#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace
# (unit, simulation, tshark, packaging and root network-namespace tests,
# which skip with a message when not run as root). As root, installs what
# the build and the tests need first (scripts/setup.sh: Debian packages and
# cargo-deb, only when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's time goes to stderr, so a slow CI says where it went.
phase() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "test.sh: $name took $((SECONDS - start)) s" >&2
}

if [ "$(id -u)" = 0 ]; then
  phase setup bash scripts/setup.sh build run test package
fi

phase fmt cargo fmt --all -- --check
phase clippy cargo clippy --workspace --all-targets -q -- -D warnings
# One build serves every test: the lab's scenario tests, which measure
# throughput through lagkit bonds and switches, and the packaging tests,
# which put it in a .deb, run the dev profile's `lagkit` that the test
# build makes anyway (its opt-level keeps the scaled-down links, not the
# CPU, the bottleneck); a release build beside it would build the
# workspace a second time.
phase test-build cargo test --workspace --no-run -q
export LAGKIT_BIN="$PWD/target/debug/lagkit"
phase tests cargo test --workspace --no-fail-fast
# The switch's tests ran under its default engine (the kernel's, where it
# runs); once more under the daemon's own forwarding loop, which stays.
LAGKIT_TEST_SWITCH_ENGINE=userspace phase switch-userspace \
  cargo test -p lagkit --test switch --test switch_more --test switch_flood
