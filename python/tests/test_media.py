"""Media flows driven by NADA, SCReAM and GCC from Python, like any other flow (issue 28).

Budget: about 2 s (four 30-s simulations of one flow at 1 Mb/s).
"""

import pytest

import tfrclab

RMCAT = ["nada", "scream", "gcc"]


def one_media_flow(controller: str) -> dict:
    """One video flow over a 1 Mb/s, 50-ms link whose queue holds 300 ms (RFC 8867 §5.1's
    first period), as docs/media.md sets up its cases."""
    return {
        "name": f"media-{controller}",
        "duration": "30s",
        "seed": 1,
        "sample_interval": "200ms",
        "links": [
            {"from": "a", "to": "b", "bandwidth": "1Mbps", "delay": "50ms", "queue_limit": 36}
        ],
        "flows": [
            {"name": "video", "kind": "media", "controller": controller, "from": "a", "to": "b"}
        ],
    }


def test_each_rmcat_controller_runs_a_media_flow():
    got = {}
    for c in RMCAT + ["tfrc"]:
        sc = tfrclab.Scenario.from_dict(one_media_flow(c))
        assert sc.flows == [("video", "media")]
        r = tfrclab.run(sc)
        media = r.summary["media"]
        assert [m["flow"] for m in media] == ["video"]
        # The summary names the controller that ran, not a default.
        assert media[0]["controller"] == c
        assert media[0]["frames"] > 0
        thr = float(r.flows.set_index("name").loc["video", "throughput_bps"])
        # Each controller starts low (NADA and SCReAM at min_rate, 150 kb/s; GCC ramps 8 %/s)
        # and none may exceed the link: 0.2 Mb/s is far below any of them over 30 s, 1.05 the
        # headers' share over a full link (docs/media.md, "Metrics").
        assert 0.2e6 < thr <= 1.05e6, (c, thr)
        got[c] = thr
    # Four controllers, four different runs: the `controller` key took effect.
    assert len(set(got.values())) == len(got), got


@pytest.mark.parametrize("key,value", [("profile", "ns2"), ("variants", ["simd"])])
def test_tfrc_keys_on_an_rmcat_flow_are_refused(key, value):
    d = one_media_flow("gcc")
    d["flows"][0][key] = value
    with pytest.raises(tfrclab.ScenarioError, match=f"`{key}` configures TFRC"):
        tfrclab.Scenario.from_dict(d)
