//! Helpers shared by the runtime tests: reproducible data and a verified transfer.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::thread;

use pmdt::runtime::Runtime;

/// `n` reproducible pseudo-random bytes.
pub fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Sends each payload over its own connection from `client` to `server` (writes
/// of `write_size` bytes: uneven sizes exercise partial packets) and checks every
/// byte on the far side.
pub fn transfer(
    client: &Runtime,
    server: &Runtime,
    to: SocketAddr,
    payloads: Vec<Vec<u8>>,
    write_size: usize,
) {
    let listener = server.listen(0).unwrap();
    let n = payloads.len();
    let rx = thread::spawn(move || {
        let readers: Vec<_> = (0..n)
            .map(|_| {
                let mut s = listener.accept().unwrap();
                thread::spawn(move || {
                    let mut v = Vec::new();
                    s.read_to_end(&mut v).unwrap();
                    v
                })
            })
            .collect();
        let mut all: Vec<Vec<u8>> = readers.into_iter().map(|h| h.join().unwrap()).collect();
        all.sort();
        all
    });
    let senders: Vec<_> = payloads
        .iter()
        .cloned()
        .map(|p| {
            let mut s = client.connect(to).unwrap();
            thread::spawn(move || {
                for part in p.chunks(write_size) {
                    s.write_all(part).unwrap();
                }
                s.close().unwrap();
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    let mut want = payloads;
    want.sort();
    let got = rx.join().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.len(), w.len());
        assert!(g == w, "received bytes differ");
    }
}
