//! One module per subcommand.

pub mod equation;
