//! Script-level tests of the exporter (running the scripts under `ns` is in
//! `tests/export_ns2.rs`).

use super::*;

fn parse(text: &str) -> Scenario {
    Scenario::parse("t.toml", text).expect("test scenario parses")
}

fn traced(s: &Scenario) -> String {
    export(s, &ExportOptions::traced(s)).expect("exports")
}

const BASE: &str = r#"
name = "unit"
duration = "10s"
seed = 7

[[links]]
from = "a"
to = "r"
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
from = "r"
to = "b"
bandwidth = "1.5Mbps"
delay = "20ms"
queue = "red"
queue_limit = 30
[links.red]
thresh = 5
targetdelay = "50ms"

[[flows]]
name = "t"
kind = "tcp"
from = "a"
to = "b"
variant = "reno"
window = 33
window_init = 3
delayed_ack = true
stop = "8s"

[[flows]]
name = "u"
kind = "udp"
from = "b"
to = "a"
packet_size = 1500
rate = "300kbps"
random = true
max_packets = 77

[[flows]]
name = "f"
kind = "tfrc"
profile = "ns2"
from = "a"
to = "b"
start = "1s"
app_rate = "200kbps"
"#;

#[test]
fn seconds_are_exact_decimal() {
    assert_eq!(secs(Duration::from_secs(100)), "100");
    assert_eq!(secs(Duration::from_millis(20)), "0.02");
    assert_eq!(secs(Duration::from_nanos(1)), "0.000000001");
    assert_eq!(secs(Duration::new(3, 500_000_000)), "3.5");
    assert_eq!(secs(Duration::ZERO), "0");
}

#[test]
fn numbers_never_use_exponents() {
    assert_eq!(num(1.5e6), "1500000");
    assert_eq!(num(1e-7), "0.0000001");
    assert_eq!(num(0.05), "0.05");
    assert_eq!(num(-1.0), "-1");
}

#[test]
fn tcl_strings_escape_substitutions() {
    assert_eq!(tcl_str("out.tr"), "\"out.tr\"");
    assert_eq!(
        tcl_str("a b/$x[y]{z}\"\\"),
        "\"a b/\\$x\\[y\\]\\{z\\}\\\"\\\\\""
    );
    assert_eq!(tcl_str("l1\nl2\u{7}"), "\"l1\\nl2\\u0007\"");
}

#[test]
fn ns2_seed_is_identity_in_range_and_never_zero() {
    assert_eq!(ns2_seed(1), 1);
    assert_eq!(ns2_seed(7), 7);
    assert_eq!(ns2_seed(2_147_483_646), 2_147_483_646);
    assert_eq!(ns2_seed(0), 2_147_483_646);
    assert_eq!(ns2_seed(2_147_483_647), 1);
    for s in [u64::MAX, u64::MAX - 1, 1 << 40, 4_294_967_296] {
        let n = ns2_seed(s);
        assert!((1..=2_147_483_646).contains(&n), "{s} -> {n}");
    }
}

#[test]
fn default_trace_file_is_a_safe_file_name() {
    let mut s = parse(BASE);
    assert_eq!(default_trace_file(&s), "unit.tr");
    s.name = "a b/../c".into();
    assert_eq!(default_trace_file(&s), "a_b_.._c.tr");
    s.name = String::new();
    assert_eq!(default_trace_file(&s), "scenario.tr");
    s.name = ".hidden".into();
    assert_eq!(default_trace_file(&s), "scenario.hidden.tr");
}

#[test]
fn export_is_deterministic() {
    let s = parse(BASE);
    assert_eq!(traced(&s), traced(&s));
}

