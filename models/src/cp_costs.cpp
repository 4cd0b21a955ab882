// Context-parallel attention blocks and exchanges of one layer (formulas in cp_costs.hpp).
#include "scalescope/models/cp_costs.hpp"

#include <algorithm>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {

ModelSpec cp_rank_spec(const ModelSpec& spec, const Plan& plan) {
  ModelSpec s = spec;
  s.seq_len = spec.seq_len / std::max(1, plan.cp);
  return s;
}

namespace {

void memory_kernel(PhaseCost& c, const ComputeModel& m, Bytes b) {
  if (b.value > 0.0) c.add_kernel(m, m.memory_bound(b), 0.0, b);
}

}  // namespace

CpLayerCost cp_layer_cost(const ModelSpec& s, const Plan& p, const ComputeModel& m, const CostOptions& o) {
  CpLayerCost c;
  if (p.cp <= 1) return c;
  const std::string& dt = o.attention_type();
  const double cp = p.cp, b = p.mbs, seq = s.seq_len, e = 2.0;
  const double t = b * seq / cp;  // tokens of the rank
  const double q = static_cast<double>(s.q_dim()) / p.tp, k = static_cast<double>(s.kv_dim()) / p.tp;
  const ModelSpec local = cp_rank_spec(s, p);
  const LayerIoBytes io = layer_io_bytes(local, static_cast<std::int64_t>(t), p.tp, p.sp);
  AttentionShape shape;
  shape.batch = p.mbs;
  shape.heads = s.heads / p.tp;
  shape.kv_heads = std::max(1, s.kv_heads / p.tp);
  shape.head_dim = s.head_size();
  shape.seq = local.seq_len;
  shape.causal = true;
  const double step0 = shape.forward_flops();  // causal attention of the rank's own s/cp tokens
  if (p.cp_comm == CpComm::a2a) {
    AttentionShape full = shape;  // the whole sequence, heads / cp of the rank's heads
    full.heads = std::max<std::int64_t>(1, shape.heads / p.cp);
    full.kv_heads = std::max<std::int64_t>(1, shape.kv_heads / p.cp);
    full.seq = s.seq_len;
    const double extra = (cp - 1.0) * step0;
    c.blocks.forward.add_kernel(m, m.attention(full, false, Flops(extra), io.forward.attention, dt), extra,
                                io.forward.attention);
    c.blocks.backward.add_kernel(m, m.attention(full, true, Flops(2.5 * extra), io.backward.attention, dt), 2.5 * extra,
                                 io.backward.attention);
    c.exchange.forward_op = c.exchange.backward_op = CollOp::alltoall;
    c.exchange.forward_bytes = c.exchange.backward_bytes = Bytes(t * (2.0 * q + 2.0 * k) * e);
  } else {
    // Steps 1..cp-1: (s/cp) x (s/2cp) unmasked pairs each, priced at the rate of the rank's own shape.
    const double block = 4.0 * b * static_cast<double>(shape.heads) * static_cast<double>(shape.head_dim) * seq * seq /
                         (2.0 * cp * cp);
    for (int i = 1; i < p.cp; ++i) {
      c.blocks.forward.add_kernel(m, m.attention(shape, false, Flops(block), io.forward.attention, dt), block,
                                  io.forward.attention);
      memory_kernel(c.blocks.forward, m, Bytes(3.0 * t * q * e));  // output correction
      c.blocks.backward.add_kernel(m, m.attention(shape, true, Flops(2.5 * block), io.backward.attention, dt),
                                   2.5 * block, io.backward.attention);
      memory_kernel(c.blocks.backward, m, Bytes(2.0 * (t * q + t * k) * e));  // dQ, dK/dV accumulation
    }
    const double kv_block = 2.0 * t * k * e;
    c.exchange.forward_op = CollOp::all_gather;
    c.exchange.forward_bytes = Bytes(cp * kv_block);
    if (p.cp_comm == CpComm::p2p) {
      c.exchange.backward_op = CollOp::all_gather;
      c.exchange.backward_bytes = Bytes(2.0 * cp * kv_block);
      c.exchange.overlapped = true;
    } else {
      c.exchange.backward_op = CollOp::reduce_scatter;
      c.exchange.backward_bytes = Bytes(cp * kv_block);
    }
  }
  if (p.recompute == Recompute::full) c.blocks.recompute = c.blocks.forward;
  return c;
}

Bytes cp_buffer_bytes(const ModelSpec& s, const Plan& p) {
  if (p.cp <= 1 || p.cp_comm != CpComm::p2p) return Bytes(0);
  const double t = static_cast<double>(p.mbs) * s.seq_len / p.cp, k = static_cast<double>(s.kv_dim()) / p.tp;
  return Bytes(2.0 * 2.0 * t * k * 2.0);
}

}  // namespace scalescope::models
