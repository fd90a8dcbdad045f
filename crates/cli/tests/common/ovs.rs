//! What the Open vSwitch tests share: a lab that skips (visibly) without
//! OVS, and one OVS instance per test that dies with it.

use lagkit_lab::ovs::{self as lab_ovs, OvsLacp, OvsMember};
use lagkit_lab::sys::tool;
use lagkit_testnet::Lab;
use std::collections::BTreeMap;
use std::path::Path;

/// A tool's path; panics when it is not installed.
pub fn tool_path(name: &str) -> String {
    lagkit_lab::sys::tool_path(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A lab for `test`, or None (with a visible SKIP) when root, OVS or one of
/// `extra` tools is missing. Missing tools fail the test when `CI` is set.
pub fn lab(test: &str, extra: &[&str]) -> Option<Lab> {
    let lab = Lab::new(test)?;
    let mut why: Vec<String> = lab_ovs::missing().into_iter().collect();
    let missing: Vec<&str> = extra
        .iter()
        .copied()
        .filter(|t| tool(t).is_none())
        .collect();
    if !missing.is_empty() {
        why.push(format!(
            "missing {} (apt-get install -y --no-install-recommends tshark)",
            missing.join(", ")
        ));
    }
    if why.is_empty() {
        return Some(lab);
    }
    let why = why.join("; ");
    if std::env::var_os("CI").is_some() {
        panic!("{test}: CI is set but the test cannot run: {why}");
    }
    eprintln!("SKIP {test}: {why}");
    None
}

/// The test's view of one Open vSwitch instance (`lagkit_lab::ovs::Ovs`,
/// shared with `lagkit lab`): started as children of the test that die
/// with it, in `/tmp/lkt-ovs-<pid>-<tag>`; queries panic on failure; on
/// drop the daemons are stopped (logs printed first if the test is
/// failing) and the directory removed.
pub struct Ovs(pub lab_ovs::Ovs);

impl Ovs {
    pub fn start(ns: &str, tag: &str) -> Ovs {
        // Leftovers of a killed run (`/tmp/lkt-ovs-<pid>-*`, pid gone).
        lab_ovs::Ovs::remove_stale(Path::new("/tmp"), "lkt-ovs-");
        let dir = Path::new("/tmp").join(format!("lkt-ovs-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = lab_ovs::Ovs::start(
            ns,
            dir,
            lab_ovs::Spawn::Child {
                die_with_parent: true,
            },
        )
        .unwrap_or_else(|e| panic!("OVS starts: {e}"));
        Ovs(o)
    }

    /// `ovs-vsctl` on this instance's database; panics on failure.
    pub fn vsctl(&self, args: &[&str]) -> String {
        self.0.vsctl(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `ovs-appctl` to this instance's ovs-vswitchd; panics on failure.
    pub fn appctl(&self, args: &[&str]) -> String {
        self.0.appctl(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Bridge `br0` (userspace datapath, MAC `mac` = OVS's LACP system id)
    /// with `bond0 = s1 + s2` running LACP `lacp` (active or passive), fast,
    /// balance-tcp; `more` are further `add-bond` arguments.
    pub fn lacp_bridge(&self, mac: &str, lacp: &str, more: &[&str]) {
        self.vsctl(&[
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=netdev",
            &format!("other-config:hwaddr=\"{mac}\""),
        ]);
        let lacp = format!("lacp={lacp}");
        let mut args = vec![
            "add-bond",
            "br0",
            "bond0",
            "s1",
            "s2",
            &lacp,
            "bond_mode=balance-tcp",
            "other_config:lacp-time=fast",
        ];
        args.extend(more);
        self.vsctl(&args);
    }

    /// `lacp/show bond0`, parsed.
    pub fn lacp(&self) -> OvsLacp {
        self.0.lacp("bond0").unwrap_or_else(|e| panic!("{e}"))
    }

    /// `bond/show bond0`: member name -> "enabled"/"disabled".
    pub fn bond_members(&self) -> BTreeMap<String, String> {
        self.0
            .bond_members("bond0")
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- OVS logs (last lines) ---\n{}", self.0.log_tail(25));
        }
        self.0.stop();
        let _ = std::fs::remove_dir_all(self.0.dir());
    }
}

/// The member `m` of OVS's `lacp/show`; panics if it has none.
pub fn member<'a>(o: &'a OvsLacp, m: &str) -> &'a OvsMember {
    o.members
        .get(m)
        .unwrap_or_else(|| panic!("OVS lacp/show has no member {m}: {o:?}"))
}
