//! net_ring and net_null vdevs: mbuf ownership, bursts, partial tx, no leaks, rings, lcores.

mod common;

use common::{eal, frame, frame_seq, on_main, pool};
use dpdk::{lcore, ring, ErrorKind, Mbuf, MbufBatch, Mempool, Port, PortConfig};

const VDEVS: &[&str] = &["net_ring0", "net_ring1", "net_null0"];

fn tx_frames(pool: &Mempool, batch: &mut MbufBatch<32>, start: u32, n: u32) {
    for i in 0..n {
        let mut m = pool.alloc().unwrap();
        m.extend_from_slice(&frame(start + i, 128)).unwrap();
        batch.push(m).unwrap();
    }
}

#[test]
fn ring_vdev_loops_frames_back_intact() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 1023);
    let mut port = Port::open_by_name(&eal, "net_ring0").unwrap();
    let info = port.info().unwrap();
    assert_eq!(info.driver, "net_ring");
    let (mut rx, mut tx) = port.configure(&PortConfig::default(), &pool).unwrap();
    port.start().unwrap();
    assert!(port.link().unwrap().up);

    let mut batch = MbufBatch::<32>::new();
    tx_frames(&pool, &mut batch, 0, 32);
    assert_eq!(tx[0].tx_burst(&mut batch), 32);
    assert!(batch.is_empty());

    let mut got = Vec::new();
    let mut rxb = MbufBatch::<32>::new();
    for _ in 0..100 {
        rx[0].rx_burst(&mut rxb);
        for m in rxb.drain() {
            assert_eq!(m.data(), &frame(frame_seq(m.data()).unwrap(), 128)[..]);
            got.push(frame_seq(m.data()).unwrap());
        }
        if got.len() == 32 {
            break;
        }
    }
    assert_eq!(got, (0..32).collect::<Vec<_>>());
    let st = port.stats().unwrap();
    assert_eq!(st.opackets, 32);
    assert_eq!(st.ipackets, 32);
    drop((rx, tx, port));
    assert_eq!(pool.in_use(), 0, "every mbuf returned to the pool");
}

#[test]
fn partial_tx_burst_keeps_unsent_and_nothing_leaks() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 4095);
    // net_ring1's tx ring holds 1023 packets; nothing receives, so tx must go partial.
    let mut port = Port::open_by_name(&eal, "net_ring1").unwrap();
    let (mut rx, mut tx) = port.configure(&PortConfig::default(), &pool).unwrap();
    port.start().unwrap();
    let mut batch = MbufBatch::<32>::new();
    let mut sent = 0usize;
    let mut partial = None;
    let mut next_seq = 0u32;
    for _ in 0..40 {
        let missing = 32 - batch.len() as u32;
        tx_frames(&pool, &mut batch, next_seq, missing);
        next_seq += missing;
        let n = tx[0].tx_burst(&mut batch);
        sent += n;
        if n < 32 && partial.is_none() {
            partial = Some(n);
            assert_eq!(batch.len(), 32 - n, "unsent mbufs stay in the batch");
            // The unsent ones are still the right frames, in order, at the front.
            let first = frame_seq(batch.as_slice()[0].data()).unwrap();
            assert_eq!(first as usize, sent);
        }
    }
    assert!(partial.is_some(), "the ring filled up");
    assert_eq!(sent, 1023);
    assert_eq!(pool.in_use() as usize, sent + batch.len());
    drop(batch); // frees the unsent ones
    assert_eq!(pool.in_use() as usize, sent);
    // Receive and drop everything queued.
    let mut got = 0;
    let mut rxb = MbufBatch::<32>::new();
    loop {
        let n = rx[0].rx_burst(&mut rxb);
        if n == 0 {
            break;
        }
        got += n;
        rxb.clear();
    }
    assert_eq!(got, sent);
    assert_eq!(pool.in_use(), 0, "no leak after partial tx and drops");

    // An SP/SC rte_ring behaves the same way for bursts.
    let (mut p, mut c) = ring::spsc::<Mbuf>(&eal, 40).unwrap();
    let mut b = MbufBatch::<32>::new();
    tx_frames(&pool, &mut b, 0, 32);
    assert_eq!(p.push_burst(&mut b), 32);
    tx_frames(&pool, &mut b, 32, 32);
    assert_eq!(p.push_burst(&mut b), 8);
    assert_eq!(b.len(), 24);
    drop(b);
    let mut out = MbufBatch::<32>::new();
    assert_eq!(c.pop_burst(&mut out), 32);
    assert_eq!(frame_seq(out.as_slice()[31].data()), Some(31));
    drop(out);
    drop((p, c)); // the ring frees the 8 it still holds
    assert_eq!(pool.in_use(), 0);
}

