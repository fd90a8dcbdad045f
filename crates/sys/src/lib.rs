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
//! It also holds the system calls that have no safe API in a crate
//! (packet sockets in [`packet`], the tcx drop program in [`packet_drop`],
//! TAP in [`tap`], interface and ethtool ioctls in [`ioctl`], the SIGPIPE
//! disposition in [`fd`]), each as a small safe function whose `unsafe`
//! blocks say why they are sound: besides the BPF loader, it is the only
//! crate of lagkit with `unsafe` code. The rtnetlink modules forbid it.

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
pub mod tap;
pub mod tc;

pub use error::Error;
