"""tfrclab in Python: scenarios in, pandas DataFrames out.

The simulations run in the same Rust library as the ``tfrclab`` command line (bound, not
shelled out to), so a run here gives the numbers ``tfrclab run`` writes for the same scenario
and seed. See docs/python.md for the whole API and a worked example::

    import tfrclab
    sc = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml")
    r = tfrclab.run(sc, seed=1)
    r.flows[["name", "throughput_bps", "loss_rate"]]
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported on first use: `import tfrclab` stays fast
    import pandas as pd

from . import _native
from ._native import ScenarioError

__all__ = [
    "Scenario",
    "ScenarioError",
    "RunResult",
    "SweepResult",
    "Campaign",
    "Reproduction",
    "run",
    "sweep",
    "equation",
    "reproduce",
    "validate",
    "Validation",
    "__version__",
]

__version__: str = _native.__version__
ScenarioError.__module__ = "tfrclab"

PathLike = Union[str, "os.PathLike[str]"]
SetValue = Union[str, int, float, bool, Sequence[Any]]


def _pandas() -> Any:
    import pandas

    return pandas


# ---------------------------------------------------------------------------------------------
# Argument checking: every error names the argument.


def _toml_literal(where: str, v: Any) -> str:
    """A value inside a TOML array."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{where}: {v!r} is not a finite number")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_literal(where, x) for x in v) + "]"
    raise TypeError(f"{where}: {type(v).__name__} cannot be a scenario value")


def _set_text(where: str, v: Any) -> str:
    """A value as the CLI's ``--set KEY=VALUE`` takes it: strings as written (``"5Mbps"``)."""
    if isinstance(v, str):
        return v
    return _toml_literal(where, v)


def _sets(arg: str, sets: Optional[Mapping[str, SetValue]]) -> List[Tuple[str, str]]:
    if sets is None:
        return []
    if not isinstance(sets, Mapping):
        raise TypeError(f"{arg}: expected a dict of scenario key to value, got {type(sets).__name__}")
    out = []
    for k, v in sets.items():
        if not isinstance(k, str) or not k.strip():
            raise TypeError(f"{arg}: keys are dotted scenario keys as strings, got {k!r}")
        out.append((k.strip(), _set_text(f"{arg}[{k!r}]", v)))
    return out


def _opt_int(arg: str, v: Any, minimum: int, maximum: Optional[int] = None) -> Optional[int]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{arg}: expected an int, got {type(v).__name__}")
    if v < minimum or (maximum is not None and v > maximum):
        hi = "" if maximum is None else f" and at most {maximum}"
        raise ValueError(f"{arg} = {v}: must be at least {minimum}{hi}")
    return v


_U64 = 2**64 - 1
_U32 = 2**32 - 1


