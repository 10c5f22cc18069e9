//! The pmdt wire format (see `docs/PROTOCOL.md`) after UDP: a header, then a body
//! per packet type. The handshake (Init, Retry, Accept) has a 28-byte long header
//! with a magic, the version and whole packet numbers; everything after it a
//! 22-byte short header, one byte of form and type, the connection id, the packet
//! number's low 40 bits (as QUIC's short header, [`PacketNumber`]) and the
//! timestamps. A data packet's header is 30 bytes. Decoding borrows from the
//! datagram (the payload of a data packet is a sub-slice, never copied) and never
//! panics on any input.

mod cursor;
mod packet_number;

use cursor::{Reader, Writer};
pub use packet_number::{PacketNumber, MAX_PN_DISTANCE};

/// First two bytes of a long-header (handshake) packet: ASCII "PM".
pub const MAGIC: u16 = 0x504D;
/// Protocol version this implementation speaks (2: the handshake carries
/// `max_ack_delay` and the idle timeout; 3: and `path_bdp`; 4: packets after the
/// handshake have the short header). A long header carries it; the short header
/// has none, as the handshake settled it.
pub const VERSION: u8 = 4;
/// Size of the long header of Init, Retry and Accept.
pub const LONG_HEADER_LEN: usize = 28;
/// Size of the short header of every other packet.
pub const SHORT_HEADER_LEN: usize = 22;
/// Size of a data packet's header (short header + stream offset), before the
/// payload: 1,442 stream bytes in a 1,472-byte datagram (MTU 1500).
pub const DATA_HEADER_LEN: usize = SHORT_HEADER_LEN + 8;
/// A short header's first byte: `0b01F0_TTTT`, `F` a data packet's FIN, `TTTT` the
/// packet type. A long header's is 0x50 ('P'), which has bit 0x10 set.
const SHORT_FORM: u8 = 0x40;
/// The first-byte bits that tell a short header: `01_0` in bits 7, 6 and 4.
const SHORT_FORM_MASK: u8 = 0xD0;
/// A data packet's FIN in the short header's first byte.
const FIN_BIT: u8 = 0x20;
/// Most SACK ranges one ack carries beyond the first.
pub const MAX_ACK_RANGES: usize = 32;
/// Smallest `max_datagram` a side may announce: room for a data packet with a
/// useful payload and for an ack with several ranges (an ack alone needs
/// `ack_len(1)` = 55 bytes). The same floor as `TransportConfig::validate`.
pub const MIN_MAX_DATAGRAM: u16 = DATA_HEADER_LEN as u16 + 64;
/// Longest handshake cookie.
pub const MAX_COOKIE_LEN: usize = 32;
/// Packet numbers lie below this (as in QUIC): a sender starts below 2^32 and
/// never gets near it, and arithmetic on numbers (`pn + 1`, ranges) cannot
/// overflow. A larger one is malformed.
pub const MAX_PN: u64 = 1 << 62;

/// Why a datagram could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Shorter than its header or its declared lengths.
    #[error("truncated packet")]
    Truncated,
    /// The first two bytes are not [`MAGIC`].
    #[error("not a pmdt packet (bad magic)")]
    BadMagic,
    /// A version this implementation does not speak.
    #[error("unsupported version {0}")]
    UnsupportedVersion(u8),
    /// An unknown packet type.
    #[error("unknown packet type {0}")]
    UnknownType(u8),
    /// A field holds an impossible value (named).
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
}

/// Why a packet could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is too small.
    #[error("output buffer too small for the packet")]
    BufferTooSmall,
    /// A field does not fit its wire representation (named).
    #[error("field does not fit its wire representation: {0}")]
    Invalid(&'static str),
}

/// Packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketType {
    /// Client → server: open a connection (with a cookie on the second try).
    Init = 1,
    /// Server → client: stateless retry carrying a cookie.
    Retry = 2,
    /// Server → client: connection accepted.
    Accept = 3,
    /// Stream data.
    Data = 4,
    /// Acknowledgement and flow-control credit.
    Ack = 5,
    /// Graceful close (all data delivered both ways).
    Close = 6,
    /// Abort.
    Reset = 7,
    /// Liveness probe (ack-eliciting, no data).
    Keepalive = 8,
}

impl PacketType {
    /// Whether packets of this type have the long header (the handshake's).
    pub fn has_long_header(self) -> bool {
        matches!(self, Self::Init | Self::Retry | Self::Accept)
    }

