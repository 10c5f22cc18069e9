//! Many flows from one thread on each side (`multiplexed_send`,
//! `multiplexed_recv`), over an in-memory link in run to completion: every
//! byte arrives and is receipted, a reverse or echo request is handed back
//! with its opening, a raw stream is taken without a receipt, a hostile
//! opening fails its connection alone, Ctrl-C ends every flow, and no packet
//! buffer is left behind.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pmdt::link::memory::MemoryLink;
use pmdt::link::Link;
use pmdt::runtime::{Backend, IoCore, Runtime};
use pmdt_tools::data_send::{Payload, SendPlan};
use pmdt_tools::flow_error::FlowError;
use pmdt_tools::interrupt::Interrupt;
use pmdt_tools::interval::PayloadStart;
use pmdt_tools::multiplexed_recv::{receive_multiplexed, Accepted, RecvEvent};
use pmdt_tools::multiplexed_send::{send_multiplexed, MuxFlow, MuxOutcome};
use pmdt_tools::pattern::Pattern;
use pmdt_tools::session::{Mode, Opening, Request};
use sha2::{Digest, Sha256};

const CLIENT: &str = "10.0.0.1:1000";
const SERVER: &str = "10.0.0.2:2000";

/// Two run-to-completion runtimes joined by an in-memory link, and each end's
/// packet pool.
struct Pair {
    client: Runtime,
    server: Runtime,
    pools: [pmdt::link::BufferPool; 2],
}

fn pair() -> Pair {
    let (a, b) = MemoryLink::pair(CLIENT.parse().unwrap(), SERVER.parse().unwrap(), 4096);
    let pools = [a.pool(), b.pool()];
    let start = |l: MemoryLink| {
        Runtime::builder()
            .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
            .io_core(IoCore::Caller { cpu: None })
            .listen_from_start()
            .start()
            .unwrap()
    };
    Pair {
        client: start(a),
        server: start(b),
        pools,
    }
}

impl Pair {
    /// Shuts both down; every packet buffer is back in its pool.
    fn end(self) {
        self.client.shutdown().unwrap();
        self.server.shutdown().unwrap();
        for pool in &self.pools {
            assert_eq!(
                pool.available(),
                pool.capacity(),
                "packet buffers left behind"
            );
        }
    }
}

/// The server side: accepts `n` connections and serves them from one
/// thread; returns its events in the order they came.
fn serve(server: &Runtime, n: usize, stop: &Interrupt) -> std::thread::JoinHandle<Vec<RecvEvent>> {
    let listener = server.listen(0).unwrap();
    let poller = server.poller();
    let stop = stop.clone();
    std::thread::spawn(move || {
        let (tx, rx) = mpsc::channel();
        let serving = std::thread::spawn(move || {
            let mut events = Vec::new();
            receive_multiplexed(&poller, &rx, &stop, |e| events.push(e));
            events
        });
        {
            for tag in 0..n {
                let stream = listener.accept().unwrap();
                let a = Accepted {
                    tag,
                    stream,
                    output: None,
                    hash: true,
                    start: PayloadStart::unknown(),
                };
                tx.send(a).unwrap();
            }
            drop(tx);
        }
        serving.join().unwrap()
    })
}

fn request_line(flow: u64) -> Vec<u8> {
    Request {
        mode: Mode::Send,
        flow,
        bytes: None,
        seconds: None,
        hash: true,
    }
    .line()
    .unwrap()
}

