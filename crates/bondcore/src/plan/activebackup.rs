//! active-backup: one member carries everything and is the only one whose
//! frames go up; the others stand by. Which one is a choice with memory
//! (the current active member stays unless a rule says otherwise), so the
//! current choice goes in and the next comes out.

use super::MemberView;
use crate::settings::Reselect;

/// The member that carries traffic next, given the `current` one.
///
/// A usable `primary` takes over per `primary_reselect` (`better` acts as
/// `always`: no speeds are compared); a backup adapter (AIX) is left for a
/// recovered main member when `auto_recovery` is on; otherwise the current
/// member stays while usable; with none, the primary, then the first usable
/// main member, then the first usable backup adapter.
pub fn choose(
    view: &[MemberView],
    current: Option<usize>,
    reselect: Reselect,
    auto_recovery: bool,
) -> Option<usize> {
    let usable = |i: usize| view.get(i).is_some_and(|m| m.usable);
    let primary = view.iter().position(|m| m.primary).filter(|&p| usable(p));
    let current = current.filter(|&a| usable(a));
    let on_backup = current.is_some_and(|a| view[a].backup);
    let first_main = (0..view.len()).find(|&i| usable(i) && !view[i].backup);
    match (current, primary) {
        (Some(c), Some(p)) if c != p => match reselect {
            Reselect::Always | Reselect::Better => Some(p),
            Reselect::Failure => Some(c),
        },
        (Some(_), _) if on_backup && auto_recovery && first_main.is_some() => {
            primary.or(first_main)
        }
        (Some(c), _) => Some(c),
        (None, Some(p)) => Some(p),
        (None, None) => {
            first_main.or_else(|| (0..view.len()).find(|&i| usable(i) && view[i].backup))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::view;
    use super::super::{plan, Context, Plan, PlanState};
    use super::*;
    use crate::settings::{BondMode, Settings};

    fn settings(primary: Option<&str>, reselect: Reselect) -> Settings {
        let mut s = Settings::new("b", &["m0", "m1", "m2"], BondMode::ActiveBackup);
        s.primary = primary.map(String::from);
        s.primary_reselect = reselect;
        s
    }

    /// Plans successive member states, returning the active member of each.
    fn run(s: &Settings, primary: Option<usize>, steps: &[&[usize]]) -> Vec<Option<usize>> {
        let mut state = PlanState::default();
        steps
            .iter()
            .map(|up| {
                let mut v = view(3, up);
                if let Some(p) = primary {
                    v[p].primary = true;
                }
                let p = plan(&v, s, &mut state, &Context::default());
                assert_eq!(p.transmitting(), p.active().as_slice());
                for m in 0..3 {
                    assert_eq!(
                        p.collects(m),
                        p.active() == Some(m),
                        "only the active member receives"
                    );
                }
                assert!(matches!(p, Plan::ActiveBackup { .. }));
                state.active
            })
            .collect()
    }

    #[test]
    fn first_usable_member_then_failover_and_it_stays() {
        let s = settings(None, Reselect::Always);
        let got = run(&s, None, &[&[0, 1, 2], &[1, 2], &[0, 1, 2], &[], &[2]]);
        assert_eq!(got, [Some(0), Some(1), Some(1), None, Some(2)]);
    }

    #[test]
    fn primary_reselect_always_takes_the_primary_back() {
        let s = settings(Some("m1"), Reselect::Always);
        let got = run(&s, Some(1), &[&[0, 1, 2], &[0, 2], &[0, 1, 2]]);
        assert_eq!(got, [Some(1), Some(0), Some(1)]);
    }

    #[test]
    fn primary_reselect_better_acts_as_always() {
        let s = settings(Some("m1"), Reselect::Better);
        let got = run(&s, Some(1), &[&[0, 2], &[0, 1, 2]]);
        assert_eq!(got, [Some(0), Some(1)]);
    }

    #[test]
    fn primary_reselect_failure_waits_for_the_current_member_to_fail() {
        let s = settings(Some("m1"), Reselect::Failure);
        let got = run(&s, Some(1), &[&[0, 2], &[0, 1, 2], &[1, 2]]);
        assert_eq!(got, [Some(0), Some(0), Some(1)]);
    }

    #[test]
    fn backup_adapter_only_when_every_member_failed_and_left_on_recovery() {
        let mut v = view(3, &[2]);
        v[2].backup = true;
        let a = choose(&v, None, Reselect::Always, true);
        assert_eq!(a, Some(2), "only the backup adapter is usable");
        v[0].usable = true;
        assert_eq!(
            choose(&v, a, Reselect::Always, true),
            Some(0),
            "auto_recovery"
        );
        assert_eq!(
            choose(&v, a, Reselect::Always, false),
            Some(2),
            "no auto_recovery"
        );
        assert_eq!(
            choose(&v, None, Reselect::Always, false),
            Some(0),
            "main first"
        );
    }
}
