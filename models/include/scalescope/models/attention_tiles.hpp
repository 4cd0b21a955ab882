// The work FlashAttention-2 does on causal (and sliding-window) attention, counted in the tiles it computes, for
// pricing its variable-length kernel (packed documents, windows: AttentionBackend::varlen).
//
// The kernel splits a sequence of L tokens into query blocks of Bm rows and key blocks of Bn columns and computes a
// (query block, key block) tile whenever the block pair holds at least one allowed (query q, key k) pair: k <= q
// (causal) and, with a window of w keys, q - k < w. Each tile costs the same whatever part of it the mask keeps, so
// documents of 180 tokens cost as many tiles as documents of 256 (forward, Bm = 128: two query blocks each) and
// 4,096 tokens in documents of 180 cost 1.2x those in documents of 256 (session 22: the measured forward ran 1.22x;
// validation/attention/packed22). The forward walks key blocks for each query block; the backward walks query blocks
// for each key block (dK, dV accumulated per key block); both visit the same allowed tiles of their own block sizes.
//
// Block sizes are FlashAttention-2's for bf16/fp16 without dropout on sm90 (H100/H200) as torch builds it
// (aten/src/ATen/native/transformers/cuda/flash_attn/flash_{fwd,bwd}_launch_template.h): forward (Bm, Bn) =
// (128, 128) for head dim <= 64, (128, 64) for <= 128, (128, 32) for <= 160, (128, 64) for <= 192 and (64, 64) for
// <= 256; backward (128, 128) for head dim <= 64, (64, 128) for <= 128 and (64, 64) above.
#pragma once

#include <cstdint>

namespace scalescope::models {

struct AttentionTile {
  std::int64_t m = 128;  ///< query rows per block (kBlockM)
  std::int64_t n = 64;   ///< key columns per block (kBlockN)
};

/// FlashAttention-2's block sizes on sm90 for a head dim (see the top of this file).
AttentionTile flash2_tile(std::int64_t head_dim, bool backward);

/// Tiles computed for one causal sequence of `seq` tokens whose queries see at most `window` keys up to themselves
/// (0: the whole prefix), with blocks `tile`. Forward and backward count the same set of tiles of a given block size.
std::int64_t causal_tiles(std::int64_t seq, std::int64_t window, AttentionTile tile);

/// The work of `batch` sequences x `heads` heads in tile units: tiles x Bm x Bn x 4 x head_dim (the FLOPs of the
/// two GEMMs of every computed tile, masked parts included).
double tiled_attention_work(std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t window,
                            std::int64_t head_dim, bool backward);

}  // namespace scalescope::models
