//! The claims figure (a forest plot): one row per claim with its measured mean and 95% CI, the
//! region where the claim puts the quantity shaded, the reference dashed, the paper's claimed
//! value as a hollow diamond, and the verdict as colour, marker shape and word.
//!
//! Claims measure different quantities in different units, so rows share a scale per group
//! (paper) and unit: a group's claims in one unit are drawn together, over grid lines, above an
//! axis with the unit. The numbers are also printed beside each row, never cut: the columns are
//! fitted to the longest value.

use super::scale::{fmt_num, format_tick, linear_ticks, Ticks};
use super::svg::{fit, n, text_width, Svg};
use super::tables::{fmt_pct, fmt_pct_auto, Estimate, Verdict, PERCENT};
use super::Chart;

/// Where a claim puts its quantity relative to the reference value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClaimSide {
    /// Above the reference.
    Above,
    /// Below the reference.
    Below,
    /// Within ± this tolerance of the reference (an absolute value a paper prints).
    Within(f64),
}

/// One claim of a [`ForestPlot`].
#[derive(Debug, Clone, PartialEq)]
pub struct ForestRow {
    /// Group shown as a heading row above its claims when it changes (e.g. the paper), or empty.
    pub group: String,
    /// Short name of the claim (its id).
    pub label: String,
    /// Hover text: the claim in full.
    pub tooltip: String,
    /// The measured mean and 95% CI.
    pub measured: Estimate,
    /// Unit of the quantity (may be empty).
    pub unit: String,
    /// The claimed side of the reference.
    pub side: ClaimSide,
    /// The reference value.
    pub reference: f64,
    /// The value the paper claims, if it states one (for [`ClaimSide::Within`]: the reference).
    pub claimed: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// All claims of a page in one figure; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestPlot {
    /// Title above the chart.
    pub title: String,
    /// The claims, top to bottom (a group's claims in one unit are drawn together).
    pub rows: Vec<ForestRow>,
    /// Set for the results of a shortened run: every verdict is marked "(quick)" and the note
    /// is printed under the key.
    pub provisional: Option<String>,
}

impl ForestPlot {
    /// A plot of `rows`.
    pub fn new(title: impl Into<String>, rows: Vec<ForestRow>) -> Self {
        ForestPlot {
            title: title.into(),
            rows,
            provisional: None,
        }
    }

    /// Marks every verdict as provisional (a `--quick` run), with `note` under the key.
    pub fn provisional(mut self, note: impl Into<String>) -> Self {
        self.provisional = Some(note.into());
        self
    }
}

const W: f64 = 960.0;
const ROW: f64 = 30.0;
const GROUP_ROW: f64 = 26.0;
const LABEL_X: f64 = 12.0;
const REGION: &str = "#d3e5f5";

/// Mark colour, text colour and marker of a verdict (colour-blind-safe Okabe–Ito hues; the
/// shape and the word carry the same information).
fn look(v: Verdict) -> (&'static str, &'static str) {
    match v {
        Verdict::Supported => ("#009E73", "#0a5a1f"),
        Verdict::NotSupported => ("#E69F00", "#664b00"),
        Verdict::Contradicted => ("#D55E00", "#8e1f0b"),
    }
}

/// The marker of a verdict at (x, y): circle (supported), square (not supported), cross
/// (contradicted). `class` marks it for the page's tests and script.
fn marker(svg: &mut Svg, v: Verdict, x: f64, y: f64, class: &str, tip: &str) {
    let (c, _) = look(v);
    match v {
        Verdict::Supported => svg.leaf_tip(
            "circle",
            &[
                ("class", class),
                ("cx", &n(x)),
                ("cy", &n(y)),
                ("r", "5"),
                ("fill", c),
                ("stroke", "#fff"),
            ],
            tip,
        ),
        Verdict::NotSupported => svg.leaf_tip(
            "rect",
            &[
                ("class", class),
                ("x", &n(x - 4.5)),
                ("y", &n(y - 4.5)),
                ("width", "9"),
                ("height", "9"),
                ("fill", c),
                ("stroke", "#fff"),
            ],
            tip,
        ),
        Verdict::Contradicted => {
            let d = format!(
                "M{a} {b}L{c2} {d2}M{a} {d2}L{c2} {b}",
                a = n(x - 5.0),
                b = n(y - 5.0),
                c2 = n(x + 5.0),
                d2 = n(y + 5.0)
            );
            svg.leaf_tip(
                "path",
                &[
                    ("class", class),
                    ("d", &d),
                    ("stroke", c),
                    ("stroke-width", "3"),
                    ("fill", "none"),
                ],
                tip,
            );
        }
    }
}

