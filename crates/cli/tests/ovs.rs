//! `lagkit up` against a real LACP peer: Open vSwitch (userspace datapath)
//! in its own network namespace, with its own ovsdb-server and ovs-vswitchd.
//!
//! ```text
//!   netns L (lagkit)          netns S (OVS br0, netdev)          netns K (sink)
//!   bond0 = eth1 + eth2  <-->  bond0 = s1 + s2 (ofport 1, 2)
//!   10.0.0.1/24                s3 (ofport 3)              <-->  eth0 10.0.0.2/24
//! ```
//!
//! Both views of every link are compared field by field (lagkit's actor is
//! OVS's partner and the other way round), TCP crosses the bond, and tshark
//! judges the LACPDUs lagkit sends. Root only; skips with a message when OVS
//! (or tshark) is not installed, but fails when `CI` is set.
//!
//! Run: `cargo test -p lagkit --test ovs` (add `-- --nocapture` for timings).

mod common;

use common::ovs::{lab, member, tool_path, Ovs};
use common::{bond_status as status, Daemon, TmpDir};
use lagkit_api::status::BondStatus;
use lagkit_lab::ovs::OvsLacp;
use lagkit_lab::sys::run;
use lagkit_sys::proc::Signal;
use lagkit_testnet::{tcp_transfer, wait_until, Lab};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");
/// OVS bridge MAC = OVS's LACP system id.
const OVS_MAC: &str = "02:00:00:0a:ff:ff";
/// OVS's fixed LACP system priority.
const OVS_PRIO: u16 = 65534;
/// lagkit member <-> OVS member, link by link.
const LINKS: [(&str, &str); 2] = [("eth1", "s1"), ("eth2", "s2")];

// ------------------------------------------------------------------ tools --

/// Daemons get SIGTERM when the test thread that started them ends, even if
/// the test process is killed (Ctrl-C) and no guard's `drop` runs. It
/// survives `ip netns exec`'s exec.
trait DieWithTest {
    fn die_with_test(&mut self) -> &mut Self;
}

impl DieWithTest for Command {
    fn die_with_test(&mut self) -> &mut Self {
        lagkit_sys::proc::die_with_parent(self, Signal::SIGTERM)
    }
}

// -------------------------------------------------------------------- OVS --

/// Switch-side members of the links.
const OVS_MEMBERS: [&str; 2] = [LINKS[0].1, LINKS[1].1];

// ----------------------------------------------------------------- lagkit --

fn ports(st: &Option<BondStatus>) -> usize {
    st.as_ref()
        .and_then(|s| s.lacp.as_ref())
        .map_or(0, |l| l.number_of_ports)
}

// -------------------------------------------------------------------- rig --

/// The three namespaces, OVS, lagkit; dropped in field order: lagkit first
/// (gives its members back), then OVS, then the namespaces, then files.
struct Rig {
    lagkit: Option<Daemon>,
    ovs: Ovs,
    lab: Lab,
    dir: TmpDir,
    /// lagkit's namespace.
    l: String,
    /// The switch's namespace.
    s: String,
    /// The sink's namespace.
    k: String,
    /// When lagkit was started.
    t0: Instant,
}

