//! Validation: raw TOML → [`Scenario`], collecting every problem with its location.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::time::Duration;

use toml::{Spanned, Value};

use super::error::{Problem, ScenarioError};
use super::raw::*;
use super::units;
use super::*;

const DURATION_HINT: &str =
    "a duration: a string with a unit (\"100s\", \"150ms\", \"20us\", \"2 min\")";
const BANDWIDTH_HINT: &str =
    "a bandwidth with a unit: bit/s (\"10Mbps\", \"1.5Mb\", \"500kbps\") or bytes/s (\"1MB/s\")";

/// A number as the file wrote it (integer or float), for messages.
fn bare_number(v: &Value) -> Option<String> {
    match v {
        Value::Integer(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        // `"5"` is as bare as `5`: the unit parsers would read it as seconds or bit/s.
        Value::String(s) => {
            let t = s.trim();
            let numeric = t
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E' | '_'));
            (numeric && t.replace('_', "").parse::<f64>().is_ok()).then(|| t.to_string())
        }
        _ => None,
    }
}

/// `n` bit/s written with the largest SI prefix that keeps it at least 1: 1e7 → "10Mbps".
fn bps_text(n: f64) -> String {
    for (p, scale) in [("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)] {
        if n.abs() >= scale {
            return format!("{}{p}bps", n / scale);
        }
    }
    format!("{n}bps")
}

struct Ctx<'a> {
    text: &'a str,
    problems: Vec<Problem>,
    /// The topology generator failed, so nodes and links it would have made are missing:
    /// names that refer to them are not reported as unknown (one error, not a cascade).
    topology_failed: bool,
}

impl<'a> Ctx<'a> {
    fn err(
        &mut self,
        span: Range<usize>,
        message: impl Into<String>,
        expected: impl Into<Option<String>>,
    ) {
        self.problems.push(Problem::at(
            self.text,
            Some(span),
            message.into(),
            expected.into(),
        ));
    }

    /// A bare number where a unit is needed: refused (it used to mean seconds or bit/s, and
    /// `bottleneck_delay = 5` ran with 5-second delays), except 0, the same in every unit.
    fn bare(&mut self, v: &Spanned<Value>, key: &str, what: &str, fix: String) -> bool {
        let Some(n) = bare_number(v.get_ref()) else {
            return false;
        };
        let x = n.replace('_', "").parse::<f64>();
        if x == Ok(0.0) {
            return false;
        }
        // The fix the caller wrote uses the magnitude: suggesting `"-1s"` would only lead to
        // the next refusal (negative).
        let message = if x.is_ok_and(|x| x < 0.0) {
            format!("`{key}` = {n} has no unit and is negative: a {what} needs a unit and is zero or more")
        } else {
            format!("`{key}` = {n} has no unit: a {what} needs one")
        };
        self.err(v.span(), message, fix);
        true
    }

    fn duration_value(&mut self, v: &Spanned<Value>, key: &str) -> Option<(f64, Duration)> {
        if let Some(n) = bare_number(v.get_ref()) {
            let n = n.trim_start_matches(['-', '+']);
            let fix = format!(
                "`{key} = \"{n}s\"` for seconds, or another unit: \"{n}ms\", \"{n}us\", \"{n}ns\", \"{n} min\""
            );
            if self.bare(v, key, "duration", fix) {
                return None;
            }
        }
        let secs = match v.get_ref() {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::String(s) => units::parse_signed_seconds(s),
            other => Err(format!("`{key}` is a {}", other.type_str())),
        };
        match secs {
            Err(e) => {
                self.err(v.span(), format!("`{key}`: {e}"), DURATION_HINT.to_string());
                None
            }
            Ok(s) if s < 0.0 => {
                self.err(
                    v.span(),
                    format!("`{key}` is negative ({s} s)"),
                    "a duration of zero or more".to_string(),
                );
                None
            }
            Ok(s) if s > 1e9 => {
                self.err(
                    v.span(),
                    format!("`{key}` is too long ({s} s)"),
                    "at most 1e9 seconds".to_string(),
                );
                None
            }
            Ok(s) => {
                let d = match v.get_ref() {
                    Value::String(st) => {
                        units::parse_duration(st).unwrap_or(Duration::from_secs_f64(s))
                    }
                    _ => Duration::from_nanos((s * 1e9).round() as u64),
                };
                Some((s, d))
            }
        }
    }

    fn duration(&mut self, v: &Spanned<Value>, key: &str) -> Option<Duration> {
        self.duration_value(v, key).map(|(_, d)| d)
    }

    fn bandwidth(&mut self, v: &Spanned<Value>, key: &str) -> Option<f64> {
        if let Some(n) = bare_number(v.get_ref()) {
            let x: f64 = n.replace('_', "").parse::<f64>().unwrap_or(0.0).abs();
            let n = n.trim_start_matches(['-', '+']);
            let mut fix = format!("`{key} = \"{}\"` for {n} bit/s", bps_text(x));
            if x.abs() < 1e4 {
                fix.push_str(&format!(", or \"{n}Mbps\", \"{n}kbps\", \"{n}MB/s\""));
            }
            if self.bare(v, key, "bandwidth", fix) {
                return None;
            }
        }
        let bps = match v.get_ref() {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::String(s) => units::parse_bandwidth(s),
            other => Err(format!("`{key}` is a {}", other.type_str())),
        };
        match bps {
            Err(e) => {
                self.err(
                    v.span(),
                    format!("`{key}`: {e}"),
                    BANDWIDTH_HINT.to_string(),
                );
                None
            }
            Ok(b) if b <= 0.0 => {
                self.err(
                    v.span(),
                    format!("`{key}` must be positive, got {b} bit/s"),
                    BANDWIDTH_HINT.to_string(),
                );
                None
            }
            Ok(b) => Some(b),
        }
    }

    fn probability(&mut self, v: &Spanned<f64>, key: &str) -> Option<f64> {
        let p = *v.get_ref();
        if (0.0..=1.0).contains(&p) {
            Some(p)
        } else {
            self.err(
                v.span(),
                format!("`{key}` = {p} is not a probability"),
                "a number in [0, 1]".to_string(),
            );
            None
        }
    }

    fn count(&mut self, v: &Spanned<i64>, key: &str, min: i64, max: i64) -> Option<u32> {
        let n = *v.get_ref();
        if n < min || n > max {
            self.err(
                v.span(),
                format!("`{key}` = {n} is out of range"),
                format!("an integer from {min} to {max}"),
            );
            None
        } else {
            Some(n as u32)
        }
    }

    fn direction(&mut self, v: &Option<Spanned<String>>, duplex: bool) -> LinkDirection {
        let Some(v) = v else {
            return LinkDirection::Forward;
        };
        let d = match v.get_ref().as_str() {
            "forward" => LinkDirection::Forward,
            "reverse" => LinkDirection::Reverse,
            "both" => LinkDirection::Both,
            other => {
                self.err(
                    v.span(),
                    format!("unknown direction \"{other}\""),
                    "\"forward\", \"reverse\" or \"both\"".to_string(),
                );
                return LinkDirection::Forward;
            }
        };
        if !duplex && d != LinkDirection::Forward {
            self.err(
                v.span(),
                "a simplex link has only the forward direction",
                "direction = \"forward\", or duplex = true".to_string(),
            );
        }
        d
    }
}

/// Nodes in order of first appearance, by name.
#[derive(Default)]
struct NodeTable {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl NodeTable {
    fn intern(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }
}

pub(super) fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let message = e.message().to_string();
        let hint = super::error::did_you_mean(&message);
        ScenarioError::at(file, text, e.span(), message, hint)
    })?;
    let mut cx = Ctx {
        text,
        problems: Vec::new(),
        topology_failed: false,
    };

    // Top level.
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        cx.err(
            raw.name.span(),
            "`name` is empty",
            "a non-empty name".to_string(),
        );
    }
    // A bad duration is reported once: the longest valid one stands in, so that starts,
    // stops and the warm-up are not also reported as past its end.
    let duration = cx
        .duration(&raw.duration, "duration")
        .unwrap_or(Duration::from_secs(1_000_000_000));
    if duration.is_zero() {
        cx.err(
            raw.duration.span(),
            "`duration` is zero",
            "a positive duration".to_string(),
        );
    }
    let seed = match &raw.seed {
        Some(s) if *s.get_ref() < 0 => {
            cx.err(s.span(), "`seed` is negative", "an integer ≥ 0".to_string());
            0
        }
        Some(s) => *s.get_ref() as u64,
        None => 1,
    };
    let max_events = match &raw.max_events {
        Some(m) if *m.get_ref() <= 0 => {
            cx.err(
                m.span(),
                "`max_events` is not positive",
                "an event budget ≥ 1".to_string(),
            );
            None
        }
        Some(m) => Some(*m.get_ref() as u64),
        None => None,
    };
    let warmup = raw
        .warmup
        .as_ref()
        .and_then(|w| {
            let d = cx.duration(w, "warmup")?;
            if d >= duration {
                cx.err(
                    w.span(),
                    "`warmup` is not shorter than `duration`",
                    "a warm-up shorter than the run".to_string(),
                );
            }
            Some(d)
        })
        .unwrap_or(Duration::ZERO);
    let sample_interval = raw
        .sample_interval
        .as_ref()
        .and_then(|s| {
            let d = cx.duration(s, "sample_interval")?;
            if d < Duration::from_micros(1) {
                cx.err(
                    s.span(),
                    "`sample_interval` is too small",
                    "at least 1 µs".to_string(),
                );
                return None;
            }
            Some(d)
        })
        .unwrap_or(Duration::from_secs(1));

    // Links: the topology generator first, then explicit links.
    let mut nodes = NodeTable::default();
    let mut links: Vec<Link> = Vec::new();
    let mut link_spans: Vec<Range<usize>> = Vec::new();
    if let Some(topo) = &raw.topology {
        let before = cx.problems.len();
        expand_topology(&mut cx, topo, &mut nodes, &mut links, &mut link_spans);
        cx.topology_failed = cx.problems.len() > before;
    }
    // `[links.trace]` steps, turned into `set` events below: (link index, at, bit/s).
    let mut trace_steps: Vec<(usize, Duration, f64)> = Vec::new();
    for l in &raw.links {
        let span = l.span();
        let l = l.get_ref();
        let from = nodes.intern(l.from.get_ref());
        let to = nodes.intern(l.to.get_ref());
        if from == to {
            cx.err(
                l.to.span(),
                format!("link from \"{}\" to itself", l.from.get_ref()),
                "two different nodes".to_string(),
            );
        }
        let bandwidth_bps = cx.bandwidth(&l.bandwidth, "bandwidth").unwrap_or(1.0);
        let delay = cx.duration(&l.delay, "delay").unwrap_or_default();
        let duplex = l.duplex.unwrap_or(true);
        let queue = queue_spec(
            &mut cx,
            l.queue.as_ref(),
            l.queue_limit.as_ref(),
            l.red.as_ref(),
            l.droptail.as_ref(),
        );
        let loss = l.loss.as_ref().and_then(|x| loss_spec(&mut cx, x, duplex));
        let wireless = l
            .wireless
            .as_ref()
            .and_then(|x| wireless_spec(&mut cx, x, duplex));
        let name = match &l.name {
            Some(n) => n.get_ref().clone(),
            None => format!("{}-{}", l.from.get_ref(), l.to.get_ref()),
        };
        if let Some(t) = &l.trace {
            let steps = link_trace(&mut cx, file, t.get_ref(), duration);
            trace_steps.extend(steps.into_iter().map(|(at, b)| (links.len(), at, b)));
        }
        links.push(Link {
            name,
            from,
            to,
            bandwidth_bps,
            delay,
            duplex,
            queue,
            loss,
            wireless,
        });
        link_spans.push(l.name.as_ref().map(|n| n.span()).unwrap_or(span));
    }
    let mut link_index: HashMap<String, usize> = HashMap::new();
    let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, l) in links.iter().enumerate() {
        if let Some(&j) = link_index.get(&l.name) {
            let _ = j;
            cx.err(
                link_spans[i].clone(),
                format!("duplicate link name \"{}\"", l.name),
                "a unique `name` for each link".to_string(),
            );
        } else {
            link_index.insert(l.name.clone(), i);
        }
        let key = (l.from.min(l.to), l.from.max(l.to));
        if let Some(&j) = pairs.get(&key) {
            cx.err(
                link_spans[i].clone(),
                format!(
                    "a second link between \"{}\" and \"{}\" (the first is \"{}\")",
                    nodes.names[l.from], nodes.names[l.to], links[j].name
                ),
                "one link per pair of nodes".to_string(),
            );
        } else {
            pairs.insert(key, i);
        }
    }
    if links.is_empty() && raw.topology.is_none() {
        cx.problems.push(Problem::at(
            text,
            None,
            "the scenario has no links".into(),
            Some("at least one [[links]] table or a [topology]".into()),
        ));
    }

    // Node attributes.
    let mut untrusted = vec![false; nodes.names.len()];
    let all_jitter = raw
        .processing_jitter
        .as_ref()
        .and_then(|v| cx.duration(v, "processing_jitter"))
        .unwrap_or(Duration::ZERO);
    let mut jitter = vec![all_jitter; nodes.names.len()];
    for n in &raw.nodes {
        match nodes.index.get(n.name.get_ref()) {
            Some(&i) => {
                untrusted[i] = n.untrusted.unwrap_or(false);
                if let Some(v) = &n.processing_jitter {
                    jitter[i] = cx.duration(v, "processing_jitter").unwrap_or(all_jitter);
                }
            }
            None if cx.topology_failed => {}
            None => cx.err(
                n.name.span(),
                format!("unknown node \"{}\"", n.name.get_ref()),
                known_nodes(&nodes),
            ),
        }
    }

    // Adjacency for reachability.
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nodes.names.len()];
    for l in &links {
        adj[l.from].push(l.to);
        if l.duplex {
            adj[l.to].push(l.from);
        }
    }
    let reach = Reach::new(adj);

    // Flows.
    let mut flows: Vec<Flow> = Vec::new();
    let mut flow_names: HashMap<String, ()> = HashMap::new();
    if let Some(first) = raw.flows.get(MAX_FLOWS) {
        cx.err(
            first.span(),
            format!(
                "{} flows: a scenario may have at most {MAX_FLOWS}",
                raw.flows.len()
            ),
            format!(
                "at most {MAX_FLOWS} [[flows]] (each costs about 15 KiB before it sends a \
                 packet, 1.5 GB at the limit; the flows past it are not checked)"
            ),
        );
    }
    for f in raw.flows.iter().take(MAX_FLOWS) {
        let f = f.get_ref();
        if let Some(flow) = flow_spec(&mut cx, file, f, &nodes, &reach, duration) {
            if flow_names.insert(flow.name.clone(), ()).is_some() {
                cx.err(
                    f.name.span(),
                    format!("duplicate flow name \"{}\"", flow.name),
                    "a unique `name` for each flow".to_string(),
                );
            }
            flows.push(flow);
        }
    }

    // Protection (E6).
    let mut protection = Protection::default();
    if let Some(p) = &raw.protection {
        let p = p.get_ref();
        if let Some(v) = &p.seal {
            protection.seal = cx.duration(v, "seal").unwrap_or(protection.seal);
        }
        if let Some(v) = &p.open {
            protection.open = cx.duration(v, "open").unwrap_or(protection.open);
        }
        for name in p.flows.iter().flat_map(|f| f.get_ref()) {
            match flows.iter().position(|f| &f.name == name.get_ref()) {
                Some(i) if protection.flows.contains(&i) => cx.err(
                    name.span(),
                    format!("flow \"{}\" is listed twice", name.get_ref()),
                    "each flow once".to_string(),
                ),
                Some(i) => protection.flows.push(i),
                None => {
                    let mut names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
                    names.truncate(20);
                    cx.err(
                        name.span(),
                        format!("unknown flow \"{}\"", name.get_ref()),
                        format!("a flow name: {}", names.join(", ")),
                    );
                }
            }
        }
    }

    // Seed 000 E5's notices: on by default exactly when a flow adapts its TTL to them.
    let ttl_notices = raw.ttl_notices.unwrap_or_else(|| {
        flows
            .iter()
            .any(|f| f.uses(tfrc::variants::Variant::AdaptiveTtl))
    });

    // Events.
    let mut events = Vec::new();
    for e in &raw.events {
        let e = e.get_ref();
        let at = cx.duration(&e.at, "at").unwrap_or_default();
        if at > duration {
            cx.err(
                e.at.span(),
                "event after the end of the run",
                "`at` no later than `duration`".to_string(),
            );
        }
        let link_at = link_index.get(e.link.get_ref()).copied();
        let action = match e.action.get_ref().as_str() {
            "down" | "up" => {
                // Parameters belong to `set` only.
                let extra = [
                    ("bandwidth", e.bandwidth.as_ref().map(|v| v.span())),
                    ("delay", e.delay.as_ref().map(|v| v.span())),
                    ("queue_limit", e.queue_limit.as_ref().map(|v| v.span())),
                    ("loss_rate", e.loss_rate.as_ref().map(|v| v.span())),
                ];
                for (key, span) in extra {
                    if let Some(span) = span {
                        cx.err(
                            span,
                            format!("`{key}` with action = \"{}\"", e.action.get_ref()),
                            "action = \"set\" to change a link's parameters".to_string(),
                        );
                    }
                }
                if e.action.get_ref() == "down" {
                    Some(LinkAction::Down)
                } else {
                    Some(LinkAction::Up)
                }
            }
            "set" => link_set(&mut cx, e, link_at.map(|i| &links[i])),
            other => {
                cx.err(
                    e.action.span(),
                    format!("unknown action \"{other}\""),
                    "\"down\", \"up\" or \"set\"".to_string(),
                );
                None
            }
        };
        let link = match link_at {
            Some(i) => Some(i),
            None if cx.topology_failed => None,
            None => {
                let mut names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
                names.truncate(20);
                cx.err(
                    e.link.span(),
                    format!("unknown link \"{}\"", e.link.get_ref()),
                    format!("a link name: {}", names.join(", ")),
                );
                None
            }
        };
        if let (Some(action), Some(link)) = (action, link) {
            events.push(Event { at, action, link });
        }
    }
    for (link, at, bps) in trace_steps {
        // Steps after the end of the run never happen.
        if at <= duration {
            events.push(Event {
                at,
                action: LinkAction::Set(LinkSet {
                    bandwidth_bps: Some(bps),
                    ..LinkSet::default()
                }),
                link,
            });
        }
    }
    events.sort_by_key(|e| e.at);

    let tolerances = match &raw.validate {
        None => Tolerances::default(),
        Some(v) => {
            let mut t = Tolerances::default();
            for (field, value) in [
                (&mut t.throughput, &v.throughput),
                (&mut t.total_throughput, &v.total_throughput),
                (&mut t.delay, &v.delay),
                (&mut t.loss, &v.loss),
                (&mut t.loss_abs, &v.loss_abs),
                (&mut t.marks, &v.marks),
            ] {
                if let Some(x) = value {
                    if *x.get_ref() >= 0.0 && x.get_ref().is_finite() {
                        *field = *x.get_ref();
                    } else {
                        cx.err(
                            x.span(),
                            "a tolerance must be a non-negative number",
                            "e.g. 0.15 for 15%".to_string(),
                        );
                    }
                }
            }
            if let Some(seeds) = &v.seeds {
                if seeds.get_ref().is_empty() {
                    cx.err(
                        seeds.span(),
                        "`seeds` is empty",
                        "a list of seeds such as [1, 2, 3], or no `seeds` key for the scenario's seed"
                            .to_string(),
                    );
                }
                for seed in seeds.get_ref() {
                    match u64::try_from(*seed.get_ref()) {
                        Ok(x) if !t.seeds.contains(&x) => t.seeds.push(x),
                        Ok(x) => cx.err(
                            seed.span(),
                            format!("seed {x} is listed twice"),
                            "different seeds (each adds an independent run)".to_string(),
                        ),
                        Err(_) => cx.err(
                            seed.span(),
                            "a seed is negative",
                            "integers ≥ 0".to_string(),
                        ),
                    }
                }
            }
            if let Some(d) = v
                .start_jitter
                .as_ref()
                .and_then(|j| start_jitter(&mut cx, j, &flows))
            {
                t.start_jitter = d;
            }
            t.why = v.why.clone();
            t
        }
    };

    let real = real_settings(&mut cx, raw.real.as_ref(), &flows);

    if !cx.problems.is_empty() {
        cx.problems.sort_by_key(|p| (p.line, p.column));
        return Err(ScenarioError {
            file: file.to_string(),
            problems: cx.problems,
        });
    }
    Ok(Scenario {
        name,
        description: raw.description.clone(),
        file: file.to_string(),
        source: text.to_string(),
        duration,
        seed,
        warmup,
        sample_interval,
        max_events,
        nodes: nodes
            .names
            .iter()
            .zip(untrusted)
            .zip(jitter)
            .map(|((n, u), j)| Node {
                name: n.clone(),
                untrusted: u,
                processing_jitter: j,
            })
            .collect(),
        links,
        flows,
        events,
        tolerances,
        protection,
        ttl_notices,
        real,
    })
}

