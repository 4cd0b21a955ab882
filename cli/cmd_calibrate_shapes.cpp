// `scalescope calibrate shapes --model M [--model M2 ...] --mbs 1,2 --seq 512,1024 --tp 1,2 -o shapes.json`:
// the GEMM and attention shapes those models run (calibrate/model_shapes.hpp), for
// `scalescope-calibrate --gemm-shapes` and validation/attention/measure_attention.py --shapes.
#include <iostream>
#include <memory>

#include "calibrate_common.hpp"
#include "scalescope/calibrate/model_shapes.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct ShapesCmd {
  std::vector<std::string> models;
  calib::ShapeRequest request;
  std::string output;
};

int run_shapes(const ShapesCmd& o) {
  const std::string cmd = "calibrate shapes";
  auto shapes = calib::calibration_shapes(o.models, o.request);
  if (!shapes) return report(cmd, shapes.error());
  const std::string text = calib::to_json(*shapes).dump(1) + "\n";
  std::cerr << "scalescope " << cmd << ": " << shapes->gemms.size() << " GEMM shapes x " << shapes->dtypes.size()
            << " dtypes, " << shapes->attention.size() << " attention shapes\n";
  if (o.output.empty() || o.output == "-") {
    print_stdout(text);
    return 0;
  }
  if (auto w = write_file_atomic(o.output, text); !w) return report(cmd, w.error());
  std::cerr << "scalescope " << cmd << ": wrote " << o.output << "\n";
  return 0;
}

}  // namespace

void register_calibrate_shapes(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ShapesCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "shapes",
      "The GEMM shapes (forward, dgrad, wgrad of every linear layer and the LM head, fused and separate "
      "projections) and flash-attention shapes of models at given micro-batch sizes, sequence lengths and "
      "tensor-parallel widths, as a file for `scalescope-calibrate --gemm-shapes` and "
      "validation/attention/measure_attention.py --shapes");
  add_shape_options(*sub, o->models, o->request);
  sub->add_option("-o,--output", o->output, "Write the file here (default: stdout)");
  sub->callback([o, &ctx] { ctx.exit_code = run_shapes(*o); });
}

}  // namespace scalescope::cli
