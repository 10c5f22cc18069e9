//! What the application threads spend per byte through a pmdt stream, copying
//! (`Write::write_all` from the application's buffer, `Read::read` into one) versus
//! in place (`Stream::reserve`/`submit`, `Stream::read_segment` or
//! `Stream::read_in_place`): two runtimes in
//! this process over a memif pair, one connection. The sender produces each byte
//! (a cheap fill) and the receiver consumes each (a sum) in both modes, so the
//! difference is the copies the in-place calls avoid. The figure is the CPU time
//! of each application thread (CLOCK_THREAD_CPUTIME_ID) per 4 MiB, not wall
//! time: the I/O loops and other processes on the machine are left out.
//! Run: `cargo bench --bench stream_api` (root). Without DPDK it says why and skips.

mod support;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::mpsc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use pmdt::link::dpdk_port::DpdkLinkConfig;
use pmdt::runtime::{Backend, Runtime, Stream};

/// Bytes per measured iteration.
const CHUNK: u64 = 4 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Copy,
    /// `reserve`/`submit`, and `read_segment` (a guard per payload).
    InPlace,
    /// `reserve`/`submit`, and `read_in_place` (a batch of payloads per call).
    InPlaceBatch,
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out-pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The sender's work per buffer: produce the bytes.
#[inline]
fn produce(out: &mut [u8], seed: u8) {
    out.fill(seed);
}

/// The receiver's work per piece: look at every byte (a sum, vectorized: cheap
/// enough that the copies stay visible).
#[inline]
fn consume(acc: &mut u64, data: &[u8]) {
    *acc = acc.wrapping_add(data.iter().map(|&b| b as u64).sum::<u64>());
}

fn send(s: &mut Stream, mode: Mode, bytes: u64, buf: &mut [u8]) {
    let mut left = bytes;
    let mut seed = 0u8;
    while left > 0 {
        seed = seed.wrapping_add(1);
        match mode {
            Mode::Copy => {
                let n = (left as usize).min(buf.len());
                produce(&mut buf[..n], seed);
                s.write_all(&buf[..n]).expect("write");
                left -= n as u64;
            }
            Mode::InPlace | Mode::InPlaceBatch => {
                let mut b = s.reserve().expect("reserve");
                let n = (left as usize).min(b.remaining());
                produce(&mut b.spare()[..n], seed);
                b.advance(n);
                s.submit(b).expect("submit");
                left -= n as u64;
            }
        }
    }
}

fn receive(s: &mut Stream, mode: Mode, bytes: u64, buf: &mut [u8]) -> u64 {
    let (mut got, mut acc) = (0u64, 0u64);
    while got < bytes {
        match mode {
            Mode::Copy => {
                let want = ((bytes - got) as usize).min(buf.len());
                let n = s.read(&mut buf[..want]).expect("read");
                assert!(n > 0, "early end of stream");
                consume(&mut acc, &buf[..n]);
                got += n as u64;
            }
            Mode::InPlace => {
                let seg = s.read_segment().expect("read").expect("early end");
                consume(&mut acc, &seg);
                got += seg.len() as u64;
            }
            Mode::InPlaceBatch => {
                let max = ((bytes - got) as usize).min(buf.len());
                let n = s
                    .read_in_place(max, |d| consume(&mut acc, d))
                    .expect("read");
                assert!(n > 0, "early end of stream");
                got += n as u64;
            }
        }
    }
    assert_eq!(got, bytes, "a segment crossed the measured chunk");
    acc
}

fn runtime(eal: &dpdk::Eal, port: &str, ip: Ipv4Addr) -> Runtime {
    Runtime::builder()
        .backend(Backend::Dpdk {
            eal: eal.clone(),
            cfg: DpdkLinkConfig {
                port: port.into(),
                ip,
                udp_port: 9000,
                pool_size: 32767,
                ..Default::default()
            },
        })
        .start()
        .expect("start a pmdt runtime on memif")
}

fn main() {
    let pid = std::process::id();
    let eal = support::eal(&[
        &format!("net_memif0,role=server,socket=/tmp/pmdt-bench-api-{pid}.sock"),
        &format!("net_memif1,role=client,socket=/tmp/pmdt-bench-api-{pid}.sock"),
    ]);
    let a = runtime(&eal, "net_memif0", Ipv4Addr::new(10, 77, 0, 1));
    let b = runtime(&eal, "net_memif1", Ipv4Addr::new(10, 77, 0, 2));
    let to = SocketAddr::from((Ipv4Addr::new(10, 77, 0, 2), 9000));
    let listener = b.listen(0).expect("listen");
    // The receiving application thread: told how much to read and how, it answers
    // with its CPU time for that.
    let (order_tx, order_rx) = mpsc::channel::<(Mode, u64)>();
    let (cpu_tx, cpu_rx) = mpsc::channel::<Duration>();
    let reader = std::thread::spawn(move || {
        let mut s = listener.accept().expect("accept");
        let mut buf = vec![0u8; 256 * 1024];
        for (mode, bytes) in order_rx {
            let t0 = thread_cpu();
            std::hint::black_box(receive(&mut s, mode, bytes, &mut buf));
            cpu_tx.send(thread_cpu() - t0).unwrap();
        }
        let _ = s.close();
    });
    let mut s = a.connect(to).expect("connect over memif");
    let mut buf = vec![0u8; 256 * 1024];
    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut g = c.benchmark_group("stream_api_app_cpu");
    g.throughput(Throughput::Bytes(CHUNK));
    // Each mode on both ends; each end's CPU time reported on its own.
    for mode in [Mode::Copy, Mode::InPlace, Mode::InPlaceBatch] {
        for side in ["sender", "receiver"] {
            g.bench_function(format!("{side}/{mode:?}"), |bch| {
                bch.iter_custom(|iters| {
                    let bytes = iters * CHUNK;
                    order_tx.send((mode, bytes)).unwrap();
                    let t0 = thread_cpu();
                    send(&mut s, mode, bytes, &mut buf);
                    let sender = thread_cpu() - t0;
                    let receiver = cpu_rx.recv().expect("the reader answers");
                    if side == "sender" {
                        sender
                    } else {
                        receiver
                    }
                })
            });
        }
    }
    g.finish();
    drop(order_tx);
    s.close().expect("close");
    reader.join().expect("reader thread");
    c.final_summary();
    a.shutdown().expect("shutdown a");
    b.shutdown().expect("shutdown b");
}
