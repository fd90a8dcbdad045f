//! The seeds' findings, checked on a finished sweep: each built-in scenario
//! states what its seed found, as a ratio with a threshold, and whether
//! this run's numbers agree. Informational comparisons (no threshold in
//! the seed) carry `holds: None`.
//!
//! Runs are looked up by their configuration key (see
//! [`crate::scenario::Config::key`]); a finding whose runs failed or are
//! not in the sweep (a short sweep) is left out rather than guessed.

use crate::measure::{BondMeasure, MemberDelta};
pub use crate::report::Finding;
use crate::report::{Report, RunRecord};

impl Finding {
    fn check(claim: impl Into<String>, measured: impl Into<String>, holds: bool) -> Finding {
        Finding {
            claim: claim.into(),
            measured: measured.into(),
            holds: Some(holds),
        }
    }

    fn info(claim: impl Into<String>, measured: impl Into<String>) -> Finding {
        Finding {
            claim: claim.into(),
            measured: measured.into(),
            holds: None,
        }
    }
}

/// The run with configuration `key`, if it finished with a result.
pub fn run<'a>(r: &'a Report, key: &str) -> Option<&'a RunRecord> {
    r.runs.iter().find(|x| {
        x.key == key && x.error.is_none() && x.workload.is_some() && x.measurement.is_some()
    })
}

fn mbps(r: &RunRecord) -> f64 {
    r.workload.as_ref().map_or(0.0, |w| w.mbps)
}

fn bonds(r: &RunRecord) -> &[BondMeasure] {
    r.measurement.as_ref().map_or(&[], |m| &m.bonds)
}

fn bond<'a>(r: &'a RunRecord, host: &str) -> Option<&'a BondMeasure> {
    bonds(r).iter().find(|b| b.host == host)
}

/// The larger side of a first-member ratio (1.00: one link carries all).
fn one_sided(ratio: f64) -> f64 {
    ratio.max(1.0 - ratio)
}

/// Share of transmitted bytes on the busiest member.
pub fn busiest_tx_share(members: &[MemberDelta]) -> Option<f64> {
    let total: u64 = members.iter().map(|m| m.tx_bytes).sum();
    let max = members.iter().map(|m| m.tx_bytes).max()?;
    (total > 0).then(|| max as f64 / total as f64)
}

