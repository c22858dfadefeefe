#![warn(missing_docs)]

//! Self-contained HTML reports with inline SVG charts.
//!
//! The layer is data-driven: charts and tables take plain numbers and strings, so the run,
//! sweep and reproduce commands fill them from whatever metrics they compute.
//!
//! ```
//! use report::{Cell, LineChart, Page, Table};
//!
//! let chart = LineChart::new("Throughput per flow", "time (s)", "throughput (Mbit/s)")
//!     .series("tfrc 1", vec![(0.0, 1.2), (1.0, 1.4)])
//!     .step(true);
//! let mut page = Page::new("dumbbell");
//! page.section("Throughput").figure(&chart, "1 s bins");
//! page.section("Flows")
//!     .table(Table::new(["flow", "Mbit/s"]).row([Cell::new("tfrc 1"), Cell::num(1.3)]));
//! let html = page.render(); // or page.write(path)
//! assert_eq!(html.matches("<svg").count(), 1);
//! ```

pub mod charts;
pub mod forest;
pub mod html;
pub mod scale;
pub mod svg;
pub mod tables;
pub mod text;

#[cfg(test)]
mod tests;

pub use charts::{
    BarChart, BarSeries, Distribution, DistributionChart, DistributionKind, DistributionSeries,
    ErrorBarChart, ErrorPoint, ErrorSeries, LineChart, Reference, ScatterChart, ScatterPoint,
    ScatterSeries, Series, XValue,
};
pub use forest::{ClaimSide, ForestPlot, ForestRow};
pub use html::{Cell, CellClass, Page, Section, Table};
pub use scale::fmt_num;
pub use tables::{
    comparison_table, fmt_pct, fmt_pct_auto, verdict_table, ComparisonRow, Estimate, Verdict,
    VerdictRow, PERCENT,
};

/// Anything that renders to an inline SVG chart.
pub trait Chart {
    /// The chart's title.
    fn title(&self) -> &str;
    /// The chart as an SVG element (no XML declaration, no namespace: it is meant to be inlined
    /// in HTML; see [`standalone_svg`] for a file). Same input, byte-identical output.
    fn to_svg(&self) -> String;
}

/// Turns an inline chart into a standalone `.svg` file's content by adding the SVG namespace.
pub fn standalone_svg(inline: &str) -> String {
    match inline.strip_prefix("<svg") {
        Some(rest) => format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"{rest}\n"),
        None => inline.to_string(),
    }
}

/// Escapes text for HTML/XML content and attribute values (`&`, `<`, `>`, `"`, `'`), and replaces
/// characters XML forbids (C0 controls other than tab, newline, carriage return; U+FFFE/U+FFFF)
/// with U+FFFD so output is always well-formed.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
