//! pmdt: windowed reliable transport over UDP, in the spirit of RMDT.
pub mod range_set;
pub mod rtt;
pub mod wire;