#[test]
fn nodes_links_and_queues() {
    let s = parse(BASE);
    let t = traced(&s);
    // Node ids follow the scenario's node order.
    let a = t.find("set n(0) [$ns node] ;# \"a\"").expect("node 0");
    let r = t.find("set n(1) [$ns node] ;# \"r\"").expect("node 1");
    let b = t.find("set n(2) [$ns node] ;# \"b\"").expect("node 2");
    assert!(a < r && r < b);
    assert!(t.contains("$ns duplex-link $n(0) $n(1) 10000000 0.002 DropTail\n"));
    assert!(t.contains("$ns duplex-link $n(1) $n(2) 1500000 0.02 RED\n"));
    // Queue limits in both directions.
    for (x, y, l) in [(0, 1, 50), (1, 0, 50), (1, 2, 30), (2, 1, 30)] {
        assert!(
            t.contains(&format!("$ns queue-limit $n({x}) $n({y}) {l}\n")),
            "{x}->{y}"
        );
    }
    // Every RED parameter, on both directions; automatic ones as NS-2's 0 / -1.
    assert!(t.contains("foreach {a b} {1 2 2 1} {\n    set q [[$ns link $n($a) $n($b)] queue]\n"));
    for line in [
        "$q set thresh_ 5\n",
        "$q set maxthresh_ 0\n",
        "$q set q_weight_ -1\n",
        "$q set linterm_ 10\n",
        "$q set mean_pktsize_ 500\n",
        "$q set idle_pktsize_ 100\n",
        "$q set bytes_ true\n",
        "$q set queue_in_bytes_ true\n",
        "$q set gentle_ true\n",
        "$q set wait_ true\n",
        "$q set setbit_ false\n",
        "$q set targetdelay_ 0.05\n",
    ] {
        assert!(t.contains(line), "missing {line:?}");
    }
    // Default DropTail options are left to NS-2.
    assert!(!t.contains("drop_front_"));
}

#[test]
fn droptail_options_and_simplex_links() {
    // A one-way ring a -> b -> c -> a.
    let text = r#"
name = "dt"
duration = "5s"
[[links]]
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = 0
duplex = false
queue_limit = 12
[links.droptail]
queue_in_bytes = true
mean_pktsize = 1000
drop_front = true
[[links]]
from = "b"
to = "c"
bandwidth = "1Mbps"
delay = 0
duplex = false
[[links]]
from = "c"
to = "a"
bandwidth = "1Mbps"
delay = 0
duplex = false
"#;
    let t = traced(&parse(text));
    assert!(t.contains("$ns simplex-link $n(0) $n(1) 1000000 0 DropTail\n"));
    assert!(t.contains("$ns simplex-link $n(1) $n(2) 1000000 0 DropTail\n"));
    assert!(t.contains("$ns simplex-link $n(2) $n(0) 1000000 0 DropTail\n"));
    assert!(t.contains("$ns queue-limit $n(0) $n(1) 12\n"));
    assert!(!t.contains("$ns queue-limit $n(1) $n(0)"));
    assert!(t.contains(
        "foreach {a b} {0 1} {\n    set q [[$ns link $n($a) $n($b)] queue]\n    $q set queue_in_bytes_ true\n    $q set mean_pktsize_ 1000\n    $q set drop_front_ true\n}\n"
    ));
    assert_eq!(t.matches("drop_front_").count(), 1);
}

