//! Request/response (`pmdt-send --rr`): the client writes a message, the server
//! (pmdt-recv, asked by the request's `echo` mode) writes every byte back, and the
//! client times each message from the start of its write to the end of the read
//! that completed its echo, checking every echoed byte against what it sent.
//!
//! The round-trip times go into an [`hdrhistogram`] (nanoseconds, 3 significant
//! digits): percentiles to 0.1% of the value whatever the range, from a few
//! microseconds over memif to seconds, in constant memory, and histograms of
//! several flows merge exactly; the transport's own RTT histogram is bucketed for
//! the congestion controller, not for reporting tails.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::flow_error::FlowError;
use crate::interrupt::Interrupt;
use crate::pattern::Pattern;

/// Largest `--rr-size`: a message and its echo each fit the transport's buffers
/// many times over (the client writes a whole message before it reads, the server
/// echoes while it reads).
pub const MAX_MESSAGE: usize = 64 * 1024;

/// Largest round trip the histogram holds, ns (longer ones count as this).
const MAX_RECORDED_NS: u64 = 3_600 * 1_000_000_000;

/// A wait for the next message's slot longer than this sleeps (less a margin),
/// shorter ones spin.
const SPIN_BELOW: Duration = Duration::from_micros(200);

/// What a request/response flow does.
#[derive(Debug, Clone)]
pub struct RoundTripPlan {
    /// Bytes per message (and per echo).
    pub size: usize,
    /// Messages per second (None: the next message as soon as the echo is in).
    pub rate: Option<f64>,
    /// At most this many messages (None: until `deadline`).
    pub messages: Option<u64>,
    /// No message starts after this time (None: until `messages`).
    pub deadline: Option<Instant>,
    /// Seeds the messages' content (each message is the next piece of the
    /// generated stream, so no two are alike).
    pub seed: u64,
}

/// The round-trip times of one or more flows.
#[derive(Debug, Clone)]
pub struct RoundTripTimes {
    hist: Histogram<u64>,
}

impl Default for RoundTripTimes {
    fn default() -> Self {
        Self {
            hist: Histogram::new_with_bounds(1, MAX_RECORDED_NS, 3)
                .expect("bounds are valid constants"),
        }
    }
}

impl RoundTripTimes {
    /// Adds one round trip.
    pub fn record(&mut self, rtt: Duration) {
        let ns = rtt.as_nanos().clamp(1, MAX_RECORDED_NS as u128) as u64;
        self.hist.saturating_record(ns);
    }

    /// Adds another flow's round trips.
    pub fn merge(&mut self, other: &RoundTripTimes) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.hist.add(&other.hist);
    }

    /// Round trips recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The figures people read (µs).
    pub fn summary(&self, size: usize) -> RoundTripSummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        let q = |p: f64| us(self.hist.value_at_quantile(p));
        let empty = self.hist.is_empty();
        RoundTripSummary {
            count: self.count(),
            size: size as u64,
            min_us: if empty { 0.0 } else { us(self.hist.min()) },
            mean_us: if empty {
                0.0
            } else {
                self.hist.mean() / 1000.0
            },
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            p99_9_us: q(0.999),
            max_us: if empty { 0.0 } else { us(self.hist.max()) },
        }
    }
}

/// Round trips of a run, µs (the JSON summary's `round_trips`). Percentiles are
/// the histogram's (within 0.1%); `max` is the highest value recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoundTripSummary {
    /// Round trips completed (each echo checked byte for byte).
    pub count: u64,
    /// Bytes per message.
    pub size: u64,
    /// Fastest.
    pub min_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p99_9_us: f64,
    /// Slowest.
    pub max_us: f64,
}

impl RoundTripSummary {
    /// The human summary's line.
    pub fn line(&self) -> String {
        format!(
            "round trips {} of {} bytes: p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, \
             max {:.1} us (min {:.1}, mean {:.1})",
            self.count,
            self.size,
            self.p50_us,
            self.p90_us,
            self.p99_us,
            self.p99_9_us,
            self.max_us,
            self.min_us,
            self.mean_us
        )
    }
}

/// A stream request/response runs over: reads and writes, and a way to keep the
/// transport going while the client waits for the next message's slot.
pub trait Exchange: Read + Write {
    /// Lets the transport work while the application waits (run to completion:
    /// one poll of the I/O loop, which runs only inside stream calls).
    fn keep_going(&mut self) {}
}

impl Exchange for pmdt::runtime::Stream {
    fn keep_going(&mut self) {
        // An empty read polls the loop once in run-to-completion mode (and costs
        // nothing otherwise); what it returns says nothing here.
        let _ = self.try_read(&mut []);
    }
}

