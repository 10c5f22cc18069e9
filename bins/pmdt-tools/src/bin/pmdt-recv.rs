//! pmdt-recv: the server. Accepts pmdt connections; for each, what the client asks
//! for: receive its stream (into a file, one file per connection in a directory,
//! or discarded; a file appears under its final name only once complete, `.part`
//! until then) and answer with a receipt (byte count and SHA-256), or with `-R`
//! on the client's side send generated data, or with `--rr` echo every message
//! back. Reports each connection as it ends.
//!
//! `pmdt-recv` alone runs the receiving half of the one-host demo (memif server at
//! 10.88.0.2:9000, one connection); `-N 0` serves until Ctrl-C with bounded
//! memory: finished connections are reported and forgotten, only totals remain.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use clap::{Args, Parser};
use pmdt::runtime::{AbortHandle, Runtime, Stream};
use pmdt::ConnectionStats;
use pmdt_tools::cli_error::{self, CliError};
use pmdt_tools::data_recv::{recv_data, RecvPlan};
use pmdt_tools::data_send::{send_data, Payload, SendPlan};
use pmdt_tools::doc_gen::DocArgs;
use pmdt_tools::entry::ToolCli;
use pmdt_tools::flow_error::{FlowError, INTERRUPTED_CODE};
use pmdt_tools::interrupt::Interrupt;
use pmdt_tools::interval::{Direction, Meter, PayloadStart};
use pmdt_tools::link_args::{LinkArgs, Role};
use pmdt_tools::multiplexed_recv::{receive_multiplexed, Accepted, Received, RecvEvent};
use pmdt_tools::pool_split_arg::DataFlow;
use pmdt_tools::report::{print_dry_run, JsonMode, OutputArgs, Report, Start};
use pmdt_tools::round_trip::echo;
use pmdt_tools::session::{read_opening, Mode, Opening, Receipt, Request};
use pmdt_tools::summary::{FlowSummary, LoadSampler, ReceiptCheck, Summary, Totals};
use pmdt_tools::transport_args::TransportArgs;
use pmdt_tools::units::fmt_rate;
use serde::{Deserialize, Serialize};
use serde_json::json;

const PROG: &str = "pmdt-recv";
/// Connections waiting to be accepted, unless -N asks for more: a sender's -P
/// flows all connect before any starts, faster than this tool accepts them (a
/// server, `-N 0`, took 300 at once).
const DEFAULT_ACCEPT_BACKLOG: usize = 4096;
/// Most connections waiting to be accepted however large -N is (each holds a
/// connection's state until accepted).
const MAX_ACCEPT_BACKLOG: usize = 65_536;

/// Finished connections a server (`-N 0`) keeps in its final summary.
const SERVER_KEEPS: usize = 256;

/// Where data goes and how many connections to serve.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(next_help_heading = "Receiver")]
struct RecvArgs {
    /// Write the stream to this file, or one file per connection into this directory
    /// (must exist). Default: discard (only count and hash).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Exit after this many connections have finished (0: serve until Ctrl-C,
    /// reporting each connection as it ends).
    #[arg(short = 'N', long, default_value_t = 1)]
    connections: usize,
    /// Synthetic processing cost per received packet on the I/O core, ns (load
    /// experiments).
    #[arg(long, default_value_t = 0, value_name = "NS")]
    work_ns: u64,
    /// Skip SHA-256 (benchmarking the transport, not the hash; `sha256` is empty).
    #[arg(long)]
    no_hash: bool,
}

impl Default for RecvArgs {
    fn default() -> Self {
        Self {
            output: None,
            connections: 1,
            work_ns: 0,
            no_hash: false,
        }
    }
}

