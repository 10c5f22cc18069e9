//! Shell completions (`clap_complete`) and a man page (`clap_mangen`), generated
//! from the same clap definition as `--help`, so they cannot drift from it:
//! `TOOL --completions bash > /etc/bash_completion.d/TOOL`,
//! `TOOL --man > /usr/local/share/man/man1/TOOL.1`.

use std::io::Write;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Documentation options (handled before anything else; never in config files).
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Output")]
pub struct DocArgs {
    /// Print a completion script for this shell on stdout and exit.
    #[arg(long, value_name = "SHELL")]
    pub completions: Option<Shell>,
    /// Print the man page (roff) on stdout and exit.
    #[arg(long)]
    pub man: bool,
}

impl DocArgs {
    /// Prints what was asked for; returns whether anything was.
    pub fn handle<T: CommandFactory>(&self, prog: &str) -> std::io::Result<bool> {
        let mut out = std::io::stdout().lock();
        if let Some(shell) = self.completions {
            let mut cmd = T::command();
            clap_complete::generate(shell, &mut cmd, prog, &mut out);
        } else if self.man {
            clap_mangen::Man::new(T::command()).render(&mut out)?;
        } else {
            return Ok(false);
        }
        out.flush()?;
        Ok(true)
    }
}
