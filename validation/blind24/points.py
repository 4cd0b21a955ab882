"""Every point of the blind check of issue 24 (no torch): what runs where, its scalescope plan, and the traces.

A point is one measured configuration: program (validation/programs/programs.py), family (how it is spread over
GPUs: validation/blind24/families.py), shape, and the scalescope plan string that predicts it, in the mapping
validation/harness/plans.py uses (Megatron rank order tp-cp-dp-pp; ZeRO-2/3 = FSDP2; schedule gpipe/1f1b).
Part A: gpt-ln (DDP, FSDP2 ZeRO-2/3, DTensor TP, PP GPipe/1F1B, TP x DP), its FP8 variant and context parallelism.
Part B: hf-llama (the same families), the MoE program (one GPU, expert and data parallel) and NCCL launch modes.
Each part traces its own programs first (TRACES), so that its predictions come from this lease's host and GPUs.
"""
from dataclasses import dataclass, field

P = "validation/programs/"
GPT = P + "gpt-ln-0.5b-h20.json"  # gpt-ln-0.5b with 20 heads of 80 (25 heads admit no TP of 2 or 4)
GPT_CP = P + "gpt-ln-cp-16k.json"  # the same layer, 4 layers, 16k tokens: context parallelism
LLAMA = P + "hf-llama-0.9b/config.json"
MOE = P + "moe-e16k2.json"
MOE_E8 = P + "moe-e8k2.json"
MOE_K4 = P + "moe-e16k4.json"


@dataclass
class Trace:
    """One one-GPU profiler trace (run_steps.py trace) and the host-bound timing its import needs."""
    key: str
    part: str
    program: str  # programs.py name (*-fsdp: FSDP2 ZeRO-3 on one process)
    model: str
    mbs: int
    seq: int
    est_s: float
    env: dict = field(default_factory=dict)
    host_program: str = ""  # the program whose host-bound timing the import takes (default: the traced one)

    def name(self):
        return f"{self.key}-mbs{self.mbs}-seq{self.seq}"