fn sha_of_pattern(seed: u64, len: usize) -> String {
    let mut b = vec![0u8; len];
    Pattern::new(seed).fill(&mut b);
    Sha256::digest(&b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

#[test]
fn many_flows_from_one_thread_each_side_arrive_whole_and_receipted() {
    let p = pair();
    let stop = Interrupt::never();
    let flows = 24;
    let server = serve(&p.server, flows, &stop);
    let dir = std::env::temp_dir().join(format!("pmdt-mux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One flow sends a file (read by position), the others generated data
    // of different lengths.
    let file = dir.join("input.bin");
    let mut content = vec![0u8; 300_001];
    Pattern::new(99).fill(&mut content);
    std::fs::write(&file, &content).unwrap();
    let tasks: Vec<MuxFlow> = (0..flows)
        .map(|k| MuxFlow {
            stream: p.client.connect(SERVER.parse().unwrap()).unwrap(),
            request: request_line(k as u64),
            plan: SendPlan {
                payload: if k == 0 {
                    Payload::File(file.clone())
                } else {
                    Payload::Generated(k as u64)
                },
                bytes: (k > 0).then_some(100_000 + 7919 * k as u64),
                deadline: None,
                hash: true,
            },
            start_at: Instant::now(),
        })
        .collect();
    let mut ends = 0;
    let outcomes = send_multiplexed(&p.client.poller(), tasks, &stop, |_, _| ends += 1);
    assert_eq!(ends, flows);
    for (k, o) in outcomes.iter().enumerate() {
        assert!(o.request_error.is_none() && o.sent.error.is_none() && o.error.is_none());
        let len = if k == 0 {
            content.len()
        } else {
            100_000 + 7919 * k
        };
        assert_eq!(o.sent.bytes, len as u64, "flow {k}");
        let want = if k == 0 {
            sha_of_pattern(99, len)
        } else {
            sha_of_pattern(k as u64, len)
        };
        assert_eq!(o.sent.sha256, want, "flow {k}: what was sent");
        let r = o.receipt.as_ref().expect("a receipt");
        assert_eq!(
            (r.bytes, &r.sha256),
            (o.sent.bytes, &o.sent.sha256),
            "flow {k}"
        );
        assert!(o.drain_started <= o.ended && o.started <= o.drain_started);
    }
    let events = server.join().unwrap();
    assert_eq!(events.len(), flows);
    for e in events {
        let RecvEvent::Ended(r) = e else {
            panic!("a send request was handed back")
        };
        assert!(r.got.error.is_none(), "{:?}", r.got.error);
        assert_eq!(r.request.as_ref().map(|q| q.mode), Some(Mode::Send));
        let o: &MuxOutcome = &outcomes[r.request.unwrap().flow as usize];
        assert_eq!((r.got.bytes, &r.got.sha256), (o.sent.bytes, &o.sent.sha256));
    }
    drop(outcomes);
    std::fs::remove_dir_all(&dir).unwrap();
    p.end();
}

#[test]
fn a_reverse_request_is_handed_back_and_a_raw_stream_taken_without_receipt() {
    let p = pair();
    let stop = Interrupt::never();
    let server = serve(&p.server, 3, &stop);
    let to: SocketAddr = SERVER.parse().unwrap();
    // A reverse request: handed back with its opening.
    let mut reverse = p.client.connect(to).unwrap();
    Request {
        mode: Mode::Reverse,
        flow: 5,
        bytes: Some(10),
        seconds: None,
        hash: false,
    }
    .write_to(&mut reverse)
    .unwrap();
    // A raw stream: its bytes are the data; it closes with no receipt.
    let mut raw = p.client.connect(to).unwrap();
    raw.write_all(b"not a request, just bytes").unwrap();
    raw.finish();
    // A request line that never ends: that connection fails alone.
    let mut hostile = p.client.connect(to).unwrap();
    let line = request_line(0);
    hostile.write_all(&line[..line.len() - 1]).unwrap();
    hostile.write_all(&[b'x'; 5000]).unwrap();
    hostile.finish();
    let mut rest = Vec::new();
    raw.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "a raw stream gets no receipt");
    raw.close().unwrap();
    let mut events = Vec::new();
    let handle = std::thread::spawn(move || server.join().unwrap());
    // The handed-back connection is the caller's: answer it here so the
    // server's thread can end.
    while !handle.is_finished() {
        std::thread::sleep(Duration::from_millis(10));
        p.client.poll();
    }
    events.extend(handle.join().unwrap());
    let mut seen = [false; 3];
    for e in events {
        match e {
            RecvEvent::HandOff {
                opening, stream, ..
            } => {
                // Served elsewhere in the tools; here it ends at once.
                stream.reset(1);
                let Opening::Request { request, .. } = opening else {
                    panic!("the reverse request's opening")
                };
                assert_eq!((request.mode, request.flow), (Mode::Reverse, 5));
                seen[0] = true;
            }
            RecvEvent::Ended(r) if r.request.is_none() && r.got.error.is_none() => {
                assert_eq!(r.got.bytes, 25);
                seen[1] = true;
            }
            RecvEvent::Ended(r) => {
                let e = r.got.error.expect("the endless request line fails");
                assert!(e.to_string().contains("4096"), "{e}");
                r.stream.reset(e.reset_code());
                seen[2] = true;
            }
        }
    }
    assert_eq!(seen, [true; 3]);
    reverse.reset(1);
    hostile.reset(1);
    p.end();
}

#[test]
fn a_stop_ends_every_flow_as_interrupted() {
    let p = pair();
    let (stop, server_stop) = (Interrupt::never(), Interrupt::never());
    let server = serve(&p.server, 4, &server_stop);
    let tasks: Vec<MuxFlow> = (0..4)
        .map(|k| MuxFlow {
            stream: p.client.connect(SERVER.parse().unwrap()).unwrap(),
            request: request_line(k),
            plan: SendPlan {
                payload: Payload::Generated(k),
                bytes: None,
                deadline: None, // endless: only the stop ends them
                hash: false,
            },
            // The last one has not started when the stop comes.
            start_at: Instant::now() + Duration::from_secs(if k == 3 { 3600 } else { 0 }),
        })
        .collect();
    let mut ended = 0;
    // The stop comes from outside (a signal), whenever it comes: the flows
    // are endless until then.
    let trigger = stop.clone();
    let signal = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        trigger.trigger();
    });
    let outcomes = send_multiplexed(&p.client.poller(), tasks, &stop, |_, _| {
        ended += 1;
    });
    signal.join().unwrap();
    assert_eq!(ended, 4);
    for (k, o) in outcomes.into_iter().enumerate() {
        let e = o.request_error.or(o.sent.error).expect("interrupted");
        assert!(matches!(e, FlowError::Interrupted), "flow {k}: {e}");
        o.stream.reset(e.reset_code());
    }
    server_stop.trigger();
    for e in server.join().unwrap() {
        let RecvEvent::Ended(r) = e else {
            panic!("handed back")
        };
        assert!(r.got.error.is_some());
    }
    p.end();
}
