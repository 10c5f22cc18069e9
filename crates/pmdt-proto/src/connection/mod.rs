//! One pmdt connection as a pure state machine: datagrams and time go in, datagrams,
//! timeouts and events come out. No I/O, no clock reads.

mod ack_state;
mod control_out;
mod events;
mod peer_fin;
mod sent;
mod share_on_path;
#[cfg(test)]
mod tests;
mod timers;

pub use events::{CloseReason, Event, PROTOCOL_VIOLATION_CODE, REFUSED_CODE};
pub(crate) use share_on_path::{ShareOnPath, AHEAD_OF_AVERAGE};

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ack_state::{AckState, AckWait};
use control_out::ControlOut;
use peer_fin::PeerFin;
use sent::{Chunk, Sending, SentPacket, SentPackets};
use timers::{Timer, TimerTable};

use crate::config::TransportConfig;
use crate::congestion::autotune::{self, RecvAutotune};
use crate::congestion::{Controller, DeliveryRateSampler};
use crate::pacer::Pacer;
use crate::range_set::RangeSet;
use crate::recv_buffer::{RecvBuffer, RecvRing, RecvStorage};
use crate::rtt::{RttEstimator, GRANULARITY};
use crate::saved_path::{ResumeOutcome, SavedPath};
use crate::send_buffer::{ByteRing, SendStorage};
use crate::stats::ConnectionStats;
use crate::wire::{self, Body, HandshakeParams, Header, Packet};

/// A packet number may lie at most this many sending windows above the largest
/// received (see [`Connection::max_pn_jump`]).
const PN_JUMP_WINDOWS: u64 = 4;
/// Floor of the packet-number jump accepted, whatever the window.
const MIN_PN_JUMP: u64 = 1 << 16;
/// Persistent congestion: losses spanning this many probe timeouts (without the
/// backoff) with nothing acknowledged between (RFC 9002 §7.6.1, kPersistentCongestionThreshold).
const PERSISTENT_CONGESTION_THRESHOLD: u32 = 3;
/// Mean gap between deliberately skipped packet numbers (RFC 9000 §21.4): often
/// enough to catch an optimistic acker quickly, rare enough to cost nothing (one
/// ack range per skip at the receiver).
const PN_SKIP_MEAN_GAP: u64 = 1024;
/// Skipped numbers remembered (older ones are below anything a peer still acks).
const MAX_SKIPPED_PNS: usize = 16;
/// Ranges (holes) the loss bookkeeping has room for before it allocates.
const LOSS_RANGES_RESERVED: usize = 64;
/// Lost-packet records (kept a few PTOs) there is room for before they allocate.
const LOST_RECORDS_RESERVED: usize = 256;
/// Packet numbers the sent-packet tracking has room for at first; a flight
/// past them gets room for the whole window at once. Room for the window up
/// front cost each connection 256 KiB, touched page by page as the ring
/// turned: with 1000 connections on one sender (a few datagrams in flight
/// each), 13 % of its profile's samples over a 5 s transfer were first-touch
/// page faults under `SentPackets::on_sent`.
const INITIAL_TRACKED_PACKETS: usize = 64;

/// The next gap between skipped packet numbers: uniform in
/// [PN_SKIP_MEAN_GAP / 2, 3 × PN_SKIP_MEAN_GAP / 2) from a xorshift generator
/// (unpredictable enough for a peer that cannot see the traffic; deterministic
/// per connection, so simulations are reproducible).
fn next_skip_gap(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    PN_SKIP_MEAN_GAP / 2 + x % PN_SKIP_MEAN_GAP
}

/// Largest exponent of a timer backoff (2^16 × the base).
const MAX_BACKOFF_EXP: u32 = 16;
/// Largest exponent of the Init retransmission backoff (2^10 × the initial RTT).
const MAX_INIT_BACKOFF_EXP: u32 = 10;
/// Ack-eliciting probes sent when the probe timeout fires (RFC 9002 §6.2.4: "one
/// or two").
const PTO_PROBES: u32 = 2;
/// Time threshold of loss detection, as a fraction of the RTT: a packet is lost
/// once sent this long before an acknowledged one (RFC 9002 §6.1.2,
/// kTimeThreshold = 9/8).
const TIME_THRESHOLD: (u32, u32) = (9, 8);
/// Copies sent of data whose retransmission was lost. Each loss of the same data
/// holds the receiver's head (and its credit) for another round trip: at 0.5 %
/// random loss a 10 Gbit/s × 100 ms flight loses about two retransmissions per
/// round trip, and one of those copies again every few seconds, a 3-round hole
/// that stalls a sender whose credit covers the recurring 2-round ones. Two
/// copies make a third loss as rare as a fourth, for p² of the traffic.
const LOST_AGAIN_COPIES: usize = 2;
/// Copies sent of data lost after the stream's end went out (the fin was sent):
/// nothing new follows it, so every repair is on the transfer's completion path,
/// and a repair lost too costs a round trip to notice and another to send again.
/// At 1 % loss the last flight of 1 Gbit/s × 200 ms (17,000 datagrams) has about
/// 170 repairs, and one of them is lost in four runs of five: two copies spare
/// that round trip for one datagram per loss at the very end.
const TAIL_REPAIR_COPIES: usize = 2;
/// Longest the initial window waits to be written whole (see
/// `Connection::gathering_train`).
const TRAIN_GATHER: Duration = Duration::from_millis(1);
/// Pacing rate without a controller rate: this multiple of window / srtt, so
/// pacing does not by itself limit the window (RFC 9002 §7.7, N = 1.25).
const PACING_GAIN: (u128, u128) = (5, 4);
/// The closing state lasts this many probe timeouts (RFC 9000 §10.2: "at least
/// three times the current PTO"), and at most this fraction of the idle timeout.
const CLOSING_PTOS: u32 = 3;
const CLOSING_IDLE_FRACTION: u32 = 2;
/// Lost-packet records (for spurious-retransmission detection) are kept this many
/// probe timeouts.
const LOST_RECORD_PTOS: u32 = 4;
/// The largest RTT sample taken from a handshake timestamp echo, in microseconds.
/// Timestamps are 32-bit microseconds (they wrap after 71 minutes): a larger value
/// is a stale or forged echo, not an RTT (as RFC 7323 §5.5 bounds timestamp age).
const MAX_TIMESTAMP_RTT_US: u32 = 60_000_000;
/// The receive window is re-advertised early once the application read this
/// fraction of it, so the sender does not stall on credit.
const WINDOW_UPDATE_FRACTION: u64 = 4;
/// The pacer's initial allowance, in full datagrams (small, so many new flows do
/// not burst into a queue at once).
const INITIAL_PACING_DATAGRAMS: u64 = 2;

/// Which end of the connection this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Opened the connection.
    Client,
    /// Accepted it.
    Server,
}

/// Where the connection is in its life, with the data only that phase needs.
#[derive(Debug)]
enum State {
    /// Client: opening the connection.
    Handshake(Handshake),
    /// Data flows both ways.
    Established,
    /// Our Close is out after a graceful end; it is repeated to a peer that still
    /// talks, until `deadline` (RFC 9000 §10.2's closing state).
    Closing {
        /// When the connection ends.
        deadline: Instant,
    },
    /// Ended. Nothing is sent but a repeated Close.
    Closed {
        /// Why.
        reason: CloseReason,
        /// The peer's Close (or Reset) arrived: it waits for nothing more. If
        /// not (our closing state ran out without it), it may still be waiting
        /// for our Close, and the endpoint lingers to repeat it.
        peer_close: PeerCloseHeard,
    },
}

impl State {
    fn is_handshake(&self) -> bool {
        matches!(self, State::Handshake(_))
    }

    fn is_established(&self) -> bool {
        matches!(self, State::Established)
    }

    fn is_closing(&self) -> bool {
        matches!(self, State::Closing { .. })
    }

    fn is_closed(&self) -> bool {
        matches!(self, State::Closed { .. })
    }
}

/// Whether a connection ending had heard the peer's Close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerCloseHeard {
    Yes,
    No,
}

/// The client's handshake: what its Init (re)transmissions need.
#[derive(Debug, Default)]
struct Handshake {
    /// The server's cookie, from a Retry (empty until one arrives).
    cookie: Vec<u8>,
    /// An Init is due.
    init_pending: bool,
    /// When the Init goes out again if no answer came.
    retry_at: Option<Instant>,
    /// Inits sent so far.
    attempts: u32,
}

/// How far this side's end of stream got (each step follows the one before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fin {
    /// More data may be written.
    Open,
    /// The application finished: the last chunk carries the fin.
    Requested,
    /// The fin went out.
    Sent,
    /// The peer acknowledged it.
    Acked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocked {
    /// By the congestion window: with [`Blocked::Pacing`], the only states in
    /// which the congestion window may grow.
    Window,
    /// By the pacer (the controller's rate).
    Pacing,
    /// By `window_packets`.
    Packets,
    /// By the receiver's credit.
    Credit,
    /// By the application: nothing written to send during the transfer.
    App,
    /// Nothing to send outside the transfer: before the first byte is
    /// written, or once the fin went out. Not the application's doing, so not
    /// counted as application-limited time; the window does not grow (as
    /// while [`Blocked::App`]).
    Idle,
}

/// Where a transmitted datagram's payload comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadRef {
    /// Stream offset of the first payload byte.
    pub offset: u64,
    /// Payload length.
    pub len: usize,
}

/// A datagram produced by `poll_transmit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Destination.
    pub destination: SocketAddr,
    /// Datagram length (header + payload).
    pub len: usize,
    /// Length of the pmdt header at the start of the buffer.
    pub header_len: usize,
    /// The stream bytes that follow the header (data packets).
    pub payload: Option<PayloadRef>,
}

/// What the writer given to [`Connection::write_with`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageWrite {
    /// Stream bytes it added to the send storage.
    pub bytes: usize,
    /// It stopped with data left over because the storage was full.
    pub full: bool,
}

/// Why a write was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The send buffer is full: wait for [`Event::Writable`].
    #[error("send buffer full")]
    Blocked,
    /// `finish`/`close` was called: no more data.
    #[error("stream already finished")]
    Finished,
    /// The connection is closed (why).
    #[error(transparent)]
    Closed(CloseReason),
}

