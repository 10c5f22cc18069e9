//! The control exchange of pmdt-send and pmdt-recv inside each pmdt connection
//! (specified in docs/TOOLS.md): the client's first bytes are a request line
//! saying which way the data goes, and whoever received the data answers with a
//! receipt line (its byte count and SHA-256) once the data ended.
//!
//! ```text
//! client → server   pmdt-tools/1 {"mode":"send"|"reverse"|"echo","flow":N,"bytes":..,"seconds":..,"hash":..}\n
//! forward           client → server: the data, then end of stream
//!                   server → client: {"bytes":N,"sha256":"…"}\n, end of stream
//! reverse (-R)      server → client: the data, then end of stream
//!                   client → server: {"bytes":N,"sha256":"…"}\n, end of stream
//! echo (--rr)       client → server: messages, then end of stream
//!                   server → client: every byte back as it reads it, then end of stream
//! ```
//!
//! A connection whose first bytes are not the request is a raw stream (any pmdt
//! application): pmdt-recv takes all of it as data and answers nothing.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// What starts every request line (protocol version 1).
pub const MAGIC: &[u8] = b"pmdt-tools/1 ";

/// Longest request or receipt line, bytes.
pub const MAX_LINE: usize = 4096;

/// Which way the data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Client to server (the default).
    Send,
    /// Server to client (`-R`, and the second connection of each `--bidir` flow).
    Reverse,
    /// Request/response (`--rr`): the server writes back every byte it reads,
    /// as it reads it, until the client's end of stream; no receipt (the client
    /// checks each echo itself).
    Echo,
}

/// The client's request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Which way the data goes.
    pub mode: Mode,
    /// The client's flow number (seeds the generated data of a reverse flow).
    pub flow: u64,
    /// Reverse: how many bytes the server sends (None: until `seconds`).
    pub bytes: Option<u64>,
    /// Reverse: how long the server sends, s (None: until `bytes`).
    pub seconds: Option<f64>,
    /// Whether the receiving side should hash (its receipt's `sha256` is empty
    /// otherwise).
    pub hash: bool,
}

/// What the receiving side reports once the data ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Stream bytes received.
    pub bytes: u64,
    /// Their SHA-256 (lower-case hex; empty when not hashed).
    pub sha256: String,
}

impl Request {
    /// The request line, its newline included.
    pub fn line(&self) -> io::Result<Vec<u8>> {
        let mut line = MAGIC.to_vec();
        serde_json::to_writer(&mut line, self).map_err(io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    /// Writes the request line; returns its length.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<u64> {
        let line = self.line()?;
        w.write_all(&line)?;
        Ok(line.len() as u64)
    }
}

impl Receipt {
    /// The receipt line, its newline included.
    pub fn line(&self) -> io::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(self).map_err(io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    /// Writes the receipt line.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.line()?)
    }

    /// Reads the peer's receipt: everything up to the end of its stream. `None`
    /// when the peer sent nothing (a raw stream peer).
    pub fn read_from(r: &mut impl Read) -> io::Result<Option<Receipt>> {
        let mut buf = Vec::new();
        r.take(Self::MAX_READ as u64).read_to_end(&mut buf)?;
        Self::parse(&buf)
    }

    /// How much of the peer's stream [`Receipt::parse`] needs at most to tell
    /// (a longer stream is refused).
    pub const MAX_READ: usize = MAX_LINE + 1;

