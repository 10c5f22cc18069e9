//! Blocking `Stream` calls are never left asleep. The I/O loop wakes a parked
//! writer only once half its ring is free and defers waking a parked reader while
//! full-size segments keep arriving; these tests turn the park timeout (the safety
//! net that would hide a lost wake-up) into an hour, then run transfers whose
//! blocking reads and writes park thousands of times, and require them to finish.
//! They assert completion and the bytes, never how long anything took.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use pmdt::link::memory::MemoryLink;
use pmdt::link::Link;
use pmdt::runtime::{Backend, Runtime};
use pmdt::TransportConfig;

mod common;
use common::data;

/// A lost wake-up leaves a thread parked this long: the tests would hang.
const NO_SAFETY_NET: Duration = Duration::from_secs(3600);
/// How long a test may run before it is declared hung (far beyond its need on
/// a loaded machine; only a lost wake-up gets near it).
const HUNG: Duration = Duration::from_secs(600);

fn pair(ring_slots: usize) -> (Runtime, Runtime, SocketAddr) {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let build = |l: MemoryLink| {
        Runtime::builder()
            .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
            .ring_slots(ring_slots)
            .park_timeout(NO_SAFETY_NET)
            .start()
            .unwrap()
    };
    (build(la), build(lb), b)
}

/// Runs `f` on a thread and fails if it has not finished within [`HUNG`].
fn must_finish(name: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let h = thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(HUNG) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked: report its panic.
            h.join().unwrap();
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{name}: a blocked Stream call was never woken")
        }
    }
}

#[test]
fn bulk_transfer_through_small_rings_completes() {
    must_finish("bulk", || {
        // 16-slot rings: the writer fills its ring and parks every few packets,
        // the reader empties its ring and parks as often.
        let (client, server, to) = pair(16);
        let payload = data(24 << 20, 1);
        let listener = server.listen(0).unwrap();
        let reader = thread::spawn(move || {
            let mut s = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = vec![0u8; 4096];
            loop {
                match s.read(&mut buf).unwrap() {
                    0 => break,
                    n => got.extend_from_slice(&buf[..n]),
                }
            }
            got
        });
        let mut s = client.connect(to).unwrap();
        for part in payload.chunks(100_003) {
            s.write_all(part).unwrap();
        }
        s.close().unwrap();
        let got = reader.join().unwrap();
        assert_eq!(got.len(), payload.len());
        assert!(got == payload, "received bytes differ");
    });
}

#[test]
fn request_response_of_every_size_completes() {
    must_finish("request/response", || {
        let (client, server, to) = pair(64);
        let full = TransportConfig::default().max_payload() as usize;
        // Small messages, messages ending with a full segment (the reader's
        // wake-up is deferred, then due), and bulk-sized ones.
        let sizes = [1, 100, full, 2 * full, full + 1, 3000, 64 * 1024, 40 * full];
        let rounds = 400;
        let listener = server.listen(0).unwrap();
        let echo = thread::spawn(move || {
            let mut s = listener.accept().unwrap();
            let mut buf = vec![0u8; 64 * 1024 * 2];
            for r in 0..rounds {
                let n = sizes[r % sizes.len()];
                s.read_exact(&mut buf[..n]).unwrap();
                s.write_all(&buf[..n]).unwrap();
            }
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).unwrap();
            assert!(rest.is_empty());
        });
        let mut s = client.connect(to).unwrap();
        let mut back = vec![0u8; 64 * 1024 * 2];
        for r in 0..rounds {
            let n = sizes[r % sizes.len()];
            let msg = data(n, r as u64 + 7);
            s.write_all(&msg).unwrap();
            s.read_exact(&mut back[..n]).unwrap();
            assert!(back[..n] == msg[..], "round {r}: echo differs");
        }
        s.close().unwrap();
        echo.join().unwrap();
    });
}

#[test]
fn both_directions_at_once_complete() {
    must_finish("bidirectional", || {
        let (client, server, to) = pair(32);
        let (up, down) = (data(8 << 20, 3), data(8 << 20, 4));
        let listener = server.listen(0).unwrap();
        let (up_len, down_tx) = (up.len(), down.clone());
        let far = thread::spawn(move || {
            let s = listener.accept().unwrap();
            duplex(s, down_tx, up_len)
        });
        let s = client.connect(to).unwrap();
        let got_down = duplex(s, up.clone(), down.len());
        let got_up = far.join().unwrap();
        assert!(got_down == down && got_up == up, "received bytes differ");
    });
}

/// Writes `out` while reading `expect` bytes over the same stream: non-blocking
/// calls while either direction moves, a blocking call (the thread parks) when
/// neither does.
fn duplex(mut s: pmdt::runtime::Stream, out: Vec<u8>, expect: usize) -> Vec<u8> {
    let mut got = Vec::with_capacity(expect);
    let mut sent = 0;
    let mut buf = vec![0u8; 16 * 1024];
    while sent < out.len() || got.len() < expect {
        let mut moved = false;
        if sent < out.len() {
            match s.try_write(&out[sent..(sent + 50_000).min(out.len())]) {
                Ok(n) => {
                    sent += n;
                    moved = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("write: {e}"),
            }
        }
        if got.len() < expect {
            match s.try_read(&mut buf) {
                Ok(0) => panic!("early end of stream"),
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    moved = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("read: {e}"),
            }
        }
        if !moved {
            // Park in a blocking call: reading when data is still due, else writing.
            if got.len() < expect {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "early end of stream");
                got.extend_from_slice(&buf[..n]);
            } else {
                let end = (sent + 50_000).min(out.len());
                sent += s.write(&out[sent..end]).unwrap();
            }
        }
    }
    s.close().unwrap();
    got
}

