//! The EXAMPLES sections of `--help` (clap's `after_long_help`) for the
//! commands that read a file. Every example runs as written from the
//! source tree: the files are in `examples/` (a test runs the ones that
//! need no root).

/// `lagkit plan --help`.
pub const PLAN: &str = "\
EXAMPLES:
  # IBM's LPM traffic under AIX src_dst_port: why one adapter carries it all
  lagkit plan examples/plan/lpm.csv --host-hash aix:src_dst_port --explain

  # The same flows on four 10 Gbit/s links, as JSON
  lagkit plan examples/plan/lpm.csv --links 4 --rate 10g --json

  # Eight connections the switch (a Catalyst, its IOS configuration)
  # delivers to a server: the fixes are only its port-channel
  # load-balance methods, as IOS lines
  lagkit plan examples/plan/to-server.csv --switch-config examples/check/switch-b-lacp.cfg --explain

  # A built-in lab scenario's configurations, planned
  lagkit plan --lab ibm-6513 --short

  # A router's NetFlow v9/IPFIX or a switch's sFlow export, captured on
  # the collector (here softflowd's NetFlow v9, sampled 1 in 2: records
  # are scaled by the exporter's sampling interval)
  tcpdump -i eth0 -w export.pcap udp port 2055 or udp port 4739 or udp port 6343
  lagkit plan examples/plan/netflow9-sampled.pcap --host 10.0.0.1 --host-hash layer3+4

  A flow list is CSV with a header naming any of these columns, in any order:
  proto,src,sport,dst,dport,src_mac,dst_mac,vlan,bytes,rate,dir";

/// `lagkit check --help`.
pub const CHECK: &str = "\
EXAMPLES:
  # A server's bond against the switch it is cabled to (finds an MTU mismatch)
  lagkit check examples/check/server-bond.toml examples/check/switch-b-lacp.cfg

  # netplan against a Cisco running-config, as JSON
  lagkit check examples/check/netplan-bond.yaml examples/check/run18-switch.cfg --json

  # Two switches of one channel: `on` facing LACP
  lagkit check examples/check/switch-a-on.cfg examples/check/switch-b-lacp.cfg

  # A Catalyst's show output against the host's running bond: the switch
  # hears another server as its LACP partner
  lagkit check examples/check/show-lacp.txt examples/check/proc-bonding.txt

  Exit status: 0 nothing or notes only, 1 warnings, 3 errors, 2 an input could
  not be read.";

/// `lagkit switch --help`.
pub const SWITCH: &str = "\
EXAMPLES:
  # Read the configuration and show what would run (no root needed)
  lagkit switch examples/check/switch-b-lacp.cfg \\
      --port Gi1/0/47=veth1 --port Gi1/0/48=veth2 --check

  # Run it (root), then ask it as a Catalyst would answer
  sudo lagkit switch examples/check/switch-b-lacp.cfg \\
      --port Gi1/0/47=veth1 --port Gi1/0/48=veth2
  sudo lagkit switch show etherchannel summary --name dist-b";

/// `lagkit lab up|down --help`.
pub const LAB_FILE: &str = "\
EXAMPLES:
  sudo lagkit lab up examples/lab/two-hosts.toml
  sudo ip netns exec lklab-two-hosts-h1 lagkit status --name bond0
  sudo lagkit lab down examples/lab/two-hosts.toml";

/// `lagkit lab run --help`.
pub const LAB_RUN: &str = "\
EXAMPLES:
  # A topology file: up, converge, run its workload, measure, report, down
  sudo lagkit lab run examples/lab/two-hosts.toml --report /tmp/lab-report

  # A built-in scenario's short sweep at the original measurements' 1 Gbit/s
  sudo lagkit lab run ibm-6513 --short --rate 1g --converge-timeout 2m";

/// `lagkit capture --help`.
pub const CAPTURE: &str = "\
EXAMPLES:
  # Five seconds of bond0's LACPDUs and Marker PDUs, then read them
  sudo lagkit capture --name bond0 -w /tmp/bond0.pcapng --duration 5s
  tshark -r /tmp/bond0.pcapng -T fields -e frame.interface_name -e lacp.actor.port

  # A lagkit switch's control frames and every frame it forwards, until Ctrl-C
  sudo lagkit capture --switch dist-b -w /tmp/dist-b.pcapng --data

  Each member or port is an interface of its own in the file, and each frame
  says whether it was received or sent (Wireshark: frame.interface_name,
  frame.packet_flags_direction). The daemon drops (and the summary counts)
  frames this command reads too slowly; it never waits for it.";

#[cfg(test)]
mod tests {
    /// The examples that need no root run, and the files they name exist.
    #[test]
    fn examples_name_files_that_exist() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        for text in [
            super::PLAN,
            super::CHECK,
            super::SWITCH,
            super::LAB_FILE,
            super::LAB_RUN,
            super::CAPTURE,
        ] {
            for word in text.split_whitespace() {
                if word.starts_with("examples/") {
                    let p = std::path::Path::new(root).join(word);
                    assert!(
                        p.exists(),
                        "{} names {word}, which is missing",
                        text.lines().nth(1).unwrap_or("")
                    );
                }
            }
        }
    }
}
