//! Running the bonds of one configuration file: each bond on a thread of
//! its own, started all-or-nothing, and a reload applied bond by bond.
//!
//! What a reload does is decided by a pure function ([`changes`]): an
//! unchanged bond is left alone, a changed one gets its new settings (it
//! applies them in place or restarts itself, see [`Bond::reconfigure`]), a
//! new one starts and a removed one stops.

use crate::daemon::{Bond, BondError};
use crate::settings::Settings;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Why a bond could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The bond refused to start.
    #[error("{0}")]
    Bond(#[from] BondError),
    /// No thread for it.
    #[error("cannot start a thread: {0}")]
    Thread(#[from] std::io::Error),
    /// Its thread ended before it reported.
    #[error("bond {0}: its thread died while starting")]
    Died(String),
}

/// What a reload does to one bond.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Running with equal settings: left alone.
    Keep(String),
    /// Running with other settings: they are sent to it.
    Update(Settings),
    /// New in the configuration.
    Start(Settings),
    /// Gone from the configuration.
    Stop(String),
}

/// The changes that take bonds running with `running` to `new`. A `strong`
/// seed drawn at random is kept across the reload.
pub fn changes(running: &[Settings], new: Vec<Settings>) -> Vec<Change> {
    let mut out = Vec::new();
    for mut s in new {
        match running.iter().find(|r| r.name == s.name) {
            Some(r) => {
                s.keep_seed_of(r);
                out.push(if *r == s {
                    Change::Keep(s.name)
                } else {
                    Change::Update(s)
                });
            }
            None => out.push(Change::Start(s)),
        }
    }
    for r in running {
        if !out.iter().any(|c| c.name() == r.name) {
            out.push(Change::Stop(r.name.clone()));
        }
    }
    out
}

impl Change {
    /// The bond it concerns.
    pub fn name(&self) -> &str {
        match self {
            Change::Keep(n) | Change::Stop(n) => n,
            Change::Update(s) | Change::Start(s) => &s.name,
        }
    }
}

/// One bond on its thread.
struct Running {
    settings: Settings,
    stop: Arc<AtomicBool>,
    /// Set before `stop`: exit leaving the data path to the next daemon.
    handoff: Arc<AtomicBool>,
    updates: mpsc::Sender<Settings>,
    handle: JoinHandle<()>,
}

/// The running bonds of one configuration.
#[derive(Default)]
pub struct Supervisor {
    running: Vec<Running>,
}

impl Supervisor {
    /// Starts every bond, or none: if one fails, those already started
    /// stop (giving their members back) and the error returns.
    pub fn start(settings: Vec<Settings>) -> Result<Supervisor, SpawnError> {
        let mut sup = Supervisor::default();
        for s in settings {
            match spawn(s) {
                Ok(r) => sup.running.push(r),
                Err(e) => {
                    sup.stop();
                    return Err(e);
                }
            }
        }
        Ok(sup)
    }

    /// Applies a reloaded configuration (see [`changes`]); a bond that
    /// cannot start is logged and left out.
    pub fn reload(&mut self, new: Vec<Settings>) {
        let now: Vec<Settings> = self.running.iter().map(|r| r.settings.clone()).collect();
        for c in changes(&now, new) {
            let i = self
                .running
                .iter()
                .position(|r| r.settings.name == c.name());
            match (c, i) {
                (Change::Update(s), Some(i)) => {
                    tracing::info!(bond = %s.name, "configuration changed");
                    let r = &mut self.running[i];
                    let _ = r.updates.send(s.clone());
                    r.settings = s;
                }
                (Change::Start(s), _) => match spawn(s) {
                    Ok(r) => self.running.push(r),
                    Err(e) => tracing::error!("{e}"),
                },
                (Change::Stop(name), Some(i)) => {
                    tracing::info!(bond = %name, "removed from the configuration: stopping");
                    stop_bond(self.running.remove(i));
                }
                _ => {}
            }
        }
    }

