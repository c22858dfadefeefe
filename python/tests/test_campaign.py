"""Sweeps on executors (a real dask.distributed LocalCluster, a thread pool) and campaigns opened
from Python: the same numbers as a local sweep and as `tfrclab campaign merge`."""

import concurrent.futures

import pandas as pd
import pytest

import tfrclab

SCENARIO = "scenarios/examples/dumbbell.toml"
GRID = {"topology.bottleneck_bandwidth": ["1Mbps", "2Mbps"]}
SHORT = {"duration": "3s", "warmup": "1s"}


def local(grid=GRID, set=SHORT):
    return tfrclab.sweep(SCENARIO, grid=grid, seeds=3, set=set, progress=False)


def test_a_dask_local_cluster_gives_the_local_sweep():
    import dask
    from dask.distributed import Client, LocalCluster

    # Generous connection timeouts: the test machine may be heavily loaded (not a timing test).
    with dask.config.set({"distributed.comm.timeouts.connect": "120s", "distributed.comm.timeouts.tcp": "120s"}):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            with Client(cluster) as client:
                seen = []
                r = tfrclab.sweep(
                    SCENARIO, grid=GRID, seeds=3, set=SHORT, executor=client, progress=lambda d, t: seen.append((d, t))
                )
                # The runs really ran on the cluster's worker processes.
                assert len(client.scheduler_info()["workers"]) == 2
    expected = local()
    assert seen[-1] == (6, 6)
    pd.testing.assert_frame_equal(r.aggregate(), expected.aggregate())
    pd.testing.assert_frame_equal(r.runs, expected.runs)
    strip = lambda s: [(p, seed, {k: v for k, v in d.items() if k != "wall_s"}) for p, seed, d in s]  # noqa: E731
    assert strip(r.summaries) == strip(expected.summaries)


def test_any_futures_executor_works_and_bad_executors_are_refused():
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        r = tfrclab.sweep(SCENARIO, grid=GRID, seeds=3, set=SHORT, executor=pool, progress=False)
    pd.testing.assert_frame_equal(r.aggregate(), local().aggregate())
    with pytest.raises(TypeError, match="executor: expected a dask.distributed.Client"):
        tfrclab.sweep(SCENARIO, grid=GRID, seeds=1, set=SHORT, executor=object())
    with pytest.raises(ValueError, match="jobs or executor, not both"):
        tfrclab.sweep(SCENARIO, grid=GRID, seeds=1, set=SHORT, executor=object(), jobs=2)
    # Bad grids are refused before anything is submitted.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match="topology.nope"):
            tfrclab.sweep(SCENARIO, grid={"topology.nope": [1, 2]}, seeds=1, executor=pool)


def test_a_campaign_opens_as_data_frames(cli, tmp_path):
    d = tmp_path / "c"
    cli(
        "campaign", "new", d, SCENARIO, "--set", "topology.bottleneck_bandwidth=1Mbps,2Mbps",
        "--set", "duration=3s", "--set", "warmup=1s", "--seeds", "3",
    )
    cli("campaign", "run", d, "--shard", "0/2", "-q")
    c = tfrclab.Campaign(d)
    assert c.status == {"total": 6, "done": 3, "missing": 3, "failed": 0}
    assert not c.complete
    assert list(c.missing["index"]) == [1, 3, 5]
    assert len(c.runs) == 3 * 2
    cli("campaign", "run", d, "-q")
    c = tfrclab.Campaign(d)
    assert c.complete and c.status["done"] == 6
    assert c.missing.empty
    # What `campaign merge` writes, in one line of pandas each.
    cli("campaign", "merge", d, "--out", tmp_path / "m")
    from_parquet = pd.read_parquet(tmp_path / "m" / "flows.parquet")
    from_csv = pd.read_csv(tmp_path / "m" / "flows.csv")
    runs = c.runs
    assert list(from_parquet.columns) == list(runs.columns)
    assert "topology.bottleneck_bandwidth (Mb/s)" in runs.columns
    assert sorted(runs["topology.bottleneck_bandwidth (Mb/s)"].unique()) == [1.0, 2.0]
    pd.testing.assert_frame_equal(from_parquet, runs, check_dtype=False)
    pd.testing.assert_frame_equal(from_csv, runs, check_dtype=False)
    # The aggregates are those of the local sweep of the same grid (duration and warmup are
    # one-value axes of the campaign, as of `tfrclab sweep --set duration=3s`).
    same_grid = {**GRID, "duration": ["3s"], "warmup": ["1s"]}
    pd.testing.assert_frame_equal(c.aggregate(), local(same_grid, None).aggregate())


def test_bad_campaigns_are_refused(tmp_path, cli):
    with pytest.raises(ValueError, match="no such campaign directory"):
        tfrclab.Campaign(tmp_path / "nope")
    with pytest.raises(ValueError, match="not a campaign directory"):
        tfrclab.Campaign(tmp_path)
    d = tmp_path / "c"
    cli("campaign", "new", d, SCENARIO, "--set", "duration=6s", "--seeds", "2")
    m = d / "manifest.json"
    m.write_text(m.read_text().replace('"seeds": 2', '"seeds": 1'))
    with pytest.raises(ValueError, match="changed after tfrclab campaign new"):
        tfrclab.Campaign(d)
