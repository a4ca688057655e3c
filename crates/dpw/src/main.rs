//! `dpw`: the differential-privacy workbench CLI (`dpw run | check | list`).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // One process, many windows: freed work arrays are reused, not returned (pages.rs).
    composition::accountant::keep_freed_memory();
    let cli = match dpw::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() || std::env::args().len() == 1 => {
            // Bad arguments: clap's message up to its usage section, on one line, exit
            // status 2 (a missing argument's name is on clap's second line).
            let text = e.to_string();
            let mut parts: Vec<&str> = Vec::new();
            for line in text.lines() {
                let l = line.trim();
                if l.starts_with("Usage:") || l.starts_with("For more information") {
                    break;
                }
                if !l.is_empty() {
                    parts.push(l);
                }
            }
            let msg = if std::env::args().len() == 1 {
                "error: no command given; usage: dpw <run|check|list|calibrate|account|solve> ... \
                 (dpw --help lists them)"
                    .to_string()
            } else if parts.is_empty() {
                "error: invalid arguments".to_string()
            } else {
                parts.join(" ")
            };
            eprintln!("{msg}");
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