    fn from_u8(v: u8) -> Result<Self, DecodeError> {
        Ok(match v {
            1 => Self::Init,
            2 => Self::Retry,
            3 => Self::Accept,
            4 => Self::Data,
            5 => Self::Ack,
            6 => Self::Close,
            7 => Self::Reset,
            8 => Self::Keepalive,
            t => return Err(DecodeError::UnknownType(t)),
        })
    }
}

/// The header of every packet (long or short: the packet type decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// The receiver's connection id (0 in an Init: the server has none yet).
    pub dst_cid: u64,
    /// Packet number: per direction, starts at a random value below 2^32, +1 per
    /// packet, never reused. A sender puts the whole number here; a decoded short
    /// header holds its low 40 bits, which the receiving connection expands.
    pub pn: PacketNumber,
    /// Sender's clock in microseconds (wrapping), for RTT by echo.
    pub timestamp: u32,
    /// The latest timestamp received from the peer (0 if none).
    pub timestamp_echo: u32,
}

/// One contiguous range of acknowledged packet numbers, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckRange {
    /// Smallest acknowledged packet number.
    pub start: u64,
    /// Largest acknowledged packet number.
    pub end: u64,
}

/// SACK ranges of one ack, stored inline: an ack holds at most
/// `1 + MAX_ACK_RANGES`, so decoding or building one never allocates, however
/// lossy the path (the hot path allocates nothing).
pub type AckRanges = smallvec::SmallVec<[AckRange; 1 + MAX_ACK_RANGES]>;

/// Acknowledgement body: packet-number SACK ranges, the cumulative data offset
/// received in order, and the flow-control credit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// Ranges, highest first, disjoint, non-adjacent; at most `1 + MAX_ACK_RANGES`.
    pub ranges: AckRanges,
    /// Microseconds between receiving the largest acknowledged packet and sending this.
    pub ack_delay_us: u32,
    /// Every stream byte below this offset has been received.
    pub data_cumulative: u64,
    /// The sender may send stream bytes below this offset (receive window credit).
    pub max_data: u64,
}

impl Ack {
    /// The largest acknowledged packet number.
    pub fn largest(&self) -> u64 {
        self.ranges.first().map(|r| r.end).unwrap_or(0)
    }
}

/// Parameters a side announces in the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeParams {
    /// The sender's own connection id (the peer puts it in `dst_cid`).
    pub src_cid: u64,
    /// Initial receive credit (bytes of stream the peer may send).
    pub max_data: u64,
    /// Largest datagram payload (pmdt header + data) the sender accepts.
    pub max_datagram: u16,
    /// Longest the sender delays an acknowledgement, in microseconds (the peer's
    /// probe timer allows for it; RFC 9002 §6.2.1). At most [`MAX_ACK_DELAY_US`].
    pub max_ack_delay_us: u32,
    /// The sender's idle timeout in milliseconds (0: none); the connection's is the
    /// smaller of both sides' (RFC 9000 §10.1).
    pub idle_timeout_ms: u32,
    /// The bandwidth-delay product, bytes, the sender expects its data to fill
    /// from a path a previous connection saved (Careful Resume, see
    /// [`crate::SavedPath`]); 0: none. The receiver starts its credit at
    /// [`crate::RECV_WINDOW_PER_RTT`] times it, up to its memory limit,
    /// instead of growing to it over the first round trips.
    pub path_bdp: u64,
}

/// Largest `max_ack_delay` a side may announce: 2^14 ms (RFC 9000 §18.2).
pub const MAX_ACK_DELAY_US: u32 = (1 << 14) * 1000;

/// A decoded packet body; `Data` borrows its payload from the datagram.
// `Ack` holds its ranges inline on purpose: boxing would allocate per ack.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    /// Open request.
    Init {
        /// Client parameters.
        params: HandshakeParams,
        /// Cookie from a Retry (empty on the first try).
        cookie: &'a [u8],
    },
    /// Stateless retry.
    Retry {
        /// Cookie to echo in the next Init.
        cookie: &'a [u8],
    },
    /// Accepted.
    Accept {
        /// Server parameters.
        params: HandshakeParams,
    },
    /// Stream data.
    Data {
        /// Stream offset of the first payload byte.
        offset: u64,
        /// Last data of the stream.
        fin: bool,
        /// Payload bytes.
        payload: &'a [u8],
    },
    /// Acknowledgement.
    Ack(Ack),
    /// Graceful close.
    Close {
        /// Application code (0 = normal).
        code: u32,
    },
    /// Abort.
    Reset {
        /// Application code.
        code: u32,
    },
    /// Liveness probe.
    Keepalive,
}

