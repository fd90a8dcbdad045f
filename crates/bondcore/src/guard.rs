//! Whether an interface may become a member: one the host still uses on
//! its own (an address, a route, the default route above all) or that
//! already belongs to something else (a bridge, bond, team or VRF port;
//! another lagkit bond's logical interface) is refused, naming why and the
//! key that overrides it. On a server that interface is often the
//! management NIC and the SSH session: taking it without a word would cut
//! the operator off.
//!
//! Pure: the shell gathers each interface's facts (`lagkit_bond`'s
//! `guard`, over rtnetlink) and carries out the verdict.

/// What the host has on an interface, as `ip -d link`, `ip addr` and `ip
/// route` show it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InUse {
    /// The interface.
    pub name: String,
    /// Its addresses (`192.168.77.1/24`), IPv6 link-local ones left out.
    pub addresses: Vec<String>,
    /// The routes through it (`default via 192.168.77.254`,
    /// `10.9.0.0/16`), the kernel's local table left out.
    pub routes: Vec<String>,
    /// The bridge, bond, team or VRF it is a port of: its name and kind.
    pub master: Option<(String, Option<String>)>,
    /// It is lagkit bond NAME's logical interface.
    pub lagkit_bond: Option<String>,
    /// It is the loopback interface, which no bond can take.
    pub loopback: bool,
}

impl InUse {
    /// Why it must not be taken (empty: it may be).
    pub fn reasons(&self) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(b) = &self.lagkit_bond {
            why.push(format!("it is lagkit bond {b}'s logical interface"));
        }
        if let Some((m, kind)) = &self.master {
            let kind = kind.as_deref().unwrap_or("device");
            why.push(format!(
                "it is a port of {kind} {m} (ip link set {} nomaster frees it)",
                self.name
            ));
        }
        if !self.addresses.is_empty() {
            why.push(format!("it holds {}", self.addresses.join(", ")));
        }
        let (default, other): (Vec<&String>, Vec<&String>) =
            self.routes.iter().partition(|r| r.starts_with("default"));
        if !default.is_empty() {
            let d: Vec<&str> = default.iter().map(|s| s.as_str()).collect();
            why.push(format!(
                "the default route goes through it ({})",
                d.join(", ")
            ));
        }
        if !other.is_empty() {
            let o: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
            why.push(format!("routes go through it ({})", o.join(", ")));
        }
        why
    }

    /// `Ok` when it may be taken (nothing in use, or `forced`: it is listed
    /// in `force_members`), else what to tell the operator: the reasons,
    /// what taking it would break, and the key that overrides.
    pub fn verdict(&self, forced: bool) -> Result<(), String> {
        if self.loopback {
            return Err(format!(
                "member {} is the loopback interface; bond members must be Ethernet interfaces (veth, NICs)",
                self.name
            ));
        }
        let why = self.reasons();
        if why.is_empty() || forced {
            return Ok(());
        }
        Err(format!(
            "member {name} is in use: {why}. Taking it would end what uses it (the host's \
             traffic over it, an SSH session on it). Free it first (move its addresses \
             and routes to the bond, or to another interface), or write \
             force_members = [\"{name}\"] to take it anyway",
            name = self.name,
            why = why.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_interface_is_taken_and_one_in_use_is_refused_with_why_and_the_key() {
        let free = InUse {
            name: "eth1".into(),
            ..InUse::default()
        };
        assert_eq!(free.verdict(false), Ok(()));
        let mgmt = InUse {
            name: "eth0".into(),
            addresses: vec!["192.168.77.1/24".into()],
            routes: vec![
                "default via 192.168.77.254".into(),
                "10.9.0.0/16 table 100".into(),
            ],
            ..InUse::default()
        };
        let e = mgmt.verdict(false).unwrap_err();
        for part in [
            "member eth0 is in use: it holds 192.168.77.1/24",
            "the default route goes through it (default via 192.168.77.254)",
            "routes go through it (10.9.0.0/16 table 100)",
            "SSH session",
            "force_members = [\"eth0\"]",
        ] {
            assert!(e.contains(part), "{part} in {e}");
        }
        assert_eq!(mgmt.verdict(true), Ok(()), "force_members takes it");
        let port = InUse {
            name: "eth2".into(),
            master: Some(("br0".into(), Some("bridge".into()))),
            ..InUse::default()
        };
        let e = port.verdict(false).unwrap_err();
        assert!(
            e.contains("it is a port of bridge br0 (ip link set eth2 nomaster frees it)"),
            "{e}"
        );
        let other = InUse {
            name: "bond1".into(),
            lagkit_bond: Some("bond1".into()),
            ..InUse::default()
        };
        assert!(other
            .verdict(false)
            .unwrap_err()
            .contains("it is lagkit bond bond1's logical interface"));
        let lo = InUse {
            name: "lo".into(),
            addresses: vec!["127.0.0.1/8".into()],
            loopback: true,
            ..InUse::default()
        };
        let e = lo.verdict(true).unwrap_err();
        assert!(
            e.contains("is the loopback interface"),
            "not even forced: {e}"
        );
    }
}
