//! Run-to-completion mode (`IoCore::Caller`): no I/O thread; the application's
//! own blocking stream calls poll the loop whenever they would wait. Transfers
//! over memory links check every byte with each side driven by the one thread
//! that uses it, then with several threads sharing one runtime's loop, then a
//! request/response exchange; every packet buffer is back at the end. A
//! non-blocking call polls the loop without pausing in it.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::thread;

use pmdt::link::memory::MemoryLink;
use pmdt::link::{BufferPool, Link};
use pmdt::runtime::{Backend, IoCore, Runtime};

mod common;
use common::data;

/// The client's and server's links and their packet pools.
fn links() -> (MemoryLink, MemoryLink, SocketAddr, [BufferPool; 2]) {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair_with_pool(a, b, 4096, 8192);
    let pools = [la.pool(), lb.pool()];
    (la, lb, b, pools)
}

/// A run-to-completion runtime over `l` (built on the thread that will use it:
/// a runtime stays on its thread; its streams may move).
fn caller(l: MemoryLink) -> Runtime {
    Runtime::builder()
        .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
        .io_core(IoCore::Caller { cpu: None })
        .start()
        .unwrap()
}

fn assert_pools_full(pools: &[BufferPool]) {
    for p in pools {
        assert_eq!(p.available(), p.capacity(), "packet buffers not returned");
    }
}

#[test]
fn each_side_driven_by_its_one_thread_moves_every_byte() {
    let (la, lb, to, pools) = links();
    let payload = data(8 << 20, 1);
    let want = payload.clone();
    // The server's only thread accepts, reads and answers: its calls run its loop.
    let far = thread::spawn(move || {
        let server = caller(lb);
        let listener = server.listen(0).unwrap();
        let mut s = listener.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        s.write_all(b"thanks").unwrap();
        s.close().unwrap();
        drop(s);
        server.shutdown().unwrap();
        got
    });
    let client = caller(la);
    let mut s = client.connect(to).unwrap();
    for part in payload.chunks(100_003) {
        s.write_all(part).unwrap();
    }
    s.finish();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    assert_eq!(answer, b"thanks");
    s.close().unwrap();
    let got = far.join().unwrap();
    assert!(got == want, "received bytes differ");
    drop(s);
    client.shutdown().unwrap();
    assert_pools_full(&pools);
}

