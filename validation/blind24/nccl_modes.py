#!/usr/bin/env python3
"""NCCL collectives with ONE PROCESS PER GPU through torch.distributed, written as nccl-tests logs.

  torchrun --nproc-per-node 4 validation/blind24/nccl_modes.py --out DIR [--groups 2,4] [--max-bytes 1G]
For each group size n (ranks 0..n-1; the others wait) and op (all_reduce, all_gather, reduce_scatter, alltoall),
sizes 8 B .. --max-bytes by factors of 2, float32, sum: nccl-tests' method (src/common.cu): --warmup calls, then
a barrier and --iters calls back to back between two host timer readings, the second after
torch.cuda.synchronize(); time per call = that interval / iters, averaged over the ranks (nccl-tests' default
-a 1); algbw = size / time, busbw = algbw x the op's nccl-tests factor. Sizes as nccl-tests counts them: the whole
buffer (all_gather: the gathered output, reduce_scatter: the input, alltoall: one rank's send buffer), each rank's
part a whole number of 4-element blocks. The ops are torch's: dist.all_reduce (IN PLACE: torch has no out-of-place
all-reduce; NCCL times both alike), all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single (out of
place), so each call also pays ProcessGroupNCCL's host cost -- the launch mode of torchrun training programs.
One check per size (after the timing): every received element equals the value computed on the host.
Each (op, n) goes to DIR/torch-OP-nN.log in nccl-tests' text layout (device lines with each process's own pid:
`scalescope import nccl-tests` reads them; the first time/algbw/busbw group holds these numbers).
"""
import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

FACTOR = {"all_reduce": lambda n: 2.0 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n}


