//! The chart kinds: line (time series), mean ± CI against a parameter, distribution (histogram
//! or CDF) and grouped bars. Each is plain data plus a pure `to_svg`.
//!
//! Data that cannot be drawn (NaN, ±∞, non-positive values on a log axis) is left out and counted
//! in a note under the chart, never a panic; a chart with nothing drawable says "no data".

use std::fmt::Write as _;

use super::scale::{fmt_num, linear_ticks, log_ticks, Ticks};
use super::svg::{
    n, open_series, render, stroke_attrs, style, Frame, LegendItem, Plot, Svg, Swatch, XAxis,
};
use super::Chart;

/// A horizontal reference line, e.g. a paper's printed value or TCP-friendliness 1.0.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Y value of the line.
    pub value: f64,
    /// Label printed at its right end.
    pub label: String,
}

/// One named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Points in drawing order (for time series: increasing x).
    pub points: Vec<(f64, f64)>,
}

/// Several series of (x, y) points drawn as lines: throughput per flow, queue occupancy, TFRC
/// internals over time. Non-finite points break the line (a gap, not a zero).
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title above the chart.
    pub title: String,
    /// X axis label with unit, e.g. `time (s)`.
    pub x_label: String,
    /// Y axis label with unit, e.g. `throughput (Mbit/s)`.
    pub y_label: String,
    /// The series.
    pub series: Vec<Series>,
    /// Log10 y axis (non-positive values are left out).
    pub log_y: bool,
    /// Draw as steps (value held until the next point), as for per-bin rates.
    pub step: bool,
    /// Extend a linear y axis to include zero (default true: rates and occupancies start at 0).
    pub include_zero: bool,
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
    /// Vertical event markers `(x, label)`, e.g. where flows start and stop or a link fails.
    pub markers: Vec<(f64, String)>,
}

impl LineChart {
    /// An empty chart with a title and axis labels (include units in the labels).
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
            log_y: false,
            step: false,
            include_zero: true,
            references: Vec::new(),
            markers: Vec::new(),
        }
    }

    /// Adds a vertical event marker at `x` (markers at the same x share one line; markers
    /// outside the data's x range are left out).
    pub fn marker(mut self, x: f64, label: impl Into<String>) -> Self {
        self.markers.push((x, label.into()));
        self
    }

    /// Adds a series.
    pub fn series(
        mut self,
        name: impl Into<String>,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Self {
        self.series.push(Series {
            name: name.into(),
            points: points.into_iter().collect(),
        });
        self
    }

    /// Sets a log10 y axis.
    pub fn log_y(mut self, yes: bool) -> Self {
        self.log_y = yes;
        self
    }

    /// Draws series as steps.
    pub fn step(mut self, yes: bool) -> Self {
        self.step = yes;
        self
    }

    /// Whether a linear y axis must include zero.
    pub fn include_zero(mut self, yes: bool) -> Self {
        self.include_zero = yes;
        self
    }

    /// Adds a horizontal reference line.
    pub fn reference(mut self, value: f64, label: impl Into<String>) -> Self {
        self.references.push(Reference {
            value,
            label: label.into(),
        });
        self
    }
}

/// Counts values a y axis cannot show and collects the rest.
#[derive(Default)]
struct Extent {
    values: Vec<f64>,
    non_finite: usize,
    non_positive: usize,
}

impl Extent {
    fn add(&mut self, v: f64, log: bool) -> bool {
        if !v.is_finite() {
            self.non_finite += 1;
            false
        } else if log && v <= 0.0 {
            self.non_positive += 1;
            false
        } else {
            self.values.push(v);
            true
        }
    }

    fn min_max(&self) -> Option<(f64, f64)> {
        let mut it = self.values.iter().copied();
        let first = it.next()?;
        Some(it.fold((first, first), |(a, b), v| (a.min(v), b.max(v))))
    }

    fn ticks(&self, log: bool, include_zero: bool, target: usize) -> Ticks {
        match (self.min_max(), log) {
            (None, true) => log_ticks(1.0, 10.0),
            (None, false) => linear_ticks(0.0, 1.0, target),
            (Some((lo, hi)), true) => log_ticks(lo, hi),
            (Some((lo, hi)), false) => {
                let (lo, hi) = if include_zero {
                    (lo.min(0.0), hi.max(0.0))
                } else {
                    (lo, hi)
                };
                linear_ticks(lo, hi, target)
            }
        }
    }

    fn notes(&self, what: &str, out: &mut Vec<String>) {
        if self.non_finite > 0 {
            out.push(format!("{} non-finite {what} left out", self.non_finite));
        }
        if self.non_positive > 0 {
            out.push(format!(
                "{} non-positive {what} left out (log axis)",
                self.non_positive
            ));
        }
    }
}

fn references(svg: &mut Svg, plot: &Plot, refs: &[Reference]) {
    for r in refs {
        let Some(y) = plot.py(r.value) else { continue };
        if plot.y.log && r.value <= 0.0 {
            continue;
        }
        svg.leaf_tip(
            "line",
            &[
                ("x1", &n(plot.left)),
                ("x2", &n(plot.right)),
                ("y1", &n(y)),
                ("y2", &n(y)),
                ("stroke", "#555"),
                ("stroke-width", "1.2"),
                ("stroke-dasharray", "5 4"),
            ],
            &format!("{}: {}", r.label, fmt_num(r.value)),
        );
        let label = super::svg::fit(&r.label, (plot.right - plot.left) / 2.0, 11.0);
        svg.text(
            plot.right - 4.0,
            y - 4.0,
            &label,
            &[
                ("text-anchor", "end"),
                ("font-size", "11"),
                ("fill", "#555"),
            ],
            None,
        );
    }
}