/// A pmdt connection. `S` stores unacknowledged send data (see [`SendStorage`]),
/// `R` received data waiting to be read (see [`RecvStorage`]).
pub struct Connection<S: SendStorage = ByteRing, R: RecvStorage = RecvRing> {
    side: Side,
    state: State,
    local_cid: u64,
    remote_cid: u64,
    remote: SocketAddr,
    cfg: Arc<TransportConfig>,
    epoch: Instant,
    peer_max_datagram: u16,
    peer_ts: u32,
    /// The peer's max_ack_delay (from the handshake; ours until then): the probe
    /// timer and RTT samples allow for it (RFC 9002 §5.3, §6.2.1).
    peer_max_ack_delay: Duration,
    /// The idle timeout in force: the smaller of ours and the peer's.
    idle_timeout: Duration,

    /// Server: the Accept is (re)sent (the client did not get it).
    // sending
    next_pn: u64,
    sent: SentPackets,
    largest_acked: Option<u64>,
    /// Packet numbers skipped on purpose (most recent last), the next one to skip
    /// and the generator of the gaps between skips.
    skipped: VecDeque<u64>,
    next_skip: u64,
    skip_rng: u64,
    /// Acknowledged packet numbers at or above the oldest tracked one.
    acked_pns: RangeSet,
    /// When the first RTT sample was taken (persistent congestion counts only
    /// packets sent after it).
    first_rtt_sample: Option<Instant>,
    /// The last of our timestamps a data packet echoed and gave an RTT sample.
    last_echo_sampled: u32,
    loss_time: Option<Instant>,
    /// Scratch list of `detect_lost` (kept to reuse its memory).
    lost_scratch: Vec<(u64, Instant)>,
    next_lost_prune: Instant,
    pto_count: u32,
    probes: u32,
    rtt: RttEstimator,
    cc: Box<dyn Controller>,
    /// Other connections of this endpoint to the same peer host.
    path_siblings: usize,
    /// Whether a loss-based flow (NewReno, CUBIC) is among this endpoint's
    /// connections to that host, this one included.
    loss_based_on_path: bool,
    /// How this connection's delivery compared with its siblings' at the
    /// endpoint's last check (for a model-based flow beside a loss-based
    /// one only).
    share_on_path: ShareOnPath,
    rate_sampler: DeliveryRateSampler,
    /// Packet window in force (grows with the congestion window).
    window_packets: u64,
    recv_tune: RecvAutotune,
    pacer: Pacer,
    pacing_wait: Option<Instant>,
    /// A saved path to start from once an RTT sample confirms it
    /// (`crate::saved_path`), until then.
    resume: Option<SavedPath>,
    /// With `Startup::FromInitialTrain`: until when new data waits for the
    /// initial window to be written (see `Connection::gathering_train`).
    train_gather_until: Option<Instant>,
    send: S,
    send_next: u64,
    retransmit: VecDeque<Chunk>,
    acked: RangeSet,
    peer_max_data: u64,
    /// Since when the sender has waited for credit with nothing in flight (the
    /// blocked probe's timer base), and how many probes went unanswered by credit.
    credit_wait: Option<Instant>,
    credit_probes: u32,
    fin: Fin,
    close_requested: bool,
    writable_wanted: bool,

    // receiving
    recv: RecvBuffer<R>,
    peer_fin: PeerFin,
    acks: AckState,
    /// Largest packet number of any packet that passed validation (ack-eliciting
    /// or not): the reference for the out-of-window check.
    largest_pn_received: Option<u64>,
    advertised_max_data: u64,
    readable_signalled: bool,

    // lifecycle
    last_recv: Instant,
    last_send: Instant,
    keepalive_pending: bool,
    control_out: Option<ControlOut>,
    events: VecDeque<Event>,
    blocked: Option<(Blocked, Instant)>,
    stats: ConnectionStats,
    /// The `connection` tracing span (local id, side, peer) every event of this
    /// connection is logged in.
    span: tracing::Span,
}

impl<S: SendStorage, R: RecvStorage> std::fmt::Debug for Connection<S, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("side", &self.side)
            .field("state", &self.state)
            .field("local_cid", &self.local_cid)
            .field("remote", &self.remote)
            .field("in_flight", &self.sent.in_flight())
            .field("send_next", &self.send_next)
            .field("send_end", &self.send.end())
            .field("retransmit", &self.retransmit.len())
            .field("probes", &self.probes)
            .field("pto_count", &self.pto_count)
            .field("loss_time", &self.loss_time)
            .field("pacing_wait", &self.pacing_wait)
            .field("ack_deadline", &self.acks.deadline())
            .field("timers", &self.timers())
            .field("fin", &self.fin)
            .field("peer_fin", &self.peer_fin)
            .finish()
    }
}

/// Parameters to build a connection (from the endpoint).
pub(crate) struct ConnectionParams<S, R> {
    pub side: Side,
    pub local_cid: u64,
    pub remote_cid: u64,
    pub remote: SocketAddr,
    pub cfg: Arc<TransportConfig>,
    pub epoch: Instant,
    pub now: Instant,
    /// Below 2^32: the peer takes the low 40 bits of the first short-header
    /// number it receives as the whole number.
    pub initial_pn: u64,
    pub storage: S,
    pub recv_storage: R,
    pub peer: Option<HandshakeParams>,
}

/// The largest datagram both sides send: the smaller of the peer's announced
/// `max_datagram` and this side's (the decoder rejects less than the floor;
/// clamped anyway, defence in depth).
fn negotiated_max_datagram(peer: u16, own: u16) -> u16 {
    peer.max(wire::MIN_MAX_DATAGRAM).min(own)
}

/// Stream bytes a data packet of `max_datagram` bytes carries.
fn data_payload(max_datagram: u16) -> u64 {
    u64::from(max_datagram).saturating_sub(wire::DATA_HEADER_LEN as u64)
}

impl<S: SendStorage, R: RecvStorage> Connection<S, R> {
    pub(crate) fn new(p: ConnectionParams<S, R>) -> Self {
        let cfg = p.cfg;
        // Controllers count whole datagrams (bytes in flight include headers), so
        // their unit is the largest datagram, not its payload (RFC 9002 §7.2).
        let max_datagram = cfg.max_datagram as u64;
        // Packets in flight at most (until the window autotunes above it).
        let window = cfg.window_packets as usize;
        let mut recv = RecvBuffer::with_storage(p.recv_storage, cfg.recv_buffer);
        // A server knows the client's datagram size before it gives credit.
        let peer_max_datagram = p.peer.as_ref().map_or(cfg.max_datagram, |peer| {
            negotiated_max_datagram(peer.max_datagram, cfg.max_datagram)
        });
        recv.set_grain(data_payload(peer_max_datagram), 0);
        let mut c = Self {
            side: p.side,
            state: State::Handshake(Handshake {
                init_pending: p.side == Side::Client,
                ..Handshake::default()
            }),
            local_cid: p.local_cid,
            remote_cid: p.remote_cid,
            remote: p.remote,
            epoch: p.epoch,
            peer_max_datagram: cfg.max_datagram,
            peer_ts: 0,
            peer_max_ack_delay: cfg.max_ack_delay,
            idle_timeout: cfg.idle_timeout,
            next_pn: p.initial_pn,
            // Room for a few packet numbers, then for the initial window at
            // once: tracking allocates once, when a flight first outgrows the
            // few (a bulk transfer's first round trips), and again only if
            // the window autotunes above the initial one.
            sent: SentPackets::with_capacity(
                INITIAL_TRACKED_PACKETS,
                window,
                window.max(LOST_RECORDS_RESERVED),
            ),
            largest_acked: None,
            skipped: VecDeque::with_capacity(MAX_SKIPPED_PNS),
            next_skip: 0,
            skip_rng: (p.local_cid ^ p.initial_pn.rotate_left(32)) | 1,
            // Loss bookkeeping: the lists of lost packets hold at most a window
            // of them, so they get room for one up front (a burst of losses, real
            // or spurious when the loop was descheduled, would otherwise grow them
            // in the middle of a transfer); the range sets are sized for typical
            // patterns and grow only past them.
            acked_pns: RangeSet::with_capacity(LOSS_RANGES_RESERVED),
            first_rtt_sample: None,
            resume: None,
            last_echo_sampled: 0,
            loss_time: None,
            lost_scratch: Vec::with_capacity(window),
            next_lost_prune: p.now,
            pto_count: 0,
            probes: 0,
            rtt: RttEstimator::new(cfg.initial_rtt),
            cc: cfg.congestion.build(max_datagram),
            path_siblings: 0,
            loss_based_on_path: false,
            share_on_path: ShareOnPath::Even,
            rate_sampler: DeliveryRateSampler::new(cfg.starts_from_train()),
            window_packets: cfg.window_packets,
            recv_tune: RecvAutotune::with_capacity(window),
            pacer: Pacer::new(
                cfg.pacing_burst_packets * cfg.max_datagram as u64,
                INITIAL_PACING_DATAGRAMS * cfg.max_datagram as u64,
            ),
            pacing_wait: None,
            train_gather_until: None,
            send: p.storage,
            send_next: 0,
            retransmit: VecDeque::with_capacity(window),
            acked: RangeSet::with_capacity(LOSS_RANGES_RESERVED),
            peer_max_data: 0,
            credit_wait: None,
            credit_probes: 0,
            fin: Fin::Open,
            close_requested: false,
            writable_wanted: false,
            advertised_max_data: recv.limit(),
            recv,
            peer_fin: PeerFin::Unknown,
            acks: AckState::new(),
            largest_pn_received: None,
            readable_signalled: false,
            last_recv: p.now,
            last_send: p.now,
            keepalive_pending: false,
            control_out: None,
            events: VecDeque::new(),
            blocked: None,
            stats: ConnectionStats::default(),
            span: tracing::debug_span!(
                "connection",
                cid = p.local_cid,
                side = ?p.side,
                remote = %p.remote
            ),
            cfg,
        };
        c.next_skip = c.next_pn + next_skip_gap(&mut c.skip_rng);
        if let Some(peer) = p.peer {
            c.apply_peer_params(&peer);
            c.state = State::Established;
            c.control_out = Some(ControlOut::Accept);
            c.events.push_back(Event::Connected);
        }
        c
    }

    fn apply_peer_params(&mut self, p: &HandshakeParams) {
        self.remote_cid = p.src_cid;
        self.peer_max_ack_delay =
            Duration::from_micros(p.max_ack_delay_us.min(wire::MAX_ACK_DELAY_US) as u64);
        if p.idle_timeout_ms > 0 {
            self.idle_timeout = self
                .idle_timeout
                .min(Duration::from_millis(p.idle_timeout_ms as u64));
        }
        self.peer_max_data = p.max_data;
        self.peer_max_datagram = negotiated_max_datagram(p.max_datagram, self.cfg.max_datagram);
        // Both sides send datagrams of this size at most: credit comes in the
        // peer's full datagrams, not ours.
        self.recv
            .set_grain(self.data_payload(), self.advertised_max_data);
        self.expect_path_bdp(p.path_bdp);
    }

