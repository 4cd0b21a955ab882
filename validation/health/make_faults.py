#!/usr/bin/env python3
"""Writes the synthetic faulty profiles of validation/health/README.md: each a shipped profile
(calibrate/profiles/h200x4.json) with one fault set by hand, as tests/calibrate/profile_check_test.cpp builds
them, and trimmed to the sections `scalescope calibrate check` reads (largest collective and P2P rows, the best
GEMM row per dtype) so that the files stay small.

    python3 validation/health/make_faults.py            # writes validation/health/faults/*.json

Deterministic: the same shipped profile gives the same bytes.
"""
import copy
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def trimmed(doc):
    d = copy.deepcopy(doc)
    for c in d.get("collectives", []):
        c["rows"] = sorted(c["rows"], key=lambda r: r["bytes"])[-1:]
    for p in d.get("p2p", []):
        p.pop("rows", None)
    best = {}
    for g in d.get("gemm", []):
        if isinstance(g.get("tflops"), (int, float)) and g["tflops"] > best.get(g["dtype"], {}).get("tflops", 0):
            best[g["dtype"]] = g
    d["gemm"] = [best[k] for k in sorted(best)]
    d["memory"].pop("elementwise", None)
    for k in ("attention", "interference", "gemm_meta"):
        d.pop(k, None)
    return d


def under_load(d, sm, gen=lambda i: 5, width=lambda i: 16, reasons="0x0000000000000000"):
    for g in d["gpus"]:
        i = g["index"]
        g["under_load"] = {"sm_clock_MHz": sm, "max_sm_clock_MHz": 1980, "mem_clock_MHz": 3201,
                           "max_mem_clock_MHz": 3201, "pcie_gen": gen(i), "pcie_gen_max": 5, "pcie_width": width(i),
                           "pcie_width_max": 16, "clocks_event_reasons": reasons}


def cap_busbw(d, op, nranks, gbps):
    """Every row of collective `op` on `nranks` GPUs at most `gbps` of bus bandwidth."""
    for c in d["collectives"]:
        if c["op"] == op and c["nranks"] == nranks:
            for r in c["rows"]:
                r["busbw_GBps"] = min(r["busbw_GBps"], gbps)


def faults(base):
    out = {}
    # P2P at PCIe rates: 63 GB/s Gen5 x16 x ~0.8 copy-engine efficiency = 50 GB/s one way, 100 both ways.
    d = copy.deepcopy(base)
    for p in d["p2p"]:
        p["bandwidth_GBps"] = 100.0 if p["mode"] == "bidi" else 50.0
    out["p2p-pcie"] = d
    # One pair slow: 1->2 at 300 GB/s (the others 396).
    d = copy.deepcopy(base)
    for p in d["p2p"]:
        if p["src"] == 1 and p["dst"] == 2 and p["mode"] == "uni":
            p["bandwidth_GBps"] = 300.0
    out["slow-pair"] = d
    # HBM at half of the measured 4,270 GB/s.
    d = copy.deepcopy(base)
    d["memory"]["d2d_copy_GBps"] = 2135.0
    out["hbm-half"] = d
    # all_reduce on 4 GPUs at a ring-over-PCIe rate, 20 GB/s busbw.
    d = copy.deepcopy(base)
    cap_busbw(d, "all_reduce", 4, 20.0)
    out["ring-pcie"] = d
    # NCCL_P2P_DISABLE=1 while measuring, all_gather on 4 GPUs at 20 GB/s.
    d = copy.deepcopy(base)
    d["environment"]["NCCL_P2P_DISABLE"] = "1"
    cap_busbw(d, "all_gather", 4, 20.0)
    out["p2p-disable"] = d
    # Clocks throttled: 1,100 of 1,980 MHz under load, GEMM throughput scaled alike.
    d = copy.deepcopy(base)
    under_load(d, 1100, reasons="0x0000000000000004")
    for g in d["gemm"]:
        if isinstance(g.get("tflops"), (int, float)):
            g["tflops"] = round(g["tflops"] * 1100.0 / 1980.0, 2)
    out["clocks-throttled"] = d
    # gpu1's PCIe link at Gen4 x8; gpu0's host copies faster from NUMA node 1 than from its own node 0.
    d = copy.deepcopy(base)
    under_load(d, 1980, gen=lambda i: 4 if i == 1 else 5, width=lambda i: 8 if i == 1 else 16)
    rows = []
    for numa, pinned in ((0, 40.0), (1, 55.0)):
        for direction in ("h2d", "d2h"):
            rows.append({"gpu": 0, "numa_node": numa, "memory": "pinned", "direction": direction, "GBps": pinned})
            rows.append({"gpu": 0, "numa_node": numa, "memory": "pageable", "direction": direction, "GBps": 20.0})
    d["memory"]["host_copies"] = rows
    out["link-and-numa"] = d
    # nvidia-smi shows NV12 between GPU0 and GPU1 (6 of the 18 links down).
    d = copy.deepcopy(base)
    m = d["topology"]["matrix"]
    m = re.sub(r"GPU0\t X \tNV18", "GPU0\t X \tNV12", m)
    m = re.sub(r"GPU1\tNV18", "GPU1\tNV12", m)
    d["topology"]["matrix"] = m
    out["nvlinks-down"] = d
    return out


def main():
    with open(os.path.join(ROOT, "calibrate", "profiles", "h200x4.json")) as f:
        base = trimmed(json.load(f))
    dest = os.path.join(HERE, "faults")
    os.makedirs(dest, exist_ok=True)
    for name, doc in sorted(faults(base).items()):
        doc["provenance"] = "synthetic fault '" + name + "' (validation/health/make_faults.py) of calibrate/profiles/h200x4.json"
        with open(os.path.join(dest, "h200x4-" + name + ".json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
    print("wrote", len(faults(base)), "profiles to", dest, file=sys.stderr)


if __name__ == "__main__":
    main()
