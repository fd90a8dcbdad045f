//! The switch's control protocol: one JSON [`Request`] per line from
//! `lagkit switch show ...` and `lagkit switch test ...`, one JSON
//! [`Response`] per line back, over the same server as the bond's
//! ([`crate::control`]). Every answer carries Cisco's text and the same
//! facts as JSON, so `--json` never parses text; the facts other programs
//! read (the lab: channels, the MAC table's moves, port counters) have
//! their types here, written by the switch and read by them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a client asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case")]
pub enum Request {
    /// `show etherchannel summary`.
    EtherchannelSummary,
    /// `show etherchannel load-balance`.
    EtherchannelLoadBalance,
    /// `show mac address-table`.
    MacAddressTable,
    /// `show interfaces counters`.
    InterfacesCounters,
    /// `show etherchannel [N] detail`.
    EtherchannelDetail {
        /// One channel, or every one.
        channel: Option<u32>,
    },
    /// `show lacp neighbor`.
    LacpNeighbor,
    /// `show pagp neighbor`.
    PagpNeighbor,
    /// `show etherchannel load-balancing` (the IOS-XE layout).
    EtherchannelLoadBalancing,
    /// `show lacp neighbor detail`.
    LacpNeighborDetail,
    /// `show lacp sys-id`.
    LacpSysId,
    /// `show lacp counters`.
    LacpCounters,
    /// `show lacp internal`.
    LacpInternal,
    /// `show pagp counters`.
    PagpCounters,
    /// `show pagp internal`.
    PagpInternal,
    /// `show interfaces status`.
    InterfacesStatus,
    /// `show running-config`.
    RunningConfig,
    /// `show storm-control`.
    StormControl,
    /// `show etherchannel protocol`.
    EtherchannelProtocol,
    /// `show platform forwarding`: which engine forwards, and why.
    PlatformForwarding,
    /// `show etherchannel N port-channel`.
    EtherchannelPortChannel {
        /// The channel group.
        channel: u32,
    },
    /// `test etherchannel load-balance interface port-channel N KIND SRC DST`.
    TestLoadBalance {
        /// The port-channel number.
        channel: u32,
        /// `ip`, `mac` or `port`.
        kind: String,
        /// Source address (IP, MAC, or IP:PORT).
        src: String,
        /// Destination address.
        dst: String,
    },
    /// `lagkit capture --switch`: answered [`Response::Capture`], then a
    /// stream of the frames the switch sends and handles (see
    /// [`crate::capture`]).
    Capture(crate::capture::CaptureRequest),
}

/// The switch's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Response {
    /// Cisco's text and the same facts as JSON.
    Show {
        /// As IOS prints it.
        text: String,
        /// The facts, for `--json` (for `etherchannel summary`, `mac
        /// address-table` and `interfaces counters`: an
        /// [`EtherchannelSummary`], a [`MacTable`], an
        /// [`InterfacesCounters`]).
        json: serde_json::Value,
    },
    /// A capture started; frame lines follow.
    Capture(crate::capture::CaptureStart),
    /// The request could not be answered.
    Error(String),
}

impl crate::control::Guarded for Request {
    /// Capturing frames and reading the configuration need privilege (as
    /// IOS keeps `show running-config` at level 15); the other `show`
    /// commands are open to every local user.
    fn needs_admin(&self) -> bool {
        matches!(self, Request::Capture(_) | Request::RunningConfig)
    }
}

impl crate::control::Answer for Response {
    fn error(why: String) -> Response {
        Response::Error(why)
    }
}

/// `show platform forwarding`'s facts: who moves the switch's data frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forwarding {
    /// The switch's name.
    pub switch: String,
    /// The engine that forwards.
    pub engine: crate::status::EngineKind,
    /// Why that one (`engine = bpf`, or what `auto` found).
    pub why: String,
    /// Under the BPF engine: the ports its program runs on.
    pub kernel_ports: Option<usize>,
    /// Under the BPF engine: the plans published to it since start.
    pub plans: Option<u64>,
    /// Entries in the address table of the engine that forwards.
    pub addresses: usize,
    /// The most it holds.
    pub address_limit: usize,
}

/// A member's state, as `show etherchannel summary` flags it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemberFlag {
    /// `P`: bundled in the port-channel.
    Bundled,
    /// `s`: suspended (its settings differ from the channel's, or its
    /// partner does not match).
    Suspended,
    /// `I`: stand-alone (no protocol partner; forwards on its own).
    Individual,
    /// `D`: down.
    #[default]
    Down,
    /// `H`: hot standby (LACP, beyond max-bundle).
    HotStandby,
    /// `w`: waiting to be aggregated.
    Waiting,
}

