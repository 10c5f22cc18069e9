//! The tools users would pick instead of pmdt, run the same way each time.

pub mod iperf;
pub mod quic;
pub mod sockperf;
pub mod testpmd;
