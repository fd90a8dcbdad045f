//! The userspace forwarding loop: ready ports read round-robin, one batch
//! at a time, each frame judged by the core and written to its egress
//! ports with one `sendmmsg` per port and batch.

use super::*;
use crate::frames::{retag, segment_payload, tag_of};
use crate::port::CISCO_SOCKET;
use lagkit_dataplane::vnet::VnetRepr;
use lagkit_switch::Verdict;

/// A frame queued for one egress port: the received packet as it is (its
/// index in the batch), or a copy with its tag rewritten.
pub(super) enum Queued {
    Same(usize),
    Retagged(Vec<u8>),
}

impl Switch {
    /// Forwards what the ready ports received, round-robin: each round
    /// reads at most one batch ([`RX_BATCH`] frames) from every port that
    /// still has frames, for at most [`ROUNDS_PER_WAKE`] rounds, so a port
    /// that floods gets the same share of the switch's time as any other
    /// port with traffic, and what it sends beyond its share waits in (or
    /// overflows, counted, from) its own socket's buffer.
    pub(super) fn forward_ready(&mut self, mut ready: Vec<usize>, now: u64) {
        for _ in 0..ROUNDS_PER_WAKE {
            if ready.is_empty() {
                break;
            }
            ready.retain(|&i| self.forward_batch(i, now));
        }
    }

    /// Reads one batch from port `i` and forwards it; whether the port may
    /// have more (the batch came back full).
    fn forward_batch(&mut self, i: usize, now: u64) -> bool {
        let Some(port) = self.ports.get(i) else {
            return false;
        };
        self.batch.clear();
        match port.sock.recv(&mut self.batch) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
        let name = self.core.port_name(PortId(i)).to_string();
        let mut control: Vec<Vec<u8>> = Vec::new();
        for q in &mut self.tx {
            q.clear();
        }
        for k in 0..self.batch.len() {
            let frame = self.batch.frame(k);
            let seg = VnetRepr::parse(&self.batch.vnet(k))
                .ok()
                .and_then(|v| segment_payload(&v, frame));
            let verdict = self.core.receive(PortId(i), frame, seg, now);
            // Control frames are copied where they are handled.
            if self.taps.wants_data() && !matches!(verdict, Verdict::Control) {
                self.taps.frame(&name, Direction::In, frame, true);
            }
            match verdict {
                Verdict::Control => control.push(frame.to_vec()),
                Verdict::Forward { egress, .. } => {
                    let tag = tag_of(frame);
                    for e in egress {
                        let Some(q) = self.tx.get_mut(e.port.0) else {
                            continue;
                        };
                        q.push(if e.tag == tag {
                            Queued::Same(k)
                        } else {
                            Queued::Retagged(retag(self.batch.packet(k), e.tag))
                        });
                    }
                }
                Verdict::Drop(_) => {}
            }
        }
        // One sendmmsg per egress port for the whole batch; a port whose
        // queue is full drops (and its socket counts) the rest.
        for (e, q) in self.tx.iter().enumerate() {
            if q.is_empty() {
                continue;
            }
            let packets: Vec<&[u8]> = q
                .iter()
                .map(|x| match x {
                    Queued::Same(k) => self.batch.packet(*k),
                    Queued::Retagged(p) => p.as_slice(),
                })
                .collect();
            if let Some(out) = self.ports.get(e) {
                out.sock.send_batch(&packets);
                if self.taps.wants_data() {
                    let out_name = self.core.port_name(PortId(e));
                    for p in &packets {
                        let frame = p.get(lagkit_dataplane::vnet::HEADER_LEN..).unwrap_or(&[]);
                        self.taps.frame(out_name, Direction::Out, frame, true);
                    }
                }
            }
        }
        let more = self.batch.is_full();
        for f in control {
            self.taps.frame(&name, Direction::In, &f, false);
            self.core.handle_control(PortId(i), &f, now);
        }
        more
    }
}

impl Switch {
    /// Under the BPF engine: the control frames the ready sockets hold
    /// (epoll data: the port's index, with [`CISCO_SOCKET`] for its Cisco
    /// socket); the kernel forwarded, and counted, everything else; a
    /// data frame queued before the socket was bound to its protocol is
    /// left alone.
    pub(super) fn control_ready(&mut self, ready: &[u64], now: u64) {
        for &data in ready {
            let i = (data & !CISCO_SOCKET) as usize;
            for _ in 0..ROUNDS_PER_WAKE {
                let Some(port) = self.ports.get(i) else {
                    break;
                };
                let sock = if data & CISCO_SOCKET != 0 {
                    match &port.cisco {
                        Some(s) => s,
                        None => break,
                    }
                } else {
                    &port.sock
                };
                self.batch.clear();
                match sock.recv(&mut self.batch) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let name = self.core.port_name(PortId(i)).to_string();
                for k in 0..self.batch.len() {
                    let frame = self.batch.frame(k);
                    if !self.core.bridge().takes_control(PortId(i), frame) {
                        continue;
                    }
                    self.taps.frame(&name, Direction::In, frame, false);
                    let f = frame.to_vec();
                    self.core.handle_control(PortId(i), &f, now);
                }
                if !self.batch.is_full() {
                    break;
                }
            }
        }
    }
}
