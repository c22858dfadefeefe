//! The tfrclab command-line lab as a library: every subcommand's implementation, the scenario
//! file format, metrics and reports. The `tfrclab` binary only parses arguments and calls in.

#![warn(missing_docs)]

pub mod commands;

/// Exit code for bad input (flags, files), as for clap's own usage errors.
pub const EXIT_BAD_INPUT: u8 = 2;
