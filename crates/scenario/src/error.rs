//! Errors in scenario files, located by file, line and column, saying what is wrong and what
//! would be right.

use std::fmt;
use std::ops::Range;

/// One problem in a scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// 1-based line, 0 when the problem concerns the whole file.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// What would be right.
    pub expected: Option<String>,
    /// The offending source line, for display.
    pub source_line: Option<String>,
    /// Width of the offending span on that line, in characters.
    pub width: usize,
}

/// Everything wrong with a scenario file (at least one problem).
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file, as the user named it.
    pub file: String,
    /// The problems, in file order.
    pub problems: Vec<Problem>,
}

impl ScenarioError {
    /// A single problem at a byte span of `text`.
    pub fn at(
        file: &str,
        text: &str,
        span: Option<Range<usize>>,
        message: String,
        expected: Option<String>,
    ) -> Self {
        ScenarioError {
            file: file.to_string(),
            problems: vec![Problem::at(text, span, message, expected)],
        }
    }
}

impl Problem {
    /// A problem at a byte span of `text` (None: the whole file).
    pub fn at(
        text: &str,
        span: Option<Range<usize>>,
        message: String,
        expected: Option<String>,
    ) -> Self {
        match span {
            Some(span) => {
                let start = span.start.min(text.len());
                let end = span.end.clamp(start, text.len());
                let (line, column, line_text) = locate(text, start);
                let width = text
                    .get(start..end)
                    .map(|s| s.lines().next().unwrap_or("").chars().count())
                    .unwrap_or(1)
                    .max(1);
                Problem {
                    line,
                    column,
                    message,
                    expected,
                    source_line: Some(line_text.to_string()),
                    width,
                }
            }
            None => Problem {
                line: 0,
                column: 0,
                message,
                expected,
                source_line: None,
                width: 0,
            },
        }
    }
}

/// 1-based line and column of byte `offset`, and the text of that line.
pub fn locate(text: &str, offset: usize) -> (usize, usize, &str) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = text[line_start..offset].chars().count() + 1;
    let line_end = text[offset..]
        .find('\n')
        .map(|i| offset + i)
        .unwrap_or(text.len());
    (
        line,
        column,
        text[line_start..line_end].trim_end_matches('\r'),
    )
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let file = escape(&self.file);
            let message = escape(&p.message);
            if p.line == 0 {
                write!(f, "{file}: {message}")?;
            } else {
                write!(f, "{file}:{}:{}: {message}", p.line, p.column)?;
            }
            if let Some(src) = &p.source_line {
                let gutter = p.line.to_string().len();
                // The caret sits under the escaped text, so count the escaped prefix.
                let before: String = src.chars().take(p.column.saturating_sub(1)).collect();
                let marked: String = src
                    .chars()
                    .skip(p.column.saturating_sub(1))
                    .take(p.width)
                    .collect();
                write!(f, "\n {:>gutter$} | {}", p.line, escape(src))?;
                write!(
                    f,
                    "\n {:>gutter$} | {}{}",
                    "",
                    " ".repeat(escape(&before).chars().count()),
                    "^".repeat(escape(&marked).chars().count().max(1))
                )?;
            }
            if let Some(exp) = &p.expected {
                write!(f, "\n  expected: {}", escape(exp))?;
            }
        }
        Ok(())
    }
}

/// `text` with control characters (NUL, ESC, …) written as `\u{..}` escapes, so that a crafted
/// file cannot write terminal escape sequences through an error message. Tabs stay.
pub fn escape(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// "did you mean `x`?" for a serde message "unknown field `y`, expected one of `a`, `b`, …"
/// (or "unknown variant"), when one expected name is within a small edit distance of `y`.
pub fn did_you_mean(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (given, rest) = rest.split_once('`')?;
    let (_, expected) = rest.split_once("expected")?;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(given, &candidates).map(|c| format!("did you mean `{c}`?"))
}

/// The candidate nearest to `given` by edit distance, if near enough: at most 1 edit for
/// short names, about a third of the name for longer ones.
pub fn closest<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (given.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(given, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters; names are short, so the quadratic table is fine.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_line_and_column() {
        let text = "a = 1\nbb = \"x\"\n";
        assert_eq!(locate(text, 6), (2, 1, "bb = \"x\""));
        assert_eq!(locate(text, 11), (2, 6, "bb = \"x\""));
        let e = ScenarioError::at(
            "f.toml",
            text,
            Some(11..14),
            "bad".into(),
            Some("good".into()),
        );
        let s = e.to_string();
        assert!(s.starts_with("f.toml:2:6: bad"), "{s}");
        assert!(s.contains("     ^^^"), "{s}");
        assert!(s.ends_with("expected: good"), "{s}");
    }

    #[test]
    fn control_characters_are_escaped() {
        let text = "name = \"a\u{1b}[31mb\"\n";
        let e = ScenarioError::at("f\u{0}.toml", text, Some(7..16), "bad \u{0}".into(), None);
        let s = e.to_string();
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
        assert!(s.contains("\\u{1b}") && s.contains("bad \\u{0}"), "{s}");
        // The caret still starts under the value's opening quote.
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1].find('"'), lines[2].find('^'), "{s}");
    }

    #[test]
    fn suggests_a_near_key() {
        let m =
            "unknown field `bottelneck_delay`, expected one of `kind`, `bottleneck_delay`, `queue`";
        assert_eq!(did_you_mean(m).unwrap(), "did you mean `bottleneck_delay`?");
        let far = "unknown field `colour`, expected one of `kind`, `queue`";
        assert_eq!(did_you_mean(far), None);
        assert_eq!(closest("tcp", &["tfrc", "udp", "tcp"]), Some("tcp"));
    }
}
