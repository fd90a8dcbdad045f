//! tshark is the judge of the PAgP format: frames emitted by `PagpRepr` are
//! written to a pcap and decoded with `tshark -O pagp`, which must flag
//! nothing as malformed or as an expert warning and must read back exactly
//! the fields we meant to send.
//!
//! Skips with a visible message when tshark is not installed, except under
//! CI (`CI` set), where a missing tshark is a failure.

use lagkit_wire::pagp::{Flags, FlushRepr, InfoRepr, LearnMethod, PortInfo, Tlv};
use lagkit_wire::{MacAddr, PagpRepr};
use std::process::Command;

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn frames() -> Vec<PagpRepr> {
    let port = |d: u8, learn, prio, ifindex| PortInfo {
        device_id: MacAddr([2, 0, 0, 0, 0, d]),
        learn,
        port_priority: prio,
        ifindex,
        group_capability: 0x0001_0001,
        group_ifindex: if d == 1 { 0x1001 } else { 0 },
    };
    let tlvs = vec![
        Tlv::DeviceName("lagkit-a".into()),
        Tlv::PortName("eth1".into()),
        Tlv::AgportMac(MacAddr([2, 0, 0, 0, 0, 0x11])),
    ];
    vec![
        // A desirable port detecting: fast hello, nothing heard yet.
        PagpRepr::Info(InfoRepr {
            flags: Flags(0),
            local: port(1, LearnMethod::AggregationPort, 128, 1),
            partner: PortInfo::default(),
            partner_count: 0,
            tlvs: tlvs.clone(),
        }),
        // An auto port up: slow hello, consistent, physical-port learner.
        PagpRepr::Info(InfoRepr {
            flags: Flags(Flags::SLOW_HELLO | Flags::AUTO | Flags::CONSISTENT),
            local: port(2, LearnMethod::PhysicalPort, 200, 7),
            partner: port(1, LearnMethod::AggregationPort, 128, 1),
            partner_count: 1,
            tlvs,
        }),
        PagpRepr::Flush(FlushRepr {
            flags: 0,
            local: MacAddr([2, 0, 0, 0, 0, 1]),
            partner: MacAddr([2, 0, 0, 0, 0, 2]),
            transaction_id: 0xcafe_f00d,
        }),
        PagpRepr::Flush(FlushRepr {
            flags: FlushRepr::RESPONSE,
            local: MacAddr([2, 0, 0, 0, 0, 2]),
            partner: MacAddr([2, 0, 0, 0, 0, 1]),
            transaction_id: 0xcafe_f00d,
        }),
    ]
}

fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let header = PcapHeader {
        datalink: pcap_file::DataLink::ETHERNET,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(path).unwrap(), header).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let at = std::time::Duration::from_secs(i as u64);
        w.write_packet(&PcapPacket::new(at, f.len() as u32, f))
            .unwrap();
    }
}

#[test]
fn tshark_decodes_every_pagp_frame_we_emit() {
    if !tshark_available() {
        if std::env::var_os("CI").is_some() {
            panic!("tshark is required in CI (.ci/run installs it)");
        }
        eprintln!("SKIPPED tshark_decodes_every_pagp_frame_we_emit: tshark is not installed (apt-get install tshark)");
        return;
    }
    let pdus = frames();
    let bytes: Vec<Vec<u8>> = pdus
        .iter()
        .map(|p| p.emit_frame(MacAddr([2, 0, 0, 0, 0, 0x11])).unwrap())
        .collect();
    let dir = std::env::temp_dir().join(format!("lagkit-pagp-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("pagp.pcap");
    write_pcap(&pcap, &bytes);
    let fields = [
        "frame.number",
        "_ws.malformed",
        "_ws.expert.severity",
        "pagp.version",
        "pagp.flags",
        "pagp.localdevid",
        "pagp.localearncap",
        "pagp.localportpri",
        "pagp.localsentportifindex",
        "pagp.localgroupcap",
        "pagp.localgroupifindex",
        "pagp.partnerdevid",
        "pagp.partnerlearncap",
        "pagp.partnerportpri",
        "pagp.partnersentportifindex",
        "pagp.partnercount",
        "pagp.numtlvs",
        "pagp.tlvdevname",
        "pagp.tlvportname",
        "pagp.tlvagportmac",
        "pagp.flushlocaldevid",
        "pagp.flushpartnerdevid",
        "pagp.transid",
    ];
    let mut cmd = Command::new("tshark");
    cmd.args([
        "-r",
        pcap.to_str().unwrap(),
        "-T",
        "fields",
        "-E",
        "separator=|",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    // The verbose decode, for the record when the test is run with --nocapture.
    let verbose = Command::new("tshark")
        .args(["-r", pcap.to_str().unwrap(), "-O", "pagp"])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verbose = String::from_utf8_lossy(&verbose.stdout).into_owned();
    println!("{verbose}");
    assert!(!verbose.contains("Malformed"), "{verbose}");
    assert!(verbose.contains("Port Aggregation Protocol"), "{verbose}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), pdus.len());
    for (line, pdu) in lines.iter().zip(&pdus) {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f[1], "", "tshark says frame {} is malformed: {line}", f[0]);
        assert_eq!(f[2], "", "tshark expert info on frame {}: {line}", f[0]);
        let hex = |v: u64, w: usize| format!("0x{v:0w$x}");
        match pdu {
            PagpRepr::Info(i) => {
                assert_eq!(f[3], "0x01", "{line}");
                assert_eq!(f[4], hex(i.flags.0.into(), 2), "{line}");
                assert_eq!(f[5], i.local.device_id.to_string());
                assert_eq!(f[6], hex(u8::from(i.local.learn).into(), 2));
                assert_eq!(f[7], i.local.port_priority.to_string());
                assert_eq!(f[8], i.local.ifindex.to_string());
                assert_eq!(f[9], hex(i.local.group_capability.into(), 8));
                assert_eq!(f[10], i.local.group_ifindex.to_string());
                assert_eq!(f[11], i.partner.device_id.to_string());
                assert_eq!(f[12], hex(u8::from(i.partner.learn).into(), 2));
                assert_eq!(f[13], i.partner.port_priority.to_string());
                assert_eq!(f[14], i.partner.ifindex.to_string());
                assert_eq!(f[15], i.partner_count.to_string());
                assert_eq!(f[16], i.tlvs.len().to_string());
                assert_eq!(f[17], i.device_name().unwrap());
                assert_eq!(f[18], i.port_name().unwrap());
                assert_eq!(f[19], i.agport_mac().unwrap().to_string());
            }
            PagpRepr::Flush(fl) => {
                assert_eq!(f[3], "0x02", "{line}");
                assert_eq!(f[20], fl.local.to_string(), "{line}");
                assert_eq!(f[21], fl.partner.to_string(), "{line}");
                assert_eq!(f[22], hex(fl.transaction_id.into(), 8), "{line}");
            }
        }
    }
}
