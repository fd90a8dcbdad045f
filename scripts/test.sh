#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace
# (unit, simulation, tshark, packaging and root network-namespace tests,
# which skip with a message when not run as root). As root, installs what
# the build and the tests need first (scripts/setup.sh: Debian packages and
# cargo-deb, only when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then
  bash scripts/setup.sh build run test package
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
# The lab's scenario tests measure throughput through lagkit bonds: they
# run the release binary (the dev profile's would make the CPU, not the
# links, the bottleneck). The packaging tests put it in a .deb.
cargo build --release -q -p lagkit
export LAGKIT_BIN="$PWD/target/release/lagkit"
cargo test --workspace --no-fail-fast
