//! `lagkit sim pagp` as a user runs it: the verdicts for the mode pairs the
//! reference names, the hot-standby port, a pcap tshark can read, and usage
//! errors that say what to fix.

mod common;

fn sim(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["pagp"];
    all.extend_from_slice(args);
    common::lagkit("sim", &all)
}

#[test]
fn verdicts_for_the_mode_pairs() {
    let (code, out, err) = sim(&["--a", "desirable", "--b", "auto", "--links", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("verdict: A and B formed a channel"), "{out}");
    assert!(out.contains("3 ports carrying traffic"), "{out}");
    assert!(
        out.contains("a1 pagp: portUp (partner names us) -> biDirectional"),
        "{out}"
    );

    let (_, out, _) = sim(&["--a", "auto", "--b", "auto", "--quiet"]);
    assert!(
        out.contains("no channel formed: both ends are auto"),
        "{out}"
    );

    let (_, out, _) = sim(&["--a", "desirable,non-silent", "--b", "off", "--quiet"]);
    assert!(out.contains("no channel formed: A is non-silent"), "{out}");

    let (_, out, _) = sim(&["--a", "desirable,silent-wait=5s", "--b", "off"]);
    assert!(
        out.contains("5.000s  A a1 pagp: portUp (no PAgP heard for the silent wait) -> upData"),
        "{out}"
    );
    assert!(out.contains("without hearing PAgP"), "{out}");
}

#[test]
fn hot_standby_and_a_cut_link_in_the_timeline() {
    // The restored, preferred port takes the traffic back after the join wait (2 s).
    let (code, out, err) = sim(&[
        "--a",
        "max-ports=1,port-prio=100/200",
        "--b",
        "auto,learn=physical-port",
        "--cut",
        "2@20s",
        "--restore",
        "2@40s",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("20.000s  A a1 joins the channel"), "{out}");
    assert!(
        out.contains("42.000s  A a1 leaves the channel (hotStandby)"),
        "{out}"
    );
    assert!(out.contains("learns physical-port"), "{out}");
    assert!(
        out.contains("1 port carrying traffic at the end, 1 in hot standby"),
        "{out}"
    );
    assert!(out.contains("Flush"), "{out}");
}

#[test]
fn pcap_is_written() {
    let dir = std::env::temp_dir().join(format!("lkt-sim-pagp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("pagp.pcap");
    let (code, out, err) = sim(&["--quiet", "--pcap", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote "), "{out}");
    assert!(std::fs::metadata(&p).unwrap().len() > 100);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_say_what_to_fix() {
    for (args, says) in [
        (&["--a", "off"][..], "only B can be a device without PAgP"),
        (
            &["--b", "learn=mac"][..],
            "aggregation-port or physical-port",
        ),
        (&["--a", "max-ports=0"][..], "at least one port"),
        (&["--a", "port-prio=300"][..], "not a valid number"),
        (&["--cut", "9@1s"][..], "link 9 does not exist"),
        (&["--a", "turbo"][..], "unknown setting"),
    ] {
        let (code, _, err) = sim(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
