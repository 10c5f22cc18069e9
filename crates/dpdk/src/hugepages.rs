//! What hugepage memory the machine offers, read from `/proc` (no DPDK calls).

use std::fs;

/// Hugepage availability of the default page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HugepageInfo {
    /// Free hugepages of the default size (`HugePages_Free`).
    pub free_pages: u64,
    /// Size of one default hugepage in bytes (`Hugepagesize`).
    pub page_size: u64,
    /// Whether a hugetlbfs file system is mounted (the EAL needs one).
    pub hugetlbfs_mounted: bool,
}

impl HugepageInfo {
    /// Reads `/proc/meminfo` and `/proc/mounts`; missing files read as "no hugepages".
    pub fn read() -> Self {
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
        Self::parse(&meminfo, &mounts)
    }

    /// Parses the text of `/proc/meminfo` and `/proc/mounts`.
    pub fn parse(meminfo: &str, mounts: &str) -> Self {
        let field = |name: &str| -> u64 {
            meminfo
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Self {
            free_pages: field("HugePages_Free"),
            page_size: field("Hugepagesize") * 1024,
            hugetlbfs_mounted: mounts
                .lines()
                .any(|l| l.split_whitespace().nth(2) == Some("hugetlbfs")),
        }
    }

    /// Free hugepage memory in bytes.
    pub fn free_bytes(&self) -> u64 {
        self.free_pages * self.page_size
    }

    /// Whether at least `bytes` of hugepage memory can be used by the EAL.
    pub fn can_back(&self, bytes: u64) -> bool {
        self.hugetlbfs_mounted && self.free_bytes() >= bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo_and_mounts() {
        let meminfo = "MemTotal: 1 kB\nHugePages_Total:     512\nHugePages_Free:      500\nHugepagesize:       2048 kB\n";
        let mounts =
            "proc /proc proc rw 0 0\nnodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n";
        let h = HugepageInfo::parse(meminfo, mounts);
        assert_eq!(h.free_pages, 500);
        assert_eq!(h.page_size, 2 * 1024 * 1024);
        assert!(h.hugetlbfs_mounted);
        assert_eq!(h.free_bytes(), 1000 * 1024 * 1024);
        assert!(h.can_back(512 << 20));
        assert!(!h.can_back(2000 << 20));
    }

    #[test]
    fn no_hugepages_means_none() {
        let h = HugepageInfo::parse("MemTotal: 1 kB\n", "proc /proc proc rw 0 0\n");
        assert_eq!(h.free_bytes(), 0);
        assert!(!h.hugetlbfs_mounted);
        assert!(!h.can_back(1));
    }
}
