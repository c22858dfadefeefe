//! # tfrc — TCP-Friendly Rate Control (RFC 5348), sans-IO
//!
//! The sender and receiver state machines of RFC 5348 with no sockets, threads, clocks or
//! globals: time is passed in as [`Time`], packets are passed in and polled out as values.
//! The simulator (`netsim`) and the UDP transport drive the same code.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod equation;
pub mod packet;
pub mod time;

pub use equation::Equation;
pub use packet::{DataHeader, Feedback};
pub use time::Time;
