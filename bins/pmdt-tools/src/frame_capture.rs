//! `pmdt-wanem --pcap FILE`: Ethernet frames written to a pcap file (link type
//! Ethernet, microsecond timestamps), which Wireshark and tcpdump open.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::time::SystemTime;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

/// A pcap file being written.
pub struct FrameCapture {
    writer: PcapWriter<BufWriter<File>>,
    frames: u64,
    error: Option<String>,
}

impl FrameCapture {
    /// Creates (truncates) the file.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create pcap file {}: {e}", path.display()),
            )
        })?;
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            endianness: pcap_file::Endianness::Little,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Self {
            writer,
            frames: 0,
            error: None,
        })
    }

    /// Writes one frame, stamped now (the first write error is kept for
    /// [`FrameCapture::finish`]; later frames are skipped).
    pub fn record(&mut self, frame: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let ts = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let pkt = PcapPacket::new(ts, frame.len() as u32, frame);
        match self.writer.write_packet(&pkt) {
            Ok(_) => self.frames += 1,
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Flushes the file; the first write error, if any.
    pub fn finish(self) -> io::Result<u64> {
        if let Some(e) = self.error {
            return Err(io::Error::other(e));
        }
        let frames = self.frames;
        let mut w = self.writer.into_writer();
        io::Write::flush(&mut w)?;
        Ok(frames)
    }
}
