"""Every error is a Python exception naming what is wrong (issue 13, point 3): scenario errors
carry the CLI's message and its file:line:column; bad arguments name the argument."""

import signal

import pytest

import tfrclab

BAD = """name = "bad"
duration = "10s"

[[links]]
from = "a"
to = "b"
bandwidth = "fast"
delay = "10ms"
"""


def cli_error(cli, *args) -> str:
    p = cli(*args, check=False)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ")
    return p.stderr[len("error: "):].rstrip("\n")


def test_scenario_error_has_location_and_the_cli_message(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD)
    with pytest.raises(tfrclab.ScenarioError) as e:
        tfrclab.Scenario.load(path)
    err = e.value
    assert isinstance(err, ValueError)
    assert err.path == str(path)
    assert (err.line, err.column) == (7, 13)
    assert str(err) == cli_error(cli, "run", path, "--out", tmp_path / "o")
    assert str(err).startswith(f"{path}:7:13: ")
    # run() with a path raises the same.
    with pytest.raises(tfrclab.ScenarioError) as e2:
        tfrclab.run(str(path))
    assert str(e2.value) == str(err)


def test_text_errors_name_the_text():
    with pytest.raises(tfrclab.ScenarioError) as e:
        tfrclab.Scenario.from_toml(BAD)
    assert e.value.path == "<string>"
    assert (e.value.line, e.value.column) == (7, 13)
    with pytest.raises(tfrclab.ScenarioError) as e:
        tfrclab.Scenario.from_toml(BAD, name="mine.toml")
    assert str(e.value).startswith("mine.toml:7:13: ")
    with pytest.raises(tfrclab.ScenarioError, match=r"<string>:1:\d+: ") as e:
        tfrclab.Scenario.from_toml("name = [unclosed")


def test_missing_file(cli, tmp_path):
    with pytest.raises(tfrclab.ScenarioError) as e:
        tfrclab.Scenario.load("no/such/file.toml")
    assert e.value.path == "no/such/file.toml"
    assert e.value.line is None and e.value.column is None
    assert "cannot read the file" in str(e.value)
    assert str(e.value) == cli_error(cli, "run", "no/such/file.toml", "--out", tmp_path / "o")


@pytest.mark.parametrize(
    "key, value",
    [("topology.nope", "1"), ("flows.nosuchflow.rate", "1Mbps"), ("topology.bottleneck_bandwidth", "fast")],
)
def test_bad_set_is_the_cli_error(cli, tmp_path, key, value):
    with pytest.raises(ValueError) as e:
        tfrclab.Scenario.load("scenarios/examples/dumbbell.toml").with_set({key: value})
    assert isinstance(e.value, tfrclab.ScenarioError)
    want = cli_error(cli, "run", "scenarios/examples/dumbbell.toml", "--set", f"{key}={value}", "--out", tmp_path / "o")
    assert str(e.value) == want
    with pytest.raises(tfrclab.ScenarioError) as e2:
        tfrclab.run("scenarios/examples/dumbbell.toml", set={key: value})
    assert str(e2.value) == want


def test_bad_sweep_grid_is_the_cli_error(cli, tmp_path):
    with pytest.raises(ValueError) as e:
        tfrclab.sweep("scenarios/examples/dumbbell.toml", grid={"topology.queue_limit": [10, "many"]}, progress=False)
    want = cli_error(cli, "sweep", "scenarios/examples/dumbbell.toml", "--set", "topology.queue_limit=10,many", "--out", tmp_path / "o")
    assert str(e.value) == want


@pytest.mark.parametrize(
    "call, exc, names",
    [
        (lambda: tfrclab.run(42), TypeError, "scenario"),
        (lambda: tfrclab.run("scenarios/examples/dumbbell.toml", seed="1"), TypeError, "seed"),
        (lambda: tfrclab.run("scenarios/examples/dumbbell.toml", seed=-1), ValueError, "seed"),
        (lambda: tfrclab.run("scenarios/examples/dumbbell.toml", set=["duration=1s"]), TypeError, "set"),
        (lambda: tfrclab.run("scenarios/examples/dumbbell.toml", set={"duration": object()}), TypeError, "set['duration']"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", seeds=0), ValueError, "seeds"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", seeds=2.5), TypeError, "seeds"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", jobs=0), ValueError, "jobs"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", grid={"duration": "10s"}), TypeError, "grid['duration']"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", grid={"duration": []}), ValueError, "grid['duration']"),
        (lambda: tfrclab.sweep("scenarios/examples/dumbbell.toml", progress="yes"), TypeError, "progress"),
        (lambda: tfrclab.equation(1000, 0.1, 1.5), ValueError, "p = 1.5"),
        (lambda: tfrclab.equation(0, 0.1, 0.01), ValueError, "s = 0"),
        (lambda: tfrclab.equation(1000, "0.1", 0.01), TypeError, "rtt"),
        (lambda: tfrclab.equation(1000, 0.1, 0.01, t_rto=-1), ValueError, "t_rto"),
        (lambda: tfrclab.Scenario.from_toml(b"name = 1"), TypeError, "text"),
        (lambda: tfrclab.Scenario.from_dict({"name": None}), (TypeError, ValueError), "d"),
        (lambda: tfrclab.reproduce("seed-999", progress=False), ValueError, "paper"),
        (lambda: tfrclab.reproduce("seed-004", seeds=1, progress=False), ValueError, "seeds"),
    ],
)
def test_bad_arguments_name_the_argument(call, exc, names):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value).startswith(names), str(e.value)


def test_a_failing_progress_callback_stops_the_sweep():
    seen = []

    def progress(done, total):
        seen.append(done)
        if done >= 1:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tfrclab.sweep("scenarios/examples/dumbbell.toml", seeds=40, jobs=1, progress=progress)
    assert seen and max(seen) < 40


def test_ctrl_c_stops_a_sweep_and_raises_keyboard_interrupt():
    """SIGINT (Ctrl-C in a terminal or a notebook's interrupt) during a sweep: the runs not yet
    started are skipped and KeyboardInterrupt is raised once the running ones finish."""
    seen = []

    def progress(done, total):
        seen.append((done, total))
        if done >= 1:
            signal.raise_signal(signal.SIGINT)

    # A shell without job control starts background commands with SIGINT ignored, and Python
    # then installs no KeyboardInterrupt handler (`bash scripts/test &` failed here): install
    # Python's default one for this test, as an interactive session has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            tfrclab.sweep("scenarios/examples/dumbbell.toml", seeds=60, jobs=1, progress=progress)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen[-1][1] == 60
    # The interrupt is raised at the first check after it, not after the remaining runs.
    assert max(d for d, _ in seen) < 60
    # The interpreter is fine: a run afterwards works.
    assert tfrclab.run("scenarios/examples/dumbbell.toml", seed=1).seed == 1
