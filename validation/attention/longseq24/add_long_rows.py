#!/usr/bin/env python3
"""Adds measured long-sequence attention rows (causal, seq >= --min-seq) to a shipped profile's `attention` section,
keeping its rows and key order, rewriting the file atomically (session 24; README.md says which rows went where):
  add_long_rows.py PROFILE MEASUREMENT.json --min-seq 8192 --source TEXT"""
import argparse
import json
import os

KEYS = ("backend", "batch", "bwd_s", "causal", "dtype", "fwd_s", "head_dim", "heads", "kv_heads", "label", "seq")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profile")
    p.add_argument("measurement")
    p.add_argument("--min-seq", type=int, default=8192)
    p.add_argument("--source", required=True, help="what the added rows are (appended to the section's source)")
    p.add_argument("--backend", help="the rows' backend when the measurement's rows carry none")
    a = p.parse_args()
    with open(a.profile) as f:
        prof = json.load(f)
    with open(a.measurement) as f:
        meas = json.load(f)
    section = prof["attention"]
    have = {(r.get("backend", "flash"), r["batch"], r["heads"], r["kv_heads"], r["head_dim"], r["seq"], r["causal"])
            for r in section["rows"]}
    added = 0
    for r in meas["rows"]:
        backend = r.get("backend") or a.backend or "flash"
        if not r["causal"] or r["seq"] < a.min_seq:
            continue
        key = (backend, r["batch"], r["heads"], r["kv_heads"], r["head_dim"], r["seq"], True)
        if key in have:
            continue
        row = dict(backend=backend, batch=r["batch"], bwd_s=r["bwd_s"], causal=True, dtype=r.get("dtype", "bf16"),
                   fwd_s=r["fwd_s"], head_dim=r["head_dim"], heads=r["heads"], kv_heads=r["kv_heads"],
                   label=r.get("model") or r.get("label", ""), seq=r["seq"])
        section["rows"].append({k: row[k] for k in KEYS})
        have.add(key)
        added += 1
    section["source"] = section["source"] + "; plus " + a.source
    tmp = a.profile + ".tmp"
    with open(tmp, "w") as f:
        json.dump(prof, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.profile)
    print(f"added {added} rows to {a.profile}")


if __name__ == "__main__":
    main()