fn diamond(svg: &mut Svg, x: f64, y: f64, tip: &str) {
    let d = format!(
        "M{} {}L{} {}L{} {}L{} {}Z",
        n(x),
        n(y - 6.0),
        n(x + 6.0),
        n(y),
        n(x),
        n(y + 6.0),
        n(x - 6.0),
        n(y)
    );
    svg.leaf_tip(
        "path",
        &[
            ("d", &d),
            ("fill", "none"),
            ("stroke", "#222"),
            ("stroke-width", "1.5"),
        ],
        tip,
    );
}

impl ForestRow {
    /// `0.93 [0.91, 0.95] kb/s`; in percent `−0.4% [−1.2%, +0.5%]`.
    fn measured_text(&self) -> String {
        self.measured.text_with_unit(&self.unit)
    }

    /// A value of the row's quantity: `0.93`, or `+22%` in percent.
    fn value(&self, v: f64) -> String {
        if self.unit == PERCENT {
            fmt_pct_auto(v)
        } else {
            fmt_num(v)
        }
    }

    /// `> 0.9`, `< 0 (claimed −0.3)`, `= 2917 ± 291.7`; in percent `> 0% (claimed +22%)`.
    fn hypothesis(&self) -> String {
        match self.side {
            ClaimSide::Within(t) => {
                let t = if self.unit == PERCENT {
                    format!("{}%", fmt_num(t.abs()))
                } else {
                    fmt_num(t.abs())
                };
                format!("= {} ± {t}", self.value(self.reference))
            }
            ClaimSide::Above | ClaimSide::Below => {
                let sym = if self.side == ClaimSide::Above {
                    ">"
                } else {
                    "<"
                };
                match self.claimed {
                    Some(c) => format!(
                        "{sym} {} (claimed {})",
                        self.value(self.reference),
                        self.value(c)
                    ),
                    None => format!("{sym} {}", self.value(self.reference)),
                }
            }
        }
    }

    /// The row's data domain, padded; `None` without any finite value.
    fn domain(&self) -> Option<(f64, f64)> {
        let e = self.measured;
        let mut vals = vec![e.mean, e.lo, e.hi, self.reference];
        vals.extend(self.claimed);
        if let ClaimSide::Within(t) = self.side {
            vals.extend([self.reference - t.abs(), self.reference + t.abs()]);
        }
        let vals: Vec<f64> = vals.into_iter().filter(|v| v.is_finite()).collect();
        let lo = vals.iter().copied().reduce(f64::min)?;
        let hi = vals.iter().copied().reduce(f64::max)?;
        let pad = if hi > lo {
            (hi - lo) * 0.08
        } else if lo != 0.0 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        let (d0, d1) = (lo - pad, hi + pad);
        (d0.is_finite() && d1.is_finite() && d1 > d0).then_some((d0, d1))
    }
}

/// One block of rows drawn on one scale: the claims of a group that share a unit.
struct Panel<'a> {
    /// The group heading to draw above the block (when the group starts here).
    heading: Option<&'a str>,
    unit: &'a str,
    /// The rows, with their index in [`ForestPlot::rows`].
    rows: Vec<(usize, &'a ForestRow)>,
    /// The shared axis; None when no row has a finite value.
    ticks: Option<Ticks>,
}

/// Where the columns go: fitted to the longest label, measured value and verdict, so that no
/// value is cut; the plot takes what is left (at least [`MIN_PLOT`]).
struct Columns {
    plot_l: f64,
    plot_r: f64,
    text_x: f64,
    verdict_x: f64,
    label_w: f64,
}

const MIN_PLOT: f64 = 300.0;

/// Width of `s` at `size` px for fitting the text columns, erring wide: `text_width` is an
/// average over fonts, but the measured values are mostly digits, signs and `%`, which are wide
/// in DejaVu Sans (the usual sans-serif on Linux), and a value must never be cut or overlap the
/// verdict (issue 32). Bold text takes a tenth more.
fn column_width(s: &str, size: f64, bold: bool) -> f64 {
    let w: f64 = s
        .chars()
        .map(|c| match c {
            '0'..='9' => 0.64 * size,
            '%' => 0.95 * size,
            '+' | '\u{2212}' | '=' | '<' | '>' => 0.84 * size,
            _ => text_width(c.encode_utf8(&mut [0; 4]), size),
        })
        .sum();
    w * if bold { 1.1 } else { 1.0 } * 1.04
}
const AXIS_ROW: f64 = 34.0;
const LABEL_SIZE: f64 = 12.0;
const SMALL: f64 = 11.0;

