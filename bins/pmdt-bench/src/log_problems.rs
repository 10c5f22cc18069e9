//! Error and warning lines in a tool's stderr. A run can finish with every figure
//! in order and still log them: session 37's wake path made DPDK print "Rx Intr
//! handle unset" before every nap of a memif loop, 37,816 lines in a 1.7 s
//! transfer, and no figure showed it. A cell whose tools logged such lines says
//! so in its notes.

/// The error and warning lines of one tool's stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogProblems {
    /// How many.
    pub count: usize,
    /// The first of them.
    pub first: Option<String>,
}

impl LogProblems {
    /// Scans a tool's stderr for lines with `error:` or `warning:` (how the
    /// tools and DPDK's routed log print them).
    pub fn scan(stderr: &str) -> Self {
        let mut lines = stderr
            .lines()
            .filter(|l| l.contains("error:") || l.contains("warning:"));
        let first = lines.next().map(|l| l.trim().to_string());
        Self {
            count: first.iter().count() + lines.count(),
            first,
        }
    }

    /// The cell's note for `tool`, when it logged any.
    pub fn note(&self, tool: &str) -> Option<String> {
        let first = self.first.as_ref()?;
        Some(format!(
            "{tool} logged {} error or warning line(s), the first: {first:?}",
            self.count
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_and_warning_lines_are_counted_and_the_first_kept() {
        let text = "pmdt-send: [  1]   0.00-1.01   sec    2.24 GiB    19.12 Gbit/s\n\
                    pmdt-send: error: Rx Intr handle unset\n\
                    pmdt-send: 4294967296 bytes in 1.690 s = 20.33 Gbit/s\n\
                    pmdt-send: error: Rx Intr handle unset\n\
                    pmdt-send: warning: 3 mbufs still out\n";
        let p = LogProblems::scan(text);
        assert_eq!(p.count, 3);
        assert_eq!(
            p.first.as_deref(),
            Some("pmdt-send: error: Rx Intr handle unset")
        );
        assert_eq!(
            p.note("pmdt-send").unwrap(),
            "pmdt-send logged 3 error or warning line(s), the first: \
             \"pmdt-send: error: Rx Intr handle unset\""
        );
    }

    #[test]
    fn a_clean_log_has_no_note() {
        let p = LogProblems::scan("pmdt-recv: listening on 10.88.0.2:9000\nno errors here\n");
        assert_eq!(p, LogProblems::default());
        assert_eq!(p.note("pmdt-recv"), None);
    }
}
