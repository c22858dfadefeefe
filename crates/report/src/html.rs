//! HTML assembly: a [`Page`] of [`Section`]s holding paragraphs, preformatted text, tables,
//! figures and links, rendered as one self-contained file.
//!
//! Self-contained means: inline CSS, inline SVG, one small inline script (pinned by its hash;
//! the page is complete without it), no fonts or other resources, and a
//! Content-Security-Policy that forbids the browser to fetch anything, so a report opened from
//! disk never touches the network. All text is escaped; charts are the only markup inserted, and
//! they can only come from this module's own [`Chart`] implementations.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::escape;
use super::scale::fmt_num;
use super::Chart;

/// Stylesheet shared by every report. Colours of verdict classes match the chart palette's
/// meaning (green good, vermillion bad, amber undecided) and every verdict also carries a word
/// and a symbol, so colour is never the only signal.
///
/// The page uses the window's width: figures sit in a grid of columns at least 540 px wide (two
/// side by side on a 1,400 px window, one on a phone), tables take the full width and wrap their
/// cells between words rather than hiding columns behind a scrollbar; on windows wider than
/// 900 px a heading never breaks inside a word (a column is at least as wide as its heading's
/// longest word); on narrower ones headings and numbers do, where a wide table would not fit
/// otherwise; preformatted text wraps.
const CSS: &str = "\
:root{color-scheme:light}\
*{box-sizing:border-box}\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;\
margin:0 auto;max-width:2000px;padding:24px clamp(10px,2.5vw,40px) 64px;color:#1f2328;\
background:#fff;line-height:1.5;overflow-wrap:break-word}\
h1{font-size:1.75rem;margin:.2em 0 .5em}\
h2{font-size:1.35rem;margin:2em 0 .6em;padding-bottom:.2em;border-bottom:1px solid #d8dee4}\
h3{font-size:1.12rem;margin:1.6em 0 .5em}\
h4{font-size:1rem;margin:1.4em 0 .4em}\
p,ul,.note{max-width:110ch}\
a{color:#0063a6}\
nav.toc{background:#f6f8fa;border:1px solid #d8dee4;border-radius:6px;padding:.6em 1.2em;margin:1em 0 2em}\
nav.toc ol{margin:.2em 0;padding-left:1.4em;columns:2 22em}\
nav.toc>strong{display:block;margin-bottom:.2em}\
pre{background:#f6f8fa;border:1px solid #d8dee4;border-radius:6px;padding:.8em 1em;\
white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85rem;line-height:1.45}\
.table-wrap{overflow-x:auto;margin:1em 0}\
table{border-collapse:collapse;font-size:.9rem;width:100%}\
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}\
th,td{border:1px solid #d0d7de;padding:.35em .6em;text-align:left;vertical-align:top;\
overflow-wrap:break-word}\
thead th{background:#eef2f6;overflow-wrap:normal;word-break:normal;hyphens:manual}\
tbody tr:nth-child(even){background:#fafbfc}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
@media (max-width:1100px){table{font-size:.8rem}th,td{padding:.25em .35em}}\
@media (max-width:900px){table{font-size:.74rem}th,td{padding:.2em .25em}td.num,thead th{overflow-wrap:anywhere}}\
td.pass,td.supported{background:#dcf3e3;color:#0a5a1f;font-weight:600}\
td.fail,td.contradicted{background:#fbe1dc;color:#8e1f0b;font-weight:600}\
td.not-supported,td.warn{background:#fff2cc;color:#664b00;font-weight:600}\
td.muted{color:#6e7781}\
td details summary{cursor:pointer}\
td details[open] summary{color:#57606a}\
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,540px),1fr));\
gap:8px 28px;margin:1.2em 0}\
figure{margin:0;min-width:0}\
figure.wide{grid-column:1/-1}\
figure svg{display:block;width:100%;height:auto}\
figure.wide svg{max-width:1400px}\
figure svg .lg{cursor:pointer}\
figure svg .lg.off{opacity:.35}\
figcaption{font-size:.9rem;color:#57606a;margin-top:.4em}\
.note{border-left:4px solid #e69f00;background:#fff8e6;padding:.5em 1em;margin:1em 0}\
ul.links{padding-left:1.4em}\
.tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #999;\
border-radius:4px;padding:.2em .5em;font-size:.8rem;max-width:420px;white-space:pre-line;\
box-shadow:0 1px 4px rgba(0,0,0,.2);display:none;z-index:10}\
";

/// The one script of a report, inline: hover values (the tooltip of the mark under the
/// pointer, and the pointer's position in data units), click a legend entry to hide or show its
/// series, drag a box on a chart to zoom into it and double-click to zoom out. It only adds
/// listeners: without scripts every chart is the same complete picture. The CSP admits exactly
/// this text by its hash ([`SCRIPT_SHA256`]), and nothing else.
pub const SCRIPT: &str = r#"(()=>{
const tip=document.createElement('div');tip.className='tip';document.body.appendChild(tip);
const f=v=>{const a=Math.abs(v);return a!==0&&(a>=1e5||a<1e-3)?v.toExponential(2):String(+v.toPrecision(4));};
const inv=(a,p)=>{const t=(p-a[2])/(a[3]-a[2]);return a[4]?Math.exp(Math.log(a[0])+t*(Math.log(a[1])-Math.log(a[0]))):a[0]+t*(a[1]-a[0]);};
const num=s=>s?s.split(' ').map(Number):null;
for(const svg of document.querySelectorAll('figure svg')){
const vb=svg.getAttribute('viewBox');const plot=svg.querySelector('g.plot');
const box=plot?num(plot.dataset.box):null,xs=plot?num(plot.dataset.x):null,ys=plot?num(plot.dataset.y):null;
for(const it of svg.querySelectorAll('.lg')){it.addEventListener('click',()=>{
const off=it.classList.toggle('off');
for(const g of svg.querySelectorAll('g.series[data-s="'+it.dataset.s+'"]'))g.style.display=off?'none':'';});}
const at=e=>{const p=svg.createSVGPoint();p.x=e.clientX;p.y=e.clientY;return p.matrixTransform(svg.getScreenCTM().inverse());};
let start=null,rect=null;
svg.addEventListener('mousemove',e=>{const p=at(e);const lines=[];
let el=e.target;while(el&&el!==svg){const t=el.querySelector(':scope>title');if(t){lines.push(t.textContent);break;}el=el.parentNode;}
if(box&&p.x>=box[0]&&p.x<=box[2]&&p.y>=box[1]&&p.y<=box[3]){const c=[];
if(xs)c.push('x = '+f(inv(xs,p.x)));if(ys)c.push('y = '+f(inv(ys,p.y)));if(c.length)lines.push(c.join(', '));}
if(rect&&start){const x=Math.min(start.x,p.x),y=Math.min(start.y,p.y);
rect.setAttribute('x',x);rect.setAttribute('y',y);rect.setAttribute('width',Math.abs(p.x-start.x));rect.setAttribute('height',Math.abs(p.y-start.y));}
if(lines.length){tip.textContent=lines.join('\n');tip.style.display='block';
tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+14)+'px';}else tip.style.display='none';});
svg.addEventListener('mouseleave',()=>{tip.style.display='none';if(rect){rect.remove();rect=null;start=null;}});
svg.addEventListener('mousedown',e=>{if(e.button!==0||e.target.closest('.lg'))return;e.preventDefault();start=at(e);
rect=document.createElementNS(svg.namespaceURI,'rect');rect.setAttribute('fill','rgba(0,114,178,.12)');
rect.setAttribute('stroke','#0072B2');rect.setAttribute('stroke-dasharray','4 3');svg.appendChild(rect);});
svg.addEventListener('mouseup',e=>{if(!rect)return;const p=at(e);const w=Math.abs(p.x-start.x),h=Math.abs(p.y-start.y);
const x=Math.min(p.x,start.x),y=Math.min(p.y,start.y);rect.remove();rect=null;start=null;
if(w>8&&h>8)svg.setAttribute('viewBox',x+' '+y+' '+w+' '+h);});
svg.addEventListener('dblclick',()=>svg.setAttribute('viewBox',vb));}
})();"#;

