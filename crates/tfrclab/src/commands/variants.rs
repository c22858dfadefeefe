//! `tfrclab variants`: every seed-paper variant the lab implements, with its scenario key,
//! paper, equations and parameters with defaults, and the TCP models; the catalogue is
//! `lab::variants`.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Parser;
pub use lab::variants::*;

/// Arguments of `tfrclab variants`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Print one JSON object (`tfrc`, `queue` and `tcp` arrays) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn fmt_default(d: Option<f64>) -> String {
    d.map_or("(none)".to_string(), |d| d.to_string())
}

/// The listing as text.
pub fn text(l: &Listing) -> String {
    let mut out = String::new();
    for (title, list) in [
        (
            "TFRC variants ([[flows]] kind = \"tfrc\", variants = [\"name\", \"name:param=value,...\"])",
            &l.tfrc,
        ),
        (
            "Queue variants ([links.red] / [topology.red] keys, queue presets)",
            &l.queue,
        ),
        ("TCP models ([[flows]] kind = \"tcp\")", &l.tcp),
    ] {
        let _ = writeln!(out, "{title}\n");
        for v in list {
            let _ = writeln!(
                out,
                "{}  [{}]{}",
                v.name,
                v.label,
                if v.reconstruction {
                    "  (reconstruction)"
                } else {
                    ""
                }
            );
            let _ = writeln!(out, "  {}", v.summary);
            let _ = writeln!(out, "  paper: {}", v.paper);
            let _ = writeln!(out, "  equations: {}", v.equations);
            let _ = writeln!(out, "  key: {}", v.scenario_key);
            for p in &v.params {
                let r = p
                    .range
                    .as_ref()
                    .map_or(String::new(), |r| format!(", {}", r.text));
                let _ = writeln!(
                    out,
                    "    {} = {}{r}: {}",
                    p.name,
                    fmt_default(p.default),
                    p.meaning
                );
            }
            out.push('\n');
        }
    }
    out.push_str("docs/variants.md has each variant's formula, reading and tests.\n");
    out
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let l = listing();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&l)?);
    } else {
        print!("{}", text(&l));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text names each variant with its label and marks the reconstructions.
    #[test]
    fn text_lists_every_variant() {
        let t = text(&listing());
        assert!(t.contains("veno-simd-090  [V3]  (reconstruction)"), "{t}");
        assert!(t.contains("ali-ci-replace  [E3]\n"), "{t}");
        assert!(t.contains("cubic (linux)  [TCP]\n"), "{t}");
    }
}
