//! The tools' `main`: options (command line + TOML file), run, exit code.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cli_error::CliError;

/// Parses the options (exit 2 on a bad option or config file), runs the tool and
/// exits with its code (1 on an error, printed with its hint).
pub fn run_tool<T>(
    prog: &str,
    config_of: impl Fn(&T) -> Option<PathBuf>,
    run: impl FnOnce(T) -> Result<i32, CliError>,
) -> !
where
    T: Parser + Serialize + DeserializeOwned,
{
    let cli = crate::config_file::parse::<T>(config_of).unwrap_or_else(|e| e.exit(prog, 2));
    match run(cli) {
        Ok(code) => {
            let _ = std::io::stdout().flush();
            std::process::exit(code)
        }
        Err(e) => e.exit(prog, 1),
    }
}
