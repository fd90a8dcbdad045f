#![forbid(unsafe_code)]
//! A clsact qdisc and a filter under it that drops every frame: what
//! `tc qdisc add dev D clsact` and `tc filter add dev D ingress pref P
//! protocol all bpf da bytecode "1,6 0 0 2,"` install.
//!
//! The filter is `cls_bpf` with a classic BPF program of one instruction,
//! `ret #2` (TC_ACT_SHOT), in direct-action mode: the verdict is the
//! program's return value, so every frame of every protocol is dropped at
//! the hook. It is the same filter tc(8) made, attribute for attribute, so
//! `tc filter show` reads it as before and one made by an older lagkit is
//! removed the same way (by its preference).

use netlink_packet_core::DefaultNla;
use netlink_packet_route::tc::{
    TcAttribute, TcBpfFlags, TcFilterBpfOption, TcHandle, TcMessage, TcOption,
};
use netlink_packet_route::RouteNetlinkMessage;
use nix::errno::Errno;

use crate::netlink::{call, CREATE, EXCL};
use crate::Error;

/// Which clsact hook a filter sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Frames the interface receives.
    Ingress,
    /// Frames the interface sends.
    Egress,
}

impl Direction {
    fn parent(self) -> TcHandle {
        TcHandle {
            major: TcHandle::CLSACT.major,
            minor: match self {
                Direction::Ingress => TcHandle::MIN_INGRESS,
                Direction::Egress => TcHandle::MIN_EGRESS,
            },
        }
    }
}

/// `ETH_P_ALL`: the filter sees every protocol.
const ETH_P_ALL: u16 = 0x0003;
/// `TCA_BPF_OPS_LEN`: the number of classic BPF instructions.
const TCA_BPF_OPS_LEN: u16 = 4;
/// `TCA_BPF_OPS`: the instructions (`struct sock_filter`s).
const TCA_BPF_OPS: u16 = 5;
/// `ret #2`: BPF_RET|BPF_K (0x06), jt 0, jf 0, k = TC_ACT_SHOT (2).
const DROP_PROGRAM: [u8; 8] = [0x06, 0, 0, 0, 2, 0, 0, 0];

fn on(ifindex: u32) -> TcMessage {
    let mut m = TcMessage::default();
    // An ifindex fits in an i32: the kernel's are positive ints.
    m.header.index = ifindex as i32;
    m
}

fn clsact(ifindex: u32) -> TcMessage {
    let mut m = on(ifindex);
    m.header.handle = TcHandle {
        major: TcHandle::CLSACT.major,
        minor: 0,
    };
    m.header.parent = TcHandle::CLSACT;
    m.attributes.push(TcAttribute::Kind("clsact".into()));
    m
}

/// The RTM_NEWQDISC request for a clsact qdisc on `ifindex`.
pub fn add_clsact_request(ifindex: u32) -> RouteNetlinkMessage {
    RouteNetlinkMessage::NewQueueDiscipline(clsact(ifindex))
}

/// The RTM_DELQDISC request for the clsact qdisc on `ifindex`.
pub fn delete_clsact_request(ifindex: u32) -> RouteNetlinkMessage {
    RouteNetlinkMessage::DelQueueDiscipline(clsact(ifindex))
}

/// The RTM_NEWTFILTER request for the drop-everything filter at
/// preference `pref` on `ifindex`'s `direction` hook.
pub fn add_drop_filter_request(
    ifindex: u32,
    direction: Direction,
    pref: u16,
) -> RouteNetlinkMessage {
    let mut m = on(ifindex);
    m.header.parent = direction.parent();
    // tcm_info: the preference above, the protocol (network order) below.
    m.header.info = (u32::from(pref) << 16) | u32::from(ETH_P_ALL.to_be());
    m.attributes.push(TcAttribute::Kind("bpf".into()));
    m.attributes.push(TcAttribute::Options(vec![
        TcOption::Bpf(TcFilterBpfOption::Other(DefaultNla::new(
            TCA_BPF_OPS_LEN,
            1u16.to_ne_bytes().to_vec(),
        ))),
        TcOption::Bpf(TcFilterBpfOption::Other(DefaultNla::new(
            TCA_BPF_OPS,
            DROP_PROGRAM.to_vec(),
        ))),
        TcOption::Bpf(TcFilterBpfOption::Flags(TcBpfFlags::DirectAction)),
    ]));
    RouteNetlinkMessage::NewTrafficFilter(m)
}

/// The RTM_DELTFILTER request for every filter at preference `pref` on
/// `ifindex`'s `direction` hook, of any protocol and kind.
pub fn delete_filter_request(ifindex: u32, direction: Direction, pref: u16) -> RouteNetlinkMessage {
    let mut m = on(ifindex);
    m.header.parent = direction.parent();
    m.header.info = u32::from(pref) << 16;
    RouteNetlinkMessage::DelTrafficFilter(m)
}