/// `start_jitter` (in `[validate]` and `[real]`): a duration that cannot push any flow's start
/// to or past its stop. `None` (with the problem reported) when it is not one.
fn start_jitter(cx: &mut Ctx<'_>, j: &Spanned<Value>, flows: &[Flow]) -> Option<Duration> {
    let d = cx.duration(j, "start_jitter")?;
    if let Some(f) = flows.iter().find(|f| f.start + d >= f.stop) {
        cx.err(
            j.span(),
            format!(
                "`start_jitter` could start flow \"{}\" at or after its stop",
                f.name
            ),
            "a jitter shorter than every flow's stop − start".to_string(),
        );
    }
    Some(d)
}

/// `[real]`: each key checked, defaults for the rest.
fn real_settings(
    cx: &mut Ctx<'_>,
    raw: Option<&Spanned<crate::raw::RawReal>>,
    flows: &[Flow],
) -> RealSettings {
    let mut r = RealSettings::default();
    let Some(raw) = raw.map(|x| x.get_ref()) else {
        return r;
    };
    if let Some(n) = &raw.reps {
        r.reps = cx.count(n, "reps", 1, 10_000).unwrap_or(r.reps);
    }
    if let Some(n) = &raw.sim_seeds {
        r.sim_seeds = cx.count(n, "sim_seeds", 1, 10_000).unwrap_or(r.sim_seeds);
    }
    if let Some(d) = raw
        .start_jitter
        .as_ref()
        .and_then(|j| start_jitter(cx, j, flows))
    {
        r.start_jitter = d;
    }
    for (field, value, key) in [
        (&mut r.lateness_p99, &raw.lateness_p99, "lateness_p99"),
        (
            &mut r.send_lateness_p99,
            &raw.send_lateness_p99,
            "send_lateness_p99",
        ),
        (
            &mut r.tcp_info_interval,
            &raw.tcp_info_interval,
            "tcp_info_interval",
        ),
    ] {
        if let Some(v) = value {
            match cx.duration(v, key) {
                Some(d) if !d.is_zero() => *field = d,
                Some(_) => cx.err(
                    v.span(),
                    format!("`{key}` is zero"),
                    "a positive duration such as \"1ms\"".to_string(),
                ),
                None => {}
            }
        }
    }
    // Zero is valid: no jitter, the default.
    if let Some(d) = raw
        .processing_jitter
        .as_ref()
        .and_then(|v| cx.duration(v, "processing_jitter"))
    {
        r.processing_jitter = d;
    }
    r.why = raw.why.clone();
    r
}

