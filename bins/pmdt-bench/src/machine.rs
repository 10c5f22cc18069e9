//! What the figures were measured on: CPU model, cores, kernel, DPDK version, the
//! peers' versions, and the git revision of the tree.

use std::process::Command;

use serde::{Deserialize, Serialize};

/// The machine and the code.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// DPDK version (pkg-config libdpdk).
    pub dpdk: String,
    /// Free/total 2 MiB hugepages at the start.
    pub hugepages: String,
    /// `git describe`-like revision, `-dirty` when the tree has changes.
    pub git: String,
    /// Load average at the start (other work on the machine skews the figures).
    pub loadavg: String,
    /// When the run started (UTC, `date -u`).
    pub started: String,
}

fn out(cmd: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(cmd).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn meminfo(key: &str) -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l[key.len()..].trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

impl Machine {
    /// Reads it.
    pub fn detect() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| {
                c.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let rev =
            out("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
        let dirty = out("git", &["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|s| !s.is_empty());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into()),
            dpdk: out("pkg-config", &["--modversion", "libdpdk"])
                .unwrap_or_else(|| "not found".into()),
            hugepages: format!(
                "{} free of {}",
                meminfo("HugePages_Free:"),
                meminfo("HugePages_Total:")
            ),
            git: if dirty { format!("{rev}-dirty") } else { rev },
            loadavg: std::fs::read_to_string("/proc/loadavg")
                .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            started: out("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]).unwrap_or_default(),
        }
    }

    /// One line for the report header.
    pub fn line(&self) -> String {
        format!(
            "{} ({} cores), Linux {}, DPDK {}, hugepages {}, git {}, load average {} at {}",
            self.cpu,
            self.cores,
            self.kernel,
            self.dpdk,
            self.hugepages,
            self.git,
            self.loadavg,
            self.started
        )
    }
}