def _number(arg: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{arg}: expected a number, got {type(v).__name__}")
    return float(v)


def _progress(progress: Any, desc: str) -> Tuple[Optional[Callable[[int, int], None]], Callable[[], None]]:
    """(callback(done, total), close) for ``progress``: True (a tqdm bar: a widget in notebooks,
    text in terminals), False/None (nothing), or a callable taking (done, total)."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is not True:
        raise TypeError("progress: expected True, False or a callable(done, total)")
    from tqdm.auto import tqdm

    bar = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit="run")
        bar.update(done - bar.n)

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close


# ---------------------------------------------------------------------------------------------
# Scenarios


class Scenario:
    """A validated scenario (docs/scenario.md documents every key).

    Build one with :meth:`Scenario.load`, :meth:`Scenario.from_toml` or
    :meth:`Scenario.from_dict`; change values with :meth:`with_set`. Invalid input raises
    :class:`ScenarioError` with ``.path``, ``.line`` and ``.column``.
    """

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        # Not for users: use the constructors below.
        self._native = native

    @staticmethod
    def load(path: PathLike, set: Optional[Mapping[str, SetValue]] = None) -> "Scenario":
        """Read and validate the scenario file ``path``, after ``set`` overrides (as the CLI's
        ``--set KEY=VALUE``: ``{"topology.bottleneck_bandwidth": "5Mbps"}``)."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path: expected a file path, got {type(path).__name__}")
        return Scenario(_native.NativeScenario.load(os.fspath(path), _sets("set", set)))

    @staticmethod
    def from_toml(text: str, name: str = "<string>") -> "Scenario":
        """Validate scenario TOML ``text``; errors name it ``name``."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected TOML as str, got {type(text).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"name: expected str, got {type(name).__name__}")
        return Scenario(_native.NativeScenario.parse(name, text))

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "Scenario":
        """Validate a scenario given as a dict with the TOML file's structure
        (``{"name": ..., "topology": {...}, "flows": [{...}, ...]}``). Errors name it
        ``<dict>`` and point into its TOML form (:attr:`source`)."""
        if not isinstance(d, Mapping):
            raise TypeError(f"d: expected a dict, got {type(d).__name__}")
        try:
            text = json.dumps(d, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"d: holds a value TOML cannot express: {e}") from None
        return Scenario(_native.NativeScenario.parse("<dict>", _native.NativeScenario.json_to_toml(text)))

    def with_set(self, set: Mapping[str, SetValue]) -> "Scenario":
        """A copy with ``set`` overrides applied to the scenario's text: the CLI's ``--set``, with
        the same keys and the same errors."""
        return Scenario(self._native.with_sets(_sets("set", set)))

    @property
    def name(self) -> str:
        """``name``."""
        return self._native.name

    @property
    def description(self) -> Optional[str]:
        """``description``."""
        return self._native.description

    @property
    def file(self) -> str:
        """The file it came from, as named (``<string>``/``<dict>`` for text and dicts)."""
        return self._native.file

    @property
    def source(self) -> str:
        """The scenario's TOML text, after overrides."""
        return self._native.source

    @property
    def seed(self) -> int:
        """``seed``: the seed a run uses unless given one."""
        return self._native.seed

    @property
    def duration_s(self) -> float:
        """``duration`` in seconds."""
        return self._native.duration_s

    @property
    def warmup_s(self) -> float:
        """``warmup`` in seconds."""
        return self._native.warmup_s

    @property
    def flows(self) -> List[Tuple[str, str]]:
        """(name, kind) of every flow, in file order."""
        return list(self._native.flows)

    @property
    def links(self) -> List[str]:
        """Link names, in the order of ``RunResult.links``."""
        return list(self._native.links)

    @property
    def nodes(self) -> List[str]:
        """Node names."""
        return list(self._native.nodes)

    def __repr__(self) -> str:
        return (
            f"Scenario({self.name!r}, file={self.file!r}, {len(self.flows)} flows, "
            f"{len(self.links)} links, duration_s={self.duration_s}, seed={self.seed})"
        )


def _scenario(arg: str, scenario: Union[Scenario, PathLike], sets: Optional[Mapping[str, SetValue]]) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario.with_set(sets) if sets else scenario
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.load(scenario, set=sets)
    raise TypeError(f"{arg}: expected a tfrclab.Scenario or a file path, got {type(scenario).__name__}")


# ---------------------------------------------------------------------------------------------
# Runs

_TEXT_COLUMNS = {"name", "kind", "subject", "metric"}


def _is_count(column: str) -> bool:
    return column.endswith("_packets") or column.startswith("dropped_")


