//! What the rest of the host did while a real run ran, so that a batch distorted by other
//! work is visible in its record.
//!
//! The flow ends and the emulator run at SCHED_FIFO, so other processes cannot delay them.
//! The kernel's packet processing is not covered: a tun write or a socket send runs the
//! NET_RX/NET_TX softirqs in the writer's context, but when softirqs keep arriving the kernel
//! hands them to the per-CPU `ksoftirqd` threads, which are ordinary (SCHED_OTHER) threads and
//! wait behind every other runnable process. The emulator's lateness is measured before a
//! write, so it does not see that wait. A run therefore records, between its start and its
//! end:
//! - the shares of all CPUs' time in softirq, stolen by the hypervisor, and idle
//!   (`/proc/stat`; without `CONFIG_IRQ_TIME_ACCOUNTING` the softirq share is the kernel's
//!   sample at each tick, so it is coarse);
//! - the `ksoftirqd` threads' run time and the time they spent runnable but waiting for a CPU
//!   (`/proc/PID/schedstat`, in ns, summed over the CPUs), per second of the run;
//! - the NET_RX softirqs raised per second (`/proc/softirqs`, all CPUs).
//!
//! A figure is NaN when the kernel does not offer its file.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The host's other work over one real run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    /// Wall-clock seconds between the two samples.
    pub seconds: f64,
    /// Share of all CPUs' time spent in softirq (tick-sampled).
    pub softirq: f64,
    /// Share of all CPUs' time stolen by the hypervisor.
    pub steal: f64,
    /// Share of all CPUs' time idle (idle and iowait).
    pub idle: f64,
    /// `ksoftirqd` threads' run time, ms per second of the run (all CPUs together).
    pub ksoftirqd_run_ms_per_s: f64,
    /// `ksoftirqd` threads' time runnable but not running, ms per second of the run: how long
    /// deferred packet processing waited behind other processes.
    pub ksoftirqd_wait_ms_per_s: f64,
    /// NET_RX softirqs raised per second, all CPUs.
    pub net_rx_per_s: f64,
}

impl HostLoad {
    /// One short phrase for a progress line.
    pub fn summary(&self) -> String {
        format!(
            "ksoftirqd ran {:.1} and waited {:.1} ms/s, softirq {:.1}%, steal {:.1}%, idle {:.1}%",
            self.ksoftirqd_run_ms_per_s,
            self.ksoftirqd_wait_ms_per_s,
            100.0 * self.softirq,
            100.0 * self.steal,
            100.0 * self.idle
        )
    }
}

/// The counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// `CLOCK_MONOTONIC`, ns.
    pub at_ns: u64,
    /// The aggregate `cpu` line of `/proc/stat`: user, nice, system, idle, iowait, irq,
    /// softirq, steal (guest time is already inside user and nice).
    pub cpu: Option<[u64; 8]>,
    /// `ksoftirqd` threads: (run ns, wait ns), summed.
    pub ksoftirqd: Option<(u64, u64)>,
    /// NET_RX softirqs raised so far, all CPUs.
    pub net_rx: Option<u64>,
}

impl Snapshot {
    /// Read the counters now.
    pub fn take() -> Snapshot {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        Snapshot {
            at_ns: netemu::sys::monotonic_ns(),
            cpu: read("/proc/stat").as_deref().and_then(parse_stat),
            ksoftirqd: ksoftirqd(Path::new("/proc")),
            net_rx: read("/proc/softirqs")
                .as_deref()
                .and_then(|t| parse_softirqs(t, "NET_RX")),
        }
    }

    /// What happened between `self` and the later `end`.
    pub fn until(&self, end: &Snapshot) -> HostLoad {
        let seconds = end.at_ns.saturating_sub(self.at_ns) as f64 / 1e9;
        let per_s = |x: u64| x as f64 / seconds;
        let (softirq, steal, idle) = match (self.cpu, end.cpu) {
            (Some(a), Some(b)) => {
                let d: Vec<f64> = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| y.saturating_sub(*x) as f64)
                    .collect();
                let total: f64 = d.iter().sum();
                (d[6] / total, d[7] / total, (d[3] + d[4]) / total)
            }
            _ => (f64::NAN, f64::NAN, f64::NAN),
        };
        let (run, wait) = match (self.ksoftirqd, end.ksoftirqd) {
            (Some(a), Some(b)) => (
                per_s(b.0.saturating_sub(a.0)) / 1e6,
                per_s(b.1.saturating_sub(a.1)) / 1e6,
            ),
            _ => (f64::NAN, f64::NAN),
        };
        let net_rx = match (self.net_rx, end.net_rx) {
            (Some(a), Some(b)) => per_s(b.saturating_sub(a)),
            _ => f64::NAN,
        };
        HostLoad {
            seconds,
            softirq,
            steal,
            idle,
            ksoftirqd_run_ms_per_s: run,
            ksoftirqd_wait_ms_per_s: wait,
            net_rx_per_s: net_rx,
        }
    }
}

