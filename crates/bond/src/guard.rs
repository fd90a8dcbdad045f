//! What the host has on an interface that would become a member (its
//! addresses, routes, master, and whether it is a lagkit bond's logical
//! interface), read over rtnetlink for [`lagkit_bondcore::guard`]'s
//! verdict.

use crate::upper::LOGICAL_ALIAS;
use lagkit_bondcore::guard::InUse;

/// What the host has on interface `name`; `None` when it does not exist
/// (it is waited for) or cannot be read.
pub fn in_use(name: &str) -> Option<InUse> {
    let links = lagkit_sys::link::all().ok()?;
    let me = links.iter().find(|l| l.name == name)?;
    let master = me.master.and_then(|m| {
        let l = links.iter().find(|l| l.ifindex == m)?;
        Some((l.name.clone(), l.kind.clone()))
    });
    let lagkit_bond = (me.alias.as_deref())
        .and_then(|a| a.strip_prefix(LOGICAL_ALIAS))
        .map(|rest| rest.split_whitespace().next().unwrap_or(rest).to_string());
    let addresses = lagkit_sys::addr::list(me.ifindex)
        .unwrap_or_default()
        .into_iter()
        .map(|(a, p)| format!("{a}/{p}"))
        .collect();
    let routes = lagkit_sys::route::via(me.ifindex)
        .unwrap_or_default()
        .iter()
        .map(|r| r.to_string())
        .collect();
    Some(InUse {
        name: name.to_string(),
        addresses,
        routes,
        master,
        lagkit_bond,
        loopback: me.loopback,
    })
}

/// `Err` with what to tell the operator when interface `name` is in use
/// and not listed in `force`.
pub fn check(name: &str, force: &[String]) -> Result<(), String> {
    match in_use(name) {
        Some(u) => u.verdict(force.iter().any(|f| f == name)),
        None => Ok(()),
    }
}
