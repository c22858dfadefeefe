//! NS-2.35: export a scenario as a Tcl script that builds the same experiment.
//!
//! [`export`] turns a validated [`Scenario`](scenario::Scenario) into a deterministic
//! NS-2.35 Tcl script. The script uses an identity mapping so that the same metric code reads
//! NS-2's `trace-all` output and tfrclab's own NS-2-format trace (see [`export`] for details):
//! NS-2 node id = scenario node index, `fid_` = flow index on both agents of a flow, agents
//! attached in flow order (sender, then receiver), so each node numbers its agents' ports
//! 0, 1, 2, … exactly as `netsim` does.

mod export;

pub use export::{default_trace_file, export, ns2_seed, ExportError, ExportOptions, Unsupported};
