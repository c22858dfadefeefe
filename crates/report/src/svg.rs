//! A small hand-written SVG writer and the frame every chart shares (title, axes, grid, legend,
//! notes).
//!
//! Hand-written rather than `plotters` because reports must be one self-contained file: we need
//! full control over the markup (no embedded fonts, no external references, no ids that could
//! clash when many charts are inlined into one page, `<title>` tooltips) and byte-identical output
//! for identical input, and we need no font backend to measure text.

use std::fmt::Write as _;

use super::escape;
use super::scale::{format_tick, Scale, Ticks};

/// Width of every chart's view box, in SVG user units (pixels at 100% zoom).
pub const WIDTH: f64 = 720.0;
/// Height of the plotting area.
const PLOT_H: f64 = 280.0;
const FONT_STACK: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";

/// Twelve colours that stay apart under the common colour-vision deficiencies: the Okabe–Ito
/// set without its yellow (unreadable on white), then five of Paul Tol's colours. A unit test
/// checks that every pair stays apart under simulated protanopia, deuteranopia and tritanopia.
/// Series past the twelfth reuse them with a dash pattern.
pub const PALETTE: [&str; 12] = [
    "#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#332288",
    "#882255", "#999933", "#117733", "#661100",
];
const DASHES: [Option<&str>; 4] = [None, Some("7 3"), Some("2 2"), Some("9 3 2 3")];

/// How series `i` is drawn: a colour and an optional dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Stroke / fill colour.
    pub color: &'static str,
    /// SVG `stroke-dasharray`, if any.
    pub dash: Option<&'static str>,
}

/// The style of series number `i`.
pub fn style(i: usize) -> Style {
    Style {
        color: PALETTE[i % PALETTE.len()],
        dash: DASHES[(i / PALETTE.len()) % DASHES.len()],
    }
}