impl Body<'_> {
    /// The packet type of this body.
    pub fn packet_type(&self) -> PacketType {
        match self {
            Body::Init { .. } => PacketType::Init,
            Body::Retry { .. } => PacketType::Retry,
            Body::Accept { .. } => PacketType::Accept,
            Body::Data { .. } => PacketType::Data,
            Body::Ack(_) => PacketType::Ack,
            Body::Close { .. } => PacketType::Close,
            Body::Reset { .. } => PacketType::Reset,
            Body::Keepalive => PacketType::Keepalive,
        }
    }

    /// Whether the receiver must acknowledge this packet.
    pub fn is_ack_eliciting(&self) -> bool {
        matches!(self, Body::Data { .. } | Body::Keepalive)
    }
}

/// A decoded packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Common header.
    pub header: Header,
    /// Type-specific body.
    pub body: Body<'a>,
}

/// Reads only the header and type (cheap demultiplexing by connection id).
pub fn peek_header(buf: &[u8]) -> Result<(Header, PacketType), DecodeError> {
    let mut r = Reader::new(buf);
    let (header, ty, _) = read_header(&mut r)?;
    Ok((header, ty))
}

/// Reads a long or short header; returns it, the packet type and a data packet's FIN.
fn read_header(r: &mut Reader<'_>) -> Result<(Header, PacketType, bool), DecodeError> {
    let first = r.u8()?;
    if first & SHORT_FORM_MASK == SHORT_FORM {
        let ty = PacketType::from_u8(first & 0x0F)?;
        if ty.has_long_header() {
            return Err(DecodeError::Malformed(
                "handshake packet with a short header",
            ));
        }
        let fin = first & FIN_BIT != 0;
        if fin && ty != PacketType::Data {
            return Err(DecodeError::Malformed("FIN on a packet without data"));
        }
        let header = Header {
            dst_cid: r.u64()?,
            pn: PacketNumber::Truncated(r.u40()?),
            timestamp: r.u32()?,
            timestamp_echo: r.u32()?,
        };
        return Ok((header, ty, fin));
    }
    if u16::from_be_bytes([first, r.u8()?]) != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let ty = PacketType::from_u8(r.u8()?)?;
    if !ty.has_long_header() {
        return Err(DecodeError::Malformed(
            "packet after the handshake with a long header",
        ));
    }
    let dst_cid = r.u64()?;
    let pn = r.u64()?;
    if pn >= MAX_PN {
        return Err(DecodeError::Malformed("packet number beyond 2^62"));
    }
    let header = Header {
        dst_cid,
        pn: PacketNumber::Full(pn),
        timestamp: r.u32()?,
        timestamp_echo: r.u32()?,
    };
    Ok((header, ty, false))
}

fn read_params(r: &mut Reader<'_>) -> Result<HandshakeParams, DecodeError> {
    let p = HandshakeParams {
        src_cid: r.u64()?,
        max_data: r.u64()?,
        max_datagram: r.u16()?,
        max_ack_delay_us: r.u32()?,
        idle_timeout_ms: r.u32()?,
        path_bdp: r.u64()?,
    };
    if p.max_ack_delay_us > MAX_ACK_DELAY_US {
        return Err(DecodeError::Malformed("max_ack_delay too large"));
    }
    if p.src_cid == 0 {
        return Err(DecodeError::Malformed("connection id 0 is reserved"));
    }
    if p.max_datagram < MIN_MAX_DATAGRAM {
        return Err(DecodeError::Malformed("max_datagram too small"));
    }
    Ok(p)
}

fn read_cookie<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
    let n = r.u8()? as usize;
    if n > MAX_COOKIE_LEN {
        return Err(DecodeError::Malformed("cookie too long"));
    }
    r.bytes(n)
}