impl ForestPlot {
    /// The rows in panels: per group (in order of first appearance), per unit (likewise), so
    /// that a paper's claims in one unit share one scale.
    fn panels(&self) -> Vec<Panel<'_>> {
        let mut groups: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !groups.contains(&r.group.as_str()) {
                groups.push(&r.group);
            }
        }
        let mut panels = Vec::new();
        for g in groups {
            let in_group: Vec<(usize, &ForestRow)> = self
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.group == g)
                .collect();
            let mut units: Vec<&str> = Vec::new();
            for (_, r) in &in_group {
                if !units.contains(&r.unit.as_str()) {
                    units.push(&r.unit);
                }
            }
            for (k, u) in units.into_iter().enumerate() {
                let rows: Vec<(usize, &ForestRow)> = in_group
                    .iter()
                    .copied()
                    .filter(|(_, r)| r.unit == u)
                    .collect();
                let span = rows
                    .iter()
                    .filter_map(|(_, r)| r.domain())
                    .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
                panels.push(Panel {
                    heading: (k == 0 && !g.is_empty()).then_some(g),
                    unit: u,
                    rows,
                    ticks: span.map(|(lo, hi)| linear_ticks(lo, hi, 5)),
                });
            }
        }
        panels
    }

    fn columns(&self) -> Columns {
        let widest = |f: &dyn Fn(&ForestRow) -> f64| self.rows.iter().map(f).fold(0.0, f64::max);
        let verdict_w = widest(&|r| column_width(&self.verdict_text(r.verdict), SMALL, true))
            .max(column_width("verdict", SMALL, false));
        let verdict_x = W - LABEL_X - verdict_w;
        let text_w = widest(&|r| column_width(&r.measured_text(), SMALL, false)).max(column_width(
            "measured [95% CI]",
            SMALL,
            false,
        ));
        let mut label_w = widest(&|r| text_width(&r.label, LABEL_SIZE)).clamp(60.0, 240.0);
        // Space is taken from the labels (hover shows them in full), then from the plot; the
        // values are never cut.
        let room = verdict_x - 16.0 - text_w - 14.0 - (LABEL_X + label_w + 12.0);
        if room < MIN_PLOT {
            label_w = (label_w - (MIN_PLOT - room)).max(60.0);
        }
        let text_x = verdict_x - 16.0 - text_w;
        Columns {
            plot_l: LABEL_X + label_w + 12.0,
            plot_r: text_x - 14.0,
            text_x,
            verdict_x,
            label_w,
        }
    }

    /// The verdict as the figure words it: marked when the run was a quick one.
    fn verdict_text(&self, v: Verdict) -> String {
        match &self.provisional {
            Some(_) => format!("{} (quick)", v.label()),
            None => v.label().to_string(),
        }
    }
}