# Trace shapes where the GPU, not the host, sets the step (session 9, H100: gpt-ln 4x768 was host-bound at 28 ms,
# 8x1024 took 58 ms; hf-llama was host-bound up to 2x1024 at ~90 ms, 8x1024 took 173 ms).
TRACES = [
    Trace("gpt-ln", "A", "gpt-ln", GPT, 8, 1024, 22),
    Trace("gpt-ln-fsdp", "A", "gpt-ln-fsdp", GPT, 8, 1024, 24),
    Trace("gpt-ln-fp8", "A", "gpt-ln-fp8", GPT, 8, 1024, 24),
    Trace("gpt-ln-cp", "A", "gpt-ln", GPT_CP, 1, 16384, 25),
    Trace("hf-llama", "B", "hf-llama", LLAMA, 4, 2048, 40),
    Trace("hf-llama-fsdp", "B", "hf-llama-fsdp", LLAMA, 4, 2048, 45),
    Trace("moe", "B", "moe", MOE, 4, 2048, 32, {"MOE_ROUTING": "balanced"}),
    # Part C: the same programs under DTensor TP on a one-process mesh (programs.py *-dtp): the one-GPU trace and
    # host-bound timing a user can take of their own tensor-parallel program, which part A/B's plain traces lack.
    Trace("gpt-ln-dtp", "C", "gpt-ln-dtp", GPT, 8, 1024, 30),
    Trace("hf-llama-dtp", "C", "hf-llama-dtp", LLAMA, 4, 2048, 50),
    # Part D: the same traces, with the host-bound timing of the program on a mesh of 2 whose other rank is torch's
    # fake process group (programs.py *-dtp2): on a one-rank mesh DTensor skips every redistribution, so part C's
    # timing had none of the TP collectives' host path (session 12 diagnosis, validation/blind24/session12/diag).
    Trace("gpt-ln-dtpf", "D", "gpt-ln-dtp", GPT, 8, 1024, 45, host_program="gpt-ln-dtp2"),
    Trace("hf-llama-dtpf", "D", "hf-llama-dtp", LLAMA, 4, 2048, 65, host_program="hf-llama-dtp2"),
    # Part E: part D's mechanism at TP 4 (host timing on a fake 4-rank mesh, *-dtp4), for a 4-GPU lease.
    Trace("gpt-ln-dtpf4", "E", "gpt-ln-dtp", GPT, 8, 1024, 45, host_program="gpt-ln-dtp4"),
    Trace("hf-llama-dtpf4", "E", "hf-llama-dtp", LLAMA, 4, 2048, 65, host_program="hf-llama-dtp4"),
    # Part F (session 13): part D's mechanism for FSDP2. The one-process FSDP2 trace issues no collective (FSDP2
    # skips them on one rank), so its host timing lacks their host path, and session 13's 2-GPU profile of
    # gpt-ln ZeRO-3 left the GPU idle for half the step. The host-bound timing is taken on a mesh of N whose other
    # ranks are a fake process group (programs.py *-fsdpN); the kernels still come from the one-process trace. The
    # plain traces come along for the DDP and data-parallel MoE points, which part F predicts with the lease's own
    # compute-communication interference (the calibration's interf section: before, no part measured it).
    Trace("gpt-ln", "F", "gpt-ln", GPT, 8, 1024, 22),
    Trace("gpt-ln-fsdpf", "F", "gpt-ln-fsdp", GPT, 8, 1024, 35, host_program="gpt-ln-fsdp2"),
    Trace("gpt-ln-fsdpf4", "F", "gpt-ln-fsdp", GPT, 8, 1024, 35, host_program="gpt-ln-fsdp4"),
    Trace("hf-llama", "F", "hf-llama", LLAMA, 4, 2048, 40),
    Trace("hf-llama-fsdpf", "F", "hf-llama-fsdp", LLAMA, 4, 2048, 50, host_program="hf-llama-fsdp2"),
    Trace("hf-llama-fsdpf4", "F", "hf-llama-fsdp", LLAMA, 4, 2048, 50, host_program="hf-llama-fsdp4"),
    # Part I (session 21): PyTorch DDP's gradient copies into and out of its buckets (gradient_as_bucket_view=False,
    # torch's default; StackProfile::ddp_grad_copies), blind at shapes no earlier part measured.
    Trace("gpt-ln", "I", "gpt-ln", GPT, 8, 1024, 22),
    Trace("hf-llama", "I", "hf-llama", LLAMA, 4, 2048, 40),
    Trace("moe", "I", "moe", MOE, 4, 2048, 32, {"MOE_ROUTING": "balanced"}),
    # Part J (session 21): part I again at other new shapes, after DDP's copies were priced per parameter tensor,
    # with the lease's interference measured (its calibration runs the interf section, as `calibrate run` does).
    Trace("gpt-ln", "J", "gpt-ln", GPT, 8, 1024, 22),
    Trace("hf-llama", "J", "hf-llama", LLAMA, 4, 2048, 40),
    Trace("moe", "J", "moe", MOE, 4, 2048, 32, {"MOE_ROUTING": "balanced"}),
]
HOST_SHAPE = "1x32"


@dataclass
class Point:
    id: str
    part: str
    group: str  # report group: stack, fp8, cp, ep, moe-1gpu, moe-learned
    program: str
    family: str  # single ddp zero2 zero3 tp tp-dp pp-gpipe pp-1f1b cp ep dp
    model: str
    stacks: list  # trace keys whose imported stacks predict it (--framework, first that applies)
    gpus: int
    mbs: int
    seq: int
    gbs: int
    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    ep: int = 1
    zero: int = 0
    schedule: str = "1f1b"
    precision: str = "bf16"
    cp_rotate: str = ""  # torch context_parallel rotate method: allgather or alltoall
    routing: str = ""  # MoE: balanced or learned
    est_s: float = 6.0

    def microbatches(self):
        return self.gbs // (self.mbs * self.dp)

    def plan(self):
        s = (f"tp={self.tp},pp={self.pp},dp={self.dp},zero={self.zero},mbs={self.mbs},gbs={self.gbs},seq={self.seq},"
             f"schedule={self.schedule},recompute=none,sp=0,bucket_MB=25")
        if self.precision == "fp8":
            # pure-bf16 program: bf16 gradients, reduced in bf16 (grad_reduce_in_fp32=0)
            s += ",precision=fp8,fp8_recipe=tensorwise,grad_reduce_in_fp32=0"
        else:
            s += f",precision={self.precision}"
        if self.cp > 1:
            s += f",cp={self.cp},cp_comm={CP_COMM[self.cp_rotate]}"
        if self.program == "moe":
            # balanced routing is exactly even; learned routing is predicted as a user would (the default imbalance)
            s += f",ep={self.ep}" + (",moe_imbalance=1.0" if self.routing == "balanced" else "")
        return s


