//! Scenario validation tests: every kind of bad input issue 4 lists is reported with its line
//! and column, what is wrong and what is expected.

use super::*;

use crate::testing::{red_params, with_red, with_tfrc_line, GOOD};

fn problems(text: &str) -> Vec<Problem> {
    Scenario::parse("bad.toml", text)
        .expect_err("should be rejected")
        .problems
}

/// The single problem, asserting its line and that message/expected mention the needles.
fn one(text: &str, line: usize, in_message: &str, in_expected: &str) -> Problem {
    let ps = problems(text);
    assert_eq!(ps.len(), 1, "{ps:#?}");
    let p = ps.into_iter().next().unwrap();
    assert_eq!(p.line, line, "{p:#?}");
    assert!(p.column >= 1, "{p:#?}");
    assert!(
        p.message.contains(in_message),
        "message {:?} lacks {in_message:?}",
        p.message
    );
    let exp = p.expected.clone().unwrap_or_default();
    assert!(
        exp.contains(in_expected),
        "expected {exp:?} lacks {in_expected:?}"
    );
    p
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect(needle) + 1
}

#[test]
fn good_scenario_parses_with_units() {
    let s = Scenario::parse("good.toml", GOOD).unwrap();
    assert_eq!(s.name, "tfrc-vs-tcp");
    assert_eq!(s.duration, Duration::from_secs(100));
    assert_eq!(s.seed, 7);
    assert_eq!(s.warmup, Duration::from_secs(5));
    assert_eq!(s.sample_interval, Duration::from_millis(500));
    assert_eq!(
        s.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        ["n0", "r0", "r1", "n2"]
    );
    assert_eq!(s.links[1].bandwidth_bps, 1.5e6);
    assert_eq!(s.links[2].bandwidth_bps, 10e6);
    assert_eq!(s.links[2].delay, Duration::from_millis(2));
    assert!(
        matches!(s.links[1].queue, Queue::Red { limit: 50, ref params } if params.thresh == Some(5.0))
    );
    assert_eq!(
        s.links[2].loss.as_ref().unwrap().direction,
        LinkDirection::Both
    );
    assert_eq!(s.flows[0].start, Duration::from_millis(100));
    assert_eq!(s.flows[0].stop, Duration::from_secs(100));
    assert!(matches!(
        s.flows[0].kind,
        FlowKind::Tfrc {
            profile: TfrcProfile::Ns2,
            app_rate_bps: None,
            app_on_off: None,
            ref variants,
        } if variants.is_empty()
    ));
    assert!(matches!(
        s.flows[1].kind,
        FlowKind::Tcp {
            variant: TcpVariant::Tahoe,
            window: 100,
            ..
        }
    ));
    assert_eq!(s.flows[1].packet_size, 1000);
    assert_eq!(s.events[0].link, 1);
}

#[test]
fn unknown_key_names_the_valid_ones() {
    let text = GOOD.replace("window = 100", "windw = 100");
    let ps = problems(&text);
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].line, line_of(&text, "windw"));
    assert!(
        ps[0].message.contains("unknown field `windw`"),
        "{}",
        ps[0].message
    );
    assert!(ps[0].message.contains("`window`"), "{}", ps[0].message);
}

#[test]
fn unknown_node() {
    let text = GOOD.replace("to = \"n2\"\nstart", "to = \"n9\"\nstart");
    one(
        &text,
        line_of(&text, "\"n9\""),
        "unknown node \"n9\"",
        "n0, r0, r1, n2",
    );
}

#[test]
fn unreachable_node() {
    let text = format!("{GOOD}\n[[links]]\nfrom = \"x\"\nto = \"y\"\nbandwidth = \"1Mbps\"\ndelay = 0\n\n[[flows]]\nname = \"lost\"\nkind = \"udp\"\nfrom = \"n0\"\nto = \"y\"\n");
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("to = \"y\""))
        .last()
        .unwrap()
        .0
        + 1;
    one(&text, line, "unreachable", "links that connect");
}

#[test]
fn simplex_without_return_path() {
    let text = "name = \"s\"\nduration = \"1s\"\n[[links]]\nfrom = \"a\"\nto = \"b\"\nbandwidth = \"1Mbps\"\ndelay = 0\nduplex = false\n[[flows]]\nname = \"f\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\n";
    one(text, 12, "no return path from \"b\" to \"a\"", "duplex");
}

#[test]
fn non_positive_bandwidth() {
    let text = GOOD.replace("bandwidth = \"10Mbps\"", "bandwidth = 0");
    one(
        &text,
        line_of(&text, "bandwidth = 0"),
        "must be positive",
        "bandwidth",
    );
    let text = GOOD.replace("bandwidth = \"10Mbps\"", "bandwidth = \"-5Mbps\"");
    one(
        &text,
        line_of(&text, "-5Mbps"),
        "must be positive",
        "10Mbps",
    );
}

#[test]
fn negative_delay() {
    let text = GOOD.replace("delay = \"2ms\"", "delay = \"-2ms\"");
    one(&text, line_of(&text, "-2ms"), "negative", "zero or more");
}

#[test]
fn start_after_stop() {
    let text = GOOD.replace("start = \"0.1s\"", "start = \"30s\"\nstop = \"20s\"");
    one(
        &text,
        line_of(&text, "stop = \"20s\""),
        "stops",
        "start < stop",
    );
}

#[test]
fn unparsable_units() {
    let text = GOOD.replace("\"10Mbps\"", "\"10 Mfurlongs\"");
    one(
        &text,
        line_of(&text, "Mfurlongs"),
        "unknown bandwidth unit",
        "10Mbps",
    );
    let text = GOOD.replace("\"500ms\"", "\"500 fortnights\"");
    one(
        &text,
        line_of(&text, "fortnights"),
        "unknown time unit",
        "150ms",
    );
}

