//! `dpw`: the differential-privacy workbench CLI (`dpw run | check | list`).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = dpw::cli::Cli::parse();
    match dpw::cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", e.one_line());
            ExitCode::from(e.exit_code())
        }
    }
}
