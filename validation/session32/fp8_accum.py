"""FP8 GEMM throughput with and without fast accumulation on one GPU (torch._scaled_mm, cuBLASLt).

Transformer Engine runs the forward GEMM of an FP8 linear with fast accumulation
(use_split_accumulator=False) and the dgrad / wgrad GEMMs with split (precise) accumulation;
scalescope-calibrate's fp8_e4m3 rows are cuBLASLt's default, precise accumulation. This measures
the ratio at the GEMM shapes of the NeMo rows (tokens x in -> out), median of 7 timed windows.
"""
import json, statistics, sys, torch

SHAPES = [  # (label, tokens, k, n)
    ("gpt3-5b fc1", 8192, 4096, 16384), ("gpt3-5b fc2", 8192, 16384, 4096),
    ("gpt3-5b qkv", 8192, 4096, 12288), ("gpt3-5b proj", 8192, 4096, 4096),
    ("llama2-7b gate/up", 4096, 4096, 22016), ("llama2-7b down", 4096, 11008, 4096),
    ("gpt3-175b tp4 fc1", 2048, 12288, 12288), ("gpt3-175b tp4 fc2", 2048, 12288, 12288),
    ("gpt3-175b tp4 qkv", 2048, 12288, 9216), ("nemotron-8b tp2 fc1", 16384, 4096, 8192),
    ("nemotron-8b tp2 fc2", 16384, 8192, 4096), ("llama3-70b tp4 gate/up", 8192, 8192, 14336),
    ("llama3-70b tp4 down", 8192, 7168, 8192), ("square 8192", 8192, 8192, 8192),
    ("square 4096", 4096, 4096, 4096), ("small 2048", 2048, 2048, 2048),
]


def timed(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(7):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / reps * 1e-3)
    return statistics.median(out)


def main():
    dev = torch.device("cuda")
    rows = []
    one = torch.ones((), device=dev)
    for label, m, k, n in SHAPES:
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major k x n
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        flops = 2.0 * m * n * k
        fns = {
            "fp8_fast": lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True),
            "fp8_precise": lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=False),
            "bf16": lambda: a16 @ b16,
        }
        row = {"label": label, "m": m, "k": k, "n": n}
        for name, fn in fns.items():
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            t1 = timed(fn, 5)
            reps = max(5, int(0.03 / t1))
            t = timed(fn, reps)
            row[name + "_s"] = t
            row[name + "_TFLOPS"] = flops / t / 1e12
        row["precise_over_fast"] = row["fp8_precise_s"] / row["fp8_fast_s"]
        rows.append(row)
        print(f"{label:24s} fast {row['fp8_fast_TFLOPS']:7.1f} precise {row['fp8_precise_TFLOPS']:7.1f} "
              f"bf16 {row['bf16_TFLOPS']:7.1f}  precise/fast time {row['precise_over_fast']:.3f}", flush=True)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cublas_lt": "torch's bundled cuBLASLt (nvidia-cublas pip package)",
            "method": "torch._scaled_mm, per-tensor scales 1, bf16 output; CUDA events over back-to-back calls "
                      "(~30 ms windows), median of 7 windows after warm-up"}
    json.dump({"meta": meta, "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
