//! Helpers for the dataplane's root tests: a lagkit forwarder on one side of
//! a `lagkit_testnet::Lab` topology (the lab itself lives in lagkit-testnet).

#![allow(dead_code)]

use std::sync::Arc;

pub use lagkit_testnet::*;

use lagkit_dataplane::{
    netns, DistMap, Engine, EngineConfig, Offloads, PacketConfig, PacketSocket, SlowQueues, Tap,
    TapConfig,
};

/// A flow hash over IP addresses and TCP/UDP ports (a stand-in for
/// lagkit-hash in these tests).
pub fn flow_hash(frame: &[u8]) -> u64 {
    let be16 = |o: usize| {
        frame
            .get(o..o + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .unwrap_or(0)
    };
    let mut l3 = 14;
    let mut et = be16(12);
    if et == 0x8100 || et == 0x88a8 {
        et = be16(16);
        l3 = 18;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h = (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    };
    match et {
        0x0800 => {
            let ihl = usize::from(frame.get(l3).copied().unwrap_or(0) & 0xf) * 4;
            let proto = frame.get(l3 + 9).copied().unwrap_or(0);
            eat(frame.get(l3 + 12..l3 + 20).unwrap_or(&[]));
            if proto == 6 || proto == 17 {
                eat(frame.get(l3 + ihl..l3 + ihl + 4).unwrap_or(&[]));
            }
        }
        0x86dd => {
            let next = frame.get(l3 + 6).copied().unwrap_or(0);
            eat(frame.get(l3 + 8..l3 + 40).unwrap_or(&[]));
            if next == 6 || next == 17 {
                eat(frame.get(l3 + 40..l3 + 44).unwrap_or(&[]));
            }
        }
        _ => eat(frame.get(..12).unwrap_or(&[])),
    }
    h ^ (h >> 29)
}

/// Picks a usable member by [`flow_hash`].
pub fn flow_selector(frame: &[u8], map: &DistMap) -> Option<usize> {
    map.pick(flow_hash(frame))
}

/// How to build one bond side.
#[derive(Clone)]
pub struct SideOpts {
    /// The TAP's MAC.
    pub mac: [u8; 6],
    /// TAP MTU.
    pub mtu: u32,
    /// Address with prefix for the TAP, e.g. "10.77.0.1/24".
    pub addr: String,
    /// recvmmsg/sendmmsg batching on members.
    pub batched: bool,
    /// Engine batch size.
    pub batch: usize,
    /// Offloads the TAP advertises.
    pub offloads: Offloads,
}

impl SideOpts {
    pub fn new(last_mac_byte: u8, addr: &str) -> SideOpts {
        SideOpts {
            mac: [0x02, 0x6c, 0x6b, 0, 0, last_mac_byte],
            mtu: 1500,
            addr: addr.into(),
            batched: true,
            batch: 32,
            offloads: Offloads::DEFAULT,
        }
    }
}

/// A TAP and its members in one namespace, forwarded by an engine.
pub struct BondSide {
    pub ns: String,
    pub engine: Engine<DistMap>,
    pub slow: SlowQueues,
    pub tap: Arc<Tap>,
    pub members: Vec<Arc<PacketSocket>>,
}

/// Opens a TAP `tap` and the `members` inside `ns`, gives the TAP its
/// address, and starts an engine with every member usable.
pub fn bond_side(lab: &Lab, ns: &str, tap: &str, members: &[&str], o: &SideOpts) -> BondSide {
    let (tapdev, socks) = netns::run_in(ns, || {
        let t = Tap::open(&TapConfig {
            offloads: o.offloads,
            ..TapConfig::new(tap)
        })
        .expect("open tap");
        t.link().set_mac(o.mac).expect("set mac");
        t.link().set_mtu(o.mtu).expect("set mtu");
        t.link().set_up(true).expect("set up");
        let socks: Vec<PacketSocket> = members
            .iter()
            .map(|m| {
                let mut c = PacketConfig::new(m);
                c.batched = o.batched;
                PacketSocket::open(&c).expect("open member")
            })
            .collect();
        (t, socks)
    })
    .expect("enter namespace");
    if !o.addr.is_empty() {
        lab.sh(&["ip", "-n", ns, "addr", "add", &o.addr, "dev", tap]);
    }
    let tap = Arc::new(tapdev);
    let members: Vec<Arc<PacketSocket>> = socks.into_iter().map(Arc::new).collect();
    let devs: Vec<Arc<dyn lagkit_dataplane::Device>> = members
        .iter()
        .map(|m| m.clone() as Arc<dyn lagkit_dataplane::Device>)
        .collect();
    let cfg = EngineConfig {
        batch: o.batch,
        ..EngineConfig::default()
    };
    let (engine, slow) = Engine::start(
        tap.clone(),
        devs,
        DistMap::new(0..members.len(), 1),
        flow_selector,
        cfg,
    )
    .expect("start engine");
    BondSide {
        ns: ns.to_owned(),
        engine,
        slow,
        tap,
        members,
    }
}
