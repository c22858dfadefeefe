//! Helpers shared by integration tests.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod chromium;
