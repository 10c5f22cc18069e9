//! A memif server and client in one process: frames go both ways, nothing leaks.

mod common;

use std::time::{Duration, Instant};

use common::{eal, frame, frame_seq, pool};
use dpdk::{MbufBatch, Port, PortConfig, RxQueue, TxQueue};

/// The memif pair, on a socket path of this process (concurrent runs of this
/// binary must not share one).
fn vdevs() -> Vec<String> {
    let sock = format!("/tmp/pmdt-test-memif-{}.sock", std::process::id());
    vec![
        format!("net_memif0,role=server,socket={sock},id=7"),
        format!("net_memif1,role=client,socket={sock},id=7"),
    ]
}

fn send_and_receive(tx: &mut TxQueue, rx: &mut RxQueue, pool: &dpdk::Mempool, n: u32) -> Vec<u32> {
    let mut got = Vec::new();
    let mut next = 0;
    let mut txb = MbufBatch::<32>::new();
    let mut rxb = MbufBatch::<32>::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < n as usize && Instant::now() < deadline {
        while next < n && !txb.is_full() {
            let mut m = pool.alloc().unwrap();
            m.extend_from_slice(&frame(next, 1024)).unwrap();
            txb.push(m).unwrap();
            next += 1;
        }
        tx.tx_burst(&mut txb);
        rx.rx_burst(&mut rxb);
        for m in rxb.drain() {
            let seq = frame_seq(m.data()).expect("only our frames on memif");
            assert_eq!(m.data(), &frame(seq, 1024)[..]);
            got.push(seq);
        }
    }
    got
}

#[test]
fn memif_server_and_client_exchange_frames() {
    let v = vdevs();
    let eal = eal(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let pool = pool(&eal, 4095);
    let mut s = Port::open_by_name(&eal, "net_memif0").unwrap();
    let mut c = Port::open_by_name(&eal, "net_memif1").unwrap();
    assert_eq!(s.info().unwrap().driver, "net_memif");
    let (mut srx, mut stx) = s.configure(&PortConfig::default(), &pool).unwrap();
    let (mut crx, mut ctx) = c.configure(&PortConfig::default(), &pool).unwrap();
    s.start().unwrap();
    c.start().unwrap();
    s.wait_link_up(Duration::from_secs(10)).unwrap();
    c.wait_link_up(Duration::from_secs(10)).unwrap();

    let got = send_and_receive(&mut ctx[0], &mut srx[0], &pool, 5000);
    assert_eq!(got, (0..5000).collect::<Vec<_>>(), "client→server in order");
    let got = send_and_receive(&mut stx[0], &mut crx[0], &pool, 5000);
    assert_eq!(got, (0..5000).collect::<Vec<_>>(), "server→client in order");
    assert_eq!(c.stats().unwrap().opackets, 5000);
    assert_eq!(s.stats().unwrap().ipackets, 5000);
    assert_eq!(
        pool.in_use(),
        0,
        "memif rx copies into our pool; all returned"
    );
    drop((srx, stx, crx, ctx, s, c));
    assert_eq!(pool.in_use(), 0, "and none held by the closed ports");
}
