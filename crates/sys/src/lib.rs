//! lagkit's platform layer: the kernel changes the daemons make (veth
//! pairs, link state, addresses, a clsact qdisc and a drop filter), each one
//! rtnetlink request with `NLM_F_ACK`, answered by the kernel's
//! acknowledgement or its errno. What `ip` and `tc` did for them, without
//! a child process: no program to install, no text to parse, and a typed
//! [`Error`] naming the operation and the object.
//!
//! Every request is built by a pure function (tested byte for byte against
//! what iproute2 sends, as captured with strace) and sent by [`netlink`] on
//! a socket of the calling thread's network namespace. Synchronous on
//! purpose: the daemons are not async, and each operation is one datagram
//! each way.
//!
//! It is also where the workspace's `unsafe` outside the BPF loader lives:
//! small safe wrappers over the system calls that have no safe form in a
//! crate, each `unsafe` block with the reason it is sound. [`packet`]:
//! packet sockets; [`packet_drop`]: the tcx drop program; [`tap`]: TAP;
//! [`ioctl`]: interface and ethtool ioctls; [`fd`]: the SIGPIPE
//! disposition; [`sock`]: epoll and `select` over descriptor numbers and
//! `TCP_INFO`; [`proc`]: a forked child with its standard streams on pipes,
//! the standard streams without std's locks, what a `Command`'s child does
//! before exec, signals, and a child's peak memory (wait4). The rtnetlink
//! modules forbid `unsafe`; every other crate but `lagkit-bpf`, with its
//! tests and examples, writes none (`cli/tests/layering.rs`).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod addr;
mod error;
pub mod fd;
pub mod ioctl;
pub mod link;
pub mod netlink;
pub mod packet;
pub mod packet_drop;
pub mod proc;
pub mod route;
pub mod sock;
pub mod tap;
pub mod tc;

pub use error::Error;
