//! testpmd's command line habit: `TOOL [EAL args] -- [options]`. The EAL arguments
//! before `--` become the tool's own options where it has one (`-l`/`--lcores`,
//! `--vdev`, `-a`/`--allow`, `--file-prefix`, `--no-huge`, `-m`), so defaults
//! that depend on them (the demo vdev, the lcore map) follow; every other one
//! passes through to the EAL unchanged (`--eal=ARG`), in order.

use crate::cli_error::CliError;

/// EAL options the tools map onto their own (EAL spelling, tool option).
const MAPPED: &[(&str, &str)] = &[
    ("-l", "--lcores"),
    ("--lcores", "--lcores"),
    ("--vdev", "--vdev"),
    ("-a", "--pci"),
    ("--allow", "--pci"),
    ("--file-prefix", "--file-prefix"),
    ("-m", "--memory-mb"),
];

/// Rewrites `argv` (program name first): with a `--`, what precedes it is EAL
/// arguments and is turned into tool options placed before the ones after it.
/// Without a `--`, `argv` is returned as it is.
pub fn rewrite(argv: Vec<String>) -> Result<Vec<String>, CliError> {
    let Some(split) = argv.iter().position(|a| a == "--") else {
        return Ok(argv);
    };
    let mut out = vec![argv[0].clone()];
    let eal = &argv[1..split];
    let mut i = 0;
    while i < eal.len() {
        let a = &eal[i];
        i += 1;
        if a == "--no-huge" {
            out.push("--no-huge".into());
            continue;
        }
        if a == "-c" || a.starts_with("-c") && a.len() > 2 && !a.starts_with("--") {
            return Err(CliError::new(format!(
                "EAL coremask {a:?} is not supported: the tools place lcores by list"
            ))
            .hint("use -l 0-1 (or --lcores MAP) before --"));
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        // Short options may carry their value attached: `-l0-1`, `-m512`.
        let (name, inline) = match MAPPED.iter().find(|(e, _)| {
            e.len() == 2
                && inline.is_none()
                && name.len() > 2
                && name.starts_with(e)
                && !name.starts_with("--")
        }) {
            Some((e, _)) => (*e, Some(name[2..].to_string())),
            None => (name, inline),
        };
        if let Some((_, tool)) = MAPPED.iter().find(|(e, _)| *e == name) {
            let value = match inline {
                Some(v) => v,
                None => {
                    let v = eal
                        .get(i)
                        .cloned()
                        .ok_or_else(|| CliError::new(format!("EAL option {name} needs a value")))?;
                    i += 1;
                    v
                }
            };
            out.push(format!("{tool}={value}"));
        } else {
            out.push(format!("--eal={a}"));
        }
    }
    out.extend(argv[split + 1..].iter().cloned());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn eal_arguments_before_the_separator_become_options() {
        let got = rewrite(args(
            "pmdt-send -l 0-1 --vdev net_memif0,role=client -n 4 --file-prefix=p1 -m512 \
             --no-huge --log-level debug -- -c 10.0.0.2 -n 10G",
        ))
        .unwrap();
        assert_eq!(
            got,
            args(
                "pmdt-send --lcores=0-1 --vdev=net_memif0,role=client --eal=-n --eal=4 \
                 --file-prefix=p1 --memory-mb=512 --no-huge --eal=--log-level --eal=debug \
                 -c 10.0.0.2 -n 10G"
            )
        );
    }

    #[test]
    fn without_a_separator_nothing_changes() {
        let a = args("pmdt-recv -o x --eal=--log-level=debug");
        assert_eq!(rewrite(a.clone()).unwrap(), a);
        assert_eq!(rewrite(args("pmdt-recv --")).unwrap(), args("pmdt-recv"));
    }

    #[test]
    fn coremasks_and_missing_values_are_refused() {
        let e = rewrite(args("t -c 0x3 --")).unwrap_err();
        assert!(e.message.contains("coremask"), "{}", e.message);
        let e = rewrite(args("t -l --")).unwrap_err();
        assert!(e.message.contains("needs a value"), "{}", e.message);
    }
}
