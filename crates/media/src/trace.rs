//! Frame-size traces: a recorded encoder output played back as is.
//!
//! A trace is CSV text, one frame per row: `time,size,type`, where `time` is the frame's
//! capture time in seconds from the start of the trace, `size` its encoded size in bytes (a
//! positive integer) and `type` `I` (or `K`, `key`) for a key frame or `P` (or `delta`) for any
//! other, any case. A first row whose first field is not a number is a header; blank lines and
//! lines starting with `#` are skipped. Times must increase from row to row.
//!
//! A trace does not adapt: [`TraceSource`] plays it whatever target the controller sets, which
//! is what an application that ignores its congestion controller would send.

use crate::{nanos_from_secs, Frame, Nanos};

/// One frame of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceFrame {
    /// Capture time from the start of the trace.
    pub time: Nanos,
    /// Encoded size, bytes.
    pub size: u32,
    /// A key frame.
    pub key: bool,
}

/// A parsed frame trace.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTrace {
    frames: Vec<TraceFrame>,
}

/// A problem in a trace file, at a line.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    /// The file's name as the caller gave it.
    pub file: String,
    /// 1-based line number (0 when the problem is the whole file).
    pub line: usize,
    /// What is wrong and what would be right.
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

impl FrameTrace {
    /// Parse `text`; errors name `file` and the line.
    pub fn parse(text: &str, file: &str) -> Result<FrameTrace, TraceError> {
        let err = |line: usize, message: String| TraceError {
            file: file.to_string(),
            line,
            message,
        };
        let mut frames: Vec<TraceFrame> = Vec::new();
        let mut prev_secs: Option<(f64, usize)> = None;
        let mut seen_row = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let row = raw.trim();
            if row.is_empty() || row.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = row.split(',').map(str::trim).collect();
            let first_row = !seen_row;
            seen_row = true;
            if first_row && fields[0].parse::<f64>().is_err() {
                continue; // a header
            }
            if fields.len() != 3 {
                return Err(err(
                    line,
                    format!(
                        "expected 3 fields `time,size,type` (e.g. `0.033,4200,P`), found {}",
                        fields.len()
                    ),
                ));
            }
            let secs: f64 = fields[0].parse().map_err(|_| {
                err(
                    line,
                    format!("time `{}` is not a number of seconds", fields[0]),
                )
            })?;
            if !secs.is_finite() || secs < 0.0 {
                return Err(err(
                    line,
                    format!(
                        "time `{}` must be a finite number of seconds ≥ 0",
                        fields[0]
                    ),
                ));
            }
            if let Some((p, pl)) = prev_secs {
                if secs <= p {
                    return Err(err(
                        line,
                        format!(
                            "time {secs} s is not after the previous frame's {p} s (line {pl}): \
                             rows must be sorted by time, one frame per capture time"
                        ),
                    ));
                }
            }
            prev_secs = Some((secs, line));
            let size = match fields[1].parse::<i64>() {
                Ok(s) if s > 0 && s <= i64::from(u32::MAX) => s as u32,
                Ok(s) if s <= 0 => {
                    return Err(err(
                        line,
                        format!("frame size {s} must be a positive number of bytes"),
                    ))
                }
                _ => {
                    return Err(err(
                        line,
                        format!(
                            "frame size `{}` is not an integer number of bytes in [1, {}]",
                            fields[1],
                            u32::MAX
                        ),
                    ))
                }
            };
            let key = match fields[2].to_ascii_lowercase().as_str() {
                "i" | "k" | "key" => true,
                "p" | "b" | "delta" => false,
                other => {
                    return Err(err(
                        line,
                        format!("frame type `{other}`: expected `I` (key frame) or `P`"),
                    ))
                }
            };
            frames.push(TraceFrame {
                time: nanos_from_secs(secs),
                size,
                key,
            });
        }
        if frames.is_empty() {
            return Err(err(0, "no frames: expected rows `time,size,type`".into()));
        }
        Ok(FrameTrace { frames })
    }

    /// Read and parse the file at `path`.
    pub fn from_path(path: &std::path::Path) -> Result<FrameTrace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|e| TraceError {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
        FrameTrace::parse(&text, &path.display().to_string())
    }

    /// The frames, in time order.
    pub fn frames(&self) -> &[TraceFrame] {
        &self.frames
    }

    /// The trace's mean bitrate, bit/s: its bytes over its span plus one mean frame interval
    /// (so that a looped trace has this rate).
    pub fn mean_rate(&self) -> f64 {
        let bytes: f64 = self.frames.iter().map(|f| f64::from(f.size)).sum();
        bytes * 8.0 / (self.period() as f64 / 1e9)
    }

    /// The time a looped trace takes to repeat: the last frame's time plus the mean interval
    /// (one second for a single frame).
    pub fn period(&self) -> Nanos {
        let n = self.frames.len() as u64;
        let first = self.frames[0].time;
        let last = self.frames[self.frames.len() - 1].time;
        if n < 2 {
            return last + crate::SECOND;
        }
        last + (last - first) / (n - 1)
    }
}