/// Vertical event markers: a dotted line per distinct x within `range`, its labels joined in
/// the tooltip and, where there is room, printed at the top of the plot.
fn markers(svg: &mut Svg, plot: &Plot, marks: &[(f64, String)], range: (f64, f64)) {
    // Sorted (stably, so labels at one x keep their order) and grouped: n log n, as a run may
    // mark thousands of flows.
    let mut sorted: Vec<(f64, &str)> = marks
        .iter()
        .filter(|(x, _)| x.is_finite() && *x >= range.0 && *x <= range.1)
        .map(|(x, l)| (*x, l.as_str()))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut at: Vec<(f64, Vec<&str>)> = Vec::new();
    for (x, label) in sorted {
        match at.last_mut() {
            Some((v, ls)) if *v == x => ls.push(label),
            _ => at.push((x, vec![label])),
        }
    }
    let px: Vec<Option<f64>> = at.iter().map(|(x, _)| plot.px(*x)).collect();
    svg.open("g", &[("class", "markers")]);
    for (k, ((x, labels), p)) in at.iter().zip(&px).enumerate() {
        let Some(p) = *p else { continue };
        let text = labels.join(", ");
        svg.leaf_tip(
            "line",
            &[
                ("x1", &n(p)),
                ("x2", &n(p)),
                ("y1", &n(plot.top)),
                ("y2", &n(plot.bottom)),
                ("stroke", "#8c959f"),
                ("stroke-width", "1"),
                ("stroke-dasharray", "1 3"),
            ],
            &format!("t = {}: {text}", fmt_num(*x)),
        );
        svg.leaf_tip(
            "path",
            &[
                ("d", &format!("M{} {}l-4 -6h8z", n(p), n(plot.top))),
                ("fill", "#57606a"),
            ],
            &format!("t = {}: {text}", fmt_num(*x)),
        );
        // Room for a label: the gap to the next marker (or the plot's right edge).
        let next = px[k + 1..]
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or(plot.right);
        let room = (next - p - 6.0).min(plot.right - p - 4.0);
        if room >= 30.0 {
            let l = super::svg::fit(&text, room, 9.0);
            svg.text(
                p + 3.0,
                plot.top + 10.0,
                &l,
                &[("font-size", "9"), ("fill", "#57606a")],
                None,
            );
        }
    }
    svg.close("g");
}

fn legend_items(names: impl Iterator<Item = (String, bool)>, swatch: Swatch) -> Vec<LegendItem> {
    names
        .enumerate()
        .map(|(i, (name, has_data))| LegendItem {
            name: if has_data {
                name
            } else {
                format!("{name} (no data)")
            },
            style: style(i),
            swatch,
        })
        .collect()
}

/// Pixel points of one drawable run of a line (between gaps).
type Run = Vec<(f64, f64, usize)>;

/// Keeps the first, lowest, highest and last point per pixel column, so a long series draws the
/// same envelope with a bounded path length.
fn decimate(run: &Run) -> Run {
    let monotone = run.windows(2).all(|w| w[1].0 >= w[0].0);
    if run.len() <= 2000 || !monotone {
        return run.clone();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < run.len() {
        let col = run[i].0.floor();
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < run.len() && run[j].0.floor() == col {
            if run[j].1 < run[lo].1 {
                lo = j;
            }
            if run[j].1 > run[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = [i, lo, hi, j - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(run[k]);
                last = k;
            }
        }
        i = j;
    }
    out
}

impl Chart for LineChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let mut xe = Extent::default();
        let mut ye = Extent::default();
        let mut has = Vec::with_capacity(self.series.len());
        for s in &self.series {
            let mut any = false;
            for &(x, y) in &s.points {
                if !x.is_finite() {
                    xe.non_finite += 1;
                } else if ye.add(y, self.log_y) {
                    xe.values.push(x);
                    any = true;
                }
            }
            has.push(any);
        }
        let mut yr = Extent::default();
        for r in &self.references {
            yr.add(r.value, self.log_y);
        }
        let no_data = xe.values.is_empty();
        let mut all_y = Extent {
            values: ye.values.clone(),
            ..Extent::default()
        };
        all_y.values.extend(&yr.values);
        let (x_lo, x_hi) = xe.min_max().unwrap_or((0.0, 1.0));
        let mut notes = Vec::new();
        xe.notes("x values", &mut notes);
        ye.notes("y values", &mut notes);
        let frame = Frame {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            x: XAxis::Numeric {
                ticks: linear_ticks(x_lo, x_hi, 8),
                log: false,
            },
            y: all_y.ticks(self.log_y, self.include_zero, 6),
            log_y: self.log_y,
            legend: legend_items(
                self.series.iter().map(|s| s.name.clone()).zip(has),
                Swatch::Line,
            ),
            notes,
            no_data,
            x_inset: 0.0,
        };
        render(&frame, |svg, plot| {
            for (i, s) in self.series.iter().enumerate() {
                open_series(svg, i, &[]);
                self.draw_series(svg, plot, i, s);
                svg.close("g");
            }
            markers(svg, plot, &self.markers, (x_lo, x_hi));
            // On top, so bars and dense lines cannot hide them.
            references(svg, plot, &self.references);
        })
    }
}