    /// The peer resumes from a saved path of `bdp` bytes: the credit starts at
    /// what the autotuning would reach over its first round trips (the jump
    /// sends half the BDP in the first, Startup the whole of it in the next),
    /// up to the memory limit. The receive ring's memory still grows only with
    /// the bytes held.
    fn expect_path_bdp(&mut self, bdp: u64) {
        if bdp == 0 {
            return;
        }
        let want = self.recv_tune.expect_bdp(bdp, &self.cfg);
        self.recv.grow(want);
    }

    // ---------------------------------------------------------------- accessors

    /// Client or server.
    pub fn side(&self) -> Side {
        self.side
    }

    /// This side's connection id.
    pub fn local_cid(&self) -> u64 {
        self.local_cid
    }

    /// The peer's address.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// The endpoint holds `siblings` other connections to this one's peer
    /// host (its congestion controller reads its RTTs accordingly, and its
    /// receive credit covers an aging hole only alone), and `loss_based`
    /// says whether a loss-based flow is among them or is this one (its
    /// pacer then makes up little of an absence: [`Self::catch_up_limit`]).
    pub(crate) fn set_path_siblings(&mut self, siblings: usize, loss_based: bool) {
        self.path_siblings = siblings;
        self.loss_based_on_path = loss_based;
        self.cc.on_path_siblings(siblings);
        self.recv_tune.on_path_siblings(siblings);
    }

    /// Sets how this connection's delivery compared with the average of the
    /// flows to its host at the endpoint's last check
    /// ([`crate::endpoint::path_shares`]): beside a loss-based flow, a
    /// model-based flow behind makes up its absences whole
    /// ([`Self::queue_kept_through_an_absence`]), and its controller, told
    /// too, gives way when ahead (`congestion::bbr::ahead_on_path`).
    pub(crate) fn set_share_on_path(&mut self, share: ShareOnPath) {
        if share != self.share_on_path {
            tracing::debug!(cid = self.local_cid, ?share, "share on the path");
        }
        self.share_on_path = share;
        self.cc.on_share_on_path(share);
    }

    /// How this connection's delivery compared with its siblings' at the
    /// endpoint's last check.
    #[cfg(test)]
    pub(crate) fn share_on_path(&self) -> ShareOnPath {
        self.share_on_path
    }

    /// Bytes the peer acknowledged so far, retransmissions and headers
    /// included (the delivery-rate sampler's count).
    pub(crate) fn delivered_bytes(&self) -> u64 {
        self.rate_sampler.delivered()
    }

    /// How many other connections this one's endpoint holds to the same peer
    /// host: flows from this sender that share the path with this one.
    pub fn path_siblings(&self) -> usize {
        self.path_siblings
    }

    /// Whether this connection's controller is loss-based (NewReno, CUBIC):
    /// it backs off at a full queue's overflow.
    pub(crate) fn is_loss_based(&self) -> bool {
        self.cfg.congestion.is_loss_based()
    }

    /// Whether this endpoint holds other connections to this one's peer host
    /// and a loss-based flow is among them or is this one.
    pub(crate) fn beside_a_loss_based_flow(&self) -> bool {
        self.path_siblings > 0 && self.loss_based_on_path
    }

    /// How much of an absence from its core the pacer makes up
    /// ([`crate::pacer::catch_up_limit`]): a round trip, within 1-20 ms, and
    /// at most [`crate::pacer::BESIDE_LOSS_BASED_CATCH_UP`] beside a
    /// loss-based flow ([`Self::beside_a_loss_based_flow`]).
    fn catch_up_limit(&self) -> std::time::Duration {
        crate::pacer::catch_up_limit(self.rtt.smoothed(), self.beside_a_loss_based_flow())
    }

    /// Whether the handshake completed and the connection has not ended.
    pub fn is_established(&self) -> bool {
        self.state.is_established()
    }

    /// Whether the connection ended.
    pub fn is_closed(&self) -> bool {
        self.state.is_closed()
    }

    /// Why the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        match self.state {
            State::Closed { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// The send storage (a runtime reaches its packet memory through this).
    pub fn send_storage(&self) -> &S {
        &self.send
    }

    /// Mutable send storage.
    pub fn send_storage_mut(&mut self) -> &mut S {
        &mut self.send
    }

    /// The receive storage.
    pub fn recv_storage(&self) -> &R {
        self.recv.storage()
    }

    /// Mutable receive storage: a runtime takes in-order packet memory out of it
    /// and then reports the bytes with [`Connection::consume`].
    pub fn recv_storage_mut(&mut self) -> &mut R {
        self.recv.storage_mut()
    }

    /// Statistics snapshot.
    pub fn stats(&self) -> ConnectionStats {
        let mut s = self.stats.clone();
        s.rtt_min_us = self.rtt.min().as_micros() as u64;
        s.rtt_smoothed_us = self.rtt.smoothed().as_micros() as u64;
        s.rtt_var_us = self.rtt.var().as_micros() as u64;
        s.cwnd = self.cc.window();
        s.pacing_rate = self.pacing_rate().unwrap_or(0);
        s.pacing_late_us = self.pacer.late_total().as_micros() as u64;
        s.bytes_in_flight = self.sent.bytes_in_flight;
        s.stream_bytes_acked = self.send.start();
        let model = self.cc.model();
        s.congestion = self.cfg.congestion;
        s.cc_state = model.state;
        s.cc_bandwidth_bps = model.bandwidth.saturating_mul(8);
        s.cc_min_rtt_us = model.min_rtt.map_or(0, |d| d.as_micros() as u64);
        s.cc_bdp = model.bdp;
        s.cc_probe_wait_rounds = model.probe_wait_rounds;
        s.cc_queue_verdicts = model.queue_verdicts;
        s.window_packets = self.window_packets;
        s.recv_window = self.recv.window();
        s.send_window = self.send.capacity();
        s.stream_bytes_arrived = self.recv.received_bytes();
        s
    }

    /// Next event for the application.
    pub(crate) fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ---------------------------------------------------------------- application side

    /// Copies as much of `data` into the send buffer as fits, and as the unsent
    /// bound allows ([`Connection::unsent_limit`]). A full buffer is backpressure
    /// ([`WriteError::Blocked`]), never growth.
    pub fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        self.check_writable()?;
        let room = usize::try_from(self.unsent_room()).unwrap_or(usize::MAX);
        let n = self.send.write(&data[..data.len().min(room)]);
        if n == 0 && !data.is_empty() {
            self.writable_wanted = true;
            return Err(WriteError::Blocked);
        }
        Ok(n)
    }

    /// Like [`Connection::write`], but the storage takes the data itself (e.g. a
    /// runtime handing over a packet buffer instead of bytes to copy). `f` gets
    /// the storage and how many more unsent bytes the connection takes
    /// ([`Connection::unsent_limit`]); it reports what it added and whether data
    /// was left over because the storage was full or that room was used up; then
    /// the connection emits [`Event::Writable`] once space frees. Nothing added
    /// to a full storage is [`WriteError::Blocked`].
    pub fn write_with(
        &mut self,
        f: impl FnOnce(&mut S, u64) -> StorageWrite,
    ) -> Result<usize, WriteError> {
        self.check_writable()?;
        let room = self.unsent_room();
        let w = f(&mut self.send, room);
        if w.full {
            self.writable_wanted = true;
            if w.bytes == 0 {
                return Err(WriteError::Blocked);
            }
        }
        Ok(w.bytes)
    }

    /// Bytes written but not sent yet (retransmissions aside).
    pub fn unsent(&self) -> u64 {
        self.send.end().saturating_sub(self.send_next)
    }

    /// The most unsent bytes the connection takes: about one congestion window,
    /// or [`TransportConfig::unsent_time`] at its pacing rate (20 ms unless set),
    /// at least 64 KiB. A writer is held back beyond
    /// it, so an application never runs further ahead of the path than the
    /// controller's own estimate of it, and a close never waits for more than
    /// that to drain (a sender whose rate collapsed under loss once held
    /// megabytes). [`Event::Writable`] follows once half of it was sent.
    pub fn unsent_limit(&self) -> u64 {
        let time = self.cfg.unsent_time.unwrap_or(autotune::UNSENT_RATE_TIME);
        autotune::unsent_target(self.cc.window(), self.cc.pacing_rate(), time)
    }

    fn unsent_room(&self) -> u64 {
        self.unsent_limit().saturating_sub(self.unsent())
    }

    /// How many bytes [`Connection::write`] takes now: the free space in the send
    /// buffer, capped by the unsent bound ([`Connection::unsent_limit`]). An
    /// application that produces data on demand produces this much.
    pub fn write_room(&self) -> u64 {
        self.send_capacity().min(self.unsent_room())
    }

    /// Free space in the send buffer.
    pub fn send_capacity(&self) -> u64 {
        self.send.capacity() - (self.send.end() - self.send.start())
    }

    fn check_writable(&self) -> Result<(), WriteError> {
        if let Some(r) = self.close_reason() {
            return Err(WriteError::Closed(r));
        }
        if self.fin >= Fin::Requested {
            return Err(WriteError::Finished);
        }
        Ok(())
    }

