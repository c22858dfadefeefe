//! `--set KEY=VALUE`: change one value of a scenario file before it is validated.
//!
//! KEY is a dotted path into the file. Arrays of tables are indexed by the element's `name`
//! (links also by `from-to`, or a 0-based position): `flows.udp1.rate`,
//! `links.r0-r1.bandwidth`, `topology.bottleneck_bandwidth`, `links.r0-r1.red.thresh`, `duration`.
//! The edit is made on the document itself (`toml_edit`), so every other line keeps its number
//! and later errors still point at the right place in the file.

use toml_edit::{DocumentMut, Item, Table, Value};

use super::error::{Problem, ScenarioError};

/// Parse `KEY=VALUE`.
pub fn parse_set(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!(
            "'{arg}' is not KEY=VALUE (for example flows.udp1.rate=2Mbps)"
        )),
    }
}

/// A value as written after `=`: a TOML literal (number, boolean, quoted string, array) if it
/// parses as one, otherwise a bare string such as `2Mbps`.
pub fn parse_value(text: &str) -> Value {
    text.parse::<Value>().unwrap_or_else(|_| Value::from(text))
}

/// Apply every override to `text`; errors name the override and what the file offers instead.
pub fn apply(file: &str, text: &str, sets: &[(String, String)]) -> Result<String, ScenarioError> {
    if sets.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        ScenarioError::at(file, text, e.span(), e.message().to_string(), None)
    })?;
    for (key, value) in sets {
        set(doc.as_table_mut(), key, parse_value(value)).map_err(|msg| ScenarioError {
            file: file.to_string(),
            problems: vec![Problem::at(
                text,
                None,
                format!("--set {key}={value}: {msg}"),
                None,
            )],
        })?;
    }
    Ok(doc.to_string())
}

/// Point the problems of an edited file back at their origin: a problem on a line that an
/// override wrote names that `--set` (its line is not in the file), and every other problem
/// gets the file's own line number (an override that adds a key shifts the lines after it).
pub fn attribute(
    mut err: ScenarioError,
    original: &str,
    edited: &str,
    sets: &[(String, String)],
) -> ScenarioError {
    if sets.is_empty() {
        return err;
    }
    let orig: Vec<&str> = original.lines().collect();
    let new: Vec<&str> = edited.lines().collect();
    // Walk both texts: equal lines map; a differing line replaced the file's line when the
    // next lines line up again, else it was inserted.
    enum Origin {
        Same(usize),
        Replaced(usize),
        Inserted,
    }
    let mut map: Vec<Origin> = Vec::with_capacity(new.len());
    let mut j = 0;
    for (i, line) in new.iter().enumerate() {
        if orig.get(j) == Some(line) {
            map.push(Origin::Same(j));
            j += 1;
        } else if new.get(i + 1).is_some() && new.get(i + 1) == orig.get(j + 1) {
            map.push(Origin::Replaced(j));
            j += 1;
        } else {
            map.push(Origin::Inserted);
        }
    }
    let naming = |line: &str| {
        let key = line.split('=').next().unwrap_or("").trim();
        sets.iter()
            .find(|(k, _)| k.rsplit('.').next() == Some(key))
            .or(sets.last())
            .map(|(k, v)| format!("--set {k}={v}"))
            .unwrap_or_default()
    };
    for p in &mut err.problems {
        if p.line == 0 || p.line > map.len() {
            continue;
        }
        let edited_line = new[p.line - 1];
        match map[p.line - 1] {
            Origin::Same(j) => p.line = j + 1,
            // The file's line that the override replaced: shown with the override named.
            Origin::Replaced(j) => {
                p.message = format!("{}: {}", naming(edited_line), p.message);
                p.line = j + 1;
                p.source_line = Some(orig[j].to_string());
                p.column = 1;
                p.width = orig[j].chars().count().max(1);
            }
            // A line only the override wrote: there is nothing in the file to point at.
            Origin::Inserted => {
                p.message = format!("{}: {}", naming(edited_line), p.message);
                p.line = 0;
                p.column = 0;
                p.source_line = None;
                p.width = 0;
            }
        }
    }
    err
}

fn set(root: &mut Table, key: &str, value: Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut table: &mut Table = root;
    let mut i = 0;
    while i + 1 < parts.len() {
        let part = parts[i];
        let item = table
            .entry(part)
            .or_insert_with(|| Item::Table(Table::new()));
        match item {
            Item::ArrayOfTables(arr) => {
                let selector = parts
                    .get(i + 1)
                    .copied()
                    .filter(|_| i + 2 < parts.len())
                    .ok_or_else(|| {
                        format!("`{part}` is a list; name an element, as in {part}.NAME.KEY")
                    })?;
                let pos = arr
                    .iter()
                    .position(|t| element_matches(t, selector))
                    .or_else(|| selector.parse::<usize>().ok().filter(|&n| n < arr.len()))
                    .ok_or_else(|| {
                        let names: Vec<String> = arr.iter().filter_map(element_name).collect();
                        format!(
                            "no element \"{selector}\" in `{part}`; it has: {}",
                            names.join(", ")
                        )
                    })?;
                table = arr.get_mut(pos).ok_or("index out of range")?;
                i += 2;
            }
            Item::Table(t) => {
                table = t;
                i += 1;
            }
            _ => return Err(format!("`{part}` is a value, not a table")),
        }
    }
    let last = parts[parts.len() - 1];
    if last.is_empty() {
        return Err("empty key".into());
    }
    table.insert(last, Item::Value(value));
    Ok(())
}

fn element_name(t: &Table) -> Option<String> {
    if let Some(n) = t.get("name").and_then(Item::as_str) {
        return Some(n.to_string());
    }
    match (
        t.get("from").and_then(Item::as_str),
        t.get("to").and_then(Item::as_str),
    ) {
        (Some(a), Some(b)) => Some(format!("{a}-{b}")),
        _ => None,
    }
}

fn element_matches(t: &Table, selector: &str) -> bool {
    if t.get("name").and_then(Item::as_str) == Some(selector) {
        return true;
    }
    matches!(
        (t.get("from").and_then(Item::as_str), t.get("to").and_then(Item::as_str)),
        (Some(a), Some(b)) if format!("{a}-{b}") == selector
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\nduration = 10\n\n[[links]]\nfrom = \"a\"\nto = \"b\"\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n\n[[flows]]\nname = \"u1\"\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\"\n";

    #[test]
    fn sets_by_name_and_keeps_lines() {
        let sets = vec![
            ("flows.u1.rate".to_string(), "2Mbps".to_string()),
            ("links.a-b.bandwidth".to_string(), "\"5Mbps\"".to_string()),
            ("duration".to_string(), "20".to_string()),
        ];
        let out = apply("f", TEXT, &sets).unwrap();
        assert!(out.contains("rate = \"2Mbps\""), "{out}");
        assert!(out.contains("bandwidth = \"5Mbps\""), "{out}");
        assert!(out.contains("duration = 20"), "{out}");
        assert_eq!(out.lines().count(), TEXT.lines().count());
    }

    #[test]
    fn unknown_element_is_named() {
        let e = apply("f", TEXT, &[("flows.nope.rate".into(), "1".into())]).unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("no element \"nope\" in `flows`; it has: u1"),
            "{s}"
        );
    }

    #[test]
    fn parse_set_rejects_missing_equals() {
        assert!(parse_set("flows.u1.rate").is_err());
        assert_eq!(parse_set("a.b=3").unwrap(), ("a.b".into(), "3".into()));
    }
}
