#!/usr/bin/env bash
# README's first command: install what the lab needs (iproute2; a Debian
# package, only when missing), build lagkit and run `lagkit demo` — seed
# 000's LACP hashing comparison in network namespaces, through lagkit's own
# switch (Open vSwitch is not needed), about a minute. Needs root
# (namespaces); the report goes to /tmp/lagkit-demo (or the folder given as
# the first argument).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "lagkit demo builds network namespaces: run it as root (sudo bash scripts/demo.sh)" >&2
  exit 2
fi
need=()
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v tc >/dev/null 2>&1 || need+=(iproute2)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${need[*]} ..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cargo build --release -q -p lagkit
exec ./target/release/lagkit demo --report "${1:-/tmp/lagkit-demo}"