# torch's context_parallel rotate methods (torch/distributed/tensor/experimental/_attention.py) -> scalescope
# cp_comm (models/include/scalescope/models/cp_costs.hpp): "allgather" gathers every rank's K/V before the
# attention and reduce-scatters dK/dV after its backward, exposed = cp_comm=allgather (TE's KV all-gather);
# "alltoall" passes K/V blocks around the ring step by step, each step's exchange issued before the block it
# overlaps is computed = cp_comm=p2p (TE's ring of K/V blocks; torch sends them with all_to_all_single).
CP_COMM = {"allgather": "allgather", "alltoall": "p2p"}


def _dense(part, program, model, stacks, precision, trace_mbs, seq, pp_mbs, est):
    """DDP, FSDP2 ZeRO-2/3, TP, PP GPipe/1F1B on 2 and 4 GPUs and TP x DP 2x2, the trace's micro-batch per GPU
    (PP: 8 micro-batches of pp_mbs). Order = importance when the budget runs short."""
    out = []
    for n in (2, 4):
        b = trace_mbs
        common = dict(part=part, group="stack", program=program, model=model, stacks=stacks, gpus=n, seq=seq,
                      precision=precision, est_s=est)
        out += [Point(f"{program}.ddp.n{n}", family="ddp", mbs=b, gbs=b * n, dp=n, **common),
                Point(f"{program}.zero3.n{n}", family="zero3", mbs=b, gbs=b * n, dp=n, zero=3, **common),
                Point(f"{program}.tp.n{n}", family="tp", mbs=b, gbs=b, tp=n, **common),
                Point(f"{program}.pp-1f1b.n{n}", family="pp-1f1b", mbs=pp_mbs, gbs=8 * pp_mbs, pp=n, **common),
                Point(f"{program}.zero2.n{n}", family="zero2", mbs=b, gbs=b * n, dp=n, zero=2, **common),
                Point(f"{program}.pp-gpipe.n{n}", family="pp-gpipe", mbs=pp_mbs, gbs=8 * pp_mbs, pp=n,
                      schedule="gpipe", **common)]
        if n == 4:
            out.append(Point(f"{program}.tp-dp.n4", family="tp-dp", mbs=b, gbs=2 * b, tp=2, dp=2, **common))
    return out


def _part_a():
    pts = _dense("A", "gpt-ln", GPT, ["gpt-ln", "gpt-ln-fsdp"], "bf16", 8, 1024, 2, 5.0)
    fp8 = dict(part="A", group="fp8", program="gpt-ln-fp8", model=GPT, stacks=["gpt-ln-fp8"], precision="fp8",
               est_s=5.0)
    pts += [Point("gpt-ln-fp8.single.8x1024", family="single", gpus=1, mbs=8, seq=1024, gbs=8, **fp8),
            Point("gpt-ln-fp8.single.4x2048", family="single", gpus=1, mbs=4, seq=2048, gbs=4, **fp8),
            Point("gpt-ln-fp8.single.16x512", family="single", gpus=1, mbs=16, seq=512, gbs=16, **fp8)]
    pts += [Point(f"gpt-ln-fp8.ddp.n{n}", family="ddp", gpus=n, mbs=8, seq=1024, gbs=8 * n, dp=n, **fp8)
            for n in (2, 4)]
    cp = dict(part="A", group="cp", program="gpt-ln", model=GPT_CP, stacks=["gpt-ln-cp"], precision="bf16",
              family="cp", mbs=1, seq=16384, gbs=1, est_s=7.0)
    for n in (2, 4):
        pts += [Point(f"gpt-ln-cp.{rot}.n{n}", gpus=n, cp=n, cp_rotate=rot, **cp) for rot in ("allgather", "alltoall")]
    return pts