impl LineChart {
    fn draw_series(&self, svg: &mut Svg, plot: &Plot, i: usize, s: &Series) {
        let st = style(i);
        let mut runs: Vec<Run> = vec![Vec::new()];
        for (k, &(x, y)) in s.points.iter().enumerate() {
            match (plot.px(x), plot.py(y)) {
                (Some(px), Some(py)) => runs.last_mut().map(|r| r.push((px, py, k))).unwrap_or(()),
                _ => {
                    if runs.last().is_some_and(|r| !r.is_empty()) {
                        runs.push(Vec::new());
                    }
                }
            }
        }
        runs.retain(|r| !r.is_empty());
        let total: usize = runs.iter().map(Vec::len).sum();
        if total == 0 {
            return;
        }
        let mut d = String::new();
        for run in &runs {
            let run = decimate(run);
            for (j, &(px, py, _)) in run.iter().enumerate() {
                if j == 0 {
                    let _ = write!(d, "M{} {}", n(px), n(py));
                } else if self.step {
                    let _ = write!(d, "H{}V{}", n(px), n(py));
                } else {
                    let _ = write!(d, "L{} {}", n(px), n(py));
                }
            }
        }
        let ys: Vec<f64> = runs
            .iter()
            .flatten()
            .map(|&(_, _, k)| s.points[k].1)
            .collect();
        let (lo, hi) = ys
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let mean = ys.iter().sum::<f64>() / ys.len() as f64;
        let mut a = stroke_attrs(st, "1.8");
        a.push(("d", &d));
        svg.leaf_tip(
            "path",
            &a,
            &format!(
                "{}: {} points, min {}, mean {}, max {}",
                s.name,
                total,
                fmt_num(lo),
                fmt_num(mean),
                fmt_num(hi)
            ),
        );
        // Markers carry per-point tooltips when few; an isolated point needs one to be seen.
        let few = total <= 60;
        for run in &runs {
            if few || run.len() == 1 {
                for &(px, py, k) in run {
                    let (x, y) = s.points[k];
                    svg.leaf_tip(
                        "circle",
                        &[
                            ("cx", &n(px)),
                            ("cy", &n(py)),
                            ("r", "2.8"),
                            ("fill", st.color),
                        ],
                        &format!(
                            "{} — {} {}, {} {}",
                            s.name,
                            self.x_label,
                            fmt_num(x),
                            self.y_label,
                            fmt_num(y)
                        ),
                    );
                }
            }
        }
    }
}

/// An x position for [`ErrorBarChart`]: a number (sweep parameter) or a category (variant).
#[derive(Debug, Clone, PartialEq)]
pub enum XValue {
    /// A numeric parameter value.
    Num(f64),
    /// A category name.
    Cat(String),
}

impl From<f64> for XValue {
    fn from(v: f64) -> Self {
        XValue::Num(v)
    }
}

impl From<&str> for XValue {
    fn from(v: &str) -> Self {
        XValue::Cat(v.to_string())
    }
}

impl From<String> for XValue {
    fn from(v: String) -> Self {
        XValue::Cat(v)
    }
}

/// A mean with its confidence interval at one x.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorPoint {
    /// Where.
    pub x: XValue,
    /// The mean (or other point estimate).
    pub mean: f64,
    /// Lower CI bound (NaN: no bar).
    pub lo: f64,
    /// Upper CI bound (NaN: no bar).
    pub hi: f64,
}

impl ErrorPoint {
    /// A point with interval `[lo, hi]`.
    pub fn new(x: impl Into<XValue>, mean: f64, lo: f64, hi: f64) -> Self {
        ErrorPoint {
            x: x.into(),
            mean,
            lo,
            hi,
        }
    }

    /// A point with interval `mean ± half_width`.
    pub fn symmetric(x: impl Into<XValue>, mean: f64, half_width: f64) -> Self {
        ErrorPoint {
            x: x.into(),
            mean,
            lo: mean - half_width,
            hi: mean + half_width,
        }
    }
}

/// One named series of [`ErrorPoint`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSeries {
    /// Legend name.
    pub name: String,
    /// The points.
    pub points: Vec<ErrorPoint>,
}

/// Mean ± CI bars against a numeric parameter (sweeps) or categories (variant comparisons).
///
/// The x axis is categorical as soon as one point has a [`XValue::Cat`]; categories appear in the
/// order they are first met. Series at the same x are nudged apart so their bars do not overlap.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBarChart {
    /// Title above the chart.
    pub title: String,
    /// X axis label with unit.
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// The series.
    pub series: Vec<ErrorSeries>,
    /// Log10 x axis (numeric x only).
    pub log_x: bool,
    /// Log10 y axis.
    pub log_y: bool,
    /// Extend a linear y axis to include zero (default true).
    pub include_zero: bool,
    /// Join a series' means by a line (default: true for numeric x, ignored for categories).
    pub connect: bool,
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
}

impl ErrorBarChart {
    /// An empty chart with a title and axis labels.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        ErrorBarChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
            log_x: false,
            log_y: false,
            include_zero: true,
            connect: true,
            references: Vec::new(),
        }
    }

    /// Adds a series.
    pub fn series(
        mut self,
        name: impl Into<String>,
        points: impl IntoIterator<Item = ErrorPoint>,
    ) -> Self {
        self.series.push(ErrorSeries {
            name: name.into(),
            points: points.into_iter().collect(),
        });
        self
    }

    /// Sets a log10 x axis.
    pub fn log_x(mut self, yes: bool) -> Self {
        self.log_x = yes;
        self
    }

    /// Sets a log10 y axis.
    pub fn log_y(mut self, yes: bool) -> Self {
        self.log_y = yes;
        self
    }

    /// Whether a linear y axis must include zero.
    pub fn include_zero(mut self, yes: bool) -> Self {
        self.include_zero = yes;
        self
    }

    /// Adds a horizontal reference line.
    pub fn reference(mut self, value: f64, label: impl Into<String>) -> Self {
        self.references.push(Reference {
            value,
            label: label.into(),
        });
        self
    }

    /// The category labels, or `None` for a numeric x axis.
    fn categories(&self) -> Option<Vec<String>> {
        let points = || self.series.iter().flat_map(|s| &s.points);
        if !points().any(|p| matches!(p.x, XValue::Cat(_))) {
            return None;
        }
        let mut cats: Vec<String> = Vec::new();
        for p in points() {
            let label = x_label_of(&p.x);
            if !cats.contains(&label) {
                cats.push(label);
            }
        }
        Some(cats)
    }
}

