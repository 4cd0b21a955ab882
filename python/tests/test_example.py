"""examples/plot_scaling.py runs and draws what the library computes."""
import importlib.util

import pytest

from conftest import ROOT


def test_the_example_plots_a_scaling_curve_and_a_plan_comparison(tmp_path):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("plot_scaling", ROOT / "examples" / "plot_scaling.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = tmp_path / "fig.png"
    rows, ranked = example.plot(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20000
    assert [r["gpus"] for r in rows] == [8, 16, 32, 64, 128]
    # What is drawn is the planner's: tokens/s = gbs * seq_len / step time (seq_len 8192 in the catalog).
    for r in rows:
        assert r["tokens_per_s"] == pytest.approx(512 * 8192 / r["step_time_s"], rel=1e-4)
        assert r["tp"] * r.get("cp", 1) * r["pp"] * r["dp"] == r["gpus"]
    assert len(ranked) == 10 and [p["rank"] for p in ranked] == list(range(1, 11))
