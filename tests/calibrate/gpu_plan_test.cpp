// Tests of the GPU calibration program's pure helpers: sizes, nccl-tests counts and factors,
// statistics, repetition policy, budget and GEMM shape lists.
#include "scalescope/calibrate/gpu_plan.hpp"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "scalescope/calibrate/gemm_shapes.hpp"

namespace scalescope::calib {
namespace {

TEST(ParseByteSize, AcceptsPlainNumbersAndBinarySuffixes) {
  // nccl-tests' -b/-e read K, M, G as powers of 1024: 64K = 65536, 1M = 1048576, 1G = 2^30.
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("1M"), 1048576u);
  EXPECT_EQ(parse_byte_size("1G"), 1073741824u);
  EXPECT_EQ(parse_byte_size("2GiB"), 2147483648u);
  EXPECT_EQ(parse_byte_size("512mb"), 536870912u);
}

TEST(ParseByteSize, RejectsMalformedAndOverflowingText) {
  EXPECT_FALSE(parse_byte_size(""));
  EXPECT_FALSE(parse_byte_size("G"));
  EXPECT_FALSE(parse_byte_size("1X"));
  EXPECT_FALSE(parse_byte_size("-8"));
  EXPECT_FALSE(parse_byte_size("1.5G"));
  // 2^64 / 2^40 = 2^24 = 16777216: 16777216T does not fit in 64 bits.
  EXPECT_FALSE(parse_byte_size("16777216T"));
}

TEST(DoublingSizes, EightBytesToOneGibHasTwentyEightPoints) {
  // 8 = 2^3 ... 2^30: exponents 3..30 are 28 sizes.
  const auto s = doubling_sizes(8, 1ull << 30);
  ASSERT_EQ(s.size(), 28u);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 1ull << 30);
  EXPECT_EQ(s[1], 16u);
}

TEST(DoublingSizes, StopsBeforePassingMaxAndHandlesEmptyRanges) {
  // 3, 6, 12, 24 (48 > 40).
  EXPECT_EQ(doubling_sizes(3, 40), (std::vector<std::uint64_t>{3, 6, 12, 24}));
  EXPECT_TRUE(doubling_sizes(0, 40).empty());
  EXPECT_TRUE(doubling_sizes(64, 8).empty());
  // Near 2^64 the doubling must not overflow and loop: 2^63 is the only point.
  EXPECT_EQ(doubling_sizes(1ull << 63, ~0ull).size(), 1u);
}

TEST(CollCounts, AllReduceUsesTheWholeBufferOnEveryRank) {
  // 1 MiB of float: count = 2^20 / 4 = 262144 on every rank, size stays 1 MiB.
  const auto c = coll_counts(CollOp::all_reduce, 1 << 20, 4, 4);
  EXPECT_EQ(c.param_count, 262144u);
  EXPECT_EQ(c.send_elems, 262144u);
  EXPECT_EQ(c.bytes, 1u << 20);
}

TEST(CollCounts, AllGatherSplitsTheTotalIntoAlignedPerRankBlocks) {
  // 1 GiB float on 3 ranks (nccl-tests: block = floor(count/(4*3))*4):
  // count = 268435456; 268435456/12 = 22369621.33 -> 22369621 * 4 = 89478484 per rank;
  // total = 3 * 89478484 = 268435452 elements = 1073741808 bytes.
  const auto c = coll_counts(CollOp::all_gather, 1ull << 30, 4, 3);
  EXPECT_EQ(c.param_count, 89478484u);
  EXPECT_EQ(c.send_elems, 89478484u);
  EXPECT_EQ(c.recv_elems, 268435452u);
  EXPECT_EQ(c.bytes, 1073741808u);
  EXPECT_EQ(c.total_count, 268435452u);
}

TEST(CollCounts, ReduceScatterAndAlltoallSendTheWholeBuffer) {
  // 64 KiB float on 4 ranks: count 16384, block = 16384/16*4 = 4096.
  const auto rs = coll_counts(CollOp::reduce_scatter, 65536, 4, 4);
  EXPECT_EQ(rs.send_elems, 16384u);
  EXPECT_EQ(rs.recv_elems, 4096u);
  EXPECT_EQ(rs.bytes, 65536u);
  const auto a2a = coll_counts(CollOp::alltoall, 65536, 4, 4);
  EXPECT_EQ(a2a.param_count, 4096u);  // per peer
  EXPECT_EQ(a2a.send_elems, 16384u);
  EXPECT_EQ(a2a.recv_elems, 16384u);
}