#[test]
fn duplicate_names() {
    let text = GOOD.replace("name = \"tcp1\"", "name = \"tfrc1\"");
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("name = \"tfrc1\""))
        .last()
        .unwrap()
        .0
        + 1;
    one(&text, line, "duplicate flow name", "unique");
}

#[test]
fn key_of_another_kind() {
    let text = GOOD.replace("profile = \"ns2\"", "profile = \"ns2\"\nwindow = 5");
    one(
        &text,
        line_of(&text, "window = 5"),
        "`window` is a tcp key",
        "tfrc",
    );
}

#[test]
fn toml_syntax_error_is_located() {
    let text = GOOD.replace("seed = 7", "seed = = 7");
    let ps = problems(&text);
    assert_eq!(ps[0].line, line_of(&text, "seed = = 7"));
}

#[test]
fn wrong_type_is_located() {
    let text = GOOD.replace("queue_limit = 50", "queue_limit = \"fifty\"");
    let ps = problems(&text);
    assert_eq!(ps[0].line, line_of(&text, "fifty"));
    assert!(ps[0].message.contains("invalid type"), "{}", ps[0].message);
}

#[test]
fn several_problems_are_all_reported_in_order() {
    let text = GOOD
        .replace("delay = \"2ms\"", "delay = \"-2ms\"")
        .replace("variant = \"tahoe\"", "variant = \"vegas\"");
    let ps = problems(&text);
    assert_eq!(ps.len(), 2, "{ps:#?}");
    assert!(ps[0].line < ps[1].line);
    assert!(ps[1].message.contains("vegas"));
}

#[test]
fn error_display_names_file_line_column() {
    let text = GOOD.replace("variant = \"tahoe\"", "variant = \"vegas\"");
    let e = Scenario::parse("x/bad.toml", &text)
        .unwrap_err()
        .to_string();
    let line = line_of(&text, "vegas");
    assert!(
        e.starts_with(&format!(
            "x/bad.toml:{line}:11: unknown TCP variant \"vegas\""
        )),
        "{e}"
    );
    assert!(
        e.contains("expected: \"newreno\", \"reno\", \"tahoe\", \"sack\" or \"cubic\""),
        "{e}"
    );
}

#[test]
fn sack_variant_parses() {
    let text = GOOD.replace("variant = \"tahoe\"", "variant = \"sack\"");
    let s = Scenario::parse("x/sack.toml", &text).expect("sack is a TCP variant");
    assert!(s.flows.iter().any(|f| matches!(
        f.kind,
        FlowKind::Tcp {
            variant: TcpVariant::Sack,
            ..
        }
    )));
}

#[test]
fn dumbbell_expands() {
    let text = r#"
name = "db"
duration = "10s"
[topology]
kind = "dumbbell"
senders = 2
access_bandwidth = "10Mbps"
access_delay = ["1ms", "30ms"]
bottleneck_bandwidth = "1.5Mbps"
bottleneck_delay = "20ms"
queue = "droptail"
queue_limit = 30
[[flows]]
name = "a"
kind = "tcp"
from = "s0"
to = "d0"
[[flows]]
name = "b"
kind = "tcp"
from = "s1"
to = "d1"
"#;
    let s = Scenario::parse("db.toml", text).unwrap();
    let names: Vec<&str> = s.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["s0-r0", "s1-r0", "r0-r1", "r1-d0", "r1-d1"]);
    assert_eq!(s.links[1].delay, Duration::from_millis(30));
    assert_eq!(s.links[4].delay, Duration::from_millis(30));
    assert!(matches!(
        s.links[2].queue,
        Queue::DropTail { limit: 30, .. }
    ));
    let bad = text.replace(
        "access_delay = [\"1ms\", \"30ms\"]",
        "access_delay = [\"1ms\"]",
    );
    one(
        &bad,
        line_of(&bad, "access_delay"),
        "has 1 entries for 2 nodes",
        "a list of 2",
    );
}

