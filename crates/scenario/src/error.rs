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
            if p.line == 0 {
                write!(f, "{}: {}", self.file, p.message)?;
            } else {
                write!(f, "{}:{}:{}: {}", self.file, p.line, p.column, p.message)?;
            }
            if let Some(src) = &p.source_line {
                let gutter = p.line.to_string().len();
                write!(f, "\n {:>gutter$} | {}", p.line, src)?;
                write!(
                    f,
                    "\n {:>gutter$} | {}{}",
                    "",
                    " ".repeat(p.column.saturating_sub(1)),
                    "^".repeat(p.width)
                )?;
            }
            if let Some(exp) = &p.expected {
                write!(f, "\n  expected: {exp}")?;
            }
        }
        Ok(())
    }
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
}
