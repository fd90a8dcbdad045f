//! Several watchers on one member, merged by an explicit policy (teamd's
//! link_watch with several watchers): `any` — up if any watcher says up;
//! `all` — up only if every watcher says up.

/// How several watchers' verdicts combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Combine {
    /// Up if any watcher is up (Linux `arp_all_targets=any` style).
    Any,
    /// Up only if all watchers are up; the safe default.
    #[default]
    All,
}

/// The latest verdict of each watcher of one member.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Watchers {
    verdicts: Vec<(&'static str, bool)>,
    policy: Combine,
}

impl Watchers {
    /// No watchers yet; with none, a member counts as up.
    pub fn new(policy: Combine) -> Watchers {
        Watchers {
            verdicts: Vec::new(),
            policy,
        }
    }

    /// Records watcher `name`'s verdict.
    pub fn set(&mut self, name: &'static str, up: bool) {
        match self.verdicts.iter_mut().find(|(n, _)| *n == name) {
            Some(v) => v.1 = up,
            None => self.verdicts.push((name, up)),
        }
    }

    /// The combined verdict.
    pub fn up(&self) -> bool {
        if self.verdicts.is_empty() {
            return true;
        }
        match self.policy {
            Combine::Any => self.verdicts.iter().any(|v| v.1),
            Combine::All => self.verdicts.iter().all(|v| v.1),
        }
    }

    /// Each watcher and its verdict, for status output.
    pub fn verdicts(&self) -> &[(&'static str, bool)] {
        &self.verdicts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_and_all() {
        let mut w = Watchers::new(Combine::All);
        assert!(w.up());
        w.set("carrier", true);
        w.set("arp", false);
        assert!(!w.up());
        w.set("arp", true);
        assert!(w.up());
        let mut w = Watchers::new(Combine::Any);
        w.set("carrier", false);
        w.set("arp", true);
        assert!(w.up());
        w.set("arp", false);
        assert!(!w.up());
        assert_eq!(w.verdicts().len(), 2);
    }
}
