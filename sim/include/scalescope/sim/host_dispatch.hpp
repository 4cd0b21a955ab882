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
#pragma once

#include <cstddef>

#include "scalescope/sim/task_graph.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

struct HostCosts {
  Seconds per_layer_microbatch;  ///< H
  Seconds per_edge_microbatch;   ///< E: embedding, head and loss of one micro-batch (forward + backward)
  Seconds per_step;              ///< O: the optimizer step
};

/// Appends the host streams (stream index `host_stream`, which must be unused) for every rank with
/// labelled compute tasks. Returns the number of host tasks added (0 when every cost is zero).
std::size_t add_host_dispatch(TaskGraph& graph, const HostCosts& costs, int host_stream);
/// Layers only (E = O = 0).
std::size_t add_host_dispatch(TaskGraph& graph, Seconds per_layer_microbatch, int host_stream);

}  // namespace scalescope
