//! Errors the tools print: one line saying what went wrong, one line with a hint,
//! and a non-zero exit code.

use std::fmt;

/// A fatal error with a hint.
#[derive(Debug)]
pub struct CliError {
    /// What happened.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl CliError {
    /// An error without a hint.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }

    /// Prints the error (and hint) to stderr and exits with `code`.
    pub fn exit(&self, prog: &str, code: i32) -> ! {
        eprintln!("{prog}: error: {}", self.message);
        if let Some(h) = &self.hint {
            eprintln!("{prog}: hint: {h}");
        }
        std::process::exit(code)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// Classifies a DPDK start-up failure and attaches the matching hint.
pub fn from_dpdk(e: &dpdk::Error) -> CliError {
    let msg = e.to_string();
    let lower = msg.to_ascii_lowercase();
    let err = CliError::new(format!("DPDK: {msg}"));
    if !is_root() {
        return err.hint(
            "DPDK needs root for hugepages and devices: run with sudo, or use --backend udp",
        );
    }
    if lower.contains("hugepage") {
        return err.hint(
            "reserve hugepages: `echo 512 > /proc/sys/vm/nr_hugepages` and mount hugetlbfs \
             (or run `make setup`), or pass --no-huge",
        );
    }
    if lower.contains("no such device")
        || lower.contains("available ports")
        || lower.contains("not found")
    {
        return err.hint(
            "check --vdev/--pci and --port: the device must exist (e.g. --vdev net_tap0,iface=pmdt0)",
        );
    }
    if lower.contains("already initialized") {
        return err.hint("one EAL per process: run each side as its own process");
    }
    err.hint("see the EAL messages above; --eal passes raw EAL arguments")
}

/// Classifies an I/O error from the runtime or a connection.
pub fn from_io(context: &str, e: &std::io::Error) -> CliError {
    use std::io::ErrorKind as K;
    let err = CliError::new(format!("{context}: {e}"));
    match e.kind() {
        K::AddrInUse => {
            err.hint("the address is taken: pick another --bind port or stop the other process")
        }
        K::HostUnreachable | K::TimedOut => err.hint(
            "is pmdt-recv running at the --to address, on the same link (same memif socket, \
             TAP subnet or network)? check --ip/--to and the ARP entries",
        ),
        K::ConnectionRefused => {
            err.hint("the receiver refused: is it listening (and not at its connection limit)?")
        }
        K::ConnectionReset => err.hint("the peer aborted the transfer; see its output"),
        K::PermissionDenied => err.hint("run as root, or use an unprivileged --bind port"),
        _ => err,
    }
}
