// Fuzz target: a measured set's pricing record (<folder>/pricing.json, scalescope.measured_pricing/1) ->
// load_measured_pricing, which `scaling --measured DIR` and the GUI read. The bytes are written as pricing.json in a
// folder of their own that also holds factor.json, a bandwidth-factor file the record may name.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_common.hpp"
#include "scalescope/planner/measured_pricing.hpp"

namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path dir;
  Folder() {
    std::string tmpl = (fs::temp_directory_path() / "scalescope-fuzz-pricing-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) __builtin_trap();
    dir = tmpl;
    std::ofstream(dir / "factor.json") << R"({"factor": 1.6, "source": "fuzz"})";
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  static const Folder folder;
  {
    std::ofstream out(folder.dir / planner::kMeasuredPricingFile, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) __builtin_trap();
  }
  fuzz::check(planner::load_measured_pricing(folder.dir), [](const std::optional<planner::MeasuredPricing>& p) {
    if (!p) __builtin_trap();  // the file is there: a record or an error, never "none"
    (void)planner::same_file(p->host_cost, p->calibration);
  });
  return 0;
}
