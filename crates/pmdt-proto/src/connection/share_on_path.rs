//! How a connection's delivery compares with its siblings' on the path, as
//! its endpoint last found it (`endpoint::path_shares`).

/// How a flow's delivery compared with the average of the flows to its host,
/// over the endpoint's last check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ShareOnPath {
    /// It delivered less than the flows to its host did on average.
    Behind,
    /// It delivered at least the average and at most [`AHEAD_OF_AVERAGE`]
    /// times it (or was not compared: alone, no loss-based flow on the path,
    /// or loss-based itself).
    #[default]
    Even,
    /// It delivered more than [`AHEAD_OF_AVERAGE`] times the average (a
    /// model-based flow beside a loss-based one: it gives way, see
    /// `congestion::bbr::ahead_on_path`).
    Ahead,
}

/// A flow that delivered more than this many times the average of the flows
/// to its host is ahead of them: with two flows, over 60 % of their sum
/// (the margin keeps two flows near level from taking turns at giving way).
pub(crate) const AHEAD_OF_AVERAGE: f64 = 1.2;