#[test]
fn null_vdev_rx_and_tx_return_every_mbuf() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 2047);
    let mut port = Port::open_by_name(&eal, "net_null0").unwrap();
    let (mut rx, mut tx) = port
        .configure(&PortConfig::default().descriptors(256, 256), &pool)
        .unwrap();
    port.start().unwrap();
    let mut b = MbufBatch::<32>::new();
    let mut total = 0;
    for _ in 0..100 {
        total += rx[0].rx_burst(&mut b);
        // net_null's tx frees what it takes.
        let n = tx[0].tx_burst(&mut b);
        assert!(n <= 32);
        b.clear();
    }
    assert!(total >= 100, "net_null produces packets");
    assert_eq!(pool.in_use(), 0);
    port.stop().unwrap();
    // A stopped port receives nothing.
    assert_eq!(rx[0].rx_burst(&mut b), 0);
    let xs = port.xstats().unwrap();
    assert!(!xs.is_empty());
    drop((rx, tx, port, b));
    assert_eq!(pool.in_use(), 0);
}

#[test]
fn exhausted_pool_is_an_error_and_recovers() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut held = Vec::new();
    for _ in 0..63 {
        held.push(pool.alloc().unwrap());
    }
    let e = pool.alloc().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Exhausted);
    assert!(e.to_string().contains("exhausted"), "{e}");
    let mut b = MbufBatch::<8>::new();
    assert_eq!(
        pool.alloc_bulk(&mut b, 4).unwrap_err().kind(),
        ErrorKind::Exhausted
    );
    assert!(b.is_empty());
    held.clear();
    assert_eq!(pool.available(), 63);
    pool.alloc_bulk(&mut b, 8).unwrap();
    assert_eq!(
        pool.alloc_bulk(&mut b, 1).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    drop(b);
    assert_eq!(pool.in_use(), 0);
}

