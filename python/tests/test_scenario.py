"""Scenarios from files, text and dicts, and what they expose."""

import json
import time

import tfrclab

LINKS = {
    "name": "one-link",
    "duration": "6s",
    "seed": 3,
    "links": [{"from": "a", "to": "b", "bandwidth": "2Mbps", "delay": "10ms", "queue_limit": 20}],
    "flows": [
        {"name": "tcp1", "kind": "tcp", "from": "a", "to": "b"},
        {"name": "cbr", "kind": "udp", "from": "a", "to": "b", "rate": "500kbps"},
    ],
}


def test_load_exposes_the_model():
    sc = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml")
    assert sc.name == "dumbbell"
    assert sc.file == "scenarios/examples/dumbbell.toml"
    assert sc.seed == 7
    assert sc.duration_s == 30.0 and sc.warmup_s == 5.0
    assert sc.flows == [("tfrc1", "tfrc"), ("tcp1", "tcp")]
    assert "r0-r1" in sc.links
    assert sc.source == open("scenarios/examples/dumbbell.toml").read()
    assert "dumbbell" in repr(sc)


def test_with_set_keeps_the_original_and_changes_the_copy():
    sc = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml")
    sc2 = sc.with_set({"duration": "12s", "seed": 99, "topology.red.gentle": False})
    assert (sc.duration_s, sc.seed) == (30.0, 7)
    assert (sc2.duration_s, sc2.seed) == (12.0, 99)
    # Lines keep their numbers: the override edits the document in place.
    assert len(sc2.source.splitlines()) == len(sc.source.splitlines())


def test_from_dict_equals_the_same_toml():
    text = """name = "one-link"
duration = "6s"
seed = 3

[[links]]
from = "a"
to = "b"
bandwidth = "2Mbps"
delay = "10ms"
queue_limit = 20

[[flows]]
name = "tcp1"
kind = "tcp"
from = "a"
to = "b"

[[flows]]
name = "cbr"
kind = "udp"
from = "a"
to = "b"
rate = "500kbps"
"""
    a = tfrclab.run(tfrclab.Scenario.from_dict(LINKS))
    b = tfrclab.run(tfrclab.Scenario.from_toml(text))
    sa, sb = dict(a.summary), dict(b.summary)
    sa.pop("wall_s"), sb.pop("wall_s")
    assert sa == sb
    assert a.seed == 3
    assert list(a.flows["name"]) == ["tcp1", "cbr"]
    # The CBR flow offers 500 kb/s into 2 Mb/s and keeps most of it (TCP shares the link).
    cbr = a.flows.set_index("name").loc["cbr"]
    assert 0.3e6 < cbr["throughput_bps"] <= 0.5e6 * 1.01


def test_from_dict_errors_point_into_its_toml_form():
    bad = json.loads(json.dumps(LINKS))
    bad["flows"][1]["rate"] = "lots"
    try:
        tfrclab.Scenario.from_dict(bad)
    except tfrclab.ScenarioError as e:
        assert e.path == "<dict>"
        assert e.line is not None
        assert "rate" in str(e)
    else:
        raise AssertionError("a bad rate must raise ScenarioError")


def test_import_is_light():
    """`import tfrclab` does not import pandas (it is imported when a DataFrame is built)."""
    import subprocess
    import sys

    code = "import sys, tfrclab; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
