//! The tools' `main`: the command line (testpmd-style EAL arguments first, then
//! options, then a TOML config file for what the command line left out), shell
//! completions and man page, the run, errors (with `{"error": ...}` on stdout under
//! `--json`/`--json-stream`) and the exit code.

use std::io::Write;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::Parser;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cli_error::CliError;
use crate::doc_gen::DocArgs;
use crate::report::{print_error, JsonMode};

/// What every tool's option struct offers the entry point.
pub trait ToolCli: Parser + Serialize + DeserializeOwned {
    /// `--config FILE`, if given.
    fn config_path(&self) -> Option<PathBuf>;
    /// `--completions` / `--man`.
    fn docs(&self) -> &DocArgs;
    /// `--json` / `--json-stream`.
    fn json_mode(&self) -> JsonMode;
    /// How many `-v` flags (see `pmdt_log`).
    fn verbosity(&self) -> u8;
}

/// The JSON mode the raw command line asks for (before it parses).
fn json_mode_of(argv: &[String]) -> JsonMode {
    if argv.iter().any(|a| a == "--json-stream") {
        JsonMode::Stream
    } else if argv.iter().any(|a| a == "--json" || a == "-J") {
        JsonMode::Document
    } else {
        JsonMode::Off
    }
}

fn fail(prog: &str, mode: JsonMode, e: &CliError, code: i32) -> ! {
    print_error(mode, &e.message, e.hint.as_deref());
    e.exit(prog, code)
}

/// Parses the options (exit 2 on a bad option or config file), answers
/// `--completions`/`--man`, runs the tool and exits with its code (1 on an error,
/// printed with its hint).
pub fn run_tool<T: ToolCli>(prog: &str, run: impl FnOnce(T) -> Result<i32, CliError>) -> ! {
    let raw: Vec<String> = std::env::args().collect();
    let early = json_mode_of(&raw);
    let argv = crate::eal_argv::rewrite(raw).unwrap_or_else(|e| fail(prog, early, &e, 2));
    let matches = match T::command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => {
            if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("bad arguments");
                print_error(early, first.trim_start_matches("error: "), None);
            }
            e.exit()
        }
    };
    let cli = T::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.docs().handle::<T>(prog) {
        Ok(true) => std::process::exit(0),
        Ok(false) => {}
        Err(e) => fail(prog, early, &CliError::new(format!("stdout: {e}")), 1),
    }
    let cli =
        crate::config_file::with_file(cli, &matches).unwrap_or_else(|e| fail(prog, early, &e, 2));
    pmdt_log::init(prog, cli.verbosity());
    let mode = cli.json_mode();
    match run(cli) {
        Ok(code) => {
            let _ = std::io::stdout().flush();
            std::process::exit(code)
        }
        Err(e) => fail(prog, mode, &e, 1),
    }
}