/// Base64 of the SHA-256 of [`SCRIPT`], for the Content-Security-Policy (a unit test checks it).
pub const SCRIPT_SHA256: &str = "YVVMzYTABioTr7lFNkfdjElsdPZ7OnkJ/kqEGfLlMG0=";

/// The policy that keeps a report offline: nothing may be fetched; inline styles, the report's
/// own script (by hash) and the `data:` favicon (which stops the browser asking for
/// `/favicon.ico`) are allowed.
fn csp() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_SHA256}'; \
         img-src data:"
    )
}

/// What a table cell means, for styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellClass {
    /// A number: right-aligned, tabular digits.
    Num,
    /// A check that passed (green).
    Pass,
    /// A check that failed (red).
    Fail,
    /// A claim the measurements support (green).
    Supported,
    /// A claim the measurements do not support (amber).
    NotSupported,
    /// A claim the measurements contradict (red).
    Contradicted,
    /// Something to look at (amber).
    Warn,
    /// De-emphasised text (grey).
    Muted,
}

impl CellClass {
    /// The CSS class name.
    pub fn css(self) -> &'static str {
        match self {
            CellClass::Num => "num",
            CellClass::Pass => "pass",
            CellClass::Fail => "fail",
            CellClass::Supported => "supported",
            CellClass::NotSupported => "not-supported",
            CellClass::Contradicted => "contradicted",
            CellClass::Warn => "warn",
            CellClass::Muted => "muted",
        }
    }
}