def _typed(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Dict[str, list]:
    """CSV cells (as the CLI writes them) as numbers: exact, since Rust writes the shortest
    text that reads back as the same float."""
    cols: Dict[str, list] = {}
    for i, h in enumerate(header):
        cells = [r[i] for r in rows]
        if h in _TEXT_COLUMNS:
            cols[h] = cells
        elif _is_count(h):
            cols[h] = [int(float(c)) for c in cells]
        else:
            cols[h] = [float(c) for c in cells]
    return cols


class RunResult:
    """One run's results: the numbers ``tfrclab run`` writes for the same scenario and seed."""

    def __init__(self, native: Any, scenario: Scenario) -> None:
        self._native = native
        self.scenario: Scenario = scenario
        """The scenario that ran."""
        self._summary: Optional[dict] = None
        self._flows: Optional[pd.DataFrame] = None
        self._links: Optional[pd.DataFrame] = None
        self._timeseries: Optional[pd.DataFrame] = None

    @property
    def summary(self) -> dict:
        """``summary.json`` as a dict (equal to the CLI's, ``wall_s`` aside)."""
        if self._summary is None:
            self._summary = json.loads(self._native.summary_json())
        return self._summary

    @property
    def seed(self) -> int:
        """The seed the run used."""
        return self.summary["seed"]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow: the columns of ``flows.csv`` (docs/metrics.md), numbers as numbers."""
        if self._flows is None:
            header, rows = self._native.flows_table()
            self._flows = _pandas().DataFrame(_typed(header, rows), columns=header)
        return self._flows.copy()

    @property
    def links(self) -> pd.DataFrame:
        """One row per link direction: ``summary.json``'s ``links``, drops by cause as
        ``dropped_<cause>``, RED state as ``red_<field>`` (NaN for DropTail queues)."""
        if self._links is None:
            rows = []
            for link in self.summary["links"]:
                row = {k: v for k, v in link.items() if k not in ("dropped_by_cause", "red")}
                for cause, n in link["dropped_by_cause"].items():
                    row[f"dropped_{cause}"] = n
                for k, v in (link.get("red") or {}).items():
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        row[f"red_{k}"] = v
                rows.append(row)
            self._links = _pandas().DataFrame(rows)
        return self._links.copy()

    @property
    def timeseries(self) -> pd.DataFrame:
        """Tidy time series (``timeseries.csv``): ``time_s``, ``subject`` (flow, or link with
        ``>`` forward / ``<`` reverse), ``metric``, ``value``."""
        if self._timeseries is None:
            cols = self._native.timeseries()
            self._timeseries = _pandas().DataFrame(cols, columns=["time_s", "subject", "metric", "value"])
        return self._timeseries.copy()

    def timeseries_wide(self, metric: str) -> pd.DataFrame:
        """One metric as a wide table for plotting: index ``time_s``, one column per subject."""
        if not isinstance(metric, str):
            raise TypeError(f"metric: expected str, got {type(metric).__name__}")
        ts = self.timeseries
        known = sorted(ts["metric"].unique())
        if metric not in known:
            raise ValueError(f"metric: no time series {metric!r}; this run has {', '.join(known)}")
        sel = ts[ts["metric"] == metric]
        wide = sel.pivot_table(index="time_s", columns="subject", values="value", aggfunc="first", sort=False)
        wide.columns.name = None
        return wide

    def write(self, dir: PathLike) -> str:
        """Write what ``tfrclab run`` writes (summary.json, flows.csv, timeseries.csv,
        report.html) into ``dir``; returns the folder."""
        return self._native.write(os.fspath(dir))

    def __repr__(self) -> str:
        return f"RunResult({self.scenario.name!r}, seed={self.seed}, {len(self.scenario.flows)} flows)"


def run(
    scenario: Union[Scenario, PathLike],
    seed: Optional[int] = None,
    set: Optional[Mapping[str, SetValue]] = None,
    record_delays: bool = False,
) -> RunResult:
    """Simulate ``scenario`` (a :class:`Scenario` or a file path) once.

    ``seed`` overrides the scenario's seed; ``set`` applies overrides first (the CLI's
    ``--set``). The GIL is released while it simulates.
    """
    sc = _scenario("scenario", scenario, set)
    seed = _opt_int("seed", seed, 0, _U64)
    if not isinstance(record_delays, bool):
        raise TypeError("record_delays: expected a bool")
    return RunResult(_native.run(sc._native, seed, record_delays), sc)


# ---------------------------------------------------------------------------------------------
# Sweeps


class SweepResult:
    """A sweep's results: every run's per-flow metrics and the CLI's ``sweep.csv`` aggregates."""

    def __init__(self, native: Any, scenario: Scenario) -> None:
        self._native = native
        self.scenario: Scenario = scenario
        """The swept scenario."""
        self._runs: Optional[pd.DataFrame] = None
        self._aggregate: Optional[pd.DataFrame] = None

    @property
    def runs(self) -> pd.DataFrame:
        """One row per (grid point, seed, flow): ``point`` (1-based, as in sweep.csv), one column
        per grid key (numeric when every value is a number, bandwidth (Mb/s) or duration (s or
        ms), the unit in the column name, e.g. ``topology.bottleneck_bandwidth (Mb/s)``),
        ``seed``, then the columns of ``flows.csv``."""
        if self._runs is None:
            grid, header, rows = self._native.runs_table()
            cols = dict(grid)
            cols.update(_typed(header, rows))
            self._runs = _pandas().DataFrame(cols, columns=list(grid) + list(header))
        return self._runs.copy()

    def aggregate(self) -> pd.DataFrame:
        """Mean and 95% confidence interval per grid point, subject (flow, flow kind or link
        direction) and metric: the numbers of the CLI's ``sweep.csv`` (``sd`` and the CI are NaN
        with one seed)."""
        if self._aggregate is None:
            self._aggregate = _pandas().DataFrame(self._native.aggregates())
        return self._aggregate.copy()

    @property
    def summaries(self) -> List[Tuple[int, int, dict]]:
        """(point, seed, summary.json dict) of every run, in grid order."""
        return [(p, s, json.loads(j)) for p, s, j in self._native.summaries()]

    @property
    def jobs(self) -> int:
        """Worker threads used."""
        return self._native.jobs

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds of all runs."""
        return self._native.wall_s

    def write(self, dir: PathLike) -> str:
        """Write what ``tfrclab sweep`` writes (sweep.csv, runs.csv, sweep.json, report.html)
        into ``dir``; returns the folder."""
        return self._native.write(os.fspath(dir))

    def __repr__(self) -> str:
        return f"SweepResult({self.scenario.name!r}, {self._native.n_runs} runs, jobs={self.jobs})"


def _grid(grid: Optional[Mapping[str, Iterable[SetValue]]]) -> List[Tuple[str, List[str]]]:
    if grid is None:
        return []
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid: expected a dict of scenario key to a list of values, got {type(grid).__name__}")
    axes = []
    for k, values in grid.items():
        if not isinstance(k, str) or not k.strip():
            raise TypeError(f"grid: keys are dotted scenario keys as strings, got {k!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"grid[{k!r}]: expected a list of values, got {type(values).__name__}")
        texts = [_set_text(f"grid[{k!r}]", v) for v in values]
        if not texts:
            raise ValueError(f"grid[{k!r}]: no values")
        axes.append((k.strip(), texts))
    return axes


def sweep(
    scenario: Union[Scenario, PathLike],
    grid: Optional[Mapping[str, Iterable[SetValue]]] = None,
    seeds: int = 5,
    seed_base: Optional[int] = None,
    jobs: Optional[int] = None,
    progress: Union[bool, Callable[[int, int], None], None] = True,
    set: Optional[Mapping[str, SetValue]] = None,
    executor: Any = None,
) -> SweepResult:
    """Run ``scenario`` at every point of ``grid`` (the Cartesian product of its value lists,
    first key outermost) with ``seeds`` seeds each, on ``jobs`` threads (None: every core).

    The CLI's ``tfrclab sweep`` with one ``--set KEY=V1,V2,...`` per grid key, ``--seeds``,
    ``--seed-base`` and ``--jobs``. Every grid point is validated before anything runs.
    ``progress``: True shows a tqdm bar, or pass a callable(done, total). Ctrl-C (or an
    exception raised by the callable) stops the sweep: runs not yet started are skipped.

    ``executor``: run the runs elsewhere, one task per run: a ``dask.distributed.Client`` (a
    ``LocalCluster``, or ``dask_jobqueue.SLURMCluster`` for a Slurm cluster) or any
    ``concurrent.futures.Executor``. Every grid point is validated here first; the workers need
    tfrclab installed; the result is the same as without an executor (docs/cluster.md).
    """
    sc = _scenario("scenario", scenario, set)
    axes = _grid(grid)
    seeds_n = _opt_int("seeds", seeds, 1, _U32)
    base = _opt_int("seed_base", seed_base, 0, _U64)
    jobs = _opt_int("jobs", jobs, 1, _U32)
    if executor is not None:
        if jobs is not None:
            raise ValueError("jobs: the executor decides how many runs run at a time; give jobs or executor, not both")
        return _sweep_on(executor, sc, axes, seeds_n, base, progress)
    callback, close = _progress(progress, f"sweep {sc.name}")
    try:
        native = _native.run_sweep(sc._native, axes, seeds_n, base, jobs, callback)
    finally:
        close()
    return SweepResult(native, sc)


def _run_task(file: str, text: str, overrides: List[Tuple[str, str]], seed: int) -> str:
    """One run of a sweep on an executor's worker: its summary.json as JSON text."""
    return _native.run_task(file, text, overrides, seed)