    /// The receipt in `buf`, the peer's whole stream (at most
    /// [`Receipt::MAX_READ`] bytes of it): `None` when it is empty.
    pub fn parse(buf: &[u8]) -> io::Result<Option<Receipt>> {
        if buf.is_empty() {
            return Ok(None);
        }
        if buf.len() > MAX_LINE {
            return Err(invalid("the peer's receipt is longer than 4096 bytes"));
        }
        serde_json::from_slice(buf)
            .map(Some)
            .map_err(|e| invalid(&format!("the peer's receipt does not parse: {e}")))
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// How a server-side connection starts.
#[derive(Debug)]
pub enum Opening {
    /// A request; `rest` are data bytes that followed it in the same reads.
    Request {
        /// The request.
        request: Request,
        /// Bytes after the request line.
        rest: Vec<u8>,
        /// Length of the request line, its newline included (where the data
        /// starts in the stream).
        line_len: u64,
    },
    /// Not a tools client: `data` is the start of its stream.
    Raw {
        /// The bytes read so far (possibly all of a short stream).
        data: Vec<u8>,
    },
}

/// Reads the start of a connection: a request line, or the first bytes of a raw
/// stream.
pub fn read_opening(r: &mut impl Read) -> io::Result<Opening> {
    let mut buf = Vec::with_capacity(MAX_LINE);
    let mut chunk = [0u8; 1024];
    // Enough to tell the magic apart.
    while buf.len() < MAGIC.len() {
        let n = r.read(&mut chunk)?;
        if n == 0 {
            return Ok(Opening::Raw { data: buf });
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    if !buf.starts_with(MAGIC) {
        return Ok(Opening::Raw { data: buf });
    }
    loop {
        if let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let request: Request = serde_json::from_slice(&buf[MAGIC.len()..end])
                .map_err(|e| invalid(&format!("the client's request does not parse: {e}")))?;
            if request.seconds.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
                return Err(invalid("the client's request has a bad duration"));
            }
            let rest = buf[end + 1..].to_vec();
            return Ok(Opening::Request {
                request,
                rest,
                line_len: end as u64 + 1,
            });
        }
        if buf.len() > MAX_LINE {
            return Err(invalid("the client's request is longer than 4096 bytes"));
        }
        let n = r.read(&mut chunk)?;
        if n == 0 {
            return Err(invalid("the client's request ended early"));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `step` bytes per read, as a stream may.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_request_and_the_data_after_it_come_apart_whatever_the_reads() {
        let req = Request {
            mode: Mode::Reverse,
            flow: 3,
            bytes: Some(1 << 30),
            seconds: None,
            hash: true,
        };
        let mut wire = Vec::new();
        req.write_to(&mut wire).unwrap();
        wire.extend_from_slice(b"DATA");
        for step in [1, 7, 4096] {
            match read_opening(&mut Trickle(&wire, step)).unwrap() {
                Opening::Request {
                    request,
                    rest,
                    line_len,
                } => {
                    assert_eq!(request, req);
                    assert_eq!(line_len, wire.len() as u64 - 4, "all but DATA");
                    assert!(b"DATA".starts_with(&rest), "{step}: {rest:?}");
                    if step == 4096 {
                        assert_eq!(rest, b"DATA");
                    }
                }
                o => panic!("{o:?}"),
            }
        }
    }

    #[test]
    fn the_echo_mode_is_named_echo_on_the_wire() {
        let req = Request {
            mode: Mode::Echo,
            flow: 1,
            bytes: Some(640),
            seconds: None,
            hash: false,
        };
        let mut wire = Vec::new();
        req.write_to(&mut wire).unwrap();
        assert!(String::from_utf8_lossy(&wire).contains(r#""mode":"echo""#));
        match read_opening(&mut &wire[..]).unwrap() {
            Opening::Request { request, .. } => assert_eq!(request, req),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn raw_streams_short_streams_and_garbage_are_told_apart() {
        match read_opening(&mut Trickle(b"hello world, raw bytes", 3)).unwrap() {
            Opening::Raw { data } => assert!(data.starts_with(b"hello world, ")),
            o => panic!("{o:?}"),
        }
        match read_opening(&mut Trickle(b"hi", 3)).unwrap() {
            Opening::Raw { data } => assert_eq!(data, b"hi"),
            o => panic!("{o:?}"),
        }
        let mut bad = MAGIC.to_vec();
        bad.extend_from_slice(b"{not json}\n");
        assert!(read_opening(&mut Trickle(&bad, 100)).is_err());
        let mut long = MAGIC.to_vec();
        long.resize(10_000, b'x');
        assert!(read_opening(&mut Trickle(&long, 100)).is_err());
        let mut early = MAGIC.to_vec();
        early.extend_from_slice(b"{\"mode\":");
        assert!(read_opening(&mut Trickle(&early, 100)).is_err());
    }

    #[test]
    fn receipts_round_trip_and_absent_ones_are_none() {
        let r = Receipt {
            bytes: 42,
            sha256: "ab".into(),
        };
        let mut wire = Vec::new();
        r.write_to(&mut wire).unwrap();
        assert_eq!(Receipt::read_from(&mut &wire[..]).unwrap(), Some(r));
        assert_eq!(Receipt::read_from(&mut &b""[..]).unwrap(), None);
        assert!(Receipt::read_from(&mut &b"junk"[..]).is_err());
        assert!(Receipt::read_from(&mut &vec![b' '; 5000][..]).is_err());
    }
}
