//! The logical interface's MAC, MTU and addresses (set and removed over
//! rtnetlink through `lagkit-sys`).

use super::*;

impl Bond {
    pub(super) fn setup_tap(&mut self) -> Result<(), BondError> {
        let link = self.upper.link();
        let mac = self.core.choose_mac();
        self.core.set_mac(mac);
        let tap_err = |why: String| BondError::Tap {
            bond: self.core.settings().name.clone(),
            why,
        };
        // Only if it differs: an adopted logical interface already has it.
        if link.mac().ok() != Some(mac.0) {
            link.set_mac(mac.0)
                .map_err(|e| tap_err(format!("set MAC {mac}: {e}")))?;
        }
        if let Some(mtu) = self.s().mtu {
            link.set_mtu(mtu)
                .map_err(|e| tap_err(format!("set MTU {mtu}: {e}")))?;
        }
        link.set_up(true)
            .map_err(|e| tap_err(format!("bring up: {e}")))?;
        for a in self.s().addresses.clone() {
            self.add_address(&a)?;
        }
        Ok(())
    }

    /// `ip addr replace A dev BOND`, the IPv4 address remembered for ARP.
    fn add_address(&mut self, a: &str) -> Result<(), BondError> {
        self.ip_addr(lagkit_sys::addr::Op::Replace, a)?;
        if let Some(ip) = a.split('/').next().and_then(|x| x.parse::<Ipv4Addr>().ok()) {
            if !self.core.ipv4().contains(&ip) {
                let mut ips = self.core.ipv4().to_vec();
                ips.push(ip);
                self.core.set_ipv4(ips);
            }
        }
        Ok(())
    }

    /// `ip addr replace|del A dev BOND`, over rtnetlink.
    fn ip_addr(&self, op: lagkit_sys::addr::Op, a: &str) -> Result<(), BondError> {
        let why = match parse_cidr(a) {
            Some((addr, prefix)) => {
                match lagkit_sys::addr::change(op, &self.s().name, addr, prefix) {
                    Ok(()) => return Ok(()),
                    // BondError::Address names the bond and the address.
                    Err(e) => e.reason(),
                }
            }
            None => "not an address with a prefix length (write e.g. 10.0.0.1/24)".to_string(),
        };
        Err(BondError::Address {
            bond: self.s().name.clone(),
            addr: a.to_string(),
            why,
        })
    }

    /// A reload changed `address`: the addresses no longer listed are
    /// removed, the new ones added; the others stay untouched.
    pub(super) fn apply_addresses(&mut self, old: &[String]) {
        let now: Vec<String> = self.s().addresses.clone();
        for a in old.iter().filter(|a| !now.contains(a)) {
            if let Err(e) = self.ip_addr(lagkit_sys::addr::Op::Delete, a) {
                tracing::error!(bond = %self.s().name, error = %e, "address not removed");
            }
            if let Some(ip) = a.split('/').next().and_then(|x| x.parse::<Ipv4Addr>().ok()) {
                let ips = self
                    .core
                    .ipv4()
                    .iter()
                    .copied()
                    .filter(|&x| x != ip)
                    .collect();
                self.core.set_ipv4(ips);
            }
        }
        for a in now {
            if !old.contains(&a) {
                if let Err(e) = self.add_address(&a) {
                    tracing::error!(bond = %self.s().name, error = %e, "address not added");
                }
            }
        }
    }
}

/// `ADDRESS[/PREFIX]` as `ip addr` reads it: without a prefix, the host's
/// own (32 or 128).
fn parse_cidr(a: &str) -> Option<(std::net::IpAddr, u8)> {
    let (addr, prefix) = match a.trim().split_once('/') {
        Some((addr, p)) => (addr, Some(p)),
        None => (a.trim(), None),
    };
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
        None => max,
    };
    Some((addr, prefix))
}

#[cfg(test)]
mod cidr_tests {
    #[test]
    fn addresses_are_read_as_ip_addr_reads_them() {
        let v4 = "10.0.0.1".parse().unwrap();
        assert_eq!(super::parse_cidr("10.0.0.1/24"), Some((v4, 24)));
        assert_eq!(super::parse_cidr("10.0.0.1"), Some((v4, 32)));
        assert_eq!(
            super::parse_cidr("fd00::1/64"),
            Some(("fd00::1".parse().unwrap(), 64))
        );
        assert_eq!(super::parse_cidr("10.0.0.1/33"), None);
        assert_eq!(super::parse_cidr("bond0"), None);
    }
}
