//! Stateful fuzzing of two connected endpoints (`pmdt_proto::pair::Pair`): the
//! input is a sequence of operations on the path between them and on their
//! connections: deliver, drop, duplicate, reorder, mutate or truncate a datagram
//! in flight, inject valid-ish packets (real connection ids, packet numbers near
//! the ones in use, acks of arbitrary ranges, data, finish, close, reset,
//! handshake packets) or raw bytes, let time pass and fire timers, write, read,
//! finish, close and reset on either side.
//!
//! Checked after every operation:
//! - nothing panics (acks of numbers never sent, data beyond credit, forged ends
//!   of stream and every other mistake are refused, not crashed on);
//! - what each side reads is a prefix of what the other wrote: every stream byte
//!   is a pure function of its offset, and data a mutation or injection puts on
//!   the wire carries the right bytes for the offset it claims (the protocol is
//!   not authenticated: forged contents would be accepted by design, see
//!   docs/PROTOCOL.md, and are not what this checks), so a byte read at the
//!   wrong place shows a reassembly bug;
//! - memory stays bounded: the bytes allocated and not freed stay below a limit
//!   far above what two connections with small buffers need.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use pmdt_proto::pair::{Direction, Pair, Verdict};
use pmdt_proto::wire::{self, Ack, AckRange, AckRanges, Body, HandshakeParams, Header, Packet};
use pmdt_proto::TransportConfig;

/// Bytes allocated and not yet freed (the whole process).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Most live bytes allowed at any check: two endpoints with 16 KiB buffers (they
/// may grow to 64 KiB) need well under a MiB; the fuzzer's own state is small.
const LIVE_LIMIT: usize = 256 << 20;

struct Counting;

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: `p` came from this allocator with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A packet body to inject, with fields the fuzzer chooses.
#[derive(Arbitrary, Debug)]
enum Forged {
    Data {
        offset: u32,
        len: u16,
        fin: bool,
    },
    Ack {
        ranges: Vec<(u16, u8)>,
        cumulative: u32,
        max_data: u32,
        delay: u16,
    },
    Keepalive,
    Close {
        code: u8,
    },
    Reset {
        code: u8,
    },
    Init {
        cookie: Vec<u8>,
        max_data: u32,
        max_datagram: u16,
    },
    Accept {
        max_data: u32,
        max_datagram: u16,
        idle_ms: u16,
    },
    Retry {
        cookie: Vec<u8>,
    },
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// Virtual time passes (up to ~65 ms), then timers fire.
    Advance(u16),
    /// Time passes (up to ~16 s, past idle timeouts).
    Sleep(u8),
    Deliver {
        to_server: bool,
        index: u8,
    },
    Drop {
        to_server: bool,
        index: u8,
    },
    Duplicate {
        to_server: bool,
        index: u8,
    },
    Mutate {
        to_server: bool,
        index: u8,
        at: u16,
        xor: u8,
    },
    Truncate {
        to_server: bool,
        index: u8,
        len: u16,
    },
    Inject {
        to_server: bool,
        pn_delta: i8,
        body: Forged,
    },
    Raw {
        to_server: bool,
        bytes: Vec<u8>,
    },
    /// Delivers everything in flight, in order.
    Flush,
    Write {
        server: bool,
        len: u16,
    },
    Read {
        server: bool,
    },
    Finish {
        server: bool,
    },
    Close {
        server: bool,
    },
    Reset {
        server: bool,
        code: u8,
    },
}

/// Operations run per input (the rest of a longer input is ignored).
const MAX_OPS: usize = 256;
/// Most bytes one write offers.
const MAX_WRITE: usize = 4096;
/// Most bytes one side can write in a run: every operation a full write.
const MAX_STREAM: usize = MAX_OPS * MAX_WRITE;

/// Byte `i` of the stream one side writes.
fn stream_byte(from_server: bool, i: u64) -> u8 {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (from_server as u64) << 63;
    (x >> 56) as u8 ^ (i as u8)
}

/// Bytes `offset..offset + len` of the stream one side writes: both streams are
/// computed once for every offset a run can reach, so writing, checking a read
/// and rewriting a payload are slice copies and comparisons, not a loop over
/// bytes (with the fuzzer's per-iteration coverage counter, those loops took a
/// quarter of the time, half on inputs that move much data).
fn stream(from_server: bool, offset: u64, len: usize) -> &'static [u8] {
    static STREAMS: OnceLock<[Vec<u8>; 2]> = OnceLock::new();
    let s = STREAMS.get_or_init(|| {
        [false, true].map(|srv| {
            (0..MAX_STREAM as u64)
                .map(|i| stream_byte(srv, i))
                .collect()
        })
    });
    let start = offset as usize;
    &s[from_server as usize][start..start + len]
}

/// What the path holds and what each side wrote and read.
struct World {
    p: Pair,
    queue: Arc<Mutex<[VecDeque<Vec<u8>>; 2]>>,
    written: [u64; 2],
    read: [u64; 2],
    /// Largest packet number seen going each way (for valid-ish injections).
    largest_pn: [u64; 2],
}

