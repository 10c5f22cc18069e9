//! pmdt-recv: accepts pmdt connections and writes each stream to a file (or one
//! file per connection in a directory), or discards it; prints every stream's
//! SHA-256. A file appears under its final name only once complete (`.part` until
//! then, removed if the transfer fails or is interrupted).
//!
//! `pmdt-recv` alone runs the receiving half of the one-host demo (memif server at
//! 10.88.0.2:9000, one connection).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use pmdt::runtime::{Runtime, Stream};
use pmdt::ConnectionStats;
use pmdt_tools::cli_error::{self, CliError};
use pmdt_tools::interrupt::Interrupt;
use pmdt_tools::link_args::{LinkArgs, Role};
use pmdt_tools::progress::Progress;
use pmdt_tools::summary::{hex, FlowSummary, LoadSampler, Summary};
use pmdt_tools::transport_args::TransportArgs;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const PROG: &str = "pmdt-recv";

/// Receive data over pmdt (reliable windowed UDP, DPDK or kernel UDP).
#[derive(Debug, Parser, Serialize, Deserialize, Default)]
#[command(name = PROG, version, about, long_about = None)]
#[serde(default)]
struct Cli {
    /// Write the stream to this file, or one file per connection into this directory
    /// (must exist). Default: discard (only count and hash).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Exit after this many connections have finished (0: serve until Ctrl-C).
    #[arg(short = 'N', long, default_value_t = 1)]
    connections: usize,
    /// Synthetic processing cost per received packet on the I/O core, ns (load
    /// experiments).
    #[arg(long, default_value_t = 0)]
    work_ns: u64,
    /// Print one JSON summary object on stdout at the end.
    #[arg(long)]
    json: bool,
    /// Skip SHA-256 (benchmarking the transport, not the hash; `sha256` is empty).
    #[arg(long)]
    no_hash: bool,
    /// Read options from this TOML file (flags given here win).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    transport: TransportArgs,
    #[command(flatten)]
    #[serde(flatten)]
    link: LinkArgs,
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

fn part_of(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

fn receive(
    n: usize,
    mut stream: Stream,
    path: Option<PathBuf>,
    stop: &Interrupt,
    done: &AtomicU64,
    hash: bool,
) -> (FlowSummary, ConnectionStats) {
    let started = Instant::now();
    let peer = stream.peer_addr().to_string();
    let mut hasher = Sha256::new();
    let mut got = 0u64;
    let mut err = None;
    let mut file = match &path {
        Some(p) => match File::create(part_of(p)) {
            Ok(f) => Some(BufWriter::with_capacity(1 << 20, f)),
            Err(e) => {
                err = Some(format!("cannot create {}: {e}", part_of(p).display()));
                None
            }
        },
        None => None,
    };
    let mut buf = vec![0u8; 256 * 1024];
    while err.is_none() {
        if stop.is_set() {
            err = Some("interrupted".into());
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                if hash {
                    hasher.update(&buf[..k]);
                }
                if let Some(f) = &mut file {
                    if let Err(e) = f.write_all(&buf[..k]) {
                        err = Some(format!("write error: {e}"));
                    }
                }
                got += k as u64;
                done.fetch_add(k as u64, Ordering::Relaxed);
            }
            Err(_) if stop.is_set() => err = Some("interrupted".into()),
            Err(e) => err = Some(e.to_string()),
        }
    }
    if err.is_none() {
        if let Some(f) = file.take() {
            match f
                .into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
            {
                Ok(()) => {}
                Err(e) => err = Some(format!("write error: {e}")),
            }
        }
    }
    drop(file);
    let seconds = started.elapsed().as_secs_f64();
    if let Some(p) = &path {
        let part = part_of(p);
        if err.is_none() {
            if let Err(e) = std::fs::rename(&part, p) {
                err = Some(format!(
                    "cannot rename {} to {}: {e}",
                    part.display(),
                    p.display()
                ));
            }
        } else {
            let _ = std::fs::remove_file(&part);
        }
    }
    if err.is_none() {
        let _ = stream.close();
    }
    let stats = stream.stats();
    let sha = if hash {
        hex(&hasher.finalize())
    } else {
        String::new()
    };
    if err.is_none() {
        eprintln!("{PROG}: flow {n} from {peer}: {got} bytes in {seconds:.3} s, sha256 {sha}");
    } else {
        eprintln!(
            "{PROG}: flow {n} from {peer}: failed after {got} bytes: {}",
            err.as_deref().unwrap_or("")
        );
    }
    let summary = FlowSummary {
        flow: n,
        peer,
        bytes: got,
        seconds,
        goodput_bps: got as f64 * 8.0 / seconds.max(1e-9),
        sha256: sha,
        path: path.map(|p| p.display().to_string()),
        error: err,
        ..Default::default()
    }
    .with_stats(&stats);
    (summary, stats)
}

fn run(cli: Cli) -> Result<i32, CliError> {
    if let Some(o) = &cli.output {
        if !o.is_dir() && cli.connections != 1 {
            return Err(CliError::new(format!(
                "--output {} is a file but --connections is {}",
                o.display(),
                cli.connections
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
    let transport = cli.transport.config(cli.link.effective_mtu())?;
    cli.link
        .check_memory(&transport, cli.transport.max_buffer, cli.connections)?;
    let eal = cli.link.eal(Role::Receiver, PROG)?;
    let builder = Runtime::builder()
        .transport(transport)
        .per_packet_work(Duration::from_nanos(cli.work_ns));
    let rt = cli
        .link
        .apply(Role::Receiver, eal.as_ref(), builder)?
        .start()
        .map_err(|e| cli_error::from_io("cannot start the runtime", &e))?;
    let listener = rt
        .listen(0)
        .map_err(|e| cli_error::from_io("cannot listen", &e))?;
    eprintln!(
        "{PROG}: listening on {} ({})",
        rt.local_addr(),
        rt.link_name()
    );
    let stop = Interrupt::install();
    let done = Arc::new(AtomicU64::new(0));
    let mut handles: Vec<std::thread::JoinHandle<(FlowSummary, ConnectionStats)>> = Vec::new();
    let mut accepted = 0usize;
    let mut aborts: Vec<pmdt::runtime::AbortHandle> = Vec::new();
    let mut progress: Option<Progress> = None;
    let mut first: Option<Instant> = None;
    let mut load = LoadSampler::default();
    loop {
        if stop.is_set() {
            break;
        }
        let finished = handles.iter().filter(|h| h.is_finished()).count();
        if cli.connections > 0 && finished >= cli.connections {
            break;
        }
        if cli.connections == 0 || accepted < cli.connections {
            match listener.accept_timeout(Duration::from_millis(100)) {
                Ok(s) => {
                    accepted += 1;
                    first.get_or_insert_with(Instant::now);
                    progress.get_or_insert_with(|| Progress::new(PROG, None));
                    let path = target(&cli.output, accepted, &s.peer_addr().to_string());
                    let (stop, done) = (stop.clone(), done.clone());
                    let n = accepted;
                    let hash = !cli.no_hash;
                    aborts.push(s.abort_handle());
                    handles.push(std::thread::spawn(move || {
                        receive(n, s, path, &stop, &done, hash)
                    }));
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => return Err(cli_error::from_io("accept", &e)),
            }
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(p) = &mut progress {
            p.update(done.load(Ordering::Relaxed));
            load.sample(&rt.stats());
        }
    }
    if let Some(p) = &progress {
        p.finish();
    }
    if stop.is_set() {
        // Ctrl-C/SIGTERM: every flow ends now (stalled or failed ones included);
        // their readers see the abort, remove their part files and report.
        aborts.iter().for_each(|a| a.abort(130));
    }
    let seconds = first.map_or(0.0, |f| f.elapsed().as_secs_f64());
    std::thread::sleep(Duration::from_millis(120)); // one stats period
    let rt_stats = rt.stats();
    load.sample(&rt_stats); // the report published when the last flow ended
                            // Stop the runtime first: interrupted readers see their connection end.
    rt.shutdown()
        .map_err(|e| cli_error::from_io("shutdown", &e))?;
    let results: Vec<(FlowSummary, ConnectionStats)> = handles
        .into_iter()
        .map(|h| h.join().expect("receiver thread"))
        .collect();
    let failed = results.iter().any(|(f, _)| f.error.is_some());
    let stats: Vec<ConnectionStats> = results.iter().map(|(_, s)| s.clone()).collect();
    let summary = Summary::build(
        PROG,
        results.into_iter().map(|(f, _)| f).collect(),
        &stats,
        &rt_stats,
        load.summary(),
        seconds,
        stop.is_set(),
    );
    summary.print_human();
    if cli.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializable")
        );
    }
    // Ports are closed by now (the runtime owned them): the EAL goes last.
    if let Some(e) = eal {
        if let Err(e) = e.shutdown() {
            eprintln!("{PROG}: warning: {e}");
        }
    }
    Ok(if stop.is_set() {
        130
    } else if failed {
        1
    } else {
        0
    })
}

fn main() {
    pmdt_tools::entry::run_tool::<Cli>(PROG, |c| c.config.clone(), run)
}
