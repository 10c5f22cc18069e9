//! The tools end to end, as users run them: separate processes, real DPDK (memif
//! between processes), the kernel UDP backend, pmdt-wanem in the middle, a killed
//! peer, Ctrl-C, and bad arguments. Assertions are on exit codes, JSON summaries
//! and SHA-256 of the files.

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::*;

/// Without hugepages (`--no-huge`, or the fallback when other processes hold
/// them) the default packet pool still fits the EAL memory: on 4 KiB pages each
/// mbuf takes a page, and the pool is sized for that.
#[test]
fn on_4k_pages_the_default_pool_fits_and_a_file_arrives() {
    let _g = serial();
    let t = file_over_memif("nohuge", &["--no-huge"], 5_000_000);
    assert!(t.send.status.success(), "{}", stderr(&t.send));
    assert!(t.recv.status.success(), "{}", stderr(&t.recv));
    assert_eq!(end(&t.recv)["sha256"], t.sha256.as_str());
    assert_eq!(
        sha_hex(&std::fs::read(t.dir.join("got.bin")).unwrap()),
        t.sha256
    );
}

/// A file sent over memif between a pmdt-send and a pmdt-recv.
struct FileTransfer {
    /// The scratch directory: `src.bin` sent, `got.bin` written.
    dir: Scratch,
    send: std::process::Output,
    recv: std::process::Output,
    /// SHA-256 of the file sent.
    sha256: String,
}

/// Sends a random file of `size` bytes over memif from pmdt-send to pmdt-recv
/// (`--json` both), each started with `flags` too.
fn file_over_memif(name: &str, flags: &[&str], size: usize) -> FileTransfer {
    let dir = tmp(name);
    let src = dir.join("src.bin");
    let sha256 = random_file(&src, size);
    let sock = dir.join("m.sock");
    let out = dir.join("got.bin");
    let (server, client) = (memif("server", &sock), memif("client", &sock));
    let recv_args: Vec<&str> = flags
        .iter()
        .copied()
        .chain(["--vdev", &server, "-o", out.to_str().unwrap(), "--json"])
        .collect();
    let send_args: Vec<&str> = flags
        .iter()
        .copied()
        .chain(["--vdev", &client, "-F", src.to_str().unwrap(), "--json"])
        .collect();
    let (send, recv) = run_pair(&recv_args, &send_args, Duration::from_millis(1500));
    FileTransfer {
        dir,
        send,
        recv,
        sha256,
    }
}

