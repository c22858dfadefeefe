"""Shared fixtures: the repository root and the `tfrclab` CLI binary the tests compare with."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_path() -> Path:
    """The CLI: $TFRCLAB_BIN, else the workspace's release build, else its debug build."""
    env = os.environ.get("TFRCLAB_BIN")
    candidates = [Path(env)] if env else [REPO / "target" / "release" / "tfrclab", REPO / "target" / "debug" / "tfrclab"]
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
