//! The logical interface's MAC, MTU and addresses (set and removed over
//! rtnetlink through `lagkit-sys`).

use super::*;
use lagkit_bondcfg::Cidr;
use lagkit_sys::addr::Op;

impl Bond {
    pub(super) fn setup_tap(&mut self) -> Result<(), BondError> {
        let link = self.datapath.upper().link();
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
        let addresses = self.s().addresses.clone();
        for a in &addresses {
            self.ip_addr(Op::Replace, a)?;
        }
        self.core.set_ipv4(ipv4_of(&addresses));
        Ok(())
    }

    /// `ip addr replace|del A dev BOND`, over rtnetlink.
    fn ip_addr(&self, op: Op, a: &Cidr) -> Result<(), BondError> {
        lagkit_sys::addr::change(op, &self.s().name, a.addr, a.prefix).map_err(|e| {
            // BondError::Address names the bond and the address.
            BondError::Address {
                bond: self.s().name.clone(),
                addr: a.to_string(),
                why: e.reason(),
            }
        })
    }

    /// A reload changed `address`: the addresses no longer listed are
    /// removed, the new ones added; the others stay untouched. The bond
    /// answers ARP for the IPv4 ones it holds.
    pub(super) fn apply_addresses(&mut self, old: &[Cidr]) {
        let now = self.s().addresses.clone();
        for a in old.iter().filter(|a| !now.contains(a)) {
            if let Err(e) = self.ip_addr(Op::Delete, a) {
                tracing::error!(bond = %self.s().name, error = %e, "address not removed");
            }
        }
        let mut held: Vec<Cidr> = now.iter().filter(|a| old.contains(a)).copied().collect();
        for a in now.iter().filter(|a| !old.contains(a)) {
            match self.ip_addr(Op::Replace, a) {
                Ok(()) => held.push(*a),
                Err(e) => tracing::error!(bond = %self.s().name, error = %e, "address not added"),
            }
        }
        self.core.set_ipv4(ipv4_of(&held));
    }
}

/// The IPv4 addresses of `list`.
fn ipv4_of(list: &[Cidr]) -> Vec<Ipv4Addr> {
    list.iter()
        .filter_map(|c| match c.addr {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .collect()
}
