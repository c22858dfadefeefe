//! RFC 5348, section by section: one test per requirement of §3–§6 and §8, each named after its
//! section, driving the public API with scripted times (no sleeps, no simulator) and checking
//! values computed here from the RFC's formulas. Each test runs the `rfc5348` profile and, where
//! the requirement concerns NS-2.35 too, the `ns2` profile: the same assertion where NS-2.35
//! agrees, the departure (numbered as in `docs/tfrc-core.md`) where it does not.
//! `docs/rfc5348-conformance.md` is the table of these tests.

// The RFC's formulas are index loops ("for (i = 1 to n)"); they are kept in that form.
#![allow(clippy::needless_range_loop)]

mod liveness;
mod receiver;
mod regressions;
mod sender;
mod support;
