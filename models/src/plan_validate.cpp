// Plan validation against a model and a GPU count: each rule names the key it concerns.
#include <string>

#include "scalescope/models/pipeline_layout.hpp"
#include "scalescope/models/plan.hpp"

namespace scalescope::models {

namespace {

[[noreturn]] void reject(const std::string& key, const std::string& message) {
  throw ErrorException(input_error("plan", key, message));
}

std::string kv(const char* key, long long v) { return std::string(key) + "=" + std::to_string(v); }

void divides(const char* key, int d, const char* what, long long n) {
  if (n % d != 0) reject(key, kv(key, d) + " does not divide " + kv(what, n));
}

/// Context parallelism: Transformer Engine's load-balanced split cuts each sequence into 2 cp chunks
/// (p2p, allgather); Ulysses (a2a) moves whole heads, so cp divides the heads of a TP rank.
void check_context_parallel(const Plan& p, const ModelSpec& m) {
  if (p.cp == 1) return;
  if (m.sliding_window > 0)
    reject("cp", kv("cp", p.cp) + " with sliding-window attention (model '" + m.name + "') is not modelled; use cp=1");
  if (m.seq_len % (2 * p.cp) != 0) {
    reject("cp", kv("cp", p.cp) + " needs 2*cp to divide " + kv("seq_len", m.seq_len) + " (load-balanced causal split)");
  }
  if (p.cp_comm == CpComm::a2a && (m.heads % (p.tp * p.cp) != 0 || m.kv_heads % p.tp != 0)) {
    reject("cp_comm", "cp_comm=a2a needs tp*cp to divide heads: " + kv("tp", p.tp) + ", " + kv("cp", p.cp) + ", " +
                          kv("heads", m.heads));
  }
}

/// FP8 keys need precision=fp8; the overlap flags follow Megatron-LM's argument checks.
void check_precision_and_overlap(const Plan& p) {
  if (!p.fp8() && p.fp8_params) reject("fp8_params", "fp8_params=true needs precision=fp8");
  if (!p.fp8() && p.fp8_recipe != Fp8Recipe::delayed) {
    reject("fp8_recipe", "fp8_recipe=" + std::string(to_string(p.fp8_recipe)) + " needs precision=fp8");
  }
  if (p.overlap_param_gather && p.zero < 1) {
    reject("overlap_param_gather", "overlap_param_gather=true needs the distributed optimizer (zero >= 1), got " +
                                       kv("zero", p.zero));
  }
  if (p.overlap_param_gather && !p.overlap) {
    reject("overlap_param_gather", "overlap_param_gather=true needs overlap_grad_reduce=true (Megatron-LM rule)");
  }
  if (p.tp_comm_overlap && !p.sp) {
    reject("tp_comm_overlap", "tp_comm_overlap=true needs sp=true (Megatron-LM rule: TP overlap runs on the "
                              "sequence-parallel all-gathers and reduce-scatters)");
  }
}

/// Expert parallelism: an MoE model, experts and their width divisible, the expert layout inside a stage's ranks.
void check_experts(const Plan& p, const ModelSpec& m, PlanCheck& check) {
  if (!m.is_moe()) {
    if (p.ep != 1) reject("ep", kv("ep", p.ep) + " needs a mixture-of-experts model (experts > 0)");
    if (p.etp != 1) reject("etp", kv("etp", p.etp) + " needs a mixture-of-experts model (experts > 0)");
    if (p.moe_dispatcher != MoeDispatcher::alltoall || p.moe_imbalance > 0.0 || p.moe_a2a_overlap)
      reject("moe_dispatcher", "the MoE keys (moe_dispatcher, moe_imbalance, moe_a2a_overlap) need a mixture-of-experts model");
    return;
  }
  divides("ep", p.ep, "experts", m.moe.experts);
  divides("etp", p.etp, "moe_ffn_hidden", m.moe.ffn_hidden);
  if (m.moe.shared_width() > 0) divides("tp", p.tp, "shared_ffn_hidden", m.moe.shared_width());
  const long long stage_ranks = static_cast<long long>(p.tp) * p.cp * p.dp;
  if (stage_ranks % (static_cast<long long>(p.ep) * p.etp) != 0) {
    reject("ep", "ep*etp=" + std::to_string(static_cast<long long>(p.ep) * p.etp) + " does not divide tp*cp*dp=" +
                     std::to_string(stage_ranks) + " (the experts are laid out over the ranks of a pipeline stage)");
  }
  if (p.tp > 1 && !p.sp) reject("sp", "an MoE model with tp > 1 needs sp=true (Megatron-Core rule for MoE layers)");
  if (p.moe_imbalance > 0.0 && p.moe_imbalance < 1.0)
    reject("moe_imbalance", "expected 0 (default) or a max/mean ratio >= 1, got " + std::to_string(p.moe_imbalance));
  if (m.moe.capacity_factor > 0.0 && p.moe_imbalance > m.moe.capacity_factor) {
    reject("moe_imbalance", "moe_imbalance=" + std::to_string(p.moe_imbalance) + " exceeds the model's capacity_factor=" +
                                std::to_string(m.moe.capacity_factor) + " (tokens beyond capacity are dropped)");
  }
  if (p.moe_imbalance == 0.0 && m.moe.capacity_factor == 0.0)
    check.notes.push_back("MoE routing priced as balanced (moe_imbalance=1.0; set moe_imbalance to the measured "
                          "max/mean tokens per expert)");
  if (p.moe_a2a_overlap && p.ep * p.etp == 1)
    check.notes.push_back("moe_a2a_overlap=true with ep=1: there is no all-to-all to overlap");
}

/// Fine-tuning: LoRA adapters on a dense model's linear modules, base weights frozen (ZeRO-3 would still shard and
/// gather the frozen weights: not modelled); packed documents no longer than the sequence, one CP rank.
void check_fine_tuning(const Plan& p, const ModelSpec& m) {
  if (p.lora_rank < 0) reject("lora_rank", "expected 0 (full training) or a positive adapter rank, got " + std::to_string(p.lora_rank));
  if (p.lora_modules < 0 || p.lora_modules > 0xF || (p.lora_rank > 0 && p.lora_modules == 0))
    reject("lora_modules", "expected at least one linear module of qkv, proj, fc1, fc2 for the adapters");
  if (p.lora_rank > 0) {
    if (m.is_moe()) reject("lora_rank", "LoRA is modelled for dense models only (the MoE experts' adapters are not)");
    if (m.mla.enabled()) reject("lora_rank", "LoRA is not modelled with multi-head latent attention");
    if (p.lora_rank > m.hidden)
      reject("lora_rank", kv("lora_rank", p.lora_rank) + " exceeds " + kv("hidden", m.hidden) + " (a low-rank adapter)");
    if (p.zero >= 3)
      reject("zero", "LoRA with zero=3 is not modelled (the frozen base weights would be sharded and gathered); use zero <= 2");
  }
  if (p.packed_doc_tokens < 0 || p.packed_doc_tokens > m.seq_len)
    reject("packed_doc_tokens", "expected 0 (unpacked) or a mean document length of 1.." + std::to_string(m.seq_len) +
                                    " tokens (the sequence), got " + std::to_string(p.packed_doc_tokens));
  if (p.packed_doc_tokens > 0 && p.cp > 1)
    reject("packed_doc_tokens", "packed sequences with context parallelism (cp > 1) are not modelled");
}

/// Hybrid models (docs/hybrid.md): TP splits the Mamba-2 heads and groups; context parallelism, LoRA and the
/// pipeline's mean-layer approximation.
void check_hybrid(const Plan& p, const ModelSpec& m, PlanCheck& check) {
  if (!m.is_hybrid()) return;
  if (m.mamba.enabled()) {
    divides("tp", p.tp, "mamba_heads", m.mamba.heads);
    divides("tp", p.tp, "mamba_groups", m.mamba.groups);
  }
  if (p.cp > 1) reject("cp", "context parallelism in a hybrid (Mamba-2) model is not modelled: use cp=1");
  if (p.lora_rank > 0) reject("lora_rank", "LoRA is not modelled for hybrid (Mamba-2) models");
  if (p.pp > 1)
    check.notes.push_back("hybrid model with pp > 1: every stage's non-MoE layers are priced as the model's mean "
                          "Mamba-2 / attention / MLP layer (docs/hybrid.md)");
}

}  // namespace

Expected<PlanCheck> validate(const Plan& p, const ModelSpec& m_in, int gpus_available) {
  const ModelSpec m = with_plan_seq(m_in, p);
  return catch_errors([&] {
    PlanCheck check;
    for (auto [key, v] : {std::pair{"tp", p.tp},
                          {"pp", p.pp},
                          {"dp", p.dp},
                          {"mbs", p.mbs},
                          {"gbs", p.gbs},
                          {"vpp", p.vpp},
                          {"cp", p.cp},
                          {"ep", p.ep},
                          {"etp", p.etp}}) {
      if (v <= 0) reject(key, std::string("expected a positive integer, got ") + std::to_string(v));
    }
    if (p.zero < 0 || p.zero > 3)
      reject("zero", "expected a ZeRO stage 0, 1, 2 or 3, got " + std::to_string(p.zero));
    if (!(p.bucket_MB > 0)) reject("bucket_MB", "expected a positive number");
    // Products of plan sizes at 64 bits (65536 x 65536 wraps an int to 0), bounded before any use.
    const long long gpus = static_cast<long long>(p.tp) * p.cp * p.pp * p.dp;
    if (gpus > kMaxPlanGpus)
      reject("dp", "tp*cp*pp*dp=" + std::to_string(gpus) + " exceeds the " + std::to_string(kMaxPlanGpus) +
                       " GPUs a plan may span");
    const long long mbs_dp = static_cast<long long>(p.mbs) * p.dp;

    // Tensor parallelism splits heads (and KV groups) and the MLP columns across ranks.
    divides("tp", p.tp, "heads", m.heads);
    divides("tp", p.tp, "kv_heads", m.kv_heads);
    divides("tp", p.tp, "ffn_hidden", m.ffn_hidden);

    // Pipeline stages hold whole layers (even, uneven or an explicit layout: pipeline_layout.hpp); the
    // interleaved schedule splits each stage into vpp chunks.
    if (p.schedule == Schedule::interleaved) {
      if (p.pp < 2) reject("schedule", "schedule=interleaved needs pp > 1, got " + kv("pp", p.pp));
      if (p.vpp < 2) reject("vpp", "schedule=interleaved needs vpp > 1, got " + kv("vpp", p.vpp));
    } else if (p.vpp != 1) {
      reject("vpp", kv("vpp", p.vpp) + " needs schedule=interleaved, got schedule=" + std::string(to_string(p.schedule)));
    }
    // At 64 bits before the layout multiplies them: more stages than layers cannot hold a layer each.
    if (const long long stages = static_cast<long long>(p.pp) * p.vpp; stages > m.layers) {
      reject(p.vpp > 1 ? "vpp" : "pp", (p.vpp > 1 ? "pp*vpp=" : "pp=") + std::to_string(stages) + " does not divide " +
                                           kv("layers", m.layers));
    }
    if (p.pp == 1 && !p.pp_layout.empty()) reject("pp_layout", "pp_layout needs pp > 1");
    (void)plan_layout(m, p).take_or_throw();

    // The global batch is split into dp replicas of m micro-batches of mbs sequences.
    if (p.gbs % mbs_dp != 0) {
      reject("gbs", kv("gbs", p.gbs) + " is not divisible by mbs*dp=" + std::to_string(mbs_dp));
    }
    const int m_count = p.num_microbatches();
    // The builders make tasks per micro-batch: a bound keeps memory and time bounded by the model.
    if (m_count > kMaxMicrobatches)
      reject("gbs", "gbs/(mbs*dp)=" + std::to_string(m_count) + " micro-batches per pipeline exceed the limit of " +
                        std::to_string(kMaxMicrobatches) + " (raise mbs or dp)");
    if (p.schedule == Schedule::interleaved && m_count % p.pp != 0) {
      reject("gbs", "schedule=interleaved needs the number of micro-batches (" +
                        std::to_string(m_count) + ") to be a multiple of " + kv("pp", p.pp) +
                        " (Megatron-LM rule)");
    }

    // Sequence parallelism shards the non-tensor-parallel regions along the sequence (of each CP rank).
    check_context_parallel(p, m);
    const int seq_rank = m.seq_len / p.cp;
    if (p.sp && p.tp < 2) reject("sp", "sp=true needs tp > 1, got " + kv("tp", p.tp));
    if (p.sp && seq_rank % p.tp != 0) {
      reject("sp", "sp=true needs tp to divide the sequence of a CP rank: " + kv("tp", p.tp) + ", seq_len/cp=" +
                       std::to_string(seq_rank));
    }
    check_precision_and_overlap(p);
    check_experts(p, m, check);
    check_fine_tuning(p, m);
    check_hybrid(p, m, check);

    if (gpus_available > 0) {
      if (gpus > gpus_available) {
        reject("dp", "tp*cp*pp*dp=" + std::to_string(gpus) + " exceeds the " +
                         std::to_string(gpus_available) + " GPUs available");
      }
      if (p.gpus() < gpus_available) {
        check.notes.push_back("uses " + std::to_string(p.gpus()) + " of the " +
                              std::to_string(gpus_available) + " GPUs available");
      }
    }
    if (p.zero > 0 && p.dp * p.cp == 1) {
      check.notes.push_back(kv("zero", p.zero) +
                            " with dp=1 (and cp=1) shards nothing: memory is as with zero=0");
    }
    if (p.zero >= 2 && p.pp > 1) {
      check.notes.push_back(kv("zero", p.zero) +
                            " with pp > 1 is not supported by DeepSpeed or Megatron-LM; "
                            "it is modelled as if it were");
    }
    if (p.pp > 1 && m_count < p.pp) {
      check.notes.push_back("only " + std::to_string(m_count) + " micro-batches for " +
                            kv("pp", p.pp) + ": the pipeline never fills");
    }
    return check;
  });
}

}  // namespace scalescope::models