fn known_nodes(nodes: &NodeTable) -> String {
    if nodes.names.is_empty() {
        return "a node that a [[links]] entry connects (this file has no links yet)".into();
    }
    let mut names: Vec<&str> = nodes.names.iter().map(String::as_str).collect();
    let more = names.len() > 20;
    names.truncate(20);
    format!(
        "one of the nodes that links connect: {}{}",
        names.join(", "),
        if more { ", …" } else { "" }
    )
}

fn queue_spec(
    cx: &mut Ctx<'_>,
    queue: Option<&Spanned<String>>,
    limit: Option<&Spanned<i64>>,
    red: Option<&Spanned<RawRed>>,
    droptail: Option<&Spanned<RawDropTail>>,
) -> Queue {
    let limit = limit
        .and_then(|l| cx.count(l, "queue_limit", 1, 100_000_000))
        .unwrap_or(50);
    let kind = queue.map(|q| q.get_ref().as_str()).unwrap_or("droptail");
    match kind {
        "droptail" => {
            if let Some(r) = red {
                cx.err(
                    r.span(),
                    "[red] options on a droptail queue",
                    "queue = \"red\", or remove the [red] table".to_string(),
                );
            }
            let (in_bytes, mean_pktsize, drop_front) = match droptail {
                Some(d) => {
                    let d = d.get_ref();
                    let mean = d
                        .mean_pktsize
                        .as_ref()
                        .and_then(|m| cx.count(m, "mean_pktsize", 1, 1_000_000))
                        .unwrap_or(500);
                    (
                        d.queue_in_bytes.unwrap_or(false),
                        mean,
                        d.drop_front.unwrap_or(false),
                    )
                }
                None => (false, 500, false),
            };
            Queue::DropTail {
                limit,
                in_bytes,
                mean_pktsize,
                drop_front,
            }
        }
        "red" | "ared" | "ered" => {
            if let Some(d) = droptail {
                cx.err(
                    d.span(),
                    "[droptail] options on a red queue",
                    "queue = \"droptail\", or remove the [droptail] table".to_string(),
                );
            }
            let mut p = RedParams::default();
            if kind == "ared" {
                // Floyd et al. 2001 §5's automatic weight, as NS-2's q_weight_ 0.
                p.q_weight = Some(0.0);
            }
            red_variants(cx, kind, red.map(|r| r.get_ref()), &mut p);
            if let Some(r) = red {
                let r = r.get_ref();
                let positive =
                    |cx: &mut Ctx<'_>, v: &Option<Spanned<f64>>, key: &str| -> Option<f64> {
                        let v = v.as_ref()?;
                        let x = *v.get_ref();
                        if x.is_finite() && x > 0.0 {
                            Some(x)
                        } else {
                            cx.err(
                                v.span(),
                                format!("`{key}` = {x} must be positive"),
                                "a positive number".to_string(),
                            );
                            None
                        }
                    };
                p.thresh = positive(cx, &r.thresh, "thresh");
                p.maxthresh = positive(cx, &r.maxthresh, "maxthresh");
                if let (Some(lo), Some(hi), Some(span)) = (
                    p.thresh,
                    p.maxthresh,
                    r.maxthresh.as_ref().map(|m| m.span()),
                ) {
                    if hi < lo {
                        cx.err(
                            span,
                            format!("maxthresh {hi} is below thresh {lo}"),
                            "maxthresh ≥ thresh".to_string(),
                        );
                    }
                }
                if let Some(q) = &r.q_weight {
                    let w = *q.get_ref();
                    if (w > 0.0 && w <= 1.0) || w == 0.0 {
                        p.q_weight = Some(w);
                    } else if w == -1.0 {
                        p.q_weight = None;
                    } else {
                        cx.err(
                            q.span(),
                            format!("`q_weight` = {w}"),
                            "a weight in (0, 1], -1 for NS-2's automatic choice, or 0 for \
                             1 − exp(−1/C)"
                                .to_string(),
                        );
                    }
                }
                if let Some(l) = &r.linterm {
                    let x = *l.get_ref();
                    if x >= 1.0 && x.is_finite() {
                        p.linterm = x;
                    } else {
                        cx.err(
                            l.span(),
                            format!("`linterm` = {x}"),
                            "a number ≥ 1 (max_p = 1/linterm)".to_string(),
                        );
                    }
                }
                if let Some(m) = &r.mean_pktsize {
                    p.mean_pktsize = cx.count(m, "mean_pktsize", 1, 1_000_000).unwrap_or(500);
                }
                if let Some(m) = &r.idle_pktsize {
                    p.idle_pktsize = cx.count(m, "idle_pktsize", 1, 1_000_000).unwrap_or(100);
                }
                if let Some(t) = &r.targetdelay {
                    p.targetdelay = cx.duration(t, "targetdelay").unwrap_or(p.targetdelay);
                }
                p.bytes = r.bytes.unwrap_or(p.bytes);
                p.queue_in_bytes = r.queue_in_bytes.unwrap_or(p.queue_in_bytes);
                p.gentle = r.gentle.unwrap_or(p.gentle);
                p.wait = r.wait.unwrap_or(p.wait);
                p.setbit = r.setbit.unwrap_or(p.setbit);
            }
            Queue::Red { limit, params: p }
        }
        other => {
            if let Some(q) = queue {
                cx.err(
                    q.span(),
                    format!("unknown queue \"{other}\""),
                    "\"droptail\", \"red\", \"ared\" (Adaptive RED) or \"ered\" (seed 001)"
                        .to_string(),
                );
            }
            Queue::DropTail {
                limit,
                in_bytes: false,
                mean_pktsize: 500,
                drop_front: false,
            }
        }
    }
}

/// `[links.red]`'s variant keys (`docs/variants.md`), over the defaults of `kind`: `"red"`
/// (all plain), `"ared"` (Adaptive RED) or `"ered"` (seed 001's Q1 + Q2 + Q3). A preset fixes
/// its three policies; asking it for another is an error rather than a silent hybrid.
fn red_variants(cx: &mut Ctx<'_>, kind: &str, r: Option<&RawRed>, p: &mut RedParams) {
    let (average, thresholds, max_p) = match kind {
        "ared" => (Some("ewma"), Some("fixed"), Some("adaptive-red")),
        "ered" => (
            Some("shewhart-ewma"),
            Some("auto-tuned"),
            Some("adaptive-q3"),
        ),
        _ => (None, None, None),
    };
    let pick = |cx: &mut Ctx<'_>,
                key: &str,
                given: Option<&Spanned<String>>,
                preset: Option<&str>,
                allowed: &[&str]|
     -> String {
        let Some(v) = given else {
            return preset.unwrap_or(allowed[0]).to_string();
        };
        let value = v.get_ref().as_str();
        if !allowed.contains(&value) {
            let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
            cx.err(
                v.span(),
                format!("unknown {key} \"{value}\""),
                list.join(" or "),
            );
            return preset.unwrap_or(allowed[0]).to_string();
        }
        if let Some(fixed) = preset.filter(|f| *f != value) {
            cx.err(
                v.span(),
                format!("queue = \"{kind}\" has {key} = \"{fixed}\", not \"{value}\""),
                format!("queue = \"red\" with {key} = \"{value}\", or no `{key}` key"),
            );
            return fixed.to_string();
        }
        value.to_string()
    };
    let average = pick(
        cx,
        "average",
        r.and_then(|r| r.average.as_ref()),
        average,
        &["ewma", "shewhart-ewma"],
    );
    let thresholds = pick(
        cx,
        "thresholds",
        r.and_then(|r| r.thresholds.as_ref()),
        thresholds,
        &["fixed", "auto-tuned"],
    );
    let max_p = pick(
        cx,
        "max_p",
        r.and_then(|r| r.max_p.as_ref()),
        max_p,
        &["fixed", "adaptive-q3", "adaptive-red"],
    );
    p.average = if average == "shewhart-ewma" {
        RedAverage::ShewhartEwma
    } else {
        RedAverage::Ewma
    };
    let owner_err = |cx: &mut Ctx<'_>, span: Range<usize>, key: &str, owner: &str| {
        cx.err(
            span,
            format!("`{key}` applies to {owner} only"),
            format!("{owner}, or remove `{key}`"),
        );
    };
    p.thresholds = RedThresholds::Fixed;
    if thresholds == "auto-tuned" {
        let mut alpha_th = 1.0;
        if let Some(a) = r.and_then(|r| r.alpha_th.as_ref()) {
            let x = *a.get_ref();
            if x.is_finite() && (0.0..=1e6).contains(&x) {
                alpha_th = x;
            } else {
                cx.err(
                    a.span(),
                    format!("`alpha_th` = {x}"),
                    "a number of packets from 0 to 1e6 (default 1)".to_string(),
                );
            }
        }
        p.thresholds = RedThresholds::AutoTuned { alpha_th };
    } else if let Some(a) = r.and_then(|r| r.alpha_th.as_ref()) {
        owner_err(cx, a.span(), "alpha_th", "thresholds = \"auto-tuned\"");
    }
    let adaptive_red = max_p == "adaptive-red";
    if max_p == "fixed" {
        p.max_p = RedMaxP::Fixed;
        if let Some(r) = r {
            let spans = [
                ("alpha", r.alpha.as_ref().map(|v| v.span())),
                ("beta", r.beta.as_ref().map(|v| v.span())),
                ("interval", r.interval.as_ref().map(|v| v.span())),
                ("top", r.top.as_ref().map(|v| v.span())),
                ("bottom", r.bottom.as_ref().map(|v| v.span())),
            ];
            for (key, span) in spans {
                if let Some(span) = span {
                    owner_err(cx, span, key, "max_p = \"adaptive-q3\" or \"adaptive-red\"");
                }
            }
        }
        return;
    }
    let mut a = MaxPAimd::defaults(adaptive_red);
    if let Some(r) = r {
        let num = |cx: &mut Ctx<'_>,
                   v: &Option<Spanned<f64>>,
                   key: &str,
                   ok: fn(f64) -> bool,
                   want: &str,
                   slot: &mut f64| {
            if let Some(v) = v {
                let x = *v.get_ref();
                if x.is_finite() && ok(x) {
                    *slot = x;
                } else {
                    cx.err(v.span(), format!("`{key}` = {x}"), want.to_string());
                }
            }
        };
        num(
            cx,
            &r.alpha,
            "alpha",
            |x| x > 0.0 && x <= 1.0,
            "a step in (0, 1] (default 0.01)",
            &mut a.alpha,
        );
        num(
            cx,
            &r.beta,
            "beta",
            |x| x > 0.0 && x < 1.0,
            "a factor in (0, 1) (default 0.9)",
            &mut a.beta,
        );
        num(
            cx,
            &r.top,
            "top",
            |x| x > 0.0 && x <= 1.0,
            "a bound in (0, 1] (default 0.5)",
            &mut a.top,
        );
        num(
            cx,
            &r.bottom,
            "bottom",
            |x| (0.0..=1.0).contains(&x),
            if adaptive_red {
                "a bound in [0, 1]; 0 (default) is NS-2's min(0.01, 80000/bandwidth)"
            } else {
                "a bound in [0, 1] (default 0.01)"
            },
            &mut a.bottom,
        );
        if let Some(i) = &r.interval {
            if let Some(d) = cx.duration(i, "interval") {
                if d.is_zero() {
                    cx.err(
                        i.span(),
                        "`interval` is zero",
                        "a positive duration (default 0.5 s)".to_string(),
                    );
                } else {
                    a.interval = d;
                }
            }
        }
        if a.bottom > a.top {
            if let Some(b) = r.bottom.as_ref().or(r.top.as_ref()) {
                cx.err(
                    b.span(),
                    format!("bottom {} is above top {}", a.bottom, a.top),
                    "bottom ≤ top".to_string(),
                );
            }
        }
    }
    p.max_p = if adaptive_red {
        RedMaxP::AdaptiveRed(a)
    } else {
        RedMaxP::AdaptiveQ3(a)
    };
}

