// Hostile nccl-tests logs (issue 28): integers beyond int, lines longer than any nccl-tests line,
// absurd bandwidths and many device lines give input errors naming the line, not aborts or blow-ups.
#include <gtest/gtest.h>

#include <string>

#include "scalescope/calibrate/nccl_tests.hpp"

namespace scalescope::calib {
namespace {

// Two ranks of one all_reduce test, the rows typed by hand (busbw = algbw for n = 2).
std::string log_with(const std::string& rank1, const std::string& row2) {
  return "# Collective test starting: all_reduce_perf\n"
         "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
         "validation: 1 graph: 0\n"
         "#  Rank  0 Group  0 Pid   1000 on      hostA device  0 [0000:18:00] NVIDIA H200\n" +
         rank1 +
         "#       size         count      type   redop    root     time   algbw   busbw  #wrong\n"
         "     1048576        262144     float     sum      -1    20.00   52.43   52.43       0\n" +
         row2 + "# Avg bus bandwidth    : 61.17 \n";
}
const std::string kRank1 = "#  Rank  1 Group  0 Pid   1000 on      hostA device  1 [0000:2a:00] NVIDIA H200\n";
const std::string kRow2 = "     2097152        524288     float     sum      -1    30.00   69.91   69.91       0\n";

// One test of one row under a given column header (line 2; the row is line 3).
std::string one_row_log(const std::string& header, const std::string& row) {
  return "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n" + header +
         row + "# Avg bus bandwidth    : 0.00 \n";
}

std::string error_of(const std::string& text) {
  auto r = parse_nccl_tests_log(text, "x.log", {});
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().str();
}

TEST(NcclTestsHostile, WellFormedBaseParses) {
  auto r = parse_nccl_tests_log(log_with(kRank1, kRow2), "x.log", {});
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_EQ(r->front().nranks(), 2);
}

TEST(NcclTestsHostile, RankBeyondIntIsAnErrorNotAnAbort) {
  // std::stoi("99999999999") threw std::out_of_range out of the parser.
  const std::string rank = "#  Rank 99999999999 Group  0 Pid   1000 on      hostA device  1 [0000:2a:00] NVIDIA H200\n";
  EXPECT_EQ(error_of(log_with(rank, kRow2)), "x.log: line 4: expected a rank from 0 to 1048575, got '99999999999'");
  const std::string pid = "#  Rank  1 Group  0 Pid 99999999999999999999 on hostA device  1 [0000:2a:00] NVIDIA H200\n";
  EXPECT_NE(error_of(log_with(pid, kRow2)).find("expected a pid from 0 to"), std::string::npos);
}

TEST(NcclTestsHostile, LongLineIsRefusedBeforeAnyRegexSeesIt) {
  const std::string text = "# " + std::string(100000, 'a') + "\n" + log_with(kRank1, kRow2);
  EXPECT_EQ(error_of(text), "x.log: line 1: line is 100002 bytes long; nccl-tests lines are short (at most 4096 bytes "
                            "are read): is this an nccl-tests log?");
}

TEST(NcclTestsHostile, HeaderRepeatingAColumnNeedsItOnEveryLine) {
  // Found by the fuzzer (fuzz/regressions/nccl_tests/): a garbled header that names "count" and "type" again after
  // the bandwidth group put the type column at index 10 while only 9 tokens (through #wrong) were required, and
  // the row's missing 11th token was read out of bounds (std::length_error, an abort).
  const std::string text = one_row_log("#  size count type redop root time algbw busbw #wrong count type\n",
                                       "      8     2 float   sum   -1 9.50  0.00  0.00      0\n");
  // Columns 0..10 of the header: 11 tokens are needed, the row has 9.
  EXPECT_EQ(error_of(text), "x.log: line 3: expected at least 11 columns as in the header on line 2, got 9: "
                            "'8     2 float   sum   -1 9.50  0.00  0.00      0'");
}

TEST(NcclTestsHostile, HeaderEndingInRedopIsNotReadPastTheRow) {
  // Found by the fuzzer (fuzz/regressions/nccl_tests/crash-redop-last-column): a garbled header of 13 columns,
  // "redop" repeated as the last, and rows of 12 tokens; the empty-redop repair (a row one token short) read token 12 (a SEGV).
  const std::string text = one_row_log("#  ?? size count type redop time algbw busbw error time algbw busbw redop\n",
                                       "      8     2 float   sum 9.50  0.00  0.00 0e+00 9.40  0.00  0.00 0e+00\n");
  EXPECT_EQ(error_of(text), "x.log: line 3: expected at least 13 columns as in the header on line 2, got 12: "
                            "'8     2 float   sum 9.50  0.00  0.00 0e+00 9.40  0.00  0.00 0e+00'");
}

TEST(NcclTestsHostile, AbsurdBandwidthAndNonFiniteValuesAreRefused) {
  const std::string huge = "     2097152        524288     float     sum      -1    30.00   69.91   1e308       0\n";
  EXPECT_EQ(error_of(log_with(kRank1, huge)), "x.log: line 7: expected busbw at most 100000, got '1e308'");
  const std::string root = "     2097152        524288     float     sum 4294967296  30.00   69.91   69.91       0\n";
  EXPECT_NE(error_of(log_with(kRank1, root)).find("expected a root rank from -1 to 1048575"), std::string::npos);
}

TEST(NcclTestsHostile, ManyDeviceLinesStayLinear) {
  // 200,000 distinct ranks: the duplicate check is a set lookup, not a scan of every earlier rank.
  std::string ranks;
  for (int r = 1; r < 200000; ++r)
    ranks += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on h device 0 [0000:18:00] NVIDIA H200\n";
  auto res = parse_nccl_tests_log(log_with(ranks, kRow2), "x.log", {});
  // busbw/algbw of 1 on 200,000 ranks is not all_reduce's factor 2(n-1)/n: an input error, reached quickly.
  ASSERT_FALSE(res.has_value());
  EXPECT_NE(res.error().str().find("busbw/algbw is 1.000"), std::string::npos) << res.error().str();
}

}  // namespace
}  // namespace scalescope::calib
