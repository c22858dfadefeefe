//! Each RFC 8867 case file against the RFC's topology and schedule (docs/media.md, "The test
//! cases"): capacities and when they change, the 300-ms queue at every capacity, flows and their
//! start, stop and pause times, one-way propagation delays; and every controller configuration
//! of the suite applied to every case. Budget: < 1 s.

use std::path::PathBuf;
use std::time::Duration;

use lab::runner::{simulate, RunOptions};
use papers::rfc8867::{capacity_steps, Rfc8867, CASES, CONTROLLERS, TRACE};
use papers::{Budget, Paper};
use scenario::{overrides, FlowKind, LinkAction, MediaController, Scenario};

fn load(id: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../scenarios/seeds/rfc8867/case-{id}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    Scenario::parse(path.to_str().unwrap(), &text).unwrap()
}

fn link(s: &Scenario, name: &str) -> usize {
    s.links.iter().position(|l| l.name == name).expect(name)
}

fn mbps(steps: &[(f64, f64)]) -> Vec<(f64, f64)> {
    steps.iter().map(|&(t, c)| (t, c / 1e6)).collect()
}

/// Every capacity step of `l` comes with a queue limit of 300 ms at that capacity, in
/// 1040-byte packets (a 1000-byte segment and its headers), rounded.
fn queue_is_300ms(s: &Scenario, l: usize) {
    let q = |c: f64| (0.3 * c / (8.0 * 1040.0)).round() as u32;
    let first = match &s.links[l].queue {
        scenario::Queue::DropTail { limit, .. } => *limit,
        other => panic!("{other:?}"),
    };
    assert_eq!(first, q(s.links[l].bandwidth_bps), "{}", s.name);
    for e in s.events.iter().filter(|e| e.link == l) {
        let LinkAction::Set(set) = e.action else {
            panic!()
        };
        assert_eq!(
            set.queue_limit,
            Some(q(set.bandwidth_bps.unwrap())),
            "{}",
            s.name
        );
    }
}

/// (name, start s, stop s, kind name)
fn timeline(s: &Scenario) -> Vec<(String, f64, f64, &'static str)> {
    s.flows
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                f.start.as_secs_f64(),
                f.stop.as_secs_f64(),
                f.kind.name(),
            )
        })
        .collect()
}

/// One-way propagation delay of each flow's data path, ms.
fn one_way_ms(s: &Scenario) -> Vec<f64> {
    let mut short = s.clone();
    short.duration = Duration::from_millis(10);
    for f in &mut short.flows {
        f.start = Duration::ZERO;
        f.stop = short.duration;
        if let FlowKind::Media { pauses, .. } = &mut f.kind {
            pauses.clear();
        }
    }
    let out = simulate(&short, &RunOptions::default()).unwrap();
    out.paths
        .iter()
        .map(|p| {
            p.iter()
                .map(|l| {
                    let i = out
                        .link_ids
                        .iter()
                        .position(|&(a, b)| a == *l || b == Some(*l))
                        .unwrap();
                    s.links[i].delay.as_secs_f64() * 1e3
                })
                .sum()
        })
        .collect()
}

#[test]
fn every_case_has_a_file_and_rules() {
    assert_eq!(
        CASES.iter().map(|c| c.id).collect::<Vec<_>>(),
        ["5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7", "5.8"]
    );
    for c in CASES {
        assert!(!c.rules.is_empty());
        assert_eq!(load(c.id).sample_interval, Duration::from_millis(200));
    }
}

#[test]
fn case_5_1_single_flow_variable_capacity() {
    let s = load("5.1");
    assert_eq!(s.duration, Duration::from_secs(100));
    let l = link(&s, "r0-r1");
    assert_eq!(
        mbps(&capacity_steps(&s, l)),
        [(0.0, 1.0), (40.0, 2.5), (60.0, 0.6), (80.0, 1.0)]
    );
    queue_is_300ms(&s, l);
    assert_eq!(timeline(&s), [("media1".into(), 0.0, 100.0, "media")]);
    assert_eq!(one_way_ms(&s), [50.0]);
}