fn x_label_of(x: &XValue) -> String {
    match x {
        XValue::Num(v) => fmt_num(*v),
        XValue::Cat(s) => s.clone(),
    }
}

impl Chart for ErrorBarChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let cats = self.categories();
        let mut xe = Extent::default();
        let mut ye = Extent::default();
        let mut has = Vec::new();
        for s in &self.series {
            let mut any = false;
            for p in &s.points {
                let x_ok = match (&p.x, &cats) {
                    (_, Some(_)) => true,
                    (XValue::Num(v), None) => xe.add(*v, self.log_x),
                    (XValue::Cat(_), None) => false,
                };
                if x_ok && ye.add(p.mean, self.log_y) {
                    any = true;
                    for b in [p.lo, p.hi] {
                        if b.is_finite() && (!self.log_y || b > 0.0) {
                            ye.values.push(b);
                        }
                    }
                }
            }
            has.push(any);
        }
        let mut all_y = Extent {
            values: ye.values.clone(),
            ..Extent::default()
        };
        for r in &self.references {
            all_y.add(r.value, self.log_y);
        }
        let mut notes = Vec::new();
        xe.notes("x values", &mut notes);
        ye.notes("means", &mut notes);
        let x = match &cats {
            Some(c) => XAxis::Bands(c.clone()),
            None => {
                let t = match (xe.min_max(), self.log_x) {
                    (Some((lo, hi)), true) => log_ticks(lo, hi),
                    (Some((lo, hi)), false) => linear_ticks(lo, hi, 8),
                    (None, true) => log_ticks(1.0, 10.0),
                    (None, false) => linear_ticks(0.0, 1.0, 8),
                };
                XAxis::Numeric {
                    ticks: t,
                    log: self.log_x,
                }
            }
        };
        let frame = Frame {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            x,
            y: all_y.ticks(self.log_y, self.include_zero, 6),
            log_y: self.log_y,
            legend: legend_items(
                self.series
                    .iter()
                    .map(|s| s.name.clone())
                    .zip(has.iter().copied()),
                Swatch::Line,
            ),
            notes,
            no_data: !has.iter().any(|&h| h),
            // Points at the ends of a sweep would otherwise sit on the axes.
            x_inset: if cats.is_none() { 16.0 } else { 0.0 },
        };
        let k = self.series.len().max(1) as f64;
        render(&frame, |svg, plot| {
            for (i, s) in self.series.iter().enumerate() {
                let st = style(i);
                open_series(svg, i, &[]);
                let offset = i as f64 - (k - 1.0) / 2.0;
                let dodge = match &cats {
                    Some(_) => offset * (plot.band_width() * 0.5 / k).min(18.0),
                    None => offset * 5.0,
                };
                let mut pts: Vec<(f64, f64, &ErrorPoint)> = s
                    .points
                    .iter()
                    .filter_map(|p| {
                        let px = match (&cats, &p.x) {
                            (Some(c), x) => {
                                let l = x_label_of(x);
                                c.iter().position(|v| *v == l).map(|j| plot.band_center(j))
                            }
                            (None, XValue::Num(v)) => plot.px(*v),
                            (None, XValue::Cat(_)) => None,
                        }?;
                        Some((px + dodge, plot.py(p.mean)?, p))
                    })
                    .collect();
                if cats.is_none() && self.connect && pts.len() > 1 {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let mut d = String::new();
                    for (j, (px, py, _)) in pts.iter().enumerate() {
                        let _ =
                            write!(d, "{}{} {}", if j == 0 { "M" } else { "L" }, n(*px), n(*py));
                    }
                    let mut a = stroke_attrs(st, "1.5");
                    a.push(("d", &d));
                    svg.leaf("path", &a);
                }
                for (px, py, p) in pts {
                    let tip = format!(
                        "{} — {} {}: {} = {} (95% CI {}, {})",
                        s.name,
                        self.x_label,
                        x_label_of(&p.x),
                        self.y_label,
                        fmt_num(p.mean),
                        fmt_num(p.lo.min(p.hi)),
                        fmt_num(p.hi.max(p.lo))
                    );
                    svg.open("g", &[("stroke", st.color), ("fill", st.color)]);
                    svg.tooltip(&tip);
                    if p.lo.is_finite() && p.hi.is_finite() {
                        let (y0, y1) = (plot.y.map_clamped(p.lo), plot.y.map_clamped(p.hi));
                        let d = format!(
                            "M{x} {a}V{b}M{l} {a}H{r}M{l} {b}H{r}",
                            x = n(px),
                            a = n(y0),
                            b = n(y1),
                            l = n(px - 4.0),
                            r = n(px + 4.0)
                        );
                        svg.leaf(
                            "path",
                            &[("d", &d), ("fill", "none"), ("stroke-width", "1.5")],
                        );
                    }
                    svg.leaf(
                        "circle",
                        &[
                            ("cx", &n(px)),
                            ("cy", &n(py)),
                            ("r", "3.5"),
                            ("stroke", "#fff"),
                        ],
                    );
                    svg.close("g");
                }
                svg.close("g");
            }
            references(svg, plot, &self.references);
        })
    }
}

