//! An interface's administrative state (IFF_UP), set over netlink: one
//! RTM_SETLINK request that names the interface and changes the UP flag
//! alone (its change mask), answered by the kernel's acknowledgement or
//! its errno. What `ip link set DEV up` does, without running `ip`.
//!
//! The request and the reading of the answer are pure functions, tested
//! here byte for byte; [`set_admin_up`] only sends and receives. The
//! socket belongs to the network namespace of the calling thread.

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_REQUEST,
};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use nix::errno::Errno;

/// Why an interface's administrative state could not be set.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// No interface of that name in this network namespace (ENODEV).
    #[error("no interface {name} in this network namespace (create it first, or check the name)")]
    NoDevice {
        /// The interface.
        name: String,
    },
    /// The caller lacks CAP_NET_ADMIN (EPERM).
    #[error("not permitted to bring {name} {state}: that needs CAP_NET_ADMIN (run as root, or set it {state} beforehand with `ip link set {name} {state}`)")]
    NotPermitted {
        /// The interface.
        name: String,
        /// `up` or `down`.
        state: &'static str,
    },
    /// Any other refusal, or the netlink socket failed.
    #[error("cannot bring {name} {state} over netlink: {source}")]
    Netlink {
        /// The interface.
        name: String,
        /// `up` or `down`.
        state: &'static str,
        /// The kernel's errno or the socket's error.
        #[source]
        source: std::io::Error,
    },
}

/// The RTM_SETLINK request, with sequence number `seq`, that sets
/// interface `name` administratively up (or down) and changes nothing else.
pub fn request(name: &str, up: bool, seq: u32) -> Vec<u8> {
    let mut link = LinkMessage::default();
    link.header.flags = if up {
        LinkFlags::Up
    } else {
        LinkFlags::empty()
    };
    link.header.change_mask = LinkFlags::Up;
    link.attributes
        .push(LinkAttribute::IfName(name.to_string()));
    let mut msg = NetlinkMessage::new(
        NetlinkHeader::default(),
        NetlinkPayload::from(RouteNetlinkMessage::SetLink(link)),
    );
    msg.header.flags = NLM_F_REQUEST | NLM_F_ACK;
    msg.header.sequence_number = seq;
    msg.finalize();
    let mut out = vec![0; msg.buffer_len()];
    msg.serialize(&mut out);
    out
}

/// What a datagram from the kernel says about request `seq`: `None` if it
/// holds no answer to it, else the acknowledgement (`Ok`) or the errno.
pub fn answer(buf: &[u8], seq: u32) -> Option<Result<(), i32>> {
    let mut off = 0;
    while off < buf.len() {
        let msg = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[off..]).ok()?;
        let len = msg.header.length as usize;
        if msg.header.sequence_number == seq {
            match msg.payload {
                NetlinkPayload::Error(e) => {
                    return Some(match e.code {
                        None => Ok(()),
                        Some(c) => Err(c.get().saturating_neg()),
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

/// The error a refusal of `name` with `errno` is.
fn refusal(name: &str, up: bool, errno: i32) -> AdminError {
    let name = name.to_string();
    let state = if up { "up" } else { "down" };
    match Errno::from_raw(errno) {
        Errno::ENODEV => AdminError::NoDevice { name },
        Errno::EPERM | Errno::EACCES => AdminError::NotPermitted { name, state },
        _ => AdminError::Netlink {
            name,
            state,
            source: std::io::Error::from_raw_os_error(errno),
        },
    }
}

/// Sets interface `name` administratively up (or down) and waits for the
/// kernel's answer.
pub fn set_admin_up(name: &str, up: bool) -> Result<(), AdminError> {
    let state = if up { "up" } else { "down" };
    let io = |source: std::io::Error| AdminError::Netlink {
        name: name.to_string(),
        state,
        source,
    };
    let mut sock = Socket::new(NETLINK_ROUTE).map_err(io)?;
    sock.bind_auto().map_err(io)?;
    sock.connect(&SocketAddr::new(0, 0)).map_err(io)?;
    let seq = 1;
    sock.send(&request(name, up, seq), 0).map_err(io)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = sock.recv(&mut &mut buf[..], 0).map_err(io)?;
        if n == 0 {
            return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        match answer(&buf[..n], seq) {
            Some(Ok(())) => return Ok(()),
            Some(Err(errno)) => return Err(refusal(name, up, errno)),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_changes_only_the_up_flag_of_the_named_interface() {
        let up = request("p1", true, 7);
        #[rustfmt::skip]
        let want: [u8; 40] = [
            // nlmsghdr: length 40, RTM_SETLINK (19), REQUEST|ACK, seq 7, pid 0
            40, 0, 0, 0, 19, 0, 0x05, 0, 7, 0, 0, 0, 0, 0, 0, 0,
            // ifinfomsg: AF_UNSPEC, type 0, index 0 (by name), flags IFF_UP, change IFF_UP
            0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
            // IFLA_IFNAME (3), 7 bytes: "p1\0", padded to 8
            7, 0, 3, 0, b'p', b'1', 0, 0,
        ];
        assert_eq!(up, want);
        let down = request("p1", false, 7);
        assert_eq!(
            &down[24..32],
            &[0, 0, 0, 0, 1, 0, 0, 0],
            "flags 0, change IFF_UP"
        );
    }

    /// The kernel's NLMSG_ERROR answer to request `seq`: errno `-code`,
    /// or an acknowledgement for 0, with the request's header echoed.
    fn reply(seq: u32, code: i32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend(36u32.to_le_bytes());
        m.extend(2u16.to_le_bytes()); // NLMSG_ERROR
        m.extend(0u16.to_le_bytes());
        m.extend(seq.to_le_bytes());
        m.extend(0u32.to_le_bytes());
        m.extend(code.to_le_bytes());
        m.extend(&request("p1", true, seq)[..16]);
        m
    }

    #[test]
    fn answers_are_read_for_their_own_request_only() {
        assert_eq!(answer(&reply(1, 0), 1), Some(Ok(())));
        assert_eq!(answer(&reply(1, -19), 1), Some(Err(19)));
        assert_eq!(answer(&reply(2, -19), 1), None, "another request's");
        assert_eq!(answer(&[], 1), None);
        assert_eq!(answer(&[0xff; 7], 1), None, "junk is no answer");
        let mut two = reply(2, -1);
        two.extend(reply(1, 0));
        assert_eq!(answer(&two, 1), Some(Ok(())));
    }

    #[test]
    fn refusals_say_what_is_wrong_and_how_to_fix_it() {
        let e = refusal("p1", true, 19);
        assert!(matches!(e, AdminError::NoDevice { .. }));
        assert!(e.to_string().contains("no interface p1"), "{e}");
        let e = refusal("p1", true, 1);
        assert!(
            e.to_string().contains("CAP_NET_ADMIN") && e.to_string().contains("ip link set p1 up"),
            "{e}"
        );
        let e = refusal("p1", false, 22);
        assert!(
            matches!(e, AdminError::Netlink { state: "down", .. }),
            "{e:?}"
        );
    }
}