    /// Reads in-order received bytes. `Ok(0)` means end of stream once the peer
    /// finished (see [`Connection::is_peer_finished`]) and nothing is readable now
    /// otherwise.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = self.recv.read(out);
        self.after_read(n);
        n
    }

    /// Caps the receive credit at `bytes` beyond what the application has read:
    /// this connection's share of a memory budget (the runtime divides its packet
    /// pool among its connections). Credit already given is kept; a larger budget
    /// is advertised with the next acknowledgement.
    pub fn set_recv_budget(&mut self, bytes: u64) {
        let before = self.recv.limit();
        self.recv
            .set_budget(bytes.max(self.cfg.max_payload()), self.advertised_max_data);
        if self.recv.limit() > before {
            self.acks.request();
        }
    }

    /// The peer's connection id (0 until the handshake gave it).
    pub(crate) fn remote_cid(&self) -> u64 {
        self.remote_cid
    }

    /// Until when a released connection that closed gracefully answers its peer
    /// with a Close: the peer's idle timer fires by then (it last heard from us
    /// at our last send, and the idle timeout in force is the smaller of both).
    pub(crate) fn linger_deadline(&self) -> Instant {
        self.last_recv.max(self.last_send) + self.idle_timeout
    }

    /// Whether the peer's Close arrived (see [`Connection::linger_deadline`]):
    /// if not (our closing state ran out without it), the peer may still be
    /// waiting for ours.
    pub(crate) fn peer_close_heard(&self) -> bool {
        matches!(
            self.state,
            State::Closed {
                peer_close: PeerCloseHeard::Yes,
                ..
            }
        )
    }

    /// The receive credit limit: the stream offset up to which the peer may send
    /// (advertised, or about to be with the next acknowledgement). Credit is never
    /// taken back, so the bytes between the read offset and this limit are what
    /// the connection may still have to hold.
    pub fn recv_limit(&self) -> u64 {
        self.recv.limit()
    }

    /// Stream bytes a full-size data packet carries on this connection, either
    /// way: the smaller `max_datagram` of the two sides (told in the handshake;
    /// this side's own until then) less the data header. Each datagram received
    /// pins one packet buffer whatever its size, so a runtime counts its credit
    /// in these, and its writers fill buffers of this size so that every
    /// datagram sent is a full one.
    pub fn data_payload(&self) -> u64 {
        data_payload(self.peer_max_datagram)
    }

    /// [`Connection::set_recv_budget`] for a connection that has sent nothing yet:
    /// its first packet (Init or Accept) already advertises the capped credit.
    /// `memory`: receive memory counted in this side's full datagrams; a peer
    /// sending smaller ones (a server knows from the Init) gets credit for as
    /// many datagrams, not as many bytes.
    pub(crate) fn set_initial_recv_budget(&mut self, memory: u64) {
        let own = self.cfg.max_payload().max(1);
        let grain = self.data_payload().min(own);
        let bytes = crate::recv_buffer::credit_of_memory(memory, own, grain);
        self.recv.set_budget(bytes.max(grain), 0);
        self.advertised_max_data = self.recv.limit();
    }

    /// Marks `n` in-order bytes as read without copying them (the caller took their
    /// memory out of the receive storage). `n` is capped at [`Connection::readable`].
    pub fn consume(&mut self, n: u64) -> u64 {
        let n = self.recv.skip(n);
        self.after_read(n as usize);
        n
    }

    fn after_read(&mut self, n: usize) {
        if n > 0 {
            self.readable_signalled = false;
            // Reopen the window early (after a quarter of the buffer) so the
            // sender does not stall on credit.
            let limit = self.recv.limit();
            if limit - self.advertised_max_data >= self.recv.window() / WINDOW_UPDATE_FRACTION {
                self.acks.request();
            }
        }
    }

    /// Bytes ready to read.
    pub fn readable(&self) -> u64 {
        self.recv.readable()
    }

    /// Whether the peer finished and everything it sent was read.
    pub fn is_peer_finished(&self) -> bool {
        self.peer_fin.final_size() == Some(self.recv.read_offset())
    }

    /// No more data from this side (the peer sees end of stream after the last byte).
    pub fn finish(&mut self) {
        self.fin = self.fin.max(Fin::Requested);
    }

    /// Graceful close: finishes this side's stream; the connection ends
    /// ([`CloseReason::Graceful`]) once every byte both ways was acknowledged.
    pub fn close(&mut self, now: Instant) {
        self.finish();
        self.close_requested = true;
        self.check_graceful(now);
    }

    /// Aborts at once; the peer learns `code`.
    pub fn reset(&mut self, code: u32) {
        if self.state.is_closed() {
            return;
        }
        if self.state.is_handshake() {
            self.set_closed(CloseReason::LocalReset(code));
            return;
        }
        ControlOut::queue(&mut self.control_out, ControlOut::Reset(code));
    }

    /// Whether everything written was acknowledged (and the finish too, if requested).
    pub fn is_send_complete(&self) -> bool {
        self.acked.contiguous_end(0) >= self.send.end()
            && (self.fin == Fin::Open || self.fin == Fin::Acked)
    }

    // ---------------------------------------------------------------- timers

    fn pto(&self) -> Duration {
        self.rtt.pto_base(self.peer_max_ack_delay)
            * 2u32.saturating_pow(self.pto_count.min(MAX_BACKOFF_EXP))
    }

    fn loss_deadline(&self) -> Option<Instant> {
        if !self.state.is_established() {
            return None;
        }
        if self.loss_time.is_some() {
            return self.loss_time;
        }
        if self.sent.in_flight() > 0 {
            return self.sent.last_ack_eliciting.map(|t| t + self.pto());
        }
        None
    }

    /// When a sender blocked on credit with nothing in flight probes the receiver
    /// (as QUIC's DATA_BLOCKED): credit travels in acks, which are not reliable, so
    /// without the probe one lost credit update would stall the sender for good.
    /// The probe is an ack-eliciting Keepalive (the probe timer covers its loss);
    /// the interval doubles while the receiver grants nothing.
    fn credit_probe_deadline(&self) -> Option<Instant> {
        if self.sent.in_flight() > 0 {
            return None;
        }
        let base = self.rtt.pto_base(self.peer_max_ack_delay);
        self.credit_wait
            .map(|t| t + base * 2u32.saturating_pow(self.credit_probes.min(MAX_BACKOFF_EXP)))
    }

    /// The deadline of `timer` in the current state, if armed. Only timers for
    /// what the state can act on are armed (a past deadline the state never acts
    /// on would spin the caller).
    fn deadline(&self, timer: Timer) -> Option<Instant> {
        let established = self.state.is_established();
        let probing = established && !self.keepalive_pending;
        match timer {
            Timer::Idle => (!self.state.is_closed()).then(|| self.last_recv + self.idle_timeout),
            Timer::Close => match self.state {
                State::Closing { deadline } => Some(deadline),
                _ => None,
            },
            Timer::InitRetry => match &self.state {
                State::Handshake(h) => h.retry_at,
                _ => None,
            },
            Timer::LossDetection => self.loss_deadline(),
            Timer::Pacing => self.pacing_wait.filter(|_| established),
            Timer::CreditProbe => self.credit_probe_deadline().filter(|_| probing),
            Timer::Ack => self.acks.deadline().filter(|_| established),
            Timer::Keepalive => self
                .cfg
                .keepalive
                .map(|k| self.last_send + k)
                .filter(|_| probing),
        }
    }

    /// Every timer's deadline now.
    fn timers(&self) -> TimerTable {
        let mut table = TimerTable::default();
        for timer in Timer::ALL {
            table.set(timer, self.deadline(timer));
        }
        table
    }

    /// When [`Connection::handle_timeout`] must be called next.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.timers().next()
    }

    /// Runs the timers expired at `now`, in [`Timer::ALL`] order. Each deadline is
    /// derived again after the ones before it ran: one timer can arm another
    /// (loss detection that empties the flight arms the credit probe).
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        // The controller's and the recovery's events name this connection.
        let _in = self.span.clone().entered();
        for timer in Timer::ALL {
            if self.deadline(timer).is_some_and(|t| now >= t) {
                self.on_timer(timer, now);
                if self.state.is_closed() {
                    return;
                }
            }
        }
    }

    fn on_timer(&mut self, timer: Timer, now: Instant) {
        tracing::trace!(parent: &self.span, ?timer, "timer");
        match timer {
            Timer::Idle => {
                let r = if self.state.is_handshake() {
                    CloseReason::Unreachable
                } else {
                    CloseReason::TimedOut
                };
                self.set_closed(r);
            }
            Timer::Close => self.set_closed(CloseReason::Graceful),
            Timer::InitRetry => {
                if let State::Handshake(h) = &mut self.state {
                    h.retry_at = None;
                    h.init_pending = true;
                }
            }
            Timer::LossDetection => {
                if self.loss_time.is_some() {
                    self.detect_lost(now);
                    self.pass_train_rate();
                } else {
                    self.pto_count += 1;
                    self.stats.pto_count += 1;
                    self.probes = PTO_PROBES;
                    tracing::debug!(parent: &self.span, pto_count = self.pto_count, "probe timeout");
                }
            }
            Timer::Pacing => self.pacing_wait = None,
            Timer::CreditProbe => {
                self.keepalive_pending = true;
                self.credit_probes = self.credit_probes.saturating_add(1);
                self.credit_wait = Some(now);
            }
            Timer::Ack => self.acks.on_timeout(now),
            Timer::Keepalive => self.keepalive_pending = true,
        }
    }

    // ---------------------------------------------------------------- receiving

    /// Handles a decoded packet addressed to this connection. `len` is the datagram length.
    pub(crate) fn handle_packet(
        &mut self,
        now: Instant,
        pkt: &Packet<'_>,
        len: usize,
        memory: &R::Packet,
    ) {
        let _in = self.span.clone().entered();
        if self.state.is_closed() {
            if matches!(pkt.body, Body::Close { .. } | Body::Reset { .. }) {
                // Ended by our closing deadline while the peer's Close was on
                // its way: the peer waits for nothing more.
                if let State::Closed { peer_close, .. } = &mut self.state {
                    *peer_close = PeerCloseHeard::Yes;
                }
            } else if self.close_reason() == Some(CloseReason::Graceful) {
                // Our Close may have been lost while the peer still waits for it.
                ControlOut::queue(&mut self.control_out, ControlOut::Close);
            }
            return;
        }
        self.stats.packets_received += 1;
        self.stats.bytes_received += len as u64;
        // Handshake packets carry no packet number to validate (they are answered
        // statelessly or repeated); everything else counts as hearing from the peer
        // only once its number passed the window check below.
        if self.state.is_handshake()
            || matches!(
                pkt.body,
                Body::Accept { .. } | Body::Retry { .. } | Body::Init { .. }
            )
        {
            self.last_recv = now;
            self.peer_ts = pkt.header.timestamp;
        }
        match &pkt.body {
            Body::Accept { params } => {
                if self.side == Side::Client && self.state.is_handshake() {
                    self.apply_peer_params(params);
                    self.state = State::Established;
                    // A first packet to the server's connection id at once, data or
                    // not: it proves our address, and a server that accepted without
                    // a Retry hands the connection to its application only then.
                    self.keepalive_pending = true;
                    tracing::debug!(parent: &self.span, "connected");
                    let echo = pkt.header.timestamp_echo;
                    if echo != 0 {
                        let rtt_us = self.timestamp(now).wrapping_sub(echo);
                        if rtt_us < MAX_TIMESTAMP_RTT_US {
                            let rtt =
                                Duration::from_micros(rtt_us as u64).max(Duration::from_micros(1));
                            self.rtt.update(rtt, Duration::ZERO, self.cfg.max_ack_delay);
                            self.first_rtt_sample.get_or_insert(now);
                            self.stats.rtt_histogram.record(rtt.as_micros() as u64);
                            self.resume_from_saved_path(rtt, false);
                        }
                    }
                    self.events.push_back(Event::Connected);
                }
                return;
            }
            Body::Retry { cookie } => {
                if let (Side::Client, State::Handshake(h)) = (self.side, &mut self.state) {
                    h.cookie = cookie.to_vec();
                    h.init_pending = true;
                }
                return;
            }
            Body::Init { .. } => {
                // The client did not get our Accept: send it again.
                if self.side == Side::Server && self.state.is_established() {
                    ControlOut::queue(&mut self.control_out, ControlOut::Accept);
                }
                return;
            }
            Body::Reset { code } if self.state.is_handshake() => {
                if self.side == Side::Client && *code == REFUSED_CODE {
                    self.set_closed(CloseReason::Refused);
                } else {
                    self.set_closed(CloseReason::PeerReset(*code));
                }
                return;
            }
            _ if self.state.is_handshake() => return,
            _ => {}
        }
        // Packet numbers grow by one per packet: a number far beyond the largest seen
        // is forged or garbage, and must not poison the acknowledgement state.
        // Compared against the largest number of *any* validated packet: pure acks
        // count too, or a long run of them after one Keepalive would push every later
        // packet out of the window for good.
        // A short header carries the low 40 bits: the whole number is the one
        // nearest the next expected (the first taken as it is: a sender starts
        // below 2^32).
        let pn = pkt.header.pn.expand(self.largest_pn_received);
        if let Some(l) = self.largest_pn_received {
            if pn > l.saturating_add(self.max_pn_jump()) {
                tracing::debug!(parent: &self.span, pn, largest = l, "packet number out of window");
                self.stats.out_of_window += 1;
                return;
            }
        }
        self.largest_pn_received = Some(self.largest_pn_received.map_or(pn, |l| l.max(pn)));
        self.last_recv = now;
        self.peer_ts = pkt.header.timestamp;
        // Close and Reset only after the number check: a forged number outside the
        // window must not end the connection. (Nothing is authenticated: an on-path
        // attacker can still forge both; see docs/PROTOCOL.md.)
        match &pkt.body {
            Body::Reset { code } => {
                self.set_closed(CloseReason::PeerReset(*code));
                return;
            }
            Body::Close { code } => {
                // A peer sends Close only once it holds all our data and our finish,
                // so with its stream complete here this is a graceful end.
                let r = if *code == 0 && self.fin >= Fin::Sent && self.peer_fin_complete() {
                    CloseReason::Graceful
                } else {
                    CloseReason::PeerClosed(*code)
                };
                if self.state.is_closing() && self.control_out != Some(ControlOut::Close) {
                    self.end(r, PeerCloseHeard::Yes);
                } else {
                    // Established, or closing with our Close not yet out (what
                    // completed our close came in the same burst as the peer's
                    // Close): answer, then end. Ending first would release the
                    // connection with our Close still queued, and the peer, closing
                    // too, would wait its whole closing period for it.
                    ControlOut::queue(&mut self.control_out, ControlOut::CloseThenEnd(r));
                }
                return;
            }
            _ => {}
        }
        if self.state.is_closing() {
            // Still hearing from the peer: repeat the close.
            ControlOut::queue(&mut self.control_out, ControlOut::Close);
        }
        if let Body::Data {
            offset, payload, ..
        } = &pkt.body
        {
            self.autotune_recv(
                now,
                pkt.header.timestamp_echo,
                *offset,
                payload.len() as u64,
            );
        }
        match &pkt.body {
            Body::Data {
                offset,
                fin,
                payload,
            } if !self.accept_data(*offset, *fin, payload, memory) => return,
            Body::Ack(a) => self.on_ack(now, a, pkt.header.timestamp),
            _ => {}
        }
        if pkt.body.is_ack_eliciting() {
            let wait = match pkt.body {
                Body::Data { fin: true, .. } => AckWait::AtOnce,
                _ => AckWait::Delayable,
            };
            self.acks
                .on_packet(pn, now, wait, self.cfg.ack_every, self.cfg.max_ack_delay);
        } else {
            self.acks.on_non_eliciting(pn);
        }
        self.check_graceful(now);
    }

    /// How far above the largest packet number received a new one may be: packet
    /// numbers grow by one per packet, so a bigger jump is forged or garbage. The
    /// largest packet window the configuration allows (it grows with the
    /// congestion window) sets the scale, never beyond what a short header's 40
    /// bits tell apart.
    fn max_pn_jump(&self) -> u64 {
        (self.cfg.max_window_packets() * PN_JUMP_WINDOWS).clamp(MIN_PN_JUMP, wire::MAX_PN_DISTANCE)
    }

    /// Receive-window autotuning: an RTT sample from the data packet's timestamp
    /// echo, and growth of the credit to cover the bytes arriving per RTT.
    fn autotune_recv(&mut self, now: Instant, echo: u32, offset: u64, bytes: u64) {
        if echo != 0 {
            let us = self.timestamp(now).wrapping_sub(echo);
            self.recv_tune
                .on_rtt_sample(now, Duration::from_micros(us as u64));
            self.echo_rtt_sample(now, echo, us);
        }
        self.recv_tune.on_packet(
            now,
            offset,
            self.recv.contiguous_end(),
            self.recv.highest_received(),
        );
        let cap = self.recv.capacity();
        match self.recv_tune.on_data(now, bytes, cap, &self.cfg) {
            // Grow only while the application keeps up (Linux sizes by the bytes
            // the application copied): a reader that lags is the limit, not the path.
            Some(want) if want > cap => {
                if self.recv.readable() <= cap / 2 && self.recv.grow(want) {
                    // Tell the sender about the larger credit soon.
                    self.acks.request();
                }
            }
            // Never below the configured buffer.
            Some(want) if want < cap => self
                .recv
                .shrink(want.max(self.cfg.recv_buffer), self.advertised_max_data),
            Some(_) | None => {}
        }
    }

    /// A data packet's timestamp echo as an RTT sample for loss recovery, taken
    /// while nothing of ours awaits an acknowledgement. A receiver that only
    /// sends acks takes no ack-based sample, so its probe timeout (for its
    /// receipt, its close, its first data after a long transfer in) would run on
    /// the initial RTT and its large variance: three initial RTTs, doubling per
    /// loss. Only the first packet echoing a timestamp counts (RFC 7323 §4.3's
    /// rule in spirit): later ones also carry the peer's wait for our next ack.
    fn echo_rtt_sample(&mut self, now: Instant, echo: u32, us: u32) {
        if echo == self.last_echo_sampled
            || self.sent.in_flight() > 0
            || us == 0
            || us >= MAX_TIMESTAMP_RTT_US
        {
            return;
        }
        self.last_echo_sampled = echo;
        let rtt = Duration::from_micros(us as u64);
        self.rtt.update(rtt, Duration::ZERO, self.cfg.max_ack_delay);
        self.first_rtt_sample.get_or_insert(now);
        self.stats.rtt_histogram.record(us as u64);
    }

    /// Starts the connection from a saved path (`crate::saved_path`) once its
    /// handshake's or first ack's RTT confirms it, else from cold. Set on the
    /// client, at connect.
    pub(crate) fn set_resume(&mut self, saved: SavedPath) {
        self.resume = Some(saved);
    }

    /// `rtt` confirms the saved path or not: the jump, or why none; the send
    /// buffer and packet window follow the jump's window. The handshake's RTT
    /// decides when it confirms the path; when it does not, the first ack's
    /// (`last_chance`) does: the handshake's can include the wait for the
    /// peer's address (an ARP request held the Init for a retry, 100 ms, on
    /// a 10 ms path through pmdt-wanem) or for its accept.
    fn resume_from_saved_path(&mut self, rtt: Duration, last_chance: bool) {
        let Some(saved) = self.resume else {
            return;
        };
        // Never below the initial window.
        let outcome = match saved.jump(rtt, self.cc.window()) {
            Err(_) if !last_chance => return,
            Ok(jump) if self.cc.resume(jump) => ResumeOutcome::jumped(jump),
            Ok(_) => ResumeOutcome::NotSupported,
            Err(why) => why,
        };
        self.resume = None;
        tracing::debug!(parent: &self.span, ?outcome, "resume from a saved path");
        self.stats.resume = Some(outcome);
        self.autotune_send();
    }

    /// The send buffer and packet window follow the congestion window.
    fn autotune_send(&mut self) {
        let cwnd = self.cc.window();
        self.window_packets = autotune::packet_window(cwnd, self.window_packets, &self.cfg);
        let cap = self.send.capacity();
        let credit = self.peer_max_data.saturating_sub(self.send.start());
        if let Some(want) = autotune::send_buffer_target(cwnd, credit, cap, &self.cfg) {
            if self.send.grow(want) > cap && self.writable_wanted {
                self.writable_wanted = false;
                self.events.push_back(Event::Writable);
            }
        }
    }

    fn peer_fin_complete(&self) -> bool {
        self.peer_fin.is_complete()
    }

    fn accept_data(&mut self, offset: u64, fin: bool, payload: &[u8], memory: &R::Packet) -> bool {
        let end = offset + payload.len() as u64;
        if end > self.recv.limit() {
            tracing::debug!(parent: &self.span, offset, end, limit = self.recv.limit(), "data beyond the credit refused");
            self.stats.out_of_window += 1;
            return false;
        }
        if let Some(f) = self.peer_fin.final_size() {
            if end > f || (fin && end != f) {
                self.stats.out_of_window += 1;
                return false;
            }
        }
        if fin {
            // Data beyond a hole counts too: the final size cannot lie below any
            // byte received.
            if self.recv.highest_received() > end {
                self.stats.out_of_window += 1;
                return false;
            }
        }
        // Beyond the fragment limit or the storage's memory budget the packet is
        // dropped unacknowledged: the sender retransmits it later.
        let Some(new) = self.recv.try_insert(offset, payload, memory) else {
            tracing::debug!(parent: &self.span, offset, end, contiguous = self.recv.contiguous_end(), limit = self.recv.limit(), "data refused by the receive storage");
            self.stats.out_of_window += 1;
            return false;
        };
        if new == 0 && !payload.is_empty() {
            self.stats.duplicate_packets += 1;
        }
        self.stats.stream_bytes_received = self.recv.contiguous_end();
        if self.recv.readable() > 0 && !self.readable_signalled {
            self.readable_signalled = true;
            self.events.push_back(Event::Readable);
        }
        if self
            .peer_fin
            .on_received(fin.then_some(end), self.recv.contiguous_end())
        {
            self.events.push_back(Event::PeerFinished);
        }
        true
    }

    /// `peer_time`: the ack's header timestamp (the peer's clock, µs).
    fn on_ack(&mut self, now: Instant, a: &wire::Ack, peer_time: u32) {
        // When the peer received the newest packet this acknowledges, by its clock.
        let received_at = peer_time.wrapping_sub(a.ack_delay_us);
        let largest = a.largest();
        let sent_end = self.send_next;
        if largest >= self.next_pn || a.data_cumulative > sent_end {
            self.stats.invalid_acks += 1;
            return;
        }
        if a.ranges.iter().any(|r| self.acks_skipped(r.start, r.end)) {
            // A number never sent was acknowledged: the peer acks optimistically.
            tracing::debug!(parent: &self.span, "optimistic ack of a skipped packet number");
            self.stats.invalid_acks += 1;
            self.reset(PROTOCOL_VIOLATION_CODE);
            return;
        }
        let tracked = self.sent.tracked();
        let mut newly_largest: Option<SentPacket> = None;
        let mut any_new = false;
        // RFC 9002 §7.8: the window grows only while it limits the sender. Blocked by
        // the packet window, the receiver's credit or the application, it does not.
        let app_limited = self
            .blocked
            .is_some_and(|b| !matches!(b.0, Blocked::Window | Blocked::Pacing));
        for r in &a.ranges {
            self.stats.spurious_retransmits += self.sent.take_lost_in(r.start, r.end);
            let lo = r.start.max(tracked.start);
            let hi = r.end.saturating_add(1).min(tracked.end);
            for pn in lo..hi {
                let Some(p) = self.sent.take(pn) else {
                    continue;
                };
                self.acked_pns.insert_one(pn);
                any_new = true;
                self.rate_sampler
                    .on_acked(now, p.time, p.size as u64, &p.rate, received_at);
                if pn == largest {
                    newly_largest = Some(p);
                }
                if let Some(c) = p.chunk {
                    self.acked.insert(c.offset..c.end());
                    if c.fin {
                        self.fin = Fin::Acked;
                    }
                }
                self.cc
                    .on_ack(now, p.time, p.size as u64, app_limited, &self.rtt);
            }
        }
        if let Some(p) = newly_largest {
            self.rate_sampler
                .on_newest_received(p.time, received_at.wrapping_sub(self.timestamp(p.time)));
            let ack_delay = Duration::from_micros(a.ack_delay_us as u64);
            let sample = now
                .saturating_duration_since(p.time)
                .max(Duration::from_micros(1));
            self.rtt.update(sample, ack_delay, self.peer_max_ack_delay);
            self.first_rtt_sample.get_or_insert(now);
            self.stats.rtt_histogram.record(sample.as_micros() as u64);
            self.resume_from_saved_path(sample, true);
        }
        // Acknowledged numbers still inside the tracked range: persistent congestion
        // needs to know whether one lies between two lost packets.
        self.acked_pns.remove_below(self.sent.tracked().start);
        if any_new {
            self.pto_count = 0;
        }
        self.largest_acked = Some(self.largest_acked.map_or(largest, |l| l.max(largest)));
        if a.max_data > self.peer_max_data {
            self.peer_max_data = a.max_data;
            self.credit_wait = None;
            self.credit_probes = 0;
        }
        if a.data_cumulative > 0 {
            self.acked.insert(0..a.data_cumulative);
        }
        let done = self.acked.contiguous_end(0);
        if done > self.send.start() {
            self.send.release_to(done.min(self.send.end()));
            if self.writable_wanted && self.send_capacity() > 0 {
                self.writable_wanted = false;
                self.events.push_back(Event::Writable);
            }
        }
        self.detect_lost(now);
        self.pass_train_rate();
        if let Some(rs) =
            self.rate_sampler
                .take_sample(now, self.rtt.min(), self.sent.bytes_in_flight)
        {
            self.cc.on_rate_sample(now, &rs, &self.rtt);
        }
        self.autotune_send();
        // Lost records only serve spurious-retransmit detection: expire old ones, but
        // scan for them at most once per probe timeout, not on every ack.
        if now >= self.next_lost_prune {
            self.next_lost_prune = now + self.pto();
            self.sent.forget_lost_before(
                now.checked_sub(self.pto() * LOST_RECORD_PTOS)
                    .unwrap_or(now),
            );
        }
    }

    /// The initial train's rate to the controller, once measured (by an ack
    /// or a loss, see [`DeliveryRateSampler::take_train_rate`]).
    fn pass_train_rate(&mut self) {
        if let Some(rate) = self.rate_sampler.take_train_rate() {
            self.cc.on_initial_train(rate, &self.rtt);
        }
    }

    fn detect_lost(&mut self, now: Instant) {
        let Some(largest) = self.largest_acked else {
            return;
        };
        let (num, den) = TIME_THRESHOLD;
        let loss_delay = (self.rtt.conservative() * num / den).max(GRANULARITY);
        let lost_before = now.checked_sub(loss_delay);
        self.loss_time = None;
        let mut lost = std::mem::take(&mut self.lost_scratch);
        lost.clear();
        for (pn, p) in self.sent.below(largest) {
            if pn + self.cfg.packet_threshold <= largest || lost_before.is_some_and(|t| p.time <= t)
            {
                lost.push((pn, p.time));
            } else {
                let t = p.time + loss_delay;
                self.loss_time = Some(self.loss_time.map_or(t, |x| x.min(t)));
            }
        }
        if lost.is_empty() {
            self.lost_scratch = lost;
            return;
        }
        let mut lost_bytes = 0;
        let first_time = lost[0].1;
        let mut last_time = first_time;
        // An outage loses every retransmission too: copies would double the load
        // into it.
        let persistent = self.in_persistent_congestion(&lost);
        for &(pn, _) in &lost {
            let Some(p) = self.sent.take(pn) else {
                continue;
            };
            self.sent.record_lost(pn, now);
            self.stats.losses_detected += 1;
            lost_bytes += p.size as u64;
            if p.rate.in_train {
                self.rate_sampler.on_train_lost(p.size as u64);
            }
            last_time = last_time.max(p.time);
            if let Some(c) = p.chunk {
                self.queue_retransmit(c, p.sending, !persistent);
            }
        }
        self.rate_sampler.on_lost(lost_bytes);
        tracing::trace!(
            parent: &self.span,
            packets = lost.len(),
            bytes = lost_bytes,
            persistent,
            "lost"
        );
        lost.clear();
        self.lost_scratch = lost;
        self.cc
            .on_congestion_event(now, last_time, persistent, lost_bytes);
    }

    /// RFC 9002 §7.6.2: persistent congestion when two lost packets were sent more
    /// than the persistent-congestion period apart, no packet sent between them was
    /// acknowledged, and both were sent after the first RTT sample. `lost` is in
    /// packet-number order.
    fn in_persistent_congestion(&self, lost: &[(u64, Instant)]) -> bool {
        let Some(first_sample) = self.first_rtt_sample else {
            return false;
        };
        let period = self.rtt.pto_base(self.peer_max_ack_delay) * PERSISTENT_CONGESTION_THRESHOLD;
        // First packet (send time) of the current run of losses and the last number.
        let mut run: Option<(Instant, u64)> = None;
        for &(pn, time) in lost {
            if time <= first_sample {
                run = None;
                continue;
            }
            let start = match run {
                Some((start, prev)) if !self.acked_pns.intersects(prev + 1..pn) => start,
                _ => time,
            };
            if time.saturating_duration_since(start) > period {
                return true;
            }
            run = Some((start, pn));
        }
        false
    }

    /// Declares lost (without a congestion signal) outstanding packets more than
    /// [`Connection::max_pn_jump`] numbers behind the next one: a peer that keeps
    /// talking but never acknowledges them would otherwise make the sent list span
    /// every number sent since (acks included), without bound.
    fn expire_ancient(&mut self, now: Instant) {
        let span = self.max_pn_jump();
        while self.sent.in_flight() > 0
            && self.next_pn.saturating_sub(self.sent.tracked().start) > span
        {
            let Some((pn, p)) = self.sent.pop_oldest() else {
                break;
            };
            self.sent.record_lost(pn, now);
            self.stats.losses_detected += 1;
            self.rate_sampler.on_lost(p.size as u64);
            if let Some(c) = p.chunk {
                self.queue_retransmit(c, p.sending, false);
            }
        }
    }

    /// Queues chunk `c`, lost in a packet that was its `sending`, for
    /// retransmission: not when acknowledged meanwhile, nor when the packet was an
    /// earlier copy (the later one, queued right behind it, decides);
    /// [`LOST_AGAIN_COPIES`] times when it was lost again, and
    /// [`TAIL_REPAIR_COPIES`] times once the stream's end went out, when `copies`
    /// allows.
    fn queue_retransmit(&mut self, c: Chunk, sending: Sending, copies: bool) {
        if self.chunk_acked(&c) || sending == Sending::EarlierCopy {
            return;
        }
        let n = if !copies {
            1
        } else if sending == Sending::Again {
            LOST_AGAIN_COPIES
        } else if self.fin >= Fin::Sent {
            TAIL_REPAIR_COPIES
        } else {
            1
        };
        for _ in 0..n {
            self.retransmit.push_back(c);
        }
    }

    fn chunk_acked(&self, c: &Chunk) -> bool {
        let data = c.len == 0
            || self.acked.contains_range(c.offset..c.end())
            || c.end() <= self.send.start();
        data && (!c.fin || self.fin == Fin::Acked)
    }

    fn check_graceful(&mut self, now: Instant) {
        // Every byte acknowledged, not only the finish: it may have left (and been
        // acknowledged) in a later packet than data that was lost.
        if self.close_requested
            && self.state.is_established()
            && self.fin == Fin::Acked
            && self.is_send_complete()
            && self.peer_fin_complete()
        {
            let period = (self.pto() * CLOSING_PTOS).min(self.idle_timeout / CLOSING_IDLE_FRACTION);
            self.state = State::Closing {
                deadline: now + period,
            };
            ControlOut::queue(&mut self.control_out, ControlOut::Close);
            self.events.push_back(Event::Completed);
            tracing::debug!(parent: &self.span, ?period, "closing");
        }
    }

    fn set_closed(&mut self, r: CloseReason) {
        self.end(r, PeerCloseHeard::No);
    }

    /// Ends the connection (once: a later end changes nothing).
    fn end(&mut self, r: CloseReason, heard: PeerCloseHeard) {
        if self.state.is_closed() {
            return;
        }
        // The answer to the peer's Close still queued (a timer ended us first):
        // the Close was heard all the same.
        let heard = if matches!(self.control_out, Some(ControlOut::CloseThenEnd(_))) {
            PeerCloseHeard::Yes
        } else {
            heard
        };
        self.state = State::Closed {
            reason: r,
            peer_close: heard,
        };
        if self.control_out == Some(ControlOut::Accept) {
            // A closed connection answers nothing but with a Close.
            self.control_out = None;
        }
        tracing::debug!(parent: &self.span, reason = %r, "closed");
        self.events.push_back(Event::Closed(r));
        self.blocked = None;
        // Nothing will be sent again: release the tracking state.
        self.sent = SentPackets::default();
        self.retransmit = VecDeque::new();
        self.loss_time = None;
    }

    // ---------------------------------------------------------------- sending

    fn timestamp(&self, now: Instant) -> u32 {
        (now.saturating_duration_since(self.epoch).as_micros() as u32).max(1)
    }

    fn header(&mut self, now: Instant) -> Header {
        let pn = self.next_pn;
        self.next_pn += 1;
        if self.next_pn == self.next_skip {
            self.skip_pn();
        }
        Header {
            dst_cid: self.remote_cid,
            pn: pn.into(),
            timestamp: self.timestamp(now),
            timestamp_echo: self.peer_ts,
        }
    }

    /// Whether `[lo, hi]` holds a packet number skipped on purpose. The skipped
    /// numbers ascend, so a binary search per range: scanning all of them for
    /// every range of every ack took 1.6 % of a memif sender's cycles.
    fn acks_skipped(&self, lo: u64, hi: u64) -> bool {
        let i = self.skipped.partition_point(|&s| s < lo);
        self.skipped.get(i).is_some_and(|&s| s <= hi)
    }

    /// Skips the next packet number (never sent) and picks the next one to skip:
    /// a receiver that acknowledges it acknowledges what it never received (an
    /// optimistic ack, to inflate the window), as QUIC senders detect it (RFC 9000
    /// §21.4). The number is skipped after the previous packet, so `next_pn` is
    /// always the number the next packet gets.
    fn skip_pn(&mut self) {
        if self.skipped.len() >= MAX_SKIPPED_PNS {
            self.skipped.pop_front();
        }
        self.skipped.push_back(self.next_pn);
        self.next_pn += 1;
        self.next_skip = self.next_pn + next_skip_gap(&mut self.skip_rng);
    }

    fn pacing_rate(&self) -> Option<u64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if !self.cfg.pacing || !self.rtt.has_sample() {
            return None;
        }
        if self.cfg.starts_from_train() && self.rate_sampler.nothing_delivered() {
            // The initial window leaves as one burst (as TCP's): the spacing the
            // path gives it is the first bandwidth estimate (`InitialTrain`).
            return None;
        }
        let srtt = self.rtt.smoothed().as_nanos().max(1);
        let (num, den) = PACING_GAIN;
        Some(
            (self.cc.window() as u128 * num / den * 1_000_000_000 / srtt).min(u64::MAX as u128)
                as u64,
        )
    }

    fn note_blocked(&mut self, now: Instant, why: Option<Blocked>) {
        if let Some((b, since)) = self.blocked {
            if Some(b) == why {
                return;
            }
            let us = now.saturating_duration_since(since).as_micros() as u64;
            match b {
                Blocked::Window | Blocked::Packets => self.stats.blocked_window_us += us,
                Blocked::Pacing => self.stats.blocked_pacing_us += us,
                Blocked::Credit => self.stats.blocked_credit_us += us,
                Blocked::App => self.stats.blocked_app_us += us,
                Blocked::Idle => {}
            }
        }
        self.blocked = why.map(|w| (w, now));
    }

    /// Produces the next datagram into `buf` (header and payload), if any is due.
    pub(crate) fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let t = self.poll_transmit_header(now, buf)?;
        if let Some(p) = t.payload {
            self.send
                .copy_out(p.offset, &mut buf[t.header_len..t.header_len + p.len]);
        }
        Some(t)
    }

    /// Like [`Connection::poll_transmit`], but writes only the header: the caller
    /// appends `payload` (stream bytes at that offset) from its own storage, e.g. a
    /// reference to the packet memory that holds them.
    pub(crate) fn poll_transmit_header(
        &mut self,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        if self.state.is_closed() && self.control_out.is_none() {
            return None;
        }
        let _in = self.span.clone().entered();
        self.expire_ancient(now);
        let max = buf.len().min(self.peer_max_datagram as usize);
        let out = self.next_datagram(now, &mut buf[..max]);
        if let Some(t) = &out {
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += t.len as u64;
            self.last_send = now;
        }
        out
    }

    fn control(&mut self, now: Instant, body: Body<'_>, buf: &mut [u8]) -> Option<Transmit> {
        let header = self.header(now);
        let len = wire::encode(buf, &Packet { header, body }).ok()?;
        Some(Transmit {
            destination: self.remote,
            len,
            header_len: len,
            payload: None,
        })
    }

    fn next_datagram(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if self.state.is_closing() && self.acks.has_unacked() {
            // Acknowledge the peer's last data (its finish) before our Close.
            if let Some(t) = self.send_ack(now, buf) {
                return Some(t);
            }
        }
        if let Some(c) = self.control_out.take() {
            let t = self.control(now, c.body(|| self.local_params()), buf);
            if c == ControlOut::Accept && t.is_some() {
                self.note_advertised();
            }
            if let Some(r) = c.ends_with() {
                // Only the answer to the peer's Close follows hearing it.
                let heard = if matches!(c, ControlOut::CloseThenEnd(_)) {
                    PeerCloseHeard::Yes
                } else {
                    PeerCloseHeard::No
                };
                self.end(r, heard);
            }
            return t;
        }
        let initial_rtt = self.cfg.initial_rtt;
        let init_retry_most = (self.idle_timeout / 8).max(initial_rtt);
        match &mut self.state {
            State::Closed { .. } | State::Closing { .. } => return None,
            State::Handshake(h) => {
                if !h.init_pending {
                    return None;
                }
                h.init_pending = false;
                h.attempts += 1;
                // Doubling from the initial RTT, up to an eighth of the idle timeout:
                // several more tries before the handshake is given up.
                let backoff =
                    initial_rtt * 2u32.saturating_pow(h.attempts.min(MAX_INIT_BACKOFF_EXP));
                h.retry_at = Some(now + backoff.min(init_retry_most));
                let cookie = std::mem::take(&mut h.cookie);
                let params = self.local_params();
                let t = self.control(
                    now,
                    Body::Init {
                        params,
                        cookie: &cookie,
                    },
                    buf,
                );
                if let State::Handshake(h) = &mut self.state {
                    h.cookie = cookie;
                }
                if t.is_some() {
                    self.note_advertised();
                }
                return t;
            }
            State::Established => {}
        }
        if self.acks.wants_to_send(now) {
            if let Some(t) = self.send_ack(now, buf) {
                return Some(t);
            }
        }
        if let Some(t) = self.next_data(now, buf) {
            return Some(t);
        }
        if self.keepalive_pending || self.probes > 0 {
            self.keepalive_pending = false;
            self.probes = self.probes.saturating_sub(1);
            let pn = self.next_pn;
            let t = self.control(now, Body::Keepalive, buf)?;
            let rate = self.rate_sampler.on_sent(
                now,
                t.len as u64,
                self.sent.bytes_in_flight,
                false,
                None,
            );
            self.sent.on_sent(
                pn,
                SentPacket {
                    time: now,
                    size: t.len as u32,
                    chunk: None,
                    sending: Sending::First,
                    rate,
                },
            );
            return Some(t);
        }
        None
    }

    fn send_ack(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let limit = self.recv.limit();
        // Only as many ranges as fit: the state is cleared only for an ack that is
        // sent (acks must never vanish).
        let max_ranges = wire::ack_ranges_fitting(buf.len());
        let ack = self
            .acks
            .build(now, self.recv.contiguous_end(), limit, max_ranges)?;
        self.advertised_max_data = limit;
        self.control(now, Body::Ack(ack), buf)
    }

    /// An Init or Accept carrying the current credit (`local_params`'s
    /// `max_data`) left: the peer may send up to it, so it stays valid when the
    /// budget or the grain changes later.
    fn note_advertised(&mut self) {
        self.advertised_max_data = self.advertised_max_data.max(self.recv.limit());
    }

    fn local_params(&self) -> HandshakeParams {
        HandshakeParams {
            src_cid: self.local_cid,
            max_data: self.recv.limit(),
            max_datagram: self.cfg.max_datagram,
            max_ack_delay_us: self
                .cfg
                .max_ack_delay
                .as_micros()
                .min(wire::MAX_ACK_DELAY_US as u128) as u32,
            idle_timeout_ms: self.cfg.idle_timeout.as_millis().min(u32::MAX as u128) as u32,
            // Until the path is confirmed or not: what this side will send into.
            path_bdp: self.resume.map_or(0, |saved| saved.bdp()),
        }
    }

    fn next_data(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let max_payload = (buf.len().saturating_sub(wire::DATA_HEADER_LEN)) as u64;
        if max_payload == 0 {
            return None;
        }
        let probe = self.probes > 0;
        // Pick what to send: a retransmission first, then new data, then (probing)
        // the oldest unacknowledged chunk again.
        while self.retransmit.front().is_some_and(|c| self.chunk_acked(c)) {
            self.retransmit.pop_front();
        }
        let mut retx = true;
        // After two probe timeouts in a row with nothing acknowledged, the first
        // unacknowledged bytes go first (as a TCP retransmission timeout resends
        // from the first unacknowledged byte): a receiver out of memory drops
        // packets unacknowledged, keeping only data that repairs the hole it
        // waits for, so neither an ack nor a probe of new data would ever get the
        // stream moving again.
        let stale = if probe && self.pto_count >= 2 {
            self.first_unacked(max_payload)
        } else {
            None
        };
        let chunk = if let Some(c) = stale.or_else(|| self.retransmit.front().copied()) {
            let start = c.offset.max(self.send.start());
            Some(Chunk {
                offset: start,
                len: (c.end() - start) as u32,
                fin: c.fin,
            })
        } else {
            retx = false;
            self.new_chunk(max_payload)
        };
        if !retx && !probe && chunk.is_some() {
            if let Some(until) = self.gathering_train(now) {
                self.pacing_wait = Some(until);
                self.note_blocked(now, Some(Blocked::Pacing));
                return None;
            }
        }
        let chunk = match chunk {
            Some(c) => c,
            None if probe => match self.sent.oldest_chunk() {
                Some(c) if !self.chunk_acked(&c) && c.end() <= self.send.end() => {
                    retx = true;
                    let start = c.offset.max(self.send.start());
                    Chunk {
                        offset: start,
                        len: (c.end() - start) as u32,
                        fin: c.fin,
                    }
                }
                _ => return None,
            },
            None => {
                let why = if self.state.is_established()
                    && self.send_next < self.send.end()
                    && (self.send_next >= self.peer_max_data
                        || self.credit_cuts_a_chunk(max_payload))
                {
                    if self.credit_wait.is_none() && self.sent.in_flight() == 0 {
                        self.credit_wait = Some(now);
                    }
                    // The controller must not take the credit's pace for the
                    // path's (BBR's Startup would end at a bandwidth plateau).
                    self.rate_sampler
                        .on_credit_limited(self.sent.bytes_in_flight);
                    Blocked::Credit
                } else if self.send.end() == 0 || self.fin >= Fin::Sent {
                    // Before the first byte is written and after the last one
                    // went out, the transfer has not begun or is over: the
                    // application holds nothing back (a `--multi` member
                    // waiting for another member's handshake counted those
                    // seconds as application-limited).
                    Blocked::Idle
                } else {
                    Blocked::App
                };
                self.pacer.forget_due();
                if why != Blocked::Credit && self.sent.bytes_in_flight < self.cc.window() {
                    // Not using the window for want of data (not of credit, as in
                    // Linux): rate samples are app-limited for now.
                    self.rate_sampler.on_app_limited(self.sent.bytes_in_flight);
                }
                self.note_blocked(now, Some(why));
                return None;
            }
        };
        let size = wire::DATA_HEADER_LEN as u64 + chunk.len as u64;
        if !probe {
            if self.sent.in_flight() >= self.window_packets {
                self.pacer.forget_due();
                self.note_blocked(now, Some(Blocked::Packets));
                return None;
            }
            if self.sent.bytes_in_flight + size > self.cc.window() {
                self.pacer.forget_due();
                self.note_blocked(now, Some(Blocked::Window));
                return None;
            }
            if let Some(rate) = self.pacing_rate() {
                let catch_up = self.catch_up_limit();
                let kept_queue = self.queue_kept_through_an_absence(now);
                if let Some(t) = self.pacer.try_send(now, size, rate, catch_up, kept_queue) {
                    self.pacing_wait = Some(t);
                    self.note_blocked(now, Some(Blocked::Pacing));
                    return None;
                }
            }
        } else {
            self.probes -= 1;
        }
        self.note_blocked(now, None);
        let pn = self.next_pn;
        let header = self.header(now);
        let header_len =
            wire::encode_data_header(buf, &header, chunk.offset, chunk.len as usize, chunk.fin)
                .ok()?;
        let mut sending = Sending::First;
        if retx {
            sending = Sending::Again;
            if let Some(&front) = self.retransmit.front().filter(|c| c.end() == chunk.end()) {
                self.retransmit.pop_front();
                if self.retransmit.front() == Some(&front) {
                    sending = Sending::EarlierCopy;
                }
            }
            self.stats.packets_retransmitted += 1;
            self.stats.bytes_retransmitted += chunk.len as u64;
        } else {
            self.send_next = chunk.end();
            self.stats.stream_bytes_sent += chunk.len as u64;
            if chunk.fin {
                self.fin = self.fin.max(Fin::Sent);
            }
            if self.writable_wanted
                && self.unsent() <= self.unsent_limit() / 2
                && self.send_capacity() > 0
            {
                // A writer held back by the unsent bound, not by the buffer.
                self.writable_wanted = false;
                self.events.push_back(Event::Writable);
            }
        }
        let rate = self.rate_sampler.on_sent(
            now,
            size,
            self.sent.bytes_in_flight,
            true,
            self.pacer.catching_up_for(),
        );
        self.sent.on_sent(
            pn,
            SentPacket {
                time: now,
                size: size as u32,
                chunk: Some(chunk),
                sending,
                rate,
            },
        );
        self.cc.on_sent(now, size);
        Some(Transmit {
            destination: self.remote,
            len: size as usize,
            header_len,
            payload: (chunk.len > 0).then_some(PayloadRef {
                offset: chunk.offset,
                len: chunk.len as usize,
            }),
        })
    }

    /// How much of a late sender's absence the bottleneck's queue carried
    /// the link through, so that its catch-up need not make it up (see
    /// [`crate::pacer`]): the queue that stood all of the last round, when
    /// the sender has other flows on the path ([`Self::path_siblings`]).
    ///
    /// Those flows stop with it when it loses its core and come back with
    /// it, and a loss-based one among them keeps the buffer full: every
    /// flow's catch-up then lands in a full queue, overflows it, and cuts
    /// the loss-based flow back. Through `pmdt-wanem` (CUBIC joining BBR,
    /// 1 MiB at 1 Gbit/s × 40 ms, the sender on a shared core), BBR took
    /// 69-88 % of the link with full catch-ups (median 82 %, one run of
    /// eight at or under 3/4), 67-88 % with this (median 72 %, five of
    /// eight; session 101); with a loss-based flow among them the catch-up
    /// is also bounded to [`crate::pacer::BESIDE_LOSS_BASED_CATCH_UP`]
    /// ([`Self::catch_up_limit`], session 104). A flow alone keeps its catch-up whole: its
    /// queue is the one its own last catch-up built, and what carries the
    /// link through the next absence. Read as a queue that stands, it took
    /// 42 % off the catch-ups on average (over `sim_core_share`'s three
    /// schedules at 1 Gbit/s × 10 ms), and the link was used 76 % instead of
    /// 99 % by the sender on its core 6 ms of every 10.
    ///
    /// Beside a loss-based flow, a model-based flow that delivered less
    /// than the average of the flows to its host ([`ShareOnPath::Behind`];
    /// the endpoint does not tell a loss-based flow) leaves nothing out:
    /// the queue that stood is then mostly its siblings', who refill it
    /// after every absence (a loss-based flow's window at once), and leaving
    /// it out gave them the whole refill (`sim_core_share`, CUBIC joining
    /// BBR: BBR 19.5 %, CUBIC 73.0 % of the link; with this, 44.0 and
    /// 42.6 %; see [`crate::endpoint::path_shares`]).
    fn queue_kept_through_an_absence(&self, now: Instant) -> Duration {
        if self.path_siblings == 0
            || (self.loss_based_on_path && self.share_on_path == ShareOnPath::Behind)
        {
            return Duration::ZERO;
        }
        self.rate_sampler.kept_queue(now, self.rtt.min())
    }

    /// The first stream bytes sent and not acknowledged (or the unacknowledged
    /// finish), up to `max_payload` of them.
    fn first_unacked(&self, max_payload: u64) -> Option<Chunk> {
        let una = self.acked.contiguous_end(0).max(self.send.start());
        if una < self.send_next {
            let len = (self.send_next - una)
                .min(max_payload)
                .min(self.send.contiguous_len(una));
            let end = una + len;
            let fin = self.fin >= Fin::Sent && end == self.send.end();
            return (len > 0).then_some(Chunk {
                offset: una,
                len: len as u32,
                fin,
            });
        }
        (self.fin == Fin::Sent).then_some(Chunk {
            offset: self.send.end(),
            len: 0,
            fin: true,
        })
    }

    /// Whether the credit's edge falls inside the next chunk of a storage that
    /// keeps its data in datagram-sized chunks (the runtime's packet buffers):
    /// sending the part below the edge now would leave the rest as a runt, each
    /// piece pinning a packet buffer at the receiver, whose credit counts whole
    /// datagrams, and every later edge off the chunks' grid (a receiver then
    /// refused datagrams inside the credit it gave: 16,764 in one run of 1000
    /// flows). The chunk waits for the credit to cover it, as a TCP sender
    /// avoids the silly window (RFC 1122 §4.2.3.4); the receiver's credit always
    /// covers a datagram once the data below the chunk is read. A byte-ring
    /// storage (contiguous beyond a datagram) is cut at the edge as before.
    fn credit_cuts_a_chunk(&self, max_payload: u64) -> bool {
        if self.send_next >= self.send.end() {
            return false; // nothing to send (and no chunk to ask the storage about)
        }
        let piece = self.send.contiguous_len(self.send_next);
        let credit = self.peer_max_data.saturating_sub(self.send_next);
        credit > 0 && piece <= max_payload && credit < piece
    }

    /// With `Startup::FromInitialTrain` the initial window leaves as one burst,
    /// the train whose spacing on the path is the first bandwidth estimate: the
    /// first new data waits until a window's worth is written, the stream's end
    /// is, or [`TRAIN_GATHER`] passed since it was first ready. Returns until
    /// when it waits. (A writer that produces a datagram per loop iteration
    /// otherwise spaces the train out itself: 11 datagrams over 400 µs.)
    fn gathering_train(&mut self, now: Instant) -> Option<Instant> {
        if !self.cfg.starts_from_train()
            || !self.rate_sampler.nothing_delivered()
            || self.send_next > 0
            || self.fin != Fin::Open
            || self.unsent() >= self.cc.window()
        {
            return None;
        }
        let until = *self.train_gather_until.get_or_insert(now + TRAIN_GATHER);
        (now < until).then_some(until)
    }

    fn new_chunk(&self, max_payload: u64) -> Option<Chunk> {
        if !self.state.is_established() {
            return None;
        }
        if self.credit_cuts_a_chunk(max_payload) {
            return None;
        }
        let avail = self.send.end() - self.send_next;
        let credit = self.peer_max_data.saturating_sub(self.send_next);
        let mut len = avail.min(credit).min(max_payload);
        if len > 0 {
            len = len.min(self.send.contiguous_len(self.send_next));
        }
        let end = self.send_next + len;
        let fin = self.fin == Fin::Requested && end == self.send.end();
        if len == 0 && !fin {
            return None;
        }
        Some(Chunk {
            offset: self.send_next,
            len: len as u32,
            fin,
        })
    }
}
