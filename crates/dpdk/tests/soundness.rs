//! Issue 11, items 18–27: sequences that safe code could use to corrupt memory are
//! refused (an error or a clear panic), and every test ends with its pools full.

mod common;

use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{eal, on_main, pool};
use dpdk::{
    lcore, sys, ErrorKind, MacAddr, Mbuf, MbufBatch, Mempool, MempoolConfig, Offloads, Port,
    PortConfig,
};

const VDEVS: &[&str] = &["net_null0", "net_null1", "net_null2", "net_null3"];

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Item 19: `start + len` overflowing must not pass the bound check.
#[test]
fn slice_ref_range_overflow_is_an_error() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut m = pool.alloc().unwrap();
    m.extend_from_slice(b"0123456789").unwrap();
    for (start, len) in [
        (usize::MAX, 2),
        (2, usize::MAX),
        (usize::MAX, usize::MAX),
        (11, 0),
    ] {
        let e = m.slice_ref(&pool, start, len).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{start}+{len}");
    }
    assert_eq!(m.slice_ref(&pool, 10, 0).unwrap().data(), b"");
    drop(m);
    assert_eq!(pool.in_use(), 0);
}

/// Headers written in front of a payload, in its headroom: only while nothing
/// else refers to the buffer (a frame still held elsewhere could be reading those
/// bytes), never beyond the headroom, never into a chain; the payload itself is
/// neither moved nor changed, and every mbuf returns to the pool.
#[test]
fn headed_ref_writes_only_the_headroom_of_an_unshared_buffer() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut m = pool.alloc().unwrap();
    m.extend_from_slice(b"payload").unwrap();
    let room = m.headroom();
    let framed = m
        .headed_ref(&pool, 4, |h| h.copy_from_slice(b"HDR:"))
        .unwrap();
    assert_eq!(framed.data(), b"HDR:payload");
    assert_eq!(
        framed.data()[4..].as_ptr(),
        m.data().as_ptr(),
        "same memory"
    );
    assert_eq!((m.data(), m.headroom()), (&b"payload"[..], room));
    assert!(!m.is_unique() && !framed.is_unique());

    // While the frame is out, nothing may write the headroom it reads.
    let mut called = false;
    let e = m
        .headed_ref(&pool, 4, |_| called = true)
        .expect_err("the buffer is shared");
    assert_eq!(e.kind(), ErrorKind::Shared);
    assert!(!called, "nothing written into a shared headroom");
    assert_eq!(framed.data(), b"HDR:payload");
    let other = m.clone_ref();
    drop(framed);
    assert_eq!(
        m.headed_ref(&pool, 4, |_| called = true)
            .unwrap_err()
            .kind(),
        ErrorKind::Shared
    );
    drop(other);

    // Alone again: the next frame's headers replace the last one's.
    let again = m
        .headed_ref(&pool, 2, |h| h.copy_from_slice(b"h:"))
        .unwrap();
    assert_eq!(again.data(), b"h:payload");
    drop(again);
    let e = m
        .headed_ref(&pool, room + 1, |_| called = true)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let mut tail = pool.alloc().unwrap();
    tail.extend_from_slice(b"-tail").unwrap();
    m.chain(tail).unwrap();
    let e = m.headed_ref(&pool, 4, |_| called = true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(!called);
    drop(m);
    assert_eq!(pool.in_use(), 0);
}

