//! The bond at run time: one control thread that owns the LACP core (or a
//! static bond's PAgP core), the link watchers and the control socket, and the data path that only reads
//! the published plan: the kernel's BPF programs ([`crate::kernel`]), or the
//! forwarding engine whose threads read the published [`BondMap`] (under
//! the BPF engine those threads carry the control frames only).
//!
//! The control loop sleeps in poll(2) on the netlink link-event socket and
//! the control socket, with a timeout no later than the next protocol or
//! watcher deadline (and at most 10 ms, which bounds the latency of LACPDUs
//! arriving through the engine's queue). A carrier event is handled the
//! moment the kernel reports it.
//!
//! This module is the I/O shell around the bond's sans-IO [`Core`], which
//! holds every decision (LACP, PAgP, carrier debounce and miimon's
//! schedule, the ARP monitor, balance-alb's clients, the announcements
//! after a failover, fail_over_mac's moves, the plan; and what the shell
//! does with its devices: how a member is taken, what a link event asks
//! for, which frames are snooped, whether a reload restarts the bond and
//! what it changes on the host, all in `lagkit_bondcore`'s `core::host`):
//! the shell feeds the core link events, control frames and the time,
//! sends the frames it queues, and carries out its verdicts and events
//! through the objects that own the resources: [`Members`] (the member
//! interfaces: sockets, originals, isolation, MACs; the run directory and
//! its state file), [`DataPath`] (the logical interface, made or adopted,
//! the engine, the BPF programs, the rebalancer) and the control socket
//! ([`Control`]).
//! This file holds the state, the loop and the shutdown; each other
//! concern has a file of its own: `start` (the start sequence, adopting a
//! killed daemon's data path when [`crate::adopt`] says it fits),
//! `members` (members taken and given back as the core says, MAC moves),
//! `datapath` (each plan published, the engine restarted), `frames`
//! (control frames in and out, timers, the core's events carried out),
//! `reload` (settings applied in place as [`Core::reload`] decides, the
//! members it forgot given back), and `report` (status, stats, flow,
//! capture, metrics; the sockets are [`Control`]'s).

pub use crate::error::BondError;

mod datapath;
mod frames;
mod members;
mod reload;
mod report;
mod start;

use crate::control::Control;
use crate::core::Core;
use crate::datapath::DataPath;
use crate::journal::RunDir;
use crate::map::BondMap;
use crate::members::Members;
use crate::settings::{BondMode, Settings};
use crate::status::{BondStats, BondStatus, CarrierLog};
use lagkit_api::protocol::{Request, Response};
use lagkit_monitor::carrier::{poll_carrier, CarrierWatcher, LinkState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// One running bond.
pub struct Bond {
    /// Its decisions: members' state, LACP or PAgP, the plan.
    core: Core,
    /// The members' devices, in the core's order.
    members: Members,
    epoch: std::time::Instant,
    /// The logical interface, the engine, the BPF programs.
    datapath: DataPath,
    carrier: CarrierWatcher,
    /// The control socket, capture clients, the metrics endpoint.
    control: Control,
    /// When the link events being handled were read (CLOCK_MONOTONIC ns;
    /// `None` outside them: a change a timer found is seen when found).
    seen_ns: Option<u64>,
    /// Carrier changes, timed until their plan is published.
    carriers: CarrierLog,
    /// When the pinned data path's record was last brought up to date
    /// (the core's clock, ns).
    recorded_ns: u64,
}

fn now_ns(epoch: std::time::Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

impl Bond {
    /// Now, on the core's clock (nanoseconds since the bond started).
    fn now(&self) -> u64 {
        now_ns(self.epoch)
    }

    /// The settings in force.
    fn s(&self) -> &Settings {
        self.core.settings()
    }

    /// Member `i`'s name.
    fn name(&self, i: usize) -> &str {
        self.core.members().get(i).map_or("", |m| m.name())
    }

    /// Runs until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            self.step(Duration::from_millis(10));
        }
    }

    /// One iteration of the control loop, waiting at most `max_wait`.
    pub fn step(&mut self, max_wait: Duration) {
        let now = self.now();
        let mut wait = max_wait;
        let mut deadline = |d: Option<u64>| {
            if let Some(d) = d {
                wait = wait.min(Duration::from_nanos(d.saturating_sub(now)));
            }
        };
        deadline(self.core.poll_timeout());
        let ms = u16::try_from(wait.as_millis()).unwrap_or(10);
        if self.carrier.wait(ms) {
            self.seen_ns = Some(lagkit_dataplane::monotonic_now_ns());
            if let Ok(events) = self.carrier.recv(Duration::ZERO) {
                self.link_events(events);
            }
            self.seen_ns = None;
        }
        self.handle_slow();
        self.handle_timers();
        self.finish_leaving();
        self.rebalance();
        if self.core.needs_plan() {
            self.publish();
        }
        self.after_core();
        self.keep_record(now);
        self.serve_requests();
        self.update_metrics();
    }

    /// Keeps the state file's record of the pinned data path current
    /// (written only when it changed): LACP's partners change without a
    /// new plan, as when a daemon that adopted resumes LACP, and a daemon
    /// killed next must find them to resume in turn.
    fn keep_record(&mut self, now: u64) {
        const EVERY_NS: u64 = 200_000_000;
        if self.datapath.has_programs() && now.saturating_sub(self.recorded_ns) >= EVERY_NS {
            self.recorded_ns = now;
            self.record_kernel();
        }
    }

    /// Stops forwarding, gives every member back as it was, removes the TAP
    /// (when the last descriptor closes), the control socket and the run
    /// directory. Dropping a bond does the same.
    pub fn shutdown(self) {
        drop(self);
    }

    /// Exits leaving the data path forwarding, for a new daemon (of this
    /// build or another) to adopt: the pinned programs keep the last plan,
    /// the members stay as lagkit set them, the state file says what a
    /// start needs to carry on. Under the userspace engine, its threads
    /// stop and the TAP and the members' sockets are handed to the next
    /// daemon as descriptors ([`lagkit_dataplane::handoff`]; the process
    /// passes them on), frames queueing in them meanwhile. A BPF data path
    /// that is not pinned (no bpffs) stops as [`Bond::shutdown`] does.
    pub fn handoff(mut self) {
        let name = self.s().name.clone();
        if self.datapath.hand_over(&name) {
            self.record_kernel();
            self.control.close();
            let members = self.members.hand_over(&name);
            self.datapath.leave_pinned();
            self.members.leave_as_set();
            tracing::info!(bond = %name, members, "handed off: the TAP and the members' sockets go to the next lagkit");
            return;
        }
        if !self.datapath.is_pinned() {
            tracing::warn!(bond = %self.s().name, "handoff asked, but the data path is not pinned: stopping and giving the members back");
            return self.shutdown();
        }
        self.record_kernel();
        self.control.close();
        self.datapath.leave_pinned();
        self.members.leave_as_set();
        tracing::info!(bond = %self.s().name, "handed off: the kernel forwards with the last plan until a new lagkit adopts it");
    }

    fn close(&mut self) {
        if self.members.run().is_none() {
            return;
        }
        self.control.close();
        self.datapath.close(&self.core.settings().name);
        self.members.release();
        tracing::info!(bond = %self.s().name, "bond down; members restored");
    }
}

impl Drop for Bond {
    fn drop(&mut self) {
        self.close();
    }
}
