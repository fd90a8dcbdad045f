//! From the operator's configuration (`lagkit-bondcfg`) to the runtime's
//! [`Settings`].

use crate::settings::{LacpSettings, PagpSettings, Settings};
use lagkit_api::status::AdSelect;
use lagkit_bondcfg::{
    default_control_socket, ArpAllTargets, ArpValidate, BondConfig, LacpRate, Pagp, PagpRate,
    PortPriorities,
};
use lagkit_hash::{Policy, Strong};
use lagkit_monitor::arp::ArpConfig;
use lagkit_monitor::Combine;
use lagkit_proto::lacp::NoPartner;
use lagkit_proto::pagp;
use std::time::Duration;

/// A per-bond random seed for `strong` hashing (against polarization: two
/// stages with the same seed would reuse the same bits).
fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .is_ok()
    {
        return u64::from_le_bytes(b);
    }
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish()
}

/// Why a configured bond cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// `pagp` in a mode that cannot run it (the file parser refuses this
    /// first; a configuration built in code may not).
    #[error("bond {bond}: pagp runs only in balance-xor and active-backup, not {mode}")]
    PagpMode {
        /// The bond.
        bond: String,
        /// Its mode.
        mode: lagkit_bondcfg::Mode,
    },
}

/// The runtime settings of one configured bond, or why it cannot run.
pub fn settings_from(c: &BondConfig, warnings: Vec<String>) -> Result<Settings, SettingsError> {
    let mode = c.mode;
    let refs: Vec<&str> = c.members.iter().map(String::as_str).collect();
    let mut s = Settings::new(&c.name, &refs, mode);
    s.policy = match c.xmit_hash_policy {
        Policy::Strong(st) => Policy::Strong(
            Strong::new(c.hash_seed.unwrap_or_else(random_seed))
                .with_symmetric(st.symmetric || c.hash_symmetric),
        ),
        p => p,
    };
    s.backup = c.backup_adapter.clone();
    s.force_members = c.force_members.clone();
    s.auto_recovery = c.auto_recovery;
    s.mtu = Some(u32::from(c.mtu));
    s.offloads_off = c.offloads_off.clone();
    s.engine = c.engine;
    s.addresses = c.address.clone();
    s.mac = c.mac;
    s.miimon = Duration::from_millis(c.miimon.into());
    s.updelay = Duration::from_millis(c.updelay.into());
    s.downdelay = Duration::from_millis(c.downdelay.into());
    s.lacp = LacpSettings {
        fast: c.lacp_rate == LacpRate::Fast,
        active: c.lacp_active,
        system_priority: c.ad_actor_sys_prio,
        system_mac: c.ad_actor_system,
        // Like Linux, the user key sits above bits for speed and duplex;
        // members of one bond here share one key.
        key: (c.ad_user_port_key << 6) | 1,
        min_links: c.min_links as usize,
        max_bundle: c.max_bundle.map(usize::from),
        no_partner: match c.lacp_no_partner {
            lagkit_bondcfg::NoPartner::Individual => NoPartner::Individual,
            lagkit_bondcfg::NoPartner::Fallback => NoPartner::Fallback,
            lagkit_bondcfg::NoPartner::Suspend => NoPartner::Suspend,
        },
        coupled: c.coupled_control,
        ad_select: match c.ad_select {
            lagkit_bondcfg::AdSelect::Stable => AdSelect::Stable,
            lagkit_bondcfg::AdSelect::Bandwidth => AdSelect::Bandwidth,
            lagkit_bondcfg::AdSelect::Count => AdSelect::Count,
        },
        port_priority: match &c.ad_actor_port_prio {
            PortPriorities::All(p) => *p,
            PortPriorities::Each(_) => 255,
        },
        port_priorities: match &c.ad_actor_port_prio {
            PortPriorities::All(_) => Vec::new(),
            PortPriorities::Each(list) => list.clone(),
        },
    };
    s.peer_notif_delay = Duration::from_millis(c.peer_notif_delay.into());
    s.ns_targets = c.ns_ip6_target.clone();
    if c.pagp != Pagp::Off && !mode.allows_pagp() {
        return Err(SettingsError::PagpMode {
            bond: c.name.clone(),
            mode,
        });
    }
    let pagp_mode = match c.pagp {
        Pagp::Off => None,
        Pagp::Desirable => Some(pagp::Mode::Desirable),
        Pagp::Auto => Some(pagp::Mode::Auto),
    };
    s.pagp = pagp_mode.map(|mode| PagpSettings {
        mode,
        silence: if c.pagp_silent {
            pagp::Silence::Silent
        } else {
            pagp::Silence::NonSilent
        },
        fast: c.pagp_rate == PagpRate::Fast,
        // active-backup receives on its active member only: one member in
        // the channel, the others hot standby, or the switch would send
        // some flows where the bond drops them.
        max_ports: (c.mode == lagkit_bondcfg::Mode::ActiveBackup).then_some(1),
    });
    s.primary = c.primary.clone();
    s.primary_reselect = c.primary_reselect;
    let mut targets = c.arp_ip_target.clone();
    let mut interval = c.arp_interval;
    let mut missed = u32::from(c.arp_missed_max.max(1));
    if let Some(n) = c.netaddr {
        // AIX: ping netaddr every retry_time seconds, num_retries misses.
        if !targets.contains(&n) {
            targets.push(n);
        }
        if interval == 0 {
            interval = c.retry_time.saturating_mul(1000);
            missed = c.num_retries.max(1);
        }
    }
    if interval > 0 && !targets.is_empty() {
        s.arp = Some(ArpConfig {
            interval: Duration::from_millis(interval.into()),
            targets,
            missed_max: missed,
            validate: c.arp_validate != ArpValidate::None,
            all_targets: match c.arp_all_targets {
                ArpAllTargets::Any => Combine::Any,
                ArpAllTargets::All => Combine::All,
            },
        });
    }
    s.num_grat_arp = c.num_grat_arp;
    s.fail_over_mac = c.fail_over_mac;
    s.packets_per_slave = u32::from(c.packets_per_slave);
    s.lp_interval = Duration::from_secs(c.lp_interval.max(1).into());
    // Only balance-tlb/alb read it; elsewhere it stays the default, so
    // changing it there restarts nothing.
    s.tlb_dynamic_lb = c.tlb_dynamic_lb || !mode.is_tlb();
    s.control_socket = c
        .control_socket
        .clone()
        .unwrap_or_else(|| default_control_socket(&c.name));
    s.metrics_listen = c.metrics_listen;
    s.adaptive_interval = Duration::from_millis(c.adaptive_interval.into());
    s.adaptive_idle_gap = Duration::from_millis(c.adaptive_idle_gap.into());
    s.warnings = warnings;
    s.hash_seed_fixed = c.hash_seed.is_some();
    Ok(s.normalised())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_bondcfg::Mode;

    /// lagkit.toml(5) says which keys a reload applies in place; that is
    /// what the daemon does: each key's example value, changed from a
    /// bond's defaults, needs a restart exactly when the page says so.
    #[test]
    fn documented_reload_effects_are_the_daemons() {
        use lagkit_bondcfg::ReloadEffect;
        let settings = |text: &str| {
            let (bonds, _) = lagkit_bondcfg::parse_str(text, "r.toml").ok()?;
            let s = settings_from(&bonds[0], vec![]).ok()?;
            Some(s.normalised())
        };
        let mut checked = 0;
        let mut unchecked = Vec::new();
        for d in lagkit_bondcfg::key_docs() {
            if matches!(d.name, "name" | "mode" | "members") {
                continue;
            }
            // A mode where the key applies, and PAgP already on for its keys
            // (turning it on or off is a restart, switching modes is not).
            let bases = [
                "mode = \"balance-xor\"\npagp = \"auto\"\n",
                "mode = \"802.3ad\"\n",
                "mode = \"active-backup\"\narp_interval = 100\narp_ip_target = [\"192.0.2.9\"]\n",
                "mode = \"active-backup\"\nnetaddr = \"192.0.2.1\"\n",
                "mode = \"adaptive\"\n",
                "mode = \"balance-alb\"\n",
            ];
            // The example first, then other values, until one changes what
            // the daemon runs (many examples are the default).
            let mut lines = vec![d.example.to_string()];
            lines.extend(
                d.values
                    .iter()
                    .map(|v| format!("{} = \"{}\"", d.name, v.name)),
            );
            for v in ["true", "false", "3", "7", "500"] {
                lines.push(format!("{} = {v}", d.name));
            }
            let mut found = false;
            'search: for base in bases {
                let base = format!("name = \"bond0\"\nmembers = [\"eth1\", \"eth2\"]\n{base}");
                for line in &lines {
                    // The line replaces the base's own line for the key, if any.
                    let changed: String = base
                        .lines()
                        .filter(|l| !l.starts_with(&format!("{} =", d.name)))
                        .chain([line.as_str()])
                        .map(|l| format!("{l}\n"))
                        .collect();
                    let (Some(old), Some(mut new)) = (settings(&base), settings(&changed)) else {
                        continue;
                    };
                    new.keep_seed_of(&old);
                    if d.reload == ReloadEffect::NotUsed {
                        assert_eq!(old, new, "{line}: documented as not acted on, yet it is");
                        continue;
                    }
                    if old == new {
                        continue;
                    }
                    assert_eq!(
                        old.needs_restart(&new),
                        d.reload != ReloadEffect::InPlace,
                        "{line} (from a bond with {base:?}): lagkit.toml(5) says {:?}",
                        d.reload
                    );
                    found = true;
                    break 'search;
                }
            }
            if found || d.reload == ReloadEffect::NotUsed {
                checked += 1;
            } else {
                unchecked.push(d.name);
            }
        }
        // Keys that act only through another key cannot be checked this way.
        assert!(
            checked >= 45,
            "only {checked} keys checked; not: {unchecked:?}"
        );
    }

    fn xor() -> BondConfig {
        BondConfig::new(
            "bond0",
            Mode::BalanceXor,
            vec!["eth1".into(), "eth2".into()],
        )
    }

    #[test]
    fn pagp_keys_become_pagp_settings() {
        let mut c = xor();
        assert_eq!(settings_from(&c, vec![]).unwrap().pagp, None);
        c.pagp = Pagp::Auto;
        c.pagp_silent = false;
        c.pagp_rate = PagpRate::Fast;
        let p = settings_from(&c, vec![]).unwrap().pagp;
        assert_eq!(
            p,
            Some(PagpSettings {
                mode: pagp::Mode::Auto,
                silence: pagp::Silence::NonSilent,
                fast: true,
                max_ports: None,
            })
        );
        c.pagp = Pagp::Desirable;
        c.pagp_silent = true;
        let p = settings_from(&c, vec![]).unwrap().pagp.unwrap();
        assert_eq!(
            (p.mode, p.silence),
            (pagp::Mode::Desirable, pagp::Silence::Silent)
        );
        c.mode = Mode::ActiveBackup;
        let p = settings_from(&c, vec![]).unwrap().pagp.unwrap();
        assert_eq!(p.max_ports, Some(1), "one member in the channel");
    }

    #[test]
    fn pagp_in_802_3ad_is_refused() {
        let mut c = xor();
        c.mode = Mode::Lacp;
        c.pagp = Pagp::Desirable;
        let e = settings_from(&c, vec![]).unwrap_err();
        assert!(matches!(e, SettingsError::PagpMode { .. }), "{e}");
        assert!(
            e.to_string().contains("balance-xor and active-backup"),
            "{e}"
        );
    }
}
