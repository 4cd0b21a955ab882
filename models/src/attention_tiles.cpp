// FlashAttention-2's computed tiles for causal and sliding-window attention (attention_tiles.hpp).
#include "scalescope/models/attention_tiles.hpp"

#include <algorithm>

namespace scalescope::models {

AttentionTile flash2_tile(std::int64_t head_dim, bool backward) {
  if (backward) {
    if (head_dim <= 64) return {128, 128};
    if (head_dim <= 128) return {64, 128};
    return {64, 64};
  }
  if (head_dim <= 64) return {128, 128};
  if (head_dim <= 128) return {128, 64};
  if (head_dim <= 160) return {128, 32};
  if (head_dim <= 192) return {128, 64};
  return {64, 64};
}

std::int64_t causal_tiles(std::int64_t seq, std::int64_t window, AttentionTile tile) {
  if (seq <= 0 || tile.m <= 0 || tile.n <= 0) return 0;
  // Per query block [q0, q1]: keys from max(0, q0 - window + 1) (0 without a window) to q1, in whole key blocks.
  std::int64_t tiles = 0;
  for (std::int64_t q0 = 0; q0 < seq; q0 += tile.m) {
    const std::int64_t q1 = std::min(seq, q0 + tile.m) - 1;
    const std::int64_t k0 = window > 0 ? std::max<std::int64_t>(0, q0 - window + 1) : 0;
    tiles += q1 / tile.n - k0 / tile.n + 1;
  }
  return tiles;
}

double tiled_attention_work(std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t window,
                            std::int64_t head_dim, bool backward) {
  const AttentionTile t = flash2_tile(head_dim, backward);
  return static_cast<double>(batch) * static_cast<double>(heads) * static_cast<double>(causal_tiles(seq, window, t)) *
         static_cast<double>(t.m) * static_cast<double>(t.n) * 4.0 * static_cast<double>(head_dim);
}

}  // namespace scalescope::models
