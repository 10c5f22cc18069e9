//! `--help` grouped under headings, and shell completions and man pages generated
//! from the same clap definitions (issue 17).

mod common;

use std::process::Command;

use common::*;

fn run(bin: &str, args: &[&str]) -> String {
    let o = Command::new(bin).args(args).output().unwrap();
    assert!(o.status.success(), "{bin} {args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn help_groups_the_options_under_headings() {
    for (bin, headings, first) in [
        (
            SEND,
            &["Sender:", "Transport:", "Link:", "Output:"][..],
            "-c, --to",
        ),
        (
            RECV,
            &["Receiver:", "Transport:", "Link:", "Output:"][..],
            "-o, --output",
        ),
        (WANEM, &["Impairment:", "Link:", "Output:"][..], "--loss"),
    ] {
        let help = run(bin, &["--help"]);
        let mut at = 0;
        for h in headings {
            let i = help
                .lines()
                .position(|l| l == *h)
                .unwrap_or_else(|| panic!("{bin}: no {h} heading:\n{help}"));
            assert!(i >= at, "{bin}: {h} out of order");
            at = i;
        }
        let first_heading = help.lines().position(|l| l == headings[0]).unwrap();
        let next = help.lines().nth(first_heading + 1).unwrap();
        assert!(next.contains(first), "{bin}: {next}");
    }
    let h = run(SEND, &["--help"]);
    let link = h.find("\nLink:").unwrap();
    let output = h.find("\nOutput:").unwrap();
    for opt in ["--rxq", "--txq", "--burst", "--file-prefix", "--pcap"] {
        let i = h.find(opt).unwrap();
        assert!(link < i && i < output, "{opt} under Link");
    }
    let w = run(WANEM, &["--help"]);
    assert!(w.contains("--file-prefix") && w.contains("--pcap"), "{w}");
}

#[test]
fn completions_and_man_pages_come_from_clap() {
    for (bin, name) in [
        (SEND, "pmdt-send"),
        (RECV, "pmdt-recv"),
        (WANEM, "pmdt-wanem"),
    ] {
        let bash = run(bin, &["--completions", "bash"]);
        assert!(
            bash.contains(&format!("complete -F _{}", name.replace('-', "__"))),
            "{bash}"
        );
        assert!(bash.contains("--json"));
        let zsh = run(bin, &["--completions", "zsh"]);
        assert!(zsh.starts_with(&format!("#compdef {name}")), "{zsh}");
        let fish = run(bin, &["--completions", "fish"]);
        assert!(fish.contains(&format!("complete -c {name}")));
        let man = run(bin, &["--man"]);
        assert!(man.contains(&format!(".TH {name} 1")), "{man}");
        assert!(
            man.contains("\\-\\-file\\-prefix"),
            "options in the man page"
        );
    }
    let man = run(SEND, &["--man"]);
    for opt in [
        "\\-\\-reverse",
        "\\-\\-bidir",
        "\\-\\-interval",
        "\\-\\-rxq",
    ] {
        assert!(man.contains(opt), "{opt}");
    }
    let o = Command::new(SEND)
        .args(["--completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}
