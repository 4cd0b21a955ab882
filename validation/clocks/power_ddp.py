#!/usr/bin/env python3
"""Summary of validation/device/session_power_ddp19.sh: per program, the step alone on one GPU against the same step
under DDP on two, with the SM clock, power and clock-event reasons nvidia-smi sampled beside each run.

    python3 validation/clocks/power_ddp.py DIR        (DIR: what the session script wrote)

Only the samples of a GPU drawing more than 60% of its power limit count (the busy part of a run: model building,
warm-up compilation and the idle tail fall below it). The verdict applies the criteria committed in the session
script's header before it ran: DDP's median SM clock on GPU 0 at least 3% below the lone step's with the power-cap
reason (bit 0x4) in most DDP samples -> "clock"; within 1.5% -> "not the clock"; otherwise "between"."""
import csv
import json
import os
import statistics
import sys

BUSY_SHARE = 0.6
POWER_CAP_BIT = 0x4


def limits(path):
    """index -> (max SM MHz, power limit W) from `nvidia-smi --query-gpu=index,name,clocks.max.sm,power.limit`."""
    out = {}
    with open(path) as f:
        for row in csv.reader(f):
            if row and row[0].strip().isdigit():
                out[int(row[0])] = (float(row[2].split()[0]), float(row[3].split()[0]))
    return out


def samples(path, gpu, limit_w):
    """Busy samples of one GPU: (SM MHz, W, reasons) from index,timestamp,clocks.sm,power.draw,reasons,util rows."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for row in csv.reader(f):
            try:
                idx, mhz, watts, reasons = int(row[0]), float(row[2]), float(row[3]), int(row[4].strip(), 16)
            except (ValueError, IndexError):
                continue
            if idx == gpu and watts > BUSY_SHARE * limit_w:
                out.append((mhz, watts, reasons))
    return out


def describe(s):
    if not s:
        return None
    return {"samples": len(s), "sm_MHz_median": statistics.median(x[0] for x in s),
            "power_W_median": statistics.median(x[1] for x in s),
            "power_cap_share": sum(1 for x in s if x[2] & POWER_CAP_BIT) / len(s)}


def step_time(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    if "rows" in d:  # run_steps.py measure
        return d["rows"][0].get("step_time_s")
    return d.get("measured", {}).get("step_time_s")  # run_points.py


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    lim = limits(os.path.join(d, "limits.csv"))
    report = {}
    for prog, point in (("gpt-ln", "gpt-ln.ddp.n2"), ("hf-llama", "hf-llama.ddp.n2")):
        alone = describe(samples(os.path.join(d, f"smi-{prog}-alone.csv"), 0, lim[0][1]))
        ddp = {g: describe(samples(os.path.join(d, f"smi-{prog}-ddp.csv"), g, lim[g][1])) for g in (0, 1)}
        t_alone = step_time(os.path.join(d, f"alone-{prog}.json"))
        t_ddp = step_time(os.path.join(d, f"ddp-{prog}", "measured", point + ".json"))
        r = {"step_alone_s": t_alone, "step_ddp_s": t_ddp, "alone_gpu0": alone, "ddp_gpu0": ddp[0], "ddp_gpu1": ddp[1]}
        if t_alone and t_ddp:
            r["step_ddp_over_alone"] = t_ddp / t_alone
        if alone and ddp[0]:
            drop = 1 - ddp[0]["sm_MHz_median"] / alone["sm_MHz_median"]
            r["clock_drop_ddp_vs_alone"] = drop
            r["verdict"] = ("clock" if drop >= 0.03 and ddp[0]["power_cap_share"] > 0.5 else
                            "not the clock" if abs(drop) <= 0.015 else "between")
        report[prog] = r
        print(f"{prog}: step alone {t_alone} s, DDP {t_ddp} s"
              + (f" (x{r['step_ddp_over_alone']:.3f})" if "step_ddp_over_alone" in r else ""))
        for name, s in (("alone GPU0", alone), ("DDP GPU0", ddp[0]), ("DDP GPU1", ddp[1])):
            if s:
                print(f"  {name}: {s['samples']} busy samples, SM {s['sm_MHz_median']:.0f} MHz, "
                      f"{s['power_W_median']:.0f} W, power-cap reason in {100 * s['power_cap_share']:.0f}%")
        if "verdict" in r:
            print(f"  clock drop DDP vs alone {100 * r['clock_drop_ddp_vs_alone']:+.1f}% -> {r['verdict']}")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
