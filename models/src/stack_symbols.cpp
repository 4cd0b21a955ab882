// The symbols stack-profile expressions read (docs/stack-profile.md) and their values for a model and plan.
#include <algorithm>
#include <cmath>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

namespace {

// Slot order of stack_base_symbols(); bind() fills them in this order.
enum Sym : int {
  kH, kL, kHeads, kKvHeads, kD, kQd, kKd, kFd, kVocab, kVp, kSwiglu, kRope, kLearnedPos, kAlibi, kBias, kLayernorm,
  kB, kS, kT, kTp, kSp, kDp, kPp, kVpp, kCp, kZero, kM, kMixed, kBf16, kFp16, kFp8, kRecomputeNone, kRecomputeFull,
  kRecomputeSelective, kFlash, kDropout,
  kHs, kQ, kK, kF, kV, kVu, kHeadsR, kKvR, kG, kPLayer, kPOpt,
  // MoE and MLA (appended: imported stacks name symbols, so the slots before stay where they were).
  kMoe, kMoeLayer, kE, kTopk, kFe, kFsh, kEp, kEtp, kEdp, kEr, kFer, kFshr, kTr, kTx, kTe, kImb, kRouterFp32,
  kDispatchAg, kMla, kQlr, kKvlr, kDn, kDr, kDv, kDAtt, kQkNorm,
  // Fine-tuning (appended likewise): LoRA rank and target modules, frozen base weights, attention span.
  kSLora, kSLoraQkv, kSLoraProj, kSLoraFc1, kSLoraFc2, kFrozen, kDoc,
  // Sliding windows (appended likewise): the layer's window and the sequence it slides over.
  kWin, kSeqDoc,
  // Training dropout probabilities (appended likewise): attention (inside the kernel) and hidden (residual branches).
  kAttnDropout, kHiddenDropout,
  // Hybrid models (appended likewise): the layer's blocks and the Mamba-2 mixer's widths on this TP rank.
  kHybrid, kAttnBlock, kMlpBlock, kMambaLayer, kMh, kMp, kMn, kMg, kMk, kMq, kDi, kDx, kDz,
  // The optimizer's kernels (appended likewise): torch.optim.AdamW's foreach implementation (plan optimizer_impl).
  kAdamForeach,
  // How the model's code writes its norms and tanh GELU (appended likewise): composed of elementwise operators.
  kComposedNorm, kComposedGelu, kQkNormFull,
  // The loss's kernels (appended likewise): Megatron-Core's cross-entropy fusion (plan cross_entropy_fusion).
  kCeNative, kCeTe,
  kNumBase
};

enum MemSym : int { kP, kPLayerMax, kLStage, kInflight, kStageFirst, kStageLast, kActivations, kPExp, kPTrain, kNumMem };

}  // namespace

const std::vector<std::string>& stack_base_symbols() {
  static const std::vector<std::string> names = {
      "H", "L", "heads", "kv_heads", "d", "qd", "kd", "fd", "vocab", "Vp", "swiglu", "rope", "learned_pos", "alibi",
      "bias", "layernorm",
      "b", "s", "T", "tp", "sp", "dp", "pp", "vpp", "cp", "zero", "m", "mixed", "bf16", "fp16", "fp8", "recompute_none",
      "recompute_full", "recompute_selective", "flash", "dropout",
      "Hs", "Q", "K", "F", "V", "Vu", "heads_r", "kv_r", "g", "P_layer", "P_opt",
      "moe", "moe_layer", "E", "topk", "Fe", "Fsh", "ep", "etp", "edp", "E_r", "Fe_r", "Fsh_r", "Tr", "Tx", "Te", "imb",
      "router_fp32", "dispatch_ag", "mla", "qlr", "kvlr", "dn", "dr", "dv", "d_att", "qk_norm",
      "lora", "lora_qkv", "lora_proj", "lora_fc1", "lora_fc2", "frozen", "doc", "win", "seq_doc",
      "attn_dropout", "hidden_dropout",
      "hybrid", "attn_block", "mlp_block", "mamba_layer", "mh", "mp", "mn", "mg", "mk", "mq", "Di", "Dx", "Dz",
      "adam_foreach", "composed_norm", "composed_gelu", "qk_norm_full", "ce_native", "ce_te"};
  return names;
}

const std::vector<std::string>& stack_memory_extra_symbols() {
  static const std::vector<std::string> names = {"P",           "P_layer_max", "L_stage",     "inflight",
                                                 "stage_first", "stage_last",  "activations", "P_exp",
                                                 "P_train"};
  return names;
}

