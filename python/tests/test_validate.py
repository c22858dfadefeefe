"""`tfrclab.validate` is `tfrclab validate`: the same checks from the same runs of NS-2.35."""

import json
import shutil

import pytest

import tfrclab


def require_ns():
    if shutil.which("ns") is None:
        pytest.fail("NS-2.35 is needed: install it with `apt-get install ns2` (Debian/Ubuntu)")


def test_validate_equals_the_cli(cli, tmp_path):
    require_ns()
    out = tmp_path / "v"
    p = cli("validate", "validation/tcp-single.toml", "--out", out, check=False)
    assert p.returncode in (0, 1), p.stderr
    want = json.loads((out / "validate.json").read_text())
    entry = next(e for e in want["scenarios"] if e["file"] == "validation/tcp-single.toml")["report"]
    v = tfrclab.validate("validation/tcp-single.toml")
    assert v.passed == entry["pass"] == (p.returncode == 0)
    checks = v.checks
    assert len(checks) == len(entry["checks"]) > 0
    for (_, got), w in zip(checks.iterrows(), entry["checks"]):
        assert (got["metric"], got["subject"]) == (w["metric"], w["subject"])
        # Both simulators are deterministic for a seed: the same numbers on both sides.
        assert got["ns2"] == w["ns2"] and got["tfrclab"] == w["tfrclab"]
        assert bool(got["pass"]) == w["pass"]


def test_validate_without_ns_says_how_to_install(tmp_path):
    with pytest.raises(ValueError, match="apt-get install ns2"):
        tfrclab.validate("validation/tcp-single.toml", ns=str(tmp_path / "no-ns-here"))


def test_a_scenario_ns2_cannot_express_is_a_value_error(cli, tmp_path):
    require_ns()
    # dumbbell.toml's TFRC flow uses the RFC 5348 profile, which NS-2's Agent/TFRC lacks.
    with pytest.raises(ValueError) as e:
        tfrclab.validate("scenarios/examples/dumbbell.toml")
    msg = str(e.value)
    assert msg.startswith("scenarios/examples/dumbbell.toml: cannot export to NS-2.35"), msg
    assert msg.count("scenarios/examples/dumbbell.toml") == 1, msg
    p = cli("validate", "scenarios/examples/dumbbell.toml", "--out", tmp_path / "v", check=False)
    assert p.returncode == 2
    assert "instead: profile = \"ns2\"" in msg
    assert p.stderr.startswith(f"error: {msg}\n"), p.stderr
