//! Many receiving connections from one thread (the receiving half of
//! [`crate::multiplexed_send`]): each connection is a small state machine (its
//! opening, its data to the end of stream, the receipt, the close) stepped with
//! the streams' non-blocking calls; the thread polls the run-to-completion I/O
//! loop when none could move. A connection whose request asks this side to send
//! (reverse) or to echo is handed back with its opening, for a thread of its
//! own.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::Instant;

use pmdt::runtime::{Poller, Stream};

use crate::data_recv::{Got, Intake, RecvPlan, READ_BATCH};
use crate::flow_error::FlowError;
use crate::interrupt::Interrupt;
use crate::interval::PayloadStart;
use crate::session::{read_opening, Mode, Opening, Receipt, Request};

/// The most a connection reads in one turn before the next one's turn.
const TURN_BYTES: usize = 4 * READ_BATCH;

/// A connection to serve.
pub struct Accepted {
    /// The caller's name for it, given back when it ends or is handed back.
    pub tag: usize,
    /// Its stream.
    pub stream: Stream,
    /// Where its data goes (None: discarded).
    pub output: Option<PathBuf>,
    /// Hash its data.
    pub hash: bool,
    /// Told where its payload starts once its opening is read.
    pub start: PayloadStart,
}

/// What became of a connection.
pub enum RecvEvent {
    /// Its request asks for what this loop does not do (reverse, echo): the
    /// caller serves it from `opening` on.
    HandOff {
        /// The connection's tag.
        tag: usize,
        /// Its stream.
        stream: Stream,
        /// What it opened with.
        opening: Opening,
        /// When its opening was read (its start).
        started: Instant,
    },
    /// It ended.
    Ended(Received),
}

/// A connection that sent data (a request's `send`, or a raw stream) and ended.
pub struct Received {
    /// The connection's tag.
    pub tag: usize,
    /// Its stream (statistics; reset by the caller when it failed).
    pub stream: Stream,
    /// Its request (None: a raw stream, or no opening was read).
    pub request: Option<Request>,
    /// What it received; its error is the flow's.
    pub got: Got,
    /// Its output path.
    pub output: Option<PathBuf>,
    /// Whether its opening was read (a connection that ended before has no
    /// direction and no output).
    pub opened: bool,
    /// When its opening was read (or it ended without one).
    pub started: Instant,
}

/// Where a connection is.
enum Phase {
    /// Reading its opening; the bytes read so far (read again each turn until
    /// the opening is whole).
    Opening(Vec<u8>),
    /// Reading data.
    Data,
    /// The end of stream came; the output is being synced and renamed on a
    /// thread of its own (the receipt waits for it, as with a thread per
    /// connection; the other connections do not).
    Completing(JoinHandle<Got>),
    /// Writing the receipt line; this much of it written.
    Receipt(Vec<u8>, usize),
    /// Waiting for the close to complete.
    Closing,
    /// Ended.
    Done,
}

struct Conn {
    tag: usize,
    stream: Option<Stream>,
    output: Option<PathBuf>,
    hash: bool,
    start: PayloadStart,
    phase: Phase,
    request: Option<Request>,
    intake: Option<Intake>,
    /// The flow's error once it ended with one.
    error: Option<FlowError>,
    got: Option<Got>,
    /// The opening was read.
    opened: bool,
    started: Option<Instant>,
}

/// The outcome of completing an output on its thread.
fn completed(h: JoinHandle<Got>) -> Got {
    h.join().unwrap_or_else(|_| Got {
        error: Some(io::Error::other("completing the output failed (its thread panicked)").into()),
        ..Default::default()
    })
}

/// Reads the bytes of an opening read so far, then the stream's
/// (`WouldBlock` when it has none yet), keeping what it reads.
struct Replay<'a> {
    seen: &'a mut Vec<u8>,
    at: usize,
    stream: &'a mut Stream,
}

impl Read for Replay<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at < self.seen.len() {
            let n = (self.seen.len() - self.at).min(out.len());
            out[..n].copy_from_slice(&self.seen[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        let n = self.stream.try_read(out)?;
        self.seen.extend_from_slice(&out[..n]);
        self.at += n;
        Ok(n)
    }
}

/// Whether a turn moved anything.
#[derive(PartialEq, Eq)]
enum Turn {
    Idle,
    Moved,
}

impl Conn {
    fn new(a: Accepted) -> Self {
        Self {
            tag: a.tag,
            stream: Some(a.stream),
            output: a.output,
            hash: a.hash,
            start: a.start,
            phase: Phase::Opening(Vec::new()),
            request: None,
            intake: None,
            error: None,
            got: None,
            opened: false,
            started: None,
        }
    }

