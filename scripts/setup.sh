#!/usr/bin/env bash
# The one place that installs what lagkit needs on Debian (or a Debian-like
# system with apt-get). scripts/demo.sh, scripts/test.sh and .ci/run call it;
# run it yourself before `cargo build` on a fresh machine.
#
#   bash scripts/setup.sh [GROUP ...]     # default: every group
#
# Groups:
#   build    compiling lagkit: clang and llvm compile the BPF programs of
#            lagkit-bpf's build.rs against libbpf's and the kernel's headers
#   run      what the daemons and the lab run: ip, tc and bridge (iproute2),
#            ethtool (offload and speed settings), sysctl (procps), ping
#            and iperf3 (the lab's checks and workloads)
#   test     what the test suite drives: tshark, tcpdump, Open vSwitch
#            (interoperability tests, the lab's `kind = "ovs"` switches),
#            bpftool, tmux, chromium (the HTML report rendered headless),
#            softflowd, pmacct and fprobe (independent NetFlow v1, v5,
#            v7, v9, IPFIX and sFlow exporters for the planner's tests;
#            tcpdump and dumpcap, from tshark, also make its fixture
#            captures, scripts/make-capture-fixtures.sh), promtool
#            (prometheus: the metrics pages are
#            checked with it), node_exporter (prometheus-node-exporter:
#            its bonding series beside the bond's); and for the benchmark
#            scripts GNU time
#            (resident memory) and xxd; bc (scripts/systemd-restart.sh's
#            timings)
#   package  building and checking the Debian package: cargo-deb (from
#            crates.io, when missing), systemd-analyze, man, dpkg-deb; and
#            systemd itself, which the restart tests boot as PID 1 of
#            namespaces of their own to drive the units
#   parsers  the IOS parsers the switch's show commands are tested with
#            (crates/cli/tests/ios_parsers.rs): Debian's python3 and
#            python3-venv (when /usr/bin/python3 cannot make a venv), then a venv
#            at ${LAGKIT_PYVENV:-${CARGO_TARGET_DIR:-target}/pyvenv} with
#            pinned pyats, genie and ntc-templates from PyPI (made again
#            only when its pins differ). The test group includes it.
#
# Idempotent: a package already installed is not touched, and apt-get runs
# only when something is missing. Needs root when something is missing.
# The package list per group is read by crates/cli/tests/setup.rs, which
# fails when a build script or a run-time command needs a tool or a header
# that no package of its group here provides (the programs lagkit runs and
# their packages are listed in crates/dataplane/src/tools.rs).
set -euo pipefail

# GROUP: Debian packages (keep one group per line: the test parses these).
pkgs_build="clang llvm libbpf-dev linux-libc-dev"
pkgs_run="iproute2 ethtool procps iputils-ping iperf3"
pkgs_test="tshark tcpdump openvswitch-switch openvswitch-common bpftool tmux time xxd util-linux prometheus prometheus-node-exporter chromium softflowd pmacct fprobe bc"
pkgs_package="systemd man-db dpkg"
pkgs_parsers="python3 python3-venv"
# The parsers' venv: these pins, written to its marker file once installed.
parser_pins="pyats==26.9 genie==26.9 ntc-templates==9.3.0"

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(build run test package)

want=()
cargo_deb=0
parsers=0
for g in "${groups[@]}"; do
  case "$g" in
    build) want+=($pkgs_build) ;;
    run) want+=($pkgs_run) ;;
    test) want+=($pkgs_test); parsers=1 ;;
    package) want+=($pkgs_package); cargo_deb=1 ;;
    parsers) parsers=1 ;;
    *) echo "setup.sh: unknown group '$g' (build, run, test, package, parsers)" >&2; exit 2 ;;
  esac
done
# Debian's python3 and its venv module, only when it cannot make a venv
# (Debian's, not whichever python3 comes first on PATH: a pyenv shim, say).
if [ "$parsers" = 1 ] && ! /usr/bin/python3 -m venv --help >/dev/null 2>&1; then
  want+=($pkgs_parsers)
fi

installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

need=()
for p in "${want[@]}"; do
  installed "$p" || need+=("$p")
done

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: missing Debian packages: ${need[*]}; install them with your package manager" >&2
    exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "setup.sh: missing Debian packages: ${need[*]}; run as root (sudo bash scripts/setup.sh) to install them" >&2
    exit 1
  fi
  echo "setup.sh: installing ${need[*]} ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer for it.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ "$cargo_deb" = 1 ] && ! cargo deb --version >/dev/null 2>&1; then
  echo "setup.sh: installing cargo-deb from crates.io ..." >&2
  cargo install --locked --quiet cargo-deb
fi

if [ "$parsers" = 1 ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$root/$target" ;; esac
  venv="${LAGKIT_PYVENV:-$target/pyvenv}"
  marker="$venv/.lagkit-pins"
  if [ "$(cat "$marker" 2>/dev/null)" != "$parser_pins" ]; then
    echo "setup.sh: making the IOS parsers' venv $venv ($parser_pins) ..." >&2
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $parser_pins
    # Both must import, or the venv is no use to the test.
    "$venv/bin/python" -c "import genie.libs.parser, pyats, ntc_templates.parse"
    echo "$parser_pins" >"$marker"
  fi
fi
exit 0