/// Decodes a whole packet. Never panics; trailing bytes after a fixed-size body are
/// rejected (except Init's padding), and a data payload is exactly the rest.
pub fn decode(buf: &[u8]) -> Result<Packet<'_>, DecodeError> {
    let mut r = Reader::new(buf);
    let (header, ty, fin) = read_header(&mut r)?;
    let body = match ty {
        PacketType::Init => {
            let params = read_params(&mut r)?;
            let cookie = read_cookie(&mut r)?;
            // Padding (zeros) is allowed after an Init.
            if r.rest().iter().any(|b| *b != 0) {
                return Err(DecodeError::Malformed("non-zero Init padding"));
            }
            Body::Init { params, cookie }
        }
        PacketType::Retry => Body::Retry {
            cookie: read_cookie(&mut r)?,
        },
        PacketType::Accept => Body::Accept {
            params: read_params(&mut r)?,
        },
        PacketType::Data => {
            // The payload is the rest of the datagram (UDP gives its length).
            let offset = r.u64()?;
            let payload = r.rest();
            if offset.checked_add(payload.len() as u64).is_none() {
                return Err(DecodeError::Malformed("offset overflow"));
            }
            Body::Data {
                offset,
                fin,
                payload,
            }
        }
        PacketType::Ack => Body::Ack(read_ack(&mut r)?),
        PacketType::Close => Body::Close { code: r.u32()? },
        PacketType::Reset => Body::Reset { code: r.u32()? },
        PacketType::Keepalive => Body::Keepalive,
    };
    if ty != PacketType::Data && ty != PacketType::Init && r.remaining() != 0 {
        return Err(DecodeError::Malformed("trailing bytes"));
    }
    Ok(Packet { header, body })
}

fn read_ack(r: &mut Reader<'_>) -> Result<Ack, DecodeError> {
    let largest = r.u64()?;
    if largest >= MAX_PN {
        return Err(DecodeError::Malformed("acknowledged number beyond 2^62"));
    }
    let ack_delay_us = r.u32()?;
    let data_cumulative = r.u64()?;
    let max_data = r.u64()?;
    let extra = r.u8()? as usize;
    if extra > MAX_ACK_RANGES {
        return Err(DecodeError::Malformed("too many ack ranges"));
    }
    let first = r.u32()? as u64;
    let start = largest
        .checked_sub(first)
        .ok_or(DecodeError::Malformed("ack range below zero"))?;
    let mut ranges = AckRanges::with_capacity(1 + extra);
    ranges.push(AckRange {
        start,
        end: largest,
    });
    let mut smallest = start;
    for _ in 0..extra {
        let gap = r.u32()? as u64;
        let len = r.u32()? as u64;
        // Next range's largest = previous smallest - gap - 2 (RFC 9000 §19.3.1).
        let end = smallest
            .checked_sub(gap + 2)
            .ok_or(DecodeError::Malformed("ack gap below zero"))?;
        let start = end
            .checked_sub(len)
            .ok_or(DecodeError::Malformed("ack range below zero"))?;
        ranges.push(AckRange { start, end });
        smallest = start;
    }
    if max_data < data_cumulative {
        return Err(DecodeError::Malformed("credit below cumulative ack"));
    }
    Ok(Ack {
        ranges,
        ack_delay_us,
        data_cumulative,
        max_data,
    })
}

fn write_header(
    w: &mut Writer<'_>,
    ty: PacketType,
    h: &Header,
    fin: bool,
) -> Result<(), EncodeError> {
    if ty.has_long_header() {
        let PacketNumber::Full(pn) = h.pn else {
            return Err(EncodeError::Invalid(
                "a long header needs the whole packet number",
            ));
        };
        if pn >= MAX_PN {
            return Err(EncodeError::Invalid("packet number beyond 2^62"));
        }
        w.u16(MAGIC)?;
        w.u8(VERSION)?;
        w.u8(ty as u8)?;
        w.u64(h.dst_cid)?;
        w.u64(pn)?;
    } else {
        if matches!(h.pn, PacketNumber::Full(pn) if pn >= MAX_PN) {
            return Err(EncodeError::Invalid("packet number beyond 2^62"));
        }
        let fin = if fin { FIN_BIT } else { 0 };
        w.u8(SHORT_FORM | fin | ty as u8)?;
        w.u64(h.dst_cid)?;
        w.u40(h.pn.low_bits())?;
    }
    w.u32(h.timestamp)?;
    w.u32(h.timestamp_echo)
}

fn write_params(w: &mut Writer<'_>, p: &HandshakeParams) -> Result<(), EncodeError> {
    w.u64(p.src_cid)?;
    w.u64(p.max_data)?;
    w.u16(p.max_datagram)?;
    w.u32(p.max_ack_delay_us)?;
    w.u32(p.idle_timeout_ms)?;
    w.u64(p.path_bdp)
}

