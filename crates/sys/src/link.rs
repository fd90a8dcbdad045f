#![forbid(unsafe_code)]
//! Links: a veth pair made, a link deleted, its state, ARP, MTU and MAC
//! address changed. Links are named in the request (`IFLA_IFNAME`) and
//! the kernel looks the name up in the calling thread's namespace, so a
//! missing one is the kernel's ENODEV, as with `ip link`.

use std::os::fd::{AsRawFd, BorrowedFd};

use netlink_packet_route::link::{
    InfoData, InfoKind, InfoVeth, LinkAttribute, LinkFlags, LinkInfo, LinkMessage,
};
use netlink_packet_route::RouteNetlinkMessage;

use crate::netlink::{call, CREATE, EXCL};
use crate::Error;

/// What [`set`] changes on a link; `None` leaves a property as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkChange {
    /// Administratively up (`Some(true)`) or down.
    pub up: Option<bool>,
    /// ARP on (`Some(true)`) or off (`IFF_NOARP`).
    pub arp: Option<bool>,
    /// The MTU.
    pub mtu: Option<u32>,
    /// The MAC address.
    pub address: Option<[u8; 6]>,
    /// The interface alias (`ip link set NAME alias TEXT`; empty removes it).
    pub alias: Option<String>,
}

impl LinkChange {
    /// Up (or down), nothing else.
    pub fn up(up: bool) -> LinkChange {
        LinkChange {
            up: Some(up),
            ..LinkChange::default()
        }
    }
}

fn named(name: &str) -> LinkMessage {
    let mut m = LinkMessage::default();
    m.attributes.push(LinkAttribute::IfName(name.to_string()));
    m
}

/// The RTM_NEWLINK request for the veth pair `name`/`peer`, the peer in
/// the namespace `peer_netns` refers to (else beside `name`).
pub fn add_veth_request(
    name: &str,
    peer: &str,
    peer_netns: Option<BorrowedFd<'_>>,
) -> RouteNetlinkMessage {
    let mut p = named(peer);
    if let Some(fd) = peer_netns {
        p.attributes.push(LinkAttribute::NetNsFd(fd.as_raw_fd()));
    }
    let mut m = named(name);
    m.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Veth),
        LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(p))),
    ]));
    RouteNetlinkMessage::NewLink(m)
}

/// `ip link add NAME type veth peer name PEER [netns FD]`: both ends
/// down; EEXIST if either name is taken.
pub fn add_veth(name: &str, peer: &str, peer_netns: Option<BorrowedFd<'_>>) -> Result<(), Error> {
    link_call(
        "add veth",
        name,
        add_veth_request(name, peer, peer_netns),
        CREATE | EXCL,
    )
}

/// The RTM_DELLINK request for `name`.
pub fn delete_request(name: &str) -> RouteNetlinkMessage {
    RouteNetlinkMessage::DelLink(named(name))
}

/// `ip link del dev NAME` (a veth's peer goes with it); ENODEV if there
/// is no such link.
pub fn delete(name: &str) -> Result<(), Error> {
    link_call("delete", name, delete_request(name), 0)
}

/// The RTM_SETLINK request that applies `change` to `name`: the flags it
/// names in the change mask, the others untouched.
pub fn set_request(name: &str, change: &LinkChange) -> RouteNetlinkMessage {
    let mut m = named(name);
    let mut flag = |f: LinkFlags, on: Option<bool>| {
        if let Some(on) = on {
            m.header.change_mask |= f;
            m.header.flags.set(f, on);
        }
    };
    flag(LinkFlags::Up, change.up);
    flag(LinkFlags::Noarp, change.arp.map(|arp| !arp));
    if let Some(mtu) = change.mtu {
        m.attributes.push(LinkAttribute::Mtu(mtu));
    }
    if let Some(mac) = change.address {
        m.attributes.push(LinkAttribute::Address(mac.to_vec()));
    }
    if let Some(alias) = &change.alias {
        m.attributes.push(LinkAttribute::IfAlias(alias.clone()));
    }
    RouteNetlinkMessage::SetLink(m)
}

/// `ip link set NAME [arp on|off] [mtu M] [address A] [up|down]`, in one
/// request.
pub fn set(name: &str, change: &LinkChange) -> Result<(), Error> {
    link_call("set", name, set_request(name, change), 0)
}

/// What `ip -d link show` says of an interface that matters to whoever
/// would take it over: its index, its kind, its master and its alias.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFacts {
    /// The interface's index.
    pub ifindex: u32,
    /// Its name.
    pub name: String,
    /// Its kind (`veth`, `bridge`, `tun`, ...; `None` for a plain NIC).
    pub kind: Option<String>,
    /// The index of the bridge, bond, team or VRF it is enslaved to.
    pub master: Option<u32>,
    /// Its alias (`ip link set NAME alias TEXT`).
    pub alias: Option<String>,
    /// It is a loopback interface (`IFF_LOOPBACK`).
    pub loopback: bool,
}