def parse_bytes(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    return int(t[:-1]) * mult[t[-1]] if t[-1] in mult else int(t)


def float_str(value, width):
    """nccl-tests getFloatStr() (src/util.cu)."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (width, value)
        if len(s) <= width:
            return s
    return "%*.1e" % (width, value)


def layout(op, size, n):
    """(bytes as nccl-tests prints them, count column, elements per rank's send buffer, per receive buffer)."""
    count = size // 4
    if op == "all_reduce":
        return count * 4, count, count, count
    per = (count // (4 * n)) * 4  # each rank's block: whole 4-element groups
    if op == "all_gather":
        return per * n * 4, per, per, per * n
    if op == "reduce_scatter":
        return per * n * 4, per, per * n, per
    return per * n * 4, per, per * n, per * n  # alltoall: `per` elements to every rank


def run_op(op, send, recv, group):
    if op == "all_reduce":
        dist.all_reduce(send, group=group)
    elif op == "all_gather":
        dist.all_gather_into_tensor(recv, send, group=group)
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(recv, send, group=group)
    else:
        dist.all_to_all_single(recv, send, group=group)


def check(op, rank, n, device, elems_in, elems_out, group):
    """Runs the op once with rank-dependent data and counts wrong elements on this rank."""
    send = torch.full((elems_in,), float(rank + 1), device=device)
    if op == "alltoall":  # element j of the block for rank d: 1000 * (source + 1) + d
        per = elems_in // n
        send = (1000.0 * (rank + 1) + torch.arange(n, device=device, dtype=torch.float32)).repeat_interleave(per)
    recv = torch.empty(elems_out, device=device)
    run_op(op, send, recv, group)
    if op == "all_reduce":
        got, want = send, torch.full_like(send, n * (n + 1) / 2)
    elif op == "all_gather":
        got, want = recv, torch.arange(1, n + 1, device=device, dtype=torch.float32).repeat_interleave(elems_in)
    elif op == "reduce_scatter":
        got, want = recv, torch.full_like(recv, n * (n + 1) / 2)
    else:
        per = elems_out // n
        got = recv
        want = (1000.0 * torch.arange(1, n + 1, device=device, dtype=torch.float32) + rank).repeat_interleave(per)
    return int((got != want).sum().item())


def device_line(rank, device):
    p = torch.cuda.get_device_properties(device) if device.type == "cuda" else None
    bus = (getattr(p, "pci_domain_id", 0), getattr(p, "pci_bus_id", 0), getattr(p, "pci_device_id", 0)) if p else (0, 0, 0)
    name = p.name if p else "cpu"
    return "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (
        rank, 0, os.getpid(), socket.gethostname(), device.index or 0, bus[0], bus[1], bus[2], name)


def measure(op, n, rank, device, group, sizes, a):
    rows = []
    for size in sizes:
        nbytes, count, e_in, e_out = layout(op, size, n)
        if nbytes == 0:
            continue
        send = torch.ones(e_in, device=device)
        recv = torch.empty(e_out, device=device)
        for _ in range(a.warmup):
            run_op(op, send, recv, group)
        torch.cuda.synchronize() if device.type == "cuda" else None
        dist.barrier(group=group)
        t0 = time.perf_counter()
        for _ in range(a.iters):
            run_op(op, send, recv, group)
        torch.cuda.synchronize() if device.type == "cuda" else None
        dt = torch.tensor([(time.perf_counter() - t0) / a.iters], dtype=torch.float64, device=device)
        dist.all_reduce(dt, group=group)
        wrong = torch.tensor([check(op, rank, n, device, e_in, e_out, group)], dtype=torch.float64, device=device)
        dist.all_reduce(wrong, group=group)
        del send, recv
        t_us = float(dt.item()) / n * 1e6
        algbw = nbytes / t_us / 1e3
        rows.append((nbytes, count, t_us, algbw, algbw * FACTOR[op](n), int(wrong.item())))
    return rows


def write_log(path, op, n, devices, rows, a):
    redop = "sum" if op in ("all_reduce", "reduce_scatter") else "none"
    lines = [f"# torch.distributed {torch.__version__} (ProcessGroupNCCL, NCCL "
             f"{'.'.join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else '-'}): one process "
             f"per GPU under torchrun; validation/blind24/nccl_modes.py, nccl-tests' text layout",
             f"# Collective test starting: {op}_perf",
             f"# nThread 1 nGpus 1 minBytes {a.min} maxBytes {a.max} step: 2(factor) warmup iters: {a.warmup} "
             f"iters: {a.iters} agg iters: 1 validation: 1 graph: 0",
             "#", "# Using devices", *devices, "#",
             "# %10s  %12s  %8s  %6s  %6s     torch.distributed (all_reduce in place, the others out of place)" % (
                 "", "", "", "", ""),
             "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s" % ("size", "count", "type", "redop", "root", "time",
                                                                 "algbw", "busbw", "#wrong"),
             "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s" % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                                                                 "(GB/s)", "")]
    total = 0.0
    for nbytes, count, t, alg, bus, wrong in rows:
        lines.append("%12d  %12d  %8s  %6s  %6s  %7s  %6s  %6s  %6d" % (
            nbytes, count, "float", redop, "%6i" % -1, float_str(t, 7), float_str(alg, 6), float_str(bus, 6), wrong))
        total += bus
    bad = sum(r[5] for r in rows)
    lines += ["# %-20s : %d %s" % ("Out of bounds values", bad, "FAILED" if bad else "OK"),
              "# %-20s : %g %s" % ("Avg bus bandwidth", total / max(1, len(rows)), ""), "#",
              f"# Collective test concluded: {op}_perf", ""]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--groups", default="2,4")
    ap.add_argument("--ops", default="all_reduce,all_gather,reduce_scatter,alltoall")
    ap.add_argument("--min-bytes", default="8")
    ap.add_argument("--max-bytes", default="1G")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    a = ap.parse_args()
    a.min, a.max = parse_bytes(a.min_bytes), parse_bytes(a.max_bytes)
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    if a.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    sizes, s = [], a.min
    while s <= a.max:
        sizes.append(s)
        s *= 2
    os.makedirs(a.out, exist_ok=True)
    lines = [None] * world
    dist.all_gather_object(lines, device_line(rank, device))
    for n in (int(g) for g in a.groups.split(",")):
        if n > world:
            continue
        group = dist.new_group(list(range(n)))  # every rank takes part in creating it
        if rank < n:
            for op in a.ops.split(","):
                t0 = time.time()
                rows = measure(op, n, rank, device, group, sizes, a)
                if rank == 0:
                    write_log(os.path.join(a.out, f"torch-{op}-n{n}.log"), op, n, lines[:n], rows, a)
                    print(f"{op} n={n}: {len(rows)} sizes in {time.time() - t0:.1f} s, smallest {rows[0][2]:.1f} us",
                          file=sys.stderr, flush=True)
        dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