std::vector<double> StackProfile::bind(const ModelSpec& spec, const Plan& p, bool flash_attention, bool dropout,
                                       int vocab_multiple, double optimizer_params, bool moe_layer,
                                       bool windowed_layer, LayerKind kind) const {
  std::vector<double> v(table_.size(), 0.0);
  const double tp = p.tp;
  v[kH] = spec.hidden;
  v[kL] = spec.layers;
  v[kHeads] = spec.heads;
  v[kKvHeads] = spec.kv_heads;
  v[kD] = spec.head_size();
  v[kQd] = static_cast<double>(spec.q_dim());
  v[kKd] = static_cast<double>(spec.kv_dim());
  v[kFd] = spec.ffn_hidden;
  v[kVocab] = static_cast<double>(spec.vocab);
  v[kVp] = static_cast<double>(padded_vocab(spec.vocab, p.tp, vocab_multiple));
  v[kSwiglu] = spec.ffn == FfnKind::swiglu;
  v[kRope] = spec.positional == Positional::rope;
  v[kLearnedPos] = spec.positional == Positional::learned;
  v[kAlibi] = spec.positional == Positional::alibi;
  v[kBias] = spec.bias;
  v[kLayernorm] = spec.norm == NormKind::layernorm;
  v[kB] = p.mbs;
  v[kS] = spec.seq_len;
  v[kT] = static_cast<double>(p.mbs) * spec.seq_len;
  v[kTp] = tp;
  v[kSp] = p.sp;
  v[kDp] = p.dp;
  v[kPp] = p.pp;
  v[kVpp] = p.vpp;
  v[kCp] = p.cp;
  v[kZero] = p.zero;
  v[kM] = p.num_microbatches();
  // fp8 is mixed precision (bf16 activations, fp32 master weights, main gradients and Adam) with the layers'
  // linear GEMMs in FP8 (plan.hpp): the rules for mixed apply to it.
  v[kMixed] = p.precision == Precision::mixed || p.precision == Precision::fp8;
  v[kBf16] = p.precision == Precision::bf16;
  v[kFp16] = p.precision == Precision::fp16;
  v[kFp8] = p.precision == Precision::fp8;
  v[kRecomputeNone] = p.recompute == Recompute::none;
  v[kRecomputeFull] = p.recompute == Recompute::full;
  v[kRecomputeSelective] = p.recompute == Recompute::selective;
  v[kFlash] = flash_attention;
  v[kDropout] = dropout;
  v[kHs] = spec.hidden / (p.sp ? tp : 1.0);
  v[kQ] = v[kQd] / tp;
  v[kK] = v[kKd] / tp;
  v[kF] = v[kFd] / tp;
  v[kV] = v[kVp] / tp;
  v[kVu] = v[kVocab] / tp;
  v[kHeadsR] = spec.heads / p.tp;
  v[kKvR] = std::max(1, spec.kv_heads / p.tp);
  v[kG] = grad_bytes_per_element(p);
  // Linear weights of one layer on this rank: qkv H(Q + 2K), output QH, MLP (2 or 3) F H.
  v[kPLayer] = v[kH] * (v[kQ] + 2.0 * v[kK]) + v[kQ] * v[kH] + (v[kSwiglu] ? 3.0 : 2.0) * v[kF] * v[kH];
  v[kPOpt] = optimizer_params;
  // Mixture of experts (docs/moe.md): the rank routes Tr tokens (its sequence shard), its E_r experts process Tx
  // token copies (Tr top_k on average, x etp after the expert-TP all-gather, x the routing imbalance for the
  // busiest rank), Te each.
  const MoeSpec& e = spec.moe;
  v[kMoe] = e.enabled();
  v[kMoeLayer] = e.enabled() && (moe_layer || kind == LayerKind::moe);
  v[kE] = e.experts;
  v[kTopk] = e.top_k;
  v[kFe] = e.ffn_hidden;
  v[kFsh] = e.shared_width();
  v[kEp] = p.ep;
  v[kEtp] = p.etp;
  v[kEdp] = p.edp();
  v[kEr] = e.enabled() ? static_cast<double>(e.experts) / p.ep : 0.0;
  v[kFer] = static_cast<double>(e.ffn_hidden) / p.etp;
  v[kFshr] = v[kFsh] / tp;
  v[kTr] = v[kT] / (p.sp ? tp : 1.0);
  v[kImb] = moe_imbalance(spec, p);
  v[kTx] = v[kTr] * e.top_k * p.etp * v[kImb];
  v[kTe] = v[kEr] > 0.0 ? v[kTx] / v[kEr] : 0.0;
  v[kRouterFp32] = e.router_fp32;
  v[kDispatchAg] = p.moe_dispatcher == MoeDispatcher::allgather;
  const MlaSpec& a = spec.mla;
  v[kMla] = a.enabled();
  v[kQlr] = a.q_lora_rank;
  v[kKvlr] = a.kv_lora_rank;
  v[kDn] = a.nope_head_dim;
  v[kDr] = a.rope_head_dim;
  v[kDv] = a.enabled() ? a.v_head_dim : spec.head_size();
  v[kDAtt] = (spec.head_size() + v[kDv]) / 2.0;  // one head dim with the FLOPs of QK^T (d_qk) and AV (d_v)
  v[kQkNorm] = spec.qk_norm;
  const bool lora = p.lora_rank > 0;
  v[kSLora] = p.lora_rank;
  v[kSLoraQkv] = lora && (p.lora_modules & kLoraQkv);
  v[kSLoraProj] = lora && (p.lora_modules & kLoraProj);
  v[kSLoraFc1] = lora && (p.lora_modules & kLoraFc1);
  v[kSLoraFc2] = lora && (p.lora_modules & kLoraFc2);
  v[kFrozen] = lora;
  v[kDoc] = p.packed_doc_tokens > 0 ? std::min<double>(p.packed_doc_tokens, spec.seq_len) : spec.seq_len;
  v[kSeqDoc] = v[kDoc];
  // A sliding window of w: each query sees w keys, the FLOPs of causal attentions of 2w tokens (`doc`); `win` is the
  // window where it is narrower than that (the varlen kernel's tiles: attention_tiles.hpp).
  if (windowed_layer) {
    v[kDoc] = sliding_window_span(v[kSeqDoc], spec.sliding_window);
    v[kWin] = sliding_window_priced(v[kSeqDoc], spec.sliding_window);
  }
  v[kAttnDropout] = spec.attention_dropout;
  v[kHiddenDropout] = spec.hidden_dropout;
  // Hybrid layers run one block each (docs/hybrid.md); a transformer layer runs attention and the MLP (or MoE).
  v[kHybrid] = spec.is_hybrid();
  v[kAttnBlock] = kind == LayerKind::transformer || kind == LayerKind::attention;
  v[kMlpBlock] = kind == LayerKind::transformer || kind == LayerKind::mlp || kind == LayerKind::moe;
  v[kMambaLayer] = kind == LayerKind::mamba;
  const MambaSpec& mb = spec.mamba;
  v[kMh] = mb.heads / tp;
  v[kMp] = mb.head_dim;
  v[kMn] = mb.state;
  v[kMg] = std::max(1.0, mb.groups / tp);
  v[kMk] = mb.conv_kernel;
  v[kMq] = mb.chunk;
  v[kDi] = v[kMh] * v[kMp];
  v[kDx] = v[kDi] + 2.0 * v[kMg] * v[kMn];
  v[kDz] = 2.0 * v[kDi] + 2.0 * v[kMg] * v[kMn] + v[kMh];
  v[kAdamForeach] = p.optimizer_impl == OptimizerImpl::foreach;
  v[kCeNative] = p.cross_entropy_fusion == CrossEntropyFusion::native;
  v[kCeTe] = p.cross_entropy_fusion == CrossEntropyFusion::te;
  v[kComposedNorm] = spec.composed_norm;
  v[kComposedGelu] = spec.composed_gelu;
  v[kQkNormFull] = spec.qk_norm_full;
  eval_vars(v, vars_);
  return v;
}