impl MemberFlag {
    /// The flag's letter in `show etherchannel summary`.
    pub fn letter(self) -> char {
        match self {
            MemberFlag::Bundled => 'P',
            MemberFlag::Suspended => 's',
            MemberFlag::Individual => 'I',
            MemberFlag::Down => 'D',
            MemberFlag::HotStandby => 'H',
            MemberFlag::Waiting => 'w',
        }
    }
}

impl std::fmt::Display for MemberFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.letter())
    }
}

impl std::str::FromStr for MemberFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<MemberFlag, String> {
        [
            MemberFlag::Bundled,
            MemberFlag::Suspended,
            MemberFlag::Individual,
            MemberFlag::Down,
            MemberFlag::HotStandby,
            MemberFlag::Waiting,
        ]
        .into_iter()
        .find(|f| s.len() == 1 && s.starts_with(f.letter()))
        .ok_or_else(|| format!("'{s}' is not a port-channel member flag (P, s, I, D, H, w)"))
    }
}

/// Written as its letter, as `show etherchannel summary` shows it.
impl Serialize for MemberFlag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MemberFlag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MemberFlag, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// `show etherchannel summary`'s facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtherchannelSummary {
    /// The switch's name.
    pub switch: String,
    /// Every port-channel.
    pub channels: Vec<ChannelState>,
}

/// One port-channel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelState {
    /// The port-channel number.
    pub channel: u32,
    /// `lacp`, `pagp` or `on`.
    pub protocol: String,
    /// Some member is bundled (Cisco's `U`).
    pub in_use: bool,
    /// Its members.
    pub members: Vec<MemberState>,
}

impl ChannelState {
    /// Every member bundled (`P`).
    pub fn all_bundled(&self) -> bool {
        !self.members.is_empty() && self.members.iter().all(|m| m.flag == MemberFlag::Bundled)
    }
}

/// One member of a port-channel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberState {
    /// The interface (`GigabitEthernet1/1`).
    pub port: Option<String>,
    /// The device (`p1`).
    pub device: Option<String>,
    /// Its channel-group mode (`active`, `desirable non-silent`, `on`).
    pub mode: String,
    /// Cisco's flag: `P` bundled, `I` stand-alone, `s` suspended, ...
    pub flag: MemberFlag,
    /// Why it has that flag.
    pub why: String,
    /// The partner speaks a protocol this port does not run, in words.
    pub mismatch: Option<String>,
}

/// `show etherchannel [N] detail`'s facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtherchannelDetail {
    /// The port-channels shown.
    pub channels: Vec<ChannelDetail>,
}

/// One port-channel, in detail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelDetail {
    /// The port-channel number.
    pub channel: u32,
    /// `lacp`, `pagp` or `on`.
    pub protocol: String,
    /// `lacp max-bundle`, when set.
    pub max_bundle: Option<usize>,
    /// `port-channel min-links`.
    pub min_links: usize,
    /// Its members.
    pub members: Vec<MemberDetail>,
}

/// One member of a port-channel, in detail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberDetail {
    /// The interface.
    pub port: String,
    /// Its channel-group mode.
    pub mode: String,
    /// Cisco's flag.
    pub flag: MemberFlag,
    /// Why it has that flag.
    pub why: String,
    /// The partner speaks a protocol this port does not run, in words.
    pub mismatch: Option<String>,
    /// The channel's hash buckets (of 8) it owns, a bit each.
    pub load: u8,
    /// The same buckets, as numbers.
    pub buckets: Vec<u8>,
    /// Who it heard, by its protocol.
    pub partner: Option<Partner>,
}

/// The partner a member heard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "lowercase")]
pub enum Partner {
    /// An LACP partner.
    Lacp {
        /// Its system id, `priority,MAC`.
        system: String,
        /// Its port number.
        port: u16,
        /// Its key.
        key: u16,
    },
    /// A PAgP partner.
    Pagp {
        /// Its device id (a MAC).
        device: Option<String>,
        /// Its device name.
        name: Option<String>,
        /// Its port's name.
        port: Option<String>,
    },
}

/// `show interfaces status`' facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfacesStatus {
    /// Every port, then every port-channel.
    pub interfaces: Vec<InterfaceStatus>,
}

/// One row of `show interfaces status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceStatus {
    /// The interface or `Port-channelN`.
    pub port: String,
    /// `connected`, `notconnect`, `disabled` or `suspended`.
    pub status: String,
    /// The access VLAN, or `trunk`.
    pub vlan: String,
    /// The configured duplex (`auto` when not); none for a port-channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<String>,
    /// The configured speed (`auto` when not); none for a port-channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    /// The Linux device that carries it; none for a port-channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

/// `show mac address-table`'s facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacTable {
    /// Every address learnt.
    pub entries: Vec<MacEntry>,
    /// Times an address moved between ports since the switch started (a
    /// host's frames arriving on two ports that are not one channel).
    pub moves: u64,
}

