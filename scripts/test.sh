#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace.
# Installs what the tests need (tshark) when run as root on Debian.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tshark >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tshark >/dev/null
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
cargo test --workspace --no-fail-fast