def _as_completed(executor: Any, futures: list) -> Iterable[Any]:
    if type(executor).__module__.split(".")[0] == "distributed":
        from distributed import as_completed

        return as_completed(futures)
    import concurrent.futures

    return concurrent.futures.as_completed(futures)


def _sweep_on(executor: Any, sc: Scenario, axes: list, seeds: int, base: Optional[int], progress: Any) -> SweepResult:
    import time

    if not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor: expected a dask.distributed.Client or a concurrent.futures.Executor "
            f"(something with .submit), got {type(executor).__name__}"
        )
    tasks = _native.plan_sweep(sc._native, axes, seeds, base)
    callback, close = _progress(progress, f"sweep {sc.name}")
    t0 = time.monotonic()
    futures = [executor.submit(_run_task, sc.file, sc.source, list(o), seed) for _, seed, o in tasks]
    index = {id(f): i for i, f in enumerate(futures)}
    summaries: List[Optional[str]] = [None] * len(futures)
    try:
        for n, f in enumerate(_as_completed(executor, futures), 1):
            i = index[id(f)]
            try:
                summaries[i] = f.result()
            except Exception as e:
                point, seed, o = tasks[i]
                label = ", ".join(f"{k}={v}" for k, v in o) or "the scenario as written"
                raise RuntimeError(f"grid point {point + 1} ({label}), seed {seed}: {e}") from e
            if callback is not None:
                callback(n, len(futures))
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        close()
    native = _native.sweep_from_summaries(sc._native, axes, seeds, base, summaries, time.monotonic() - t0)
    return SweepResult(native, sc)


