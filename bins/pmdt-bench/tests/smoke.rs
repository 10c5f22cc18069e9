//! Smoke test: `pmdt-bench <exp> --quick` for four cheap experiments writes its four
//! files, they parse, and every cell either has a figure above zero or says why it
//! failed; `merge` and `readme` rewrite them. No speed is asserted. Needs root and
//! hugepages (DPDK); skipped otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BENCH: &str = env!("CARGO_BIN_EXE_pmdt-bench");

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where pmdt-send and friends are; builds them (release) if they are not there.
fn bin_dir() -> PathBuf {
    let dir = match std::env::var_os("PMDT_BIN_DIR") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(d) => PathBuf::from(d).join("release"),
            None => workspace().join("target/release"),
        },
    };
    if !dir.join("pmdt-send").is_file() || !dir.join("pmdt-recv").is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .current_dir(workspace())
            .args(["build", "--release", "-q", "-p", "pmdt-tools"])
            .status()
            .expect("run cargo");
        assert!(st.success(), "cargo build --release -p pmdt-tools failed");
    }
    dir
}

fn run_quick(exp: &str, out: &Path) {
    let o = Command::new(BENCH)
        .args([exp, "--quick", "--cell-timeout", "25", "--out"])
        .arg(out)
        .arg("--bin-dir")
        .arg(bin_dir())
        .output()
        .expect("run pmdt-bench");
    let text = String::from_utf8_lossy(&o.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.status.success(),
        "pmdt-bench {exp} --quick exited {}",
        o.status
    );
    assert!(text.contains(&format!("{exp}:")), "no experiment header");
}

fn check_outputs(exp: &str, out: &Path) {
    for ext in ["json", "csv", "md", "png"] {
        let p = out.join(format!("{exp}.{ext}"));
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{} missing or empty", p.display());
    }
    let png = std::fs::read(out.join(format!("{exp}.png"))).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("{exp}.json"))).unwrap())
            .expect("JSON parses");
    for k in ["cpu", "cores", "kernel", "dpdk", "git"] {
        assert!(json["machine"].get(k).is_some(), "machine.{k} missing");
    }
    let cells = json["cells"].as_array().expect("cells");
    assert!(!cells.is_empty(), "no cells");
    let md = std::fs::read_to_string(out.join(format!("{exp}.md"))).unwrap();
    for c in cells {
        let name = c["name"].as_str().unwrap();
        assert!(
            !c["commands"].as_array().unwrap().is_empty(),
            "{name}: no commands recorded"
        );
        assert!(md.contains(name), "{name} not in the table");
        match c["status"].as_str().unwrap() {
            "failed" => {
                let errors = c["errors"].as_array().unwrap();
                assert!(!errors.is_empty(), "{name} failed without saying why");
                assert!(
                    md.contains("**failed**"),
                    "{name}: failure not in the table"
                );
            }
            "ok" | "partial" => {
                let primary = c["primary"].as_str().unwrap();
                let v = c["metrics"][primary]["median"].as_f64();
                assert!(
                    v.is_some_and(|v| v > 0.0),
                    "{name}: {primary} reads {v:?} with status ok (a silent zero)"
                );
            }
            s => panic!("{name}: unknown status {s}"),
        }
    }
    let csv = std::fs::read_to_string(out.join(format!("{exp}.csv"))).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("experiment,cell,"));
    assert!(
        lines.count() >= cells.len(),
        "CSV has fewer rows than cells"
    );
}

#[test]
fn quick_experiments_write_honest_results() {
    if !is_root() {
        eprintln!("smoke: skipped: DPDK needs root (run as root after make setup)");
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pmdt-bench-smoke");
    let _ = std::fs::remove_dir_all(&out);
    for exp in ["seed003", "flows", "multi", "adapt"] {
        run_quick(exp, &out);
        check_outputs(exp, &out);
    }
    // `merge` rewrites the reports of several runs as one per experiment, each
    // naming the run its cells come from.
    let merged = out.join("merged");
    let o = Command::new(BENCH)
        .args(["merge", "--out"])
        .arg(&merged)
        .arg(&out)
        .output()
        .expect("run pmdt-bench merge");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for exp in ["seed003", "flows", "multi", "adapt"] {
        check_outputs(exp, &merged);
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(merged.join(format!("{exp}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(json["parts"].as_array().map(Vec::len), Some(1), "{exp}");
    }
    // The README's Performance section is regenerated from these reports, the
    // rest of the README kept (on a copy of the real README).
    let readme = out.join("README.copy.md");
    let original = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    std::fs::write(&readme, &original).unwrap();
    let o = Command::new(BENCH)
        .args(["readme", "--out"])
        .arg(&out)
        .arg("--readme")
        .arg(&readme)
        .output()
        .expect("run pmdt-bench readme");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let new = std::fs::read_to_string(&readme).unwrap();
    let section = &new[new.find("<!-- pmdt-bench:begin").expect("begin marker")..];
    let section = &section[..section.find("<!-- pmdt-bench:end -->").expect("end marker")];
    for exp in ["seed003", "flows"] {
        assert!(
            section.contains(&format!("**{exp}**")),
            "{exp} not in the section"
        );
    }
    assert!(section.contains("--quick"), "a quick run must say so");
    let head = &original[..original.find("<!-- pmdt-bench:begin").unwrap()];
    assert!(
        new.starts_with(head),
        "the README before the section changed"
    );
}

#[test]
fn missing_tools_exit_non_zero() {
    let o = Command::new(BENCH)
        .args([
            "flows",
            "--quick",
            "--bin-dir",
            "/nonexistent/pmdt-bench",
            "--out",
        ])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("pmdt-bench-missing"))
        .output()
        .expect("run pmdt-bench");
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing tools"), "{err}");
}

#[test]
fn bad_arguments_are_rejected_without_panic() {
    for args in [
        &["nosuch"][..],
        &["flows", "--repeat", "0"],
        &["flows", "--cell-timeout", "-1"],
    ] {
        let o = Command::new(BENCH).args(args).output().expect("run");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
}
