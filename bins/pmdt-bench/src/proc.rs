//! Child processes: each in its own process group, output to log files, killed on
//! timeout, on error and on Ctrl-C/SIGTERM (a registry of live groups the signal
//! handler empties), and DPDK's per-prefix runtime files removed afterwards.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Process groups of the children still running.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Kills every live child group (SIGKILL). Used by the signal handler.
pub fn kill_all() {
    let groups: Vec<i32> = LIVE.lock().map(|g| g.clone()).unwrap_or_default();
    for g in groups {
        // SAFETY: kill(2) on a process group we created; no memory is touched.
        unsafe {
            libc::kill(-g, libc::SIGKILL);
        }
    }
}

/// Installs the Ctrl-C/SIGTERM/SIGHUP handler: kill the children, exit 130.
pub fn install_signal_handler() {
    let r = ctrlc::set_handler(|| {
        eprintln!("pmdt-bench: interrupted: stopping the children");
        kill_all();
        // Once they are gone, their DPDK files can go too.
        std::thread::sleep(std::time::Duration::from_millis(200));
        cleanup_own();
        std::process::exit(130);
    });
    if let Err(e) = r {
        eprintln!("pmdt-bench: warning: cannot install the signal handler: {e}");
    }
}

/// The shell form of a command, for the report.
pub fn command_line(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains([' ', '"', '\'', '(', ')', '$', '*']) {
            s.push_str(&format!(" '{a}'"));
        } else {
            s.push(' ');
            s.push_str(&a);
        }
    }
    s
}

/// A running child.
pub struct Child {
    name: String,
    inner: std::process::Child,
    /// Where its stdout goes.
    pub stdout: PathBuf,
    /// Where its stderr goes.
    pub stderr: PathBuf,
    /// Its command line.
    pub command: String,
    status: Option<ExitStatus>,
    cpu_ticks: u64,
    peak_rss_kb: u64,
}