# ---------------------------------------------------------------------------------------------
# Campaigns


class Campaign:
    """A campaign directory (``tfrclab campaign new``; docs/cluster.md) opened for analysis: the
    results present, merged. A campaign still running can be opened: :attr:`missing` lists the
    runs without a result.

    Raises ``ValueError`` when ``dir`` is not a campaign, its manifest was edited by hand, or
    ``results/`` holds a file of another campaign."""

    def __init__(self, dir: PathLike) -> None:
        if not isinstance(dir, (str, os.PathLike)):
            raise TypeError(f"dir: expected a directory path, got {type(dir).__name__}")
        self.dir: str = os.fspath(dir)
        """The campaign directory."""
        self._native = _native.open_campaign(self.dir)
        self._runs: Optional[pd.DataFrame] = None
        self._sweep: Optional[SweepResult] = None

    @property
    def id(self) -> str:
        """The campaign id (``manifest.json``'s ``campaign``)."""
        return self._native.id

    @property
    def status(self) -> Dict[str, int]:
        """Counts of runs: ``total``, ``done``, ``missing``, ``failed``."""
        nd = self._native.not_done()
        failed = sum(1 for r in nd if r[4] == "failed")
        return {"total": self._native.total, "done": self._native.done, "missing": len(nd) - failed, "failed": failed}

    @property
    def complete(self) -> bool:
        """Whether every run has a result."""
        return self._native.done == self._native.total

    @property
    def runs(self) -> pd.DataFrame:
        """One row per (run, flow): the merged ``flows.csv`` / ``flows.parquet``: ``run_id``,
        ``point``, one column per grid key (numeric with the unit in its name when every value is
        a number, bandwidth or duration), ``seed``, the columns of ``flows.csv``, then ``host``,
        ``wall_s``, ``cpu_s``."""
        if self._runs is None:
            names, cols = self._native.table()
            self._runs = _pandas().DataFrame(cols, columns=names)
        return self._runs.copy()

    @property
    def missing(self) -> pd.DataFrame:
        """The runs without a result: ``index``, ``run_id``, ``point``, ``seed``, ``status``
        (missing or failed), ``error``."""
        rows = self._native.not_done()
        return _pandas().DataFrame(rows, columns=["index", "run_id", "point", "seed", "status", "error"])

    @property
    def sweep(self) -> SweepResult:
        """The runs present as a :class:`SweepResult` (what ``tfrclab campaign merge`` writes)."""
        if self._sweep is None:
            sc = Scenario.from_toml(self._native.scenario_text, name=self._native.scenario_file)
            self._sweep = SweepResult(self._native.sweep(), sc)
        return self._sweep

    def aggregate(self) -> pd.DataFrame:
        """Mean and 95% CI per grid point, subject and metric over the runs present (the numbers
        of the merged ``sweep.csv``)."""
        return self.sweep.aggregate()

    def __repr__(self) -> str:
        st = self.status
        return f"Campaign({self.dir!r}, {st['done']} of {st['total']} runs done, {st['failed']} failed)"


