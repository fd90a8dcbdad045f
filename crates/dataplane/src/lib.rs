//! lagkit's userspace data path.
//!
//! This kernel has no bonding driver, so the bond daemon moves frames itself
//! between a TAP (the bond interface the host stack sees) and one AF_PACKET
//! socket per member link. What makes that fast is not the language but
//! keeping the kernel's offloads: both sides carry the 10-byte virtio-net
//! header ([`vnet`]), so 64 KB GSO super-frames and partial checksums pass
//! through whole, and kernel TCP endpoints work with their default offloads.
//!
//! - [`vnet`]: the virtio-net header view/repr and software checksum completion.
//! - [`device`]: the [`Device`] trait, caller-owned [`RxBatch`] buffers, [`Counters`].
//! - [`tap`], [`packet`]: the TAP and the AF_PACKET member; [`pair`]: an in-process link for tests.
//! - [`pcap`], [`fault`]: wrappers around any device (capture, deterministic loss and cuts).
//! - [`forward`]: the forwarding threads, reading an atomically published distribution map.
//! - [`netns`]: opening devices inside a named network namespace.
//! - [`handoff`]: the descriptors a daemon hands to the next one (a restart keeps its devices).
//! - [`Link`]: MAC, MTU, up/down, carrier and device features (`ethtool -k`) of an interface, by ioctl.
//!
//! The crate has no `unsafe` code: the system calls without a safe API in
//! `nix` (packet sockets, TAP, interface ioctls, the tcx drop program) are
//! safe wrappers in `lagkit-sys`.
//!
//! Tests: unit tests need nothing special; `tests/netns.rs` builds namespaces
//! and needs root (it skips otherwise). `examples/fwd_bench.rs` measures
//! throughput and CPU per GB against a bare veth with iperf3:
//! `cargo run --release -p lagkit-dataplane --example fwd_bench -- -r 3`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod device;
pub mod fault;
pub mod forward;
pub mod handoff;
pub mod isolate;
pub mod netns;
pub mod packet;
pub mod pair;
pub mod pcap;
pub mod sniff;
mod sys;
pub mod tap;
pub mod tools;
pub mod vnet;

pub use device::{CounterSnapshot, Counters, Device, DropReason, RxBatch, SendError};
pub use fault::{Direction, FaultControl, FaultInjector};
pub use forward::{
    plausible_slow_frame, DistMap, Engine, EngineConfig, EngineDrop, EngineError, MapPublisher,
    MemberSender, SlowFrame, SlowQueues,
};
pub use isolate::{isolate_ingress, IsolateError, Isolation};
pub use packet::{PacketConfig, PacketSocket, Receive};
pub use pair::PairDevice;
pub use pcap::{Capture, PcapDevice};
pub use sys::{coarse_now_ns, monotonic_now_ns, Features, Link, LinkFlags, OpenError, SysError};
pub use tap::{Offloads, Tap, TapConfig};
pub use vnet::{complete_checksum, GsoType, VnetError, VnetFlags, VnetHeader, VnetRepr};