impl Chart for ForestPlot {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let panels = self.panels();
        let cols = self.columns();
        let top = 58.0;
        let body: f64 = panels
            .iter()
            .map(|p| p.heading.map_or(0.0, |_| GROUP_ROW) + p.rows.len() as f64 * ROW + AXIS_ROW)
            .sum();
        let legend_y = top + body.max(ROW) + 22.0;
        let notes = 1 + usize::from(self.provisional.is_some());
        let height = legend_y + 22.0 + 24.0 * notes as f64;
        let mut svg = Svg::new(W, height, &self.title);
        let title = fit(&self.title, W - 24.0, 15.0);
        svg.text(
            W / 2.0,
            24.0,
            &title,
            &[
                ("text-anchor", "middle"),
                ("font-size", "15"),
                ("font-weight", "600"),
                ("fill", "#222"),
            ],
            (title != self.title).then_some(self.title.as_str()),
        );
        svg.open("g", &[("font-size", "11"), ("fill", "#57606a")]);
        svg.text(LABEL_X, 48.0, "claim", &[], None);
        svg.text(
            (cols.plot_l + cols.plot_r) / 2.0,
            48.0,
            &fit(
                "measured mean and 95% CI, one scale per paper and unit",
                cols.plot_r - cols.plot_l,
                SMALL,
            ),
            &[("text-anchor", "middle")],
            None,
        );
        svg.text(cols.text_x, 48.0, "measured [95% CI]", &[], None);
        svg.text(cols.verdict_x, 48.0, "verdict", &[], None);
        svg.close("g");
        if self.rows.is_empty() {
            svg.text(
                W / 2.0,
                top + ROW / 2.0,
                "no claims",
                &[
                    ("text-anchor", "middle"),
                    ("fill", "#888"),
                    ("font-style", "italic"),
                ],
                None,
            );
        }
        let mut y = top;
        let mut stripe = 0;
        for p in &panels {
            if let Some(group) = p.heading {
                // Bold type runs wider than the estimate: leave a margin.
                let g = fit(group, (W - 2.0 * LABEL_X) * 0.85, 12.0);
                svg.text(
                    LABEL_X,
                    y + GROUP_ROW - 8.0,
                    &g,
                    &[("font-weight", "600"), ("fill", "#222")],
                    (g != group).then_some(group),
                );
                svg.leaf(
                    "line",
                    &[
                        ("x1", &n(LABEL_X)),
                        ("x2", &n(W - LABEL_X)),
                        ("y1", &n(y + GROUP_ROW - 2.0)),
                        ("y2", &n(y + GROUP_ROW - 2.0)),
                        ("stroke", "#d0d7de"),
                    ],
                );
                y += GROUP_ROW;
            }
            let rows_h = p.rows.len() as f64 * ROW;
            // Alternate shading first, so that the grid lines stay visible over it.
            for k in 0..p.rows.len() {
                if (stripe + k) % 2 == 1 {
                    svg.leaf(
                        "rect",
                        &[
                            ("x", "4"),
                            ("y", &n(y + k as f64 * ROW)),
                            ("width", &n(W - 8.0)),
                            ("height", &n(ROW)),
                            ("fill", "#f6f8fa"),
                        ],
                    );
                }
            }
            stripe += p.rows.len();
            if let Some(t) = &p.ticks {
                axis(&mut svg, t, p.unit, &cols, y, y + rows_h);
            }
            for &(_, r) in &p.rows {
                self.row(&mut svg, r, p.ticks.as_ref(), &cols, y);
                y += ROW;
            }
            y += AXIS_ROW;
        }
        legend(&mut svg, legend_y, self.provisional.as_deref());
        svg.finish()
    }
}

/// Grid lines at the ticks behind a panel's rows (`y0`–`y1`), and its axis below them: ticks,
/// their values and the unit.
fn axis(svg: &mut Svg, t: &Ticks, unit: &str, c: &Columns, y0: f64, y1: f64) {
    let x = |v: f64| c.plot_l + (v - t.lo) / (t.hi - t.lo) * (c.plot_r - c.plot_l);
    svg.open("g", &[("class", "claim-axis")]);
    for &v in &t.values {
        let vx = n(x(v));
        svg.leaf(
            "line",
            &[
                ("x1", &vx),
                ("x2", &vx),
                ("y1", &n(y0)),
                ("y2", &n(y1 + 4.0)),
                ("stroke", "#e6e9ed"),
            ],
        );
    }
    svg.leaf(
        "line",
        &[
            ("x1", &n(c.plot_l)),
            ("x2", &n(c.plot_r)),
            ("y1", &n(y1)),
            ("y2", &n(y1)),
            ("stroke", "#57606a"),
        ],
    );
    // Labels only where they do not run into each other (every k-th tick).
    let labels: Vec<String> = t
        .values
        .iter()
        .map(|&v| {
            if unit == PERCENT {
                // Decimals enough to tell ticks apart (a 2.5 step needs one).
                let d = (0..3)
                    .find(|&d| {
                        let s = t.step * 10f64.powi(d);
                        (s.round() - s).abs() < 1e-6
                    })
                    .unwrap_or(3) as usize;
                fmt_pct(v, d)
            } else {
                format_tick(v, t.step)
            }
        })
        .collect();
    let widest = labels
        .iter()
        .map(|l| text_width(l, 10.0))
        .fold(0.0, f64::max);
    let gap = if t.values.len() > 1 {
        (c.plot_r - c.plot_l) / (t.values.len() - 1) as f64
    } else {
        f64::INFINITY
    };
    let every = ((widest + 6.0) / gap).ceil().max(1.0) as usize;
    svg.open("g", &[("font-size", "10"), ("fill", "#57606a")]);
    for (k, (&v, label)) in t.values.iter().zip(&labels).enumerate() {
        let vx = x(v);
        svg.leaf(
            "line",
            &[
                ("x1", &n(vx)),
                ("x2", &n(vx)),
                ("y1", &n(y1)),
                ("y2", &n(y1 + 4.0)),
                ("stroke", "#57606a"),
            ],
        );
        if k % every == 0 {
            svg.text(vx, y1 + 15.0, label, &[("text-anchor", "middle")], None);
        }
    }
    let unit = if unit == PERCENT { "percent" } else { unit };
    if !unit.is_empty() {
        // Right of the last tick's label, which is centred on the plot's right end.
        let last = labels
            .last()
            .map_or(0.0, |l| column_width(l, 10.0, false) / 2.0);
        let ux = c.text_x.max(c.plot_r + last + 8.0);
        let u = fit(unit, W - LABEL_X - ux, 10.0);
        svg.text(ux, y1 + 15.0, &u, &[], (u != unit).then_some(unit));
    }
    svg.close("g");
    svg.close("g");
}