def _part_b():
    pts = _dense("B", "hf-llama", LLAMA, ["hf-llama", "hf-llama-fsdp"], "mixed", 4, 2048, 1, 8.0)
    one = dict(part="B", group="moe-1gpu", program="moe", family="single", stacks=["moe"], gpus=1, precision="bf16",
               routing="balanced", est_s=7.0)
    pts += [Point("moe.single.e16k2.4x2048", model=MOE, mbs=4, seq=2048, gbs=4, **one),
            Point("moe.single.e16k2.2x4096", model=MOE, mbs=2, seq=4096, gbs=2, **one),
            Point("moe.single.e16k2.8x1024", model=MOE, mbs=8, seq=1024, gbs=8, **one),
            Point("moe.single.e8k2.4x2048", model=MOE_E8, mbs=4, seq=2048, gbs=4, **one),
            Point("moe.single.e16k4.4x2048", model=MOE_K4, mbs=4, seq=2048, gbs=4, **one)]
    ep = dict(part="B", program="moe", model=MOE, stacks=["moe"], precision="bf16", mbs=4, seq=2048, est_s=7.0)
    for n in (2, 4):
        pts += [Point(f"moe.ep.n{n}", group="ep", family="ep", gpus=n, gbs=4 * n, dp=n, ep=n, routing="balanced", **ep),
                Point(f"moe.dp.n{n}", group="ep", family="dp", gpus=n, gbs=4 * n, dp=n, ep=1, routing="balanced", **ep),
                Point(f"moe.ep-learned.n{n}", group="moe-learned", family="ep", gpus=n, gbs=4 * n, dp=n, ep=n,
                      routing="learned", **ep)]
    pts.append(Point("moe.single-learned.e16k2.4x2048", part="B", group="moe-learned", program="moe", family="single", model=MOE,
                     stacks=["moe"], gpus=1, mbs=4, seq=2048, gbs=4, routing="learned"))
    return pts


def _part_c():
    """DTensor TP predicted from the *-dtp traces (session 12): the two shapes sessions 11's parts A and B measured
    (their predictions from the plain traces were -69.5% and -56.8%) and new shapes, on 2 GPUs (4 when lent)."""
    pts = []
    for program, model, precision, shapes in (("gpt-ln", GPT, "bf16", ((8, 1024), (4, 1024), (16, 1024), (4, 2048))),
                                              ("hf-llama", LLAMA, "mixed", ((4, 2048), (2, 2048), (8, 1024), (2, 4096)))):
        for n in (2, 4):
            for mbs, seq in shapes:
                pts.append(Point(f"{program}.tp-dtp.n{n}.{mbs}x{seq}", part="C", group="tp-dtensor", program=program,
                                 family="tp", model=model, stacks=[f"{program}-dtp"], gpus=n, mbs=mbs, seq=seq,
                                 gbs=mbs, tp=n, precision=precision, est_s=6.0))
    return pts


def _part_d():
    """Part C's two-GPU points again, predicted from the *-dtpf stacks (host timing on a fake 2-rank mesh), and
    measured again on the lease that predicts them (host speed differs between leases); new shapes beside them."""
    pts = []
    for program, model, precision, shapes in (
            ("gpt-ln", GPT, "bf16", ((8, 1024), (4, 1024), (16, 1024), (4, 2048), (2, 1024), (8, 2048))),
            ("hf-llama", LLAMA, "mixed", ((4, 2048), (2, 2048), (8, 1024), (2, 4096), (1, 2048), (4, 1024)))):
        for mbs, seq in shapes:
            pts.append(Point(f"{program}.tp-fake.n2.{mbs}x{seq}", part="D", group="tp-dtensor-fake", program=program,
                             family="tp", model=model, stacks=[f"{program}-dtpf"], gpus=2, mbs=mbs, seq=seq,
                             gbs=mbs, tp=2, precision=precision, est_s=6.0))
    return pts


def _part_e():
    """DTensor TP 4 from the *-dtpf4 stacks (host timing on a fake 4-rank mesh); programs alternate, so that both
    get points when the lease's budget runs short."""
    shapes = (("gpt-ln", 8, 1024), ("hf-llama", 4, 2048), ("gpt-ln", 4, 2048), ("hf-llama", 2, 2048),
              ("gpt-ln", 16, 1024), ("hf-llama", 8, 1024))
    return [Point(f"{prog}.tp-fake.n4.{mbs}x{seq}", part="E", group="tp-dtensor-fake4", program=prog, family="tp",
                  model=GPT if prog == "gpt-ln" else LLAMA, stacks=[f"{prog}-dtpf4"], gpus=4, mbs=mbs, seq=seq, gbs=mbs,
                  tp=4, precision="bf16" if prog == "gpt-ln" else "mixed", est_s=6.0) for prog, mbs, seq in shapes]


