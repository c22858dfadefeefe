//! The tfrclab command-line lab as a library: every subcommand's implementation, the scenario
//! file format, metrics and reports. The `tfrclab` binary only parses arguments and calls in.

#![warn(missing_docs)]

pub mod bench;
pub mod commands;
pub mod metrics;
pub mod ns2;
pub mod parallel;
pub mod report;
pub mod reproduce;
pub mod run_report;
pub mod runner;
pub mod scenario;
pub mod stats;
pub mod summary;
pub mod sweep;
pub mod validate;
pub mod variant_metrics;

/// Exit code for bad input (flags, files), as for clap's own usage errors.
pub const EXIT_BAD_INPUT: u8 = 2;
