//! `campaign merge`: the result files into exactly what `tfrclab sweep` writes for the same grid
//! and seeds, plus a tidy table (one row per run × flow) in CSV and Parquet.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{Campaign, CampaignError, ResultFile, RunEntry, Scan};
use crate::output::OutputDir;
use crate::sweep::{self, RunRecord, SweepResult};

/// A merged campaign.
#[derive(Debug)]
pub struct Merged {
    /// The sweep of the runs present (aggregates over them only when some are missing).
    pub result: SweepResult,
    /// The runs present, in manifest order, with their result files.
    pub results: Vec<(RunEntry, ResultFile)>,
    /// Runs with no result, in manifest order.
    pub missing: Vec<RunEntry>,
    /// Failed runs and their errors, in manifest order.
    pub failed: Vec<(RunEntry, String)>,
}

impl Merged {
    /// Whether every run is present.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.failed.is_empty()
    }
}

/// Merge the results present in campaign `c` (checked by [`Campaign::scan`]).
pub fn merge(c: &Campaign) -> Result<Merged, CampaignError> {
    merge_with(c, &|| {})
}

/// [`merge`] calling `on_file` after each result file read.
pub fn merge_with(c: &Campaign, on_file: &dyn Fn()) -> Result<Merged, CampaignError> {
    let scan: Scan = c.scan_with(on_file)?;
    let runs_of = |i: &usize| c.manifest.runs[*i].clone();
    let missing = scan.missing.iter().map(runs_of).collect();
    let failed = scan
        .failed
        .iter()
        .map(|(i, r)| (runs_of(i), r.error.clone().unwrap_or_default()))
        .collect();
    let mut records = Vec::with_capacity(scan.done.len());
    let mut results = Vec::with_capacity(scan.done.len());
    let mut wall = 0.0;
    for (i, r) in scan.done {
        let Some(summary) = r.summary.clone() else {
            continue;
        };
        wall += r.provenance.wall_s;
        records.push(RunRecord {
            point: r.point,
            seed: r.seed,
            summary,
        });
        results.push((runs_of(&i), r));
    }
    let plan = &c.plan;
    let aggregates = sweep::aggregate(plan.points.len(), &records);
    let result = SweepResult {
        scenario: plan.scenario.clone(),
        file: plan.file.clone(),
        source: plan.source.clone(),
        axes: plan.axes.clone(),
        points: plan.points.clone(),
        seeds: plan.seeds.clone(),
        runs: records,
        aggregates,
        jobs: 1,
        wall: Duration::from_secs_f64(wall),
    };
    Ok(Merged {
        result,
        results,
        missing,
        failed,
    })
}

/// One typed column of the tidy table.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Text.
    Text(Vec<String>),
    /// Whole numbers.
    Int(Vec<i64>),
    /// Non-negative whole numbers that may pass `i64::MAX` (seeds).
    UInt(Vec<u64>),
    /// Real numbers.
    Float(Vec<f64>),
}

impl Values {
    fn cell(&self, row: usize) -> String {
        match self {
            Values::Text(v) => v[row].clone(),
            Values::Int(v) => v[row].to_string(),
            Values::UInt(v) => v[row].to_string(),
            Values::Float(v) => v[row].to_string(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::UInt(v) => v.len(),
            Values::Float(v) => v.len(),
        }
    }
}

/// The tidy table: named typed columns of equal length.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// (column name, values).
    pub columns: Vec<(String, Values)>,
}

impl Table {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }
}

/// Whether a `flows.csv` column holds counts (the rest but `name` and `kind` are reals).
fn is_count(column: &str) -> bool {
    column.ends_with("_packets") || column.starts_with("dropped_")
}

/// One row per (run, flow), runs in manifest order: `run_id`, `point` (1-based), one column
/// per axis (numbers when every value reads as a number, bandwidth or duration, the unit in
/// the name, e.g. `topology.bottleneck_bandwidth (Mb/s)`; else the values as written),
/// `seed`, the columns of `flows.csv`, then provenance: `host`, `wall_s`, `cpu_s` (NaN where
/// not measured).
pub fn tidy_table(m: &Merged) -> Table {
    let r = &m.result;
    let mut run_id = Vec::new();
    let mut point = Vec::new();
    let mut seed = Vec::new();
    let mut host = Vec::new();
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut points = Vec::new();
    for (e, res) in &m.results {
        let Some(s) = &res.summary else { continue };
        for f in &s.flows {
            run_id.push(e.id.clone());
            point.push(e.point as i64 + 1);
            points.push(e.point);
            seed.push(e.seed);
            host.push(res.provenance.host.clone());
            wall.push(res.provenance.wall_s);
            cpu.push(res.provenance.cpu_s.unwrap_or(f64::NAN));
            rows.push(crate::summary::flows_csv_record(f));
        }
    }
    let mut columns = vec![
        ("run_id".to_string(), Values::Text(run_id)),
        ("point".to_string(), Values::Int(point)),
    ];
    for (k, a) in r.axes.iter().enumerate() {
        let index = |p: usize| r.points[p].value_index[k];
        match sweep::numeric_values(&a.values) {
            Some((xs, unit)) => {
                let name = if unit.is_empty() {
                    a.key.clone()
                } else {
                    format!("{} ({unit})", a.key)
                };
                columns.push((
                    name,
                    Values::Float(points.iter().map(|&p| xs[index(p)]).collect()),
                ));
            }
            None => columns.push((
                a.key.clone(),
                Values::Text(points.iter().map(|&p| a.values[index(p)].clone()).collect()),
            )),
        }
    }
    columns.push(("seed".into(), Values::UInt(seed)));
    for (j, h) in crate::summary::flows_csv_header().into_iter().enumerate() {
        let cells = rows.iter().map(|row| row[j].as_str());
        let values = if h == "name" || h == "kind" {
            Values::Text(cells.map(String::from).collect())
        } else if is_count(&h) {
            // Counts are written as integers (u64 that fit i64 in any real run).
            Values::Int(
                cells
                    .map(|c| c.parse::<f64>().unwrap_or(f64::NAN) as i64)
                    .collect(),
            )
        } else {
            Values::Float(cells.map(|c| c.parse().unwrap_or(f64::NAN)).collect())
        };
        columns.push((h, values));
    }
    columns.push(("host".into(), Values::Text(host)));
    columns.push(("wall_s".into(), Values::Float(wall)));
    columns.push(("cpu_s".into(), Values::Float(cpu)));
    Table { columns }
}