/// What a client's request/response flow did.
#[derive(Debug, Clone, Default)]
pub struct PingPong {
    /// Round trips completed and checked.
    pub times: RoundTripTimes,
    /// Bytes echoed back (and checked).
    pub bytes: u64,
    /// Why it stopped early, if it did.
    pub error: Option<FlowError>,
}

/// The client: writes `plan`'s messages one at a time, each after the echo of the
/// one before (and not before its slot at `rate`), reading and checking each echo.
pub fn ping_pong(stream: &mut impl Exchange, plan: &RoundTripPlan, stop: &Interrupt) -> PingPong {
    let mut out = PingPong::default();
    let mut pattern = Pattern::new(plan.seed);
    let mut msg = vec![0u8; plan.size];
    let mut echo = vec![0u8; plan.size];
    let period = plan.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let started = Instant::now();
    let mut n = 0u64;
    while plan.messages.is_none_or(|m| n < m) {
        if let Some(p) = period {
            // The slot of message n (a late echo does not bunch the next ones).
            let slot = started + p.mul_f64(n as f64);
            wait_until(stream, slot, plan.deadline, stop);
        }
        if stop.is_set() {
            out.error = Some(FlowError::Interrupted);
            break;
        }
        if plan.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        pattern.fill(&mut msg);
        let t0 = Instant::now();
        if let Err(e) = stream.write_all(&msg) {
            out.error = Some(FlowError::from_stream(e, stop.is_set()));
            break;
        }
        if let Err(e) = read_exact_or_end(stream, &mut echo) {
            out.error = Some(match e {
                Short::Io(e) => FlowError::from_stream(e, stop.is_set()),
                Short::Ended(got) => FlowError::EchoEnded {
                    message: n + 1,
                    got,
                    size: plan.size,
                },
            });
            break;
        }
        let rtt = t0.elapsed();
        if let Some(at) = msg.iter().zip(&echo).position(|(a, b)| a != b) {
            out.error = Some(FlowError::EchoDiffers {
                message: n + 1,
                offset: at,
            });
            break;
        }
        // Only round trips whose echo was right count.
        out.times.record(rtt);
        out.bytes += plan.size as u64;
        n += 1;
    }
    out
}

