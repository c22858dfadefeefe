//! One module per subcommand.

pub mod bench;
pub mod equation;
pub mod export_ns2;
pub mod output;
pub mod recv;
pub mod reproduce;
pub mod run;
pub mod send;
pub mod sweep;
pub mod validate;
pub mod variants;
