"""scalescope.sweep and `scalescope sweep`: rows equal the single commands, resumable, the same bytes."""
import json

import pytest

import scalescope

SIM_SPEC = {
    "format": "scalescope.sweep/1",
    "mode": "simulate",
    "models": ["llama3-8b"],
    "clusters": ["dgx-h100-8"],
    "gpus": [8, 16],
    "global_batches": [32],
    "plans": ["tp=2,pp=1", "tp=4,pp=1,zero=1", "tp=3"],
}


def test_simulate_rows_equal_scalescope_simulate():
    rows = scalescope.sweep(SIM_SPEC, threads=2)
    # 1 model x 1 cluster x 2 GPU counts x 1 batch x 3 plans, product order: gpus outside plans.
    assert [(r["gpus"], r["fixed"]) for r in rows] == [(g, p) for g in (8, 16) for p in SIM_SPEC["plans"]]
    for r in rows:
        if r["fixed"] == "tp=3":  # 3 does not divide 8 or 16: an error row, the sweep goes on
            assert r["status"] == "error" and "multiple" in r["message"]
            continue
        tp = int(r["fixed"].split(",")[0].split("=")[1])
        assert r["dp"] == r["gpus"] // tp  # dp = gpus / (tp * pp)
        one = scalescope.simulate("llama3-8b", "dgx-h100-8", r["plan"])
        assert r["status"] == "ok" and r["step_time_s"] == one["step_time_s"] and r["mfu"] == one["mfu"]


def test_plan_rows_equal_scalescope_plan(tmp_path):
    spec = {"format": "scalescope.sweep/1", "mode": "plan", "models": ["llama3-8b"], "clusters": ["dgx-h100-8"],
            "gpus": [8], "global_batches": [64], "constraints": ["", "tp=8"], "options": {"top": 2}}
    rows = scalescope.sweep(spec)
    assert [(r["fixed"], r["rank"]) for r in rows] == [("", 1), ("", 2), ("tp=8", 1), ("tp=8", 2)]
    for fix in ("", "tp=8"):
        best = scalescope.plan("llama3-8b", "dgx-h100-8", 64, gpus=8, fix=fix, top=2, flow_top=0)["plans"]
        got = [r for r in rows if r["fixed"] == fix]
        assert [r["plan"] for r in got] == [p["plan_text"] for p in best]
        assert [r["step_time_s"] for r in got] == [p["step_time_s"] for p in best]
    assert all(r["tp"] == 8 for r in rows if r["fixed"] == "tp=8")


def test_cli_and_python_write_the_same_bytes(cli, tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SIM_SPEC))
    for ext in ("csv", "json"):
        a, b = tmp_path / f"cli.{ext}", tmp_path / f"py.{ext}"
        cli("sweep", str(spec), "-o", str(a), "--threads", "1", "-q")
        scalescope.sweep(spec, b, threads=2)
        assert a.read_bytes() == b.read_bytes()
        assert not (tmp_path / f"cli.{ext}.partial").exists()
    lines = (tmp_path / "cli.csv").read_text().splitlines()
    assert lines[0].split(",") == scalescope.sweep_columns() and len(lines) == 1 + 6


def test_an_interrupted_sweep_resumes_to_the_same_output(tmp_path):
    whole, part = tmp_path / "whole.csv", tmp_path / "part.csv"
    scalescope.sweep(SIM_SPEC, whole, threads=1)

    class Interrupt(Exception):
        pass

    def stop_after_two(done, total):
        if done == 2:
            raise Interrupt()

    with pytest.raises(Interrupt):
        scalescope.sweep(SIM_SPEC, part, threads=1, progress=stop_after_two)
    journal = tmp_path / "part.csv.partial"
    assert not part.exists() and len(journal.read_text().splitlines()) == 1 + 2  # header + 2 points
    with open(journal, "a") as f:
        f.write('{"point": 5, "rows": [')  # a torn last line, as from a kill mid-write: dropped
    seen = []
    scalescope.sweep(SIM_SPEC, part, threads=1, progress=lambda d, t: seen.append(d))
    assert seen == [3, 4, 5, 6]  # the 2 journalled points were not recomputed
    assert part.read_bytes() == whole.read_bytes()


def test_a_journal_of_another_spec_is_refused(tmp_path):
    out = tmp_path / "r.csv"
    (tmp_path / "r.csv.partial").write_text('{"fingerprint":"0","format":"scalescope.sweep-journal/1","points":1}\n')
    with pytest.raises(scalescope.InputError, match="another sweep spec"):
        scalescope.sweep(SIM_SPEC, out)
    assert len(scalescope.sweep(SIM_SPEC, out, restart=True)) == 6


def test_spec_errors_name_the_json_path(tmp_path):
    bad = dict(SIM_SPEC, gpus=[8, -2])
    with pytest.raises(scalescope.InputError) as e:
        scalescope.sweep(bad)
    assert e.value.file == "<dict>" and e.value.path == "$.gpus[1]"
    with pytest.raises(scalescope.InputError) as e:
        scalescope.sweep(dict(SIM_SPEC, models=["llama3-8b", "no-such-model"]))
    assert e.value.path == "$.models[1]"
    with pytest.raises(scalescope.InputError) as e:
        scalescope.sweep(dict(SIM_SPEC, plans=["tp=2,dp=2"]))
    assert e.value.path == "$.plans[0]" and "dp" in e.value.message


def test_rows_to_pandas_and_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rows = scalescope.sweep(SIM_SPEC, tmp_path / "r.parquet")
    df = scalescope.to_pandas(rows)
    assert list(df.columns) == scalescope.sweep_columns() and len(df) == 6
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back["step_time_s"].tolist() == pytest.approx(df["step_time_s"].tolist(), nan_ok=True)
    assert not (tmp_path / "r.parquet.csv").exists()
