//! Every tools command of the README's tools section runs here, so the README
//! cannot drift: each `pmdt-send`/`pmdt-recv`/`pmdt-wanem` line of its `sh` blocks
//! with `--dry-run` (the options parse, host names resolve, files are found, the
//! EAL arguments are built), `--completions`/`--man` as written, and the demo pair
//! (`pmdt-recv`, `pmdt-send`: no options) for real. `/data/` stands for a scratch
//! directory holding the files the commands name.

mod common;

use std::time::Duration;

use common::*;

/// The tools commands of the README's tools section, as argument vectors.
fn readme_commands() -> Vec<Vec<String>> {
    let readme = include_str!("../../../README.md");
    let start = readme.find("## The tools").expect("tools section");
    let end = readme[start..]
        .find("## Embedding the runtime")
        .map_or(readme.len(), |e| start + e);
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme[start..end].lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = t == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let cmd = t.split(" #").next().unwrap().trim();
        let cmd = cmd.split(" > ").next().unwrap().trim();
        let cmd = cmd.trim_end_matches('&').trim();
        let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        if words
            .first()
            .is_some_and(|w| ["pmdt-send", "pmdt-recv", "pmdt-wanem"].contains(&w.as_str()))
        {
            out.push(words);
        }
    }
    out
}

fn bin(name: &str) -> &'static str {
    match name {
        "pmdt-send" => SEND,
        "pmdt-recv" => RECV,
        "pmdt-wanem" => WANEM,
        other => panic!("{other}"),
    }
}

#[test]
fn every_tools_command_in_the_readme_is_accepted_as_written() {
    let d = tmp("readme");
    let data = d.join("data");
    std::fs::create_dir_all(data.join("in")).unwrap();
    random_file(&data.join("big.iso"), 1000);
    let cmds = readme_commands();
    assert!(cmds.len() >= 20, "found {} commands", cmds.len());
    for words in &cmds {
        let mut args: Vec<String> = words[1..]
            .iter()
            .map(|w| w.replace("/data/", &format!("{}/", data.display())))
            .collect();
        let docs = args.iter().any(|a| a == "--completions" || a == "--man");
        if !docs {
            args.push("--dry-run".into());
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = finish(spawn(bin(&words[0]), &argv), Duration::from_secs(20));
        assert!(
            o.status.success(),
            "README command {:?} fails: {}",
            words.join(" "),
            stderr(&o)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        if docs {
            assert!(out.contains(&words[0]), "{words:?}: {out}");
        } else {
            let v = json(&o);
            assert!(v["settings"].is_object(), "{words:?}: {v}");
        }
    }
}

/// The first two commands (`pmdt-recv`, `pmdt-send`: the demo) for real.
#[test]
fn the_readme_demo_pair_runs_as_written() {
    let cmds = readme_commands();
    assert_eq!(cmds[0], ["pmdt-recv"]);
    assert_eq!(cmds[1], ["pmdt-send"]);
    let _g = serial();
    let (so, ro) = run_pair(&["--json"], &["--json"], Duration::from_millis(1500));
    let (sj, rj) = (end(&so), end(&ro));
    assert!(
        sj["seconds"].as_f64().unwrap() >= 10.0,
        "10 s by default: {sj}"
    );
    assert_eq!(sj["flows"][0]["receipt"]["matches"], true);
    assert_eq!(rj["bytes"], sj["bytes"]);
}