    /// Reports (and forgets) a bond whose thread ended on its own, which
    /// it cannot short of a bug.
    pub fn reap(&mut self) {
        if let Some(i) = self.running.iter().position(|r| r.handle.is_finished()) {
            let r = self.running.remove(i);
            tracing::error!(bond = %r.settings.name, "bond thread ended unexpectedly");
            let _ = r.handle.join();
        }
    }

    /// Stops every bond; each gives its members back.
    pub fn stop(self) {
        for r in self.running {
            stop_bond(r);
        }
    }

    /// Stops every bond leaving its data path forwarding for the next
    /// daemon to adopt ([`Bond::handoff`]).
    pub fn handoff(self) {
        for r in self.running {
            r.handoff.store(true, Ordering::Relaxed);
            stop_bond(r);
        }
    }
}

/// Starts one bond on its own thread; returns once it is up (or failed).
/// Settings sent to it later apply in place, or restart the bond.
fn spawn(s: Settings) -> Result<Running, SpawnError> {
    let stop = Arc::new(AtomicBool::new(false));
    let handoff = Arc::new(AtomicBool::new(false));
    let ho = handoff.clone();
    let (tx, rx) = mpsc::channel();
    let (utx, urx) = mpsc::channel::<Settings>();
    let st = stop.clone();
    let settings = s.clone();
    let name = s.name.clone();
    let handle = std::thread::Builder::new()
        .name(format!("lagkit-{name}"))
        .spawn(move || {
            let mut s = s;
            let mut first = Some(tx);
            loop {
                let mut b = match Bond::start(s.clone()) {
                    Ok(b) => b,
                    Err(e) => {
                        match first.take() {
                            Some(tx) => {
                                let _ = tx.send(Err(e));
                            }
                            None => tracing::error!("restart failed: {e}"),
                        }
                        return;
                    }
                };
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(()));
                }
                let again = b.run_with(&st, &urx);
                if again.is_none() && ho.load(Ordering::Relaxed) {
                    b.handoff();
                    return;
                }
                b.shutdown();
                match again {
                    Some(new) => {
                        tracing::info!(bond = %new.name, "restarting the bond with its new configuration");
                        s = new;
                    }
                    None => return,
                }
            }
        })?;
    match rx.recv() {
        Ok(Ok(())) => Ok(Running {
            settings,
            stop,
            handoff,
            updates: utx,
            handle,
        }),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(e.into())
        }
        Err(_) => Err(SpawnError::Died(name)),
    }
}

fn stop_bond(r: Running) {
    r.stop.store(true, Ordering::Relaxed);
    let _ = r.handle.join();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::BondMode;
    use lagkit_hash::{Policy, Strong};

    fn bond(name: &str, members: &[&str]) -> Settings {
        Settings::new(name, members, BondMode::Lacp)
    }

    #[test]
    fn a_reload_keeps_updates_starts_and_stops() {
        let running = [bond("a", &["e1"]), bond("b", &["e2"]), bond("c", &["e3"])];
        let new = vec![
            bond("a", &["e1"]),
            bond("b", &["e2", "e4"]),
            bond("d", &["e5"]),
        ];
        let got = changes(&running, new);
        assert_eq!(
            got,
            [
                Change::Keep("a".into()),
                Change::Update(bond("b", &["e2", "e4"])),
                Change::Start(bond("d", &["e5"])),
                Change::Stop("c".into()),
            ]
        );
    }

    #[test]
    fn a_random_seed_does_not_count_as_a_change() {
        let mut old = bond("a", &["e1"]);
        old.policy = Policy::Strong(Strong::new(1));
        old.hash_seed_fixed = false;
        let mut new = old.clone();
        new.policy = Policy::Strong(Strong::new(2));
        assert_eq!(changes(&[old], vec![new]), [Change::Keep("a".into())]);
    }
}