#[test]
fn threads_sharing_a_loop_take_turns_driving_it() {
    let (la, lb, to, pools) = links();
    const FLOWS: usize = 4;
    let readers = thread::spawn(move || {
        let server = caller(lb);
        let listener = server.listen(0).unwrap();
        // Each reader thread's calls drive the one loop, in turns.
        let hs: Vec<_> = (0..FLOWS)
            .map(|_| {
                let mut s = listener.accept().unwrap();
                thread::spawn(move || {
                    let mut v = Vec::new();
                    s.read_to_end(&mut v).unwrap();
                    v
                })
            })
            .collect();
        let mut all: Vec<Vec<u8>> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        drop(listener);
        server.shutdown().unwrap();
        all.sort();
        all
    });
    let client = caller(la);
    let mut want: Vec<Vec<u8>> = (0..FLOWS)
        .map(|i| data(1_000_000 + i, 10 + i as u64))
        .collect();
    let writers: Vec<_> = want
        .iter()
        .cloned()
        .map(|d| {
            let mut s = client.connect(to).unwrap();
            thread::spawn(move || {
                for part in d.chunks(70_001) {
                    s.write_all(part).unwrap();
                }
                s.close().unwrap();
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    want.sort();
    assert!(readers.join().unwrap() == want, "received bytes differ");
    client.shutdown().unwrap();
    assert_pools_full(&pools);
}

#[test]
fn small_requests_and_responses_complete() {
    let (la, lb, to, pools) = links();
    let far = thread::spawn(move || {
        let server = caller(lb);
        let listener = server.listen(0).unwrap();
        let mut s = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        loop {
            match s.read(&mut buf).unwrap() {
                0 => break,
                n => s.write_all(&buf[..n]).unwrap(),
            }
        }
        s.close().unwrap();
        drop(s);
        server.shutdown().unwrap();
    });
    let client = caller(la);
    let mut s = client.connect(to).unwrap();
    let mut back = [0u8; 64];
    for i in 0..2000u32 {
        let msg = i.to_be_bytes();
        s.write_all(&msg).unwrap();
        s.read_exact(&mut back[..4]).unwrap();
        assert_eq!(back[..4], msg);
    }
    s.close().unwrap();
    far.join().unwrap();
    drop(s);
    client.shutdown().unwrap();
    assert_pools_full(&pools);
}

#[test]
fn caller_mode_drives_one_link_only() {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 64);
    let err = Runtime::builder()
        .backend(Backend::Links(vec![
            Box::new(la) as Box<dyn Link>,
            Box::new(lb) as Box<dyn Link>,
        ]))
        .io_core(IoCore::Caller { cpu: None })
        .start()
        .err()
        .expect("two links refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("one link"), "{err}");
}

/// A listener kept past its runtime's shutdown holds no part of the loop (it
/// kept the loop, its link and so the EAL alive: pmdt-recv warned at exit that
/// the EAL still had holders); accepting on it then fails at once.
#[test]
fn a_listener_outliving_its_runtime_holds_nothing() {
    let (_la, lb, _to, pools) = links();
    let server = caller(lb);
    let listener = server.listen(0).unwrap();
    server.shutdown().unwrap();
    let e = listener.accept().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected, "{e}");
    let e = listener
        .accept_timeout(std::time::Duration::from_secs(60))
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected, "{e}");
    drop(listener);
    assert_pools_full(&pools[1..]);
}

/// One thread serving many streams on each side, as an application with a
/// select loop does: each stream is offered what `write_room` says it takes
/// (and takes some of it at least), reads are non-blocking, and the thread waits
/// through the runtime's `Poller` when no stream could move. Every byte
/// arrives; a finished stream's room is an error; every buffer is back.
#[test]
fn one_thread_serves_many_streams_through_write_room_and_the_poller() {
    const STREAMS: usize = 8;
    let (la, lb, to, pools) = links();
    let payloads: Vec<Vec<u8>> = (0..STREAMS)
        .map(|k| data((1 << 20) + 977 * k, k as u64 + 7))
        .collect();
    let want = payloads.clone();
    let far = thread::spawn(move || {
        let server = caller(lb);
        let listener = server.listen(0).unwrap();
        let mut streams: Vec<_> = (0..STREAMS).map(|_| listener.accept().unwrap()).collect();
        let poller = server.poller();
        let mut got = vec![Vec::new(); STREAMS];
        let mut ended = [false; STREAMS];
        let mut buf = vec![0u8; 64 * 1024];
        while ended.iter().any(|e| !e) {
            let mut moved = false;
            for (k, s) in streams.iter_mut().enumerate() {
                if ended[k] {
                    continue;
                }
                match s.try_read(&mut buf) {
                    Ok(0) => {
                        ended[k] = true;
                        moved = true;
                    }
                    Ok(n) => {
                        got[k].extend_from_slice(&buf[..n]);
                        moved = true;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("stream {k}: {e}"),
                }
            }
            if !moved {
                poller.wait();
            }
        }
        for s in &mut streams {
            s.close().unwrap();
        }
        drop(streams);
        server.shutdown().unwrap();
        got
    });
    let client = caller(la);
    let mut streams: Vec<_> = (0..STREAMS).map(|_| client.connect(to).unwrap()).collect();
    let poller = client.poller();
    let mut sent = [0usize; STREAMS];
    while sent.iter().zip(&payloads).any(|(s, p)| *s < p.len()) {
        let mut moved = false;
        for (k, s) in streams.iter_mut().enumerate() {
            let left = &payloads[k][sent[k]..];
            if left.is_empty() {
                continue;
            }
            let room = s.write_room().unwrap();
            if room == 0 {
                continue;
            }
            let offer = room.min(left.len());
            // The loop this call runs may take buffers first: at most the
            // room, never nothing.
            let n = s.try_write(&left[..offer]).unwrap();
            assert!(n > 0 && n <= offer, "stream {k}: room {room}, took {n}");
            sent[k] += n;
            moved = true;
        }
        if !moved {
            poller.wait();
        }
    }
    // Every stream's end of stream before any close waits on its peer (the
    // server closes once it read them all).
    for s in &mut streams {
        s.finish();
        let e = s.write_room().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    for s in &mut streams {
        s.close().unwrap();
    }
    assert_eq!(far.join().unwrap(), want);
    drop(streams);
    client.shutdown().unwrap();
    assert_pools_full(&pools);
}

/// A thread serving many streams reads each in turn and waits through the
/// poller once none moved: the loop polls that each non-blocking call makes
/// must not pause, even when the loop is quiet (pausing, a thread serving
/// 1000 connections spent a fifth of its time in the scheduler). Reads of a
/// stream nothing arrives on poll the loop each time and it never sleeps.
#[test]
fn non_blocking_reads_of_a_quiet_stream_poll_the_loop_without_pausing() {
    const READS: u64 = 20_000;
    let (la, lb, to, pools) = links();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let far = thread::spawn(move || {
        let server = caller(lb);
        let listener = server.listen(0).unwrap();
        let mut s = listener.accept().unwrap();
        // Sends nothing until told.
        done_rx.recv().unwrap();
        s.close().unwrap();
        drop(s);
        server.shutdown().unwrap();
    });
    let client = caller(la);
    let mut s = client.connect(to).unwrap();
    // Statistics are published every 100 ms at most: look after longer.
    let settle = std::time::Duration::from_millis(150);
    thread::sleep(settle);
    let before = client.stats().loops[0].clone();
    let mut buf = [0u8; 64];
    for _ in 0..READS {
        let e = s.try_read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    }
    thread::sleep(settle);
    let after = client.stats().loops[0].clone();
    let polls = after.iterations - before.iterations;
    let sleeps = after.idle_sleeps - before.idle_sleeps;
    assert!(polls >= READS, "{polls} loop polls for {READS} reads");
    // The two `stats` calls poll the loop too, and may nap once each.
    assert!(
        sleeps <= 2,
        "the loop slept {sleeps} times in {READS} reads"
    );
    done_tx.send(()).unwrap();
    s.close().unwrap();
    far.join().unwrap();
    drop(s);
    client.shutdown().unwrap();
    assert_pools_full(&pools);
}
