//! Answers: the control socket's requests (status, stats, flow, capture),
//! and the metrics page.

use super::*;

impl Bond {
    /// Re-renders the metrics text at most once a second.
    pub(super) fn update_metrics(&mut self) {
        let now = now_ns(self.epoch);
        if !self.control.metrics_due(now) {
            return;
        }
        let facts = self.core.metrics_facts(self.datapath.rebalances());
        let text = lagkit_api::metrics::render(&self.status(), &self.stats(), &facts);
        self.control.publish_metrics(text, now);
    }

    /// Answers the requests the control server queued (it owns the
    /// sockets; this thread never waits on a client).
    pub(super) fn serve_requests(&mut self) {
        for p in self.control.requests() {
            let r = match &p.req {
                // As /proc/net/bonding does for a reader without
                // CAP_NET_ADMIN: no LACP system, aggregator or PDU details.
                Request::Status if !p.admin => {
                    Response::Status(Box::new(self.status().withhold_details()))
                }
                Request::Status => Response::Status(Box::new(self.status())),
                Request::Stats => Response::Stats(self.stats()),
                Request::Flow { proto, src, dst } => {
                    let map = self.datapath.current();
                    self.core
                        .flow(map.as_ref().map(|m| &m.plan), proto, src, dst)
                }
                Request::Capture(_) => {
                    let no_data = self.datapath.why_no_data_capture(&self.s().name);
                    let interfaces = self.members.names();
                    if self.control.start_capture(p, interfaces, no_data) {
                        tracing::info!(bond = %self.s().name, "capture started");
                    }
                    continue;
                }
            };
            p.answer(r);
        }
    }

    /// The bond's status: the core's report over what the data path and
    /// the members know of the devices.
    pub fn status(&self) -> BondStatus {
        let members = self.members.facts(self.datapath.is_kernel());
        let present = (self.core.members().iter()).filter(|m| m.present());
        let facts = (self.datapath).facts(&self.s().name, present.map(|m| m.name()), members);
        let map = self.datapath.current();
        self.core.status(map.as_ref().map(|m| &m.plan), facts)
    }

    /// The bond's counters: the engine's and the members' sockets', and
    /// each LACP port's.
    pub fn stats(&self) -> BondStats {
        let counts = self.datapath.counts();
        let counted = |i: usize, name: &str| counts.member(name, self.members.drops(i));
        let broadcast = self.s().mode == BondMode::Broadcast;
        (self.core).stats(counted, counts.drops(broadcast), self.carriers.events())
    }
}
