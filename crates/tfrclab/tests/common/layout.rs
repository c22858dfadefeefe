//! Layout checks of a report in headless Chromium at the widths a reader uses (issue 18 §9).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::chromium;

/// The window widths every report must fit: a laptop and a narrow window.
pub const WIDTHS: [u32; 2] = [1400, 800];

/// Where screenshots go: `$CARGO_TARGET_DIR` or the workspace's `target`.
pub fn artefacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::repo().join("target"));
    let dir = target.join("test-artifacts").join("report-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first figure, everything that overflows its container, and what issue 32 found:
/// - a table heading broken inside a word (a word of a `th` laid out on two lines);
/// - a claims figure's measured value cut (`…`) or running into the verdict beside it;
/// - where the headline (the first "N claims: …" verdict count) is, to compare with the first
///   figure.
pub const LAYOUT: &str = r##"(() => {
  const svgs = [...document.querySelectorAll('svg')];
  const first = document.querySelector('figure svg');
  const over = [];
  const W = window.innerWidth;
  if (document.documentElement.scrollWidth > W)
    over.push('page: ' + document.documentElement.scrollWidth + ' px wide in a ' + W + ' px window');
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') || el.clientWidth === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1)
      over.push(el.tagName.toLowerCase() + '.' + el.className + ' (' + el.scrollWidth + ' > ' +
                el.clientWidth + ' px): ' + (el.textContent || '').slice(0, 80));
  }
  // A heading word whose text spans two line boxes was broken inside the word (a break after
  // a hyphen, as in "same-" / "RTT", is ordinary typesetting: hyphens separate words here).
  // Below 900 px the stylesheet lets a heading break rather than a wide table overflow.
  for (const th of W > 900 ? document.querySelectorAll('th') : []) {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /[^\s-]+/g;
      for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
        const r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(b => b.width > 0).map(b => Math.round(b.top)));
        if (tops.size > 1) over.push('heading word broken at ' + W + ' px: "' + m[0] + '" in "' + th.textContent + '"');
      }
    }
  }
  for (const row of document.querySelectorAll('.claim-row')) {
    const m = row.querySelector('.claim-measured');
    const v = row.querySelector('.claim-verdict');
    if (!m || !v) continue;
    if (m.textContent.includes('\u2026')) over.push('measured value cut: ' + m.textContent);
    const mb = m.getBoundingClientRect(), vb = v.getBoundingClientRect();
    if (mb.right > vb.left - 2) over.push('measured value runs into the verdict: ' + m.textContent + ' | ' + v.textContent);
  }
  let headlineTop = null;
  for (const el of document.querySelectorAll('main p, main td, body p, body td')) {
    if (/^\d+ claims?: \d+ supported/.test(el.textContent.trim())) {
      headlineTop = el.getBoundingClientRect().top + window.scrollY;
      break;
    }
  }
  svgs.forEach((s, i) => {
    const r = s.getBoundingClientRect();
    for (const t of s.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (b.width > 0 && (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1))
        over.push('chart ' + i + ' text: ' + t.textContent);
    }
  });
  return {
    width: W,
    firstIsFirstSvg: svgs.length > 0 && svgs[0] === first,
    firstTitle: first ? first.querySelector('title').textContent : null,
    firstMarks: first ? first.querySelectorAll('.claim-mark').length : -1,
    firstRows: first ? first.querySelectorAll('.claim-row').length : -1,
    firstWidth: first ? first.getBoundingClientRect().width : 0,
    firstTop: first ? first.getBoundingClientRect().top + window.scrollY : null,
    headlineTop,
    overflow: over,
  };
})()"##;

/// Loads `page` at both widths: no console output, no requests, nothing overflowing; keeps a
/// screenshot of each. Returns the layout probe at the first width.
pub fn check(page: &Path, name: &str) -> Value {
    let mut first = None;
    for w in WIDTHS {
        let load = chromium::load_sized(page, LAYOUT, Some((w, 900)));
        assert!(
            load.problems().is_empty(),
            "{name} at {w} px: {:#?}",
            load.problems()
        );
        assert!(
            load.other_requests().is_empty(),
            "{name} at {w} px: requests {:?}",
            load.other_requests()
        );
        let p = load.probe;
        assert_eq!(p["width"], w, "{name}: the viewport is {w} px wide");
        assert_eq!(
            p["overflow"].as_array().map(Vec::len),
            Some(0),
            "{name} at {w} px, overflowing: {:#}",
            p["overflow"]
        );
        chromium::screenshot(page, &artefacts().join(format!("{name}-{w}.png")), w, 3000);
        first.get_or_insert(p);
    }
    first.unwrap()
}

/// Issue 32: the headline (the first "N claims: …" verdict count) is above the first chart, so a
/// reader sees it without scrolling past a figure. `p` is what [`check`] returned.
pub fn assert_headline_first(p: &Value, name: &str) {
    let (Some(h), Some(f)) = (p["headlineTop"].as_f64(), p["firstTop"].as_f64()) else {
        panic!("{name}: a headline and a figure: {p}");
    };
    assert!(
        h < f,
        "{name}: the headline (y = {h}) is above the first chart (y = {f})"
    );
}
