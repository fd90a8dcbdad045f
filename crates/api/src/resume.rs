//! What a daemon records for the next one to resume from: a bond's or a
//! switch's protocol partners, so that a daemon adopting a data path its
//! predecessor left forwarding (killed, or handed over on SIGUSR2 or a
//! service restart) carries on where it stopped, without a transition
//! the partner sees.

/// An LACP partner as a port's Partner_Oper variables had it: what a
/// daemon records of each aggregated port for the one that adopts its data
/// path, and what the next one resumes from.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct PartnerRecord {
    /// System priority.
    pub system_priority: u16,
    /// System MAC.
    pub system_mac: [u8; 6],
    /// Key.
    pub key: u16,
    /// Port priority.
    pub port_priority: u16,
    /// Port number.
    pub port: u16,
    /// State octet.
    pub state: u8,
}

impl PartnerRecord {
    /// The record of `p`.
    pub fn of(p: &lagkit_wire::PortInfo) -> PartnerRecord {
        PartnerRecord {
            system_priority: p.system.priority,
            system_mac: p.system.mac.0,
            key: p.key,
            port_priority: p.port_priority,
            port: p.port,
            state: p.state.0,
        }
    }

    /// The partner information it records.
    pub fn info(&self) -> lagkit_wire::PortInfo {
        lagkit_wire::PortInfo {
            system: lagkit_wire::SystemId::new(
                self.system_priority,
                lagkit_wire::MacAddr(self.system_mac),
            ),
            key: self.key,
            port_priority: self.port_priority,
            port: self.port,
            state: lagkit_wire::PortState(self.state),
        }
    }
}

/// A PAgP partner as a channel port last heard it: its Information PDU,
/// as sent (without the Ethernet and SNAP headers). What a daemon records
/// of each port in a PAgP channel, and what the next one resumes from.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct PagpRecord {
    /// The PDU's bytes.
    pub pdu: Vec<u8>,
}

impl PagpRecord {
    /// The record of `info` (`None`: a PDU that cannot be written, which
    /// a parsed one always can).
    pub fn of(info: &lagkit_wire::pagp::InfoRepr) -> Option<PagpRecord> {
        let repr = lagkit_wire::PagpRepr::Info(info.clone());
        let mut pdu = vec![0; repr.buffer_len()];
        repr.emit(&mut pdu).ok()?;
        Some(PagpRecord { pdu })
    }

    /// The PDU it records (`None`: not an Information PDU, as a state file
    /// edited by hand may hold).
    pub fn info(&self) -> Option<lagkit_wire::pagp::InfoRepr> {
        match lagkit_wire::PagpRepr::parse(&self.pdu) {
            Ok(lagkit_wire::PagpRepr::Info(i)) => Some(i),
            _ => None,
        }
    }
}

/// What one port (a bond's member, a switch's port) was bundled by, for
/// the next daemon to resume from: its LACP partner or its PAgP partner.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct PortRecord {
    /// The LACP partner it was collecting and distributing with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lacp: Option<PartnerRecord>,
    /// The PAgP partner of a port in its channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagp: Option<PagpRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_wire::pagp::{Flags, InfoRepr, PortInfo, Tlv};
    use lagkit_wire::MacAddr;

    /// A PAgP record is the PDU's bytes, read back to the same PDU;
    /// anything else reads as no record.
    #[test]
    fn a_pagp_record_is_the_partners_pdu() {
        let info = InfoRepr {
            flags: Flags(0).with(Flags::CONSISTENT, true),
            local: PortInfo {
                device_id: MacAddr([0, 0x1b, 0x2c, 0, 0, 1]),
                ifindex: 3,
                group_capability: 0x10001,
                group_ifindex: 40,
                ..PortInfo::default()
            },
            partner: PortInfo::default(),
            partner_count: 1,
            tlvs: vec![Tlv::DeviceName("sw1".into())],
        };
        let r = PagpRecord::of(&info).unwrap();
        // Version 1 (Information), flags: consistent.
        assert_eq!(&r.pdu[..2], &[1, 0x04]);
        assert_eq!(r.info(), Some(info));
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<PagpRecord>(&json).unwrap(), r);
        assert_eq!(PagpRecord { pdu: vec![1, 9, 0] }.info(), None);
        assert_eq!(PagpRecord::default().info(), None);
    }
}