impl ForestPlot {
    fn row(&self, svg: &mut Svg, r: &ForestRow, ticks: Option<&Ticks>, c: &Columns, y: f64) {
        let cy = y + ROW / 2.0;
        let (_, text_colour) = look(r.verdict);
        let desc = format!(
            "{}{}: {}\nclaim: {}\nmeasured: {}\nverdict: {}",
            if r.group.is_empty() { "" } else { &r.group },
            if r.group.is_empty() { "" } else { " " },
            r.label,
            r.hypothesis(),
            r.measured_text(),
            self.verdict_text(r.verdict)
        );
        let desc = if r.tooltip.is_empty() {
            desc
        } else {
            format!("{desc}\n{}", r.tooltip)
        };
        svg.open("g", &[("class", "claim-row")]);
        svg.tooltip(&desc);
        let label = fit(&r.label, c.label_w, LABEL_SIZE);
        svg.text(
            LABEL_X,
            cy,
            &label,
            &[("dy", "0.32em"), ("fill", "#222")],
            None,
        );
        // Never cut: the column is as wide as the longest value ([`ForestPlot::columns`]).
        let measured = r.measured_text();
        svg.text(
            c.text_x,
            cy,
            &measured,
            &[
                ("class", "claim-measured"),
                ("dy", "0.32em"),
                ("font-size", "11"),
                ("fill", "#222"),
            ],
            None,
        );
        svg.text(
            c.verdict_x,
            cy,
            &self.verdict_text(r.verdict),
            &[
                ("class", "claim-verdict"),
                ("dy", "0.32em"),
                ("font-size", "11"),
                ("font-weight", "600"),
                ("fill", text_colour),
            ],
            None,
        );
        let Some(t) = ticks.filter(|_| r.domain().is_some()) else {
            svg.text(
                (c.plot_l + c.plot_r) / 2.0,
                cy,
                "no data",
                &[
                    ("class", "claim-mark"),
                    ("text-anchor", "middle"),
                    ("dy", "0.32em"),
                    ("fill", "#888"),
                    ("font-style", "italic"),
                ],
                None,
            );
            svg.close("g");
            return;
        };
        let (d0, d1) = (t.lo, t.hi);
        let x = |v: f64| c.plot_l + (v - d0) / (d1 - d0) * (c.plot_r - c.plot_l);
        let xc = |v: f64| x(v.clamp(d0, d1));
        // The decision region: where the claim puts the quantity.
        let (a, b) = match r.side {
            ClaimSide::Above => (r.reference, d1),
            ClaimSide::Below => (d0, r.reference),
            ClaimSide::Within(t) => (r.reference - t.abs(), r.reference + t.abs()),
        };
        if a.is_finite() && b.is_finite() && xc(b) > xc(a) {
            svg.leaf_tip(
                "rect",
                &[
                    ("x", &n(xc(a))),
                    ("y", &n(y + 5.0)),
                    ("width", &n(xc(b) - xc(a))),
                    ("height", &n(ROW - 10.0)),
                    ("fill", REGION),
                ],
                &format!("claimed region: {}", r.hypothesis()),
            );
        }
        svg.leaf(
            "line",
            &[
                ("x1", &n(c.plot_l)),
                ("x2", &n(c.plot_r)),
                ("y1", &n(cy)),
                ("y2", &n(cy)),
                ("stroke", "#d0d7de"),
            ],
        );
        if r.reference.is_finite() {
            let rx = x(r.reference);
            svg.leaf_tip(
                "line",
                &[
                    ("x1", &n(rx)),
                    ("x2", &n(rx)),
                    ("y1", &n(y + 2.0)),
                    ("y2", &n(y + ROW - 2.0)),
                    ("stroke", "#444"),
                    ("stroke-width", "1.2"),
                    ("stroke-dasharray", "4 3"),
                ],
                &format!("reference {}", r.value(r.reference)),
            );
        }
        let claimed = match r.side {
            ClaimSide::Within(_) => Some(r.reference),
            _ => r.claimed,
        };
        if let Some(c) = claimed.filter(|c| c.is_finite()) {
            diamond(
                svg,
                x(c),
                cy,
                &format!("the paper's claimed value: {}", r.value(c)),
            );
        }
        let (colour, _) = look(r.verdict);
        let e = r.measured;
        if e.lo.is_finite() && e.hi.is_finite() {
            let (l, h) = (xc(e.lo.min(e.hi)), xc(e.lo.max(e.hi)));
            let d = format!(
                "M{l} {cy}H{h}M{l} {t}V{b}M{h} {t}V{b}",
                l = n(l),
                h = n(h),
                cy = n(cy),
                t = n(cy - 5.0),
                b = n(cy + 5.0)
            );
            svg.leaf(
                "path",
                &[
                    ("d", &d),
                    ("stroke", colour),
                    ("stroke-width", "2.5"),
                    ("fill", "none"),
                ],
            );
        }
        let tip = format!(
            "{}: measured {} ({})",
            r.label,
            r.measured_text(),
            self.verdict_text(r.verdict)
        );
        if e.mean.is_finite() {
            marker(svg, r.verdict, xc(e.mean), cy, "claim-mark", &tip);
        } else {
            svg.text(
                (c.plot_l + c.plot_r) / 2.0,
                cy,
                "no data",
                &[
                    ("class", "claim-mark"),
                    ("text-anchor", "middle"),
                    ("dy", "0.32em"),
                    ("fill", "#888"),
                    ("font-style", "italic"),
                ],
                None,
            );
        }
        svg.close("g");
    }
}

