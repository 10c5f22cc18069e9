//! `--pool-split`: how the tools divide a DPDK packet pool between the data a
//! side receives and the data it sends ([`PoolSplit`]), by default from the
//! direction its flows carry data.

use clap::ValueEnum;
use pmdt::runtime::PoolSplit;
use serde::{Deserialize, Serialize};

/// The `--pool-split` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolSplitArg {
    /// Half for receiving, half for sending (data both ways).
    Both,
    /// Mostly for data sent (85%): a side that only sends.
    Sending,
    /// Mostly for data received (85%): a side that only receives.
    Receiving,
}

impl From<PoolSplitArg> for PoolSplit {
    fn from(a: PoolSplitArg) -> Self {
        match a {
            PoolSplitArg::Both => PoolSplit::Both,
            PoolSplitArg::Sending => PoolSplit::Sending,
            PoolSplitArg::Receiving => PoolSplit::Receiving,
        }
    }
}

/// Which way a side's flows carry data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFlow {
    /// This side writes, the peer reads.
    Out,
    /// The peer writes, this side reads.
    In,
    /// Both write (--bidir, request/response, or not known in advance).
    Both,
}

impl DataFlow {
    /// The split for a side whose flows carry data this way.
    pub fn split(self) -> PoolSplit {
        match self {
            DataFlow::Out => PoolSplit::Sending,
            DataFlow::In => PoolSplit::Receiving,
            DataFlow::Both => PoolSplit::Both,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_gets_its_split_and_the_flag_maps_one_to_one() {
        assert_eq!(DataFlow::Out.split(), PoolSplit::Sending);
        assert_eq!(DataFlow::In.split(), PoolSplit::Receiving);
        assert_eq!(DataFlow::Both.split(), PoolSplit::Both);
        assert_eq!(PoolSplit::from(PoolSplitArg::Both), PoolSplit::Both);
        assert_eq!(PoolSplit::from(PoolSplitArg::Sending), PoolSplit::Sending);
        assert_eq!(
            PoolSplit::from(PoolSplitArg::Receiving),
            PoolSplit::Receiving
        );
    }
}
