//! The DPDK EAL options every tool takes (devices, lcores, memory, file prefix,
//! raw EAL arguments), and the EAL builder they make.

use clap::Args;
use dpdk::{EalBuilder, MemoryMode};
use serde::{Deserialize, Serialize};

/// EAL options.
#[derive(Debug, Clone, Args, Serialize, Deserialize, Default)]
#[serde(default)]
#[command(next_help_heading = "Link")]
pub struct EalArgs {
    /// DPDK virtual device, repeatable (default: the demo's memif link(s)).
    #[arg(long = "vdev", value_name = "SPEC")]
    pub vdev: Vec<String>,
    /// PCI device to use (EAL allow-list), repeatable, e.g. 0000:03:00.0.
    #[arg(long = "pci", value_name = "BDF")]
    pub pci: Vec<String>,
    /// EAL lcore list or map (`-l`/`--lcores` syntax); the last lcore(s) run the
    /// I/O loop(s). Default: the main lcore on every CPU and the I/O lcore(s)
    /// pinned from CPU 1 on (pmdt-recv) or CPU 0 on (pmdt-send); pmdt-wanem: 0.
    #[arg(long, value_name = "MAP")]
    pub lcores: Option<String>,
    /// Run the EAL without hugepages (slower; no setup needed).
    #[arg(long)]
    pub no_huge: bool,
    /// EAL memory in MiB.
    #[arg(long, default_value_t = 512, value_name = "MIB")]
    pub memory_mb: u32,
    /// EAL file prefix: names the process for `dpdk-telemetry.py -f PREFIX`
    /// (default: unique per process).
    #[arg(long, value_name = "NAME")]
    pub file_prefix: Option<String>,
    /// Raw EAL argument, repeatable (e.g. --eal=--log-level=debug); EAL arguments
    /// can also come first, testpmd style: `TOOL [EAL args] -- [options]`.
    #[arg(long = "eal", value_name = "ARG", allow_hyphen_values = true)]
    pub eal: Vec<String>,
}

impl EalArgs {
    /// Whether the EAL will run on 4 KiB pages (`--no-huge`, asked for or the
    /// fallback when the free hugepages cannot hold `--memory-mb`), judged before
    /// it starts.
    pub fn without_hugepages(&self) -> bool {
        self.no_huge
            || self.eal.iter().any(|a| a == "--no-huge")
            || dpdk::Eal::builder()
                .memory_mb(self.memory_mb)
                .resolved_memory()
                == MemoryMode::NoHuge
    }

    /// The EAL builder: `default_lcores` unless `--lcores`, `default_vdevs` when
    /// neither a vdev nor a PCI device is given (then without PCI probing).
    pub fn builder(
        &self,
        prog: &str,
        default_lcores: &str,
        default_vdevs: &[String],
    ) -> EalBuilder {
        let lcores = self
            .lcores
            .clone()
            .unwrap_or_else(|| default_lcores.to_string());
        let mut b = dpdk::Eal::builder().program(prog).memory_mb(self.memory_mb);
        b = if lcores.contains('@') || lcores.contains('(') {
            b.extra_args(["--lcores".to_string(), lcores])
        } else {
            b.lcores(lcores)
        };
        let vdevs: &[String] = if self.vdev.is_empty() && self.pci.is_empty() {
            default_vdevs
        } else {
            &self.vdev
        };
        for v in vdevs {
            b = b.vdev(v.clone());
        }
        if self.pci.is_empty() {
            b = b.no_pci(true);
        }
        for p in &self.pci {
            b = b.allow_pci(p.clone());
        }
        if self.no_huge {
            b = b.memory(MemoryMode::NoHuge);
        }
        if let Some(p) = &self.file_prefix {
            b = b.file_prefix(p.clone());
        }
        b.extra_args(self.eal.iter().cloned())
    }
}
