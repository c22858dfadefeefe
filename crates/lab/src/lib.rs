//! The tfrclab laboratory as a library.
//!
//! A [`scenario::Scenario`] (a validated TOML experiment) is built into a `netsim` network and
//! run; the run's metrics, summaries and time series are computed here, as are sweeps over a
//! grid of `--set` values × seeds with confidence intervals, NS-2 export and validation, and the
//! files every front end writes (`summary.json`, CSVs, `report.html`). The `tfrclab` binary,
//! the `papers` crate and the Python package are front ends of this crate; [`api`] is the small
//! API they start from ([`run`], [`sweep()`], [`Scenario::from_path`]).

#![warn(missing_docs)]

pub mod api;
pub mod bench;
pub mod campaign;
pub mod drops;
pub mod media;
pub mod metrics;
pub mod ns2;
pub mod output;
pub mod parallel;
pub mod pcap;
pub mod probes;
pub mod run_report;
pub mod runner;
pub mod stats;
pub mod summary;
pub mod sweep;
pub mod validate;
pub mod variants;

pub use api::{
    plan, run, sweep, write_sweep, RunError, RunOptions, RunResult, Scenario, ScenarioError,
    SweepError, SweepOptions, SweepPlan, SweepRuns,
};