/// A coordinate or length: two decimals at most, no trailing zeros, never `-0`.
pub fn n(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Rough rendered width of one character at `size` px in a sans-serif font (wide for CJK and
/// emoji), so layout needs no font metrics.
fn char_width(c: char, size: f64) -> f64 {
    let u = c as u32;
    let em = if (0x1100..=0x115F).contains(&u)
        || (0x2E80..=0xA4CF).contains(&u)
        || (0xAC00..=0xD7A3).contains(&u)
        || (0xF900..=0xFAFF).contains(&u)
        || (0xFF00..=0xFF60).contains(&u)
        || u >= 0x1F300
    {
        1.0
    } else if "il.,:;'|!1 ".contains(c) {
        0.32
    } else if c.is_uppercase() || "mwMW%@".contains(c) {
        0.72
    } else {
        0.56
    };
    em * size
}

/// Rough rendered width of `s` at `size` px, from per-character estimates.
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().map(|c| char_width(c, size)).sum()
}

/// `s` cut to at most `max_chars` characters, ending in `…` when cut.
pub fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// `s` cut so that it renders no wider than `width` px at `size` px.
pub fn fit(s: &str, width: f64, size: f64) -> String {
    if text_width(s, size) <= width {
        return s.to_string();
    }
    let budget = width - char_width('…', size);
    let mut out = String::new();
    let mut used = 0.0;
    for c in s.chars() {
        used += char_width(c, size);
        if used > budget {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// An SVG document under construction. Every attribute value and text is escaped on the way in.
#[derive(Debug)]
pub struct Svg {
    buf: String,
}

impl Svg {
    /// Starts a `width`×`height` document whose accessible name and tooltip is `title`.
    pub fn new(width: f64, height: f64, title: &str) -> Self {
        let mut buf = String::with_capacity(16 * 1024);
        let _ = write!(
            buf,
            "<svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" \
             aria-label=\"{t}\" font-family=\"{f}\" font-size=\"12\">",
            w = n(width),
            h = n(height),
            t = escape(title),
            f = escape(FONT_STACK),
        );
        let _ = write!(buf, "<title>{}</title>", escape(title));
        let mut svg = Svg { buf };
        svg.leaf(
            "rect",
            &[
                ("width", &n(width)),
                ("height", &n(height)),
                ("fill", "#ffffff"),
            ],
        );
        svg
    }

    fn attrs(&mut self, attrs: &[(&str, &str)]) {
        for (k, v) in attrs {
            let _ = write!(self.buf, " {k}=\"{}\"", escape(v));
        }
    }

    /// `<tag attrs>`; pair with [`Svg::close`].
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.buf.push('<');
        self.buf.push_str(tag);
        self.attrs(attrs);
        self.buf.push('>');
    }

    /// `</tag>`.
    pub fn close(&mut self, tag: &str) {
        let _ = write!(self.buf, "</{tag}>");
    }

    /// `<tag attrs/>`.
    pub fn leaf(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.buf.push('<');
        self.buf.push_str(tag);
        self.attrs(attrs);
        self.buf.push_str("/>");
    }

    /// `<tag attrs><title>tooltip</title></tag>`: an element with a hover tooltip.
    pub fn leaf_tip(&mut self, tag: &str, attrs: &[(&str, &str)], tooltip: &str) {
        self.open(tag, attrs);
        self.tooltip(tooltip);
        self.close(tag);
    }

    /// A `<title>` child: the tooltip of the enclosing element.
    pub fn tooltip(&mut self, text: &str) {
        let _ = write!(self.buf, "<title>{}</title>", escape(text));
    }

    /// `<text>` at (x, y); `tooltip` is shown on hover (use it when `s` was shortened).
    pub fn text(&mut self, x: f64, y: f64, s: &str, attrs: &[(&str, &str)], tooltip: Option<&str>) {
        let (xs, ys) = (n(x), n(y));
        let mut all: Vec<(&str, &str)> = vec![("x", &xs), ("y", &ys)];
        all.extend_from_slice(attrs);
        self.open("text", &all);
        if let Some(t) = tooltip {
            self.tooltip(t);
        }
        self.buf.push_str(&escape(s));
        self.close("text");
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

/// How a legend entry's swatch looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swatch {
    /// A short line with a dot (line and error-bar series).
    Line,
    /// A filled square (bars, histograms).
    Box,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendItem {
    /// Series name.
    pub name: String,
    /// Series style.
    pub style: Style,
    /// Swatch shape.
    pub swatch: Swatch,
}

/// The horizontal axis of a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Numeric axis with its ticks; `log` for log10.
    Numeric {
        /// Ticks and domain.
        ticks: Ticks,
        /// Log scale?
        log: bool,
    },
    /// One band per label, left to right.
    Bands(Vec<String>),
}

/// What every chart has around its data.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Chart title.
    pub title: String,
    /// X axis label, with unit.
    pub x_label: String,
    /// Y axis label, with unit.
    pub y_label: String,
    /// X axis.
    pub x: XAxis,
    /// Y ticks and domain.
    pub y: Ticks,
    /// Log y?
    pub log_y: bool,
    /// Legend entries, in order.
    pub legend: Vec<LegendItem>,
    /// Short remarks printed under the legend (omitted values and the like).
    pub notes: Vec<String>,
    /// Whether there is nothing to plot (prints "no data" in the plot area).
    pub no_data: bool,
    /// Pixels kept free at both ends of a numeric x axis.
    pub x_inset: f64,
}

/// Where the data go: pixel rectangle and scales.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// Left edge of the plot area.
    pub left: f64,
    /// Right edge.
    pub right: f64,
    /// Top edge.
    pub top: f64,
    /// Bottom edge.
    pub bottom: f64,
    /// X scale for numeric axes.
    pub x: Option<Scale>,
    /// Number of bands for band axes (0 for numeric).
    pub bands: usize,
    /// Y scale.
    pub y: Scale,
}

impl Plot {
    /// Width of one band.
    pub fn band_width(&self) -> f64 {
        (self.right - self.left) / self.bands.max(1) as f64
    }

    /// Centre of band `i`.
    pub fn band_center(&self, i: usize) -> f64 {
        self.left + (i as f64 + 0.5) * self.band_width()
    }

    /// Pixel x of a numeric value, if the axis is numeric and the value showable.
    pub fn px(&self, v: f64) -> Option<f64> {
        self.x.and_then(|s| s.map(v))
    }

    /// Pixel y of a value, if showable.
    pub fn py(&self, v: f64) -> Option<f64> {
        self.y.map(v)
    }
}

const TICK_FONT: f64 = 11.0;
const LEGEND_ROW: f64 = 18.0;
const MAX_BAND_LABEL: usize = 28;

fn y_tick_labels(frame: &Frame) -> Vec<String> {
    frame
        .y
        .values
        .iter()
        .map(|&v| {
            if frame.log_y {
                format_tick(v, 0.0)
            } else {
                format_tick(v, frame.y.step)
            }
        })
        .collect()
}

/// Lays out legend entries in rows no wider than `width`; returns (x offset, row) per entry.
fn legend_layout(items: &[LegendItem], width: f64) -> (Vec<(f64, usize, String)>, usize) {
    let mut out = Vec::with_capacity(items.len());
    let (mut x, mut row) = (0.0, 0);
    for it in items {
        let label = fit(&it.name, width - 30.0, 12.0);
        let w = 26.0 + text_width(&label, 12.0) + 18.0;
        if x > 0.0 && x + w > width {
            x = 0.0;
            row += 1;
        }
        out.push((x, row, label));
        x += w;
    }
    let rows = if items.is_empty() { 0 } else { row + 1 };
    (out, rows)
}

/// Renders `frame`, calling `draw` to add the data between grid and axes.
pub fn render(frame: &Frame, draw: impl FnOnce(&mut Svg, &Plot)) -> String {
    let y_labels = y_tick_labels(frame);
    let ylw = y_labels
        .iter()
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let left = (30.0 + ylw + 8.0).max(52.0);
    let right = WIDTH - 20.0;
    let top = 44.0;
    let bottom = top + PLOT_H;
    let plot_w = right - left;
    let inset = frame.x_inset.clamp(0.0, plot_w / 4.0);

    // X tick labels and how tall they make the axis.
    let (x_labels, rotate, x_axis_h): (Vec<(f64, String, String)>, bool, f64) = match &frame.x {
        XAxis::Numeric { ticks, log } => {
            let scale = Scale {
                d0: ticks.lo,
                d1: ticks.hi,
                r0: left + inset,
                r1: right - inset,
                log: *log,
            };
            let labels = ticks
                .values
                .iter()
                .filter_map(|&v| {
                    let l = if *log {
                        format_tick(v, 0.0)
                    } else {
                        format_tick(v, ticks.step)
                    };
                    scale.map(v).map(|p| (p, l.clone(), l))
                })
                .collect();
            (labels, false, 22.0)
        }
        XAxis::Bands(names) => {
            let bw = plot_w / names.len().max(1) as f64;
            let labels: Vec<(f64, String, String)> = names
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        left + (i as f64 + 0.5) * bw,
                        truncate(s, MAX_BAND_LABEL),
                        s.clone(),
                    )
                })
                .collect();
            let maxw = labels
                .iter()
                .map(|l| text_width(&l.1, TICK_FONT))
                .fold(0.0, f64::max);
            if maxw > bw - 6.0 {
                (labels, true, maxw.min(190.0) * 0.58 + 22.0)
            } else {
                (labels, false, 22.0)
            }
        }
    };
    let x_title_h = if frame.x_label.is_empty() { 0.0 } else { 20.0 };
    let (legend, legend_rows) = legend_layout(&frame.legend, WIDTH - 2.0 * 20.0);
    let legend_top = bottom + x_axis_h + x_title_h + 8.0;
    let notes_top = legend_top + legend_rows as f64 * LEGEND_ROW + 4.0;
    let height = notes_top + frame.notes.len() as f64 * 16.0 + 6.0;

    let mut svg = Svg::new(WIDTH, height, &frame.title);
    // Title.
    let title = fit(&frame.title, WIDTH - 24.0, 15.0);
    let tip = (title != frame.title).then_some(frame.title.as_str());
    svg.text(
        WIDTH / 2.0,
        24.0,
        &title,
        &[
            ("text-anchor", "middle"),
            ("font-size", "15"),
            ("font-weight", "600"),
            ("fill", "#222"),
        ],
        tip,
    );

    let y_scale = Scale {
        d0: frame.y.lo,
        d1: frame.y.hi,
        r0: bottom,
        r1: top,
        log: frame.log_y,
    };
    let (x_scale, bands) = match &frame.x {
        XAxis::Numeric { ticks, log } => (
            Some(Scale {
                d0: ticks.lo,
                d1: ticks.hi,
                r0: left + inset,
                r1: right - inset,
                log: *log,
            }),
            0,
        ),
        XAxis::Bands(names) => (None, names.len()),
    };
    let plot = Plot {
        left,
        right,
        top,
        bottom,
        x: x_scale,
        bands,
        y: y_scale,
    };

    // Grid and y tick labels.
    svg.open("g", &[("stroke", "#e3e3e3"), ("stroke-width", "1")]);
    for &v in &frame.y.values {
        if let Some(p) = y_scale.map(v) {
            svg.leaf(
                "line",
                &[
                    ("x1", &n(left)),
                    ("x2", &n(right)),
                    ("y1", &n(p)),
                    ("y2", &n(p)),
                ],
            );
        }
    }
    if x_scale.is_some() {
        for (p, _, _) in &x_labels {
            svg.leaf(
                "line",
                &[
                    ("x1", &n(*p)),
                    ("x2", &n(*p)),
                    ("y1", &n(top)),
                    ("y2", &n(bottom)),
                ],
            );
        }
    }
    svg.close("g");
    svg.open("g", &[("fill", "#444"), ("font-size", "11")]);
    for (&v, l) in frame.y.values.iter().zip(&y_labels) {
        if let Some(p) = y_scale.map(v) {
            svg.text(
                left - 6.0,
                p,
                l,
                &[("text-anchor", "end"), ("dy", "0.32em")],
                None,
            );
        }
    }
    for (p, l, full) in &x_labels {
        let tip = (l != full).then_some(full.as_str());
        if rotate {
            let y = bottom + 14.0;
            let tr = format!("rotate(-35 {} {})", n(*p), n(y));
            svg.text(*p, y, l, &[("text-anchor", "end"), ("transform", &tr)], tip);
        } else {
            svg.text(*p, bottom + 16.0, l, &[("text-anchor", "middle")], tip);
        }
    }
    svg.close("g");

    if frame.no_data {
        svg.text(
            (left + right) / 2.0,
            (top + bottom) / 2.0,
            "no data",
            &[
                ("text-anchor", "middle"),
                ("fill", "#888"),
                ("font-style", "italic"),
                ("font-size", "14"),
            ],
            None,
        );
    } else {
        // The plot box and the scales, for the page script's pointer read-out.
        let scale_attr = |s: &Scale| {
            (s.d0.is_finite() && s.d1.is_finite()).then(|| {
                format!(
                    "{:e} {:e} {} {} {}",
                    s.d0,
                    s.d1,
                    n(s.r0),
                    n(s.r1),
                    u8::from(s.log)
                )
            })
        };
        let bx = format!("{} {} {} {}", n(left), n(top), n(right), n(bottom));
        let mut attrs: Vec<(&str, &str)> = vec![("class", "plot"), ("data-box", &bx)];
        let ys = scale_attr(&y_scale);
        if let Some(ys) = &ys {
            attrs.push(("data-y", ys));
        }
        let xs = x_scale.as_ref().and_then(scale_attr);
        if let Some(xs) = &xs {
            attrs.push(("data-x", xs));
        }
        svg.open("g", &attrs);
        draw(&mut svg, &plot);
        svg.close("g");
    }

    // Axes on top of the data.
    let axis = format!("M{} {}V{}H{}", n(left), n(top), n(bottom), n(right));
    svg.leaf(
        "path",
        &[
            ("d", &axis),
            ("fill", "none"),
            ("stroke", "#333"),
            ("stroke-width", "1"),
        ],
    );
    if !frame.x_label.is_empty() {
        let l = fit(&frame.x_label, plot_w, 12.0);
        let tip = (l != frame.x_label).then_some(frame.x_label.as_str());
        svg.text(
            (left + right) / 2.0,
            bottom + x_axis_h + 14.0,
            &l,
            &[("text-anchor", "middle"), ("fill", "#222")],
            tip,
        );
    }
    if !frame.y_label.is_empty() {
        let l = fit(&frame.y_label, PLOT_H, 12.0);
        let tip = (l != frame.y_label).then_some(frame.y_label.as_str());
        let (x, y) = (14.0, (top + bottom) / 2.0);
        let tr = format!("rotate(-90 {} {})", n(x), n(y));
        svg.text(
            x,
            y,
            &l,
            &[
                ("text-anchor", "middle"),
                ("transform", &tr),
                ("fill", "#222"),
            ],
            tip,
        );
    }

    // Legend, centred row by row.
    if !legend.is_empty() {
        let mut row_w = vec![0.0f64; legend_rows];
        for (x, row, label) in &legend {
            row_w[*row] = row_w[*row].max(x + 26.0 + text_width(label, 12.0));
        }
        svg.open("g", &[("font-size", "12"), ("fill", "#222")]);
        for (i, (it, (x, row, label))) in frame.legend.iter().zip(&legend).enumerate() {
            let x = (WIDTH - row_w[*row]) / 2.0 + x;
            let y = legend_top + *row as f64 * LEGEND_ROW + 6.0;
            let tip = (*label != it.name).then_some(it.name.as_str());
            // A legend entry names its series: the page script hides the series on a click.
            let idx = i.to_string();
            svg.open("g", &[("class", "lg"), ("data-s", &idx)]);
            swatch(&mut svg, x, y, it);
            svg.text(x + 26.0, y, label, &[("dy", "0.32em")], tip);
            svg.close("g");
        }
        svg.close("g");
    }
    for (i, note) in frame.notes.iter().enumerate() {
        let l = fit(note, WIDTH - left - 20.0, 11.0);
        svg.text(
            left,
            notes_top + i as f64 * 16.0 + 8.0,
            &l,
            &[
                ("font-size", "11"),
                ("fill", "#666"),
                ("font-style", "italic"),
            ],
            (l != *note).then_some(note.as_str()),
        );
    }
    svg.finish()
}