/// `[links.trace]`: the steps of a CSV capacity trace or of a Mahimahi trace read over bins
/// (`crate::traces`).
fn link_trace(
    cx: &mut Ctx<'_>,
    scenario: &str,
    t: &crate::raw::RawLinkTrace,
    duration: Duration,
) -> Vec<(Duration, f64)> {
    let format = t.format.as_ref().map(|f| (f.span(), f.get_ref().as_str()));
    match format {
        None | Some((_, "csv")) => {
            if let Some(b) = &t.bin {
                cx.err(
                    b.span(),
                    "`bin` is a key of Mahimahi traces",
                    "format = \"mahimahi\", or no `bin`".to_string(),
                );
            }
            capacity_trace(cx, scenario, &t.file)
        }
        Some((_, "mahimahi")) => {
            let bin = match &t.bin {
                Some(b) => match cx.duration(b, "bin") {
                    Some(d) if !d.is_zero() => d,
                    Some(_) => {
                        cx.err(b.span(), "`bin` is zero", "e.g. \"100ms\"".to_string());
                        return Vec::new();
                    }
                    None => return Vec::new(),
                },
                None => Duration::from_millis(100),
            };
            let path = std::path::Path::new(scenario)
                .parent()
                .unwrap_or(std::path::Path::new(""))
                .join(t.file.get_ref());
            const EXPECTED: &str = "one delivery opportunity per line: a whole number of \
                 milliseconds, never decreasing, the last one positive (Mahimahi's format)";
            let text = match std::fs::read_to_string(&path) {
                Ok(x) => x,
                Err(e) => {
                    cx.err(
                        t.file.span(),
                        format!("Mahimahi trace {}: cannot read it: {e}", path.display()),
                        "a readable trace file".to_string(),
                    );
                    return Vec::new();
                }
            };
            let steps = crate::traces::parse_mahimahi(&text)
                .and_then(|ops| crate::traces::mahimahi_steps(&ops, bin, duration));
            match steps {
                Ok(s) => s,
                Err(p) => {
                    let at = if p.line > 0 {
                        format!(" line {}:", p.line)
                    } else {
                        ":".to_string()
                    };
                    cx.err(
                        t.file.span(),
                        format!("Mahimahi trace {}{at} {}", path.display(), p.message),
                        EXPECTED.to_string(),
                    );
                    Vec::new()
                }
            }
        }
        Some((span, other)) => {
            cx.err(
                span,
                format!("unknown trace format \"{other}\""),
                "\"csv\" (time_s,bandwidth rows) or \"mahimahi\"".to_string(),
            );
            Vec::new()
        }
    }
}

/// The steps of a capacity trace: a CSV file (relative to the scenario file `scenario`) whose
/// rows are `time_s,bandwidth`, the bandwidth in bit/s or with a unit ("5Mbps"); a first row
/// that does not start with a number is a header. Times must not decrease.
fn capacity_trace(
    cx: &mut Ctx<'_>,
    scenario: &str,
    file: &Spanned<String>,
) -> Vec<(Duration, f64)> {
    let path = std::path::Path::new(scenario)
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .join(file.get_ref());
    let fail = |cx: &mut Ctx<'_>, what: String, expected: &str| {
        cx.err(
            file.span(),
            format!("capacity trace {}: {what}", path.display()),
            expected.to_string(),
        );
    };
    const ROW: &str =
        "rows `time_s,bandwidth`, e.g. `20,5Mbps` (bandwidth in bit/s or with a unit)";
    let mut reader = match csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(true)
        .from_path(&path)
    {
        Ok(r) => r,
        Err(e) => {
            fail(cx, format!("cannot read it: {e}"), "a readable CSV file");
            return Vec::new();
        }
    };
    let mut steps: Vec<(Duration, f64)> = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let line = i + 1;
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                fail(cx, format!("line {line}: {e}"), ROW);
                return Vec::new();
            }
        };
        let time = rec.get(0).unwrap_or("");
        let first_is_number = time.parse::<f64>().is_ok();
        if i == 0 && !first_is_number {
            continue; // header
        }
        if rec.len() != 2 {
            fail(cx, format!("line {line} has {} fields", rec.len()), ROW);
            return Vec::new();
        }
        let t = match time.parse::<f64>() {
            Ok(t) if t.is_finite() && (0.0..=1e9).contains(&t) => t,
            _ => {
                fail(
                    cx,
                    format!("line {line}: time `{time}` is not a time in seconds"),
                    ROW,
                );
                return Vec::new();
            }
        };
        let text = rec.get(1).unwrap_or("");
        let bps = match units::parse_bandwidth(text) {
            Ok(b) if b.is_finite() && b > 0.0 => b,
            _ => {
                fail(
                    cx,
                    format!("line {line}: `{text}` is not a positive bandwidth"),
                    ROW,
                );
                return Vec::new();
            }
        };
        let at = Duration::from_nanos((t * 1e9).round() as u64);
        if steps.last().is_some_and(|&(prev, _)| at < prev) {
            fail(
                cx,
                format!("line {line}: time {t} s is before the previous row's"),
                "times that never decrease",
            );
            return Vec::new();
        }
        steps.push((at, bps));
    }
    if steps.is_empty() {
        fail(cx, "no rows".to_string(), ROW);
    }
    steps
}

/// An `action = "set"` event's parameters: at least one, each valid; `loss_rate` only on a
/// link with a bernoulli loss model.
fn link_set(cx: &mut Ctx<'_>, e: &RawEvent, link: Option<&Link>) -> Option<LinkAction> {
    let mut set = LinkSet::default();
    let mut ok = true;
    if let Some(v) = &e.bandwidth {
        set.bandwidth_bps = cx.bandwidth(v, "bandwidth");
        ok &= set.bandwidth_bps.is_some();
    }
    if let Some(v) = &e.delay {
        set.delay = cx.duration(v, "delay");
        ok &= set.delay.is_some();
    }
    if let Some(v) = &e.queue_limit {
        set.queue_limit = cx.count(v, "queue_limit", 1, 1_000_000);
        ok &= set.queue_limit.is_some();
    }
    if let Some(v) = &e.loss_rate {
        set.loss_rate = cx.probability(v, "loss_rate");
        ok &= set.loss_rate.is_some();
        let bernoulli = link.is_none_or(|l| {
            matches!(
                l.loss,
                Some(Loss {
                    model: LossModel::Bernoulli { .. },
                    ..
                })
            )
        });
        if !bernoulli {
            cx.err(
                v.span(),
                "`loss_rate` on a link without a bernoulli loss model",
                "[links.loss] model = \"bernoulli\" on this link (its rate is what changes)"
                    .to_string(),
            );
            ok = false;
        }
    }
    if set == LinkSet::default() && ok {
        cx.err(
            e.action.span(),
            "action = \"set\" changes nothing",
            "one or more of bandwidth, delay, queue_limit, loss_rate".to_string(),
        );
        return None;
    }
    ok.then_some(LinkAction::Set(set))
}

