//! The pcapng file `lagkit capture` writes: one Interface Description
//! Block per member or port (its name, Ethernet, the snapshot length,
//! nanosecond timestamps), one Enhanced Packet Block per frame with its
//! direction in `epb_flags`. The frames come from a daemon over its
//! control socket, so what a line says is checked, not trusted: a frame
//! is cut to the snapshot length, and the number of interfaces is bounded.

use lagkit_api::capture::{CaptureStart, CapturedFrame, Direction};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

/// At most this many interfaces in one file: a bond has at most a few
/// dozen members and a switch a few hundred ports; more names than this
/// from a daemon are refused, not written.
pub const MAX_INTERFACES: usize = 4096;

/// What a capture wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Written {
    /// Per interface, in IDB order: its name and (received, sent) frames.
    pub per_interface: Vec<(String, u64, u64)>,
    /// Frames the daemon dropped because this client read too slowly.
    pub dropped: u64,
}

/// A pcapng file being written: one IDB per interface, added on first
/// sight of a name the start did not list.
pub struct PcapngOut<W: Write> {
    w: PcapNgWriter<W>,
    snaplen: u32,
    written: Written,
}

/// `epb_flags` direction bits (pcapng: bits 0-1, 01 inbound, 10 outbound).
fn direction_flags(d: Direction) -> u32 {
    match d {
        Direction::In => 0b01,
        Direction::Out => 0b10,
    }
}

impl<W: Write> PcapngOut<W> {
    /// Writes the section header and an IDB per interface of `start`.
    pub fn new(w: W, start: &CaptureStart) -> Result<PcapngOut<W>, pcap_file::PcapError> {
        let shb = SectionHeaderBlock {
            options: vec![SectionHeaderOption::UserApplication(Cow::Owned(format!(
                "lagkit capture {}",
                env!("CARGO_PKG_VERSION")
            )))],
            ..SectionHeaderBlock::default()
        };
        let mut out = PcapngOut {
            w: PcapNgWriter::with_section_header(w, shb)?,
            snaplen: start.snaplen,
            written: Written::default(),
        };
        for name in &start.interfaces {
            out.interface(name)?;
        }
        Ok(out)
    }

    /// The IDB index of `name`, writing its IDB first if it is new.
    fn interface(&mut self, name: &str) -> Result<u32, pcap_file::PcapError> {
        if let Some(i) = self
            .written
            .per_interface
            .iter()
            .position(|(n, _, _)| n == name)
        {
            return Ok(i as u32);
        }
        if self.written.per_interface.len() >= MAX_INTERFACES {
            return Err(pcap_file::PcapError::IoError(std::io::Error::other(
                format!("more than {MAX_INTERFACES} interfaces named"),
            )));
        }
        // pcap-file writes EPB timestamps in nanoseconds: if_tsresol 9 says so.
        self.w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen: self.snaplen,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        })?;
        self.written.per_interface.push((name.to_string(), 0, 0));
        Ok((self.written.per_interface.len() - 1) as u32)
    }

    /// Writes one frame.
    pub fn frame(&mut self, f: &CapturedFrame) -> Result<(), pcap_file::PcapError> {
        let id = self.interface(&f.ifname)?;
        self.w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: id,
            timestamp: Duration::from_nanos(f.ts_ns),
            original_len: f.len.max(f.data.len() as u32),
            data: Cow::Borrowed(&f.data[..f.data.len().min(self.snaplen as usize)]),
            options: vec![EnhancedPacketOption::Flags(direction_flags(f.dir))],
        })?;
        let c = &mut self.written.per_interface[id as usize];
        match f.dir {
            Direction::In => c.1 += 1,
            Direction::Out => c.2 += 1,
        }
        Ok(())
    }

    /// Records the daemon's drop count.
    pub fn dropped(&mut self, n: u64) {
        self.written.dropped = self.written.dropped.max(n);
    }

    /// Flushes and returns what was written.
    pub fn finish(self) -> Result<(W, Written), std::io::Error> {
        let mut w = self.w.into_inner();
        w.flush()?;
        Ok((w, self.written))
    }
}

