//! Many sending flows from one thread, as iperf3's `select` loop runs its
//! streams: each flow is a small state machine (request line, data, end of
//! stream, the receiver's receipt, the close) stepped with the streams'
//! non-blocking calls, and the thread polls the run-to-completion I/O loop
//! when no flow could move. A thread per flow made a thousand threads take
//! turns at the loop's lock, each woken to write a few datagrams.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use pmdt::runtime::{Poller, Stream};
use sha2::{Digest, Sha256};

use crate::data_send::{Payload, SendPlan, Sent};
use crate::flow_error::FlowError;
use crate::interrupt::Interrupt;
use crate::pattern::Pattern;
use crate::session::Receipt;
use crate::summary::hex;

/// The most a flow produces and offers at once (its stream's room permitting).
const PIECE_MAX: usize = 64 * 1024;
/// The most a flow writes in one turn before the next flow's turn.
const TURN_BYTES: u64 = 256 * 1024;

/// One flow to run: its stream (established), its request line, what it sends
/// and when it starts.
pub struct MuxFlow {
    /// The flow's stream.
    pub stream: Stream,
    /// The request line written before the data.
    pub request: Vec<u8>,
    /// What to send.
    pub plan: SendPlan,
    /// When the flow starts (`--stagger`).
    pub start_at: Instant,
}

/// How a flow ended.
pub struct MuxOutcome {
    /// The flow's stream (for its statistics and, on error, its reset).
    pub stream: Stream,
    /// The request line's length (where the data starts in the stream).
    pub request_len: u64,
    /// Writing the request failed (nothing else was tried).
    pub request_error: Option<FlowError>,
    /// What was written.
    pub sent: Sent,
    /// The receiver's receipt, when one came.
    pub receipt: Option<Receipt>,
    /// The first error after the data (end of stream, receipt, close).
    pub error: Option<FlowError>,
    /// When the flow started.
    pub started: Instant,
    /// When writing ended (the end of stream, the receipt and the close
    /// followed).
    pub drain_started: Instant,
    /// When the flow ended.
    pub ended: Instant,
}

/// Where a flow's bytes come from: both are read by position, so bytes the
/// stream did not take are produced again rather than kept per flow.
enum Source {
    Generated(Box<Pattern>),
    File(File),
}

/// Where a flow is.
enum Phase {
    /// Before its start.
    Waiting,
    /// Writing its request line; this much of it written.
    Request(usize),
    /// Writing data.
    Data,
    /// Reading the receiver's receipt (everything up to its end of stream).
    Receipt(Vec<u8>),
    /// Waiting for the close to complete.
    Closing,
    /// Ended.
    Done,
}

struct Flow {
    stream: Stream,
    request: Vec<u8>,
    source: Option<Source>,
    limit: u64,
    deadline: Option<Instant>,
    hasher: Option<Sha256>,
    start_at: Instant,
    phase: Phase,
    sent: u64,
    request_error: Option<FlowError>,
    /// The error that stopped writing (in the `Sent`).
    write_error: Option<FlowError>,
    receipt: Option<Receipt>,
    error: Option<FlowError>,
    started: Option<Instant>,
    drain_started: Option<Instant>,
    ended: Option<Instant>,
}

/// What a flow's turn did.
#[derive(PartialEq, Eq)]
enum Turn {
    /// Nothing could move.
    Idle,
    /// Something moved.
    Moved,
}

impl Flow {
    fn new(f: MuxFlow) -> Self {
        let (source, error) = match &f.plan.payload {
            Payload::Generated(seed) => {
                (Some(Source::Generated(Box::new(Pattern::new(*seed)))), None)
            }
            Payload::File(p) => match File::open(p) {
                Ok(file) => (Some(Source::File(file)), None),
                Err(e) => (None, Some(FlowError::open_input(p, e))),
            },
        };
        Self {
            stream: f.stream,
            request: f.request,
            source,
            limit: f.plan.bytes.unwrap_or(u64::MAX),
            deadline: f.plan.deadline,
            hasher: f.plan.hash.then(Sha256::new),
            start_at: f.start_at,
            phase: Phase::Waiting,
            sent: 0,
            request_error: None,
            write_error: error,
            receipt: None,
            error: None,
            started: None,
            drain_started: None,
            ended: None,
        }
    }