/// One table cell: text, and optionally a style class, a hover tooltip and a link target.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The text shown.
    pub text: String,
    /// Style class.
    pub class: Option<CellClass>,
    /// Hover tooltip.
    pub title: Option<String>,
    /// Link target (relative path or `#anchor`); the text becomes a link.
    pub href: Option<String>,
    /// Fold text longer than this many characters: its start shows, a click opens the rest.
    pub fold: Option<usize>,
}

impl Cell {
    /// A plain text cell.
    pub fn new(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            class: None,
            title: None,
            href: None,
            fold: None,
        }
    }

    /// A number formatted for people (see [`fmt_num`]), right-aligned.
    pub fn num(v: f64) -> Self {
        Cell::new(fmt_num(v)).class(CellClass::Num)
    }

    /// Sets the style class.
    pub fn class(mut self, class: CellClass) -> Self {
        self.class = Some(class);
        self
    }

    /// Sets a hover tooltip.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Folds the text when it is longer than `chars` characters (a `<details>` element whose
    /// summary is the text's start), so long prose does not stretch its row.
    pub fn fold(mut self, chars: usize) -> Self {
        self.fold = Some(chars);
        self
    }

    /// Makes the text a link to `href`.
    pub fn link(mut self, href: impl Into<String>) -> Self {
        self.href = Some(href.into());
        self
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::new(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::new(s)
    }
}

impl From<&String> for Cell {
    fn from(s: &String) -> Self {
        Cell::new(s.clone())
    }
}

impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::num(v)
    }
}

