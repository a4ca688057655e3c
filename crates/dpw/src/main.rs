//! `dpw`: the differential-privacy workbench CLI (`dpw run | check | list`).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match dpw::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // Bad arguments: the first line of clap's message, exit status 2.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{}", first.trim());
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match dpw::cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", e.one_line());
            ExitCode::from(e.exit_code())
        }
    }
}
