//! How a connection's delivery compares with its siblings' on the path, as
//! its endpoint last found it (`endpoint::path_shares`).

/// How a flow's delivery compared with the average of the flows to its host,
/// over the endpoint's last check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ShareOnPath {
    /// It delivered less than the flows to its host did on average.
    Behind,
    /// It delivered at least the average (or was not compared: alone, no
    /// loss-based flow on the path, or loss-based itself).
    #[default]
    Even,
}