fn loss_spec(cx: &mut Ctx<'_>, l: &Spanned<RawLoss>, duplex: bool) -> Option<Loss> {
    let span = l.span();
    let l = l.get_ref();
    let direction = cx.direction(&l.direction, duplex);
    let model_name = l.model.get_ref().as_str();
    // Keys that belong to one model only.
    let keys: [(&str, bool, &str); 6] = [
        ("rate", l.rate.is_some(), "bernoulli"),
        ("p_good_bad", l.p_good_bad.is_some(), "gilbert-elliott"),
        ("p_bad_good", l.p_bad_good.is_some(), "gilbert-elliott"),
        ("loss_good", l.loss_good.is_some(), "gilbert-elliott"),
        ("loss_bad", l.loss_bad.is_some(), "gilbert-elliott"),
        ("packets", l.packets.is_some(), "list"),
    ];
    for (key, set, owner) in keys {
        if set
            && owner != model_name
            && ["bernoulli", "gilbert-elliott", "list"].contains(&model_name)
        {
            cx.err(
                span.clone(),
                format!("`{key}` is a {owner} key, but model = \"{model_name}\""),
                format!("only the keys of the {model_name} model"),
            );
        }
    }
    let model = match model_name {
        "bernoulli" => {
            let Some(rate) = &l.rate else {
                cx.err(
                    l.model.span(),
                    "the bernoulli model needs `rate`",
                    "rate = 0.01 (a probability)".to_string(),
                );
                return None;
            };
            LossModel::Bernoulli {
                rate: cx.probability(rate, "rate")?,
            }
        }
        "gilbert-elliott" => {
            let (Some(gb), Some(bg)) = (&l.p_good_bad, &l.p_bad_good) else {
                cx.err(
                    l.model.span(),
                    "the gilbert-elliott model needs `p_good_bad` and `p_bad_good`",
                    "both transition probabilities".to_string(),
                );
                return None;
            };
            LossModel::GilbertElliott {
                p_good_bad: cx.probability(gb, "p_good_bad")?,
                p_bad_good: cx.probability(bg, "p_bad_good")?,
                loss_good: match &l.loss_good {
                    Some(x) => cx.probability(x, "loss_good")?,
                    None => 0.0,
                },
                loss_bad: match &l.loss_bad {
                    Some(x) => cx.probability(x, "loss_bad")?,
                    None => 1.0,
                },
            }
        }
        "list" => {
            let Some(p) = &l.packets else {
                cx.err(
                    l.model.span(),
                    "the list model needs `packets`",
                    "packets = [3, 17] (0-based indices)".to_string(),
                );
                return None;
            };
            if p.get_ref().iter().any(|&i| i < 0) {
                cx.err(p.span(), "negative packet index", "indices ≥ 0".to_string());
                return None;
            }
            let mut v: Vec<u64> = p.get_ref().iter().map(|&i| i as u64).collect();
            v.sort_unstable();
            v.dedup();
            LossModel::List { packets: v }
        }
        other => {
            cx.err(
                l.model.span(),
                format!("unknown loss model \"{other}\""),
                "\"bernoulli\", \"gilbert-elliott\" or \"list\"".to_string(),
            );
            return None;
        }
    };
    Some(Loss { model, direction })
}

fn wireless_spec(cx: &mut Ctx<'_>, w: &Spanned<RawWireless>, duplex: bool) -> Option<Wireless> {
    let w = w.get_ref();
    let frame_loss = cx.probability(&w.frame_loss, "frame_loss")?;
    let retry_limit = w
        .retry_limit
        .as_ref()
        .map(|r| cx.count(r, "retry_limit", 0, 255))
        .unwrap_or(Some(7))?;
    let slot = match &w.slot {
        Some(s) => cx.duration(s, "slot")?,
        None => Duration::from_micros(20),
    };
    let cw_min = w
        .cw_min
        .as_ref()
        .map(|c| cx.count(c, "cw_min", 0, 65_535))
        .unwrap_or(Some(31))?;
    let cw_max = w
        .cw_max
        .as_ref()
        .map(|c| cx.count(c, "cw_max", 0, 65_535))
        .unwrap_or(Some(1023))?;
    if cw_max < cw_min {
        if let Some(c) = &w.cw_max {
            cx.err(
                c.span(),
                "cw_max is below cw_min",
                "cw_max ≥ cw_min".to_string(),
            );
        }
    }
    let direction = cx.direction(&w.direction, duplex);
    Some(Wireless {
        frame_loss,
        retry_limit,
        slot,
        cw_min,
        cw_max,
        direction,
    })
}

fn expand_topology(
    cx: &mut Ctx<'_>,
    topo: &Spanned<RawTopology>,
    nodes: &mut NodeTable,
    links: &mut Vec<Link>,
    spans: &mut Vec<Range<usize>>,
) {
    let span = topo.span();
    let t = topo.get_ref();
    if t.kind.get_ref() != "dumbbell" {
        cx.err(
            t.kind.span(),
            format!("unknown topology \"{}\"", t.kind.get_ref()),
            "\"dumbbell\"".to_string(),
        );
        return;
    }
    let need =
        |cx: &mut Ctx<'_>, v: &Option<Spanned<Value>>, key: &str| -> Option<Spanned<Value>> {
            if v.is_none() {
                cx.err(
                    span.clone(),
                    format!("the dumbbell topology needs `{key}`"),
                    format!("`{key}` in [topology]"),
                );
            }
            v.clone()
        };
    let senders = match &t.senders {
        Some(s) => cx.count(s, "senders", 1, 100_000),
        None => {
            cx.err(
                span.clone(),
                "the dumbbell topology needs `senders`",
                "senders = 2 (how many sender nodes)".to_string(),
            );
            None
        }
    };
    let receivers = match &t.receivers {
        Some(r) => cx.count(r, "receivers", 1, 100_000),
        None => senders,
    };
    let access_bw = need(cx, &t.access_bandwidth, "access_bandwidth")
        .and_then(|v| cx.bandwidth(&v, "access_bandwidth"));
    let bottleneck_bw = need(cx, &t.bottleneck_bandwidth, "bottleneck_bandwidth")
        .and_then(|v| cx.bandwidth(&v, "bottleneck_bandwidth"));
    let bottleneck_delay = need(cx, &t.bottleneck_delay, "bottleneck_delay")
        .and_then(|v| cx.duration(&v, "bottleneck_delay"));
    let delays = |cx: &mut Ctx<'_>,
                  v: &Option<Spanned<Value>>,
                  key: &str,
                  n: u32|
     -> Option<Vec<Duration>> {
        let Some(v) = v else {
            return Some(vec![Duration::ZERO; n as usize]);
        };
        match v.get_ref() {
            Value::Array(items) => {
                if items.len() != n as usize {
                    cx.err(
                        v.span(),
                        format!("`{key}` has {} entries for {n} nodes", items.len()),
                        format!("one delay, or a list of {n}"),
                    );
                    return None;
                }
                items
                    .iter()
                    .map(|it| cx.duration(&Spanned::new(v.span(), it.clone()), key))
                    .collect()
            }
            _ => Some(vec![cx.duration(v, key)?; n as usize]),
        }
    };
    // On a bad delay list the error is recorded and zero delays stand in, so that the nodes still
    // exist and flows naming them do not cascade into "unknown node" errors.
    // Checked even when another key failed, so that every problem is reported at once.
    // (A list's length is checked against a count only when that count is known.)
    let (n_send, n_recv) = (senders.unwrap_or(1), receivers.unwrap_or(1));
    let send_delays = senders
        .and_then(|n| delays(cx, &t.access_delay, "access_delay", n))
        .unwrap_or_else(|| vec![Duration::ZERO; n_send as usize]);
    let recv_delays = match &t.receiver_access_delay {
        Some(_) => {
            receivers.and_then(|n| delays(cx, &t.receiver_access_delay, "receiver_access_delay", n))
        }
        None if n_send == n_recv => Some(send_delays.clone()),
        None => Some(vec![send_delays[0]; n_recv as usize]),
    };
    let recv_delays = recv_delays.unwrap_or_else(|| vec![Duration::ZERO; n_recv as usize]);
    let access_limit = t
        .access_queue_limit
        .as_ref()
        .and_then(|l| cx.count(l, "access_queue_limit", 1, 100_000_000))
        .unwrap_or(50);
    let access_queue = Queue::DropTail {
        limit: access_limit,
        in_bytes: false,
        mean_pktsize: 500,
        drop_front: false,
    };
    let bottleneck_queue = queue_spec(
        cx,
        t.queue.as_ref(),
        t.queue_limit.as_ref(),
        t.red.as_ref(),
        t.droptail.as_ref(),
    );
    let loss = t.loss.as_ref().and_then(|l| loss_spec(cx, l, true));
    let wireless = t.wireless.as_ref().and_then(|w| wireless_spec(cx, w, true));
    let (Some(_), Some(_), Some(access_bw), Some(bottleneck_bw), Some(bottleneck_delay)) = (
        senders,
        receivers,
        access_bw,
        bottleneck_bw,
        bottleneck_delay,
    ) else {
        return;
    };
    let r0 = nodes.intern("r0");
    let r1 = nodes.intern("r1");
    let mut push = |from: usize,
                    to: usize,
                    bw: f64,
                    delay: Duration,
                    queue: Queue,
                    loss: Option<Loss>,
                    wireless: Option<Wireless>,
                    nodes: &NodeTable| {
        links.push(Link {
            name: format!("{}-{}", nodes.names[from], nodes.names[to]),
            from,
            to,
            bandwidth_bps: bw,
            delay,
            duplex: true,
            queue,
            loss,
            wireless,
        });
        spans.push(span.clone());
    };
    for (i, d) in send_delays.iter().enumerate() {
        let s = nodes.intern(&format!("s{i}"));
        push(
            s,
            r0,
            access_bw,
            *d,
            access_queue.clone(),
            None,
            None,
            nodes,
        );
    }
    push(
        r0,
        r1,
        bottleneck_bw,
        bottleneck_delay,
        bottleneck_queue,
        loss,
        wireless,
        nodes,
    );
    for (j, d) in recv_delays.iter().enumerate() {
        let dnode = nodes.intern(&format!("d{j}"));
        push(
            r1,
            dnode,
            access_bw,
            *d,
            access_queue.clone(),
            None,
            None,
            nodes,
        );
    }
}

/// Which nodes reach each other. A flow needs a path both ways (data, then ACKs or feedback),
/// that is both endpoints in one strongly connected component; labelling the components once
/// keeps the check linear in nodes and links, where a search per flow was quadratic in a
/// scenario with thousands of flows. A search runs only to word the error of a flow that fails.
struct Reach {
    adj: Vec<Vec<usize>>,
    component: Vec<usize>,
}

impl Reach {
    fn new(adj: Vec<Vec<usize>>) -> Reach {
        let component = strong_components(&adj);
        Reach { adj, component }
    }

    fn both_ways(&self, a: usize, b: usize) -> bool {
        self.component[a] == self.component[b]
    }
}

/// Strongly connected component labels (Kosaraju's algorithm, iterative so that a long chain
/// of nodes cannot overflow the stack).
fn strong_components(adj: &[Vec<usize>]) -> Vec<usize> {
    let n = adj.len();
    // Pass 1: nodes in order of DFS completion.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for s in 0..n {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        stack.push((s, 0));
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            if let Some(&w) = adj[v].get(i) {
                top.1 += 1;
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
                stack.pop();
            }
        }
    }
    // Pass 2: on the reversed graph, in reverse completion order, each search is a component.
    let mut radj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (v, out) in adj.iter().enumerate() {
        for &w in out {
            radj[w].push(v);
        }
    }
    let mut component = vec![usize::MAX; n];
    let mut todo = Vec::new();
    for (c, &s) in order.iter().rev().enumerate() {
        if component[s] != usize::MAX {
            continue;
        }
        component[s] = c;
        todo.push(s);
        while let Some(v) = todo.pop() {
            for &w in &radj[v] {
                if component[w] == usize::MAX {
                    component[w] = c;
                    todo.push(w);
                }
            }
        }
    }
    component
}

fn reachable(adj: &[Vec<usize>], from: usize, to: usize) -> bool {
    let mut seen = vec![false; adj.len()];
    let mut q = VecDeque::from([from]);
    seen[from] = true;
    while let Some(n) = q.pop_front() {
        if n == to {
            return true;
        }
        for &m in &adj[n] {
            if !seen[m] {
                seen[m] = true;
                q.push_back(m);
            }
        }
    }
    false
}

