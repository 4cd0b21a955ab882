"""scalescope.capacity: the CLI's `capacity --format json` document, progress, errors as InputError."""
import pytest

import scalescope

ARGS = ["--model", "megatron-gpt-1.7b", "--tokens", "100B", "--days", "2", "--fabric", "h100-rail-ndr", "--node",
        "dgx-h100-8", "--max-nodes", "2", "--gbs", "256"]


def test_capacity_equals_the_cli_document_and_reports_progress(cli_json):
    seen = []
    py = scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="h100-rail-ndr", node="dgx-h100-8", max_nodes=2,
                             gbs=256, progress=lambda done, total: seen.append((done, total)))
    assert py == cli_json("capacity", *ARGS)
    assert [p["nodes"] for p in py["curve"]] == [1, 2]
    assert seen == [(0, 2), (1, 2), (2, 2)]
    # days = tokens / tokens_per_s / 86400, cost = gpus * days * 24 * 2.50 USD (the assumed price).
    for p in py["curve"]:
        days = 100e9 / p["best"]["tokens_per_s"] / 86400
        assert p["days"] == pytest.approx(days, rel=1e-3)
        assert p["cost_usd"] == pytest.approx(p["gpus"] * days * 24 * 2.5, rel=1e-3)
    assert py["price_assumed"] is True and py["tokens"] == 100e9


def test_capacity_tokens_as_a_number_equal_the_suffixed_text():
    a = scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="h100-rail-ndr", max_nodes=1, gbs=256)
    b = scalescope.capacity("megatron-gpt-1.7b", 100e9, 2, fabric="h100-rail-ndr", max_nodes=1, gbs=256)
    assert a == b


def test_capacity_bad_input_is_an_input_error_naming_the_field(tmp_path):
    with pytest.raises(scalescope.InputError) as e:
        scalescope.capacity("megatron-gpt-1.7b", "lots", 2, fabric="h100-rail-ndr")
    assert e.value.path == "--tokens" and "positive count" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="h100-rail-ndr", node="hgx-h200-8")
    assert e.value.path == "--node" and "is not the node of fabric" in e.value.message
    with pytest.raises(scalescope.InputError) as e:
        scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="no-such-fabric")
    assert "unknown cluster 'no-such-fabric'" in e.value.message
    bad = tmp_path / "fabric.json"
    bad.write_text('{"name": "x", "nodes": -1}')
    with pytest.raises(scalescope.InputError) as e:
        scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric=str(bad))
    assert e.value.file == str(bad) and e.value.path.startswith("$")


def test_a_raising_progress_callback_cancels_capacity():
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop()

    with pytest.raises(Stop):
        scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="h100-rail-ndr", max_nodes=64, gbs=256,
                            progress=progress)


def test_to_pandas_of_capacity_has_one_row_per_node_count():
    pytest.importorskip("pandas")
    r = scalescope.capacity("megatron-gpt-1.7b", "100B", 2, fabric="h100-rail-ndr", max_nodes=2, gbs=256)
    df = scalescope.to_pandas(r)
    assert list(df["nodes"]) == [1, 2] and "best.step_time_s" in df.columns