/// One learnt address.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacEntry {
    /// The VLAN.
    pub vlan: u16,
    /// The address, Cisco's dotted form.
    pub mac: String,
    /// The port or `Port-channelN` it was learnt on.
    pub port: String,
    /// Since it was last seen, ms.
    pub age_ms: u64,
}

/// `show interfaces counters`' facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfacesCounters {
    /// Every port.
    pub ports: Vec<PortCounters>,
    /// Every port-channel.
    pub channels: Vec<ChannelCounters>,
    /// The control plane's frames.
    pub control: ControlCounters,
}

/// Frames by their destination's kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cast {
    /// To one station.
    pub ucast: u64,
    /// To a group (not broadcast).
    pub mcast: u64,
    /// To ff:ff:ff:ff:ff:ff.
    pub bcast: u64,
}

/// One port's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    /// The interface.
    pub port: String,
    /// The device.
    pub device: String,
    /// Its MTU.
    pub mtu: u32,
    /// Frames received (data and control).
    pub rx_frames: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Received frames by destination.
    pub rx_cast: Cast,
    /// Sent frames by destination.
    pub tx_cast: Cast,
    /// Control frames received (LACP, PAgP) that the bridge did not forward.
    pub control: u64,
    /// Control frames the port sent.
    pub control_tx: u64,
    /// Frames sent out of this port as a flood (broadcast, multicast,
    /// unknown unicast).
    pub flooded: u64,
    /// Frames not sent: larger than the port's MTU.
    pub tx_too_big: u64,
    /// Received frames larger than the port's MTU.
    pub giants: u64,
    /// Frames dropped, by reason.
    pub drops: BTreeMap<String, u64>,
    /// Storm control's drops by class.
    pub storm_drops: Cast,
    /// New addresses not learnt: the port's learning rate was spent.
    pub learn_limited: u64,
    /// New addresses not learnt: the table was full.
    pub learn_full: u64,
    /// Frames the port's socket could not send.
    pub tx_send_failures: u64,
    /// Frames the port's socket buffer had no room for.
    pub rx_kernel_drops: u64,
}

impl PortCounters {
    /// Every drop, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.drops.values().sum()
    }
}

/// One port-channel's counters (its members' together).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelCounters {
    /// The port-channel number.
    pub channel: u32,
    /// Frames received.
    pub rx_frames: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Received frames by destination.
    pub rx_cast: Cast,
    /// Sent frames by destination.
    pub tx_cast: Cast,
    /// Received frames larger than the MTU.
    pub giants: u64,
}

/// The switch's control-plane frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlCounters {
    /// LACPDUs and Marker PDUs handed to LACP.
    pub lacp_in: u64,
    /// LACPDUs sent.
    pub lacp_out: u64,
    /// PAgP frames handed to PAgP.
    pub pagp_in: u64,
    /// PAgP frames sent.
    pub pagp_out: u64,
    /// Frames to Cisco's multicast (PAgP, CDP, DTP) on a port that does not
    /// run PAgP.
    pub pagp_ignored: u64,
    /// Slow-protocol frames on a port that does not run LACP.
    pub slow_ignored: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_partner_is_tagged_by_its_protocol_and_null_when_none_is_heard() {
        let d = EtherchannelDetail {
            channels: vec![ChannelDetail {
                channel: 1,
                protocol: "lacp".into(),
                max_bundle: Some(2),
                min_links: 1,
                members: vec![
                    MemberDetail {
                        port: "GigabitEthernet1/1".into(),
                        flag: MemberFlag::Bundled,
                        load: 0x0f,
                        buckets: vec![0, 1, 2, 3],
                        partner: Some(Partner::Lacp {
                            system: "32768,0200.0000.0001".into(),
                            port: 1,
                            key: 9,
                        }),
                        ..MemberDetail::default()
                    },
                    MemberDetail {
                        port: "GigabitEthernet1/2".into(),
                        flag: MemberFlag::Down,
                        ..MemberDetail::default()
                    },
                ],
            }],
        };
        let v = serde_json::to_value(&d).unwrap();
        let m = &v["channels"][0]["members"];
        assert_eq!(m[0]["partner"]["protocol"], "lacp");
        assert_eq!(m[0]["partner"]["key"], 9);
        assert_eq!(m[0]["load"], 15);
        assert!(m[1]["partner"].is_null());
        assert_eq!(v["channels"][0]["max_bundle"], 2);
        let back: EtherchannelDetail = serde_json::from_value(v).unwrap();
        assert_eq!(back, d);
        let s = InterfacesStatus {
            interfaces: vec![InterfaceStatus {
                port: "Port-channel1".into(),
                status: "connected".into(),
                vlan: "1".into(),
                ..InterfaceStatus::default()
            }],
        };
        let v = serde_json::to_value(&s).unwrap();
        assert!(v["interfaces"][0].get("device").is_none(), "{v}");
    }
}