#[test]
fn flows_map_to_agents_with_fids_in_order() {
    let s = parse(BASE);
    let t = traced(&s);
    // TCP Reno with DelAck, window settings, FTP start and stop.
    for line in [
        "set src(0) [new Agent/TCP/Reno]\n",
        "$src(0) set fid_ 0\n",
        "$src(0) set packetSize_ 1000\n",
        "$src(0) set window_ 33\n",
        "$src(0) set windowInit_ 3\n",
        "set dst(0) [new Agent/TCPSink/DelAck]\n",
        "$dst(0) set fid_ 0\n",
        "$ns at 0 \"$app(0) start\"\n",
        "$ns at 8 \"$app(0) stop\"\n",
        // UDP: no fragmentation, CBR parameters.
        "set src(1) [new Agent/UDP]\n",
        "$src(1) set packetSize_ 1500\n",
        "$app(1) set packetSize_ 1500\n",
        "$app(1) set rate_ 300000\n",
        "$app(1) set random_ 1\n",
        "$app(1) set maxpkts_ 77\n",
        "$dst(1) set fid_ 1\n",
        // TFRC fed by CBR; its sink carries the fid too.
        "set src(2) [new Agent/TFRC]\n",
        "$src(2) set SndrType_ 1\n",
        "set dst(2) [new Agent/TFRCSink]\n",
        "$dst(2) set fid_ 2\n",
        "$app(2) set rate_ 200000\n",
        "$ns at 1 \"$app(2) start\"\n",
    ] {
        assert!(t.contains(line), "missing {line:?}");
    }
    // Flows that run to the end are not stopped (the run ends there).
    assert!(!t.contains("$app(1) stop"));
    assert!(!t.contains("$src(2) stop"));
    // Senders attach before receivers, flow by flow (port numbering).
    let order: Vec<usize> = [
        "$ns attach-agent $n(0) $src(0)",
        "$ns attach-agent $n(2) $dst(0)",
        "$ns attach-agent $n(2) $src(1)",
        "$ns attach-agent $n(0) $dst(1)",
        "$ns attach-agent $n(0) $src(2)",
        "$ns attach-agent $n(2) $dst(2)",
    ]
    .iter()
    .map(|l| t.find(l).unwrap_or_else(|| panic!("missing {l}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}

#[test]
fn tfrc_without_app_is_an_infinite_source_and_stops() {
    let text = BASE
        .replace("app_rate = \"200kbps\"", "stop = \"9s\"")
        .replace("stop = \"8s\"\n", "");
    let t = traced(&parse(&text));
    assert!(!t.contains("SndrType_"));
    assert!(t.contains("$ns at 1 \"$src(2) start\"\n"));
    assert!(t.contains("$ns at 9 \"$src(2) stop\"\n"));
}

#[test]
fn seed_trace_and_finish() {
    let s = parse(BASE);
    let t = traced(&s);
    assert!(t.contains("$defaultRNG seed 7\n"));
    let trace_all = t.find("$ns trace-all $tracefile").expect("trace-all");
    let first_link = t.find("$ns duplex-link").expect("link");
    assert!(trace_all < first_link, "trace-all must precede the links");
    assert!(t.contains("set tracefile [open \"unit.tr\" w]\n"));
    assert!(t.contains("close $tracefile"));
    assert!(t.ends_with("$ns at 10 \"finish\"\n$ns run\n"));

    let quiet = export(&s, &ExportOptions::untraced()).unwrap();
    assert!(!quiet.contains("trace-all"));
    assert!(!quiet.contains("tracefile"));
    assert!(quiet.ends_with("$ns at 10 \"finish\"\n$ns run\n"));

    let odd = ExportOptions {
        trace_file: Some("dir with space/$x[1].tr".into()),
    };
    let t = export(&s, &odd).unwrap();
    assert!(t.contains("set tracefile [open \"dir with space/\\$x\\[1\\].tr\" w]\n"));
}

#[test]
fn loss_models_go_on_the_named_directions() {
    let text = r#"
name = "loss"
duration = "5s"
seed = 3
[[links]]
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = "0.01s"
[links.loss]
model = "bernoulli"
rate = 0.05
direction = "reverse"
[[links]]
from = "b"
to = "c"
bandwidth = "1Mbps"
delay = "0.01s"
[links.loss]
model = "list"
packets = [7, 0, 3, 3]
direction = "both"
"#;
    let t = traced(&parse(text));
    assert!(t.contains("$em set rate_ 0.05\n"));
    assert!(t.contains("$em unit pkt\n"));
    assert!(t.contains("$ranvar(0) use-rng $rng(0)\n"));
    assert!(t.contains("$ns link-lossmodel $em $n(1) $n(0)\n"));
    assert!(!t.contains("$ns link-lossmodel $em $n(0) $n(1)\n"));
    assert_eq!(t.matches("$em droplist {0 3 7}\n").count(), 2);
    assert!(t.contains("$ns link-lossmodel $em $n(1) $n(2)\n"));
    assert!(t.contains("$ns link-lossmodel $em $n(2) $n(1)\n"));
    assert!(!t.contains("lossmodel $em $n(0)"));
}

#[test]
fn events_use_session_routing_and_link_event() {
    let text = r#"
name = "ev"
duration = "5s"
[[links]]
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = "0.01s"
[[links]]
name = "one-way"
from = "b"
to = "c"
bandwidth = "1Mbps"
delay = "0.01s"
duplex = false
[[links]]
from = "c"
to = "a"
bandwidth = "1Mbps"
delay = "0.01s"
[[events]]
at = 0
action = "down"
link = "a-b"
[[events]]
at = "2s"
action = "up"
link = "a-b"
[[events]]
at = "3s"
action = "down"
link = "one-way"
"#;
    let s = parse(text);
    let t = traced(&s);
    assert!(t.contains("$ns rtproto Session\n"));
    assert!(t.contains("proc link-event {op pairs} {"));
    assert!(t.contains("$ns at 0 \"link-event down {0 1 1 0}\""));
    assert!(t.contains("$ns at 2 \"link-event up {0 1 1 0}\""));
    assert!(t.contains("$ns at 3 \"link-event down {1 2}\""));
    assert!(t.contains("foreach {a b} {1 2} {\n    set l [$ns link $n($a) $n($b)]\n    $l dynamic\n    $l trace-dynamics $ns $tracefile\n}\n"));
    let quiet = export(&s, &ExportOptions::untraced()).unwrap();
    assert!(quiet.contains("$l dynamic"));
    assert!(!quiet.contains("trace-dynamics"));
    // Without events: NS-2's default static routing.
    assert!(!traced(&parse(BASE)).contains("rtproto"));
}

#[test]
fn unsupported_features_are_all_named() {
    let text = r#"
name = "bad"
duration = "5s"
[[links]]
name = "air"
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = "0.01s"
[links.wireless]
frame_loss = 0.1
[[links]]
name = "bursty"
from = "b"
to = "c"
bandwidth = "1Mbps"
delay = "0.01s"
[links.loss]
model = "gilbert-elliott"
p_good_bad = 0.01
p_bad_good = 0.5
[[flows]]
name = "std"
kind = "tfrc"
from = "a"
to = "c"
"#;
    let s = parse(text);
    let e = export(&s, &ExportOptions::traced(&s)).unwrap_err();
    assert_eq!(e.file, "t.toml");
    let items: Vec<&str> = e.problems.iter().map(|p| p.item.as_str()).collect();
    assert_eq!(items, ["link \"air\"", "link \"bursty\"", "flow \"std\""]);
    let msg = e.to_string();
    assert!(msg.starts_with("t.toml: cannot export to NS-2.35"), "{msg}");
    assert!(msg.contains("[links.wireless]"), "{msg}");
    assert!(msg.contains("gilbert-elliott"), "{msg}");
    assert!(msg.contains("\"rfc5348\""), "{msg}");
    assert!(msg.contains("profile = \"ns2\""), "{msg}");
}

#[test]
fn inconsistent_models_are_refused_without_panicking() {
    let mut s = parse(BASE);
    s.links[0].to = 99;
    s.links[1].bandwidth_bps = f64::NAN;
    s.flows[0].from = 42;
    s.flows[1].packet_size = 0;
    if let FlowKind::Udp { rate_bps, .. } = &mut s.flows[1].kind {
        *rate_bps = f64::INFINITY;
    }
    s.events.push(Event {
        at: Duration::from_secs(1),
        action: LinkAction::Down,
        link: 17,
    });
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    let items: Vec<&str> = e.problems.iter().map(|p| p.item.as_str()).collect();
    assert_eq!(
        items,
        [
            "link \"a-r\"",
            "link \"r-b\"",
            "flow \"t\"",
            "flow \"u\"",
            "flow \"u\"",
            "event #0"
        ]
    );
}

#[test]
fn names_cannot_break_out_of_comments() {
    let mut s = parse(BASE);
    s.nodes[0].name = "evil\nexit 1 \\".into();
    s.flows[0].name = "x}\n{puts hi".into();
    s.description = Some("line\nexit 3".into());
    let t = traced(&s);
    for line in t.lines() {
        assert!(!line.starts_with("exit"), "{line:?}");
        assert!(!line.starts_with("{puts"), "{line:?}");
        assert!(!line.ends_with('\\'), "{line:?}");
    }
    assert!(t.contains("set n(0) [$ns node] ;# \"evil\\nexit 1 \\\\\"\n"));
}

#[test]
fn adaptive_red_exports_as_ns2_adaptive() {
    let text = BASE.replace("queue = \"red\"", "queue = \"ared\"").replace(
        "targetdelay = \"50ms\"",
        "targetdelay = \"50ms\"\ninterval = \"250ms\"\nbottom = 0.002",
    );
    let t = traced(&parse(&text));
    for line in [
        "$q set q_weight_ 0\n",
        "$q set adaptive_ 1\n",
        "$q set alpha_ 0.01\n",
        "$q set beta_ 0.9\n",
        "$q set interval_ 0.25\n",
        "$q set top_ 0.5\n",
        "$q set bottom_ 0.002\n",
    ] {
        assert!(t.contains(line), "missing {line:?}");
    }
    // Plain RED leaves NS-2's adaptive_ 0 alone.
    assert!(!traced(&parse(BASE)).contains("adaptive_"));
}

#[test]
fn seed_001_red_variants_are_refused_by_name() {
    let text = BASE.replace("queue = \"red\"", "queue = \"ered\"");
    let s = parse(&text);
    let e = export(&s, &ExportOptions::traced(&s)).unwrap_err();
    let items: Vec<&str> = e.problems.iter().map(|p| p.item.as_str()).collect();
    assert_eq!(items, ["link \"r-b\""; 3]);
    let msg = e.to_string();
    assert!(
        msg.contains("average = \"shewhart-ewma\" (seed 001 Q1)"),
        "{msg}"
    );
    assert!(
        msg.contains("thresholds = \"auto-tuned\" (seed 001 Q2)"),
        "{msg}"
    );
    assert!(
        msg.contains("max_p = \"adaptive-q3\" (seed 001 Q3"),
        "{msg}"
    );
    assert!(msg.contains("max_p = \"adaptive-red\""), "{msg}");
    // One variant alone is refused alone.
    let text = BASE.replace(
        "targetdelay = \"50ms\"",
        "targetdelay = \"50ms\"\nthresholds = \"auto-tuned\"",
    );
    let s = parse(&text);
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    assert_eq!(e.problems.len(), 1);
    assert!(e.problems[0].message.contains("seed 001 Q2"));
}

#[test]
fn whole_flow_protection_is_refused_but_the_cost_alone_is_not() {
    let s = parse(&format!("{BASE}\n[protection]\nseal = \"1us\"\n"));
    assert!(export(&s, &ExportOptions::untraced()).is_ok());
    let s = parse(&format!("{BASE}\n[protection]\nflows = [\"u\"]\n"));
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    assert_eq!(e.problems.len(), 1);
    assert_eq!(e.problems[0].item, "flow \"u\"");
    assert!(e.problems[0].message.contains("[protection] flows"));
}

#[test]
fn a_node_processing_delay_is_refused_once_per_value() {
    let s = parse(&format!("processing_jitter = 0\n{BASE}"));
    assert!(export(&s, &ExportOptions::untraced()).is_ok());
    // The top-level key: one problem for the file, not one per node.
    let s = parse(&format!("processing_jitter = \"1ms\"\n{BASE}"));
    assert!(s.nodes.len() > 1);
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{:?}", e.problems);
    assert_eq!(e.problems[0].item, "every node");
    assert!(e.problems[0]
        .message
        .contains("no per-node processing delay"));
    assert!(
        e.problems[0].instead.contains("overhead"),
        "{:?}",
        e.problems[0]
    );
    // One node's own value (the others have none): that node alone.
    let s = parse(&format!(
        "{BASE}\n[[nodes]]\nname = \"r\"\nprocessing_jitter = \"2ms\"\n"
    ));
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{:?}", e.problems);
    assert_eq!(e.problems[0].item, "node \"r\"");
    // Different values: each node with its own.
    let s = parse(&format!(
        "processing_jitter = \"1ms\"\n{BASE}\n[[nodes]]\nname = \"r\"\nprocessing_jitter = \"2ms\"\n"
    ));
    let e = export(&s, &ExportOptions::untraced()).unwrap_err();
    assert_eq!(e.problems.len(), s.nodes.len(), "{:?}", e.problems);
    assert!(e.problems.iter().any(|p| p.message.contains("2ms")));
}

#[test]
fn set_events_change_link_objects_at_run_time() {
    let text = r#"
name = "set"
duration = "5s"
[[links]]
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = "0.01s"
[links.loss]
model = "bernoulli"
rate = 0.05
direction = "reverse"
[[links]]
name = "one-way"
from = "b"
to = "c"
bandwidth = "1Mbps"
delay = "0.01s"
duplex = false
[[links]]
from = "c"
to = "a"
bandwidth = "1Mbps"
delay = "0.01s"
duplex = false
[[events]]
at = "1.5s"
action = "set"
link = "a-b"
bandwidth = "500kbps"
delay = "30ms"
queue_limit = 7
loss_rate = 0.1
[[events]]
at = "2s"
action = "set"
link = "one-way"
bandwidth = "2Mbps"
"#;
    let s = parse(text);
    let t = traced(&s);
    // Only up/down events need dynamic links and Session routing.
    assert!(!t.contains("rtproto"), "{t}");
    assert!(!t.contains("dynamic"), "{t}");
    for dir in ["$n(0) $n(1)", "$n(1) $n(0)"] {
        assert!(t.contains(&format!(
            "$ns at 1.5 \"[[$ns link {dir}] link] set bandwidth_ 500000\" ;# \"a-b\"\n"
        )));
        assert!(t.contains(&format!(
            "$ns at 1.5 \"[[$ns link {dir}] link] set delay_ 0.03\" ;# \"a-b\"\n"
        )));
        assert!(t.contains(&format!(
            "$ns at 1.5 \"[[$ns link {dir}] queue] set limit_ 7\" ;# \"a-b\"\n"
        )));
    }
    // The loss model is on b → a only; its object is kept for the event.
    assert!(t.contains("$ns link-lossmodel $em $n(1) $n(0)\nset lossmodel(1,0) $em\n"));
    assert!(t.contains("$ns at 1.5 \"$lossmodel(1,0) set rate_ 0.1\" ;# \"a-b\"\n"));
    assert!(!t.contains("lossmodel(0,1)"));
    // A simplex link changes in its one direction.
    assert!(t.contains("$ns at 2 \"[[$ns link $n(1) $n(2)] link] set bandwidth_ 2000000\""));
    assert!(!t.contains("$ns at 2 \"[[$ns link $n(2) $n(1)]"));
    // The loss model and the links exist before the events that use them.
    let lm = t.find("set lossmodel(1,0)").expect("loss model");
    let ev = t.find("$ns at 1.5").expect("event");
    assert!(lm < ev);
}

#[test]
fn sack_maps_to_sack1_with_its_sink() {
    for (delack, sink) in [
        ("false", "Agent/TCPSink/Sack1"),
        ("true", "Agent/TCPSink/Sack1/DelAck"),
    ] {
        let text = BASE
            .replace("variant = \"reno\"", "variant = \"sack\"")
            .replace("delayed_ack = true", &format!("delayed_ack = {delack}"));
        let t = traced(&parse(&text));
        assert!(t.contains("set src(0) [new Agent/TCP/Sack1]\n"), "{t}");
        assert!(t.contains(&format!("set dst(0) [new {sink}]\n")), "{t}");
        assert!(t.contains("tcp sack + FTP"), "{t}");
    }
}

#[test]
fn cubic_exports_as_ns2s_linux_agent_with_a_sack_sink() {
    let text = BASE.replace(
        "variant = \"reno\"\nwindow = 33\nwindow_init = 3\ndelayed_ack = true",
        "variant = \"cubic\"\nprofile = \"ns2\"\nwindow = 33\nwindow_init = 3",
    );
    let script = traced(&parse(&text));
    for want in [
        "set src(0) [new Agent/TCP/Linux]",
        "$src(0) set timestamps_ true",
        "$src(0) set window_ 33",
        "set dst(0) [new Agent/TCPSink/Sack1]",
        "$dst(0) set ts_echo_rfc1323_ true",
        "$ns at 0 \"$src(0) select_ca cubic\"",
        "tcp cubic (profile ns2)",
    ] {
        assert!(script.contains(want), "{want:?} missing:\n{script}");
    }
    // The module is installed before the source starts.
    let ca = script.find("select_ca cubic").unwrap();
    let start = script.find("$app(0) start").unwrap();
    assert!(ca < start);
}

#[test]
fn rfc9438_cubic_is_refused_with_the_reason() {
    let text = BASE.replace(
        "variant = \"reno\"\nwindow = 33\nwindow_init = 3\ndelayed_ack = true",
        "variant = \"cubic\"",
    );
    let s = parse(&text);
    let e = export(&s, &ExportOptions::traced(&s)).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!(p.item, "flow \"t\"");
    assert!(p.message.contains("CUBIC profile \"rfc9438\""), "{e}");
    assert!(p.message.contains("819/1024"), "{e}");
    assert!(e.to_string().contains("profile = \"ns2\""), "{e}");
}

#[test]
fn linux_profile_is_refused_with_the_reason() {
    for v in ["reno", "cubic"] {
        let text = BASE.replace(
            "variant = \"reno\"\nwindow = 33\nwindow_init = 3\ndelayed_ack = true",
            &format!("variant = \"{v}\"\nprofile = \"linux\""),
        );
        let s = parse(&text);
        let e = export(&s, &ExportOptions::traced(&s)).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
        let p = &e.problems[0];
        assert_eq!(p.item, "flow \"t\"");
        assert!(
            p.message
                .contains(&format!("profile \"linux\" (variant = \"{v}\")")),
            "{e}"
        );
        assert!(p.message.contains("RACK-TLP"), "{e}");
        assert!(e.to_string().contains("validate --real"), "{e}");
    }
}

/// `ecn = true` on a TFRC flow exports NS-2's `ecn_ 1` on its Agent/TFRC; without it, nothing.
#[test]
fn ecn_tfrc_sets_ecn_on_the_agent() {
    let text = BASE.replace(
        "app_rate = \"200kbps\"",
        "app_rate = \"200kbps\"\necn = true",
    );
    let t = traced(&parse(&text));
    assert!(t.contains("$src(2) set ecn_ 1\n"), "{t}");
    assert!(!traced(&parse(BASE)).contains("ecn_"));
}

/// `ecn = true` on a TCP flow exports NS-2's `ecn_ 1` on its agent (which makes the SYN ask
/// for ECN and the data ECT; TCPSink echoes marks by itself).
#[test]
fn ecn_tcp_sets_ecn_on_the_agent() {
    let text = BASE.replace(
        "variant = \"reno\"\nwindow = 33",
        "variant = \"reno\"\necn = true\nwindow = 33",
    );
    let t = traced(&parse(&text));
    assert!(t.contains("$src(0) set ecn_ 1\n"), "{t}");
    assert!(t.contains("[new Agent/TCP/Reno]"), "{t}");
}

/// The family's variants are refused with the reason NS-2.35 lacks each.
#[test]
fn family_variants_are_refused_with_the_reason() {
    for (v, why) in [
        ("tfrc-sp", "`voip_` mode"),
        ("faster-restart", "no Faster Restart"),
        ("multfrc", "no MulTFRC"),
    ] {
        let text = BASE.replace(
            "app_rate = \"200kbps\"",
            &format!("app_rate = \"200kbps\"\nvariants = [\"{v}\"]"),
        );
        let text = if v == "faster-restart" {
            text.replace("profile = \"ns2\"", "profile = \"rfc5348\"")
        } else {
            text
        };
        let s = parse(&text);
        let msg = export(&s, &ExportOptions::traced(&s))
            .unwrap_err()
            .to_string();
        assert!(msg.contains(v) && msg.contains(why), "{v}: {msg}");
    }
}

/// An on-off application exports as its CBR stopped and started at the period boundaries.
#[test]
fn on_off_application_exports_as_cbr_stop_and_start() {
    let text = BASE.replace(
        "app_rate = \"200kbps\"",
        "app_rate = \"200kbps\"\napp_on = \"2s\"\napp_off = \"1.5s\"",
    );
    let t = traced(&parse(&text));
    // Start 1 s; on until 3, off until 4.5, on until 6.5, off until 8, on until the end (10).
    for line in [
        "$ns at 1 \"$app(2) start\"\n",
        "$ns at 3 \"$app(2) stop\"\n",
        "$ns at 4.5 \"$app(2) start\"\n",
        "$ns at 6.5 \"$app(2) stop\"\n",
        "$ns at 8 \"$app(2) start\"\n",
    ] {
        assert!(t.contains(line), "{line} missing:\n{t}");
    }
    assert!(!t.contains("$ns at 10 \"$app(2) stop\"\n"));
}