impl Child {
    /// Starts `cmd` in a new process group, stdout/stderr into `logs/<name>.{out,err}`.
    pub fn spawn(name: &str, mut cmd: Command, logs: &Path) -> Result<Child, String> {
        use std::os::unix::process::CommandExt;
        std::fs::create_dir_all(logs)
            .map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
        let stdout = logs.join(format!("{name}.out"));
        let stderr = logs.join(format!("{name}.err"));
        let open =
            |p: &Path| File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()));
        cmd.stdin(Stdio::null())
            .stdout(open(&stdout)?)
            .stderr(open(&stderr)?)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; between fork and exec it only asks the
        // kernel to kill the child if this runner dies (even by SIGKILL).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let command = command_line(&cmd);
        // Register under the lock so the signal handler sees the child once it exists.
        let mut live = LIVE
            .lock()
            .map_err(|_| "child registry poisoned".to_string())?;
        let inner = cmd
            .spawn()
            .map_err(|e| format!("cannot start {command}: {e}"))?;
        live.push(inner.id() as i32);
        drop(live);
        Ok(Child {
            name: name.into(),
            inner,
            stdout,
            stderr,
            command,
            status: None,
            cpu_ticks: 0,
            peak_rss_kb: 0,
        })
    }

    fn sample_proc(&mut self) {
        let pid = self.inner.id();
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // Fields after the ")" of the command name: utime is the 12th, stime the 13th.
            if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
                let f: Vec<&str> = rest.split_whitespace().collect();
                let t = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                let ticks = t(11) + t(12);
                if ticks > 0 {
                    self.cpu_ticks = ticks;
                }
            }
        }
        if let Ok(st) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            for l in st.lines() {
                if let Some(v) = l.strip_prefix("VmHWM:") {
                    let kb = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                    self.peak_rss_kb = self.peak_rss_kb.max(kb);
                }
            }
        }
    }

    /// CPU seconds (user + system) as last sampled while it ran.
    pub fn cpu_seconds(&self) -> f64 {
        // SAFETY: sysconf has no memory effects.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        self.cpu_ticks as f64 / if hz > 0 { hz as f64 } else { 100.0 }
    }

    /// Peak resident set size in KiB as last sampled (hugepages not included).
    pub fn peak_rss_kb(&self) -> u64 {
        self.peak_rss_kb
    }

    /// Exit status if it has ended.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.sample_proc();
            if let Ok(Some(s)) = self.inner.try_wait() {
                self.status = Some(s);
                self.unregister();
            }
        }
        self.status
    }

    /// Waits up to `timeout` for it to end.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_wait() {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `sig` to its process group.
    pub fn signal(&self, sig: i32) {
        if self.status.is_none() {
            // SAFETY: kill(2) on our own child's process group.
            unsafe {
                libc::kill(-(self.inner.id() as i32), sig);
            }
        }
    }

    /// Stops it: SIGINT (the tools print their summary), then SIGKILL after `grace`.
    /// Returns its exit status and whether it had to be killed.
    pub fn stop(&mut self, grace: Duration) -> (Option<ExitStatus>, bool) {
        if let Some(s) = self.try_wait() {
            return (Some(s), false);
        }
        self.signal(libc::SIGINT);
        if let Some(s) = self.wait_timeout(grace) {
            return (Some(s), false);
        }
        self.signal(libc::SIGKILL);
        (self.wait_timeout(Duration::from_secs(5)), true)
    }

    /// Waits for a line containing `needle` in its stderr or stdout, up to `timeout`.
    pub fn wait_for_output(&mut self, needle: &str, timeout: Duration) -> Result<(), String> {
        let end = Instant::now() + timeout;
        loop {
            for p in [&self.stderr, &self.stdout] {
                if std::fs::read_to_string(p).is_ok_and(|s| s.contains(needle)) {
                    return Ok(());
                }
            }
            if let Some(s) = self.try_wait() {
                return Err(format!(
                    "{} exited ({s}) before it was ready: {}",
                    self.name,
                    self.last_error_line()
                ));
            }
            if Instant::now() >= end {
                return Err(format!(
                    "{} was not ready after {:.0} s (no {needle:?} in its output)",
                    self.name,
                    timeout.as_secs_f64()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Everything it wrote to stdout so far.
    pub fn stdout_text(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    /// Everything it wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// The most telling line of its stderr: the last error line, else the last line.
    pub fn last_error_line(&self) -> String {
        let err = self.stderr_text();
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        lines
            .iter()
            .rev()
            .find(|l| l.contains("error"))
            .or(lines.last())
            .map(|l| l.trim().to_string())
            .unwrap_or_else(|| "(no output)".into())
    }

    fn unregister(&self) {
        let pid = self.inner.id() as i32;
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|&g| g != pid);
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.try_wait().is_none() {
            self.signal(libc::SIGKILL);
            let _ = self.inner.wait();
            self.unregister();
        }
    }
}

/// Removes what a DPDK process with this `--file-prefix` leaves behind when killed:
/// its runtime directory and its hugepage files.
pub fn dpdk_cleanup(prefix: &str) {
    let _ = std::fs::remove_dir_all(format!("/var/run/dpdk/{prefix}"));
    if let Ok(dir) = std::fs::read_dir("/dev/hugepages") {
        for e in dir.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{prefix}map_"))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// A command found on PATH, if any.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Removes the DPDK files of this run's children (prefixes `pb<our pid>x…`).
fn cleanup_own() {
    let own = format!("pb{}x", std::process::id());
    for dir in ["/var/run/dpdk", "/dev/hugepages"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with(&own) {
                    let _ = std::fs::remove_dir_all(e.path());
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

/// Removes DPDK files left by earlier pmdt-bench runs that died (prefixes
/// `pb<pid>x…` whose pid is gone).
pub fn cleanup_stale() {
    let stale = |name: &str| -> Option<String> {
        let rest = name.strip_prefix("pb")?;
        let (pid, tail) = rest.split_once('x')?;
        let pid: u32 = pid.parse().ok()?;
        let id: String = tail.chars().take_while(char::is_ascii_digit).collect();
        let role = tail[id.len()..].chars().next()?;
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        (!alive && !id.is_empty()).then(|| format!("pb{pid}x{id}{role}"))
    };
    let mut prefixes = std::collections::BTreeSet::new();
    for dir in ["/var/run/dpdk", "/dev/hugepages"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                if let Some(p) = stale(&e.file_name().to_string_lossy()) {
                    prefixes.insert(p);
                }
            }
        }
    }
    for p in prefixes {
        dpdk_cleanup(&p);
    }
}