/// Receive data over pmdt (reliable windowed UDP, DPDK or kernel UDP), iperf3-style.
#[derive(Debug, Parser, Serialize, Deserialize, Default)]
#[command(name = PROG, version)]
#[command(after_help = "EAL arguments may come first, testpmd style: \
pmdt-recv -l 0-1 --vdev net_memif0,role=server -- -N 0")]
#[serde(default)]
struct Cli {
    /// Read options from this TOML file (flags given here win).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    recv: RecvArgs,
    #[command(flatten)]
    #[serde(flatten)]
    transport: TransportArgs,
    #[command(flatten)]
    #[serde(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    #[serde(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    #[serde(skip)]
    docs: DocArgs,
    #[command(flatten)]
    #[serde(flatten)]
    log: pmdt_log::Verbosity,
}

impl ToolCli for Cli {
    fn config_path(&self) -> Option<PathBuf> {
        self.config.clone()
    }
    fn docs(&self) -> &DocArgs {
        &self.docs
    }
    fn verbosity(&self) -> u8 {
        self.log.verbose
    }
    fn json_mode(&self) -> JsonMode {
        self.output.mode()
    }
}

/// Where a connection's bytes go.
fn target(output: &Option<PathBuf>, n: usize, peer: &str) -> Option<PathBuf> {
    let out = output.as_ref()?;
    if out.is_dir() {
        let name = format!("flow-{n}-{}.bin", peer.replace([':', '.', '[', ']'], "_"));
        Some(out.join(name))
    } else {
        Some(out.clone())
    }
}

/// A finished connection.
struct Served {
    summary: FlowSummary,
    stats: ConnectionStats,
    ended: Instant,
}

/// Receives a client's data (its request said `send`, or a raw stream), then
/// answers with the receipt.
fn receive(
    stream: &mut Stream,
    request: Option<&Request>,
    first: &[u8],
    path: Option<PathBuf>,
    hash: bool,
    stop: &Interrupt,
) -> FlowSummary {
    let plan = RecvPlan {
        file: path.clone(),
        hash,
        expect: None,
    };
    let got = recv_data(stream, first, &plan, stop);
    let mut error = got.error;
    if error.is_none() {
        // A tools client waits for the receipt; a raw stream gets none.
        let answer = match request {
            Some(_) => Receipt {
                bytes: got.bytes,
                sha256: got.sha256.clone(),
            }
            .write_to(stream),
            None => Ok(()),
        };
        if let Err(e) = answer.and_then(|_| stream.close()) {
            error = Some(e.into());
        }
    }
    FlowSummary {
        direction: Direction::Receive,
        bytes: got.bytes,
        sha256: got.sha256,
        path: path.map(|p| p.display().to_string()),
        error,
        ..Default::default()
    }
}

/// Sends the client generated data (its request said `reverse`), then reads its
/// receipt.
fn send_reverse(
    stream: &mut Stream,
    request: &Request,
    hash: bool,
    stop: &Interrupt,
) -> FlowSummary {
    let plan = SendPlan {
        payload: Payload::Generated(request.flow),
        bytes: request.bytes,
        deadline: request
            .seconds
            .map(|s| Instant::now() + Duration::from_secs_f64(s)),
        hash,
    };
    let sent = send_data(stream, &plan, stop);
    let mut error = sent.error.clone();
    let mut receipt = None;
    if error.is_none() {
        stream.finish();
        match Receipt::read_from(stream) {
            Ok(r) => receipt = r,
            Err(e) => error = Some(e.into()),
        }
        if error.is_none() {
            if let Err(e) = stream.close() {
                error = Some(e.into());
            }
        }
    }
    let check = receipt.map(|r| ReceiptCheck::check(&r, sent.bytes, &sent.sha256));
    if let Some(c) = check.as_ref().filter(|c| !c.matches) {
        error.get_or_insert(FlowError::ClientDisagrees {
            got: c.bytes,
            sent: sent.bytes,
        });
    }
    FlowSummary {
        direction: Direction::Send,
        bytes: sent.bytes,
        sha256: sent.sha256,
        receipt: check,
        error,
        ..Default::default()
    }
}

