//! In-place I/O through the runtime (memory links): data written straight into
//! packet memory (`reserve`/`submit`) and read where it arrived (`read_segment`,
//! `read_in_place`), alone and mixed with copying reads and writes. Every byte
//! is checked, and both packet pools are full again once the runtimes are gone.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::thread;

use pmdt::link::memory::MemoryLink;
use pmdt::link::{BufferPool, Link};
use pmdt::runtime::{Backend, Runtime, Stream};

mod common;
use common::data;

struct Pair {
    client: Runtime,
    server: Runtime,
    to: SocketAddr,
    pools: [BufferPool; 2],
}

fn pair(ring_slots: usize) -> Pair {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair_with_pool(a, b, 4096, 8192);
    let pools = [la.pool(), lb.pool()];
    let build = |l: MemoryLink| {
        Runtime::builder()
            .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
            .ring_slots(ring_slots)
            .start()
            .unwrap()
    };
    Pair {
        client: build(la),
        server: build(lb),
        to: b,
        pools,
    }
}

impl Pair {
    /// Shuts both runtimes down and checks that every packet buffer is back.
    fn finish(self) {
        self.client.shutdown().unwrap();
        self.server.shutdown().unwrap();
        for p in &self.pools {
            assert_eq!(p.available(), p.capacity(), "packet buffers not returned");
        }
    }
}

/// Writes `payload` in place: each buffer filled with a different amount (one
/// byte up to its capacity), through `spare`/`advance` or `io::Write`.
fn send_in_place(s: &mut Stream, payload: &[u8]) {
    let mut at = 0;
    let mut k = 0usize;
    while at < payload.len() {
        let mut buf = s.reserve().unwrap();
        let cap = buf.capacity();
        assert!(cap > 0 && buf.is_empty());
        let want = (1 + k * 397 % cap).min(payload.len() - at);
        if k.is_multiple_of(2) {
            buf.spare()[..want].copy_from_slice(&payload[at..at + want]);
            buf.advance(want);
        } else {
            buf.write_all(&payload[at..at + want]).unwrap();
        }
        assert_eq!(buf.len(), want);
        s.submit(buf).unwrap();
        at += want;
        k += 1;
    }
}

/// Reads to the end of the stream in place.
fn receive_in_place(s: &mut Stream) -> Vec<u8> {
    let mut got = Vec::new();
    while let Some(seg) = s.read_segment().unwrap() {
        assert!(!seg.is_empty());
        got.extend_from_slice(&seg);
    }
    got
}

#[test]
fn in_place_both_ends_delivers_every_byte_and_returns_every_buffer() {
    let p = pair(256);
    let payload = data(6 << 20, 1);
    let listener = p.server.listen(0).unwrap();
    let reader = thread::spawn(move || receive_in_place(&mut listener.accept().unwrap()));
    let mut s = p.client.connect(p.to).unwrap();
    assert!(!s.sums_payloads(), "memory links sum no payload");
    send_in_place(&mut s, &payload);
    s.close().unwrap();
    let got = reader.join().unwrap();
    assert_eq!(got.len(), payload.len());
    assert!(got == payload, "received bytes differ");
    drop(s);
    p.finish();
}

#[test]
fn in_place_and_copying_calls_mix_on_both_ends() {
    let p = pair(256);
    let payload = data(3 << 20, 2);
    let listener = p.server.listen(0).unwrap();
    let reader = thread::spawn(move || {
        let mut s = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut small = [0u8; 333];
        let mut turn = 0u32;
        loop {
            turn += 1;
            if turn.is_multiple_of(3) {
                // A copying read leaves the rest of a segment for the next call.
                match s.read(&mut small).unwrap() {
                    0 => break,
                    n => got.extend_from_slice(&small[..n]),
                }
            } else {
                match s.read_segment().unwrap() {
                    None => break,
                    Some(seg) => got.extend_from_slice(&seg),
                }
            }
        }
        got
    });
    let mut s = p.client.connect(p.to).unwrap();
    for (i, part) in payload.chunks(50_001).enumerate() {
        if i % 2 == 0 {
            s.write_all(part).unwrap();
        } else {
            send_in_place(&mut s, part);
        }
    }
    s.close().unwrap();
    let got = reader.join().unwrap();
    assert!(got == payload, "received bytes differ");
    drop(s);
    p.finish();
}

