//! `tfrclab validate --real` from the command line (root: network namespaces, tun devices):
//!
//! - a short real validation: two scenarios of `validation/real/` (TFRC + Reno, two TFRC),
//!   15 s each instead of 30, under RED rather than DropTail, three real runs each; asserted on `validate-real.json`: issue 8's
//!   targets on the real side (TFRC and Reno within 0.5–2× of each other; two TFRC flows each
//!   35–65% of their goodput; the bottleneck ≥ 85% used), data in every flow, the emulator's
//!   lateness measured every run, `tcp_info.csv` sampled about every 10 ms, and nothing left
//!   behind;
//! - a run killed with SIGKILL (and one with SIGTERM) midway leaves no namespace, tun device or
//!   process;
//! - bad input and a scenario the real network cannot run exit with code 2, saying why.
//!
//! Budget: about 2.5 minutes (the two scenarios: 6 runs of 15 s plus set-up; the kill tests:
//! 2 × 4 s).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tfrclab")
}

fn need_root() {
    // CI runs as root; elsewhere the test fails saying why rather than passing unrun.
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "needs root: network namespaces and tun devices"
    );
}

/// Every process of the host: its pid and its `/proc/<pid>` folder.
fn processes() -> impl Iterator<Item = (u32, std::path::PathBuf)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
}

/// Every network namespace some process or descriptor of the host refers to, by inode.
fn namespaces_in_use() -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (_, p) in processes() {
        if let Ok(l) = std::fs::read_link(p.join("ns/net")) {
            out.insert(l.to_string_lossy().into_owned());
        }
        if let Ok(fds) = std::fs::read_dir(p.join("fd")) {
            for fd in fds.flatten() {
                if let Ok(l) = std::fs::read_link(fd.path()) {
                    let l = l.to_string_lossy();
                    if l.starts_with("net:[") {
                        out.insert(l.into_owned());
                    }
                }
            }
        }
    }
    out
}

