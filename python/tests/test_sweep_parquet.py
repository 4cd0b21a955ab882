"""`scalescope sweep -o X.parquet` (the library's own Parquet writer) carries the CSV's columns and values."""
import json
import math

import pytest

import scalescope
from test_sweep import SIM_SPEC


def _cell(v):
    """A cell both readers agree on: None for null and for "" (a CSV cannot tell them apart), bools for the
    CSV's true/false, numbers as they are."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
        return None
    if isinstance(v, str) and v in ("true", "false"):
        return v == "true"
    return v


def _same_cells(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):  # only float formatting may differ
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return a == b


def _assert_frames_match(pq, csv):
    assert list(pq.columns) == list(csv.columns) == scalescope.sweep_columns()
    assert len(pq) == len(csv) > 0
    for col in pq.columns:
        got = [_cell(v) for v in pq[col].tolist()]
        want = [_cell(v) for v in csv[col].tolist()]
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not _same_cells(g, w)]
        assert not bad, f"column {col}: (row, parquet, csv) {bad[:5]}"


def test_cli_parquet_equals_cli_csv_column_by_column(cli, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pq, csv = tmp_path / "r.parquet", tmp_path / "r.csv"
    cli("sweep", "examples/sweep.json", "-o", str(pq), "-q")
    cli("sweep", "examples/sweep.json", "-o", str(csv), "-q")
    assert pq.read_bytes()[:4] == pq.read_bytes()[-4:] == b"PAR1"
    assert not (tmp_path / "r.parquet.partial").exists()
    _assert_frames_match(pd.read_parquet(pq), pd.read_csv(csv))


def test_parquet_types_and_nulls_follow_the_rows(cli, tmp_path):
    """Simulate mode with an error row (tp=3 on 8 GPUs): its plan columns are null; the ints stay INT64, the
    reals DOUBLE, the text UTF-8 strings; the CLI and the Python package write the same bytes."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pq_mod = pytest.importorskip("pyarrow.parquet")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SIM_SPEC))
    a, b, csv = tmp_path / "cli.parquet", tmp_path / "py.parquet", tmp_path / "cli.csv"
    cli("sweep", str(spec), "-o", str(a), "--threads", "1", "-q")
    cli("sweep", str(spec), "-o", str(csv), "-q")
    scalescope.sweep(spec, b, threads=2)
    assert a.read_bytes() == b.read_bytes()
    _assert_frames_match(pd.read_parquet(a), pd.read_csv(csv))
    schema = pq_mod.read_schema(a)
    assert schema.field("point").type == pa.int64() and not schema.field("point").nullable
    assert schema.field("tp").type == pa.int64() and schema.field("tp").nullable
    assert schema.field("step_time_s").type == pa.float64()
    assert schema.field("model").type == pa.string() and schema.field("fits_memory").type == pa.bool_()
    t = pq_mod.read_table(a).to_pylist()
    errors = [r for r in t if r["status"] == "error"]
    assert len(errors) == 2 and all(r["tp"] is None and r["plan"] is None and r["message"] for r in errors)
