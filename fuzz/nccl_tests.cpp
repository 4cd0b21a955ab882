// Fuzz target: nccl-tests logs -> parse_nccl_tests_log -> to_coll_entry (what `import nccl-tests` does).
#include "fuzz_common.hpp"
#include "scalescope/calibrate/nccl_tests.hpp"
#include "scalescope/calibrate/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  const calib::NcclTestsOptions opt;
  fuzz::check(calib::parse_nccl_tests_log(fuzz::text_of(data, size), "fuzz_all_reduce.log", opt),
              [&](const std::vector<calib::NcclTestsRun>& runs) {
                calib::Profile p;
                for (const auto& run : runs) {
                  auto e = calib::to_coll_entry(run, "fuzz_all_reduce.log", opt);
                  if (!e) {
                    fuzz::check_error(e.error());
                    continue;
                  }
                  p.collectives.push_back(std::move(e).value());
                }
                (void)dump_json(calib::to_json(p));  // host names and ids from the log reach JSON output
              });
  return 0;
}
