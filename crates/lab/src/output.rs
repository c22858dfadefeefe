//! Output folders written all at once: files go to a hidden staging folder beside the target,
//! which replaces the target only when everything was written, so a failed or interrupted run
//! leaves nothing half-written.

use std::path::{Path, PathBuf};

/// A staging folder that becomes `target` on [`OutputDir::commit`].
#[derive(Debug)]
pub struct OutputDir {
    target: PathBuf,
    staging: PathBuf,
    committed: bool,
}

/// A file-name-safe form of a scenario name.
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("run{s}")
    } else {
        s
    }
}

impl OutputDir {
    /// Prepare to write `target`. An existing `target` is replaced on commit only if it is
    /// empty or was written by tfrclab (holds a `summary.json`, `sweep.csv` or `index.html`).
    pub fn create(target: &Path) -> Result<OutputDir, String> {
        if target.exists() {
            if !target.is_dir() {
                return Err(format!("{} exists and is not a folder", target.display()));
            }
            let ours = ["summary.json", "sweep.csv", "index.html", "validate.json"]
                .iter()
                .any(|f| target.join(f).exists());
            let empty = std::fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !ours && !empty {
                return Err(format!(
                    "{} exists and does not look like a tfrclab output folder; choose another --out or remove it",
                    target.display()
                ));
            }
        }
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "out".into());
        let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging)
            .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
        Ok(OutputDir {
            target: target.to_path_buf(),
            staging,
            committed: false,
        })
    }

    /// Where to write `file` before the commit.
    pub fn path(&self, file: &str) -> PathBuf {
        self.staging.join(file)
    }

    /// The staging folder itself.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Where to write `path` so that the commit keeps it: a path inside the target (as in
    /// `--out res --pcap res/pcap`) goes to the same place in the staging folder, since the
    /// commit replaces the target whole; any other path is returned unchanged.
    pub fn place(&self, path: &Path) -> PathBuf {
        let abs = |p: &Path| std::path::absolute(p).ok();
        if let (Some(p), Some(t)) = (abs(path), abs(&self.target)) {
            if let Ok(rel) = p.strip_prefix(&t) {
                return self.staging.join(rel);
            }
        }
        path.to_path_buf()
    }

    /// Replace the target with everything written; returns the target.
    pub fn commit(mut self) -> std::io::Result<PathBuf> {
        if self.target.exists() {
            std::fs::remove_dir_all(&self.target)?;
        }
        std::fs::rename(&self.staging, &self.target)?;
        self.committed = true;
        Ok(self.target.clone())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder given inside the output folder (`--out res --pcap res/pcap`) survives the
    /// commit; one outside is left where it is.
    #[test]
    fn a_folder_inside_the_target_survives_the_commit() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("res");
        // Written once already, so the commit replaces an existing folder.
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("summary.json"), "{}").unwrap();
        let out = OutputDir::create(&target).unwrap();
        // `.` components do not hide that the folder is inside.
        let inside = out.place(&target.join("./pcap"));
        assert!(inside.starts_with(out.staging()), "{}", inside.display());
        let outside = d.path().join("elsewhere");
        assert_eq!(out.place(&outside), outside);
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::write(inside.join("a.pcap"), "x").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(target.join("pcap/a.pcap")).unwrap(), b"x");
        assert!(!target.join("summary.json").exists());
    }
}
