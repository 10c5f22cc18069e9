//! The steady-state I/O loop does not allocate (README: "no allocation on the data
//! path"). A counting global allocator counts allocations made inside I/O loop
//! iterations (`pmdt::runtime::in_io_iteration`, a thread-local flag the loop sets
//! around each iteration, so application threads and the periodic stats
//! publication are not counted) while a bulk transfer runs between two runtimes
//! over the in-memory link: after a warm-up, a window of the transfer (data,
//! acks, timers, deliveries, writer wake-ups) must allocate nothing, lossless
//! and at 1% loss. A second test drives two endpoints with the runtime's storages
//! (`ChunkSend`/`ChunkRecv`, `poll_transmit_header`, `handle_in`,
//! `handle_timeout`, `consume`) on a simulated clock and wire, so its window is
//! fully deterministic, lossless and with one datagram in 97 lost.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pmdt::link::impair::ImpairConfig;
use pmdt::link::memory::MemoryLink;
use pmdt::link::{HeapPool, Link};
use pmdt::runtime::{Backend, Runtime};
use pmdt::TransportConfig;

/// Allocations (alloc, alloc_zeroed, realloc) made inside I/O loop iterations
/// while armed.
static IO_ALLOCS: AtomicU64 = AtomicU64::new(0);
/// Counting is on (the steady-state window).
static ARMED: AtomicBool = AtomicBool::new(false);
/// Print a backtrace of the first few counted allocations (PMDT_ALLOC_TRACE=1).
static TRACE: AtomicBool = AtomicBool::new(false);
static TRACED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IN_TRACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

struct Counting;

impl Counting {
    #[inline]
    fn note(&self) {
        sans_io::note();
        if !ARMED.load(Ordering::Relaxed) || !pmdt::runtime::in_io_iteration() {
            return;
        }
        IO_ALLOCS.fetch_add(1, Ordering::Relaxed);
        if TRACE.load(Ordering::Relaxed) && TRACED.fetch_add(1, Ordering::Relaxed) < 400 {
            // The backtrace allocates: guard against counting and tracing itself.
            if IN_TRACE.with(|t| t.replace(true)) {
                return;
            }
            let bt = std::backtrace::Backtrace::force_capture();
            eprintln!("allocation in the I/O loop:\n{bt}");
            IN_TRACE.with(|t| t.set(false));
        }
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !IN_TRACE.with(|t| t.get()) {
            self.note();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !IN_TRACE.with(|t| t.get()) {
            self.note();
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !IN_TRACE.with(|t| t.get()) {
            self.note();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn transport() -> TransportConfig {
    TransportConfig::default()
        .with_initial_rtt(Duration::from_millis(5))
        .with_idle_timeout(Duration::from_secs(10))
        .with_keepalive(Some(Duration::from_millis(500)))
}

const WARM_UP: u64 = 8 << 20;
const WINDOW: u64 = 24 << 20;
const TOTAL: u64 = 40 << 20;

/// Waits until `received` reaches `n` (bounded: a hang fails the test).
fn wait_for(received: &AtomicU64, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while received.load(Ordering::Acquire) < n {
        assert!(Instant::now() < deadline, "transfer stalled");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn steady_state_io_loop_does_not_allocate() {
    // Both cases in one test: the counter is global to the binary.
    bulk_transfer_window_allocations(None);
    bulk_transfer_window_allocations(Some(ImpairConfig::default().with_loss(0.01)));
}

/// Runs a bulk transfer between two runtimes (impaired as `impair` says, if at
/// all) and asserts the steady-state window allocated nothing in the I/O loops.
fn bulk_transfer_window_allocations(impair: Option<ImpairConfig>) {
    TRACE.store(
        std::env::var_os("PMDT_ALLOC_TRACE").is_some(),
        Ordering::Relaxed,
    );
    IO_ALLOCS.store(0, Ordering::SeqCst);
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    // Packet pools allocated up front, as DPDK mempools are (the memory link's
    // pool otherwise allocates blocks on first need).
    let (la, lb) = MemoryLink::pair_with_pool(a, b, 8192, 16 * 1024);
    for l in [&la, &lb] {
        let pool = l.pool();
        let Some(p) = pool.downcast_ref::<HeapPool>() else {
            unreachable!("memory links use heap blocks")
        };
        p.prefill();
    }
    let mut client = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]));
    let mut server = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]));
    if let Some(c) = impair.clone() {
        client = client.impair(c.clone());
        server = server.impair(c.with_seed(99));
    }
    let (client, server) = (client.start().unwrap(), server.start().unwrap());
    let listener = server.listen(0).unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let reader = {
        let received = received.clone();
        thread::spawn(move || {
            let mut s = listener.accept().unwrap();
            let mut buf = vec![0u8; 64 * 1024];
            let mut expect = 0u8;
            loop {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                for &x in &buf[..n] {
                    assert_eq!(
                        x,
                        expect,
                        "byte {} differs",
                        received.load(Ordering::Relaxed)
                    );
                    expect = expect.wrapping_add(1);
                }
                received.fetch_add(n as u64, Ordering::AcqRel);
            }
        })
    };
    let mut s = client.connect(b).unwrap();
    let writer = thread::spawn(move || {
        // Byte i of the stream is i mod 256; uneven writes make partial packets.
        let block: Vec<u8> = (0..256 * 30).map(|i| i as u8).collect();
        let mut sent = 0u64;
        while sent < TOTAL {
            let off = (sent % 256) as usize;
            let n = 7001.min((TOTAL - sent) as usize);
            s.write_all(&block[off..off + n]).unwrap();
            sent += n as u64;
        }
        s.close().unwrap();
    });

    wait_for(&received, WARM_UP);
    ARMED.store(true, Ordering::SeqCst);
    wait_for(&received, WINDOW);
    ARMED.store(false, Ordering::SeqCst);
    let during = IO_ALLOCS.load(Ordering::SeqCst);

    writer.join().unwrap();
    reader.join().unwrap();
    assert_eq!(received.load(Ordering::Relaxed), TOTAL);
    let st = client.stats().loops[0].clone();
    assert!(st.iterations > 0);
    assert_eq!(
        during,
        0,
        "{during} allocations in the I/O loops while {} MiB were transferred in steady state \
         (impairment: {impair:?}; PMDT_ALLOC_TRACE=1 prints where)",
        (WINDOW - WARM_UP) >> 20
    );
}

/// Allocations made on this thread while `ARMED_HERE` is set (the sans-IO test
/// drives both endpoints on its own thread).
mod sans_io {
    use std::cell::Cell;
    use std::collections::VecDeque;
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use pmdt::link::{Buffer, BufferPool, HeapPool};
    use pmdt::proto::{ConnectionHandle, Endpoint, EndpointConfig, StorageWrite};
    use pmdt::runtime::storage::{ChunkRecv, ChunkSend};
    use pmdt::TransportConfig;