/// Any bytes as what a daemon sends a capture (the `capture_stream` fuzz
/// target): each line a [`lagkit_api::capture::StreamLine`], the first that
/// parses as a start; the file written reads back with one packet per
/// frame accepted, never a panic.
pub fn fuzz_one(data: &[u8]) {
    use lagkit_api::capture::{CaptureRequest, StreamLine};
    let mut lines = data.split(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    if let Ok(req) = serde_json::from_slice::<CaptureRequest>(first) {
        let _ = req.snaplen();
    }
    let start = serde_json::from_slice::<CaptureStart>(first).unwrap_or(CaptureStart {
        interfaces: vec!["eth1".into()],
        snaplen: 96,
        data: true,
        note: None,
    });
    if start.interfaces.len() > MAX_INTERFACES || !(14..=65535).contains(&start.snaplen) {
        return;
    }
    let Ok(mut out) = PcapngOut::new(Vec::new(), &start) else {
        return;
    };
    let mut frames = 0;
    for l in lines {
        match serde_json::from_slice::<StreamLine>(l) {
            Ok(StreamLine::Frame(f)) => {
                if out.frame(&f).is_ok() {
                    frames += 1;
                }
            }
            Ok(StreamLine::Dropped(n)) => out.dropped(n),
            Err(_) => {}
        }
    }
    let Ok((bytes, written)) = out.finish() else {
        return;
    };
    let counted: u64 = written.per_interface.iter().map(|(_, r, t)| r + t).sum();
    assert_eq!(counted, frames);
    let mut r = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).expect("our own header reads");
    let mut epbs = 0;
    while let Some(b) = r.next_block() {
        if let pcap_file::pcapng::Block::EnhancedPacket(e) = b.expect("our own blocks read") {
            assert!(e.data.len() <= start.snaplen as usize);
            epbs += 1;
        }
    }
    assert_eq!(epbs, frames);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcapng::{Block, PcapNgReader};

    /// The `capture_stream` fuzz target's corpus (fuzz/corpus), replayed.
    #[test]
    fn the_fuzz_corpus_writes_readable_files() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/corpus/capture_stream"
        );
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() >= 5, "{dir} holds only {} files", files.len());
        for f in files {
            fuzz_one(&std::fs::read(f).unwrap());
        }
    }

    /// A daemon's frame longer than the snapshot length is cut to it, and
    /// a daemon naming too many interfaces is refused.
    #[test]
    fn frames_are_cut_to_the_snaplen_and_interfaces_bounded() {
        let start = CaptureStart {
            interfaces: vec![],
            snaplen: 20,
            data: false,
            note: None,
        };
        let mut out = PcapngOut::new(Vec::new(), &start).unwrap();
        out.frame(&frame("eth1", Direction::In, 1, 60)).unwrap();
        for i in 1..MAX_INTERFACES {
            out.frame(&frame(&format!("e{i}"), Direction::In, 1, 14))
                .unwrap();
        }
        assert!(out
            .frame(&frame("one-too-many", Direction::In, 1, 14))
            .is_err());
        let (bytes, _) = out.finish().unwrap();
        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        while let Some(b) = r.next_block() {
            if let Block::EnhancedPacket(e) = b.unwrap() {
                assert_eq!((e.data.len(), e.original_len), (20, 70));
                break;
            }
        }
    }

    fn frame(ifname: &str, dir: Direction, ts_ns: u64, n: usize) -> CapturedFrame {
        CapturedFrame {
            ifname: ifname.into(),
            dir,
            ts_ns,
            len: n as u32 + 10,
            data: (0..n as u8).collect(),
        }
    }

    /// The blocks read back as written, and the bytes of the IDB and EPB
    /// options are where pcapng puts them.
    #[test]
    fn interfaces_and_packets_read_back_with_names_times_and_directions() {
        let start = CaptureStart {
            interfaces: vec!["eth1".into(), "eth2".into()],
            snaplen: 200,
            data: false,
            note: None,
        };
        let mut out = PcapngOut::new(Vec::new(), &start).unwrap();
        let t = 1_790_000_000_123_456_789;
        out.frame(&frame("eth2", Direction::Out, t, 60)).unwrap();
        out.frame(&frame("eth1", Direction::In, t + 1, 61)).unwrap();
        out.frame(&frame("eth9", Direction::In, t + 2, 62)).unwrap();
        out.dropped(3);
        let (bytes, written) = out.finish().unwrap();
        assert_eq!(
            written.per_interface,
            vec![
                ("eth1".to_string(), 1, 0),
                ("eth2".to_string(), 0, 1),
                ("eth9".to_string(), 1, 0)
            ]
        );
        assert_eq!(written.dropped, 3);

        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        let mut idbs = Vec::new();
        let mut epbs = Vec::new();
        while let Some(b) = r.next_block() {
            match b.unwrap() {
                Block::InterfaceDescription(i) => idbs.push(i.into_owned()),
                Block::EnhancedPacket(e) => epbs.push(e.into_owned()),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(idbs.len(), 3);
        for (i, name) in ["eth1", "eth2", "eth9"].iter().enumerate() {
            assert_eq!(idbs[i].linktype, DataLink::ETHERNET);
            assert_eq!(idbs[i].snaplen, 200);
            assert_eq!(
                idbs[i].options,
                vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                    InterfaceDescriptionOption::IfTsResol(9),
                ]
            );
        }
        let got: Vec<(u32, u64, u32, usize, Vec<EnhancedPacketOption>)> = epbs
            .iter()
            .map(|e| {
                (
                    e.interface_id,
                    e.timestamp.as_nanos() as u64,
                    e.original_len,
                    e.data.len(),
                    e.options.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, t, 70, 60, vec![EnhancedPacketOption::Flags(2)]),
                (0, t + 1, 71, 61, vec![EnhancedPacketOption::Flags(1)]),
                (2, t + 2, 72, 62, vec![EnhancedPacketOption::Flags(1)]),
            ]
        );
        assert_eq!(&epbs[0].data[..4], &[0, 1, 2, 3]);

        // Byte layout (big-endian section): the SHB's magic, the first
        // IDB's type, link type and snaplen, its if_name option (code 2,
        // length 4, "eth1") and if_tsresol (code 9, length 1, 9).
        assert_eq!(&bytes[..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
        assert_eq!(&bytes[8..12], &[0x1a, 0x2b, 0x3c, 0x4d]);
        let shb_len = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
        let idb = &bytes[shb_len..];
        assert_eq!(&idb[..4], &[0, 0, 0, 1]);
        assert_eq!(&idb[8..10], &[0, 1], "LINKTYPE_ETHERNET");
        assert_eq!(&idb[12..16], &200u32.to_be_bytes());
        assert_eq!(&idb[16..24], &[0, 2, 0, 4, b'e', b't', b'h', b'1']);
        assert_eq!(&idb[24..29], &[0, 9, 0, 1, 9]);
        // The first EPB: type 6, interface 1, the timestamp's high and low
        // words in nanoseconds, and the flags option (code 2, length 4).
        let idb_len = |b: &[u8]| u32::from_be_bytes(b[4..8].try_into().unwrap()) as usize;
        let mut at = shb_len;
        for _ in 0..2 {
            at += idb_len(&bytes[at..]);
        }
        let epb = &bytes[at..];
        assert_eq!(&epb[..4], &[0, 0, 0, 6]);
        assert_eq!(&epb[8..12], &1u32.to_be_bytes());
        assert_eq!(&epb[12..16], &((t >> 32) as u32).to_be_bytes());
        assert_eq!(&epb[16..20], &(t as u32).to_be_bytes());
        assert_eq!(&epb[20..24], &60u32.to_be_bytes());
        assert_eq!(&epb[24..28], &70u32.to_be_bytes());
        let opt = 28 + 60;
        assert_eq!(&epb[opt..opt + 8], &[0, 2, 0, 4, 0, 0, 0, 2]);
    }
}
