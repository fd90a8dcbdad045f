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

#![forbid(unsafe_code)]

pub mod addr;
mod error;
pub mod link;
pub mod netlink;
pub mod tc;

pub use error::Error;
