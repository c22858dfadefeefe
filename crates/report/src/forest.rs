//! The claims figure (a forest plot): one row per claim with its measured mean and 95% CI, the
//! region where the claim puts the quantity shaded, the reference dashed, the paper's claimed
//! value as a hollow diamond, and the verdict as colour, marker shape and word.
//!
//! Claims measure different quantities in different units, so every row has its own scale:
//! the span of its interval, reference and claimed value, padded. The numbers are printed
//! beside each row, so no value has to be read off a scale.

use super::scale::fmt_num;
use super::svg::{fit, n, text_width, Svg};
use super::tables::{Estimate, Verdict};
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
    /// The claims, top to bottom.
    pub rows: Vec<ForestRow>,
}

impl ForestPlot {
    /// A plot of `rows`.
    pub fn new(title: impl Into<String>, rows: Vec<ForestRow>) -> Self {
        ForestPlot {
            title: title.into(),
            rows,
        }
    }
}

const W: f64 = 960.0;
const ROW: f64 = 30.0;
const GROUP_ROW: f64 = 26.0;
const LABEL_X: f64 = 12.0;
const PLOT_L: f64 = 262.0;
const PLOT_R: f64 = 632.0;
const TEXT_X: f64 = 642.0;
const VERDICT_X: f64 = 852.0;
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
    /// `0.93 [0.91, 0.95] kb/s`.
    fn measured_text(&self) -> String {
        let t = self.measured.text();
        if self.unit.is_empty() || !self.measured.mean.is_finite() {
            t
        } else {
            format!("{t} {}", self.unit)
        }
    }

    /// `> 0.9`, `< 0 (claimed −0.3)`, `= 2917 ± 291.7`.
    fn hypothesis(&self) -> String {
        match self.side {
            ClaimSide::Within(t) => {
                format!("= {} ± {}", fmt_num(self.reference), fmt_num(t.abs()))
            }
            ClaimSide::Above | ClaimSide::Below => {
                let sym = if self.side == ClaimSide::Above {
                    ">"
                } else {
                    "<"
                };
                match self.claimed {
                    Some(c) => {
                        format!("{sym} {} (claimed {})", fmt_num(self.reference), fmt_num(c))
                    }
                    None => format!("{sym} {}", fmt_num(self.reference)),
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

impl Chart for ForestPlot {
    fn title(&self) -> &str {
        &self.title
    }

    fn to_svg(&self) -> String {
        let groups = {
            let mut g = 0;
            let mut last: Option<&str> = None;
            for r in &self.rows {
                if !r.group.is_empty() && last != Some(r.group.as_str()) {
                    g += 1;
                }
                last = Some(r.group.as_str());
            }
            g
        };
        let top = 58.0;
        let body = self.rows.len() as f64 * ROW + groups as f64 * GROUP_ROW;
        let legend_y = top + body.max(ROW) + 22.0;
        let height = legend_y + 46.0;
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
            (PLOT_L + PLOT_R) / 2.0,
            48.0,
            "measured mean and 95% CI (each row its own scale)",
            &[("text-anchor", "middle")],
            None,
        );
        svg.text(TEXT_X, 48.0, "measured [95% CI]", &[], None);
        svg.text(VERDICT_X, 48.0, "verdict", &[], None);
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
        let mut last: Option<&str> = None;
        for (i, r) in self.rows.iter().enumerate() {
            if !r.group.is_empty() && last != Some(r.group.as_str()) {
                // Bold type runs wider than the estimate: leave a margin.
                let g = fit(&r.group, (W - 2.0 * LABEL_X) * 0.85, 12.0);
                svg.text(
                    LABEL_X,
                    y + GROUP_ROW - 8.0,
                    &g,
                    &[("font-weight", "600"), ("fill", "#222")],
                    (g != r.group).then_some(r.group.as_str()),
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
            last = Some(r.group.as_str());
            self.row(&mut svg, r, i, y);
            y += ROW;
        }
        legend(&mut svg, legend_y);
        svg.finish()
    }
}

impl ForestPlot {
    fn row(&self, svg: &mut Svg, r: &ForestRow, i: usize, y: f64) {
        let cy = y + ROW / 2.0;
        let (_, text_colour) = look(r.verdict);
        let desc = format!(
            "{}{}: {}\nclaim: {}\nmeasured: {}\nverdict: {}",
            if r.group.is_empty() { "" } else { &r.group },
            if r.group.is_empty() { "" } else { " " },
            r.label,
            r.hypothesis(),
            r.measured_text(),
            r.verdict.label()
        );
        let desc = if r.tooltip.is_empty() {
            desc
        } else {
            format!("{desc}\n{}", r.tooltip)
        };
        svg.open("g", &[("class", "claim-row")]);
        svg.tooltip(&desc);
        if i % 2 == 1 {
            svg.leaf(
                "rect",
                &[
                    ("x", "4"),
                    ("y", &n(y)),
                    ("width", &n(W - 8.0)),
                    ("height", &n(ROW)),
                    ("fill", "#f6f8fa"),
                ],
            );
        }
        let label = fit(&r.label, PLOT_L - LABEL_X - 10.0, 12.0);
        svg.text(
            LABEL_X,
            cy,
            &label,
            &[("dy", "0.32em"), ("fill", "#222")],
            None,
        );
        let measured = fit(&r.measured_text(), VERDICT_X - TEXT_X - 26.0, 11.0);
        svg.text(
            TEXT_X,
            cy,
            &measured,
            &[("dy", "0.32em"), ("font-size", "11"), ("fill", "#222")],
            None,
        );
        let verdict = r.verdict.label();
        let size = if text_width(verdict, 11.0) > W - VERDICT_X - 6.0 {
            "10"
        } else {
            "11"
        };
        svg.text(
            VERDICT_X,
            cy,
            verdict,
            &[
                ("dy", "0.32em"),
                ("font-size", size),
                ("font-weight", "600"),
                ("fill", text_colour),
            ],
            None,
        );
        let Some((d0, d1)) = r.domain() else {
            svg.text(
                (PLOT_L + PLOT_R) / 2.0,
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
        let x = |v: f64| PLOT_L + (v - d0) / (d1 - d0) * (PLOT_R - PLOT_L);
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
                ("x1", &n(PLOT_L)),
                ("x2", &n(PLOT_R)),
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
                &format!("reference {}", fmt_num(r.reference)),
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
                &format!("the paper's claimed value: {}", fmt_num(c)),
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
            r.verdict.label()
        );
        if e.mean.is_finite() {
            marker(svg, r.verdict, xc(e.mean), cy, "claim-mark", &tip);
        } else {
            svg.text(
                (PLOT_L + PLOT_R) / 2.0,
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
fn legend(svg: &mut Svg, y: f64) {
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
    svg.close("g");
}
