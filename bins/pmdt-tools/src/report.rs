//! What the tools print on stdout for programs, in iperf3's shapes: `--json` one
//! document at the end, `{"start", "intervals", "end"}` (plus `"error"` when the
//! run failed); `--json-stream` one object per line as things happen,
//! `{"event": "start"|"interval"|"connection_end"|"end"|"error", "data": ...}`.
//! People get interval lines on stderr (`-i`).

use std::collections::VecDeque;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::interval::Interval;

/// Output options.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Seconds between interval reports (iperf3's -i; 0: none).
    #[arg(short = 'i', long, default_value_t = 1.0, value_name = "SECONDS")]
    pub interval: f64,
    /// Print one JSON document on stdout at the end, in iperf3 -J's shape
    /// (`start`, `intervals`, `end`; `error` on failure).
    #[arg(short = 'J', long)]
    pub json: bool,
    /// Print one JSON object per line on stdout as the run goes (iperf3's
    /// --json-stream: events `start`, `interval`, `connection_end`, `end`, `error`).
    #[arg(long, conflicts_with = "json")]
    pub json_stream: bool,
    /// Check the options (addresses resolved, files found), print the EAL
    /// arguments and the settings as JSON on stdout, and exit without starting.
    #[arg(long)]
    pub dry_run: bool,
}

impl Default for OutputArgs {
    fn default() -> Self {
        Self {
            interval: 1.0,
            json: false,
            json_stream: false,
            dry_run: false,
        }
    }
}

/// Which JSON, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonMode {
    /// None: people only.
    Off,
    /// One document at the end.
    Document,
    /// One object per line.
    Stream,
}

impl OutputArgs {
    /// The JSON mode asked for.
    pub fn mode(&self) -> JsonMode {
        if self.json_stream {
            JsonMode::Stream
        } else if self.json {
            JsonMode::Document
        } else {
            JsonMode::Off
        }
    }

    /// The interval length, checked.
    pub fn interval(&self) -> Result<Option<std::time::Duration>, crate::cli_error::CliError> {
        let i = self.interval;
        if !(i.is_finite() && i >= 0.0) || (i > 0.0 && i < 0.1) || i > 3600.0 {
            return Err(crate::cli_error::CliError::new(format!(
                "-i {i}: the interval must be 0 (none) or 0.1 to 3600 seconds"
            )));
        }
        Ok((i > 0.0).then(|| std::time::Duration::from_secs_f64(i)))
    }
}

/// iperf3's `start.timestamp`.
#[derive(Debug, Clone, Serialize)]
pub struct Timestamp {
    /// RFC 1123 time in GMT, e.g. `Sat, 21 Nov 2026 17:35:53 GMT`.
    pub time: String,
    /// Seconds since the Unix epoch.
    pub timesecs: u64,
}

impl Timestamp {
    /// Now.
    pub fn now() -> Self {
        let now = SystemTime::now();
        Self {
            time: httpdate::fmt_http_date(now),
            timesecs: now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        }
    }
}

/// One connection as it started (iperf3's `start.connected[]`).
#[derive(Debug, Clone, Serialize)]
pub struct Connected {
    /// Flow number.
    pub flow: usize,
    /// Its telemetry id (`/pmdt/connection,<id>`).
    pub id: u64,
    /// Which way its data goes.
    pub direction: crate::interval::Direction,
    /// Local address.
    pub local: String,
    /// Peer address.
    pub remote: String,
}

/// The `start` section.
#[derive(Debug, Clone, Serialize)]
pub struct Start {
    /// Tool and version, e.g. `pmdt-send 0.1.0`.
    pub version: String,
    /// When the run started.
    pub timestamp: Timestamp,
    /// What the runtime drives.
    pub link: String,
    /// Connections opened (sender; the receiver reports them as they end).
    pub connected: Vec<Connected>,
    /// Seconds from the first connection attempt until every flow was connected
    /// (the sender; the run's time, its intervals and `-t` count from then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_seconds: Option<f64>,
    /// The test's parameters.
    pub test_start: Value,
}

impl Start {
    /// A start section for `prog` on `link`.
    pub fn new(prog: &str, link: &str, test_start: Value) -> Self {
        Self {
            version: format!("{prog} {}", env!("CARGO_PKG_VERSION")),
            timestamp: Timestamp::now(),
            link: link.to_string(),
            connected: Vec::new(),
            connect_seconds: None,
            test_start,
        }
    }
}

/// Most intervals a `--json` document keeps (a server runs for days): older ones
/// are dropped and counted in `intervals_omitted`.
pub const MAX_INTERVALS: usize = 3600;

/// Most per-flow interval entries a `--json` document keeps over all its
/// intervals (many flows for a long time): older intervals are dropped first.
pub const MAX_STREAM_ENTRIES: usize = 200_000;

/// Collects and prints the run's output.
pub struct Report {
    prog: String,
    mode: JsonMode,
    start: Option<Start>,
    intervals: VecDeque<Interval>,
    entries: usize,
    omitted: u64,
    header: Header,
    per_flow_max: usize,
}

/// Whether the interval lines' column header is out yet (printed once, above
/// the first interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    /// No interval line yet.
    Pending,
    /// Printed above the first interval.
    Printed,
}

fn emit(line: Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, &line);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

