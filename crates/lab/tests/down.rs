//! `lab down` of a lab that does not exist does nothing and fails nothing;
//! a stale state file (its processes and namespaces long gone) is removed.

use lagkit_lab::lab::{down, LabState, ProcRecord};
use lagkit_lab::sys::ProcId;

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lklab-down-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn down_of_a_lab_that_does_not_exist_is_a_noop() {
    let root = scratch("noop");
    let before = lagkit_netns::list();
    let r = down(&root, "never-brought-up");
    assert!(r.was_noop(), "{r:?}");
    assert!(r.errors.is_empty(), "{r:?}");
    assert!(!root.exists(), "down creates nothing");
    assert_eq!(lagkit_netns::list(), before);
    // Twice is the same.
    assert!(down(&root, "never-brought-up").was_noop());
}

#[test]
fn down_after_a_crash_removes_a_stale_state_file() {
    let root = scratch("stale");
    std::fs::create_dir_all(root.join("crashed")).unwrap();
    std::fs::write(root.join("crashed/h1.toml"), "x").unwrap();
    // A process record whose PID now belongs to someone else (us, with
    // another start time) must not be signalled.
    let me = ProcId::of(std::process::id() as i32).unwrap();
    let stale = ProcId {
        start: me.start.wrapping_add(12345),
        ..me.clone()
    };
    let st = LabState {
        lab: "crashed".into(),
        topology_file: "x.toml".into(),
        dir: root.join("crashed"),
        phase: "starting".into(),
        namespaces: vec!["lklab-crashed-h1".into()],
        processes: vec![ProcRecord {
            what: "lagkit up h1".into(),
            proc: stale,
        }],
        ovs: vec![],
    };
    std::fs::write(
        LabState::path(&root, "crashed"),
        serde_json::to_string(&st).unwrap(),
    )
    .unwrap();
    let r = down(&root, "crashed");
    assert!(r.had_state);
    assert_eq!(r.processes, 0, "{r:?}");
    assert!(r.errors.is_empty(), "{r:?}");
    assert!(!LabState::path(&root, "crashed").exists());
    assert!(!root.join("crashed").exists());
    assert!(me.alive(), "still here");
    let _ = std::fs::remove_dir_all(&root);
}