def _part_f():
    """ZeRO-2/3 from the *-fsdpf / *-fsdpf4 stacks (host timing on a fake 2- / 4-rank FSDP2 mesh) at the trace shape
    (measured by parts A and B of session 13: -24% to -41% for gpt-ln from the one-process timing) and at new
    shapes; DDP at the trace shape and new shapes; all with the lease's interference measured."""
    pts = []
    for program, model, precision, shapes in (("gpt-ln", GPT, "bf16", ((8, 1024), (4, 1024), (16, 1024), (4, 2048))),
                                              ("hf-llama", LLAMA, "mixed", ((4, 2048), (2, 2048), (8, 1024)))):
        for n in (2, 4):
            fsdp = f"{program}-fsdpf" + ("4" if n == 4 else "")
            common = dict(part="F", program=program, model=model, gpus=n, precision=precision, est_s=6.0)
            for i, (mbs, seq) in enumerate(shapes):
                pts.append(Point(f"{program}.zero3-fake.n{n}.{mbs}x{seq}", group="zero-fake", family="zero3",
                                 stacks=[fsdp], mbs=mbs, seq=seq, gbs=mbs * n, dp=n, zero=3, **common))
                if i < 2:
                    pts.append(Point(f"{program}.zero2-fake.n{n}.{mbs}x{seq}", group="zero-fake", family="zero2",
                                     stacks=[fsdp], mbs=mbs, seq=seq, gbs=mbs * n, dp=n, zero=2, **common))
                    pts.append(Point(f"{program}.ddp-interf.n{n}.{mbs}x{seq}", group="ddp-interf", family="ddp",
                                     stacks=[program], mbs=mbs, seq=seq, gbs=mbs * n, dp=n, **common))
    return pts


def _part_i(part="I"):
    """DDP (gpt-ln, hf-llama) and the data-parallel MoE at shapes no earlier part measured, predicted with the DDP
    gradient copies (the stacks as imported) and without them (imported with --ddp-bucket-view), both before any
    point runs; programs alternate so that each gets points if the lease's budget runs short. Part J: other shapes."""
    shapes = {"I": (("gpt-ln", GPT, "bf16", 2, 2048), ("hf-llama", LLAMA, "mixed", 8, 1024),
                    ("moe", MOE, "bf16", 2, 4096), ("gpt-ln", GPT, "bf16", 16, 512),
                    ("hf-llama", LLAMA, "mixed", 1, 4096), ("moe", MOE, "bf16", 8, 1024),
                    ("gpt-ln", GPT, "bf16", 6, 1024), ("hf-llama", LLAMA, "mixed", 3, 2048)),
              "J": (("gpt-ln", GPT, "bf16", 3, 2048), ("hf-llama", LLAMA, "mixed", 6, 1024),
                    ("moe", MOE, "bf16", 4, 1024), ("gpt-ln", GPT, "bf16", 12, 512),
                    ("hf-llama", LLAMA, "mixed", 2, 3072), ("moe", MOE, "bf16", 1, 4096),
                    ("gpt-ln", GPT, "bf16", 10, 1024), ("hf-llama", LLAMA, "mixed", 5, 1024))}[part]
    pts = []
    for n in (2, 4):
        for program, model, precision, mbs, seq in shapes:
            moe = program == "moe"
            pts.append(Point(f"{program}.{'dp' if moe else 'ddp'}-copies.n{n}.{mbs}x{seq}", part=part, group="ddp-copies",
                             program=program, family="dp" if moe else "ddp", model=model, stacks=[program], gpus=n,
                             mbs=mbs, seq=seq, gbs=mbs * n, dp=n, precision=precision, est_s=7.0,
                             **({"ep": 1, "routing": "balanced"} if moe else {})))
    return pts


POINTS = _part_a() + _part_b() + _part_c() + _part_d() + _part_e() + _part_f() + _part_i("I") + _part_i("J")


