//! Opens a page in headless Chromium and reports everything it logged and fetched.
//!
//! Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: commands
//! on fd 3, replies on fd 4, NUL-separated JSON), so there is no port, no websocket client and no
//! log scraping: console calls, uncaught exceptions, browser log entries (CSP violations, failed
//! loads) and network requests arrive as protocol events tied to our page.
//!
//! Host names never resolve (`--host-resolver-rules`), so even a faulty page cannot send traffic
//! off this machine; the attempt is still recorded as a request.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Whole-load deadline; a cold Chromium start takes a second or two.
const DEADLINE: Duration = Duration::from_secs(90);
/// How long to keep listening after the load event for late messages.
const SETTLE: Duration = Duration::from_millis(500);

/// The Chromium binary: `$CHROMIUM`, else `chromium` on `PATH`. Panics with the install hint
/// when there is none, because these tests must not silently skip.
pub fn chromium_path() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("chromium"))
        .find(|p| p.is_file());
    match found {
        Some(p) => p,
        None => panic!(
            "chromium not found on PATH; the report tests need headless Chromium: \
             run `apt-get install chromium` (or set CHROMIUM=/path/to/chromium)"
        ),
    }
}

/// Flags for a throw-away, offline, root-safe headless browser.
fn base_flags(profile: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-extensions".into(),
        "--host-resolver-rules=MAP * ~NOTFOUND".into(),
        format!("--user-data-dir={}", profile.display()),
    ]
}

/// What a page did while loading.
#[derive(Debug, Default)]
pub struct PageLoad {
    /// The URL that was opened.
    pub url: String,
    /// `console.*` calls, as `type: text`.
    pub console: Vec<String>,
    /// Uncaught exceptions.
    pub exceptions: Vec<String>,
    /// Browser log entries (CSP violations, failed loads, interventions), as
    /// `level source: text (url)`.
    pub log: Vec<String>,
    /// URLs of every request the page made, the page itself included.
    pub requests: Vec<String>,
    /// The value of the probe expression, evaluated after the load event.
    pub probe: Value,
}

impl PageLoad {
    /// Everything that counts as a console error or warning: all console calls, exceptions and
    /// log entries (a report's script logs nothing, so any of these is a defect).
    pub fn problems(&self) -> Vec<String> {
        self.console
            .iter()
            .chain(&self.exceptions)
            .chain(&self.log)
            .cloned()
            .collect()
    }

    /// Requests other than for the page itself.
    pub fn other_requests(&self) -> Vec<String> {
        self.requests
            .iter()
            .filter(|u| **u != self.url)
            .cloned()
            .collect()
    }
}

struct Cdp {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: u64,
    events: Vec<Value>,
    deadline: Instant,
    stderr_path: PathBuf,
}

