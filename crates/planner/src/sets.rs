//! NetFlow v9 (RFC 3954) and IPFIX (RFC 7011) messages: their template
//! sets, options template sets and data sets, decoded only as far as the
//! planner needs.
//!
//! A general decoder types every element it knows, and one element of an
//! unexpected length or of an enterprise it does not know can end its
//! reading of a whole set (netflow_parser 1.0 returned no records and no
//! error for a template with enterprise variable-length elements). The
//! planner reads a handful of IANA elements; every other element,
//! enterprise-specific (RFC 7011 3.2) or variable-length (RFC 7011 7),
//! is only stepped over by its length. Each record is handed to the
//! caller as `(element id, bytes)` pairs of IANA elements, and what could
//! not be read is counted: data sets whose template has not come, and
//! sets that run past their message.
//!
//! Templates are kept per exporter, observation domain (source ID in
//! v9), protocol and template ID, at most [`MAX_TEMPLATES`] of them.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// The most templates kept over all exporters: 2^16. A template past it
/// is not kept; its data sets count as arriving before their template.
pub const MAX_TEMPLATES: usize = 1 << 16;

/// RFC 7011 7: a length of 65535 in a template marks a variable-length
/// element, whose length comes in front of each value.
const VARIABLE: u16 = 65535;

/// The two protocols, whose headers and set IDs differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// NetFlow v9: a 20-byte header; template sets 0, options 1.
    V9,
    /// IPFIX: a 16-byte header with the message length; template sets
    /// 2, options 3; enterprise elements and variable lengths.
    Ipfix,
}

/// One field specifier of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    /// The element ID (the enterprise bit cleared).
    id: u16,
    /// Its length, or [`VARIABLE`].
    len: u16,
    /// Enterprise-specific (RFC 7011 3.2): never one the planner reads.
    enterprise: bool,
}

#[derive(Debug)]
struct Template {
    fields: Vec<Field>,
    /// Options data (sampling), not flow records.
    options: bool,
    /// The fewest bytes a record takes (a variable-length element at
    /// least its 1-byte length), at least 1.
    min_len: usize,
}

/// What a message held, besides its records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Data sets whose template had not come (or was not kept).
    pub before_template_sets: u64,
    /// Their bytes.
    pub before_template_bytes: u64,
    /// The message is damaged: a header, set or record runs past its
    /// end, or a template is malformed. What came before was read.
    pub damaged: bool,
}

/// One record of a data set: a flow record or options data.
pub struct Record<'a> {
    /// Options data (sampling announcements) rather than a flow.
    pub options: bool,
    /// The IANA elements of the record, as (ID, value bytes).
    pub values: &'a [(u16, &'a [u8])],
}

/// Template caches and the reading of messages. Sans-IO: the caller
/// hands over each datagram and its exporter.
#[derive(Debug, Default)]
pub struct Decoder {
    templates: HashMap<(SocketAddr, u32, Protocol, u16), Arc<Template>>,
}

/// A big-endian u16 at `at`, when `b` holds it.
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

impl Decoder {
    /// A decoder with no templates.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Templates held.
    pub fn templates(&self) -> usize {
        self.templates.len()
    }

