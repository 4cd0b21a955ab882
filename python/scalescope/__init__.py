"""scalescope: predict how a training job scales on a multi-GPU cluster, from Python.

The functions call the same C++ library functions as the ``scalescope`` command and return its
``--format json`` documents as plain Python objects (dicts, lists, numbers), so a value printed here equals
the CLI's. Errors are exceptions (:class:`InputError` for bad input, with ``file``, ``path`` and ``message``;
:class:`SimulationError` otherwise). The GIL is released while a call runs; ``progress`` callbacks are called
as ``progress(done, total)`` and may raise to cancel.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _core
from ._errors import InputError, ScalescopeError, SimulationError

__all__ = ["simulate", "plan", "sweep", "collective", "capacity", "scaling", "model", "cluster", "sweep_columns",
           "to_pandas", "ScalescopeError", "InputError", "SimulationError"]

Progress = Optional[Callable[[int, int], Any]]


def simulate(model: str, cluster: str, plan: str, *, calibration: str = "", nodes: Optional[int] = None,
             gpus: Optional[int] = None, fidelity: str = "analytical", attention: str = "flash",
             intra_node: str = "analytical", all_ranks: bool = False, framework: str = "fused",
             host_cost: str = "", memory_bandwidth_factor: Optional[float] = None,
             memory_bandwidth_factor_source: str = "", no_interference: bool = False, strict: bool = False,
             trace: Optional[str] = None, power_cap: bool = True) -> dict:
    """One training iteration of ``model`` under ``plan`` on ``cluster`` (``scalescope simulate``).

    ``model``: a catalog name (``"llama3-8b"``), a model JSON or an HF ``config.json``; ``cluster``: a name from
    ``topologies/`` or a JSON file; ``plan``: ``"tp=2,pp=1,dp=4,mbs=1,gbs=32"`` or a plan JSON file. The other
    arguments are the CLI options of the same names (``framework`` is the software stack, passed to the CLI's
    loader). ``trace``: write a Perfetto trace there. ``power_cap=False`` is the CLI's ``--no-power-cap`` (a
    calibration with a ``power`` section otherwise slows the tensor-core kernels of ranks that reach the GPU's power
    cap, docs/power.md; the result then has ``power_cap``). Returns the ``--format json`` document:
    ``step_time_s``, ``tokens_per_s``, ``mfu``, ``memory_peak_GiB``, ``breakdown``, ``provenance``, ...
    """
    return _core.simulate(model, cluster, plan, calibration, nodes, gpus, fidelity, attention, intra_node, all_ranks,
                          framework, host_cost, memory_bandwidth_factor, memory_bandwidth_factor_source,
                          no_interference, strict, trace or "", power_cap)


def plan(model: str, cluster: str, gbs: int, *, gpus: Optional[int] = None, nodes: Optional[int] = None,
         seq: Optional[int] = None, calibration: str = "", fix: str = "", top: int = 10, flow_top: int = 3,
         max_mbs: int = 8, max_vpp: int = 8, allow_cross_node_tp: bool = False, exhaustive: bool = False,
         threads: int = 0, framework: str = "fused", progress: Progress = None) -> dict:
    """Search and rank the parallel plans of ``model`` on ``gpus`` GPUs of ``cluster`` (``scalescope plan``).

    Returns the ``--format json`` document: ``plans`` (best first, each with ``plan_text``, ``step_time_s``,
    ``flow_step_time_s``, ``tokens_per_s``, ``mfu``, ``memory_GiB``, ``limiter``, ``breakdown``), ``counts`` and,
    when no plan can run, ``explanations``. ``progress(done, total)`` is called as plans are simulated.
    """
    return _core.plan(model, cluster, gbs, gpus, nodes, seq, calibration, fix, top, flow_top, max_mbs, max_vpp,
                      allow_cross_node_tp, exhaustive, threads, framework, progress)


def sweep(spec: Union[str, os.PathLike, Mapping[str, Any]], output: Optional[Union[str, os.PathLike]] = None, *,
          threads: int = 0, restart: bool = False, progress: Progress = None) -> list:
    """Every point of a sweep spec (``scalescope sweep``; format in ``docs/sweep-format.md``) as result rows.

    ``spec``: a spec file or the spec as a dict. ``output``: also write ``.csv``, ``.json`` or ``.parquet``
    (journalled and resumable, the CLI's bytes; Parquet through the library's own writer, no pyarrow needed).
    Returns the rows (dicts with the keys of :func:`sweep_columns`) in point order.
    """
    if isinstance(spec, Mapping):
        text, source = json.dumps(spec), "<dict>"
    else:
        source = os.fspath(spec)
        try:
            with open(source, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{source}: cannot read the sweep spec ({e.strerror})", source, "",
                             f"cannot read the sweep spec ({e.strerror})") from None
    out = os.fspath(output) if output is not None else ""
    return _core.sweep(text, source, out, threads, restart, progress)


def collective(cluster: str, op: str, gpus: int, *, nodes: Optional[int] = None, sizes: str = "8:1G",
               step_factor: int = 2, calibration: str = "", fidelity: str = "analytical", algorithm: str = "",
               protocol: str = "") -> dict:
    """Predicted NCCL collective times over a range of sizes on the first ``gpus`` GPUs of ``cluster``
    (``scalescope collective``; nccl-tests semantics: size is the whole buffer for all_gather, reduce_scatter and
    alltoall).

    ``op``: all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv, ...; ``sizes``: ``"MIN:MAX"``
    or ``"SIZE"`` in bytes with K, M, G suffixes (powers of 2), multiplied by ``step_factor`` per row;
    ``calibration``: a collective-parameters JSON or a calibration profile (fitted on ``cluster``); ``fidelity``:
    ``"analytical"`` or ``"flow"``; ``algorithm`` / ``protocol`` force a choice. Returns the ``--format json``
    document: ``header`` (cluster, nodes, op, gpus, fidelity, parameters' provenance) and ``rows`` (``bytes``,
    ``count``, ``time_us``, ``algbw_GBps``, ``busbw_GBps``, ``algorithm``, ``protocol``, ``channels``,
    ``bottleneck``).
    """
    return _core.collective(cluster, op, gpus, nodes, sizes, step_factor, calibration, fidelity, algorithm, protocol)


def capacity(model: str, tokens: Union[str, int, float], days: float, *, fabric: str = "", node: str = "",
             price_gpu_hour: Optional[float] = None, max_nodes: int = 128, gbs: Optional[int] = None,
             batch_tokens: float = 4.0 * 1024 * 1024, seq: Optional[int] = None, calibration: str = "",
             fix: str = "", threads: int = 0, progress: Progress = None) -> dict:
    """The smallest node count whose best plan trains ``tokens`` in ``days``, its cost, and the predicted scaling
    curve over node counts (``scalescope capacity``).

    ``tokens``: ``"15T"``, ``"300B"``, ``2e12``; ``fabric``: a multi-node cluster from ``topologies/`` (e.g.
    ``"h100-rail-ndr"``) built at each node count; ``node``: checked to be the fabric's node, or alone the cluster
    used at each count. ``price_gpu_hour``: USD (default 2.50, an assumption); ``gbs``: global batch in sequences
    (default ``batch_tokens / seq``); ``fix``: plan fields kept fixed, as for :func:`plan`. Returns the
    ``--format json`` document: ``chosen_nodes`` (None when no count is enough), ``base_nodes``, ``amdahl``,
    ``gustafson``, ``price_assumed`` and ``curve`` (per node count: ``best`` plan, ``days``, ``cost_usd``,
    ``speedup``, ``efficiency``, or ``why_none``). ``progress(done, total)`` counts the node counts searched.
    """
    return _core.capacity(model, str(tokens), days, fabric, node, price_gpu_hour, max_nodes, gbs, batch_tokens, seq,
                          calibration, fix, threads, progress)


_log = logging.getLogger("scalescope")


def scaling(model: str = "", cluster: str = "", gpus: Sequence[int] = (), gbs: int = 0, *,
            measured: Optional[Union[str, os.PathLike]] = None, scaling: str = "strong", plan_family: str = "best",
            calibration: Optional[str] = None, framework: Optional[str] = None, host_cost: Optional[str] = None,
            memory_bandwidth_factor: Optional[float] = None, memory_bandwidth_factor_source: str = "",
            no_interference: bool = False, progress: Progress = None) -> dict:
    """Scaling curves (``scalescope scaling``): predicted curves of ``model`` on ``cluster`` over the GPU counts
    ``gpus`` (speedups relative to the first), or with ``measured`` (a measured-run file or folder, e.g.
    ``"validation/h200x4/measured"``) the measured curves with each point predicted.

    ``gbs``: global batch at the first count (``scaling="strong"``: fixed; ``"weak"``: scaled with the GPUs);
    ``plan_family``: ``"best"`` or fixed fields such as ``"tp=8,pp=1,zero=1,mbs=1"``. With ``measured``, the
    pricing options left as None come from the set's ``pricing.json``, as the CLI's options not given do.
    Returns the ``--format json`` document: ``curves``, each with ``scaling``, ``fit`` (amdahl or gustafson),
    ``measured_fit``, ``predicted_fit`` and ``points`` (``gpus``, ``plan``, ``measured_s``, ``predicted_s``,
    speedups, efficiencies, ``error``). The CLI's stderr notes go to the ``scalescope`` logger (``warning:`` ones
    at WARNING, the others at INFO). ``progress(done, total)`` counts the points predicted.
    """
    doc, notes = _core.scaling(os.fspath(measured) if measured is not None else "", model, cluster, list(gpus), gbs,
                               scaling, plan_family, calibration, framework, host_cost, memory_bandwidth_factor,
                               memory_bandwidth_factor_source, no_interference, progress)
    for note in notes:
        if note.startswith("warning: "):
            _log.warning("%s", note[len("warning: "):])
        else:
            _log.info("%s", note)
    return doc


def model(name_or_path: str) -> dict:
    """A model spec (catalog name, model JSON or HF ``config.json``) as its JSON keys."""
    return _core.model(name_or_path)


def cluster(name_or_path: str, *, gpus: Optional[int] = None, nodes: Optional[int] = None) -> dict:
    """A cluster (name from ``topologies/`` or a JSON file): name, nodes, GPUs per node, GPU model and memory."""
    return _core.cluster(name_or_path, gpus, nodes)


def sweep_columns() -> list:
    """The keys of a sweep row, in the CSV's column order."""
    return _core.sweep_columns()


