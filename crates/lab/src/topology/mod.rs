//! The topology file: hosts (network namespaces running a lagkit bond),
//! switches (lagkit's own, or Open vSwitch), links between them,
//! the workload, and a note on scale. Every error names the file, line and
//! column of the offending value.
//!
//! ```toml
//! name = "two-hosts"                  # lab name (default: the file's stem)
//! scale = "100 Mbit/s links stand for 1 Gbit/s"   # or [scale] note = ".." factor = 10
//!
//! [[host]]
//! name = "h1"
//! address = "10.0.0.1/24"             # on the bond, or on the only link without a bond
//! bond = { mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4" }
//!                                     # any lagkit bond key, e.g. engine = "bpf" (auto | bpf | userspace; default auto)
//!
//! [[switch]]
//! name = "sw"
//! kind = "lagkit"                     # lagkit (its own switch, the default) | ovs (Open vSwitch)
//! engine = "auto"                     # lagkit's switch: auto (the kernel forwards where it can) | bpf | userspace
//! [[switch.channel]]                  # a port-channel
//! name = "po1"                        # poN: Port-channel N on lagkit's switch
//! host = "h1"                         # every port linked to h1 (or: ports = ["p1", "p2"])
//! protocol = "lacp-active"            # lacp-active | lacp-passive | static | none |
//!                                     # pagp-desirable | pagp-auto (silent, IOS's default)
//!                                     # | pagp-desirable-non-silent | pagp-auto-non-silent
//!                                     # (lagkit's switch only; host bonds: pagp = ...)
//! load_balance = "l4"                 # l4: src-dst-port (OVS balance-tcp) | l2: src-dst-mac
//!                                     # (OVS balance-slb) | l3: src-dst-ip (lagkit's switch only);
//!                                     # lagkit: one for all of a switch's channels
//!
//! [[link]]
//! between = ["h1", "sw"]
//! count = 2                           # veth pairs
//! rate = "100mbit"                    # tbf on both ends; absent: unshaped
//! overhead = true                     # count preamble, FCS and gap (tbf overhead 24 mpu 84)
//! mtu = 1500                          # or [9000, 1500]: each end of `between`
//! fault = { loss = 0.01 }             # optional: drop 1% of frames (by the lagkit bond at one end)
//!
//! [workload]
//! kind = "iperf3"
//! client = "h1"
//! server = "h2"
//! flows = 8
//! seconds = 10
//! bidir = true
//! # or lagkit's own workloads (crates/load):
//! # kind = "lagkit-load"
//! # load = "socketprocs"              # socketprocs | stream | maerts | bidir | rr | lpm
//! # clients = ["c1", "c2"]            # instead of client: all at once (stream, maerts, bidir, rr)
//! # migrations = 4                    # lpm: control+data pairs on sequential ports
//! # sockbuf = 131072                  # SO_SNDBUF/SO_RCVBUF, bytes (default: the kernel's autotuning)
//! # procs = 4                         # socketprocs: N per side, N×N connections
//! # method = "epoll-et"               # socketprocs: select | poll | epoll-et
//! # conns = 1                         # stream/maerts/rr: parallel connections
//! # size = 4096                       # message size, bytes (default by load)
//! # seconds = 10
//! ```
//!
//! Interfaces are named by the lab, in file order: a host's links are `e1`,
//! `e2`, ... in its namespace, a switch's ports `p1`, `p2`, .... The bond's
//! `members` default to all of the host's links; `name` defaults to
//! `bond0`, `address` to the host's address and `mtu` to its links' MTU.
//!
//! Three layers, each using only the ones before it: `model` (the
//! validated types and what the lab derives from them), `parse` (the file
//! read into raw tables that keep every value's position; the error type)
//! and `validate` (raw tables → [`Topology`]). This module only joins them.

mod model;
mod parse;
mod validate;

pub use model::{
    ns_name, ns_of_lab, valid_lab_name, Channel, End, Host, HostBond, Iperf3Spec, Link,
    LoadBalance, LoadSpec, Protocol, Rate, RateError, Scale, Switch, SwitchKind, Topology,
    WorkloadSpec, NS_PREFIX,
};
pub use parse::{lab_name_of, TopologyError};

use parse::Cx;
use std::path::Path;

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TopologyError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read the topology file: {e}"),
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Topology::parse(&text, &file, &stem)
    }

    /// Parses and validates topology text; `default_name` is used when the
    /// file has no `name`.
    pub fn parse(text: &str, file: &str, default_name: &str) -> Result<Topology, TopologyError> {
        let cx = Cx { text, file };
        let raw = parse::read(&cx)?;
        validate::build(&cx, raw, default_name)
    }
}

/// Topology texts the crate's unit tests build on.
#[cfg(test)]
pub(crate) mod testing {
    /// Hosts `h1` and `h2` back to back over two links, each with an
    /// address and a bond; `h1`'s bond table body is `bond`, `h2`'s is
    /// 802.3ad with layer3+4.
    pub(crate) fn two_bonded_hosts(bond: &str) -> String {
        format!(
            r#"name = "t"
[[host]]
name = "h1"
address = "10.0.0.1/24"
bond = {{ {bond} }}

[[host]]
name = "h2"
address = "10.0.0.2/24"
bond = {{ mode = "802.3ad", xmit_hash_policy = "layer3+4" }}

[[link]]
between = ["h1", "h2"]
count = 2
"#
        )
    }
}
