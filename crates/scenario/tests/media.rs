//! `kind = "media"` flows and `[flows.on_off]` TCP cross traffic: keys, defaults, and every
//! bad input reported at its line (frame traces at the trace's own line). Budget: < 1 s.

use std::time::Duration;

use scenario::{FlowKind, MediaController, MediaSource, OnOff, Scenario, TfrcProfile};

const BASE: &str = r#"
name = "media"
duration = "60s"

[[links]]
from = "s"
to = "d"
bandwidth = "1Mbps"
delay = "50ms"
"#;

fn with(flows: &str) -> String {
    format!("{BASE}{flows}")
}

fn problem(text: &str, file: &str) -> (usize, String, String) {
    let e = Scenario::parse(file, text).expect_err("should be rejected");
    assert_eq!(e.problems.len(), 1, "{:#?}", e.problems);
    let p = &e.problems[0];
    (
        p.line,
        p.message.clone(),
        p.expected.clone().unwrap_or_default(),
    )
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect(needle) + 1
}

#[test]
fn a_media_flow_defaults_to_tfrc_and_the_statistical_model() {
    let s = Scenario::parse(
        "m.toml",
        &with("[[flows]]\nname = \"v\"\nkind = \"media\"\nfrom = \"s\"\nto = \"d\"\n"),
    )
    .unwrap();
    let f = &s.flows[0];
    assert_eq!(f.packet_size, 1000);
    let FlowKind::Media {
        controller,
        source,
        deadline,
        pauses,
    } = &f.kind
    else {
        panic!("{:?}", f.kind)
    };
    assert_eq!(
        controller,
        &MediaController::Tfrc {
            profile: TfrcProfile::Rfc5348,
            variants: vec![]
        }
    );
    assert_eq!(
        source,
        &MediaSource::Statistical(media::model::StatisticalConfig::default())
    );
    assert_eq!(*deadline, Duration::from_millis(400));
    assert!(pauses.is_empty());
    assert_eq!(f.kind.name(), "media");
}

#[test]
fn source_keys_and_tfrc_keys_are_read() {
    let s = Scenario::parse(
        "m.toml",
        &with(
            r#"[[flows]]
name = "v"
kind = "media"
controller = "tfrc"
profile = "ns2"
variants = ["adaptive-rtt"]
packet_size = 1200
deadline = "250ms"
from = "s"
to = "d"
[flows.source]
fps = 25
min_rate = "100kbps"
max_rate = "2Mbps"
start_rate = "300kbps"
reaction_delay = "100ms"
key_interval = 0
transient_frames = 8
key_ratio = 3.5
size_noise = 0.1
interval_noise = 0
"#,
        ),
    )
    .unwrap();
    let f = &s.flows[0];
    assert_eq!(f.variants().len(), 1);
    let FlowKind::Media {
        controller: MediaController::Tfrc { profile, .. },
        source: MediaSource::Statistical(c),
        deadline,
        ..
    } = &f.kind
    else {
        panic!("{:?}", f.kind)
    };
    assert_eq!(*profile, TfrcProfile::Ns2);
    assert_eq!(*deadline, Duration::from_millis(250));
    assert_eq!(
        (c.fps, c.r_min, c.r_max, c.r_init),
        (25.0, 100e3, 2e6, 300e3)
    );
    assert_eq!(c.reaction_delay, 100_000_000);
    assert_eq!(c.key_interval, None);
    assert_eq!((c.transient_frames, c.key_ratio), (8, 3.5));
    assert_eq!((c.size_noise, c.interval_noise), (0.1, 0.0));
}

const FLOW: &str = "[[flows]]\nname = \"v\"\nkind = \"media\"\nfrom = \"s\"\nto = \"d\"\n";

