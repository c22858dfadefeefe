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

/// The first figure, and everything that overflows its container.
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
