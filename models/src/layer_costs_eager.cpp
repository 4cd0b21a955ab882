// Byte table of the memory-bound kernels of plain PyTorch eager training (validation/harness),
// counted by hand from validation/harness/model.py and parallel.py (table in layer_costs.hpp). Their
// kernels are priced by ComputeModel::eager_memory_bound (elementwise bandwidth x eager bandwidth factor,
// 1 unless fitted; validation/make_report.py fits it on single-GPU H200 runs only).
#include <algorithm>
#include <cassert>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/layer_costs.hpp"

namespace scalescope::models {

namespace {

/// Element sizes of the two eager modes: a = residual stream / norm dtype, w = weight-cast traffic.
struct EagerMode {
  double a = 4.0;        ///< residual stream bytes per element (autocast: fp32; FSDP2 bf16: 2)
  bool autocast = true;  ///< fp32 inputs cast to bf16 before each linear, fp32 weights cast per forward
  int gathers = 0;       ///< FSDP2 all-gathers per micro-batch: 1 (zero=2), 2 (zero=3: again for the backward)
  double shards = 1.0;   ///< FSDP2 shard count (dp)
};

// The harness runs zero=2 and zero=3 both as FSDP2 fully_shard with MixedPrecisionPolicy(param bf16,
// reduce fp32) and no autocast (validation/harness/parallel.py); reshard_after_forward only for zero=3.
EagerMode mode_of(const Plan& p) {
  if (p.zero >= 2) return {2.0, false, p.zero == 3 ? 2 : 1, static_cast<double>(std::max(1, p.dp))};
  return {4.0, true, 0, 1.0};
}

/// FSDP2 traffic per parameter of a fully_shard unit and per micro-batch (torch 2.11
/// _fsdp_collectives.py), n shards:
///   each all-gather: copy-in, the fp32 shard cast to bf16 into the gather buffer (read 4/n, write 2/n),
///     and copy-out, split_with_sizes_copy into the unsharded bf16 parameters (read 2, write 2);
///   reduce-scatter copy-in: chunk_cat of the bf16 gradient into the fp32 reduce buffer (read 2, write 4);
///   accumulation of the reduced fp32 shard into the sharded .grad (read 4/n + 4/n, write 4/n; the first
///     micro-batch assigns instead, counted anyway as the autocast grad accumulation is).
/// The forward gathers once; the backward gathers again under zero=3 (reshard_after_forward), except
/// for the root unit (embedding, final norm, head), which FSDP2 never reshards after forward.
struct Fsdp2Bytes {
  double fwd = 0.0, bwd = 0.0;
  int fwd_kernels = 0, bwd_kernels = 0;
};
Fsdp2Bytes fsdp2_bytes(const EagerMode& md, bool root) {
  const double gather = 6.0 / md.shards + 4.0;
  const double reduce = 6.0 + 12.0 / md.shards;
  const bool regather = md.gathers >= 2 && !root;
  return {gather, (regather ? gather : 0.0) + reduce, 2, regather ? 4 : 2};
}

/// Adds a row of `per_token` bytes x t tokens plus `fixed` bytes per micro-batch.
void row(std::vector<EagerRow>& rows, const char* name, double t, double fwd_per_token, int fwd_kernels,
         double bwd_per_token, int bwd_kernels, double fwd_fixed = 0.0, double bwd_fixed = 0.0) {
  if (fwd_per_token == 0.0 && bwd_per_token == 0.0 && fwd_fixed == 0.0 && bwd_fixed == 0.0) return;
  rows.push_back({name, Bytes(fwd_per_token * t + fwd_fixed), Bytes(bwd_per_token * t + bwd_fixed),
                  fwd_per_token + fwd_fixed > 0.0 ? fwd_kernels : 0, bwd_per_token + bwd_fixed > 0.0 ? bwd_kernels : 0});
}

}  // namespace

double eager_residual_bytes(const Plan& plan) { return mode_of(plan).a; }

std::vector<EagerRow> eager_layer_rows(const ModelSpec& s, const Plan& p) {
  assert(p.tp > 0 && p.mbs > 0 && "eager_layer_rows: tp and mbs must be positive");
  const EagerMode md = mode_of(p);
  const double a = md.a, b = 2.0, c = md.autocast ? a + b : 0.0;  // c: one fp32 -> bf16 cast (or its backward)
  const double t = static_cast<double>(p.mbs) * static_cast<double>(s.seq_len);
  const double H = static_cast<double>(s.hidden);  // norms, residual and linear inputs are replicated over tp
  const double Q = static_cast<double>(s.q_dim()) / p.tp, K = static_cast<double>(s.kv_dim()) / p.tp;
  const double F = static_cast<double>(s.ffn_hidden) / p.tp;
  const double d = static_cast<double>(s.head_size());
  const bool swiglu = s.ffn == FfnKind::swiglu, rope = s.positional == Positional::rope;
  const int fc1_inputs = swiglu ? 2 : 1;
  std::vector<EagerRow> rows;
  // 2 RMSNorms in fp32 (a): fwd read x, write y; bwd: input grad (read dy, x; write dx) + weight grad (read dy, x).
  row(rows, "norms", t, 2 * 2 * a * H, 2, 2 * 5 * a * H, 4);
  // Residual adds x + branch (a + b -> a); bwd: branch grad cast a -> b (autocast), and dx of the
  // residual stream = dy + norm-path grad (read 2a, write a) at each of the 2 forks.
  row(rows, "residual", t, 2 * (2 * a + b) * H, 2, 2 * ((md.autocast ? a + b : 0.0) + 3 * a) * H, md.autocast ? 4 : 2);
  // Autocast input casts: q, k, v and gate, up (or fc1) each cast the fp32 norm output (read a, write b);
  // bwd: each dgrad is cast back (read b, write a) and the 3 (2) grads are summed (read 2a, write a each add).
  const int casts = 3 + fc1_inputs;
  const double sums = md.autocast ? (2 + (fc1_inputs - 1)) : 0.0;  // adds of the cast-backward grads
  const double sums_bf16 = md.autocast ? 0.0 : (2 + (fc1_inputs - 1));
  row(rows, "linear input casts", t, casts * c * H, md.autocast ? casts : 0,
      casts * c * H + sums * 3 * a * H + sums_bf16 * 3 * b * H, md.autocast ? casts + 3 : 3);
  // RoPE as in apply_rope on q and k (bf16): neg (read, write half: b), cat (2b), x*cos (2b), cat*sin
  // (2b), add (3b) = 10b per element; bwd the same ops' grads: mul, mul, neg, cat of the chunk grads, add
  // = 10b; plus cos and sin cast to bf16 per call (s x d x (4 + 2) each, 2 calls per tensor).
  if (rope) {
    const double cs = 2.0 * 2.0 * static_cast<double>(s.seq_len) * d * (4.0 + b);
    row(rows, "rope", t, 10 * b * (Q + K), 10, 10 * b * (Q + K), 10, cs, 0.0);
    // q and k grads leave RoPE in (b, heads, s, d) layout; view(b, s, -1) for the dgrad GEMMs copies them.
    row(rows, "layout copies", t, 0.0, 0, 2 * b * (Q + K), 2);
  }
  // Activation: swiglu silu(gate) (2b) * up (3b); bwd mul (2 x 3b) + silu backward (3b). gelu fwd 2b, bwd 3b.
  if (swiglu) row(rows, "activation", t, 5 * b * F, 2, 9 * b * F, 3);
  else row(rows, "activation", t, 2 * b * F, 1, 3 * b * F, 1);
  // Weights (per micro-batch, per parameter of this rank's linears):
  //   autocast: fwd cast fp32 -> bf16 (6); bwd cast of the bf16 wgrad to fp32 (6) + accumulation into
  //   .grad (read 4 + 4, write 4 = 12; the first micro-batch steals the tensor, counted anyway).
  //   FSDP2 (zero=2/3, bf16 params): fsdp2_bytes() above.
  const double wparams = (static_cast<double>(s.hidden) * (Q + 2 * K) + Q * static_cast<double>(s.hidden) +
                          (fc1_inputs + 1) * F * static_cast<double>(s.hidden));
  if (md.autocast) row(rows, "weight casts and grad accumulation", 1.0, 6 * wparams, 4 + fc1_inputs, 18 * wparams,
                       2 * (4 + fc1_inputs));
  else {
    const Fsdp2Bytes w = fsdp2_bytes(md, false);
    row(rows, "FSDP2 gather copies and reduce copy-in", 1.0, w.fwd * wparams, w.fwd_kernels, w.bwd * wparams,
        w.bwd_kernels);
  }
  return rows;
}

std::vector<EagerRow> eager_edge_rows(const ModelSpec& s, const Plan& p, bool head, int vocab_multiple) {
  const EagerMode md = mode_of(p);
  const double a = md.a, b = 2.0, c = md.autocast ? a + b : 0.0;
  const double t = static_cast<double>(p.mbs) * static_cast<double>(s.seq_len);
  const double H = static_cast<double>(s.hidden);
  const double V = static_cast<double>(padded_vocab(s.vocab, p.tp, vocab_multiple) / p.tp);
  std::vector<EagerRow> rows;
  if (head) {
    row(rows, "final norm", t, 2 * a * H, 1, 5 * a * H, 2);
    row(rows, "head input cast", t, c * H, md.autocast ? 1 : 0, c * H, md.autocast ? 1 : 0);
    // cross_entropy(logits.float()): cast (b + 4), log_softmax (4 + 4); bwd: nll grad zero-fill (4) and
    // scatter, log_softmax backward (read 4 + 4, write 4), cast back to bf16 (4 + b).
    row(rows, "fp32 cross entropy", t, (b + 4) * V + 8 * V, 3, 4 * V + 12 * V + (4 + b) * V, 4);
    if (md.autocast) row(rows, "head weight cast and grad accumulation", 1.0, 6 * V * H, 1, 18 * V * H, 2);
    else {
      const Fsdp2Bytes w = fsdp2_bytes(md, true);
      row(rows, "head FSDP2 gather copies and reduce copy-in", 1.0, w.fwd * V * H, w.fwd_kernels, w.bwd * V * H,
          w.bwd_kernels);
    }
  } else {
    // nn.Embedding in the parameter dtype (fp32 under autocast): gather read + write a per element; bwd
    // embedding_dense_backward: zero-fill the V x H grad (a), index-add the t rows (read 2a, write a),
    // plus (autocast) accumulation into .grad (12 per parameter) or (FSDP2) the root unit's gather copies and
    // reduce copy-in (fsdp2_bytes).
    const Fsdp2Bytes w = md.autocast ? Fsdp2Bytes{0.0, 12.0, 0, 0} : fsdp2_bytes(md, true);
    row(rows, "embedding", t, 2 * a * H, 1, 3 * a * H, 3, w.fwd * V * H, a * V * H + w.bwd * V * H);
    if (s.positional == Positional::learned) row(rows, "learned positions", t, 3 * a * H, 1, 0.0, 0);
  }
  return rows;
}

}  // namespace scalescope::models
