//! The DPDK Environment Abstraction Layer: a typed builder, init-once, ordered shutdown.
//!
//! DPDK allows `rte_eal_init` once per process (even after `rte_eal_cleanup`). [`EalBuilder::init`]
//! enforces this with a process-wide state: a second attempt is an `Err`, never UB.
//! Every object that needs the EAL (mempools, ports, launched lcores) holds a clone of
//! the [`Eal`] handle, so the EAL is cleaned up only after they are gone.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::hugepages::HugepageInfo;

const STATE_UNINIT: u8 = 0;
const STATE_STARTING: u8 = 1;
const STATE_RUNNING: u8 = 2;
const STATE_DONE: u8 = 3;
/// The last handle was dropped on a worker lcore: cleanup waits for the main lcore.
const STATE_CLEANUP_PENDING: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(STATE_UNINIT);
static PREFIX_SEQ: AtomicU32 = AtomicU32::new(0);

/// How the EAL gets its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryMode {
    /// Hugepages (`--in-memory`) when enough are free and hugetlbfs is mounted, else
    /// `--no-huge` (slower, but works everywhere); the choice is logged on stderr.
    #[default]
    Auto,
    /// Hugepages, `--in-memory` (no files left behind). Fails if none are available.
    Hugepages,
    /// Hugepages with runtime files under the file prefix (needed for multi-process
    /// secondaries).
    HugepagesShared,
    /// Plain 4 KiB pages (`--no-huge`). Incompatible with `--in-memory`.
    NoHuge,
}

/// Typed builder for the EAL command line.
#[derive(Debug, Clone)]
pub struct EalBuilder {
    program: String,
    lcores: Option<String>,
    main_lcore: Option<u32>,
    vdevs: Vec<String>,
    allow_pci: Vec<String>,
    no_pci: bool,
    memory: MemoryMode,
    memory_mb: u32,
    file_prefix: Option<String>,
    log_level: Option<String>,
    log_to_tracing: bool,
    extra: Vec<String>,
}

/// This executable's file name, for `argv[0]` and the default file prefix.
fn executable_name() -> String {
    let name = std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let clean: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    if clean.is_empty() {
        "dpdk".into()
    } else {
        clean
    }
}

impl Default for EalBuilder {
    fn default() -> Self {
        Self {
            program: executable_name(),
            lcores: None,
            main_lcore: None,
            vdevs: Vec::new(),
            allow_pci: Vec::new(),
            no_pci: false,
            memory: MemoryMode::Auto,
            memory_mb: 256,
            file_prefix: None,
            log_level: None,
            log_to_tracing: true,
            extra: Vec::new(),
        }
    }
}

impl EalBuilder {
    /// A builder with defaults: all lcores, PCI probing on, automatic memory mode
    /// with 256 MiB, a file prefix unique to this process, DPDK's log routed to
    /// `tracing` at the level the subscriber shows (see [`crate::log`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Program name passed as `argv[0]` (shows in DPDK logs) and used in the
    /// default file prefix; default: this executable's file name.
    pub fn program(mut self, name: impl Into<String>) -> Self {
        self.program = name.into();
        self
    }

    /// The lcore list (`-l`), e.g. `"0,1"` or `"0-3"`.
    pub fn lcores(mut self, list: impl Into<String>) -> Self {
        self.lcores = Some(list.into());
        self
    }

    /// The main lcore (`--main-lcore`).
    pub fn main_lcore(mut self, id: u32) -> Self {
        self.main_lcore = Some(id);
        self
    }

    /// Adds a virtual device (`--vdev`), e.g. `"net_tap0,iface=tap0"`.
    pub fn vdev(mut self, spec: impl Into<String>) -> Self {
        self.vdevs.push(spec.into());
        self
    }

    /// Allows one PCI device (`-a`, e.g. `"0000:03:00.0"`); others are not probed.
    pub fn allow_pci(mut self, bdf: impl Into<String>) -> Self {
        self.allow_pci.push(bdf.into());
        self
    }

    /// Disables PCI probing (`--no-pci`): only virtual devices appear.
    pub fn no_pci(mut self, yes: bool) -> Self {
        self.no_pci = yes;
        self
    }

    /// Memory mode (hugepages or not).
    pub fn memory(mut self, mode: MemoryMode) -> Self {
        self.memory = mode;
        self
    }

    /// Memory to reserve in MiB (`-m`).
    pub fn memory_mb(mut self, mb: u32) -> Self {
        self.memory_mb = mb;
        self
    }

