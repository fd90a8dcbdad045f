//! Answers: the control socket's requests (status, stats, flow, capture),
//! and the metrics page.

use super::*;
use lagkit_bondcore::report::BondFacts;

impl Bond {
    /// Re-renders the metrics text at most once a second.
    pub(super) fn update_metrics(&mut self) {
        let now = now_ns(self.epoch);
        if !self.control.metrics_due(now) {
            return;
        }
        let facts = lagkit_api::metrics::BondFacts {
            mode: self.s().mode.name().to_string(),
            policy: self.s().policy.name().to_string(),
            plans_published: self.core.generation(),
            rebalances: self.datapath.rebalances(),
        };
        let text = lagkit_api::metrics::render(&self.status(), &self.stats(), &facts);
        self.control.publish_metrics(text, now);
    }

    /// Answers the requests the control server queued (it owns the
    /// sockets; this thread never waits on a client).
    pub(super) fn serve_requests(&mut self) {
        for p in self.control.requests() {
            let r = match &p.req {
                Request::Status => Response::Status(Box::new(self.status())),
                Request::Stats => Response::Stats(self.stats()),
                Request::Flow { proto, src, dst } => self.flow(proto, src, dst),
                Request::Capture(_) => {
                    // Control frames only: data frames never pass this thread.
                    let no_data = format!(
                        "capture --data: bond {} forwards data frames in {} ({}), not on the thread that runs the protocols, so it cannot copy them: ask for control frames only (`lagkit capture --data` reads the data frames off the members itself)",
                        self.s().name,
                        if self.datapath.has_programs() { "the kernel" } else { "its forwarding threads" },
                        self.datapath.info().kind,
                    );
                    let interfaces = self.member_names();
                    if self.control.start_capture(p, interfaces, no_data) {
                        tracing::info!(bond = %self.s().name, "capture started");
                    }
                    continue;
                }
            };
            p.answer(r);
        }
    }

    pub(super) fn flow(&self, proto: &str, src: &str, dst: &str) -> Response {
        let key = match flow_key(proto, src, dst) {
            Ok(k) => k,
            Err(e) => return Response::Error(e.to_string()),
        };
        let key = key.with_macs(self.core.mac().0, MacAddr::BROADCAST.0);
        let Some(map) = self.datapath.current() else {
            return Response::Error("no map yet".into());
        };
        let (member, e) = map.plan.explain(&key, &self.s().policy);
        Response::Flow(FlowAnswer {
            member: member
                .and_then(|m| self.core.members().get(m))
                .map(|m| m.name().to_string()),
            policy: self.s().policy.to_string(),
            hash: e.hash,
            bucket: e.bucket,
            reason: e.reason,
        })
    }

    /// The bond's status: the core's report over what this shell knows of
    /// the devices.
    pub fn status(&self) -> BondStatus {
        let map = self.datapath.current();
        let kernel = self.datapath.is_kernel();
        let members = (self.core.members().iter().enumerate())
            .map(|(i, m)| self.members.facts(i, m.name(), kernel))
            .collect();
        let facts = BondFacts {
            engine: self.datapath.info().kind,
            engine_reason: self.datapath.info().why.clone(),
            mtu: self.datapath.upper().link().mtu().unwrap_or(0),
            datapath: self.datapath_status(),
            members,
        };
        self.core.status(map.as_ref().map(|m| &m.plan), facts)
    }

    /// The BPF engine's programs and hooks.
    fn datapath_status(&self) -> Option<status::DatapathStatus> {
        let members = self.core.members().iter().filter(|m| m.present());
        self.datapath
            .status(&self.s().name, members.map(|m| m.name()))
    }

    /// The bond's counters.
    pub fn stats(&self) -> BondStats {
        let counts = self.datapath.counts();
        let members = self
            .core
            .members()
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut s = counts.member(m.name());
                if let Some(drops) = self.members.drops(i) {
                    s.drops = drops;
                }
                if let Some(p) = self.core.lacp_status(i) {
                    s.set_lacp(&p);
                }
                s
            })
            .collect();
        BondStats {
            name: self.s().name.clone(),
            members,
            tx_balance: None,
            rx_balance: None,
            engine_drops: counts.drops(self.s().mode == BondMode::Broadcast),
            carrier_events: self.carriers.events(),
        }
        .with_ratios()
    }
}