std::vector<double> StackProfile::bind_memory(std::vector<double> cost, const StageValues& st) const {
  const std::size_t base = table_.size();
  cost.resize(memory_table_.size(), 0.0);
  cost[base + kP] = st.params;
  cost[base + kPLayerMax] = st.largest_layer_params;
  cost[base + kLStage] = st.layers;
  cost[base + kInflight] = st.inflight;
  cost[base + kStageFirst] = st.first;
  cost[base + kStageLast] = st.last;
  cost[base + kActivations] = st.activations;
  cost[base + kPExp] = st.expert_params;
  cost[base + kPTrain] = st.trainable_params;
  eval_vars(cost, memory_vars_);
  return cost;
}

void StackProfile::eval_vars(std::vector<double>& values, const std::vector<std::pair<int, Expr>>& vars) const {
  for (const auto& [slot, e] : vars) values[static_cast<std::size_t>(slot)] = e.eval(values);
}

double StackProfile::traced_tokens() const {
  const int slot = table_.find("T");
  if (!trace || slot < 0 || trace_values_.empty()) return 0.0;
  return trace_values_[static_cast<std::size_t>(slot)];
}

bool StackProfile::splits_at_host_sync() const {
  const auto& fwd = phases[static_cast<std::size_t>(StackPhase::layer_forward)];
  return std::any_of(fwd.begin(), fwd.end(), [](const StackRow& r) { return r.after_sync; });
}

bool StackProfile::applies_to(const ModelSpec& spec, const Plan& plan) const {
  if (applies.empty()) return true;
  return applies.eval(bind(spec, plan, true, false, 128)) != 0.0;
}

}  // namespace scalescope::models