/// `read_in_place` visits whole payloads in order, within its byte budget
/// (more than one payload only while they fit), mixed with copying reads that
/// leave part of a payload for it; every byte arrives once and every buffer
/// returns to its pool.
#[test]
fn batched_in_place_reads_mix_with_copying_reads() {
    let p = pair(256);
    let payload = data(3 << 20, 3);
    let listener = p.server.listen(0).unwrap();
    let reader = thread::spawn(move || {
        let mut s = listener.accept().unwrap();
        // Let payloads queue up, so the first calls find several.
        thread::sleep(std::time::Duration::from_millis(200));
        let mut got = Vec::new();
        let mut small = [0u8; 333];
        let mut turn = 0usize;
        let mut batches_of_many = 0;
        loop {
            turn += 1;
            if turn.is_multiple_of(4) {
                match s.read(&mut small).unwrap() {
                    0 => break,
                    n => got.extend_from_slice(&small[..n]),
                }
                continue;
            }
            let max = [1, 3000, 64 << 10][turn % 3];
            let mut visits = 0;
            let n = s
                .read_in_place(max, |d| {
                    assert!(!d.is_empty());
                    visits += 1;
                    got.extend_from_slice(d);
                })
                .unwrap();
            if n == 0 {
                assert_eq!(visits, 0, "nothing visited at the end of the stream");
                break;
            }
            assert!(visits >= 1);
            if visits > 1 {
                assert!(n <= max, "{n} bytes visited with a budget of {max}");
                batches_of_many += 1;
            }
        }
        (got, batches_of_many)
    });
    let mut s = p.client.connect(p.to).unwrap();
    for (i, part) in payload.chunks(40_009).enumerate() {
        if i % 2 == 0 {
            s.write_all(part).unwrap();
        } else {
            send_in_place(&mut s, part);
        }
    }
    s.close().unwrap();
    let (got, batches_of_many) = reader.join().unwrap();
    assert!(got == payload, "received bytes differ");
    assert!(batches_of_many > 0, "no call visited more than one payload");
    drop(s);
    p.finish();
}

#[test]
fn try_submit_hands_the_buffer_back_when_the_ring_is_full() {
    let p = pair(4);
    let listener = p.server.listen(0).unwrap();
    let mut s = p.client.connect(p.to).unwrap();
    let mut far = listener.accept().unwrap();
    // Nobody reads yet: fill the 4-slot ring (the loop may take some meanwhile)
    // until a submit is refused; the refused buffer comes back intact.
    let mut sent = Vec::new();
    let mut k = 0u64;
    let back = loop {
        let mut buf = s.try_reserve().unwrap();
        assert_eq!(buf.put(&data(700, k)), 700);
        match s.try_submit(buf) {
            Ok(()) => sent.extend_from_slice(&data(700, k)),
            Err(e) => {
                assert_eq!(e.error().kind(), std::io::ErrorKind::WouldBlock);
                break e.into_buf();
            }
        }
        k += 1;
        assert!(sent.len() < 64 << 20, "the ring never filled");
    };
    assert_eq!(back.len(), 700);
    let reader = thread::spawn(move || {
        let mut got = Vec::new();
        far.read_to_end(&mut got).unwrap();
        got
    });
    s.submit(back).unwrap();
    sent.extend_from_slice(&data(700, k));
    // After finishing, no more memory is handed out.
    s.finish();
    let late = s.reserve().expect_err("reserve after finish");
    assert_eq!(late.kind(), std::io::ErrorKind::BrokenPipe);
    s.close().unwrap();
    let got = reader.join().unwrap();
    assert!(got == sent, "received bytes differ");
    drop(s);
    p.finish();
}

#[test]
fn segments_held_past_the_stream_and_runtime_still_return_their_memory() {
    let p = pair(256);
    let payload = data(200_000, 3);
    let listener = p.server.listen(0).unwrap();
    let reader = thread::spawn(move || {
        let mut far = listener.accept().unwrap();
        let mut held = Vec::new();
        while let Some(seg) = far.read_segment().unwrap() {
            held.push(seg);
        }
        held
    });
    let mut s = p.client.connect(p.to).unwrap();
    s.write_all(&payload).unwrap();
    s.close().unwrap();
    let held = reader.join().unwrap();
    let got: Vec<u8> = held.iter().flat_map(|s| s.iter().copied()).collect();
    assert!(got == payload, "received bytes differ");
    let pools = p.pools.clone();
    drop(s);
    p.client.shutdown().unwrap();
    p.server.shutdown().unwrap();
    // (A memory link receives into the receiving end's pool: the pinned pool
    // is the server's.)
    assert!(
        pools.iter().any(|p| p.available() < p.capacity()),
        "held segments pin packet memory"
    );
    drop(held);
    for p in &pools {
        assert_eq!(p.available(), p.capacity(), "packet buffers not returned");
    }
}