fn dir_index(to_server: bool) -> usize {
    to_server as usize
}

impl World {
    fn new() -> Option<Self> {
        let cfg = TransportConfig::default()
            .with_send_buffer(16 * 1024)
            .with_recv_buffer(16 * 1024)
            .with_max_window_bytes(64 * 1024)
            .with_window_packets(64)
            .with_initial_rtt(Duration::from_millis(5))
            .with_idle_timeout(Duration::from_secs(4))
            .with_keepalive(Some(Duration::from_millis(500)));
        let mut p = Pair::new(cfg.clone(), cfg);
        p.connect();
        let queue: Arc<Mutex<[VecDeque<Vec<u8>>; 2]>> = Arc::default();
        let q = queue.clone();
        // From now on every datagram is held for the fuzzer to deliver or not.
        p.set_filter(Box::new(move |_, dir, d| {
            let i = dir_index(dir == Direction::ToServer);
            q.lock().unwrap()[i].push_back(d.to_vec());
            Verdict::Drop
        }));
        Some(Self {
            p,
            queue,
            written: [0; 2],
            read: [0; 2],
            largest_pn: [0; 2],
        })
    }

    fn take(&mut self, to_server: bool, index: u8) -> Option<Vec<u8>> {
        let mut q = self.queue.lock().unwrap();
        let q = &mut q[dir_index(to_server)];
        if q.is_empty() {
            return None;
        }
        let i = index as usize % q.len();
        q.remove(i)
    }