#[test]
fn case_5_2_two_flows_variable_capacity() {
    let s = load("5.2");
    assert_eq!(s.duration, Duration::from_secs(125));
    let l = link(&s, "r0-r1");
    assert_eq!(
        mbps(&capacity_steps(&s, l)),
        [
            (0.0, 4.0),
            (25.0, 2.0),
            (50.0, 3.5),
            (75.0, 1.0),
            (100.0, 2.0)
        ]
    );
    queue_is_300ms(&s, l);
    assert_eq!(timeline(&s).len(), 2);
    assert_eq!(one_way_ms(&s), [50.0, 50.0]);
}

#[test]
fn case_5_3_bidirectional_with_congested_feedback() {
    let s = load("5.3");
    assert_eq!(s.duration, Duration::from_secs(100));
    let (f, b) = (link(&s, "fwd"), link(&s, "bwd"));
    assert_eq!(
        mbps(&capacity_steps(&s, f)),
        [(0.0, 2.0), (20.0, 1.0), (40.0, 0.5), (60.0, 2.0)]
    );
    assert_eq!(
        mbps(&capacity_steps(&s, b)),
        [(0.0, 2.0), (35.0, 0.8), (70.0, 2.0)]
    );
    queue_is_300ms(&s, f);
    queue_is_300ms(&s, b);
    // Each flow's data crosses its own direction's bottleneck; its feedback crosses the other.
    let out = {
        let mut short = s.clone();
        short.duration = Duration::from_millis(10);
        simulate(&short, &RunOptions::default()).unwrap()
    };
    let fwd_id = out.link_ids[f].0;
    let bwd_id = out.link_ids[b].0;
    assert!(out.paths[0].contains(&fwd_id) && !out.paths[0].contains(&bwd_id));
    assert!(out.paths[1].contains(&bwd_id) && !out.paths[1].contains(&fwd_id));
    assert_eq!(one_way_ms(&s), [50.0, 50.0]);
}

#[test]
fn case_5_4_three_flows_join() {
    let s = load("5.4");
    let l = link(&s, "r0-r1");
    assert_eq!(mbps(&capacity_steps(&s, l)), [(0.0, 3.5)]);
    queue_is_300ms(&s, l);
    let t: Vec<(f64, f64)> = timeline(&s).iter().map(|f| (f.1, f.2)).collect();
    assert_eq!(t, [(0.0, 120.0), (20.0, 120.0), (40.0, 120.0)]);
}

#[test]
fn case_5_5_rtt_fairness() {
    let s = load("5.5");
    assert_eq!(s.duration, Duration::from_secs(300));
    let l = link(&s, "r0-r1");
    assert_eq!(mbps(&capacity_steps(&s, l)), [(0.0, 4.0)]);
    queue_is_300ms(&s, l);
    assert_eq!(one_way_ms(&s), [10.0, 25.0, 50.0, 100.0, 150.0]);
    let starts: Vec<f64> = timeline(&s).iter().map(|f| f.1).collect();
    assert_eq!(starts, [0.0, 10.0, 20.0, 30.0, 40.0]);
}

#[test]
fn case_5_6_long_tcp() {
    let s = load("5.6");
    let l = link(&s, "r0-r1");
    assert_eq!(mbps(&capacity_steps(&s, l)), [(0.0, 2.0)]);
    queue_is_300ms(&s, l);
    assert_eq!(
        timeline(&s),
        [
            ("media1".into(), 5.0, 120.0, "media"),
            ("tcp1".into(), 0.0, 120.0, "tcp")
        ]
    );
    assert!(matches!(
        s.flows[1].kind,
        FlowKind::Tcp {
            variant: scenario::TcpVariant::NewReno,
            on_off: None,
            ..
        }
    ));
}