/// Write the tidy table as CSV.
pub fn write_table_csv(path: &Path, t: &Table) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(t.columns.iter().map(|(n, _)| n))?;
    for row in 0..t.rows() {
        w.write_record(t.columns.iter().map(|(_, v)| v.cell(row)))?;
    }
    w.flush()?;
    Ok(())
}

/// Write the tidy table as Parquet (one row group, uncompressed: the table is small next to
/// the runs that made it, and codecs would add compile time and dependencies).
pub fn write_table_parquet(path: &Path, t: &Table) -> anyhow::Result<()> {
    let mut fields = Vec::new();
    for (name, v) in &t.columns {
        let b = match v {
            Values::Text(_) => Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                .with_logical_type(Some(LogicalType::String)),
            Values::Int(_) => Type::primitive_type_builder(name, PhysicalType::INT64),
            Values::UInt(_) => Type::primitive_type_builder(name, PhysicalType::INT64)
                .with_logical_type(Some(LogicalType::Integer {
                    bit_width: 64,
                    is_signed: false,
                })),
            Values::Float(_) => Type::primitive_type_builder(name, PhysicalType::DOUBLE),
        };
        fields.push(Arc::new(b.with_repetition(Repetition::REQUIRED).build()?));
    }
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    );
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(path)?;
    let mut writer = SerializedFileWriter::new(file, schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut i = 0;
    while let Some(mut col) = group.next_column()? {
        match &t.columns[i].1 {
            Values::Text(v) => {
                let bytes: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes, None, None)?;
            }
            Values::Int(v) => {
                col.typed::<Int64Type>().write_batch(v, None, None)?;
            }
            // Unsigned 64-bit integers are stored in INT64's bits (the Parquet convention).
            Values::UInt(v) => {
                let bits: Vec<i64> = v.iter().map(|&x| x as i64).collect();
                col.typed::<Int64Type>().write_batch(&bits, None, None)?;
            }
            Values::Float(v) => {
                col.typed::<DoubleType>().write_batch(v, None, None)?;
            }
        }
        col.close()?;
        i += 1;
    }
    group.close()?;
    writer.close()?;
    Ok(())
}

/// Write `missing.csv`: the runs with no result (`index`, `run_id`, `point`, `seed`, `status`
/// = missing or failed, `error`).
fn write_missing_csv(path: &Path, m: &Merged) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["index", "run_id", "point", "seed", "status", "error"])?;
    let mut rows: Vec<(&RunEntry, &str, &str)> = m
        .missing
        .iter()
        .map(|e| (e, "missing", ""))
        .chain(m.failed.iter().map(|(e, err)| (e, "failed", err.as_str())))
        .collect();
    rows.sort_by_key(|(e, _, _)| e.index);
    for (e, status, err) in rows {
        w.write_record([
            e.index.to_string(),
            e.id.clone(),
            (e.point + 1).to_string(),
            e.seed.to_string(),
            status.to_string(),
            err.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// The files [`write_merged`] writes, for messages.
pub const MERGED_FILES: &str =
    "sweep.csv, runs.csv, sweep.json, report.html, flows.csv, flows.parquet";

/// Write into `dir`, all at once, what `tfrclab sweep` writes (`sweep.csv`, `runs.csv`,
/// `sweep.json`, `report.html`, with `primary` metrics first in the report; empty: the
/// default) and the tidy table (`flows.csv`, `flows.parquet`); when runs are missing or
/// failed, also `missing.csv`. Returns `dir`.
pub fn write_merged(m: &Merged, dir: &Path, primary: &[String]) -> anyhow::Result<PathBuf> {
    let out = OutputDir::create(dir).map_err(anyhow::Error::msg)?;
    let r = &m.result;
    sweep::write_sweep_csv(&out.path("sweep.csv"), r)?;
    sweep::write_runs_csv(&out.path("runs.csv"), r)?;
    sweep::write_sweep_json(&out.path("sweep.json"), r)?;
    let primary: Vec<String> = if primary.is_empty() {
        sweep::DEFAULT_PRIMARY
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        primary.to_vec()
    };
    sweep::report_with(r, &primary).write(&out.path("report.html"))?;
    let t = tidy_table(m);
    write_table_csv(&out.path("flows.csv"), &t)?;
    write_table_parquet(&out.path("flows.parquet"), &t)?;
    if !m.complete() {
        write_missing_csv(&out.path("missing.csv"), m)?;
    }
    Ok(out.commit()?)
}