    /// Gives a datagram to its receiver; data it carries holds the right stream
    /// bytes for the offset it claims, and no more than the sender wrote.
    fn deliver(&mut self, to_server: bool, mut d: Vec<u8>) {
        let sender_wrote = self.written[dir_index(!to_server)];
        if let Ok(pkt) = wire::decode(&d) {
            let i = dir_index(to_server);
            let pn = pkt.header.pn.expand(Some(self.largest_pn[i]));
            self.largest_pn[i] = self.largest_pn[i].max(pn);
            if let Body::Data {
                offset, payload, ..
            } = &pkt.body
            {
                let (offset, len) = (*offset, payload.len());
                if offset.saturating_add(len as u64) > sender_wrote {
                    return; // beyond what was written: not valid-ish
                }
                let start = d.len() - len;
                d[start..].copy_from_slice(stream(!to_server, offset, len));
            }
        }
        let dir = if to_server {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        self.p.inject(dir, &d);
    }

    fn forge(&mut self, to_server: bool, pn_delta: i8, body: Forged) -> Option<Vec<u8>> {
        let i = dir_index(to_server);
        let dst_cid = if to_server {
            self.p.server_connection().local_cid()
        } else {
            self.p.client_connection().local_cid()
        };
        let pn = self.largest_pn[i].wrapping_add(pn_delta as i64 as u64);
        let sender_wrote = self.written[dir_index(!to_server)];
        let params = |max_data: u32, max_datagram: u16, idle_ms: u16| HandshakeParams {
            src_cid: dst_cid ^ 1,
            max_data: max_data as u64,
            max_datagram,
            max_ack_delay_us: 1000,
            idle_timeout_ms: idle_ms as u32,
            // Any claim: the credit it buys stays within the memory limit.
            path_bdp: (max_data as u64) << 8,
        };
        let body = match &body {
            Forged::Data { offset, len, fin } => {
                let offset = (*offset as u64) % (sender_wrote + 1);
                let len = (*len as u64).min(sender_wrote - offset).min(1400);
                Body::Data {
                    offset,
                    fin: *fin,
                    payload: stream(!to_server, offset, len as usize),
                }
            }
            Forged::Ack {
                ranges,
                cumulative,
                max_data,
                delay,
            } => {
                // Ranges downwards from a number near the peer's largest.
                let mut out = AckRanges::new();
                let mut top = self.largest_pn[dir_index(!to_server)].wrapping_add(2);
                for &(gap, len) in ranges.iter().take(8) {
                    let end = top.saturating_sub(gap as u64);
                    let start = end.saturating_sub(len as u64);
                    if out.last().is_some_and(|r: &AckRange| end + 1 >= r.start) {
                        break;
                    }
                    out.push(AckRange { start, end });
                    if start < 2 {
                        break;
                    }
                    top = start - 2;
                }
                if out.is_empty() {
                    out.push(AckRange {
                        start: top,
                        end: top,
                    });
                }
                Body::Ack(Ack {
                    ranges: out,
                    ack_delay_us: *delay as u32,
                    data_cumulative: *cumulative as u64,
                    max_data: *max_data as u64,
                })
            }
            Forged::Keepalive => Body::Keepalive,
            Forged::Close { code } => Body::Close { code: *code as u32 },
            Forged::Reset { code } => Body::Reset { code: *code as u32 },
            Forged::Init {
                cookie,
                max_data,
                max_datagram,
            } => Body::Init {
                params: params(*max_data, *max_datagram, 1000),
                cookie,
            },
            Forged::Accept {
                max_data,
                max_datagram,
                idle_ms,
            } => Body::Accept {
                params: params(*max_data, *max_datagram, *idle_ms),
            },
            Forged::Retry { cookie } => Body::Retry { cookie },
        };
        let header = Header {
            dst_cid: if matches!(body, Body::Init { .. }) {
                0
            } else {
                dst_cid
            },
            pn: pn.into(),
            timestamp: 1,
            timestamp_echo: 0,
        };
        let mut buf = [0u8; 2048];
        let n = wire::encode(&mut buf, &Packet { header, body }).ok()?;
        Some(buf[..n].to_vec())
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Advance(us) => {
                let d = Duration::from_micros(us as u64);
                self.p.drive_for(d);
            }
            Op::Sleep(s) => self.p.drive_for(Duration::from_millis(s as u64 * 64)),
            Op::Deliver { to_server, index } => {
                if let Some(d) = self.take(to_server, index) {
                    self.deliver(to_server, d);
                }
            }
            Op::Drop { to_server, index } => {
                let _ = self.take(to_server, index);
            }
            Op::Duplicate { to_server, index } => {
                if let Some(d) = self.take(to_server, index) {
                    self.deliver(to_server, d.clone());
                    self.deliver(to_server, d);
                }
            }
            Op::Mutate {
                to_server,
                index,
                at,
                xor,
            } => {
                if let Some(mut d) = self.take(to_server, index) {
                    if !d.is_empty() {
                        let i = at as usize % d.len();
                        d[i] ^= xor;
                    }
                    self.deliver(to_server, d);
                }
            }
            Op::Truncate {
                to_server,
                index,
                len,
            } => {
                if let Some(mut d) = self.take(to_server, index) {
                    d.truncate(len as usize);
                    self.deliver(to_server, d);
                }
            }
            Op::Inject {
                to_server,
                pn_delta,
                body,
            } => {
                if let Some(d) = self.forge(to_server, pn_delta, body) {
                    self.deliver(to_server, d);
                }
            }
            Op::Raw { to_server, bytes } => {
                let bytes: Vec<u8> = bytes.into_iter().take(2048).collect();
                self.deliver(to_server, bytes);
            }
            Op::Flush => {
                for to_server in [true, false] {
                    while let Some(d) = self.take(to_server, 0) {
                        self.deliver(to_server, d);
                    }
                }
            }
            Op::Write { server, len } => {
                let i = dir_index(server);
                let from = self.written[i];
                // Up to 4 KiB a write: enough to fill 64 KiB windows in a few
                // operations, cheap enough for many executions a second.
                let data = stream(server, from, len as usize % (MAX_WRITE + 1));
                let n = if server {
                    self.p.server_connection().write(data).unwrap_or(0)
                } else {
                    self.p.client_connection().write(data).unwrap_or(0)
                };
                self.written[i] += n as u64;
            }
            Op::Read { server } => {
                let mut buf = [0u8; 4096];
                loop {
                    let n = if server {
                        self.p.server_connection().read(&mut buf)
                    } else {
                        self.p.client_connection().read(&mut buf)
                    };
                    if n == 0 {
                        break;
                    }
                    let i = dir_index(server);
                    let from_server = !server;
                    assert!(
                        self.read[i] + n as u64 <= self.written[dir_index(from_server)],
                        "read more than the peer wrote"
                    );
                    let want = stream(from_server, self.read[i], n);
                    if buf[..n] != *want {
                        let k = (0..n).find(|&k| buf[k] != want[k]).expect("differs");
                        panic!(
                            "byte {} read by the {} is not what was written there",
                            self.read[i] + k as u64,
                            if server { "server" } else { "client" }
                        );
                    }
                    self.read[i] += n as u64;
                }
            }
            Op::Finish { server } => {
                if server {
                    self.p.server_connection().finish();
                } else {
                    self.p.client_connection().finish();
                }
            }
            Op::Close { server } => {
                let now = self.p.now;
                if server {
                    self.p.server_connection().close(now);
                } else {
                    self.p.client_connection().close(now);
                }
            }
            Op::Reset { server, code } => {
                if server {
                    self.p.server_connection().reset(code as u32);
                } else {
                    self.p.client_connection().reset(code as u32);
                }
            }
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let Some(mut w) = World::new() else {
        return;
    };
    for op in ops.into_iter().take(MAX_OPS) {
        // Connections are never released here, so the handles stay valid.
        w.apply(op);
        let live = LIVE.load(Ordering::Relaxed);
        assert!(live < LIVE_LIMIT, "{live} bytes allocated and not freed");
        // Bound the path too: a side cannot queue without limit.
        let q = w.queue.lock().unwrap();
        assert!(
            q[0].len() + q[1].len() < 100_000,
            "datagrams in flight without bound"
        );
    }
});
