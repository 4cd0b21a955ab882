#!/usr/bin/env python3
"""Writes the SYNTHETIC nccl-tests logs of this folder (run once; the logs are committed).

The numbers are made up: a smooth latency + size/bandwidth curve with a little deterministic
jitter, in the range public H200/H100/A100 nccl-tests results show. They are NOT measurements and
must never be presented as such; they exist to test the parser on the exact text layouts that
nccl-tests prints. The layouts are copied from nccl-tests' printf formats:
  * 2.17+ (src/util.cu writeDeviceReport / writeResultHeader / writeBenchmarkLine*): version line,
    "Collective test starting", "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s",
    columns "size count type redop root time algbw busbw #wrong" twice, getFloatStr() number widths,
    footer "# %-20s : %d %s" / "# %-20s : %g %s" and "# Collective test concluded".
  * about 2019-2021 (src/common.cu of that time): "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s",
    columns "size count type redop time algbw busbw error", the error printed as %5.0le.
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def float_str(value, width):
    """nccl-tests getFloatStr()."""
    power = 0
    val = 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    return "%*.1e" % (width, value)


def jitter(i, scale=0.01):
    return 1.0 + scale * math.sin(1.7 * i + 0.3)


def sizes(lo, hi):
    s = lo
    while s <= hi:
        yield s
        s *= 2


FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def points(op, n, lo, hi, lat_us, busbw_GBps, ramp_bytes):
    """(bytes, count column, time_us, algbw, busbw) with nccl-tests rounding of sizes."""
    out = []
    f = FACTORS[op](n)
    for i, s in enumerate(sizes(lo, hi)):
        count = s // 4
        if op in ("all_gather", "reduce_scatter", "alltoall"):
            per = (count // (4 * n)) * 4  # 16-byte aligned blocks of floats
            nbytes, count_col = per * n * 4, per
        else:
            nbytes, count_col = count * 4, count
        # Effective bus bandwidth ramps up with size (fewer channels / protocol switch).
        eff = busbw_GBps * nbytes / (nbytes + ramp_bytes) if nbytes else 0.0
        t = lat_us + (nbytes * f / (eff * 1e3) if nbytes else 0.0)
        t *= jitter(i)
        algbw = nbytes / t / 1e3
        out.append((nbytes, count_col, t, algbw, algbw * f))
    return out


def new_format(program, op, host, pids, hosts, devices, bus, name, rows, redop, root, n_gpus, lo, hi, iters=20,
               version="2.17.6", headers=22807, wrong="0"):
    lines = ["# nccl-tests version %s nccl-headers=%d nccl-library=%d" % (version, headers, headers),
             "# Collective test starting: %s" % program,
             "# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: %d agg iters: 1 "
             "validation: %d graph: 0" % (n_gpus, lo, hi, iters, 0 if wrong == "N/A" else 1),
             "#", "# Using devices"]
    for r, (pid, h, d) in enumerate(zip(pids, hosts, devices)):
        lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (r, 0, pid, h, d, 0, bus[d], 0, name))
    lines.append("#")
    lines.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""))
    lines.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
    lines.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    total = 0.0
    for i, (nbytes, count, t, algbw, busbw) in enumerate(rows):
        ip_t = t * jitter(i + 11, 0.015)
        ip_alg = nbytes / ip_t / 1e3
        body = "%12d  %12d  %8s  %6s  %6s" % (nbytes, count, "float", redop, "%6i" % root)
        for (tt, aa, bb) in ((t, algbw, busbw), (ip_t, ip_alg, ip_alg * busbw / algbw if algbw else 0.0)):
            w = "    N/A" if wrong == "N/A" else "  %6g" % 0
            body += "  %7s  %6s  %6s%s" % (float_str(tt, 7), float_str(aa, 6), float_str(bb, 6), w)
        lines.append(body)
        total += busbw
    lines.append("# %-20s : %d %s" % ("Out of bounds values", 0, "OK"))
    lines.append("# %-20s : %g %s" % ("Avg bus bandwidth", total / len(rows), ""))
    lines.append("#")
    lines.append("# Collective test concluded: %s" % program)
    lines.append("")
    return lines


def old_format(op, host, pid, n, name, bus, rows, redop, lo, hi):
    lines = ["# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: 1 " % (n, lo, hi),
             "#", "# Using devices"]
    for r in range(n):
        lines.append("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, pid, host, r, bus[r], name))
    lines.append("#")
    lines.append("# %10s  %12s  %8s  %6s            out-of-place                       in-place          " % ("", "", "", ""))
    lines.append("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
        "size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"))
    lines.append("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    total = 0.0
    for i, (nbytes, count, t, algbw, busbw) in enumerate(rows):
        ip_t = t * jitter(i + 5, 0.02)
        ip_alg = nbytes / ip_t / 1e3
        body = "%12d  %12d  %8s  %6s" % (nbytes, count, "float", redop)
        for (tt, aa, bb) in ((t, algbw, busbw), (ip_t, ip_alg, ip_alg * busbw / algbw if algbw else 0.0)):
            body += "  %7s  %6.2f  %6.2f  %5.0e" % (float_str(tt, 7), aa, bb, 0.0)
        lines.append(body)
        total += busbw
    lines.append("# Out of bounds values : 0 OK")
    lines.append("# Avg bus bandwidth    : %g " % (total / len(rows)))
    lines.append("#")
    lines.append("")
    return lines


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines))


H200_BUS = [0x18, 0x2a, 0x3a, 0x5d]

# 1) -g 4 single process, 2.17 format: all_reduce on 4 H200 (synthetic numbers).
rows = points("all_reduce", 4, 8, 1 << 30, 12.0, 360.0, 2.0e6)
write("all_reduce_g4_h200.log",
      ["$ ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 4"] +
      new_format("all_reduce_perf", "all_reduce", "h200box", [52311] * 4, ["h200box"] * 4, [0, 1, 2, 3], H200_BUS,
                 "NVIDIA H200", rows, "sum", -1, 4, 8, 1 << 30))

# 2) MPI, one process per GPU on 2 nodes x 4 GPUs, all_gather, NCCL INFO lines around, with srun-free mpirun.
rows = points("all_gather", 8, 1024, 1 << 28, 25.0, 45.0, 4.0e6)
log = ["mpirun -np 8 -H nodeA:4,nodeB:4 -x NCCL_DEBUG=INFO ./build/all_gather_perf -b 1K -e 256M -f 2 -g 1",
       "nodeA:20101:20101 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
       "nodeA:20101:20101 [0] NCCL INFO cudaDriverVersion 12080",
       "NCCL version 2.21.5+cuda12.4"]
log += new_format("all_gather_perf", "all_gather", None, [20101, 20102, 20103, 20104, 31501, 31502, 31503, 31504],
                  ["nodeA"] * 4 + ["nodeB"] * 4, [0, 1, 2, 3, 0, 1, 2, 3], H200_BUS, "NVIDIA H100 80GB HBM3", rows, "none",
                  -1, 1, 1024, 1 << 28, version="2.13.10", headers=22105)
write("all_gather_mpi_2x4.log", log)

# 3) Old layout (error column, no root, no Group, [0x..] bus ids): reduce_scatter -g 8 on an A100 box.
rows = points("reduce_scatter", 8, 8, 1 << 27, 20.0, 225.0, 3.0e6)
write("reduce_scatter_old_g8.log",
      ["$ ./build/reduce_scatter_perf -b 8 -e 128M -f 2 -g 8"] +
      old_format("reduce_scatter", "dgx-a100", 43466, 8, "A100-SXM4-80GB", [0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd],
                 rows, "sum", 8, 1 << 27))

# 4) Two tests in one file (alltoall then sendrecv), validation off (-c 0: N/A columns).
rows_a = points("alltoall", 4, 1024, 1 << 26, 20.0, 300.0, 1.0e6)
rows_s = points("sendrecv", 4, 1024, 1 << 26, 8.0, 320.0, 5.0e5)
log = new_format("alltoall_perf", "alltoall", None, [7001] * 4, ["h200box"] * 4, [0, 1, 2, 3], H200_BUS, "NVIDIA H200",
                 rows_a, "none", -1, 4, 1024, 1 << 26, wrong="N/A")
log += new_format("sendrecv_perf", "sendrecv", None, [7002] * 4, ["h200box"] * 4, [0, 1, 2, 3], H200_BUS, "NVIDIA H200",
                  rows_s, "none", -1, 4, 1024, 1 << 26, wrong="N/A")
write("alltoall_then_sendrecv_c0.log", log)

# 5) Truncated: the all_reduce log cut in the middle of the table (no footer).
full = open(os.path.join(HERE, "all_reduce_g4_h200.log")).read().split("\n")
cut = [i for i, l in enumerate(full) if l.strip().startswith("65536 ")][0]
write("truncated_all_reduce.log", full[:cut + 1] + [""])

# 6) A binary built without MPI=1 under mpirun: every process is "rank 0" of its own test.
write("duplicate_ranks.log", [
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
    "#", "# Using devices",
    "#  Rank  0 Group  0 Pid   1320 on      nodeA device  0 [0000:18:00] NVIDIA H200",
    "#  Rank  0 Group  0 Pid   2066 on      nodeB device  0 [0000:18:00] NVIDIA H200", "#"])
