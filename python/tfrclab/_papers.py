"""``tfrclab.reproduce``: the seed papers' experiments, claims and verdicts (docs/reproduce.md)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Union

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported on first use: `import tfrclab` stays fast
    import pandas as pd

from . import _native


def _pandas() -> Any:
    import pandas

    return pandas


def _find_scenarios() -> Path:
    """``scenarios/seeds`` in the current folder or the nearest parent that has one."""
    here = Path.cwd().resolve()
    for d in [here, *here.parents]:
        if (d / "scenarios" / "seeds").is_dir():
            return d / "scenarios" / "seeds"
    raise ValueError(
        "scenarios: no scenarios/seeds folder in the current folder or its parents; "
        "run from the tfrclab repository or pass scenarios='path/to/scenarios/seeds'"
    )


class Reproduction:
    """A finished reproduction: the claims with their estimates and verdicts, and the files
    ``tfrclab reproduce`` writes (one folder per paper with report.html, index.html,
    summary.json)."""

    def __init__(self, native: Any, owned_dir: bool) -> None:
        self._native = native
        self._owned = owned_dir

    @property
    def claims(self) -> pd.DataFrame:
        """One row per claim: ``paper``, ``claim`` (its id), ``text``, ``quantity``, ``unit``,
        ``direction`` (above/below/within), ``reference``, ``magnitude``, ``n`` (seeds),
        ``mean``, ``ci_lo``, ``ci_hi`` (95% CI) and ``verdict`` (supported / not supported /
        contradicted)."""
        return _pandas().DataFrame(self._native.claims())

    @property
    def remedied_claims(self) -> Optional[pd.DataFrame]:
        """With ``phase_remedy=True``: the same columns as :attr:`claims` for the second pass,
        run with phase effects removed (docs/phase-effects.md); ``None`` without it."""
        cols = self._native.remedied_claims()
        return None if cols is None else _pandas().DataFrame(cols)

    @property
    def summary(self) -> dict:
        """The reproduction's ``summary.json``."""
        return json.loads(self._native.summary_json)

    @property
    def dir(self) -> str:
        """The folder holding the written files."""
        return self._native.dir

    @property
    def runs(self) -> int:
        """Simulations run."""
        return self._native.runs

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds of all runs."""
        return self._native.wall_s

    def write(self, dir: Union[str, "os.PathLike[str]"]) -> str:
        """Copy the reports, tables and summary into ``dir`` (replaced if it holds an earlier
        tfrclab output); returns the folder."""
        target = Path(os.fspath(dir))
        if target.resolve() == Path(self.dir).resolve():
            return str(target)
        if target.exists():
            if not target.is_dir():
                raise ValueError(f"dir: {target} exists and is not a folder")
            ours = any((target / f).exists() for f in ("summary.json", "index.html"))
            if any(target.iterdir()) and not ours:
                raise ValueError(f"dir: {target} exists and does not look like a tfrclab output folder")
            shutil.rmtree(target)
        shutil.copytree(self.dir, target)
        return str(target)

    def __repr__(self) -> str:
        counts = self.claims["verdict"].value_counts().to_dict()
        return f"Reproduction({self.runs} runs, verdicts={counts})"

    def __del__(self) -> None:
        if getattr(self, "_owned", False):
            shutil.rmtree(Path(self._native.dir).parent, ignore_errors=True)


def reproduce(
    paper: Union[str, Sequence[str]] = "all",
    quick: bool = False,
    seeds: Optional[int] = None,
    jobs: Optional[int] = None,
    scenarios: Optional[Union[str, "os.PathLike[str]"]] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    progress: Union[bool, Callable[[int, int], None], None] = True,
    phase_remedy: bool = False,
) -> Reproduction:
    """Run the seed papers' experiments (``"seed-000"`` … ``"seed-004"``, ``"beyond-seeds"``,
    ``"rfc8867"``, a list of them, or ``"all"``) as ``tfrclab reproduce`` does, and judge
    every claim.

    ``quick``: fewer seeds and shorter runs (indicative only). ``seeds``: seeds per replicated
    configuration (default 10, 3 with ``quick``). ``scenarios``: the papers' scenario folder
    (default: ``scenarios/seeds`` in the current folder or a parent). ``out``: where to write the
    reports (default: a temporary folder; :meth:`Reproduction.write` copies them).
    ``phase_remedy``: also run everything with phase effects removed, as ``tfrclab reproduce
    --phase-remedy`` does; :attr:`Reproduction.remedied_claims` then holds that pass's claims
    and the output folder its comparison (``phase-remedy.md``).
    """
    from . import _opt_int, _progress

    if isinstance(paper, str):
        ids: List[str] = [paper]
    elif isinstance(paper, Sequence) and all(isinstance(p, str) for p in paper):
        ids = list(paper)
    else:
        raise TypeError("paper: expected a paper id such as 'seed-004', a list of them, or 'all'")
    if not isinstance(quick, bool):
        raise TypeError("quick: expected a bool")
    if not isinstance(phase_remedy, bool):
        raise TypeError("phase_remedy: expected a bool")
    seeds = _opt_int("seeds", seeds, 2, 2**32 - 1)
    jobs = _opt_int("jobs", jobs, 1, 2**32 - 1)
    folder = _find_scenarios() if scenarios is None else Path(os.fspath(scenarios))
    owned = out is None
    target = Path(tempfile.mkdtemp(prefix="tfrclab-reproduce-")) / "out" if owned else Path(os.fspath(out))
    callback, close = _progress(progress, "reproduce")
    try:
        native = _native.reproduce(
            ids, quick, seeds, jobs, str(folder), str(target), callback, phase_remedy
        )
    except BaseException:
        if owned:
            shutil.rmtree(target.parent, ignore_errors=True)
        raise
    finally:
        close()
    return Reproduction(native, owned)
