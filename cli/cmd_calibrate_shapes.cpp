// `scalescope calibrate shapes --model M [--model M2 ...] --mbs 1,2 --seq 512,1024 --tp 1,2 -o shapes.json`:
// the GEMM and attention shapes those models run (calibrate/model_shapes.hpp), for
// `scalescope-calibrate --gemm-shapes` and validation/attention/measure_attention.py --shapes.
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "scalescope/calibrate/model_shapes.hpp"
#include "scalescope/models/model_spec.hpp"
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
  std::vector<models::ModelSpec> specs;
  for (const auto& name : o.models) {
    auto m = models::load_model_by_name_or_path(name);
    if (!m) return report(cmd, m.error());
    specs.push_back(std::move(m).value());
  }
  auto shapes = calib::calibration_shapes(specs, o.request);
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
  o->request.seqs.clear();
  CLI::App* sub = calibrate->add_subcommand(
      "shapes",
      "The GEMM shapes (forward, dgrad, wgrad of every linear layer and the LM head, fused and separate "
      "projections) and flash-attention shapes of models at given micro-batch sizes, sequence lengths and "
      "tensor-parallel widths, as a file for `scalescope-calibrate --gemm-shapes` and "
      "validation/attention/measure_attention.py --shapes");
  sub->add_option("--model", o->models, "Catalog name, native model JSON or HF config.json (repeatable)")->required();
  sub->add_option("--mbs", o->request.micro_batches, "Micro-batch sizes")->delimiter(',')->capture_default_str();
  sub->add_option("--seq", o->request.seqs, "Sequence lengths (default: each model's seq_len)")->delimiter(',');
  sub->add_option("--tp", o->request.tps, "Tensor-parallel widths")->delimiter(',')->capture_default_str();
  sub->add_option("--dtypes", o->request.dtypes, "GEMM dtypes: bf16, fp8_e4m3, fp16, tf32, fp32")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("-o,--output", o->output, "Write the file here (default: stdout)");
  sub->callback([o, &ctx] { ctx.exit_code = run_shapes(*o); });
}

}  // namespace scalescope::cli
