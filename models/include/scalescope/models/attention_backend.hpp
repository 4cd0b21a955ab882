// The attention kernel a shape runs, or a calibration profile's attention row timed (compute_model.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace scalescope::models {

/// flash: FlashAttention-2 (torch SDPA's flash backend; rows without a `backend` key). cudnn: cuDNN's fused attention
/// (torch SDPA's cuDNN backend, which torch picks on Hopper by default, and Transformer Engine's FusedAttention).
/// varlen: FlashAttention's variable-length kernel on packed documents (THD layout, cumulative lengths; torch's
/// varlen_attn): a row of `batch` documents of `seq` tokens in one call; packed and sliding-window layers run it.
enum class AttentionBackend : std::uint8_t { flash, cudnn, varlen };

/// "cudnn" -> cudnn, "varlen" -> varlen, anything else -> flash (the callers have checked the name against
/// {"flash", "cudnn", "varlen"}).
inline AttentionBackend attention_backend_named(std::string_view name) {
  return name == "cudnn" ? AttentionBackend::cudnn : name == "varlen" ? AttentionBackend::varlen : AttentionBackend::flash;
}

}  // namespace scalescope::models
