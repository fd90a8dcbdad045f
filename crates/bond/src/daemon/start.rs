//! Starting a bond: the run directory locked, the members recorded and
//! taken, the logical interface made (or a killed daemon's data path
//! adopted), the core started, the engine and the control socket up.

use super::*;
use crate::adopt::Adoption;
use crate::upper::ipv4_of;

impl Bond {
    /// Creates the TAP, takes the members that exist, starts LACP and the
    /// engine, and opens the control socket. Must be called on a thread in
    /// the network namespace the bond lives in.
    ///
    /// Nothing is touched before the bond's run directory is locked (a
    /// second daemon for the same bond stops here) and every member is
    /// known to be free. A start that fails later gives back everything it
    /// changed before the error returns (see [`Bond`]'s `Drop`).
    pub fn start(s: Settings) -> Result<Bond, BondError> {
        Bond::start_with(s, &mut |_| {})
    }

    /// [`Bond::start`], running `between(member)` after each member's
    /// originals are recorded and before it is changed (a seam for tests
    /// that remove a member in the middle of a start).
    pub fn start_with(s: Settings, between: &mut dyn FnMut(&str)) -> Result<Bond, BondError> {
        let s = s.normalised();
        let name = s.name.clone();
        let ns_dir = lagkit_bondcfg::paths::netns_dir(lagkit_bondcfg::paths::netns_id());
        let (mut run, left) = RunDir::acquire_keeping(ns_dir.join(&name), &name)?;
        let names: Vec<String> = (crate::core::member_list(&s).into_iter())
            .map(|(m, _)| m)
            .collect();
        let mut adoption = Adoption::at_start(&s, &names, &mut run, left.as_ref())?;
        let members = Members::new(names, Some(run));
        members.ensure_free(&name, &s.force_members)?;
        let carrier = CarrierWatcher::open().map_err(|e| BondError::Netlink {
            bond: name.clone(),
            why: e.to_string(),
        })?;
        let mut members = members;
        if let Some(a) = adoption.as_mut() {
            members.hand(std::mem::take(&mut a.handed));
        }
        let (datapath, resume) = DataPath::open(&s, adoption)?;
        let control = Control::open(&s)?;
        let mut bond = Bond {
            members,
            core: Core::new(s),
            epoch: std::time::Instant::now(),
            datapath,
            carrier,
            control,
            seen_ns: None,
            carriers: CarrierLog::default(),
            recorded_ns: 0,
        };
        // From here on, an error drops `bond`, which gives back whatever
        // was taken.
        for i in 0..bond.members.len() {
            if let Err(e) = bond.take(i, &mut *between) {
                return Err(BondError::Member(e, name.clone()));
            }
        }
        if bond.datapath.resumed() {
            let links = CarrierWatcher::dump().unwrap_or_default();
            let usable = links
                .iter()
                .map(|l| (l.name.as_str(), l.present && l.usable()));
            bond.core.adopt_links(usable);
        }
        let mac = bond.core.choose_mac();
        bond.core.set_mac(mac);
        let s = bond.core.settings();
        let mode = s.mode.name();
        (bond.datapath.upper()).bring_up(&name, mode, mac, s.mtu, &s.addresses)?;
        bond.core.set_ipv4(ipv4_of(&s.addresses));
        let group_ifindex = bond.datapath.upper().link().ifindex().unwrap_or(0);
        let now = bond.now();
        bond.core.start(mac, group_ifindex, &resume, now);
        // Link events queued while the members were being set up describe
        // states that are already gone (a member before it was brought up
        // would count as a link failure): discard them, then read the
        // current carrier of every present member.
        bond.carrier.discard_queued();
        bond.relink();
        bond.restart_engine()?;
        tracing::info!(bond = %name, mode = bond.s().mode.linux_name(), members = ?bond.s().members, "bond up");
        Ok(bond)
    }
}
