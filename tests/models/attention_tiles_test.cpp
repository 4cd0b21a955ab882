// Tests for FlashAttention-2 tile counting (attention_tiles.hpp) and the compute model's pricing of varlen shapes
// (packed documents and sliding windows) by tiles from a profile's varlen rows.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu_fixtures.hpp"
#include "scalescope/models/attention_tiles.hpp"
#include "scalescope/models/compute_profile.hpp"

namespace scalescope::models {
namespace {

// The blocks that hold at least one allowed (query q, key k) pair, k <= q and q - k < window, found by visiting every
// pair: an independent count of what causal_tiles() computes in closed form per query block.
std::int64_t brute_force_tiles(std::int64_t seq, std::int64_t window, AttentionTile t) {
  const std::int64_t mb = (seq + t.m - 1) / t.m, nb = (seq + t.n - 1) / t.n;
  std::vector<char> hit(static_cast<std::size_t>(mb * nb), 0);
  for (std::int64_t q = 0; q < seq; ++q)
    for (std::int64_t k = 0; k <= q; ++k)
      if (window == 0 || q - k < window) hit[static_cast<std::size_t>((q / t.m) * nb + k / t.n)] = 1;
  return std::count(hit.begin(), hit.end(), 1);
}

TEST(AttentionTiles, Flash2BlockSizesOnHopper) {
  // flash_fwd_launch_template.h / flash_bwd_launch_template.h (no dropout, >= 144 KB of shared memory).
  EXPECT_EQ(flash2_tile(64, false).m, 128);
  EXPECT_EQ(flash2_tile(64, false).n, 128);
  EXPECT_EQ(flash2_tile(128, false).m, 128);
  EXPECT_EQ(flash2_tile(128, false).n, 64);
  EXPECT_EQ(flash2_tile(128, true).m, 64);
  EXPECT_EQ(flash2_tile(128, true).n, 128);
  EXPECT_EQ(flash2_tile(64, true).m, 128);
  EXPECT_EQ(flash2_tile(256, false).n, 64);
}

TEST(AttentionTiles, CountedByHand) {
  const AttentionTile fwd{128, 64}, bwd{64, 128};
  // 180 tokens, forward: query block 0 (rows 0-127) sees keys 0-127 = 2 key blocks; block 1 (128-179) keys 0-179 = 3.
  EXPECT_EQ(causal_tiles(180, 0, fwd), 5);
  // 256 tokens: 2 + 4 = 6, so 4,096 tokens in documents of 180 (23 documents) cost 115 tiles, in 256 (16) 96.
  EXPECT_EQ(causal_tiles(256, 0, fwd), 6);
  // 129 tokens: the one-row second block still walks keys 0-128 = 3 blocks: 2 + 3 = 5, 2.5x a 128-token document.
  EXPECT_EQ(causal_tiles(129, 0, fwd), 5);
  EXPECT_EQ(causal_tiles(128, 0, fwd), 2);
  // 1,024 tokens: query block i walks 2i + 2 key blocks: 2 + 4 + ... + 16 = 72.
  EXPECT_EQ(causal_tiles(1024, 0, fwd), 72);
  // Backward blocks of 180 tokens: query blocks 0-63 (1 key block), 64-127 (1), 128-179 (2) = 4.
  EXPECT_EQ(causal_tiles(180, 0, bwd), 4);
  // A window of 128 over 4,096 tokens: block 0 walks 2 key blocks, block i >= 1 keys 128i - 127 .. 128i + 127,
  // key blocks 2i - 2 .. 2i + 1 = 4: 2 + 31 x 4 = 126.
  EXPECT_EQ(causal_tiles(4096, 128, fwd), 126);
  EXPECT_EQ(causal_tiles(0, 0, fwd), 0);
}

TEST(AttentionTiles, ClosedFormMatchesVisitingEveryPair) {
  for (const AttentionTile t : {AttentionTile{128, 64}, AttentionTile{64, 128}, AttentionTile{128, 128}})
    for (std::int64_t seq : {1, 63, 64, 65, 127, 128, 129, 180, 300, 513})
      for (std::int64_t window : {0, 1, 50, 64, 128, 200, 1000})
        EXPECT_EQ(causal_tiles(seq, window, t), brute_force_tiles(seq, window, t))
            << "seq " << seq << " window " << window << " tile " << t.m << "x" << t.n;
}

AttentionShape varlen_shape(std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t window = 0) {
  AttentionShape a;
  a.batch = batch;
  a.heads = a.kv_heads = heads;
  a.head_dim = 128;
  a.seq = seq;
  a.window = window;
  a.backend = AttentionBackend::varlen;
  return a;
}

// One varlen row: 32 documents of 128 tokens, 32 heads of 128, 60 us forward and 200 us backward.
ComputeProfile one_varlen_row() {
  ComputeProfile p;
  p.source = "test.json";
  AttentionSample a;
  a.shape = varlen_shape(32, 32, 128);
  a.forward = Seconds(60e-6);
  a.backward = Seconds(200e-6);
  p.attention.push_back(a);
  p.attention_source = "test rows";
  return p;
}

TEST(AttentionTiles, VarlenShapesArePricedByTheirTiles) {
  auto m = ComputeModel::with_profile(testing::h200_spec(), one_varlen_row());
  ASSERT_TRUE(m.has_value()) << m.error().str();
  // The row: 32 documents x 2 forward tiles = 64 (backward: 32 x 2 = 64 tiles of 64 x 128). Documents of 129 tokens
  // (32 of them in 4,096 tokens): 32 x 5 = 160 forward tiles, 32 x causal_tiles(129, 0, {64, 128}) = 32 x 4 = 128
  // backward tiles (query blocks 0-63, 64-127: 1 key block each; 128: 2). With the row's rate per tile (one row: the
  // nearest at any distance): 60 us x 160 / 64 = 150 us forward, 200 us x 128 / 64 = 400 us backward.
  const AttentionShape a = varlen_shape(32, 32, 129);
  const double f = a.forward_flops();
  EXPECT_NEAR(m->attention(a, false, Flops(f), Bytes(0)).time.value, 150e-6, 1e-12);
  EXPECT_NEAR(m->attention(a, true, Flops(2.5 * f), Bytes(0)).time.value, 400e-6, 1e-12);
  // A window of 128 over one sequence of 4,096 tokens: 126 forward tiles (CountedByHand): 60 us x 126 / 64.
  const AttentionShape w = varlen_shape(1, 32, 4096, 128);
  EXPECT_NEAR(m->attention(w, false, Flops(w.forward_flops()), Bytes(0)).time.value, 60e-6 * 126 / 64, 1e-12);
}

TEST(AttentionTiles, WindowsWithoutVarlenRowsArePricedAsTheirSpanShape) {
  // Only a flash row: a window of 128 over 4,096 tokens is priced exactly as 16 causal sequences of 256 tokens (the
  // pricing before tiles), whose FLOPs it also has: 4 x 16 x 32 x 256^2 x 128 / 2.
  ComputeProfile p = one_varlen_row();
  p.attention[0].shape.backend = AttentionBackend::flash;
  auto m = ComputeModel::with_profile(testing::h200_spec(), p);
  ASSERT_TRUE(m.has_value());
  const AttentionShape w = varlen_shape(1, 32, 4096, 128);
  AttentionShape span = varlen_shape(16, 32, 256);
  span.backend = AttentionBackend::flash;
  EXPECT_DOUBLE_EQ(w.forward_flops(), 4.0 * 16 * 32 * 256.0 * 256 * 128 / 2);
  EXPECT_DOUBLE_EQ(w.span_shape().forward_flops(), span.forward_flops());
  EXPECT_DOUBLE_EQ(m->attention(w, false, Flops(w.forward_flops()), Bytes(0)).time.value,
                   m->attention(span, false, Flops(span.forward_flops()), Bytes(0)).time.value);
}

}  // namespace
}  // namespace scalescope::models