/// Writes back every byte the client sends (its request said `echo`: `--rr`),
/// then closes once it finished.
fn echo_back(stream: &mut Stream, first: &[u8], stop: &Interrupt) -> FlowSummary {
    let echoed = echo(stream, first, stop);
    let mut error = echoed.error;
    if error.is_none() {
        if let Err(e) = stream.close() {
            error = Some(e.into());
        }
    }
    FlowSummary {
        direction: Direction::Receive,
        bytes: echoed.bytes,
        error,
        ..Default::default()
    }
}

fn serve(
    n: usize,
    mut stream: Stream,
    output: &Option<PathBuf>,
    hash: bool,
    stop: &Interrupt,
    start: &PayloadStart,
) -> Served {
    let opening = read_opening(&mut stream);
    // From the request (or the first data) on: a sender's -P flows connect
    // first and start together, so a flow accepted early waits idle meanwhile.
    let started = Instant::now();
    start.set_from_opening(opening.as_ref().ok());
    serve_opened(n, stream, opening, started, output, hash, stop)
}

/// Serves a connection from its opening on.
fn serve_opened(
    n: usize,
    mut stream: Stream,
    opening: std::io::Result<Opening>,
    started: Instant,
    output: &Option<PathBuf>,
    hash: bool,
    stop: &Interrupt,
) -> Served {
    let peer = stream.peer_addr().to_string();
    let summary = match opening {
        Ok(Opening::Request { request, rest, .. }) => match request.mode {
            Mode::Send => receive(
                &mut stream,
                Some(&request),
                &rest,
                target(output, n, &peer),
                hash,
                stop,
            ),
            Mode::Reverse => send_reverse(&mut stream, &request, hash, stop),
            Mode::Echo => echo_back(&mut stream, &rest, stop),
        },
        Ok(Opening::Raw { data }) => receive(
            &mut stream,
            None,
            &data,
            target(output, n, &peer),
            hash,
            stop,
        ),
        Err(e) => FlowSummary {
            error: Some(FlowError::from_stream(e, stop.is_set())),
            ..Default::default()
        },
    };
    served(n, stream, summary, started, stop)
}

/// A connection [`receive_multiplexed`] received: its summary, as
/// [`receive`] makes one.
fn served_received(r: Received, stop: &Interrupt) -> Served {
    let summary = if r.opened {
        FlowSummary {
            direction: Direction::Receive,
            bytes: r.got.bytes,
            sha256: r.got.sha256,
            path: r.output.map(|p| p.display().to_string()),
            error: r.got.error,
            ..Default::default()
        }
    } else {
        // It ended before its opening: as `serve_opened` reports a failed one.
        FlowSummary {
            error: r.got.error,
            ..Default::default()
        }
    };
    served(r.tag, r.stream, summary, r.started, stop)
}

/// Runs `serve` (a connection's thread), reporting a failed connection if it
/// panics: the server waits for every connection's report.
fn report_even_on_panic(n: usize, serve: impl FnOnce() -> Served) -> Served {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(serve)).unwrap_or_else(|_| Served {
        summary: FlowSummary {
            flow: n,
            error: Some(std::io::Error::other("its thread panicked").into()),
            ..Default::default()
        },
        stats: ConnectionStats::default(),
        ended: Instant::now(),
    })
}

/// A connection that ended: its figures, and its connection reset if it failed.
fn served(
    n: usize,
    stream: Stream,
    mut summary: FlowSummary,
    started: Instant,
    stop: &Interrupt,
) -> Served {
    if stop.is_set() {
        summary.error.get_or_insert(FlowError::Interrupted);
    }
    let seconds = started.elapsed().as_secs_f64();
    let stats = stream.stats();
    summary.flow = n;
    summary.id = stream.connection_id();
    summary.peer = stream.peer_addr().to_string();
    summary.seconds = seconds;
    summary.goodput_bps = summary.bytes as f64 * 8.0 / seconds.max(1e-9);
    if let Some(e) = &summary.error {
        // The client's flow fails too (a reverse flow's client would otherwise
        // read end of stream and take what it got for the whole transfer).
        stream.reset(e.reset_code());
    }
    Served {
        summary: summary.with_stats(&stats),
        stats,
        ended: Instant::now(),
    }
}