impl Report {
    /// Output for `prog`; human interval lines show each flow when there are at
    /// most `per_flow_max`.
    pub fn new(prog: &str, mode: JsonMode, per_flow_max: usize) -> Self {
        Self {
            prog: prog.into(),
            mode,
            start: None,
            intervals: VecDeque::new(),
            entries: 0,
            omitted: 0,
            header: Header::Pending,
            per_flow_max,
        }
    }

    /// The run started.
    pub fn start(&mut self, start: Start) {
        if self.mode == JsonMode::Stream {
            emit(json!({"event": "start", "data": &start}));
        }
        self.start = Some(start);
    }

    /// An interval passed: printed for people, streamed or kept for the document.
    pub fn interval(&mut self, iv: Interval) {
        if self.header == Header::Pending {
            eprintln!("{}: {}", self.prog, Interval::HEADER);
            self.header = Header::Printed;
        }
        iv.print_human(&self.prog, self.per_flow_max);
        match self.mode {
            JsonMode::Stream => emit(json!({"event": "interval", "data": &iv})),
            JsonMode::Document => {
                self.entries += iv.streams.len();
                self.intervals.push_back(iv);
                while self.intervals.len() > MAX_INTERVALS
                    || (self.entries > MAX_STREAM_ENTRIES && self.intervals.len() > 1)
                {
                    let old = self.intervals.pop_front().expect("more than one");
                    self.entries -= old.streams.len();
                    self.omitted += 1;
                }
            }
            JsonMode::Off => {}
        }
    }

    /// Another event for `--json-stream` (ignored otherwise).
    pub fn event(&self, name: &str, data: &impl Serialize) {
        if self.mode == JsonMode::Stream {
            emit(json!({"event": name, "data": data}));
        }
    }

    /// The run ended: the `end` section, and the error that made it fail.
    pub fn end(self, end: &impl Serialize, error: Option<&str>) {
        match self.mode {
            JsonMode::Off => {}
            JsonMode::Stream => {
                emit(json!({"event": "end", "data": end}));
                if let Some(e) = error {
                    emit(json!({"event": "error", "data": {"error": e}}));
                }
            }
            JsonMode::Document => {
                let mut doc = json!({
                    "start": &self.start,
                    "intervals": &self.intervals,
                    "end": end,
                });
                if self.omitted > 0 {
                    doc["intervals_omitted"] = json!(self.omitted);
                }
                // The summary's fields stay at the top level too, where scripts
                // written before the iperf3 shape read them (`bytes`, `goodput_bps`,
                // `flows`, ...); new consumers read `end`.
                if let (Some(top), Ok(Value::Object(fields))) =
                    (doc.as_object_mut(), serde_json::to_value(end))
                {
                    for (k, v) in fields {
                        top.entry(k).or_insert(v);
                    }
                }
                if let Some(e) = error {
                    doc["error"] = json!(e);
                }
                let mut out = std::io::stdout().lock();
                let _ = serde_json::to_writer_pretty(&mut out, &doc);
                let _ = out.write_all(b"\n");
                let _ = out.flush();
            }
        }
    }
}

/// `--dry-run`'s answer: the EAL arguments (None: no EAL) and the settings.
pub fn print_dry_run(eal: Option<&dpdk::EalBuilder>, settings: Value) {
    let doc = json!({
        "eal_args": eal.map(|b| b.args()),
        "settings": settings,
    });
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, &doc);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Prints a failure as JSON on stdout (`{"error": ..., "hint": ...}`, or an
/// `error` event), for runs that fail before they have anything else to say.
pub fn print_error(mode: JsonMode, message: &str, hint: Option<&str>) {
    let data = json!({"error": message, "hint": hint});
    match mode {
        JsonMode::Off => {}
        JsonMode::Document => {
            let mut out = std::io::stdout().lock();
            let _ = serde_json::to_writer_pretty(&mut out, &data);
            let _ = out.write_all(b"\n");
            let _ = out.flush();
        }
        JsonMode::Stream => emit(json!({"event": "error", "data": data})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::{Direction, IntervalSum, PortDrops, StreamInterval};

    fn interval(flows: usize) -> Interval {
        let s = StreamInterval {
            flow: 1,
            direction: Direction::Send,
            start: 0.0,
            end: 1.0,
            seconds: 1.0,
            bytes: 1,
            bits_per_second: 8.0,
            retransmits: 0,
            rtt: 0,
            rttvar: 0,
            snd_cwnd: 0,
            pacing_rate: 0,
            cc_state: Default::default(),
            bandwidth_estimate: 0,
            min_rtt: 0,
            probe_wait_rounds: 0,
        };
        Interval {
            streams: vec![s; flows],
            sum: IntervalSum::default(),
            port: PortDrops::default(),
        }
    }

    #[test]
    fn a_long_run_keeps_bounded_intervals_and_counts_the_dropped() {
        let mut r = Report::new("t", JsonMode::Document, 0);
        for _ in 0..MAX_INTERVALS + 10 {
            r.interval(interval(1));
        }
        assert_eq!(r.intervals.len(), MAX_INTERVALS);
        assert_eq!(r.omitted, 10);
        let mut r = Report::new("t", JsonMode::Document, 0);
        for _ in 0..30 {
            r.interval(interval(10_000));
        }
        assert_eq!(r.intervals.len(), MAX_STREAM_ENTRIES / 10_000);
        assert_eq!(r.entries, MAX_STREAM_ENTRIES);
        assert_eq!(r.omitted, 10);
        // One huge interval is kept rather than none.
        r.interval(interval(MAX_STREAM_ENTRIES + 1));
        assert_eq!(r.intervals.len(), 1);
    }
}
