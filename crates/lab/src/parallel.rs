//! Running many independent simulations on a thread pool, with a progress bar: the machinery
//! `sweep` and `reproduce` share.
//!
//! [`run_ordered`] maps a closure over tasks on a rayon pool of a chosen size and returns the
//! results in task order whatever the number of threads, so everything computed from them is
//! independent of `--jobs`. A failing task stops the tasks not yet started (a failure is usually a
//! bug or bad input, and the remaining hours of work would be wasted); a panicking task is turned
//! into an error naming the task rather than an unreadable abort of the whole pool.
//! [`Progress`] is what both commands show on stderr: a bar on a terminal, plain lines elsewhere.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

/// The number of worker threads: `requested`, or every available core.
pub fn jobs(requested: Option<u32>) -> usize {
    requested.map_or_else(
        || {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        },
        |j| j.max(1) as usize,
    )
}

/// Run `f` over `tasks` on `jobs` threads; `on_done` is called after each task (for progress).
///
/// Returns the results in task order. On failure returns the first failing task's index (in
/// task order) and its message; once a task fails, tasks not yet started are skipped. A panic
/// inside `f` is reported as a failure of that task.
pub fn run_ordered<T, R, F>(
    tasks: &[T],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
    f: F,
) -> Result<Vec<R>, (usize, String)>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> Result<R, String> + Sync,
{
    run_ordered_until(tasks, jobs, on_done, &AtomicBool::new(false), f)
}

/// [`run_ordered`] that also stops starting tasks once `cancel` is raised (from another thread,
/// or from `on_done`); the tasks running then finish, and the first task not started is
/// returned as skipped. The caller tells a cancellation from a failure by the flag.
pub fn run_ordered_until<T, R, F>(
    tasks: &[T],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
    f: F,
) -> Result<Vec<R>, (usize, String)>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> Result<R, String> + Sync,
{
    let results = run_ordered_kept(tasks, jobs, on_done, cancel, f).map_err(|e| (0, e))?;
    let mut out = Vec::with_capacity(results.len());
    let mut skipped = None;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => return Err((i, e)),
            None => {
                skipped.get_or_insert(i);
            }
        }
    }
    match skipped {
        // Only a failure or a cancellation skips tasks, and failures return above.
        Some(i) => Err((i, "skipped: the run was cancelled".into())),
        None => Ok(out),
    }
}

/// The outcome of every task, in task order, as [`run_ordered_until`] runs them: `None` for a
/// task that never started (after a failure or a cancellation), so that a cancelled caller
/// can keep what finished. Fails only when the worker threads cannot start.
pub fn run_ordered_kept<T, R, F>(
    tasks: &[T],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
    f: F,
) -> Result<Vec<Option<Result<R, String>>>, String>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> Result<R, String> + Sync,
{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    let failed = AtomicBool::new(false);
    let one = |t: &T| -> Option<Result<R, String>> {
        if failed.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
            return None;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(t)))
            .unwrap_or_else(|_| Err("the simulation panicked (a bug: please report it)".into()));
        on_done();
        if r.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        Some(r)
    };
    Ok(pool.install(|| tasks.par_iter().map(one).collect()))
}

/// Progress of many runs on stderr: a bar on a terminal; off a terminal (logs, pipes, batch
/// jobs) a plain line every [`PLAIN_EVERY`] — runs done/total, elapsed, ETA — so that a long
/// job is never silent; nothing when quiet.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: Option<PlainTicker>,
}

/// How often the plain progress line is written off a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);

