//! Plain-text tables for the terminal: one formatter for every command that prints rows.

/// Rows (the first is the header) as columns padded to their widest cell and separated by two
/// spaces; columns whose index is in `left` are left-aligned, the others right-aligned (numbers).
/// Trailing spaces are trimmed; every line ends with `\n`.
///
/// ```
/// let rows = vec![
///     vec!["flow".to_string(), "Mb/s".to_string()],
///     vec!["tcp1".to_string(), "1.5".to_string()],
/// ];
/// assert_eq!(report::text::aligned(&rows, &[0]), "flow  Mb/s\ntcp1   1.5\n");
/// ```
pub fn aligned<R: AsRef<[String]>>(rows: &[R], left: &[usize]) -> String {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.as_ref().get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .as_ref()
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if left.contains(&c) {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