TEST(CollCounts, TinySplitSizesRoundToZero) {
  // 32 B float on 3 ranks: count 8 < 4*3 = 12, so the aligned block is 0 (a point to skip).
  EXPECT_EQ(coll_counts(CollOp::all_gather, 32, 4, 3).bytes, 0u);
  // 64 B on 3 ranks: count 16, block = floor(16/12)*4 = 4, total 12 floats = 48 B.
  EXPECT_EQ(coll_counts(CollOp::all_gather, 64, 4, 3).bytes, 48u);
}

TEST(GroupSizeOrder, FullGroupThenPairThenPowersOfTwoThenTheRest) {
  // n = 8: 8 first, then 2, then 4 (the only other power of two below 8), then 3, 5, 6, 7.
  EXPECT_EQ(group_size_order(8), (std::vector<int>{8, 2, 4, 3, 5, 6, 7}));
  // n = 4: 4, 2, 3.  n = 2: just 2.  n = 1: nothing to measure.
  EXPECT_EQ(group_size_order(4), (std::vector<int>{4, 2, 3}));
  EXPECT_EQ(group_size_order(2), (std::vector<int>{2}));
  EXPECT_TRUE(group_size_order(1).empty());
  // Every size 2..n appears exactly once: n = 16 gives 15 sizes.
  EXPECT_EQ(group_size_order(16).size(), 15u);
}

TEST(BusBwFactor, MatchesNcclTestsFormulas) {
  // all_reduce on 4 ranks: 2*(4-1)/4 = 1.5; on 2 ranks: 2*1/2 = 1.
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_reduce, 2), 1.0);
  // all_gather / reduce_scatter / alltoall on 4 ranks: 3/4; on 3 ranks: 2/3.
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::alltoall, 3), 2.0 / 3.0);
  // broadcast and sendrecv: 1.
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::sendrecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::sendrecv_pair, 8), 1.0);
}

TEST(CollOpNames, RoundTripAndRejectUnknown) {
  for (CollOp op : all_coll_ops()) EXPECT_EQ(coll_op_from_name(coll_op_name(op)), op);
  EXPECT_FALSE(coll_op_from_name("allreduce"));
}