/// The key under the rows: verdict markers, the region, the claimed value, the reference.
fn legend(svg: &mut Svg, y: f64, provisional: Option<&str>) {
    svg.open("g", &[("font-size", "11"), ("fill", "#222")]);
    let mut x = LABEL_X + 4.0;
    for v in [
        Verdict::Supported,
        Verdict::NotSupported,
        Verdict::Contradicted,
    ] {
        marker(svg, v, x + 5.0, y, "key", v.label());
        svg.text(x + 15.0, y, v.label(), &[("dy", "0.32em")], None);
        x += 30.0 + text_width(v.label(), 11.0);
    }
    svg.leaf(
        "rect",
        &[
            ("x", &n(x)),
            ("y", &n(y - 6.0)),
            ("width", "22"),
            ("height", "12"),
            ("fill", REGION),
        ],
    );
    let region = "region the claim puts the value in";
    svg.text(x + 28.0, y, region, &[("dy", "0.32em")], None);
    x += 40.0 + text_width(region, 11.0);
    diamond(svg, x + 6.0, y, "the paper's claimed value");
    let claimed = "paper's claimed value";
    svg.text(x + 16.0, y, claimed, &[("dy", "0.32em")], None);
    x += 28.0 + text_width(claimed, 11.0);
    svg.leaf(
        "line",
        &[
            ("x1", &n(x + 4.0)),
            ("x2", &n(x + 4.0)),
            ("y1", &n(y - 8.0)),
            ("y2", &n(y + 8.0)),
            ("stroke", "#444"),
            ("stroke-dasharray", "4 3"),
        ],
    );
    svg.text(x + 12.0, y, "reference", &[("dy", "0.32em")], None);
    svg.text(
        LABEL_X + 4.0,
        y + 24.0,
        "Bars: 95% CI of the mean over seeds. Hover a row for the claim in full.",
        &[("dy", "0.32em"), ("fill", "#57606a")],
        None,
    );
    if let Some(note) = provisional {
        let t = fit(note, W - 2.0 * LABEL_X - 8.0, 11.0);
        svg.text(
            LABEL_X + 4.0,
            y + 48.0,
            &t,
            &[
                ("dy", "0.32em"),
                ("font-weight", "600"),
                ("fill", "#8e1f0b"),
            ],
            (t != note).then_some(note),
        );
    }
    svg.close("g");
}