/// IBM's 6513 measurements test system 1.
pub fn ibm_6513(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    if let (Some(l2), Some(l4)) = (run(r, "l2"), run(r, "l4")) {
        let rx: Vec<(String, f64)> = bonds(l2)
            .iter()
            .filter_map(|b| b.rx_ratio.map(|x| (b.host.clone(), one_sided(x))))
            .collect();
        f.push(Finding::check(
            "L2/L3 switch hashing leaves one link of each receiving bond idle: receive balance ≥ 0.95 (IBM's 6513 measurements: 1.00 with src-dst-ip and two hosts)",
            rx.iter()
                .map(|(h, x)| format!("{h} rx {x:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            !rx.is_empty() && rx.iter().all(|(_, x)| *x >= 0.95),
        ));
        let q = mbps(l2) / mbps(l4).max(1e-9);
        f.push(Finding::check(
            "L2/L3 gets at most 0.6 × the throughput of L4 hashing",
            format!("{:.1} / {:.1} Mbit/s = {q:.2}", mbps(l2), mbps(l4)),
            q <= 0.6,
        ));
        let ratios: Vec<(String, f64)> = bonds(l4)
            .iter()
            .flat_map(|b| {
                [("tx", b.tx_ratio), ("rx", b.rx_ratio)]
                    .into_iter()
                    .filter_map(|(d, x)| x.map(|x| (format!("{} {d}", b.host), x)))
                    .collect::<Vec<_>>()
            })
            .collect();
        f.push(Finding::check(
            "L4 hashing balances both ways: every tx and rx ratio within 0.45–0.55",
            ratios
                .iter()
                .map(|(h, x)| format!("{h} {x:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            ratios.len() >= 4 && ratios.iter().all(|(_, x)| (0.45..=0.55).contains(x)),
        ));
    }
    let ooo = |x: &RunRecord| x.measurement.as_ref().map_or(0.0, |m| m.out_of_order_per_s);
    // Round-robin against the hashed mode on the same cabling: back to
    // back the check (bulk streams queue on both links there), through the
    // switch for information (the static L2 channel sends everything for
    // one host down one link, so round-robin's two paths merge in the
    // switch, and drops at that one link blur the count).
    for (rr, hashed, check, where_) in [
        ("rr-b2b", "xor-b2b", true, "servers back to back"),
        ("rr", "xor", false, "through the switch's static channel"),
        (
            "rr-l4",
            "xor-l4",
            false,
            "through the switch's static channel hashing on L4 ports (IBM's 6513 measurements, runs 13 and 14: 3485 against 3947 Mbit/s = 0.88)",
        ),
        (
            "none-rr",
            "none-xor",
            false,
            "through the switch, no channel",
        ),
    ] {
        let (Some(a), Some(b)) = (run(r, rr), run(r, hashed)) else {
            continue;
        };
        let claim = format!(
            "round-robin server mode shows more out-of-order segments than hashed (standard) mode, {where_}"
        );
        let measured = format!(
            "round-robin {:.1}/s (run {}), standard {:.1}/s (run {}); {:.1} against {:.1} Mbit/s",
            ooo(a),
            a.run,
            ooo(b),
            b.run,
            mbps(a),
            mbps(b)
        );
        f.push(if check {
            Finding::check(claim, measured, ooo(a) > ooo(b))
        } else {
            Finding::info(claim, measured)
        });
    }
    if let (Some(j), Some(l4)) = (run(r, "jumbo"), run(r, "l4")) {
        f.push(Finding::info(
            "MTU 9000 everywhere against 1500 (IBM's 6513 measurements: jumbo frames raise throughput mostly by lowering CPU per byte)",
            format!(
                "{:.1} against {:.1} Mbit/s ({:+.1}%)",
                mbps(j),
                mbps(l4),
                100.0 * (mbps(j) / mbps(l4).max(1e-9) - 1.0)
            ),
        ));
    }
    if let Some(l4) = run(r, "l4") {
        let p = r.runs.iter().find(|x| x.key == "jumbo-partial");
        if let Some(p) = p {
            f.push(Finding::info(
                "MTU 9000 on the servers but 1500 on the switch: large frames are dropped where the MTU is smaller",
                match (&p.error, &p.workload) {
                    (None, Some(w)) => format!(
                        "{:.1} against {:.1} Mbit/s, {:.0} retransmits/s",
                        w.mbps,
                        mbps(l4),
                        p.measurement.as_ref().map_or(0.0, |m| m.retransmits_per_s)
                    ),
                    (Some(e), _) => format!("the run failed: {}", e.lines().next().unwrap_or("")),
                    _ => "no result".into(),
                },
            ));
        }
    }
    f.extend(ibm_6513_lagkit(r));
    for (none, chan) in [("none-xor", "xor"), ("none-rr", "rr")] {
        if let (Some(n), Some(c)) = (run(r, none), run(r, chan)) {
            f.push(Finding::info(
                format!(
                    "servers {} with no channel on the switch against a static channel (the switch sees the servers' MAC move between ports)",
                    if chan == "rr" { "round-robin" } else { "standard" }
                ),
                format!("{:.1} against {:.1} Mbit/s", mbps(n), mbps(c)),
            ));
        }
    }
    f
}

/// The run with configuration `key` whose bonds and channels were waited
/// for (finished with a result, or not formed as expected).
fn waited<'a>(r: &'a Report, key: &str) -> Option<&'a RunRecord> {
    r.runs.iter().find(|x| {
        x.key == key
            && x.formation
                .as_ref()
                .is_some_and(|f| f.not_formed_as_expected() || (f.formed && x.error.is_none()))
    })
}

/// Every tx and rx balance ratio of a run's bonds, named `host dir`.
fn ratios(x: &RunRecord) -> Vec<(String, f64)> {
    bonds(x)
        .iter()
        .flat_map(|b| {
            [("tx", b.tx_ratio), ("rx", b.rx_ratio)]
                .into_iter()
                .filter_map(|(d, v)| v.map(|v| (format!("{} {d}", b.host), v)))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn list(v: &[(String, f64)]) -> String {
    v.iter()
        .map(|(h, x)| format!("{h} {x:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The seed-000 rows only lagkit's switch runs: PAgP's pairings, the
/// static channel hashing on L4 ports, and the MAC moves of no channel.
fn ibm_6513_lagkit(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    // IBM's 6513 measurements, 6.3.1: "a LAN port in desirable mode can form an
    // EtherChannel with another LAN port that is in either auto or
    // desirable mode. Two LAN ports in auto mode cannot"; a silent port
    // may channel with a partner that sends no PAgP, a non-silent one
    // needs PAgP from it.
    for (key, forms, what) in [
        (
            "pagp-d-pagp",
            true,
            "desirable non-silent facing a PAgP desirable server",
        ),
        (
            "pagp-u-pagp",
            true,
            "auto non-silent facing a PAgP desirable server",
        ),
        (
            "pagp-l3",
            true,
            "desirable non-silent (L3) facing a PAgP desirable server",
        ),
        (
            "pagp-ds-xor",
            true,
            "desirable silent facing a server that speaks no PAgP (after the silent wait)",
        ),
        (
            "pagp-d-xor",
            false,
            "desirable non-silent facing a server that speaks no PAgP",
        ),
        (
            "pagp-d-xor-l3",
            false,
            "desirable non-silent (L3) facing a server that speaks no PAgP",
        ),
        (
            "pagp-u-xor",
            false,
            "auto facing a server that speaks no PAgP",
        ),
        (
            "pagp-d-lacp",
            false,
            "desirable non-silent facing an 802.3ad (LACP) server",
        ),
        ("pagp-u-pagpu", false, "auto facing a PAgP auto server"),
    ] {
        let Some(x) = waited(r, key) else { continue };
        let Some(fm) = &x.formation else { continue };
        f.push(Finding::check(
            format!(
                "PAgP {what} {} a channel (IBM's 6513 measurements, 6.3.1)",
                if forms { "forms" } else { "does not form" }
            ),
            if fm.formed {
                format!("formed in {:.1} s (run {})", fm.seconds, x.run)
            } else {
                format!(
                    "not formed after {:.0} s (run {}): {}",
                    fm.seconds,
                    x.run,
                    fm.why.join("; ")
                )
            },
            fm.formed == forms,
        ));
    }
    // A formed PAgP channel carries what an LACP one does: the same
    // switch hashing over the same members.
    if let (Some(p), Some(l4)) = (run(r, "pagp-d-pagp"), run(r, "l4")) {
        let rs = ratios(p);
        let q = mbps(p) / mbps(l4).max(1e-9);
        f.push(Finding::check(
            "a PAgP channel (desirable, L4) balances like LACP: every ratio within 0.45–0.55 and at least 0.9 × LACP L4's throughput (IBM's 6513 measurements: runs 19 and 17, 3406 against 3946 Mbit/s = 0.86, its servers speaking no PAgP)",
            format!("{}; {:.1} / {:.1} Mbit/s = {q:.2}", list(&rs), mbps(p), mbps(l4)),
            rs.len() >= 4 && rs.iter().all(|(_, x)| (0.45..=0.55).contains(x)) && q >= 0.9,
        ));
    }
    // IBM's 6513 measurements found PAgP with L3 hashing (run 23) "much better than
    // expected" and did not know why; its servers spoke no PAgP, so its
    // desirable non-silent ports most likely never bundled and forwarded
    // each on its own, to wherever the servers' MACs were last learned.
    // A channel that forms hashes on the two addresses like LACP does.
    if let Some(p) = run(r, "pagp-l3") {
        let rx: Vec<(String, f64)> = bonds(p)
            .iter()
            .filter_map(|b| b.rx_ratio.map(|x| (format!("{} rx", b.host), one_sided(x))))
            .collect();
        let lacp = run(r, "l2").map_or(String::new(), |l| {
            format!("; LACP L3 (run {}) {:.1} Mbit/s", l.run, mbps(l))
        });
        f.push(Finding::check(
            "a formed PAgP channel hashing on IP addresses leaves one link of each receiving bond idle, as LACP does: receive balance ≥ 0.95 (IBM's 6513 run 23: 0.50/0.51 at 2915 Mbit/s, which does not reproduce with a channel that forms)",
            format!("{}; {:.1} Mbit/s{lacp}", list(&rx), mbps(p)),
            !rx.is_empty() && rx.iter().all(|(_, x)| *x >= 0.95),
        ));
    }
    // IBM's 6513 own PAgP runs: desirable non-silent ports facing AIX
    // `standard` servers, which speak no PAgP. The channel cannot form; a
    // Catalyst's ports then stand alone (`I`) and forward one by one, and
    // so do lagkit's. The servers send on both links, so the switch learns
    // their MACs on one port, then the other, as with no channel at all.
    if let Some(p) = run(r, "pagp-d-xor") {
        let moves = p
            .measurement
            .as_ref()
            .map_or(0, |m| m.mac_moves.values().sum::<u64>());
        let l4 = run(r, "l4").map_or(String::new(), |l| {
            format!(
                " = {:.2} × LACP L4's {:.1} (run {})",
                mbps(p) / mbps(l).max(1e-9),
                mbps(l),
                l.run
            )
        });
        f.push(Finding::check(
            "PAgP desirable non-silent facing servers that speak no PAgP: the ports stand alone and still carry the workload, the servers' MACs moving between them (IBM's 6513 measurements: runs 19 and 17, 3406 against 3946 Mbit/s = 0.86)",
            format!("{:.1} Mbit/s{l4}; {moves} MAC moves", mbps(p)),
            mbps(p) > 0.0 && moves > 0,
        ));
    }
    // Run 23, the same at L3, "much better than expected" (balance
    // 0.50/0.51): a channel would leave one receive link idle (one address
    // pair), stand-alone ports send to wherever each MAC was last learned,
    // which moves with every frame the servers send.
    if let Some(p) = run(r, "pagp-d-xor-l3") {
        let rx: Vec<(String, f64)> = bonds(p)
            .iter()
            .filter_map(|b| b.rx_ratio.map(|x| (format!("{} rx", b.host), one_sided(x))))
            .collect();
        f.push(Finding::check(
            "PAgP desirable non-silent at L3 facing servers that speak no PAgP: stand-alone ports spread what the servers receive over both links (receive balance < 0.95), which explains IBM's 6513 run 23 (0.50/0.51 at 2915 Mbit/s, \"much better than expected\")",
            format!("{}; {:.1} Mbit/s", list(&rx), mbps(p)),
            !rx.is_empty() && rx.iter().all(|(_, x)| *x < 0.95),
        ));
    }
    // IBM's 6513 measurements: "manual-on-with-standard-port-aggregation" performs as
    // LACP-active with 802.3ad (runs 11 and 17: 3947 and 3946 Mbit/s).
    if let (Some(m), Some(l4)) = (run(r, "xor-l4"), run(r, "l4")) {
        let rs = ratios(m);
        let q = mbps(m) / mbps(l4).max(1e-9);
        f.push(Finding::check(
            "a static (mode on) channel hashing on L4 ports, servers standard, balances and performs as LACP L4: every ratio within 0.45–0.55 and at least 0.9 × its throughput (IBM's 6513 measurements: runs 11 and 17, 3947 against 3946 Mbit/s = 1.00)",
            format!("{}; {:.1} / {:.1} Mbit/s = {q:.2}", list(&rs), mbps(m), mbps(l4)),
            rs.len() >= 4 && rs.iter().all(|(_, x)| (0.45..=0.55).contains(x)) && q >= 0.9,
        ));
    }
    // No channel: each server's two links end on two access ports, so the
    // switch learns its MAC on one, then the other.
    if let Some(n) = run(r, "none-xor") {
        let (moves, secs) = n
            .measurement
            .as_ref()
            .map_or((0, 0.0), |m| (m.mac_moves.values().sum::<u64>(), m.seconds));
        let per_s = moves as f64 / secs.max(1e-9);
        let against = run(r, "xor-l4")
            .or_else(|| run(r, "xor"))
            .map_or(String::new(), |c| {
                format!(
                    "; {:.1} against {:.1} Mbit/s with a static channel (run {}) = {:.2}",
                    mbps(n),
                    mbps(c),
                    c.run,
                    mbps(n) / mbps(c).max(1e-9)
                )
            });
        f.push(Finding::check(
            "with no channel on the switch the servers' MACs move between its ports: at least 1 move per second of the run (IBM's 6513 measurements: channel groups defined beat none; no channel reached 2954 against 3947 Mbit/s = 0.75, runs 25 and 11)",
            format!("{moves} moves in {secs:.1} s = {per_s:.1}/s{against}"),
            per_s >= 1.0,
        ));
    }
    f
}

/// HP's APA paper: k links against k × one link, per direction.
pub fn hp_apa(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    for (dir, what) in [
        ("tx", "server transmits"),
        ("rx", "server receives"),
        ("both", "both directions"),
    ] {
        let Some(base) = run(r, &format!("k1-{dir}")) else {
            continue;
        };
        let one = mbps(base);
        for k in [2usize, 4, 8] {
            let Some(x) = run(r, &format!("k{k}-{dir}")) else {
                continue;
            };
            let q = mbps(x) / (k as f64 * one).max(1e-9);
            let cpu = if x.flags.iter().any(|g| g.starts_with("CPU-bound")) {
                " (CPU-bound)"
            } else if x.flags.iter().any(|g| g.starts_with("starved")) {
                " (starved: steal)"
            } else {
                ""
            };
            f.push(Finding::check(
                format!(
                    "{k} links reach at least 0.95 of {k} × one link, {what} (HP's APA paper: 0.99–1.00)"
                ),
                format!("{:.1} Mbit/s against {k} × {one:.1} = {q:.3}{cpu}", mbps(x)),
                q >= 0.95,
            ));
        }
    }
    f
}

/// the bityard LPM post: which link the data takes, per hash mode.
pub fn lpm(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    for (mode, aix) in [
        ("src_port", true),
        ("dst_port", true),
        ("src_dst_port", true),
        ("strong", false),
        ("adaptive", false),
    ] {
        let Some(x) = run(r, mode) else { continue };
        let Some(share) = bond(x, "src").and_then(|b| busiest_tx_share(&b.members)) else {
            continue;
        };
        let measured = format!(
            "{:.1}% of the source's bytes on its busiest link, {:.1} Mbit/s",
            100.0 * share,
            mbps(x)
        );
        f.push(if aix {
            Finding::check(
                format!("AIX hash_mode {mode} puts at least 90% of the data on one link (sequential ports share their low bit)"),
                measured,
                share >= 0.90,
            )
        } else {
            Finding::check(
                format!("{mode} spreads the migrations: under 90% of the data on one link"),
                measured,
                share < 0.90,
            )
        });
    }
    f
}

/// IBM's z/VM report: 2 links against 1.
pub fn zvm(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    for load in ["stream", "rr"] {
        for conns in [1, 10, 50] {
            let (Some(a), Some(b)) = (
                run(r, &format!("k1-{load}-{conns}")),
                run(r, &format!("k2-{load}-{conns}")),
            ) else {
                continue;
            };
            let (va, vb, unit) = if load == "rr" {
                let t = |x: &RunRecord| x.workload.as_ref().map_or(0.0, |w| w.transactions_per_s);
                (t(a), t(b), "transactions/s")
            } else {
                (mbps(a), mbps(b), "Mbit/s")
            };
            f.push(Finding::info(
                format!(
                    "2 links against 1, {load}, {conns} connection{} (IBM's z/VM report: stream +6–15% with one connection, +84–100% with many; rr +5–57%)",
                    if conns == 1 { "" } else { "s" }
                ),
                format!(
                    "{vb:.1} against {va:.1} {unit} ({:+.0}%)",
                    100.0 * (vb / va.max(1e-9) - 1.0)
                ),
            ));
        }
    }
    f
}

/// IBM's xSeries 460 report: balance-alb over k links against one.
pub fn linux_alb(r: &Report) -> Vec<Finding> {
    let mut f = Vec::new();
    for (dir, what) in [("rx", "receives"), ("tx", "transmits")] {
        let Some(base) = run(r, &format!("k1-{dir}")) else {
            continue;
        };
        for k in [2usize, 3, 4] {
            let Some(x) = run(r, &format!("k{k}-{dir}")) else {
                continue;
            };
            let q = mbps(x) / mbps(base).max(1e-9);
            f.push(Finding::info(
                format!("balance-alb, server {what}: {k} links against 1 (IBM's xSeries 460 report: 3.624× with 4 adapters)"),
                format!("{:.1} against {:.1} Mbit/s = {q:.2}×", mbps(x), mbps(base)),
            ));
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, tx: u64) -> MemberDelta {
        MemberDelta {
            name: name.into(),
            tx_packets: tx / 1000,
            tx_bytes: tx,
            rx_packets: 0,
            rx_bytes: 0,
        }
    }

    #[test]
    fn busiest_share() {
        assert_eq!(busiest_tx_share(&[]), None);
        assert_eq!(busiest_tx_share(&[m("e1", 0), m("e2", 0)]), None);
        assert_eq!(busiest_tx_share(&[m("e1", 950), m("e2", 50)]), Some(0.95));
        assert_eq!(one_sided(0.02), 0.98);
    }
}