#[test]
fn the_rmcat_controllers_are_named() {
    for (name, want) in [
        ("nada", MediaController::Nada),
        ("scream", MediaController::Scream),
        ("gcc", MediaController::Gcc),
    ] {
        let s =
            Scenario::parse("m.toml", &with(&format!("{FLOW}controller = \"{name}\"\n"))).unwrap();
        let FlowKind::Media { controller, .. } = &s.flows[0].kind else {
            panic!()
        };
        assert_eq!(controller, &want);
        assert_eq!(controller.name(), name);
        assert!(s.flows[0].variants().is_empty());
    }
    // The error lists every name.
    let (_, _, exp) = problem(&with(&format!("{FLOW}controller = \"x\"\n")), "m.toml");
    for name in MediaController::NAMES {
        assert!(exp.contains(&format!("\"{name}\"")), "{exp}");
    }
}

#[test]
fn a_zero_deadline_is_an_error_at_its_line() {
    let text = with(&format!("{FLOW}deadline = 0\n"));
    let (line, msg, exp) = problem(&text, "m.toml");
    assert_eq!(line, line_of(&text, "deadline = 0"));
    assert!(msg.contains("`deadline` is 0"), "{msg}");
    assert!(exp.contains("400ms"), "{exp}");
}

#[test]
fn a_trace_source_is_read_relative_to_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("f.csv"),
        "time,size,type\n0,5000,I\n0.04,900,P\n",
    )
    .unwrap();
    let path = dir.path().join("m.toml");
    let text = with(&format!(
        "{FLOW}[flows.source]\nmodel = \"trace\"\nfile = \"f.csv\"\nloop = false\n"
    ));
    let s = Scenario::parse(path.to_str().unwrap(), &text).unwrap();
    let FlowKind::Media {
        source:
            MediaSource::Trace {
                file,
                trace,
                looped,
            },
        ..
    } = &s.flows[0].kind
    else {
        panic!()
    };
    assert_eq!(file, "f.csv");
    assert_eq!(trace.frames().len(), 2);
    assert!(!looped);
}

#[test]
fn bad_frame_traces_name_the_trace_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("m.toml");
    let text = with(&format!(
        "{FLOW}[flows.source]\nmodel = \"trace\"\nfile = \"f.csv\"\n"
    ));
    for (csv, needle) in [
        (
            "0,5000,I\n0.04,-900,P\n",
            "f.csv:2: frame size -900 must be a positive number",
        ),
        (
            "0,5000,I\n0.08,900,P\n0.04,900,P\n",
            "f.csv:3: time 0.04 s is not after the previous frame's 0.08 s (line 2)",
        ),
    ] {
        std::fs::write(dir.path().join("f.csv"), csv).unwrap();
        let (line, msg, _) = problem(&text, scen.to_str().unwrap());
        assert_eq!(line, line_of(&text, "file = "));
        assert!(msg.starts_with("frame trace "), "{msg}");
        assert!(msg.contains(needle), "{msg} lacks {needle}");
    }
    std::fs::remove_file(dir.path().join("f.csv")).unwrap();
    let (_, msg, _) = problem(&text, scen.to_str().unwrap());
    assert!(msg.contains("cannot read"), "{msg}");
}

#[test]
fn keys_of_the_other_model_or_kind_are_refused() {
    let cases = [
        (
            format!("{FLOW}[flows.source]\nmodel = \"trace\"\nfps = 30\nfile = \"x.csv\"\n"),
            "fps = 30",
            "`fps` is a key of model = \"statistical\"",
        ),
        (
            format!("{FLOW}[flows.source]\nfile = \"x.csv\"\n"),
            "file = ",
            "`file` is a key of model = \"trace\"",
        ),
        (
            format!("{FLOW}[flows.source]\nmodel = \"svc\"\n"),
            "model = ",
            "unknown media source model \"svc\"",
        ),
        (
            format!("{FLOW}controller = \"gcc2\"\n"),
            "controller = ",
            "unknown media controller \"gcc2\"",
        ),
        (
            format!("{FLOW}controller = \"nada\"\nprofile = \"ns2\"\n"),
            "profile = ",
            "`profile` configures TFRC, but this media flow has controller = \"nada\"",
        ),
        (
            format!("{FLOW}controller = \"gcc\"\nvariants = [\"adaptive-rtt\"]\n"),
            "variants = ",
            "`variants` configures TFRC, but this media flow has controller = \"gcc\"",
        ),
        (
            format!("{FLOW}[flows.source]\nkey_ratio = 50\n"),
            "key_ratio = ",
            "media source: `key_ratio` must be in [1, transient_frames]",
        ),
        (
            format!("{FLOW}[flows.source]\nmax_rate = \"100kbps\"\n"),
            "max_rate = ",
            "media source: `max_rate` must be a rate at least r_min",
        ),
        (
            "[[flows]]\nname = \"u\"\nkind = \"udp\"\nfrom = \"s\"\nto = \"d\"\ndeadline = 1\n"
                .to_string(),
            "deadline = 1",
            "`deadline` is a media key",
        ),
        (
            format!("{FLOW}app_rate = \"1Mbps\"\n"),
            "app_rate",
            "`app_rate` is a tfrc key",
        ),
    ];
    for (flows, needle, msg_part) in cases {
        let text = with(&flows);
        let (line, msg, _) = problem(&text, "m.toml");
        assert!(msg.contains(msg_part), "{msg} lacks {msg_part}");
        assert_eq!(line, line_of(&text, needle), "{msg}");
    }
}