fn flow_spec(
    cx: &mut Ctx<'_>,
    file: &str,
    f: &RawFlow,
    nodes: &NodeTable,
    reach: &Reach,
    duration: Duration,
) -> Option<Flow> {
    let name = f.name.get_ref().trim().to_string();
    if name.is_empty() {
        cx.err(
            f.name.span(),
            "flow `name` is empty",
            "a non-empty, unique name".to_string(),
        );
    }
    let kind_name = f.kind.get_ref().as_str();
    if !["tcp", "udp", "tfrc", "media"].contains(&kind_name) {
        cx.err(
            f.kind.span(),
            format!("unknown flow kind \"{kind_name}\""),
            "\"tcp\", \"udp\", \"tfrc\" or \"media\"".to_string(),
        );
        return None;
    }
    // Keys that belong to one kind only: name them when used on another.
    let owned: [(&str, Option<Range<usize>>, &str); 16] = [
        ("variant", f.variant.as_ref().map(|v| v.span()), "tcp"),
        ("overhead", f.overhead.as_ref().map(|v| v.span()), "tcp"),
        ("window", f.window.as_ref().map(|v| v.span()), "tcp"),
        (
            "window_init",
            f.window_init.as_ref().map(|v| v.span()),
            "tcp",
        ),
        ("rate", f.rate.as_ref().map(|v| v.span()), "udp"),
        (
            "max_packets",
            f.max_packets.as_ref().map(|v| v.span()),
            "udp",
        ),
        ("app_rate", f.app_rate.as_ref().map(|v| v.span()), "tfrc"),
        ("app_on", f.app_on.as_ref().map(|v| v.span()), "tfrc"),
        ("app_off", f.app_off.as_ref().map(|v| v.span()), "tfrc"),
        ("variants", f.variants.as_ref().map(|v| v.span()), "tfrc"),
        ("delayed_ack", None, "tcp"),
        ("on_off", f.on_off.as_ref().map(|v| v.span()), "tcp"),
        (
            "controller",
            f.controller.as_ref().map(|v| v.span()),
            "media",
        ),
        ("deadline", f.deadline.as_ref().map(|v| v.span()), "media"),
        ("source", f.source.as_ref().map(|v| v.span()), "media"),
        ("pauses", f.pauses.as_ref().map(|v| v.span()), "media"),
    ];
    for (key, span, owner) in owned {
        if let Some(span) = span {
            // A media flow's TFRC controller takes the TFRC keys too.
            let shared = key == "variants" && kind_name == "media";
            if owner != kind_name && !shared {
                cx.err(
                    span,
                    format!(
                        "`{key}` is a {owner} key, but flow \"{name}\" has kind = \"{kind_name}\""
                    ),
                    format!("only keys that apply to {kind_name} flows"),
                );
            }
        }
    }
    // `profile` picks the TFRC profile, the CUBIC profile of a TCP flow, or the Linux model
    // of a Reno or CUBIC flow.
    if let Some(p) = &f.profile {
        let variant = f.variant.as_ref().map(|v| v.get_ref().as_str());
        let linux = p.get_ref() == "linux";
        let ok_tcp = variant == Some("cubic") || (linux && variant == Some("reno"));
        if kind_name == "udp" || (kind_name == "tcp" && !ok_tcp) {
            cx.err(
                p.span(),
                format!(
                    "`profile` is a tfrc and media key (and a tcp key with variant = \"cubic\", or \"reno\" with profile = \"linux\"), but flow \"{name}\" has kind = \"{kind_name}\"{}",
                    if kind_name == "tcp" {
                        format!(" with variant = \"{}\"", variant.unwrap_or("newreno"))
                    } else {
                        String::new()
                    }
                ),
                format!("only keys that apply to {kind_name} flows"),
            );
        }
    }
    if f.delayed_ack.is_some() && kind_name != "tcp" {
        cx.err(
            f.kind.span(),
            format!("`delayed_ack` is a tcp key, but flow \"{name}\" has kind = \"{kind_name}\""),
            format!("only keys that apply to {kind_name} flows"),
        );
    }
    if let Some(e) = &f.ecn {
        let cubic = f.variant.as_ref().is_some_and(|v| v.get_ref() == "cubic");
        let linux = f.profile.as_ref().is_some_and(|p| p.get_ref() == "linux");
        match kind_name {
            "tfrc" => {}
            "tcp" if !*e.get_ref() || !(cubic || linux) => {}
            "tcp" => cx.err(
                e.span(),
                if linux {
                    format!(
                        "flow \"{name}\": ecn = true with profile = \"linux\"; the Linux TCP model \
                         does not negotiate or answer ECN (docs/simulator.md)"
                    )
                } else {
                    format!(
                        "flow \"{name}\": ecn = true with variant = \"cubic\"; the CUBIC agent \
                         (NS-2's Agent/TCP/Linux) does not answer ECN marks"
                    )
                },
                "ecn = true with variant \"tahoe\", \"reno\", \"newreno\" or \"sack\" (or ecn = false)"
                    .to_string(),
            ),
            _ => cx.err(
                e.span(),
                format!(
                    "`ecn` is a tfrc key, but flow \"{name}\" has kind = \"{kind_name}\" \
                     (NS-2's UDP agent is never ECN-capable)"
                ),
                format!("only keys that apply to {kind_name} flows"),
            ),
        }
    }
    if f.random.is_some() && kind_name != "udp" {
        cx.err(
            f.kind.span(),
            format!("`random` is a udp key, but flow \"{name}\" has kind = \"{kind_name}\""),
            format!("only keys that apply to {kind_name} flows"),
        );
    }

    let mut node = |key: &Spanned<String>| -> Option<usize> {
        match nodes.index.get(key.get_ref()) {
            Some(&i) => Some(i),
            None if cx.topology_failed => None,
            None => {
                cx.err(
                    key.span(),
                    format!("unknown node \"{}\" in flow \"{name}\"", key.get_ref()),
                    known_nodes(nodes),
                );
                None
            }
        }
    };
    let from = node(&f.from);
    let to = node(&f.to);
    if let (Some(a), Some(b)) = (from, to) {
        if a == b {
            cx.err(
                f.to.span(),
                format!(
                    "flow \"{name}\" goes from \"{}\" to itself",
                    f.from.get_ref()
                ),
                "two different nodes".to_string(),
            );
        } else if reach.both_ways(a, b) {
            // The usual case, answered without a search.
        } else if !reachable(&reach.adj, a, b) {
            cx.err(
                f.to.span(),
                format!(
                    "node \"{}\" is unreachable from \"{}\"",
                    f.to.get_ref(),
                    f.from.get_ref()
                ),
                "links that connect the flow's endpoints".to_string(),
            );
        } else if !reachable(&reach.adj, b, a) {
            cx.err(
                f.from.span(),
                format!(
                    "no return path from \"{}\" to \"{}\" for acknowledgements and feedback",
                    f.to.get_ref(),
                    f.from.get_ref()
                ),
                "duplex links, or simplex links in both directions".to_string(),
            );
        }
    }

    let start = match &f.start {
        Some(s) => cx.duration(s, "start").unwrap_or_default(),
        None => Duration::ZERO,
    };
    let stop = match &f.stop {
        Some(s) => cx.duration(s, "stop").unwrap_or(duration),
        None => duration,
    };
    if stop <= start {
        let span = f
            .stop
            .as_ref()
            .map(|s| s.span())
            .or(f.start.as_ref().map(|s| s.span()))
            .unwrap_or(f.name.span());
        cx.err(
            span,
            format!(
                "flow \"{name}\" stops ({:?}) before it starts ({:?})",
                stop, start
            ),
            "start < stop".to_string(),
        );
    } else if start >= duration {
        let span = f.start.as_ref().map(|s| s.span()).unwrap_or(f.name.span());
        cx.err(
            span,
            format!("flow \"{name}\" starts at or after the end of the run ({duration:?})"),
            "start < duration".to_string(),
        );
    }
    let linux_tcp =
        kind_name == "tcp" && f.profile.as_ref().is_some_and(|p| p.get_ref() == "linux");
    // The Linux model's default segment is the kernel's MSS at an MTU of 1500 with timestamps.
    let default_size = match kind_name {
        "udp" => 210,
        _ if linux_tcp => 1448,
        _ => 1000,
    };
    let packet_size = match &f.packet_size {
        Some(p) => cx.count(p, "packet_size", 1, 65_000)?,
        None => default_size,
    };

    let kind = match kind_name {
        "tcp" => {
            let linux_profile = f.profile.as_ref().is_some_and(|p| p.get_ref() == "linux");
            let variant = match f.variant.as_ref().map(|v| (v.span(), v.get_ref().as_str())) {
                None | Some((_, "newreno")) => TcpVariant::NewReno,
                Some((_, "reno")) if linux_profile => TcpVariant::Linux(LinuxCc::Reno),
                Some((_, "reno")) => TcpVariant::Reno,
                Some((_, "tahoe")) => TcpVariant::Tahoe,
                Some((_, "sack")) => TcpVariant::Sack,
                Some((_, "cubic")) if linux_profile => TcpVariant::Linux(LinuxCc::Cubic),
                Some((_, "cubic")) => TcpVariant::Cubic(
                    match f.profile.as_ref().map(|v| (v.span(), v.get_ref().as_str())) {
                        None | Some((_, "rfc9438")) => CubicProfile::Rfc9438,
                        Some((_, "ns2")) => CubicProfile::Ns2,
                        Some((span, other)) => {
                            cx.err(
                                span,
                                format!("unknown CUBIC profile \"{other}\""),
                                "\"rfc9438\", \"ns2\" or \"linux\"".to_string(),
                            );
                            CubicProfile::Rfc9438
                        }
                    },
                ),
                Some((span, other)) => {
                    cx.err(
                        span,
                        format!("unknown TCP variant \"{other}\""),
                        "\"newreno\", \"reno\", \"tahoe\", \"sack\" or \"cubic\"".to_string(),
                    );
                    TcpVariant::NewReno
                }
            };
            let linux = matches!(variant, TcpVariant::Linux(_));
            // The Linux model's defaults are the kernel's: a receive window that autotunes far
            // above any path here, an initial window of 10.
            let window = f
                .window
                .as_ref()
                .map(|w| cx.count(w, "window", 1, 1_000_000_000))
                .unwrap_or(Some(if linux { LINUX_WINDOW } else { 20 }))?;
            let window_init = f
                .window_init
                .as_ref()
                .map(|w| cx.count(w, "window_init", 1, 1_000_000))
                .unwrap_or(Some(if linux { 10 } else { 2 }))?;
            let delayed_ack = f.delayed_ack.unwrap_or(false);
            if let (true, Some(d)) = (linux, f.delayed_ack) {
                cx.err(
                    f.variant
                        .as_ref()
                        .map(|v| v.span())
                        .unwrap_or(f.name.span()),
                    format!(
                        "flow \"{name}\": delayed_ack = {d} with profile = \"linux\"; the Linux \
                         receiver delays its ACKs as the kernel does (quick ACKs at the start, \
                         an ACK per two segments, a 40-ms timer), which is not a choice"
                    ),
                    "no delayed_ack key with profile = \"linux\"".to_string(),
                );
            }
            if delayed_ack && matches!(variant, TcpVariant::Cubic(_)) {
                let span = f
                    .variant
                    .as_ref()
                    .map(|v| v.span())
                    .unwrap_or(f.name.span());
                cx.err(
                    span,
                    format!(
                        "flow \"{name}\": delayed_ack with variant = \"cubic\"; CUBIC runs \
                         against NS-2's Agent/TCPSink/Sack1, which acknowledges every packet \
                         (a delayed SACK sink is not modelled)"
                    ),
                    "delayed_ack = false (or omitted) with variant = \"cubic\"".to_string(),
                );
            }
            let overhead = match &f.overhead {
                Some(o) => cx.duration(o, "overhead")?,
                None => Duration::ZERO,
            };
            if let (Some(o), TcpVariant::Cubic(_) | TcpVariant::Linux(_)) = (&f.overhead, variant) {
                if !overhead.is_zero() {
                    let (v, model) = match variant {
                        TcpVariant::Linux(LinuxCc::Reno) => {
                            ("reno\" and profile = \"linux", "the Linux model")
                        }
                        TcpVariant::Linux(LinuxCc::Cubic) => {
                            ("cubic\" and profile = \"linux", "the Linux model")
                        }
                        _ => ("cubic", "its Agent/TCP/Linux"),
                    };
                    cx.err(
                        o.span(),
                        format!(
                            "flow \"{name}\": overhead with variant = \"{v}\"; the send-time \
                             jitter is modelled for NS-2's one-way TCPs, not {model}"
                        ),
                        "a tahoe, reno, newreno or sack flow, or no overhead".to_string(),
                    );
                }
            }
            let on_off = f.on_off.as_ref().and_then(|o| on_off_spec(cx, o));
            if let (Some(o), TcpVariant::Cubic(_) | TcpVariant::Linux(_)) = (&f.on_off, variant) {
                cx.err(
                    o.span(),
                    format!(
                        "flow \"{name}\": [flows.on_off] with variant = \"{}\"{}",
                        if matches!(variant, TcpVariant::Linux(LinuxCc::Reno)) {
                            "reno"
                        } else {
                            "cubic"
                        },
                        if linux {
                            " and profile = \"linux\""
                        } else {
                            ""
                        }
                    ),
                    "a tahoe, reno, newreno or sack flow for on/off transfers".to_string(),
                );
            }
            FlowKind::Tcp {
                variant,
                window,
                window_init,
                delayed_ack,
                overhead,
                on_off,
            }
        }
        "udp" => {
            let rate_bps = match &f.rate {
                Some(r) => cx.bandwidth(r, "rate")?,
                None => 448_000.0,
            };
            let max_packets = match &f.max_packets {
                Some(m) => Some(cx.count(m, "max_packets", 1, u32::MAX as i64)? as u64),
                None => None,
            };
            FlowKind::Udp {
                rate_bps,
                random: f.random.unwrap_or(false),
                max_packets,
            }
        }
        "tfrc" => {
            let (profile, variants) = tfrc_settings(cx, f, packet_size);
            let app_rate_bps = match &f.app_rate {
                Some(r) => Some(cx.bandwidth(r, "app_rate")?),
                None => None,
            };
            let app_on_off = match (&f.app_on, &f.app_off) {
                (None, None) => None,
                (Some(on), Some(off)) => {
                    let on_d = cx.duration(on, "app_on")?;
                    let off_d = cx.duration(off, "app_off")?;
                    if app_rate_bps.is_none() {
                        cx.err(
                            on.span(),
                            format!(
                                "flow \"{name}\": app_on/app_off switch the CBR application, but \
                                 the flow has no app_rate (it always has data)"
                            ),
                            "app_rate = \"...\" with app_on and app_off".to_string(),
                        );
                    }
                    if on_d.is_zero() {
                        cx.err(
                            on.span(),
                            format!("flow \"{name}\": app_on must be longer than 0"),
                            "a positive duration, e.g. \"2s\"".to_string(),
                        );
                    }
                    Some((on_d, off_d))
                }
                (Some(k), None) | (None, Some(k)) => {
                    cx.err(
                        k.span(),
                        format!("flow \"{name}\": app_on and app_off come together"),
                        "both app_on and app_off".to_string(),
                    );
                    None
                }
            };
            FlowKind::Tfrc {
                profile,
                app_rate_bps,
                app_on_off,
                variants,
            }
        }
        _ => media_spec(cx, file, f, packet_size, (start, stop))?,
    };
    let real = f.real.as_ref().and_then(|r| {
        let v = r.get_ref().as_str();
        let ok = match kind_name {
            // Linux names congestion controls with up to 15 characters (TCP_CA_NAME_MAX).
            "tcp" => {
                !v.is_empty()
                    && v.len() <= 15
                    && v.starts_with(|c: char| c.is_ascii_lowercase())
                    && v.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            }
            "udp" => v == "cbr",
            _ => v == "tfrc",
        };
        if !ok {
            let expected = match kind_name {
                "tcp" => "a Linux congestion control name, e.g. \"reno\", \"cubic\" or \"bbr\"",
                "udp" => "\"cbr\" (a paced UDP sender)",
                _ => "\"tfrc\" (`tfrclab send` with the flow's profile)",
            };
            cx.err(
                r.span(),
                format!("flow \"{name}\": `real = \"{v}\"` cannot run a {kind_name} flow"),
                expected.to_string(),
            );
        }
        ok.then(|| v.to_string())
    });
    Some(Flow {
        name,
        from: from?,
        to: to?,
        start,
        stop,
        packet_size,
        ecn: f.ecn.as_ref().is_some_and(|e| *e.get_ref()),
        kind,
        real,
    })
}

