//! Options from a TOML file, overridden by flags given on the command line: a tool's
//! clap struct is also its serde struct, so the file uses the same names as the
//! long flags (with `_` for `-`).

use clap::parser::ValueSource;
use clap::{ArgMatches, Parser};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cli_error::CliError;

/// Parses the command line; if `--config FILE` was given, fills every option not
/// set on the command line from the file.
pub fn parse<T>(config_of: impl Fn(&T) -> Option<std::path::PathBuf>) -> Result<T, CliError>
where
    T: Parser + Serialize + DeserializeOwned,
{
    let matches = T::command().get_matches();
    let cli = T::from_arg_matches(&matches).map_err(|e| e.exit())?;
    let Some(path) = config_of(&cli) else {
        return Ok(cli);
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CliError::new(format!("cannot read config {}: {e}", path.display())))?;
    let file: toml::Table = toml::from_str(&text).map_err(|e| {
        CliError::new(format!("config {}: {e}", path.display()))
            .hint("keys are the long option names with `_` for `-`, e.g. rate = \"5gbit\"")
    })?;
    let ids: Vec<String> = T::command()
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    merge(&cli, &matches, &ids, file)
        .map_err(|e| CliError::new(format!("config {}: {e}", path.display())))
}

/// `cli` with every value not given on the command line taken from `file`; `ids`
/// are the valid option names.
pub fn merge<T: Serialize + DeserializeOwned>(
    cli: &T,
    matches: &ArgMatches,
    ids: &[String],
    file: toml::Table,
) -> Result<T, String> {
    let mut merged = toml::Table::try_from(cli).map_err(|e| e.to_string())?;
    for (k, v) in file {
        if k == "config" || !ids.contains(&k) {
            return Err(format!("unknown option {k:?}"));
        }
        if matches.value_source(&k) != Some(ValueSource::CommandLine) {
            merged.insert(k, v);
        }
    }
    merged
        .try_into()
        .map_err(|e: toml::de::Error| e.to_string())
}