    /// Runtime file prefix (`--file-prefix`); unique per process by default.
    pub fn file_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.file_prefix = Some(prefix.into());
        self
    }

    /// Log level (`--log-level`), e.g. `"debug"`, `"notice"`, `"pmd.net.tap:debug"`.
    /// Default: the level matching the `tracing` subscriber's most verbose one when
    /// `init` runs ([`crate::log::eal_log_level`]).
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }

    /// Whether DPDK's own log lines go to `tracing` (default) or, as DPDK does by
    /// itself, to stderr and syslog. See [`crate::log`].
    pub fn log_to_tracing(mut self, yes: bool) -> Self {
        self.log_to_tracing = yes;
        self
    }

    /// Raw EAL arguments appended as given, for anything the builder does not name.
    pub fn extra_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.extra.extend(args.into_iter().map(Into::into));
        self
    }

    /// The memory mode `Auto` resolves to on this machine now.
    pub fn resolved_memory(&self) -> MemoryMode {
        match self.memory {
            MemoryMode::Auto => {
                let needed = u64::from(self.memory_mb) << 20;
                if HugepageInfo::read().can_back(needed) {
                    MemoryMode::Hugepages
                } else {
                    MemoryMode::NoHuge
                }
            }
            m => m,
        }
    }

    /// The full argument vector this builder passes to `rte_eal_init`.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![self.program.clone()];
        if let Some(l) = &self.lcores {
            a.push("-l".into());
            a.push(l.clone());
        }
        if let Some(m) = self.main_lcore {
            a.push(format!("--main-lcore={m}"));
        }
        for v in &self.vdevs {
            a.push(format!("--vdev={v}"));
        }
        if self.no_pci {
            a.push("--no-pci".into());
        }
        for d in &self.allow_pci {
            a.push("-a".into());
            a.push(d.clone());
        }
        match self.resolved_memory() {
            MemoryMode::NoHuge => {
                a.push("--no-huge".into());
                a.push("-m".into());
                a.push(self.memory_mb.to_string());
            }
            MemoryMode::Hugepages => {
                a.push("--in-memory".into());
                a.push("-m".into());
                a.push(self.memory_mb.to_string());
            }
            MemoryMode::HugepagesShared | MemoryMode::Auto => {
                a.push("-m".into());
                a.push(self.memory_mb.to_string());
            }
        }
        let prefix = self.file_prefix.clone().unwrap_or_else(|| {
            format!(
                "{}-{}-{}",
                self.program,
                std::process::id(),
                PREFIX_SEQ.fetch_add(1, Ordering::Relaxed)
            )
        });
        a.push(format!("--file-prefix={prefix}"));
        match &self.log_level {
            Some(l) => a.push(format!("--log-level={l}")),
            None => a.push(format!(
                "--log-level={}",
                crate::log::eal_log_level(tracing::level_filters::LevelFilter::current())
            )),
        }
        a.extend(self.extra.iter().cloned());
        a
    }

    /// Initializes the EAL. At most once per process: any later call returns
    /// [`ErrorKind::EalAlreadyInitialized`], whether the first one succeeded or not.
    pub fn init(self) -> Result<Eal> {
        if self.memory == MemoryMode::Hugepages {
            let h = HugepageInfo::read();
            let needed = u64::from(self.memory_mb) << 20;
            if !h.can_back(needed) {
                return Err(Error::new(
                    ErrorKind::Exhausted,
                    "EAL init",
                    format!(
                        "hugepages requested but only {} MiB free (hugetlbfs mounted: {}); \
                         reserve them (`echo 512 > /proc/sys/vm/nr_hugepages` and mount \
                         hugetlbfs, or `make setup`) or use MemoryMode::NoHuge / --no-huge",
                        h.free_bytes() >> 20,
                        h.hugetlbfs_mounted
                    ),
                ));
            }
        }
        if STATE
            .compare_exchange(
                STATE_UNINIT,
                STATE_STARTING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return Err(Error::new(
                ErrorKind::EalAlreadyInitialized,
                "EAL init",
                "rte_eal_init was already called in this process (DPDK allows it once, \
                 even after cleanup); run differently configured EALs in separate processes",
            ));
        }
        let args = self.args();
        if self.memory == MemoryMode::Auto {
            if args.iter().any(|a| a == "--no-huge") {
                tracing::warn!(
                    "no free hugepages: the EAL runs with --no-huge (4 KiB pages; reserve \
                     hugepages with `make setup` for full speed)"
                );
            } else {
                tracing::debug!("EAL memory: hugepages (--in-memory)");
            }
        }
        if self.log_to_tracing && !crate::log::route_to_tracing() {
            tracing::warn!("DPDK's log could not be routed to tracing: it goes to stderr");
        }
        let mut cargs: Vec<CString> = Vec::with_capacity(args.len());
        for a in &args {
            match CString::new(a.as_str()) {
                Ok(c) => cargs.push(c),
                Err(_) => {
                    STATE.store(STATE_UNINIT, Ordering::Release);
                    return Err(Error::new(
                        ErrorKind::InvalidArgument,
                        "EAL init",
                        format!("argument {a:?} contains a NUL byte"),
                    ));
                }
            }
        }
        // The EAL may keep pointers into argv for the life of the process: leak them.
        let argv: &'static mut [*mut c_char] = Box::leak(
            cargs
                .into_iter()
                .map(CString::into_raw)
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let argc = argv.len() as i32;
        // SAFETY: argc/argv describe valid NUL-terminated strings that live forever;
        // the state machine above guarantees this is the only call in the process.
        let ret = unsafe { dpdk_sys::rte_eal_init(argc, argv.as_mut_ptr()) };
        if ret < 0 {
            STATE.store(STATE_DONE, Ordering::Release);
            let e = Error::last("EAL init (rte_eal_init)");
            let hint = crate::error::eal_init_hint(e.errno());
            return Err(e.explained(&format!("{hint}; args: {}", args.join(" "))));
        }
        STATE.store(STATE_RUNNING, Ordering::Release);
        crate::control_threads::keep_off_workers();
        let eal = Eal {
            inner: Arc::new(EalInner { args }),
        };
        if !self.vdevs.is_empty() && crate::port::count_avail() == 0 {
            return Err(Error::new(
                ErrorKind::NotFound,
                "EAL init",
                "vdevs were requested but no ethdev port appeared: the EAL found no PMD \
                 plugins (Debian: /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0; is the `dpdk` \
                 package installed?) or the vdev names are wrong",
            ));
        }
        Ok(eal)
    }
}

