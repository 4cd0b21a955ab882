// Host (CPU) dispatch of an eager framework: one host thread per rank issues that rank's kernels in
// order, and a kernel cannot start on the GPU before it has been issued. The host never waits for
// the GPU (asynchronous launch), so a rank is host-bound exactly when issuing takes longer than
// executing, as with PyTorch eager + DTensor on small layers.
//
// Model: for every present rank, a host stream of delay tasks (category host), one per compute
// task that carries a layer and micro-batch label, in the compute tasks' insertion order. The host
// task of compute task i lasts h_i and precedes task i. The host time of one layer for one
// micro-batch, H (forward + backward + recompute together), is spread over that (rank,
// micro-batch, layer) group's compute tasks in proportion to their GPU durations d_i:
//     h_i = H * d_i / sum_{j in group} d_j      (a group of zero-duration tasks shares H equally)
// so the host issues each layer in total time H and, when H exceeds the layer's GPU time, the GPU
// waits (breakdown part host_wait). Outside the layers (HostCosts): the compute tasks of a micro-batch without
// a layer label (embedding, LM head and loss) share the host time E of that micro-batch the same way, and the
// optimizer tasks (category optimizer) share the per-step host time O (zero_grad and the optimizer's own
// launches); each is 0 unless measured (imported stack profiles measure them).
//
// Host synchronisation (TaskGraph::mark_host_sync): after issuing a marked task m the host waits until m has
// finished on the GPU, then for `sync_latency` (the read-back: a device-to-host copy and the wake-up, the
// calibration profile's launch_sync_us), before it issues anything else: a host task "host sync" after m's host
// task on the host stream, preceded by m. The host's lead over the GPU is gone there, so the next compute task n
// (the first one issued after the sync) runs while the host issues it instead of after: n may start when the
// sync ends, and the task after n on n's stream waits for n's host task, so that n's stream moves on at
//     max(end of n, end of n's host task)
// (n's own kernels cannot all have run before the last of them was issued). A segment between two syncs thus
// takes max(host time, GPU time) plus the latency, as Megatron-Core's MoE layers do between the dispatcher's
// reads of the split sizes. Every task the rank issues after its first sync is run that way (the host has no
// lead left to hide its issue); without marks nothing changes: every compute task waits for its whole host task.
//
// Host shares (HostCosts::forward_fraction, after_sync_fraction): where the layer's host time is known by part,
// as a trace measures it, H is split into the forward before (and at) the sync, the forward after it, and the
// rest, each part spread over its tasks by GPU time; the order of host work then shows, e.g. a dispatch that
// takes the host longer than the GPU right after the sync.
#pragma once

#include <cstddef>

#include "scalescope/sim/task_graph.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

struct HostCosts {
  Seconds per_layer_microbatch;  ///< H
  Seconds per_edge_microbatch;   ///< E: embedding, head and loss of one micro-batch (forward + backward)
  Seconds per_step;              ///< O: the optimizer step
  Seconds sync_latency{0.0};     ///< the host's wait after a marked task has finished (see above)
  /// Optional (< 0: not given): the share of H spent issuing the layer's forward (the rest goes to its backward
  /// and recompute), and of that the share issued after the forward's synchronisation point. Measured by a trace
  /// import; without them H is spread over all of the group's tasks by GPU time as above.
  double forward_fraction = -1.0;
  double after_sync_fraction = -1.0;
};

/// Appends the host streams (stream index `host_stream`, which must be unused) for every rank with
/// labelled compute tasks. Returns the number of host tasks added (0 when every cost is zero).
std::size_t add_host_dispatch(TaskGraph& graph, const HostCosts& costs, int host_stream);
/// Layers only (E = O = 0).
std::size_t add_host_dispatch(TaskGraph& graph, Seconds per_layer_microbatch, int host_stream);

}  // namespace scalescope
