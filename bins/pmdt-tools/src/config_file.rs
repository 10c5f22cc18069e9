//! Options from a TOML file, overridden by flags given on the command line: a tool's
//! clap struct is also its serde struct, so the file uses the same names as the
//! long flags (with `_` for `-`).

use clap::parser::ValueSource;
use clap::ArgMatches;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cli_error::CliError;

/// Why a config file's options do not apply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigFileError {
    /// A key that names no option of the tool.
    #[error("unknown option {0:?}")]
    UnknownOption(String),
    /// The command line's options could not be written as a table to merge into.
    #[error(transparent)]
    Serialize(#[from] toml::ser::Error),
    /// A value of the wrong type or out of range for its option.
    #[error(transparent)]
    Invalid(#[from] toml::de::Error),
}

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
) -> Result<T, ConfigFileError> {
    let mut merged = toml::Table::try_from(cli)?;
    for (k, v) in file {
        if k == "config" || !ids.contains(&k) {
            return Err(ConfigFileError::UnknownOption(k));
        }
        if matches.value_source(&k) != Some(ValueSource::CommandLine) {
            merged.insert(k, v);
        }
    }
    Ok(merged.try_into()?)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches, Parser};
    use serde::Deserialize;

    use super::*;

    #[derive(Parser, Serialize, Deserialize)]
    struct Opts {
        #[arg(long, default_value_t = 1)]
        rate: u64,
        #[arg(long, default_value_t = 2)]
        size: u64,
    }

    fn merged(args: &[&str], file: &str) -> Result<Opts, ConfigFileError> {
        let m = Opts::command().get_matches_from(args);
        let cli = Opts::from_arg_matches(&m).unwrap();
        let ids = vec!["rate".to_owned(), "size".to_owned()];
        merge(&cli, &m, &ids, toml::from_str(file).unwrap())
    }

    #[test]
    fn the_command_line_wins_over_the_file_and_bad_keys_are_typed_errors() {
        let o = merged(&["t", "--rate", "5"], "rate = 7\nsize = 9").unwrap();
        assert_eq!((o.rate, o.size), (5, 9));
        let e = merged(&["t"], "speed = 1").err().unwrap();
        assert!(matches!(&e, ConfigFileError::UnknownOption(k) if k == "speed"));
        assert_eq!(e.to_string(), "unknown option \"speed\"");
        let e = merged(&["t"], "rate = \"fast\"").err().unwrap();
        assert!(matches!(e, ConfigFileError::Invalid(_)), "{e}");
    }
}
