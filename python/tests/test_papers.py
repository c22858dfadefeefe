"""`tfrclab.reproduce` gives the claims, estimates and verdicts of `tfrclab reproduce`."""

import csv
import json
import math
from pathlib import Path

import pytest

import tfrclab


def test_reproduce_equals_the_cli(cli, tmp_path):
    out = tmp_path / "cli"
    cli("reproduce", "seed-004", "--quick", "--jobs", 2, "--out", out)
    rep = tfrclab.reproduce("seed-004", quick=True, jobs=2, progress=False)
    with open(out / "seed-004" / "claims.csv", newline="") as f:
        want = list(csv.DictReader(f))
    claims = rep.claims
    assert len(claims) == len(want) > 0
    assert set(claims["paper"]) == {"seed-004"}
    for (_, got), w in zip(claims.iterrows(), want):
        assert got["claim"] == w["id"]
        assert got["verdict"] == w["verdict"]
        assert got["n"] == int(w["n"])
        for col in ["mean", "ci_lo", "ci_hi"]:
            x = float(w[col]) if w[col] else math.nan
            assert (math.isnan(got[col]) and math.isnan(x)) or got[col] == x, (got["claim"], col)
    assert set(claims["verdict"]) <= {"supported", "not supported", "contradicted"}

    # The files the CLI writes, copied where asked.
    d = Path(rep.write(tmp_path / "py"))
    assert (d / "index.html").is_file()
    assert (d / "seed-004" / "report.html").is_file()
    assert (d / "seed-004" / "claims.csv").read_text() == (out / "seed-004" / "claims.csv").read_text()
    assert rep.runs > 0 and rep.summary["runs"] == rep.runs
    entry = next(p for p in rep.summary["papers"] if p["id"] == "seed-004")
    assert [v["verdict"] for v in entry["verdicts"]] == list(claims["verdict"])


def test_phase_remedy_equals_the_cli(cli, tmp_path):
    """``phase_remedy=True`` is ``tfrclab reproduce --phase-remedy``: the second pass's claims
    are the ones the CLI's ``summary.json`` lists, and the comparison file is written."""
    out = tmp_path / "cli"
    cli("reproduce", "seed-000", "--quick", "--phase-remedy", "--jobs", 2, "--out", out)
    plain = tfrclab.reproduce("seed-000", quick=True, jobs=2, progress=False)
    assert plain.remedied_claims is None
    rep = tfrclab.reproduce("seed-000", quick=True, jobs=2, progress=False, phase_remedy=True)
    summary = json.loads((out / "summary.json").read_text())
    entry = next(p for p in summary["papers"] if p["id"] == "seed-000")
    remedied = rep.remedied_claims
    assert [v["id"] for v in entry["remedied_verdicts"]] == list(remedied["claim"])
    assert [v["verdict"] for v in entry["remedied_verdicts"]] == list(remedied["verdict"])
    # The first pass is the plain run, seed for seed; the second differs from it somewhere.
    assert list(rep.claims["mean"]) == list(plain.claims["mean"])
    assert list(remedied["mean"]) != list(plain.claims["mean"])
    assert rep.summary["phase_remedy"] == summary["phase_remedy"]
    assert (Path(rep.dir) / "phase-remedy.md").is_file()


def test_phase_remedy_must_be_a_bool():
    with pytest.raises(TypeError, match="phase_remedy"):
        tfrclab.reproduce("seed-000", quick=True, progress=False, phase_remedy="yes")
