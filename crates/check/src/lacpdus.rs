//! What the ends actually say: LACPDUs from a capture (pcap or pcapng,
//! taken on either end or on the wire), checked like the configurations.
//!
//! A configuration tells what an end should do; its LACPDUs tell what it
//! does. Each port's last LACPDU in the capture is its current word
//! (activity, timeout, aggregation, synchronization, collecting,
//! distributing, defaulted, expired; its key; the partner it believes it
//! has), and the ports of one system together tell whether they can form
//! one aggregate: one key, one partner.

use crate::facts::ReadError;
use crate::{Finding, Loc, Severity};
use lagkit_wire::{LacpduRepr, PortInfo, SlowPdu, SystemId};
use pcap_file::pcapng::Block;
use pcap_file::DataLink;
use std::collections::BTreeMap;
use std::io::Read;

/// One port's word: its last LACPDU, and where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    /// The LACPDU.
    pub pdu: LacpduRepr,
    /// Its packet number in the capture (1-based).
    pub packet: u64,
    /// How many LACPDUs this port sent in the capture.
    pub count: u64,
}

fn sys(s: SystemId) -> String {
    format!("{},{}", s.priority, s.mac)
}

/// Reads every LACPDU of a capture; the last word of each (system, port).
pub fn read_capture(file: &str, r: impl Read) -> Result<Vec<Said>, ReadError> {
    let bad = |packet: u64, e: pcap_file::PcapError| ReadError::Bad {
        file: file.into(),
        line: packet as usize,
        why: format!("packet {packet}: {e} (the capture is damaged or cut short here)"),
    };
    let mut r = std::io::BufReader::new(r);
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).map_err(|_| ReadError::Dialect {
        file: file.into(),
        why: "too short for a capture".into(),
    })?;
    let data = std::io::Cursor::new(magic.to_vec()).chain(r);
    let mut said: BTreeMap<(String, u16), Said> = BTreeMap::new();
    let mut n = 0u64;
    let mut take = |frame: &[u8], n: u64| {
        if let Ok(SlowPdu::Lacp(pdu)) = SlowPdu::parse(frame) {
            let k = (sys(pdu.actor.system), pdu.actor.port);
            let count = said.get(&k).map_or(0, |s| s.count) + 1;
            said.insert(
                k,
                Said {
                    pdu,
                    packet: n,
                    count,
                },
            );
        }
    };
    match magic {
        [0x0a, 0x0d, 0x0d, 0x0a] => {
            let mut rd = pcap_file::pcapng::PcapNgReader::new(data).map_err(|e| bad(0, e))?;
            let mut links = Vec::new();
            while let Some(b) = rd.next_block() {
                match b.map_err(|e| bad(n + 1, e))? {
                    Block::InterfaceDescription(i) => links.push(i.linktype),
                    Block::EnhancedPacket(p) => {
                        n += 1;
                        let id = usize::try_from(p.interface_id).unwrap_or(usize::MAX);
                        if links.get(id) == Some(&DataLink::ETHERNET) {
                            take(&p.data, n);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {
            let mut rd =
                pcap_file::pcap::PcapReader::new(data).map_err(|_| ReadError::Dialect {
                    file: file.into(),
                    why: "not a pcap or pcapng capture".into(),
                })?;
            let ethernet = rd.header().datalink == DataLink::ETHERNET;
            while let Some(p) = rd.next_packet() {
                n += 1;
                let p = p.map_err(|e| bad(n, e))?;
                if ethernet {
                    take(&p.data, n);
                }
            }
        }
    }
    Ok(said.into_values().collect())
}

fn finding(
    file: &str,
    s: &Said,
    severity: Severity,
    code: &'static str,
    reason: String,
    fix: &str,
) -> Finding {
    Finding {
        severity,
        code,
        loc: Loc {
            file: format!("{file} packet"),
            line: Some(s.packet as usize),
        },
        reason,
        fix: fix.to_string(),
    }
}

fn port(p: &PortInfo) -> String {
    format!("port {} of system {}", p.port, sys(p.system))
}

/// The findings of a capture's LACPDUs.
pub fn check(file: &str, said: &[Said]) -> Vec<Finding> {
    let mut out = Vec::new();
    if said.is_empty() {
        out.push(Finding {
            severity: Severity::Error,
            code: "lacpdu-none",
            loc: Loc { file: file.into(), line: None },
            reason: "no LACPDU in the capture: neither end speaks LACP on this link (mode on, a static bond, or LACP turned off)".into(),
            fix: "capture longer than 30 s (the slow rate), or configure LACP on both ends".into(),
        });
        return out;
    }
    let mut systems: BTreeMap<String, Vec<&Said>> = BTreeMap::new();
    for s in said {
        systems.entry(sys(s.pdu.actor.system)).or_default().push(s);
    }
    for (id, ports) in &systems {
        let keys: Vec<u16> = {
            let mut k: Vec<u16> = ports.iter().map(|s| s.pdu.actor.key).collect();
            k.sort_unstable();
            k.dedup();
            k
        };
        if keys.len() > 1 {
            out.push(finding(file, ports[0], Severity::Warning, "lacpdu-keys-differ",
                format!("system {id}'s ports send keys {keys:?}: ports with different keys form separate aggregates"),
                "give the ports of one channel one key (one channel-group, one bond)"));
        }
        let partners: Vec<String> = {
            let mut p: Vec<String> = ports
                .iter()
                .filter(|s| !s.pdu.actor.state.defaulted() && s.pdu.partner.system.mac.0 != [0; 6])
                .map(|s| sys(s.pdu.partner.system))
                .collect();
            p.sort();
            p.dedup();
            p
        };
        if partners.len() > 1 {
            out.push(finding(file, ports[0], Severity::Error, "lacpdu-partners-differ",
                format!("system {id}'s ports face different partner systems ({}): the links end on devices that do not present one LACP system (two switches without a stack or MLAG), so they cannot aggregate", partners.join(", ")),
                "cable every link of the channel to one switch (or one stack/MLAG pair)"));
        }
        for s in ports {
            let a = &s.pdu.actor;
            if !a.state.aggregatable() {
                out.push(finding(file, s, Severity::Warning, "lacpdu-individual",
                    format!("{} says Individual (aggregation bit off): it never joins an aggregate", port(a)),
                    "turn aggregation on for this port (on a Linux bond: all members are aggregatable; check the peer)"));
            }
            if a.state.defaulted() {
                out.push(finding(file, s, Severity::Warning, "lacpdu-defaulted",
                    format!("{} uses defaulted partner information: no LACPDU from its partner reached it", port(a)),
                    "check that the far end runs LACP (mode active) on this link and that the link passes frames both ways"));
            } else if a.state.expired() {
                out.push(finding(
                    file,
                    s,
                    Severity::Warning,
                    "lacpdu-expired",
                    format!(
                        "{} says its partner's information expired: the partner stopped answering",
                        port(a)
                    ),
                    "check the far end and the link (a one-way failure looks like this)",
                ));
            } else if a.state.aggregatable()
                && !(a.state.in_sync() && a.state.collecting() && a.state.distributing())
            {
                out.push(finding(file, s, Severity::Info, "lacpdu-not-distributing",
                    format!("{}'s last LACPDU (after {} in the capture) says it is not yet collecting and distributing (state {:#04x})", port(a), s.count, a.state.0),
                    "if this persists, compare both ends' keys and system IDs; a capture taken during formation shows this briefly"));
            }
        }
    }
    // The two ends of the wire, when both are in the capture.
    let heads: Vec<&Said> = systems.values().map(|p| p[0]).collect();
    if heads.len() == 2 {
        let (a, b) = (&heads[0].pdu.actor, &heads[1].pdu.actor);
        if !a.state.active() && !b.state.active() {
            out.push(finding(
                file,
                heads[0],
                Severity::Error,
                "lacpdu-passive-both",
                format!(
                    "both systems ({} and {}) are LACP passive",
                    sys(a.system),
                    sys(b.system)
                ),
                "make one end active",
            ));
        }
        if a.state.short_timeout() != b.state.short_timeout() {
            let rate = |p: &PortInfo| {
                if p.state.short_timeout() {
                    "fast"
                } else {
                    "slow"
                }
            };
            out.push(finding(file, heads[0], Severity::Warning, "lacpdu-rate-mismatch",
                format!("system {} asks for the {} rate, system {} for the {} rate: they detect failures in 3 s and 90 s", sys(a.system), rate(a), sys(b.system), rate(b)),
                "configure the same LACP rate on both ends"));
        }
    } else if heads.len() == 1 && !heads[0].pdu.actor.state.active() {
        out.push(finding(
            file,
            heads[0],
            Severity::Warning,
            "lacpdu-passive-alone",
            format!(
                "only system {} speaks, and it is passive: a passive port answers but never starts",
                sys(heads[0].pdu.actor.system)
            ),
            "make the other end active, or this one",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_wire::{MacAddr, PortState};

    fn pdu(sys_mac: u8, port: u16, key: u16, state: u8, partner_mac: u8) -> Vec<u8> {
        let info = |m: u8, p: u16, k: u16, s: u8| PortInfo {
            system: SystemId::new(32768, MacAddr([2, 0, 0, 0, 0, m])),
            key: k,
            port_priority: 255,
            port: p,
            state: PortState(s),
        };
        SlowPdu::Lacp(LacpduRepr {
            version: 1,
            actor: info(sys_mac, port, key, state),
            partner: info(partner_mac, port, key, 0x3d),
            collector_max_delay: 0,
        })
        .emit_frame(MacAddr([2, 0, 0, 0, 1, sys_mac]))
    }

    fn capture(frames: &[Vec<u8>]) -> Vec<u8> {
        use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
        let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
        for f in frames {
            w.write_packet(&PcapPacket::new(
                std::time::Duration::ZERO,
                f.len() as u32,
                f,
            ))
            .unwrap();
        }
        w.into_writer()
    }

    fn codes(frames: &[Vec<u8>]) -> Vec<&'static str> {
        let said = read_capture("c.pcap", &capture(frames)[..]).unwrap();
        check("c.pcap", &said).iter().map(|f| f.code).collect()
    }

    const UP: u8 = 0x3f; // active, short, aggregatable, sync, collecting, distributing

    #[test]
    fn a_healthy_pair_says_nothing() {
        assert!(codes(&[
            pdu(1, 1, 1, UP, 2),
            pdu(2, 1, 1, UP, 1),
            pdu(1, 2, 1, UP, 2),
            pdu(2, 2, 1, UP, 1)
        ])
        .is_empty());
    }

    #[test]
    fn what_goes_wrong_on_the_wire() {
        // Two switches without MLAG: system 1's ports see partners 2 and 3.
        assert!(
            codes(&[pdu(1, 1, 1, UP, 2), pdu(1, 2, 1, UP, 3)]).contains(&"lacpdu-partners-differ")
        );
        assert!(codes(&[pdu(1, 1, 1, UP, 2), pdu(1, 2, 2, UP, 2)]).contains(&"lacpdu-keys-differ"));
        assert!(
            codes(&[pdu(1, 1, 1, 0x3c, 2), pdu(2, 1, 1, 0x3c, 1)]).contains(&"lacpdu-passive-both")
        );
        assert!(codes(&[pdu(1, 1, 1, UP, 2), pdu(2, 1, 1, UP & !0x02, 1)])
            .contains(&"lacpdu-rate-mismatch"));
        assert!(codes(&[pdu(1, 1, 1, 0x01 | 0x04 | 0x40, 0)]).contains(&"lacpdu-defaulted"));
        assert!(codes(&[pdu(1, 1, 1, 0x01 | 0x02, 2)]).contains(&"lacpdu-individual"));
        assert_eq!(codes(&[]), vec!["lacpdu-none"]);
    }

    #[test]
    fn damaged_captures_are_errors() {
        let c = capture(&[pdu(1, 1, 1, UP, 2), pdu(2, 1, 1, UP, 1)]);
        let e = read_capture("c.pcap", &c[..c.len() - 7]).unwrap_err();
        assert!(e.to_string().contains("packet 2"), "{e}");
        assert!(read_capture("c.pcap", &b"ab"[..]).is_err());
        assert!(read_capture("c.pcap", &b"not a capture at all"[..]).is_err());
    }
}
