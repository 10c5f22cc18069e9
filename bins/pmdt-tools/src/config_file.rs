//! Options from a TOML file, overridden by flags given on the command line: a tool's
//! clap struct is also its serde struct, so the file uses the same names as the
//! long flags (with `_` for `-`).

use clap::parser::ValueSource;
use clap::ArgMatches;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cli_error::CliError;

/// `cli` (parsed from the command line into `matches`) with every option the
/// command line left out taken from `--config FILE`, if given.
pub fn with_file<T: crate::entry::ToolCli>(cli: T, matches: &ArgMatches) -> Result<T, CliError> {
    let Some(path) = cli.config_path() else {
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
        .filter(|id| id != "completions" && id != "man")
        .collect();
    merge(&cli, matches, &ids, file)
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
