//! The load reports of measured I/O loops (the [`Poller`] that dedicated cores and
//! run-to-completion callers step) around a transfer: every datagram is in exactly
//! one report, the transfer's reports begin when it does, and the report that
//! closed when it ended stays readable after later reports replaced the latest.
//! Two loops over an in-memory link, stepped in turn on the test's thread, so
//! the test sees every statistics publication.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use super::builder::Writer;
use super::dedicated::{Poller, WhenQuiet};
use super::doorbell::ControlSender;
use super::io_loop::{IoLoop, RxClock, PUBLISH_PERIOD};
use super::stats::{LoadPeriodEnd, LoopStats};
use super::{IdlePolicy, LoadReport, Runtime, Stream};
use crate::link::memory::MemoryLink;
use pmdt_proto::TransportConfig;

/// A loop, its poller, and every statistics snapshot that carried a new report.
struct Side {
    lp: IoLoop,
    _control: ControlSender,
    stats: Arc<ArcSwap<LoopStats>>,
    poller: Poller,
    published: Vec<Arc<LoopStats>>,
}

impl Side {
    fn new(link: MemoryLink) -> Self {
        let (lp, control, stats) = Runtime::builder()
            .build_loop(
                0,
                Box::new(link),
                Instant::now(),
                RxClock::Monotonic,
                Writer::OtherThread,
            )
            .expect("loop");
        Self {
            lp,
            _control: control,
            stats,
            poller: Poller::new(IdlePolicy::BusyPoll),
            published: Vec::new(),
        }
    }

    fn step(&mut self) {
        self.poller.step(&mut self.lp, WhenQuiet::Nap);
        let s = self.stats.load_full();
        if self
            .published
            .last()
            .is_none_or(|p| p.load.tsc != s.load.tsc)
        {
            self.published.push(s);
        }
    }

    fn latest(&self) -> &LoopStats {
        self.published.last().expect("a report")
    }

    /// The snapshot published when the first connection opened, and the one
    /// published when the last closed, once both were.
    fn transfer(&self) -> Option<(usize, usize)> {
        let p = &self.published;
        let start = p.iter().position(|s| s.connections > 0)?;
        let end = (start..p.len()).find(|&i| p[i].connections == 0)?;
        Some((start, end))
    }
}

fn datagrams(s: &LoopStats) -> u64 {
    s.link.rx_datagrams + s.link.tx_datagrams + s.link.tx_dropped
}

fn packets(reports: &[Arc<LoopStats>]) -> u64 {
    reports.iter().map(|s| s.load.packets).sum()
}

/// Checks one side's reports; `data` is the datagrams its part of the transfer
/// needed at least.
fn check(side: &Side, who: &str, data: u64) {
    let (start, end) = side.transfer().expect("the transfer's start and end");
    let p = &side.published;
    assert_eq!(
        p[start].load_ended_by,
        LoadPeriodEnd::TransferStarted,
        "{who}"
    );
    assert_eq!(p[end].load_ended_by, LoadPeriodEnd::TransferEnded, "{who}");
    // Every datagram the loop handled until the transfer ended is in one of the
    // reports published by then: none closed unseen.
    assert_eq!(
        packets(&p[..=end]),
        datagrams(&p[end]),
        "{who}: reports {:#?}",
        p.iter().map(|s| &s.load).collect::<Vec<_>>()
    );
    // The transfer's reports: those after the one that closed when it began,
    // every statistics period from there; one alone when it lasted less.
    let began = p[start].uptime_s;
    let period = PUBLISH_PERIOD.as_secs_f64();
    for (k, s) in p.iter().enumerate().take(end).skip(start + 1) {
        assert_eq!(s.load_ended_by, LoadPeriodEnd::Period, "{who}");
        let periods = (s.uptime_s - began) / period;
        assert!(periods >= (k - start) as f64 - 1e-9, "{who}: {periods}");
    }
    if p[end].uptime_s - began < period {
        assert_eq!(end, start + 1, "{who}: one report");
    }
    let during = packets(&p[start + 1..=end]);
    assert!(during >= datagrams(&p[end]) - datagrams(&p[start]), "{who}");
    assert!(
        during >= data,
        "{who}: {during} datagrams, the data needs {data}"
    );
    // The report that closed with the transfer is its last, with its rate, and
    // still there after a later report replaced the latest.
    let last = &p[end].load;
    assert_eq!(p[end].last_transfer_load.as_ref(), Some(last), "{who}");
    assert!(
        last.packets > 0 && last.packets_per_s > 0.0,
        "{who}: {last:?}"
    );
    assert!(side.latest().load.tsc > last.tsc, "{who}");
    assert_eq!(
        side.latest().last_transfer_load.as_ref(),
        Some(last),
        "{who}"
    );
}