fn swatch(svg: &mut Svg, x: f64, y: f64, it: &LegendItem) {
    match it.swatch {
        Swatch::Line => {
            let mut a = vec![
                ("x1", n(x)),
                ("x2", n(x + 20.0)),
                ("y1", n(y)),
                ("y2", n(y)),
                ("stroke", it.style.color.to_string()),
                ("stroke-width", "2".to_string()),
            ];
            if let Some(d) = it.style.dash {
                a.push(("stroke-dasharray", d.to_string()));
            }
            let a: Vec<(&str, &str)> = a.iter().map(|(k, v)| (*k, v.as_str())).collect();
            svg.leaf("line", &a);
            svg.leaf(
                "circle",
                &[
                    ("cx", &n(x + 10.0)),
                    ("cy", &n(y)),
                    ("r", "3"),
                    ("fill", it.style.color),
                ],
            );
        }
        Swatch::Box => {
            svg.leaf(
                "rect",
                &[
                    ("x", &n(x + 3.0)),
                    ("y", &n(y - 6.0)),
                    ("width", "14"),
                    ("height", "12"),
                    ("fill", it.style.color),
                    ("fill-opacity", "0.85"),
                ],
            );
        }
    }
}

/// Opens the group of series `i`'s marks (close it with `svg.close("g")`): the legend entry with
/// the same index hides and shows it.
pub fn open_series(svg: &mut Svg, i: usize, extra: &[(&str, &str)]) {
    let idx = i.to_string();
    let mut a: Vec<(&str, &str)> = vec![("class", "series"), ("data-s", &idx)];
    a.extend_from_slice(extra);
    svg.open("g", &a);
}

