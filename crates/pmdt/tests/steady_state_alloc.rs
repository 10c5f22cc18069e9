//! The steady-state I/O loop does not allocate (README: "no allocation on the data
//! path"). A counting global allocator counts allocations made inside I/O loop
//! iterations (`pmdt::runtime::in_io_iteration`, a thread-local flag the loop sets
//! around each iteration, so application threads and the periodic stats
//! publication are not counted) while a bulk transfer runs between two runtimes
//! over the in-memory link: after a warm-up, a window of the transfer (data,
//! acks, timers, deliveries, writer wake-ups) must allocate nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pmdt::link::impair::ImpairConfig;
use pmdt::link::memory::MemoryLink;
use pmdt::link::{BufferPool, Link};
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
    TransportConfig {
        initial_rtt: Duration::from_millis(5),
        idle_timeout: Duration::from_secs(10),
        keepalive: Some(Duration::from_millis(500)),
        ..Default::default()
    }
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
    bulk_transfer_window_allocations(Some(ImpairConfig {
        loss: 0.01,
        ..Default::default()
    }));
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
        let BufferPool::Heap(p) = l.pool() else {
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
        server = server.impair(ImpairConfig { seed: 99, ..c });
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