# ---------------------------------------------------------------------------------------------
# The equation


def equation(s: float, rtt: float, p: float, t_rto: Optional[float] = None) -> float:
    """The TCP throughput equation of RFC 5348 §3.1 (b = 1): the allowed rate in bytes/s for
    segment size ``s`` (bytes), round-trip time ``rtt`` (s), loss event rate ``p`` in (0, 1]
    and ``t_rto`` (s, default 4·rtt)."""
    return _native.equation(
        _number("s", s),
        _number("rtt", rtt),
        _number("p", p),
        None if t_rto is None else _number("t_rto", t_rto),
    )


# ---------------------------------------------------------------------------------------------
# Validation against NS-2


class Validation:
    """``tfrclab validate`` for one scenario: NS-2.35 and tfrclab run with the same seeds, their
    means compared within the scenario's tolerances (docs/validation.md)."""

    def __init__(self, report: dict) -> None:
        self.report: dict = report
        """``validate.json``'s entry for the scenario: every figure, per seed."""

    @property
    def passed(self) -> bool:
        """Whether every check is within its tolerance."""
        return bool(self.report["pass"])

    @property
    def checks(self) -> "pd.DataFrame":
        """One row per check: ``metric``, ``subject``, ``ns2``, ``tfrclab``, ``difference``,
        ``tolerance``, ``pass``."""
        return _pandas().DataFrame(self.report["checks"])

    def __repr__(self) -> str:
        failed = sum(1 for c in self.report["checks"] if not c["pass"])
        return f"Validation({self.report['name']!r}, passed={self.passed}, {len(self.report['checks'])} checks, {failed} failed)"


def validate(
    scenario: Union[Scenario, PathLike],
    ns: PathLike = "ns",
    timeout_s: float = 600.0,
    set: Optional[Mapping[str, SetValue]] = None,
) -> Validation:
    """Run ``scenario`` in NS-2.35 (the ``ns`` binary: a name on PATH or a path) and in tfrclab
    with the scenario's ``[validate] seeds`` and compare (``tfrclab validate``). Raises
    ``ValueError`` when the scenario uses what NS-2 cannot express or ``ns`` cannot be run (with
    how to install it), ``RuntimeError`` when NS-2 fails."""
    sc = _scenario("scenario", scenario, set)
    if not isinstance(ns, (str, os.PathLike)):
        raise TypeError(f"ns: expected a program name or path, got {type(ns).__name__}")
    report = _native.validate(sc._native, os.fspath(ns), _number("timeout_s", timeout_s))
    return Validation(json.loads(report))


from ._papers import Reproduction, reproduce  # noqa: E402  (it uses the helpers above)