#[test]
fn set_overrides_then_validates() {
    let dir = std::env::temp_dir().join(format!("tfrclab-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(&path, GOOD).unwrap();
    let s = Scenario::load_with(
        &path,
        &[
            ("flows.tcp1.window".into(), "7".into()),
            ("links.r0-r1.bandwidth".into(), "3Mbps".into()),
        ],
    )
    .unwrap();
    assert!(matches!(s.flows[1].kind, FlowKind::Tcp { window: 7, .. }));
    assert_eq!(s.links[1].bandwidth_bps, 3e6);
    let e =
        Scenario::load_with(&path, &[("links.r0-r1.bandwidth".into(), "0".into())]).unwrap_err();
    assert_eq!(e.problems[0].line, line_of(GOOD, "bandwidth = \"1.5Mb\""));
    assert!(
        e.problems[0]
            .message
            .starts_with("--set links.r0-r1.bandwidth=0: "),
        "{e}"
    );
    // A key the file lacks: the error names the override instead of a line of the file.
    let e =
        Scenario::load_with(&path, &[("flows.tcp1.packet_size".into(), "-3".into())]).unwrap_err();
    assert_eq!(e.problems[0].line, 0, "{e}");
    assert!(
        e.problems[0]
            .message
            .starts_with("--set flows.tcp1.packet_size=-3: "),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_file_is_reported() {
    let e = Scenario::load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: cannot read the file"),
        "{e}"
    );
}

#[test]
fn red_presets_select_adaptive_red_and_seed_001() {
    let p = red_params(&with_red("red", ""));
    assert_eq!(
        (p.average, p.thresholds, p.max_p, p.q_weight),
        (RedAverage::Ewma, RedThresholds::Fixed, RedMaxP::Fixed, None)
    );
    // Adaptive RED with Floyd et al.'s automatic weight (NS-2 q_weight_ 0) and NS-2's
    // automatic bottom (0).
    let p = red_params(&with_red("ared", ""));
    assert_eq!(p.max_p, RedMaxP::AdaptiveRed(MaxPAimd::defaults(true)));
    assert_eq!(MaxPAimd::defaults(true).bottom, 0.0);
    assert_eq!((p.average, p.q_weight), (RedAverage::Ewma, Some(0.0)));
    // An explicit weight wins over the preset's (−1 is NS-2's automatic choice).
    let p = red_params(&with_red("ared", "q_weight = -1\n"));
    assert_eq!(p.q_weight, None);
    let p = red_params(&with_red("ered", ""));
    assert_eq!(p.average, RedAverage::ShewhartEwma);
    assert_eq!(p.thresholds, RedThresholds::AutoTuned { alpha_th: 1.0 });
    assert_eq!(p.max_p, RedMaxP::AdaptiveQ3(MaxPAimd::defaults(false)));
    assert_eq!(MaxPAimd::defaults(false).bottom, 0.01);
    assert_eq!(p.q_weight, None);
}

#[test]
fn red_variant_errors_are_located() {
    let t = with_red("red", "average = \"holt-winters\"\n");
    one(
        &t,
        line_of(&t, "holt-winters"),
        "unknown average \"holt-winters\"",
        "\"ewma\" or \"shewhart-ewma\"",
    );
    let t = with_red("ered", "max_p = \"fixed\"\n");
    one(
        &t,
        line_of(&t, "max_p = \"fixed\""),
        "queue = \"ered\" has max_p = \"adaptive-q3\"",
        "queue = \"red\" with max_p = \"fixed\"",
    );
    let t = with_red("ared", "thresholds = \"auto-tuned\"\n");
    one(
        &t,
        line_of(&t, "auto-tuned"),
        "queue = \"ared\" has thresholds = \"fixed\"",
        "queue = \"red\"",
    );
    let t = with_red("red", "alpha_th = 2\n");
    one(
        &t,
        line_of(&t, "alpha_th"),
        "`alpha_th` applies to thresholds = \"auto-tuned\" only",
        "remove `alpha_th`",
    );
    let t = with_red("red", "interval = \"1s\"\n");
    one(
        &t,
        line_of(&t, "interval = \"1s\""),
        "`interval` applies to max_p",
        "\"adaptive-q3\" or \"adaptive-red\"",
    );
    let t = with_red("ered", "beta = 1.5\n");
    one(&t, line_of(&t, "beta"), "`beta` = 1.5", "(0, 1)");
    let t = with_red("ered", "interval = 0\n");
    one(
        &t,
        line_of(&t, "interval = 0"),
        "`interval` is zero",
        "positive",
    );
    let t = with_red("ered", "alpha_th = -1\n");
    one(&t, line_of(&t, "alpha_th"), "`alpha_th` = -1", "packets");
    let t = with_red("ared", "top = 0.2\nbottom = 0.3\n");
    one(
        &t,
        line_of(&t, "bottom"),
        "bottom 0.3 is above top 0.2",
        "bottom ≤ top",
    );
    let t = with_red("red", "q_weight = -3\n");
    one(
        &t,
        line_of(&t, "q_weight"),
        "`q_weight` = -3",
        "0 for 1 − exp(−1/C)",
    );
    let t = GOOD.replace("queue = \"red\"", "queue = \"blue\"");
    one(
        &t,
        line_of(&t, "blue"),
        "unknown queue \"blue\"",
        "\"ered\" (seed 001)",
    );
}

#[test]
fn protection_errors_are_located() {
    let t = format!("{GOOD}\n[protection]\nseal = \"-1us\"\n");
    one(
        &t,
        line_of(&t, "seal"),
        "`seal` is negative",
        "zero or more",
    );
    let t = format!("{GOOD}\n[protection]\nflows = [\"tfrc1\", \"tfrc9\"]\n");
    one(
        &t,
        line_of(&t, "tfrc9"),
        "unknown flow \"tfrc9\"",
        "tfrc1, tcp1",
    );
    let t = format!("{GOOD}\n[protection]\nflows = [\"tcp1\", \"tcp1\"]\n");
    one(
        &t,
        line_of(&t, "flows = ["),
        "listed twice",
        "each flow once",
    );
    let t = format!("{GOOD}\n[protection]\ncost = 1\n");
    let ps = problems(&t);
    assert_eq!(ps[0].line, line_of(&t, "cost"));
    assert!(ps[0].message.contains("`seal`"), "{}", ps[0].message);
}

/// The single problem, asserting its line and that it starts at `needle` on that line.
fn one_at(text: &str, needle: &str, in_message: &str, in_expected: &str) -> Problem {
    let line = line_of(text, needle);
    let p = one(text, line, in_message, in_expected);
    let src = text.lines().nth(line - 1).unwrap();
    let col = src[..src.find(needle).unwrap()].chars().count() + 1;
    assert_eq!(p.column, col, "{p:#?}");
    p
}

#[test]
fn tfrc_variant_errors_point_at_the_element() {
    // Unknown name: the list of valid names.
    let t = with_tfrc_line("variants = [\"adaptive-rtt\", \"vegas\"]");
    one_at(
        &t,
        "\"vegas\"",
        "unknown variant 'vegas'",
        "adaptive-rtt, rto-link-error, ali-ci-replace",
    );
    // Unknown parameter: the variant's parameters with defaults and ranges.
    let t = with_tfrc_line("variants = [\"veno:gama=0.8\"]");
    one_at(
        &t,
        "\"veno:",
        "variant veno has no parameter 'gama'",
        "gamma_random (default 0.8, [0, 1))",
    );
    let t = with_tfrc_line("variants = [\"ali-mean-include:t=2\"]");
    one_at(&t, "\"ali", "has no parameter 't'", "has no parameters");
    // Out of range.
    let t = with_tfrc_line("variants = [\"adaptive-rtt\", \"adaptive-ttl:a=1.5\"]");
    one_at(
        &t,
        "\"adaptive-ttl",
        "a = 1.5 is outside [0.5, 1)",
        "`a` in [0.5, 1)",
    );
    let t = with_tfrc_line("variants = [\"veno:threshold=2,threshold=3\"]");
    one_at(&t, "\"veno", "given twice", "threshold (default 3");
    // Syntax.
    let t = with_tfrc_line("variants = [\"veno:threshold\"]");
    one_at(
        &t,
        "\"veno",
        "not of the form name[:param=value,...]",
        "ali-ci-replace:t=2.58",
    );
    // Two variants of one policy: at the second.
    let t = with_tfrc_line("variants = [\"veno\", \"adaptive-rtt\", \"simd\"]");
    one_at(
        &t,
        "\"simd\"",
        "variants veno and simd both set the throughput equation",
        "keep veno or simd",
    );
    let t = with_tfrc_line("variants = [\"ali-ci-include\", \"ali-mean-replace\"]");
    one_at(
        &t,
        "\"ali-mean",
        "average-loss-interval",
        "keep ali-ci-include",
    );
    // The same variant twice: at the second.
    let t = with_tfrc_line("variants = [\"protect-all\", \"Protect-All\"]");
    one_at(&t, "\"Protect", "chosen twice", "each variant once");
    // A missing prerequisite is judged with the whole list.
    let t = with_tfrc_line("variants = [\"rto-link-error\"]");
    one_at(
        &t,
        "\"rto",
        "rto-link-error needs a loss classifier",
        "also list a loss classifier: owd-classifier, veno",
    );
    let t = with_tfrc_line("variants = [\"rto-link-error\", \"owd-classifier\"]");
    assert!(Scenario::parse("v.toml", &t).is_ok());
    // An invalid resulting profile.
    let t = with_tfrc_line("variants = [\"adaptive-ttl:ttl_min=64,ttl_max=40\"]");
    one_at(&t, "\"adaptive", "ttl", "valid profile");
    // A TFRC key on a TCP flow.
    let t = GOOD.replace("window = 100", "window = 100\nvariants = [\"veno\"]");
    one(
        &t,
        line_of(&t, "variants"),
        "`variants` is a tfrc key, but flow \"tcp1\" has kind = \"tcp\"",
        "tcp flows",
    );
    // Several bad elements: each reported.
    let t = with_tfrc_line("variants = [\"vegas\", \"veno:x=1\", \"simd:beta=2\"]");
    assert_eq!(problems(&t).len(), 3);
    // ... and a clash among the valid ones as well.
    let t = with_tfrc_line("variants = [\"veno\", \"vegas\", \"simd\"]");
    let ps = problems(&t);
    assert_eq!(ps.len(), 2, "{ps:#?}");
    assert!(ps[1].message.contains("both set"), "{ps:#?}");
    // Not a list of strings.
    let t = with_tfrc_line("variants = \"veno\"");
    let ps = problems(&t);
    assert_eq!(ps[0].line, line_of(&t, "variants"), "{ps:#?}");
}

/// A failed topology generator is one error: flows, node attributes and events that name its
/// nodes and links are not reported as unknown on top of it.
#[test]
fn topology_errors_do_not_cascade() {
    let text = include_str!("../../../scenarios/examples/dumbbell.toml");
    for (from, to) in [
        (
            "bottleneck_delay = \"20ms\"",
            "bottleneck_delay = \"-20ms\"",
        ),
        ("senders = 2", "senders = 1000000000"),
    ] {
        assert!(text.contains(from));
        let e = Scenario::parse("d.toml", &text.replace(from, to)).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
    }
}

/// `GOOD` with one more `[[events]]` table.
fn with_event(lines: &str) -> String {
    format!("{GOOD}\n[[events]]\nat = \"60s\"\nlink = \"r1-n2\"\n{lines}\n")
}

#[test]
fn set_events_parse() {
    let text = with_event(
        "action = \"set\"\nbandwidth = \"5Mbps\"\ndelay = \"30ms\"\nqueue_limit = 20\nloss_rate = 0.02",
    );
    let s = Scenario::parse("good.toml", &text).unwrap();
    assert_eq!(s.events.len(), 2);
    assert_eq!(
        s.events[1].action,
        LinkAction::Set(LinkSet {
            bandwidth_bps: Some(5e6),
            delay: Some(Duration::from_millis(30)),
            queue_limit: Some(20),
            loss_rate: Some(0.02),
        })
    );
    assert_eq!(s.events[1].link, 2);
}

#[test]
fn set_event_errors() {
    let text = with_event("action = \"set\"");
    one(
        &text,
        line_of(&text, "action = \"set\""),
        "changes nothing",
        "bandwidth",
    );
    let text = with_event("action = \"down\"\nbandwidth = \"1Mbps\"");
    one(
        &text,
        line_of(&text, "bandwidth = \"1Mbps\""),
        "`bandwidth` with action",
        "\"set\"",
    );
    let text = with_event("action = \"set\"\nbandwidth = \"0Mbps\"");
    one(
        &text,
        line_of(&text, "= \"0Mbps\""),
        "must be positive",
        "bit/s",
    );
    let text = with_event("action = \"set\"\nqueue_limit = 0");
    one(
        &text,
        line_of(&text, "queue_limit = 0"),
        "out of range",
        "from 1",
    );
    let text = with_event("action = \"set\"\nloss_rate = 1.5");
    one(
        &text,
        line_of(&text, "loss_rate"),
        "not a probability",
        "[0, 1]",
    );
    // r0-r1 has no loss model: its rate cannot change.
    let text = with_event("action = \"set\"\nloss_rate = 0.1").replace(
        "link = \"r1-n2\"\naction = \"set\"",
        "link = \"r0-r1\"\naction = \"set\"",
    );
    one(
        &text,
        line_of(&text, "loss_rate"),
        "without a bernoulli",
        "model = \"bernoulli\"",
    );
    let text = with_event("action = \"slower\"");
    one(&text, line_of(&text, "slower"), "unknown action", "\"set\"");
}

#[test]
fn capacity_traces_become_set_events() {
    let dir = std::env::temp_dir().join(format!("scenario-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("s.toml");
    let text = GOOD.replace(
        "[links.red]",
        "[links.trace]\nfile = \"cap.csv\"\n[links.red]",
    );
    let write = |csv: &str| std::fs::write(dir.join("cap.csv"), csv).unwrap();
    let parse = || Scenario::parse(&toml.display().to_string(), &text);
    write("time_s,bandwidth\n# a comment\n10,1Mbps\n20, 2000000\n200,1Mb\n");
    let s = parse().unwrap();
    let steps: Vec<(Duration, LinkAction)> = s
        .events
        .iter()
        .filter(|e| e.link == 1)
        .map(|e| (e.at, e.action))
        .collect();
    let set = |b: f64| {
        LinkAction::Set(LinkSet {
            bandwidth_bps: Some(b),
            ..LinkSet::default()
        })
    };
    // The step at 200 s is after the 100 s run; the file's down event at 50 s stays.
    assert_eq!(
        steps,
        vec![
            (Duration::from_secs(10), set(1e6)),
            (Duration::from_secs(20), set(2e6)),
            (Duration::from_secs(50), LinkAction::Down),
        ]
    );
    let line = line_of(&text, "cap.csv");
    for (csv, msg) in [
        ("10,1Mbps\n5,2Mbps\n", "line 2: time 5 s is before"),
        ("10,fast\n", "line 1: `fast` is not a positive bandwidth"),
        ("10,1Mbps,3\n", "line 1 has 3 fields"),
        ("time_s,bandwidth\n", "no rows"),
        ("-1,1Mbps\n", "line 1: time `-1`"),
    ] {
        write(csv);
        let e = parse().expect_err(csv);
        assert_eq!(e.problems.len(), 1, "{e}");
        assert_eq!(e.problems[0].line, line, "{e}");
        assert!(e.problems[0].message.contains(msg), "{csv:?}: {e}");
    }
    std::fs::remove_file(dir.join("cap.csv")).unwrap();
    let e = parse().expect_err("missing file");
    assert!(e.problems[0].message.contains("cannot read it"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cubic_takes_a_profile_defaulting_to_rfc9438() {
    let cubic = |profile: &str| {
        let text = GOOD.replace(
            "variant = \"tahoe\"",
            &format!("variant = \"cubic\"{profile}"),
        );
        let s = Scenario::parse("c.toml", &text).unwrap();
        match s.flows[1].kind {
            FlowKind::Tcp { variant, .. } => variant,
            _ => panic!("tcp flow"),
        }
    };
    assert_eq!(cubic(""), TcpVariant::Cubic(CubicProfile::Rfc9438));
    assert_eq!(
        cubic("\nprofile = \"rfc9438\""),
        TcpVariant::Cubic(CubicProfile::Rfc9438)
    );
    assert_eq!(
        cubic("\nprofile = \"ns2\""),
        TcpVariant::Cubic(CubicProfile::Ns2)
    );
}

#[test]
fn linux_profile_picks_the_linux_model_with_the_kernels_defaults() {
    let flow = |variant: &str, extra: &str| {
        let text = GOOD.replace("window = 100\n", "").replace(
            "variant = \"tahoe\"",
            &format!("variant = \"{variant}\"\nprofile = \"linux\"{extra}"),
        );
        Scenario::parse("l.toml", &text).map(|s| s.flows[1].clone())
    };
    for (v, cc) in [("reno", LinuxCc::Reno), ("cubic", LinuxCc::Cubic)] {
        let f = flow(v, "").unwrap();
        match f.kind {
            FlowKind::Tcp {
                variant,
                window,
                window_init,
                ..
            } => {
                assert_eq!(variant, TcpVariant::Linux(cc));
                assert_eq!((window, window_init), (LINUX_WINDOW, 10));
            }
            _ => panic!("tcp flow"),
        }
        assert_eq!(f.packet_size, 1448, "the kernel's MSS with timestamps");
    }
    // Explicit keys still apply.
    let f = flow("reno", "\nwindow = 64\npacket_size = 1000").unwrap();
    assert!(matches!(f.kind, FlowKind::Tcp { window: 64, .. }));
    assert_eq!(f.packet_size, 1000);
}

#[test]
fn cubic_profile_errors_are_located() {
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"cubic\"\nprofile = \"linus\"",
    );
    one(
        &text,
        line_of(&text, "profile = \"linus\""),
        "unknown CUBIC profile \"linus\"",
        "\"rfc9438\", \"ns2\" or \"linux\"",
    );
    // The Linux receiver's delayed ACKs are not a choice.
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"reno\"\nprofile = \"linux\"\ndelayed_ack = false",
    );
    one(
        &text,
        line_of(&text, "variant = \"reno\""),
        "delayed_ack = false with profile = \"linux\"",
        "no delayed_ack key",
    );
    // Linux is the only profile of a Reno flow.
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"reno\"\nprofile = \"ns2\"",
    );
    one(
        &text,
        line_of(&text, "variant = \"reno\"") + 1,
        "with variant = \"reno\"",
        "tcp flows",
    );
    // A profile on a TCP flow that is not CUBIC.
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"tahoe\"\nprofile = \"ns2\"",
    );
    one(
        &text,
        line_of(&text, "variant = \"tahoe\"") + 1,
        "with variant = \"tahoe\"",
        "tcp flows",
    );
    // Delayed ACKs: CUBIC runs against the Sack1 sink, which acknowledges every packet.
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"cubic\"\ndelayed_ack = true",
    );
    one(
        &text,
        line_of(&text, "variant = \"cubic\""),
        "delayed_ack with variant = \"cubic\"",
        "delayed_ack = false",
    );
    // The variant list names cubic.
    let text = GOOD.replace("variant = \"tahoe\"", "variant = \"bbr\"");
    one(
        &text,
        line_of(&text, "bbr"),
        "unknown TCP variant",
        "\"cubic\"",
    );
}

#[test]
fn max_events_is_a_positive_budget() {
    assert_eq!(Scenario::parse("good.toml", GOOD).unwrap().max_events, None);
    let text = GOOD.replace(
        "sample_interval = \"500ms\"",
        "sample_interval = \"500ms\"\nmax_events = 1000",
    );
    assert_eq!(
        Scenario::parse("good.toml", &text).unwrap().max_events,
        Some(1000)
    );
    let text = GOOD.replace(
        "sample_interval = \"500ms\"",
        "sample_interval = \"500ms\"\nmax_events = 0",
    );
    one(
        &text,
        line_of(&text, "max_events"),
        "`max_events` is not positive",
        "≥ 1",
    );
}

/// `ecn` on a TFRC or TCP flow sets `Flow::ecn`; with CUBIC or the Linux model `ecn = true` is
/// refused (their agents do not answer marks), on a UDP flow the key is refused.
#[test]
fn ecn_key() {
    let t = with_tfrc_line("ecn = true");
    let s = Scenario::parse("ecn.toml", &t).unwrap();
    assert!(s.flows[0].ecn);
    assert!(!s.flows[1].ecn);
    let s = Scenario::parse("ecn.toml", GOOD).unwrap();
    assert!(!s.flows[0].ecn);
    let t = GOOD.replace("window = 100", "window = 100\necn = true");
    let s = Scenario::parse("ecn.toml", &t).unwrap();
    assert!(s.flows[1].ecn);
    let t = t.replace("variant = \"tahoe\"", "variant = \"cubic\"");
    one_at(
        &t,
        "true",
        "ecn = true with variant = \"cubic\"",
        "\"sack\" (or ecn = false)",
    );
    let t = t.replace(
        "variant = \"cubic\"",
        "variant = \"reno\"\nprofile = \"linux\"",
    );
    one_at(
        &t,
        "true",
        "ecn = true with profile = \"linux\"",
        "\"sack\" (or ecn = false)",
    );
    let t = GOOD.replace("window = 100", "window = 100\necn = false");
    assert!(Scenario::parse("ecn.toml", &t).is_ok());
}

/// `app_on`/`app_off`: an on-off application on a TFRC flow with `app_rate`; both or
/// neither, and only with an application.
#[test]
fn app_on_off_keys() {
    let t = with_tfrc_line("app_rate = \"1Mb\"\napp_on = \"2s\"\napp_off = \"3s\"");
    let s = Scenario::parse("onoff.toml", &t).unwrap();
    assert!(matches!(
        s.flows[0].kind,
        FlowKind::Tfrc {
            app_on_off: Some((on, off)),
            ..
        } if on == Duration::from_secs(2) && off == Duration::from_secs(3)
    ));
    let t = with_tfrc_line("app_rate = \"1Mb\"\napp_on = \"2s\"");
    one_at(&t, "\"2s\"", "app_on and app_off come together", "both");
    let t = with_tfrc_line("app_on = \"2s\"\napp_off = \"3s\"");
    one_at(&t, "\"2s\"", "has no app_rate", "app_rate");
    let t = GOOD.replace("window = 100", "window = 100\napp_on = \"1s\"");
    one_at(&t, "\"1s\"", "`app_on` is a tfrc key", "tcp");
}

#[test]
fn mahimahi_traces_become_steps_and_bad_ones_are_located() {
    let dir = std::env::temp_dir().join(format!("scenario-mahi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("s.toml");
    let text = GOOD.replace(
        "[links.red]",
        "[links.trace]\nfile = \"cell.mahi\"\nformat = \"mahimahi\"\nbin = \"50s\"\n[links.red]",
    );
    let write = |t: &str| std::fs::write(dir.join("cell.mahi"), t).unwrap();
    let parse = || Scenario::parse(&toml.display().to_string(), &text);
    // Period 10 ms with 2 opportunities (3 and 10 ms, then 13, 20, …): 9,999 in [0, 50 s)
    // (the one at 50 s opens the next bin) and 10,000 in [50 s, 100 s).
    write("3\n10\n");
    let s = parse().unwrap();
    let steps: Vec<(Duration, Option<f64>)> = s
        .events
        .iter()
        .filter_map(|e| match e.action {
            LinkAction::Set(set) if e.link == 1 => Some((e.at, set.bandwidth_bps)),
            _ => None,
        })
        .collect();
    let bps = |n: f64| Some(n * 1500.0 * 8.0 / 50.0);
    assert_eq!(
        steps,
        vec![
            (Duration::ZERO, bps(9999.0)),
            (Duration::from_secs(50), bps(10000.0))
        ]
    );
    let line = line_of(&text, "cell.mahi");
    for (t, msg) in [
        (
            "5\n3\n",
            "line 2: time 3 ms is before the previous line's 5 ms",
        ),
        ("1\n-2\n", "line 2: time -2 ms is negative"),
        ("1\nx\n", "line 2: `x` is not a whole number"),
        ("", "no delivery opportunities"),
    ] {
        write(t);
        let e = parse().expect_err(t);
        assert_eq!(e.problems.len(), 1, "{e}");
        assert_eq!(e.problems[0].line, line, "{e}");
        assert!(e.problems[0].message.contains(msg), "{t:?}: {e}");
    }
    let text = text.replace("format = \"mahimahi\"", "format = \"pcap\"");
    one(
        &text,
        line_of(&text, "pcap"),
        "unknown trace format",
        "\"mahimahi\"",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn real_counterparts_and_settings() {
    let s = Scenario::parse("g.toml", GOOD).unwrap();
    assert!(s.flows.iter().all(|f| f.real.is_none()));
    assert_eq!(s.real, RealSettings::default());
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"tahoe\"\nreal = \"reno\"",
    );
    let s = Scenario::parse("g.toml", &text).unwrap();
    assert_eq!(s.flows[1].real.as_deref(), Some("reno"));
    let text = GOOD.replace(
        "variant = \"tahoe\"",
        "variant = \"tahoe\"\nreal = \"Reno!\"",
    );
    one(
        &text,
        line_of(&text, "Reno!"),
        "cannot run a tcp flow",
        "\"cubic\"",
    );
    let text = GOOD.replace("kind = \"tfrc\"", "kind = \"tfrc\"\nreal = \"cbr\"");
    one(
        &text,
        line_of(&text, "real = \"cbr\""),
        "cannot run a tfrc flow",
        "\"tfrc\"",
    );
    let text = format!(
        "{GOOD}\n[real]\nreps = 3\nsim_seeds = 4\nstart_jitter = \"20ms\"\nlateness_p99 = \"1ms\"\nwhy = \"w\"\n"
    );
    let s = Scenario::parse("g.toml", &text).unwrap();
    assert_eq!((s.real.reps, s.real.sim_seeds), (3, 4));
    assert_eq!(s.real.start_jitter, Duration::from_millis(20));
    assert_eq!(s.real.lateness_p99, Duration::from_millis(1));
    assert_eq!(
        s.real.processing_jitter,
        Duration::ZERO,
        "no jitter by default"
    );
    let text = format!("{GOOD}\n[real]\nprocessing_jitter = \"1.5ms\"\n");
    let s = Scenario::parse("g.toml", &text).unwrap();
    assert_eq!(s.real.processing_jitter, Duration::from_micros(1500));
    assert!(
        s.nodes.iter().all(|n| n.processing_jitter.is_zero()),
        "real side only"
    );
    let text = format!("{GOOD}\n[real]\nprocessing_jitter = 0\n");
    assert!(Scenario::parse("g.toml", &text)
        .unwrap()
        .real
        .processing_jitter
        .is_zero());
    let text = format!("{GOOD}\n[real]\nprocessing_jitter = \"-1ms\"\n");
    one(
        &text,
        line_of(&text, "processing_jitter"),
        "`processing_jitter` is negative",
        "zero or more",
    );
    let text = format!("{GOOD}\n[real]\nprocessing_jitter = \"soon\"\n");
    one(
        &text,
        line_of(&text, "processing_jitter"),
        "`processing_jitter`",
        "",
    );
    let text = format!("{GOOD}\n[real]\nreps = 0\n");
    one(&text, line_of(&text, "reps = 0"), "reps", "1");
    let text = format!("{GOOD}\n[real]\ntcp_info_interval = \"0ms\"\n");
    one(&text, line_of(&text, "tcp_info"), "is zero", "positive");
    let text = format!("{GOOD}\n[real]\nrepetitions = 3\n");
    assert!(Scenario::parse("g.toml", &text).is_err());
}

/// Every key that takes a duration or a bandwidth, each with a unit (issue 32 §4).
const EVERY_UNIT_KEY: &str = r#"name = "units"
duration = "10s"
warmup = "1s"
sample_interval = "500ms"

[topology]
kind = "dumbbell"
senders = 2
access_bandwidth = "10Mbps"
access_delay = ["1ms", "2ms"]
receiver_access_delay = "3ms"
bottleneck_bandwidth = "2Mbps"
bottleneck_delay = "20ms"
queue = "red"

[topology.red]
targetdelay = "5ms"
max_p = "adaptive-red"
interval = "500ms"

[topology.wireless]
frame_loss = 0.1
slot = "20us"

[[links]]
from = "r1"
to = "x"
bandwidth = "5Mbps"
delay = "4ms"

[[flows]]
name = "u"
kind = "udp"
from = "s0"
to = "d0"
start = "1s"
stop = "9s"
rate = "500kbps"

[[flows]]
name = "t"
kind = "tfrc"
from = "s1"
to = "x"
app_rate = "1Mbps"

[[events]]
at = "2s"
link = "r0-r1"
action = "set"
bandwidth = "3Mbps"
delay = "30ms"

[protection]
seal = "2us"
open = "2us"

[validate]
seeds = [1, 2]
start_jitter = "1s"

[real]
processing_jitter = "1ms"
"#;

/// Issue 32 §4: a bare number is refused wherever a unit is needed (it used to mean seconds
/// or bit/s: `bottleneck_delay = 5` ran with 5-second delays), at the value's line and
/// column, naming the key and the value with a unit to write instead; a bare 0 stays valid.
#[test]
fn bare_numbers_are_refused_for_every_key_with_a_unit() {
    Scenario::parse("units.toml", EVERY_UNIT_KEY).expect("every key with a unit parses");
    let keys: Vec<(usize, &str, &str)> = EVERY_UNIT_KEY
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let (k, v) = l.split_once(" = ")?;
            let unit = v.strip_prefix('"')?.trim_end_matches('"');
            let is_unit = unit.ends_with('s') && unit.chars().next()?.is_ascii_digit();
            (is_unit && k != "name").then_some((i, k, v))
        })
        .collect();
    assert_eq!(keys.len(), 23, "{keys:?}");
    for (i, key, value) in keys {
        let bandwidth = value.contains("bps");
        let mut lines: Vec<String> = EVERY_UNIT_KEY.lines().map(String::from).collect();
        lines[i] = format!("{key} = {}", if bandwidth { "2e6" } else { "5" });
        let text = lines.join("\n");
        let p = one(&text, i + 1, &format!("`{key}`"), "");
        assert!(p.message.contains("has no unit"), "{p:#?}");
        assert_eq!(p.column, key.len() + 4, "{p:#?}");
        let exp = p.expected.unwrap_or_default();
        let want = if bandwidth { "\"2Mbps\"" } else { "\"5s\"" };
        assert!(exp.contains(want), "{key}: {exp}");
        // A bare negative number: both faults named, and the fix is not itself refused.
        lines[i] = format!("{key} = {}", if bandwidth { "-2e6" } else { "-5" });
        let text = lines.join("\n");
        let p = one(&text, i + 1, &format!("`{key}`"), "");
        assert!(p.message.contains("no unit and is negative"), "{p:#?}");
        let exp = p.expected.unwrap_or_default();
        assert!(exp.contains(want) && !exp.contains("\"-"), "{key}: {exp}");
        // A quoted number is as bare: it would silently be seconds or bit/s.
        lines[i] = format!("{key} = \"{}\"", if bandwidth { "2e6" } else { "5" });
        let text = lines.join("\n");
        let p = one(&text, i + 1, &format!("`{key}`"), "");
        assert!(p.message.contains("has no unit"), "{p:#?}");
        // Zero needs no unit.
        lines[i] = format!("{key} = 0");
        let text = lines.join("\n");
        if let Err(e) = Scenario::parse("units.toml", &text) {
            assert!(
                e.problems.iter().all(|p| !p.message.contains("no unit")),
                "{e}"
            );
        }
    }
    // In a list too.
    let text = EVERY_UNIT_KEY.replace("[\"1ms\", \"2ms\"]", "[0.001, 0.002]");
    one(&text, line_of(&text, "0.001"), "has no unit", "\"0.001s\"");
}

/// Issue 32 §4: every problem of a file is reported, not only the first (a bad bottleneck
/// bandwidth used to hide the dumbbell's other keys).
#[test]
fn every_problem_of_a_dumbbell_is_reported() {
    let text = EVERY_UNIT_KEY
        .replace(
            "bottleneck_bandwidth = \"2Mbps\"",
            "bottleneck_bandwidth = \"-100Mbps\"",
        )
        .replace("bottleneck_delay = \"20ms\"", "bottleneck_delay = 5")
        .replace("queue = \"red\"", "queue = \"red\"\nqueue_limit = 0")
        .replace("[\"1ms\", \"2ms\"]", "[\"1ms\"]");
    let ps = problems(&text);
    let lines: Vec<usize> = ps.iter().map(|p| p.line).collect();
    for needle in [
        "-100Mbps",
        "bottleneck_delay",
        "queue_limit",
        "access_delay",
    ] {
        assert!(lines.contains(&line_of(&text, needle)), "{needle}: {ps:#?}");
    }
    assert_eq!(ps.len(), 4, "{ps:#?}");
}

/// `overhead` (NS-2's `overhead_`) is a duration on one-way TCP flows, refused with CUBIC, the
/// Linux model and on other kinds.
#[test]
fn tcp_overhead_parses_and_is_refused_where_not_modelled() {
    let text = GOOD.replace("window = 100", "window = 100\noverhead = \"3ms\"");
    let s = Scenario::parse("x/o.toml", &text).unwrap();
    assert!(matches!(
        s.flows[1].kind,
        FlowKind::Tcp { overhead, .. } if overhead == Duration::from_millis(3)
    ));
    let bare = GOOD.replace("window = 100", "window = 100\noverhead = 3");
    one_at(&bare, "3", "has no unit", "\"3ms\"");
    let cubic = text.replace("variant = \"tahoe\"", "variant = \"cubic\"");
    one_at(
        &cubic,
        "\"3ms\"",
        "overhead with variant = \"cubic\"",
        "no overhead",
    );
    let linux = text.replace(
        "variant = \"tahoe\"",
        "variant = \"reno\"\nprofile = \"linux\"",
    );
    one_at(
        &linux,
        "\"3ms\"",
        "overhead with variant = \"reno\" and profile = \"linux\"",
        "no overhead",
    );
    let tfrc = GOOD.replace("profile = \"ns2\"", "profile = \"ns2\"\noverhead = \"3ms\"");
    one_at(&tfrc, "\"3ms\"", "`overhead` is a tcp key", "tfrc flows");
}

/// A flow's unknown node in a file without links says so, instead of an empty list.
#[test]
fn unknown_node_without_links_says_there_are_none() {
    let text = "name = \"x\"\nduration = \"1s\"\n\n[[flows]]\nname = \"f\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\n";
    let ps = problems(text);
    let p = ps
        .iter()
        .find(|p| p.message.contains("unknown node \"a\""))
        .expect("a");
    assert!(
        p.expected.as_deref().unwrap_or("").contains("no links yet"),
        "{p:#?}"
    );
}

#[test]
fn processing_jitter_defaults_to_zero_is_top_level_and_per_node() {
    let s = Scenario::parse("good.toml", GOOD).unwrap();
    assert!(s.nodes.iter().all(|n| n.processing_jitter.is_zero()));
    // Top level: every node; `[[nodes]]`: that node instead (0 exempts it).
    let text = format!(
        "processing_jitter = \"1.5ms\"\n{GOOD}\n[[nodes]]\nname = \"r0\"\nprocessing_jitter = \"5ms\"\n\n[[nodes]]\nname = \"n2\"\nprocessing_jitter = 0\n"
    );
    let s = Scenario::parse("good.toml", &text).unwrap();
    let j: Vec<Duration> = s.nodes.iter().map(|n| n.processing_jitter).collect();
    let ms = |x: u64| Duration::from_micros(x);
    assert_eq!(j, [ms(1500), ms(5000), ms(1500), Duration::ZERO]);
    // Bad values name the key and its line.
    let text = format!("processing_jitter = \"-1ms\"\n{GOOD}");
    one(&text, 1, "`processing_jitter` is negative", "zero or more");
    let text = format!("{GOOD}\n[[nodes]]\nname = \"r0\"\nprocessing_jitter = 2\n");
    one(
        &text,
        line_of(&text, "processing_jitter = 2"),
        "processing_jitter",
        "2ms",
    );
}