#[test]
fn mbuf_editing_sharing_and_chains() {
    let eal = eal(VDEVS);
    let pool = pool(&eal, 63);
    let mut m = pool.alloc().unwrap();
    assert_eq!(m.headroom(), 128);
    m.extend_from_slice(b"payload").unwrap();
    m.prepend(4).unwrap().copy_from_slice(b"HDR:");
    assert_eq!(m.data(), b"HDR:payload");
    m.adj(4).unwrap();
    m.trim(3).unwrap();
    assert_eq!(m.data(), b"payl");
    assert_eq!(m.adj(100).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(m.prepend(1000).unwrap_err().kind(), ErrorKind::Exhausted);
    assert_eq!(m.append(100_000).unwrap_err().kind(), ErrorKind::Exhausted);

    // Shared copies are read-only until the other reference is gone.
    let keep = m.clone_ref();
    assert_eq!(m.refcnt(), 2);
    assert_eq!(m.data_mut().unwrap_err().kind(), ErrorKind::Shared);
    assert_eq!(m.append(1).unwrap_err().kind(), ErrorKind::Shared);
    assert_eq!(keep.data(), b"payl");
    drop(m);
    assert_eq!(pool.in_use(), 1, "memory stays while a reference lives");
    let mut keep = keep;
    keep.data_mut().unwrap()[0] = b'P';
    assert_eq!(keep.data(), b"Payl");

    // A chained (multi-segment) packet reads across segments.
    let mut tail = pool.alloc().unwrap();
    tail.extend_from_slice(b"-tail").unwrap();
    keep.chain(tail).unwrap();
    assert_eq!(keep.nb_segs(), 2);
    assert_eq!(keep.pkt_len(), 9);
    assert_eq!(keep.to_vec(), b"Payl-tail");
    let mut buf = [0u8; 6];
    assert_eq!(keep.read_at(2, &mut buf), 6);
    assert_eq!(&buf, b"yl-tai");
    let shared = keep.clone_ref();
    assert!(!shared.is_unique());
    drop(keep);
    drop(shared);
    assert_eq!(pool.in_use(), 0);

    // A byte range by reference: an indirect mbuf over the same memory.
    let mut m = pool.alloc().unwrap();
    m.extend_from_slice(b"0123456789").unwrap();
    let part = m.slice_ref(&pool, 3, 4).unwrap();
    assert_eq!(part.data(), b"3456");
    assert_eq!(part.data().as_ptr(), m.data()[3..].as_ptr(), "same memory");
    assert!(!part.is_unique() && !m.is_unique());
    assert_eq!(
        m.slice_ref(&pool, 8, 4).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    drop(m);
    assert_eq!(
        part.data(),
        b"3456",
        "the range outlives the original handle"
    );
    drop(part);
    assert_eq!(pool.in_use(), 0, "both mbufs back in the pool");
}

#[test]
fn rings_carry_owned_values_and_free_leftovers() {
    let eal = eal(VDEVS);
    let (mut p, mut c) = ring::spsc::<Box<String>>(&eal, 4).unwrap();
    for i in 0..4 {
        p.push(Box::new(format!("v{i}"))).unwrap();
    }
    let back = p.push(Box::new("overflow".into())).unwrap_err();
    assert_eq!(*back, "overflow");
    assert_eq!(*c.pop().unwrap(), "v0");
    assert_eq!(c.len(), 3);

    let mp = ring::MpmcRing::<Box<u64>>::new(&eal, 1024).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let r = mp.clone();
            std::thread::spawn(move || {
                for i in 0..500u64 {
                    let mut v = Box::new(t * 1000 + i);
                    while let Err(back) = r.push(v) {
                        v = back;
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut sum = 0u64;
    while let Some(v) = mp.pop() {
        sum += *v;
    }
    assert_eq!(sum, (0..500).sum::<u64>() * 2 + 1000 * 500);
}

#[test]
fn lcore_launch_runs_on_worker_and_catches_panics() {
    let eal = eal(VDEVS);
    let workers = lcore::worker_ids();
    assert_eq!(workers, vec![1]);
    // Launching is for the main lcore only.
    on_main(move || {
        let h = lcore::launch(&eal, 1, || (lcore::current(), 6 * 7)).unwrap();
        assert_eq!(h.join().unwrap(), (Some(1), 42));
        let h = lcore::launch(&eal, 1, || -> u32 { panic!("boom on purpose") }).unwrap();
        let e = h.join().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LcorePanicked);
        assert!(e.to_string().contains("boom on purpose"));
        // The lcore is usable again after a panic.
        assert_eq!(lcore::launch(&eal, 1, || 1).unwrap().join().unwrap(), 1);
        assert_eq!(
            lcore::launch(&eal, 0, || 1).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument),
            "the main lcore is not a worker"
        );
    });
    assert!(lcore::tsc_hz() > 0);
}

#[test]
fn missing_device_and_second_init_are_errors() {
    let eal = eal(VDEVS);
    let e = Port::id_by_name(&eal, "net_tap_nope").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(
        e.to_string().contains("net_ring0"),
        "lists available ports: {e}"
    );
    assert_eq!(
        Port::open(&eal, 999).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let again = dpdk::Eal::builder().no_pci(true).init().unwrap_err();
    assert_eq!(again.kind(), ErrorKind::EalAlreadyInitialized);
    // Shutdown is refused while others hold the EAL.
    assert_eq!(eal.clone().shutdown().unwrap_err().kind(), ErrorKind::Busy);
}

#[test]
fn dropping_a_pool_with_mbufs_out_keeps_their_memory() {
    let eal = eal(VDEVS);
    // A size no other test uses: none can reuse this pool once dropped.
    let pool = pool(&eal, 59);
    let name = pool.name().to_owned();
    let mut m = pool.alloc().unwrap();
    m.extend_from_slice(b"still here").unwrap();
    drop(pool); // the mbuf is still out: the pool must stay allocated
    assert_eq!(m.data(), b"still here");
    m.extend_from_slice(b"!").unwrap();
    assert_eq!(m.data(), b"still here!");
    drop(m);
    let usage = eal.mempool_usage();
    let u = usage.iter().find(|u| u.name == name).expect("listed");
    assert!(u.dropped);
    assert_eq!(u.in_use, 0, "the last mbuf went back to the dropped pool");
    // Other handles (the test binary's) still hold the EAL: shutdown is refused.
    assert_eq!(eal.shutdown().unwrap_err().kind(), ErrorKind::Busy);
}