/// The time during which at least one connection was open.
#[derive(Default)]
struct BusyTime {
    open: usize,
    since: Option<Instant>,
    total: Duration,
}

impl BusyTime {
    fn opened(&mut self, at: Instant) {
        if self.open == 0 {
            self.since = Some(at);
        }
        self.open += 1;
    }

    fn closed(&mut self, at: Instant) {
        self.open = self.open.saturating_sub(1);
        if self.open == 0 {
            if let Some(s) = self.since.take() {
                self.total += at.saturating_duration_since(s);
            }
        }
    }

    fn seconds(&self, now: Instant) -> f64 {
        (self.total + self.since.map_or(Duration::ZERO, |s| now.duration_since(s))).as_secs_f64()
    }
}

/// The server's state: live connections, and what is kept of finished ones.
struct Server {
    /// Each live connection's number and abort handle.
    live: Vec<(usize, AbortHandle)>,
    /// Where connections report their end (their number and figures).
    served: Receiver<(usize, Served)>,
    kept: VecDeque<FlowSummary>,
    keep: usize,
    totals: Totals,
    busy: BusyTime,
    /// Connections that ended with an error.
    failed: usize,
}

impl Server {
    /// Reports and forgets the connections that ended; with `all`, waits for
    /// every connection's report (until every reporting thread is gone).
    fn reap(&mut self, report: &Report, all: bool) {
        loop {
            let (n, s) = if all {
                match self.served.recv() {
                    Ok(x) => x,
                    Err(_) => break,
                }
            } else {
                match self.served.try_recv() {
                    Ok(x) => x,
                    Err(_) => break,
                }
            };
            if let Some(i) = self.live.iter().position(|(k, _)| *k == n) {
                self.live.swap_remove(i);
            }
            let f = &s.summary;
            match &f.error {
                None => eprintln!(
                    "{PROG}: flow {} {} {}: {} bytes in {:.3} s = {}, sha256 {}",
                    f.flow,
                    if f.direction == Direction::Send {
                        "to"
                    } else {
                        "from"
                    },
                    f.peer,
                    f.bytes,
                    f.seconds,
                    fmt_rate(f.goodput_bps),
                    if f.sha256.is_empty() { "-" } else { &f.sha256 }
                ),
                Some(e) => {
                    self.failed += 1;
                    eprintln!(
                        "{PROG}: flow {} {}: failed after {} bytes: {e}",
                        f.flow, f.peer, f.bytes
                    )
                }
            }
            report.event("connection_end", f);
            self.totals.add(f, &s.stats);
            self.busy.closed(s.ended);
            if self.kept.len() == self.keep {
                self.kept.pop_front();
            }
            self.kept.push_back(s.summary);
        }
        if all {
            // A connection whose thread ended without a report (it panicked).
            for (n, _) in self.live.drain(..) {
                self.failed += 1;
                eprintln!("{PROG}: flow {n}: its thread ended without a report");
            }
        }
    }
}