    thread_local! {
        pub static ARMED_HERE: Cell<bool> = const { Cell::new(false) };
        pub static COUNT_HERE: Cell<u64> = const { Cell::new(0) };
    }

    /// Counts an allocation if this thread is armed (called by the allocator).
    pub fn note() {
        let _ = ARMED_HERE.try_with(|a| {
            if a.get() {
                let _ = COUNT_HERE.try_with(|c| c.set(c.get() + 1));
            }
        });
    }

    type Ep = Endpoint<ChunkSend, ChunkRecv>;

    const CHUNK: usize = 1400;
    /// One-way delay of the simulated wire.
    const DELAY: Duration = Duration::from_millis(1);
    /// Datagrams each side may send per 10 µs step (~1.1 Gbit/s of payload).
    const PER_STEP: usize = 1;

    fn endpoint(pool: &HeapPool, now: Instant, seed: u64, accept: bool) -> Ep {
        let cfg = EndpointConfig::default()
            .with_transport(TransportConfig::default().with_initial_rtt(Duration::from_millis(2)))
            .with_accept(accept)
            .with_seed(Some(seed));
        let p = BufferPool::new(pool.clone());
        Endpoint::with_storage(
            cfg,
            now,
            Box::new(move |cap| ChunkSend::new(cap, p.clone(), CHUNK)),
            Box::new(ChunkRecv::new),
        )
        .unwrap()
    }

    /// A datagram on the wire: arrival time, sender, bytes.
    type Wire = VecDeque<(Instant, SocketAddr, Buffer)>;

    struct Side {
        ep: Ep,
        addr: SocketAddr,
        hdr: Vec<u8>,
        sent: u64,
    }

    impl Side {
        /// Sends what the endpoint has (up to `PER_STEP`) onto `wire`, as the I/O
        /// loop does: header from the endpoint, payload from the send storage.
        fn transmit(&mut self, now: Instant, pool: &HeapPool, wire: &mut Wire, drop_every: u64) {
            for _ in 0..PER_STEP {
                self.sent += 1;
                let Some(out) = self.ep.poll_transmit_header(now, &mut self.hdr) else {
                    return;
                };
                let t = *out.transmit();
                let mut b = pool.take().expect("pool");
                let space = b.space();
                let n = match out.connection().zip(t.payload) {
                    Some((h, p)) => {
                        let c = self.ep.connection(h).unwrap();
                        let (buf, pos) = c.send_storage().chunk_at(p.offset).unwrap();
                        space[..t.header_len].copy_from_slice(&self.hdr[..t.header_len]);
                        space[t.header_len..t.header_len + p.len]
                            .copy_from_slice(&buf.bytes()[pos..pos + p.len]);
                        t.header_len + p.len
                    }
                    None => {
                        space[..t.len].copy_from_slice(&self.hdr[..t.len]);
                        t.len
                    }
                };
                b.set_len(n);
                if drop_every > 0 && self.sent.is_multiple_of(drop_every) {
                    continue; // lost on the wire
                }
                wire.push_back((now + DELAY, self.addr, Buffer::new(b.freeze())));
            }
        }

        fn receive(&mut self, now: Instant, wire: &mut Wire) {
            while wire.front().is_some_and(|(t, _, _)| *t <= now) {
                let (_, from, b) = wire.pop_front().unwrap();
                self.ep.handle_in(now, from, b.bytes(), &b);
            }
        }