#[test]
fn on_off_tcp_cross_traffic() {
    let tcp = "[[flows]]\nname = \"short\"\nkind = \"tcp\"\nfrom = \"s\"\nto = \"d\"\n";
    let s = Scenario::parse(
        "m.toml",
        &with(&format!(
            "{tcp}[flows.on_off]\nsize_min = 30000\nsize_max = 50000\noff_mean = \"10s\"\nstart_on = false\n"
        )),
    )
    .unwrap();
    let FlowKind::Tcp { on_off, .. } = &s.flows[0].kind else {
        panic!()
    };
    assert_eq!(
        *on_off,
        Some(OnOff {
            size_min: 30000,
            size_max: 50000,
            off_mean: Duration::from_secs(10),
            start_on: false
        })
    );
    let text = with(&format!(
        "{tcp}[flows.on_off]\nsize_min = 30000\nsize_max = 20000\noff_mean = \"10s\"\n"
    ));
    let (line, msg, _) = problem(&text, "m.toml");
    assert_eq!(line, line_of(&text, "size_max"));
    assert!(msg.contains("below `size_min`"), "{msg}");
    let text = with(&format!(
        "{tcp}[flows.on_off]\nsize_min = 1\nsize_max = 2\noff_mean = 0\n"
    ));
    assert!(problem(&text, "m.toml").1.contains("`off_mean` is 0"));
    let text = with(&format!(
        "{FLOW}[flows.on_off]\nsize_min = 1\nsize_max = 2\noff_mean = \"1s\"\n"
    ));
    assert!(problem(&text, "m.toml").1.contains("`on_off` is a tcp key"));
    let text = with(&format!(
        "{tcp}variant = \"cubic\"\n[flows.on_off]\nsize_min = 1\nsize_max = 2\noff_mean = \"1s\"\n"
    ));
    assert!(problem(&text, "m.toml")
        .1
        .contains("with variant = \"cubic\""));
}

#[test]
fn pauses_are_sorted_pairs_inside_the_flow() {
    let ok = with(&format!(
        "{FLOW}stop = \"50s\"\npauses = [[\"10s\", \"20s\"], [\"30s\", \"40s\"]]\n"
    ));
    let s = Scenario::parse("m.toml", &ok).unwrap();
    let FlowKind::Media { pauses, .. } = &s.flows[0].kind else {
        panic!()
    };
    assert_eq!(
        pauses,
        &[
            (Duration::from_secs(10), Duration::from_secs(20)),
            (Duration::from_secs(30), Duration::from_secs(40))
        ]
    );
    for bad in [
        "pauses = [[\"20s\", \"10s\"]]",
        "pauses = [[\"10s\", \"20s\"], [\"15s\", \"30s\"]]",
        "pauses = [[\"10s\", \"70s\"]]",
        "pauses = [[\"10s\"]]",
    ] {
        let text = with(&format!("{FLOW}{bad}\n"));
        let (line, msg, exp) = problem(&text, "m.toml");
        assert_eq!(line, line_of(&text, "pauses"), "{bad}: {msg}");
        assert!(exp.contains("[from, to] pairs"), "{bad}: {exp}");
    }
}
