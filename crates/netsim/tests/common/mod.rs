//! Helpers for the NS-2 agreement tests.
#![allow(dead_code)]

use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use netsim::stats::{FlowRecorder, StatsConfig};
use netsim::trace::{Ns2Flow, Ns2TraceReader};

/// `validation/ns2/<name>`.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../validation/ns2")
        .join(name)
}

/// Fail `test` unless the `ns` binary (NS-2.35) can be run: an agreement test that skipped
/// its NS-2 half would pass without checking anything.
pub fn require_ns(test: &str) {
    let ok = Command::new("ns")
        .arg("-c")
        .arg("exit 0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        ok,
        "{test}: the NS-2 simulator `ns` is not on PATH; install NS-2.35 with \
         `apt-get install -y ns2`"
    );
}

/// Run `ns <script> <args…>` with the trace on stdout and feed it to recorders for `flows`.
pub fn ns_recorders(name: &str, args: &[&str], flows: &[Ns2Flow]) -> Vec<FlowRecorder> {
    let mut child = Command::new("ns")
        .arg(script(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("ns runs");
    let mut reader = Ns2TraceReader::new(flows, &StatsConfig::default());
    reader
        .feed_reader(BufReader::new(child.stdout.take().expect("stdout")))
        .expect("NS-2 trace parses");
    let status = child.wait().expect("ns exits");
    assert!(status.success(), "ns {name} {args:?} failed: {status}");
    reader.recorders().to_vec()
}

/// Run `ns <script> <args…>` and return its stdout.
pub fn ns_output(name: &str, args: &[&str]) -> String {
    let out = Command::new("ns")
        .arg(script(name))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("ns runs");
    assert!(
        out.status.success(),
        "ns {name} {args:?} failed: {:?}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A `Write` whose bytes the test can read after the simulator took the writer.
#[derive(Clone, Default)]
pub struct SharedBuf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl SharedBuf {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.borrow().clone()).expect("utf-8")
    }
}

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