fn run(cli: Cli) -> Result<i32, CliError> {
    let args = &cli.recv;
    if let Some(o) = &args.output {
        // A device (`/dev/null`) takes any number of connections, written in place.
        let device = std::fs::metadata(o).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if !o.is_dir() && !device && args.connections != 1 {
            return Err(CliError::new(format!(
                "--output {} is a file but --connections is {}",
                o.display(),
                args.connections
            ))
            .hint("give an existing directory for one file per connection"));
        }
        if let Some(parent) = o.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(CliError::new(format!(
                    "directory {} does not exist",
                    parent.display()
                )));
            }
        }
    }
    let interval = cli.output.interval()?;
    if !cli.transport.cc.is_single() {
        return Err(CliError::new(format!(
            "--cc {}: the receiver's accepted flows all use one controller",
            cli.transport.cc
        ))
        .hint("give the list to pmdt-send, which opens the flows"));
    }
    let transport = cli.transport.config(cli.link.effective_mtu())?;
    cli.link.check_memory(
        &transport,
        cli.transport.max_buffer.map(|b| b.0),
        args.connections,
        DataFlow::In,
    )?;
    if cli.output.dry_run {
        print_dry_run(
            cli.link.eal_builder(Role::Receiver, PROG)?.as_ref(),
            json!({
                "output": args.output,
                "connections": args.connections,
                "transport": format!("{transport:?}"),
            }),
        );
        return Ok(0);
    }
    let eal = cli.link.eal(Role::Receiver, PROG)?;
    let builder = Runtime::builder()
        .transport(transport.clone())
        // Room for every connection -N expects to arrive at once (iperf3's -P
        // connects them all before any starts): beyond the backlog, handshakes
        // are refused while the accepting thread catches up.
        .accept_backlog(
            args.connections
                .clamp(DEFAULT_ACCEPT_BACKLOG, MAX_ACCEPT_BACKLOG),
        )
        .per_packet_work(Duration::from_nanos(args.work_ns))
        // A sender already calling is accepted from the first packet on.
        .listen_from_start();
    let rt = cli
        .link
        .apply(Role::Receiver, DataFlow::In, eal.as_ref(), builder)?
        .start()
        .map_err(|e| cli_error::from_io("cannot start the runtime", &e))?;
    let listener = rt
        .listen(0)
        .map_err(|e| cli_error::from_io("cannot listen", &e))?;
    let link_desc = format!("{}, {}", rt.link_name(), cli.link.io_mode()?);
    eprintln!("{PROG}: listening on {} ({link_desc})", rt.local_addr());
    let stop = Interrupt::install();
    let listening = Instant::now();
    let mut report = Report::new(PROG, cli.output.mode(), 16);
    report.start(Start::new(
        PROG,
        &link_desc,
        json!({
            "protocol": "pmdt",
            "listening": rt.local_addr().to_string(),
            "connections": args.connections,
            "congestion": cli.transport.cc.to_string(),
            "interval": interval.map_or(0.0, |d| d.as_secs_f64()),
            "hash": !args.no_hash,
        }),
    ));
    let mut meter = Meter::new(listening, &rt.stats());
    let mut next_tick = interval.map(|i| listening + i);
    let (served_tx, served_rx) = mpsc::channel::<(usize, Served)>();
    // One thread serves every connection that sends data (the others get a
    // thread each from it), unless --thread-per-flow.
    let multiplexed = cli.link.one_thread_for_flows()?.then(|| {
        let (tx, rx) = mpsc::channel::<Accepted>();
        let (poller, served, stop) = (rt.poller(), served_tx.clone(), stop.clone());
        let (output, hash) = (args.output.clone(), !args.no_hash);
        let h = std::thread::spawn(move || {
            receive_multiplexed(&poller, &rx, &stop, |event| match event {
                RecvEvent::Ended(r) => {
                    let _ = served.send((r.tag, served_received(r, &stop)));
                }
                RecvEvent::HandOff {
                    tag,
                    stream,
                    opening,
                    started,
                } => {
                    let (served, stop, output) = (served.clone(), stop.clone(), output.clone());
                    std::thread::spawn(move || {
                        let s = report_even_on_panic(tag, || {
                            serve_opened(tag, stream, Ok(opening), started, &output, hash, &stop)
                        });
                        let _ = served.send((tag, s));
                    });
                }
            })
        });
        (tx, h)
    });
    let mut state = Server {
        live: Vec::new(),
        served: served_rx,
        kept: VecDeque::new(),
        keep: if args.connections == 0 {
            SERVER_KEEPS
        } else {
            args.connections
        },
        totals: Totals::default(),
        busy: BusyTime::default(),
        failed: 0,
    };
    let mut accepted = 0usize;
    let mut load = LoadSampler::default();
    loop {
        if stop.is_set() {
            break;
        }
        if multiplexed.as_ref().is_some_and(|(_, h)| h.is_finished()) {
            // It panicked: its connections are reported failed below, and no
            // more are accepted.
            eprintln!("{PROG}: error: the thread serving the connections failed");
            break;
        }
        state.reap(&report, false);
        if args.connections > 0 && state.totals.flows() >= args.connections {
            break;
        }
        if args.connections == 0 || accepted < args.connections {
            match listener.accept_timeout(Duration::from_millis(100)) {
                Ok(s) => {
                    accepted += 1;
                    state.busy.opened(Instant::now());
                    let start = PayloadStart::unknown();
                    meter.track(
                        accepted,
                        Direction::Receive,
                        s.stats_handle(),
                        start.clone(),
                    );
                    let (n, hash) = (accepted, !args.no_hash);
                    state.live.push((n, s.abort_handle()));
                    if let Some((tx, _)) = &multiplexed {
                        let output = target(&args.output, n, &s.peer_addr().to_string());
                        let a = Accepted {
                            tag: n,
                            stream: s,
                            output,
                            hash,
                            start,
                        };
                        if tx.send(a).is_err() {
                            // Its thread is gone (it panicked): reap says so.
                            break;
                        }
                    } else {
                        let (stop, output, served) =
                            (stop.clone(), args.output.clone(), served_tx.clone());
                        std::thread::spawn(move || {
                            let s = report_even_on_panic(n, || {
                                serve(n, s, &output, hash, &stop, &start)
                            });
                            let _ = served.send((n, s));
                        });
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => return Err(cli_error::from_io("accept", &e)),
            }
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
        let now = Instant::now();
        let stats = rt.stats();
        if !state.live.is_empty() {
            load.sample(&stats);
        }
        if let (Some(t), Some(i)) = (next_tick, interval) {
            if now >= t {
                // Intervals with a connection open (a server idles quietly).
                if meter.tracked() > 0 {
                    report.interval(meter.sample(now, &stats));
                } else {
                    meter.sample(now, &stats);
                }
                next_tick = Some(t + i);
            }
        }
    }
    if stop.is_set() {
        // Ctrl-C/SIGTERM: every flow ends now (stalled or failed ones included);
        // their threads see the abort, remove their part files and report.
        state
            .live
            .iter()
            .for_each(|(_, a)| a.abort(INTERRUPTED_CODE));
    }
    let rt_stats = load.sample_final(&rt); // the report published when the last flow ended
    if let (Some(i), Some(t)) = (interval, next_tick) {
        if meter.tracked() > 0 && ((t - i).elapsed() > i / 10 || meter.unreported()) {
            report.interval(meter.sample(Instant::now(), &rt_stats));
        }
    }
    // Stop the runtime first: interrupted connections see their end.
    rt.shutdown()
        .map_err(|e| cli_error::from_io("shutdown", &e))?;
    drop(served_tx);
    if let Some((tx, h)) = multiplexed {
        drop(tx);
        if h.join().is_err() {
            eprintln!("{PROG}: the thread serving the connections failed");
        }
    }
    state.reap(&report, true);
    let now = Instant::now();
    let mut summary = Summary::build(
        PROG,
        &state.totals,
        state.kept.into_iter().collect(),
        &rt_stats,
        load.summary(),
        state.busy.seconds(now),
        stop.is_set(),
    );
    summary.listening_seconds = Some(now.duration_since(listening).as_secs_f64());
    summary.print_human(false); // each connection was reported as it ended
    let error = (state.failed > 0 && !stop.is_set()).then(|| {
        format!(
            "{} of {} connection(s) failed; see the flows",
            state.failed, summary.connections
        )
    });
    report.end(&summary, error.as_deref());
    // Ports are closed by now (the runtime owned them): the EAL goes last.
    if let Some(e) = eal {
        if let Err(e) = e.shutdown() {
            eprintln!("{PROG}: warning: {e}");
        }
    }
    Ok(if stop.is_set() {
        130
    } else if state.failed > 0 {
        1
    } else {
        0
    })
}

fn main() {
    pmdt_tools::entry::run_tool::<Cli>(PROG, run)
}
