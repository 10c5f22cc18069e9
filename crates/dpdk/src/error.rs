//! One typed error for every fallible DPDK call: what was attempted, and why it failed.

use std::ffi::CStr;
use std::fmt;

/// What kind of failure happened; lets callers react without parsing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `rte_eal_init` was already attempted in this process (DPDK allows one try).
    EalAlreadyInitialized,
    /// An operation needs a running EAL, and there is none.
    EalNotRunning,
    /// EAL resources (ports, pools, lcores, mbufs) are still in use.
    Busy,
    /// An argument was rejected before reaching DPDK.
    InvalidArgument,
    /// A named device, port or object does not exist.
    NotFound,
    /// A mempool or ring has no free element.
    Exhausted,
    /// The mbuf is shared (refcount > 1) and cannot be mutated.
    Shared,
    /// The port or driver does not support the request.
    Unsupported,
    /// A function run on a worker lcore panicked.
    LcorePanicked,
    /// Any other failure reported by DPDK (see `errno`).
    Dpdk,
}

/// A failed DPDK operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    op: String,
    errno: i32,
    detail: String,
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` while doing `op`, with extra human-readable `detail`.
    pub fn new(kind: ErrorKind, op: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind,
            op: op.into(),
            errno: 0,
            detail: detail.into(),
        }
    }

    /// An error from a DPDK call that returned a negative errno (`ret < 0`) or set
    /// `rte_errno`; the text is `rte_strerror`'s.
    pub fn from_errno(op: impl Into<String>, errno: i32) -> Self {
        let errno = errno.abs();
        let kind = match errno {
            libc_errno::ENODEV | libc_errno::ENOENT => ErrorKind::NotFound,
            libc_errno::ENOMEM | libc_errno::ENOBUFS | libc_errno::ENOSPC => ErrorKind::Exhausted,
            libc_errno::EINVAL => ErrorKind::InvalidArgument,
            libc_errno::EOPNOTSUPP => ErrorKind::Unsupported,
            libc_errno::EBUSY => ErrorKind::Busy,
            libc_errno::EALREADY => ErrorKind::EalAlreadyInitialized,
            _ => ErrorKind::Dpdk,
        };
        Self {
            kind,
            op: op.into(),
            errno,
            detail: strerror(errno),
        }
    }

    /// An error built from the calling thread's current `rte_errno`.
    pub fn last(op: impl Into<String>) -> Self {
        // SAFETY: reads a thread-local integer; no preconditions.
        let errno = unsafe { dpdk_sys::shim_rte_errno() };
        Self::from_errno(op, errno)
    }

    /// The same error with `more` after its errno text (what to check, the
    /// arguments that failed): the kind and errno stay.
    pub(crate) fn explained(mut self, more: &str) -> Self {
        self.detail = format!("{}; {more}", self.detail);
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The errno DPDK reported, or 0 when the error did not come from DPDK.
    pub fn errno(&self) -> i32 {
        self.errno
    }

    /// What was being attempted.
    pub fn operation(&self) -> &str {
        &self.op
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.errno != 0 {
            write!(f, "{}: {} (errno {})", self.op, self.detail, self.errno)
        } else {
            write!(f, "{}: {}", self.op, self.detail)
        }
    }
}

impl std::error::Error for Error {}

/// `rte_strerror` text for an errno (covers both libc and DPDK's own codes).
pub fn strerror(errno: i32) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local buffer that
    // stays valid until the next call on this thread; we copy it out at once.
    unsafe {
        let p = dpdk_sys::rte_strerror(errno);
        if p.is_null() {
            format!("errno {errno}")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// The few Linux errno values the crate maps to kinds.
mod libc_errno {
    pub const ENOENT: i32 = 2;
    pub const ENOMEM: i32 = 12;
    pub const EBUSY: i32 = 16;
    pub const ENODEV: i32 = 19;
    pub const EINVAL: i32 = 22;
    pub const ENOSPC: i32 = 28;
    pub const ENOBUFS: i32 = 105;
    pub const EOPNOTSUPP: i32 = 95;
    pub const EALREADY: i32 = 114;
    pub const EPERM: i32 = 1;
    pub const EACCES: i32 = 13;
}

/// What to check when `rte_eal_init` fails with `errno`.
pub(crate) fn eal_init_hint(errno: i32) -> &'static str {
    match errno {
        libc_errno::ENODEV | libc_errno::ENOENT | libc_errno::EINVAL => {
            "check the --vdev strings and EAL options (DPDK's error lines above say which)"
        }
        libc_errno::ENOMEM | libc_errno::ENOSPC | libc_errno::ENOBUFS => {
            "not enough hugepage memory: reserve hugepages (`make setup`) or pass --no-huge"
        }
        libc_errno::EPERM | libc_errno::EACCES => "run as root (hugepages and devices need it)",
        _ => "check --vdev strings, hugepages (`make setup` or --no-huge) and that you run as root",
    }
}

/// Turns a DPDK return code (`0` ok, negative errno on failure) into a `Result`.
pub(crate) fn check(op: &str, ret: i32) -> Result<i32> {
    if ret < 0 {
        Err(Error::from_errno(op, ret))
    } else {
        Ok(ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eal_init_failure_gets_the_hint_its_errno_calls_for() {
        assert!(eal_init_hint(libc_errno::ENODEV).contains("--vdev"));
        assert!(eal_init_hint(libc_errno::ENOMEM).contains("hugepage"));
        assert!(eal_init_hint(libc_errno::EACCES).contains("root"));
        let e = Error::from_errno("EAL init (rte_eal_init)", libc_errno::ENODEV)
            .explained(eal_init_hint(libc_errno::ENODEV));
        let text = e.to_string();
        assert_eq!(text.matches("EAL init").count(), 1, "{text}");
        assert_eq!(e.errno(), libc_errno::ENODEV);
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
