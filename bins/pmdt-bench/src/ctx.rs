//! What every experiment gets: where the binaries and results are, quick or full,
//! repeats, timeouts, and unique names for each process pair's DPDK files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::proc;

/// Shared settings of a run.
pub struct Ctx {
    /// Directory with pmdt-send, pmdt-recv, pmdt-wanem, pmdt-load-sweep.
    pub bin_dir: PathBuf,
    /// Results directory.
    pub out: PathBuf,
    /// Tiny runs (CI smoke).
    pub quick: bool,
    /// Runs per cell.
    pub repeat: usize,
    /// Upper bound on one cell's run, whatever its size (`--cell-timeout`).
    pub cell_timeout: Option<Duration>,
    /// Whose CPU `pmdt-wanem` shares (`--wanem-beside`).
    pub wanem_beside: WanemBeside,
    seq: AtomicU32,
}

/// Whose CPU `pmdt-wanem` shares on the two-CPU hosts the runner is made for,
/// where the receiver runs on CPU 0 and the sender on CPU 1 (run to
/// completion: each side's flow thread runs its I/O loop on its main lcore).
///
/// Beside the receiver, the default since session 89: a sender that shares its
/// core loses it for milliseconds at a time (late for its pacing 14-20 % of a
/// minute through `pmdt-wanem`, 5-7 % beside the receiver), and its pacer
/// catches up after each absence in a burst into the emulated bottleneck.
/// Beside the sender BBR took more of a link it shared with a CUBIC flow in
/// 10 of 13 alternated pairs, further from the simulator's figures. A
/// receiver that shares its core delays acknowledgments instead (the fall of
/// the bottleneck was followed later: 1.16-1.36 s at 40 ms, within the 2-s
/// target). docs/RESULTS.md, "Session 89", has both placements side by side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum WanemBeside {
    /// `pmdt-wanem` on CPU 0, with the receiver.
    #[default]
    Receiver,
    /// `pmdt-wanem` on CPU 1, with the sender (the placement until session 89).
    Sender,
}

impl WanemBeside {
    /// The CPU `pmdt-wanem`'s lcore is pinned to.
    pub fn cpu(self) -> u32 {
        match self {
            WanemBeside::Receiver => 0,
            WanemBeside::Sender => 1,
        }
    }

    /// The end it shares a CPU with, for the reports' notes.
    pub fn end(self) -> &'static str {
        match self {
            WanemBeside::Receiver => "receiver",
            WanemBeside::Sender => "sender",
        }
    }
}

impl Ctx {
    /// A context.
    pub fn new(
        bin_dir: PathBuf,
        out: PathBuf,
        quick: bool,
        repeat: usize,
        cell_timeout: Option<Duration>,
    ) -> Self {
        Ctx {
            bin_dir,
            out,
            quick,
            repeat,
            cell_timeout,
            wanem_beside: WanemBeside::default(),
            seq: AtomicU32::new(0),
        }
    }

    /// The same, with `pmdt-wanem` beside `end`.
    pub fn with_wanem_beside(mut self, end: WanemBeside) -> Self {
        self.wanem_beside = end;
        self
    }

    /// A fresh number for a process pair (memif socket, file prefix, UDP port).
    pub fn next_id(&self) -> u32 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A tag unique on this host for pair `id`: `pb<pid>x<id>`.
    pub fn tag(&self, id: u32) -> String {
        format!("pb{}x{id}", std::process::id())
    }

    /// Where a cell run's logs go.
    pub fn logs(&self, experiment: &str, id: u32) -> PathBuf {
        self.out.join("logs").join(format!("{experiment}-{id:03}"))
    }

    /// A tool from the bin dir.
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A command for one of pmdt's tools. Each gets a cache directory of its
    /// own (`XDG_CACHE_HOME`): `pmdt-send` saves the paths it measured there
    /// (its path cache), and a run must not start from what an earlier run or
    /// cell left; a cell that measures a resumed start names its cache file
    /// with `--path-cache`.
    pub fn tool_cmd(&self, name: &str) -> Command {
        let mut c = Command::new(self.tool(name));
        let n = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        c.env("XDG_CACHE_HOME", self.cache_dir(n));
        c
    }

    /// The cache directory of the `n`th tool command, absolute: a relative
    /// `XDG_CACHE_HOME` is ignored (the XDG base directory specification
    /// says so, and the `dirs` crate follows it), and with a relative
    /// `--out`, such as the default, every `pmdt-send` of a run saved its
    /// paths to the user's `~/.cache/pmdt` and started from the last one's:
    /// the loss grid's cold cells at 100 and 200 ms resumed from the cell
    /// before them.
    fn cache_dir(&self, n: u32) -> PathBuf {
        let dir = self.out.join(".cache").join(n.to_string());
        // Fails only without a current directory, where a relative `--out`
        // cannot be written either.
        std::path::absolute(&dir).unwrap_or(dir)
    }

    /// The QUIC peer harness: next to this binary, else in the bin dir.
    pub fn quic_peer(&self) -> PathBuf {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("pmdt-bench-quic")))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| self.bin_dir.join("pmdt-bench-quic"))
    }

    /// Timeout of a run expected to take about `expected`: the expectation plus
    /// start-up slack, capped by `--cell-timeout`.
    pub fn timeout(&self, expected: Duration) -> Duration {
        let t = expected * 2 + Duration::from_secs(15);
        match self.cell_timeout {
            Some(c) => t.min(c),
            None => t,
        }
    }

    /// Checks that every tool exists: pmdt's own in the bin dir, peers on PATH.
    pub fn require(&self, own: &[&str], peers: &[&str]) -> Result<(), String> {
        let mut missing = Vec::new();
        for t in own {
            let p = if *t == "pmdt-bench-quic" {
                self.quic_peer()
            } else {
                self.tool(t)
            };
            if !p.is_file() {
                missing.push(format!(
                    "{} (build it: cargo build --release -p {}, or pass --bin-dir)",
                    p.display(),
                    package_of(t)
                ));
            }
        }
        for t in peers {
            if proc::which(t).is_none() {
                missing.push(format!("{t} (install it: make setup)"));
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("missing tools: {}", missing.join("; ")))
        }
    }
}

fn package_of(tool: &str) -> &'static str {
    match tool {
        "pmdt-load-sweep" => "pmdt-load-sweep",
        "pmdt-bench-quic" => "pmdt-bench",
        _ => "pmdt-tools",
    }
}

/// The default bin dir: `$CARGO_TARGET_DIR/release`, else `target/release`.
pub fn default_bin_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => Path::new(&d).join("release"),
        _ => PathBuf::from("target/release"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relative results directory (the default) still gives each tool an
    /// absolute cache directory of its own.
    #[test]
    fn each_tool_gets_an_absolute_cache_directory_of_its_own() {
        let ctx = Ctx::new(
            PathBuf::from("bin"),
            PathBuf::from("docs/bench/latest"),
            false,
            1,
            None,
        );
        let cache = |c: &Command| {
            c.get_envs()
                .find(|(k, _)| *k == "XDG_CACHE_HOME")
                .and_then(|(_, v)| v)
                .map(PathBuf::from)
                .expect("no XDG_CACHE_HOME")
        };
        let a = cache(&ctx.tool_cmd("pmdt-send"));
        let b = cache(&ctx.tool_cmd("pmdt-send"));
        assert!(a.is_absolute(), "{}", a.display());
        assert!(a.ends_with("docs/bench/latest/.cache/1"), "{}", a.display());
        assert_eq!(a.parent(), b.parent());
        assert_ne!(a, b);
    }
}