fn write_cookie(w: &mut Writer<'_>, c: &[u8]) -> Result<(), EncodeError> {
    if c.len() > MAX_COOKIE_LEN {
        return Err(EncodeError::Invalid("cookie too long"));
    }
    w.u8(c.len() as u8)?;
    w.bytes(c)
}

/// Writes only the header and stream offset of a data packet whose `payload_len`
/// bytes the caller appends (zero-copy transmit from packet memory); the payload is
/// the rest of the datagram. Returns the header length, [`DATA_HEADER_LEN`].
pub fn encode_data_header(
    out: &mut [u8],
    h: &Header,
    offset: u64,
    payload_len: usize,
    fin: bool,
) -> Result<usize, EncodeError> {
    if payload_len > u16::MAX as usize {
        return Err(EncodeError::Invalid("payload longer than 65535"));
    }
    let mut w = Writer::new(out);
    write_header(&mut w, PacketType::Data, h, fin)?;
    w.u64(offset)?;
    Ok(w.written())
}

/// Encodes a packet into `out`; returns its length.
pub fn encode(out: &mut [u8], p: &Packet<'_>) -> Result<usize, EncodeError> {
    if let Body::Data {
        offset,
        fin,
        payload,
    } = &p.body
    {
        let n = encode_data_header(out, &p.header, *offset, payload.len(), *fin)?;
        let mut w = Writer::new(&mut out[n..]);
        w.bytes(payload)?;
        return Ok(n + payload.len());
    }
    let mut w = Writer::new(out);
    write_header(&mut w, p.body.packet_type(), &p.header, false)?;
    match &p.body {
        Body::Init { params, cookie } => {
            write_params(&mut w, params)?;
            write_cookie(&mut w, cookie)?;
        }
        Body::Retry { cookie } => write_cookie(&mut w, cookie)?,
        Body::Accept { params } => write_params(&mut w, params)?,
        Body::Data { .. } => unreachable!("handled above"),
        Body::Ack(a) => write_ack(&mut w, a)?,
        Body::Close { code } | Body::Reset { code } => w.u32(*code)?,
        Body::Keepalive => {}
    }
    Ok(w.written())
}

fn write_ack(w: &mut Writer<'_>, a: &Ack) -> Result<(), EncodeError> {
    let first = a
        .ranges
        .first()
        .ok_or(EncodeError::Invalid("ack without ranges"))?;
    if a.ranges.len() > 1 + MAX_ACK_RANGES {
        return Err(EncodeError::Invalid("too many ack ranges"));
    }
    if first.end >= MAX_PN {
        return Err(EncodeError::Invalid("acknowledged number beyond 2^62"));
    }
    if first.start > first.end || first.end - first.start > u32::MAX as u64 {
        return Err(EncodeError::Invalid("ack range"));
    }
    w.u64(first.end)?;
    w.u32(a.ack_delay_us)?;
    w.u64(a.data_cumulative)?;
    w.u64(a.max_data)?;
    w.u8((a.ranges.len() - 1) as u8)?;
    w.u32((first.end - first.start) as u32)?;
    let mut smallest = first.start;
    for r in &a.ranges[1..] {
        if r.start > r.end || r.end + 2 > smallest {
            return Err(EncodeError::Invalid(
                "ack ranges not descending and disjoint",
            ));
        }
        let gap = smallest - r.end - 2;
        let len = r.end - r.start;
        if gap > u32::MAX as u64 || len > u32::MAX as u64 {
            return Err(EncodeError::Invalid("ack range too wide"));
        }
        w.u32(gap as u32)?;
        w.u32(len as u32)?;
        smallest = r.start;
    }
    Ok(())
}

/// Size of an ack's fixed part (header and first range).
const ACK_FIXED_LEN: usize = SHORT_HEADER_LEN + 8 + 4 + 8 + 8 + 1 + 4;
/// Size of each additional ack range (gap and length).
const ACK_RANGE_LEN: usize = 8;

/// The encoded size of an ack with `ranges` ranges.
pub fn ack_len(ranges: usize) -> usize {
    ACK_FIXED_LEN + ranges.saturating_sub(1) * ACK_RANGE_LEN
}

/// How many ack ranges fit in `len` bytes (0: not even an ack with one range),
/// at most `1 + MAX_ACK_RANGES`.
pub fn ack_ranges_fitting(len: usize) -> usize {
    match len.checked_sub(ACK_FIXED_LEN) {
        None => 0,
        Some(rest) => (1 + rest / ACK_RANGE_LEN).min(1 + MAX_ACK_RANGES),
    }
}

#[cfg(test)]
mod tests;
