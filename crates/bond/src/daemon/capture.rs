//! `lagkit capture` on the bond: a request starts a copy of the control
//! frames (LACP, Marker, PAgP, ARP) this thread sends and handles; the
//! hooks are in `frames` (`send_on`, `handle_slow`), the fan-out in
//! [`lagkit_api::capture`].

use super::*;
use lagkit_api::capture::CaptureStart;

impl Bond {
    /// Starts a capture for `p` (a [`Request::Capture`]), or answers why not.
    pub(super) fn start_capture(&mut self, p: Pending) {
        let Request::Capture(req) = &p.req else {
            return;
        };
        if req.data {
            let why = format!(
                "capture --data: bond {} forwards data frames in {} ({}), not on the thread that runs the protocols, so it cannot copy them: ask for control frames only (`lagkit capture --data` reads the data frames off the members itself)",
                self.s().name,
                if self.datapath.has_programs() { "the kernel" } else { "its forwarding threads" },
                self.datapath.info().kind,
            );
            p.answer(Response::Error(why));
            return;
        }
        let stream = match self.taps.open(req) {
            Ok(s) => s,
            Err(e) => return p.answer(Response::Error(e.to_string())),
        };
        let start = CaptureStart {
            interfaces: self.member_names(),
            snaplen: req.snaplen().unwrap_or(lagkit_api::capture::MAX_SNAPLEN),
            data: false,
            note: None,
        };
        tracing::info!(bond = %self.s().name, "capture started");
        p.answer_stream(Response::Capture(start), stream);
    }
}
