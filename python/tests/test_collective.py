"""scalescope.collective: the CLI's `collective --format json` document, errors as InputError, to_pandas rows."""
import pytest

import scalescope

from conftest import ROOT


def test_collective_equals_the_cli_document(cli_json):
    py = scalescope.collective("dgx-h100-8", "all_reduce", 8, sizes="1K:1M", step_factor=32)
    cli = cli_json("collective", "--cluster", "dgx-h100-8", "--op", "all_reduce", "--gpus", "8", "--sizes", "1K:1M",
                   "--step-factor", "32")
    assert py == cli
    # 1K, 32K, 1M: three rows; all_reduce's buffer is the whole size (nccl-tests), 4-byte floats.
    assert [r["bytes"] for r in py["rows"]] == [1024, 32768, 1048576]
    assert [r["count"] for r in py["rows"]] == [256, 8192, 262144]
    assert py["header"]["gpus"] == 8 and py["header"]["calibration"] is None


def test_collective_flow_fidelity_and_forced_choices_reach_the_library(cli_json):
    py = scalescope.collective("hgx-h200-4", "broadcast", 4, sizes="8:1M", step_factor=1024, fidelity="flow")
    assert py == cli_json("collective", "--cluster", "hgx-h200-4", "--op", "broadcast", "--gpus", "4", "--sizes",
                          "8:1M", "--step-factor", "1024", "--fidelity", "flow")
    tree = scalescope.collective("h100-rail-ndr", "all_reduce", 32, nodes=4, sizes="64K:64M", step_factor=32,
                                 algorithm="tree", protocol="Simple")
    assert tree == cli_json("collective", "--cluster", "h100-rail-ndr", "--nodes", "4", "--op", "all_reduce", "--gpus",
                            "32", "--sizes", "64K:64M", "--step-factor", "32", "--algorithm", "tree", "--protocol",
                            "Simple")
    assert {r["algorithm"] for r in tree["rows"]} == {"tree"} and {r["protocol"] for r in tree["rows"]} == {"Simple"}


def test_collective_bad_input_is_an_input_error_naming_the_field(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(scalescope.InputError) as e:
        scalescope.collective("no-such-cluster", "all_reduce", 8)
    assert "unknown cluster 'no-such-cluster'" in e.value.message and "dgx-h100-8" in e.value.message
    # A bad parameters file: the file, the JSON path of the bad key and what was expected (as the CLI's golden).
    with pytest.raises(scalescope.InputError) as e:
        scalescope.collective("dgx-h100-8", "all_reduce", 8, calibration="tests/data/collective_params_bad.json")
    assert e.value.file == "tests/data/collective_params_bad.json" and e.value.path == "$.link_efficiency.nvlnk"
    assert "expected one of" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.collective("dgx-h100-8", "all_reduce", 8, sizes="8:1X")
    assert e.value.path == "--sizes" and "MIN:MAX" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.collective("dgx-h100-8", "all_reduce", 16)
    assert e.value.path == "--gpus" and "expected 1 to 8 GPUs" in e.value.message


def test_to_pandas_of_a_collective_has_one_row_per_size():
    pd = pytest.importorskip("pandas")
    r = scalescope.collective("dgx-h100-8", "all_gather", 8, sizes="1M:16M", step_factor=4)
    df = scalescope.to_pandas(r)
    assert isinstance(df, pd.DataFrame)
    assert list(df["bytes"]) == [r["bytes"] for r in r["rows"]] and "busbw_GBps" in df.columns