impl Cdp {
    fn start(profile: &Path) -> Cdp {
        let stderr_path = profile.join("chromium-stderr.log");
        std::fs::create_dir_all(profile).expect("profile dir");
        let stderr = std::fs::File::create(&stderr_path).expect("stderr log");
        // Map our stdin/stdout onto Chromium's fds 3/4; its own stdout goes to the log.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 1>&2 </dev/null")
            .arg(chromium_path())
            .args(base_flags(profile))
            .arg("--remote-debugging-pipe")
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start chromium ({e}): apt-get install chromium"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                break;
                            }
                        }
                    }
                }
            }
        });
        Cdp {
            child,
            stdin,
            rx,
            next_id: 1,
            events: Vec::new(),
            deadline: Instant::now() + DEADLINE,
            stderr_path,
        }
    }

    fn fail(&mut self, what: &str) -> ! {
        let _ = self.child.kill();
        let log = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        panic!(
            "chromium: {what}\nlast stderr lines (newest first):\n{}",
            tail.join("\n")
        );
    }

    fn recv(&mut self, timeout: Duration) -> Option<Value> {
        match self.rx.recv_timeout(timeout) {
            Ok(v) => Some(v),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.fail("the browser closed the protocol pipe")
            }
        }
    }

    fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).expect("json");
        bytes.push(0);
        if self
            .stdin
            .write_all(&bytes)
            .and_then(|_| self.stdin.flush())
            .is_err()
        {
            self.fail(&format!("cannot send {method}"));
        }
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.fail(&format!("no reply to {method} in time"));
            }
            let Some(v) = self.recv(left) else { continue };
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(err) = v.get("error") {
                    self.fail(&format!("{method} failed: {err}"));
                }
                return v.get("result").cloned().unwrap_or(Value::Null);
            }
            self.events.push(v);
        }
    }

    /// Waits until an event `method` for `session` has been seen.
    fn wait_event(&mut self, method: &str, session: &str) {
        let seen = |e: &Value| e["method"] == method && e["sessionId"] == session;
        while !self.events.iter().any(seen) {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.fail(&format!("no {method} event in time"));
            }
            if let Some(v) = self.recv(left) {
                self.events.push(v);
            }
        }
    }

    /// Collects whatever arrives during `d`.
    fn drain(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.recv(left) {
                Some(v) => self.events.push(v),
                None => break,
            }
        }
    }

    fn close(mut self) {
        let _ = self.call_no_wait("Browser.close");
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn call_no_wait(&mut self, method: &str) -> std::io::Result<()> {
        let msg = json!({ "id": self.next_id, "method": method, "params": {} });
        let mut bytes = serde_json::to_vec(&msg).expect("json");
        bytes.push(0);
        self.stdin.write_all(&bytes)?;
        self.stdin.flush()
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn text_of_args(args: &Value) -> String {
    args.as_array()
        .map(|a| {
            a.iter()
                .map(|v| match v.get("value") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => v
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The `file://` URL of a local file.
pub fn file_url(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("file://{}", abs.display())
}

/// Loads `path` in a fresh headless Chromium, waits for the load event (plus a short settle),
/// evaluates `probe` (a JavaScript expression; its value is returned as JSON) and reports what
/// the page logged and requested.
pub fn load(path: &Path, probe: &str) -> PageLoad {
    load_sized(path, probe, None)
}

/// Like [`load`], in a viewport `width`×`height` CSS pixels (device scale 1) when given.
pub fn load_sized(path: &Path, probe: &str, viewport: Option<(u32, u32)>) -> PageLoad {
    load_with(path, probe, viewport, true)
}

/// Like [`load_sized`]; with `scripts` false the page's own scripts do not run (the probe
/// still does), as for a reader who turned JavaScript off.
pub fn load_with(
    path: &Path,
    probe: &str,
    viewport: Option<(u32, u32)>,
    scripts: bool,
) -> PageLoad {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut cdp = Cdp::start(profile.path());
    let url = file_url(path);
    let target = cdp.call("Target.createTarget", json!({ "url": "about:blank" }), None);
    let target_id = target["targetId"].as_str().unwrap_or_default().to_string();
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({ "targetId": target_id, "flatten": true }),
        None,
    );
    let session = attached["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for domain in [
        "Runtime.enable",
        "Log.enable",
        "Network.enable",
        "Page.enable",
    ] {
        cdp.call(domain, json!({}), Some(&session));
    }
    if let Some((width, height)) = viewport {
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
            Some(&session),
        );
    }
    if !scripts {
        cdp.call(
            "Emulation.setScriptExecutionDisabled",
            json!({ "value": true }),
            Some(&session),
        );
    }
    // Events from about:blank are irrelevant; only what follows the navigation counts.
    cdp.events.clear();
    let nav = cdp.call("Page.navigate", json!({ "url": url }), Some(&session));
    if let Some(err) = nav.get("errorText").and_then(Value::as_str) {
        cdp.fail(&format!("navigation to {url} failed: {err}"));
    }
    cdp.wait_event("Page.loadEventFired", &session);
    cdp.drain(SETTLE);
    let value = cdp.call(
        "Runtime.evaluate",
        json!({ "expression": probe, "returnByValue": true, "awaitPromise": true }),
        Some(&session),
    );
    if let Some(ex) = value.get("exceptionDetails") {
        cdp.fail(&format!("probe threw: {ex}"));
    }
    let probe_value = value["result"].get("value").cloned().unwrap_or(Value::Null);
    cdp.drain(Duration::from_millis(100));

    let mut out = PageLoad {
        url,
        probe: probe_value,
        ..PageLoad::default()
    };
    for e in &cdp.events {
        if e["sessionId"] != session.as_str() {
            continue;
        }
        let p = &e["params"];
        match e["method"].as_str().unwrap_or_default() {
            "Runtime.consoleAPICalled" => out.console.push(format!(
                "{}: {}",
                p["type"].as_str().unwrap_or("?"),
                text_of_args(&p["args"])
            )),
            "Runtime.exceptionThrown" => {
                let d = &p["exceptionDetails"];
                let desc = d["exception"]["description"]
                    .as_str()
                    .or(d["text"].as_str())
                    .unwrap_or("?");
                out.exceptions.push(desc.to_string());
            }
            "Log.entryAdded" => {
                let en = &p["entry"];
                out.log.push(format!(
                    "{} {}: {} ({})",
                    en["level"].as_str().unwrap_or("?"),
                    en["source"].as_str().unwrap_or("?"),
                    en["text"].as_str().unwrap_or("?"),
                    en["url"].as_str().unwrap_or("")
                ));
            }
            "Network.requestWillBeSent" => {
                out.requests
                    .push(p["request"]["url"].as_str().unwrap_or("?").to_string());
            }
            _ => {}
        }
    }
    cdp.close();
    out
}

/// Saves a `width`×`height` PNG screenshot of `path` (for looking at a report by eye).
pub fn screenshot(path: &Path, png: &Path, width: u32, height: u32) {
    let profile = tempfile::tempdir().expect("profile dir");
    let status = Command::new(chromium_path())
        .args(base_flags(profile.path()))
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(file_url(path))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot start chromium ({e}): apt-get install chromium"));
    assert!(
        status.success() && png.is_file(),
        "screenshot of {} failed",
        path.display()
    );
}
