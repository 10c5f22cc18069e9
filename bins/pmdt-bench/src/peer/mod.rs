//! The tools users would pick instead of pmdt, run the same way each time.

pub mod iperf;
pub mod linux_tcp_path;
pub mod quic;
pub mod sockperf;
pub mod testpmd;
