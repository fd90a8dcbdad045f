#![forbid(unsafe_code)]
//! One rtnetlink request and its answer: framing (pure, tested here) and
//! the exchange on a socket of the calling thread's network namespace; and
//! one query (`ip link show`, `ip addr`, `ip route`) and the objects it
//! answers with.

use std::sync::atomic::{AtomicU32, Ordering};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use nix::errno::Errno;

/// Create the object (`NLM_F_CREATE`).
pub const CREATE: u16 = netlink_packet_core::NLM_F_CREATE;
/// Refuse if it exists (`NLM_F_EXCL`).
pub const EXCL: u16 = netlink_packet_core::NLM_F_EXCL;
/// Replace it if it exists (`NLM_F_REPLACE`).
pub const REPLACE: u16 = netlink_packet_core::NLM_F_REPLACE;

/// How one exchange failed.
#[derive(Debug)]
pub enum Failure {
    /// The kernel refused the request with this errno.
    Refused(Errno),
    /// The socket failed.
    Socket(std::io::Error),
}

/// The bytes of `msg` as request `seq`, with `NLM_F_REQUEST | NLM_F_ACK`
/// and the extra `flags` (e.g. [`CREATE`] | [`EXCL`]).
pub fn frame(msg: RouteNetlinkMessage, flags: u16, seq: u32) -> Vec<u8> {
    let mut msg = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(msg));
    msg.header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
    msg.header.sequence_number = seq;
    msg.finalize();
    let mut out = vec![0; msg.buffer_len()];
    msg.serialize(&mut out);
    out
}

/// What a datagram from the kernel says about request `seq`: `None` if it
/// holds no answer to it, else the acknowledgement (`Ok`) or the errno.
pub fn answer(buf: &[u8], seq: u32) -> Option<Result<(), Errno>> {
    let mut off = 0;
    while off < buf.len() {
        let msg = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[off..]).ok()?;
        let len = msg.header.length as usize;
        if msg.header.sequence_number == seq {
            match msg.payload {
                NetlinkPayload::Error(e) => {
                    return Some(match e.code {
                        None => Ok(()),
                        Some(c) => Err(Errno::from_raw(c.get().saturating_neg())),
                    })
                }
                NetlinkPayload::Done(_) => return Some(Ok(())),
                _ => {}
            }
        }
        if len == 0 {
            break;
        }
        off += (len + 3) & !3;
    }
    None
}

/// A sequence number not used before by this process.
pub fn next_seq() -> u32 {
    static SEQ: AtomicU32 = AtomicU32::new(1);
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Sends `msg` (built with [`frame`] for `seq`) and waits for the kernel's
/// acknowledgement or refusal.
pub fn exchange(msg: &[u8], seq: u32) -> Result<(), Failure> {
    let mut sock = Socket::new(NETLINK_ROUTE).map_err(Failure::Socket)?;
    sock.bind_auto().map_err(Failure::Socket)?;
    sock.connect(&SocketAddr::new(0, 0))
        .map_err(Failure::Socket)?;
    sock.send(msg, 0).map_err(Failure::Socket)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = sock.recv(&mut &mut buf[..], 0).map_err(Failure::Socket)?;
        if n == 0 {
            return Err(Failure::Socket(std::io::ErrorKind::UnexpectedEof.into()));
        }
        match answer(&buf[..n], seq) {
            Some(Ok(())) => return Ok(()),
            Some(Err(errno)) => return Err(Failure::Refused(errno)),
            None => {}
        }
    }
}