/// `profile` and `variants` of a TFRC flow (or of a media flow's TFRC controller).
fn tfrc_settings(
    cx: &mut Ctx<'_>,
    f: &RawFlow,
    packet_size: u32,
) -> (TfrcProfile, Vec<tfrc::variants::VariantChoice>) {
    let profile = match f.profile.as_ref().map(|v| (v.span(), v.get_ref().as_str())) {
        None | Some((_, "rfc5348")) => TfrcProfile::Rfc5348,
        Some((_, "ns2")) => TfrcProfile::Ns2,
        Some((span, other)) => {
            cx.err(
                span,
                format!("unknown TFRC profile \"{other}\""),
                "\"rfc5348\" or \"ns2\"".to_string(),
            );
            TfrcProfile::Rfc5348
        }
    };
    let base = match profile {
        TfrcProfile::Rfc5348 => tfrc::Profile::rfc5348(),
        TfrcProfile::Ns2 => tfrc::Profile::ns2(),
    }
    .with_segment_size(packet_size);
    let variants = match &f.variants {
        Some(v) => variant_list(cx, v, base),
        None => Vec::new(),
    };
    (profile, variants)
}

/// The default playout deadline of a media flow.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(400);

/// A `kind = "media"` flow: controller, source and deadline.
fn media_spec(
    cx: &mut Ctx<'_>,
    file: &str,
    f: &RawFlow,
    packet_size: u32,
    (start, stop): (Duration, Duration),
) -> Option<FlowKind> {
    let controller = match f
        .controller
        .as_ref()
        .map(|v| (v.span(), v.get_ref().as_str()))
    {
        None | Some((_, "tfrc")) => {
            let (profile, variants) = tfrc_settings(cx, f, packet_size);
            MediaController::Tfrc { profile, variants }
        }
        Some((_, name @ ("nada" | "scream" | "gcc"))) => {
            // `profile` and `variants` configure TFRC; the RMCAT controllers run their
            // specs' parameters.
            let tfrc_keys = [
                ("profile", f.profile.as_ref().map(|v| v.span())),
                ("variants", f.variants.as_ref().map(|v| v.span())),
            ];
            for (key, at) in tfrc_keys {
                if let Some(at) = at {
                    cx.err(
                        at,
                        format!(
                            "`{key}` configures TFRC, but this media flow has controller = \"{name}\""
                        ),
                        format!("no `{key}`, or controller = \"tfrc\""),
                    );
                }
            }
            match name {
                "nada" => MediaController::Nada,
                "scream" => MediaController::Scream,
                _ => MediaController::Gcc,
            }
        }
        Some((span, other)) => {
            let names: Vec<String> = MediaController::NAMES
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect();
            cx.err(
                span,
                format!("unknown media controller \"{other}\""),
                names.join(", "),
            );
            return None;
        }
    };
    let deadline = match &f.deadline {
        Some(d) => {
            let v = cx.duration(d, "deadline")?;
            if v.is_zero() {
                cx.err(
                    d.span(),
                    "`deadline` is 0: no frame could ever be played in time",
                    "a positive playout delay, e.g. \"400ms\"".to_string(),
                );
                return None;
            }
            v
        }
        None => DEFAULT_DEADLINE,
    };
    let source = match &f.source {
        Some(s) => source_spec(cx, file, s)?,
        None => MediaSource::Statistical(media::model::StatisticalConfig::default()),
    };
    let mut pauses: Vec<(Duration, Duration)> = Vec::new();
    for p in f.pauses.iter().flat_map(|v| v.get_ref()) {
        const FORM: &str = "a list of [from, to] pairs, e.g. pauses = [[\"40s\", \"60s\"]]";
        let [a, b] = p.get_ref().as_slice() else {
            cx.err(
                p.span(),
                "a pause is not a [from, to] pair",
                FORM.to_string(),
            );
            return None;
        };
        let (a, b) = (cx.duration(a, "pauses")?, cx.duration(b, "pauses")?);
        let prev_end = pauses.last().map_or(start, |&(_, e)| e);
        if a >= b || a <= prev_end || b >= stop {
            cx.err(
                p.span(),
                format!(
                    "pause [{a:?}, {b:?}] must start after the flow's start ({start:?}) or the \
                     previous pause's end, end after it starts, and end before the flow stops \
                     ({stop:?})"
                ),
                FORM.to_string(),
            );
            return None;
        }
        pauses.push((a, b));
    }
    Some(FlowKind::Media {
        controller,
        source,
        deadline,
        pauses,
    })
}