/// A table: header row, body rows, optional caption. Rows shorter than the header are padded
/// with empty cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Caption shown above the table.
    pub caption: Option<String>,
    /// Column headings.
    pub header: Vec<String>,
    /// Body rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column headings and no rows.
    pub fn new(header: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Table {
            caption: None,
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Sets the caption.
    pub fn caption(mut self, caption: impl Into<String>) -> Self {
        self.caption = Some(caption.into());
        self
    }

    /// Adds a row (builder style).
    pub fn row(mut self, cells: impl IntoIterator<Item = impl Into<Cell>>) -> Self {
        self.push_row(cells);
        self
    }

    /// Adds a row (in place, for loops).
    pub fn push_row(&mut self, cells: impl IntoIterator<Item = impl Into<Cell>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    fn render(&self, out: &mut String) {
        out.push_str("<div class=\"table-wrap\"><table>");
        if let Some(c) = &self.caption {
            let _ = write!(out, "<caption>{}</caption>", escape(c));
        }
        if !self.header.is_empty() {
            out.push_str("<thead><tr>");
            for h in &self.header {
                let _ = write!(out, "<th scope=\"col\">{}</th>", escape(h));
            }
            out.push_str("</tr></thead>");
        }
        out.push_str("<tbody>");
        for row in &self.rows {
            out.push_str("<tr>");
            for cell in row {
                render_cell(cell, out);
            }
            for _ in row.len()..self.header.len() {
                out.push_str("<td></td>");
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table></div>\n");
    }
}

fn render_cell(cell: &Cell, out: &mut String) {
    out.push_str("<td");
    if let Some(c) = cell.class {
        let _ = write!(out, " class=\"{}\"", c.css());
    }
    if let Some(t) = &cell.title {
        let _ = write!(out, " title=\"{}\"", escape(t));
    }
    out.push('>');
    match (&cell.href, cell.fold) {
        (Some(h), _) => {
            let _ = write!(out, "<a href=\"{}\">{}</a>", escape(h), escape(&cell.text));
        }
        (None, Some(n)) if cell.text.chars().count() > n => {
            let cut = cell
                .text
                .char_indices()
                .nth(n)
                .map_or(cell.text.len(), |(i, _)| i);
            // Break at the last space before the limit, so words stay whole.
            let cut = cell.text[..cut]
                .rfind(' ')
                .filter(|&i| i > n / 2)
                .unwrap_or(cut);
            let _ = write!(
                out,
                "<details><summary>{}…</summary>{}</details>",
                escape(cell.text[..cut].trim_end()),
                escape(&cell.text)
            );
        }
        (None, _) => out.push_str(&escape(&cell.text)),
    }
    out.push_str("</td>");
}

#[derive(Debug, Clone, PartialEq)]
enum Block {
    Paragraph(String),
    Pre(String),
    Note(String),
    Table(Table),
    Figure {
        svg: String,
        caption: String,
        wide: bool,
    },
    Links(Vec<(String, String)>),
}

/// A headed part of a page; may hold subsections (up to three levels are styled).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    heading: String,
    blocks: Vec<Block>,
    subsections: Vec<Section>,
}

impl Section {
    fn new(heading: impl Into<String>) -> Self {
        Section {
            heading: heading.into(),
            blocks: Vec::new(),
            subsections: Vec::new(),
        }
    }

    /// Adds a paragraph of plain text.
    pub fn paragraph(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Paragraph(text.into()));
        self
    }

    /// Adds preformatted text (e.g. the scenario TOML), shown verbatim in a monospace box.
    pub fn pre(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Pre(text.into()));
        self
    }

    /// Adds a highlighted remark (e.g. "no TFRC flows in this scenario").
    pub fn note(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Note(text.into()));
        self
    }

    /// Adds a table.
    pub fn table(&mut self, table: Table) -> &mut Self {
        self.blocks.push(Block::Table(table));
        self
    }

    /// Adds a chart with a caption below it.
    pub fn figure(&mut self, chart: &dyn Chart, caption: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Figure {
            svg: chart.to_svg(),
            caption: caption.into(),
            wide: false,
        });
        self
    }

    /// Adds a chart that spans the page's whole width (figures otherwise share a row when the
    /// window is wide enough), e.g. a page's headline figure.
    pub fn wide_figure(&mut self, chart: &dyn Chart, caption: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Figure {
            svg: chart.to_svg(),
            caption: caption.into(),
            wide: true,
        });
        self
    }

    /// Adds a bulleted list of links `(href, text)`.
    pub fn links<H: Into<String>, T: Into<String>>(
        &mut self,
        links: impl IntoIterator<Item = (H, T)>,
    ) -> &mut Self {
        self.blocks.push(Block::Links(
            links
                .into_iter()
                .map(|(h, t)| (h.into(), t.into()))
                .collect(),
        ));
        self
    }

    /// Adds a subsection and returns it.
    pub fn subsection(&mut self, heading: impl Into<String>) -> &mut Section {
        self.subsections.push(Section::new(heading));
        let last = self.subsections.len() - 1;
        &mut self.subsections[last]
    }
}

/// A whole report page.
///
/// ```
/// use report::{LineChart, Page};
///
/// let chart = LineChart::new("Queue", "time (s)", "packets").series("bottleneck", vec![(0.0, 3.0)]);
/// let mut page = Page::new("Scenario dumbbell-4");
/// page.intro().paragraph("Four TFRC flows share a 10 Mbit/s bottleneck.");
/// page.section("Scenario").pre("[[flow]]\nkind = \"tfrc\"");
/// page.section("Queues").figure(&chart, "Occupancy of the bottleneck queue.");
/// let dir = std::env::temp_dir().join("tfrclab-doc-page");
/// page.write(&dir.join("report.html")).unwrap();
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    title: String,
    intro: Section,
    sections: Vec<Section>,
    toc: Option<bool>,
}

impl Page {
    /// An empty page with this title (also its `<h1>`).
    pub fn new(title: impl Into<String>) -> Self {
        let title = title.into();
        Page {
            intro: Section::new(title.clone()),
            title,
            sections: Vec::new(),
            toc: None,
        }
    }

    /// The content between the title and the first section.
    pub fn intro(&mut self) -> &mut Section {
        &mut self.intro
    }

    /// Adds a top-level section and returns it.
    pub fn section(&mut self, heading: impl Into<String>) -> &mut Section {
        self.sections.push(Section::new(heading));
        let last = self.sections.len() - 1;
        &mut self.sections[last]
    }

    /// Forces the table of contents on or off (default: on when there are three or more
    /// sections, or any subsection).
    pub fn toc(&mut self, on: bool) -> &mut Self {
        self.toc = Some(on);
        self
    }

