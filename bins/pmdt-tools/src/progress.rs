//! Progress while a transfer runs: a bar with rate and ETA on a terminal, a plain
//! line per second otherwise (logs, CI).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::units::fmt_rate;

/// Progress display.
pub struct Progress {
    bar: Option<ProgressBar>,
    label: String,
    start: Instant,
    last: Instant,
    last_bytes: u64,
    total: Option<u64>,
}

impl Progress {
    /// Shows progress towards `total` bytes (unknown: None).
    pub fn new(label: &str, total: Option<u64>) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = match total {
                Some(t) => ProgressBar::new(t),
                None => ProgressBar::new_spinner(),
            };
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            b.set_style(style);
            b.set_prefix(label.to_string());
            b
        });
        let now = Instant::now();
        Self {
            bar,
            label: label.into(),
            start: now,
            last: now,
            last_bytes: 0,
            total,
        }
    }

    /// Updates with the bytes done so far.
    pub fn update(&mut self, bytes: u64) {
        if let Some(b) = &self.bar {
            b.set_position(bytes);
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last) >= Duration::from_secs(1) {
            let dt = now.duration_since(self.last).as_secs_f64();
            let rate = (bytes - self.last_bytes.min(bytes)) as f64 * 8.0 / dt;
            let pct = self
                .total
                .map(|t| format!(" ({:.0}%)", bytes as f64 * 100.0 / t.max(1) as f64))
                .unwrap_or_default();
            eprintln!(
                "{}: {:>7.1} s {} bytes{} {}",
                self.label,
                now.duration_since(self.start).as_secs_f64(),
                bytes,
                pct,
                fmt_rate(rate)
            );
            self.last = now;
            self.last_bytes = bytes;
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