def to_pandas(result: Union[dict, Sequence[Mapping[str, Any]]]):
    """A pandas DataFrame of a result, nested keys flattened as ``breakdown.bubble_s``: sweep rows (one row each),
    a :func:`plan` result (one row per ranked plan), a :func:`collective` result (one row per size), a
    :func:`capacity` result (one row per node count), a :func:`scaling` result (one row per point, with its curve's
    keys) or a :func:`simulate` result (one row). Needs pandas."""
    import pandas as pd

    if isinstance(result, Mapping) and "plans" in result:
        return pd.json_normalize(list(result["plans"]))
    if isinstance(result, Mapping) and "rows" in result and "header" in result:
        return pd.json_normalize(list(result["rows"]))
    if isinstance(result, Mapping) and "curves" in result:
        return pd.json_normalize([{**{k: v for k, v in c.items() if k != "points"}, **p}
                                  for c in result["curves"] for p in c["points"]])
    if isinstance(result, Mapping) and "curve" in result:
        return pd.json_normalize(list(result["curve"]))
    if isinstance(result, Mapping):
        return pd.json_normalize([dict(result)])
    rows = list(result)
    if rows and set(rows[0]) == set(sweep_columns()):
        return pd.DataFrame(rows, columns=sweep_columns())
    return pd.json_normalize(rows)