/// Item 18: the 16-bit refcount must never wrap (65,536 references would read as 0
/// and free memory still in use).
#[test]
fn clone_ref_refuses_before_the_refcount_wraps() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let m = pool.alloc().unwrap();
    let mut clones = Vec::new();
    let mut refused = None;
    // Stops at 65,535 references: one more would wrap.
    while m.refcnt() < u16::MAX {
        match catch_unwind(AssertUnwindSafe(|| m.clone_ref())) {
            Ok(c) => clones.push(c),
            Err(p) => {
                refused = Some(panic_message(p));
                break;
            }
        }
    }
    let msg = refused.expect("clone_ref must refuse before the refcount can wrap");
    assert!(msg.contains("references"), "{msg}");
    assert_eq!(m.refcnt(), Mbuf::MAX_REFS);
    assert_eq!(m.try_clone_ref().unwrap_err().kind(), ErrorKind::Exhausted);
    // An indirect slice adds a reference to the same mbuf: refused as well.
    assert_eq!(
        m.slice_ref(&pool, 0, 0).unwrap_err().kind(),
        ErrorKind::Exhausted
    );
    clones.clear();
    assert_eq!(m.refcnt(), 1);
    drop(m);
    assert_eq!(pool.in_use(), 0);
}

/// Item 20: one owner per port id, process-wide.
#[test]
fn a_port_has_one_owner() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 1023);
    let id = Port::id_by_name(&eal, "net_null0").unwrap();
    let mut p = Port::open(&eal, id).unwrap();
    assert_eq!(Port::open(&eal, id).unwrap_err().kind(), ErrorKind::Busy);
    let e = Port::open_by_name(&eal, "net_null0").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert!(e.to_string().contains("already open"), "{e}");
    let (rx, tx) = p
        .configure(&PortConfig::default().descriptors(64, 64), &pool)
        .unwrap();
    drop(p);
    // The queues still use the device: still owned.
    assert_eq!(Port::open(&eal, id).unwrap_err().kind(), ErrorKind::Busy);
    drop((rx, tx));
    // The last handle closed the device, which DPDK 22.11 then releases.
    assert_eq!(
        Port::open(&eal, id).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(pool.in_use(), 0);
}

/// Item 21: stop/start/set_mac/reset_stats take `&mut Port` and pause the queues'
/// bursts (running on another thread here) instead of racing them.
#[test]
fn control_operations_wait_for_bursts_on_other_threads() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 2047);
    let mut port = Port::open_by_name(&eal, "net_null1").unwrap();
    let (mut rx, mut tx) = port
        .configure(&PortConfig::default().descriptors(256, 256), &pool)
        .unwrap();
    port.start().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let stop = done.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let mut ready_tx = Some(ready_tx);
    let burster = std::thread::spawn(move || {
        let mut b = MbufBatch::<32>::new();
        let mut received = 0usize;
        while !stop.load(Ordering::Relaxed) {
            received += rx[0].rx_burst(&mut b);
            tx[0].tx_burst(&mut b);
            b.clear();
            if received > 0 {
                if let Some(t) = ready_tx.take() {
                    let _ = t.send(());
                }
            }
        }
        (rx, tx, received)
    });
    // Bursting is under way before the control operations start.
    ready_rx.recv().unwrap();
    for i in 0..200u8 {
        port.stop().unwrap();
        port.reset_stats().unwrap();
        port.set_mac(MacAddr([2, 0, 0, 0, 1, i])).unwrap();
        port.start().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    let (mut rx, tx, received) = burster.join().unwrap();
    assert!(received > 0);
    assert_eq!(port.info().unwrap().mac, MacAddr([2, 0, 0, 0, 1, 199]));
    port.stop().unwrap();
    let mut b = MbufBatch::<32>::new();
    assert_eq!(rx[0].rx_burst(&mut b), 0, "a stopped port's queue is idle");
    drop((rx, tx, port));
    assert_eq!(pool.in_use(), 0);
}

/// Item 23: only the main lcore may launch (and wait for) work on lcores.
#[test]
fn launch_only_from_the_main_lcore() {
    let eal = eal(VDEVS);
    // A test thread is not the main lcore.
    let e = lcore::launch(&eal, 1, || 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("main lcore"), "{e}");
    let main_eal = eal.clone();
    let (ran_on, nested) = on_main(move || {
        let inner = main_eal.clone();
        let h = lcore::launch(&main_eal, 1, move || {
            // Nor a worker lcore.
            let nested = lcore::launch(&inner, 1, || 0).map(|_| ()).unwrap_err();
            (lcore::current(), nested.kind())
        })
        .unwrap();
        h.join().unwrap()
    });
    assert_eq!(ran_on, Some(1));
    assert_eq!(nested, ErrorKind::InvalidArgument);
}