#[test]
fn case_5_7_short_tcp() {
    let s = load("5.7");
    assert_eq!(s.duration, Duration::from_secs(300));
    let l = link(&s, "r0-r1");
    assert_eq!(mbps(&capacity_steps(&s, l)), [(0.0, 2.0)]);
    let t = timeline(&s);
    assert_eq!(t.iter().filter(|f| f.3 == "media").count(), 2);
    let mut on = 0;
    for f in &s.flows[2..] {
        let FlowKind::Tcp {
            on_off: Some(o), ..
        } = f.kind
        else {
            panic!("{f:?}")
        };
        assert_eq!((o.size_min, o.size_max), (30_000, 50_000));
        assert_eq!(o.off_mean, Duration::from_secs(10));
        on += usize::from(o.start_on);
    }
    assert_eq!((s.flows.len() - 2, on), (10, 2));
}

#[test]
fn case_5_8_pause_and_resume() {
    let s = load("5.8");
    let l = link(&s, "r0-r1");
    assert_eq!(mbps(&capacity_steps(&s, l)), [(0.0, 3.5)]);
    let FlowKind::Media { pauses, .. } = &s.flows[1].kind else {
        panic!()
    };
    assert_eq!(
        pauses,
        &[(Duration::from_secs(40), Duration::from_secs(60))]
    );
    assert_eq!(timeline(&s).len(), 3);
}

/// The report's title names every kind of controller the suite runs, not TFRC alone (it once
/// read "TFRC as a media congestion controller" while eight configurations ran).
#[test]
fn title_names_every_controller() {
    let title = Rfc8867.title().to_lowercase();
    for c in CONTROLLERS {
        assert!(
            title.contains(c.controller),
            "{:?} lacks {}",
            Rfc8867.title(),
            c.controller
        );
    }
}

/// Every configuration of the full suite parses on its case (the RMCAT controllers' flows refuse
/// `profile` and `variants`, so this also fails if a case file sets either), and every media
/// flow then runs the configuration's controller: TFRC with its profile and variants, or NADA,
/// SCReAM or GCC.
#[test]
fn every_controller_runs_every_case() {
    let names: Vec<&str> = CONTROLLERS.iter().map(|c| c.controller).collect();
    for rmcat in ["nada", "scream", "gcc"] {
        assert!(names.contains(&rmcat), "{rmcat} is in the suite");
    }
    let experiments = Rfc8867.experiments(&Budget::full(10)).unwrap();
    assert_eq!(experiments.len(), CASES.len());
    for e in &experiments {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/seeds")
            .join(&e.scenario);
        let text = std::fs::read_to_string(&path).unwrap();
        let ids: Vec<&str> = e.configs.iter().map(|c| c.id.as_str()).collect();
        let want: Vec<&str> = CONTROLLERS.iter().map(|c| c.id).collect();
        assert_eq!(ids[..want.len()], want[..], "{}", e.id);
        for (cfg, c) in e.configs.iter().zip(CONTROLLERS) {
            let what = format!("{} {}", e.id, cfg.id);
            let applied = overrides::apply(&e.scenario, &text, &cfg.set).expect(&what);
            let s = Scenario::parse(&e.scenario, &applied)
                .unwrap_or_else(|err| panic!("{what}: {err}"));
            let media: Vec<&MediaController> = s
                .flows
                .iter()
                .filter_map(|f| match &f.kind {
                    FlowKind::Media { controller, .. } => Some(controller),
                    _ => None,
                })
                .collect();
            assert!(!media.is_empty(), "{what}");
            for m in media {
                assert_eq!(m.name(), c.controller, "{what}");
                if let (MediaController::Tfrc { profile, variants }, Some((p, v))) = (m, c.tfrc) {
                    let want = match p {
                        "rfc5348" => scenario::TfrcProfile::Rfc5348,
                        "ns2" => scenario::TfrcProfile::Ns2,
                        other => panic!("{what}: profile {other}"),
                    };
                    assert_eq!(*profile, want, "{what}");
                    let got: Vec<String> =
                        variants.iter().map(|x| format!("\"{}\"", x.name)).collect();
                    assert_eq!(format!("[{}]", got.join(", ")), v, "{what}");
                }
            }
        }
        let extra = &ids[want.len()..];
        assert!(
            extra.is_empty() || (e.id == "5.1" && extra == [TRACE]),
            "{}",
            e.id
        );
    }
}