    /// The complete HTML document.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(64 * 1024);
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        let _ = writeln!(
            out,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            escape(&csp())
        );
        out.push_str("<link rel=\"icon\" href=\"data:,\">\n");
        let _ = writeln!(out, "<title>{}</title>", escape(&self.title));
        let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
        let _ = writeln!(out, "<header><h1>{}</h1></header>", escape(&self.title));
        render_blocks(&self.intro.blocks, &mut out);
        let ids: Vec<Ids> = self
            .sections
            .iter()
            .enumerate()
            .map(|(i, s)| ids(s, &format!("s{}", i + 1)))
            .collect();
        let want_toc = self.toc.unwrap_or(
            self.sections.len() >= 3 || self.sections.iter().any(|s| !s.subsections.is_empty()),
        );
        if want_toc && !self.sections.is_empty() {
            out.push_str("<nav class=\"toc\"><strong>Contents</strong><ol>");
            for (s, id) in self.sections.iter().zip(&ids) {
                toc_entry(s, id, 0, &mut out);
            }
            out.push_str("</ol></nav>\n");
        }
        out.push_str("<main>\n");
        for (s, id) in self.sections.iter().zip(&ids) {
            render_section(s, id, 2, &mut out);
        }
        out.push_str("</main>\n");
        let _ = writeln!(out, "<script>{SCRIPT}</script>");
        out.push_str("</body>\n</html>\n");
        out
    }

    /// Renders the page to `path`, creating missing parent directories.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, self.render())
    }
}

/// Anchor ids of a section and its subsections, computed once for the TOC and the headings.
struct Ids {
    id: String,
    children: Vec<Ids>,
}

fn ids(s: &Section, prefix: &str) -> Ids {
    let slug = slug(&s.heading);
    let id = if slug.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix}-{slug}")
    };
    let children = s
        .subsections
        .iter()
        .enumerate()
        .map(|(i, c)| ids(c, &format!("{prefix}.{}", i + 1)))
        .collect();
    Ids { id, children }
}

/// Lowercase ASCII letters and digits joined by single dashes, at most 40 characters; the
/// numeric prefix keeps ids unique, the slug keeps them readable in URLs.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

fn toc_entry(s: &Section, id: &Ids, depth: usize, out: &mut String) {
    let _ = write!(
        out,
        "<li><a href=\"#{}\">{}</a>",
        escape(&id.id),
        escape(&s.heading)
    );
    if depth < 1 && !s.subsections.is_empty() {
        out.push_str("<ol>");
        for (c, cid) in s.subsections.iter().zip(&id.children) {
            toc_entry(c, cid, depth + 1, out);
        }
        out.push_str("</ol>");
    }
    out.push_str("</li>");
}

fn render_section(s: &Section, id: &Ids, level: usize, out: &mut String) {
    let h = level.min(6);
    let _ = writeln!(
        out,
        "<section><h{h} id=\"{}\">{}</h{h}>",
        escape(&id.id),
        escape(&s.heading)
    );
    render_blocks(&s.blocks, out);
    for (c, cid) in s.subsections.iter().zip(&id.children) {
        render_section(c, cid, level + 1, out);
    }
    out.push_str("</section>\n");
}

fn render_blocks(blocks: &[Block], out: &mut String) {
    let mut in_figs = false;
    for b in blocks {
        // Consecutive figures share one grid, so they sit side by side on a wide window.
        let is_fig = matches!(b, Block::Figure { .. });
        if is_fig && !in_figs {
            out.push_str("<div class=\"figs\">");
        } else if !is_fig && in_figs {
            out.push_str("</div>\n");
        }
        in_figs = is_fig;
        match b {
            Block::Paragraph(t) => {
                let _ = writeln!(out, "<p>{}</p>", escape(t));
            }
            Block::Pre(t) => {
                let _ = writeln!(out, "<pre>{}</pre>", escape(t));
            }
            Block::Note(t) => {
                let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(t));
            }
            Block::Table(t) => t.render(out),
            Block::Figure { svg, caption, wide } => {
                // `svg` is produced by this module's charts, which escape all text they embed.
                let class = if *wide { " class=\"wide\"" } else { "" };
                let _ = write!(out, "<figure{class}>{svg}");
                if !caption.is_empty() {
                    let _ = write!(out, "<figcaption>{}</figcaption>", escape(caption));
                }
                out.push_str("</figure>\n");
            }
            Block::Links(links) => {
                out.push_str("<ul class=\"links\">");
                for (h, t) in links {
                    let _ = write!(out, "<li><a href=\"{}\">{}</a></li>", escape(h), escape(t));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    if in_figs {
        out.push_str("</div>\n");
    }
}
