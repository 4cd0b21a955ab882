// Per-rank memory model: model states with ZeRO, Korthikanti activations, schedule in-flight
// counts.
#include "scalescope/models/memory.hpp"

#include <algorithm>
#include <cassert>

#include "scalescope/models/cp_costs.hpp"
#include "scalescope/models/fp8_costs.hpp"
#include "scalescope/models/pipeline_layout.hpp"

namespace scalescope::models {

std::string_view to_string(Framework f) {
  switch (f) {
    case Framework::megatron:
      return "megatron";
    case Framework::deepspeed:
      return "deepspeed";
    case Framework::torch_amp:
      return "torch_amp";
  }
  return "?";
}

StateBytesPerParam state_bytes_per_param(Precision precision, Framework framework) {
  if (precision == Precision::bf16) return {2, 2, 4};
  if (precision == Precision::fp16) return {2, 2, 12};  // fp16 weights and gradients; fp32 master + Adam
  switch (framework) {
    case Framework::megatron:
      return {2, 4, 12};
    case Framework::deepspeed:
      return {2, 2, 12};
    case Framework::torch_amp:
      return {4, 4, 8};
  }
  return {};
}

ModelStateBytes model_state_bytes(double params, int zero, int dp, StateBytesPerParam b) {
  assert(zero >= 0 && zero <= 3 && dp > 0 && "model_state_bytes: zero in 0..3 and dp > 0");
  const double d = dp;
  ModelStateBytes m;
  m.weights = Bytes(params * b.weights / (zero >= 3 ? d : 1.0));
  m.grads = Bytes(params * b.grads / (zero >= 2 ? d : 1.0));
  m.optimizer = Bytes(params * b.optimizer / (zero >= 1 ? d : 1.0));
  return m;
}

namespace {

/// Bytes of the attention-score tensors of one layer and micro-batch (before dividing by tp).
double score_bytes(const ModelSpec& m, double sb, const MemoryOptions& o) {
  const double as = static_cast<double>(m.heads) * m.seq_len;
  if (o.flash_attention) return 4.0 * m.heads * sb;      // fp32 log-sum-exp per row
  return as * sb * (o.dropout ? 2.0 + 1.0 + 2.0 : 2.0);  // softmax out [+ mask + dropout out]
}

/// Eager PyTorch, one layer and micro-batch (memory.hpp, torch_amp): autocast keeps the fp32 residual stream's
/// norm inputs and a bf16 copy of each norm output per linear (18Th replicated); FSDP2 runs in bf16 without
/// autocast (8Th). The tensor-parallel terms are the same.
Bytes eager_layer_bytes(const ModelSpec& m, int mbs, int tp, bool fsdp2) {
  const double sb = static_cast<double>(m.seq_len) * mbs;
  const double h = m.hidden, q = static_cast<double>(m.q_dim()), k = static_cast<double>(m.kv_dim());
  const double replicated = fsdp2 ? 8.0 : 18.0;
  return Bytes(replicated * sb * h + (6.0 * sb * q + 4.0 * sb * k + 8.0 * sb * m.ffn_hidden + 4.0 * sb * m.heads) / tp);
}

}  // namespace

Bytes activation_bytes_per_layer(const ModelSpec& m, int mbs, int tp, bool sp, Recompute r,
                                 const MemoryOptions& o) {
  assert(mbs > 0 && tp > 0 && "activation_bytes_per_layer: mbs and tp must be positive");
  const double sb = static_cast<double>(m.seq_len) * mbs;
  const double h = m.hidden, q = static_cast<double>(m.q_dim()),
               k = static_cast<double>(m.kv_dim());
  const double f = m.ffn_hidden, t = tp, outer_div = sp ? t : 1.0;
  if (r == Recompute::full) return Bytes(2.0 * sb * h / outer_div);
  if (o.framework == Framework::torch_amp && r == Recompute::none) return eager_layer_bytes(m, mbs, tp, false);
  const double outer = sb * h * (8.0 + (o.dropout ? 2.0 : 0.0));
  const double mlp = m.ffn == FfnKind::gelu ? 4.0 * sb * f : 6.0 * sb * f;
  double inner = 2.0 * sb * (q + 2.0 * k) + 2.0 * sb * q + mlp;
  // Selective recompute drops the s x s tensors; flash attention never stores them (its row
  // statistics stay, they are what the backward kernel reads).
  if (r == Recompute::none || o.flash_attention) inner += score_bytes(m, sb, o);
  return Bytes(outer / outer_div + inner / t);
}

double inflight_activation_sets(Schedule schedule, int pp, int vpp, int stage, int microbatches) {
  assert(pp > 0 && vpp > 0 && stage >= 0 && stage < pp && microbatches > 0 &&
         "inflight_activation_sets: bad args");
  switch (schedule) {
    case Schedule::gpipe:
      return microbatches;
    case Schedule::one_f_one_b:
      return std::min(microbatches, pp - stage);
    case Schedule::interleaved: {
      const int warmup = 2 * (pp - stage - 1) + (vpp - 1) * pp;
      return static_cast<double>(std::min(microbatches * vpp, warmup + 1)) / vpp;
    }
  }
  return 0;
}

MemoryBreakdown memory_per_rank(const ModelSpec& spec, const Plan& p, int stage,
                                const MemoryOptions& o) {
  assert(stage >= 0 && stage < p.pp && "memory_per_rank: stage out of range");
  const PipelineLayout even = o.layout ? PipelineLayout{} : layout_of(spec, p);
  const PipelineLayout& layout = o.layout ? *o.layout : even;
  assert(layout.pp == p.pp && "memory_per_rank: layout.pp differs from plan.pp");
  const StageParams held = params_per_tp_rank(spec, layout, stage, p.tp, o.vocab_multiple);
  const ModelSpec m = cp_rank_spec(spec, p);  // activations: the rank's seq_len / cp tokens
  StateBytesPerParam per_param = state_bytes_per_param(p.precision, o.framework);
  if (!p.grad_reduce_in_fp32) per_param.grads = std::min(per_param.grads, 2.0);  // 16-bit main grads

  MemoryBreakdown b;
  b.stage = stage;
  b.params = held.total();
  const ModelStateBytes states =
      model_state_bytes(static_cast<double>(b.params), p.zero, p.dp * p.cp, per_param);
  b.weights = states.weights;
  b.grads = states.grads;
  b.optimizer = states.optimizer;

  b.inflight = inflight_activation_sets(p.schedule, p.pp, p.vpp, stage, p.num_microbatches());
  const bool eager = o.framework == Framework::torch_amp && p.recompute == Recompute::none;
  const Bytes per_layer = eager ? eager_layer_bytes(m, p.mbs, p.tp, p.zero >= 2)
                                : activation_bytes_per_layer(m, p.mbs, p.tp, p.sp, p.recompute, o);
  b.activations = per_layer * (layout.layers_on_stage(stage) * b.inflight);

  const double sb = static_cast<double>(m.seq_len) * p.mbs;
  const double outer_div = p.sp ? p.tp : 1.0;
  if (eager) {  // eager PyTorch (header comment)
    const double params = static_cast<double>(b.params);
    if (p.zero >= 2) {  // FSDP2: bf16 compute parameters gathered from fp32 shards
      // fp32 shards under both stages (FSDP2 shards parameters whatever reshard_after_forward says).
      b.weights = Bytes(4.0 * params / p.dp + (p.zero == 2 ? 2.0 * params : 0.0));
      b.zero3_gather = p.zero == 3 ? Bytes(2.0 * 2.0 * static_cast<double>(held.largest_layer)) : Bytes(0);
    } else {
      const bool one_microbatch = p.num_microbatches() == 1;
      if (one_microbatch) b.grads = Bytes(0);  // made during backward, as activations go
      // DDP: its buckets (4 B/param), plus one more gradient-sized fp32 buffer at the peak: with one micro-batch
      // the second bucket set it allocates when it rebuilds them at the second iteration, with accumulation the
      // extra buffer measured from the second step on (validation/memory/README.md).
      const double ddp = p.dp > 1 ? 8.0 : 0.0;
      b.framework_copies = Bytes(params * (2.0 + ddp));
    }
    if (stage == p.pp - 1) {  // final-norm input (+ its autocast bf16 copy), log-softmax output, one transient
      const double v = static_cast<double>(m.vocab) / p.tp, norm = p.zero >= 2 ? 4.0 : 6.0;
      b.embedding_logits = Bytes((norm * sb * m.hidden + 4.0 * sb * v) * b.inflight + 4.0 * sb * v);
      // torch.distributed.pipelining keeps the last stage's output of every micro-batch until the step ends
      // (PipelineStage.output_chunks): the bf16 logits, m of them at the last backward. step() then merges
      // them into one more tensor of the same size (torch.cat), after the activations are gone: the peak
      // is the larger of the two moments (validation/h200-session8: qwen2-1.5b, vocabulary 151,936, GPipe
      // on 4 GPUs ran out of memory asking for the 18.55 GiB of the merged logits).
      if (p.pp > 1) {
        const double outputs = 2.0 * sb * v * p.num_microbatches();
        const double during = b.embedding_logits.value + outputs, at_merge = 2.0 * outputs - b.activations.value;
        b.embedding_logits = Bytes(std::max(during, at_merge));
      }
    }
    b.overhead = o.framework_overhead;
    return b;
  }
  if (stage == 0 && o.dropout) b.embedding_logits += Bytes(sb * m.hidden / outer_div * b.inflight);
  if (stage == p.pp - 1) {
    const double v = static_cast<double>(padded_vocab(m.vocab, p.tp, o.vocab_multiple));
    b.embedding_logits +=
        Bytes((4.0 * sb * m.hidden / outer_div + 4.0 * sb * v / p.tp) * b.inflight);
  }
  if (p.recompute != Recompute::none) {
    const Bytes full = activation_bytes_per_layer(m, p.mbs, p.tp, p.sp, Recompute::none, o);
    const Bytes kept = activation_bytes_per_layer(m, p.mbs, p.tp, p.sp, Recompute::selective, o);
    b.recompute_workspace = p.recompute == Recompute::full ? full : full - kept;
  }
  b.recompute_workspace += cp_buffer_bytes(spec, p);
  // FP8 (fp8_costs.hpp): the FP8 copies and transposes of the stage's linear weights; FP8 linear inputs.
  const double layers = layout.layers_on_stage(stage);
  b.weights += fp8_weight_copy_bytes(layers * static_cast<double>(count_params(spec).layer.matmul_weights()) / p.tp, p);
  b.activations -= fp8_activation_saving(m, p) * (layers * b.inflight);
  if (p.zero == 3)
    b.zero3_gather = Bytes(2.0 * static_cast<double>(held.largest_layer) * per_param.weights);
  b.overhead = o.framework_overhead;
  return b;
}

MemoryBreakdown peak_memory(const ModelSpec& m, const Plan& p, const MemoryOptions& options) {
  MemoryOptions o = options;  // build the layout once, not once per stage
  if (!o.layout) o.layout = layout_of(m, p);
  MemoryBreakdown best = memory_per_rank(m, p, 0, o);
  for (int s = 1; s < p.pp; ++s) {
    MemoryBreakdown b = memory_per_rank(m, p, s, o);
    if (b.total() > best.total()) best = b;
  }
  return best;
}

}  // namespace scalescope::models