impl LinkFacts {
    fn of(m: &LinkMessage) -> LinkFacts {
        let mut f = LinkFacts {
            ifindex: m.header.index,
            loopback: m.header.flags.contains(LinkFlags::Loopback),
            ..LinkFacts::default()
        };
        for a in &m.attributes {
            match a {
                LinkAttribute::IfName(n) => f.name = n.clone(),
                LinkAttribute::Controller(i) => f.master = Some(*i),
                LinkAttribute::IfAlias(s) if !s.is_empty() => f.alias = Some(s.clone()),
                LinkAttribute::LinkInfo(infos) => {
                    for i in infos {
                        if let LinkInfo::Kind(k) = i {
                            f.kind = Some(k.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        f
    }
}

/// Every interface of the calling thread's network namespace (`ip -d link
/// show`).
pub fn all() -> Result<Vec<LinkFacts>, Error> {
    let msgs = crate::netlink::query(RouteNetlinkMessage::GetLink(LinkMessage::default()), true)
        .map_err(|f| match f {
            crate::netlink::Failure::Refused(errno) => Error::Link {
                op: "list",
                name: "every".into(),
                errno,
            },
            crate::netlink::Failure::Socket(source) => Error::Socket {
                op: "list",
                object: "links".into(),
                source,
            },
        })?;
    Ok(msgs
        .iter()
        .filter_map(|m| match m {
            RouteNetlinkMessage::NewLink(l) => Some(LinkFacts::of(l)),
            _ => None,
        })
        .collect())
}

/// Interface `name` (`ip -d link show NAME`); `Ok(None)` if there is none.
pub fn facts(name: &str) -> Result<Option<LinkFacts>, Error> {
    Ok(all()?.into_iter().find(|l| l.name == name))
}

fn link_call(
    op: &'static str,
    name: &str,
    msg: RouteNetlinkMessage,
    flags: u16,
) -> Result<(), Error> {
    call(
        msg,
        flags,
        |errno| Error::Link {
            op,
            name: name.to_string(),
            errno,
        },
        |source| Error::Socket {
            op,
            object: format!("link {name}"),
            source,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::frame;

    #[test]
    fn a_veth_pair_is_one_exclusive_newlink_with_the_peer_nested() {
        let got = frame(add_veth_request("v0", "v1", None), CREATE | EXCL, 9);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // nlmsghdr: 88 bytes, RTM_NEWLINK (16), REQUEST|ACK|EXCL|CREATE, seq 9
            88, 0, 0, 0, 16, 0, 0x05, 0x06, 9, 0, 0, 0, 0, 0, 0, 0,
            // ifinfomsg: all zero (by name)
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            // IFLA_IFNAME "v0"
            7, 0, 3, 0, b'v', b'0', 0, 0,
            // IFLA_LINKINFO (18), 48 bytes
            48, 0, 18, 0,
            // IFLA_INFO_KIND "veth\0" (iproute2 sends it without the NUL; both are accepted)
            9, 0, 1, 0, b'v', b'e', b't', b'h', 0, 0, 0, 0,
            // IFLA_INFO_DATA (2) { VETH_INFO_PEER (1) { ifinfomsg, IFLA_IFNAME "v1" } }
            32, 0, 2, 0, 28, 0, 1, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            7, 0, 3, 0, b'v', b'1', 0, 0,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn the_peer_can_be_put_in_another_namespace() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let fd = std::os::fd::AsFd::as_fd(&f);
        let got = frame(add_veth_request("v0", "v1", Some(fd)), CREATE | EXCL, 9);
        // IFLA_NET_NS_FD (28) inside the peer's message.
        let raw = fd.as_raw_fd() as u32;
        let mut tail = vec![8, 0, 28, 0];
        tail.extend(raw.to_le_bytes());
        assert!(got.ends_with(&tail), "{got:?}");
        assert_eq!(got.len(), 96);
    }

    #[test]
    fn delete_names_the_link() {
        let got = frame(delete_request("v0"), 0, 3);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // RTM_DELLINK (17), REQUEST|ACK
            40, 0, 0, 0, 17, 0, 0x05, 0, 3, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            7, 0, 3, 0, b'v', b'0', 0, 0,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn set_changes_only_what_it_names() {
        // `ip link set v1 arp off up`: flags UP|NOARP, change 0x81.
        let change = LinkChange {
            up: Some(true),
            arp: Some(false),
            ..LinkChange::default()
        };
        let got = frame(set_request("v1", &change), 0, 5);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // RTM_SETLINK (19), REQUEST|ACK
            40, 0, 0, 0, 19, 0, 0x05, 0, 5, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0, 0, 0, 0x81, 0, 0, 0,
            7, 0, 3, 0, b'v', b'1', 0, 0,
        ];
        assert_eq!(got, want);

        let change = LinkChange {
            up: Some(false),
            arp: Some(true),
            mtu: Some(9000),
            address: Some([2, 0, 0, 0, 0, 1]),
            alias: None,
        };
        let got = frame(set_request("v1", &change), 0, 5);
        assert_eq!(
            &got[24..32],
            &[0, 0, 0, 0, 0x81, 0, 0, 0],
            "both flags cleared, both in the mask"
        );
        // IFLA_MTU (4) 9000, then IFLA_ADDRESS (1) with six bytes, padded.
        assert_eq!(&got[40..48], &[8, 0, 4, 0, 0x28, 0x23, 0, 0]);
        assert_eq!(&got[48..60], &[10, 0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(got.len(), 60);
    }

    #[test]
    fn an_alias_is_ifla_ifalias_as_ip_link_sends_it() {
        // `ip link set v1 alias "lagkit bond0"`: IFLA_IFALIAS (20), the
        // text with its NUL, padded to four bytes.
        let change = LinkChange {
            alias: Some("lagkit bond0".into()),
            ..LinkChange::default()
        };
        let got = frame(set_request("v1", &change), 0, 5);
        let mut want = vec![17, 0, 20, 0];
        want.extend_from_slice(b"lagkit bond0\0");
        want.extend_from_slice(&[0, 0, 0]);
        assert_eq!(&got[40..], &want[..]);
    }
}