impl Rig {
    /// Namespaces and veths, OVS with `br0` (MAC [`OVS_MAC`]) and
    /// `bond0 = s1 + s2` in `ovs_lacp` mode (active/passive, fast,
    /// balance-tcp), plus a sink port s3. lagkit is not started yet.
    fn new(mut lab: Lab, tag: &str, ovs_lacp: &str) -> Rig {
        let (l, s, k) = (lab.netns(), lab.netns(), lab.netns());
        for (m, sw) in LINKS {
            lab.veth(&l, m, &s, sw);
            lab.prep_member(&s, sw, 1500);
        }
        lab.veth(&s, "s3", &k, "eth0");
        lab.prep_member(&s, "s3", 1500);
        lab.sh(&["ip", "-n", &k, "addr", "add", "10.0.0.2/24", "dev", "eth0"]);
        lab.sh(&["ip", "-n", &k, "link", "set", "eth0", "up"]);
        let dir = Path::new("/tmp").join(format!("lkt-ovs-{}-{tag}-cfg", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = TmpDir(dir);
        let ovs = Ovs::start(&s, tag);
        ovs.lacp_bridge(
            OVS_MAC,
            ovs_lacp,
            &[
                "other_config:bond-rebalance-interval=1000",
                "--",
                "set",
                "interface",
                "s1",
                "ofport_request=1",
                "--",
                "set",
                "interface",
                "s2",
                "ofport_request=2",
            ],
        );
        ovs.vsctl(&[
            "add-port",
            "br0",
            "s3",
            "--",
            "set",
            "interface",
            "s3",
            "ofport_request=3",
        ]);
        Rig {
            lagkit: None,
            ovs,
            lab,
            dir,
            l,
            s,
            k,
            t0: Instant::now(),
        }
    }

    /// Starts `lagkit up` in L: bond0 = eth1 + eth2, fast, 10.0.0.1/24.
    fn up(&mut self, active: bool) {
        let text = format!(
            "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\nxmit_hash_policy = \"layer3+4\"\nlacp_rate = \"fast\"\nlacp_active = {active}\naddress = [\"10.0.0.1/24\"]\n"
        );
        let cfg = self.dir.0.join("lagkit.toml");
        std::fs::write(&cfg, text).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.l, BIN, "up"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .die_with_test()
            .spawn()
            .expect("lagkit up starts");
        self.t0 = Instant::now();
        self.lagkit = Some(Daemon(child));
        wait_until("lagkit status answers", Duration::from_secs(10), || {
            status(&self.l).is_some()
        });
    }

    /// Waits until lagkit aggregates both links and OVS has both members
    /// current and enabled; returns the time since lagkit started.
    fn wait_formed(&self, timeout: Duration) -> Duration {
        let deadline = Instant::now() + timeout;
        loop {
            let st = status(&self.l);
            let ovs = self.ovs.lacp();
            let en = self.ovs.bond_members();
            let enabled = LINKS
                .iter()
                .all(|(_, s)| en.get(*s).is_some_and(|v| v == "enabled"));
            if ports(&st) == 2 && ovs.all_current(&OVS_MEMBERS) && enabled {
                return self.t0.elapsed();
            }
            let last = format!(
                "lagkit ports {}, OVS status {:?}, members {:?}, bond/show {en:?}",
                ports(&st),
                ovs.status,
                ovs.members
                    .iter()
                    .map(|(k, m)| (k.clone(), m.status.clone()))
                    .collect::<Vec<_>>()
            );
            assert!(
                Instant::now() < deadline,
                "no aggregate within {timeout:?}: {last}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Polls until both views agree field by field (they may differ for up
    /// to one PDU interval while something changes); panics with the last
    /// difference after `timeout`.
    fn wait_agree(&self, timeout: Duration, lk_state: u8, ovs_state: u8) -> BondStatus {
        let deadline = Instant::now() + timeout;
        loop {
            let st = status(&self.l).expect("lagkit status");
            let ovs = self.ovs.lacp();
            match agree(&st, &ovs, lk_state, ovs_state) {
                Ok(()) => return st,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "lagkit and OVS disagree:\n{e}\nlagkit: {st:#?}\nOVS: {ovs:#?}"
                ),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Compares lagkit's status with OVS's `lacp/show`, link by link; every
/// mismatch is listed.
fn agree(st: &BondStatus, ovs: &OvsLacp, lk_state: u8, ovs_state: u8) -> Result<(), String> {
    let mut bad = Vec::new();
    let mut eq = |what: String, a: String, b: String| {
        if a.to_lowercase() != b.to_lowercase() {
            bad.push(format!("  {what}: {a} != {b}"));
        }
    };
    let l = st.lacp.as_ref().expect("802.3ad status");
    // The aggregate as a whole.
    eq(
        "lagkit ports".into(),
        l.number_of_ports.to_string(),
        "2".into(),
    );
    eq(
        "lagkit partner_mac / OVS sys_id".into(),
        format!("{:?}", l.partner_mac),
        format!("{:?}", Some(&ovs.sys_id)),
    );
    eq("OVS sys_id".into(), ovs.sys_id.clone(), OVS_MAC.into());
    eq(
        "lagkit partner_priority / OVS sys_priority".into(),
        format!("{:?}", l.partner_priority),
        format!("{:?}", Some(ovs.sys_priority)),
    );
    eq(
        "OVS sys_priority".into(),
        ovs.sys_priority.to_string(),
        OVS_PRIO.to_string(),
    );
    for (lm, sm) in LINKS {
        let m = st
            .members
            .iter()
            .find(|m| m.name == lm)
            .unwrap_or_else(|| panic!("lagkit has no member {lm}"));
        let ml = m.lacp.as_ref().expect("member LACP status");
        let o = member(ovs, sm);
        let link = format!("{lm}<->{sm}");
        eq(
            format!("{link} OVS member status"),
            o.status.clone(),
            "current attached".into(),
        );
        eq(
            format!("{link} lagkit not_bundled"),
            format!("{:?}", ml.not_bundled),
            "None".into(),
        );
        // lagkit's actor = OVS's partner.
        eq(
            format!("{link} lagkit system = OVS partner sys_id"),
            l.system_mac.clone(),
            o.partner.sys_id.clone(),
        );
        eq(
            format!("{link} lagkit system priority = OVS partner sys_priority"),
            l.system_priority.to_string(),
            o.partner.sys_priority.to_string(),
        );
        eq(
            format!("{link} actor port = OVS partner port"),
            ml.actor_port.to_string(),
            o.partner.port_id.to_string(),
        );
        eq(
            format!("{link} actor key = OVS partner key"),
            ml.actor_key.to_string(),
            o.partner.key.to_string(),
        );
        eq(
            format!("{link} actor state = OVS partner state"),
            format!("{:#04x}", ml.actor_state),
            format!("{:#04x}", o.partner.state),
        );
        eq(
            format!("{link} lagkit actor state"),
            format!("{:#04x}", ml.actor_state),
            format!("{lk_state:#04x}"),
        );
        // OVS's actor = lagkit's partner.
        eq(
            format!("{link} partner mac = OVS actor sys_id"),
            ml.partner_mac.clone(),
            o.actor.sys_id.clone(),
        );
        eq(
            format!("{link} partner port = OVS actor port"),
            ml.partner_port.to_string(),
            o.actor.port_id.to_string(),
        );
        eq(
            format!("{link} partner key = OVS actor key"),
            ml.partner_key.to_string(),
            o.actor.key.to_string(),
        );
        eq(
            format!("{link} partner state = OVS actor state"),
            format!("{:#04x}", ml.partner_state),
            format!("{:#04x}", o.actor.state),
        );
        eq(
            format!("{link} OVS actor state"),
            format!("{:#04x}", o.actor.state),
            format!("{ovs_state:#04x}"),
        );
    }
    // The aggregate's keys: lagkit's actor key and OVS's key.
    eq(
        "lagkit partner_key = OVS actor key".into(),
        format!("{:?}", l.partner_key),
        format!("{:?}", Some(member(ovs, "s1").actor.key)),
    );
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad.join("\n"))
    }
}

fn ovs_version() -> String {
    run(&[&tool_path("ovs-vswitchd"), "--version"])
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

// ------------------------------------------------------------------ tests --

/// Steady state, both ends active and fast: A S G Y C D.
const ACTIVE_SYNCED: u8 = 0x3f;
/// The same, passive: S G Y C D.
const PASSIVE_SYNCED: u8 = 0x3e;

#[test]
fn lagkit_active_and_ovs_active_form_agree_field_by_field_and_carry_tcp() {
    let Some(lab) = lab("ovs_active_active", &[]) else {
        return;
    };
    let mut rig = Rig::new(lab, "aa", "active");
    rig.up(true);
    let formed = rig.wait_formed(Duration::from_secs(20));
    let st = rig.wait_agree(Duration::from_secs(5), ACTIVE_SYNCED, ACTIVE_SYNCED);
    let l = st.lacp.as_ref().unwrap();
    assert_eq!(l.partner_mac.as_deref(), Some(OVS_MAC));
    assert_eq!(l.partner_priority, Some(OVS_PRIO));
    assert!(l.aggregator_id.is_some());
    let ovs = rig.ovs.lacp();
    for (_, s) in LINKS {
        assert_eq!(
            member(&ovs, s).partner.sys_id,
            l.system_mac,
            "OVS sees lagkit's system"
        );
    }
    eprintln!(
        "{}: active/active formed {formed:?} after lagkit started",
        ovs_version()
    );
    for (lm, sm) in LINKS {
        let m = st.members.iter().find(|m| m.name == lm).unwrap();
        let ml = m.lacp.as_ref().unwrap();
        let o = &member(&ovs, sm).actor;
        eprintln!(
            "  {lm}<->{sm}: lagkit {} port {} key {} state {:#04x} | OVS {} prio {} port {} key {} state {:#04x}",
            l.system_mac, ml.actor_port, ml.actor_key, ml.actor_state,
            o.sys_id, o.sys_priority, o.port_id, o.key, o.state
        );
    }

    // TCP both ways between lagkit and a kernel endpoint behind OVS, default
    // offloads everywhere (OVS has userspace TSO on, see `Ovs::start`).
    let t = tcp_transfer(&rig.k, "10.0.0.2:7001", &rig.l, 20 << 20);
    assert_eq!(t.sent, t.received, "lagkit -> OVS -> sink");
    assert_eq!(t.sent_hash, t.recv_hash);
    eprintln!("lagkit -> sink: 20 MiB in {:?}", t.elapsed);
    let t = tcp_transfer(&rig.l, "10.0.0.1:7002", &rig.k, 20 << 20);
    assert_eq!(t.sent, t.received, "sink -> OVS -> lagkit");
    assert_eq!(t.sent_hash, t.recv_hash);
    eprintln!("sink -> lagkit: 20 MiB in {:?}", t.elapsed);
    // Still one aggregate of two afterwards.
    rig.wait_agree(Duration::from_secs(5), ACTIVE_SYNCED, ACTIVE_SYNCED);
    let rc = rig.lagkit.take().unwrap().stop();
    assert!(rc.success(), "lagkit up exits 0 on SIGTERM");
}

#[test]
fn lagkit_active_and_ovs_passive_form() {
    let Some(lab) = lab("ovs_active_passive", &[]) else {
        return;
    };
    let mut rig = Rig::new(lab, "ap", "passive");
    rig.up(true);
    let formed = rig.wait_formed(Duration::from_secs(20));
    let st = rig.wait_agree(Duration::from_secs(5), ACTIVE_SYNCED, PASSIVE_SYNCED);
    assert_eq!(st.lacp.unwrap().partner_mac.as_deref(), Some(OVS_MAC));
    assert!(rig.ovs.lacp().status.starts_with("passive"));
    eprintln!("active lagkit / passive OVS formed {formed:?} after lagkit started");
}

#[test]
fn lagkit_passive_and_ovs_passive_never_form() {
    let Some(lab) = lab("ovs_passive_passive", &[]) else {
        return;
    };
    let mut rig = Rig::new(lab, "pp", "passive");
    // A passive OVS member that has heard nothing is DEFAULTED at once and
    // never sends (checked with a capture): start lagkit against that.
    wait_until("OVS members defaulted", Duration::from_secs(10), || {
        let o = rig.ovs.lacp();
        LINKS.iter().all(|(_, s)| {
            o.members
                .get(*s)
                .is_some_and(|m| m.status.starts_with("defaulted"))
        })
    });
    rig.up(false);
    let watch = Duration::from_secs(10);
    let mut defaulted_at = None;
    while rig.t0.elapsed() < watch {
        let st = status(&rig.l).expect("lagkit status");
        let ovs = rig.ovs.lacp();
        // With no partner lagkit (like Linux bonding) may run one member
        // as an individual link: an "aggregator" of 1 with no partner.
        let l = st.lacp.as_ref().unwrap();
        assert!(
            ports(&Some(st.clone())) <= 1,
            "passive/passive formed: {st:#?}"
        );
        assert!(
            l.partner_mac
                .as_deref()
                .is_none_or(|m| m == "00:00:00:00:00:00"),
            "no partner: {st:#?}"
        );
        assert!(
            st.members.iter().filter(|m| m.transmitting).count() <= 1,
            "at most one individual link: {st:#?}"
        );
        assert!(
            !ovs.status.contains("negotiated"),
            "OVS negotiated: {ovs:#?}"
        );
        for (lm, sm) in LINKS {
            let m = st.members.iter().find(|m| m.name == lm).unwrap();
            let ml = m.lacp.as_ref().unwrap();
            assert!(ml.not_bundled.is_some(), "{lm} not bundled: {ml:?}");
            assert_eq!(ml.partner_mac, "00:00:00:00:00:00", "{lm}: {ml:?}");
            let o = member(&ovs, sm);
            assert!(o.status.starts_with("defaulted"), "OVS {sm}: {o:?}");
            assert_eq!(
                o.partner.sys_id, "00:00:00:00:00:00",
                "OVS never heard lagkit"
            );
        }
        let all_defaulted = st.members.iter().all(|m| {
            let ml = m.lacp.as_ref().unwrap();
            ml.rx_state == "DEFAULTED"
                && ml
                    .not_bundled
                    .as_deref()
                    .is_some_and(|r| r.contains("defaulted") || r.contains("never spoke"))
        });
        if all_defaulted && defaulted_at.is_none() {
            defaulted_at = Some(rig.t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let at = defaulted_at.expect("lagkit's members end DEFAULTED (partner never spoke)");
    let stats = rig.ovs.appctl(&["lacp/show-stats", "bond0"]);
    assert!(
        stats
            .lines()
            .filter(|l| l.contains("RX PDUs:"))
            .all(|l| l.trim() == "RX PDUs: 0"),
        "OVS never received an LACPDU from passive lagkit:\n{stats}"
    );
    eprintln!("passive/passive: lagkit members DEFAULTED at {at:?}; nothing formed in {watch:?}");
}

#[test]
fn tshark_decodes_the_lacpdus_lagkit_sends_to_ovs() {
    let Some(lab) = lab("ovs_tshark", &["tshark"]) else {
        return;
    };
    let mut rig = Rig::new(lab, "ts", "active");
    rig.up(true);
    rig.wait_formed(Duration::from_secs(20));
    let st = status(&rig.l).unwrap();
    let sys = st.lacp.as_ref().unwrap().system_mac.clone();
    let eth1 = st
        .members
        .iter()
        .find(|m| m.name == "eth1")
        .unwrap()
        .permanent_hw_addr
        .clone();
    // A fixed capture window on the OVS end of link 1.
    let pcap = rig.dir.0.join("s1.pcap");
    let pcap_s = pcap.to_string_lossy().into_owned();
    let tshark = tool_path("tshark");
    rig.lab.nsexec(
        &rig.s,
        &[
            "timeout",
            "10",
            &tshark,
            "-q",
            "-i",
            "s1",
            "-f",
            "ether proto 0x8809",
            "-a",
            "duration:4",
            "-w",
            &pcap_s,
        ],
    );
    let out = rig.lab.sh(&[
        &tshark,
        "-r",
        &pcap_s,
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "eth.src",
        "-e",
        "lacp.actor.sysid",
        "-e",
        "lacp.actor.state",
        "-e",
        "lacp.partner.sysid",
        "-e",
        "_ws.malformed",
        "-e",
        "_ws.expert",
    ]);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    let ours: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == eth1).collect();
    let theirs = rows.len() - ours.len();
    assert!(
        ours.len() >= 2,
        "LACPDUs from lagkit's eth1 ({eth1}) in 4 s, fast rate: {out}"
    );
    for r in &ours {
        assert_eq!(r[1], sys, "actor system = lagkit's system MAC: {r:?}");
        assert_eq!(r[3], OVS_MAC, "partner system = OVS: {r:?}");
        assert_eq!(r[2], "0x3f", "actor state A S G Y C D: {r:?}");
        assert!(r[4].is_empty() && r[5].is_empty(), "tshark flags: {r:?}");
    }
    for r in rows.iter().filter(|r| r[0] != eth1) {
        assert!(
            r[4].is_empty() && r[5].is_empty(),
            "tshark flags OVS's frame: {r:?}"
        );
    }
    eprintln!(
        "tshark: {} LACPDUs from lagkit, {theirs} from OVS in 4 s, none flagged",
        ours.len()
    );
}
