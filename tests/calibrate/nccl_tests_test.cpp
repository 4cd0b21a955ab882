// Tests of the nccl-tests log parser and importer on sample logs in the layouts nccl-tests prints
// (tests/data/nccl-tests/: SYNTHETIC numbers, see make_samples.py there) and on inline snippets.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scalescope/calibrate/nccl_tests.hpp"

namespace scalescope::calib {
namespace {

const std::string kDir = std::string(SCALESCOPE_TEST_DATA) + "/nccl-tests/";

std::string read(const std::string& name) {
  std::ifstream in(kDir + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<NcclTestsRun> parse_ok(const std::string& name, const NcclTestsOptions& o = {}) {
  auto runs = parse_nccl_tests_log(read(name), name, o);
  EXPECT_TRUE(runs.has_value()) << (runs ? "" : runs.error().str());
  return runs ? *runs : std::vector<NcclTestsRun>{};
}

std::string parse_error(const std::string& text, const std::string& source, const NcclTestsOptions& o = {}) {
  auto runs = parse_nccl_tests_log(text, source, o);
  return runs ? std::string() : runs.error().str();
}

// A minimal well-formed 2-rank all_reduce test in the 2.17 layout (values typed by hand: busbw =
// algbw x 2(n-1)/n = algbw for n = 2).
const std::string kTwoRanks =
    "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0\n"
    "#\n# Using devices\n"
    "#  Rank  0 Group  0 Pid   1000 on      hostA device  0 [0000:18:00] NVIDIA H200\n"
    "#  Rank  1 Group  0 Pid   1000 on      hostA device  1 [0000:2a:00] NVIDIA H200\n"
    "#\n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"
    "     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    21.00   49.93   49.93       0\n"
    "     2097152        524288     float     sum      -1    30.00   69.91   69.91       0    31.00   67.65   67.65       0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 61.17 \n";

TEST(NcclTestsParse, NewFormatSingleProcessG4) {
  const auto runs = parse_ok("all_reduce_g4_h200.log");
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  // Header lines of the file: version 2.17.6, "Collective test starting" on line 3, nGpus 4, iters 20.
  EXPECT_EQ(r.program, "all_reduce_perf");
  EXPECT_EQ(r.op, "all_reduce");
  EXPECT_EQ(r.op_from, "'Collective test starting' line 3");
  EXPECT_EQ(r.version, "2.17.6");
  EXPECT_EQ(r.nthreads, 1);
  EXPECT_EQ(r.ngpus, 4);
  EXPECT_EQ(r.iters, 20);
  EXPECT_EQ(r.max_bytes, 1073741824);
  ASSERT_EQ(r.nranks(), 4);
  EXPECT_EQ(r.ranks[3].bus_id, "0000:5d:00");
  EXPECT_EQ(r.ranks[3].name, "NVIDIA H200");
  EXPECT_EQ(r.ranks[3].group, 0);
  // Sizes 8 B .. 1 GiB in x2 steps: 2^3 .. 2^30 = 28 rows.
  ASSERT_EQ(r.rows.size(), 28u);
  EXPECT_DOUBLE_EQ(r.rows[0].bytes, 8.0);
  EXPECT_DOUBLE_EQ(r.rows[0].time_us, 20.39);  // first result line of the file
  EXPECT_TRUE(r.rows[0].has_in_place);
  EXPECT_DOUBLE_EQ(r.rows[0].ip_time_us, 20.44);
  EXPECT_EQ(r.rows[27].wrong, 0.0);
  EXPECT_TRUE(r.complete);
  EXPECT_DOUBLE_EQ(*r.avg_busbw_GBps, 106.456);  // footer line
}

TEST(NcclTestsParse, EntryUsesOutOfPlaceColumnsAndKeepsInPlace) {
  const auto runs = parse_ok("all_reduce_g4_h200.log");
  ASSERT_EQ(runs.size(), 1u);
  auto e = to_coll_entry(runs[0], "a.log", {});
  ASSERT_TRUE(e) << e.error().str();
  EXPECT_EQ(e->op, "all_reduce");
  EXPECT_EQ(e->nranks, 4);
  EXPECT_EQ(e->ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(e->nodes, 1);  // one host (h200box)
  EXPECT_EQ(e->gpus_per_node, 4);
  EXPECT_EQ(e->check, "passed");
  EXPECT_EQ(e->source, "nccl-tests a.log");
  ASSERT_EQ(e->rows.size(), 28u);
  ASSERT_EQ(e->in_place_rows.size(), 28u);
  // Last line: 1073741824 bytes, 268435456 floats, out-of-place 4530.12 us, in-place 4589.84 us.
  EXPECT_DOUBLE_EQ(e->rows[27].time_us, 4530.12);
  EXPECT_DOUBLE_EQ(e->in_place_rows[27].time_us, 4589.84);
  EXPECT_DOUBLE_EQ(e->rows[27].count, 268435456.0);
  EXPECT_EQ(e->rows[27].iters, 20);
}

TEST(NcclTestsParse, MultiProcessTwoNodesFromRankLines) {
  const auto runs = parse_ok("all_gather_mpi_2x4.log");
  ASSERT_EQ(runs.size(), 1u);
  // nThread 1 nGpus 1 per process, 8 device lines on hosts nodeA (4) and nodeB (4).
  EXPECT_EQ(runs[0].ngpus, 1);
  EXPECT_EQ(runs[0].nranks(), 8);
  EXPECT_EQ(runs[0].op, "all_gather");
  auto e = to_coll_entry(runs[0], "b.log", {});
  ASSERT_TRUE(e) << e.error().str();
  EXPECT_EQ(e->nodes, 2);
  EXPECT_EQ(e->gpus_per_node, 4);
  // all_gather: the count column is per rank; the whole buffer is bytes / 4 floats.
  EXPECT_DOUBLE_EQ(e->rows[0].count_per_call, 32.0);  // 1024 B / 4 B / 8 ranks
  EXPECT_DOUBLE_EQ(e->rows[0].count, 256.0);
}

TEST(NcclTestsParse, LaunchModeComesFromRanksPerProcess) {
  // all_reduce_g4_h200.log: "nThread 1 nGpus 4", 4 device lines -> one process drove all 4 GPUs.
  auto g4 = to_coll_entry(parse_ok("all_reduce_g4_h200.log")[0], "a.log", {});
  ASSERT_TRUE(g4) << g4.error().str();
  EXPECT_EQ(g4->nccl_tests["launch"]["ranks_per_process"], 4);
  EXPECT_EQ(g4->nccl_tests["launch"]["processes"], 1);
  EXPECT_EQ(g4->nccl_tests["launch"]["mode"], "one process drives 4 GPUs (nccl-tests -g 4)");
  // all_gather_mpi_2x4.log: "nThread 1 nGpus 1" per process, 8 device lines -> 8 processes of one GPU.
  auto mpi = to_coll_entry(parse_ok("all_gather_mpi_2x4.log")[0], "b.log", {});
  ASSERT_TRUE(mpi) << mpi.error().str();
  EXPECT_EQ(mpi->nccl_tests["launch"]["processes"], 8);
  EXPECT_EQ(mpi->nccl_tests["launch"]["mode"], "one process per GPU");
}

TEST(NcclTestsImport, ASingleProcessLogIsNotedAsSuch) {
  std::vector<std::string> notes;
  auto p = import_nccl_tests({kDir + "all_reduce_g4_h200.log", kDir + "all_gather_mpi_2x4.log"}, {}, &notes);
  ASSERT_TRUE(p) << p.error().str();
  int single = 0;
  for (const auto& n : notes) single += n.find("one process drives 4 GPUs") != std::string::npos;
  EXPECT_EQ(single, 1);  // the -g 4 log only, not the MPI one
}

TEST(NcclTestsParse, GpusPerNodeOptionOverridesHosts) {
  const auto runs = parse_ok("all_gather_mpi_2x4.log");
  NcclTestsOptions o;
  o.gpus_per_node = 2;
  auto e = to_coll_entry(runs[0], "b.log", o);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->nodes, 4);
  o.gpus_per_node = 3;  // does not divide 8 ranks
  auto bad = to_coll_entry(runs[0], "b.log", o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().str().find("--gpus-per-node: expected a divisor of the 8 ranks"), std::string::npos);
}

TEST(NcclTestsParse, OldFormatWithErrorColumnAndNoRoot) {
  const auto runs = parse_ok("reduce_scatter_old_g8.log");
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  // No "Collective test starting" line: the program name comes from the command line (line 1).
  EXPECT_EQ(r.op, "reduce_scatter");
  EXPECT_EQ(r.op_from, "program name on line 1");
  EXPECT_EQ(r.nranks(), 8);
  EXPECT_EQ(r.ranks[0].group, -1);  // no Group field in this layout
  EXPECT_EQ(r.ranks[0].bus_id, "0x07");
  EXPECT_EQ(r.ranks[0].name, "A100-SXM4-80GB");
  // 8 B .. 128 MiB = 25 lines; on 8 ranks 8..64 B round to 0 bytes (4 lines), left out of the entry.
  ASSERT_EQ(r.rows.size(), 25u);
  EXPECT_EQ(r.rows[4].root, -1);
  auto e = to_coll_entry(r, "c.log", {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rows.size(), 21u);
  EXPECT_DOUBLE_EQ(e->rows[0].bytes, 128.0);
  EXPECT_EQ(e->check, "passed");  // error column 0e+00 everywhere
}

TEST(NcclTestsParse, TwoTestsInOneFileWithoutValidation) {
  const auto runs = parse_ok("alltoall_then_sendrecv_c0.log");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].op, "alltoall");
  EXPECT_EQ(runs[1].op, "sendrecv");
  EXPECT_EQ(runs[0].validation, 0);
  EXPECT_FALSE(runs[0].rows[0].wrong.has_value());  // "N/A"
  auto e = to_coll_entry(runs[1], "d.log", {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->check, "not checked (nccl-tests ran with -c 0: no #wrong counts)");
}

TEST(NcclTestsParse, TruncatedLogIsAClearErrorUnlessAllowed) {
  const std::string text = read("truncated_all_reduce.log");
  const std::string err = parse_error(text, "t.log");
  // The file stops after the 65536-byte line: lines 1-14 are the command line and the header, the
  // rows 8 B .. 64 KiB (14 of them) are lines 15-28.
  EXPECT_NE(err.find("t.log: line 28: the log ends after 14 result row(s) of the test starting at line 4 without "
                     "nccl-tests' footer"),
            std::string::npos)
      << err;
  NcclTestsOptions o;
  o.allow_truncated = true;
  auto runs = parse_nccl_tests_log(text, "t.log", o);
  ASSERT_TRUE(runs);
  EXPECT_EQ((*runs)[0].rows.size(), 14u);
  EXPECT_FALSE((*runs)[0].complete);
}

TEST(NcclTestsParse, DuplicateRanksMeanSeparateTests) {
  const std::string err = parse_error(read("duplicate_ranks.log"), "dup.log");
  EXPECT_NE(err.find("dup.log: line 5: rank 0 is listed twice"), std::string::npos) << err;
}

TEST(NcclTestsParse, OpOptionIsCheckedAgainstBusbwFactor) {
  NcclTestsOptions o;
  o.op = "all_gather";
  // all_reduce on 4 ranks prints busbw = 1.5 x algbw; all_gather's factor is 3/4.
  const std::string err = parse_error(read("all_reduce_g4_h200.log"), "a.log", o);
  EXPECT_NE(err.find("busbw/algbw is 1.5"), std::string::npos) << err;
  EXPECT_NE(err.find("all_gather on 4 ranks has nccl-tests factor 0.75"), std::string::npos) << err;
}

TEST(NcclTestsParse, OpFromOptionWhenTheLogNamesNone) {
  EXPECT_NE(parse_error(kTwoRanks, "x.log").find("pass --op"), std::string::npos);
  NcclTestsOptions o;
  o.op = "all_reduce";
  auto runs = parse_nccl_tests_log(kTwoRanks, "x.log", o);
  ASSERT_TRUE(runs) << runs.error().str();
  EXPECT_EQ((*runs)[0].op_from, "--op");
  // The file name can name the op too.
  auto by_name = parse_nccl_tests_log(kTwoRanks, "logs/box1_all_reduce_perf.txt");
  ASSERT_TRUE(by_name) << by_name.error().str();
  EXPECT_EQ((*by_name)[0].op, "all_reduce");
  EXPECT_EQ((*by_name)[0].op_from, "the file name");
}

TEST(NcclTestsParse, UnsupportedProgramIsNamed) {
  const std::string err = parse_error("# Collective test starting: reduce_perf\n" + kTwoRanks, "r.log");
  EXPECT_NE(err.find("the test was run by reduce_perf, which is not supported"), std::string::npos) << err;
}

TEST(NcclTestsParse, MalformedResultLineNamesTheLine) {
  std::string text = kTwoRanks;
  const auto at = text.find("     2097152");
  text.replace(at, text.find('\n', at) - at, "     2097152        524288     float     sum      -1    30.00");  // cut line 10
  const std::string err = parse_error(text, "m.log", NcclTestsOptions{std::string("all_reduce"), {}, false});
  EXPECT_NE(err.find("m.log: line 10: expected at least 13 columns"), std::string::npos) << err;
}

TEST(NcclTestsParse, TestFailureIsReported) {
  std::string text = kTwoRanks.substr(0, kTwoRanks.find("# Out of bounds"));
  text += "hostA: Test NCCL failure common.cu:1039 'unhandled cuda error'\n";
  const std::string err = parse_error(text, "f.log", NcclTestsOptions{std::string("all_reduce"), {}, false});
  EXPECT_NE(err.find("f.log: line 11: nccl-tests reported a failure"), std::string::npos) << err;
}

TEST(NcclTestsParse, LauncherOutputTagsAreStripped) {
  // srun --label prefixes every line with the task id; Open MPI --tag-output with [job,rank]<stdout>:.
  std::string srun, ompi;
  std::istringstream in(kTwoRanks);
  for (std::string line; std::getline(in, line);) {
    srun += " 0: " + line + "\n";
    ompi += "[1,0]<stdout>:" + line + "\n";
  }
  const NcclTestsOptions o{std::string("all_reduce"), {}, false};
  auto a = parse_nccl_tests_log(srun, "s.log", o), b = parse_nccl_tests_log(ompi, "o.log", o);
  ASSERT_TRUE(a) << a.error().str();
  ASSERT_TRUE(b) << b.error().str();
  EXPECT_EQ((*a)[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ((*b)[0].rows[1].time_us, 30.0);
}

TEST(NcclTestsParse, NoTableIsAnError) {
  EXPECT_NE(parse_error("hello\nworld\n", "e.log").find("e.log: no nccl-tests result table found"), std::string::npos);
}

TEST(NcclTestsProgram, NamesMapToOps) {
  EXPECT_EQ(op_of_nccl_tests_program("alltoall_perf_mpi"), "alltoall");
  EXPECT_EQ(op_of_nccl_tests_program("reduce_scatter_perf"), "reduce_scatter");
  EXPECT_FALSE(op_of_nccl_tests_program("reduce_perf").has_value());
  EXPECT_FALSE(op_of_nccl_tests_program("all_reduce").has_value());
}

TEST(NcclTestsImport, ProfileFromSeveralFilesMergesSameGroups) {
  std::vector<std::string> notes;
  auto p = import_nccl_tests({kDir + "all_reduce_g4_h200.log", kDir + "alltoall_then_sendrecv_c0.log",
                              kDir + "all_reduce_g4_h200.log"},
                             {}, &notes);
  ASSERT_TRUE(p) << p.error().str();
  // all_reduce (4 ranks), alltoall, sendrecv; the second copy of all_reduce replaces its 28 rows.
  ASSERT_EQ(p->collectives.size(), 3u);
  EXPECT_EQ(p->collectives[0].rows.size(), 28u);
  EXPECT_EQ(p->provenance.rfind("imported from nccl-tests ", 0), 0u);
  EXPECT_FALSE(p->created_utc.has_value());
  bool replaced_note = false;
  for (const auto& n : notes) replaced_note = replaced_note || n.find("replaced 28 row(s)") != std::string::npos;
  EXPECT_TRUE(replaced_note);
  // What is written is a valid profile.
  auto back = profile_from_json(to_json(*p), "imported.json");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->collectives[0].nccl_tests["program"], "all_reduce_perf");
  EXPECT_EQ(back->gpu_name(), "NVIDIA H200");
}

TEST(NcclTestsImport, MissingFileIsNamed) {
  auto p = import_nccl_tests({"/nonexistent/x.log"}, {});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().str(), "/nonexistent/x.log: file does not exist");
}

}  // namespace
}  // namespace scalescope::calib
