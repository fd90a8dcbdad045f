#!/usr/bin/env bash
# README's first command: install what building and running lagkit needs
# (scripts/setup.sh build run: clang, llvm, libbpf's and the kernel's headers,
# iproute2, ...; Debian packages, only when missing), build lagkit and run
# `lagkit demo` — IBM's AIX/Cisco LACP hashing comparison (address vs port
# hashing) in network namespaces, through lagkit's own switch. Needs root
# (namespaces); the report goes to /tmp/lagkit-demo (or the folder given as
# the first argument).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "lagkit demo builds network namespaces: run it as root (sudo bash scripts/demo.sh)" >&2
  exit 2
fi
bash scripts/setup.sh build run
cargo build --release -q -p lagkit
exec ./target/release/lagkit demo --report "${1:-/tmp/lagkit-demo}"