/// The data of one distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// A histogram: `edges.len() == counts.len() + 1`, edges increasing.
    Binned {
        /// Bin edges.
        edges: Vec<f64>,
        /// Count (or weight) per bin.
        counts: Vec<f64>,
    },
    /// Quantile points `(probability in [0, 1], value)`, e.g. `(0.5, median)`, `(0.95, p95)`.
    Quantiles(Vec<(f64, f64)>),
}

/// How a [`DistributionChart`] shows its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistributionKind {
    /// Bars per bin (binned data only; quantile-only series are listed in a note).
    Histogram,
    /// Cumulative fraction against value.
    Cdf,
}

/// One named distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionSeries {
    /// Legend name.
    pub name: String,
    /// The data.
    pub data: Distribution,
}

/// Distributions (e.g. end-to-end delay per flow) as histograms or CDFs.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionChart {
    /// Title above the chart.
    pub title: String,
    /// Label of the measured quantity with unit, e.g. `delay (ms)`.
    pub x_label: String,
    /// The series.
    pub series: Vec<DistributionSeries>,
    /// Histogram or CDF.
    pub kind: DistributionKind,
    /// Log10 value axis.
    pub log_x: bool,
    /// Histogram heights as fractions of each series' total rather than counts (default true, so
    /// series of different sizes compare).
    pub normalize: bool,
}

/// A checked bin: (left edge, right edge, count).
fn valid_bins(edges: &[f64], counts: &[f64], log_x: bool) -> (Vec<(f64, f64, f64)>, usize) {
    let mut bad = 0;
    let mut out = Vec::new();
    for (j, &c) in counts.iter().enumerate() {
        match (edges.get(j), edges.get(j + 1)) {
            (Some(&a), Some(&b))
                if a.is_finite()
                    && b.is_finite()
                    && b > a
                    && c.is_finite()
                    && c >= 0.0
                    && (!log_x || a > 0.0) =>
            {
                out.push((a, b, c))
            }
            _ => bad += 1,
        }
    }
    (out, bad)
}

impl DistributionChart {
    /// An empty chart of the given kind.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        kind: DistributionKind,
    ) -> Self {
        DistributionChart {
            title: title.into(),
            x_label: x_label.into(),
            series: Vec::new(),
            kind,
            log_x: false,
            normalize: true,
        }
    }

    /// Adds a histogram series from bin edges and counts.
    pub fn binned(mut self, name: impl Into<String>, edges: Vec<f64>, counts: Vec<f64>) -> Self {
        self.series.push(DistributionSeries {
            name: name.into(),
            data: Distribution::Binned { edges, counts },
        });
        self
    }

    /// Adds a series from quantile points `(probability, value)`.
    pub fn quantiles(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        self.series.push(DistributionSeries {
            name: name.into(),
            data: Distribution::Quantiles(points),
        });
        self
    }

    /// Sets a log10 value axis.
    pub fn log_x(mut self, yes: bool) -> Self {
        self.log_x = yes;
        self
    }

    /// Whether histogram heights are fractions (true) or raw counts.
    pub fn normalize(mut self, yes: bool) -> Self {
        self.normalize = yes;
        self
    }

    /// Per series: the drawable CDF points (value, cumulative fraction), and how many inputs were
    /// dropped.
    fn cdf_points(&self, data: &Distribution) -> (Vec<(f64, f64)>, usize) {
        match data {
            Distribution::Binned { edges, counts } => {
                let (bins, bad) = valid_bins(edges, counts, self.log_x);
                let total: f64 = bins.iter().map(|b| b.2).sum();
                if bins.is_empty() || total <= 0.0 || !total.is_finite() {
                    return (Vec::new(), bad);
                }
                let mut pts = vec![(bins[0].0, 0.0)];
                let mut cum = 0.0;
                for (a, b, c) in bins {
                    if pts.last().is_some_and(|p| p.0 < a) {
                        // A gap left by a dropped bin: hold the level.
                        pts.push((a, cum / total));
                    }
                    cum += c;
                    pts.push((b, cum / total));
                }
                (pts, bad)
            }
            Distribution::Quantiles(q) => {
                let mut pts: Vec<(f64, f64)> = q
                    .iter()
                    .filter(|(p, v)| {
                        (0.0..=1.0).contains(p) && v.is_finite() && (!self.log_x || *v > 0.0)
                    })
                    .map(|&(p, v)| (v, p))
                    .collect();
                let bad = q.len() - pts.len();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                (pts, bad)
            }
        }
    }
}