/// Plays a [`FrameTrace`] from a start time, once or looped.
#[derive(Clone, Debug)]
pub struct TraceSource {
    trace: FrameTrace,
    looped: bool,
    start: Option<Nanos>,
    /// Index of the next frame and the offset of the current repetition.
    idx: usize,
    offset: Nanos,
    stopped: bool,
    next_id: u32,
    target: f64,
}

impl TraceSource {
    /// A source playing `trace`; `looped` repeats it every [`FrameTrace::period`].
    pub fn new(trace: FrameTrace, looped: bool) -> Self {
        TraceSource {
            trace,
            looped,
            start: None,
            idx: 0,
            offset: 0,
            stopped: false,
            next_id: 0,
            target: 0.0,
        }
    }

    /// The trace.
    pub fn trace(&self) -> &FrameTrace {
        &self.trace
    }

    /// Start: the trace's time 0 is `now`.
    pub fn start(&mut self, now: Nanos) {
        self.start = Some(now);
        self.stopped = false;
    }

    /// Stop producing frames.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The target the controller last asked for (recorded, not followed), bit/s.
    pub fn requested_rate(&self) -> f64 {
        self.target
    }

    /// Record the controller's target (a trace does not adapt).
    pub fn set_target(&mut self, _now: Nanos, bps: f64) {
        self.target = bps;
    }

    /// When the next frame is due.
    pub fn next_frame_at(&self) -> Option<Nanos> {
        if self.stopped {
            return None;
        }
        let start = self.start?;
        let f = self.trace.frames.get(self.idx)?;
        Some(start.saturating_add(self.offset).saturating_add(f.time))
    }

    /// Produce the frame due at [`TraceSource::next_frame_at`].
    pub fn next_frame(&mut self) -> Option<Frame> {
        let capture = self.next_frame_at()?;
        let f = self.trace.frames[self.idx];
        self.idx += 1;
        if self.idx == self.trace.frames.len() && self.looped {
            self.idx = 0;
            self.offset = self.offset.saturating_add(self.trace.period());
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        Some(Frame {
            id,
            capture,
            size: f.size,
            key: f.key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_headers_and_comments() {
        let t = FrameTrace::parse(
            "time,size,type\n# a comment\n0,4000,I\n\n0.033,900,p\n0.067, 1100 ,P\n",
            "t.csv",
        )
        .unwrap();
        assert_eq!(t.frames().len(), 3);
        assert_eq!(
            t.frames()[1],
            TraceFrame {
                time: 33_000_000,
                size: 900,
                key: false
            }
        );
        assert!(t.frames()[0].key);
        // Period: 67 ms + the mean interval 33.5 ms.
        assert_eq!(t.period(), 67_000_000 + 33_500_000);
    }

    fn error(text: &str) -> String {
        FrameTrace::parse(text, "v.csv").unwrap_err().to_string()
    }

    #[test]
    fn bad_rows_name_the_file_and_line() {
        assert_eq!(
            error("0,100,I\n0.1,-5,P\n"),
            "v.csv:2: frame size -5 must be a positive number of bytes"
        );
        let e = error("time,size,type\n0,100,I\n0.2,100,P\n0.1,100,P\n");
        assert!(
            e.starts_with("v.csv:4: time 0.1 s is not after the previous frame's 0.2 s (line 3)"),
            "{e}"
        );
        assert!(error("0,100,I\n0,100,P\n").starts_with("v.csv:2: time 0 s is not after"));
        assert!(error("0,100\n").starts_with("v.csv:1: expected 3 fields"));
        assert!(error("0,100,X\n").starts_with("v.csv:1: frame type `x`"));
        assert!(error("0,1.5,P\n").starts_with("v.csv:1: frame size `1.5` is not an integer"));
        assert!(error("-1,100,P\n").starts_with("v.csv:1: time `-1` must be"));
        assert!(error("0,100,P\nabc,1,P\n").starts_with("v.csv:2: time `abc` is not a number"));
        assert_eq!(
            error("# nothing\n"),
            "v.csv: no frames: expected rows `time,size,type`"
        );
    }

    #[test]
    fn plays_once_or_looped() {
        let t = FrameTrace::parse("0,10,I\n0.5,20,P\n", "t").unwrap();
        let mut once = TraceSource::new(t.clone(), false);
        once.start(1_000);
        assert_eq!(
            once.next_frame().map(|f| (f.capture, f.size)),
            Some((1_000, 10))
        );
        assert_eq!(
            once.next_frame().map(|f| (f.capture, f.size)),
            Some((500_001_000, 20))
        );
        assert_eq!(once.next_frame_at(), None);
        let mut looped = TraceSource::new(t, true);
        looped.start(0);
        let caps: Vec<Nanos> = (0..4)
            .map(|_| looped.next_frame().unwrap().capture)
            .collect();
        assert_eq!(caps, [0, 500_000_000, 1_000_000_000, 1_500_000_000]);
        looped.set_target(0, 5e5);
        assert_eq!(looped.requested_rate(), 5e5);
    }
}