    /// Reads one NetFlow v9 or IPFIX message from `exporter`: returns the
    /// observation domain (source ID) when the header could be read, and
    /// hands each record to `record`.
    pub fn message(
        &mut self,
        exporter: SocketAddr,
        payload: &[u8],
        counts: &mut Counts,
        record: &mut dyn FnMut(u32, &Record<'_>),
    ) -> Option<u32> {
        let (protocol, domain, body) = match u16_at(payload, 0)? {
            9 if payload.len() >= 20 => (Protocol::V9, u32_at(payload, 16)?, &payload[20..]),
            10 if payload.len() >= 16 => {
                let len = usize::from(u16_at(payload, 2)?);
                let Some(body) = payload.get(16..len.max(16)) else {
                    counts.damaged = true;
                    return None;
                };
                (Protocol::Ipfix, u32_at(payload, 12)?, body)
            }
            _ => {
                counts.damaged = true;
                return None;
            }
        };
        let mut rest = body;
        // RFC 3954 5: a v9 packet may end in padding shorter than a set
        // header; IPFIX messages end where their length says.
        while rest.len() >= 4 {
            let id = u16_at(rest, 0).unwrap_or(0);
            let len = usize::from(u16_at(rest, 2).unwrap_or(0));
            if len < 4 || len > rest.len() {
                counts.damaged = true;
                break;
            }
            let set = &rest[4..len];
            rest = &rest[len..];
            let key = |t: u16| (exporter, domain, protocol, t);
            match (protocol, id) {
                (Protocol::V9, 0) | (Protocol::Ipfix, 2) => {
                    self.template_set(set, protocol, false, &key, counts)
                }
                (Protocol::V9, 1) | (Protocol::Ipfix, 3) => {
                    self.template_set(set, protocol, true, &key, counts)
                }
                (_, 256..) => match self.templates.get(&key(id)) {
                    Some(t) => {
                        let t = Arc::clone(t);
                        data_set(set, &t, counts, &mut |r| record(domain, r));
                    }
                    None => {
                        counts.before_template_sets += 1;
                        counts.before_template_bytes += set.len() as u64;
                    }
                },
                // Reserved set IDs: stepped over.
                _ => {}
            }
        }
        Some(domain)
    }

    /// Reads the template records of one set (RFC 3954 5.2 and 6.1, RFC
    /// 7011 3.4.1 and 3.4.2).
    fn template_set(
        &mut self,
        mut set: &[u8],
        protocol: Protocol,
        options: bool,
        key: &dyn Fn(u16) -> (SocketAddr, u32, Protocol, u16),
        counts: &mut Counts,
    ) {
        while set.len() >= 4 {
            let id = u16_at(set, 0).unwrap_or(0);
            let count = usize::from(u16_at(set, 2).unwrap_or(0));
            // The number of field specifiers, and where they start.
            let (fields, at) = match (protocol, options) {
                // Template ID, scope length and option length in bytes.
                (Protocol::V9, true) => {
                    let Some(opt) = u16_at(set, 4) else {
                        counts.damaged = true;
                        return;
                    };
                    ((count + usize::from(opt)) / 4, 6)
                }
                // Template ID, field count, scope field count.
                (Protocol::Ipfix, true) => (count, 6),
                (_, false) => (count, 4),
            };
            if protocol == Protocol::Ipfix && count == 0 {
                // RFC 7011 8.1: a withdrawal.
                self.templates.remove(&key(id));
                set = set.get(at.min(set.len())..).unwrap_or_default();
                continue;
            }
            let mut t = Vec::with_capacity(fields.min(512));
            let mut p = at;
            for _ in 0..fields {
                let (Some(raw), Some(len)) = (u16_at(set, p), u16_at(set, p + 2)) else {
                    counts.damaged = true;
                    return;
                };
                p += 4;
                let enterprise = protocol == Protocol::Ipfix && raw & 0x8000 != 0;
                if enterprise {
                    if set.len() < p + 4 {
                        counts.damaged = true;
                        return;
                    }
                    p += 4;
                }
                t.push(Field {
                    id: raw
                        & if protocol == Protocol::Ipfix {
                            0x7fff
                        } else {
                            0xffff
                        },
                    len,
                    enterprise,
                });
            }
            set = &set[p..];
            if id < 256 || t.is_empty() {
                counts.damaged = true;
                continue;
            }
            let min_len = t
                .iter()
                .map(|f| {
                    if f.len == VARIABLE {
                        1
                    } else {
                        usize::from(f.len)
                    }
                })
                .sum::<usize>()
                .max(1);
            let k = key(id);
            if self.templates.len() < MAX_TEMPLATES || self.templates.contains_key(&k) {
                self.templates.insert(
                    k,
                    Arc::new(Template {
                        fields: t,
                        options,
                        min_len,
                    }),
                );
            }
        }
    }
}

/// Reads the records of one data set (RFC 3954 5.3, RFC 7011 3.4.3): each
/// field by its template's length or its own variable length; what is
/// left shorter than a record is padding.
fn data_set(
    mut set: &[u8],
    t: &Template,
    counts: &mut Counts,
    record: &mut dyn FnMut(&Record<'_>),
) {
    let mut values: Vec<(u16, &[u8])> = Vec::with_capacity(t.fields.len());
    while set.len() >= t.min_len {
        values.clear();
        let mut p = 0;
        for f in &t.fields {
            let len = if f.len == VARIABLE {
                // One byte of length, or 255 and two bytes.
                match set.get(p) {
                    Some(255) => {
                        let Some(l) = u16_at(set, p + 1) else {
                            counts.damaged = true;
                            return;
                        };
                        p += 3;
                        usize::from(l)
                    }
                    Some(l) => {
                        p += 1;
                        usize::from(*l)
                    }
                    None => {
                        counts.damaged = true;
                        return;
                    }
                }
            } else {
                usize::from(f.len)
            };
            let Some(v) = set.get(p..p + len) else {
                counts.damaged = true;
                return;
            };
            p += len;
            if !f.enterprise {
                values.push((f.id, v));
            }
        }
        if p == 0 {
            // A template of zero-length fields only: nothing to step by.
            return;
        }
        set = &set[p..];
        record(&Record {
            options: t.options,
            values: &values,
        });
    }
}

/// An unsigned number of 1 to 8 bytes (RFC 7011 6.2: reduced-size
/// encoding), big-endian.
pub fn number(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 8 {
        return None;
    }
    Some(v.iter().fold(0u64, |n, b| n << 8 | u64::from(*b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::build::*;

    fn exporter() -> SocketAddr {
        "192.0.2.1:0".parse().unwrap()
    }

    /// Every record of `messages`, as (options, values).
    /// A record as read: options or not, and its (ID, value) pairs.
    type Read = (bool, Vec<(u16, Vec<u8>)>);

    fn records(messages: &[Vec<u8>]) -> (Vec<Read>, Counts) {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        let mut counts = Counts::default();
        for m in messages {
            d.message(exporter(), m, &mut counts, &mut |_, r| {
                out.push((
                    r.options,
                    r.values.iter().map(|(k, v)| (*k, v.to_vec())).collect(),
                ))
            });
        }
        (out, counts)
    }

    /// An IPFIX template set with field specifiers (id, length, PEN).
    fn ipfix_template_pen(id: u16, fields: &[(u16, u16, u32)]) -> Vec<u8> {
        let mut b = vec![0, 2, 0, 0];
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&(fields.len() as u16).to_be_bytes());
        for (f, l, pen) in fields {
            let f = if *pen != 0 { f | 0x8000 } else { *f };
            b.extend_from_slice(&f.to_be_bytes());
            b.extend_from_slice(&l.to_be_bytes());
            if *pen != 0 {
                b.extend_from_slice(&pen.to_be_bytes());
            }
        }
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        b
    }

    /// Two variable-length enterprise elements (Cisco's PEN 9 and the
    /// reverse PEN 29305) and one IANA one, in the short and the long
    /// length form, between the addresses and the counters: every record
    /// is read, the enterprise values stepped over.
    #[test]
    fn variable_length_and_enterprise_elements_are_stepped_over() {
        let t = ipfix_template_pen(
            300,
            &[
                (8, 4, 0),
                (96, VARIABLE, 9),
                (12, 4, 0),
                (82, VARIABLE, 29305),
                (94, VARIABLE, 0),
                (1, 4, 0),
                (2, 4, 0),
            ],
        );
        let rec = |long: bool| {
            let mut r = vec![10, 0, 0, 1];
            if long {
                r.extend_from_slice(&[255, 0, 3, b'a', b'b', b'c']);
            } else {
                r.extend_from_slice(&[3, b'a', b'b', b'c']);
            }
            r.extend_from_slice(&[10, 0, 0, 2]);
            r.extend_from_slice(&[2, b'e', b'0']);
            r.extend_from_slice(&[0]); // an empty IANA string
            r.extend_from_slice(&1000u32.to_be_bytes());
            r.extend_from_slice(&10u32.to_be_bytes());
            r
        };
        // Template and data in one message, and apart.
        for msgs in [
            vec![ipfix(1, &[t.clone(), data(300, &[rec(false), rec(true)])])],
            vec![
                ipfix(1, std::slice::from_ref(&t)),
                ipfix(1, &[data(300, &[rec(true), rec(false)])]),
            ],
        ] {
            let (r, c) = records(&msgs);
            assert_eq!(c, Counts::default());
            assert_eq!(r.len(), 2);
            for (options, v) in &r {
                assert!(!options);
                let ids: Vec<u16> = v.iter().map(|x| x.0).collect();
                assert_eq!(ids, [8, 12, 94, 1, 2]);
                assert_eq!(v[1].1, [10, 0, 0, 2]);
                assert_eq!(number(&v[3].1), Some(1000));
                assert!(v[2].1.is_empty());
            }
        }
    }

    #[test]
    fn options_templates_withdrawals_and_damage() {
        // v9 options template: scope (system, 4 bytes), sampling interval.
        let opts = v9(
            7,
            &[
                v9_options_template(257, &[(34, 4)]),
                data(257, &[vec![0, 0, 0, 1, 0, 0, 0, 100]]),
            ],
        );
        let (r, c) = records(&[opts]);
        assert_eq!(c, Counts::default());
        assert_eq!(r.len(), 1);
        assert!(r[0].0);
        assert_eq!(
            r[0].1.iter().find(|x| x.0 == 34).map(|x| number(&x.1)),
            Some(Some(100))
        );
        // IPFIX: a withdrawal (field count 0) forgets the template.
        let mut withdraw = vec![0, 2, 0, 8];
        withdraw.extend_from_slice(&[1, 44, 0, 0]);
        let t = ipfix_template(300, &FIVE_TUPLE);
        let rec = record([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 3, 4);
        let (r, c) = records(&[
            ipfix(1, &[t, withdraw]),
            ipfix(1, &[data(300, std::slice::from_ref(&rec))]),
        ]);
        assert_eq!((r.len(), c.before_template_sets), (0, 1));
        // A set running past the message, a message shorter than its
        // header: damaged, never a panic; cut anywhere, the same.
        let m = ipfix(1, &[ipfix_template(300, &FIVE_TUPLE), data(300, &[rec])]);
        for n in 0..m.len() {
            let mut cut = m[..n].to_vec();
            if cut.len() >= 4 {
                cut[2..4].copy_from_slice(&(n as u16).to_be_bytes());
            }
            let (r, _) = records(&[cut]);
            assert!(r.is_empty());
        }
        let mut bad = m.clone();
        bad[2..4].copy_from_slice(&2000u16.to_be_bytes());
        assert!(records(&[bad]).1.damaged);
    }

    #[test]
    fn numbers_in_reduced_size() {
        assert_eq!(number(&[1]), Some(1));
        assert_eq!(number(&[1, 0]), Some(256));
        assert_eq!(number(&[0xff; 8]), Some(u64::MAX));
        assert_eq!(number(&[]), None);
        assert_eq!(number(&[0; 9]), None);
    }
}