impl Chart for DistributionChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let mut notes = Vec::new();
        let mut xs = Extent::default();
        let mut ymax: f64 = 0.0;
        let mut has = Vec::new();
        // Per series: histogram bins (with heights) or CDF points.
        let mut hist: Vec<Vec<(f64, f64, f64, f64)>> = Vec::new();
        let mut cdf: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut dropped = 0;
        for s in &self.series {
            match (self.kind, &s.data) {
                (DistributionKind::Histogram, Distribution::Binned { edges, counts }) => {
                    let (bins, bad) = valid_bins(edges, counts, self.log_x);
                    dropped += bad;
                    let total: f64 = bins.iter().map(|b| b.2).sum();
                    let bars: Vec<(f64, f64, f64, f64)> = bins
                        .iter()
                        .map(|&(a, b, c)| {
                            let h = if self.normalize && total > 0.0 {
                                c / total
                            } else {
                                c
                            };
                            (a, b, c, h)
                        })
                        .filter(|b| b.3.is_finite())
                        .collect();
                    for &(a, b, _, h) in &bars {
                        xs.values.extend([a, b]);
                        ymax = ymax.max(h);
                    }
                    has.push(!bars.is_empty());
                    hist.push(bars);
                }
                (DistributionKind::Histogram, Distribution::Quantiles(_)) => {
                    notes.push(format!(
                        "{}: only quantiles given, not drawn as a histogram",
                        s.name
                    ));
                    has.push(false);
                    hist.push(Vec::new());
                }
                (DistributionKind::Cdf, data) => {
                    let (pts, bad) = self.cdf_points(data);
                    dropped += bad;
                    xs.values.extend(pts.iter().map(|p| p.0));
                    has.push(!pts.is_empty());
                    cdf.push(pts);
                }
            }
        }
        if dropped > 0 {
            notes.push(format!("{dropped} invalid bins or quantiles left out"));
        }
        let x_ticks = match (xs.min_max(), self.log_x) {
            (Some((lo, hi)), true) => log_ticks(lo, hi),
            (Some((lo, hi)), false) => linear_ticks(lo, hi, 8),
            (None, true) => log_ticks(1.0, 10.0),
            (None, false) => linear_ticks(0.0, 1.0, 8),
        };
        let (y, y_label) = match self.kind {
            DistributionKind::Cdf => (linear_ticks(0.0, 1.0, 5), "cumulative fraction"),
            DistributionKind::Histogram => (
                linear_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 6),
                if self.normalize {
                    "fraction per bin"
                } else {
                    "count per bin"
                },
            ),
        };
        let swatch = if self.kind == DistributionKind::Cdf {
            Swatch::Line
        } else {
            Swatch::Box
        };
        let frame = Frame {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: y_label.to_string(),
            x: XAxis::Numeric {
                ticks: x_ticks,
                log: self.log_x,
            },
            y,
            log_y: false,
            legend: legend_items(
                self.series
                    .iter()
                    .map(|s| s.name.clone())
                    .zip(has.iter().copied()),
                swatch,
            ),
            notes,
            no_data: !has.iter().any(|&h| h),
            x_inset: 0.0,
        };
        let opacity = if self.series.len() > 1 { "0.3" } else { "0.6" };
        render(&frame, |svg, plot| match self.kind {
            DistributionKind::Histogram => {
                for (i, (s, bars)) in self.series.iter().zip(&hist).enumerate() {
                    let st = style(i);
                    open_series(
                        svg,
                        i,
                        &[
                            ("fill", st.color),
                            ("fill-opacity", opacity),
                            ("stroke", st.color),
                        ],
                    );
                    for &(a, b, c, h) in bars {
                        let (Some(x0), Some(x1), Some(y0)) = (plot.px(a), plot.px(b), plot.py(h))
                        else {
                            continue;
                        };
                        let tip = format!(
                            "{} — {} [{}, {}): {} ({})",
                            s.name,
                            self.x_label,
                            fmt_num(a),
                            fmt_num(b),
                            fmt_num(c),
                            if self.normalize {
                                format!("{:.2}%", h * 100.0)
                            } else {
                                fmt_num(h)
                            }
                        );
                        svg.leaf_tip(
                            "rect",
                            &[
                                ("x", &n(x0)),
                                ("y", &n(y0)),
                                ("width", &n((x1 - x0).max(0.5))),
                                ("height", &n((plot.bottom - y0).max(0.0))),
                            ],
                            &tip,
                        );
                    }
                    svg.close("g");
                }
            }
            DistributionKind::Cdf => {
                for (i, (s, pts)) in self.series.iter().zip(&cdf).enumerate() {
                    let st = style(i);
                    let mapped: Vec<(f64, f64, f64, f64)> = pts
                        .iter()
                        .filter_map(|&(v, p)| Some((plot.px(v)?, plot.py(p)?, v, p)))
                        .collect();
                    if mapped.is_empty() {
                        continue;
                    }
                    open_series(svg, i, &[]);
                    let mut d = String::new();
                    for (j, (x, y, _, _)) in mapped.iter().enumerate() {
                        let _ = write!(d, "{}{} {}", if j == 0 { "M" } else { "L" }, n(*x), n(*y));
                    }
                    let mut a = stroke_attrs(st, "1.8");
                    a.push(("d", &d));
                    svg.leaf_tip("path", &a, &s.name);
                    if matches!(s.data, Distribution::Quantiles(_)) || mapped.len() == 1 {
                        for (x, y, v, p) in mapped.iter().take(200) {
                            svg.leaf_tip(
                                "circle",
                                &[
                                    ("cx", &n(*x)),
                                    ("cy", &n(*y)),
                                    ("r", "3"),
                                    ("fill", st.color),
                                ],
                                &format!("{} — p{} = {}", s.name, fmt_num(p * 100.0), fmt_num(*v)),
                            );
                        }
                    }
                    svg.close("g");
                }
            }
        })
    }
}

/// One series of a [`BarChart`]: a value per category, optionally with CI bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Legend name.
    pub name: String,
    /// Value per category, in category order (NaN: missing).
    pub values: Vec<f64>,
    /// `(lo, hi)` per category, or empty for no error bars.
    pub errors: Vec<(f64, f64)>,
}

