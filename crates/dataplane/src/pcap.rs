//! A wrapper that records every frame a device receives and/or sends into
//! a pcap file, like smoltcp's `PcapWriter`.
//!
//! Why: the lab's judge of wire formats is tshark; capturing inside the data
//! path shows exactly what lagkit saw and sent, including frames the host's
//! own `tcpdump` would see differently (VLAN tags in metadata, frames the
//! fault injector dropped further in). Frames are written without the
//! virtio-net header, as Ethernet (`LINKTYPE_ETHERNET`); GSO super-frames
//! appear whole, as `tcpdump` shows them on a TSO interface. A failing write
//! is counted, never turned into a data-path error.

use std::io::Write;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::device::{Counters, Device, RxBatch, SendError};
use crate::sys::SysError;
use crate::vnet::HEADER_LEN;

/// Snap length written in the file header: a whole GSO super-frame fits.
pub const SNAPLEN: u32 = 262_144;

/// Which directions a [`PcapDevice`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// Frames received from the device.
    Rx,
    /// Frames sent to the device.
    Tx,
    /// Both.
    Both,
}

/// Why a pcap file could not be started.
#[derive(Debug, thiserror::Error)]
pub enum PcapOpenError {
    /// Creating the file failed.
    #[error("cannot create pcap file: {0}")]
    Io(#[from] std::io::Error),
    /// Writing the pcap header failed.
    #[error("cannot write pcap header: {0}")]
    Pcap(#[from] pcap_file::PcapError),
}

/// The output, shared between the pcap writer (which owns it and offers no
/// way back to it) and [`PcapDevice::flush`].
#[derive(Clone)]
struct Sink(Arc<Mutex<Box<dyn Write + Send>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut w) => w.write(buf),
            Err(_) => Err(std::io::Error::other("pcap sink poisoned")),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock() {
            Ok(mut w) => w.flush(),
            Err(_) => Err(std::io::Error::other("pcap sink poisoned")),
        }
    }
}

/// A device that copies the frames passing through it into a pcap stream.
pub struct PcapDevice<D> {
    inner: D,
    writer: Mutex<PcapWriter<Sink>>,
    sink: Sink,
    capture: Capture,
    write_errors: AtomicU64,
}

impl<D> std::fmt::Debug for PcapDevice<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapDevice")
            .field("capture", &self.capture)
            .finish_non_exhaustive()
    }
}

impl<D: Device> PcapDevice<D> {
    /// Wraps `inner`, writing a pcap stream to `out`.
    pub fn new<W: Write + Send + 'static>(
        inner: D,
        out: W,
        capture: Capture,
    ) -> Result<Self, PcapOpenError> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
        };
        let sink = Sink(Arc::new(Mutex::new(Box::new(out))));
        let writer = PcapWriter::with_header(sink.clone(), header)?;
        Ok(PcapDevice {
            inner,
            writer: Mutex::new(writer),
            sink,
            capture,
            write_errors: AtomicU64::new(0),
        })
    }

    /// Wraps `inner`, writing to a new file at `path` (buffered; flushed on drop).
    pub fn create(
        inner: D,
        path: &std::path::Path,
        capture: Capture,
    ) -> Result<Self, PcapOpenError> {
        let f = std::fs::File::create(path)?;
        Self::new(inner, std::io::BufWriter::new(f), capture)
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Frames that could not be written to the capture.
    pub fn write_errors(&self) -> u64 {
        self.write_errors.load(Relaxed)
    }

    /// Flushes buffered capture data.
    pub fn flush(&self) -> std::io::Result<()> {
        self.sink.clone().flush()
    }

    fn record(&self, packet: &[u8]) {
        let Some(frame) = packet.get(HEADER_LEN..) else {
            return;
        };
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let orig = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let data = &frame[..frame.len().min(SNAPLEN as usize)];
        let ok = match self.writer.lock() {
            Ok(mut w) => w.write_packet(&PcapPacket::new(ts, orig, data)).is_ok(),
            Err(_) => false,
        };
        if !ok {
            self.write_errors.fetch_add(1, Relaxed);
        }
    }

    fn records(&self, rx: bool) -> bool {
        matches!(
            (self.capture, rx),
            (Capture::Both, _) | (Capture::Rx, true) | (Capture::Tx, false)
        )
    }
}

impl<D> Drop for PcapDevice<D> {
    fn drop(&mut self) {
        let _ = self.sink.flush();
    }
}

impl<D: Device> Device for PcapDevice<D> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn recv(&self, batch: &mut RxBatch) -> Result<usize, SysError> {
        let before = batch.len();
        let n = self.inner.recv(batch)?;
        if self.records(true) {
            for i in before..batch.len() {
                self.record(batch.packet(i));
            }
        }
        Ok(n)
    }

    fn send(&self, packet: &[u8]) -> Result<(), SendError> {
        let r = self.inner.send(packet);
        if r.is_ok() && self.records(false) {
            self.record(packet);
        }
        r
    }

    fn send_batch(&self, packets: &[&[u8]]) -> usize {
        if !self.records(false) {
            return self.inner.send_batch(packets);
        }
        // One by one, so only frames the device accepted are recorded.
        packets.iter().filter(|p| self.send(p).is_ok()).count()
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.inner.poll_fd()
    }

    fn counters(&self) -> &Counters {
        self.inner.counters()
    }

    fn refresh_counters(&self) {
        self.inner.refresh_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::plain_packet;
    use crate::pair::PairDevice;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn records_frames_without_vnet_header() {
        let (a, b) = PairDevice::pair("a", "b").unwrap();
        let out = Shared::default();
        let a = PcapDevice::new(a, out.clone(), Capture::Both).unwrap();
        let f1: Vec<u8> = (0..64u8).collect();
        let f2 = vec![0xabu8; 1500];
        a.send(&plain_packet(&f1)).unwrap();
        b.send(&plain_packet(&f2)).unwrap();
        let mut batch = RxBatch::new(4);
        assert_eq!(a.recv(&mut batch).unwrap(), 1);
        drop(a);

        let bytes = out.0.lock().unwrap().clone();
        let mut r = pcap_file::pcap::PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().datalink, DataLink::ETHERNET);
        let p1 = r.next_packet().unwrap().unwrap();
        assert_eq!(&p1.data[..], &f1[..]);
        let p2 = r.next_packet().unwrap().unwrap();
        assert_eq!(&p2.data[..], &f2[..]);
        assert!(r.next_packet().is_none());
    }
}
