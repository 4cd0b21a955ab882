// Plans from the flags users already have: a Megatron-LM pretrain_gpt.py command line (or a file holding
// one, shell line continuations and # comments allowed) read into a Plan.
//
// Flags read (Megatron-LM megatron/training/arguments.py names) and what they set:
//   --tensor-model-parallel-size tp, --pipeline-model-parallel-size pp, --context-parallel-size cp,
//   --cp-comm-type cp_comm (p2p | a2a | allgather), --virtual-pipeline-model-parallel-size vpp (and
//   schedule=interleaved), --num-layers-per-virtual-pipeline-stage (vpp = layers / pp / n),
//   --micro-batch-size mbs (default 1), --global-batch-size gbs (default mbs x dp), --seq-length seq (when it
//   differs from the model's seq_len),
//   --sequence-parallel sp, --use-distributed-optimizer zero=1, --use-torch-fsdp2 / --use-megatron-fsdp
//   zero=3, --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap,
//   --ddp-bucket-size (elements; default max(40M, 1M x dp x cp) with --overlap-grad-reduce, one bucket
//   without, as Megatron-Core's DistributedDataParallel), --recompute-granularity full | selective,
//   --recompute-activations (selective), --bf16 (precision=mixed, fp32 gradient accumulation: Megatron
//   forces it for bf16), --fp16 (precision=fp16 unless --accumulate-allreduce-grads-in-fp32),
//   --fp8-format (precision=fp8), --fp8-recipe, --fp8-param-gather (fp8_params),
//   --decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers,
//   --pipeline-model-parallel-layout; MoE: --expert-model-parallel-size ep, --expert-tensor-parallel-size etp
//   (default: tp, as Megatron-Core), --moe-token-dispatcher-type (alltoall | allgather | flex), --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity (moe_imbalance = the
//   factor), --overlap-moe-expert-parallel-comm (moe_a2a_overlap); the world size from torchrun's --nnodes x --nproc-per-node, else
//   from the caller (the cluster's GPUs), giving dp = world / (tp cp pp).
// Checked against the model (a different value is a contradiction, rejected naming the flag):
//   --num-layers, --hidden-size, --num-attention-heads, --ffn-hidden-size,
//   --num-query-groups (with --group-query-attention), --normalization, --num-experts, --moe-router-topk,
//   --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size; and, when the flags describe the
//   model (--num-layers given), the switches --swiglu and --untie-embeddings-and-output-weights.
// Contradictions between flags (--bf16 with --fp16, a plan validate() refuses) are rejected naming the
// flag; every other flag is listed as ignored. Approximations (recompute of some layers only) are noted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

namespace scalescope::models {

struct MegatronImport {
  Plan plan;
  std::vector<std::string> ignored;  ///< flags (with their values) that set nothing here
  std::vector<std::string> notes;    ///< approximations made
  int world = 0;                     ///< GPUs the flags describe (tp * cp * pp * dp)
};

/// Reads `flags_or_file` (a command line, or the path of a file holding one) for `spec`; `world_gpus`
/// (0 = unknown) is the world size when the flags do not give it. Errors: file "--plan-from-megatron",
/// path the flag.
Expected<MegatronImport> plan_from_megatron(std::string_view flags_or_file, const ModelSpec& spec, int world_gpus);

/// The Megatron flag that sets a plan key ("tp" -> "--tensor-model-parallel-size"); empty if none.
std::string megatron_flag_of(std::string_view plan_key);

}  // namespace scalescope::models
