//! `dpw`, the differential-privacy workbench: manifests, the experiment registry, tidy
//! tables and their CSV form, golden checks, and the CLI commands built on them.
//!
//! The binary (`src/main.rs`) only parses the command line and calls [`cli::dispatch`].

#![warn(missing_docs)]

pub mod account;
pub mod calibrate;
pub mod check;
pub mod cli;
pub mod error;
pub mod experiments;
pub mod grid;
pub mod manifest;
pub mod output;
pub mod ranges;
pub mod registry;
pub mod run;
pub mod table;