        fn timers(&mut self, now: Instant) {
            if self.ep.poll_timeout().is_some_and(|t| t <= now) {
                self.ep.handle_timeout(now);
            }
            while self.ep.poll_event().is_some() {}
        }
    }

    /// Endpoint + connection hot path with the runtime's storages, simulated
    /// clock and wire: deterministic. Returns the allocations counted in the
    /// steady-state window.
    /// `drop_every`: every so many datagrams each side sends is lost (0: none).
    pub fn run(drop_every: u64) -> (u64, u64, u64) {
        // The counter works: one allocation while armed counts one.
        COUNT_HERE.with(|c| c.set(0));
        ARMED_HERE.with(|x| x.set(true));
        let probe = std::hint::black_box(Box::new(7u64));
        ARMED_HERE.with(|x| x.set(false));
        drop(probe);
        assert_eq!(
            COUNT_HERE.with(|c| c.get()),
            1,
            "the counting allocator counts"
        );
        COUNT_HERE.with(|c| c.set(0));
        let t0 = Instant::now();
        let mut now = t0;
        let pool = HeapPool::new(16 * 1024, 2048);
        pool.prefill();
        let mut a = Side {
            ep: endpoint(&pool, now, 1, false),
            addr: "10.0.0.1:1000".parse().unwrap(),
            hdr: vec![0; 2048],
            sent: 0,
        };
        let mut b = Side {
            ep: endpoint(&pool, now, 2, true),
            addr: "10.0.0.2:2000".parse().unwrap(),
            hdr: vec![0; 2048],
            sent: 0,
        };
        let mut ab: Wire = VecDeque::with_capacity(1 << 16);
        let mut ba: Wire = VecDeque::with_capacity(1 << 16);
        let h = a.ep.connect(now, b.addr);
        let mut server: Option<ConnectionHandle> = None;
        let data: Vec<u8> = (0..CHUNK + 256).map(|i| i as u8).collect();
        let (mut written, mut read) = (0u64, 0u64);
        let (mut armed_at, mut window) = (None, 0u64);
        const WARM_UP: u64 = 32 << 20;
        const WINDOW: u64 = 64 << 20;
        let mut steps = 0u64;
        while read < WINDOW {
            steps += 1;
            assert!(steps < 50_000_000, "stalled at {read} bytes");
            now += Duration::from_micros(10);
            // The writer keeps the send storage full.
            let _ = a.ep.connection_mut(h).unwrap().write_with(|st, room| {
                let mut n = 0;
                while st.free() >= CHUNK as u64 && (n as u64) < room {
                    let off = (written % 256) as usize;
                    let Some(buf) = pool.copy_from(&data[off..off + CHUNK]) else {
                        break;
                    };
                    let k = st.push(Buffer::new(buf)).unwrap_or(0);
                    written += k as u64;
                    n += k;
                }
                StorageWrite {
                    bytes: n,
                    full: n == 0,
                }
            });
            a.receive(now, &mut ba);
            b.receive(now, &mut ab);
            if server.is_none() {
                server = b.ep.accept();
            }
            // The reader takes everything in order (and checks it).
            if let Some(s) = server {
                let mut moved = 0u64;
                if b.ep.connection(s).is_some_and(|c| c.readable() > 0) {
                    let mut c = b.ep.connection_mut(s).unwrap();
                    while let Some(seg) = c.recv_storage_mut().pop_at(read + moved) {
                        let bytes = &seg.buf.bytes()[seg.pos..seg.pos + seg.len];
                        for (k, &x) in bytes.iter().enumerate() {
                            assert_eq!(x, ((read + moved + k as u64) % 256) as u8);
                        }
                        moved += seg.len as u64;
                    }
                    c.consume(moved);
                    read += moved;
                }
            }
            a.timers(now);
            b.timers(now);
            a.transmit(now, &pool, &mut ab, drop_every);
            b.transmit(now, &pool, &mut ba, drop_every);
            if armed_at.is_none() && read >= WARM_UP {
                armed_at = Some(steps);
                ARMED_HERE.with(|x| x.set(true));
            }
        }
        ARMED_HERE.with(|x| x.set(false));
        if let Some(s) = armed_at {
            window = steps - s;
        }
        let stats = a.ep.connection(h).unwrap().stats().clone();
        assert!(stats.stream_bytes_acked > WARM_UP);
        let _ = t0;
        (COUNT_HERE.with(|c| c.get()), window, stats.losses_detected)
    }
}

#[test]
fn endpoint_hot_path_with_runtime_storage_does_not_allocate() {
    for drop_every in [0, 97] {
        let (allocs, steps, losses) = sans_io::run(drop_every);
        eprintln!("drop 1 in {drop_every}: {steps} steps, {losses} losses, {allocs} allocations");
        assert!(steps > 1000, "a real steady-state window ({steps} steps)");
        assert_eq!(drop_every > 0, losses > 0, "losses: {losses}");
        assert_eq!(
            allocs, 0,
            "{allocs} allocations in {steps} steady-state steps of the endpoint hot path \
             (one datagram in {drop_every} lost)"
        );
    }
}
