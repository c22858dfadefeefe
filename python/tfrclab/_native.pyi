"""Type stubs of the native module (crates/tfrclab-py). Private: use the `tfrclab` API."""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

__version__: str

class ScenarioError(ValueError):
    """A scenario file or text is invalid, or a `set` override cannot be applied."""

    path: str
    line: Optional[int]
    column: Optional[int]
    problems: List[Tuple[int, int, str, Optional[str]]]

class NativeScenario:
    @staticmethod
    def load(path: str, sets: Sequence[Tuple[str, str]]) -> NativeScenario: ...
    @staticmethod
    def parse(file: str, text: str) -> NativeScenario: ...
    @staticmethod
    def json_to_toml(json: str) -> str: ...
    def with_sets(self, sets: Sequence[Tuple[str, str]]) -> NativeScenario: ...
    name: str
    description: Optional[str]
    file: str
    source: str
    seed: int
    duration_s: float
    warmup_s: float
    flows: List[Tuple[str, str]]
    links: List[str]
    nodes: List[str]

class NativeRun:
    def summary_json(self) -> str: ...
    def flows_table(self) -> Tuple[List[str], List[List[str]]]: ...
    def timeseries(self) -> Dict[str, list]: ...
    def write(self, dir: str) -> str: ...

class NativeSweep:
    def runs_table(self) -> Tuple[Dict[str, list], List[str], List[List[str]]]: ...
    def aggregates(self) -> Dict[str, list]: ...
    def summaries(self) -> List[Tuple[int, int, str]]: ...
    def sweep_json(self) -> str: ...
    def write(self, dir: str) -> str: ...
    jobs: int
    n_runs: int
    wall_s: float

class NativeReproduction:
    def claims(self) -> Dict[str, list]: ...
    def remedied_claims(self) -> Optional[Dict[str, list]]: ...
    summary_json: str
    dir: str
    runs: int
    wall_s: float

def run(scenario: NativeScenario, seed: Optional[int], record_delays: bool) -> NativeRun: ...
def run_sweep(
    scenario: NativeScenario,
    axes: Sequence[Tuple[str, Sequence[str]]],
    seeds: int,
    seed_base: Optional[int],
    jobs: Optional[int],
    progress: Optional[Callable[[int, int], None]],
) -> NativeSweep: ...
def plan_sweep(
    scenario: NativeScenario,
    axes: Sequence[Tuple[str, Sequence[str]]],
    seeds: int,
    seed_base: Optional[int],
) -> List[Tuple[int, int, List[Tuple[str, str]]]]: ...
def run_task(file: str, text: str, overrides: Sequence[Tuple[str, str]], seed: int) -> str: ...
def sweep_from_summaries(
    scenario: NativeScenario,
    axes: Sequence[Tuple[str, Sequence[str]]],
    seeds: int,
    seed_base: Optional[int],
    summaries: Sequence[str],
    wall_s: float,
) -> NativeSweep: ...

class NativeCampaign:
    def table(self) -> Tuple[List[str], Dict[str, list]]: ...
    def sweep(self) -> NativeSweep: ...
    def not_done(self) -> List[Tuple[int, str, int, int, str, str]]: ...
    total: int
    done: int
    id: str
    scenario_file: str
    scenario_text: str

def open_campaign(dir: str) -> NativeCampaign: ...
def parse_axis(arg: str) -> Tuple[str, List[str]]: ...
def equation(s: float, rtt: float, p: float, t_rto: Optional[float]) -> float: ...
def reproduce(
    ids: Sequence[str],
    quick: bool,
    seeds: Optional[int],
    jobs: Optional[int],
    scenarios: str,
    out: str,
    progress: Optional[Callable[[int, int], None]],
    phase_remedy: bool,
) -> NativeReproduction: ...
def validate(scenario: NativeScenario, ns: str, timeout_s: float) -> str: ...