/// Waits for `slot` (or the deadline, or Ctrl-C) keeping the transport going:
/// sleeps through most of a long wait, spins through the rest.
fn wait_until(
    stream: &mut impl Exchange,
    slot: Instant,
    deadline: Option<Instant>,
    stop: &Interrupt,
) {
    let until = deadline.map_or(slot, |d| d.min(slot));
    loop {
        stream.keep_going();
        let now = Instant::now();
        if now >= until || stop.is_set() {
            return;
        }
        let left = until - now;
        if left > SPIN_BELOW {
            std::thread::sleep((left - SPIN_BELOW / 2).min(Duration::from_millis(1)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Why an echo is short.
enum Short {
    Io(io::Error),
    /// The stream ended after this many bytes of it.
    Ended(usize),
}

fn read_exact_or_end(r: &mut impl Read, buf: &mut [u8]) -> Result<(), Short> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => return Err(Short::Ended(got)),
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Short::Io(e)),
        }
    }
    Ok(())
}

/// What the server echoed.
#[derive(Debug, Clone, Default)]
pub struct Echoed {
    /// Bytes written back.
    pub bytes: u64,
    /// Why it stopped before the client's end of stream, if it did.
    pub error: Option<FlowError>,
}

/// The server: writes back `first` (bytes that followed the request) and then
/// everything it reads, as it reads it, until the client's end of stream.
pub fn echo(stream: &mut (impl Read + Write), first: &[u8], stop: &Interrupt) -> Echoed {
    let mut out = Echoed::default();
    if !first.is_empty() {
        if let Err(e) = stream.write_all(first) {
            out.error = Some(FlowError::from_stream(e, stop.is_set()));
            return out;
        }
        out.bytes += first.len() as u64;
    }
    let mut buf = vec![0u8; MAX_MESSAGE];
    loop {
        if stop.is_set() {
            out.error = Some(FlowError::Interrupted);
            break;
        }
        let k = match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                out.error = Some(FlowError::from_stream(e, stop.is_set()));
                break;
            }
        };
        if let Err(e) = stream.write_all(&buf[..k]) {
            out.error = Some(FlowError::from_stream(e, stop.is_set()));
            break;
        }
        out.bytes += k as u64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// An in-memory echo server: what is written comes back (byte `corrupt`
    /// flipped), in pieces of at most `step` bytes per read.
    struct Loopback {
        queue: VecDeque<u8>,
        step: usize,
        corrupt: Option<u64>,
        written: u64,
        /// The stream ends after this many bytes were written.
        end_after: u64,
    }

    impl Loopback {
        fn new(step: usize) -> Self {
            Self {
                queue: VecDeque::new(),
                step,
                corrupt: None,
                written: 0,
                end_after: u64::MAX,
            }
        }
    }

    impl Read for Loopback {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.queue.len().min(out.len()).min(self.step);
            for b in out.iter_mut().take(n) {
                *b = self.queue.pop_front().unwrap();
            }
            Ok(n)
        }
    }

    impl Write for Loopback {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            for &b in data {
                let b = if self.corrupt == Some(self.written) {
                    b ^ 0x01
                } else {
                    b
                };
                self.written += 1;
                if self.written <= self.end_after {
                    self.queue.push_back(b);
                }
            }
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Exchange for Loopback {}

    fn plan(messages: u64) -> RoundTripPlan {
        RoundTripPlan {
            size: 64,
            rate: None,
            messages: Some(messages),
            deadline: None,
            seed: 7,
        }
    }

    #[test]
    fn every_message_comes_back_checked_and_timed_whatever_the_reads() {
        for step in [1, 13, 64, 4096] {
            let mut lb = Loopback::new(step);
            let r = ping_pong(&mut lb, &plan(100), &Interrupt::never());
            assert!(r.error.is_none(), "{step}: {:?}", r.error);
            assert_eq!(r.times.count(), 100);
            assert_eq!(r.bytes, 6400);
            assert_eq!(lb.written, 6400);
        }
    }

    #[test]
    fn messages_differ_from_each_other() {
        let mut p = Pattern::new(7);
        let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
        p.fill(&mut a);
        p.fill(&mut b);
        assert_ne!(a, b, "an echo of an older message would pass");
    }

    #[test]
    fn one_changed_byte_fails_the_flow_and_says_where() {
        let mut lb = Loopback::new(4096);
        // Byte 10 of message 3 comes back wrong.
        lb.corrupt = Some(2 * 64 + 10);
        let r = ping_pong(&mut lb, &plan(10), &Interrupt::never());
        match r.error {
            Some(FlowError::EchoDiffers { message, offset }) => {
                assert_eq!((message, offset), (3, 10));
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(r.bytes, 128, "two good messages before it");
        assert_eq!(r.times.count(), 2, "the bad one is not a round trip");
    }

    #[test]
    fn an_echo_that_ends_short_is_an_error() {
        let mut lb = Loopback::new(4096);
        lb.end_after = 64 + 20;
        let r = ping_pong(&mut lb, &plan(5), &Interrupt::never());
        match r.error {
            Some(FlowError::EchoEnded { message, got, size }) => {
                assert_eq!((message, got, size), (2, 20, 64))
            }
            e => panic!("{e:?}"),
        }
    }

    /// Reads a fixed input, collects what is written.
    struct Duplex<'a> {
        input: &'a [u8],
        output: Vec<u8>,
    }

    impl Read for Duplex<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.input.len().min(out.len()).min(3);
            out[..n].copy_from_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Ok(n)
        }
    }

    impl Write for Duplex<'_> {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_server_echoes_what_followed_the_request_then_the_rest() {
        let mut d = Duplex {
            input: b"world, to the end",
            output: Vec::new(),
        };
        let e = echo(&mut d, b"hello ", &Interrupt::never());
        assert!(e.error.is_none());
        assert_eq!(d.output, b"hello world, to the end");
        assert_eq!(e.bytes, d.output.len() as u64);
    }

    #[test]
    fn percentiles_are_ordered_and_count_every_sample() {
        let mut t = RoundTripTimes::default();
        for us in 1..=1000u64 {
            t.record(Duration::from_micros(us));
        }
        let mut other = RoundTripTimes::default();
        other.record(Duration::from_millis(50));
        t.merge(&other);
        let s = t.summary(64);
        assert_eq!(s.count, 1001);
        let v = [s.min_us, s.p50_us, s.p90_us, s.p99_us, s.p99_9_us, s.max_us];
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
        // The 501st of 1001 samples, within the histogram's 0.1%.
        assert!((s.p50_us - 501.0).abs() < 1.0, "{s:?}");
        assert!((s.max_us - 50_000.0).abs() < 50.0, "{s:?}");
        assert_eq!(RoundTripTimes::default().summary(64).count, 0);
    }
}
