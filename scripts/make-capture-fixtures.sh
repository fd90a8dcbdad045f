#!/usr/bin/env bash
# Makes the small captures in crates/planner/tests/captures with the real
# capture tools (tcpdump, dumpcap), as users make them: a snap length of
# 96, `-i any` (Linux cooked SLL2, and SLL with -y LINUX_SLL), 802.1Q and
# QinQ tags, nanosecond timestamps, and a pcapng of two interfaces of two
# link types (`-i va -i any`: Ethernet and SLL2). The traffic stays in two network namespaces made here and
# removed on exit, on a veth pair: UDP datagrams of 1000 bytes (so the
# snap length cuts them) from 10.1.0.1 to 10.1.0.2 ports 5001-5004 sent
# by the kernel, and the same datagrams written by a packet socket with
# an 802.1Q tag (VLAN 100) and with 802.1ad VLAN 200 around 802.1Q VLAN
# 100 (the kernel may have no VLAN devices, so the tags are written in
# the frames).
# Needs root, tcpdump and tshark (Debian packages tcpdump, tshark).
# Run: sudo bash scripts/make-capture-fixtures.sh
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/crates/planner/tests/captures"
a=lkfx-a-$$ b=lkfx-b-$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip -n "$a" link add va type veth peer name vb netns "$b"
for ns in "$a" "$b"; do
  x=$([ "$ns" = "$a" ] && echo a || echo b)
  n=$([ "$ns" = "$a" ] && echo 1 || echo 2)
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "v$x" address "02:00:00:00:0$n:01" up
  ip -n "$ns" addr add "10.1.0.$n/24" dev "v$x"
done
# A static neighbour: no ARP in the captures.
ip -n "$a" neigh replace 10.1.0.2 lladdr 02:00:00:00:02:01 nud permanent dev va

# Starts a capture in namespace $a, and waits until it listens.
capture() {
  local log; log=$(mktemp)
  ip netns exec "$a" "$@" 2>"$log" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q -e "listening on" -e "Capturing on" "$log" && { rm -f "$log"; return; }
    sleep 0.05
  done
  cat "$log" >&2; exit 1
}

send() {
  local pad; pad=$(head -c 1000 /dev/zero | tr '\0' x)
  for port in 5001 5002 5003 5004; do
    ip netns exec "$a" bash -c "echo -n $pad > /dev/udp/10.1.0.2/$port"
  done
  ip netns exec "$a" python3 - <<'PY'
import socket, struct
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("va", 0))
def csum(b):
    if len(b) % 2: b += b"\0"
    n = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while n >> 16: n = (n & 0xffff) + (n >> 16)
    return ~n & 0xffff
for tags in ([(0x8100, 100)], [(0x88a8, 200), (0x8100, 100)]):
    for port in (5001, 5002, 5003, 5004):
        payload = b"x" * 1000
        udp = struct.pack("!HHHH", 40000, port, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                         bytes([10, 1, 0, 1]), bytes([10, 1, 0, 2]))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        f = bytes.fromhex("020000000201") + bytes.fromhex("020000000101")
        for tpid, vid in tags:
            f += struct.pack("!HH", tpid, vid)
        s.send(f + b"\x08\x00" + ip + udp)
PY
}

stop() {
  sleep 0.5
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
}

capture tcpdump -i va -s 96 -U -w "$out/tcpdump-s96-vlan.pcap"
capture tcpdump -i any -s 96 -U -w "$out/tcpdump-any-sll2.pcap"
capture tcpdump -i any -y LINUX_SLL -s 96 -U -w "$out/tcpdump-any-sll.pcap"
capture tcpdump -i va --time-stamp-precision=nano -s 128 -U -w "$out/tcpdump-nano.pcap"
capture dumpcap -q -i va -s 96 -i any -s 96 -w "$out/dumpcap-two-interfaces.pcapng"
send
stop
chmod 644 "$out"/*
ls -l "$out"