TEST(Summarize, MedianMinP90OfAnEvenSample) {
  // Sorted {1,2,3,4}: median = (2+3)/2 = 2.5; p90 at position 0.9*3 = 2.7 -> 3 + 0.7*(4-3) = 3.7.
  const auto s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_NEAR(s.p90, 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_EQ(s.n, 4u);
}

TEST(Summarize, OddSampleAndSingleValue) {
  // {1..10} has 10 values; {5, 1, 9}: sorted 1,5,9, median 5, p90 at 1.8 -> 5 + 0.8*4 = 8.2.
  const auto s = summarize({5.0, 1.0, 9.0});
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_NEAR(s.p90, 8.2, 1e-12);
  const auto one = summarize({7.0});
  EXPECT_DOUBLE_EQ(one.median, 7.0);
  EXPECT_DOUBLE_EQ(one.p90, 7.0);
}

TEST(RepPlan, LargeSizesUseFewerIterationsAndBatches) {
  // Rule: <= 64 MiB keeps the nccl-tests defaults (20 iters, 5 warm-up) and 5 batches;
  // above it min(iters,5), min(warmup,2), 3 batches.
  const auto small = coll_rep_plan(64ull << 20, 20, 5);
  EXPECT_EQ(small.iters, 20);
  EXPECT_EQ(small.warmup, 5);
  EXPECT_EQ(small.reps, 5);
  const auto large = coll_rep_plan((64ull << 20) + 1, 20, 5);
  EXPECT_EQ(large.iters, 5);
  EXPECT_EQ(large.warmup, 2);
  EXPECT_EQ(large.reps, 3);
  // A user asking for 3 iterations keeps 3 at large sizes.
  EXPECT_EQ(coll_rep_plan(1ull << 30, 3, 1).iters, 3);
}

TEST(RepPlan, IterationCapKeepsOneBatchShort) {
  // 20 iterations of 10 ms would last 200 ms; a 50 ms batch fits floor(50/10) = 5.
  EXPECT_EQ(cap_iters_to_batch(20, 0.010, 0.050), 5);
  // A 200 ms operation still gets one iteration.
  EXPECT_EQ(cap_iters_to_batch(20, 0.200, 0.050), 1);
  // Fast operations keep the requested count.
  EXPECT_EQ(cap_iters_to_batch(20, 1e-5, 0.050), 20);
}

TEST(RepsForDuration, ClampsBetweenMinimumAndMaximum) {
  // 50 ms / 1 ms = 50 reps; 50 ms / 10 ms = 5 -> raised to the minimum 10; 50 ms / 10 us = 5000 ->
  // 200.
  EXPECT_EQ(reps_for_duration(0.001, 10, 0.05, 200), 50);
  EXPECT_EQ(reps_for_duration(0.010, 10, 0.05, 200), 10);
  EXPECT_EQ(reps_for_duration(1e-5, 10, 0.05, 200), 200);
}

TEST(SectionDeadline, SharesTheRemainingTimeByWeight) {
  // 100 s budget, weights 1, 1, 2 (sum 4): the first section starting at 0 gets 100*1/4 = 25 s.
  EXPECT_DOUBLE_EQ(section_deadline(0.0, 100.0, 1.0, 4.0), 25.0);
  // It ended at 10 s: the second gets 90*1/3 = 30 s, deadline 40 s (the unused 15 s roll over).
  EXPECT_DOUBLE_EQ(section_deadline(10.0, 100.0, 1.0, 3.0), 40.0);
  // The last section gets everything left; past the budget nothing is left.
  EXPECT_DOUBLE_EQ(section_deadline(40.0, 100.0, 2.0, 2.0), 100.0);
  EXPECT_DOUBLE_EQ(section_deadline(120.0, 100.0, 2.0, 2.0), 120.0);
}

TEST(GemmShapes, SwigluFfnMatchesLlamaConfigs) {
  // Llama-7B (h 4096) ffn 11008, Llama-13B (h 5120) 13824, Llama-65B (h 8192) 22016 (HF configs);
  // h 2048: floor(16384/3) = 5461 -> next multiple of 256 = 5632; h 12288: 32768 exactly.
  EXPECT_EQ(swiglu_ffn(4096), 11008);
  EXPECT_EQ(swiglu_ffn(5120), 13824);
  EXPECT_EQ(swiglu_ffn(8192), 22016);
  EXPECT_EQ(swiglu_ffn(2048), 5632);
  EXPECT_EQ(swiglu_ffn(12288), 32768);
}

TEST(GemmShapes, LayerProductsMapToColumnMajorArguments) {
  // qkv with h = 1024, t = 512: Y[512 x 3072] = X[512 x 1024] W[1024 x 3072].
  // fwd NN (m=out=3072, n=t=512, k=in=1024); dgrad TN (m=in=1024, n=t=512, k=out=3072);
  // wgrad NT (m=out=3072, n=in=1024, k=t=512).
  const auto g = transformer_layer_gemms(1024, 512, true);
  ASSERT_EQ(g.size(), 18u);  // 6 layers x 3 passes
  EXPECT_EQ(std::make_tuple(g[0].transa, g[0].transb, g[0].m, g[0].n, g[0].k),
            std::make_tuple('N', 'N', std::int64_t{3072}, std::int64_t{512}, std::int64_t{1024}));
  EXPECT_EQ(std::make_tuple(g[1].transa, g[1].transb, g[1].m, g[1].n, g[1].k),
            std::make_tuple('T', 'N', std::int64_t{1024}, std::int64_t{512}, std::int64_t{3072}));
  EXPECT_EQ(std::make_tuple(g[2].transa, g[2].transb, g[2].m, g[2].n, g[2].k),
            std::make_tuple('N', 'T', std::int64_t{3072}, std::int64_t{1024}, std::int64_t{512}));
  // All three passes cost the same 2*512*1024*3072 FLOPs = 3221225472.
  EXPECT_DOUBLE_EQ(g[0].flops(), 3221225472.0);
  EXPECT_DOUBLE_EQ(g[2].flops(), g[0].flops());
}

TEST(GemmShapes, ListSizesPerDtype) {
  // bf16: 5 squares (1024..16384) + 5 hiddens x 4 token counts x 6 GEMMs x 3 passes = 5 + 360,
  // less the 3 forward attn_out products (NN, h x t x h) with t = h in {2048, 4096, 8192},
  // which are the squares of those sizes: 362. (dgrad is TN and wgrad NT: no other repeats.)
  EXPECT_EQ(gemm_shapes(GemmDtype::bf16, false).size(), 362u);
  // fp16 / tf32: forward only: 5 + 5*4*6 = 125, less the same 3 squares = 122.
  EXPECT_EQ(gemm_shapes(GemmDtype::fp16, false).size(), 122u);
  EXPECT_EQ(gemm_shapes(GemmDtype::tf32, false).size(), 122u);
  // fp32: 4 squares (1024..8192) + 2 hiddens x 2 token counts x 6 = 28, less attn_out at
  // h = t = 2048 (square 2048): 27.
  EXPECT_EQ(gemm_shapes(GemmDtype::fp32, false).size(), 27u);
  // quick: squares 1024, 2048 + 6 forward GEMMs at h = t = 4096 (attn_out is 4096^3, no square).
  EXPECT_EQ(gemm_shapes(GemmDtype::bf16, true).size(), 8u);
}

TEST(GemmShapes, RepeatedProblemsKeepAllTheirLabels) {
  // square 4096 and attn_out fwd h=4096 t=4096 are the same NN 4096^3 problem.
  bool found = false;
  for (const auto& g : gemm_shapes(GemmDtype::bf16, false)) {
    if (g.m == 4096 && g.n == 4096 && g.k == 4096 && g.transa == 'N' && g.transb == 'N') {
      EXPECT_EQ(g.label, "square 4096 | attn_out fwd h=4096 t=4096");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(GemmShapes, Fp8ShapesAreAllTransposedNonTransposedAndUnique) {
  // In TN, attn_out fwd (h, t, h) equals attn_out dgrad (h, t, h), and mlp_up fwd (4h, t, h)
  // equals mlp_down dgrad (4h, t, h): at least 2 x 20 repeats go, so fewer than 365 - 40 remain.
  const auto s = gemm_shapes(GemmDtype::fp8_e4m3, false);
  EXPECT_LE(s.size(), 325u);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  for (const auto& g : s) {
    EXPECT_EQ(g.transa, 'T');
    EXPECT_EQ(g.transb, 'N');
    EXPECT_TRUE(seen.insert({g.m, g.n, g.k}).second) << g.label;
  }
}

TEST(GemmShapes, Fp8FastAccumulationTimesTheForwardGemmsInTn) {
  // Transformer Engine runs only the forward GEMM with fast accumulation: the forward grid, 5 squares + 5 x 4 x 6 =
  // 125 problems, all TN. In TN (m, n, k) keeps its values, so the same 3 attn_out fwd (h, h, h) squares repeat: 122.
  const auto s = gemm_shapes(GemmDtype::fp8_e4m3_fast, false);
  EXPECT_EQ(s.size(), 122u);
  for (const auto& g : s) {
    EXPECT_EQ(g.transa, 'T');
    EXPECT_EQ(g.transb, 'N');
    EXPECT_EQ(g.label.find("grad"), std::string::npos) << g.label;
  }
  EXPECT_TRUE(backward_only_label("llama mbs 1 seq 4096 qkv dgrad"));
  EXPECT_TRUE(backward_only_label("a wgrad | b dgrad"));
  EXPECT_FALSE(backward_only_label("a dgrad | b fwd"));  // also some layer's forward: timed
  EXPECT_FALSE(backward_only_label("square 4096"));
  EXPECT_FALSE(backward_only_label(""));
  EXPECT_TRUE(is_fp8(GemmDtype::fp8_e4m3_fast));
  EXPECT_FALSE(is_fp8(GemmDtype::bf16));
}

TEST(GemmShapes, Bf16ListHasNoDuplicateProblem) {
  std::set<std::tuple<char, char, std::int64_t, std::int64_t, std::int64_t>> seen;
  for (const auto& g : gemm_shapes(GemmDtype::bf16, false)) {
    EXPECT_TRUE(seen.insert({g.transa, g.transb, g.m, g.n, g.k}).second) << g.label;
  }
}

TEST(GemmDtypeNames, RoundTrip) {
  for (GemmDtype d : all_gemm_dtypes()) EXPECT_EQ(gemm_dtype_from_name(gemm_dtype_name(d)), d);
  EXPECT_FALSE(gemm_dtype_from_name("int8"));
}

}  // namespace
}  // namespace scalescope::calib