/// A running EAL. Cloning is cheap; the EAL is cleaned up when the last clone (including
/// those held by mempools, ports and launched lcores) is dropped, or by [`Eal::shutdown`].
#[derive(Clone)]
pub struct Eal {
    inner: Arc<EalInner>,
}

struct EalInner {
    args: Vec<String>,
}

impl Drop for EalInner {
    fn drop(&mut self) {
        // rte_eal_cleanup waits for the worker lcores: on a worker it would wait for
        // itself. There, leave it to the main lcore (`LcoreJoinHandle` runs it after
        // waiting for the worker).
        if crate::lcore::on_worker() {
            let _ = STATE.compare_exchange(
                STATE_RUNNING,
                STATE_CLEANUP_PENDING,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            return;
        }
        if STATE
            .compare_exchange(
                STATE_RUNNING,
                STATE_DONE,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            teardown();
        }
    }
}

/// Runs a cleanup left pending by a handle dropped on a worker lcore. Called on the
/// main lcore once the worker finished.
pub(crate) fn run_pending_cleanup() {
    if STATE
        .compare_exchange(
            STATE_CLEANUP_PENDING,
            STATE_DONE,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_ok()
    {
        teardown();
    }
}

/// Frees the dropped mempools, then cleans the EAL up. Every resource that needs the
/// EAL held an [`Eal`], so none is left; mbufs do not, so when a pool still has some
/// out, the EAL and its memory are kept (until the process exits) for them.
fn teardown() {
    if !crate::mempool::free_dropped_pools() {
        tracing::warn!(
            "EAL not cleaned up: mbufs of dropped mempools are still alive; their memory \
             is kept until the process exits"
        );
        return;
    }
    // SAFETY: init succeeded, cleanup has not run (the state machine), nothing that
    // needs the EAL is alive, and we are not on a worker lcore.
    unsafe {
        dpdk_sys::rte_eal_cleanup();
    }
}

impl std::fmt::Debug for Eal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eal")
            .field("args", &self.inner.args)
            .finish()
    }
}

impl Eal {
    /// A builder; same as [`EalBuilder::new`].
    pub fn builder() -> EalBuilder {
        EalBuilder::new()
    }

    /// The arguments `rte_eal_init` was given.
    pub fn args(&self) -> &[String] {
        &self.inner.args
    }

    /// The EAL's control threads (interrupt, multi-process, telemetry) by name,
    /// with the CPUs each may run on. Init keeps them off the CPUs of the worker
    /// lcores when the main lcore's CPUs leave any other: there the interrupt
    /// thread would preempt a polling worker.
    pub fn control_thread_cpus(&self) -> Vec<(String, Vec<usize>)> {
        crate::control_threads::control_threads()
            .into_iter()
            .map(|t| {
                let cpus = t.cpus();
                (t.name, cpus)
            })
            .collect()
    }

    /// Whether the EAL runs on hugepages (it was not started with `--no-huge`).
    pub fn uses_hugepages(&self) -> bool {
        !self.args().iter().any(|a| a == "--no-huge")
    }

    /// Whether the EAL of this process is running.
    pub fn is_running() -> bool {
        STATE.load(Ordering::Acquire) == STATE_RUNNING
    }

    /// Shuts the EAL down (`rte_eal_cleanup`). Fails with [`ErrorKind::Busy`] while
    /// mempools, ports or launched lcores still hold it; drop them first.
    pub fn shutdown(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => {
                drop(inner);
                Ok(())
            }
            Err(inner) => Err(Error::new(
                ErrorKind::Busy,
                "EAL shutdown",
                format!(
                    "{} other holders (mempools, ports, queues, rings, lcores) are still alive",
                    Arc::strong_count(&inner) - 1
                ),
            )),
        }
    }

    /// DPDK's version string, e.g. `"DPDK 22.11.11"`.
    pub fn version() -> String {
        // SAFETY: returns a pointer to a static string.
        unsafe {
            std::ffi::CStr::from_ptr(dpdk_sys::shim_rte_version())
                .to_string_lossy()
                .into_owned()
        }
    }

    /// Usage of every mempool this process created (alive or dropped, until EAL
    /// teardown frees the dropped ones): for leak checks.
    pub fn mempool_usage(&self) -> Vec<crate::mempool::PoolUsage> {
        crate::mempool::usage()
    }
}
