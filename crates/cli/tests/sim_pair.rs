//! `lagkit sim pair` as a user runs it, on the example bond and switch
//! configurations: the verdicts the namespace tests of `lagkit up` facing
//! `lagkit switch` reach, here in virtual time without root.

mod common;

fn example(name: &str) -> String {
    format!("{}/../../examples/sim/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn pair(host: &str, switch: &str, more: &[&str]) -> (i32, String, String) {
    pair_files(&example(host), &example(switch), more)
}

fn pair_files(host: &str, switch: &str, more: &[&str]) -> (i32, String, String) {
    let mut all = vec!["pair", "--host", host, "--switch", switch];
    all.extend_from_slice(more);
    common::lagkit("sim", &all)
}

/// The virtual time of the verdict's "forms at T".
fn formed_at(out: &str) -> f64 {
    let at = out
        .split("the channel forms at ")
        .nth(1)
        .unwrap_or_else(|| panic!("no formation time: {out}"));
    at.split('s').next().unwrap().parse().unwrap()
}

#[test]
fn lacp_active_forms_and_passive_facing_passive_does_not() {
    let (code, out, err) = pair("host-lacp.toml", "switch-lacp.cfg", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("host bond0 (802.3ad, LACP active fast; eth1, eth2) <-> switch access1 channel-group 1 mode active (GigabitEthernet1/0/1, GigabitEthernet1/0/2), 2 links"),
        "{out}"
    );
    assert!(formed_at(&out) < 3.0, "{out}");
    assert!(out.contains("all 2 links carry it at both ends"), "{out}");
    assert!(
        out.contains("switch GigabitEthernet1/0/1: P bundled"),
        "{out}"
    );
    // The switch passive facing an active host forms too.
    let (_, out, _) = pair("host-lacp.toml", "switch-lacp-passive.cfg", &["--quiet"]);
    assert!(out.contains("the channel forms at"), "{out}");

    let (code, out, _) = pair(
        "host-lacp-passive.toml",
        "switch-lacp-passive.cfg",
        &["--quiet"],
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("verdict: the channel does not form: no link carries it at both ends (host 0 of 2, switch 0 of 2, 2 stand-alone)"),
        "{out}"
    );
    assert!(
        out.contains("LACP heard no partner (defaulted): not aggregated"),
        "{out}"
    );
}

#[test]
fn pagp_facing_a_host_without_pagp_joins_after_the_silent_wait_or_never() {
    let (_, out, _) = pair("host-static.toml", "switch-pagp.cfg", &[]);
    let t = formed_at(&out);
    assert!(
        (15.0..20.0).contains(&t),
        "after the 15 s silent wait: {out}"
    );
    let (_, out, _) = pair(
        "host-static.toml",
        "switch-pagp-non-silent.cfg",
        &["--quiet"],
    );
    assert!(
        out.contains("verdict: the channel does not form at the switch: the host sends on all 2 links as one static channel, but the switch bundles 0 (2 stand alone)"),
        "{out}"
    );
    // A bond that speaks PAgP forms with either.
    let (_, out, _) = pair("host-pagp.toml", "switch-pagp-non-silent.cfg", &["--quiet"]);
    assert!(out.contains("the channel forms at"), "{out}");
    assert!(formed_at(&out) < 5.0, "{out}");
}

#[test]
fn mode_on_facing_lacp_is_a_black_hole_and_says_so() {
    let (_, out, _) = pair("host-lacp.toml", "switch-on.cfg", &["--quiet"]);
    assert!(
        out.contains("verdict: BLACK HOLE: the switch (mode on) bundles 2 of 2 links and spreads frames over them, but the host aggregates 0"),
        "{out}"
    );
    assert!(
        out.contains("switch GigabitEthernet1/0/1: mismatch: the partner speaks LACP, this port runs mode on"),
        "{out}"
    );
    // A static bond facing mode on is the right pair.
    let (_, out, _) = pair("host-static.toml", "switch-on.cfg", &["--quiet"]);
    assert!(out.contains("all 2 links carry it at both ends"), "{out}");
}

#[test]
fn a_cut_link_leaves_the_channel_on_the_other() {
    let (_, out, _) = pair(
        "host-lacp.toml",
        "switch-lacp.cfg",
        &["--cut", "2@10s", "--duration", "20s"],
    );
    assert!(
        out.contains("switch GigabitEthernet1/0/2 (D down: no carrier)"),
        "{out}"
    );
    assert!(
        out.contains("verdict: the channel forms on 1 of 2 links"),
        "{out}"
    );
    assert!(
        out.contains("  link 2: host: no carrier; switch: D down"),
        "{out}"
    );
}

#[test]
fn bad_inputs_are_named() {
    let (code, _, err) = pair("host-lacp.toml", "switch-lacp.cfg", &["--links", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("cable at most 2"), "{err}");
    let dir = std::env::temp_dir().join(format!("lk-pair-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let two = dir.join("two.cfg");
    std::fs::write(
        &two,
        "interface gi1/0/1\n channel-group 1 mode active\ninterface gi1/0/2\n channel-group 2 mode active\n",
    )
    .unwrap();
    let host = example("host-lacp.toml");
    let (code, _, err) = pair_files(&host, two.to_str().unwrap(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("name one with --channel"), "{err}");
    let bad = dir.join("bad.cfg");
    std::fs::write(&bad, "interface gi1/0/1\n channel-group 1 mode sideways\n").unwrap();
    let (code, _, err) = pair_files(&host, bad.to_str().unwrap(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.cfg:2"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