fn tc_call(
    op: &'static str,
    dev: &str,
    msg: impl FnOnce(u32) -> RouteNetlinkMessage,
    flags: u16,
) -> Result<(), Error> {
    let refused = |errno| Error::Tc {
        op,
        dev: dev.to_string(),
        errno,
    };
    let ifindex = nix::net::if_::if_nametoindex(dev).map_err(|_| refused(Errno::ENODEV))?;
    call(msg(ifindex), flags, refused, |source| Error::Socket {
        op,
        object: format!("on {dev}"),
        source,
    })
}

/// `tc qdisc add dev DEV clsact`; EEXIST if `dev` has one.
pub fn add_clsact(dev: &str) -> Result<(), Error> {
    tc_call("add clsact qdisc", dev, add_clsact_request, CREATE | EXCL)
}

/// `tc qdisc del dev DEV clsact`, with every filter under it.
pub fn delete_clsact(dev: &str) -> Result<(), Error> {
    tc_call("delete clsact qdisc", dev, delete_clsact_request, 0)
}

/// Drops every frame on `dev`'s `direction` hook (under its clsact qdisc,
/// [`add_clsact`]) with a filter at preference `pref`; EEXIST if a filter
/// holds that preference with another kind or protocol.
pub fn add_drop_filter(dev: &str, direction: Direction, pref: u16) -> Result<(), Error> {
    tc_call(
        "add drop filter",
        dev,
        |i| add_drop_filter_request(i, direction, pref),
        CREATE | EXCL,
    )
}

/// `tc filter del dev DEV ingress|egress pref PREF`; ENOENT if there is
/// none.
pub fn delete_filter(dev: &str, direction: Direction, pref: u16) -> Result<(), Error> {
    tc_call(
        "delete filter",
        dev,
        |i| delete_filter_request(i, direction, pref),
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::frame;

    // The expected bytes are what strace shows tc(8) 6.1 send.

    #[test]
    fn clsact_qdisc_requests() {
        let got = frame(add_clsact_request(3), CREATE | EXCL, 8);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // nlmsghdr: 48 bytes, RTM_NEWQDISC (36), REQUEST|ACK|EXCL|CREATE, seq 8
            48, 0, 0, 0, 36, 0, 0x05, 0x06, 8, 0, 0, 0, 0, 0, 0, 0,
            // tcmsg: AF_UNSPEC + pad, ifindex 3, handle ffff:0, parent ffff:fff1, info 0
            0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0xff, 0xff, 0xf1, 0xff, 0xff, 0xff, 0, 0, 0, 0,
            // TCA_KIND (1) "clsact"
            11, 0, 1, 0, b'c', b'l', b's', b'a', b'c', b't', 0, 0,
        ];
        assert_eq!(got, want);
        let del = frame(delete_clsact_request(3), 0, 8);
        assert_eq!(&del[4..8], &[37, 0, 0x05, 0], "RTM_DELQDISC, REQUEST|ACK");
        assert_eq!(del[16..], want[16..]);
    }

    #[test]
    fn the_drop_filter_is_cls_bpf_ret_2_in_direct_action() {
        let got = frame(
            add_drop_filter_request(3, Direction::Ingress, 49_411),
            CREATE | EXCL,
            8,
        );
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // nlmsghdr: 76 bytes, RTM_NEWTFILTER (44), REQUEST|ACK|EXCL|CREATE
            76, 0, 0, 0, 44, 0, 0x05, 0x06, 8, 0, 0, 0, 0, 0, 0, 0,
            // tcmsg: ifindex 3, handle 0, parent ffff:fff2 (ingress),
            // info 0xc1030300 (pref 49411, protocol ETH_P_ALL in network order)
            0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0xf2, 0xff, 0xff, 0xff, 0x00, 0x03, 0x03, 0xc1,
            // TCA_KIND "bpf"
            8, 0, 1, 0, b'b', b'p', b'f', 0,
            // TCA_OPTIONS (2): OPS_LEN 1, OPS { 0x06, 0, 0, k=2 }, FLAGS direct-action
            32, 0, 2, 0,
            6, 0, 4, 0, 1, 0, 0, 0,
            12, 0, 5, 0, 6, 0, 0, 0, 2, 0, 0, 0,
            8, 0, 8, 0, 1, 0, 0, 0,
        ];
        assert_eq!(got, want);
        let egress = frame(add_drop_filter_request(3, Direction::Egress, 49_411), 0, 8);
        assert_eq!(
            &egress[28..32],
            &[0xf3, 0xff, 0xff, 0xff],
            "parent ffff:fff3"
        );
    }

    #[test]
    fn deleting_a_filter_names_only_its_preference() {
        let got = frame(delete_filter_request(3, Direction::Ingress, 49_411), 0, 8);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // RTM_DELTFILTER (45), REQUEST|ACK
            36, 0, 0, 0, 45, 0, 0x05, 0, 8, 0, 0, 0, 0, 0, 0, 0,
            // info 0xc1030000: pref 49411, any protocol
            0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0xf2, 0xff, 0xff, 0xff, 0, 0, 0x03, 0xc1,
        ];
        assert_eq!(got, want);
    }
}
