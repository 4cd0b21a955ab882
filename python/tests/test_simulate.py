"""scalescope.simulate / plan: the same numbers as the CLI, formulas that hold, errors as exceptions."""
import pathlib
import threading

import pytest

import scalescope


def test_simulate_equals_the_cli_document(cli_json):
    # Two paths to one number: the CLI process and the module must agree on every key.
    args = dict(model="llama3-8b", cluster="dgx-h100-8", plan="tp=2,dp=4,gbs=32")
    py = scalescope.simulate(**args)
    cli = cli_json("simulate", "--model", args["model"], "--cluster", args["cluster"], "--plan", args["plan"])
    assert py == cli
    assert py["step_time_s"] > 0


def test_simulate_stack_options_reach_the_loader(cli_json):
    # --framework pytorch-eager changes the memory-bound kernels' prices; the module passes it through.
    args = ["--model", "llama3-8b", "--cluster", "hgx-h200-8", "--plan", "tp=1,dp=2,gbs=8"]
    eager = scalescope.simulate("llama3-8b", "hgx-h200-8", "tp=1,dp=2,gbs=8", framework="pytorch-eager")
    assert eager == cli_json("simulate", *args, "--framework", "pytorch-eager")
    fused = scalescope.simulate("llama3-8b", "hgx-h200-8", "tp=1,dp=2,gbs=8")
    assert eager["step_time_s"] != fused["step_time_s"]


def test_simulate_throughput_formula():
    # tokens/s = gbs * seq_len / step time (predict.hpp); llama3-8b's catalog seq_len is 8192.
    r = scalescope.simulate("llama3-8b", "dgx-h100-8", "tp=2,dp=4,gbs=32")
    seq = scalescope.model("llama3-8b")["seq_len"]
    assert r["tokens_per_s"] == pytest.approx(32 * seq / r["step_time_s"], rel=1e-5)
    assert r["gpus"] == 8 and r["plan"]["tp"] == 2 and r["plan"]["dp"] == 4
    assert 0 < r["mfu"] < 1


def test_fine_tuning_plans_reach_the_library(cli_json):
    # LoRA on frozen weights and packed documents are plan keys: the module and the CLI agree, and a LoRA step does
    # less work than full training (no weight gradients of the frozen weights: its model FLOPs are below 3/4 of them).
    plan = "tp=1,dp=8,gbs=32,seq=4096,packed_doc_tokens=180"
    full = scalescope.simulate("llama2-7b", "dgx-h100-8", plan)
    lora = scalescope.simulate("llama2-7b", "dgx-h100-8", plan + ",lora_rank=32")
    assert lora == cli_json("simulate", "--model", "llama2-7b", "--cluster", "dgx-h100-8", "--plan", plan + ",lora_rank=32")
    assert lora["plan"]["lora_rank"] == 32 and lora["plan"]["packed_doc_tokens"] == 180
    assert lora["step_time_s"] < full["step_time_s"]
    assert lora["model_flops_per_step"] < 0.75 * full["model_flops_per_step"]


def test_bad_input_is_an_input_error_with_file_path_and_expectation(tmp_path):
    with pytest.raises(scalescope.InputError) as e:
        scalescope.simulate("llama3-8b", "dgx-h100-8", "tp=x,gbs=32")
    assert e.value.file == "--plan" and "tp" in str(e.value) and "positive integer" in e.value.message
    bad = tmp_path / "cluster.json"
    bad.write_text('{"name": "x", "nodes": -1}')
    with pytest.raises(scalescope.InputError) as e:
        scalescope.simulate("llama3-8b", str(bad), "tp=1,dp=1,gbs=1")
    assert e.value.file == str(bad) and e.value.path.startswith("$")
    assert isinstance(e.value, ValueError)
    with pytest.raises(scalescope.InputError, match="framework"):
        scalescope.simulate("llama3-8b", "dgx-h100-8", "tp=1,dp=1,gbs=1", framework="jax")