/// Stroke attributes for series style `s` at width `w`.
pub fn stroke_attrs(s: Style, w: &'static str) -> Vec<(&'static str, &'static str)> {
    let mut a = vec![("fill", "none"), ("stroke", s.color), ("stroke-width", w)];
    if let Some(d) = s.dash {
        a.push(("stroke-dasharray", d));
    }
    a.push(("stroke-linejoin", "round"));
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_short_and_never_negative_zero() {
        assert_eq!(n(1.0), "1");
        assert_eq!(n(1.256), "1.26");
        assert_eq!(n(-0.001), "0");
        assert_eq!(n(f64::NAN), "0");
        assert_eq!(n(-12.5), "-12.5");
    }

    #[test]
    fn styles_cycle_colour_then_dash() {
        assert_eq!(style(0).dash, None);
        assert_eq!(style(12).color, style(0).color);
        assert_ne!(style(12).dash, style(0).dash);
        let first: Vec<&str> = (0..12).map(|i| style(i).color).collect();
        for (i, a) in first.iter().enumerate() {
            assert!(
                !first[i + 1..].contains(a),
                "colour {a} repeats within 12 series"
            );
        }
        assert_ne!(style(1).color, style(0).color);
    }

    /// CIELAB (D65) of an sRGB colour after a colour-vision-deficiency matrix applied in linear
    /// RGB (Machado, Oliveira & Fernandes 2009, severity 1).
    fn lab_seen(hex: &str, m: &[[f64; 3]; 3]) -> [f64; 3] {
        let lin = |i: usize| {
            let c = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let c = [lin(1), lin(3), lin(5)];
        let s: Vec<f64> = (0..3)
            .map(|r| (0..3).map(|j| m[r][j] * c[j]).sum::<f64>().clamp(0.0, 1.0))
            .collect();
        let x = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2];
        let y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2];
        let z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2];
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    #[test]
    fn palette_stays_distinct_under_colour_vision_deficiencies() {
        let vision: [(&str, [[f64; 3]; 3]); 4] = [
            (
                "normal",
                [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            ),
            (
                "protanopia",
                [
                    [0.152286, 1.052583, -0.204868],
                    [0.114503, 0.786281, 0.099216],
                    [-0.003882, -0.048116, 1.051998],
                ],
            ),
            (
                "deuteranopia",
                [
                    [0.367322, 0.860646, -0.227968],
                    [0.280085, 0.672501, 0.047413],
                    [-0.011820, 0.042940, 0.968881],
                ],
            ),
            (
                "tritanopia",
                [
                    [1.255528, -0.076749, -0.178779],
                    [-0.078411, 0.930809, 0.147602],
                    [0.004733, 0.691367, 0.303900],
                ],
            ),
        ];
        for (name, m) in &vision {
            let labs: Vec<[f64; 3]> = PALETTE.iter().map(|h| lab_seen(h, m)).collect();
            for i in 0..labs.len() {
                for j in i + 1..labs.len() {
                    let d = (0..3)
                        .map(|k| (labs[i][k] - labs[j][k]).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    // ΔE*76 ≥ 12: several times the just-noticeable difference (≈ 2.3), so two
                    // lines read as different at a glance, not only side by side.
                    assert!(
                        d >= 12.0,
                        "{name}: {} and {} are only ΔE {d:.1} apart",
                        PALETTE[i],
                        PALETTE[j]
                    );
                }
            }
        }
    }

    #[test]
    fn fitting_text_cuts_with_ellipsis() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 4), "abc…");
        let long = "x".repeat(200);
        let f = fit(&long, 100.0, 12.0);
        assert!(f.ends_with('…'));
        assert!(text_width(&f, 12.0) <= 100.0 + 1e-9);
        assert!(text_width("漢字", 10.0) > text_width("ab", 10.0));
        // Linear time: a pathological label is cut at once.
        let huge = fit(&"y".repeat(1_000_000), 50.0, 12.0);
        assert!(huge.chars().count() < 20 && huge.ends_with('…'));
    }

    #[test]
    fn writer_escapes_attributes_and_text() {
        let mut s = Svg::new(10.0, 10.0, "a<b>&\"c\"");
        s.text(1.0, 2.0, "x < y & z", &[("fill", "\"red\"")], Some("<tip>"));
        let out = s.finish();
        assert!(out.contains("aria-label=\"a&lt;b&gt;&amp;&quot;c&quot;\""));
        assert!(out.contains(">x &lt; y &amp; z</text>"));
        assert!(out.contains("fill=\"&quot;red&quot;\""));
        assert!(out.contains("<title>&lt;tip&gt;</title>"));
        assert!(!out.contains("<tip>"));
    }
}
