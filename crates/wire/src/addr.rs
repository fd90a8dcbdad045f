//! MAC addresses and 802.1AX system identifiers.

use core::fmt;
use core::str::FromStr;

/// A 48-bit IEEE MAC address.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The all-zero address, used for "no partner known".
    pub const ZERO: MacAddr = MacAddr([0; 6]);
    /// The Slow Protocols multicast address 01-80-C2-00-00-02 (IEEE 802.3 Annex 57A).
    pub const SLOW_PROTOCOLS: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
    /// The broadcast address.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// Builds an address from the first six octets of `b`; `None` if shorter.
    pub fn from_slice(b: &[u8]) -> Option<MacAddr> {
        b.get(..6).map(|s| {
            let mut a = [0; 6];
            a.copy_from_slice(s);
            MacAddr(a)
        })
    }

    /// The raw octets.
    pub fn octets(&self) -> [u8; 6] {
        self.0
    }

    /// True for group (multicast or broadcast) addresses.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }

    /// True for the all-zero address.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 6]
    }
}

impl MacAddr {
    /// Cisco's dotted form, as IOS shows it: `0011.2233.4455`.
    pub fn dotted(&self) -> String {
        let a = self.0;
        format!(
            "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
            a[0], a[1], a[2], a[3], a[4], a[5]
        )
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            a[0], a[1], a[2], a[3], a[4], a[5]
        )
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a string is not a MAC address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseMacError(pub String);

impl fmt::Display for ParseMacError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not a MAC address (expected six hex octets like 02:00:00:00:00:01)",
            self.0
        )
    }
}

impl std::error::Error for ParseMacError {}

impl FromStr for MacAddr {
    type Err = ParseMacError;
    /// Accepts `aa:bb:cc:dd:ee:ff`, `aa-bb-cc-dd-ee-ff` and `aabb.ccdd.eeff` (Cisco).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseMacError(s.to_string());
        let hex: String = s
            .chars()
            .filter(|c| !matches!(c, ':' | '-' | '.'))
            .collect();
        if hex.len() != 12 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(err());
        }
        let mut a = [0u8; 6];
        for (i, o) in a.iter_mut().enumerate() {
            *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| err())?;
        }
        Ok(MacAddr(a))
    }
}

/// An 802.1AX System Identifier: priority first, then MAC (clause 6.3.2).
///
/// The derived ordering compares priority, then address, which is the order
/// the standard uses to decide which system's port priorities win.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SystemId {
    /// System priority; lower is better.
    pub priority: u16,
    /// System MAC address.
    pub mac: MacAddr,
}

impl SystemId {
    /// Builds a system identifier.
    pub fn new(priority: u16, mac: MacAddr) -> SystemId {
        SystemId { priority, mac }
    }
}

impl fmt::Display for SystemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.priority, self.mac)
    }
}

impl fmt::Debug for SystemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_parse_forms() {
        let want = MacAddr([0x00, 0x1b, 0x21, 0x0a, 0xbc, 0xde]);
        assert_eq!("00:1b:21:0a:bc:de".parse::<MacAddr>().unwrap(), want);
        assert_eq!("00-1B-21-0A-BC-DE".parse::<MacAddr>().unwrap(), want);
        assert_eq!("001b.210a.bcde".parse::<MacAddr>().unwrap(), want);
        assert!("00:1b:21:0a:bc".parse::<MacAddr>().is_err());
        assert!("zz:1b:21:0a:bc:de".parse::<MacAddr>().is_err());
        assert_eq!(want.to_string(), "00:1b:21:0a:bc:de");
    }

    #[test]
    fn system_id_orders_priority_first() {
        let a = SystemId::new(1, MacAddr([0xff; 6]));
        let b = SystemId::new(2, MacAddr([0; 6]));
        assert!(a < b);
        let c = SystemId::new(2, MacAddr([0, 0, 0, 0, 0, 1]));
        assert!(b < c);
    }
}