    fn stream(&mut self) -> &mut Stream {
        self.stream.as_mut().expect("held until handed back")
    }

    /// Ends the connection with `error` (None: gracefully).
    fn end(&mut self, error: Option<FlowError>, now: Instant) -> Turn {
        self.error = self.error.take().or(error);
        if let Some(intake) = self.intake.take() {
            self.got = Some(intake.end(self.error.take()));
        }
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Completing(h) => self.got = Some(completed(h)),
            Phase::Opening(_) => {
                // Ended before its opening: the payload starts at 0.
                self.start.set_from_opening(None);
            }
            _ => {}
        }
        self.started.get_or_insert(now);
        Turn::Moved
    }

    /// Data from `first` on: opens the output.
    fn start_data(&mut self, first: &[u8], now: Instant) -> Turn {
        self.opened = true;
        let mut intake = Intake::new(&RecvPlan {
            file: self.output.clone(),
            hash: self.hash,
            expect: None,
        });
        intake.take(first);
        let failed = intake.error().is_some();
        self.intake = Some(intake);
        if failed {
            return self.end(None, now);
        }
        self.phase = Phase::Data;
        Turn::Moved
    }

    /// One turn at `now`; a hand-off is returned.
    fn turn(&mut self, now: Instant, stop: &Interrupt) -> (Turn, Option<RecvEvent>) {
        if stop.is_set() {
            return (self.end(Some(FlowError::Interrupted), now), None);
        }
        match &mut self.phase {
            Phase::Opening(seen) => {
                let mut seen = std::mem::take(seen);
                let stream = self.stream.as_mut().expect("held until handed back");
                let before = seen.len();
                let opening = read_opening(&mut Replay {
                    seen: &mut seen,
                    at: 0,
                    stream,
                });
                if !matches!(&opening, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                    self.start.set_from_opening(opening.as_ref().ok());
                }
                match opening {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        let moved = if seen.len() > before {
                            Turn::Moved
                        } else {
                            Turn::Idle
                        };
                        self.phase = Phase::Opening(seen);
                        (moved, None)
                    }
                    Err(e) => (
                        self.end(Some(FlowError::from_stream(e, stop.is_set())), now),
                        None,
                    ),
                    Ok(Opening::Request { request, rest, .. }) if request.mode == Mode::Send => {
                        self.started = Some(now);
                        self.request = Some(request);
                        (self.start_data(&rest, now), None)
                    }
                    Ok(Opening::Raw { data }) => {
                        self.started = Some(now);
                        (self.start_data(&data, now), None)
                    }
                    Ok(opening) => {
                        self.phase = Phase::Done;
                        let stream = self.stream.take().expect("held until handed back");
                        (
                            Turn::Moved,
                            Some(RecvEvent::HandOff {
                                tag: self.tag,
                                stream,
                                opening,
                                started: now,
                            }),
                        )
                    }
                }
            }
            Phase::Data => (self.read_data(now, stop), None),
            Phase::Completing(h) => {
                if !h.is_finished() {
                    return (Turn::Idle, None);
                }
                let Phase::Completing(h) = std::mem::replace(&mut self.phase, Phase::Data) else {
                    unreachable!("matched above")
                };
                (self.output_completed(completed(h), now), None)
            }
            Phase::Receipt(line, written) => {
                let (line, at) = (std::mem::take(line), *written);
                match self.stream().try_write(&line[at..]) {
                    Ok(n) if at + n == line.len() => {
                        self.phase = Phase::Closing;
                        (Turn::Moved, None)
                    }
                    Ok(n) => {
                        self.phase = Phase::Receipt(line, at + n);
                        (Turn::Moved, None)
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.phase = Phase::Receipt(line, at);
                        (Turn::Idle, None)
                    }
                    Err(e) => (self.end(Some(e.into()), now), None),
                }
            }
            Phase::Closing => match self.stream().try_close() {
                Ok(()) => (self.end(None, now), None),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => (Turn::Idle, None),
                Err(e) => (self.end(Some(e.into()), now), None),
            },
            Phase::Done => (Turn::Idle, None),
        }
    }

    /// Reads what arrived (in place: hashed and written where it landed) up to
    /// the turn's share; at the end of stream the output completes and the
    /// receipt follows (a tools client's; a raw stream's close).
    fn read_data(&mut self, now: Instant, stop: &Interrupt) -> Turn {
        let mut read = 0;
        let mut moved = Turn::Idle;
        while read < TURN_BYTES {
            let stream = self.stream.as_mut().expect("held until handed back");
            let intake = self.intake.as_mut().expect("set with the data phase");
            match stream.try_read_in_place(READ_BATCH, |data| intake.take(data)) {
                Ok(0) => return self.data_ended(now),
                Ok(n) => {
                    read += n;
                    moved = Turn::Moved;
                    if intake.error().is_some() {
                        return self.end(None, now);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return moved,
                Err(e) => return self.end(Some(FlowError::from_stream(e, stop.is_set())), now),
            }
        }
        moved
    }

    /// The end of stream: the output completes (a file on a thread of its
    /// own); the receipt follows.
    fn data_ended(&mut self, now: Instant) -> Turn {
        let intake = self.intake.take().expect("set with the data phase");
        if intake.writes_output() {
            self.phase = Phase::Completing(std::thread::spawn(move || intake.end(None)));
            return Turn::Moved;
        }
        self.output_completed(intake.end(None), now)
    }

    /// The output completed as `got` says: the receipt goes back (a tools
    /// client's; a raw stream's close), or the flow fails.
    fn output_completed(&mut self, got: Got, now: Instant) -> Turn {
        if got.error.is_some() {
            self.got = Some(got);
            return self.end(None, now);
        }
        let line = Receipt {
            bytes: got.bytes,
            sha256: got.sha256.clone(),
        }
        .line();
        self.got = Some(got);
        self.phase = match (&self.request, line) {
            (None, _) => Phase::Closing,
            (Some(_), Ok(line)) => Phase::Receipt(line, 0),
            (Some(_), Err(e)) => return self.end(Some(e.into()), now),
        };
        Turn::Moved
    }

    fn received(mut self, now: Instant) -> Received {
        let mut got = self.got.take().unwrap_or_default();
        if let Some(e) = self.error.take() {
            got.error.get_or_insert(e);
        }
        Received {
            tag: self.tag,
            stream: self.stream.take().expect("held until handed back"),
            request: self.request,
            got,
            output: self.output,
            opened: self.opened,
            started: self.started.unwrap_or(now),
        }
    }
}

/// Serves the connections that come through `incoming` from this thread until
/// it is closed and every connection ended, polling the run-to-completion loop
/// through `poller` whenever none could move. `on_event` hears of each hand-off
/// and each end as it happens. Ctrl-C (`stop`) ends every connection at once,
/// as interrupted.
pub fn receive_multiplexed(
    poller: &Poller,
    incoming: &Receiver<Accepted>,
    stop: &Interrupt,
    mut on_event: impl FnMut(RecvEvent),
) {
    let mut conns: Vec<Conn> = Vec::new();
    let mut open = true;
    while open || !conns.is_empty() {
        let mut moved = false;
        if conns.is_empty() {
            // Nothing to serve: wait for a connection (the accepting thread
            // moves the loop meanwhile).
            match incoming.recv() {
                Ok(a) => conns.push(Conn::new(a)),
                Err(_) => break,
            }
        }
        while open {
            match incoming.try_recv() {
                Ok(a) => {
                    conns.push(Conn::new(a));
                    moved = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => open = false,
            }
        }
        let now = Instant::now();
        let mut k = 0;
        while k < conns.len() {
            let (turn, handed) = conns[k].turn(now, stop);
            moved |= turn == Turn::Moved;
            if let Some(h) = handed {
                on_event(h);
            }
            if matches!(conns[k].phase, Phase::Done) {
                let c = conns.swap_remove(k);
                if c.stream.is_some() {
                    on_event(RecvEvent::Ended(c.received(now)));
                }
                continue;
            }
            k += 1;
        }
        if !moved {
            // Every connection waits on the loop, or there is none: move the
            // loop (it naps when quiet), or let the thread stepping it finish.
            poller.wait();
        }
    }
}