struct PlainTicker {
    state: std::sync::Arc<PlainState>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct PlainState {
    done: AtomicU64,
    total: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Progress counting `total` runs (0: set later with [`Progress::set_length`]); `quiet`
    /// shows nothing.
    pub fn new(total: u64, quiet: bool) -> Progress {
        if quiet {
            return Progress {
                bar: None,
                plain: None,
            };
        }
        if std::io::stderr().is_terminal() {
            return Progress {
                bar: Some(progress_bar(total)),
                plain: None,
            };
        }
        let state = std::sync::Arc::new(PlainState {
            done: AtomicU64::new(0),
            total: AtomicU64::new(total),
            stop: AtomicBool::new(false),
        });
        let s = state.clone();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = PLAIN_EVERY;
            while !s.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let elapsed = start.elapsed();
                if elapsed >= next {
                    next += PLAIN_EVERY;
                    let line = plain_line(
                        s.done.load(Ordering::Relaxed),
                        s.total.load(Ordering::Relaxed),
                        elapsed,
                    );
                    eprintln!("{line}");
                }
            }
        });
        Progress {
            bar: None,
            plain: Some(PlainTicker {
                state,
                thread: Some(thread),
            }),
        }
    }

    /// Print `line` on stderr, above the bar when there is one (also when quiet: for what the
    /// user must read, such as what an interruption keeps).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Set the number of runs.
    pub fn set_length(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
        if let Some(p) = &self.plain {
            p.state.total.store(total, Ordering::Relaxed);
        }
    }

    /// One more run done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        if let Some(p) = &self.plain {
            p.state.done.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stop showing progress (the bar is erased; the plain line stops).
    pub fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Some(mut p) = self.plain.take() {
            p.state.stop.store(true, Ordering::Relaxed);
            if let Some(t) = p.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Progress of one long run on stderr (`tfrclab run`): what it is doing (building the
/// network, simulating, summarising, writing the report) and, while simulating, the simulated
/// time reached and the events processed. On a terminal a bar over simulated time; elsewhere a
/// plain line every [`PLAIN_EVERY`], from the first [`PLAIN_EVERY`] on, so that a short run
/// writes nothing and a long one is never silent; nothing when quiet.
pub struct RunProgress {
    bar: Option<ProgressBar>,
    state: std::sync::Arc<RunState>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct RunState {
    phase: std::sync::Mutex<String>,
    now_ns: AtomicU64,
    duration_ns: AtomicU64,
    events: AtomicU64,
    simulating: AtomicBool,
    stop: AtomicBool,
}

impl RunProgress {
    /// Progress of a run; `quiet` shows nothing.
    pub fn new(quiet: bool) -> RunProgress {
        let state = std::sync::Arc::new(RunState::default());
        let mut p = RunProgress {
            bar: None,
            state: state.clone(),
            thread: None,
        };
        if quiet {
            return p;
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{bar:40.cyan/blue} {msg}  elapsed {elapsed}  ETA {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(Duration::from_millis(250));
            p.bar = Some(bar);
            return p;
        }
        p.thread = Some(std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = PLAIN_EVERY;
            while !state.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let elapsed = start.elapsed();
                if elapsed >= next {
                    next += PLAIN_EVERY;
                    eprintln!("{}", state.line(elapsed));
                }
            }
        }));
        p
    }

    /// What the run is doing now ("building the network of 100,000 flows", "summarising").
    pub fn phase(&self, what: &str) {
        self.state.simulating.store(false, Ordering::Relaxed);
        if let Ok(mut p) = self.state.phase.lock() {
            *p = what.to_string();
        }
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// Where the simulation is.
    pub fn simulating(&self, now: Duration, duration: Duration, events: u64) {
        let s = &self.state;
        s.now_ns.store(now.as_nanos() as u64, Ordering::Relaxed);
        s.duration_ns
            .store(duration.as_nanos() as u64, Ordering::Relaxed);
        s.events.store(events, Ordering::Relaxed);
        if !s.simulating.swap(true, Ordering::Relaxed) {
            if let Ok(mut p) = s.phase.lock() {
                *p = "simulating".into();
            }
        }
        if let Some(b) = &self.bar {
            b.set_length(duration.as_millis() as u64);
            b.set_position(now.as_millis() as u64);
            b.set_message(s.sim_text());
        }
    }

    /// Stop showing progress.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.state.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        self.finish();
    }
}

impl RunState {
    /// "3.2 of 10 s simulated (32%), 1234567 events".
    fn sim_text(&self) -> String {
        let now = self.now_ns.load(Ordering::Relaxed) as f64 / 1e9;
        let dur = self.duration_ns.load(Ordering::Relaxed) as f64 / 1e9;
        format!(
            "{} of {} s simulated ({:.0}%), {} events",
            report::fmt_num(now),
            report::fmt_num(dur),
            if dur > 0.0 { 100.0 * now / dur } else { 0.0 },
            self.events.load(Ordering::Relaxed)
        )
    }

    fn line(&self, elapsed: Duration) -> String {
        let s = elapsed.as_secs();
        let what = if self.simulating.load(Ordering::Relaxed) {
            format!("simulating, {}", self.sim_text())
        } else {
            self.phase.lock().map(|p| p.clone()).unwrap_or_default()
        };
        format!("run: {what}, elapsed {}:{:02}", s / 60, s % 60)
    }
}

/// "runs 12/40, elapsed 0:35, ETA 1:10" (ETA from the mean time per finished run).
pub fn plain_line(done: u64, total: u64, elapsed: Duration) -> String {
    let clock = |d: Duration| {
        let s = d.as_secs();
        if s >= 3600 {
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        } else {
            format!("{}:{:02}", s / 60, s % 60)
        }
    };
    let eta = if done > 0 && total > done {
        clock(elapsed.mul_f64((total - done) as f64 / done as f64))
    } else if total > 0 && done >= total {
        "0:00".to_string()
    } else {
        "unknown".to_string()
    };
    format!("runs {done}/{total}, elapsed {}, ETA {eta}", clock(elapsed))
}

/// A progress bar on stderr counting `total` runs, with the elapsed time and an ETA. Hidden
/// when stderr is not a terminal ([`Progress`] writes plain lines there instead).
pub fn progress_bar(total: u64) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40.cyan/blue} {pos}/{len} runs  elapsed {elapsed}  ETA {eta}  {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    // Redraw on a timer too, so the elapsed time and ETA move while long runs are in progress.
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// CPU seconds used so far by the calling thread.
pub(crate) fn thread_cpu_s() -> Option<f64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use nix::sys::resource::{getrusage, UsageWho};
        let u = getrusage(UsageWho::RUSAGE_THREAD).ok()?;
        let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
        Some(s(u.user_time()) + s(u.system_time()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn plain_progress_lines() {
        let s = Duration::from_secs;
        assert_eq!(
            plain_line(10, 40, s(35)),
            "runs 10/40, elapsed 0:35, ETA 1:45"
        );
        assert_eq!(
            plain_line(0, 40, s(5)),
            "runs 0/40, elapsed 0:05, ETA unknown"
        );
        assert_eq!(
            plain_line(40, 40, s(3700)),
            "runs 40/40, elapsed 1:01:40, ETA 0:00"
        );
    }

    #[test]
    fn results_come_back_in_task_order() {
        let tasks: Vec<u64> = (0..200).collect();
        let done = AtomicUsize::new(0);
        let tick = || {
            done.fetch_add(1, Ordering::Relaxed);
        };
        let out = run_ordered(&tasks, 4, &tick, |&t| Ok(t * 2)).unwrap();
        assert_eq!(out, tasks.iter().map(|t| t * 2).collect::<Vec<_>>());
        assert_eq!(done.load(Ordering::Relaxed), 200);
    }

    #[test]
    fn the_first_failure_in_task_order_is_reported() {
        let tasks: Vec<u64> = (0..50).collect();
        let r = run_ordered(&tasks, 1, &|| {}, |&t| {
            if t >= 7 {
                Err(format!("task {t} failed"))
            } else {
                Ok(t)
            }
        });
        assert_eq!(r, Err((7, "task 7 failed".to_string())));
    }

    #[test]
    fn a_panic_is_an_error_not_an_abort() {
        let tasks = [1u8, 2, 3];
        let r: Result<Vec<u8>, _> = run_ordered(&tasks, 2, &|| {}, |&t| {
            if t == 2 {
                panic!("boom");
            }
            Ok(t)
        });
        let (i, msg) = r.unwrap_err();
        assert_eq!(i, 1);
        assert!(msg.contains("panicked"), "{msg}");
    }
}
