//! Two TAP vdevs joined by a kernel bridge: a frame sent out of one port arrives on
//! the other, through the real kernel.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{eal, frame, frame_seq, pool};
use dpdk::{MbufBatch, Port, PortConfig};

/// Interface names of this process (concurrent runs of this binary must not
/// share kernel interfaces): TAP ports a and b, and the bridge.
fn names() -> [String; 3] {
    let pid = std::process::id();
    [
        format!("pmdtta{pid}"),
        format!("pmdttb{pid}"),
        format!("pmdtbr{pid}"),
    ]
}

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("run ip");
    assert!(st.success(), "ip {args:?} failed");
}

#[test]
fn frames_cross_a_kernel_bridge_between_two_taps() {
    let [ta, tb, br] = names();
    let vdevs = [
        format!("net_tap0,iface={ta}"),
        format!("net_tap1,iface={tb}"),
    ];
    let eal = eal(&[vdevs[0].as_str(), vdevs[1].as_str()]);
    // TAP rx queues pre-fill every descriptor from the pool: size it for 2×1024 + traffic.
    let pool = pool(&eal, 8191);
    let mut a = Port::open_by_name(&eal, "net_tap0").unwrap();
    let mut b = Port::open_by_name(&eal, "net_tap1").unwrap();
    assert_eq!(a.info().unwrap().driver, "net_tap");
    assert!(a.info().unwrap().if_index > 0);
    let (arx, mut atx) = a.configure(&PortConfig::default(), &pool).unwrap();
    let (mut brx, btx) = b.configure(&PortConfig::default(), &pool).unwrap();
    a.start().unwrap();
    b.start().unwrap();

    let _ = Command::new("ip").args(["link", "del", &br]).status();
    ip(&["link", "add", &br, "type", "bridge"]);
    for dev in [ta.as_str(), tb.as_str()] {
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"), "1");
        ip(&["link", "set", dev, "master", &br]);
        ip(&["link", "set", dev, "up"]);
    }
    ip(&["link", "set", &br, "up"]);
    a.wait_link_up(Duration::from_secs(5)).unwrap();
    b.wait_link_up(Duration::from_secs(5)).unwrap();

    let want = 200u32;
    let mut got = Vec::new();
    let mut next = 0u32;
    let mut rxb = MbufBatch::<32>::new();
    let mut txb = MbufBatch::<32>::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < want as usize && Instant::now() < deadline {
        while next < want && !txb.is_full() {
            let mut m = pool.alloc().unwrap();
            m.extend_from_slice(&frame(next, 256)).unwrap();
            txb.push(m).unwrap();
            next += 1;
        }
        atx[0].tx_burst(&mut txb);
        brx[0].rx_burst(&mut rxb);
        for m in rxb.drain() {
            if let Some(seq) = frame_seq(m.data()) {
                assert_eq!(m.data(), &frame(seq, 256)[..], "frame intact");
                got.push(seq);
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = Command::new("ip").args(["link", "del", &br]).status();
    got.sort_unstable();
    got.dedup();
    // The kernel bridge may drop under a burst; most must arrive, in a clean set.
    assert!(
        got.len() as u32 >= want * 9 / 10,
        "only {} of {want} frames crossed the bridge",
        got.len()
    );
    assert!(got.iter().all(|s| *s < want));
    drop(txb);
    drop(rxb);
    assert!(a.stats().unwrap().opackets >= want as u64);
    assert!(b.stats().unwrap().ipackets >= got.len() as u64);
    // TAP rx queues hold pre-filled mbufs until the ports close.
    drop((arx, atx, brx, btx, a, b));
    assert_eq!(pool.in_use(), 0, "every mbuf back in the pool");
}
