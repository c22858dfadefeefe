"""Benchmark, not a test: a 1,000-run sweep from Python against the same sweep from the CLI,
and the time of `import tfrclab` (issue 13, point 6; figures in docs/performance.md).

    python python/bench/sweep_vs_cli.py [--runs-per-point 100] [--jobs N] [--repeat 3]

Run from the repository root with the package installed and the CLI built
(`cargo build --release -p tfrclab`). Both sides run the same grid (10 points × 100 seeds of
scenarios/examples/dumbbell.toml shortened to 10 s) on the same number of threads; the script
checks that both produced the same aggregates, then prints the median wall-clock times.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = "scenarios/examples/dumbbell.toml"
GRID = {
    "duration": ["10s"],
    "warmup": ["2s"],
    "topology.bottleneck_bandwidth": ["1Mbps", "1.5Mbps", "2Mbps", "3Mbps", "4Mbps"],
    "topology.queue_limit": ["20", "50"],
}


def cli_sweep(exe: str, seeds: int, jobs: int, out: Path) -> float:
    args = [exe, "sweep", SCENARIO, "--seeds", str(seeds), "--jobs", str(jobs), "--out", str(out)]
    for k, vs in GRID.items():
        args += ["--set", f"{k}={','.join(vs)}"]
    t = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t


def py_sweep(seeds: int, jobs: int):
    import tfrclab

    t = time.perf_counter()
    sw = tfrclab.sweep(SCENARIO, grid=GRID, seeds=seeds, jobs=jobs, progress=False)
    agg = sw.aggregate()  # the DataFrame is part of what a user waits for
    runs = sw.runs
    return time.perf_counter() - t, agg, runs


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import tfrclab; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs-per-point", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cli", default=os.environ.get("TFRCLAB_BIN", "target/release/tfrclab"))
    a = ap.parse_args()
    points = 1
    for vs in GRID.values():
        points *= len(vs)
    runs = points * a.runs_per_point
    cli_t, py_t = [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.repeat):
            # Alternate the order so neither side always runs on a warmer machine.
            if i % 2 == 0:
                cli_t.append(cli_sweep(a.cli, a.runs_per_point, a.jobs, Path(d) / "cli"))
                t, agg, _ = py_sweep(a.runs_per_point, a.jobs)
                py_t.append(t)
            else:
                t, agg, _ = py_sweep(a.runs_per_point, a.jobs)
                py_t.append(t)
                cli_t.append(cli_sweep(a.cli, a.runs_per_point, a.jobs, Path(d) / "cli"))
        with open(Path(d) / "cli" / "sweep.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(agg), "both sides must aggregate the same rows"
        assert all(float(r["mean"]) == m for r, m in zip(rows, agg["mean"])), "the same means"
    imports = sorted(import_time() for _ in range(5))
    c, p = statistics.median(cli_t), statistics.median(py_t)
    print(f"{runs} runs ({points} grid points x {a.runs_per_point} seeds) on {a.jobs} thread(s), median of {a.repeat}:")
    print(f"  CLI    tfrclab sweep   {c:7.2f} s   ({', '.join(f'{x:.2f}' for x in cli_t)})")
    print(f"  Python tfrclab.sweep   {p:7.2f} s   ({', '.join(f'{x:.2f}' for x in py_t)})")
    print(f"  Python / CLI           {p / c:7.3f}")
    print(f"  import tfrclab         {imports[2] * 1e3:7.1f} ms  (median of 5 fresh interpreters)")


if __name__ == "__main__":
    main()