/// The objects a datagram from the kernel holds for query `seq`, and
/// whether the answer is complete (`NLMSG_DONE`, or the one answer to a
/// query that is not a dump); an error answer is the errno.
pub fn objects(
    buf: &[u8],
    seq: u32,
    dump: bool,
) -> Result<(Vec<RouteNetlinkMessage>, bool), Errno> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < buf.len() {
        let Ok(msg) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[off..]) else {
            break;
        };
        let len = msg.header.length as usize;
        if msg.header.sequence_number == seq {
            match msg.payload {
                NetlinkPayload::Error(e) => {
                    return match e.code {
                        None => Ok((out, true)),
                        Some(c) => Err(Errno::from_raw(c.get().saturating_neg())),
                    }
                }
                NetlinkPayload::Done(_) => return Ok((out, true)),
                NetlinkPayload::InnerMessage(m) => {
                    out.push(m);
                    if !dump {
                        return Ok((out, true));
                    }
                }
                _ => {}
            }
        }
        if len == 0 {
            break;
        }
        off += (len + 3) & !3;
    }
    Ok((out, false))
}

/// Sends query `msg` (`dump`: every object of its kind, `NLM_F_DUMP`;
/// else the one it names) and collects what the kernel answers.
pub fn query(msg: RouteNetlinkMessage, dump: bool) -> Result<Vec<RouteNetlinkMessage>, Failure> {
    let seq = next_seq();
    let mut m = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(msg));
    m.header.flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
    m.header.sequence_number = seq;
    m.finalize();
    let mut bytes = vec![0; m.buffer_len()];
    m.serialize(&mut bytes);
    let mut sock = Socket::new(NETLINK_ROUTE).map_err(Failure::Socket)?;
    sock.bind_auto().map_err(Failure::Socket)?;
    sock.connect(&SocketAddr::new(0, 0))
        .map_err(Failure::Socket)?;
    sock.send(&bytes, 0).map_err(Failure::Socket)?;
    let mut all = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = sock.recv(&mut &mut buf[..], 0).map_err(Failure::Socket)?;
        if n == 0 {
            return Err(Failure::Socket(std::io::ErrorKind::UnexpectedEof.into()));
        }
        let (got, done) = objects(&buf[..n], seq, dump).map_err(Failure::Refused)?;
        all.extend(got);
        if done {
            return Ok(all);
        }
    }
}

/// Builds `msg` with `flags`, sends it and turns a failure into the
/// caller's error with `refused` (for an errno) or `socket`.
pub(crate) fn call(
    msg: RouteNetlinkMessage,
    flags: u16,
    refused: impl FnOnce(Errno) -> crate::Error,
    socket: impl FnOnce(std::io::Error) -> crate::Error,
) -> Result<(), crate::Error> {
    let seq = next_seq();
    exchange(&frame(msg, flags, seq), seq).map_err(|f| match f {
        Failure::Refused(errno) => refused(errno),
        Failure::Socket(e) => socket(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's NLMSG_ERROR answer to request `seq` with `code`
    /// (0: acknowledgement), echoing a 16-byte request header.
    pub(crate) fn reply(seq: u32, code: i32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend(36u32.to_le_bytes());
        m.extend(2u16.to_le_bytes()); // NLMSG_ERROR
        m.extend(0u16.to_le_bytes());
        m.extend(seq.to_le_bytes());
        m.extend(0u32.to_le_bytes());
        m.extend(code.to_le_bytes());
        m.extend(16u32.to_le_bytes());
        m.extend([0; 12]);
        m
    }

    #[test]
    fn answers_are_read_for_their_own_request_only() {
        assert_eq!(answer(&reply(1, 0), 1), Some(Ok(())));
        assert_eq!(answer(&reply(1, -19), 1), Some(Err(Errno::ENODEV)));
        assert_eq!(answer(&reply(1, -17), 1), Some(Err(Errno::EEXIST)));
        assert_eq!(answer(&reply(2, -19), 1), None, "another request's");
        assert_eq!(answer(&[], 1), None);
        assert_eq!(answer(&[0xff; 7], 1), None, "junk is no answer");
        let mut two = reply(2, -1);
        two.extend(reply(1, 0));
        assert_eq!(answer(&two, 1), Some(Ok(())));
    }

    #[test]
    fn sequence_numbers_differ() {
        assert_ne!(next_seq(), next_seq());
    }
}
