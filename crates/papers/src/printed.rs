//! Values as a paper prints them, transcribed once into a data file (`paper.toml` beside the
//! paper's scenario files), and how closely a measurement agrees with one.
//!
//! A printed value keeps its text: its last digit says how precise it is, and the data file
//! says how the paper got from the true value to the digits ([`Printing`]): a truncated `v`
//! means the true value is in [v, v + one unit of the last digit), a rounded one in
//! [v − ½ unit, v + ½ unit]. [`Printed::distance`] measures a value against that interval, so a
//! comparison never blames the paper's printing on the simulator, nor hides a real difference
//! behind it.
//!
//! The data file format (TOML):
//!
//! ```toml
//! source = "Authors, \"Title\", venue"
//!
//! [[tables]]
//! id = "table1"               # how a paper module asks for it
//! number = "1"                # the paper's table number as printed
//! title = "Packet loss rate … of TCP link 0-8"
//! page = "5"                  # where it is (optional)
//! key = "window"              # the column that identifies a row
//! columns = ["window", "sent_bytes", "delay_s"]
//! printing = ["exact", "exact", "truncated"]   # per column: exact | rounded | truncated
//! note = "…"                  # transcription remarks (optional)
//! rows = [
//!   ["10", "6462000", "0.083764"],
//! ]
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// How a paper turned a value into its printed digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Printing {
    /// The printed value is the value (counts, or an exact zero).
    Exact,
    /// Rounded to the last printed digit.
    Rounded,
    /// Truncated after the last printed digit (towards zero).
    Truncated,
}

impl Printing {
    /// `exact`, `rounded` or `truncated`.
    pub fn name(self) -> &'static str {
        match self {
            Printing::Exact => "exact",
            Printing::Rounded => "rounded",
            Printing::Truncated => "truncated",
        }
    }
}

/// One printed number.
#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    /// The digits as printed.
    pub text: String,
    /// Their value.
    pub value: f64,
    /// The place value of the last printed digit (1e-5 for `0.07277`; 1 for integers).
    pub unit: f64,
    /// How the paper printed it.
    pub printing: Printing,
}

impl Printed {
    /// Parse `text` (a decimal number without exponent) printed as `printing`.
    pub fn parse(text: &str, printing: Printing) -> Result<Printed, String> {
        let t = text.trim();
        let value: f64 = t
            .parse()
            .map_err(|_| format!("\"{text}\" is not a number"))?;
        if !value.is_finite() || t.contains(['e', 'E']) {
            return Err(format!("\"{text}\" is not a plain decimal number"));
        }
        let decimals = t.split_once('.').map_or(0, |(_, f)| f.len());
        let unit = 10f64.powi(-(decimals as i32));
        Ok(Printed {
            text: t.to_string(),
            value,
            unit,
            printing,
        })
    }

    /// The true values the printed text allows: `[lo, hi]` (a truncated value's upper end is
    /// exclusive in principle; the difference does not matter at the precisions compared).
    /// A printed `0` is exact whatever the column's printing: rounding or truncating a
    /// non-zero value to a bare `0` would print decimals elsewhere in the same column.
    pub fn interval(&self) -> (f64, f64) {
        let v = self.value;
        if self.text.chars().all(|c| c == '0' || c == '-') {
            return (0.0, 0.0);
        }
        match self.printing {
            Printing::Exact => (v, v),
            Printing::Rounded => (v - self.unit / 2.0, v + self.unit / 2.0),
            // Truncation is towards zero: a negative value's true value is further from zero.
            Printing::Truncated if v < 0.0 => (v - self.unit, v),
            Printing::Truncated => (v, v + self.unit),
        }
    }

    /// How far `measured` is from the interval the printed value allows (0 inside it).
    pub fn distance(&self, measured: f64) -> f64 {
        let (lo, hi) = self.interval();
        if measured < lo {
            lo - measured
        } else if measured > hi {
            measured - hi
        } else {
            0.0
        }
    }

    /// Whether `measured` is within `relative` × |printed value| of the interval the printed
    /// value allows (for a printed 0: exactly 0).
    pub fn agrees(&self, measured: f64, relative: f64) -> bool {
        measured.is_finite() && self.distance(measured) <= relative * self.value.abs()
    }
}

/// One transcribed table.
#[derive(Clone, Debug)]
pub struct PaperTable {
    /// The id paper modules use.
    pub id: String,
    /// The paper's table number as printed.
    pub number: String,
    /// The paper's caption.
    pub title: String,
    /// Page, if known.
    pub page: Option<String>,
    /// Transcription remarks.
    pub note: Option<String>,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of printed values, keyed by the key column's text.
    rows: Vec<(String, Vec<Printed>)>,
}

impl PaperTable {
    /// `Table 1` (and the page when known), for captions and notes.
    pub fn citation(&self) -> String {
        match &self.page {
            Some(p) => format!("Table {}, p. {p}", self.number),
            None => format!("Table {}", self.number),
        }
    }

