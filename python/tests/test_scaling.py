"""scalescope.scaling: the CLI's `scaling --format json` document (predicted and measured curves), progress,
notes on the logger, errors as InputError, to_pandas points."""
import logging

import pytest

import scalescope

from conftest import ROOT

PREDICTED = ["--model", "megatron-gpt-1.7b", "--cluster", "hgx-h200-8", "--gpus", "1,2", "--gbs", "16"]


def test_predicted_scaling_equals_the_cli_document(cli_json):
    seen = []
    py = scalescope.scaling("megatron-gpt-1.7b", "hgx-h200-8", [1, 2], 16,
                            progress=lambda done, total: seen.append((done, total)))
    assert py == cli_json("scaling", *PREDICTED)
    (curve,) = py["curves"]
    assert [p["gpus"] for p in curve["points"]] == [1, 2] and curve["fit"] == "amdahl"
    # Strong scaling: speedup = T(1) / T(2), efficiency = speedup / 2.
    t1, t2 = (p["predicted_s"] for p in curve["points"])
    assert curve["points"][1]["predicted_speedup"] == pytest.approx(t1 / t2, rel=1e-3)
    assert curve["points"][1]["predicted_efficiency"] == pytest.approx(t1 / t2 / 2, rel=1e-3)
    assert seen == [(1, 2), (2, 2)]


def test_weak_scaling_with_a_plan_family_equals_the_cli(cli_json):
    py = scalescope.scaling("megatron-gpt-1.7b", "hgx-h200-8", [1, 2], 8, scaling="weak",
                            plan_family="tp=1,pp=1,zero=1,mbs=1")
    assert py == cli_json("scaling", *PREDICTED[:-1], "8", "--scaling", "weak", "--plan-family",
                          "tp=1,pp=1,zero=1,mbs=1")
    assert py["curves"][0]["gbs_per_gpu"] == 8 and py["curves"][0]["fit"] == "gustafson"


def test_measured_scaling_equals_the_cli_and_logs_the_pricing(cli_json, caplog, monkeypatch):
    monkeypatch.chdir(ROOT)  # the points' "file" keys are the paths as given, relative to the CLI's folder
    with caplog.at_level(logging.INFO, logger="scalescope"):
        py = scalescope.scaling(measured="validation/h200x4/measured")
    assert py == cli_json("scaling", "--measured", "validation/h200x4/measured")
    assert any("priced as" in r.getMessage() and "pricing.json" in r.getMessage() for r in caplog.records)
    assert all(p["measured_s"] is not None for c in py["curves"] for p in c["points"])


def test_scaling_bad_input_is_an_input_error_naming_the_field(tmp_path):
    with pytest.raises(scalescope.InputError) as e:
        scalescope.scaling("megatron-gpt-1.7b", "no-such-cluster", [1, 2], 16)
    assert "unknown cluster 'no-such-cluster'" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.scaling("megatron-gpt-1.7b", "hgx-h200-8", [1, 2], 16, scaling="sideways")
    assert e.value.path == "--scaling" and "strong | weak" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.scaling(measured="no/such/folder")
    assert e.value.file == "no/such/folder" and "does not exist" in e.value.message
    bad = tmp_path / "run.json"
    bad.write_text('{"schema": "scalescope.measured/1", "gpus": "eight"}')
    with pytest.raises(scalescope.InputError) as e:
        scalescope.scaling(measured=bad)
    assert e.value.file == str(bad) and e.value.path.startswith("$")


def test_a_raising_progress_callback_cancels_scaling():
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop()

    with pytest.raises(Stop):
        scalescope.scaling("megatron-gpt-1.7b", "hgx-h200-8", [1, 2, 4, 8], 16, progress=progress)


def test_to_pandas_of_scaling_has_one_row_per_point_with_its_curve():
    pytest.importorskip("pandas")
    r = scalescope.scaling("megatron-gpt-1.7b", "hgx-h200-8", [1, 2], 16)
    df = scalescope.to_pandas(r)
    assert list(df["gpus"]) == [1, 2] and set(df["model"]) == {"megatron-gpt-1.7b"}
    assert "predicted_speedup" in df.columns
