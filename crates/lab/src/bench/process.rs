//! Measuring one process: wall time, CPU time and peak resident memory.
//!
//! Each measured program (a tfrclab simulation, or `ns` on an exported script) runs as the only
//! child of a small wrapper process (`tfrclab bench measure -- CMD ...`, [`run_wrapper`]). The
//! wrapper times the child from spawn to exit and then asks the kernel for its children's
//! resource usage (`getrusage(RUSAGE_CHILDREN)`): with exactly one child, `ru_maxrss` is that
//! child's peak RSS and `ru_utime`/`ru_stime` its CPU time, whatever the child allocates and
//! however briefly. Measuring in a fresh process is the honest way: no allocator state, page
//! cache of a previous run or parsed scenario is shared between repetitions.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// What the wrapper reports about its child.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessStats {
    /// Wall time from spawn to exit, seconds.
    pub wall_s: f64,
    /// User CPU time, seconds.
    pub user_s: f64,
    /// System CPU time, seconds.
    pub sys_s: f64,
    /// Peak resident set size, KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
    /// Whether the child exited with status 0.
    pub success: bool,
    /// How the child ended, e.g. `exit status: 1` or `signal: 8 (SIGFPE)`.
    #[serde(default)]
    pub status: String,
    /// The child's standard output (the tfrclab child prints its counters there).
    pub stdout: String,
    /// The end of the child's standard error.
    pub stderr_tail: String,
}

/// Run `cmd args…` in `dir` as this process's only child and measure it (the body of the
/// hidden `bench measure` form). Prints nothing itself.
pub fn run_wrapper(cmd: &str, args: &[String], dir: Option<&Path>) -> anyhow::Result<ProcessStats> {
    let mut c = Command::new(cmd);
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let t0 = Instant::now();
    let child = c
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {cmd}: {e}"))?;
    let out = child.wait_with_output()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail_start = stderr.char_indices().rev().nth(1999).map_or(0, |(i, _)| i);
    Ok(ProcessStats {
        wall_s,
        user_s: secs(usage.user_time()),
        sys_s: secs(usage.system_time()),
        // Linux reports ru_maxrss in KiB.
        max_rss_kib: u64::try_from(usage.max_rss()).unwrap_or(0),
        success: out.status.success(),
        status: out.status.to_string(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr_tail: stderr[tail_start..].to_string(),
    })
}

/// Measure `cmd args…` through a wrapper process (this executable's `bench measure`), so that
/// the resource usage is the command's alone.
pub fn measure(cmd: &str, args: &[String], dir: Option<&Path>) -> anyhow::Result<ProcessStats> {
    let me = std::env::current_exe()?;
    let mut c = Command::new(me);
    c.arg("bench").arg("measure");
    if let Some(d) = dir {
        c.arg("--dir").arg(d);
    }
    c.arg("--").arg(cmd).args(args);
    let out = c.stdin(Stdio::null()).stderr(Stdio::inherit()).output()?;
    if !out.status.success() {
        anyhow::bail!("the measuring wrapper failed ({})", out.status);
    }
    let stats: ProcessStats = serde_json::from_slice(&out.stdout)
        .map_err(|e| anyhow::anyhow!("the measuring wrapper printed no report: {e}"))?;
    if !stats.success {
        let tail = stats.stderr_tail.trim_end();
        if tail.is_empty() {
            anyhow::bail!("{cmd} failed ({}) and wrote no error output", stats.status);
        }
        anyhow::bail!(
            "{cmd} failed ({}); its error output ends:\n{tail}",
            stats.status
        );
    }
    Ok(stats)
}
