//! Cost of the protocol core per packet, no I/O: header encode/decode, and the send
//! and receive paths through the state machine at zero loss, with 1432-byte payloads
//! (two payload copies per side with the default byte-ring storage) and 64-byte
//! payloads (the protocol's own cost). Run: `cargo bench -p pmdt-proto --bench core_path`.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pmdt_proto::wire::{self, Ack, AckRange, Body, Header, Packet};
use pmdt_proto::{CongestionKind, Endpoint, TransportConfig};

#[path = "support/flight.rs"]
mod support;

fn wire_benches(c: &mut Criterion) {
    let h = Header {
        dst_cid: 0x1122_3344_5566_7788,
        pn: 123_456_789.into(),
        timestamp: 1,
        timestamp_echo: 2,
    };
    let payload = vec![7u8; 1432];
    let mut buf = vec![0u8; 2048];
    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    g.bench_function("encode_data_header", |b| {
        b.iter(|| {
            wire::encode_data_header(black_box(&mut buf), black_box(&h), 1 << 30, 1432, false)
        })
    });
    let n = wire::encode(
        &mut buf,
        &Packet {
            header: h,
            body: Body::Data {
                offset: 1 << 30,
                fin: false,
                payload: &payload,
            },
        },
    )
    .unwrap();
    let data = buf[..n].to_vec();
    g.bench_function("decode_data_1432B", |b| {
        b.iter(|| wire::decode(black_box(&data)).unwrap())
    });
    let ack = Ack {
        ranges: (0..4)
            .map(|i| AckRange {
                start: 1000 - i * 10 - 5,
                end: 1000 - i * 10,
            })
            .collect(),
        ack_delay_us: 10,
        data_cumulative: 1 << 20,
        max_data: 1 << 24,
    };
    let n = wire::encode(
        &mut buf,
        &Packet {
            header: h,
            body: Body::Ack(ack.clone()),
        },
    )
    .unwrap();
    let ackb = buf[..n].to_vec();
    g.bench_function("encode_ack_4_ranges", |b| {
        b.iter(|| {
            wire::encode(
                black_box(&mut buf),
                &Packet {
                    header: h,
                    body: Body::Ack(ack.clone()),
                },
            )
            .unwrap()
        })
    });
    g.bench_function("decode_ack_4_ranges", |b| {
        b.iter(|| wire::decode(black_box(&ackb)).unwrap())
    });
    g.finish();
}

struct Pair {
    now: Instant,
    client: Endpoint,
    server: Endpoint,
    ca: SocketAddr,
    sa: SocketAddr,
    h: pmdt_proto::ConnectionHandle,
    sh: pmdt_proto::ConnectionHandle,
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    app: Vec<u8>,
    sink: Vec<u8>,
}

const BATCH: usize = 32;

impl Pair {
    fn new(max_datagram: u16) -> Self {
        let t = TransportConfig::default()
            .with_max_datagram(max_datagram)
            .with_congestion(CongestionKind::Fixed {
                window_packets: 4096,
            })
            .with_window_packets(4096)
            .with_pacing(false)
            .with_ack_every(8)
            .with_keepalive(None)
            .with_idle_timeout(Duration::from_secs(3600));
        let support::Pair {
            now,
            client,
            server,
            ca,
            sa,
            ch: h,
            sh,
        } = support::connected_with(t);
        Self {
            now,
            client,
            server,
            ca,
            sa,
            h,
            sh,
            bufs: vec![vec![0u8; 2048]; BATCH],
            lens: vec![0; BATCH],
            app: vec![0x5a; 16 * 1024],
            sink: vec![0; 64 * 1024],
        }
    }

    /// Moves one batch of data packets; returns (sender time, receiver time, packets).
    fn batch(&mut self) -> (Duration, Duration, usize) {
        self.now += Duration::from_micros(10);
        let now = self.now;
        let t0 = Instant::now();
        // As much as the connection takes (its unsent bound refills as it sends).
        while self.client.connection(self.h).unwrap().send_capacity() > 16 * 1024
            && self
                .client
                .connection_mut(self.h)
                .unwrap()
                .write(&self.app)
                .is_ok()
        {}
        let mut n = 0;
        while n < BATCH {
            match self.client.poll_transmit(now, &mut self.bufs[n]) {
                Some(t) => {
                    self.lens[n] = t.transmit().len;
                    n += 1;
                }
                None => break,
            }
        }
        let t1 = Instant::now();
        for i in 0..n {
            self.server
                .handle(now, self.ca, &self.bufs[i][..self.lens[i]]);
        }
        while self
            .server
            .connection_mut(self.sh)
            .unwrap()
            .read(&mut self.sink)
            > 0
        {}
        let mut acks = Vec::new();
        let mut b = [0u8; 512];
        while let Some(t) = self.server.poll_transmit(now, &mut b) {
            acks.push(b[..t.transmit().len].to_vec());
        }
        let t2 = Instant::now();
        for a in &acks {
            self.client.handle(now, self.sa, a);
        }
        self.client.handle_timeout(now);
        self.server.handle_timeout(now);
        let t3 = Instant::now();
        ((t1 - t0) + (t3 - t2), t2 - t1, n)
    }
}

fn path_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("core_path");
    g.throughput(Throughput::Elements(1));
    // 1432 B payloads (copies dominate) and 64 B payloads (the state machine itself).
    for (side, dgram) in [
        ("send", 1472u16),
        ("receive", 1472),
        ("send", 104),
        ("receive", 104),
    ] {
        let payload = dgram as usize - wire::DATA_HEADER_LEN;
        g.bench_function(format!("{side}_per_packet_{payload}B"), |b| {
            let mut p = Pair::new(dgram);
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    let (s, r, n) = p.batch();
                    spent += if side == "send" { s } else { r };
                    done += n as u64;
                }
                spent * iters as u32 / done.max(1) as u32
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3));
    targets = wire_benches, path_benches
}
criterion_main!(benches);
