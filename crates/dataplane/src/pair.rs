//! An in-process link: two [`PairDevice`] ends joined by a Unix
//! `SOCK_SEQPACKET` socket pair.
//!
//! Why: the engine, the wrappers and later the bond can be tested without
//! root, namespaces or real interfaces, yet over a real file descriptor that
//! epoll can wait on, with message boundaries kept and a bounded buffer that
//! fills up like a real queue.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};

use crate::device::{Counters, Device, DropReason, RxBatch, SendError};
use crate::sys::SysError;
use crate::vnet::HEADER_LEN;

/// One end of an in-process link.
#[derive(Debug)]
pub struct PairDevice {
    fd: OwnedFd,
    name: String,
    counters: Arc<Counters>,
}

impl PairDevice {
    /// Two connected ends named `a` and `b`.
    pub fn pair(a: &str, b: &str) -> Result<(PairDevice, PairDevice), SysError> {
        let (fa, fb) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|errno| SysError {
            op: "socketpair",
            errno,
        })?;
        Ok((
            PairDevice {
                fd: fa,
                name: a.to_owned(),
                counters: Counters::new(),
            },
            PairDevice {
                fd: fb,
                name: b.to_owned(),
                counters: Counters::new(),
            },
        ))
    }

    /// The counters, shareable.
    pub fn counters_arc(&self) -> Arc<Counters> {
        self.counters.clone()
    }
}

impl Device for PairDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        let mut got = 0;
        while let Some(slot) = batch.spare() {
            let n = match recv(self.fd.as_raw_fd(), slot, MsgFlags::MSG_DONTWAIT) {
                Ok(n) => n,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(errno) if got == 0 => {
                    return Err(SysError {
                        op: "recv(pair)",
                        errno,
                    })
                }
                Err(_) => break,
            };
            if n == 0 {
                // Peer closed: nothing more will come.
                break;
            }
            if n < HEADER_LEN {
                self.counters.count_drop(DropReason::RxMalformed, 1);
                continue;
            }
            batch.commit(n);
            self.counters.count_rx(batch.packet(batch.len() - 1));
            got += 1;
        }
        Ok(got)
    }

    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        let r = if packet.len() < HEADER_LEN {
            Err(SendError::Malformed)
        } else {
            loop {
                match send(
                    self.fd.as_raw_fd(),
                    packet,
                    MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL,
                ) {
                    Ok(_) => break Ok(()),
                    Err(Errno::EINTR) => continue,
                    Err(Errno::EPIPE | Errno::ECONNRESET) => break Err(SendError::Down),
                    Err(e) => break Err(SendError::from_errno(e)),
                }
            }
        };
        match r {
            Ok(()) => self.counters.count_tx(packet),
            Err(e) => self.counters.count_drop(e.reason(), 1),
        }
        r
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::plain_packet;

    #[test]
    fn roundtrip_and_full() {
        let (a, b) = PairDevice::pair("a", "b").unwrap();
        let p = plain_packet(&[1u8; 60]);
        a.send(&p).unwrap();
        assert_eq!(a.send(&[0u8; 3]), Err(SendError::Malformed));
        let mut batch = crate::device::RxBatch::new(8);
        assert_eq!(b.recv(&mut batch).unwrap(), 1);
        assert_eq!(batch.packet(0), &p[..]);
        assert_eq!(b.recv(&mut batch).unwrap(), 0);
        // Fill the socket buffer: sends fail with Full instead of blocking.
        let big = plain_packet(&[0u8; 60000]);
        let mut full = false;
        for _ in 0..1000 {
            if a.send(&big) == Err(SendError::Full) {
                full = true;
                break;
            }
        }
        assert!(full);
        let s = a.counters().snapshot();
        assert!(s.dropped(DropReason::TxFull) >= 1);
        assert_eq!(s.dropped(DropReason::TxRejected), 1);
    }
}