def test_plan_ranks_plans_of_the_requested_size(cli_json):
    seen = []
    r = scalescope.plan("llama3-8b", "dgx-h100-8", 64, gpus=8, top=5, flow_top=1,
                        progress=lambda done, total: seen.append((done, total)))
    assert r == cli_json("plan", "--model", "llama3-8b", "--cluster", "dgx-h100-8", "--gpus", "8", "--gbs", "64",
                         "--top", "5", "--flow-top", "1")
    plans = r["plans"]
    assert len(plans) == 5
    for p in plans:
        assert p["plan"]["tp"] * p["plan"].get("cp", 1) * p["plan"]["pp"] * p["plan"]["dp"] == 8
    times = [p["flow_step_time_s"] or p["step_time_s"] for p in plans[1:]]
    assert times == sorted(times)  # after the flow-confirmed best, ascending analytical time
    assert seen and all(d <= t for d, t in seen) and seen[-1][0] == seen[-1][1]


def test_a_raising_progress_callback_cancels_the_search():
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop()

    with pytest.raises(Stop):
        scalescope.plan("llama3-70b", "h100-rail-ndr", 512, gpus=64, progress=progress, threads=1)


def test_the_gil_is_released_during_a_search():
    # While another thread searches, this one keeps running Python code; with the GIL held it could not.
    t = threading.Thread(target=lambda: scalescope.plan("llama3-8b", "h100-rail-ndr", 256, gpus=32, threads=1,
                                                        top=3, flow_top=0))
    ticks = 0
    t.start()
    while t.is_alive():
        ticks += 1
    t.join()
    assert ticks > 10000


def test_hybrid_models_reach_the_library(cli_json):
    # Nemotron 3 Nano (23 Mamba-2, 23 MoE and 6 attention layers: docs/hybrid.md) from the catalog: the module and
    # the CLI agree, its exact counts are the model card's 31.6B, and the eager stack, which has no Mamba-2 rows,
    # is refused with the property named.
    args = ["--model", "nemotron-3-nano-30b-a3b", "--cluster", "hgx-h200-8", "--plan", "dp=8,ep=8,zero=1,gbs=8,precision=fp8"]
    py = scalescope.simulate("nemotron-3-nano-30b-a3b", "hgx-h200-8", "dp=8,ep=8,zero=1,gbs=8,precision=fp8")
    assert py == cli_json("simulate", *args)
    assert 0 < py["mfu"] < 1
    assert scalescope.model("nemotron-3-nano-30b-a3b")["hybrid_pattern"].count("M") == 23
    with pytest.raises(scalescope.InputError, match="properties.hybrid"):
        scalescope.simulate("nemotron-3-nano-30b-a3b", "hgx-h200-8", "dp=8,ep=8,zero=1,gbs=8", framework="pytorch-eager")


def test_power_cap_reaches_the_library(cli_json):
    # A calibration with a `power` section (docs/power.md) reports the power cap; power_cap=False is --no-power-cap.
    # A GEMM-dense gpt-ln on one H200 reaches the cap in the model (rate below 1), so the capped step is slower.
    model = str(pathlib.Path(__file__).resolve().parents[2] / "validation/programs/gpt-ln-h4096.json")
    args = (model, "hgx-h200-8", "tp=1,dp=1,mbs=4,gbs=4,seq=2048,precision=bf16")
    cal = "h200-gpu,h200-power"
    capped = scalescope.simulate(*args, calibration=cal, gpus=1, framework="pytorch-eager")
    burst = scalescope.simulate(*args, calibration=cal, gpus=1, framework="pytorch-eager", power_cap=False)
    assert capped == cli_json("simulate", "--model", args[0], "--cluster", args[1], "--plan", args[2], "--gpus", "1",
                              "--calibration", cal, "--framework", "pytorch-eager")
    assert 0 < capped["power_cap"]["tensor_rate"] < 1
    assert "power_cap" not in burst
    assert capped["step_time_s"] > burst["step_time_s"]
