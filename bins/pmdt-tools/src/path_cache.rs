//! `pmdt-send`'s path cache: what each transfer learned about the path to its
//! receiver (the controller's bandwidth and propagation delay), saved so the
//! next transfer to the same receiver starts from it instead of doubling from
//! ten datagrams (Careful Resume, RFC 9959; see `pmdt::proto::SavedPath`),
//! the way Linux's TCP keeps a path's metrics between connections.
//!
//! One JSON file, by default `$XDG_CACHE_HOME/pmdt/paths.json` (else
//! `~/.cache/pmdt/paths.json`), keyed by the receiver's address. An entry is
//! used for [`MAX_AGE`] and only when the handshake's RTT confirms the path
//! (the protocol checks that). A transfer saves its path only when every flow
//! to that receiver ended cleanly, left Startup (found the path's rate: a
//! short transfer's estimate is only a lower bound) and mostly had data to
//! send (else the estimate is the application's rate). The cache never fails
//! a transfer: a file that cannot be read or written is a warning, and a file
//! that is not a path cache is never overwritten.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use pmdt::proto::{ConnectionStats, ControllerState, SavedPath};
use serde::{Deserialize, Serialize};

/// How long a saved path is used.
pub const MAX_AGE: Duration = Duration::from_secs(3600);

/// Entries kept (the oldest go first).
const MAX_ENTRIES: usize = 1024;

/// The file's format version.
const FORMAT: u32 = 1;

/// The path cache's options.
#[derive(Debug, Clone, Args, Serialize, Deserialize, Default)]
#[serde(default)]
#[command(next_help_heading = "Path cache")]
pub struct PathCacheArgs {
    /// Where transfers save what they learned about the path to each receiver
    /// (bandwidth, propagation delay) for the next transfer to start from
    /// (Careful Resume, RFC 9959). Default: $XDG_CACHE_HOME/pmdt/paths.json,
    /// else ~/.cache/pmdt/paths.json.
    #[arg(long, value_name = "FILE", conflicts_with = "no_path_cache")]
    pub path_cache: Option<PathBuf>,
    /// Start every flow from cold (doubling from ten datagrams) and save
    /// nothing.
    #[arg(long)]
    pub no_path_cache: bool,
}

impl PathCacheArgs {
    /// The cache file in use, if any.
    pub fn file(&self) -> Option<PathBuf> {
        if self.no_path_cache {
            return None;
        }
        self.path_cache
            .clone()
            .or_else(|| dirs::cache_dir().map(|d| d.join("pmdt").join("paths.json")))
    }
}

/// One receiver's saved path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The bandwidth all flows to the receiver shared, bits/s.
    pub bandwidth_bps: u64,
    /// The smallest propagation delay they measured, µs.
    pub min_rtt_us: u64,
    /// When it was saved, seconds since the Unix epoch.
    pub saved_at: u64,
}

impl Entry {
    /// The path each of `flows` flows to the receiver starts from.
    pub fn for_flows(&self, flows: usize) -> SavedPath {
        SavedPath::new(self.bandwidth_bps, Duration::from_micros(self.min_rtt_us)).share(flows)
    }

    /// Its age at `now`.
    pub fn age(&self, now: SystemTime) -> Duration {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        Duration::from_secs(now.saturating_sub(self.saved_at))
    }
}

/// The most of its time a flow may have had nothing to send for its path to
/// be saved.
pub const MAX_APP_LIMITED_SHARE: f64 = 0.25;

/// How one flow to a receiver went, for [`PathCache::record`].
#[derive(Debug, Clone, Copy)]
pub struct FlowOutcome<'a> {
    /// Its final statistics.
    pub stats: &'a ConnectionStats,
    /// Whether it ended without an error.
    pub clean: bool,
    /// How long it ran, seconds.
    pub seconds: f64,
}

/// The file's contents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathCache {
    /// Format version.
    pub format: u32,
    /// Saved paths by receiver address (`IP:PORT`).
    pub paths: BTreeMap<String, Entry>,
}