/// Item 24: a dropped pool is not freed while the EAL runs (an mbuf free on another
/// lcore may still be writing to it); EAL teardown frees it.
#[test]
fn a_dropped_pool_is_kept_until_eal_teardown() {
    let eal = eal(VDEVS);
    // A size no other test uses: none can reuse this pool once dropped.
    let pool = pool(&eal, 57);
    let name = pool.name().to_owned();
    let ptr = pool.as_ptr();
    drop(pool.alloc().unwrap());
    drop(pool);
    let c = CString::new(name.clone()).unwrap();
    // SAFETY: a lookup by a valid C string.
    let found = unsafe { sys::rte_mempool_lookup(c.as_ptr()) };
    assert_eq!(found, ptr, "the dropped pool is still allocated");
    let u = eal
        .mempool_usage()
        .into_iter()
        .find(|u| u.name == name)
        .expect("listed");
    assert!(u.dropped);
    assert_eq!(u.in_use, 0);
}

/// Item 24: a dropped, full pool is handed to the next pool of the same
/// configuration rather than holding its memory until teardown.
#[test]
fn a_dropped_full_pool_is_reused_by_the_same_configuration() {
    let eal = eal(VDEVS);
    // A size no other test uses: no other test can take the dropped pool first.
    let cfg = MempoolConfig {
        size: 61,
        cache_size: 0,
        ..Default::default()
    };
    let first = Mempool::new(&eal, &cfg).unwrap();
    let (name, ptr) = (first.name().to_owned(), first.as_ptr());
    let out = first.alloc().unwrap();
    drop(first);
    // Not full (an mbuf is out): a new pool.
    let second = Mempool::new(&eal, &cfg).unwrap();
    assert_ne!(second.as_ptr(), ptr);
    drop(out);
    let third = Mempool::new(&eal, &cfg).unwrap();
    assert_eq!((third.name(), third.as_ptr()), (name.as_str(), ptr));
    assert_eq!(third.available(), 61);
    drop(third.alloc().unwrap());
    assert_eq!((second.in_use(), third.in_use()), (0, 0));
}

/// Item 25: the port helpers need a running EAL (they take `&Eal`).
#[test]
fn port_helpers_take_the_eal() {
    let eal = eal(VDEVS);
    let id = Port::id_by_name(&eal, "net_null3").unwrap();
    assert!(Port::ids(&eal).contains(&id));
    assert_eq!(Port::name_of(&eal, id).as_deref(), Some("net_null3"));
    assert!(Port::count(&eal) >= 1);
    let e = Port::id_by_name(&eal, "net_nope").unwrap_err();
    assert!(e.to_string().contains("net_null3"), "{e}");
}

/// Item 26: `chain` never writes a shared tail; a shared multi-segment tail is
/// refused (`rte_pktmbuf_chain` would rewrite its `pkt_len` under the other holder).
#[test]
fn chain_never_writes_a_shared_tail() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut tail = pool.alloc().unwrap();
    tail.extend_from_slice(b"ab").unwrap();
    let mut t2 = pool.alloc().unwrap();
    t2.extend_from_slice(b"cd").unwrap();
    tail.chain(t2).unwrap();
    let keep = tail.clone_ref();
    let mut head = pool.alloc().unwrap();
    head.extend_from_slice(b"H").unwrap();
    let tail = head
        .chain(tail)
        .expect_err("a shared multi-segment tail is refused");
    assert_eq!(keep.pkt_len(), 4, "the other holder's packet is untouched");
    assert_eq!(head.nb_segs(), 1);
    // A shared single segment is linked without being written (zero-copy send).
    let mut single = pool.alloc().unwrap();
    single.extend_from_slice(b"xyz").unwrap();
    let other = single.clone_ref();
    head.chain(single).unwrap();
    assert_eq!(head.to_vec(), b"Hxyz");
    assert_eq!((head.pkt_len(), head.nb_segs()), (4, 2));
    assert_eq!(other.pkt_len(), 3);
    assert!(!head.is_unique());
    // Its last segment is shared: nothing may be chained after it.
    let mut more = pool.alloc().unwrap();
    more.extend_from_slice(b"!").unwrap();
    assert!(head.chain(more).is_err());
    drop((tail, keep, head, other));
    assert_eq!(pool.in_use(), 0);
}