# Order within a launch (what is measured first, in case the time runs short): the main family of each kind
# first, so that every group of the issue gets points, then the rest.
PRIORITY = {"ddp": 0, "zero3": 1, "tp": 2, "pp-1f1b": 3, "ep": 4, "cp": 5, "dp": 6, "tp-dp": 7, "zero2": 8,
            "pp-gpipe": 9, "single": 0}


def priority(p):
    return (PRIORITY[p.family] + (4 if p.group == "fp8" and p.gpus > 1 else 0)
            + (1 if p.cp_rotate == "allgather" else 0) + (10 if p.routing == "learned" else 0))


def points(part=None, gpus=None, ids=None):
    """The points, in measurement order within each world size (stable by priority)."""
    sel = [p for p in POINTS if (part is None or p.part == part) and (gpus is None or p.gpus == gpus)
           and (ids is None or p.id in ids)]
    return sorted(sel, key=priority)


def traces(part=None):
    return [t for t in TRACES if part is None or t.part == part]


def by_id(pid):
    for p in POINTS:
        if p.id == pid:
            return p
    raise KeyError(pid)


# Seconds to start a launch (Python, torch, CUDA, NCCL) by world size, and the fixed stages, for the estimates.
LAUNCH_S = {1: 15.0, 2: 25.0, 4: 30.0}
FIXED_S = {"environment": 5.0, "calibrate": 25.0, "predict": 15.0, "nccl": 55.0, "report": 3.0}


def stage_estimates(part):
    """[(stage, seconds)] of a part in the order the session runs them."""
    interf = 60.0 if part in ("F", "J") else 0.0  # the interf section (h200x2: 58 s)
    out = [("environment", FIXED_S["environment"]), ("calibrate", FIXED_S["calibrate"] + interf)]
    out += [(f"trace-{t.key}", t.est_s) for t in traces(part)]
    out.append(("predict", FIXED_S["predict"]))
    import os
    max_gpus = int(os.environ.get("BLIND24_MAX_GPUS", "4"))  # the lease's GPUs (the session script exports it)
    for n in (1, 2, 4):
        ps = points(part, gpus=n)
        if ps and n <= max_gpus:
            out.append((f"measure-n{n}", LAUNCH_S[n] + sum(p.est_s for p in ps)))
    if part == "A":
        out.append(("nccl", FIXED_S["nccl"]))
    out.append(("report", FIXED_S["report"]))
    return out


def after(part, stage):
    """Estimated seconds of the stages after `stage` (what a stage leaves time for)."""
    names = [n for n, _ in stage_estimates(part)]
    return sum(s for n, s in stage_estimates(part)[names.index(stage) + 1:])


def main(argv):
    if len(argv) >= 2 and argv[0] == "--estimate":
        total = 0.0
        print(f"# part {argv[1]}: stage estimates (s)")
        for name, sec in stage_estimates(argv[1]):
            total += sec
            print(f"#   {name:22s} {sec:6.0f}   cumulative {total:6.0f}")
        print(f"# part {argv[1]}: {len(points(argv[1]))} points, {len(traces(argv[1]))} traces, estimated {total:.0f} s")
        return 0
    if len(argv) >= 2 and argv[0] == "--traces":  # for the session script: key program model mbs seq env
        import os
        ts = traces(argv[1])
        if os.environ.get("BLIND24_CPU_TEST"):  # the session script's dry run on a CPU: tiny models
            import tiny
            ts = [tiny.trace(t, os.environ["BLIND24_CPU_TEST"]) for t in ts]
        for t in ts:
            print("\t".join([t.key, t.program, t.model, str(t.mbs), str(t.seq), t.host_program or t.program,
                             " ".join(f"{k}={v}" for k, v in t.env.items())]))
        return 0
    if len(argv) >= 3 and argv[0] == "--after":
        print(int(after(argv[1], argv[2])))
        return 0
    part = argv[0] if argv else None
    for t in traces(part):
        print(f"trace {t.part} {t.key:14s} {t.program:14s} {t.mbs}x{t.seq:<6d} {t.model}")
    for p in points(part):
        print(f"{p.part} {p.gpus} {p.group:11s} {p.id:34s} {p.plan()}")
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
