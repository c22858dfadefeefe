//! Helpers shared by integration tests.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod chromium;
pub mod layout;
pub mod netns;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (scenario paths in tests are relative to it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run the `tfrclab` binary from the repository root.
pub fn tfrclab_at_root(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("tfrclab runs")
}

/// Panics with the install hint when `ns` cannot be run: a machine without NS-2 must fail
/// the tests that compare against it, not pass them silently.
pub fn require_ns() {
    let ok = Command::new("ns")
        .arg("-c")
        .arg("exit 0")
        .stdin(Stdio::null())
        .output()
        .is_ok();
    assert!(
        ok,
        "the NS-2 simulator `ns` is not on PATH; install NS-2.35 with `apt-get install ns2`"
    );
}