/// Why the cache file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading or writing it failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// It is not a path cache of this format.
    #[error("{path}: not a pmdt path cache: {why}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl PathCache {
    /// The cache at `path`; empty when there is no file yet.
    pub fn load(path: &Path) -> Result<Self, CacheError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(CacheError::Io {
                    path: path.into(),
                    source,
                })
            }
        };
        let cache: Self = serde_json::from_str(&text).map_err(|e| CacheError::Format {
            path: path.into(),
            why: e.to_string(),
        })?;
        if cache.format != FORMAT {
            return Err(CacheError::Format {
                path: path.into(),
                why: format!("format {}, this pmdt-send reads {FORMAT}", cache.format),
            });
        }
        Ok(cache)
    }

    /// The receiver's saved path, if saved within [`MAX_AGE`] of `now`.
    pub fn lookup(&self, peer: &str, now: SystemTime) -> Option<Entry> {
        self.paths
            .get(peer)
            .copied()
            .filter(|e| e.age(now) <= MAX_AGE)
    }

    /// Records `flows`' path to `peer`: the sum of their bandwidths and the
    /// smallest of their propagation delays, when every one ended cleanly, left
    /// Startup and was held back by its application for at most
    /// [`MAX_APP_LIMITED_SHARE`] of its time (else the estimate is the
    /// application's rate, and the next transfer's Startup would stop at it).
    /// Returns whether it was recorded.
    pub fn record<'a>(
        &mut self,
        peer: &str,
        flows: impl IntoIterator<Item = FlowOutcome<'a>>,
        now: SystemTime,
    ) -> bool {
        let mut bandwidth = 0u64;
        let mut min_rtt = u64::MAX;
        let mut any = false;
        for f in flows {
            let stats = f.stats;
            let Some(p) = SavedPath::from_stats(stats) else {
                return false;
            };
            let app_limited = stats.blocked_app_us as f64 / 1e6;
            if !f.clean
                || stats.cc_state == ControllerState::Startup
                || app_limited > f.seconds * MAX_APP_LIMITED_SHARE
            {
                return false;
            }
            bandwidth = bandwidth.saturating_add(p.bandwidth_bps);
            min_rtt = min_rtt.min(stats.cc_min_rtt_us);
            any = true;
        }
        if !any {
            return false;
        }
        self.paths.insert(
            peer.to_string(),
            Entry {
                bandwidth_bps: bandwidth,
                min_rtt_us: min_rtt,
                saved_at: now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs(),
            },
        );
        while self.paths.len() > MAX_ENTRIES {
            let oldest = self
                .paths
                .iter()
                .min_by_key(|(_, e)| e.saved_at)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.paths.remove(&k);
            }
        }
        true
    }

    /// Writes the cache to `path` whole or not at all (a temporary file
    /// renamed over it: a concurrent reader sees the old cache or the new).
    pub fn save(&mut self, path: &Path) -> Result<(), CacheError> {
        self.format = FORMAT;
        let io = |source| CacheError::Io {
            path: path.into(),
            source,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        let text = serde_json::to_string_pretty(self).expect("a map of plain values");
        tmp.write_all(text.as_bytes()).map_err(io)?;
        tmp.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(bw: u64, rtt_us: u64, state: ControllerState) -> ConnectionStats {
        let mut s = ConnectionStats::default();
        s.cc_bandwidth_bps = bw;
        s.cc_min_rtt_us = rtt_us;
        s.cc_state = state;
        s
    }

    const T0: Duration = Duration::from_secs(1_800_000_000);

    /// A clean 10 s flow.
    fn ok(stats: &ConnectionStats) -> FlowOutcome<'_> {
        FlowOutcome {
            stats,
            clean: true,
            seconds: 10.0,
        }
    }

    #[test]
    fn flows_to_a_receiver_save_their_sum_and_resume_from_a_share() {
        let now = UNIX_EPOCH + T0;
        let mut c = PathCache::default();
        let a = stats(300_000_000, 40_100, ControllerState::ProbeBwCruise);
        let b = stats(600_000_000, 40_000, ControllerState::ProbeBwUp);
        assert!(c.record("10.0.0.2:9000", [ok(&a), ok(&b)], now));
        let e = c.lookup("10.0.0.2:9000", now).unwrap();
        assert_eq!((e.bandwidth_bps, e.min_rtt_us), (900_000_000, 40_000));
        assert_eq!(
            e.for_flows(3),
            SavedPath::new(300_000_000, Duration::from_millis(40))
        );
        assert_eq!(c.lookup("10.0.0.3:9000", now), None);
        // Used for an hour.
        assert!(c.lookup("10.0.0.2:9000", now + MAX_AGE).is_some());
        assert_eq!(
            c.lookup("10.0.0.2:9000", now + MAX_AGE + Duration::from_secs(1)),
            None
        );
    }

    #[test]
    fn a_failed_flow_a_startup_or_no_model_saves_nothing() {
        let now = UNIX_EPOCH + T0;
        let good = stats(300_000_000, 40_000, ControllerState::ProbeBwCruise);
        let mut app_limited = good.clone();
        app_limited.blocked_app_us = 2_600_000;
        let mut c = PathCache::default();
        let startup = stats(300_000_000, 40_000, ControllerState::Startup);
        let no_model = stats(0, 0, ControllerState::WindowBased);
        for bad in [
            FlowOutcome {
                clean: false,
                ..ok(&good)
            },
            ok(&startup),
            ok(&no_model),
            ok(&app_limited),
        ] {
            assert!(!c.record("p", [ok(&good), bad], now));
        }
        assert!(!c.record("p", [], now));
        assert!(c.paths.is_empty());
        // A quarter of its 10 s with nothing to send is still the path's rate.
        app_limited.blocked_app_us = 2_500_000;
        assert!(c.record("p", [ok(&app_limited)], now));
    }

    #[test]
    fn the_file_round_trips_and_a_foreign_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("paths.json");
        assert_eq!(PathCache::load(&path).unwrap(), PathCache::default());
        let mut c = PathCache::default();
        let s = stats(1_000_000_000, 200_000, ControllerState::ProbeBwDown);
        assert!(c.record("[::1]:9000", [ok(&s)], UNIX_EPOCH + T0));
        c.save(&path).unwrap();
        assert_eq!(PathCache::load(&path).unwrap(), c);
        std::fs::write(&path, "not json").unwrap();
        let e = PathCache::load(&path).unwrap_err().to_string();
        assert!(e.contains("not a pmdt path cache"), "{e}");
        std::fs::write(&path, r#"{"format": 99, "paths": {}}"#).unwrap();
        let e = PathCache::load(&path).unwrap_err().to_string();
        assert!(e.contains("format 99"), "{e}");
    }

    #[test]
    fn the_cache_keeps_the_newest_entries() {
        let s = stats(1_000_000, 1_000, ControllerState::ProbeBwCruise);
        let mut c = PathCache::default();
        for i in 0..MAX_ENTRIES as u64 + 5 {
            let at = UNIX_EPOCH + T0 + Duration::from_secs(i);
            assert!(c.record(&format!("10.0.{}.{}:9000", i / 256, i % 256), [ok(&s)], at));
        }
        assert_eq!(c.paths.len(), MAX_ENTRIES);
        assert!(!c.paths.contains_key("10.0.0.4:9000"));
        assert!(c.paths.contains_key("10.0.0.5:9000"));
    }

    #[test]
    fn no_path_cache_turns_it_off() {
        let args = PathCacheArgs {
            no_path_cache: true,
            ..Default::default()
        };
        assert_eq!(args.file(), None);
        let args = PathCacheArgs {
            path_cache: Some("/tmp/x.json".into()),
            ..Default::default()
        };
        assert_eq!(args.file(), Some(PathBuf::from("/tmp/x.json")));
    }
}
