//! tshark is the judge of our wire formats: every frame the LACP core emits
//! in a busy scenario (formation, cut, restore, black hole, expiry, default,
//! marker request and response, independent control, passive ends) is
//! written to a pcap and decoded by tshark, which must flag nothing as
//! malformed or as an expert warning, and must read back exactly the fields
//! we meant to send.
//!
//! Skips with a visible message when tshark is not installed, except under
//! CI (`CI` set), where a missing tshark is a failure.

use lagkit_proto::lacp::*;
use lagkit_proto::Instant;
use lagkit_sim::*;
use lagkit_wire::{MarkerKind, MarkerRepr, SlowPdu};

mod common;

fn scenario() -> Vec<Captured> {
    let mut a = SystemConfig::new("A", mac(1, 0));
    a.mux_control = MuxControl::Independent;
    a.collector_max_delay = 7;
    let b = SystemConfig::new("B", mac(2, 0));
    let mut sim = Sim::pair(
        a,
        b,
        3,
        LinkSpec::default(),
        |n| PortConfig {
            port_priority: 100 + n,
            key: 0x1234,
            ..PortConfig::new(&format!("a{n}"), n, mac(1, n))
        },
        |n| PortConfig {
            activity: Activity::Passive,
            rate: Rate::Slow,
            ..PortConfig::new(&format!("b{n}"), n, mac(2, n))
        },
        9,
    );
    sim.enable_capture();
    sim.schedule(Instant::from_secs(10), 1, Fault::Cut);
    sim.schedule(Instant::from_secs(15), 1, Fault::Restore);
    sim.schedule(Instant::from_secs(20), 2, Fault::Blackhole);
    sim.schedule(Instant::from_secs(40), 2, Fault::Clear);
    sim.run_until(Instant::from_secs(5));
    let req = MarkerRepr {
        kind: MarkerKind::Information,
        requester_port: 1,
        requester_system: mac(2, 0),
        transaction_id: 0xcafe_f00d,
    };
    sim.inject(0, PortId(0), &SlowPdu::Marker(req).emit_frame(mac(2, 1)));
    sim.run_until(Instant::from_secs(60));
    let mut frames = sim.captured().to_vec();
    // The request itself, as another implementation would send it.
    frames.push(Captured {
        at: sim.now(),
        from: End {
            system: 1,
            port: PortId(0),
        },
        link: 0,
        lost: false,
        frame: SlowPdu::Marker(req).emit_frame(mac(2, 1)),
    });
    frames
}

#[test]
fn tshark_decodes_every_frame_we_emit() {
    if !common::tshark_available("tshark_decodes_every_frame_we_emit") {
        return;
    }
    let frames = scenario();
    let states: std::collections::HashSet<u8> = frames
        .iter()
        .filter_map(|c| match SlowPdu::parse(&c.frame) {
            Ok(SlowPdu::Lacp(p)) => Some(p.actor.state.0),
            _ => None,
        })
        .collect();
    // The scenario must exercise more than the steady state.
    assert!(states.len() >= 5, "actor states seen: {states:x?}");
    let rows = common::tshark_fields(
        &frames,
        &[
            "frame.number",
            "_ws.malformed",
            "_ws.expert.severity",
            "lacp.actor.sys_priority",
            "lacp.actor.sysid",
            "lacp.actor.key",
            "lacp.actor.port_priority",
            "lacp.actor.port",
            "lacp.actor.state",
            "lacp.partner.sysid",
            "lacp.partner.key",
            "lacp.partner.port",
            "lacp.partner.state",
            "lacp.collector.max_delay",
            "marker.tlvType",
            "marker.requesterPort",
            "marker.requesterSystem",
            "marker.requesterTransId",
        ],
    );
    assert_eq!(rows.len(), frames.len());
    let mut markers = 0;
    for (f, cap) in rows.iter().zip(&frames) {
        let line = f.join("|");
        assert_eq!(f[1], "", "tshark says frame {} is malformed: {line}", f[0]);
        assert_eq!(f[2], "", "tshark expert info on frame {}: {line}", f[0]);
        let hex = |v: u64| format!("0x{v:02x}");
        match SlowPdu::parse(&cap.frame).unwrap() {
            SlowPdu::Lacp(p) => {
                assert_eq!(f[3], p.actor.system.priority.to_string());
                assert_eq!(f[4], p.actor.system.mac.to_string());
                assert_eq!(f[5], p.actor.key.to_string());
                assert_eq!(f[6], p.actor.port_priority.to_string());
                assert_eq!(f[7], p.actor.port.to_string());
                assert_eq!(f[8], hex(p.actor.state.0.into()));
                assert_eq!(f[9], p.partner.system.mac.to_string());
                assert_eq!(f[10], p.partner.key.to_string());
                assert_eq!(f[11], p.partner.port.to_string());
                assert_eq!(f[12], hex(p.partner.state.0.into()));
                assert_eq!(f[13], p.collector_max_delay.to_string());
            }
            SlowPdu::Marker(m) => {
                markers += 1;
                // The TLV types listed: this one, then the Terminator (0).
                let t = if m.kind == MarkerKind::Information {
                    "0x01,0x00"
                } else {
                    "0x02,0x00"
                };
                assert_eq!(f[14], t, "{line}");
                assert_eq!(f[15], m.requester_port.to_string());
                assert_eq!(f[16], m.requester_system.to_string());
                assert_eq!(f[17], m.transaction_id.to_string());
            }
        }
    }
    assert_eq!(markers, 2, "a request and its response");
}