/// Writers short of packet memory park until the I/O loop frees some
/// (`memory_wait`): twelve flows' writers against a pool far smaller than
/// their buffers, readers starting late, no safety net. A writer the loop forgot to wake would hang
/// the test; the loop's statistics show the writers did wait for memory and
/// were woken for it, not let through by an idle timeout.
#[test]
fn writers_short_of_packet_memory_are_woken() {
    must_finish("writers short of memory", || {
        const FLOWS: usize = 12;
        const BYTES: usize = 4 << 20;
        let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
        // 768 buffers per end: each flow's ring (256 slots) and window would
        // hold more; the writers together exhaust the pool over and over.
        let (la, lb) = MemoryLink::pair_with_pool(a, b, 8192, 768);
        let build = |l: MemoryLink| {
            Runtime::builder()
                .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
                .ring_slots(256)
                .park_timeout(NO_SAFETY_NET)
                .start()
                .unwrap()
        };
        let (client, server) = (build(la), build(lb));
        let listener = server.listen(0).unwrap();
        let readers = thread::spawn(move || {
            let hs: Vec<_> = (0..FLOWS)
                .map(|_| {
                    let mut s = listener.accept().unwrap();
                    thread::spawn(move || {
                        // Readers start late: meanwhile the writers fill their
                        // rings, which together hold more than the pool.
                        thread::sleep(Duration::from_millis(200));
                        let mut got = Vec::new();
                        s.read_to_end(&mut got).unwrap();
                        got
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        let writers: Vec<_> = (0..FLOWS)
            .map(|i| {
                let mut s = client.connect(b).unwrap();
                thread::spawn(move || {
                    let payload = data(BYTES, 40 + i as u64);
                    for part in payload.chunks(64 * 1024) {
                        s.write_all(part).unwrap();
                    }
                    s.close().unwrap();
                    payload
                })
            })
            .collect();
        let mut sent: Vec<Vec<u8>> = writers.into_iter().map(|h| h.join().unwrap()).collect();
        let mut got = readers.join().unwrap();
        sent.sort();
        got.sort();
        assert_eq!(got.len(), FLOWS);
        assert!(got == sent, "received bytes differ");
        let stats = client.stats();
        let l = &stats.loops[0];
        assert!(l.memory_waits > 0, "no writer ever waited for memory");
        assert!(
            l.memory_wakes > 0,
            "the loop never woke a writer short of memory"
        );
    });
}

/// Accepting a connection shrinks every other connection's share of the send
/// memory: no parked thread gains anything by it, and none is woken. (Every
/// parked thread was woken on each accept: connecting 1000 pipeline flows took
/// 3.9-5.6 s where it now takes 0.5, session 78.) The readers here park with
/// nothing to read; the loop's statistics count the threads it woke while 64
/// more connections were accepted. Readers that had not parked yet would only
/// make the test weaker, never fail it.
#[test]
fn accepting_connections_does_not_wake_parked_readers() {
    must_finish("accepts", || {
        const PARKED: usize = 8;
        const MORE: usize = 64;
        let (client, server, to) = pair(64);
        let listener = server.listen(0).unwrap();
        let (reading, about_to_read) = mpsc::channel();
        let mut ours = Vec::new();
        let mut readers = Vec::new();
        for _ in 0..PARKED {
            ours.push(client.connect(to).unwrap());
            let mut s = listener.accept().unwrap();
            let reading = reading.clone();
            readers.push(thread::spawn(move || {
                reading.send(()).unwrap();
                let mut rest = Vec::new();
                s.read_to_end(&mut rest).unwrap();
                rest.len()
            }));
        }
        for _ in 0..PARKED {
            about_to_read.recv().unwrap();
        }
        // Time for the readers to park.
        thread::sleep(Duration::from_millis(200));
        let wakes = || server.stats().loops[0].thread_wakes;
        let before = wakes();
        let mut accepted = Vec::new();
        for _ in 0..MORE {
            ours.push(client.connect(to).unwrap());
            accepted.push(listener.accept().unwrap());
        }
        // The loop publishes its statistics every 100 ms: once they count
        // every connection, they count the wake-ups of the accepts too.
        while server.stats().loops[0].connections < PARKED + MORE {
            thread::sleep(Duration::from_millis(10));
        }
        let woken = wakes() - before;
        assert!(
            woken < PARKED as u64,
            "{MORE} accepts woke {woken} parked threads"
        );
        // The accepted ends go (a close waits for its peer's end), then their
        // peers finish: every reader wakes to the end of its stream.
        drop(accepted);
        for mut s in ours {
            s.close().unwrap();
        }
        for r in readers {
            assert_eq!(r.join().unwrap(), 0);
        }
    });
}
