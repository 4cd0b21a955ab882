// The attention kernel a shape runs, or a calibration profile's attention row timed (compute_model.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace scalescope::models {

/// flash: FlashAttention-2 (torch SDPA's flash backend; rows without a `backend` key). cudnn: cuDNN's fused attention
/// (torch SDPA's cuDNN backend, which torch picks on Hopper by default, and Transformer Engine's FusedAttention).
enum class AttentionBackend : std::uint8_t { flash, cudnn };

/// "cudnn" -> cudnn, anything else -> flash (the callers have checked the name against {"flash", "cudnn"}).
inline AttentionBackend attention_backend_named(std::string_view name) {
  return name == "cudnn" ? AttentionBackend::cudnn : AttentionBackend::flash;
}

}  // namespace scalescope::models