/// Processes whose parent is `pid`, with the namespaces they are in.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (n, p) in processes() {
        let Ok(stat) = std::fs::read_to_string(p.join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: the comm may hold spaces, so split after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|x| x.parse::<u32>().ok());
        if ppid == Some(pid) {
            let ns = std::fs::read_link(p.join("ns/net"))
                .map(|l| l.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((n, ns));
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// Tun devices of the run with process id `pid` (named `t<pid>x…`) in any namespace a
/// process is in: a namespace the run made can only outlive it with a process inside (its
/// own descriptors died with it), so this finds every device it could have left.
fn tun_devices(pid: u32) -> Vec<String> {
    let prefix = format!("t{pid}x");
    let mut out = std::collections::BTreeSet::new();
    for (_, p) in processes() {
        let dev = std::fs::read_to_string(p.join("net/dev")).unwrap_or_default();
        for l in dev.lines() {
            let name = l.trim_start().split(':').next().unwrap_or("");
            if name.starts_with(&prefix) {
                out.insert(name.to_string());
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn short_real_validation_meets_the_targets_and_leaves_nothing() {
    need_root();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = root().join("validation/real");
    let t0 = Instant::now();
    let child = Command::new(bin())
        .args([
            "validate",
            "--real",
            "--reps",
            "3",
            "--set",
            "duration=15s",
            // Issue 8's targets are about TFRC, not about DropTail's phase effect: with the
            // files' DropTail 50 and no random delays, Linux's Reno sends segments back to
            // back into a full queue and takes 0.94 of the drops with a third of the packets
            // (3 runs at load 2: TFRC/Reno 2.24 [0.41, 4.07]; docs/phase-effects.md). Under
            // RED (NS-2's defaults) no flow is singled out: 1.00 [0.59, 1.42] real, 1.14
            // simulated. The files' random delays (both sides) stay on.
            "--set",
            "topology.queue=red",
            "--out",
        ])
        .arg(&out)
        .arg(r.join("tfrc-reno-20ms.toml"))
        .arg(r.join("two-tfrc.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    println!("{stdout}\n{stderr}\n({:.0} s)", t0.elapsed().as_secs_f64());
    assert!(o.status.success(), "validate --real failed");
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("validate-real.json")).unwrap()).unwrap();
    let sc = j["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 2);
    for s in sc {
        let c = &s["comparison"];
        let real = c["real"].as_array().unwrap();
        assert_eq!(real.len(), 3, "{}", s["file"]);
        assert_eq!(c["sim"].as_array().unwrap().len(), 10);
        for run in real {
            let em = &run["emulator"]["lateness"];
            assert!(em["n"].as_u64().unwrap() > 10_000, "{em}");
            assert!(em["p99_ns"].as_u64().is_some());
            // How the drops fell, counted from the capture (lab::drops): the bottleneck's
            // drops are all there, each flow's share of them given.
            let drops = run["drops"].as_array().unwrap();
            let at_bottleneck: Vec<&serde_json::Value> =
                drops.iter().filter(|d| d["link"] == "r0->r1").collect();
            assert_eq!(at_bottleneck.len(), 2, "{drops:?}");
            let shares: f64 = at_bottleneck
                .iter()
                .map(|d| d["drop_share"].as_f64().unwrap())
                .sum();
            assert!((shares - 1.0).abs() < 1e-9, "{drops:?}");
            let flows = run["flows"].as_array().unwrap();
            let total: f64 = flows
                .iter()
                .map(|f| f["throughput_bps"].as_f64().unwrap())
                .sum();
            // TFRC alone fills a link (issue 8: ≥ 85%); together the flows must too.
            assert!(total > 0.85 * 10e6, "bottleneck used {total} b/s: {run}");
            for f in flows {
                assert!(f["received_packets"].as_u64().unwrap() > 1000, "{f}");
                assert!(f["loss_rate"].as_f64().unwrap() < 0.05, "{f}");
            }
            let g: Vec<f64> = flows
                .iter()
                .map(|f| f["goodput_bps"].as_f64().unwrap())
                .collect();
            let ratio = g[0] / g[1];
            if s["file"].as_str().unwrap().contains("reno") {
                // Issue 8: TFRC within 0.5–2× of one Reno flow.
                assert!((0.5..=2.0).contains(&ratio), "TFRC/Reno {ratio}");
            } else {
                // Issue 16: two TFRC flows each get 35–65% of their pair's goodput.
                let share = g[0] / (g[0] + g[1]);
                assert!((0.35..=0.65).contains(&share), "TFRC share {share}");
            }
        }
        let name = c["name"].as_str().unwrap();
        // E5 across the emulated routers: the dumbbell's TFRC flows cross r0 and r1.
        let send: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                out.join(name)
                    .join("rep-01")
                    .join(if name.contains("reno") {
                        "tfrc.send.json"
                    } else {
                        "tfrc1.send.json"
                    }),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(send["sender"]["hops"], 2, "{send}");
        if name.contains("reno") {
            // The kernel's state every ~10 ms: at least 80% of the samples a 15-s flow
            // would give.
            let csv = std::fs::read_to_string(out.join(name).join("rep-01/tcp_info.csv")).unwrap();
            let rows = csv
                .lines()
                .skip(1)
                .filter(|l| l.starts_with("reno,"))
                .count();
            assert!(rows > 1200, "{rows} TCP_INFO samples");
        }
    }
    assert!(stdout.contains("simulated mean [95% CI]"));
    // Nothing left: no namespace (with its devices) and no process of the run.
    assert_eq!(tun_devices(pid), Vec::<String>::new());
    assert!(children_of(pid).is_empty());
}

/// Start a real run, wait until its TFRC sender runs, kill the run with `signal`, and check
/// that its children and namespaces are gone.
fn killed_midway(signal: i32) {
    need_root();
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .args([
            "validate",
            "--real",
            "--reps",
            "1",
            "--set",
            "duration=20s",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .arg(root().join("validation/real/tfrc-reno-20ms.toml"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for both TFRC ends (recv, then send) to run inside their namespaces: a child
    // just forked is still in ours (it enters its node's namespace before it executes).
    let own = std::fs::read_link("/proc/self/ns/net")
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let t0 = Instant::now();
    let kids = loop {
        let k = children_of(pid);
        if k.len() >= 2 && k.iter().all(|c| !c.1.is_empty() && c.1 != own) {
            break k;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run did not start its flows"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let ns: std::collections::BTreeSet<String> = kids.iter().map(|k| k.1.clone()).collect();
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !tun_devices(pid).is_empty(),
        "the run's devices are not visible"
    );
    // SAFETY: kill takes two integers.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
    child.wait().unwrap();
    // The kernel reaps what the run held: its children die with it (parent-death signal),
    // its namespaces and their tun devices with the last reference.
    let t0 = Instant::now();
    loop {
        let left: Vec<u32> = kids.iter().map(|k| k.0).filter(|&p| alive(p)).collect();
        let in_use = namespaces_in_use();
        let ns_left: Vec<&String> = ns.iter().filter(|n| in_use.contains(*n)).collect();
        if left.is_empty() && ns_left.is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "after signal {signal}: processes {left:?}, namespaces {ns_left:?} left"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(tun_devices(pid), Vec::<String>::new());
}

#[test]
fn a_run_killed_with_sigkill_leaves_nothing() {
    killed_midway(libc::SIGKILL);
}

#[test]
fn a_run_stopped_with_sigterm_leaves_nothing() {
    killed_midway(libc::SIGTERM);
}

fn bad_input(toml: &str, extra: &[(&str, &str)], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, toml).unwrap();
    for (name, text) in extra {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let o = Command::new(bin())
        .args(["validate", "--real", "--out"])
        .arg(dir.path().join("out"))
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
    assert!(
        !dir.path().join("out").exists(),
        "wrote output for bad input"
    );
}

const BASE: &str = r#"
name = "bad"
duration = "5s"
[topology]
kind = "dumbbell"
senders = 1
access_bandwidth = "1Gbps"
bottleneck_bandwidth = "10Mbps"
bottleneck_delay = "10ms"
"#;

#[test]
fn what_cannot_run_for_real_is_refused_with_the_reason() {
    need_root();
    // A TCP flow without a real counterpart.
    bad_input(
        &format!("{BASE}[[flows]]\nname = \"t\"\nkind = \"tcp\"\nvariant = \"sack\"\nfrom = \"s0\"\nto = \"d0\"\n"),
        &[],
        &["flow \"t\"", "real = \"reno\""],
    );
    // Wireless ARQ, an untrusted node, a link failure: each named.
    bad_input(
        &format!(
            "{BASE}[topology.wireless]\nframe_loss = 0.1\n[[nodes]]\nname = \"r0\"\nuntrusted = true\n\
             [[events]]\nat = \"1s\"\naction = \"down\"\nlink = \"r0-r1\"\n\
             [[flows]]\nname = \"u\"\nkind = \"tfrc\"\nfrom = \"s0\"\nto = \"d0\"\n"
        ),
        &[],
        &["[links.wireless]", "node \"r0\"", "link failure"],
    );
    // A congestion control this kernel lacks.
    bad_input(
        &format!("{BASE}[[flows]]\nname = \"t\"\nkind = \"tcp\"\nreal = \"nosuchcc\"\nfrom = \"s0\"\nto = \"d0\"\n"),
        &[],
        &["no congestion control \"nosuchcc\""],
    );
    // A Mahimahi trace with a time before the previous line's, located in the trace.
    let trace_link =
        "[[links]]\nfrom = \"a\"\nto = \"b\"\nbandwidth = \"10Mbps\"\ndelay = \"5ms\"\n\
                      [links.trace]\nfile = \"t.mahi\"\nformat = \"mahimahi\"\n\
                      [[flows]]\nname = \"u\"\nkind = \"tfrc\"\nfrom = \"a\"\nto = \"b\"\n";
    bad_input(
        &format!("name = \"bad\"\nduration = \"5s\"\n{trace_link}"),
        &[("t.mahi", "0\n5\n3\n10\n")],
        &["t.mahi line 3: time 3 ms is before the previous line's 5 ms"],
    );
    bad_input(
        &format!("name = \"bad\"\nduration = \"5s\"\n{trace_link}"),
        &[("t.mahi", "4\n-1\n")],
        &["line 2: time -1 ms is negative"],
    );
}

#[test]
fn without_root_it_says_so() {
    need_root();
    // The same command as an unprivileged user (nobody), where the binary is readable.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("tfrclab");
    std::fs::copy(bin(), &copy).unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(
        &s,
        format!("{BASE}[[flows]]\nname = \"u\"\nkind = \"tfrc\"\nfrom = \"s0\"\nto = \"d0\"\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [dir.path(), copy.as_path(), s.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&copy)
        .args(["validate", "--real", "--out", "/tmp/never"])
        .arg(&s)
        .output()
        .expect("setpriv (util-linux)");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("needs root"), "{err}");
}

#[test]
fn a_baseline_without_the_scenario_is_refused_before_anything_runs() {
    need_root();
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = Command::new(bin())
        .args(["validate", "--real", "--baseline"])
        .arg(root().join("validation/real/batches/tfrc-reno-20ms-quiet.json"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg(root().join("validation/real/two-tfrc.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has no runs of scenario `two-tfrc` (it has: tfrc-reno-20ms)"),
        "{err}"
    );
    // Refused up front: no simulation or real run was started.
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(!dir.path().join("out").exists());
}