/// The aggregate `cpu` line of `/proc/stat` (`proc(5)`): its first eight counters.
pub fn parse_stat(text: &str) -> Option<[u64; 8]> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let mut out = [0u64; 8];
    let mut fields = line.split_whitespace().skip(1);
    for x in &mut out {
        *x = fields.next()?.parse().ok()?;
    }
    Some(out)
}

/// One row of `/proc/softirqs` (a count per CPU), summed.
pub fn parse_softirqs(text: &str, name: &str) -> Option<u64> {
    let row = text.lines().find(|l| {
        l.trim_start()
            .strip_prefix(name)
            .is_some_and(|r| r.starts_with(':'))
    })?;
    let (_, counts) = row.split_once(':')?;
    counts
        .split_whitespace()
        .map(|c| c.parse::<u64>().ok())
        .sum()
}

/// `/proc/PID/schedstat`: run ns, wait ns (the third field, timeslices, is not needed).
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// The `ksoftirqd/N` threads under `proc` (a `/proc` directory), their schedstat summed;
/// `None` when there are none or the kernel has no schedstat.
fn ksoftirqd(proc: &Path) -> Option<(u64, u64)> {
    let mut sum = None;
    for e in std::fs::read_dir(proc).ok()?.flatten() {
        let name = e.file_name();
        // Kernel threads have small ids; only numeric entries are processes.
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("ksoftirqd/") {
            continue;
        }
        if let Some((r, w)) = std::fs::read_to_string(e.path().join("schedstat"))
            .ok()
            .as_deref()
            .and_then(parse_schedstat)
        {
            let (r0, w0) = sum.unwrap_or((0, 0));
            sum = Some((r0 + r, w0 + w));
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  7285738 444724 1043725 1302199 13270 0 11532 2343 0 0\n\
                        cpu0 3644325 224006 502964 670698 3687 0 4076 1175 0 0\n\
                        intr 1 2 3\n";

    #[test]
    fn parses_the_aggregate_cpu_line() {
        assert_eq!(
            parse_stat(STAT),
            Some([7285738, 444724, 1043725, 1302199, 13270, 0, 11532, 2343])
        );
        assert_eq!(parse_stat("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(parse_stat("cpu  1 2 3\n"), None, "too few counters");
    }

    #[test]
    fn sums_one_softirq_row() {
        let t = "                    CPU0       CPU1\n          HI:          0          0\n\
                 \x20     NET_TX:     275147     287240\n      NET_RX:   10938122   10766869\n";
        assert_eq!(parse_softirqs(t, "NET_RX"), Some(10938122 + 10766869));
        assert_eq!(parse_softirqs(t, "NET_TX"), Some(275147 + 287240));
        assert_eq!(parse_softirqs(t, "BLOCK"), None);
        assert_eq!(
            parse_schedstat("4672910292 156402301333 205056\n"),
            Some((4672910292, 156402301333))
        );
        assert_eq!(parse_schedstat("12\n"), None);
    }

    #[test]
    fn shares_and_rates_between_two_snapshots() {
        let a = Snapshot {
            at_ns: 1_000_000_000,
            cpu: Some([100, 0, 100, 100, 0, 0, 0, 0]),
            ksoftirqd: Some((5_000_000, 7_000_000)),
            net_rx: Some(1_000),
        };
        // Two seconds later: 400 jiffies, of which 40 softirq, 20 steal, 80 idle + 20 iowait.
        let b = Snapshot {
            at_ns: 3_000_000_000,
            cpu: Some([300, 0, 140, 180, 20, 0, 40, 20]),
            ksoftirqd: Some((9_000_000, 27_000_000)),
            net_rx: Some(41_000),
        };
        let h = a.until(&b);
        assert_eq!(h.seconds, 2.0);
        assert!((h.softirq - 0.1).abs() < 1e-12, "{h:?}");
        assert!((h.steal - 0.05).abs() < 1e-12, "{h:?}");
        assert!((h.idle - 0.25).abs() < 1e-12, "{h:?}");
        assert!((h.ksoftirqd_run_ms_per_s - 2.0).abs() < 1e-12, "{h:?}");
        assert!((h.ksoftirqd_wait_ms_per_s - 10.0).abs() < 1e-12, "{h:?}");
        assert!((h.net_rx_per_s - 20_000.0).abs() < 1e-9, "{h:?}");
        // A kernel without the files gives NaN, not a panic or a zero.
        let none = Snapshot {
            at_ns: 2,
            ..Snapshot::default()
        };
        assert!(Snapshot::default()
            .until(&none)
            .ksoftirqd_wait_ms_per_s
            .is_nan());
    }
}
