//! Helpers shared by integration tests.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod chromium;
pub mod layout;
pub mod netns;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

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

/// The `tfrclab` binary, to be given arguments.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
}

/// A UDP port free on loopback when asked (the socket is closed again at once).
pub fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start a command with its standard output and error captured, for a test that talks to it
/// while it runs (`recv`, `send`) and reads what it printed when it ends.
pub trait SpawnPiped {
    /// Spawn with piped stdout and stderr; panics when the binary cannot be started.
    fn spawn_piped(&mut self) -> Child;
}

impl SpawnPiped for Command {
    fn spawn_piped(&mut self) -> Child {
        self.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the command starts")
    }
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

/// Decode `file` with Debian's tshark and the project's dissector (`tools/wireshark/tfrc.lua`):
/// the `fields` of each packet that `filter` selects, one row per packet (a field that occurs
/// more than once keeps its values comma-separated). Panics with the install hint when tshark
/// cannot be run: a machine without it must fail the tests that need it.
pub fn tshark(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let lua = repo().join("tools/wireshark/tfrc.lua");
    let mut cmd = Command::new("tshark");
    cmd.arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args(["-n", "-r"])
        .arg(file)
        .args([
            "-Y",
            filter,
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "occurrence=a",
        ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("tshark is needed (Debian: apt-get install tshark; scripts/setup installs it): {e}")
    });
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(String::from).collect())
        .collect()
}

/// tshark's epoch time ("3.001234567") in nanoseconds, exactly.
pub fn nanos(t: &str) -> u64 {
    let (s, f) = t.split_once('.').unwrap_or((t, "0"));
    let f = format!("{f:0<9}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + f[..9].parse::<u64>().unwrap()
}