/// `[flows.source]`: the statistical model's parameters, or a trace.
fn source_spec(cx: &mut Ctx<'_>, file: &str, s: &Spanned<RawMediaSource>) -> Option<MediaSource> {
    let r = s.get_ref();
    let model = r.model.as_ref().map(|m| (m.span(), m.get_ref().as_str()));
    let stat_keys: [(&str, Option<Range<usize>>); 11] = [
        ("fps", r.fps.as_ref().map(|v| v.span())),
        ("min_rate", r.min_rate.as_ref().map(|v| v.span())),
        ("max_rate", r.max_rate.as_ref().map(|v| v.span())),
        ("start_rate", r.start_rate.as_ref().map(|v| v.span())),
        (
            "reaction_delay",
            r.reaction_delay.as_ref().map(|v| v.span()),
        ),
        ("key_interval", r.key_interval.as_ref().map(|v| v.span())),
        (
            "transient_frames",
            r.transient_frames.as_ref().map(|v| v.span()),
        ),
        ("key_ratio", r.key_ratio.as_ref().map(|v| v.span())),
        (
            "transient_threshold",
            r.transient_threshold.as_ref().map(|v| v.span()),
        ),
        ("size_noise", r.size_noise.as_ref().map(|v| v.span())),
        (
            "interval_noise",
            r.interval_noise.as_ref().map(|v| v.span()),
        ),
    ];
    match model {
        None | Some((_, "statistical")) => {
            if let Some(f) = &r.file {
                cx.err(
                    f.span(),
                    "`file` is a key of model = \"trace\"",
                    "model = \"trace\" to play a frame trace".to_string(),
                );
                return None;
            }
            let mut c = media::model::StatisticalConfig::default();
            if let Some(v) = &r.fps {
                c.fps = *v.get_ref();
            }
            for (v, slot, key) in [
                (&r.min_rate, &mut c.r_min, "min_rate"),
                (&r.max_rate, &mut c.r_max, "max_rate"),
                (&r.start_rate, &mut c.r_init, "start_rate"),
            ] {
                if let Some(v) = v {
                    *slot = cx.bandwidth(v, key)?;
                }
            }
            if let Some(v) = &r.reaction_delay {
                c.reaction_delay = nanos(cx.duration(v, "reaction_delay")?);
            }
            if let Some(v) = &r.key_interval {
                let d = cx.duration(v, "key_interval")?;
                c.key_interval = (!d.is_zero()).then(|| nanos(d));
            }
            if let Some(v) = &r.transient_frames {
                c.transient_frames = cx.count(v, "transient_frames", 2, 10_000)?;
            }
            for (v, slot) in [
                (&r.key_ratio, &mut c.key_ratio),
                (&r.transient_threshold, &mut c.transient_threshold),
                (&r.size_noise, &mut c.size_noise),
                (&r.interval_noise, &mut c.interval_noise),
            ] {
                if let Some(v) = v {
                    *slot = *v.get_ref();
                }
            }
            if let Err(e) = c.validate() {
                // Point at the key the model refused (its name in the file), or the table.
                let key = match e.param {
                    "r_min" => "min_rate",
                    "r_max" => "max_rate",
                    "r_init" => "start_rate",
                    other => other,
                };
                let span = stat_keys
                    .iter()
                    .find(|(k, _)| *k == key)
                    .and_then(|(_, sp)| sp.clone())
                    .unwrap_or(s.span());
                cx.err(
                    span,
                    format!("media source: `{key}` {}", e.reason),
                    "a value in the range RFC 8593's model allows (docs/media.md)".to_string(),
                );
                return None;
            }
            Some(MediaSource::Statistical(c))
        }
        Some((_, "trace")) => {
            if let Some((key, Some(span))) = stat_keys.iter().find(|(_, sp)| sp.is_some()) {
                cx.err(
                    span.clone(),
                    format!("`{key}` is a key of model = \"statistical\"; a trace is played as recorded"),
                    "only `file` and `loop` with model = \"trace\"".to_string(),
                );
                return None;
            }
            let Some(f) = &r.file else {
                cx.err(
                    s.span(),
                    "model = \"trace\" needs `file`",
                    "file = \"frames.csv\" (rows `time,size,type`, relative to the scenario)"
                        .to_string(),
                );
                return None;
            };
            let path = std::path::Path::new(file)
                .parent()
                .unwrap_or(std::path::Path::new(""))
                .join(f.get_ref());
            match media::trace::FrameTrace::from_path(&path) {
                Ok(trace) => Some(MediaSource::Trace {
                    file: f.get_ref().clone(),
                    trace,
                    looped: r.looped.unwrap_or(true),
                }),
                Err(e) => {
                    cx.err(
                        f.span(),
                        format!("frame trace {e}"),
                        "rows `time,size,type` with times increasing and sizes > 0, e.g. \
                         `0.033,4200,P`"
                            .to_string(),
                    );
                    None
                }
            }
        }
        Some((span, other)) => {
            cx.err(
                span,
                format!("unknown media source model \"{other}\""),
                "\"statistical\" or \"trace\"".to_string(),
            );
            None
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `[flows.on_off]` of a TCP flow.
fn on_off_spec(cx: &mut Ctx<'_>, o: &Spanned<RawOnOff>) -> Option<OnOff> {
    let r = o.get_ref();
    let size = |cx: &mut Ctx<'_>, v: &Spanned<i64>, key: &str| -> Option<u64> {
        let n = *v.get_ref();
        if !(1..=1 << 40).contains(&n) {
            cx.err(
                v.span(),
                format!("`{key}` = {n} is not a file size"),
                "a number of bytes from 1 to 2^40".to_string(),
            );
            return None;
        }
        Some(n as u64)
    };
    let size_min = size(cx, &r.size_min, "size_min")?;
    let size_max = size(cx, &r.size_max, "size_max")?;
    if size_max < size_min {
        cx.err(
            r.size_max.span(),
            format!("`size_max` = {size_max} is below `size_min` = {size_min}"),
            "size_min ≤ size_max".to_string(),
        );
        return None;
    }
    let off_mean = cx.duration(&r.off_mean, "off_mean")?;
    if off_mean.is_zero() {
        cx.err(
            r.off_mean.span(),
            "`off_mean` is 0",
            "a positive mean idle time, e.g. \"10s\"".to_string(),
        );
        return None;
    }
    Some(OnOff {
        size_min,
        size_max,
        off_mean,
        start_on: r.start_on.unwrap_or(true),
    })
}

/// `variants = [...]` of a TFRC flow: each element parsed as `name[:param=value,...]` and
/// checked against the catalogue on the flow's profile, so that every error points at the
/// element that causes it and lists what would be valid. Returns the choices in file order
/// (possibly incomplete when there were errors, which are recorded in `cx`).
fn variant_list(
    cx: &mut Ctx<'_>,
    list: &Spanned<Vec<Spanned<String>>>,
    base: tfrc::Profile,
) -> Vec<tfrc::variants::VariantChoice> {
    use tfrc::variants::{self, Variant, VariantChoice, VariantError};
    let mut ok: Vec<(VariantChoice, Variant, Range<usize>)> = Vec::new();
    let mut bad = false;
    for item in list.get_ref() {
        let text = item.get_ref();
        let choice: VariantChoice = match text.parse() {
            Ok(c) => c,
            Err(_) => {
                cx.err(
                    item.span(),
                    format!("variant \"{text}\" is not of the form name[:param=value,...]"),
                    "a variant name, optionally with parameters: \"adaptive-rtt\", \
                     \"ali-ci-replace:t=2.58\", \"veno:threshold=2,k_to=0.5\""
                        .to_string(),
                );
                bad = true;
                continue;
            }
        };
        // Each choice alone first, so that its own errors (name, parameter, range, an invalid
        // resulting profile) point at it. A missing prerequisite is judged with the whole list.
        match variants::apply(base, std::slice::from_ref(&choice)) {
            Ok(_) | Err(VariantError::Requires { .. }) => {}
            Err(e) => {
                cx.err(item.span(), e.to_string(), variant_expected(&e, &choice));
                bad = true;
                continue;
            }
        }
        match choice.name.parse::<Variant>() {
            Ok(v) => ok.push((choice, v, item.span())),
            Err(e) => {
                cx.err(item.span(), e.to_string(), variant_expected(&e, &choice));
                bad = true;
            }
        }
    }
    // The valid elements together: two of one policy, or a missing prerequisite (unless a
    // bad element may be the prerequisite, misspelt).
    let choices: Vec<VariantChoice> = ok.iter().map(|(c, _, _)| c.clone()).collect();
    match variants::apply(base, &choices) {
        Err(VariantError::Requires { .. }) if bad => {}
        Ok(_) => {}
        Err(e) => {
            // Point at the later of two clashing elements, or at the one missing a prerequisite.
            let named = |name: &str| {
                ok.iter()
                    .rev()
                    .find(|(_, v, _)| v.name() == name)
                    .map(|(_, _, span)| span.clone())
            };
            let span = match &e {
                VariantError::Duplicate(n) => named(n),
                VariantError::Conflict { second, .. } => named(second),
                VariantError::Requires { variant, .. } => named(variant),
                _ => None,
            }
            .unwrap_or_else(|| list.span());
            let choice = VariantChoice::default();
            cx.err(span, e.to_string(), variant_expected(&e, &choice));
        }
    }
    choices
}

/// What would be right, for a variant error.
fn variant_expected(
    e: &tfrc::variants::VariantError,
    choice: &tfrc::variants::VariantChoice,
) -> String {
    use tfrc::variants::{Variant, VariantError};
    match e {
        VariantError::UnknownVariant(_) | VariantError::Syntax(_) => format!(
            "a variant name: {} (`tfrclab variants` lists them with their parameters)",
            Variant::ALL.map(Variant::name).join(", ")
        ),
        VariantError::UnknownParameter { .. } | VariantError::DuplicateParameter { .. } => {
            match choice.name.parse::<Variant>() {
                Ok(v) => variant_params(v),
                Err(_) => "each parameter once".to_string(),
            }
        }
        VariantError::OutOfRange {
            parameter, range, ..
        } => format!("`{parameter}` in {range}"),
        VariantError::Duplicate(_) => "each variant once".to_string(),
        VariantError::Conflict { first, second, .. } => {
            format!("one variant per policy: keep {first} or {second}")
        }
        VariantError::Requires { needs, .. } => format!("also list {needs}"),
        VariantError::Config(_) => "parameters that make a valid profile".to_string(),
    }
}

/// The parameters of `v` with their defaults and ranges, for error messages.
fn variant_params(v: tfrc::variants::Variant) -> String {
    let info = v.info();
    if info.params.is_empty() {
        return format!(
            "{} has no parameters: write \"{}\" alone",
            info.name, info.name
        );
    }
    let ps: Vec<String> = info
        .params
        .iter()
        .map(|p| match p.default {
            Some(d) => format!("{} (default {d}, {})", p.name, p.range),
            None => format!("{} (optional, {})", p.name, p.range),
        })
        .collect();
    format!("a parameter of {}, each once: {}", info.name, ps.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same component ⇔ a path both ways, on random directed graphs (a small LCG keeps the
    /// crate free of a random-number dependency).
    #[test]
    fn components_agree_with_searches() {
        let mut x: u64 = 15;
        let mut next = |m: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % m
        };
        for _ in 0..200 {
            let n = 1 + next(30);
            let mut adj = vec![Vec::new(); n];
            for _ in 0..next(3 * n + 1) {
                let (a, b) = (next(n), next(n));
                adj[a].push(b);
            }
            let reach = Reach::new(adj.clone());
            for a in 0..n {
                for b in 0..n {
                    let want = reachable(&adj, a, b) && reachable(&adj, b, a);
                    assert_eq!(reach.both_ways(a, b), want, "{a} {b} in {adj:?}");
                }
            }
        }
    }
}
