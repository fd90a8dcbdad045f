#!/usr/bin/env bash
# The full test suite: formatting, lints, and every test of the workspace
# (unit, simulation, tshark, and root network-namespace tests, which skip
# with a message when not run as root). Installs what the tests need when
# run as root on Debian.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v tshark >/dev/null 2>&1 || need+=(tshark)
  command -v ovs-vswitchd >/dev/null 2>&1 || need+=(openvswitch-switch)
  command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
  command -v ethtool >/dev/null 2>&1 || need+=(ethtool)
  command -v tcpdump >/dev/null 2>&1 || need+=(tcpdump)
  command -v ping >/dev/null 2>&1 || need+=(iputils-ping)
  # lagkit-bpf's build.rs compiles its BPF programs with clang against libbpf's headers.
  command -v clang >/dev/null 2>&1 || need+=(clang)
  command -v llvm-objdump >/dev/null 2>&1 || need+=(llvm)
  [ -f /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
  [ -f /usr/include/linux/bpf.h ] || need+=(linux-libc-dev)
  if [ ${#need[@]} -gt 0 ]; then
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
# The lab's scenario tests measure throughput through lagkit bonds: they
# run the release binary (the dev profile's would make the CPU, not the
# links, the bottleneck).
cargo build --release -q -p lagkit
export LAGKIT_BIN="$PWD/target/release/lagkit"
cargo test --workspace --no-fail-fast
