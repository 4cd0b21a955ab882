#!/usr/bin/env python3
"""Fuzz every target on a many-core machine until each has run GOAL executions (default 10 million).

The long campaign of docs/robustness.md, spread over all cores of a machine: each round runs every target that
has not yet reached the goal for at most SECONDS, with a number of libFuzzer workers (-jobs=W -workers=W, one
process per core, all sharing the target's corpus directory, which libFuzzer reloads every second) proportional
to what it still needs at its measured speed (the targets nearest the goal are finished first). A later round (another call, the same --work folder)
continues where the last stopped: executions are summed over every round's worker logs.

  python3 scripts/fuzz_farm.py --bin build-asan/fuzz --work build-fuzzfarm --seconds 540 [--cores N]

--bin holds the fuzz_<target> executables (preset asan) and corpus/<target>/ (the seeds CMake copied);
fuzz/regressions/<target>/ is replayed first, read only. A crash, timeout or out-of-memory input is left as
WORK/<target>/<kind>-<hash> (libFuzzer's artifact prefix); the round's summary (WORK/summary-<round>.json) and
the cumulative table (WORK/summary.json) count them. Exit status 0 unless a target could not start.
"""
import argparse
import glob
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def max_lens():
    """The -max_len of each target, as fuzz/CMakeLists.txt gives ctest (scalescope_fuzz_target(NAME MAX_LEN ...))."""
    text = open(os.path.join(ROOT, "fuzz", "CMakeLists.txt")).read()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^scalescope_fuzz_target\((\w+) (\d+)", text, re.M)}


def executions(log):
    """Executions a worker log reports (stat::number_of_executed_units, printed at exit; else its last status line)."""
    text = open(log, errors="replace").read()
    final = re.findall(r"^stat::number_of_executed_units:\s*(\d+)", text, re.M)
    if final:
        return int(final[-1])
    status = re.findall(r"^#(\d+)\s", text, re.M)
    return int(status[-1]) if status else 0


def previous(work, target):
    """Executions and worker-seconds of every earlier round of a target."""
    execs, worker_s = 0, 0.0
    for rnd in sorted(glob.glob(os.path.join(work, target, "round-*"))):
        meta = os.path.join(rnd, "round.json")
        if not os.path.exists(meta):
            continue
        m = json.load(open(meta))
        execs += sum(executions(f) for f in glob.glob(os.path.join(rnd, "fuzz-*.log")))
        worker_s += m["workers"] * m["seconds"]
    return execs, worker_s


def _spread(alloc, spare, needs):
    """Adds `spare` workers to the targets of `alloc` in proportion to what they need (largest remainders)."""
    total = sum(needs[t] for t in alloc)
    if spare <= 0 or total <= 0:
        return alloc
    shares = {t: spare * needs[t] / total for t in alloc}
    out = {t: alloc[t] + int(math.floor(shares[t])) for t in alloc}
    extra = spare - sum(int(math.floor(v)) for v in shares.values())
    for t in sorted(alloc, key=lambda t: shares[t] - math.floor(shares[t]), reverse=True)[:extra]:
        out[t] += 1
    return out


def allocate(needs, cores, seconds, margin=1.3):
    """Workers per target: the targets closest to the goal first, each with the workers it needs to reach it this
    round (its core-seconds times a margin, since inputs grow and runs slow down), then the cores left shared by
    the others in proportion to what they still need; every target at least one worker, and no core left idle."""
    alloc, left = {}, cores
    order = sorted(needs, key=needs.get)
    for i, t in enumerate(order):
        w = max(1, math.ceil(needs[t] * margin / seconds))
        if w > left - (len(order) - i - 1):
            break
        alloc[t] = w
        left -= w
    rest = [t for t in order if t not in alloc]
    if not rest:
        # Every target can reach the goal: the cores left still run them (an unknown or optimistic speed, as
        # session 15's default of 1,000/s against torch_trace's ~190, left 44 of 64 cores idle otherwise).
        return _spread(alloc, left, needs)
    total = sum(needs[t] for t in rest)
    for t in rest:
        alloc[t] = 1
    spare = left - len(rest)
    if spare > 0 and total > 0:
        shares = {t: spare * needs[t] / total for t in rest}
        for t in rest:
            alloc[t] += int(math.floor(shares[t]))
        extra = left - sum(alloc[t] for t in rest)
        for t in sorted(rest, key=lambda t: shares[t] - math.floor(shares[t]), reverse=True)[:extra]:
            alloc[t] += 1
    return alloc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder of fuzz_<target> executables and corpus/<target>/")
    ap.add_argument("--work", required=True, help="folder for corpora, logs and crash inputs (kept across rounds)")
    ap.add_argument("--seconds", type=int, required=True, help="seconds this round runs")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="worker processes in all (default: every core)")
    ap.add_argument("--goal", type=int, default=10_000_000, help="executions per target (default 10 million)")
    ap.add_argument("--rates", help="JSON {target: executions per second per core} for targets without a round yet")
    ap.add_argument("targets", nargs="*", help="targets (default: every fuzz_* in --bin)")
    a = ap.parse_args()
    if a.seconds < 30 or a.cores < 1 or a.goal < 1:
        ap.error("--seconds must be at least 30, --cores and --goal at least 1")
    lens = max_lens()
    targets = a.targets or sorted(os.path.basename(f)[5:] for f in glob.glob(os.path.join(a.bin, "fuzz_*"))
                                  if os.access(f, os.X_OK))
    unknown = [t for t in targets if t not in lens or not os.access(os.path.join(a.bin, "fuzz_" + t), os.X_OK)]
    if unknown:
        sys.exit(f"fuzz_farm: no executable {a.bin}/fuzz_<t> or no max_len in fuzz/CMakeLists.txt for: {unknown}")
    rates = json.load(open(a.rates)) if a.rates else {}
    os.makedirs(a.work, exist_ok=True)
    rnd = len(glob.glob(os.path.join(a.work, "summary-*.json"))) + 1

    needs, done, speed = {}, {}, {}
    for t in targets:
        execs, worker_s = previous(a.work, t)
        done[t] = execs
        speed[t] = execs / worker_s if worker_s > 0 and execs > 0 else float(rates.get(t, 1000.0))
        if execs < a.goal:
            needs[t] = (a.goal - execs) / speed[t]
    if not needs:
        print(f"fuzz_farm: every target has reached {a.goal} executions")
    alloc = allocate(needs, a.cores, a.seconds)
    print(f"fuzz_farm round {rnd}: {a.cores} workers for {a.seconds} s on {platform.node()} "
          f"({os.cpu_count()} cores); workers per target: {alloc}", flush=True)

    env = dict(os.environ)
    # Leak checks stay on; ASan keeps shorter allocation stacks (the stack depot was ~15% of a run).
    env.setdefault("ASAN_OPTIONS", "malloc_context_size=5")
    procs = {}
    for t, w in alloc.items():
        corpus = os.path.join(a.work, t, "corpus")
        if not os.path.isdir(corpus):
            shutil.copytree(os.path.join(a.bin, "corpus", t), corpus)
        here = os.path.join(a.work, t, f"round-{rnd}")
        os.makedirs(here, exist_ok=True)
        json.dump({"workers": w, "seconds": a.seconds}, open(os.path.join(here, "round.json"), "w"))
        runs = math.ceil((a.goal - done[t]) / w)
        cmd = [os.path.abspath(os.path.join(a.bin, "fuzz_" + t)), f"-jobs={w}", f"-workers={w}", f"-runs={runs}",
               f"-max_total_time={a.seconds}", f"-max_len={lens[t]}", "-timeout=10", "-rss_limit_mb=2048",
               "-print_final_stats=1", "-artifact_prefix=" + os.path.abspath(os.path.join(a.work, t)) + "/",
               os.path.abspath(corpus)]
        reg = os.path.join(ROOT, "fuzz", "regressions", t)
        if os.path.isdir(reg):
            cmd.append(os.path.abspath(reg))
        procs[t] = subprocess.Popen(cmd, cwd=here, env=env, stdout=open(os.path.join(here, "parent.log"), "w"),
                                    stderr=subprocess.STDOUT)
    t0 = time.time()
    while any(p.poll() is None for p in procs.values()):
        time.sleep(30)
        running = [t for t, p in procs.items() if p.poll() is None]
        print(f"fuzz_farm: {time.time() - t0:.0f} s, {len(running)} targets running", flush=True)

    rows = {}
    for t in targets:
        here = os.path.join(a.work, t, f"round-{rnd}")
        this = sum(executions(f) for f in glob.glob(os.path.join(here, "fuzz-*.log"))) if t in procs else 0
        artifacts = sorted(os.path.basename(f) for f in glob.glob(os.path.join(a.work, t, "*-*"))
                           if re.match(r"(crash|timeout|oom|leak|slow-unit)-", os.path.basename(f)))
        rows[t] = {"workers": alloc.get(t, 0), "executions_this_round": this, "executions": done[t] + this,
                   "exit": procs[t].returncode if t in procs else None, "artifacts": artifacts,
                   "reached_goal": done[t] + this >= a.goal}
    summary = {"round": rnd, "seconds": a.seconds, "wall_s": round(time.time() - t0, 1), "cores": a.cores,
               "host": platform.node(), "cpu": cpu_model(), "asan_options": env["ASAN_OPTIONS"], "goal": a.goal,
               "targets": rows}
    json.dump(summary, open(os.path.join(a.work, f"summary-{rnd}.json"), "w"), indent=1)
    json.dump(summary, open(os.path.join(a.work, "summary.json"), "w"), indent=1)
    for t, r in rows.items():
        print(f"{t:18s} workers {r['workers']:3d}  +{r['executions_this_round']:>10,d}  total {r['executions']:>11,d}"
              f"  {'goal reached' if r['reached_goal'] else 'short':12s}  artifacts {len(r['artifacts'])}")
    return 0


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
