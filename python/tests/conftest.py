"""Shared fixtures: the repository root and the `tfrclab` CLI binary the tests compare with."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def target_dir() -> Path:
    """Cargo's target folder: what `cargo metadata` says (it honours $CARGO_TARGET_DIR and
    `build.target-dir` in .cargo/config), else $CARGO_TARGET_DIR, else ./target."""
    try:
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout
        return Path(json.loads(out)["target_directory"])
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        env = os.environ.get("CARGO_TARGET_DIR")
        return (REPO / env) if env else REPO / "target"


def cli_path() -> Path:
    """The CLI: $TFRCLAB_BIN, else the workspace's release build, else its debug build (in
    Cargo's target folder, wherever $CARGO_TARGET_DIR puts it)."""
    env = os.environ.get("TFRCLAB_BIN")
    target = target_dir()
    candidates = [Path(env)] if env else [target / "release" / "tfrclab", target / "debug" / "tfrclab"]
    for c in candidates:
        if c.is_file():
            return c
    pytest.fail(
        "the tfrclab CLI is needed to compare with; build it with `cargo build --release -p tfrclab` "
        f"(or set TFRCLAB_BIN); looked for {', '.join(str(c) for c in candidates)}"
    )


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def cli():
    """Run the CLI from the repository root; returns the CompletedProcess."""
    exe = cli_path()

    def run(*args, check=True):
        p = subprocess.run([str(exe), *map(str, args)], cwd=REPO, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"tfrclab {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
        return p

    return run


@pytest.fixture(autouse=True)
def _run_from_repo(monkeypatch):
    """Scenario paths in the tests are relative to the repository, as in the docs."""
    monkeypatch.chdir(REPO)
