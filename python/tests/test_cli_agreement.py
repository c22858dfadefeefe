"""Python and the CLI agree exactly on the same scenario and seed (issue 13, point 5).

Both front ends call the same lab library, so nothing here has a tolerance: every number the
CLI writes must come back from Python bit for bit. The only field allowed to differ is
`wall_s`, the wall-clock time of the simulation.
"""

import csv
import json
import math
from pathlib import Path

import pytest

import tfrclab

EXAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("scenarios", "examples").glob("*.toml"))


def _strip_wall(summary: dict) -> dict:
    s = dict(summary)
    assert isinstance(s.pop("wall_s"), float)
    return s


def _cell(text: str):
    """A CSV cell as the number it holds (exact: the CLI writes round-trip floats)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_run_equals_cli_files(path, cli, tmp_path):
    rel = path.relative_to(Path.cwd())
    out = tmp_path / "out"
    cli("run", rel, "--seed", 5, "--out", out)
    r = tfrclab.run(str(rel), seed=5)

    # summary.json: every field, every flow, link, account and variant counter.
    cli_summary = json.loads((out / "summary.json").read_text())
    assert _strip_wall(r.summary) == _strip_wall(cli_summary)
    assert r.seed == 5

    # flows.csv: same columns in the same order, numbers as numbers, equal values.
    with open(out / "flows.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    flows = r.flows
    assert list(flows.columns) == header
    assert len(flows) == len(body) == len(r.scenario.flows)
    for i, row in enumerate(body):
        for col, text in zip(header, row):
            got = flows.iloc[i][col]
            want = _cell(text)
            if isinstance(want, str):
                assert got == want, (col, i)
            else:
                assert not isinstance(got, str), f"{col} should be numeric"
                assert _same(float(got), float(want)), (col, i, got, want)

    # timeseries.csv: tidy rows in the CLI's order.
    with open(out / "timeseries.csv", newline="") as f:
        ts_rows = list(csv.DictReader(f))
    ts = r.timeseries
    assert list(ts.columns) == ["time_s", "subject", "metric", "value"]
    assert len(ts) == len(ts_rows)
    for i in range(0, len(ts_rows), max(1, len(ts_rows) // 200)):
        row = ts.iloc[i]
        want = ts_rows[i]
        assert (row["subject"], row["metric"]) == (want["subject"], want["metric"])
        assert row["time_s"] == float(want["time_s"])
        assert _same(float(row["value"]), float(want["value"]))


def test_links_frame_is_the_summary_links(cli, tmp_path):
    r = tfrclab.run("scenarios/examples/red.toml", seed=2)
    links = r.links
    assert len(links) == len(r.summary["links"])
    for i, link in enumerate(r.summary["links"]):
        row = links.iloc[i]
        assert (row["name"], row["direction"]) == (link["name"], link["direction"])
        assert row["tx_packets"] == link["tx_packets"]
        assert row["utilisation"] == link["utilisation"]
        for cause, n in link["dropped_by_cause"].items():
            assert row[f"dropped_{cause}"] == n
    # RED links carry their state, DropTail links NaN there.
    red = [i for i, link in enumerate(r.summary["links"]) if link.get("red")]
    assert red, "red.toml has a RED bottleneck"
    red_cols = [c for c in links.columns if c.startswith("red_")]
    assert red_cols
    assert not links.iloc[red[0]][red_cols].isna().all()


def test_timeseries_wide_is_the_tidy_table_pivoted():
    r = tfrclab.run("scenarios/examples/dumbbell.toml", seed=1)
    wide = r.timeseries_wide("throughput_bps")
    assert list(wide.columns) == ["tfrc1", "tcp1"]
    tidy = r.timeseries
    tfrc = tidy[(tidy.metric == "throughput_bps") & (tidy.subject == "tfrc1")]
    assert list(wide["tfrc1"]) == list(tfrc["value"])
    assert list(wide.index) == list(tfrc["time_s"])
    with pytest.raises(ValueError, match="metric: no time series 'nope'"):
        r.timeseries_wide("nope")


def test_with_set_equals_cli_set(cli, tmp_path):
    out = tmp_path / "o"
    cli("run", "scenarios/examples/dumbbell.toml", "--seed", 4, "--set", "topology.bottleneck_bandwidth=5Mbps", "--out", out)
    sc = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml").with_set({"topology.bottleneck_bandwidth": "5Mbps"})
    a = tfrclab.run(sc, seed=4)
    b = tfrclab.run("scenarios/examples/dumbbell.toml", seed=4, set={"topology.bottleneck_bandwidth": "5Mbps"})
    cli_summary = _strip_wall(json.loads((out / "summary.json").read_text()))
    assert _strip_wall(a.summary) == cli_summary
    assert _strip_wall(b.summary) == cli_summary
    # The override changed something: at 5 Mb/s the flows get more than at 1.5 Mb/s.
    base = tfrclab.run("scenarios/examples/dumbbell.toml", seed=4)
    assert a.flows["throughput_bps"].sum() > base.flows["throughput_bps"].sum()


def test_runs_are_deterministic_and_seeded():
    a = tfrclab.run("scenarios/examples/dumbbell.toml", seed=9)
    b = tfrclab.run("scenarios/examples/dumbbell.toml", seed=9)
    c = tfrclab.run("scenarios/examples/dumbbell.toml", seed=10)
    assert _strip_wall(a.summary) == _strip_wall(b.summary)
    assert _strip_wall(a.summary) != _strip_wall(c.summary)
    # Without a seed, the scenario's own (dumbbell.toml: seed = 7).
    assert tfrclab.run("scenarios/examples/dumbbell.toml").seed == 7


def test_sweep_aggregate_equals_cli_sweep_csv(cli, tmp_path):
    out = tmp_path / "sw"
    cli(
        "sweep", "scenarios/examples/dumbbell.toml",
        "--set", "topology.bottleneck_bandwidth=2Mbps,10Mbps",
        "--set", "topology.queue_limit=20,50",
        "--seeds", 3, "--jobs", 2, "--out", out,
    )
    sw = tfrclab.sweep(
        "scenarios/examples/dumbbell.toml",
        grid={"topology.bottleneck_bandwidth": ["2Mbps", "10Mbps"], "topology.queue_limit": [20, 50]},
        seeds=3,
        jobs=2,
        progress=False,
    )
    agg = sw.aggregate()
    with open(out / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(agg) == len(rows)
    bw = "topology.bottleneck_bandwidth (Mb/s)"
    assert list(agg.columns[:3]) == ["point", bw, "topology.queue_limit"]
    for i, want in enumerate(rows):
        got = agg.iloc[i]
        assert int(got["point"]) == int(want["point"])
        assert got[bw] == {"2Mbps": 2.0, "10Mbps": 10.0}[want["topology.bottleneck_bandwidth"]]
        assert got["topology.queue_limit"] == float(want["topology.queue_limit"])
        assert (got["subject"], got["metric"]) == (want["subject"], want["metric"])
        assert int(got["n"]) == int(want["n"]) == 3
        for col in ["mean", "sd", "ci_half_width", "ci_lo", "ci_hi"]:
            w = float(want[col]) if want[col] != "" else math.nan
            assert _same(float(got[col]), w), (i, col, got[col], want[col])

    # One row per (grid point, seed, flow) with the flows.csv columns, from the same runs.
    runs = sw.runs
    assert len(runs) == 4 * 3 * 2
    assert list(runs.columns[:4]) == ["point", bw, "topology.queue_limit", "seed"]
    assert sorted(set(runs["seed"])) == [7, 8, 9]
    mean = runs[(runs.point == 3) & (runs.name == "tfrc1")]["throughput_bps"].mean()
    want = [r for r in rows if r["point"] == "3" and r["subject"] == "tfrc1" and r["metric"] == "throughput_bps"]
    assert math.isclose(mean, float(want[0]["mean"]), rel_tol=1e-12)  # summed in another order

    # The same runs.csv values the CLI writes.
    with open(out / "runs.csv", newline="") as f:
        cli_runs = [r for r in csv.DictReader(f) if r["metric"] == "loss_rate"]
    for r in cli_runs:
        row = runs[(runs.point == int(r["point"])) & (runs.seed == int(r["run_seed"])) & (runs.name == r["subject"])]
        assert len(row) == 1
        assert row["loss_rate"].iloc[0] == float(r["value"])


def test_sweep_results_do_not_depend_on_jobs():
    grid = {"topology.queue_limit": [10, 40]}
    seen = []
    one = tfrclab.sweep("scenarios/examples/dumbbell.toml", grid=grid, seeds=2, jobs=1, progress=False)
    two = tfrclab.sweep(
        "scenarios/examples/dumbbell.toml", grid=grid, seeds=2, jobs=2, progress=lambda d, t: seen.append((d, t))
    )
    assert one.aggregate().equals(two.aggregate())
    assert one.runs.equals(two.runs)
    assert one.jobs == 1 and two.jobs == 2
    assert "4 runs" in repr(two)
    # Progress counts up to the total and ends there.
    assert seen[-1] == (4, 4)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_sweep_write_gives_the_cli_files(tmp_path):
    sw = tfrclab.sweep("scenarios/examples/dumbbell.toml", seeds=2, jobs=1, progress=False)
    d = Path(sw.write(tmp_path / "w"))
    for f in ["sweep.csv", "runs.csv", "sweep.json", "report.html"]:
        assert (d / f).is_file(), f
    assert json.loads((d / "sweep.json").read_text())["runs"] == 2
    r = tfrclab.run("scenarios/examples/dumbbell.toml", seed=1)
    d = Path(r.write(tmp_path / "r"))
    assert _strip_wall(json.loads((d / "summary.json").read_text())) == _strip_wall(r.summary)
    assert (d / "report.html").stat().st_size > 1000


def test_equation_equals_rfc5348_and_the_cli(cli):
    s, rtt, p = 1000.0, 0.1, 0.01
    t_rto = 4 * rtt
    # RFC 5348 §3.1 with b = 1.
    want = s / (rtt * math.sqrt(2 * p / 3) + t_rto * (3 * math.sqrt(3 * p / 8) * p * (1 + 32 * p**2)))
    got = tfrclab.equation(s=s, rtt=rtt, p=p)
    assert math.isclose(got, want, rel_tol=1e-12)  # the same formula, evaluated in another order
    out = json.loads(cli("equation", "--s", 1000, "--rtt", 0.1, "--p", 0.01, "--json").stdout)
    assert got == out["bytes_per_second"]
    assert tfrclab.equation(1000, 0.1, 0.01, t_rto=1.0) < got
