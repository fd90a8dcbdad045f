//! The switch's control protocol ([`lagkit_api::switch`]'s requests and
//! answers): where a switch's socket is, and the client.

use lagkit_hash::{FlowKey, IpFlow, L4};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

pub use lagkit_api::switch::{Request, Response};

/// Where the switches of the network namespace with inode `netns` put
/// their control sockets: `/run/lagkit/<netns>/switch/` (a directory of
/// their own, so `lagkit status` never mistakes a switch for a bond).
pub fn socket_dir(netns: Option<u64>) -> PathBuf {
    lagkit_bondcfg::paths::netns_dir(netns).join("switch")
}

/// The control socket of the switch named `hostname`.
pub fn socket_path(netns: Option<u64>, hostname: &str) -> PathBuf {
    socket_dir(netns).join(format!("{hostname}.sock"))
}

/// Sends one request to the switch at `path`.
pub fn request(path: &Path, req: &Request) -> Result<Response, lagkit_api::protocol::ControlError> {
    lagkit_api::protocol::exchange(path, req, "switch", "lagkit switch CONFIG")
}

fn mac(s: &str) -> Option<[u8; 6]> {
    let hex: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    let seps = s
        .chars()
        .all(|c| c.is_ascii_hexdigit() || ":.-".contains(c));
    if hex.len() != 12 || !seps {
        return None;
    }
    let mut m = [0u8; 6];
    for (i, b) in m.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(m)
}

/// Why a `test etherchannel load-balance` flow cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestKeyError {
    /// `ip`: not two IP addresses.
    #[error("ip: '{0}' and '{1}' must be IP addresses")]
    NotIps(String, String),
    /// `ip`: an IPv4 and an IPv6 address.
    #[error("ip: both addresses of one family")]
    Families,
    /// `mac`: not two MAC addresses.
    #[error("mac: '{0}' and '{1}' must be MAC addresses (e.g. 0200.0000.0001)")]
    NotMacs(String, String),
    /// `port`: not two IP:PORT.
    #[error("port: '{0}' and '{1}' must be IP:PORT")]
    NotPorts(String, String),
    /// Another kind than ip, mac or port.
    #[error("'{0}': write ip, mac or port")]
    Kind(String),
}

/// The flow a `test etherchannel load-balance` names: `ip SRC DST` (two IP
/// addresses), `mac SRC DST` (two MACs, `0200.0000.0001` or
/// `02:00:00:00:00:01`) or `port SRC DST` (two IP:PORT, TCP).
pub fn test_key(kind: &str, src: &str, dst: &str) -> Result<FlowKey, TestKeyError> {
    let pair = || (src.to_string(), dst.to_string());
    match kind {
        "ip" => {
            let (Ok(a), Ok(b)) = (src.parse::<IpAddr>(), dst.parse::<IpAddr>()) else {
                let (a, b) = pair();
                return Err(TestKeyError::NotIps(a, b));
            };
            if a.is_ipv4() != b.is_ipv4() {
                return Err(TestKeyError::Families);
            }
            Ok(FlowKey::ip(IpFlow::new(a, b, 0, L4::None)))
        }
        "mac" => match (mac(src), mac(dst)) {
            (Some(a), Some(b)) => Ok(FlowKey::l2(a, b, 0x0800)),
            _ => {
                let (a, b) = pair();
                Err(TestKeyError::NotMacs(a, b))
            }
        },
        "port" => lagkit_hash::flow_key("tcp", src, dst).map_err(|_| {
            let (a, b) = pair();
            TestKeyError::NotPorts(a, b)
        }),
        other => Err(TestKeyError::Kind(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_tagged_by_cmd_and_answers_by_kind() {
        let t = serde_json::to_string(&Request::MacAddressTable).unwrap();
        assert_eq!(t, r#"{"cmd":"mac-address-table"}"#);
        let r: Request = serde_json::from_str(
            r#"{"cmd":"test-load-balance","channel":3,"kind":"ip","src":"a","dst":"b"}"#,
        )
        .unwrap();
        assert!(matches!(r, Request::TestLoadBalance { channel: 3, .. }));
        let e = serde_json::to_string(&Response::Error("no".into())).unwrap();
        assert_eq!(e, r#"{"error":"no"}"#);
    }

    #[test]
    fn test_keys_from_addresses() {
        let k = test_key("ip", "10.0.0.1", "10.0.0.6").unwrap();
        assert_eq!(k.ip.unwrap().src, "10.0.0.1".parse::<IpAddr>().unwrap());
        let m = test_key("mac", "0200.0000.0001", "02:00:00:00:00:02").unwrap();
        assert_eq!(
            (m.src_mac, m.dst_mac),
            ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        );
        let p = test_key("port", "10.0.0.1:1000", "10.0.0.2:80").unwrap();
        assert_eq!(p.ip.unwrap().ports(), Some((1000, 80)));
        assert!(test_key("ip", "10.0.0.1", "::1").is_err());
        assert!(test_key("mac", "0200.0000", "x").is_err());
        let e = test_key("vlan", "1", "2").unwrap_err();
        assert_eq!(e, TestKeyError::Kind("vlan".into()));
        assert!(e.to_string().contains("ip, mac or port"));
        assert_eq!(
            socket_path(Some(7), "sw1"),
            PathBuf::from("/run/lagkit/7/switch/sw1.sock")
        );
    }
}