    /// The key column's values, in the paper's row order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.rows.iter().map(|(k, _)| k.as_str())
    }

    /// The printed value in row `key`, column `column`.
    pub fn get(&self, key: &str, column: &str) -> Result<&Printed, String> {
        let c = self
            .columns
            .iter()
            .position(|x| x == column)
            .ok_or_else(|| format!("table {} has no column \"{column}\"", self.id))?;
        let row = self
            .rows
            .iter()
            .find(|(k, _)| k == key)
            .ok_or_else(|| format!("table {} has no row \"{key}\"", self.id))?;
        Ok(&row.1[c])
    }
}

/// Everything transcribed from one paper.
#[derive(Clone, Debug)]
pub struct PaperData {
    /// The paper.
    pub source: String,
    tables: BTreeMap<String, PaperTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    source: String,
    tables: Vec<RawTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    id: String,
    number: String,
    title: String,
    page: Option<String>,
    note: Option<String>,
    key: String,
    columns: Vec<String>,
    printing: Vec<Printing>,
    rows: Vec<Vec<String>>,
}

impl PaperData {
    /// Parse a data file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<PaperData, String> {
        let raw: RawData = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        let mut tables = BTreeMap::new();
        for t in raw.tables {
            let err = |m: String| format!("{file}: table {}: {m}", t.id);
            if t.printing.len() != t.columns.len() {
                return Err(err(format!(
                    "{} columns but {} printing entries",
                    t.columns.len(),
                    t.printing.len()
                )));
            }
            let key = t
                .columns
                .iter()
                .position(|c| *c == t.key)
                .ok_or_else(|| err(format!("key \"{}\" is not a column", t.key)))?;
            let mut rows = Vec::with_capacity(t.rows.len());
            for (i, r) in t.rows.iter().enumerate() {
                if r.len() != t.columns.len() {
                    return Err(err(format!(
                        "row {} has {} values for {} columns",
                        i + 1,
                        r.len(),
                        t.columns.len()
                    )));
                }
                let values = r
                    .iter()
                    .zip(&t.printing)
                    .map(|(v, p)| Printed::parse(v, *p))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| err(format!("row {}: {e}", i + 1)))?;
                if rows.iter().any(|(k, _): &(String, _)| *k == r[key]) {
                    return Err(err(format!("row key \"{}\" appears twice", r[key])));
                }
                rows.push((r[key].clone(), values));
            }
            let table = PaperTable {
                id: t.id.clone(),
                number: t.number,
                title: t.title,
                page: t.page,
                note: t.note,
                columns: t.columns,
                rows,
            };
            if tables.insert(t.id.clone(), table).is_some() {
                return Err(format!("{file}: table id \"{}\" appears twice", t.id));
            }
        }
        Ok(PaperData {
            source: raw.source,
            tables,
        })
    }

    /// The table with this id.
    pub fn table(&self, id: &str) -> Result<&PaperTable, String> {
        self.tables
            .get(id)
            .ok_or_else(|| format!("the paper data has no table \"{id}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_and_rounded_intervals() {
        let t = Printed::parse("0.07277", Printing::Truncated).unwrap();
        assert_eq!(t.unit, 1e-5);
        assert_eq!(t.distance(0.072772), 0.0);
        assert!(t.distance(0.072769) > 0.0);
        assert!((t.distance(0.072785) - 5e-6).abs() < 1e-12);
        let r = Printed::parse("0.083764", Printing::Rounded).unwrap();
        assert_eq!(r.distance(0.0837636), 0.0);
        assert_eq!(r.distance(0.0837644), 0.0);
        assert!(r.distance(0.083766) > 0.0);
        let n = Printed::parse("-684000", Printing::Exact).unwrap();
        assert_eq!(n.distance(-684000.0), 0.0);
        assert!(n.agrees(-690000.0, 0.01) && !n.agrees(-700000.0, 0.01));
        let neg = Printed::parse("-0.5", Printing::Truncated).unwrap();
        assert_eq!(neg.interval(), (-0.6, -0.5));
    }

    #[test]
    fn a_printed_zero_is_exact() {
        let z = Printed::parse("0", Printing::Truncated).unwrap();
        assert_eq!(z.interval(), (0.0, 0.0));
        assert!(z.agrees(0.0, 0.01));
        assert!(!z.agrees(1e-9, 0.01));
    }

    #[test]
    fn data_files_are_checked() {
        let good = r#"
source = "x"
[[tables]]
id = "t1"
number = "1"
title = "T"
key = "w"
columns = ["w", "bytes"]
printing = ["exact", "exact"]
rows = [["10", "100"], ["20", "200"]]
"#;
        let d = PaperData::parse("p.toml", good).unwrap();
        let t = d.table("t1").unwrap();
        assert_eq!(t.get("20", "bytes").unwrap().value, 200.0);
        assert_eq!(t.keys().collect::<Vec<_>>(), ["10", "20"]);
        assert!(t.get("30", "bytes").is_err());
        assert!(d.table("t2").is_err());
        let bad = good.replace(r#"["20", "200"]"#, r#"["20"]"#);
        let e = PaperData::parse("p.toml", &bad).unwrap_err();
        assert!(e.contains("row 2 has 1 values"), "{e}");
        let bad = good.replace(r#""100""#, r#""1e2""#);
        assert!(PaperData::parse("p.toml", &bad).is_err());
    }
}