static EXT_FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn ext_free(_addr: *mut c_void, _opaque: *mut c_void) {
    EXT_FREED.fetch_add(1, Ordering::SeqCst);
}

/// Item 26: an mbuf over an external buffer that another mbuf also references is
/// not unique (its own refcount is 1; the buffer's is 2), so it cannot be written.
#[test]
fn a_shared_external_buffer_is_not_unique() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut m = pool.alloc().unwrap();
    let mem: &'static mut [u8] = Box::leak(vec![0u8; 4096].into_boxed_slice());
    let mut len: u16 = 4096;
    // SAFETY: `mem` lives forever; the helper puts the shared info at its end and
    // shrinks `len`; the mbuf is ours and empty; the IOVA is never used (no device).
    unsafe {
        let addr = mem.as_mut_ptr() as *mut c_void;
        let shinfo = sys::rte_pktmbuf_ext_shinfo_init_helper(
            addr,
            &mut len,
            Some(ext_free),
            std::ptr::null_mut(),
        );
        assert!(!shinfo.is_null());
        sys::rte_pktmbuf_attach_extbuf(m.as_ptr(), addr, u64::MAX, len, shinfo);
    }
    m.extend_from_slice(b"external").unwrap();
    assert!(m.is_unique());
    let part = m.slice_ref(&pool, 0, 4).unwrap();
    assert_eq!(part.data(), b"exte");
    assert_eq!(part.refcnt(), 1);
    assert_eq!(m.refcnt(), 1);
    assert!(!m.is_unique(), "the external buffer is shared");
    assert!(!part.is_unique());
    assert_eq!(m.data_mut().unwrap_err().kind(), ErrorKind::Shared);
    drop(part);
    assert!(m.is_unique());
    m.data_mut().unwrap()[0] = b'E';
    drop(m);
    assert_eq!(EXT_FREED.load(Ordering::SeqCst), 1, "buffer released once");
    assert_eq!(pool.in_use(), 0);
}

/// Item 22: MBUF_FAST_FREE can only be requested with `unsafe`.
#[test]
fn mbuf_fast_free_needs_unsafe() {
    let o = Offloads::default();
    assert!(!o.tx_fast_free());
    // SAFETY: this configuration is never used to send anything.
    let f = unsafe { o.with_tx_fast_free() };
    assert!(f.tx_fast_free());
}

/// Item 27: after a failed configure, start is refused (queues set up so far
/// would refill from a pool the port did not keep); a retried configure works.
#[test]
fn start_after_a_failed_configure_is_refused() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 1023);
    let mut port = Port::open_by_name(&eal, "net_null2").unwrap();
    let bad = PortConfig {
        rx_queues: 0,
        ..Default::default()
    };
    assert!(port.configure(&bad, &pool).is_err());
    let e = port.start().unwrap_err();
    assert!(e.to_string().contains("not configured"), "{e}");
    let (rx, tx) = port
        .configure(&PortConfig::default().descriptors(64, 64), &pool)
        .unwrap();
    port.start().unwrap();
    drop((rx, tx, port));
    assert_eq!(pool.in_use(), 0);
}
