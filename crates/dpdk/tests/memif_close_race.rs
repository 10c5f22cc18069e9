//! Closing both ends of memif pairs at once, with the last one still bursting.
//!
//! When one end closes, the peer's PMD tears its end down on the EAL interrupt
//! thread. Closing (or stopping) that peer from an application thread at the same
//! moment used to run the PMD's teardown twice at once: `free(): invalid pointer`
//! or a segfault at exit, a few runs in a hundred.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eal, frame, pool};
use dpdk::{MbufBatch, Port, PortConfig};

/// Pairs of memif ports: each round uses one pair up (a closed port is gone);
/// Debian builds DPDK for 32 ports.
const PAIRS: u32 = 16;

fn vdevs() -> Vec<String> {
    let pid = std::process::id();
    (0..PAIRS)
        .flat_map(|k| {
            let sock = format!("/tmp/pmdt-test-memif-race-{pid}-{k}.sock");
            [
                format!("net_memif{},role=server,socket={sock},id={k}", 2 * k),
                format!("net_memif{},role=client,socket={sock},id={k}", 2 * k + 1),
            ]
        })
        .collect()
}

#[test]
fn both_ends_closing_at_once_while_bursting_is_safe() {
    let v = vdevs();
    let eal = eal(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let pool = pool(&eal, 4095);
    for k in 0..PAIRS {
        let mut s = Port::open_by_name(&eal, &format!("net_memif{}", 2 * k)).unwrap();
        let mut c = Port::open_by_name(&eal, &format!("net_memif{}", 2 * k + 1)).unwrap();
        let (srx, stx) = s.configure(&PortConfig::default(), &pool).unwrap();
        let (mut crx, mut ctx) = c.configure(&PortConfig::default(), &pool).unwrap();
        s.start().unwrap();
        c.start().unwrap();
        s.wait_link_up(Duration::from_secs(10)).unwrap();
        c.wait_link_up(Duration::from_secs(10)).unwrap();
        // The client bursts both ways on its own thread until told to stop, then
        // closes its port right there: server and client ends alternate as the
        // one that closes first.
        let stop = Arc::new(AtomicBool::new(false));
        let (first, second) = if k % 2 == 0 { (s, c) } else { (c, s) };
        let (mut rx, mut tx, other) = if k % 2 == 0 {
            drop((srx, stx));
            (crx.remove(0), ctx.remove(0), (crx, ctx))
        } else {
            drop((crx, ctx));
            let (mut srx, mut stx) = (srx, stx);
            (srx.remove(0), stx.remove(0), (srx, stx))
        };
        drop(other);
        let burster = {
            let stop = stop.clone();
            let pool = pool.clone();
            std::thread::spawn(move || {
                let mut b = MbufBatch::<32>::new();
                // Bursts go on through the peer's teardown: until this end's link
                // is down (the interrupt thread ran the disconnect), 2 ms more.
                let mut down_at: Option<Instant> = None;
                let deadline = Instant::now() + Duration::from_secs(10);
                while down_at.is_none_or(|t| t.elapsed() < Duration::from_millis(2))
                    && Instant::now() < deadline
                {
                    if down_at.is_none()
                        && stop.load(Ordering::Acquire)
                        && !second.link().unwrap().up
                    {
                        down_at = Some(Instant::now());
                    }
                    rx.rx_burst(&mut b);
                    b.drain().for_each(drop);
                    if let Ok(mut m) = pool.alloc() {
                        m.extend_from_slice(&frame(k, 256)).unwrap();
                        b.push(m).unwrap();
                        tx.tx_burst(&mut b);
                        b.drain().for_each(drop);
                    }
                }
                drop((rx, tx, second));
                down_at.is_some()
            })
        };
        std::thread::sleep(Duration::from_millis(2));
        drop(first);
        stop.store(true, Ordering::Release);
        let saw_down = burster.join().expect("the bursting end closed cleanly");
        assert!(saw_down, "pair {k}: the peer's close took the link down");
    }
    assert_eq!(pool.in_use(), 0, "every mbuf back in the pool");
}