    fn done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    fn end(&mut self, now: Instant) {
        self.phase = Phase::Done;
        self.ended = Some(now);
        self.drain_started.get_or_insert(now);
        let failed = [&self.request_error, &self.write_error, &self.error]
            .into_iter()
            .find_map(Option::as_ref);
        if let Some(e) = failed {
            // Reset now, as a flow's own thread does when it fails: the
            // receiver's flow fails at once rather than when the last flow
            // here ends, and nothing more is sent or acknowledged meanwhile
            // (a failed flow reports what was acknowledged).
            self.stream.abort_handle().abort(e.reset_code());
        }
    }

    /// Data written: the end of stream goes out, the receipt is read next.
    fn finish_writing(&mut self, now: Instant) {
        self.drain_started = Some(now);
        self.stream.finish();
        self.phase = Phase::Receipt(Vec::new());
    }

    /// One turn of this flow at `now`, `scratch` its working memory.
    fn turn(&mut self, now: Instant, scratch: &mut [u8], stop: &Interrupt) -> Turn {
        if stop.is_set() {
            if self.started.is_some() {
                self.write_error.get_or_insert(FlowError::Interrupted);
            } else {
                self.request_error = Some(FlowError::Interrupted);
                self.started = Some(now);
            }
            self.end(now);
            return Turn::Moved;
        }
        match &mut self.phase {
            Phase::Waiting => {
                if now < self.start_at {
                    return Turn::Idle;
                }
                self.started = Some(now);
                if self.write_error.is_some() {
                    // The input did not open: nothing is sent.
                    self.end(now);
                } else {
                    self.phase = Phase::Request(0);
                }
                Turn::Moved
            }
            Phase::Request(done) => match self.stream.try_write(&self.request[*done..]) {
                Ok(n) => {
                    *done += n;
                    if *done == self.request.len() {
                        self.phase = Phase::Data;
                    }
                    Turn::Moved
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Turn::Idle,
                Err(e) => {
                    self.request_error = Some(e.into());
                    self.end(now);
                    Turn::Moved
                }
            },
            Phase::Data => self.write_data(now, scratch, stop),
            Phase::Receipt(got) => {
                let mut chunk = [0u8; 1024];
                let mut moved = Turn::Idle;
                loop {
                    if got.len() >= Receipt::MAX_READ {
                        // Longer than a receipt: `parse` says so.
                        self.error = Receipt::parse(got).err().map(Into::into);
                        self.end(now);
                        return Turn::Moved;
                    }
                    let room = (Receipt::MAX_READ - got.len()).min(chunk.len());
                    match self.stream.try_read(&mut chunk[..room]) {
                        Ok(0) => {
                            match Receipt::parse(got) {
                                Ok(r) => {
                                    self.receipt = r;
                                    self.phase = Phase::Closing;
                                }
                                Err(e) => {
                                    self.error = Some(e.into());
                                    self.end(now);
                                }
                            }
                            return Turn::Moved;
                        }
                        Ok(n) => {
                            got.extend_from_slice(&chunk[..n]);
                            moved = Turn::Moved;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return moved,
                        Err(e) => {
                            self.error = Some(FlowError::from_stream(e, stop.is_set()));
                            self.end(now);
                            return Turn::Moved;
                        }
                    }
                }
            }
            Phase::Closing => match self.stream.try_close() {
                Ok(()) => {
                    self.end(now);
                    Turn::Moved
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Turn::Idle,
                Err(e) => {
                    self.error = Some(e.into());
                    self.end(now);
                    Turn::Moved
                }
            },
            Phase::Done => Turn::Idle,
        }
    }

    /// Writes data until the stream takes no more or the turn's share is
    /// written; on to the receipt at the deadline, the limit or the file's end.
    /// Produces only what the stream has room for: nothing is made twice.
    fn write_data(&mut self, now: Instant, scratch: &mut [u8], stop: &Interrupt) -> Turn {
        let turn_end = self.sent.saturating_add(TURN_BYTES);
        let mut moved = Turn::Idle;
        loop {
            if self.sent >= self.limit || self.deadline.is_some_and(|d| now >= d) {
                self.finish_writing(now);
                return Turn::Moved;
            }
            if self.sent >= turn_end {
                return moved;
            }
            let room = match self.stream.write_room() {
                Ok(0) => return moved,
                Ok(r) => r,
                Err(e) => return self.write_failed(e, now, stop),
            };
            let want = (self.limit - self.sent).min(room.min(PIECE_MAX) as u64) as usize;
            let buf = &mut scratch[..want];
            let n = match self.source.as_mut().expect("opened before the data") {
                Source::Generated(p) => {
                    p.seek(self.sent);
                    p.fill(buf);
                    want
                }
                Source::File(f) => match f.read_at(buf, self.sent) {
                    Ok(0) => {
                        self.finish_writing(now);
                        return Turn::Moved;
                    }
                    Ok(n) => n,
                    Err(e) => {
                        self.write_error = Some(FlowError::ReadInput(e.into()));
                        self.end(now);
                        return Turn::Moved;
                    }
                },
            };
            match self.stream.try_write(&buf[..n]) {
                Ok(k) => {
                    if let Some(h) = &mut self.hasher {
                        h.update(&buf[..k]);
                    }
                    self.sent += k as u64;
                    moved = Turn::Moved;
                    if k < n {
                        return moved;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return moved,
                Err(e) => return self.write_failed(e, now, stop),
            }
        }
    }

    /// The stream refused data with `e`: the flow ends.
    fn write_failed(&mut self, e: io::Error, now: Instant, stop: &Interrupt) -> Turn {
        self.write_error = Some(FlowError::from_stream(e, stop.is_set()));
        self.end(now);
        Turn::Moved
    }

    fn outcome(self) -> MuxOutcome {
        let ended = self.ended.expect("run until every flow ended");
        MuxOutcome {
            stream: self.stream,
            request_len: self.request.len() as u64,
            request_error: self.request_error,
            sent: Sent {
                bytes: self.sent,
                sha256: self.hasher.map(|h| hex(&h.finalize())).unwrap_or_default(),
                error: self.write_error,
            },
            receipt: self.receipt,
            error: self.error,
            started: self.started.unwrap_or(ended),
            drain_started: self.drain_started.unwrap_or(ended),
            ended,
        }
    }
}

/// Runs `flows` to their ends from this thread, polling the run-to-completion
/// loop through `poller` whenever no flow could move; `on_end` hears of each
/// flow's end as it happens (its index in `flows`). Ctrl-C (`stop`) ends every
/// flow at once, as interrupted. Returns the flows' outcomes in their order.
pub fn send_multiplexed(
    poller: &Poller,
    flows: Vec<MuxFlow>,
    stop: &Interrupt,
    mut on_end: impl FnMut(usize, Instant),
) -> Vec<MuxOutcome> {
    let mut flows: Vec<Flow> = flows.into_iter().map(Flow::new).collect();
    let mut active: Vec<usize> = (0..flows.len()).collect();
    let mut scratch = vec![0u8; PIECE_MAX];
    while !active.is_empty() {
        let mut moved = false;
        active.retain(|&k| {
            let f = &mut flows[k];
            // Each flow's own time: a round over many flows takes a while,
            // and deadlines and starts are per flow.
            let now = Instant::now();
            moved |= f.turn(now, &mut scratch, stop) == Turn::Moved;
            if f.done() {
                on_end(k, f.ended.unwrap_or(now));
                return false;
            }
            true
        });
        if !moved {
            // Every flow waits on the loop (acknowledgements, credit, the
            // receipt, the close) or on its start: move the loop, or let the
            // thread stepping it finish.
            poller.wait();
        }
    }
    flows.into_iter().map(Flow::outcome).collect()
}