#[test]
fn file_over_memif_between_two_processes_arrives_intact() {
    let _g = serial();
    let d = tmp("memif");
    let src = d.join("src.bin");
    let want = random_file(&src, 20_000_000);
    let sock = d.join("m.sock");
    let out = d.join("got.bin");
    let (so, ro) = run_pair(
        &[
            "--vdev",
            &memif("server", &sock),
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
        &[
            "--vdev",
            &memif("client", &sock),
            "-F",
            src.to_str().unwrap(),
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let sj = end(&so);
    let rj = end(&ro);
    assert_summary_fields(&sj);
    assert_summary_fields(&rj);
    assert_eq!(rj["bytes"], 20_000_000);
    assert_eq!(rj["sha256"], want.as_str());
    assert_eq!(sj["sha256"], want.as_str());
    assert_eq!(sha_hex(&std::fs::read(&out).unwrap()), want);
    // The sender ends with the receiver's receipt.
    // What held the sender back is in its flow's summary, the receiver's has none.
    let limits = &sj["flows"][0]["limited_by"];
    for k in ["window", "pacing", "credit", "app", "late"] {
        assert!(limits[k].is_f64(), "limited_by.{k}: {sj}");
    }
    assert!(rj["flows"][0]["limited_by"].is_null(), "{rj}");
    let receipt = &sj["flows"][0]["receipt"];
    assert_eq!(receipt["bytes"], 20_000_000, "{sj}");
    assert_eq!(receipt["sha256"], want.as_str());
    assert_eq!(receipt["matches"], true);
    assert!(stderr(&so).contains("receiver confirmed 20000000 bytes, sha256 matches"));
    assert!(!d.join("got.bin.part").exists());
    assert!(rj["link"].as_str().unwrap().contains("net_memif0"));
    // Both tools run to completion with one queue unless told otherwise, and
    // say so.
    for o in [&so, &ro] {
        let link = json(o)["start"]["link"].as_str().unwrap().to_owned();
        assert!(link.ends_with("run-to-completion"), "{link}");
    }
    // Ports closed, then the EAL shut down cleanly (no holder left behind),
    // and nothing on the way logged an error (DPDK's own lines included: a
    // quiet memif loop once asked for a receive interrupt before every nap,
    // and DPDK answered each time with "Rx Intr handle unset").
    for o in [&so, &ro] {
        let e = stderr(o);
        assert!(!e.contains("warning:") && !e.contains("error:"), "{e}");
    }
}

/// `--pipeline` on both ends: an I/O lcore per side, rings to the flow threads.
#[test]
fn file_over_memif_pipeline_arrives_intact() {
    let _g = serial();
    let t = file_over_memif("memif-pipeline", &["--pipeline"], 8_000_000);
    let (so, ro, want) = (&t.send, &t.recv, t.sha256.as_str());
    let out = t.dir.join("got.bin");
    let (sj, rj) = (end(so), end(ro));
    for o in [so, ro] {
        let link = json(o)["start"]["link"].as_str().unwrap().to_owned();
        assert!(link.ends_with("pipeline"), "{link}");
    }
    // The load report that closed when the transfer ended counts, however short.
    assert_summary_fields(&sj);
    assert_summary_fields(&rj);
    assert_eq!(rj["bytes"], 8_000_000);
    assert_eq!(rj["sha256"], want);
    assert_eq!(sj["flows"][0]["receipt"]["matches"], true, "{sj}");
    assert_eq!(sha_hex(&std::fs::read(&out).unwrap()), want);
}

/// A transfer through pmdt-wanem over memif: the emulator with `impair`, then
/// a receiver and a sender (each with its extra arguments and `--json`); the
/// emulator is stopped with Ctrl-C once both ends finished. Returns the
/// sender's, the receiver's and the emulator's output.
fn through_wanem(
    d: &std::path::Path,
    impair: &[&str],
    recv: &[&str],
    send: &[&str],
) -> (Output, Output, Output) {
    through_wanem_with(d, impair, recv, send, "")
}

/// [`through_wanem`] with `client_opts` (e.g. `,bsize=16384`) appended to the
/// ends' memif vdevs.
fn through_wanem_with(
    d: &std::path::Path,
    impair: &[&str],
    recv: &[&str],
    send: &[&str],
    client_opts: &str,
) -> (Output, Output, Output) {
    let (a, b) = (d.join("a.sock"), d.join("b.sock"));
    let prefix = format!(
        "{}-{}",
        d.file_name().unwrap().to_string_lossy(),
        std::process::id()
    );
    let vdev_a = format!("net_memif0,role=server,socket={}", a.display());
    let vdev_b = format!("net_memif1,role=server,socket={}", b.display());
    let mut args = vec!["--vdev", &vdev_a, "--vdev", &vdev_b];
    args.extend_from_slice(impair);
    args.extend_from_slice(&["--file-prefix", &prefix, "--json"]);
    let w = spawn(WANEM, &args);
    // Runs until stopped below, however long a busy machine makes the
    // transfer; killed if the test fails first.
    let wanem_guard = KillOnFailure::new(&w);
    std::thread::sleep(Duration::from_millis(1500));
    let (mb, ma) = (
        format!("{}{client_opts}", memif("client", &b)),
        format!("{}{client_opts}", memif("client", &a)),
    );
    let r = spawn(RECV, &[&["--vdev", &mb][..], recv, &["--json"]].concat());
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(SEND, &[&["--vdev", &ma][..], send, &["--json"]].concat());
    let (so, ro) =
        finish_sender_then_receiver(s, Duration::from_secs(60), r, Duration::from_secs(30));
    wanem_guard.disarm();
    signal(&w, libc::SIGINT);
    let wo = finish(w, Duration::from_secs(10));
    (so, ro, wo)
}

#[test]
fn through_wanem_with_loss_reordering_and_duplication() {
    let _g = serial();
    let d = tmp("wanem");
    let pcap = d.join("wan.pcap");
    let (so, ro, wo) = through_wanem(
        &d,
        &[
            "--loss",
            "0.01",
            "--reorder",
            "0.02",
            "--duplicate",
            "0.01",
            "--delay-ms",
            "1",
            "--queue-bytes",
            "2M",
            "--pcap",
            pcap.to_str().unwrap(),
        ],
        &[],
        &["-n", "8M", "--cc", "cubic"],
    );
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (end(&so), end(&ro), json(&wo));
    assert_eq!(rj["bytes"], 8 << 20, "-n 8M is 8 MiB");
    assert_eq!(rj["sha256"], sj["sha256"]);
    assert!(sj["packets_retransmitted"].as_u64().unwrap() > 0);
    let ab = &wj["a_to_b"];
    assert!(ab["lost"].as_u64().unwrap() > 0 && ab["reordered"].as_u64().unwrap() > 0);
    assert!(ab["duplicated"].as_u64().unwrap() > 0);
    assert_eq!(wo.status.code(), Some(130));
    assert_eq!(wj["impairment"]["queue_bytes"], 2 << 20, "--queue-bytes 2M");
    assert_eq!(wj["pool"]["size"], 65535, "{wj}");
    assert_eq!(wj["pool"]["ran_dry"], false, "{wj}");
    // --pcap: every forwarded frame (pcap header, then a record per frame).
    let forwarded = ab["forwarded"].as_u64().unwrap() + wj["b_to_a"]["forwarded"].as_u64().unwrap();
    let pcap = std::fs::read(&pcap).unwrap();
    assert_eq!(&pcap[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "pcap magic");
    assert_eq!(
        u32::from_le_bytes(pcap[20..24].try_into().unwrap()),
        1,
        "Ethernet"
    );
    let (mut at, mut frames) = (24, 0u64);
    while at + 16 <= pcap.len() {
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        // Ethernet: IPv4 or ARP, frames the tools sent.
        let ethertype = &pcap[at + 16 + 12..at + 16 + 14];
        assert!(
            ethertype == [0x08, 0x00] || ethertype == [0x08, 0x06],
            "{ethertype:?}"
        );
        at += 16 + caplen;
        frames += 1;
    }
    assert_eq!(at, pcap.len(), "whole records");
    // One record per frame queued for an egress port (at most a burst per port
    // still queued when it stopped).
    assert!(
        (forwarded..=forwarded + 64).contains(&frames),
        "{frames} records, {forwarded} forwarded"
    );
    assert!(stderr(&wo).contains("frames written to the pcap file"));
}

/// `pmdt-wanem --rate-at`: the bottleneck's rate changes under a transfer,
/// counted from the first frame. 4 MiB behind 2 Mbit/s would take 17 s; the
/// change to 1 Gbit/s one second in lets it finish long before that, intact,
/// and the report says when the change was made.
#[test]
fn through_wanem_the_rate_changes_under_a_transfer() {
    let _g = serial();
    let d = tmp("wanem-rate-at");
    let (so, ro, wo) = through_wanem(
        &d,
        &[
            "--rate",
            "2mbit",
            "--rate-at",
            "1=1gbit",
            "--queue-bytes",
            "64K",
        ],
        &[],
        &["-n", "4M"],
    );
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (end(&so), end(&ro), json(&wo));
    assert_eq!(rj["bytes"], 4 << 20);
    assert_eq!(rj["sha256"], sj["sha256"]);
    let changes = wj["rate_changes"].as_array().expect("rate_changes");
    assert_eq!(changes.len(), 1, "{wj}");
    assert_eq!(changes[0]["rate_bps"], 1_000_000_000u64);
    assert!(changes[0]["at_s"].as_f64().unwrap() >= 1.0, "{wj}");
    let secs = sj["seconds"].as_f64().unwrap();
    assert!(secs < 12.0, "the change did not take: {secs} s for 4 MiB");
    assert!(stderr(&wo).contains("after the first frame: rate now 1.00 Gbit/s"));
}

/// `--cc bbr,cubic -P 2`: the flows take the listed controllers in turn and
/// share one emulated bottleneck; each arrives intact and says which
/// controller paced it. The bottleneck's queue (32 KiB) is too shallow for the
/// flows' start-ups, and pmdt-wanem says whose frames it dropped
/// (`--log-overflows`, `queue_drops_by_flow`).
#[test]
fn through_wanem_flows_of_two_controllers_share_the_path() {
    let _g = serial();
    let d = tmp("wanem-cc-list");
    let (so, ro, wo) = through_wanem(
        &d,
        &[
            "--rate",
            "200mbit",
            "--delay-ms",
            "2",
            "--loss",
            "0.001",
            "--queue-bytes",
            "32K",
            "--log-overflows",
        ],
        &["-N", "2"],
        &["-n", "8M", "-P", "2", "--cc", "bbr,cubic"],
    );
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (end(&so), end(&ro), json(&wo));
    assert_eq!(rj["bytes"], 8 << 20, "{rj}");
    let flows = sj["flows"].as_array().unwrap();
    let ccs: Vec<_> = flows.iter().map(|f| f["congestion"].as_str()).collect();
    assert_eq!(ccs, [Some("bbr"), Some("cubic")], "{sj}");
    for f in flows {
        assert_eq!(f["receipt"]["matches"], true, "{f}");
    }
    assert!(wj["a_to_b"]["forwarded"].as_u64().unwrap() > 0, "{wj}");
    assert!(stderr(&so).contains("(cubic)"), "{}", stderr(&so));
    // Every queue drop is a flow's: the sender's UDP ends, and the
    // connection id of the data packets (an Init has none yet).
    let drops = wj["a_to_b"]["queue_drops"].as_u64().unwrap();
    assert!(drops > 0, "a 32 KiB queue overflows: {wj}");
    let by_flow = wj["a_to_b"]["queue_drops_by_flow"].as_array().unwrap();
    let per_flow: u64 = by_flow
        .iter()
        .map(|f| f["queue_drops"].as_u64().unwrap())
        .sum();
    assert_eq!(per_flow, drops, "{wj}");
    let names: Vec<&str> = by_flow
        .iter()
        .map(|f| f["flow"].as_str().unwrap())
        .collect();
    assert!(names.iter().all(|n| n.contains('>')), "{wj}");
    assert!(names.iter().any(|n| n.contains(" cid ")), "{wj}");
    // A line per overflow: each flow dropping no more than it offered (and
    // one of those above if it dropped any), and the lines together account
    // for every drop.
    let wanem_err = stderr(&wo);
    let lines: Vec<&str> = wanem_err
        .lines()
        .filter_map(|l| l.strip_prefix("pmdt-wanem: A->B overflow at "))
        .collect();
    assert!(!lines.is_empty(), "{wanem_err}");
    let mut dropped = 0;
    for line in &lines {
        let (_, flows) = line.split_once(": ").expect("flows after the time");
        for f in flows.split("; ") {
            let (name, counts) = f.rsplit_once(" dropped ").expect("a flow's counts");
            let (d, o) = counts.split_once(" of ").expect("dropped of offered");
            let (d, o): (u64, u64) = (d.parse().unwrap(), o.parse().unwrap());
            assert!(d <= o && (d == 0 || names.contains(&name)), "{line}");
            dropped += d;
        }
    }
    assert_eq!(dropped, drops, "{wanem_err}");
}

/// A random file of `len` bytes sent (`-F`) through pmdt-wanem with `impair` and
/// written (`-o`) by the receiver, both ends given `extra` and their memif
/// vdevs `client_opts`: both succeed, the file arrives intact and the receipt
/// matches. The sender's and pmdt-wanem's summaries and pmdt-wanem's stderr.
fn file_through_wanem(
    name: &str,
    len: usize,
    impair: &[&str],
    extra: &[&str],
    client_opts: &str,
) -> (serde_json::Value, serde_json::Value, String) {
    let d = tmp(name);
    let src = d.join("src.bin");
    let want = random_file(&src, len);
    let out = d.join("got.bin");
    let (so, ro, wo) = through_wanem_with(
        &d,
        impair,
        &[extra, &["-o", out.to_str().unwrap()]].concat(),
        &[extra, &["-F", src.to_str().unwrap()]].concat(),
        client_opts,
    );
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (end(&so), end(&ro), json(&wo));
    assert_eq!(rj["sha256"], want.as_str());
    assert_eq!(sha_hex(&std::fs::read(&out).unwrap()), want);
    assert_eq!(sj["flows"][0]["receipt"]["matches"], true, "{sj}");
    (sj, wj, stderr(&wo))
}

/// `pmdt-wanem --corrupt`: bits flipped in UDP payloads on the way; the
/// receiver's checksum rejects those frames and the transport retransmits, so
/// the file arrives intact. `--mtu` above the tools' datagrams drops nothing.
#[test]
fn through_wanem_with_corruption_the_file_arrives_intact() {
    let _g = serial();
    let (sj, wj, werr) = file_through_wanem(
        "wanem-corrupt",
        4_000_000,
        &["--corrupt", "0.02", "--mtu", "1500"],
        &[],
        "",
    );
    let ab = &wj["a_to_b"];
    assert!(ab["corrupted"].as_u64().unwrap() > 0, "{wj}");
    assert_eq!(ab["checksum_drops"], 0, "memif frames carry a checksum");
    assert_eq!(ab["mtu_drops"], 0, "{wj}");
    assert_eq!(wj["impairment"]["corrupt"], 0.02);
    // Every corrupted data frame was rejected and sent again.
    assert!(sj["packets_retransmitted"].as_u64().unwrap() > 0, "{sj}");
    assert!(werr.contains(" corrupt "), "{werr}");
}

/// Jumbo frames through pmdt-wanem, whose mbufs (2 KiB) hold one in a chain of
/// segments: lost, corrupted (in a chained copy) and forwarded whole, and the
/// file arrives intact in full-size datagrams.
#[test]
fn through_wanem_jumbo_frames_arrive_intact_despite_loss_and_corruption() {
    let _g = serial();
    let (sj, wj, _) = file_through_wanem(
        "wanem-jumbo",
        20_000_000,
        &["--loss", "0.01", "--corrupt", "0.02", "--delay-ms", "1"],
        &["--mtu", "9000"],
        ",bsize=16384",
    );
    let ab = &wj["a_to_b"];
    assert!(ab["corrupted"].as_u64().unwrap() > 0, "{wj}");
    assert!(ab["lost"].as_u64().unwrap() > 0, "{wj}");
    assert_eq!(
        ab["no_buffer"], 0,
        "a segmented frame is corrupted, not dropped: {wj}"
    );
    // 20 MB in 8932-byte payloads: about 2,240 data datagrams, plus what was
    // sent again; in 1432-byte ones it would take 14,000.
    let sent = sj["packets_sent"].as_u64().unwrap();
    assert!(
        (2_200..4_000).contains(&sent),
        "{sent} packets: not jumbo size; {sj}"
    );
}

/// A pool too small for what the path holds (`--pool-size`): a sender paced at
/// ten times a 10 Mbit/s bottleneck fills its 4 MiB queue past the pool's 1,024
/// frames however fast the machine, the ports stop receiving while the queue
/// holds every mbuf, frames wait in the ends' rings (nothing is lost), and
/// pmdt-wanem says the pool ran dry.
#[test]
fn through_wanem_a_pool_too_small_for_the_path_is_reported() {
    let _g = serial();
    let d = tmp("wanem-pool");
    let (so, ro, wo) = through_wanem(
        &d,
        &[
            "--rate",
            "10mbit",
            "--queue-bytes",
            "4M",
            "--pool-size",
            "1024",
        ],
        &[],
        &["-n", "4M", "--cc", "paced", "--rate", "100mbit"],
    );
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (end(&so), end(&ro), json(&wo));
    assert_eq!(rj["bytes"], 4 << 20, "{rj}");
    assert_eq!(sj["flows"][0]["receipt"]["matches"], true, "{sj}");
    assert_eq!(wj["pool"]["size"], 1024, "{wj}");
    assert_eq!(wj["pool"]["ran_dry"], true, "{wj}");
    assert_eq!(wj["a_to_b"]["lost"], 0, "{wj}");
    assert_eq!(wj["a_to_b"]["queue_drops"], 0, "{wj}");
    assert!(
        stderr(&wo).contains("ran dry") && stderr(&wo).contains("raise --pool-size"),
        "{}",
        stderr(&wo)
    );
}

/// Several flows from a config file over kernel UDP, each receiver's
/// connection written to its own file: one thread serving every flow on each
/// side (run to completion's default).
#[test]
fn kernel_udp_backend_with_a_toml_config_and_several_flows() {
    several_flows_over_kernel_udp("udp", &[]);
}

/// The same with `--thread-per-flow` on both sides: a thread per flow, each
/// running the I/O loop in its own calls.
#[test]
fn several_flows_with_a_thread_each() {
    several_flows_over_kernel_udp("udp-threads", &["--thread-per-flow"]);
}

/// The same in pipeline mode: one thread serves every flow on each side
/// there too, waiting through the poller while the I/O threads move data.
#[test]
fn several_flows_from_one_thread_in_pipeline_mode() {
    several_flows_over_kernel_udp("udp-pipeline", &["--pipeline"]);
}

fn several_flows_over_kernel_udp(name: &str, extra: &[&str]) {
    let _g = serial();
    let d = tmp(name);
    let cfg = d.join("send.toml");
    std::fs::write(
        &cfg,
        "backend = \"udp\"\nbytes = \"9M\"\nflows = 3\ncc = \"newreno\"\nbuffer = \"2M\"\n",
    )
    .unwrap();
    let dir = d.to_str().unwrap();
    let recv_args = [
        &["--backend", "udp", "--bind", "127.0.0.1:39321", "-N", "3"][..],
        &["-o", dir, "--json"],
        extra,
    ]
    .concat();
    let cfg_path = cfg.to_str().unwrap();
    let send_args = [
        &["--config", cfg_path, "--to", "127.0.0.1:39321", "--json"][..],
        extra,
    ]
    .concat();
    let (so, ro) = run_pair(&recv_args, &send_args, Duration::from_millis(500));
    let (sj, rj) = (end(&so), end(&ro));
    assert_eq!(
        sj["flows"].as_array().unwrap().len(),
        3,
        "flows from the file"
    );
    assert_eq!(
        rj["bytes"],
        9 << 20,
        "-n 9M in total over the 3 flows, as iperf3"
    );
    for f in sj["flows"].as_array().unwrap() {
        assert_eq!(f["bytes"], 3 << 20, "an equal share each: {f}");
        assert_eq!(f["receipt"]["matches"], true, "{f}");
    }
    let mut sent: Vec<String> = sj["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_string())
        .collect();
    let mut got: Vec<String> = rj["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_string())
        .collect();
    sent.sort();
    got.sort();
    assert_eq!(sent, got);
    // One file per connection in the directory, each matching its hash.
    for f in rj["flows"].as_array().unwrap() {
        let p = f["path"].as_str().unwrap();
        assert_eq!(
            sha_hex(&std::fs::read(p).unwrap()),
            f["sha256"].as_str().unwrap()
        );
    }
}

/// `-o /dev/null` (discarding, as with iperf3) writes the device in place: the
/// receiver never renames a `.part` file over it (as root that replaced
/// `/dev/null` with a regular file), and several connections may share it.
#[test]
fn output_to_dev_null_leaves_the_device_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let _g = serial();
    let (so, ro) = run_pair(
        &[
            "--backend",
            "udp",
            "--bind",
            "127.0.0.1:39327",
            "-N",
            "2",
            "-o",
            "/dev/null",
            "--json",
        ],
        &[
            "--backend",
            "udp",
            "--to",
            "127.0.0.1:39327",
            "-P",
            "2",
            "-n",
            "2M",
            "--json",
        ],
        Duration::from_millis(500),
    );
    let (sj, rj) = (end(&so), end(&ro));
    assert_eq!(rj["bytes"], 2 << 20, "{rj}");
    for f in sj["flows"].as_array().unwrap() {
        assert_eq!(f["receipt"]["matches"], true, "{f}");
    }
    let t = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(t.is_char_device(), "/dev/null is no longer a device");
    assert!(!std::path::Path::new("/dev/null.part").exists());
}

#[test]
fn a_killed_receiver_ends_the_sender_with_a_timeout_error() {
    // Over kernel UDP: what is tested is the transport's idle timeout. DPDK
    // 22.11's memif PMD unmaps its rings when the peer goes away without waiting
    // for a burst in progress, so a sender preempted mid-burst at that moment
    // can die of it (seen once in CI); see the README's known limitation.
    let _g = serial();
    let port = common::free_udp_port();
    let addr = format!("127.0.0.1:{port}");
    let mut r = spawn(RECV, &["--backend", "udp", "--bind", &addr]);
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(
        SEND,
        &[
            "--backend",
            "udp",
            "--to",
            &addr,
            "-n",
            "100G",
            "--idle-timeout",
            "2",
            "--cc",
            "paced",
            "--rate",
            "200mbit",
        ],
    );
    std::thread::sleep(Duration::from_millis(2500));
    r.kill(); // SIGKILL: no goodbye
    let killed = Instant::now();
    let so = finish(s, Duration::from_secs(30));
    let err = stderr(&so);
    assert_eq!(so.status.code(), Some(1), "{err}");
    assert!(err.contains("timed out"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(
        killed.elapsed() < Duration::from_secs(12),
        "ended within the idle timeout (+ teardown)"
    );
}

#[test]
fn ctrl_c_stops_the_receiver_without_leaving_a_partial_file() {
    stop_receiver_mid_transfer("sigint", libc::SIGINT, false);
}

/// Issue 11 item 3: `kill`, systemd and scripts send SIGTERM; it must stop the
/// receiver as cleanly as Ctrl-C (summary, part file removed).
#[test]
fn sigterm_stops_the_receiver_like_ctrl_c() {
    stop_receiver_mid_transfer("sigterm", libc::SIGTERM, false);
}

/// Issue 11 item 2: a receiver whose flow has stalled (the sender vanished) stops
/// on the first Ctrl-C, within the shutdown timeout, with its summary.
#[test]
fn ctrl_c_stops_a_receiver_with_a_stalled_flow() {
    stop_receiver_mid_transfer("stalled", libc::SIGINT, true);
}

/// A receiver on memif socket `sock` writing what it gets to `out`, with a
/// JSON summary (and `extra` options), given time to come up.
fn file_receiver(sock: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> Proc {
    let server = memif("server", sock);
    let mut args = vec!["--vdev", &server, "-o", out.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let r = spawn(RECV, &args);
    std::thread::sleep(Duration::from_millis(1500));
    r
}

/// Starts a receiver writing a file and a sender, optionally kills the sender
/// (the flow stalls), then sends `signal` to the receiver: it must exit 130 with
/// a JSON summary and no file under either name.
fn stop_receiver_mid_transfer(name: &str, sig: i32, stall: bool) {
    let _g = serial();
    let d = tmp(name);
    let sock = d.join("m.sock");
    let out = d.join("big.bin");
    let r = file_receiver(&sock, &out, &[]);
    let mut sender = Some(spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-n",
            "100G",
            "--idle-timeout",
            if stall { "30" } else { "2" },
            "--cc",
            "paced",
            "--rate",
            "200mbit",
        ],
    ));
    std::thread::sleep(Duration::from_millis(2500));
    if stall {
        let mut s = sender.take().expect("spawned");
        s.kill(); // SIGKILL: the receiver's flow stalls, no goodbye
        std::thread::sleep(Duration::from_millis(500));
    }
    signal(&r, sig);
    let ro = finish(r, Duration::from_secs(20));
    assert_eq!(ro.status.code(), Some(130), "{}", stderr(&ro));
    let rj = end(&ro);
    assert_eq!(rj["interrupted"], true);
    assert!(
        rj["bytes"].as_u64().unwrap() > 0,
        "the summary counts what arrived"
    );
    assert!(!out.exists(), "no partial file under the final name");
    assert!(
        !d.join("big.bin.part").exists(),
        "the partial file is removed"
    );
    if let Some(s) = sender {
        let so = finish(s, Duration::from_secs(30));
        assert_ne!(so.status.code(), Some(0));
    }
}

/// A sender stopped by SIGTERM ends its flows at once (no drain) and reports what
/// the receiver acknowledged; the receiver's flow fails with the reason, and
/// what it wrote is not kept as a whole file (a stream the sender just dropped
/// would end gracefully, and the receiver would keep a truncated file).
#[test]
fn sigterm_stops_the_sender_with_acknowledged_bytes() {
    let _g = serial();
    let d = tmp("sigterm-send");
    let sock = d.join("m.sock");
    let out = d.join("big.bin");
    let r = file_receiver(&sock, &out, &["-N", "1"]);
    let s = spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-n",
            "100G",
            "--cc",
            "paced",
            "--rate",
            "200mbit",
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(2500));
    signal(&s, libc::SIGTERM);
    let so = finish(s, Duration::from_secs(20));
    assert_eq!(so.status.code(), Some(130), "{}", stderr(&so));
    let sj = end(&so);
    assert_eq!(sj["interrupted"], true);
    let flow = &sj["flows"][0];
    assert_eq!(flow["error"], "interrupted");
    assert!(
        flow["bytes"].as_u64().unwrap() > 0,
        "acknowledged bytes: {flow}"
    );
    let ro = finish(r, Duration::from_secs(20));
    assert_eq!(ro.status.code(), Some(1), "{}", stderr(&ro));
    let rflow = &end(&ro)["flows"][0];
    assert_eq!(
        rflow["error"], "the peer stopped the flow: it was interrupted (reset, code 130)",
        "{rflow}"
    );
    assert!(!out.exists(), "no truncated file under the final name");
    assert!(
        !d.join("big.bin.part").exists(),
        "the partial file is removed"
    );
}

#[test]
fn bad_arguments_give_one_clear_line_and_a_nonzero_exit() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            SEND,
            &["--flows", "0", "--backend", "udp"],
            "--flows must be between 1 and 100000",
        ),
        (
            SEND,
            &["--rate", "5gbit", "--backend", "udp"],
            "--rate applies to --cc paced",
        ),
        (SEND, &["--cc", "paced", "--backend", "udp"], "needs --rate"),
        (
            SEND,
            &["--fast-start", "--cc", "cubic", "--backend", "udp"],
            "--fast-start applies to --cc bbr",
        ),
        (SEND, &["-n", "lots", "--backend", "udp"], "is not a size"),
        (
            SEND,
            &["--buffer", "8Q", "--backend", "udp"],
            "is not a size",
        ),
        (
            SEND,
            &["-c", "no-such-host.invalid", "--backend", "udp"],
            "cannot resolve",
        ),
        (
            SEND,
            &["-c", "10.0.0.2:http", "--backend", "udp"],
            "not a port",
        ),
        (
            SEND,
            &["-R", "-F", "/etc/hostname", "--backend", "udp"],
            "cannot be used with",
        ),
        (
            SEND,
            &["--rxq", "2", "--txq", "3"],
            "pmdt drives queue pairs",
        ),
        (
            SEND,
            &["--rtc", "--rxq", "2", "--txq", "2"],
            "--run-to-completion drives one queue",
        ),
        (SEND, &["--rtc", "--pipeline"], "cannot be used with"),
        (SEND, &["-i", "0.01", "--backend", "udp"], "interval"),
        (SEND, &["-c", "0x3", "--", "-n", "1M"], "coremask"),
        (WANEM, &["--queue-bytes", "1Z"], "is not a size"),
        (
            SEND,
            &["--payload", "50", "--backend", "udp"],
            "max_datagram",
        ),
        (
            RECV,
            &["-o", "/nonexistent-dir/x.bin", "--backend", "udp"],
            "does not exist",
        ),
        (
            RECV,
            &["-o", "/tmp/x.bin", "-N", "2", "--backend", "udp"],
            "is a file",
        ),
        (
            SEND,
            &["--max-buffer", "512000000", "-P", "2"],
            "does not fit the packet pool",
        ),
        (
            RECV,
            &["--max-buffer", "512000000", "--pool-size", "4095"],
            "raise --memory-mb",
        ),
        (
            SEND,
            &["-P", "4", "--stagger", "-1", "--backend", "udp"],
            "--stagger must be 0 to 86400 seconds (a day), got -1",
        ),
        (
            SEND,
            &[
                "-P",
                "2",
                "--stagger",
                "1e300",
                "-n",
                "1M",
                "--backend",
                "udp",
            ],
            "--stagger must be 0 to 86400 seconds",
        ),
        (
            SEND,
            &["-P", "4", "--stagger", "4", "-t", "12", "--backend", "udp"],
            "starts flow 4 at 12 s, after the run's 12 s end",
        ),
        (
            SEND,
            &["-P", "2", "--stagger", "1", "-R", "--backend", "udp"],
            "cannot be used with",
        ),
        (SEND, &["--cc", "bbr,vegas"], "unknown controller 'vegas'"),
        (
            SEND,
            &["--cc", "bbr,cubic"],
            "names 2 controllers for 1 flow(s)",
        ),
        (
            SEND,
            &["--cc", "bbr,cubic", "-P", "2", "-R"],
            "with -R the receiver sends",
        ),
        (
            SEND,
            &["--cc", "bbr,paced", "-P", "2", "--rate", "1k"],
            "--cc paced",
        ),
        (RECV, &["--cc", "bbr,cubic"], "one controller"),
        (WANEM, &["--loss", "2"], "probability"),
        (
            WANEM,
            &["--pool-size", "100"],
            "--pool-size must be at least 1024 mbufs, got 100",
        ),
        (
            WANEM,
            &["--corrupt", "1.5"],
            "--corrupt must be a probability in [0, 1], got 1.5",
        ),
        (WANEM, &["--corrupt", "x"], "invalid value 'x'"),
        (
            WANEM,
            &["--mtu", "40"],
            "--mtu must be at least 68 bytes (the IPv4 minimum), got 40",
        ),
        (WANEM, &["--vdev", "net_null0"], "exactly two ports"),
        (
            WANEM,
            &[
                "--udp-listen",
                "127.0.0.1:0",
                "--udp-to",
                "127.0.0.1:9",
                "--vdev",
                "net_null0",
            ],
            "do not apply",
        ),
        (
            WANEM,
            &[
                "--udp-listen",
                "127.0.0.1:0",
                "--udp-to",
                "nosuchhost.invalid:9",
            ],
            "--udp-to nosuchhost.invalid:9",
        ),
        (
            SEND,
            &["--backend", "dpdk", "--vdev", "net_nosuchpmd0"],
            "DPDK",
        ),
    ];
    let _g = serial();
    for (bin, args, want) in cases {
        let o = finish(spawn(bin, args), Duration::from_secs(30));
        let (err, st) = (stderr(&o), o.status);
        assert!(!st.success(), "{bin} {args:?} succeeded");
        assert!(err.contains(want), "{bin} {args:?}: {err}");
        assert!(err.contains("error:") || err.contains("error"), "{err}");
        assert!(!err.contains("panicked"), "{bin} {args:?} panicked: {err}");
    }
    // Unknown key in a config file.
    let d = tmp("badcfg");
    let cfg = d.join("x.toml");
    std::fs::write(&cfg, "no_such_option = 1\n").unwrap();
    let o = Command::new(SEND)
        .args(["--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown option"), "{}", stderr(&o));
    // Address in use on the UDP backend.
    let hold = std::net::UdpSocket::bind("127.0.0.1:39333").unwrap();
    let o = Command::new(RECV)
        .args(["--backend", "udp", "--bind", "127.0.0.1:39333"])
        .output()
        .unwrap();
    drop(hold);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
}

#[test]
fn jumbo_frames_over_memif_carry_full_size_packets() {
    let _g = serial();
    let d = tmp("jumbo");
    let sock = d.join("j.sock");
    let vdev = |role: &str| format!("{},bsize=16384", memif(role, &sock));
    let (so, ro) = run_pair(
        &["--vdev", &vdev("server"), "--mtu", "9000", "--json"],
        &[
            "--vdev",
            &vdev("client"),
            "--mtu",
            "9000",
            "-n",
            "40M",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let (sj, rj) = (end(&so), end(&ro));
    assert_eq!(rj["sha256"], sj["sha256"]);
    // 40 MiB in 8932-byte payloads: about 4,700 data packets (plus a few controls).
    let data_packets = rj["link_stats"]["rx_datagrams"].as_u64().unwrap();
    assert!(
        (4_400..5_000).contains(&data_packets),
        "{data_packets} datagrams: packets are not full jumbo size"
    );
    assert_eq!(sj["link_stats"]["payload_copies"], 0);
    // A payload that does not fit the MTU is refused with a hint.
    let o = Command::new(SEND)
        .args(["--backend", "udp", "--payload", "9000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("does not fit the MTU"),
        "{}",
        stderr(&o)
    );
}

/// The packet pool goes mostly to the direction the data takes: 150 MB in flight
/// per flow fits the default pool (165,564 mbufs) on a sender (185 MB of send
/// storage) and on a receiver (201 MB of credit), and not with the pool split
/// evenly (102 MB unacknowledged).
#[test]
fn the_pool_split_follows_the_direction_of_the_data() {
    let dry = |bin: &str, extra: &[&str]| {
        let mut args = vec!["--max-buffer", "150M", "--dry-run"];
        args.extend_from_slice(extra);
        finish(spawn(bin, &args), Duration::from_secs(10))
    };
    for (bin, extra) in [
        (SEND, &[][..]),
        (SEND, &["-R"][..]),
        (RECV, &[][..]),
        (SEND, &["--pool-split", "receiving", "-R"][..]),
    ] {
        let o = dry(bin, extra);
        assert!(o.status.success(), "{bin} {extra:?}: {}", stderr(&o));
    }
    for (bin, extra) in [
        (SEND, &["--pool-split", "both"][..]),
        (RECV, &["--pool-split", "both"][..]),
        (SEND, &["--bidir"][..]),
        // A receiver's default leaves little for sending.
        (SEND, &["--pool-split", "receiving"][..]),
    ] {
        let o = dry(bin, extra);
        assert!(!o.status.success(), "{bin} {extra:?} passed");
        assert!(
            stderr(&o).contains("does not fit the packet pool"),
            "{bin} {extra:?}: {}",
            stderr(&o)
        );
    }
}