/// Steps both loops until `done`, at most a minute (a hang guard, not a measure).
fn run(a: &mut Side, b: &mut Side, mut done: impl FnMut(&mut Side, &mut Side) -> bool) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while !done(a, b) {
        assert!(Instant::now() < give_up, "stuck");
        a.step();
        b.step();
    }
}

#[test]
fn a_transfers_reports_count_its_datagrams_and_its_last_stays_readable() {
    let (ca, sa): (SocketAddr, SocketAddr) =
        ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap());
    let (l1, l2) = MemoryLink::pair(ca, sa, 1024);
    let (mut client, mut server) = (Side::new(l1), Side::new(l2));
    let (accept_tx, accept_rx) = mpsc::sync_channel(1);
    server.lp.listen(accept_tx);
    let max_payload = TransportConfig::default().max_payload();
    // Written a chunk per millisecond: the transfer lasts at least 40 ms (longer
    // than the estimator's own default period, which the loops must not use),
    // and usually less than one statistics period.
    const CHUNK: usize = 8_000;
    let data = vec![7u8; 40 * CHUNK];
    let mut sender = client
        .lp
        .open(Instant::now(), sa, &Default::default())
        .expect("open");
    let began = Instant::now();
    let mut receiver: Option<Stream> = None;
    let (mut written, mut got, mut buf) = (0, 0, vec![0u8; 64 * 1024]);
    let (mut sender_closed, mut receiver_closed) = (false, false);
    run(&mut client, &mut server, |_, _| {
        let allowed = (began.elapsed().as_millis() as usize + 1) * CHUNK;
        if written < data.len().min(allowed) {
            if let Ok(n) = sender.try_write(&data[written..data.len().min(allowed)]) {
                written += n;
                if written == data.len() {
                    sender.finish();
                }
            }
        } else if written == data.len() && !sender_closed {
            sender_closed = sender.try_close().is_ok();
        }
        receiver = receiver.take().or_else(|| accept_rx.try_recv().ok());
        if let Some(r) = receiver.as_mut() {
            loop {
                match r.try_read(&mut buf) {
                    Ok(0) => {
                        receiver_closed = receiver_closed || r.try_close().is_ok();
                        break;
                    }
                    Ok(n) => got += n,
                    Err(_) => break,
                }
            }
        }
        sender_closed && receiver_closed
    });
    assert_eq!(got, data.len());
    // Both loops publish the transfer's end, then a later (idle) report.
    run(&mut client, &mut server, |a, b| {
        [a, b].iter().all(|s| {
            s.transfer()
                .is_some_and(|(_, end)| s.published.len() > end + 1)
        })
    });
    let data_datagrams = data.len() as u64 / max_payload;
    check(&client, "sender", data_datagrams);
    check(&server, "receiver", data_datagrams);
    let show: Vec<LoadReport> = [&client, &server]
        .iter()
        .filter_map(|s| s.transfer().map(|(_, end)| s.published[end].load.clone()))
        .collect();
    eprintln!("the transfers' last reports: {show:#?}");
}