/// Grouped bars: one group per category, one bar per series (per-flow or per-variant
/// comparisons).
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title above the chart.
    pub title: String,
    /// X axis label (what the categories are).
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// Category names, left to right.
    pub categories: Vec<String>,
    /// The series.
    pub series: Vec<BarSeries>,
    /// Log10 y axis (bars start at the axis bottom).
    pub log_y: bool,
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
    /// Print each bar's value above it (when bars are wide enough).
    pub value_labels: bool,
}

impl BarChart {
    /// An empty chart over `categories`.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
        categories: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        BarChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: categories.into_iter().map(Into::into).collect(),
            series: Vec::new(),
            log_y: false,
            references: Vec::new(),
            value_labels: true,
        }
    }

    /// Adds a series without error bars.
    pub fn series(mut self, name: impl Into<String>, values: Vec<f64>) -> Self {
        self.series.push(BarSeries {
            name: name.into(),
            values,
            errors: Vec::new(),
        });
        self
    }

    /// Adds a series with `(lo, hi)` error bars.
    pub fn series_with_ci(
        mut self,
        name: impl Into<String>,
        values: Vec<f64>,
        errors: Vec<(f64, f64)>,
    ) -> Self {
        self.series.push(BarSeries {
            name: name.into(),
            values,
            errors,
        });
        self
    }

    /// Sets a log10 y axis.
    pub fn log_y(mut self, yes: bool) -> Self {
        self.log_y = yes;
        self
    }

    /// Adds a horizontal reference line.
    pub fn reference(mut self, value: f64, label: impl Into<String>) -> Self {
        self.references.push(Reference {
            value,
            label: label.into(),
        });
        self
    }
}

impl Chart for BarChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let nc = self.categories.len();
        let mut ye = Extent::default();
        let mut has = Vec::new();
        let mut extra = 0;
        for s in &self.series {
            let mut any = false;
            for (j, &v) in s.values.iter().enumerate() {
                if j >= nc {
                    extra += 1;
                    continue;
                }
                if ye.add(v, self.log_y) {
                    any = true;
                    if let Some(&(lo, hi)) = s.errors.get(j) {
                        for b in [lo, hi] {
                            if b.is_finite() && (!self.log_y || b > 0.0) {
                                ye.values.push(b);
                            }
                        }
                    }
                }
            }
            has.push(any);
        }
        let mut all_y = Extent {
            values: ye.values.clone(),
            ..Extent::default()
        };
        for r in &self.references {
            all_y.add(r.value, self.log_y);
        }
        let mut notes = Vec::new();
        ye.notes("values", &mut notes);
        if extra > 0 {
            notes.push(format!("{extra} values beyond the last category left out"));
        }
        let legend =
            if self.series.len() > 1 || self.series.first().is_some_and(|s| !s.name.is_empty()) {
                legend_items(
                    self.series
                        .iter()
                        .map(|s| s.name.clone())
                        .zip(has.iter().copied()),
                    Swatch::Box,
                )
            } else {
                Vec::new()
            };
        let frame = Frame {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            x: XAxis::Bands(self.categories.clone()),
            y: all_y.ticks(self.log_y, true, 6),
            log_y: self.log_y,
            legend,
            notes,
            no_data: nc == 0 || !has.iter().any(|&h| h),
            x_inset: 0.0,
        };
        let k = self.series.len().max(1);
        render(&frame, |svg, plot| {
            // Bars no wider than 64 px: a lone series would otherwise draw slabs.
            let bw = (plot.band_width() * 0.8 / k as f64).min(64.0);
            let inner = bw * k as f64;
            let labels = self.value_labels && bw >= 22.0;
            let base = if self.log_y {
                plot.bottom
            } else {
                plot.y.map_clamped(0.0)
            };
            for (i, s) in self.series.iter().enumerate() {
                let st = style(i);
                open_series(svg, i, &[("fill", st.color)]);
                for (j, cat) in self.categories.iter().enumerate() {
                    let v = s.values.get(j).copied().unwrap_or(f64::NAN);
                    let x = plot.band_center(j) - inner / 2.0 + i as f64 * bw;
                    let Some(y) = plot.py(v) else {
                        svg.text(
                            x + bw / 2.0,
                            base - 4.0,
                            "n/a",
                            &[
                                ("text-anchor", "middle"),
                                ("font-size", "9"),
                                ("fill", "#888"),
                            ],
                            Some(&format!("{} — {}: no value", s.name, cat)),
                        );
                        continue;
                    };
                    let err = s
                        .errors
                        .get(j)
                        .copied()
                        .filter(|(a, b)| a.is_finite() && b.is_finite());
                    let tip = match err {
                        Some((a, b)) => format!(
                            "{} — {}: {} (95% CI {}, {})",
                            s.name,
                            cat,
                            fmt_num(v),
                            fmt_num(a.min(b)),
                            fmt_num(a.max(b))
                        ),
                        None => format!("{} — {}: {}", s.name, cat, fmt_num(v)),
                    };
                    let (top, h) = (y.min(base), (y - base).abs());
                    svg.leaf_tip(
                        "rect",
                        &[
                            ("x", &n(x + 1.0)),
                            ("y", &n(top)),
                            ("width", &n((bw - 2.0).max(1.0))),
                            ("height", &n(h)),
                            ("fill-opacity", "0.85"),
                        ],
                        &tip,
                    );
                    let cx = x + bw / 2.0;
                    let mut label_y = top;
                    if let Some((a, b)) = err {
                        let (y0, y1) = (plot.y.map_clamped(a), plot.y.map_clamped(b));
                        label_y = label_y.min(y0.min(y1));
                        let d = format!(
                            "M{x} {a}V{b}M{l} {a}H{r}M{l} {b}H{r}",
                            x = n(cx),
                            a = n(y0),
                            b = n(y1),
                            l = n(cx - 4.0),
                            r = n(cx + 4.0)
                        );
                        svg.leaf(
                            "path",
                            &[
                                ("d", &d),
                                ("stroke", "#222"),
                                ("stroke-width", "1.2"),
                                ("fill", "none"),
                            ],
                        );
                    }
                    if labels {
                        let ly = if v < 0.0 && !self.log_y {
                            top + h + 12.0
                        } else {
                            label_y - 4.0
                        };
                        svg.text(
                            cx,
                            ly,
                            &fmt_num(v),
                            &[
                                ("text-anchor", "middle"),
                                ("font-size", "10"),
                                ("fill", "#333"),
                            ],
                            None,
                        );
                    }
                }
                svg.close("g");
            }
            references(svg, plot, &self.references);
        })
    }
}

