//! `campaign slurm`: the Slurm array job script that runs a campaign, one shard per task.

use std::path::Path;

/// Group pass-through sbatch options into one option per line: a token starting with `-`
/// starts an option, the tokens after it (not starting with `-`) are its value
/// (`-p debug` and `--time=1:00:00` both work). Options the script sets itself are refused.
pub fn sbatch_options(extra: &[String]) -> Result<Vec<String>, String> {
    let mut lines: Vec<String> = Vec::new();
    for tok in extra {
        if tok.contains('\n') || tok.contains('\r') {
            return Err(format!("sbatch option {tok:?} holds a line break"));
        }
        if tok.starts_with('-') {
            let name = tok.split('=').next().unwrap_or(tok);
            if matches!(name, "--array" | "-a" | "--wait" | "-W" | "--parsable") {
                return Err(format!(
                    "sbatch option {name}: set by tfrclab campaign slurm itself (--array from --tasks, --wait from --wait)"
                ));
            }
            lines.push(tok.clone());
        } else if let Some(last) = lines.last_mut() {
            last.push(' ');
            last.push_str(tok);
        } else {
            return Err(format!(
                "sbatch option {tok:?} does not start with '-' (pass options after --, e.g. -- --time=01:00:00 --partition=short)"
            ));
        }
    }
    Ok(lines)
}

/// `word`, in single quotes when a shell would split or expand it.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A path quoted for bash: single quotes, with `'` written as `'\''`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The array job script: `tasks` tasks, task K running `tfrclab campaign run DIR --shard
/// K/tasks` with `exe` (an absolute path on the shared file system) on the campaign in `dir`
/// (absolute too), its log in `dir/logs/`. `options` are extra `#SBATCH` lines
/// ([`sbatch_options`]); `jobs` the threads per task (default: `SLURM_CPUS_PER_TASK`, else 1).
pub fn sbatch_script(
    name: &str,
    dir: &Path,
    exe: &Path,
    tasks: usize,
    options: &[String],
    jobs: Option<u32>,
) -> String {
    let dir_s = dir.display().to_string();
    let mut s = String::new();
    s.push_str("#!/bin/bash\n");
    s.push_str(
        "# Written by `tfrclab campaign slurm`: one array task per shard of the campaign.\n",
    );
    s.push_str("# Submit (again) with sbatch; tasks skip the runs that already have a result.\n");
    s.push_str(&format!(
        "#SBATCH --job-name=tfrclab-{}\n",
        crate::output::file_stem(name)
    ));
    s.push_str(&format!("#SBATCH --array=0-{}\n", tasks.saturating_sub(1)));
    s.push_str(&format!("#SBATCH --output={dir_s}/logs/slurm-%A_%a.out\n"));
    for o in options {
        s.push_str(&format!("#SBATCH {o}\n"));
    }
    s.push_str("set -euo pipefail\n");
    let jobs = jobs.map_or_else(
        || "\"${SLURM_CPUS_PER_TASK:-1}\"".to_string(),
        |j| j.to_string(),
    );
    s.push_str(&format!(
        "exec {} campaign run {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{tasks}\" --jobs {jobs}\n",
        shell_quote(&exe.display().to_string()),
        shell_quote(&dir_s),
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_group_values_and_refuse_the_array() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            sbatch_options(&v(&["--time=01:00:00", "-p", "short", "--account", "x"])).unwrap(),
            v(&["--time=01:00:00", "-p short", "--account x"])
        );
        assert!(sbatch_options(&v(&["--array=0-3"]))
            .unwrap_err()
            .contains("--tasks"));
        assert!(sbatch_options(&v(&["short"]))
            .unwrap_err()
            .contains("does not start"));
    }

    #[test]
    fn the_script_runs_each_shard() {
        let s = sbatch_script(
            "my run",
            Path::new("/shared/c it's"),
            Path::new("/opt/tfrclab"),
            4,
            &["--time=5".to_string()],
            None,
        );
        assert!(s.contains("#SBATCH --array=0-3\n"), "{s}");
        assert!(s.contains("#SBATCH --job-name=tfrclab-my_run\n"), "{s}");
        assert!(s.contains("#SBATCH --time=5\n"), "{s}");
        assert!(s.contains(r"'/shared/c it'\''s'"), "{s}");
        assert!(s.contains("--shard \"${SLURM_ARRAY_TASK_ID}/4\""), "{s}");
    }
}
