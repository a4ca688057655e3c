//! `dpw`, the differential-privacy workbench: manifests, the experiment registry, tidy
//! tables and their CSV form, golden checks, and the CLI commands built on them.
//!
//! The binary (`src/main.rs`) only parses the command line and calls [`cli::dispatch`].
//!
//! # What is here
//! - [`manifest`]: one TOML manifest per figure, parsed and validated before any work;
//!   [`grid`] its parameter grids, [`ranges`] the ranges in which every parameter is
//!   computed correctly.
//! - [`registry`] maps a manifest's `kind` to one of the [`experiments`], each of which
//!   returns a tidy [`table`] (`panel,series,x,y,…`) that the `plotting` crate draws.
//! - [`run`] computes, renders and then writes every figure through [`output`] (staged,
//!   all or nothing); [`check`] recomputes and compares with the checked-in CSVs.
//! - [`calibrate`], [`account`] and [`solve`]: the `dpw calibrate` table, the certified
//!   accountant and its inverse (the solver) on the command line.
//! - [`error`]: the one-line errors and the exit status each maps to.
//!
//! The mathematics is in the repository's `docs/maths.md` and `docs/accountant.md`; code
//! cites them by section (`docs/maths.md §x.y`), and `tests/doc_citations.rs` checks that
//! every cited section exists.

#![deny(missing_docs)]

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
pub mod solve;
pub mod table;