/// One point of a [`ScatterChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterPoint {
    /// X value.
    pub x: f64,
    /// Y value.
    pub y: f64,
    /// An x interval drawn as a horizontal whisker (e.g. mean to 95th percentile delay), or NaN.
    pub x_range: (f64, f64),
    /// What the point is (shown on hover), e.g. a sweep's grid point.
    pub label: String,
}

/// One named series of a [`ScatterChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterSeries {
    /// Legend name.
    pub name: String,
    /// The points.
    pub points: Vec<ScatterPoint>,
}

/// Points without lines, one series per subject: e.g. Pantheon's throughput–delay plot, one
/// point per flow at (delay, throughput).
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterChart {
    /// Title above the chart.
    pub title: String,
    /// X axis label with unit.
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// The series.
    pub series: Vec<ScatterSeries>,
}

impl ScatterChart {
    /// An empty chart.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        ScatterChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
        }
    }

    /// Adds a series.
    pub fn series(mut self, name: impl Into<String>, points: Vec<ScatterPoint>) -> Self {
        self.series.push(ScatterSeries {
            name: name.into(),
            points,
        });
        self
    }
}

impl Chart for ScatterChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let mut xe = Extent::default();
        let mut ye = Extent::default();
        let mut has = Vec::new();
        for s in &self.series {
            let mut any = false;
            for p in &s.points {
                if !p.x.is_finite() {
                    xe.non_finite += 1;
                } else if ye.add(p.y, false) {
                    xe.values.push(p.x);
                    any = true;
                    for b in [p.x_range.0, p.x_range.1] {
                        if b.is_finite() {
                            xe.values.push(b);
                        }
                    }
                }
            }
            has.push(any);
        }
        let mut notes = Vec::new();
        xe.notes("x values", &mut notes);
        ye.notes("y values", &mut notes);
        let frame = Frame {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            x: XAxis::Numeric {
                ticks: xe.ticks(false, true, 8),
                log: false,
            },
            y: ye.ticks(false, true, 6),
            log_y: false,
            legend: legend_items(
                self.series
                    .iter()
                    .map(|s| s.name.clone())
                    .zip(has.iter().copied()),
                Swatch::Line,
            ),
            notes,
            no_data: !has.iter().any(|&h| h),
            x_inset: 10.0,
        };
        render(&frame, |svg, plot| {
            for (i, s) in self.series.iter().enumerate() {
                let st = style(i);
                open_series(svg, i, &[("fill", st.color), ("stroke", st.color)]);
                for p in &s.points {
                    let (Some(px), Some(py)) = (plot.px(p.x), plot.py(p.y)) else {
                        continue;
                    };
                    let (a, b) = p.x_range;
                    let mut tip = format!(
                        "{}{}{} — {} {}, {} {}",
                        s.name,
                        if p.label.is_empty() { "" } else { ", " },
                        p.label,
                        self.x_label,
                        fmt_num(p.x),
                        self.y_label,
                        fmt_num(p.y)
                    );
                    if let (Some(pa), Some(pb)) = (plot.px(a), plot.px(b)) {
                        let d = format!(
                            "M{} {y}H{}M{} {t}V{b}M{} {t}V{b}",
                            n(pa),
                            n(pb),
                            n(pa),
                            n(pb),
                            y = n(py),
                            t = n(py - 3.0),
                            b = n(py + 3.0)
                        );
                        svg.leaf(
                            "path",
                            &[("d", &d), ("fill", "none"), ("stroke-width", "1.2")],
                        );
                        tip.push_str(&format!(" (range {} to {})", fmt_num(a), fmt_num(b)));
                    }
                    // Shapes differ by series too, so the points read without colour.
                    match i % 3 {
                        0 => svg.leaf_tip(
                            "circle",
                            &[
                                ("cx", &n(px)),
                                ("cy", &n(py)),
                                ("r", "5"),
                                ("stroke", "#fff"),
                            ],
                            &tip,
                        ),
                        1 => svg.leaf_tip(
                            "rect",
                            &[
                                ("x", &n(px - 4.5)),
                                ("y", &n(py - 4.5)),
                                ("width", "9"),
                                ("height", "9"),
                                ("stroke", "#fff"),
                            ],
                            &tip,
                        ),
                        _ => svg.leaf_tip(
                            "path",
                            &[
                                ("d", &format!("M{} {}l5.5 9.5h-11z", n(px), n(py - 6.0))),
                                ("stroke", "#fff"),
                            ],
                            &tip,
                        ),
                    }
                }
                svg.close("g");
            }
        })
    }
}
